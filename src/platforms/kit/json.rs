//! Reading platform JSON exactly: amounts from the number's own text (never
//! through a float), and the platforms' date forms (Xero's `/Date(ms)/`,
//! offsets with or without a colon, plain dates).

use std::fmt;
use std::str::FromStr;

use chrono::{DateTime, NaiveDate, NaiveDateTime, Utc};
use rust_decimal::Decimal;
use serde::Deserialize;
use serde::de::{self, Deserializer};
use serde_json::value::RawValue;

use crate::data::money::{Money, Quantity};
use crate::platforms::kit::records::Unreadable;
use crate::timestamp::Timestamp;

/// A list the platform may send as `null` (nullable in its schema) or leave
/// out: both read as empty, so one such record never fails its page. Use
/// with `#[serde(default, deserialize_with = "json::list_or_null")]`.
pub fn list_or_null<'de, D, T>(deserializer: D) -> Result<Vec<T>, D::Error>
where
    D: Deserializer<'de>,
    T: Deserialize<'de>,
{
    Ok(Option::<Vec<T>>::deserialize(deserializer)?.unwrap_or_default())
}

/// An exact amount read from a JSON number (or a numeric string).
///
/// Deserialize it from bytes or a string (`serde_json::from_slice`): it reads
/// the number's raw text, which a `serde_json::Value` no longer has.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Amount(pub Money);

impl Amount {
    /// The amount as money.
    pub fn money(self) -> Money {
        self.0
    }

    /// The amount as a quantity.
    pub fn quantity(self) -> Quantity {
        Quantity(self.0.0)
    }
}

/// An optional amount as money; zero when the platform gives none.
pub fn money(value: Option<Amount>) -> Money {
    value.map(Amount::money).unwrap_or_default()
}

/// An optional amount as a quantity; zero when the platform gives none.
pub fn quantity(value: Option<Amount>) -> Quantity {
    value.map(Amount::quantity).unwrap_or_default()
}

/// ISO 4217 currencies without a minor unit: an amount of `500` is 500 units.
const NO_MINOR_UNIT: &[&str] = &[
    "BIF", "CLP", "DJF", "GNF", "ISK", "JPY", "KMF", "KRW", "PYG", "RWF", "UGX", "UYI", "VND",
    "VUV", "XAF", "XOF", "XPF",
];

/// ISO 4217 currencies with three decimals: an amount of `5120` is 5.120.
const THREE_DIGIT_MINOR_UNIT: &[&str] = &["BHD", "IQD", "JOD", "KWD", "LYD", "OMR", "TND"];

/// Decimal places of an ISO 4217 currency's minor unit (two unless listed),
/// for platforms that count amounts in it (Square, Zettle).
pub fn minor_digits(currency: &str) -> u32 {
    let code = currency.trim().to_ascii_uppercase();
    if NO_MINOR_UNIT.contains(&code.as_str()) {
        0
    } else if THREE_DIGIT_MINOR_UNIT.contains(&code.as_str()) {
        3
    } else {
        2
    }
}

/// Why an amount cannot be read when it is finer than its currency's
/// minor unit (the record names no value).
pub const FINER_THAN_CURRENCY: &str = "an amount has more decimals than its currency has";

/// Whether `amount` has no more decimals than `currency`'s minor unit (two
/// for most, none for JPY, three for KWD): what platforms whose money pairs a
/// decimal string with its currency promise (PayPal's `money`, Mollie's
/// amount). An amount finer than that is not one the platform sends: its
/// record cannot be read ([`FINER_THAN_CURRENCY`]).
pub fn within_minor_unit(amount: Money, currency: &str) -> bool {
    let step = 10_i64.pow(Money::SCALE.saturating_sub(minor_digits(currency)));
    amount.0 % step == 0
}

/// An integer `amount` of a minor unit with `digits` decimal places as
/// exact money; `None` when it does not fit.
pub fn from_minor(amount: i64, digits: u32) -> Option<Money> {
    let factor = 10_i64.checked_pow(Money::SCALE.checked_sub(digits)?)?;
    amount.checked_mul(factor).map(Money)
}

/// The price of one unit of a line whose platform gives only the line's
/// total for `quantity` units (eBay's `lineItemCost`, Amazon's `ItemPrice`),
/// rounded to ten-thousandths (half to even); the total itself when the
/// quantity is not positive.
pub fn per_unit(total: Money, quantity: Quantity) -> Money {
    if quantity.0 <= 0 {
        return total;
    }
    let unit = Decimal::new(total.0, Money::SCALE) / Decimal::new(quantity.0, Money::SCALE);
    Money::from_decimal(unit.round_dp(Money::SCALE)).unwrap_or(total)
}

