//! Xero's answers and how they become our records: invoice statuses (with
//! the amounts that tell a part payment apart), line amounts inclusive or
//! exclusive of tax, bills (`ACCPAY` invoices), sales credit notes and
//! their allocations, contacts that are
//! customers, the chart of accounts (account classes), `/Date(ms)/` dates.
//! Payments are in `payments.rs`.

use serde::Deserialize;

use crate::data::accounts::AccountRef;
use crate::data::bills::{Bill, BillLineItem};
use crate::data::credit_notes::{
    CreditNote, CreditNoteAllocation, CreditNoteStatus, InvoiceRef, status_by_remaining,
};
use crate::data::customers::{Customer, CustomerStatus};
use crate::data::invoices::{CustomerRef, Invoice, InvoiceStatus, LineItem};
use crate::data::money::Money;
use crate::data::suppliers::{Supplier, SupplierRef, SupplierStatus};
use crate::data::tax_rates::TaxRateRef;
use crate::platforms::kit::json::{self, Amount, money, quantity};
use crate::platforms::kit::records::{Each, Keyed, Unreadable};
use crate::platforms::kit::status::{StatusTable, lookup};
use crate::timestamp::Timestamp;

/// Xero's invoice statuses that need no amounts. `SUBMITTED` is "awaiting
/// approval": not yet sent to the customer. `AUTHORISED` depends on what
/// was paid ([`invoice_status`]).
const STATUSES: StatusTable = &[
    ("DRAFT", InvoiceStatus::Draft),
    ("SUBMITTED", InvoiceStatus::Draft),
    ("PAID", InvoiceStatus::Paid),
    ("VOIDED", InvoiceStatus::Void),
    ("DELETED", InvoiceStatus::Void),
];

/// Xero's invoice status, with the amounts that tell a part payment apart.
pub(super) fn invoice_status(status: &str, amount_due: Money, amount_paid: Money) -> InvoiceStatus {
    match status {
        "AUTHORISED" if amount_due == Money(0) => InvoiceStatus::Paid,
        "AUTHORISED" if amount_paid > Money(0) => InvoiceStatus::PartiallyPaid,
        "AUTHORISED" => InvoiceStatus::Submitted,
        other => lookup(STATUSES, other).unwrap_or(InvoiceStatus::Unknown),
    }
}

/// A page of `GET /api.xro/2.0/Invoices`.
#[derive(Deserialize)]
#[serde(rename_all = "PascalCase")]
pub(super) struct InvoicesPage {
    pub(super) invoices: Each<XeroInvoice>,
    #[serde(rename = "pagination")]
    pub(super) pagination: Option<Pagination>,
}

/// A page of `GET /api.xro/2.0/CreditNotes`.
#[derive(Deserialize)]
#[serde(rename_all = "PascalCase")]
pub(super) struct CreditNotesPage {
    pub(super) credit_notes: Each<XeroCreditNote>,
    #[serde(rename = "pagination")]
    pub(super) pagination: Option<Pagination>,
}

/// A credit note as Xero writes it (`CreditNote` in Xero's OpenAPI document).
#[derive(Deserialize)]
#[serde(rename_all = "PascalCase")]
pub(super) struct XeroCreditNote {
    #[serde(rename = "CreditNoteID")]
    credit_note_id: String,
    credit_note_number: Option<String>,
    #[serde(rename = "Type")]
    kind: Option<String>,
    contact: Option<ContactRef>,
    date: Option<String>,
    status: Option<String>,
    line_amount_types: Option<String>,
    #[serde(default)]
    line_items: Vec<XeroLine>,
    sub_total: Option<Amount>,
    total_tax: Option<Amount>,
    total: Option<Amount>,
    remaining_credit: Option<Amount>,
    currency_code: Option<String>,
    reference: Option<String>,
    #[serde(default, deserialize_with = "json::list_or_null")]
    allocations: Vec<XeroAllocation>,
    #[serde(rename = "UpdatedDateUTC")]
    updated_date_utc: Option<String>,
}

