//! Business Central's answers (OData v4 collections of API v2.0 entities) and how
//! they become our records: `salesInvoices` with their expanded `salesInvoiceLines`,
//! statuses of `NAV.invoiceEntityAggregateStatus` (an `Open` invoice is told apart
//! from a part-paid one by `remainingAmount`), and `customers` blocked or not.

use serde::Deserialize;

use crate::data::customers::{Customer, CustomerStatus};
use crate::data::invoices::{CustomerRef, Invoice, InvoiceStatus, LineItem};
use crate::data::money::Money;
use crate::platforms::kit::records::{Each, Keyed, Unreadable};
use crate::platforms::kit::json::{self, Amount, money, quantity};
use crate::platforms::kit::status::{StatusTable, by_balance, lookup};

/// Business Central's invoice statuses that need no amounts. `In Review` is an
/// unposted invoice awaiting approval; `Corrective` one cancelled by a corrective
/// credit memo. `Open` depends on what remains ([`invoice_status`]); `" "` (none)
/// and anything else is `Unknown`.
const STATUSES: StatusTable = &[
    ("Draft", InvoiceStatus::Draft),
    ("In Review", InvoiceStatus::Draft),
    ("Paid", InvoiceStatus::Paid),
    ("Canceled", InvoiceStatus::Void),
    ("Corrective", InvoiceStatus::Void),
];

/// Business Central's invoice status, with the amounts that tell a part payment apart.
pub(super) fn invoice_status(status: &str, total: Money, remaining: Money) -> InvoiceStatus {
    match status {
        "Open" => by_balance(total, remaining),
        other => lookup(STATUSES, other).unwrap_or(InvoiceStatus::Unknown),
    }
}

/// An OData collection of the organizations a token reaches (environments,
/// companies): `value` (read whole; a few entries, none of them a record).
#[derive(Deserialize)]
pub(super) struct Collection<T> {
    pub(super) value: Vec<T>,
}

/// An OData collection page of records, each read on its own.
#[derive(Deserialize)]
#[serde(bound = "T: serde::de::DeserializeOwned")]
pub(super) struct RecordPage<T> {
    pub(super) value: Each<T>,
    #[serde(rename = "@odata.nextLink")]
    pub(super) next_link: Option<String>,
}

impl Keyed for BcInvoice {
    const ID: &'static str = "/id";
}

impl Keyed for BcCustomer {
    const ID: &'static str = "/id";
}

/// `GET .../companies({id})`'s answer: the company the URL names (and an
/// entry of `GET .../companies`).
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
pub(super) struct BcCompany {
    pub(super) id: String,
    pub(super) name: Option<String>,
    pub(super) display_name: Option<String>,
}

/// An environment of the tenant (`GET /environments/v1.2`).
#[derive(Deserialize)]
pub(super) struct BcEnvironment {
    /// Its name, as API paths take it (`production`).
    pub(super) name: String,
}

/// A sales invoice as the API v2.0 writes it (`salesInvoice` entity).
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
pub(super) struct BcInvoice {
    id: String,
    number: Option<String>,
    external_document_number: Option<String>,
    invoice_date: Option<String>,
    posting_date: Option<String>,
    due_date: Option<String>,
    customer_id: Option<String>,
    customer_name: Option<String>,
    currency_code: Option<String>,
    total_amount_excluding_tax: Option<Amount>,
    total_tax_amount: Option<Amount>,
    total_amount_including_tax: Option<Amount>,
    remaining_amount: Option<Amount>,
    status: Option<String>,
    last_modified_date_time: Option<String>,
    #[serde(default)]
    sales_invoice_lines: Vec<BcLine>,
}

/// A line (`salesInvoiceLine` entity), as `$expand=salesInvoiceLines` gives it.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct BcLine {
    sequence: Option<i64>,
    description: Option<String>,
    unit_price: Option<Amount>,
    quantity: Option<Amount>,
    discount_amount: Option<Amount>,
    amount_excluding_tax: Option<Amount>,
    total_tax_amount: Option<Amount>,
    amount_including_tax: Option<Amount>,
}

/// The GUID of an empty reference (`customerId` of an invoice without a customer).
const EMPTY_GUID: &str = "00000000-0000-0000-0000-000000000000";

