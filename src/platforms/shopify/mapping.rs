//! Shopify's GraphQL answers and how they become our records: the answer's
//! `errors` (throttling, denied access) in words, one order status from
//! Shopify's cancellation, closing, financial and fulfilment states, money
//! from each `MoneyBag`'s `shopMoney` as exact decimals, and customers.

use std::time::Duration;

use serde::Deserialize;

use crate::data::customers::{Customer, CustomerStatus};
use crate::data::invoices::CustomerRef;
use crate::data::money::{Money, Quantity};
use crate::data::orders::{Order, OrderLineItem, OrderStatus};
use crate::platforms::connector::ConnectorError;
use crate::platforms::kit::http::scrub;
use crate::platforms::kit::json::{self, Amount};
use crate::platforms::kit::records::{Each, Keyed, Unreadable};
use crate::platforms::kit::status::find;

/// `displayFinancialStatus` words that decide the status on their own,
/// whatever the fulfilment (`PAID` and `AUTHORIZED` depend on it:
/// [`order_status`]).
const FINANCIAL_STATUSES: &[(&str, OrderStatus)] = &[
    ("PENDING", OrderStatus::Pending),
    // Part of the money is still owed: not yet paid.
    ("PARTIALLY_PAID", OrderStatus::Pending),
    ("REFUNDED", OrderStatus::Refunded),
    ("PARTIALLY_REFUNDED", OrderStatus::PartiallyRefunded),
    // The authorization was voided, or expired uncaptured: no sale.
    ("VOIDED", OrderStatus::Cancelled),
    ("EXPIRED", OrderStatus::Cancelled),
];

/// `displayFulfillmentStatus` of a paid (or authorized) order that is not closed.
const FULFILMENT_STATUSES: &[(&str, OrderStatus)] = &[
    ("FULFILLED", OrderStatus::Completed),
    ("FULFILLMENT_NOT_REQUIRED", OrderStatus::Completed),
    ("UNFULFILLED", OrderStatus::Open),
    ("PARTIALLY_FULFILLED", OrderStatus::Open),
    ("IN_PROGRESS", OrderStatus::Open),
    ("ON_HOLD", OrderStatus::Open),
    ("SCHEDULED", OrderStatus::Open),
    ("REQUEST_DECLINED", OrderStatus::Open),
    // Deprecated words older API versions still answer.
    ("OPEN", OrderStatus::Open),
    ("PENDING_FULFILLMENT", OrderStatus::Open),
    ("RESTOCKED", OrderStatus::Open),
];

/// Our status for a Shopify order: a cancellation first, then the
/// financial status, then (for a paid or authorized order) closing or the
/// fulfilment.
pub(super) fn order_status(
    cancelled: bool,
    closed: bool,
    financial: Option<&str>,
    fulfilment: Option<&str>,
) -> OrderStatus {
    if cancelled {
        return OrderStatus::Cancelled;
    }
    match financial {
        Some("PAID" | "AUTHORIZED") if closed => OrderStatus::Completed,
        Some("PAID" | "AUTHORIZED") => fulfilment
            .and_then(|word| find(FULFILMENT_STATUSES, word))
            .unwrap_or(OrderStatus::Unknown),
        Some(word) => find(FINANCIAL_STATUSES, word).unwrap_or(OrderStatus::Unknown),
        None => OrderStatus::Unknown,
    }
}

/// A GraphQL answer: `data`, and `errors` when something failed.
#[derive(Deserialize)]
pub(super) struct Answer<T> {
    data: Option<T>,
    #[serde(default)]
    errors: Vec<GraphqlError>,
    extensions: Option<AnswerExtensions>,
}

/// One entry of `errors`.
#[derive(Deserialize)]
struct GraphqlError {
    message: Option<String>,
    extensions: Option<ErrorExtensions>,
}

#[derive(Deserialize)]
struct ErrorExtensions {
    code: Option<String>,
}

