//! Credit notes: sales credit notes (credit given to customers), with the
//! invoices their credit was allocated to and the credit that remains;
//! newest issue date first, filterable by status.

use std::borrow::Cow;

use chrono::NaiveDate;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::invoices::{CustomerRef, LineItem};
use super::money::Money;
use super::{Definition, Direction, Filter, FilterValues, Spec, vocabulary};
use crate::timestamp::Timestamp;

/// The credit notes data type.
pub struct CreditNotes;

impl Definition for CreditNotes {
    type Record = CreditNote;

    const SPEC: &'static Spec = &Spec {
        name: "creditNotes",
        noun: "credit notes",
        id_field: "creditNoteId",
        order: Direction::Descending,
        order_description: "newest issue date first (ties broken by connection, then credit note id)",
        filter: Some(Filter {
            parameter: "status",
            description: "Only credit notes in this status",
            values: FilterValues::Vocabulary(CreditNoteStatus::NAMES),
        }),
        keys: &[
            "customerRef.id",
            "issueDate",
            "currency",
            "totalAmount",
            "status",
            "modifiedDate",
        ],
    };

    fn id(record: &CreditNote) -> &str {
        &record.credit_note_id
    }

    fn sort_key(record: &CreditNote) -> String {
        record.issue_date.format("%Y-%m-%d").to_string()
    }

    fn filter_value(record: &CreditNote) -> Option<Cow<'static, str>> {
        Some(Cow::Borrowed(record.status.as_str()))
    }
}

vocabulary! {
    /// Where a credit note stands.
    pub enum CreditNoteStatus {
        /// Not yet issued.
        Draft,
        /// Issued, none of its credit used: remainingCredit = totalAmount.
        Submitted,
        /// Part of its credit allocated or refunded: 0 < remainingCredit < totalAmount.
        PartiallyPaid,
        /// All of its credit allocated or refunded: remainingCredit = 0.
        Paid,
        /// Cancelled.
        Void,
        /// The platform's status has no equivalent.
        Unknown,
    }
}

/// A sales credit note synced from an accounting platform. Amounts are
/// exact decimals, as strings, in the credit note's currency. Its credit is
/// allocated to invoices, refunded (a negative payment), or remains:
/// `remainingCredit` plus the allocations never exceed `totalAmount`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct CreditNote {
    /// The platform's id of the credit note (what payments' `CreditNote` allocations name).
    pub credit_note_id: String,
    /// The number people see; null when the platform gives none.
    pub credit_note_number: Option<String>,
    /// The customer credited; null when the platform gives none.
    pub customer_ref: Option<CustomerRef>,
    /// Issue date.
    pub issue_date: NaiveDate,
    /// ISO 4217 currency code.
    pub currency: String,
    /// Total before tax.
    pub sub_total: Money,
    /// Total tax.
    pub total_tax_amount: Money,
    /// Total including tax: the credit given.
    pub total_amount: Money,
    /// Credit not yet allocated or refunded.
    pub remaining_credit: Money,
    /// Status in tributary's vocabulary.
    pub status: CreditNoteStatus,
    /// The credit note's lines.
    pub line_items: Vec<LineItem>,
    /// The invoices its credit was allocated to; empty when the platform keeps allocations elsewhere (`NOTES.md`).
    pub allocations: Vec<CreditNoteAllocation>,
    /// A note on the credit note; null if none.
    pub note: Option<String>,
    /// When the platform's record last changed; null when the platform does not say.
    pub source_modified_date: Option<Timestamp>,
}

/// Credit of a credit note allocated to one invoice.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct CreditNoteAllocation {
    /// The invoice credited.
    pub invoice_ref: InvoiceRef,
    /// How much credit it was given, in the credit note's currency (positive).
    pub amount: Money,
    /// When the credit was allocated; null when the platform does not say.
    pub allocated_on_date: Option<NaiveDate>,
}

/// A reference to an invoice of the same connection: follow it with
/// `GET .../data/invoices/{invoiceId}`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct InvoiceRef {
    /// The invoice's `invoiceId`.
    pub id: String,
    /// The invoice's number, as the referring record gives it; null when it gives none.
    pub invoice_number: Option<String>,
}

impl CreditNote {
    /// What its allocations add up to.
    pub fn allocated(&self) -> Money {
        Money(
            self.allocations
                .iter()
                .map(|allocation| allocation.amount.0)
                .sum(),
        )
    }
}

/// The status of an issued credit note from what remains of its credit.
pub fn status_by_remaining(total: Money, remaining: Money) -> CreditNoteStatus {
    if remaining <= Money(0) {
        CreditNoteStatus::Paid
    } else if remaining < total {
        CreditNoteStatus::PartiallyPaid
    } else {
        CreditNoteStatus::Submitted
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn what_remains_decides_an_issued_credit_notes_status() {
        let total = Money::from_cents(10_000);
        assert_eq!(
            status_by_remaining(total, total),
            CreditNoteStatus::Submitted
        );
        assert_eq!(
            status_by_remaining(total, Money::from_cents(1)),
            CreditNoteStatus::PartiallyPaid
        );
        assert_eq!(status_by_remaining(total, Money(0)), CreditNoteStatus::Paid);
    }
}
