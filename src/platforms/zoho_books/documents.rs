//! Zoho Books' bills (`GET /bills`) and credit notes (`GET /creditnotes`),
//! and how they become ours. Their lists carry totals, not lines (lines and
//! a credit note's applications are in the single-record answers only), so
//! neither has lines here, as invoices have none; statuses follow Zoho's
//! word and the balance. Sources: `NOTES.md`, "Accounting model".

use serde::Deserialize;

use super::mapping::PageContext;
use crate::data::bills::{Bill, BillStatus};
use crate::data::credit_notes::{CreditNote, CreditNoteStatus, status_by_remaining};
use crate::data::invoices::CustomerRef;
use crate::data::money::Money;
use crate::data::suppliers::SupplierRef;
use crate::platforms::kit::json::{self, Amount, money};
use crate::platforms::kit::records::{Each, Keyed, Unreadable};

/// A page of `GET /bills`.
#[derive(Deserialize)]
pub(super) struct BillsPage {
    pub(super) code: Option<i64>,
    pub(super) message: Option<String>,
    #[serde(default)]
    pub(super) bills: Each<ZohoBill>,
    pub(super) page_context: Option<PageContext>,
}

/// A page of `GET /creditnotes`.
#[derive(Deserialize)]
pub(super) struct CreditNotesPage {
    pub(super) code: Option<i64>,
    pub(super) message: Option<String>,
    #[serde(default)]
    pub(super) creditnotes: Each<ZohoCreditNote>,
    pub(super) page_context: Option<PageContext>,
}

impl Keyed for ZohoBill {
    const ID: &'static str = "/bill_id";
}

impl Keyed for ZohoCreditNote {
    const ID: &'static str = "/creditnote_id";
}

/// The status of a bill from Zoho's `status` and its balance: one not yet
/// approved is a draft; an open one (`open`, `overdue`, `unpaid`) is part
/// paid when its balance is below its total.
pub(super) fn bill_status(status: &str, total: Money, balance: Money) -> BillStatus {
    match status {
        "draft" | "pending_approval" | "approval_overdue" | "approved" | "rejected" => {
            BillStatus::Draft
        }
        "open" | "overdue" | "unpaid" if balance > Money(0) && balance < total => {
            BillStatus::PartiallyPaid
        }
        "open" | "overdue" | "unpaid" => BillStatus::Open,
        "partially_paid" => BillStatus::PartiallyPaid,
        "paid" => BillStatus::Paid,
        "void" => BillStatus::Void,
        _ => BillStatus::Unknown,
    }
}

/// The status of a credit note from Zoho's `status` and its unapplied
/// credit (`balance`): `open` is issued with credit left, `closed` has none.
pub(super) fn credit_note_status(status: &str, total: Money, balance: Money) -> CreditNoteStatus {
    match status {
        "draft" | "pending_approval" | "approved" | "rejected" => CreditNoteStatus::Draft,
        "open" | "closed" => status_by_remaining(total, balance),
        "void" => CreditNoteStatus::Void,
        _ => CreditNoteStatus::Unknown,
    }
}

/// A bill as Zoho writes it in its list.
#[derive(Deserialize)]
pub(super) struct ZohoBill {
    bill_id: String,
    bill_number: Option<String>,
    reference_number: Option<String>,
    vendor_id: Option<String>,
    vendor_name: Option<String>,
    status: Option<String>,
    date: Option<String>,
    due_date: Option<String>,
    currency_code: Option<String>,
    total: Option<Amount>,
    balance: Option<Amount>,
    sub_total: Option<Amount>,
    tax_total: Option<Amount>,
    last_modified_time: Option<String>,
}

