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
pub const MAX_RECORD_COUNT: u64 = 5_000_000;
/// The largest integer every JSON client represents exactly (2^53 - 1).
pub const MAX_SAFE_INTEGER: u64 = 9_007_199_254_740_991;

/// A whole number from 0 to `MAX`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub struct Bounded<const MAX: u64>(u64);

/// Seconds, up to ten years.
pub type Seconds = Bounded<MAX_EXPIRES_IN>;
/// An identifier the platform gives as a number.
pub type WholeNumber = Bounded<MAX_SAFE_INTEGER>;
/// How many records of a data type the sandbox has.
pub type RecordCount = Bounded<MAX_RECORD_COUNT>;
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
            // JSON Schema counts 1800.0 as an integer, so it is accepted too.
            WholeFloat(f64),
            Digits(String),
        }
        let value = match NumberOrDigits::deserialize(deserializer)? {
            NumberOrDigits::Number(value) => Some(value),
            NumberOrDigits::WholeFloat(value)
                if value.fract() == 0.0 && (0.0..=MAX as f64).contains(&value) =>
            {
                Some(value as u64)
            }
            NumberOrDigits::WholeFloat(_) => None,
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
        json_schema!({
            "oneOf": [
                { "type": "integer", "minimum": 0, "maximum": MAX },
                { "type": "string", "pattern": digits_up_to(MAX) }
            ],
            crate::validation::ACCEPTS: format!("a whole number from 0 to {MAX}, as a number or a string of digits")
        })
    }
}

/// A regular expression matching exactly the decimal numbers 0 to `max`
/// (no sign, no leading zeros), so the schema bounds digit strings as
/// precisely as numbers.
pub fn digits_up_to(max: u64) -> String {
    let digits: Vec<u32> = max
        .to_string()
        .chars()
        .filter_map(|c| c.to_digit(10))
        .collect();
    let width = digits.len();
    let mut alternatives = vec!["0".to_owned()];
    if width > 1 {
        // Every number with fewer digits.
        alternatives.push(format!("[1-9][0-9]{{0,{}}}", width - 2));
    }
    // Numbers as long as `max`: equal up to position i, smaller at i.
    for i in 0..width {
        let low = if i == 0 { 1 } else { 0 };
        if digits[i] > low {
            let prefix: String = digits[..i].iter().map(|d| d.to_string()).collect();
            let rest = width - i - 1;
            alternatives.push(format!("{prefix}[{low}-{}][0-9]{{{rest}}}", digits[i] - 1));
        }
    }
    if max > 0 {
        alternatives.push(max.to_string());
    }
    format!("^({})$", alternatives.join("|"))
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
    fn the_digit_pattern_accepts_exactly_the_range() {
        for max in [
            0_u64,
            7,
            9,
            10,
            99,
            100,
            5_000_000,
            315_360_000,
            MAX_SAFE_INTEGER,
        ] {
            let pattern = regex_lite(&digits_up_to(max));
            let probes = [
                0,
                1,
                max.saturating_sub(1),
                max,
                max + 1,
                max * 10 + 9,
                10_u64.pow(max.to_string().len() as u32),
            ];
            for value in probes {
                assert_eq!(
                    pattern(&value.to_string()),
                    value <= max,
                    "max {max}, value {value}"
                );
            }
            assert!(!pattern("01"), "leading zeros are refused");
        }
    }

    /// Matches with the validator the schemas are checked with.
    fn regex_lite(pattern: &str) -> impl Fn(&str) -> bool + use<> {
        let checker =
            crate::validation::compile(serde_json::json!({"type": "string", "pattern": pattern}))
                .expect("a valid pattern");
        move |text: &str| checker.field_errors(&serde_json::json!(text)).is_empty()
    }

    #[test]
    fn whole_floats_are_read_and_fractions_refused() {
        assert_eq!(
            serde_json::from_str::<Seconds>("1800.0")
                .expect("whole")
                .get(),
            1800
        );
        assert!(serde_json::from_str::<Seconds>("1800.5").is_err());
    }

    #[test]
    fn values_out_of_range_or_not_digits_are_rejected() {
        assert!(serde_json::from_str::<RecordCount>("5000001").is_err());
        assert!(serde_json::from_str::<RecordCount>("\"5000001\"").is_err());
        assert!(serde_json::from_str::<RecordCount>("\"12a\"").is_err());
        assert!(serde_json::from_str::<RecordCount>("-1").is_err());
        assert_eq!(
            serde_json::from_str::<RecordCount>("5000000")
                .expect("the maximum")
                .get(),
            5_000_000
        );
    }
}
