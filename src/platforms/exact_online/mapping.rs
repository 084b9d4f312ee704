//! Exact Online's answers and how they become our records: the OData v2
//! envelope (`d.results`, `d.__next`), `/Date(ms)/` dates, `Edm.Double`
//! amounts, sales invoices (status 10 draft, 20 open, 50 processed; credit
//! notes skipped) with their expanded lines, and sales accounts.

use chrono::Utc;
use serde::Deserialize;

use crate::data::accounts::AccountRef;
use crate::data::credit_notes::{CreditNote, CreditNoteStatus};
use crate::data::customers::{Customer, CustomerStatus};
use crate::data::invoices::{CustomerRef, Invoice, InvoiceStatus, LineItem};
use crate::data::money::Money;
use crate::platforms::kit::json::{self, Rounded, rounded};
use crate::platforms::kit::records::{Each, Keyed, Unreadable};
use crate::timestamp::Timestamp;

/// Exact's invoice statuses (`Status`, an `Int16`). Open (20) invoices can
/// still be changed and have not been sent; processed (50) ones have been
/// printed or sent. Exact's sales invoice carries no payment state, so a
/// processed invoice is `Submitted` and its whole total due (`NOTES.md`,
/// open questions).
const STATUSES: &[(i64, InvoiceStatus)] = &[
    (10, InvoiceStatus::Draft),
    (20, InvoiceStatus::Draft),
    (50, InvoiceStatus::Submitted),
];

/// Our status of an Exact invoice status code.
pub(super) fn invoice_status(status: Option<i64>) -> InvoiceStatus {
    status
        .and_then(|code| STATUSES.iter().find(|(theirs, _)| *theirs == code))
        .map_or(InvoiceStatus::Unknown, |(_, ours)| *ours)
}

/// Exact's credit note types (`Type` 8021 sales credit note, 8024 direct
/// sales credit note): not invoices.
const CREDIT_NOTES: [i64; 2] = [8021, 8024];

/// An OData v2 answer of what a token reaches (the user, divisions):
/// `{"d": {"results": [...]}}`, read whole.
#[derive(Deserialize)]
pub(super) struct OData<T> {
    pub(super) d: Results<T>,
}

/// The `d` of such an answer.
#[derive(Deserialize)]
pub(super) struct Results<T> {
    pub(super) results: Vec<T>,
}

/// An OData v2 list of records, `{"d": {"results": [...], "__next": "..."}}`,
/// each record read on its own.
#[derive(Deserialize)]
#[serde(bound = "T: serde::de::DeserializeOwned")]
pub(super) struct ODataRecords<T> {
    pub(super) d: RecordResults<T>,
}

/// The `d` of an OData v2 list of records.
#[derive(Deserialize)]
#[serde(bound = "T: serde::de::DeserializeOwned")]
pub(super) struct RecordResults<T> {
    pub(super) results: Each<T>,
    #[serde(rename = "__next")]
    pub(super) next: Option<String>,
}

impl Keyed for ExactInvoice {
    const ID: &'static str = "/InvoiceID";
}

impl Keyed for ExactAccount {
    const ID: &'static str = "/ID";
}

/// The signed-in user (`GET /api/v1/current/Me`).
#[derive(Deserialize)]
#[serde(rename_all = "PascalCase")]
pub(super) struct Me {
    #[serde(rename = "CurrentDivision")]
    pub(super) current_division: Option<i64>,
}

/// A division the user granted (`GET /api/v1/{division}/hrm/Divisions`).
#[derive(Deserialize)]
#[serde(rename_all = "PascalCase")]
pub(super) struct Division {
    /// The division number, as API paths take it.
    pub(super) code: i64,
    /// Its name.
    pub(super) description: Option<String>,
}

/// An invoice id (`$select=InvoiceID`), for verification.
#[derive(Deserialize)]
pub(super) struct InvoiceId {
    #[serde(rename = "InvoiceID")]
    pub(super) _invoice_id: String,
}

