//! An equality on the list's own filter field (`status=paid`) read as that
//! filter, which has stored ordinals and an index, rather than as JSON.

use super::{Operand, Operator, Query};
use crate::data::DataType;

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

#[cfg(test)]
mod tests {
    use super::super::parse;
    use super::super::test_support::{compare, invoices, text};
    use super::*;

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
}