/// A date-time the platform writes in any of [`datetime`]'s forms, as ours.
pub fn timestamp(text: Option<&str>) -> Option<Timestamp> {
    text.and_then(datetime).map(Timestamp)
}

impl<'de> Deserialize<'de> for Amount {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let raw: &RawValue = Deserialize::deserialize(deserializer)?;
        let text = number_text(raw);
        parse_amount(text).map(Amount).map_err(de::Error::custom)
    }
}

/// An amount from a platform that writes binary doubles (Exact Online's
/// `Edm.Double`) or more decimals than we keep (MYOB's `decimal`), read from
/// the number's own text and rounded to ten-thousandths (half to even).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Rounded(pub Money);

impl Rounded {
    /// The amount as money.
    pub fn money(self) -> Money {
        self.0
    }

    /// The amount as a quantity.
    pub fn quantity(self) -> Quantity {
        Quantity(self.0.0)
    }
}

/// An optional rounded amount as money; zero when the platform gives none.
pub fn rounded(value: Option<Rounded>) -> Money {
    value.map(Rounded::money).unwrap_or_default()
}

impl<'de> Deserialize<'de> for Rounded {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let raw: &RawValue = Deserialize::deserialize(deserializer)?;
        let text = number_text(raw);
        let decimal = Decimal::from_str(text)
            .or_else(|_| Decimal::from_scientific(text))
            .map_err(|_| de::Error::custom(AmountError::NotANumber))?;
        Money::from_decimal(decimal.round_dp(Money::SCALE))
            .map(Rounded)
            .ok_or_else(|| de::Error::custom(AmountError::TooPrecise))
    }
}

/// The text of a JSON number, or of a string holding one (platforms write
/// amounts both ways).
fn number_text(raw: &RawValue) -> &str {
    let text = raw.get().trim();
    text.strip_prefix('"')
        .and_then(|inner| inner.strip_suffix('"'))
        .unwrap_or(text)
}

/// Parses a decimal's text into exact money.
pub fn parse_amount(text: &str) -> Result<Money, AmountError> {
    let decimal = Decimal::from_str(text)
        .or_else(|_| Decimal::from_scientific(text))
        .map_err(|_| AmountError::NotANumber)?;
    Money::from_decimal(decimal).ok_or(AmountError::TooPrecise)
}

/// Why an amount was refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AmountError {
    /// Not a decimal number.
    NotANumber,
    /// Finer than ten-thousandths, or beyond the range we store.
    TooPrecise,
}

impl fmt::Display for AmountError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::NotANumber => f.write_str("an amount is not a decimal number"),
            Self::TooPrecise => {
                f.write_str("an amount has more than four decimal places or is out of range")
            }
        }
    }
}

/// Reads Xero's `/Date(1518685950940+0000)/` (milliseconds since the epoch,
/// UTC; the offset is informational), or an ISO date-time.
pub fn xero_datetime(text: &str) -> Option<DateTime<Utc>> {
    if let Some(inner) = text
        .strip_prefix("/Date(")
        .and_then(|rest| rest.strip_suffix(")/"))
    {
        let millis_end = inner
            .char_indices()
            .skip(1)
            .find(|(_, c)| *c == '+' || *c == '-')
            .map_or(inner.len(), |(index, _)| index);
        let millis: i64 = inner[..millis_end].parse().ok()?;
        return DateTime::from_timestamp_millis(millis);
    }
    datetime(text)
}

/// Xero's dates are midnight UTC of the day, in either form.
pub fn xero_date(text: &str) -> Option<NaiveDate> {
    xero_datetime(text)
        .map(|at| at.date_naive())
        .or_else(|| date(text))
}

/// An RFC 3339 date-time, one with a `+hhmm` offset (Zoho), or a local
/// date-time without an offset (read as UTC).
pub fn datetime(text: &str) -> Option<DateTime<Utc>> {
    DateTime::parse_from_rfc3339(text)
        .or_else(|_| DateTime::parse_from_str(text, "%Y-%m-%dT%H:%M:%S%z"))
        .or_else(|_| DateTime::parse_from_str(text, "%Y-%m-%dT%H:%M:%S%.f%z"))
        .map(|at| at.with_timezone(&Utc))
        .ok()
        .or_else(|| {
            NaiveDateTime::parse_from_str(text, "%Y-%m-%dT%H:%M:%S%.f")
                .ok()
                .map(|at| at.and_utc())
        })
}

