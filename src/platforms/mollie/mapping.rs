//! Mollie's answers and how they become our records: the HAL list envelope
//! (`_embedded`, `_links.next`), one order status from Mollie's order status
//! and its refunds, `Amount` objects (`{"currency", "value"}`) as exact
//! decimals, and customers.

use serde::Deserialize;

use crate::data::customers::{Customer, CustomerStatus};
use crate::data::invoices::CustomerRef;
use crate::data::money::{Money, Quantity};
use crate::data::orders::{Order, OrderLineItem, OrderStatus};
use crate::data::payments::{AllocationType, Payment, PaymentAllocation};
use crate::platforms::kit::json::{self, Amount};
use crate::platforms::kit::records::{Each, Keyed, Unreadable};
use crate::platforms::kit::status::find;

/// Mollie's order `status` words.
const STATUSES: &[(&str, OrderStatus)] = &[
    ("created", OrderStatus::Pending),
    ("pending", OrderStatus::Pending),
    ("authorized", OrderStatus::Open),
    ("paid", OrderStatus::Open),
    ("shipping", OrderStatus::Open),
    ("completed", OrderStatus::Completed),
    ("canceled", OrderStatus::Cancelled),
    ("expired", OrderStatus::Cancelled),
    // Deprecated since 2018, still in the vocabulary.
    ("refunded", OrderStatus::Refunded),
];

/// Our status for a Mollie order: its `status`, then, for an order money
/// was taken for (`paid`, `shipping`, `completed`), its refunds: all of
/// what it cost refunded is `Refunded`, part of it `PartiallyRefunded`.
pub(super) fn order_status(status: Option<&str>, total: Money, refunded: Money) -> OrderStatus {
    let ours = status
        .and_then(|word| find(STATUSES, word))
        .unwrap_or(OrderStatus::Unknown);
    let paid = matches!(status, Some("paid" | "shipping" | "completed"));
    if paid && refunded > Money(0) {
        if refunded >= total {
            return OrderStatus::Refunded;
        }
        return OrderStatus::PartiallyRefunded;
    }
    ours
}

/// A page of a list: `count`, the records under `_embedded.<name>`, and
/// `_links.next` while there are more.
#[derive(Deserialize)]
pub(super) struct ListPage<E> {
    #[serde(rename = "_embedded")]
    pub(super) embedded: Option<E>,
    #[serde(rename = "_links")]
    pub(super) links: Option<Links>,
}

/// A list's `_links`: the next page's URL object, absent or null on the last.
#[derive(Deserialize)]
pub(super) struct Links {
    next: Option<Link>,
}

/// A HAL URL object.
#[derive(Deserialize)]
pub(super) struct Link {
    href: Option<String>,
}

impl<E> ListPage<E> {
    /// The next page's URL, when Mollie names one.
    pub(super) fn next_href(&self) -> Option<&str> {
        self.links
            .as_ref()
            .and_then(|links| links.next.as_ref())
            .and_then(|next| next.href.as_deref())
            .filter(|href| !href.trim().is_empty())
    }
}

impl Keyed for MollieOrder {
    const ID: &'static str = "/id";
}

impl Keyed for MollieCustomer {
    const ID: &'static str = "/id";
}

/// `_embedded` of `GET /v2/orders`.
#[derive(Deserialize)]
pub(super) struct EmbeddedOrders {
    #[serde(default)]
    pub(super) orders: Each<MollieOrder>,
}

impl Keyed for MolliePayment {
    const ID: &'static str = "/id";
}

impl Keyed for MollieProfile {
    const ID: &'static str = "/id";
}

/// `_embedded` of `GET /v2/payments`.
#[derive(Deserialize)]
pub(super) struct EmbeddedPayments {
    #[serde(default)]
    pub(super) payments: Each<MolliePayment>,
}

/// `_embedded` of `GET /v2/profiles`.
#[derive(Deserialize)]
pub(super) struct EmbeddedProfiles {
    #[serde(default)]
    pub(super) profiles: Each<MollieProfile>,
}

/// A website profile: payments are listed per profile.
#[derive(Deserialize)]
pub(super) struct MollieProfile {
    pub(super) id: String,
}

/// A payment as `GET /v2/payments` writes it (`list-payment-response`).
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
pub(super) struct MolliePayment {
    id: String,
    status: Option<String>,
    amount: Option<MollieAmount>,
    description: Option<String>,
    customer_id: Option<String>,
    order_id: Option<String>,
    created_at: Option<String>,
    paid_at: Option<String>,
}

impl MolliePayment {
    /// Whether the customer's money was received: status `paid`. An open,
    /// pending, authorized, expired, canceled or failed payment moved none.
    pub(super) fn is_paid(&self) -> bool {
        self.status.as_deref() == Some("paid")
    }

