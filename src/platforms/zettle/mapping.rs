//! Zettle's answers and how they become our records: the purchase history
//! envelope (`purchases`, `lastPurchaseHash`), purchases with their
//! products as order lines, integer amounts of the currency's minor unit as
//! exact money, and an order's state from its `refunded` flag and the
//! refund purchases that name it.

use std::collections::HashMap;

use serde::Deserialize;

use crate::data::money::{Money, Quantity};
use crate::data::orders::{Order, OrderLineItem, OrderStatus};
use crate::platforms::kit::json::{self, Amount};
use crate::platforms::kit::records::{Each, Keyed, Unreadable};

/// An integer amount of `currency`'s minor unit as exact money.
pub(super) fn minor(amount: i64, currency: &str) -> Result<Money, Unreadable> {
    json::from_minor(amount, json::minor_digits(currency))
        .ok_or_else(|| Unreadable::record("an amount is out of range for its currency"))
}

/// `n / d` rounded half away from zero (`d > 0`).
fn round_div(n: i128, d: i128) -> i128 {
    let quotient = n / d;
    if (n % d).abs() * 2 >= d {
        quotient + n.signum()
    } else {
        quotient
    }
}

/// `a × b / 10⁴` for two fixed-point numbers of four decimals, rounded half
/// away from zero to four decimals (price × quantity).
fn times(a: i64, b: i64) -> Result<Money, Unreadable> {
    let rounded = round_div(i128::from(a) * i128::from(b), 10_000);
    i64::try_from(rounded)
        .map(Money)
        .map_err(|_| Unreadable::field("products", "a line's total is out of range"))
}

/// VAT in whole minor units: `taxable` minor units at `percentage` (four
/// decimals), rounded half away from zero.
fn vat(taxable: i64, percentage: Money) -> i64 {
    let rounded = round_div(i128::from(taxable) * i128::from(percentage.0), 1_000_000);
    i64::try_from(rounded).unwrap_or(0)
}

/// Our status for a purchase that is not itself a refund: not refunded is
/// `Completed` (a purchase is a paid receipt); refunded in full or in part
/// by its refund purchases is `Refunded` or `PartiallyRefunded`; without a
/// `refunded` flag, `Unknown`.
pub(super) fn order_status(
    refunded_flag: Option<bool>,
    total: Money,
    refunded: Money,
) -> OrderStatus {
    match refunded_flag {
        None => OrderStatus::Unknown,
        Some(false) if refunded == Money(0) => OrderStatus::Completed,
        _ if refunded > Money(0) && refunded < total => OrderStatus::PartiallyRefunded,
        _ => OrderStatus::Refunded,
    }
}

impl Keyed for Purchase {
    const ID: &'static str = "/purchaseUUID1";
}

/// A page of `GET /purchases/v2`.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
pub(super) struct PurchasePage {
    #[serde(default)]
    pub(super) purchases: Each<Purchase>,
    pub(super) last_purchase_hash: Option<String>,
}

/// `GET /users/self` on the OAuth host, as verification reads it.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
pub(super) struct UserSelf {
    pub(super) organization_uuid: Option<String>,
}

/// A purchase (a receipt; a refund is a purchase of its own) as Zettle
/// writes it.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
pub(super) struct Purchase {
    #[serde(rename = "purchaseUUID")]
    purchase_uuid: Option<String>,
    #[serde(rename = "purchaseUUID1")]
    purchase_uuid1: Option<String>,
    pub(super) amount: Option<i64>,
    vat_amount: Option<i64>,
    currency: Option<String>,
    timestamp: Option<String>,
    purchase_number: Option<i64>,
    global_purchase_number: Option<i64>,
    #[serde(default)]
    products: Vec<Product>,
    /// Whether this purchase is itself a refund of another.
    #[serde(default)]
    pub(super) refund: bool,
    /// Whether refunds were made of this purchase.
    refunded: Option<bool>,
    /// The refund purchases of this one (`purchaseUUID1` form).
    #[serde(rename = "refundedByPurchaseUUIDs1", default)]
    pub(super) refunded_by: Vec<String>,
    /// On a refund purchase, the purchase it refunds (`purchaseUUID1` form).
    #[serde(rename = "refundsPurchaseUUID1")]
    refunds_purchase: Option<String>,
}

/// A product row of a purchase.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Product {
    id: Option<String>,
    name: Option<String>,
    variant_name: Option<String>,
    sku: Option<String>,
    /// A decimal string, negative on refunds.
    quantity: Option<String>,
    unit_price: Option<i64>,
    vat_percentage: Option<Amount>,
    row_taxable_amount: Option<i64>,
    discount_value: Option<i64>,
}

impl Product {
    fn quantity(&self) -> Result<Quantity, Unreadable> {
        match self.quantity.as_deref().map(str::trim) {
            None | Some("") => Ok(Quantity(0)),
            Some(text) => json::parse_amount(text)
                .map(|amount| Quantity(amount.0))
                .map_err(|_| Unreadable::field("products.quantity", "is not a decimal number")),
        }
    }

    /// `unitPrice × quantity`, before any discount (VAT included).
    fn gross(&self, currency: &str) -> Result<Money, Unreadable> {
        let unit = minor(self.unit_price.unwrap_or(0), currency)?;
        times(unit.0, self.quantity()?.0)
    }