impl Keyed for XeroCreditNote {
    const ID: &'static str = "/CreditNoteID";
}

/// Credit allocated to an invoice (`Allocation` in Xero's document).
#[derive(Deserialize)]
#[serde(rename_all = "PascalCase")]
struct XeroAllocation {
    amount: Option<Amount>,
    date: Option<String>,
    invoice: Option<AllocatedInvoice>,
    is_deleted: Option<bool>,
}

#[derive(Deserialize)]
#[serde(rename_all = "PascalCase")]
struct AllocatedInvoice {
    #[serde(rename = "InvoiceID")]
    invoice_id: Option<String>,
    invoice_number: Option<String>,
}

/// Our status of a Xero credit note: `AUTHORISED` by what remains of its
/// credit; `SUBMITTED` is awaiting approval (a draft to the customer).
pub(super) fn credit_note_status(status: &str, total: Money, remaining: Money) -> CreditNoteStatus {
    match status {
        "AUTHORISED" => status_by_remaining(total, remaining),
        "DRAFT" | "SUBMITTED" => CreditNoteStatus::Draft,
        "PAID" => CreditNoteStatus::Paid,
        "VOIDED" | "DELETED" => CreditNoteStatus::Void,
        _ => CreditNoteStatus::Unknown,
    }
}

impl XeroCreditNote {
    /// Our credit note when it is a sales one (`ACCRECCREDIT`), as a page
    /// reads it; a supplier's credit note (`ACCPAYCREDIT`) is left out.
    pub(super) fn into_sale(self) -> Result<Option<CreditNote>, Unreadable> {
        if self
            .kind
            .as_deref()
            .is_some_and(|kind| kind != "ACCRECCREDIT")
        {
            return Ok(None);
        }
        let issue_date = self
            .date
            .as_deref()
            .and_then(json::xero_date)
            .ok_or_else(|| Unreadable::field("Date", "is missing or not a date"))?;
        let total = money(self.total);
        let tax = money(self.total_tax);
        let remaining = money(self.remaining_credit);
        let inclusive = self.line_amount_types.as_deref() == Some("Inclusive");
        let allocations = self
            .allocations
            .into_iter()
            .filter(|allocation| allocation.is_deleted != Some(true))
            .filter_map(|allocation| {
                let invoice = allocation.invoice?;
                Some(CreditNoteAllocation {
                    invoice_ref: InvoiceRef {
                        id: json::non_empty(invoice.invoice_id)?,
                        invoice_number: json::non_empty(invoice.invoice_number),
                    },
                    amount: money(allocation.amount),
                    allocated_on_date: allocation.date.as_deref().and_then(json::xero_date),
                })
            })
            .collect();
        let (customer_id, customer_name) = self
            .contact
            .map_or((None, None), |contact| (contact.contact_id, contact.name));
        Ok(Some(CreditNote {
            credit_note_number: json::non_empty(self.credit_note_number),
            customer_ref: CustomerRef::to(customer_id, customer_name),
            issue_date,
            currency: self.currency_code.unwrap_or_default(),
            sub_total: self.sub_total.map_or(total - tax, Amount::money),
            total_tax_amount: tax,
            total_amount: total,
            remaining_credit: remaining,
            status: credit_note_status(self.status.as_deref().unwrap_or(""), total, remaining),
            line_items: self
                .line_items
                .into_iter()
                .map(|line| line.into_sale_line(inclusive))
                .collect(),
            allocations,
            note: json::non_empty(self.reference),
            source_modified_date: updated(self.updated_date_utc.as_deref()),
            credit_note_id: self.credit_note_id,
        }))
    }
}

/// A page of `GET /api.xro/2.0/Contacts`.
#[derive(Deserialize)]
#[serde(rename_all = "PascalCase")]
pub(super) struct ContactsPage {
    pub(super) contacts: Each<XeroContact>,
    #[serde(rename = "pagination")]
    pub(super) pagination: Option<Pagination>,
}

