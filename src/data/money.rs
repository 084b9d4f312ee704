//! Exact amounts: money and quantities are integer counts of
//! ten-thousandths, from the platform's decimal text to the API's decimal
//! string, never through a float. The API writes money with two places
//! (`"12.50"`, four when finer amounts exist) and quantities as they are
//! (`"1.5"`).

use std::borrow::Cow;
use std::str::FromStr;

use rust_decimal::Decimal;
use schemars::{JsonSchema, Schema, SchemaGenerator, json_schema};
use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// An exact amount of money: ten-thousandths of the currency unit.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Money(pub i64);

impl Money {
    /// Ten-thousandths per currency unit.
    pub const SCALE: u32 = 4;

    /// An amount of `cents` hundredths.
    pub fn from_cents(cents: i64) -> Self {
        Self(cents * 100)
    }

    /// A decimal amount, if representable exactly in ten-thousandths.
    pub fn from_decimal(amount: Decimal) -> Option<Self> {
        let scaled = amount.checked_mul(Decimal::from(10_000))?;
        if scaled.fract() != Decimal::ZERO {
            return None;
        }
        i64::try_from(scaled).ok().map(Self)
    }

    /// The amount as a decimal with two places (four when finer amounts exist).
    pub fn to_decimal(self) -> Decimal {
        if self.0 % 100 == 0 {
            // Whole cents: always two places ("0.00", "12.50").
            Decimal::new(self.0 / 100, 2)
        } else {
            Decimal::new(self.0, Self::SCALE).normalize()
        }
    }
}

impl std::ops::Add for Money {
    type Output = Money;

    fn add(self, other: Money) -> Money {
        Money(self.0 + other.0)
    }
}

impl std::ops::Sub for Money {
    type Output = Money;

    fn sub(self, other: Money) -> Money {
        Money(self.0 - other.0)
    }
}

impl std::ops::Neg for Money {
    type Output = Money;

    fn neg(self) -> Money {
        Money(-self.0)
    }
}

impl Serialize for Money {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_str(&self.to_decimal())
    }
}

impl<'de> Deserialize<'de> for Money {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let text = Cow::<str>::deserialize(deserializer)?;
        Decimal::from_str(&text)
            .ok()
            .and_then(Self::from_decimal)
            .ok_or_else(|| serde::de::Error::custom("not an exact decimal amount"))
    }
}

impl JsonSchema for Money {
    fn schema_name() -> Cow<'static, str> {
        "Money".into()
    }

    fn inline_schema() -> bool {
        true
    }

    fn json_schema(_: &mut SchemaGenerator) -> Schema {
        json_schema!({ "type": "string", "format": "decimal" })
    }
}

/// An exact quantity, in ten-thousandths (quantities can be fractional).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Quantity(pub i64);

impl Quantity {
    /// `units` whole units.
    pub fn units(units: i64) -> Self {
        Self(units * 10_000)
    }

    /// A decimal quantity, if representable exactly in ten-thousandths.
    pub fn from_decimal(amount: Decimal) -> Option<Self> {
        Money::from_decimal(amount).map(|money| Self(money.0))
    }

    /// The quantity as a decimal, without trailing zeros (`1`, `1.5`).
    pub fn to_decimal(self) -> Decimal {
        Decimal::new(self.0, Money::SCALE).normalize()
    }
}

impl Serialize for Quantity {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_str(&self.to_decimal())
    }
}

impl<'de> Deserialize<'de> for Quantity {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let text = Cow::<str>::deserialize(deserializer)?;
        Decimal::from_str(&text)
            .ok()
            .and_then(Self::from_decimal)
            .ok_or_else(|| serde::de::Error::custom("not an exact decimal quantity"))
    }
}

impl JsonSchema for Quantity {
    fn schema_name() -> Cow<'static, str> {
        "Quantity".into()
    }

    fn inline_schema() -> bool {
        true
    }

    fn json_schema(_: &mut SchemaGenerator) -> Schema {
        json_schema!({ "type": "string", "format": "decimal" })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn money_round_trips_decimals_exactly() {
        let amount: Decimal = "1234.56".parse().expect("a decimal");
        let money = Money::from_decimal(amount).expect("representable");
        assert_eq!(money, Money(12_345_600));
        assert_eq!(money.to_decimal().to_string(), "1234.56");
        assert_eq!(Money::from_cents(500).to_decimal().to_string(), "5.00");
        assert_eq!(Money(0).to_decimal().to_string(), "0.00");
        assert_eq!(Money(12_345).to_decimal().to_string(), "1.2345");
        assert_eq!(
            Money::from_decimal("0.00001".parse().expect("a decimal")),
            None
        );
    }

    #[test]
    fn amounts_are_written_and_read_as_decimal_strings() {
        let written =
            serde_json::to_string(&(Money(-5), Money(-100), Quantity(15_000))).expect("serializes");
        assert_eq!(written, r#"["-0.0005","-0.01","1.5"]"#);
        let read: (Money, Money, Quantity) = serde_json::from_str(&written).expect("reads");
        assert_eq!(read, (Money(-5), Money(-100), Quantity(15_000)));
        assert!(serde_json::from_str::<Money>(r#""1.00001""#).is_err());
    }
}
