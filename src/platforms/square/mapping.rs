//! Square's answers and how they become our records: `Money` is an integer
//! count of the currency's smallest unit (cents, or yen), invoices carry
//! their amounts only through their payment requests, orders carry totals,
//! returns and lines, and Square's invoice statuses and order states map
//! through one table each.

use serde::Deserialize;

use crate::data::customers::{Customer, CustomerStatus};
use crate::data::invoices::{CustomerRef, Invoice, InvoiceStatus};
use crate::data::money::{Money, Quantity};
use crate::data::orders::{Order, OrderLineItem, OrderStatus};
use crate::platforms::kit::json::{self, Amount};
use crate::platforms::kit::records::{Each, Keyed, Unreadable};
use crate::platforms::kit::status::{StatusTable, find, lookup};

/// Square's invoice statuses (`InvoiceStatus`).
pub(super) const INVOICE_STATUSES: StatusTable = &[
    ("DRAFT", InvoiceStatus::Draft),
    // Published: Square sends it (or charges the card on file) on the date.
    ("SCHEDULED", InvoiceStatus::Submitted),
    ("UNPAID", InvoiceStatus::Submitted),
    // A payment was started and has not settled: nothing counts as paid yet.
    ("PAYMENT_PENDING", InvoiceStatus::Submitted),
    ("PARTIALLY_PAID", InvoiceStatus::PartiallyPaid),
    ("PAID", InvoiceStatus::Paid),
    // Paid, then part of the money went back: it was paid.
    ("PARTIALLY_REFUNDED", InvoiceStatus::Paid),
    // All of the money went back, or the invoice was withdrawn.
    ("REFUNDED", InvoiceStatus::Void),
    ("CANCELED", InvoiceStatus::Void),
    // Square cancelled it for suspicious activity.
    ("FAILED", InvoiceStatus::Void),
];

/// Square's order states (`OrderState`).
pub(super) const ORDER_STATES: &[(&str, OrderStatus)] = &[
    // Not yet placed: a draft is ours `Pending`.
    ("DRAFT", OrderStatus::Pending),
    ("OPEN", OrderStatus::Open),
    ("COMPLETED", OrderStatus::Completed),
    ("CANCELED", OrderStatus::Cancelled),
];

/// Square's `Money`: an integer count of the currency's smallest unit.
#[derive(Deserialize, Clone)]
pub(super) struct SquareMoney {
    amount: Option<i64>,
    currency: Option<String>,
}

impl SquareMoney {
    /// The amount as our money (ten-thousandths of the unit); `None` when
    /// it does not fit.
    pub(super) fn money(&self) -> Option<Money> {
        let digits = json::minor_digits(self.currency.as_deref().unwrap_or_default());
        json::from_minor(self.amount.unwrap_or(0), digits)
    }
}

/// An optional `Money` (the record's `field`) as ours; zero when absent.
fn money(value: Option<&SquareMoney>, field: &str) -> Result<Money, Unreadable> {
    match value {
        None => Ok(Money(0)),
        Some(value) => value
            .money()
            .ok_or_else(|| Unreadable::field(field, "is too large to keep")),
    }
}

impl SquareMoney {
    /// The currency's code, when Square gives one.
    pub(super) fn currency(&self) -> Option<String> {
        json::non_empty(self.currency.clone())
    }
}

fn currency_of(value: Option<&SquareMoney>) -> Option<String> {
    value.and_then(|value| json::non_empty(value.currency.clone()))
}

/// `GET /v2/locations`.
#[derive(Deserialize)]
pub(super) struct LocationsAnswer {
    #[serde(default, deserialize_with = "json::list_or_null")]
    pub(super) locations: Vec<Location>,
}

/// A business location of the seller.
#[derive(Deserialize)]
pub(super) struct Location {
    pub(super) id: String,
    pub(super) merchant_id: Option<String>,
}

