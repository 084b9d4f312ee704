//! Whole numbers in authorization bodies, accepted as JSON numbers or as
//! strings of digits (`1800` or `"1800"`), since some clients send a map of
//! strings, and always bounded: a value out of range is an error, never
//! clamped.

use std::borrow::Cow;
use std::fmt;

use schemars::{JsonSchema, Schema, SchemaGenerator, json_schema};
use serde::{Deserialize, Deserializer};

/// Longest accepted `expiresIn`: ten years, in seconds.
pub const MAX_EXPIRES_IN: u64 = 10 * 365 * 24 * 60 * 60;
/// The sandbox's largest `invoiceCount`.
pub const MAX_INVOICE_COUNT: u64 = 5_000_000;
/// The largest integer every JSON client represents exactly (2^53 - 1).
pub const MAX_SAFE_INTEGER: u64 = 9_007_199_254_740_991;

/// A whole number from 0 to `MAX`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub struct Bounded<const MAX: u64>(u64);

/// Seconds, up to ten years.
pub type Seconds = Bounded<MAX_EXPIRES_IN>;
/// An identifier the platform gives as a number.
pub type WholeNumber = Bounded<MAX_SAFE_INTEGER>;
/// The sandbox's invoice count.
pub type InvoiceCount = Bounded<MAX_INVOICE_COUNT>;
/// The sandbox's data seed.
pub type Seed = Bounded<MAX_SAFE_INTEGER>;

impl<const MAX: u64> Bounded<MAX> {
    /// `value`, which must be at most `MAX` (values above are capped; use
    /// deserialization for input).
    pub fn new(value: u64) -> Self {
        Self(value.min(MAX))
    }

    /// The number.
    pub fn get(self) -> u64 {
        self.0
    }
}

impl<const MAX: u64> fmt::Display for Bounded<MAX> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.fmt(f)
    }
}

impl<'de, const MAX: u64> Deserialize<'de> for Bounded<MAX> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        #[derive(Deserialize)]
        #[serde(untagged)]
        enum NumberOrDigits {
            Number(u64),
            Digits(String),
        }
        let value = match NumberOrDigits::deserialize(deserializer)? {
            NumberOrDigits::Number(value) => Some(value),
            NumberOrDigits::Digits(text) if text.bytes().all(|byte| byte.is_ascii_digit()) => {
                text.parse().ok()
            }
            NumberOrDigits::Digits(_) => None,
        };
        match value {
            Some(value) if value <= MAX => Ok(Self(value)),
            _ => Err(serde::de::Error::custom(format!(
                "must be a whole number from 0 to {MAX}"
            ))),
        }
    }
}

impl<const MAX: u64> JsonSchema for Bounded<MAX> {
    fn schema_name() -> Cow<'static, str> {
        format!("WholeNumberUpTo{MAX}").into()
    }

    fn inline_schema() -> bool {
        true
    }

    fn json_schema(_: &mut SchemaGenerator) -> Schema {
        let digits = MAX.to_string().len();
        json_schema!({
            "oneOf": [
                { "type": "integer", "minimum": 0, "maximum": MAX },
                { "type": "string", "pattern": format!("^[0-9]{{1,{digits}}}$") }
            ]
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_and_digit_strings_are_read() {
        assert_eq!(
            serde_json::from_str::<Seconds>("1800")
                .expect("a number")
                .get(),
            1800
        );
        assert_eq!(
            serde_json::from_str::<Seconds>("\"1800\"")
                .expect("digits")
                .get(),
            1800
        );
    }

    #[test]
    fn values_out_of_range_or_not_digits_are_rejected() {
        assert!(serde_json::from_str::<InvoiceCount>("5000001").is_err());
        assert!(serde_json::from_str::<InvoiceCount>("\"5000001\"").is_err());
        assert!(serde_json::from_str::<InvoiceCount>("\"12a\"").is_err());
        assert!(serde_json::from_str::<InvoiceCount>("-1").is_err());
        assert_eq!(
            serde_json::from_str::<InvoiceCount>("5000000")
                .expect("the maximum")
                .get(),
            5_000_000
        );
    }
}
