//! A declared field's value as a key: read out of a record's stored JSON
//! without building the whole value tree, and written so that byte order
//! is the field's order (numbers included), as the queries compare them.

use std::borrow::Cow;
use std::fmt;

use serde::de::{self, DeserializeSeed, Deserializer, IgnoredAny, MapAccess, Visitor};

use crate::data::fields::{Field, Kind};

/// The values of `fields` in the record `body` (a JSON object), by field:
/// `None` where the record has no value (absent or `null`). An error means
/// the body is not an object shaped as its schema says.
pub fn extract<'b>(
    body: &'b str,
    fields: &[&Field],
) -> Result<Vec<Option<Cow<'b, str>>>, serde_json::Error> {
    let wanted: Vec<(usize, &[String])> = fields
        .iter()
        .enumerate()
        .map(|(slot, field)| (slot, field.path.as_slice()))
        .collect();
    let mut found = vec![None; fields.len()];
    let mut deserializer = serde_json::Deserializer::from_str(body);
    Wanted {
        paths: &wanted,
        found: &mut found,
    }
    .deserialize(&mut deserializer)?;
    deserializer.end()?;
    Ok(found)
}

/// The paths still to follow inside one JSON object (each with the slot its
/// value goes to), and where values go.
struct Wanted<'a, 'p, 'de> {
    paths: &'a [(usize, &'p [String])],
    found: &'a mut [Option<Cow<'de, str>>],
}

impl<'de> DeserializeSeed<'de> for Wanted<'_, '_, 'de> {
    type Value = ();

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<(), D::Error> {
        deserializer.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for Wanted<'_, '_, 'de> {
    type Value = ();

    fn expecting(&self, formatter: &mut fmt::Formatter) -> fmt::Result {
        formatter.write_str("a JSON object or null")
    }

    /// A nested object that is `null`: none of its fields has a value.
    fn visit_unit<E: de::Error>(self) -> Result<(), E> {
        Ok(())
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        while let Some(key) = map.next_key::<Cow<'de, str>>()? {
            // Most properties are none of the wanted: skipped unread.
            if !self
                .paths
                .iter()
                .any(|(_, path)| path.first().is_some_and(|first| *first == key))
            {
                map.next_value::<IgnoredAny>()?;
                continue;
            }
            let here: Vec<(usize, &[String])> = self
                .paths
                .iter()
                .filter(|(_, path)| path.first().is_some_and(|first| *first == key))
                .map(|(slot, path)| (*slot, &path[1..]))
                .collect();
            match here.as_slice() {
                [(slot, [])] => self.found[*slot] = map.next_value::<Scalar>()?.0,
                _ => map.next_value_seed(Wanted {
                    paths: &here,
                    found: self.found,
                })?,
            }
        }
        Ok(())
    }
}

/// A scalar's text: a string as it is (borrowed from the body when it
/// has no escapes), a number or boolean as JSON writes it; `None` for
/// `null`.
struct Scalar<'de>(Option<Cow<'de, str>>);

impl<'de> de::Deserialize<'de> for Scalar<'de> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_any(ScalarVisitor)
    }
}

struct ScalarVisitor;

impl<'de> Visitor<'de> for ScalarVisitor {
    type Value = Scalar<'de>;

    fn expecting(&self, formatter: &mut fmt::Formatter) -> fmt::Result {
        formatter.write_str("a string, number, boolean or null")
    }

    fn visit_borrowed_str<E: de::Error>(self, text: &'de str) -> Result<Scalar<'de>, E> {
        Ok(Scalar(Some(Cow::Borrowed(text))))
    }

    fn visit_str<E: de::Error>(self, text: &str) -> Result<Scalar<'de>, E> {
        Ok(Scalar(Some(Cow::Owned(text.to_owned()))))
    }

    fn visit_bool<E: de::Error>(self, flag: bool) -> Result<Scalar<'de>, E> {
        Ok(Scalar(Some(Cow::Owned(flag.to_string()))))
    }

    fn visit_i64<E: de::Error>(self, number: i64) -> Result<Scalar<'de>, E> {
        Ok(Scalar(Some(Cow::Owned(number.to_string()))))
    }

    fn visit_u64<E: de::Error>(self, number: u64) -> Result<Scalar<'de>, E> {
        Ok(Scalar(Some(Cow::Owned(number.to_string()))))
    }

    fn visit_f64<E: de::Error>(self, number: f64) -> Result<Scalar<'de>, E> {
        Ok(Scalar(Some(Cow::Owned(number.to_string()))))
    }

    fn visit_unit<E: de::Error>(self) -> Result<Scalar<'de>, E> {
        Ok(Scalar(None))
    }
}

/// `value` of a field of `kind` as a key: text as it is (dates and
/// date-times are written in one fixed format, so they order as text, by
/// byte, as the queries compare them), a number as [`number`] writes it.
/// `None` for a number that is not a decimal.
pub fn encode(kind: &Kind, value: String) -> Option<String> {
    match kind {
        Kind::Number => number(&value),
        _ => Some(value),
    }
}