/// A page of `GET /v2/invoices`.
#[derive(Deserialize)]
pub(super) struct InvoicesPage {
    #[serde(default)]
    pub(super) invoices: Each<SquareInvoice>,
    pub(super) cursor: Option<String>,
}

/// A page of `GET /v2/customers`.
#[derive(Deserialize)]
pub(super) struct CustomersPage {
    #[serde(default)]
    pub(super) customers: Each<SquareCustomer>,
    pub(super) cursor: Option<String>,
}

/// A page of `POST /v2/orders/search` (with `return_entries: false`).
#[derive(Deserialize)]
pub(super) struct OrdersPage {
    #[serde(default)]
    pub(super) orders: Each<SquareOrder>,
    pub(super) cursor: Option<String>,
}

impl Keyed for SquareInvoice {
    const ID: &'static str = "/id";
}

impl Keyed for SquareCustomer {
    const ID: &'static str = "/id";
}

impl Keyed for SquareOrder {
    const ID: &'static str = "/id";
}

/// An invoice as Square writes it.
#[derive(Deserialize)]
pub(super) struct SquareInvoice {
    id: String,
    invoice_number: Option<String>,
    primary_recipient: Option<Recipient>,
    #[serde(default, deserialize_with = "json::list_or_null")]
    payment_requests: Vec<PaymentRequest>,
    status: Option<String>,
    description: Option<String>,
    title: Option<String>,
    scheduled_at: Option<String>,
    created_at: Option<String>,
    updated_at: Option<String>,
}

/// An invoice's recipient (a snapshot of the customer).
#[derive(Deserialize)]
struct Recipient {
    customer_id: Option<String>,
    given_name: Option<String>,
    family_name: Option<String>,
    company_name: Option<String>,
}

/// A payment request of an invoice (a deposit, an instalment, the balance).
#[derive(Deserialize)]
struct PaymentRequest {
    due_date: Option<String>,
    computed_amount_money: Option<SquareMoney>,
    total_completed_amount_money: Option<SquareMoney>,
}

/// "Given Family", when either is given.
fn person(given: Option<String>, family: Option<String>) -> Option<String> {
    let name = [json::non_empty(given), json::non_empty(family)]
        .into_iter()
        .flatten()
        .collect::<Vec<_>>()
        .join(" ");
    json::non_empty(Some(name))
}

impl SquareInvoice {
    /// Our invoice: its total is what its payment requests ask for, its
    /// amount due what they have not yet collected.
    pub(super) fn into_record(self) -> Result<Invoice, Unreadable> {
        let id = self.id;
        let issued = self
            .scheduled_at
            .as_deref()
            .or(self.created_at.as_deref())
            .and_then(json::date)
            .ok_or_else(|| Unreadable::field("created_at", "is missing or not a date"))?;
        let mut total = Money(0);
        let mut paid = Money(0);
        for request in &self.payment_requests {
            total = total
                + money(
                    request.computed_amount_money.as_ref(),
                    "payment_requests.computed_amount_money",
                )?;
            paid = paid
                + money(
                    request.total_completed_amount_money.as_ref(),
                    "payment_requests.total_completed_amount_money",
                )?;
        }
        let currency = self
            .payment_requests
            .iter()
            .find_map(|request| currency_of(request.computed_amount_money.as_ref()))
            .unwrap_or_default();
        // The balance request comes last, so its date is the latest.
        let due_date = self
            .payment_requests
            .iter()
            .filter_map(|request| request.due_date.as_deref().and_then(json::date))
            .max();
        let status = self
            .status
            .as_deref()
            .and_then(|word| lookup(INVOICE_STATUSES, word))
            .unwrap_or(InvoiceStatus::Unknown);
        let customer_ref = self.primary_recipient.and_then(|recipient| {
            let name = json::non_empty(recipient.company_name)
                .or_else(|| person(recipient.given_name, recipient.family_name));
            CustomerRef::to(json::non_empty(recipient.customer_id), name)
        });
        let due = if total > paid { total - paid } else { Money(0) };
        Ok(Invoice {
            invoice_number: json::non_empty(self.invoice_number),
            customer_ref,
            issue_date: issued,
            due_date,
            // Square's invoice carries no payment date.
            paid_on_date: None,
            currency,
            // Tax and lines live on the invoice's order (the orders data type).
            sub_total: total,
            total_tax_amount: Money(0),
            total_amount: total,
            amount_due: due,
            status,
            line_items: Vec::new(),
            note: json::non_empty(self.description).or_else(|| json::non_empty(self.title)),
            source_modified_date: json::timestamp(self.updated_at.as_deref()),
            invoice_id: id,
        })
    }
}

