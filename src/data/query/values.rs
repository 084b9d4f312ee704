//! What a comparison may do with a field of each kind: the operators it
//! takes, and a value checked and normalized to the way records write it.

use chrono::{DateTime, NaiveDate, SecondsFormat, Utc};

use super::{Operand, Operator, shown};
use crate::data::fields::Kind;

/// Whether `operator` applies to fields of `kind`.
pub(super) fn fits(kind: &Kind, operator: Operator) -> bool {
    match kind {
        Kind::Text => !operator.orders(),
        Kind::Vocabulary(_) | Kind::Boolean => {
            matches!(operator, Operator::Equal | Operator::NotEqual)
        }
        Kind::Number | Kind::Date | Kind::DateTime => operator != Operator::Contains,
    }
}

/// The operators `kind` takes, in words.
pub(super) fn operators_for(kind: &Kind) -> &'static str {
    match kind {
        Kind::Text => "=, != and ~",
        Kind::Vocabulary(_) | Kind::Boolean => "= and !=",
        Kind::Number | Kind::Date | Kind::DateTime => "=, !=, >, <, >= and <=",
    }
}

/// `text` as a value of `kind`, or why it is not one.
pub(super) fn operand(kind: &Kind, text: &str) -> Result<Operand, String> {
    match kind {
        Kind::Text => Ok(Operand::Text(text.to_owned())),
        Kind::Vocabulary(values) => values
            .iter()
            .find(|value| value.eq_ignore_ascii_case(text))
            .map(|value| Operand::Text(value.clone()))
            .ok_or_else(|| {
                format!(
                    "`{}` is not one of {} (any case)",
                    shown(text),
                    values.join(", ")
                )
            }),
        Kind::Number => is_decimal(text)
            .then(|| Operand::Number(text.to_owned()))
            .ok_or_else(|| format!("`{}` is not a decimal number such as 12.50", shown(text))),
        Kind::Date => NaiveDate::parse_from_str(text, "%Y-%m-%d")
            .ok()
            .filter(|_| text.len() == 10)
            .map(|date| Operand::Text(date.format("%Y-%m-%d").to_string()))
            .ok_or_else(|| format!("`{}` is not a date written YYYY-MM-DD", shown(text))),
        Kind::DateTime => date_time(text)
            .map(|instant| Operand::Text(instant.to_rfc3339_opts(SecondsFormat::Micros, true)))
            .ok_or_else(|| {
                format!(
                    "`{}` is not a date (YYYY-MM-DD) or an RFC 3339 date-time",
                    shown(text)
                )
            }),
        Kind::Boolean => match text {
            "true" => Ok(Operand::Boolean(true)),
            "false" => Ok(Operand::Boolean(false)),
            _ => Err(format!("`{}` is not true or false", shown(text))),
        },
    }
}

/// A date (its midnight, UTC) or an RFC 3339 date-time, at microseconds.
fn date_time(text: &str) -> Option<DateTime<Utc>> {
    if text.len() == 10 {
        let date = NaiveDate::parse_from_str(text, "%Y-%m-%d").ok()?;
        return Some(date.and_hms_opt(0, 0, 0)?.and_utc());
    }
    let parsed = DateTime::parse_from_rfc3339(text).ok()?.with_timezone(&Utc);
    // Stored date-times compare as text with four-digit years; an offset
    // can carry a value past 9999 (`+10000-…`), which would sort first.
    (0..=9999)
        .contains(&chrono::Datelike::year(&parsed))
        .then(|| chrono::SubsecRound::trunc_subsecs(parsed, 6))
}

/// `-?digits(.digits)?`, at most 28 digits (what PostgreSQL's `numeric`
/// compares exactly; SQLite compares as `REAL`, to about 15 significant
/// digits).
fn is_decimal(text: &str) -> bool {
    let unsigned = text.strip_prefix('-').unwrap_or(text);
    let (whole, fraction) = match unsigned.split_once('.') {
        Some((whole, fraction)) => (whole, Some(fraction)),
        None => (unsigned, None),
    };
    let digits = |part: &str| !part.is_empty() && part.bytes().all(|b| b.is_ascii_digit());
    digits(whole) && fraction.is_none_or(digits) && whole.len() + fraction.map_or(0, str::len) <= 28
}