/// A `YYYY-MM-DD` date (or the date part of a date-time).
pub fn date(text: &str) -> Option<NaiveDate> {
    let day = text.get(..10).unwrap_or(text);
    NaiveDate::parse_from_str(day, "%Y-%m-%d").ok()
}

/// A record's date that it cannot be read without: `field`'s `YYYY-MM-DD`
/// (or a date-time's date), else why the record is unreadable.
pub fn required_date(text: Option<&str>, field: &str) -> Result<NaiveDate, Unreadable> {
    text.and_then(date)
        .ok_or_else(|| Unreadable::field(field, "is missing or not a date"))
}

/// Deserializes an optional string field, treating `""` as absent.
pub fn non_empty(value: Option<String>) -> Option<String> {
    value
        .map(|text| text.trim().to_owned())
        .filter(|text| !text.is_empty())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Deserialize)]
    struct Line {
        amount: Amount,
        other: Option<Amount>,
    }

    #[test]
    fn amounts_keep_every_digit_of_the_number_text() {
        let line: Line =
            serde_json::from_str(r#"{"amount": 1127.81, "other": "0.1"}"#).expect("parses");
        assert_eq!(line.amount.money(), Money(11_278_100));
        assert_eq!(line.other.map(Amount::money), Some(Money(1_000)));
        // A float would turn this into 9007199254740993 → ...992.
        let big: Line = serde_json::from_str(r#"{"amount": 900719925474.0993, "other": null}"#)
            .expect("parses");
        assert_eq!(big.amount.money(), Money(9_007_199_254_740_993));
        assert!(serde_json::from_str::<Line>(r#"{"amount": 1.00001}"#).is_err());
        assert!(serde_json::from_str::<Line>(r#"{"amount": "abc"}"#).is_err());
    }

    #[test]
    fn rounded_amounts_keep_four_places_of_a_longer_number() {
        #[derive(Deserialize)]
        struct Row {
            amount: Rounded,
        }
        let read = |text: &str| {
            serde_json::from_str::<Row>(text)
                .map(|row| row.amount.money())
                .ok()
        };
        assert_eq!(
            read(r#"{"amount": 24.3766206457717}"#),
            Some(Money(243_766))
        );
        assert_eq!(
            read(r#"{"amount": 0.30000000000000004}"#),
            Some(Money(3_000))
        );
        assert_eq!(read(r#"{"amount": 1234.56}"#), Some(Money(12_345_600)));
        assert_eq!(read(r#"{"amount": "x"}"#), None);
    }

    #[test]
    fn a_line_total_divides_into_exact_unit_prices() {
        assert_eq!(per_unit(Money(399_800), Quantity::units(2)), Money(199_900));
        // 10.00 / 3 = 3.33333… → 3.3333
        assert_eq!(per_unit(Money(100_000), Quantity::units(3)), Money(33_333));
        assert_eq!(per_unit(Money(100_000), Quantity(0)), Money(100_000));
        assert_eq!(per_unit(Money(-50_000), Quantity::units(1)), Money(-50_000));
    }

    #[test]
    fn platform_dates_are_read() {
        assert_eq!(
            xero_date("/Date(1518652800000+0000)/"),
            NaiveDate::from_ymd_opt(2018, 2, 15)
        );
        assert_eq!(
            xero_datetime("/Date(1518685950940+0000)/").map(|at| at.timestamp_millis()),
            Some(1_518_685_950_940)
        );
        assert_eq!(
            xero_date("2009-05-27T00:00:00"),
            NaiveDate::from_ymd_opt(2009, 5, 27)
        );
        assert_eq!(
            datetime("2013-11-18T02:17:40-0800").map(|at| at.to_rfc3339()),
            Some("2013-11-18T10:17:40+00:00".to_owned())
        );
        assert_eq!(
            datetime("2015-07-24T10:33:39-07:00").map(|at| at.to_rfc3339()),
            Some("2015-07-24T17:33:39+00:00".to_owned())
        );
        assert_eq!(date("2024-01-15"), NaiveDate::from_ymd_opt(2024, 1, 15));
        assert_eq!(date("15/01/2024"), None);
    }
}
