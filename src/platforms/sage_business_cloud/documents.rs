//! Sage's purchase invoices (`GET /purchase_invoices`) and sales credit
//! notes (`GET /sales_credit_notes`), and how they become our bills and
//! credit notes: with their lines (each line's ledger account and tax
//! rate), statuses by the same artefact status ids as sales invoices.
//! Sources: `NOTES.md`, "Accounting model".

use serde::Deserialize;

use super::mapping::{Link, SageLine, artefact_status, currency_code};
use crate::data::bills::{Bill, BillLineItem, BillStatus};
use crate::data::credit_notes::{CreditNote, CreditNoteStatus, status_by_remaining};
use crate::data::invoices::{CustomerRef, InvoiceStatus};
use crate::data::suppliers::SupplierRef;
use crate::platforms::kit::json::{self, Amount, money, quantity};
use crate::platforms::kit::records::{Keyed, Unreadable};

impl Keyed for SagePurchaseInvoice {
    const ID: &'static str = "/id";
}

impl Keyed for SageCreditNote {
    const ID: &'static str = "/id";
}

/// A purchase invoice as `GET /purchase_invoices?attributes=all` gives it.
#[derive(Deserialize)]
pub(super) struct SagePurchaseInvoice {
    id: String,
    vendor_reference: Option<String>,
    reference: Option<String>,
    contact: Option<Link>,
    contact_name: Option<String>,
    date: Option<String>,
    due_date: Option<String>,
    last_paid: Option<String>,
    currency: Option<Link>,
    net_amount: Option<Amount>,
    tax_amount: Option<Amount>,
    total_amount: Option<Amount>,
    outstanding_amount: Option<Amount>,
    status: Option<Link>,
    void_reason: Option<String>,
    notes: Option<String>,
    updated_at: Option<String>,
    #[serde(default, deserialize_with = "json::list_or_null")]
    invoice_lines: Vec<SagePurchaseLine>,
}

/// A line of a purchase invoice; it has no discount.
#[derive(Deserialize)]
struct SagePurchaseLine {
    description: Option<String>,
    quantity: Option<Amount>,
    unit_price: Option<Amount>,
    net_amount: Option<Amount>,
    tax_amount: Option<Amount>,
    total_amount: Option<Amount>,
    ledger_account: Option<Link>,
    tax_rate: Option<Link>,
}

impl SagePurchaseInvoice {
    /// Our bill: the vendor's reference is the supplier's number (else
    /// Sage's own reference); the status as a sales invoice's, `UNPAID`
    /// being `Open`.
    pub(super) fn into_record(self) -> Result<Bill, Unreadable> {
        let issue_date = json::required_date(self.date.as_deref(), "date")?;
        let total = money(self.total_amount);
        let tax = money(self.tax_amount);
        let outstanding = money(self.outstanding_amount);
        let status = BillStatus::from(artefact_status(
            self.status,
            self.void_reason,
            total,
            outstanding,
        ));
        let (supplier_id, supplier_shown) = Link::parts(self.contact);
        Ok(Bill {
            reference: json::non_empty(self.vendor_reference)
                .or_else(|| json::non_empty(self.reference)),
            supplier_ref: SupplierRef::to(
                supplier_id,
                json::non_empty(self.contact_name).or(supplier_shown),
            ),
            issue_date,
            due_date: self.due_date.as_deref().and_then(json::date),
            paid_on_date: if status == BillStatus::Paid {
                self.last_paid.as_deref().and_then(json::date)
            } else {
                None
            },
            currency: currency_code(self.currency).unwrap_or_default(),
            sub_total: self.net_amount.map_or(total - tax, Amount::money),
            tax_amount: tax,
            total_amount: total,
            amount_due: outstanding,
            status,
            line_items: self
                .invoice_lines
                .into_iter()
                .map(|line| {
                    let sub_total = money(line.net_amount);
                    let tax_amount = money(line.tax_amount);
                    BillLineItem {
                        description: line.description.unwrap_or_default(),
                        unit_amount: money(line.unit_price),
                        quantity: quantity(line.quantity),
                        discount_amount: crate::data::money::Money(0),
                        sub_total,
                        tax_amount,
                        total_amount: line
                            .total_amount
                            .map_or(sub_total + tax_amount, Amount::money),
                        account_ref: Link::account(line.ledger_account),
                        tax_rate_ref: Link::tax_rate(line.tax_rate),
                    }
                })
                .collect(),
            note: json::non_empty(self.notes),
            source_modified_date: json::timestamp(self.updated_at.as_deref()),
            bill_id: self.id,
        })
    }
}

/// A sales credit note as `GET /sales_credit_notes?attributes=all` gives it.
#[derive(Deserialize)]
pub(super) struct SageCreditNote {
    id: String,
    credit_note_number: Option<String>,
    displayed_as: Option<String>,
    contact: Option<Link>,
    contact_name: Option<String>,
    date: Option<String>,
    currency: Option<Link>,
    net_amount: Option<Amount>,
    tax_amount: Option<Amount>,
    total_amount: Option<Amount>,
    outstanding_amount: Option<Amount>,
    status: Option<Link>,
    void_reason: Option<String>,
    reference: Option<String>,
    notes: Option<String>,
    updated_at: Option<String>,
    #[serde(default, deserialize_with = "json::list_or_null")]
    credit_note_lines: Vec<SageLine>,
}

impl SageCreditNote {
    /// Our credit note: what remains is its `outstanding_amount`; the
    /// status as an invoice's, an issued one by what remains. Which
    /// invoices it was set against is on the payments that allocated it
    /// (`allocated_artefacts`), so its allocations are empty here.
    pub(super) fn into_record(self) -> Result<CreditNote, Unreadable> {
        let issue_date = json::required_date(self.date.as_deref(), "date")?;
        let total = money(self.total_amount);
        let tax = money(self.tax_amount);
        let outstanding = money(self.outstanding_amount);
        let status = match artefact_status(self.status, self.void_reason, total, outstanding) {
            InvoiceStatus::Draft => CreditNoteStatus::Draft,
            InvoiceStatus::Void => CreditNoteStatus::Void,
            InvoiceStatus::Unknown => CreditNoteStatus::Unknown,
            _ => status_by_remaining(total, outstanding),
        };
        let (customer_id, customer_shown) = Link::parts(self.contact);
        Ok(CreditNote {
            credit_note_number: json::non_empty(self.credit_note_number)
                .or_else(|| json::non_empty(self.displayed_as)),
            customer_ref: CustomerRef::to(
                customer_id,
                json::non_empty(self.contact_name).or(customer_shown),
            ),
            issue_date,
            currency: currency_code(self.currency).unwrap_or_default(),
            sub_total: self.net_amount.map_or(total - tax, Amount::money),
            total_tax_amount: tax,
            total_amount: total,
            remaining_credit: outstanding,
            status,
            line_items: self
                .credit_note_lines
                .into_iter()
                .map(SageLine::into_line)
                .collect(),
            allocations: Vec::new(),
            note: json::non_empty(self.notes).or_else(|| json::non_empty(self.reference)),
            source_modified_date: json::timestamp(self.updated_at.as_deref()),
            credit_note_id: self.id,
        })
    }
}
