//! Business Central's answers (OData v4 collections of API v2.0 entities) and how
//! they become our records: `salesInvoices` with their expanded `salesInvoiceLines`,
//! statuses of `NAV.invoiceEntityAggregateStatus` (an `Open` invoice is told apart
//! from a part-paid one by `remainingAmount`), and `customers` blocked or not.

use serde::Deserialize;

use crate::data::accounts::AccountRef;
use crate::data::bills::BillLineItem;
use crate::data::customers::{Customer, CustomerStatus};
use crate::data::invoices::{CustomerRef, Invoice, InvoiceStatus, LineItem};
use crate::data::money::Money;
use crate::data::suppliers::{Supplier, SupplierStatus};
use crate::platforms::kit::json::{self, Amount, money, quantity};
use crate::platforms::kit::records::{Each, Keyed, Unreadable};
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

/// An enum member as Business Central's OData writes it, with its
/// characters as the caption has them: the JSON carries the XML-escaped
/// member name (`In_x0020_Review`, `_x0020_` for the blank member), not
/// the caption the documentation shows (`NOTES.md`, "Enum values").
pub(super) fn member(name: &str) -> String {
    let mut caption = String::with_capacity(name.len());
    let mut rest = name;
    while let Some(at) = rest.find("_x") {
        caption.push_str(&rest[..at]);
        let escaped = rest
            .get(at + 2..at + 6)
            .filter(|_| rest.get(at + 6..at + 7) == Some("_"));
        match escaped
            .and_then(|hex| u32::from_str_radix(hex, 16).ok())
            .and_then(char::from_u32)
        {
            Some(decoded) => {
                caption.push(decoded);
                rest = &rest[at + 7..];
            }
            None => {
                caption.push_str("_x");
                rest = &rest[at + 2..];
            }
        }
    }
    caption.push_str(rest);
    caption
}

/// Business Central's invoice status (its member name or its caption),
/// with the amounts that tell a part payment apart.
pub(super) fn invoice_status(status: &str, total: Money, remaining: Money) -> InvoiceStatus {
    match member(status).as_str() {
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

/// A document line (`salesInvoiceLine`, `salesCreditMemoLine`,
/// `purchaseInvoiceLine`), as `$expand` gives it: a purchase line's price is
/// its `unitCost`.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
pub(super) struct BcLine {
    sequence: Option<i64>,
    line_type: Option<String>,
    account_id: Option<String>,
    description: Option<String>,
    unit_price: Option<Amount>,
    unit_cost: Option<Amount>,
    quantity: Option<Amount>,
    discount_amount: Option<Amount>,
    amount_excluding_tax: Option<Amount>,
    total_tax_amount: Option<Amount>,
    amount_including_tax: Option<Amount>,
}

impl BcLine {
    /// The G/L account an `Account` line posts to; an item line's account
    /// is its posting group's, which the API does not give.
    fn account(&self) -> Option<AccountRef> {
        let account = self
            .line_type
            .as_deref()
            .is_some_and(|kind| member(kind) == "Account");
        let id = json::non_empty(self.account_id.clone()).filter(|id| id != EMPTY_GUID);
        AccountRef::to(id.filter(|_| account), None)
    }

    /// Lines in their `sequence`.
    pub(super) fn in_order(mut lines: Vec<BcLine>) -> Vec<BcLine> {
        lines.sort_by_key(|line| line.sequence.unwrap_or(i64::MAX));
        lines
    }

    /// Our sales line.
    pub(super) fn into_line(self) -> LineItem {
        LineItem {
            account_ref: self.account(),
            description: self.description.unwrap_or_default(),
            unit_amount: money(self.unit_price),
            quantity: quantity(self.quantity),
            discount_amount: money(self.discount_amount),
            sub_total: money(self.amount_excluding_tax),
            tax_amount: money(self.total_tax_amount),
            total_amount: money(self.amount_including_tax),
        }
    }

    /// Our bill line. Its tax code names no tax rate tributary syncs (the
    /// API lists none), so it has no tax rate reference.
    pub(super) fn into_bill_line(self) -> BillLineItem {
        BillLineItem {
            account_ref: self.account(),
            description: self.description.unwrap_or_default(),
            unit_amount: money(self.unit_cost.or(self.unit_price)),
            quantity: quantity(self.quantity),
            discount_amount: money(self.discount_amount),
            sub_total: money(self.amount_excluding_tax),
            tax_amount: money(self.total_tax_amount),
            total_amount: money(self.amount_including_tax),
            tax_rate_ref: None,
        }
    }
}

/// The GUID of an empty reference (`customerId` of an invoice without a customer).
pub(super) const EMPTY_GUID: &str = "00000000-0000-0000-0000-000000000000";

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
        let line_items = BcLine::in_order(self.sales_invoice_lines)
            .into_iter()
            .map(BcLine::into_line)
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
    /// Our supplier (a `vendor` entity has the same fields): blocked for
    /// anything (`Payment`, `All`) is archived.
    pub(super) fn into_supplier(self) -> Supplier {
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
    }

    /// Our customer: blocked for anything (`Ship`, `Invoice`, `All`) is archived.
    pub(super) fn into_record(self) -> Customer {
        let blocked = json::non_empty(self.blocked.map(|blocked| member(&blocked))).is_some();
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
        assert_eq!(
            invoice_status("In Review", total, total),
            InvoiceStatus::Draft
        );
        assert_eq!(
            invoice_status("Open", total, total),
            InvoiceStatus::Submitted
        );
        assert_eq!(
            invoice_status("Open", total, Money(5)),
            InvoiceStatus::PartiallyPaid
        );
        assert_eq!(invoice_status("Open", total, Money(0)), InvoiceStatus::Paid);
        assert_eq!(invoice_status("Paid", total, Money(0)), InvoiceStatus::Paid);
        assert_eq!(
            invoice_status("Canceled", total, total),
            InvoiceStatus::Void
        );
        assert_eq!(
            invoice_status("Corrective", total, total),
            InvoiceStatus::Void
        );
        assert_eq!(invoice_status(" ", total, total), InvoiceStatus::Unknown);
        assert_eq!(
            invoice_status("In_x0020_Review", total, total),
            InvoiceStatus::Draft,
            "the wire's member name"
        );
        assert_eq!(
            invoice_status("_x0020_", total, total),
            InvoiceStatus::Unknown
        );
    }

    #[test]
    fn member_names_read_as_their_captions() {
        assert_eq!(member("In_x0020_Review"), "In Review");
        assert_eq!(
            member("Cost_x0020_of_x0020_Goods_x0020_Sold"),
            "Cost of Goods Sold"
        );
        assert_eq!(member("Non_x002D_Inventory"), "Non-Inventory");
        assert_eq!(member("_x0020_"), " ");
        assert_eq!(member("Open"), "Open");
        assert_eq!(
            member("odd_xZZ_name_x00"),
            "odd_xZZ_name_x00",
            "not an escape"
        );
    }
}