impl ZohoBill {
    /// Our bill; one without a readable date cannot be read. The bill
    /// number is the supplier's reference; Zoho's `reference_number` (an
    /// order number, say) is the note.
    pub(super) fn into_record(self) -> Result<Bill, Unreadable> {
        let issue_date = json::required_date(self.date.as_deref(), "date")?;
        let total = money(self.total);
        let balance = money(self.balance);
        let tax = money(self.tax_total);
        Ok(Bill {
            reference: json::non_empty(self.bill_number),
            supplier_ref: SupplierRef::to(
                json::non_empty(self.vendor_id),
                json::non_empty(self.vendor_name),
            ),
            issue_date,
            due_date: self.due_date.as_deref().and_then(json::date),
            paid_on_date: None,
            currency: self.currency_code.unwrap_or_default(),
            sub_total: self.sub_total.map_or(total - tax, Amount::money),
            tax_amount: tax,
            total_amount: total,
            amount_due: balance,
            status: bill_status(self.status.as_deref().unwrap_or(""), total, balance),
            line_items: Vec::new(),
            note: json::non_empty(self.reference_number),
            source_modified_date: json::timestamp(self.last_modified_time.as_deref()),
            bill_id: self.bill_id,
        })
    }
}

/// A credit note as Zoho writes it in its list.
#[derive(Deserialize)]
pub(super) struct ZohoCreditNote {
    creditnote_id: String,
    creditnote_number: Option<String>,
    reference_number: Option<String>,
    customer_id: Option<String>,
    customer_name: Option<String>,
    status: Option<String>,
    date: Option<String>,
    currency_code: Option<String>,
    total: Option<Amount>,
    balance: Option<Amount>,
    sub_total: Option<Amount>,
    tax_total: Option<Amount>,
    last_modified_time: Option<String>,
}

impl ZohoCreditNote {
    /// Our credit note; what remains is Zoho's `balance`, "the unapplied
    /// credits". Which invoices it was applied to is not in the list.
    pub(super) fn into_record(self) -> Result<CreditNote, Unreadable> {
        let issue_date = json::required_date(self.date.as_deref(), "date")?;
        let total = money(self.total);
        let balance = money(self.balance);
        let tax = money(self.tax_total);
        Ok(CreditNote {
            credit_note_number: json::non_empty(self.creditnote_number),
            customer_ref: CustomerRef::to(
                json::non_empty(self.customer_id),
                json::non_empty(self.customer_name),
            ),
            issue_date,
            currency: self.currency_code.unwrap_or_default(),
            sub_total: self.sub_total.map_or(total - tax, Amount::money),
            total_tax_amount: tax,
            total_amount: total,
            remaining_credit: balance,
            status: credit_note_status(self.status.as_deref().unwrap_or(""), total, balance),
            line_items: Vec::new(),
            allocations: Vec::new(),
            note: json::non_empty(self.reference_number),
            source_modified_date: json::timestamp(self.last_modified_time.as_deref()),
            credit_note_id: self.creditnote_id,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bill_statuses_follow_the_word_and_the_balance() {
        let total = Money(1_000_000);
        for (word, balance, status) in [
            ("draft", total, BillStatus::Draft),
            ("pending_approval", total, BillStatus::Draft),
            ("open", total, BillStatus::Open),
            ("overdue", total, BillStatus::Open),
            ("overdue", Money(5), BillStatus::PartiallyPaid),
            ("partially_paid", Money(5), BillStatus::PartiallyPaid),
            ("paid", Money(0), BillStatus::Paid),
            ("void", total, BillStatus::Void),
            ("whatever", total, BillStatus::Unknown),
        ] {
            assert_eq!(bill_status(word, total, balance), status, "{word}");
        }
    }

    #[test]
    fn credit_note_statuses_follow_the_word_and_what_remains() {
        let total = Money(1_000_000);
        for (word, balance, status) in [
            ("draft", total, CreditNoteStatus::Draft),
            ("open", total, CreditNoteStatus::Submitted),
            ("open", Money(5), CreditNoteStatus::PartiallyPaid),
            ("closed", Money(0), CreditNoteStatus::Paid),
            ("void", total, CreditNoteStatus::Void),
            ("whatever", total, CreditNoteStatus::Unknown),
        ] {
            assert_eq!(credit_note_status(word, total, balance), status, "{word}");
        }
    }
}
