//! eBay's answers and how they become our orders: one status from three of
//! eBay's (cancellation, payment, fulfilment), the order's `pricingSummary`
//! as its totals, refunds from the payment summary, and unit prices from
//! line costs (eBay gives a line's cost for all its units).

use serde::Deserialize;

use crate::data::invoices::CustomerRef;
use crate::data::money::{Money, Quantity};
use crate::data::orders::{Order, OrderLineItem, OrderStatus};
use crate::platforms::kit::json::{self, Amount, per_unit};
use crate::platforms::kit::records::{Each, Keyed, Unreadable};
use crate::platforms::kit::status::find;

/// `orderPaymentStatus` words that decide the status on their own, whatever
/// the fulfilment (`PAID` depends on it: [`order_status`]).
const PAYMENT_STATUSES: &[(&str, OrderStatus)] = &[
    ("PENDING", OrderStatus::Pending),
    // The buyer's payment failed: the sale did not happen.
    ("FAILED", OrderStatus::Cancelled),
    ("FULLY_REFUNDED", OrderStatus::Refunded),
    ("PARTIALLY_REFUNDED", OrderStatus::PartiallyRefunded),
];

/// `orderFulfillmentStatus` of a paid order.
const FULFILMENT_STATUSES: &[(&str, OrderStatus)] = &[
    ("NOT_STARTED", OrderStatus::Open),
    ("IN_PROGRESS", OrderStatus::Open),
    ("FULFILLED", OrderStatus::Completed),
];

/// Our status for an eBay order: a completed cancellation first, then the
/// payment, then (for a paid order) the fulfilment.
pub(super) fn order_status(
    cancel_state: Option<&str>,
    payment: Option<&str>,
    fulfilment: Option<&str>,
) -> OrderStatus {
    if cancel_state == Some("CANCELED") {
        return OrderStatus::Cancelled;
    }
    match payment {
        Some("PAID") => fulfilment
            .and_then(|word| find(FULFILMENT_STATUSES, word))
            .unwrap_or(OrderStatus::Unknown),
        Some(word) => find(PAYMENT_STATUSES, word).unwrap_or(OrderStatus::Unknown),
        None => OrderStatus::Unknown,
    }
}

/// A page of `GET /sell/fulfillment/v1/order` (`OrderSearchPagedCollection`).
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
pub(super) struct OrdersPage {
    #[serde(default)]
    pub(super) orders: Each<EbayOrder>,
    /// The next page's URI; absent on the last page.
    pub(super) next: Option<String>,
    /// How many orders match, over every page.
    pub(super) total: Option<u64>,
}

/// eBay's `Amount`: a decimal string in major units, and its currency.
#[derive(Deserialize)]
pub(super) struct EbayAmount {
    value: Amount,
    currency: Option<String>,
}

fn value(amount: Option<&EbayAmount>) -> Money {
    amount
        .map(|amount| amount.value.money())
        .unwrap_or_default()
}

/// A discount as a positive amount (eBay may write it negative).
fn magnitude(money: Money) -> Money {
    Money(money.0.abs())
}

