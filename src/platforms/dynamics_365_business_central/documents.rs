//! Business Central's purchase invoices (`purchaseInvoices`) and sales
//! credit memos (`salesCreditMemos`), with their lines, and how they become
//! our bills and credit notes. Neither has a remaining amount in the API
//! (only sales invoices do): `Open` is owed whole, `Paid` not at all.
//! Sources: `NOTES.md`, "Accounting model".

use serde::Deserialize;

use super::mapping::{BcLine, EMPTY_GUID, member};
use crate::data::bills::{Bill, BillStatus};
use crate::data::credit_notes::{CreditNote, CreditNoteAllocation, CreditNoteStatus, InvoiceRef};
use crate::data::invoices::CustomerRef;
use crate::data::money::Money;
use crate::data::suppliers::SupplierRef;
use crate::platforms::kit::json::{self, Amount, money};
use crate::platforms::kit::records::{Keyed, Unreadable};

impl Keyed for BcPurchaseInvoice {
    const ID: &'static str = "/id";
}

impl Keyed for BcCreditMemo {
    const ID: &'static str = "/id";
}

/// A reference id, or none for Business Central's empty GUID.
fn reference(id: Option<String>) -> Option<String> {
    json::non_empty(id).filter(|id| id != EMPTY_GUID)
}

/// A document date, else its posting date.
fn document_date(
    date: Option<&str>,
    posting: Option<&str>,
    field: &str,
) -> Result<chrono::NaiveDate, Unreadable> {
    date.and_then(json::date)
        .or_else(|| posting.and_then(json::date))
        .ok_or_else(|| Unreadable::field(field, "is missing or not a date, and so is postingDate"))
}

/// A purchase invoice (`purchaseInvoice` entity) with its lines.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
pub(super) struct BcPurchaseInvoice {
    id: String,
    vendor_invoice_number: Option<String>,
    number: Option<String>,
    invoice_date: Option<String>,
    posting_date: Option<String>,
    due_date: Option<String>,
    vendor_id: Option<String>,
    vendor_name: Option<String>,
    currency_code: Option<String>,
    total_amount_excluding_tax: Option<Amount>,
    total_tax_amount: Option<Amount>,
    total_amount_including_tax: Option<Amount>,
    status: Option<String>,
    last_modified_date_time: Option<String>,
    #[serde(default, deserialize_with = "json::list_or_null")]
    purchase_invoice_lines: Vec<BcLine>,
}

impl BcPurchaseInvoice {
    /// Our bill: `Draft` and `In Review` drafts, `Open` owed whole (a part
    /// payment does not show in the API), `Paid`, `Canceled` and
    /// `Corrective` void. The vendor's invoice number is the reference,
    /// Business Central's own number the note.
    pub(super) fn into_record(self) -> Result<Bill, Unreadable> {
        let issue_date = document_date(
            self.invoice_date.as_deref(),
            self.posting_date.as_deref(),
            "invoiceDate",
        )?;
        let total = money(self.total_amount_including_tax);
        let tax = money(self.total_tax_amount);
        let status = match self.status.as_deref().map(member).as_deref() {
            Some("Draft" | "In Review") => BillStatus::Draft,
            Some("Open") => BillStatus::Open,
            Some("Paid") => BillStatus::Paid,
            Some("Canceled" | "Corrective") => BillStatus::Void,
            _ => BillStatus::Unknown,
        };
        let amount_due = match status {
            BillStatus::Draft | BillStatus::Open | BillStatus::Unknown => total,
            _ => Money(0),
        };
        Ok(Bill {
            reference: json::non_empty(self.vendor_invoice_number),
            supplier_ref: SupplierRef::to(
                reference(self.vendor_id),
                json::non_empty(self.vendor_name),
            ),
            issue_date,
            due_date: self.due_date.as_deref().and_then(json::date),
            paid_on_date: None,
            currency: json::non_empty(self.currency_code).unwrap_or_default(),
            sub_total: self
                .total_amount_excluding_tax
                .map_or(total - tax, Amount::money),
            tax_amount: tax,
            total_amount: total,
            amount_due,
            status,
            line_items: BcLine::in_order(self.purchase_invoice_lines)
                .into_iter()
                .map(BcLine::into_bill_line)
                .collect(),
            note: json::non_empty(self.number),
            source_modified_date: json::timestamp(self.last_modified_date_time.as_deref()),
            bill_id: self.id,
        })
    }
}

/// A sales credit memo (`salesCreditMemo` entity) with its lines.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
pub(super) struct BcCreditMemo {
    id: String,
    number: Option<String>,
    external_document_number: Option<String>,
    credit_memo_date: Option<String>,
    posting_date: Option<String>,
    customer_id: Option<String>,
    customer_name: Option<String>,
    currency_code: Option<String>,
    total_amount_excluding_tax: Option<Amount>,
    total_tax_amount: Option<Amount>,
    total_amount_including_tax: Option<Amount>,
    status: Option<String>,
    invoice_id: Option<String>,
    invoice_number: Option<String>,
    last_modified_date_time: Option<String>,
    #[serde(default, deserialize_with = "json::list_or_null")]
    sales_credit_memo_lines: Vec<BcLine>,
}

impl BcCreditMemo {
    /// Our credit note: `Open` with all its credit left, `Paid` with none
    /// (its ledger entry closed). A paid credit memo applied to an invoice
    /// (`invoiceId`, Business Central's "Applies-to Doc. No.") allocates its
    /// whole credit to it; an open one has allocated nothing.
    pub(super) fn into_record(self) -> Result<CreditNote, Unreadable> {
        let issue_date = document_date(
            self.credit_memo_date.as_deref(),
            self.posting_date.as_deref(),
            "creditMemoDate",
        )?;
        let total = money(self.total_amount_including_tax);
        let tax = money(self.total_tax_amount);
        let status = match self.status.as_deref().map(member).as_deref() {
            Some("Draft" | "In Review") => CreditNoteStatus::Draft,
            Some("Open") => CreditNoteStatus::Submitted,
            Some("Paid") => CreditNoteStatus::Paid,
            Some("Canceled" | "Corrective") => CreditNoteStatus::Void,
            _ => CreditNoteStatus::Unknown,
        };
        let remaining_credit = match status {
            CreditNoteStatus::Paid | CreditNoteStatus::Void => Money(0),
            _ => total,
        };
        let allocations = match (status, reference(self.invoice_id)) {
            (CreditNoteStatus::Paid, Some(invoice_id)) => vec![CreditNoteAllocation {
                invoice_ref: InvoiceRef {
                    id: invoice_id,
                    invoice_number: json::non_empty(self.invoice_number),
                },
                amount: total,
                allocated_on_date: None,
            }],
            _ => Vec::new(),
        };
        Ok(CreditNote {
            credit_note_number: json::non_empty(self.number),
            customer_ref: CustomerRef::to(
                reference(self.customer_id),
                json::non_empty(self.customer_name),
            ),
            issue_date,
            currency: json::non_empty(self.currency_code).unwrap_or_default(),
            sub_total: self
                .total_amount_excluding_tax
                .map_or(total - tax, Amount::money),
            total_tax_amount: tax,
            total_amount: total,
            remaining_credit,
            status,
            line_items: BcLine::in_order(self.sales_credit_memo_lines)
                .into_iter()
                .map(BcLine::into_line)
                .collect(),
            allocations,
            note: json::non_empty(self.external_document_number),
            source_modified_date: json::timestamp(self.last_modified_date_time.as_deref()),
            credit_note_id: self.id,
        })
    }
}