/// Xero's `pagination` object.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
pub(super) struct Pagination {
    pub(super) page_count: Option<u64>,
    pub(super) item_count: Option<u64>,
}

/// One tenant the token reaches (`GET /connections`).
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
pub(super) struct XeroConnection {
    pub(super) tenant_id: String,
}

/// An invoice as Xero writes it.
#[derive(Deserialize)]
#[serde(rename_all = "PascalCase")]
pub(super) struct XeroInvoice {
    #[serde(rename = "InvoiceID")]
    invoice_id: String,
    invoice_number: Option<String>,
    #[serde(rename = "Type")]
    kind: Option<String>,
    contact: Option<ContactRef>,
    date: Option<String>,
    due_date: Option<String>,
    fully_paid_on_date: Option<String>,
    currency_code: Option<String>,
    sub_total: Option<Amount>,
    total_tax: Option<Amount>,
    total: Option<Amount>,
    amount_due: Option<Amount>,
    amount_paid: Option<Amount>,
    amount_credited: Option<Amount>,
    status: Option<String>,
    line_amount_types: Option<String>,
    #[serde(default)]
    line_items: Vec<XeroLine>,
    reference: Option<String>,
    #[serde(rename = "UpdatedDateUTC")]
    updated_date_utc: Option<String>,
}

#[derive(Deserialize)]
#[serde(rename_all = "PascalCase")]
struct ContactRef {
    #[serde(rename = "ContactID")]
    contact_id: Option<String>,
    name: Option<String>,
}

#[derive(Deserialize)]
#[serde(rename_all = "PascalCase")]
struct XeroLine {
    description: Option<String>,
    quantity: Option<Amount>,
    unit_amount: Option<Amount>,
    line_amount: Option<Amount>,
    tax_amount: Option<Amount>,
    discount_amount: Option<Amount>,
    #[serde(rename = "AccountID")]
    account_id: Option<String>,
    tax_type: Option<String>,
}

impl XeroLine {
    /// The line of a sales document (an invoice, a credit note), with the
    /// account it posts to (its `AccountID`).
    fn into_sale_line(self, inclusive: bool) -> LineItem {
        let (sub_total, tax_amount, total_amount) = self.amounts(inclusive);
        LineItem {
            description: self.description.unwrap_or_default(),
            unit_amount: money(self.unit_amount),
            quantity: quantity(self.quantity),
            discount_amount: money(self.discount_amount),
            sub_total,
            tax_amount,
            total_amount,
            account_ref: AccountRef::to(json::non_empty(self.account_id), None),
        }
    }

    /// The line's total before tax, its tax and its total with tax: Xero's
    /// `LineAmount` includes the tax when the document's `LineAmountTypes`
    /// is `Inclusive`.
    fn amounts(&self, inclusive: bool) -> (Money, Money, Money) {
        let line_amount = money(self.line_amount);
        let tax_amount = money(self.tax_amount);
        if inclusive {
            (line_amount - tax_amount, tax_amount, line_amount)
        } else {
            (line_amount, tax_amount, line_amount + tax_amount)
        }
    }
}

impl Keyed for XeroInvoice {
    const ID: &'static str = "/InvoiceID";
}

impl Keyed for XeroContact {
    const ID: &'static str = "/ContactID";
}

impl XeroInvoice {
    /// A sales invoice (`ACCREC`), not a bill; invoices without a type count as sales.
    fn is_sale(&self) -> bool {
        self.kind.as_deref().is_none_or(|kind| kind == "ACCREC")
    }

    /// Our invoice when it is a sale (a bill is left out), as a page reads it.
    pub(super) fn into_sale(self) -> Result<Option<Invoice>, Unreadable> {
        if self.is_sale() {
            self.into_record().map(Some)
        } else {
            Ok(None)
        }
    }

