//! Amazon's answers and how they become our orders: `OrderStatus` words in
//! our vocabulary, `Money` objects (decimal strings in major units), totals
//! summed from the order's items (the order has only its grand total), and
//! the seller's marketplaces from the Sellers API.

use serde::Deserialize;

use crate::data::money::{Money, Quantity};
use crate::data::orders::{Order, OrderLineItem, OrderStatus};
use crate::platforms::kit::json::{self, Amount, per_unit};
use crate::platforms::kit::records::{Each, Keyed, Unreadable};
use crate::platforms::kit::status::find;

/// Amazon's `OrderStatus` words. Amazon reports no refunds on orders (they
/// are in the Finances API), so `Refunded` and `PartiallyRefunded` never
/// come from here.
const STATUSES: &[(&str, OrderStatus)] = &[
    ("PendingAvailability", OrderStatus::Pending),
    ("Pending", OrderStatus::Pending),
    ("Unshipped", OrderStatus::Open),
    ("PartiallyShipped", OrderStatus::Open),
    ("Shipped", OrderStatus::Completed),
    ("InvoiceUnconfirmed", OrderStatus::Completed),
    ("Canceled", OrderStatus::Cancelled),
    ("Unfulfillable", OrderStatus::Cancelled),
];

/// Our status for an Amazon `OrderStatus`.
pub(super) fn order_status(word: &str) -> OrderStatus {
    find(STATUSES, word).unwrap_or(OrderStatus::Unknown)
}

/// `GET /sellers/v1/marketplaceParticipations`.
#[derive(Deserialize)]
pub(super) struct ParticipationsAnswer {
    #[serde(default)]
    pub(super) payload: Vec<Participation>,
}

/// One marketplace the seller can sell in.
#[derive(Deserialize)]
pub(super) struct Participation {
    pub(super) marketplace: Marketplace,
    pub(super) participation: Option<ParticipationFlags>,
}

/// The marketplace of a participation.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
pub(super) struct Marketplace {
    pub(super) id: String,
    pub(super) default_currency_code: Option<String>,
}

/// Whether the seller takes part in it.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
pub(super) struct ParticipationFlags {
    pub(super) is_participating: bool,
}

impl Participation {
    /// Whether the seller sells there (a participation without flags counts).
    pub(super) fn active(&self) -> bool {
        self.participation
            .as_ref()
            .is_none_or(|flags| flags.is_participating)
    }
}

/// `GET /orders/v0/orders` (`GetOrdersResponse`).
#[derive(Deserialize)]
pub(super) struct OrdersAnswer {
    pub(super) payload: OrdersList,
}

/// Its `payload` (`OrdersList`).
#[derive(Deserialize)]
#[serde(rename_all = "PascalCase")]
pub(super) struct OrdersList {
    #[serde(default)]
    pub(super) orders: Each<AmazonOrder>,
    /// The next page's token; absent or empty on the last page.
    pub(super) next_token: Option<String>,
}

/// `GET /orders/v0/orders/{orderId}/orderItems` (`GetOrderItemsResponse`).
#[derive(Deserialize)]
pub(super) struct ItemsAnswer {
    pub(super) payload: ItemsList,
}

/// Its `payload` (`OrderItemsList`).
#[derive(Deserialize)]
#[serde(rename_all = "PascalCase")]
pub(super) struct ItemsList {
    #[serde(default)]
    pub(super) order_items: Each<AmazonItem>,
    pub(super) next_token: Option<String>,
}

/// Amazon's `Money`: a decimal string in major units, and its currency.
/// The models require neither (`ordersV0.json`, `Money`): a money without
/// `Amount` is no amount, as a money left out is.
#[derive(Deserialize)]
#[serde(rename_all = "PascalCase")]
pub(super) struct AmazonMoney {
    currency_code: Option<String>,
    amount: Option<Amount>,
}

fn value(money: Option<&AmazonMoney>) -> Money {
    json::money(money.and_then(|money| money.amount))
}

/// An order as Amazon writes it.
#[derive(Deserialize)]
#[serde(rename_all = "PascalCase")]
pub(super) struct AmazonOrder {
    pub(super) amazon_order_id: String,
    seller_order_id: Option<String>,
    purchase_date: Option<String>,
    last_update_date: Option<String>,
    order_status: Option<String>,
    order_total: Option<AmazonMoney>,
    marketplace_id: Option<String>,
}