impl BcInvoice {
    /// Our invoice; one without a readable invoice (or posting) date cannot be read.
    pub(super) fn into_record(self) -> Result<Invoice, Unreadable> {
        let issue_date = self
            .invoice_date
            .as_deref()
            .and_then(json::date)
            .or_else(|| self.posting_date.as_deref().and_then(json::date))
            .ok_or_else(|| {
                Unreadable::field(
                    "invoiceDate",
                    "is missing or not a date, and so is postingDate",
                )
            })?;
        let total = money(self.total_amount_including_tax);
        let tax = money(self.total_tax_amount);
        let remaining = money(self.remaining_amount);
        let mut lines = self.sales_invoice_lines;
        lines.sort_by_key(|line| line.sequence.unwrap_or(i64::MAX));
        let line_items = lines
            .into_iter()
            .map(|line| LineItem {
                description: line.description.unwrap_or_default(),
                unit_amount: money(line.unit_price),
                quantity: quantity(line.quantity),
                discount_amount: money(line.discount_amount),
                sub_total: money(line.amount_excluding_tax),
                tax_amount: money(line.total_tax_amount),
                total_amount: money(line.amount_including_tax),
                account_ref: None,
            })
            .collect();
        let customer_id = json::non_empty(self.customer_id).filter(|id| id != EMPTY_GUID);
        Ok(Invoice {
            invoice_number: json::non_empty(self.number),
            customer_ref: CustomerRef::to(customer_id, json::non_empty(self.customer_name)),
            issue_date,
            due_date: self.due_date.as_deref().and_then(json::date),
            paid_on_date: None,
            currency: json::non_empty(self.currency_code).unwrap_or_default(),
            sub_total: self
                .total_amount_excluding_tax
                .map_or(total - tax, Amount::money),
            total_tax_amount: tax,
            total_amount: total,
            amount_due: remaining,
            status: invoice_status(self.status.as_deref().unwrap_or(""), total, remaining),
            line_items,
            note: json::non_empty(self.external_document_number),
            source_modified_date: json::timestamp(self.last_modified_date_time.as_deref()),
            invoice_id: self.id,
        })
    }
}

/// A customer as the API v2.0 writes it (`customer` entity).
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
pub(super) struct BcCustomer {
    id: String,
    number: Option<String>,
    display_name: Option<String>,
    email: Option<String>,
    phone_number: Option<String>,
    currency_code: Option<String>,
    blocked: Option<String>,
    last_modified_date_time: Option<String>,
}

impl BcCustomer {
    /// Our customer: blocked for anything (`Ship`, `Invoice`, `All`) is archived.
    pub(super) fn into_record(self) -> Customer {
        let blocked = json::non_empty(self.blocked).is_some();
        Customer {
            customer_name: json::non_empty(self.display_name)
                .or_else(|| json::non_empty(self.number))
                .unwrap_or_else(|| self.id.clone()),
            email_address: json::non_empty(self.email),
            phone: json::non_empty(self.phone_number),
            default_currency: json::non_empty(self.currency_code),
            status: if blocked {
                CustomerStatus::Archived
            } else {
                CustomerStatus::Active
            },
            source_modified_date: json::timestamp(self.last_modified_date_time.as_deref()),
            customer_id: self.id,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn business_central_statuses_map_with_what_remains() {
        let total = Money(1_000_000);
        assert_eq!(invoice_status("Draft", total, total), InvoiceStatus::Draft);
        assert_eq!(invoice_status("In Review", total, total), InvoiceStatus::Draft);
        assert_eq!(invoice_status("Open", total, total), InvoiceStatus::Submitted);
        assert_eq!(
            invoice_status("Open", total, Money(5)),
            InvoiceStatus::PartiallyPaid
        );
        assert_eq!(invoice_status("Open", total, Money(0)), InvoiceStatus::Paid);
        assert_eq!(invoice_status("Paid", total, Money(0)), InvoiceStatus::Paid);
        assert_eq!(invoice_status("Canceled", total, total), InvoiceStatus::Void);
        assert_eq!(invoice_status("Corrective", total, total), InvoiceStatus::Void);
        assert_eq!(invoice_status(" ", total, total), InvoiceStatus::Unknown);
    }
}