    /// Our bill when it is a purchase invoice (`ACCPAY`), as a page reads it.
    pub(super) fn into_purchase(self) -> Result<Option<Bill>, Unreadable> {
        if self.kind.as_deref() == Some("ACCPAY") {
            self.into_bill().map(Some)
        } else {
            Ok(None)
        }
    }

    /// Our bill. For a bill, Xero's `InvoiceNumber` is the supplier's own
    /// number (not unique) and `Reference` is not used; lines name their
    /// account by `AccountID` and their tax rate by `TaxType`, the id our
    /// tax rates have at Xero.
    fn into_bill(self) -> Result<Bill, Unreadable> {
        let issue_date = self.issue_date()?;
        let total = money(self.total);
        let tax = money(self.total_tax);
        let amount_due = money(self.amount_due);
        let settled = money(self.amount_paid) + money(self.amount_credited);
        let inclusive = self.line_amount_types.as_deref() == Some("Inclusive");
        let line_items = self
            .line_items
            .into_iter()
            .map(|line| {
                let (sub_total, tax_amount, total_amount) = line.amounts(inclusive);
                BillLineItem {
                    description: line.description.unwrap_or_default(),
                    unit_amount: money(line.unit_amount),
                    quantity: quantity(line.quantity),
                    discount_amount: money(line.discount_amount),
                    sub_total,
                    tax_amount,
                    total_amount,
                    account_ref: AccountRef::to(json::non_empty(line.account_id), None),
                    tax_rate_ref: TaxRateRef::to(json::non_empty(line.tax_type), None),
                }
            })
            .collect();
        let (supplier_id, supplier_name) = self
            .contact
            .map_or((None, None), |contact| (contact.contact_id, contact.name));
        Ok(Bill {
            reference: json::non_empty(self.invoice_number),
            supplier_ref: SupplierRef::to(supplier_id, supplier_name),
            issue_date,
            due_date: self.due_date.as_deref().and_then(json::xero_date),
            paid_on_date: self.fully_paid_on_date.as_deref().and_then(json::xero_date),
            currency: self.currency_code.unwrap_or_default(),
            sub_total: self.sub_total.map_or(total - tax, Amount::money),
            tax_amount: tax,
            total_amount: total,
            amount_due,
            status: invoice_status(self.status.as_deref().unwrap_or(""), amount_due, settled)
                .into(),
            line_items,
            note: None,
            source_modified_date: updated(self.updated_date_utc.as_deref()),
            bill_id: self.invoice_id,
        })
    }

    /// The issue date; a document without a readable one cannot be read.
    fn issue_date(&self) -> Result<chrono::NaiveDate, Unreadable> {
        self.date
            .as_deref()
            .and_then(json::xero_date)
            .ok_or_else(|| Unreadable::field("Date", "is missing or not a date"))
    }

    /// Our invoice; one without a readable date cannot be read.
    pub(super) fn into_record(self) -> Result<Invoice, Unreadable> {
        let issue_date = self.issue_date()?;
        let total = money(self.total);
        let tax = money(self.total_tax);
        let amount_due = money(self.amount_due);
        let paid = money(self.amount_paid) + money(self.amount_credited);
        // Line amounts include tax when the invoice says so.
        let inclusive = self.line_amount_types.as_deref() == Some("Inclusive");
        let line_items = self
            .line_items
            .into_iter()
            .map(|line| line.into_sale_line(inclusive))
            .collect();
        let (customer_id, customer_name) = self
            .contact
            .map_or((None, None), |contact| (contact.contact_id, contact.name));
        Ok(Invoice {
            invoice_number: json::non_empty(self.invoice_number),
            customer_ref: CustomerRef::to(customer_id, customer_name),
            issue_date,
            due_date: self.due_date.as_deref().and_then(json::xero_date),
            paid_on_date: self.fully_paid_on_date.as_deref().and_then(json::xero_date),
            currency: self.currency_code.unwrap_or_default(),
            sub_total: self.sub_total.map_or(total - tax, Amount::money),
            total_tax_amount: tax,
            total_amount: total,
            amount_due,
            status: invoice_status(self.status.as_deref().unwrap_or(""), amount_due, paid),
            line_items,
            note: json::non_empty(self.reference),
            source_modified_date: updated(self.updated_date_utc.as_deref()),
            invoice_id: self.invoice_id,
        })
    }
}

