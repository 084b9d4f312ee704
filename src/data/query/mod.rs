//! `query` and `orderBy` of the synced-data lists, in the reference
//! product's syntax: comparisons (`currency=GBP`, `amountDue>0`,
//! `customerRef.id=61`, `note~urgent`) joined by `&&` and `||` and grouped
//! with `{ }`; `orderBy=issueDate` or `orderBy=-issueDate`.
//!
//! Parsing checks every field against the list's [`fields`](super::fields)
//! and every value against its field's kind, so what reaches the store is
//! typed and normalized; a mistake is reported with the character where it
//! is (from 1) and why.

//!
//! - [`parser`]: the grammar, and where a mistake is.
//! - [`values`]: which operators a field's kind takes, and its values
//!   checked and normalized.
//! - [`lift`]: an equality on the list's own filter field read as the filter.

mod lift;
mod parser;
mod values;

use super::fields::{self, Field};
use super::{DataType, Direction};
use crate::error::Error;

pub use lift::{Lifted, lift_filter};
pub use parser::parse;

/// The longest query accepted, in characters.
pub const MAX_QUERY_LENGTH: usize = 2048;

/// How deep `{ }` may nest.
pub const MAX_NESTING: usize = 32;

/// The comparison operators, longest first (the order they are matched in).
pub(super) const OPERATORS: [(&str, Operator); 7] = [
    ("!=", Operator::NotEqual),
    (">=", Operator::GreaterOrEqual),
    ("<=", Operator::LessOrEqual),
    ("=", Operator::Equal),
    ("~", Operator::Contains),
    (">", Operator::Greater),
    ("<", Operator::Less),
];

/// A parsed query: what a list's records must satisfy.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Query {
    /// Every one of these (`&&`).
    All(Vec<Query>),
    /// At least one of these (`||`).
    Any(Vec<Query>),
    /// One field compared with one value.
    Compare(Comparison),
}

/// `field operator value`, checked against the field's kind.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Comparison {
    /// The field compared.
    pub field: &'static Field,
    /// How.
    pub operator: Operator,
    /// With what, normalized to the way records write the field.
    pub value: Operand,
}

/// A comparison operator.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Operator {
    /// `=`
    Equal,
    /// `!=` (a record without the field matches)
    NotEqual,
    /// `~`: the text contains the value, letter case as written.
    Contains,
    /// `>`
    Greater,
    /// `<`
    Less,
    /// `>=`
    GreaterOrEqual,
    /// `<=`
    LessOrEqual,
}

impl Operator {
    /// How the operator is written.
    pub fn symbol(self) -> &'static str {
        OPERATORS
            .iter()
            .find(|(_, operator)| *operator == self)
            .map_or("?", |(symbol, _)| symbol)
    }

    fn orders(self) -> bool {
        matches!(
            self,
            Operator::Greater | Operator::Less | Operator::GreaterOrEqual | Operator::LessOrEqual
        )
    }
}

/// A comparison's value, as records write the field.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Operand {
    /// Text: free text, a vocabulary's value (in its own letter case), a
    /// date (`YYYY-MM-DD`) or a date-time (RFC 3339 UTC with microseconds),
    /// all of which compare as text.
    Text(String),
    /// A decimal number, as written (`-12.50`).
    Number(String),
    /// `true` or `false`.
    Boolean(bool),
}

/// An `orderBy`: a field and a direction.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OrderBy {
    /// The field ordered by.
    pub field: &'static Field,
    /// `field` is ascending, `-field` descending.
    pub direction: Direction,
}

/// Parses `text` as an `orderBy` of `data_type`'s list.
pub fn parse_order_by(data_type: DataType, text: &str) -> Result<OrderBy, Error> {
    let (direction, name) = match text.strip_prefix('-') {
        Some(name) => (Direction::Descending, name),
        None => (Direction::Ascending, text),
    };
    let field = fields::named(data_type, name)
        .ok_or_else(|| Error::invalid("orderBy", unknown_field(data_type, name)))?;
    Ok(OrderBy { field, direction })
}

/// The message for a field `data_type`'s list does not have.
pub(super) fn unknown_field(data_type: DataType, name: &str) -> String {
    let names: Vec<&str> = fields::of(data_type)
        .iter()
        .map(|field| field.name.as_str())
        .collect();
    format!(
        "the {} list has no field `{}` to query or order by; it has {}",
        data_type.spec().noun,
        shown(name),
        names.join(", ")
    )
}

/// Text of the client's as a message may quote it: at most 64 characters.
pub(super) fn shown(text: &str) -> String {
    let mut shown: String = text.chars().take(64).collect();
    if text.chars().count() > 64 {
        shown.push('…');
    }
    shown
}

#[cfg(test)]
pub(super) mod test_support {
    //! Queries over invoices, as the tests of each part write them.

    use super::*;

    pub fn invoices(text: &str) -> Result<Query, String> {
        parse(DataType::INVOICES, text).map_err(|error| match error {
            Error::Invalid(problems) => problems[0].message.clone(),
            other => format!("{other}"),
        })
    }

    pub fn compare(name: &str, operator: Operator, value: Operand) -> Query {
        Query::Compare(Comparison {
            field: fields::named(DataType::INVOICES, name).expect("a field"),
            operator,
            value,
        })
    }

    pub fn text(value: &str) -> Operand {
        Operand::Text(value.to_owned())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn order_by_names_a_field_and_a_direction() {
        let order = parse_order_by(DataType::INVOICES, "-amountDue").expect("valid");
        assert_eq!(order.field.name, "amountDue");
        assert_eq!(order.direction, Direction::Descending);
        let order = parse_order_by(DataType::INVOICES, "customerRef.id").expect("valid");
        assert_eq!(order.direction, Direction::Ascending);
        assert!(parse_order_by(DataType::INVOICES, "lineItems").is_err());
        assert!(parse_order_by(DataType::INVOICES, "--issueDate").is_err());
    }
}