/// One item (line) of an order.
#[derive(Deserialize)]
#[serde(rename_all = "PascalCase")]
pub(super) struct AmazonItem {
    order_item_id: Option<String>,
    #[serde(rename = "SellerSKU")]
    seller_sku: Option<String>,
    title: Option<String>,
    quantity_ordered: Option<i64>,
    item_price: Option<AmazonMoney>,
    item_tax: Option<AmazonMoney>,
    shipping_tax: Option<AmazonMoney>,
    promotion_discount: Option<AmazonMoney>,
    shipping_discount: Option<AmazonMoney>,
}

impl AmazonItem {
    /// Our line.
    pub(super) fn to_line(&self) -> OrderLineItem {
        let quantity = Quantity::units(self.quantity_ordered.unwrap_or(1));
        // `ItemPrice` is the price of all the line's units.
        let price = value(self.item_price.as_ref());
        let discount = value(self.promotion_discount.as_ref());
        let tax = value(self.item_tax.as_ref());
        OrderLineItem {
            line_id: json::non_empty(self.order_item_id.clone()),
            description: self.title.clone().unwrap_or_default(),
            sku: json::non_empty(self.seller_sku.clone()),
            quantity,
            unit_amount: per_unit(price, quantity),
            discount_amount: discount,
            tax_amount: tax,
            total_amount: price - discount + tax,
        }
    }
}

fn sum(items: &[AmazonItem], pick: impl Fn(&AmazonItem) -> Money) -> Money {
    items
        .iter()
        .map(pick)
        .fold(Money(0), |total, amount| total + amount)
}

impl Keyed for AmazonOrder {
    const ID: &'static str = "/AmazonOrderId";
}

impl Keyed for AmazonItem {
    const ID: &'static str = "/OrderItemId";
}

impl AmazonOrder {
    /// Our order, with its `items`; `currency` is the marketplace's, for
    /// an order whose total Amazon does not give yet (a pending one).
    pub(super) fn into_record(
        self,
        items: &[AmazonItem],
        marketplace_currency: Option<&str>,
    ) -> Result<Order, Unreadable> {
        let created = json::timestamp(self.purchase_date.as_deref())
            .ok_or_else(|| Unreadable::field("PurchaseDate", "is missing or not a date-time"))?;
        let status = order_status(self.order_status.as_deref().unwrap_or_default());
        let modified = json::timestamp(self.last_update_date.as_deref());
        // Amazon has no closing time: the last update of an order that can
        // no longer change is when it closed.
        let closed_date = match status {
            OrderStatus::Completed | OrderStatus::Cancelled => modified,
            _ => None,
        };
        let currency = self
            .order_total
            .as_ref()
            .and_then(|total| total.currency_code.clone())
            .or_else(|| {
                items
                    .iter()
                    .find_map(|item| item.item_price.as_ref()?.currency_code.clone())
            })
            .or_else(|| marketplace_currency.map(str::to_owned))
            .unwrap_or_default();
        Ok(Order {
            order_number: json::non_empty(self.seller_order_id)
                .or_else(|| Some(self.amazon_order_id.clone())),
            // Buyer data is restricted (a Restricted Data Token): none.
            customer_ref: None,
            created_date: created,
            closed_date,
            currency,
            sub_total: sum(items, |item| value(item.item_price.as_ref())),
            total_tax_amount: sum(items, |item| {
                value(item.item_tax.as_ref()) + value(item.shipping_tax.as_ref())
            }),
            total_discount: sum(items, |item| {
                value(item.promotion_discount.as_ref()) + value(item.shipping_discount.as_ref())
            }),
            total_amount: value(self.order_total.as_ref()),
            total_refunded: Money(0),
            status,
            line_items: items.iter().map(AmazonItem::to_line).collect(),
            source_modified_date: modified,
            order_id: self.amazon_order_id,
        })
    }

    /// The marketplace it was placed in.
    pub(super) fn marketplace_id(&self) -> Option<&str> {
        self.marketplace_id.as_deref()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_documented_order_status_has_a_place_in_ours() {
        for (word, ours) in [
            ("PendingAvailability", OrderStatus::Pending),
            ("Pending", OrderStatus::Pending),
            ("Unshipped", OrderStatus::Open),
            ("PartiallyShipped", OrderStatus::Open),
            ("Shipped", OrderStatus::Completed),
            ("InvoiceUnconfirmed", OrderStatus::Completed),
            ("Canceled", OrderStatus::Cancelled),
            ("Unfulfillable", OrderStatus::Cancelled),
            ("Cancelled", OrderStatus::Unknown),
        ] {
            assert_eq!(order_status(word), ours, "{word}");
        }
    }
}