/// The answer's `extensions`: what the query cost and what is left.
#[derive(Deserialize)]
struct AnswerExtensions {
    cost: Option<Cost>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Cost {
    requested_query_cost: Option<f64>,
    throttle_status: Option<ThrottleStatus>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct ThrottleStatus {
    currently_available: Option<f64>,
    restore_rate: Option<f64>,
}

/// What an answer holds.
pub(super) enum Outcome<T> {
    /// The data asked for.
    Data(T),
    /// Shopify throttled the query: ask again after this long.
    Throttled(Duration, String),
}

/// The wait when Shopify throttles without saying what is left.
const DEFAULT_THROTTLE_WAIT: Duration = Duration::from_secs(1);

/// Error codes that say the token may not read this (a missing scope).
const DENIED: &[&str] = &["ACCESS_DENIED", "FORBIDDEN", "UNAUTHORIZED"];

impl<T> Answer<T> {
    /// The `data` of an answer without errors; a throttled answer's wait;
    /// `errors` in words otherwise (`what` was asked for; `token` is
    /// scrubbed from Shopify's messages).
    pub(super) fn outcome(self, what: &str, token: &str) -> Result<Outcome<T>, ConnectorError> {
        if self.errors.is_empty() {
            return self.data.map(Outcome::Data).ok_or_else(|| {
                ConnectorError::Failed(format!(
                    "Shopify answered {what} without data; the previous data is kept"
                ))
            });
        }
        let code = |error: &GraphqlError| {
            error
                .extensions
                .as_ref()
                .and_then(|extensions| extensions.code.clone())
                .unwrap_or_default()
        };
        let described: Vec<String> = self
            .errors
            .iter()
            .map(|error| {
                let message = scrub(error.message.as_deref().unwrap_or("no message"), &[token]);
                match code(error) {
                    code if code.is_empty() => message,
                    code => format!("{message} ({code})"),
                }
            })
            .collect();
        let message = format!(
            "Shopify answered {what} with errors: {}",
            described.join("; ")
        );
        let codes: Vec<String> = self.errors.iter().map(code).collect();
        if codes.iter().any(|code| code == "THROTTLED") {
            let wait = self
                .extensions
                .and_then(|extensions| extensions.cost)
                .and_then(|cost| cost.wait())
                .unwrap_or(DEFAULT_THROTTLE_WAIT);
            Ok(Outcome::Throttled(wait, message))
        } else if codes.iter().any(|code| DENIED.contains(&code.as_str())) {
            Err(ConnectorError::Permissions(message))
        } else {
            Err(ConnectorError::Failed(format!(
                "{message}; the previous data is kept"
            )))
        }
    }
}

impl Cost {
    /// Until the bucket holds the query's cost again: the points missing
    /// over the restore rate (points per second), in whole milliseconds.
    fn wait(&self) -> Option<Duration> {
        let requested = self.requested_query_cost?;
        let status = self.throttle_status.as_ref()?;
        let rate = status.restore_rate.filter(|rate| *rate > 0.0)?;
        let missing = (requested - status.currently_available.unwrap_or(0.0)).max(0.0);
        let millis = (missing / rate * 1000.0).ceil();
        // Bounded so the conversion cannot overflow; the caller bounds it further.
        Some(Duration::from_millis(millis.clamp(0.0, 3_600_000.0) as u64))
    }
}

/// A cursor-paged GraphQL connection: `nodes` (`L`: the records read one
/// by one, or a `Vec` of an order's lines) and `pageInfo`.
#[derive(Deserialize)]
#[serde(
    rename_all = "camelCase",
    bound = "L: serde::de::DeserializeOwned + Default"
)]
pub(super) struct Connection<L> {
    #[serde(default)]
    pub(super) nodes: L,
    pub(super) page_info: Option<PageInfo>,
}

/// Whether there is a next page, and the cursor to ask for it with.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
pub(super) struct PageInfo {
    #[serde(default)]
    pub(super) has_next_page: bool,
    pub(super) end_cursor: Option<String>,
}

impl<L> Connection<L> {
    /// The cursor of the next page: `endCursor` while `hasNextPage`.
    pub(super) fn next(&self) -> Option<String> {
        self.page_info
            .as_ref()
            .filter(|info| info.has_next_page)
            .and_then(|info| json::non_empty(info.end_cursor.clone()))
    }
}

impl Keyed for ShopifyOrder {
    const ID: &'static str = "/id";
}

impl Keyed for ShopifyCustomer {
    const ID: &'static str = "/id";
}

/// `data` of the orders query.
#[derive(Deserialize)]
pub(super) struct OrdersData {
    pub(super) orders: Connection<Each<ShopifyOrder>>,
}

/// `data` of the customers query.
#[derive(Deserialize)]
pub(super) struct CustomersData {
    pub(super) customers: Connection<Each<ShopifyCustomer>>,
}

/// `data` of the verification query.
#[derive(Deserialize)]
pub(super) struct ShopData {
    pub(super) shop: Option<Shop>,
}