/// A sales invoice as Exact writes it.
#[derive(Deserialize)]
#[serde(rename_all = "PascalCase")]
pub(super) struct ExactInvoice {
    #[serde(rename = "InvoiceID")]
    invoice_id: String,
    invoice_number: Option<i64>,
    invoice_to: Option<String>,
    invoice_to_name: Option<String>,
    invoice_date: Option<String>,
    due_date: Option<String>,
    currency: Option<String>,
    #[serde(rename = "AmountFCExclVat")]
    amount_fc_excl_vat: Option<Rounded>,
    #[serde(rename = "VATAmountFC")]
    vat_amount_fc: Option<Rounded>,
    #[serde(rename = "AmountFC")]
    amount_fc: Option<Rounded>,
    status: Option<i64>,
    #[serde(rename = "Type")]
    kind: Option<i64>,
    description: Option<String>,
    remarks: Option<String>,
    modified: Option<String>,
    sales_invoice_lines: Option<Lines>,
}

/// `SalesInvoiceLines`: expanded, `{"results": [...]}`; deferred
/// (`{"__deferred": {...}}`, when the answer did not expand them) reads as
/// no lines.
#[derive(Deserialize)]
struct Lines {
    #[serde(default)]
    results: Vec<ExactLine>,
}

#[derive(Deserialize)]
#[serde(rename_all = "PascalCase")]
struct ExactLine {
    description: Option<String>,
    quantity: Option<Rounded>,
    unit_price: Option<Rounded>,
    #[serde(rename = "AmountFC")]
    amount_fc: Option<Rounded>,
    #[serde(rename = "VATAmountFC")]
    vat_amount_fc: Option<Rounded>,
    #[serde(rename = "GLAccount")]
    gl_account: Option<String>,
    #[serde(rename = "GLAccountDescription")]
    gl_account_description: Option<String>,
}

impl ExactLine {
    /// Our line, its amounts multiplied by `sign` (1, or -1 to turn a
    /// credit note's negative amounts into the credit given): `AmountFC`
    /// excludes VAT for normal lines; the G/L account named.
    fn into_line(self, sign: i64) -> LineItem {
        let signed = |money: Money| Money(money.0 * sign);
        let sub_total = signed(rounded(self.amount_fc));
        let tax_amount = signed(rounded(self.vat_amount_fc));
        LineItem {
            description: self.description.unwrap_or_default(),
            unit_amount: signed(rounded(self.unit_price)),
            quantity: self.quantity.map(Rounded::quantity).unwrap_or_default(),
            discount_amount: Money(0),
            sub_total,
            tax_amount,
            total_amount: sub_total + tax_amount,
            account_ref: AccountRef::to(
                json::non_empty(self.gl_account),
                json::non_empty(self.gl_account_description),
            ),
        }
    }
}

impl ExactInvoice {
    /// A sales credit note: not an invoice.
    pub(super) fn is_credit_note(&self) -> bool {
        self.kind.is_some_and(|kind| CREDIT_NOTES.contains(&kind))
    }

    /// Our invoice; one without a readable `InvoiceDate` cannot be read.
    pub(super) fn into_record(self) -> Result<Invoice, Unreadable> {
        let issue_date = self
            .invoice_date
            .as_deref()
            .and_then(json::xero_date)
            .ok_or_else(|| Unreadable::field("InvoiceDate", "is missing or not a date"))?;
        let total = rounded(self.amount_fc);
        let tax = rounded(self.vat_amount_fc);
        let status = invoice_status(self.status);
        let lines = self.sales_invoice_lines.map(|lines| lines.results);
        let line_items = lines
            .unwrap_or_default()
            .into_iter()
            .map(|line| line.into_line(1))
            .collect();
        Ok(Invoice {
            invoice_number: self.invoice_number.map(|number| number.to_string()),
            customer_ref: CustomerRef::to(self.invoice_to, self.invoice_to_name),
            issue_date,
            due_date: self.due_date.as_deref().and_then(json::xero_date),
            paid_on_date: None,
            currency: self.currency.unwrap_or_default(),
            sub_total: self.amount_fc_excl_vat.map_or(total - tax, Rounded::money),
            total_tax_amount: tax,
            total_amount: total,
            // No payment state on the invoice: all of it counts as due.
            amount_due: total,
            status,
            line_items,
            note: json::non_empty(self.description).or_else(|| json::non_empty(self.remarks)),
            source_modified_date: modified(self.modified.as_deref()),
            invoice_id: self.invoice_id,
        })
    }
}

