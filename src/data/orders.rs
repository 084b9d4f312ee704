//! Orders: what a shop, marketplace or payments platform sold, newest first,
//! filterable by status.

use std::borrow::Cow;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::invoices::CustomerRef;
use super::money::{Money, Quantity};
use super::{Definition, Direction, Filter, FilterValues, Spec, vocabulary};
use crate::timestamp::Timestamp;

/// The orders data type.
pub struct Orders;

impl Definition for Orders {
    type Record = Order;

    const SPEC: &'static Spec = &Spec {
        name: "orders",
        noun: "orders",
        id_field: "orderId",
        order: Direction::Descending,
        order_description: "newest first by creation time (ties broken by connection, then order id)",
        filter: Some(Filter {
            parameter: "status",
            description: "Only orders in this status",
            values: FilterValues::Vocabulary(OrderStatus::NAMES),
        }),
        keys: &[
            "customerRef.id",
            "createdDate",
            "currency",
            "totalAmount",
            "status",
            "modifiedDate",
        ],
    };

    fn id(record: &Order) -> &str {
        &record.order_id
    }

    fn sort_key(record: &Order) -> String {
        record.created_date.to_rfc3339()
    }

    fn filter_value(record: &Order) -> Option<Cow<'static, str>> {
        Some(Cow::Borrowed(record.status.as_str()))
    }
}

vocabulary! {
    /// Where an order stands, in one vocabulary for every platform. Each
    /// platform's folder (`NOTES.md`, `mapping.rs`) says how its own order,
    /// payment and fulfilment states map onto it.
    pub enum OrderStatus {
        /// Placed, but not yet paid or authorized (awaiting payment, a draft).
        Pending,
        /// Paid or authorized and not yet fulfilled or closed.
        Open,
        /// Fulfilled, shipped or closed: nothing more will happen to it.
        Completed,
        /// Cancelled, declined or expired before it completed.
        Cancelled,
        /// Refunded in full.
        Refunded,
        /// Part of it refunded: 0 < totalRefunded < totalAmount.
        PartiallyRefunded,
        /// The platform's status has no equivalent.
        Unknown,
    }
}

/// An order synced from a commerce, marketplace or payments platform.
/// Amounts are exact decimals, as strings, in the order's currency.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Order {
    /// The platform's id of the order.
    pub order_id: String,
    /// The number people see (`#1001`); null when the platform gives none.
    pub order_number: Option<String>,
    /// The customer who placed it; null for a guest or when the platform gives none.
    pub customer_ref: Option<CustomerRef>,
    /// When it was placed.
    pub created_date: Timestamp,
    /// When it was closed, completed or cancelled; null while it is open.
    pub closed_date: Option<Timestamp>,
    /// ISO 4217 currency code.
    pub currency: String,
    /// Total of the lines before tax and order-level discounts.
    pub sub_total: Money,
    /// Total tax.
    pub total_tax_amount: Money,
    /// Total discount.
    pub total_discount: Money,
    /// What the customer was charged: the lines, less discounts, plus tax and shipping.
    pub total_amount: Money,
    /// How much of it has been refunded.
    pub total_refunded: Money,
    /// Status in tributary's vocabulary.
    pub status: OrderStatus,
    /// The order's lines.
    pub line_items: Vec<OrderLineItem>,
    /// When the platform's record last changed; null when the platform does not say.
    pub source_modified_date: Option<Timestamp>,
}

/// One line of an order. Amounts are exact decimals, as strings.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct OrderLineItem {
    /// The platform's id of the line; null when the platform gives none.
    pub line_id: Option<String>,
    /// What was sold.
    pub description: String,
    /// The stock-keeping unit; null when the platform gives none.
    pub sku: Option<String>,
    /// Units sold.
    pub quantity: Quantity,
    /// Price of one unit, before tax and discounts.
    pub unit_amount: Money,
    /// Discount on the line.
    pub discount_amount: Money,
    /// Tax on the line.
    pub tax_amount: Money,
    /// Line total: units times price, less the discount, plus tax where the
    /// platform includes it (each platform's `NOTES.md` says which).
    pub total_amount: Money,
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::{TimeZone, Utc};

    #[test]
    fn the_sort_key_orders_as_the_creation_time() {
        let at = |hour, micros| {
            Timestamp(
                Utc.with_ymd_and_hms(2026, 3, 9, hour, 0, 0)
                    .single()
                    .expect("a time")
                    + chrono::Duration::microseconds(micros),
            )
            .to_rfc3339()
        };
        assert!(at(9, 0) < at(9, 1));
        assert!(at(9, 999_999) < at(10, 0));
    }

    #[test]
    fn statuses_are_read_case_insensitively() {
        assert_eq!(
            OrderStatus::parse_loose("partiallyrefunded"),
            Some(OrderStatus::PartiallyRefunded)
        );
        assert_eq!(OrderStatus::parse_loose("shipped"), None);
    }
}