/// The shop, as the verification query asks for it.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
pub(super) struct Shop {
    pub(super) myshopify_domain: Option<String>,
}

/// A `MoneyBag`: the amount in the shop's and the customer's currencies.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
pub(super) struct MoneyBag {
    shop_money: MoneyV2,
}

/// A `MoneyV2`: a decimal string and its currency.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct MoneyV2 {
    amount: Amount,
    currency_code: Option<String>,
}

/// The shop-currency amount of a `MoneyBag`; zero when absent.
fn shop_money(bag: Option<&MoneyBag>) -> Money {
    bag.map(|bag| bag.shop_money.amount.money())
        .unwrap_or_default()
}

fn sum(amounts: impl IntoIterator<Item = Money>) -> Money {
    amounts
        .into_iter()
        .fold(Money(0), |total, amount| total + amount)
}

/// An order as the orders query asks for it.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
pub(super) struct ShopifyOrder {
    id: String,
    name: Option<String>,
    created_at: Option<String>,
    updated_at: Option<String>,
    closed_at: Option<String>,
    cancelled_at: Option<String>,
    currency_code: Option<String>,
    display_financial_status: Option<String>,
    display_fulfillment_status: Option<String>,
    customer: Option<OrderCustomer>,
    total_tax_set: Option<MoneyBag>,
    total_discounts_set: Option<MoneyBag>,
    total_price_set: Option<MoneyBag>,
    total_refunded_set: Option<MoneyBag>,
    line_items: Option<Connection<Vec<ShopifyLineItem>>>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct OrderCustomer {
    id: Option<String>,
    display_name: Option<String>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct ShopifyLineItem {
    id: Option<String>,
    name: Option<String>,
    sku: Option<String>,
    quantity: Option<i64>,
    original_unit_price_set: Option<MoneyBag>,
    original_total_set: Option<MoneyBag>,
    discounted_total_set: Option<MoneyBag>,
    #[serde(default)]
    tax_lines: Vec<TaxLine>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct TaxLine {
    price_set: Option<MoneyBag>,
}

impl ShopifyLineItem {
    /// The line's price for all its units before discounts.
    fn original_total(&self) -> Money {
        shop_money(self.original_total_set.as_ref())
    }

    fn into_line(self) -> OrderLineItem {
        let original = self.original_total();
        // `discountedTotalSet` is the line after its own discounts (not the
        // order's); without it, the line had none.
        let discounted = self
            .discounted_total_set
            .as_ref()
            .map(|bag| shop_money(Some(bag)))
            .unwrap_or(original);
        OrderLineItem {
            line_id: json::non_empty(self.id),
            description: self.name.unwrap_or_default(),
            sku: json::non_empty(self.sku),
            quantity: Quantity::units(self.quantity.unwrap_or(0)),
            unit_amount: shop_money(self.original_unit_price_set.as_ref()),
            discount_amount: Money((original.0 - discounted.0).max(0)),
            tax_amount: sum(self
                .tax_lines
                .iter()
                .map(|tax| shop_money(tax.price_set.as_ref()))),
            total_amount: discounted,
        }
    }
}

impl ShopifyOrder {
    /// Our order; an order without a readable creation date cannot be read.
    pub(super) fn into_record(self) -> Result<Order, Unreadable> {
        let created = json::timestamp(self.created_at.as_deref())
            .ok_or_else(|| Unreadable::field("createdAt", "is missing or not a date-time"))?;
        let cancelled = json::timestamp(self.cancelled_at.as_deref());
        let closed = json::timestamp(self.closed_at.as_deref());
        let status = order_status(
            cancelled.is_some(),
            closed.is_some(),
            self.display_financial_status.as_deref(),
            self.display_fulfillment_status.as_deref(),
        );
        let total = self.total_price_set.as_ref();
        let currency = total
            .and_then(|bag| bag.shop_money.currency_code.clone())
            .or(self.currency_code)
            .unwrap_or_default();
        let lines: Vec<ShopifyLineItem> = self
            .line_items
            .map(|connection| connection.nodes)
            .unwrap_or_default();
        Ok(Order {
            order_number: json::non_empty(self.name),
            customer_ref: self.customer.and_then(|customer| {
                CustomerRef::to(json::non_empty(customer.id), customer.display_name)
            }),
            created_date: created,
            closed_date: if status == OrderStatus::Cancelled {
                cancelled.or(closed)
            } else {
                closed
            },
            currency,
            sub_total: sum(lines.iter().map(ShopifyLineItem::original_total)),
            total_tax_amount: shop_money(self.total_tax_set.as_ref()),
            total_discount: shop_money(self.total_discounts_set.as_ref()),
            total_amount: shop_money(total),
            total_refunded: shop_money(self.total_refunded_set.as_ref()),
            status,
            line_items: lines.into_iter().map(ShopifyLineItem::into_line).collect(),
            source_modified_date: json::timestamp(self.updated_at.as_deref()),
            order_id: self.id,
        })
    }
}

/// A customer as the customers query asks for it.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
pub(super) struct ShopifyCustomer {
    id: String,
    display_name: Option<String>,
    first_name: Option<String>,
    last_name: Option<String>,
    default_email_address: Option<EmailAddress>,
    default_phone_number: Option<PhoneNumber>,
    updated_at: Option<String>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct EmailAddress {
    email_address: Option<String>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct PhoneNumber {
    phone_number: Option<String>,
}

impl ShopifyCustomer {
    /// Our customer. Shopify customers are never archived (their `state`
    /// is about an online account, not about being in use) and have no
    /// currency of their own.
    pub(super) fn into_record(self) -> Customer {
        let email = self
            .default_email_address
            .and_then(|email| json::non_empty(email.email_address));
        let full_name = [self.first_name, self.last_name]
            .into_iter()
            .filter_map(json::non_empty)
            .collect::<Vec<_>>()
            .join(" ");
        let name = json::non_empty(self.display_name)
            .or_else(|| json::non_empty(Some(full_name)))
            .or_else(|| email.clone())
            .unwrap_or_else(|| self.id.clone());
        Customer {
            customer_name: name,
            email_address: email,
            phone: self
                .default_phone_number
                .and_then(|phone| json::non_empty(phone.phone_number)),
            default_currency: None,
            status: CustomerStatus::Active,
            source_modified_date: json::timestamp(self.updated_at.as_deref()),
            customer_id: self.id,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_cancellation_wins_then_the_financial_status_then_closing_or_fulfilment() {
        let status = order_status;
        assert_eq!(
            status(true, true, Some("PAID"), Some("FULFILLED")),
            OrderStatus::Cancelled
        );
        assert_eq!(
            status(false, false, Some("PAID"), Some("UNFULFILLED")),
            OrderStatus::Open
        );
        assert_eq!(
            status(false, true, Some("PAID"), Some("UNFULFILLED")),
            OrderStatus::Completed
        );
        assert_eq!(
            status(false, false, Some("AUTHORIZED"), Some("FULFILLED")),
            OrderStatus::Completed
        );
        assert_eq!(
            status(false, true, Some("REFUNDED"), Some("FULFILLED")),
            OrderStatus::Refunded
        );
        assert_eq!(
            status(false, false, Some("VOIDED"), None),
            OrderStatus::Cancelled
        );
        assert_eq!(
            status(false, false, Some("PAID"), Some("SOMETHING_NEW")),
            OrderStatus::Unknown
        );
        assert_eq!(status(false, false, None, None), OrderStatus::Unknown);
    }

    #[test]
    fn a_throttled_answer_waits_for_the_missing_points() {
        let answer: Answer<()> = serde_json::from_str(
            r#"{"errors":[{"message":"Throttled","extensions":{"code":"THROTTLED","documentation":"https://shopify.dev/api/usage/rate-limits"}}],
                "extensions":{"cost":{"requestedQueryCost":752,"actualQueryCost":null,
                "throttleStatus":{"maximumAvailable":2000.0,"currentlyAvailable":2,"restoreRate":100.0}}}}"#,
        )
        .expect("parses");
        match answer.outcome("a page of orders", "shpat_1") {
            Ok(Outcome::Throttled(wait, message)) => {
                assert_eq!(wait, Duration::from_millis(7500));
                assert!(message.contains("Throttled (THROTTLED)"), "{message}");
            }
            _ => panic!("throttled"),
        }
        let denied: Answer<()> = serde_json::from_str(
            r#"{"errors":[{"message":"Access denied for orders field. Token shpat_1","extensions":{"code":"ACCESS_DENIED"}}]}"#,
        )
        .expect("parses");
        match denied.outcome("a page of orders", "shpat_1") {
            Err(ConnectorError::Permissions(message)) => {
                assert!(!message.contains("shpat_1"), "{message}")
            }
            _ => panic!("denied"),
        }
    }
}
