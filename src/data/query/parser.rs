//! The grammar of `query`: comparisons joined by `&&` (first) and `||`,
//! grouped by `{ }`, read by recursive descent into a [`Query`]; a mistake
//! names the character where it is (from 1) and why.

use super::values::{fits, operand, operators_for};
use super::{Comparison, MAX_NESTING, MAX_QUERY_LENGTH, OPERATORS, Query, unknown_field};
use crate::data::DataType;
use crate::data::fields;
use crate::error::Error;

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

struct Parser {
    data_type: DataType,
    chars: Vec<char>,
    at: usize,
    depth: usize,
}

impl Parser {
    /// `all (|| all)*`
    fn any(&mut self) -> Result<Query, Error> {
        self.joined("||", Self::all, Query::Any)
    }

    /// `primary (&& primary)*`
    fn all(&mut self) -> Result<Query, Error> {
        self.joined("&&", Self::primary, Query::All)
    }

    /// One or more `part`s separated by `token`: the part itself when alone,
    /// else the parts `group`ed.
    fn joined(
        &mut self,
        token: &str,
        part: fn(&mut Self) -> Result<Query, Error>,
        group: fn(Vec<Query>) -> Query,
    ) -> Result<Query, Error> {
        let mut parts = vec![part(self)?];
        while self.eat(token) {
            parts.push(part(self)?);
        }
        Ok(match parts.len() {
            1 => parts.remove(0),
            _ => group(parts),
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

#[cfg(test)]
mod tests {
    use super::super::test_support::{compare, invoices, text};
    use super::super::{Operand, Operator};
    use super::*;

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
}
