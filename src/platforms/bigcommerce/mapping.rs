//! BigCommerce's answers and how they become our records: V2 orders (amounts
//! are decimal strings in major units, dates RFC 2822, the status a numeric
//! `status_id`) with their products, and V3 customers (ISO 8601 dates) with
//! their pagination meta.

use chrono::{DateTime, Utc};
use serde::Deserialize;

use crate::data::customers::{Customer, CustomerStatus};
use crate::data::invoices::CustomerRef;
use crate::data::money::{Money, Quantity};
use crate::data::orders::{Order, OrderLineItem, OrderStatus};
use crate::platforms::kit::json::{self, Amount, money};
use crate::platforms::kit::records::{Each, Keyed, Unreadable};
use crate::timestamp::Timestamp;

/// BigCommerce's order status ids (`status_id`) and ours. Merchants may
/// relabel a status (`custom_label`), never renumber it: the id decides.
pub(super) const ORDER_STATUSES: &[(u32, OrderStatus)] = &[
    // An abandoned checkout: never placed.
    (0, OrderStatus::Pending),
    (1, OrderStatus::Pending),
    (2, OrderStatus::Completed),
    (3, OrderStatus::Open),
    (4, OrderStatus::Refunded),
    (5, OrderStatus::Cancelled),
    // The payment was declined: the sale did not happen.
    (6, OrderStatus::Cancelled),
    (7, OrderStatus::Pending),
    (8, OrderStatus::Open),
    (9, OrderStatus::Open),
    (10, OrderStatus::Completed),
    (11, OrderStatus::Open),
    (12, OrderStatus::Open),
    (13, OrderStatus::Open),
    (14, OrderStatus::PartiallyRefunded),
];

/// Our status for a `status_id`.
pub(super) fn order_status(id: Option<u32>) -> OrderStatus {
    id.and_then(|id| {
        ORDER_STATUSES
            .iter()
            .find(|(theirs, _)| *theirs == id)
            .map(|(_, ours)| *ours)
    })
    .unwrap_or(OrderStatus::Unknown)
}

/// A V2 date (`Tue, 20 Nov 2012 00:00:00 +0000`), or an ISO 8601 one.
pub(super) fn rfc2822(text: Option<&str>) -> Option<Timestamp> {
    let text = text?.trim();
    DateTime::parse_from_rfc2822(text)
        .ok()
        .map(|at| Timestamp(at.with_timezone(&Utc)))
        .or_else(|| json::timestamp(Some(text)))
}

/// An order as `GET /v2/orders` writes it.
#[derive(Deserialize)]
pub(super) struct BigCommerceOrder {
    pub(super) id: u64,
    customer_id: Option<u64>,
    date_created: Option<String>,
    date_modified: Option<String>,
    date_shipped: Option<String>,
    status_id: Option<u32>,
    subtotal_ex_tax: Option<Amount>,
    total_tax: Option<Amount>,
    discount_amount: Option<Amount>,
    coupon_discount: Option<Amount>,
    total_inc_tax: Option<Amount>,
    refunded_amount: Option<Amount>,
    default_currency_code: Option<String>,
    currency_code: Option<String>,
    billing_address: Option<BillingAddress>,
}

/// The billing address on an order (who placed it).
#[derive(Deserialize)]
struct BillingAddress {
    first_name: Option<String>,
    last_name: Option<String>,
    company: Option<String>,
}

/// A product line of `GET /v2/orders/{id}/products`.
#[derive(Deserialize)]
pub(super) struct OrderProduct {
    id: Option<u64>,
    name: Option<String>,
    sku: Option<String>,
    quantity: Option<i64>,
    price_ex_tax: Option<Amount>,
    total_tax: Option<Amount>,
    total_inc_tax: Option<Amount>,
    #[serde(default)]
    applied_discounts: Vec<AppliedDiscount>,
}

/// A discount applied to a line.
#[derive(Deserialize)]
struct AppliedDiscount {
    amount: Option<Amount>,
}

impl OrderProduct {
    /// Our line.
    pub(super) fn into_line(self) -> OrderLineItem {
        let discount = self
            .applied_discounts
            .iter()
            .map(|discount| Money(money(discount.amount).0.abs()))
            .fold(Money(0), |sum, amount| sum + amount);
        OrderLineItem {
            line_id: self.id.map(|id| id.to_string()),
            description: self.name.unwrap_or_default(),
            sku: json::non_empty(self.sku),
            quantity: Quantity::units(self.quantity.unwrap_or(1)),
            unit_amount: money(self.price_ex_tax),
            discount_amount: discount,
            tax_amount: money(self.total_tax),
            total_amount: money(self.total_inc_tax),
        }
    }
}

fn person(first: Option<String>, last: Option<String>) -> Option<String> {
    let name = [json::non_empty(first), json::non_empty(last)]
        .into_iter()
        .flatten()
        .collect::<Vec<_>>()
        .join(" ");
    json::non_empty(Some(name))
}

