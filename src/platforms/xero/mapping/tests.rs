//! Unit tests of Xero's mapping.

use super::*;

#[test]
fn xero_statuses_map_with_their_amounts() {
    let due = Money(1_000_000);
    assert_eq!(invoice_status("DRAFT", due, Money(0)), InvoiceStatus::Draft);
    assert_eq!(
        invoice_status("SUBMITTED", due, Money(0)),
        InvoiceStatus::Draft
    );
    assert_eq!(
        invoice_status("AUTHORISED", due, Money(0)),
        InvoiceStatus::Submitted
    );
    assert_eq!(
        invoice_status("AUTHORISED", due, Money(5)),
        InvoiceStatus::PartiallyPaid
    );
    assert_eq!(
        invoice_status("AUTHORISED", Money(0), Money(5)),
        InvoiceStatus::Paid
    );
    assert_eq!(invoice_status("PAID", Money(0), due), InvoiceStatus::Paid);
    assert_eq!(invoice_status("VOIDED", due, Money(0)), InvoiceStatus::Void);
    assert_eq!(
        invoice_status("DELETED", due, Money(0)),
        InvoiceStatus::Void
    );
    assert_eq!(
        invoice_status("SOMETHING", due, Money(0)),
        InvoiceStatus::Unknown
    );
}