    /// Our payment: the amount received on the day it was paid (`paidAt`),
    /// from the customer it names, allocated to the order it paid (`Other`:
    /// an order is not an invoice); one without an amount, its currency or a
    /// readable time cannot be read.
    pub(super) fn into_record(self) -> Result<Payment, Unreadable> {
        let amount = self
            .amount
            .ok_or_else(|| Unreadable::field("amount", "is missing"))?;
        let currency = json::non_empty(amount.currency.clone())
            .ok_or_else(|| Unreadable::field("amount.currency", "is missing"))?;
        let total_amount = amount.value.money();
        let date = self
            .paid_at
            .or(self.created_at)
            .as_deref()
            .and_then(json::datetime)
            .map(|at| at.date_naive())
            .ok_or_else(|| Unreadable::field("paidAt", "is missing or not a time"))?;
        let allocations = json::non_empty(self.order_id)
            .map(|id| PaymentAllocation {
                allocation_type: AllocationType::Other,
                id,
                amount: total_amount,
            })
            .into_iter()
            .collect();
        Ok(Payment {
            reference: None,
            customer_ref: CustomerRef::to(json::non_empty(self.customer_id), None),
            account_ref: None,
            date,
            currency,
            total_amount,
            allocations,
            note: json::non_empty(self.description),
            source_modified_date: None,
            payment_id: self.id,
        })
    }
}

/// `_embedded` of `GET /v2/customers`.
#[derive(Deserialize)]
pub(super) struct EmbeddedCustomers {
    #[serde(default)]
    pub(super) customers: Each<MollieCustomer>,
}

/// `GET /v2/organizations/me`, as verification reads it.
#[derive(Deserialize)]
pub(super) struct Organization {
    pub(super) id: Option<String>,
    /// Its name, shown when it is linked.
    pub(super) name: Option<String>,
}

/// Mollie's amount object: a decimal string in its currency's own decimals
/// ("you must send the correct number of decimals", NOTES.md) and the
/// currency; a finer amount cannot be read.
#[derive(Deserialize)]
#[serde(try_from = "SentAmount")]
pub(super) struct MollieAmount {
    value: Amount,
    currency: Option<String>,
}

/// Mollie's amount object as sent, before its decimals are checked.
#[derive(Deserialize)]
struct SentAmount {
    value: Amount,
    currency: Option<String>,
}

impl TryFrom<SentAmount> for MollieAmount {
    type Error = &'static str;

    fn try_from(sent: SentAmount) -> Result<Self, Self::Error> {
        if let Some(currency) = &sent.currency
            && !json::within_minor_unit(sent.value.money(), currency)
        {
            return Err(json::FINER_THAN_CURRENCY);
        }
        Ok(Self {
            value: sent.value,
            currency: sent.currency,
        })
    }
}

fn value(amount: Option<&MollieAmount>) -> Money {
    amount
        .map(|amount| amount.value.money())
        .unwrap_or_default()
}

fn sum(amounts: impl IntoIterator<Item = Money>) -> Money {
    amounts
        .into_iter()
        .fold(Money(0), |total, amount| total + amount)
}

/// An order as Mollie writes it.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
pub(super) struct MollieOrder {
    id: String,
    order_number: Option<String>,
    status: Option<String>,
    amount: Option<MollieAmount>,
    amount_refunded: Option<MollieAmount>,
    created_at: Option<String>,
    completed_at: Option<String>,
    canceled_at: Option<String>,
    expired_at: Option<String>,
    #[serde(default)]
    lines: Vec<MollieLine>,
}

/// An order line.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct MollieLine {
    id: Option<String>,
    #[serde(rename = "type")]
    kind: Option<String>,
    name: Option<String>,
    sku: Option<String>,
    quantity: Option<i64>,
    unit_price: Option<MollieAmount>,
    discount_amount: Option<MollieAmount>,
    vat_amount: Option<MollieAmount>,
    total_amount: Option<MollieAmount>,
}

impl MollieLine {
    /// A `discount` line: an order-level discount, written negative.
    fn is_discount(&self) -> bool {
        self.kind.as_deref() == Some("discount")
    }

    /// The line before its discount: `unitPrice × quantity` (VAT included).
    fn gross(&self) -> Money {
        self.total() + value(self.discount_amount.as_ref())
    }

    fn total(&self) -> Money {
        value(self.total_amount.as_ref())
    }

    fn into_line(self) -> OrderLineItem {
        OrderLineItem {
            line_id: json::non_empty(self.id),
            description: self.name.unwrap_or_default(),
            sku: json::non_empty(self.sku),
            quantity: Quantity::units(self.quantity.unwrap_or(0)),
            unit_amount: value(self.unit_price.as_ref()),
            discount_amount: value(self.discount_amount.as_ref()),
            tax_amount: value(self.vat_amount.as_ref()),
            total_amount: value(self.total_amount.as_ref()),
        }
    }
}