/// The widest decimal exponent a key holds (far beyond any amount).
const EXPONENT_LIMIT: i64 = 4_999;

/// A decimal (`-12.50`, `0.05`, `1e3`) written so that byte order is
/// numeric order and equal numbers are written alike: `B` for zero; `C`,
/// then the exponent (offset, four digits), then the significant digits for
/// a positive number; `A`, then both complemented (so larger magnitudes
/// come first), then `~` (so a shorter magnitude sorts after its
/// extensions) for a negative one. `None` when `text` is not a decimal or
/// its exponent is beyond [`EXPONENT_LIMIT`].
pub fn number(text: &str) -> Option<String> {
    let (negative, unsigned) = match text.strip_prefix('-') {
        Some(rest) => (true, rest),
        None => (false, text.strip_prefix('+').unwrap_or(text)),
    };
    let (mantissa, exponent) = match unsigned.find(['e', 'E']) {
        Some(at) => (&unsigned[..at], unsigned[at + 1..].parse::<i64>().ok()?),
        None => (unsigned, 0),
    };
    let (whole, fraction) = mantissa.split_once('.').unwrap_or((mantissa, ""));
    if whole.is_empty() && fraction.is_empty()
        || !whole
            .bytes()
            .chain(fraction.bytes())
            .all(|b| b.is_ascii_digit())
    {
        return None;
    }
    // The value is 0.<digits> × 10^point.
    let digits = format!("{whole}{fraction}");
    let leading = digits.len() - digits.trim_start_matches('0').len();
    let significant = digits.trim_matches('0');
    if significant.is_empty() {
        return Some("B".to_owned());
    }
    let point = i64::try_from(whole.len()).ok()? - i64::try_from(leading).ok()? + exponent;
    if point.abs() > EXPONENT_LIMIT {
        return None;
    }
    let offset = point + EXPONENT_LIMIT;
    Some(if negative {
        let complemented: String = significant
            .bytes()
            .map(|digit| char::from(b'9' - (digit - b'0')))
            .collect();
        format!("A{:04}{complemented}~", 2 * EXPONENT_LIMIT - offset)
    } else {
        format!("C{offset:04}{significant}")
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::data::DataType;
    use crate::data::fields;

    #[test]
    fn numbers_order_by_value_and_equal_numbers_are_written_alike() {
        let ascending = [
            "-1000", "-12.51", "-12.5", "-12", "-1.05", "-0.5", "-0.05", "0", "0.001", "0.05",
            "0.5", "1", "1.5", "9.99", "10", "12.5", "12.51", "99", "100", "1000.01",
        ];
        let written: Vec<String> = ascending
            .iter()
            .map(|text| number(text).expect("a decimal"))
            .collect();
        for pair in written.windows(2) {
            assert!(pair[0] < pair[1], "{} !< {}", pair[0], pair[1]);
        }
        for (a, b) in [
            ("12.50", "12.5"),
            ("012.5", "12.5"),
            ("-0.00", "0"),
            ("1e3", "1000"),
            ("1.5E1", "15"),
            ("+7", "7"),
        ] {
            assert_eq!(number(a), number(b), "{a} and {b}");
        }
        for not_a_number in ["", "-", ".", "1.2.3", "12a", "1e", "--1", "1e99999"] {
            assert_eq!(number(not_a_number), None, "{not_a_number}");
        }
    }

    #[test]
    fn a_records_declared_values_are_read_from_its_json_nested_and_null_alike() {
        let named = |name| fields::named(DataType::INVOICES, name).expect("a field");
        let fields = [
            named("customerRef.id"),
            named("issueDate"),
            named("totalAmount"),
            named("dueDate"),
        ];
        let body = r#"{"invoiceId":"1","customerRef":{"companyName":"A \"B\"","id":"c-9"},
            "issueDate":"2026-01-02","lineItems":[{"totalAmount":"1.00"}],"totalAmount":"12.50",
            "dueDate":null}"#;
        let owned = |found: Vec<Option<Cow<str>>>| -> Vec<Option<String>> {
            found
                .into_iter()
                .map(|value| value.map(Cow::into_owned))
                .collect()
        };
        assert_eq!(
            owned(extract(body, &fields).expect("an object")),
            vec![
                Some("c-9".to_owned()),
                Some("2026-01-02".to_owned()),
                Some("12.50".to_owned()),
                None
            ]
        );
        let without_customer = r#"{"customerRef":null,"issueDate":"2026-01-02","totalAmount":3}"#;
        assert_eq!(
            owned(extract(without_customer, &fields).expect("an object")),
            vec![
                None,
                Some("2026-01-02".to_owned()),
                Some("3".to_owned()),
                None
            ]
        );
        assert!(extract("[1]", &fields).is_err());
    }
}