/// A customer profile as Square writes it.
#[derive(Deserialize)]
pub(super) struct SquareCustomer {
    id: String,
    given_name: Option<String>,
    family_name: Option<String>,
    company_name: Option<String>,
    nickname: Option<String>,
    email_address: Option<String>,
    phone_number: Option<String>,
    updated_at: Option<String>,
}

impl SquareCustomer {
    /// Our customer: the company name, else the person's, else the
    /// nickname, the e-mail address or the id. Square lists only profiles
    /// in use.
    pub(super) fn into_record(self) -> Customer {
        let email = json::non_empty(self.email_address);
        let name = json::non_empty(self.company_name)
            .or_else(|| person(self.given_name, self.family_name))
            .or_else(|| json::non_empty(self.nickname))
            .or_else(|| email.clone())
            .unwrap_or_else(|| self.id.clone());
        Customer {
            customer_id: self.id,
            customer_name: name,
            email_address: email,
            phone: json::non_empty(self.phone_number),
            default_currency: None,
            status: CustomerStatus::Active,
            source_modified_date: json::timestamp(self.updated_at.as_deref()),
        }
    }
}

/// An order as Square writes it.
#[derive(Deserialize)]
pub(super) struct SquareOrder {
    id: String,
    reference_id: Option<String>,
    ticket_name: Option<String>,
    customer_id: Option<String>,
    state: Option<String>,
    created_at: Option<String>,
    updated_at: Option<String>,
    closed_at: Option<String>,
    total_money: Option<SquareMoney>,
    total_tax_money: Option<SquareMoney>,
    total_discount_money: Option<SquareMoney>,
    return_amounts: Option<MoneyAmounts>,
    #[serde(default, deserialize_with = "json::list_or_null")]
    line_items: Vec<SquareLineItem>,
}

/// `OrderMoneyAmounts` (here: what was returned).
#[derive(Deserialize)]
struct MoneyAmounts {
    total_money: Option<SquareMoney>,
}

/// An order line (`OrderLineItem`).
#[derive(Deserialize)]
struct SquareLineItem {
    uid: Option<String>,
    name: Option<String>,
    variation_name: Option<String>,
    /// A decimal string (`"1"`, `"1.5"`).
    quantity: Option<Amount>,
    base_price_money: Option<SquareMoney>,
    gross_sales_money: Option<SquareMoney>,
    total_discount_money: Option<SquareMoney>,
    total_tax_money: Option<SquareMoney>,
    total_money: Option<SquareMoney>,
}

impl SquareLineItem {
    fn into_line(self) -> Result<OrderLineItem, Unreadable> {
        let description = match (
            json::non_empty(self.name),
            json::non_empty(self.variation_name),
        ) {
            (Some(name), Some(variation)) => format!("{name} ({variation})"),
            (Some(name), None) => name,
            (None, variation) => variation.unwrap_or_default(),
        };
        Ok(OrderLineItem {
            line_id: json::non_empty(self.uid),
            description,
            sku: None,
            quantity: self
                .quantity
                .map(Amount::quantity)
                .unwrap_or(Quantity::units(1)),
            unit_amount: money(
                self.base_price_money.as_ref(),
                "line_items.base_price_money",
            )?,
            discount_amount: money(
                self.total_discount_money.as_ref(),
                "line_items.total_discount_money",
            )?,
            tax_amount: money(self.total_tax_money.as_ref(), "line_items.total_tax_money")?,
            total_amount: money(self.total_money.as_ref(), "line_items.total_money")?,
        })
    }
}