impl MollieOrder {
    /// Our order; an order without a readable creation date is refused.
    pub(super) fn into_record(self) -> Result<Order, Unreadable> {
        let created = json::timestamp(self.created_at.as_deref())
            .ok_or_else(|| Unreadable::field("createdAt", "is missing or not a date-time"))?;
        let total = value(self.amount.as_ref());
        let refunded = value(self.amount_refunded.as_ref());
        let status = order_status(self.status.as_deref(), total, refunded);
        let closed_date = match self.status.as_deref() {
            Some("completed") => json::timestamp(self.completed_at.as_deref()),
            Some("canceled") => json::timestamp(self.canceled_at.as_deref()),
            Some("expired") => json::timestamp(self.expired_at.as_deref()),
            _ => None,
        };
        let (discount_lines, lines): (Vec<MollieLine>, Vec<MollieLine>) =
            self.lines.into_iter().partition(MollieLine::is_discount);
        // Line discounts plus discount lines (negative totals, made positive).
        let discount = sum(lines
            .iter()
            .map(|line| value(line.discount_amount.as_ref())))
            + sum(discount_lines
                .iter()
                .map(|line| Money(line.total().0.abs())));
        let tax = sum(lines
            .iter()
            .chain(discount_lines.iter())
            .map(|line| value(line.vat_amount.as_ref())));
        Ok(Order {
            order_number: json::non_empty(self.order_number),
            // Mollie orders name a billing person, not a Mollie customer (`cst_…`).
            customer_ref: None,
            created_date: created,
            closed_date,
            currency: self
                .amount
                .and_then(|amount| amount.currency)
                .unwrap_or_default(),
            sub_total: sum(lines.iter().map(MollieLine::gross)),
            total_tax_amount: tax,
            total_discount: discount,
            total_amount: total,
            total_refunded: refunded,
            status,
            line_items: lines
                .into_iter()
                .chain(discount_lines)
                .map(MollieLine::into_line)
                .collect(),
            source_modified_date: None,
            order_id: self.id,
        })
    }
}

/// A customer as Mollie writes it.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
pub(super) struct MollieCustomer {
    id: String,
    name: Option<String>,
    email: Option<String>,
}

impl MollieCustomer {
    /// Our customer: Mollie's customers have no phone, currency, status or
    /// modification time; they are in use while they exist.
    pub(super) fn into_record(self) -> Customer {
        let email = json::non_empty(self.email);
        Customer {
            customer_name: json::non_empty(self.name)
                .or_else(|| email.clone())
                .unwrap_or_else(|| self.id.clone()),
            email_address: email,
            phone: None,
            default_currency: None,
            status: CustomerStatus::Active,
            source_modified_date: None,
            customer_id: self.id,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_amount_finer_than_its_currency_costs_its_order_naming_the_field() {
        let page = r#"{"orders": [
            {"id": "ord_1", "createdAt": "2026-10-03T10:00:00+00:00",
             "amount": {"currency": "EUR", "value": "10.00"},
             "lines": [{"unitPrice": {"currency": "EUR", "value": "5.005"}}]},
            {"id": "ord_2", "createdAt": "2026-10-03T10:00:00+00:00",
             "amount": {"currency": "JPY", "value": "1000"}},
            {"id": "ord_3", "createdAt": "2026-10-03T10:00:00+00:00",
             "amount": {"currency": "KWD", "value": "1.005"}},
            {"id": "ord_4", "createdAt": "2026-10-03T10:00:00+00:00",
             "amount": {"currency": "JPY", "value": "1000.5"}}
        ]}"#;
        let embedded: EmbeddedOrders = serde_json::from_str(page).expect("the page reads");
        let read = embedded.orders.read(|order| order.into_record().map(Some));
        let ids: Vec<&str> = read
            .records
            .iter()
            .map(|order| order.order_id.as_str())
            .collect();
        assert_eq!(ids, ["ord_2", "ord_3"]);
        let issues: Vec<(Option<&str>, Option<&str>, &str)> = read
            .issues
            .iter()
            .map(|issue| {
                (
                    issue.record_id.as_deref(),
                    issue.field.as_deref(),
                    issue.reason.as_str(),
                )
            })
            .collect();
        assert_eq!(
            issues,
            [
                (
                    Some("ord_1"),
                    Some("lines[0].unitPrice"),
                    json::FINER_THAN_CURRENCY
                ),
                (Some("ord_4"), Some("amount"), json::FINER_THAN_CURRENCY),
            ]
        );
    }

    #[test]
    fn refunds_decide_for_orders_money_was_taken_for() {
        let total = Money(100_0000);
        assert_eq!(
            order_status(Some("created"), total, Money(0)),
            OrderStatus::Pending
        );
        assert_eq!(
            order_status(Some("paid"), total, Money(0)),
            OrderStatus::Open
        );
        assert_eq!(
            order_status(Some("completed"), total, Money(0)),
            OrderStatus::Completed
        );
        assert_eq!(
            order_status(Some("completed"), total, Money(10_0000)),
            OrderStatus::PartiallyRefunded
        );
        assert_eq!(
            order_status(Some("shipping"), total, total),
            OrderStatus::Refunded
        );
        assert_eq!(
            order_status(Some("canceled"), total, Money(0)),
            OrderStatus::Cancelled
        );
        assert_eq!(
            order_status(Some("lost"), total, Money(0)),
            OrderStatus::Unknown
        );
        assert_eq!(order_status(None, total, Money(0)), OrderStatus::Unknown);
    }
}
