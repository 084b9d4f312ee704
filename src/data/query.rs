//! `query` and `orderBy` of the synced-data lists, in the reference
//! product's syntax: comparisons (`currency=GBP`, `amountDue>0`,
//! `customerRef.id=61`, `note~urgent`) joined by `&&` and `||` and grouped
//! with `{ }`; `orderBy=issueDate` or `orderBy=-issueDate`.
//!
//! Parsing checks every field against the list's [`fields`](super::fields)
//! and every value against its field's kind, so what reaches the store is
//! typed and normalized; a mistake is reported with the character where it
//! is (from 1) and why.

use chrono::{DateTime, NaiveDate, SecondsFormat, Utc};

use super::fields::{self, Field, Kind};
use super::{DataType, Direction};
use crate::error::Error;

/// The longest query accepted, in characters.
pub const MAX_QUERY_LENGTH: usize = 2048;

/// How deep `{ }` may nest.
pub const MAX_NESTING: usize = 32;

/// The comparison operators, longest first (the order they are matched in).
const OPERATORS: [(&str, Operator); 7] = [
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

/// Parses `text` as a query over `data_type`'s list.
pub fn parse(data_type: DataType, text: &str) -> Result<Query, Error> {
    let length = text.chars().count();
    if length > MAX_QUERY_LENGTH {
        return Err(Error::invalid(
            "query",
            format!("is {length} characters long; the most is {MAX_QUERY_LENGTH}"),
        ));
    }
    let mut parser = Parser {
        data_type,
        chars: text.chars().collect(),
        at: 0,
        depth: 0,
    };
    let query = parser.any()?;
    parser.skip_spaces();
    match parser.peek() {
        None => Ok(query),
        Some('}') => Err(parser.error(parser.at, "this `}` closes no `{`")),
        Some(_) => Err(parser.error(parser.at, "expected `&&`, `||` or the end of the query")),
    }
}

/// A query with its comparison on the list's own filter field lifted out:
/// `status=paid&&currency=GBP` is the `status` filter (`Paid`), which has
/// stored ordinals and an index, and `currency=GBP`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Lifted {
    /// The filter value: the list's filter parameter's, or the lifted one.
    pub filter: Option<String>,
    /// What remains of the query; `None` when nothing does.
    pub rest: Option<Query>,
}