pub(super) fn updated(text: Option<&str>) -> Option<Timestamp> {
    text.and_then(json::xero_datetime).map(Timestamp)
}

/// A contact as Xero writes it.
#[derive(Deserialize)]
#[serde(rename_all = "PascalCase")]
pub(super) struct XeroContact {
    #[serde(rename = "ContactID")]
    contact_id: String,
    name: Option<String>,
    email_address: Option<String>,
    #[serde(default)]
    phones: Vec<XeroPhone>,
    default_currency: Option<String>,
    contact_status: Option<String>,
    is_customer: Option<bool>,
    is_supplier: Option<bool>,
    #[serde(rename = "UpdatedDateUTC")]
    updated_date_utc: Option<String>,
}

/// A phone number as Xero writes it (contacts and the organisation).
#[derive(Deserialize)]
#[serde(rename_all = "PascalCase")]
pub(super) struct XeroPhone {
    pub(super) phone_type: Option<String>,
    phone_number: Option<String>,
    phone_area_code: Option<String>,
    phone_country_code: Option<String>,
}

impl XeroPhone {
    /// The number with its country and area codes, when it has one.
    pub(super) fn formatted(&self) -> Option<String> {
        let number = json::non_empty(self.phone_number.clone())?;
        let parts: Vec<String> = [
            self.phone_country_code.clone(),
            self.phone_area_code.clone(),
            Some(number),
        ]
        .into_iter()
        .filter_map(json::non_empty)
        .collect();
        Some(parts.join(" "))
    }
}

impl XeroContact {
    /// Suppliers that were never invoiced are not customers.
    fn is_customer(&self) -> bool {
        self.is_customer == Some(true) || self.is_supplier != Some(true)
    }

    /// Our supplier when the contact is one (Xero sets `IsSupplier` once a
    /// bill to the contact exists: NOTES.md).
    pub(super) fn into_supplier(self) -> Option<Supplier> {
        (self.is_supplier == Some(true)).then(|| {
            let customer = self.into_record();
            Supplier {
                supplier_id: customer.customer_id,
                supplier_name: customer.customer_name,
                email_address: customer.email_address,
                phone: customer.phone,
                default_currency: customer.default_currency,
                status: match customer.status {
                    CustomerStatus::Archived => SupplierStatus::Archived,
                    CustomerStatus::Active => SupplierStatus::Active,
                },
                source_modified_date: customer.source_modified_date,
            }
        })
    }

    /// Our customer when the contact is one, as a page reads it.
    pub(super) fn into_customer(self) -> Option<Customer> {
        self.is_customer().then(|| self.into_record())
    }

    /// Our customer.
    pub(super) fn into_record(self) -> Customer {
        let phone = ["DEFAULT", "MOBILE", "DDI"].iter().find_map(|kind| {
            self.phones
                .iter()
                .filter(|phone| phone.phone_type.as_deref() == Some(kind))
                .find_map(XeroPhone::formatted)
        });
        Customer {
            customer_name: json::non_empty(self.name).unwrap_or_else(|| self.contact_id.clone()),
            email_address: json::non_empty(self.email_address),
            phone,
            default_currency: json::non_empty(self.default_currency),
            status: match self.contact_status.as_deref() {
                Some("ARCHIVED") | Some("GDPRREQUEST") => CustomerStatus::Archived,
                _ => CustomerStatus::Active,
            },
            source_modified_date: updated(self.updated_date_utc.as_deref()),
            customer_id: self.contact_id,
        }
    }
}

#[cfg(test)]
mod tests;