/// An order as eBay writes it.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
pub(super) struct EbayOrder {
    order_id: String,
    legacy_order_id: Option<String>,
    sales_record_reference: Option<String>,
    creation_date: Option<String>,
    last_modified_date: Option<String>,
    order_fulfillment_status: Option<String>,
    order_payment_status: Option<String>,
    cancel_status: Option<CancelStatus>,
    buyer: Option<Buyer>,
    pricing_summary: Option<PricingSummary>,
    payment_summary: Option<PaymentSummary>,
    #[serde(default)]
    line_items: Vec<EbayLineItem>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct CancelStatus {
    cancel_state: Option<String>,
    cancelled_date: Option<String>,
}

#[derive(Deserialize)]
struct Buyer {
    username: Option<String>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct PricingSummary {
    price_subtotal: Option<EbayAmount>,
    price_discount: Option<EbayAmount>,
    tax: Option<EbayAmount>,
    total: Option<EbayAmount>,
}

#[derive(Deserialize)]
struct PaymentSummary {
    #[serde(default)]
    refunds: Vec<Refund>,
}

/// A refund of the order or of one line (`OrderRefund`, `LineItemRefund`).
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Refund {
    amount: Option<EbayAmount>,
    refund_status: Option<String>,
}

impl Refund {
    /// Money that went back to the buyer: a refund not `PENDING` or `FAILED`.
    fn refunded(&self) -> Money {
        match self.refund_status.as_deref() {
            Some("PENDING" | "FAILED") => Money(0),
            _ => value(self.amount.as_ref()),
        }
    }
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct EbayLineItem {
    line_item_id: Option<String>,
    title: Option<String>,
    sku: Option<String>,
    quantity: Option<i64>,
    line_item_cost: Option<EbayAmount>,
    total: Option<EbayAmount>,
    #[serde(default)]
    applied_promotions: Vec<Promotion>,
    #[serde(default)]
    taxes: Vec<Tax>,
    #[serde(default)]
    refunds: Vec<Refund>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Promotion {
    discount_amount: Option<EbayAmount>,
}

#[derive(Deserialize)]
struct Tax {
    amount: Option<EbayAmount>,
}

impl EbayLineItem {
    fn into_line(self) -> OrderLineItem {
        let quantity = Quantity::units(self.quantity.unwrap_or(1));
        let cost = value(self.line_item_cost.as_ref());
        let discount = self
            .applied_promotions
            .iter()
            .map(|promotion| magnitude(value(promotion.discount_amount.as_ref())))
            .fold(Money(0), |sum, amount| sum + amount);
        let tax = self
            .taxes
            .iter()
            .map(|tax| value(tax.amount.as_ref()))
            .fold(Money(0), |sum, amount| sum + amount);
        OrderLineItem {
            line_id: json::non_empty(self.line_item_id),
            description: self.title.unwrap_or_default(),
            sku: json::non_empty(self.sku),
            quantity,
            unit_amount: per_unit(cost, quantity),
            discount_amount: discount,
            tax_amount: tax,
            total_amount: value(self.total.as_ref()),
        }
    }
}

impl Keyed for EbayOrder {
    const ID: &'static str = "/orderId";
}

impl EbayOrder {
    /// Our order; an order without a readable creation date is refused.
    pub(super) fn into_record(self) -> Result<Order, Unreadable> {
        let created = json::timestamp(self.creation_date.as_deref())
            .ok_or_else(|| Unreadable::field("creationDate", "is missing or not a date-time"))?;
        let cancel_state = self
            .cancel_status
            .as_ref()
            .and_then(|cancel| cancel.cancel_state.as_deref());
        let status = order_status(
            cancel_state,
            self.order_payment_status.as_deref(),
            self.order_fulfillment_status.as_deref(),
        );
        let closed_date = match status {
            OrderStatus::Cancelled => self
                .cancel_status
                .as_ref()
                .and_then(|cancel| json::timestamp(cancel.cancelled_date.as_deref())),
            _ => None,
        };
        // Order-level refunds; lines carry theirs instead when the seller
        // refunded line by line.
        let order_refunds: Vec<&Refund> = self
            .payment_summary
            .iter()
            .flat_map(|summary| summary.refunds.iter())
            .collect();
        let line_refunds = self.line_items.iter().flat_map(|line| line.refunds.iter());
        let refunded = if order_refunds.is_empty() {
            line_refunds
                .map(Refund::refunded)
                .fold(Money(0), |a, b| a + b)
        } else {
            order_refunds
                .into_iter()
                .map(Refund::refunded)
                .fold(Money(0), |a, b| a + b)
        };
        let pricing = self.pricing_summary.as_ref();
        let total = pricing.and_then(|pricing| pricing.total.as_ref());
        let currency = total
            .and_then(|total| total.currency.clone())
            .unwrap_or_default();
        Ok(Order {
            order_number: json::non_empty(self.sales_record_reference)
                .or_else(|| json::non_empty(self.legacy_order_id)),
            customer_ref: CustomerRef::to(
                self.buyer.and_then(|buyer| json::non_empty(buyer.username)),
                None,
            ),
            created_date: created,
            closed_date,
            currency,
            sub_total: value(pricing.and_then(|pricing| pricing.price_subtotal.as_ref())),
            total_tax_amount: value(pricing.and_then(|pricing| pricing.tax.as_ref())),
            total_discount: magnitude(value(
                pricing.and_then(|pricing| pricing.price_discount.as_ref()),
            )),
            total_amount: value(total),
            total_refunded: refunded,
            status,
            line_items: self
                .line_items
                .into_iter()
                .map(EbayLineItem::into_line)
                .collect(),
            source_modified_date: json::timestamp(self.last_modified_date.as_deref()),
            order_id: self.order_id,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_cancellation_wins_then_the_payment_then_the_fulfilment() {
        let status = order_status;
        assert_eq!(
            status(Some("CANCELED"), Some("PAID"), Some("FULFILLED")),
            OrderStatus::Cancelled
        );
        assert_eq!(
            status(Some("IN_PROGRESS"), Some("PAID"), Some("NOT_STARTED")),
            OrderStatus::Open
        );
        assert_eq!(status(None, Some("PENDING"), None), OrderStatus::Pending);
        assert_eq!(status(None, Some("FAILED"), None), OrderStatus::Cancelled);
        assert_eq!(
            status(None, Some("FULLY_REFUNDED"), Some("FULFILLED")),
            OrderStatus::Refunded
        );
        assert_eq!(
            status(None, Some("PARTIALLY_REFUNDED"), Some("FULFILLED")),
            OrderStatus::PartiallyRefunded
        );
        assert_eq!(
            status(None, Some("PAID"), Some("FULFILLED")),
            OrderStatus::Completed
        );
        assert_eq!(
            status(None, Some("PAID"), Some("HELD")),
            OrderStatus::Unknown
        );
        assert_eq!(status(None, Some("DISPUTED"), None), OrderStatus::Unknown);
    }
}