/// Lifts an `=` on the field the list's filter parameter names out of
/// `query`, when it is the whole query or one of its top-level `&&` parts
/// and agrees with `filter` (the parameter's value, if given). The records
/// selected do not change.
pub fn lift_filter(data_type: DataType, filter: Option<&str>, query: Query) -> Lifted {
    let Some(parameter) = data_type.spec().filter.as_ref().map(|spec| spec.parameter) else {
        return Lifted {
            filter: filter.map(str::to_owned),
            rest: Some(query),
        };
    };
    let liftable = |part: &Query| -> Option<String> {
        let Query::Compare(comparison) = part else {
            return None;
        };
        let Operand::Text(value) = &comparison.value else {
            return None;
        };
        (comparison.field.name == parameter
            && comparison.operator == Operator::Equal
            && filter.is_none_or(|given| given == value))
        .then(|| value.clone())
    };
    match query {
        Query::All(mut parts) => match parts.iter().position(|part| liftable(part).is_some()) {
            Some(index) => {
                let lifted = liftable(&parts.remove(index));
                let rest = match parts.len() {
                    1 => parts.pop(),
                    _ => Some(Query::All(parts)),
                };
                Lifted {
                    filter: lifted,
                    rest,
                }
            }
            None => Lifted {
                filter: filter.map(str::to_owned),
                rest: Some(Query::All(parts)),
            },
        },
        query => match liftable(&query) {
            Some(value) => Lifted {
                filter: Some(value),
                rest: None,
            },
            None => Lifted {
                filter: filter.map(str::to_owned),
                rest: Some(query),
            },
        },
    }
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
fn unknown_field(data_type: DataType, name: &str) -> String {
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
fn shown(text: &str) -> String {
    let mut shown: String = text.chars().take(64).collect();
    if text.chars().count() > 64 {
        shown.push('…');
    }
    shown
}

struct Parser {
    data_type: DataType,
    chars: Vec<char>,
    at: usize,
    depth: usize,
}

impl Parser {
    /// `all (|| all)*`
    fn any(&mut self) -> Result<Query, Error> {
        let mut alternatives = vec![self.all()?];
        while self.eat("||") {
            alternatives.push(self.all()?);
        }
        Ok(match alternatives.len() {
            1 => alternatives.remove(0),
            _ => Query::Any(alternatives),
        })
    }

    /// `primary (&& primary)*`
    fn all(&mut self) -> Result<Query, Error> {
        let mut parts = vec![self.primary()?];
        while self.eat("&&") {
            parts.push(self.primary()?);
        }
        Ok(match parts.len() {
            1 => parts.remove(0),
            _ => Query::All(parts),
        })
    }

    /// `{ any }` or a comparison.
    fn primary(&mut self) -> Result<Query, Error> {
        self.skip_spaces();
        let opened = self.at;
        if !self.eat("{") {
            return self.comparison();
        }
        self.depth += 1;
        if self.depth > MAX_NESTING {
            return Err(self.error(opened, &format!("braces nest deeper than {MAX_NESTING}")));
        }
        let inner = self.any()?;
        self.skip_spaces();
        if !self.eat("}") {
            return Err(match self.peek() {
                None => self.error(opened, "this `{` is not closed"),
                Some(_) => self.error(self.at, "expected `&&`, `||` or `}`"),
            });
        }
        self.depth -= 1;
        Ok(inner)
    }

    /// `field operator value`
    fn comparison(&mut self) -> Result<Query, Error> {
        self.skip_spaces();
        let name_at = self.at;
        while self
            .peek()
            .is_some_and(|c| c.is_ascii_alphanumeric() || c == '_' || c == '.')
        {
            self.at += 1;
        }
        let name: String = self.chars[name_at..self.at].iter().collect();
        if name.is_empty() {
            return Err(match self.peek() {
                None => self.error(name_at, "the query ends where a field name was expected"),
                Some(c) => self.error(name_at, &format!("expected a field name, found `{c}`")),
            });
        }
        let field = fields::named(self.data_type, &name)
            .ok_or_else(|| self.error(name_at, &unknown_field(self.data_type, &name)))?;
        self.skip_spaces();
        let operator_at = self.at;
        let operator = OPERATORS
            .iter()
            .find(|(symbol, _)| self.eat(symbol))
            .map(|(_, operator)| *operator)
            .ok_or_else(|| {
                self.error(
                    operator_at,
                    &format!("expected an operator (=, !=, ~, >, <, >=, <=) after `{name}`"),
                )
            })?;
        self.skip_spaces();
        let value_at = self.at;
        while self.peek().is_some() && !self.looking_at("&&") && !self.looking_at("||") {
            if self.peek() == Some('}') {
                break;
            }
            self.at += 1;
        }
        let value: String = self.chars[value_at..self.at].iter().collect();
        let value = value.trim_end();
        if value.is_empty() {
            return Err(self.error(
                value_at,
                &format!("a value is missing after `{name}{}`", operator.symbol()),
            ));
        }
        if !fits(&field.kind, operator) {
            return Err(self.error(
                operator_at,
                &format!(
                    "`{}` does not apply to `{name}`, which is {}; it takes {}",
                    operator.symbol(),
                    field.kind.describe(),
                    operators_for(&field.kind)
                ),
            ));
        }
        let value = operand(&field.kind, value).map_err(|why| self.error(value_at, &why))?;
        Ok(Query::Compare(Comparison {
            field,
            operator,
            value,
        }))
    }

    fn peek(&self) -> Option<char> {
        self.chars.get(self.at).copied()
    }

    fn looking_at(&self, token: &str) -> bool {
        token
            .chars()
            .enumerate()
            .all(|(offset, expected)| self.chars.get(self.at + offset) == Some(&expected))
    }

    /// Consumes `token` (after spaces) if it comes next.
    fn eat(&mut self, token: &str) -> bool {
        let before = self.at;
        self.skip_spaces();
        if self.looking_at(token) {
            self.at += token.chars().count();
            true
        } else {
            self.at = before;
            false
        }
    }

    fn skip_spaces(&mut self) {
        while self.peek().is_some_and(char::is_whitespace) {
            self.at += 1;
        }
    }

    /// A 400 for `query`, at the character `at` (counted from 0 here, from
    /// 1 in the message).
    fn error(&self, at: usize, reason: &str) -> Error {
        Error::invalid("query", format!("at character {}: {reason}", at + 1))
    }
}

/// Whether `operator` applies to fields of `kind`.
fn fits(kind: &Kind, operator: Operator) -> bool {
    match kind {
        Kind::Text => !operator.orders(),
        Kind::Vocabulary(_) | Kind::Boolean => {
            matches!(operator, Operator::Equal | Operator::NotEqual)
        }
        Kind::Number | Kind::Date | Kind::DateTime => operator != Operator::Contains,
    }
}

/// The operators `kind` takes, in words.
fn operators_for(kind: &Kind) -> &'static str {
    match kind {
        Kind::Text => "=, != and ~",
        Kind::Vocabulary(_) | Kind::Boolean => "= and !=",
        Kind::Number | Kind::Date | Kind::DateTime => "=, !=, >, <, >= and <=",
    }
}

/// `text` as a value of `kind`, or why it is not one.
fn operand(kind: &Kind, text: &str) -> Result<Operand, String> {
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

#[cfg(test)]
mod tests {
    use super::*;

    fn invoices(text: &str) -> Result<Query, String> {
        parse(DataType::INVOICES, text).map_err(|error| match error {
            Error::Invalid(problems) => problems[0].message.clone(),
            other => format!("{other}"),
        })
    }

    fn compare(name: &str, operator: Operator, value: Operand) -> Query {
        Query::Compare(Comparison {
            field: fields::named(DataType::INVOICES, name).expect("a field"),
            operator,
            value,
        })
    }

    fn text(value: &str) -> Operand {
        Operand::Text(value.to_owned())
    }

    #[test]
    fn comparisons_join_with_and_before_or_and_group_with_braces() {
        assert_eq!(
            invoices("currency=GBP&&amountDue>0||status=paid"),
            Ok(Query::Any(vec![
                Query::All(vec![
                    compare("currency", Operator::Equal, text("GBP")),
                    compare("amountDue", Operator::Greater, Operand::Number("0".into())),
                ]),
                compare("status", Operator::Equal, text("Paid")),
            ]))
        );
        assert_eq!(
            invoices("currency=GBP && {dueDate<2024-01-31 || customerRef.id!=61}"),
            Ok(Query::All(vec![
                compare("currency", Operator::Equal, text("GBP")),
                Query::Any(vec![
                    compare("dueDate", Operator::Less, text("2024-01-31")),
                    compare("customerRef.id", Operator::NotEqual, text("61")),
                ]),
            ]))
        );
    }

    #[test]
    fn values_are_bare_and_normalized_to_how_records_write_them() {
        assert_eq!(
            invoices("note~two words, = signs"),
            Ok(compare(
                "note",
                Operator::Contains,
                text("two words, = signs")
            ))
        );
        assert_eq!(
            invoices("modifiedDate>=2024-01-31"),
            Ok(compare(
                "modifiedDate",
                Operator::GreaterOrEqual,
                text("2024-01-31T00:00:00.000000Z")
            ))
        );
        assert_eq!(
            invoices("modifiedDate<2024-01-31T10:00:00.1234567+01:00"),
            Ok(compare(
                "modifiedDate",
                Operator::Less,
                text("2024-01-31T09:00:00.123456Z")
            ))
        );
        assert_eq!(
            invoices("status!=PARTIALLYPAID"),
            Ok(compare("status", Operator::NotEqual, text("PartiallyPaid")))
        );
    }

    #[test]
    fn mistakes_say_where_and_why() {
        let cases = [
            (
                "",
                "at character 1: the query ends where a field name was expected",
            ),
            (
                "currency",
                "at character 9: expected an operator (=, !=, ~, >, <, >=, <=) after `currency`",
            ),
            (
                "currency=",
                "at character 10: a value is missing after `currency=`",
            ),
            (
                "currency=GBP&&",
                "at character 15: the query ends where a field name was expected",
            ),
            ("{currency=GBP", "at character 1: this `{` is not closed"),
            ("currency=GBP}", "at character 13: this `}` closes no `{`"),
            (
                "currency>GBP",
                "at character 9: `>` does not apply to `currency`, which is text; it takes =, != and ~",
            ),
            (
                "amountDue>ten",
                "at character 11: `ten` is not a decimal number such as 12.50",
            ),
            (
                "dueDate>31/01/2024",
                "at character 9: `31/01/2024` is not a date written YYYY-MM-DD",
            ),
            (
                "status=settled",
                "at character 8: `settled` is not one of Draft, Submitted, PartiallyPaid, Paid, Void, Unknown (any case)",
            ),
            (
                "status~Pa",
                "at character 7: `~` does not apply to `status`, which is one of a vocabulary; it takes = and !=",
            ),
            (
                "(currency=GBP)",
                "at character 1: expected a field name, found `(`",
            ),
        ];
        for (query, expected) in cases {
            assert_eq!(invoices(query), Err(expected.to_owned()), "{query}");
        }
        let unknown = invoices("currency=GBP&&lineItems.quantity>1").expect_err("unknown");
        assert!(
            unknown.starts_with(
                "at character 15: the invoices list has no field `lineItems.quantity` to query or order by; it has invoiceId, connectionId,"
            ),
            "{unknown}"
        );
    }

    #[test]
    fn long_and_deep_queries_are_refused() {
        let long = format!("note~{}", "x".repeat(MAX_QUERY_LENGTH));
        assert_eq!(
            invoices(&long),
            Err(format!(
                "is {} characters long; the most is 2048",
                MAX_QUERY_LENGTH + 5
            ))
        );
        assert_eq!(
            invoices("modifiedDate>9999-12-31T23:59:59-01:00"),
            Err("at character 14: `9999-12-31T23:59:59-01:00` is not a date (YYYY-MM-DD) or an RFC 3339 date-time".to_owned())
        );
        let just = format!("note~{}", "x".repeat(MAX_QUERY_LENGTH - 5));
        assert!(invoices(&just).is_ok());
        let deep = format!("{}currency=GBP{}", "{".repeat(40), "}".repeat(40));
        assert_eq!(
            invoices(&deep),
            Err("at character 33: braces nest deeper than 32".to_owned())
        );
    }

    #[test]
    fn an_equality_on_the_lists_filter_field_becomes_the_filter() {
        let lifted = |filter: Option<&str>, text: &str| {
            lift_filter(DataType::INVOICES, filter, invoices(text).expect("valid"))
        };
        assert_eq!(
            lifted(None, "status=paid"),
            Lifted {
                filter: Some("Paid".to_owned()),
                rest: None
            }
        );
        assert_eq!(
            lifted(None, "currency=GBP&&status=PAID&&amountDue>0"),
            Lifted {
                filter: Some("Paid".to_owned()),
                rest: Some(Query::All(vec![
                    compare("currency", Operator::Equal, text("GBP")),
                    compare("amountDue", Operator::Greater, Operand::Number("0".into())),
                ]))
            }
        );
        assert_eq!(
            lifted(Some("Paid"), "currency=GBP&&status=paid"),
            Lifted {
                filter: Some("Paid".to_owned()),
                rest: Some(compare("currency", Operator::Equal, text("GBP")))
            }
        );
        // What cannot be lifted stays in the query, and the filter with it.
        for (filter, query) in [
            (Some("Draft"), "status=paid"),
            (None, "status!=paid"),
            (None, "status=paid||currency=GBP"),
        ] {
            assert_eq!(
                lifted(filter, query),
                Lifted {
                    filter: filter.map(str::to_owned),
                    rest: Some(invoices(query).expect("valid"))
                },
                "{query}"
            );
        }
        // A list without a filter keeps its query whole.
        let customers = parse(DataType::CUSTOMERS, "status=Active").expect("valid");
        assert_eq!(
            lift_filter(DataType::CUSTOMERS, None, customers.clone()),
            Lifted {
                filter: None,
                rest: Some(customers)
            }
        );
    }

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