    fn into_line(self, currency: &str) -> Result<OrderLineItem, Unreadable> {
        let gross = self.gross(currency)?;
        let quantity = self.quantity()?;
        let discount = minor(self.discount_value.unwrap_or(0), currency)?;
        // VAT on the row's taxable (net) amount, rounded to the minor unit.
        let tax = match (self.row_taxable_amount, self.vat_percentage) {
            (Some(taxable), Some(percentage)) => minor(vat(taxable, percentage.money()), currency)?,
            _ => Money(0),
        };
        let name = json::non_empty(self.name).unwrap_or_default();
        let description = match json::non_empty(self.variant_name) {
            Some(variant) if variant != name => format!("{name} ({variant})"),
            _ => name,
        };
        Ok(OrderLineItem {
            line_id: json::non_empty(self.id),
            description,
            sku: json::non_empty(self.sku),
            quantity,
            unit_amount: minor(self.unit_price.unwrap_or(0), currency)?,
            discount_amount: discount,
            tax_amount: tax,
            total_amount: gross - discount,
        })
    }
}

impl Purchase {
    /// The purchase's id: `purchaseUUID1` (a UUID), else `purchaseUUID`.
    pub(super) fn id(&self) -> Option<String> {
        json::non_empty(self.purchase_uuid1.clone())
            .or_else(|| json::non_empty(self.purchase_uuid.clone()))
    }

    /// On a refund purchase, the id of the purchase it refunds
    /// (`refundsPurchaseUUID1`, the form `GET /purchase/v2/{uuid}` takes).
    pub(super) fn refunds(&self) -> Option<String> {
        json::non_empty(self.refunds_purchase.clone())
    }

    /// What this refund purchase gave back, positive, in exact money.
    pub(super) fn refunded_amount(&self) -> Result<Money, Unreadable> {
        let currency = self.currency.clone().unwrap_or_default();
        minor(self.amount.unwrap_or(0).abs(), &currency)
    }

    /// Our order, given what its refund purchases gave back (`None` when
    /// none of them was found); a purchase without an id or a readable
    /// timestamp is refused.
    pub(super) fn into_record(self, refunded: Option<Money>) -> Result<Order, Unreadable> {
        let id = self.id().ok_or_else(|| {
            Unreadable::field("purchaseUUID1", "is missing, and so is purchaseUUID")
        })?;
        let created = json::timestamp(self.timestamp.as_deref())
            .ok_or_else(|| Unreadable::field("timestamp", "is missing or not a date-time"))?;
        let currency = json::non_empty(self.currency).unwrap_or_default();
        let total = minor(self.amount.unwrap_or(0), &currency)?;
        // Refunded with no refund purchase to be read: all of it, as the flag says.
        let refunded = match (self.refunded, refunded) {
            (Some(true), None) => total,
            (_, found) => found.unwrap_or_default(),
        };
        let status = order_status(self.refunded, total, refunded);
        let mut sub_total = Money(0);
        for product in &self.products {
            sub_total = sub_total + product.gross(&currency)?;
        }
        // Row discounts and purchase-level discounts together: what the
        // products cost before them less what was paid.
        let discount = if sub_total > total {
            sub_total - total
        } else {
            Money(0)
        };
        let line_items = self
            .products
            .into_iter()
            .map(|product| product.into_line(&currency))
            .collect::<Result<Vec<_>, _>>()?;
        Ok(Order {
            order_number: self
                .global_purchase_number
                .or(self.purchase_number)
                .map(|number| number.to_string()),
            // Zettle purchases name the merchant's staff user, not a customer.
            customer_ref: None,
            created_date: created,
            // A purchase is a completed receipt: closed when it was taken.
            closed_date: Some(created),
            sub_total,
            total_tax_amount: minor(self.vat_amount.unwrap_or(0), &currency)?,
            total_discount: discount,
            total_amount: total,
            total_refunded: refunded,
            status,
            line_items,
            source_modified_date: None,
            currency,
            order_id: id,
        })
    }
}

/// What each refund purchase at hand gave back (or why it cannot be
/// read), by the refund's id.
pub(super) fn refunds_by_original<'a>(
    refunds: impl IntoIterator<Item = &'a Purchase>,
) -> HashMap<String, Result<Money, Unreadable>> {
    refunds
        .into_iter()
        .filter_map(|refund| Some((refund.id()?, refund.refunded_amount())))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn minor_units_follow_the_currencys_decimals() {
        assert_eq!(minor(5000, "SEK").ok(), Some(Money(50_0000)));
        assert_eq!(minor(500, "ISK").ok(), Some(Money(500_0000)));
        assert_eq!(minor(5120, "KWD").ok(), Some(Money(5_1200)));
        assert!(minor(i64::MAX, "EUR").is_err());
    }

    #[test]
    fn refunds_decide_the_status() {
        let total = Money(170_0000);
        assert_eq!(
            order_status(Some(false), total, Money(0)),
            OrderStatus::Completed
        );
        assert_eq!(
            order_status(Some(true), total, Money(35_0000)),
            OrderStatus::PartiallyRefunded
        );
        assert_eq!(
            order_status(Some(true), total, total),
            OrderStatus::Refunded
        );
        assert_eq!(order_status(None, total, Money(0)), OrderStatus::Unknown);
    }

    #[test]
    fn line_arithmetic_is_exact_and_rounds_half_away_from_zero() {
        assert_eq!(times(19_9900, 5000).ok(), Some(Money(9_9950)));
        assert_eq!(times(1_0000, -3_0000).ok(), Some(Money(-3_0000)));
        assert_eq!(vat(6429, Money(12_0000)), 771);
        assert_eq!(vat(2240, Money(25_0000)), 560);
        assert_eq!(vat(-3125, Money(12_0000)), -375);
    }
}
