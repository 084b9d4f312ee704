//! An equality on the list's own filter field (`status=paid`) read as that
//! filter, which has stored ordinals and an index, rather than as JSON; or,
//! when the declared fields' keys answer the whole query, the filter read
//! from the keys with the rest.

use super::{Comparison, Operand, Operator, Query};
use crate::data::{DataType, fields};

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
///
/// Except when the list declares keys for its filter's field and for every
/// field `query` compares (with operators keys answer): then `query` keeps
/// its comparison, and the parameter's value joins it as one more `=`, so
/// the whole selection is read from the keys (an intersection of keyed
/// matches) instead of every record of that filter value being read for
/// the rest. A query of the filter's field alone is still the filter: its
/// stored ordinals answer it at once.
pub fn lift_filter(data_type: DataType, filter: Option<&str>, query: Query) -> Lifted {
    let Some(parameter) = data_type.spec().filter.as_ref().map(|spec| spec.parameter) else {
        return Lifted {
            filter: filter.map(str::to_owned),
            rest: Some(query),
        };
    };
    let alone = matches!(&query, Query::Compare(comparison)
        if comparison.field.name == parameter && comparison.operator == Operator::Equal);
    if !alone && answered_by_keys(data_type, parameter, &query) {
        let filter_field = fields::named(data_type, parameter);
        match (filter, filter_field) {
            (None, _) => {
                return Lifted {
                    filter: None,
                    rest: Some(query),
                };
            }
            (Some(value), Some(field)) => {
                let mut parts = vec![Query::Compare(Comparison {
                    field,
                    operator: Operator::Equal,
                    value: Operand::Text(value.to_owned()),
                })];
                match query {
                    Query::All(rest) => parts.extend(rest),
                    query => parts.push(query),
                }
                return Lifted {
                    filter: None,
                    rest: Some(Query::All(parts)),
                };
            }
            // The filter's field is not among the list's queryable fields:
            // lifted as below.
            (Some(_), None) => {}
        }
    }
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

/// Whether `data_type` declares keys for its filter's field `parameter` and
/// for every field `query` compares, each with an operator keys answer
/// (every one but `~`).
fn answered_by_keys(data_type: DataType, parameter: &str, query: &Query) -> bool {
    fn keyed(keys: &[&str], query: &Query) -> bool {
        match query {
            Query::All(parts) | Query::Any(parts) => parts.iter().all(|part| keyed(keys, part)),
            Query::Compare(comparison) => {
                comparison.operator != Operator::Contains
                    && keys.contains(&comparison.field.name.as_str())
            }
        }
    }
    let keys = data_type.spec().keys;
    keys.contains(&parameter) && keyed(keys, query)
}

#[cfg(test)]
mod tests {
    use super::super::parse;
    use super::super::test_support::{compare, invoices, text};
    use super::*;

    #[test]
    fn an_equality_on_the_lists_filter_field_becomes_the_filter_unless_the_keys_answer_the_query() {
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
        // With a field that has no keys (`invoiceNumber`), or one the keys
        // cannot answer (`~`), the rest is read from the filter's records.
        assert_eq!(
            lifted(None, "invoiceNumber=INV-1&&status=PAID&&amountDue>0"),
            Lifted {
                filter: Some("Paid".to_owned()),
                rest: Some(Query::All(vec![
                    compare("invoiceNumber", Operator::Equal, text("INV-1")),
                    compare("amountDue", Operator::Greater, Operand::Number("0".into())),
                ]))
            }
        );
        assert_eq!(
            lifted(Some("Paid"), "currency~GB&&status=paid"),
            Lifted {
                filter: Some("Paid".to_owned()),
                rest: Some(compare("currency", Operator::Contains, text("GB")))
            }
        );
        // What cannot be lifted stays in the query, and the filter with it.
        for (filter, query) in [
            (Some("Draft"), "status=paid"),
            (None, "status!=paid||note~x"),
            (None, "status=paid||currency~GB"),
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
        // A query the keys answer whole keeps its `status`, and the
        // parameter's joins it.
        for query in [
            "currency=GBP&&status=PAID&&amountDue>0",
            "status!=paid",
            "status=paid||currency=GBP",
        ] {
            assert_eq!(
                lifted(None, query),
                Lifted {
                    filter: None,
                    rest: Some(invoices(query).expect("valid"))
                },
                "{query}"
            );
        }
        assert_eq!(
            lifted(Some("Paid"), "currency=GBP&&amountDue>0"),
            Lifted {
                filter: None,
                rest: Some(Query::All(vec![
                    compare("status", Operator::Equal, text("Paid")),
                    compare("currency", Operator::Equal, text("GBP")),
                    compare("amountDue", Operator::Greater, Operand::Number("0".into())),
                ]))
            }
        );
        assert_eq!(
            lifted(Some("Draft"), "currency=GBP"),
            Lifted {
                filter: None,
                rest: Some(Query::All(vec![
                    compare("status", Operator::Equal, text("Draft")),
                    compare("currency", Operator::Equal, text("GBP")),
                ]))
            }
        );
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
}