impl ExactInvoice {
    /// Our credit note (a sales invoice of type 8021 or 8024). Exact writes
    /// a credit note's amounts negative; ours are the credit given,
    /// positive, whichever sign Exact used (`NOTES.md`). Exact says nothing
    /// of what was matched against it, so all of an issued credit note's
    /// credit remains and it has no allocations.
    pub(super) fn into_credit_note(self) -> Result<CreditNote, Unreadable> {
        let issue_date = self
            .invoice_date
            .as_deref()
            .and_then(json::xero_date)
            .ok_or_else(|| Unreadable::field("InvoiceDate", "is missing or not a date"))?;
        let sign = if rounded(self.amount_fc) < Money(0) {
            -1
        } else {
            1
        };
        let signed = |money: Money| Money(money.0 * sign);
        let total = signed(rounded(self.amount_fc));
        let tax = signed(rounded(self.vat_amount_fc));
        let status = match self.status {
            Some(10 | 20) => CreditNoteStatus::Draft,
            Some(50) => CreditNoteStatus::Submitted,
            _ => CreditNoteStatus::Unknown,
        };
        let line_items = self
            .sales_invoice_lines
            .map(|lines| lines.results)
            .unwrap_or_default()
            .into_iter()
            .map(|line| line.into_line(sign))
            .collect();
        Ok(CreditNote {
            credit_note_number: self.invoice_number.map(|number| number.to_string()),
            customer_ref: CustomerRef::to(self.invoice_to, self.invoice_to_name),
            issue_date,
            currency: self.currency.unwrap_or_default(),
            sub_total: self
                .amount_fc_excl_vat
                .map_or(total - tax, |amount| signed(amount.money())),
            total_tax_amount: tax,
            total_amount: total,
            remaining_credit: total,
            status,
            line_items,
            allocations: Vec::new(),
            note: json::non_empty(self.description).or_else(|| json::non_empty(self.remarks)),
            source_modified_date: modified(self.modified.as_deref()),
            credit_note_id: self.invoice_id,
        })
    }
}

fn modified(text: Option<&str>) -> Option<Timestamp> {
    text.and_then(json::xero_datetime).map(Timestamp)
}

/// An account as Exact writes it (`crm/Accounts`).
#[derive(Deserialize)]
#[serde(rename_all = "PascalCase")]
pub(super) struct ExactAccount {
    #[serde(rename = "ID")]
    id: String,
    code: Option<String>,
    name: Option<String>,
    email: Option<String>,
    phone: Option<String>,
    blocked: Option<bool>,
    end_date: Option<String>,
    sales_currency: Option<String>,
    modified: Option<String>,
}

impl ExactAccount {
    /// Our customer: archived when blocked or past its end date.
    pub(super) fn into_record(self) -> Customer {
        let ended = self
            .end_date
            .as_deref()
            .and_then(json::xero_date)
            .is_some_and(|end| end < Utc::now().date_naive());
        Customer {
            customer_name: json::non_empty(self.name)
                .or_else(|| json::non_empty(self.code))
                .unwrap_or_else(|| self.id.clone()),
            email_address: json::non_empty(self.email),
            phone: json::non_empty(self.phone),
            default_currency: json::non_empty(self.sales_currency),
            status: if self.blocked == Some(true) || ended {
                CustomerStatus::Archived
            } else {
                CustomerStatus::Active
            },
            source_modified_date: modified(self.modified.as_deref()),
            customer_id: self.id,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exact_statuses_map_by_code() {
        assert_eq!(invoice_status(Some(10)), InvoiceStatus::Draft);
        assert_eq!(invoice_status(Some(20)), InvoiceStatus::Draft);
        assert_eq!(invoice_status(Some(50)), InvoiceStatus::Submitted);
        assert_eq!(invoice_status(Some(99)), InvoiceStatus::Unknown);
        assert_eq!(invoice_status(None), InvoiceStatus::Unknown);
    }
}