impl BigCommerceOrder {
    /// Our order with its lines; one without a readable `date_created` is refused.
    pub(super) fn into_record(self, products: Vec<OrderProduct>) -> Result<Order, Unreadable> {
        let id = self.id.to_string();
        let created = rfc2822(self.date_created.as_deref())
            .ok_or_else(|| Unreadable::field("date_created", "is missing or not a date"))?;
        let status = order_status(self.status_id);
        let closed_date = match status {
            OrderStatus::Completed => rfc2822(self.date_shipped.as_deref())
                .or_else(|| rfc2822(self.date_modified.as_deref())),
            OrderStatus::Cancelled | OrderStatus::Refunded => {
                rfc2822(self.date_modified.as_deref())
            }
            _ => None,
        };
        // A guest order has customer id 0.
        let customer_id = self
            .customer_id
            .filter(|id| *id != 0)
            .map(|id| id.to_string());
        let name = self.billing_address.and_then(|address| {
            json::non_empty(address.company)
                .or_else(|| person(address.first_name, address.last_name))
        });
        Ok(Order {
            order_number: Some(id.clone()),
            customer_ref: customer_id.and_then(|customer| CustomerRef::to(Some(customer), name)),
            created_date: created,
            closed_date,
            currency: json::non_empty(self.default_currency_code)
                .or_else(|| json::non_empty(self.currency_code))
                .unwrap_or_default(),
            sub_total: money(self.subtotal_ex_tax),
            total_tax_amount: money(self.total_tax),
            total_discount: Money(
                money(self.discount_amount).0.abs() + money(self.coupon_discount).0.abs(),
            ),
            total_amount: money(self.total_inc_tax),
            total_refunded: money(self.refunded_amount),
            status,
            line_items: products.into_iter().map(OrderProduct::into_line).collect(),
            source_modified_date: rfc2822(self.date_modified.as_deref()),
            order_id: id,
        })
    }
}

impl Keyed for BigCommerceOrder {
    const ID: &'static str = "/id";
}

impl Keyed for OrderProduct {
    const ID: &'static str = "/id";
}

impl Keyed for BigCommerceCustomer {
    const ID: &'static str = "/id";
}

/// A page of `GET /v3/customers`.
#[derive(Deserialize)]
pub(super) struct CustomersPage {
    #[serde(default)]
    pub(super) data: Each<BigCommerceCustomer>,
    pub(super) meta: Option<Meta>,
}

/// A V3 collection's `meta`.
#[derive(Deserialize)]
pub(super) struct Meta {
    pub(super) pagination: Option<Pagination>,
}

/// Where a V3 page stands.
#[derive(Deserialize)]
pub(super) struct Pagination {
    pub(super) total: Option<u64>,
    pub(super) current_page: Option<u64>,
    pub(super) total_pages: Option<u64>,
}

/// A customer as V3 writes it.
#[derive(Deserialize)]
pub(super) struct BigCommerceCustomer {
    id: u64,
    email: Option<String>,
    first_name: Option<String>,
    last_name: Option<String>,
    company: Option<String>,
    phone: Option<String>,
    date_modified: Option<String>,
}

impl BigCommerceCustomer {
    /// Our customer: the company, else the person, else the e-mail address.
    pub(super) fn into_record(self) -> Customer {
        let email = json::non_empty(self.email);
        let id = self.id.to_string();
        let name = json::non_empty(self.company)
            .or_else(|| person(self.first_name, self.last_name))
            .or_else(|| email.clone())
            .unwrap_or_else(|| id.clone());
        Customer {
            customer_id: id,
            customer_name: name,
            email_address: email,
            phone: json::non_empty(self.phone),
            default_currency: None,
            status: CustomerStatus::Active,
            source_modified_date: rfc2822(self.date_modified.as_deref()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn status_ids_map_and_unknown_ids_are_unknown() {
        assert_eq!(order_status(Some(0)), OrderStatus::Pending);
        assert_eq!(order_status(Some(2)), OrderStatus::Completed);
        assert_eq!(order_status(Some(6)), OrderStatus::Cancelled);
        assert_eq!(order_status(Some(14)), OrderStatus::PartiallyRefunded);
        assert_eq!(order_status(Some(15)), OrderStatus::Unknown);
        assert_eq!(order_status(None), OrderStatus::Unknown);
    }

    #[test]
    fn v2_dates_are_rfc_2822_and_v3_dates_iso_8601() {
        let v2 = rfc2822(Some("Tue, 20 Nov 2012 00:00:00 +0000")).expect("a date");
        assert_eq!(v2.0.to_rfc3339(), "2012-11-20T00:00:00+00:00");
        let v3 = rfc2822(Some("2021-02-10T19:40:21Z")).expect("a date");
        assert_eq!(v3.0.to_rfc3339(), "2021-02-10T19:40:21+00:00");
        assert_eq!(rfc2822(Some("")), None);
    }
}