impl SquareOrder {
    /// Our order; one without a readable `created_at` is refused.
    pub(super) fn into_record(self) -> Result<Order, Unreadable> {
        let id = self.id;
        let created = json::timestamp(self.created_at.as_deref())
            .ok_or_else(|| Unreadable::field("created_at", "is missing or not a date-time"))?;
        let status = self
            .state
            .as_deref()
            .and_then(|word| find(ORDER_STATES, word))
            .unwrap_or(OrderStatus::Unknown);
        let mut sub_total = Money(0);
        for line in &self.line_items {
            sub_total = sub_total
                + money(
                    line.gross_sales_money.as_ref(),
                    "line_items.gross_sales_money",
                )?;
        }
        let returned = self
            .return_amounts
            .as_ref()
            .and_then(|amounts| amounts.total_money.as_ref());
        let lines = self
            .line_items
            .into_iter()
            .map(SquareLineItem::into_line)
            .collect::<Result<Vec<_>, _>>()?;
        Ok(Order {
            order_number: json::non_empty(self.reference_id)
                .or_else(|| json::non_empty(self.ticket_name)),
            customer_ref: CustomerRef::to(json::non_empty(self.customer_id), None),
            created_date: created,
            closed_date: json::timestamp(self.closed_at.as_deref()),
            currency: currency_of(self.total_money.as_ref()).unwrap_or_default(),
            sub_total,
            total_tax_amount: money(self.total_tax_money.as_ref(), "total_tax_money")?,
            total_discount: money(self.total_discount_money.as_ref(), "total_discount_money")?,
            total_amount: money(self.total_money.as_ref(), "total_money")?,
            total_refunded: money(returned, "return_amounts.total_money")?,
            status,
            line_items: lines,
            source_modified_date: json::timestamp(self.updated_at.as_deref()),
            order_id: id,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn money_counts_the_currency_smallest_unit() {
        let read = |amount: i64, currency: &str| {
            SquareMoney {
                amount: Some(amount),
                currency: Some(currency.to_owned()),
            }
            .money()
        };
        assert_eq!(read(12_345, "USD"), Some(Money(1_234_500)));
        assert_eq!(read(-150, "GBP"), Some(Money(-15_000)));
        assert_eq!(read(1_500, "JPY"), Some(Money(15_000_000)));
        assert_eq!(read(1_500, "KWD"), Some(Money(15_000)));
        assert_eq!(read(i64::MAX, "USD"), None);
    }

    #[test]
    fn every_invoice_status_and_order_state_is_mapped() {
        for (word, ours) in [
            ("DRAFT", InvoiceStatus::Draft),
            ("UNPAID", InvoiceStatus::Submitted),
            ("SCHEDULED", InvoiceStatus::Submitted),
            ("PAYMENT_PENDING", InvoiceStatus::Submitted),
            ("PARTIALLY_PAID", InvoiceStatus::PartiallyPaid),
            ("PAID", InvoiceStatus::Paid),
            ("PARTIALLY_REFUNDED", InvoiceStatus::Paid),
            ("REFUNDED", InvoiceStatus::Void),
            ("CANCELED", InvoiceStatus::Void),
            ("FAILED", InvoiceStatus::Void),
        ] {
            assert_eq!(lookup(INVOICE_STATUSES, word), Some(ours), "{word}");
        }
        assert_eq!(lookup(INVOICE_STATUSES, "paid"), None);
        for (word, ours) in [
            ("DRAFT", OrderStatus::Pending),
            ("OPEN", OrderStatus::Open),
            ("COMPLETED", OrderStatus::Completed),
            ("CANCELED", OrderStatus::Cancelled),
        ] {
            assert_eq!(find(ORDER_STATES, word), Some(ours), "{word}");
        }
    }
}
