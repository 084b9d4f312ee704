//! Mapping a platform's status words to ours: a table per platform, and
//! the rule for statuses that only amounts decide.

use crate::data::invoices::InvoiceStatus;
use crate::data::money::Money;

/// A platform's status words and ours; words not listed fall to the
/// connector's own rule (amounts) or to `Unknown`.
pub type StatusTable = &'static [(&'static str, InvoiceStatus)];

/// Our status for `word` in `table`, if listed.
pub fn lookup(table: StatusTable, word: &str) -> Option<InvoiceStatus> {
    table
        .iter()
        .find(|(theirs, _)| *theirs == word)
        .map(|(_, ours)| *ours)
}

/// Our word for `word` in a table of any of our vocabularies (orders'
/// statuses, for one), if listed.
pub fn find<S: Copy>(table: &[(&str, S)], word: &str) -> Option<S> {
    table
        .iter()
        .find(|(theirs, _)| *theirs == word)
        .map(|(_, ours)| *ours)
}

/// The status amounts decide: `Paid` when nothing is due, `PartiallyPaid`
/// when less than the total is, `Submitted` when all of it is.
pub fn by_balance(total: Money, due: Money) -> InvoiceStatus {
    if due <= Money(0) {
        InvoiceStatus::Paid
    } else if due < total {
        InvoiceStatus::PartiallyPaid
    } else {
        InvoiceStatus::Submitted
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn amounts_decide_between_submitted_part_paid_and_paid() {
        let total = Money(1_000_000);
        assert_eq!(by_balance(total, total), InvoiceStatus::Submitted);
        assert_eq!(by_balance(total, Money(1)), InvoiceStatus::PartiallyPaid);
        assert_eq!(by_balance(total, Money(0)), InvoiceStatus::Paid);
        const TABLE: StatusTable = &[("VOIDED", InvoiceStatus::Void)];
        assert_eq!(lookup(TABLE, "VOIDED"), Some(InvoiceStatus::Void));
        assert_eq!(lookup(TABLE, "voided"), None);
    }

    #[test]
    fn any_vocabulary_is_found_by_the_exact_word() {
        use crate::data::orders::OrderStatus;
        const ORDERS: &[(&str, OrderStatus)] = &[("Shipped", OrderStatus::Completed)];
        assert_eq!(find(ORDERS, "Shipped"), Some(OrderStatus::Completed));
        assert_eq!(find(ORDERS, "shipped"), None);
    }
}
