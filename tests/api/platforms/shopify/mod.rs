//! Shopify: orders and customers over several GraphQL cursor pages with
//! every financial and fulfilment state, read back through the lists;
//! product variants as items over two pages, then only those updated since;
//! refresh of an expiring offline token before expiry and on a 401 (Shopify
//! rotates its refresh token), a legacy token that is never refreshed,
//! `invalid_grant`, a THROTTLED answer, 429 with `Retry-After`, a 500, a
//! malformed page, the data type Shopify lacks, and verification at
//! migration.
//!
//! The scenarios every platform shares (`super::scenarios`) run from its
//! `CASE`; the tests here are its own.

use std::sync::Arc;
use std::time::Duration;

use serde_json::{Value, json};
use uuid::Uuid;

use client::types::{PullStatus, QueueDataTypeDataType};

use super::fake::{Answer, Call, Fake, Scheme, fixture};
use super::scenarios::changes::{Changed, PLATFORM_DATE, changes_scenario};
use super::scenarios::{
    Another, Case, Cut, Errors, Pages, Refresh, Refused, Synced, Unrefreshable, Verification,
    connected as connected_as, platform_scenarios, records as list,
};
use super::{latest, options_for, stored, sync};
use crate::helpers::{TestApp, backends};

pub(crate) const SHOP: &str = "maple-goods.myshopify.com";
const ACCESS: &str = "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";
const REFRESH: &str = "shprt_0a1b2c3d4e5f60718293a4b5c6d7e8f9";
/// Records per page in these tests (`first`).
const PAGE: u64 = 5;
const GRAPHQL_PATH: &str = "/admin/api/2026-10/graphql.json";

/// The GraphQL request a call carried: its query and variables.
fn request(call: &Call) -> (String, Value) {
    let body: Value = serde_json::from_str(&call.body).unwrap_or(Value::Null);
    let query = body["query"].as_str().unwrap_or_default().to_owned();
    (query, body["variables"].clone())
}

/// Serves the Shopify fixtures: three pages of orders, two of customers
/// and two of product variants by `after`, and the shop.
pub(crate) fn router() -> super::fake::Router {
    Arc::new(|call: &Call| {
        if call.path != GRAPHQL_PATH || call.method != "POST" {
            return Answer::json(404, "{\"errors\":\"Not Found\"}");
        }
        let (query, variables) = request(call);
        let after = variables["after"].as_str().unwrap_or_default().to_owned();
        if query.contains("shop {") {
            return Answer::json(200, fixture("shopify/fixtures/shop.json"));
        }
        if query.contains("orders(") {
            let page = match after.as_str() {
                "" => 1,
                "eyJsYXN0X2lkIjo1MDA1LCJsYXN0X3ZhbHVlIjo1MDA1fQ==" => 2,
                "eyJsYXN0X2lkIjo1MDEwLCJsYXN0X3ZhbHVlIjo1MDEwfQ==" => 3,
                _ => return Answer::json(200, "{\"errors\":[{\"message\":\"Invalid cursor\"}]}"),
            };
            return Answer::json(
                200,
                fixture(&format!("shopify/fixtures/orders-{page}.json")),
            );
        }
        if query.contains("productVariants(") {
            let page = if after.is_empty() { 1 } else { 2 };
            return Answer::json(
                200,
                fixture(&format!("shopify/fixtures/variants-{page}.json")),
            );
        }
        if query.contains("customers(") {
            let page = if after.is_empty() { 1 } else { 2 };
            return Answer::json(
                200,
                fixture(&format!("shopify/fixtures/customers-{page}.json")),
            );
        }
        Answer::json(200, "{\"errors\":[{\"message\":\"Unknown query\"}]}")
    })
}

pub(crate) async fn fake() -> Fake {
    let fake = Fake::start(
        "shopify",
        Scheme::Header("x-shopify-access-token"),
        ACCESS,
        REFRESH,
        fixture("shopify/fixtures/unauthorized.json"),
        router(),
    )
    .await;
    // Shopify takes the app's credentials in the form body.
    fake.with(|inner| inner.client_in_body = true);
    fake
}

/// An expiring offline token's body.
fn body(expires_in: i64) -> Value {
    json!({"shopDomain": SHOP, "accessToken": ACCESS, "refreshToken": REFRESH, "expiresIn": expires_in})
}

/// A legacy, non-expiring offline token's body.
fn legacy_body() -> Value {
    json!({"shopDomain": SHOP, "accessToken": ACCESS})
}

/// A company with an authorized Shopify connection.
async fn connected(app: &TestApp, body: &Value) -> (Uuid, Uuid) {
    connected_as(app, &CASE, body).await
}

fn by_number<'a>(orders: &'a [Value], number: &str) -> &'a Value {
    orders
        .iter()
        .find(|order| order["orderNumber"] == number)
        .unwrap_or_else(|| panic!("order {number} synced"))
}

/// Shopify in the shared scenarios: an expiring offline token refreshes and
/// rotates; a legacy token never expires and cannot be refreshed.
static CASE: Case = Case {
    key: "shopify",
    name: "Shopify",
    fake: || Box::pin(fake()),
    page_size: Some(PAGE),
    authorization: body,
    access: ACCESS,
    refresh: REFRESH,
    lasting: 3600,
    kept: &["shopDomain"],
    sync: Synced {
        data_type: "orders",
        records: 13,
        calls: 3,
    },
    syncs: &["customers", "orders", "items"],
    errors: Errors {
        rate_limited: r#"{"errors":"Exceeded 2 calls per second for api client. Reduce request rates to resume uninterrupted service."}"#,
        rate_limit_headers: &[],
        rate_limited_says: "",
        server_error: r#"{"errors":[{"message":"Internal error. Looks like something went wrong on our end."}]}"#,
        unavailable: (503, r#"{"errors":[{"message":"Service unavailable"}]}"#),
        unavailable_says: "Shopify answered 503 Service Unavailable: Service unavailable",
        refused: Refused::Scope {
            status: 200,
            body: r#"{"errors":[{"message":"Access denied for orders field. Required access: `read_orders` access scope.","extensions":{"code":"ACCESS_DENIED","documentation":"https://shopify.dev/api/usage/access-scopes"}}]}"#,
            says: "Access denied for orders field",
        },
    },
    pages: Pages {
        prelude: |_| Vec::new(),
        first: |_| Answer::json(200, fixture("shopify/fixtures/orders-1.json")),
        cut: Cut::SecondPage,
        truncated: r#"{"data": {"orders": {"nodes": [{"id": "gid://shopify/Order/1", "totalPriceSet": {"shopMoney": {"amount": "12.5"#,
        truncated_says: "Shopify answered a page of orders that tributary cannot read",
        records_at: "/data/orders/nodes",
        id_at: "/id",
        field: "/createdAt",
    },
    refresh_with: Some(Refresh::ROTATING),
    unrefreshable: Some(Unrefreshable {
        authorization: legacy_body,
        says: &["Shopify answered 401"],
    }),
    verification: Verification {
        rejected_says: &["Shopify answered 401"],
        // A working token, but for another shop.
        another_account: Some(Another {
            authorization: || {
                let mut elsewhere = legacy_body();
                elsewhere["shopDomain"] = json!("other-shop.myshopify.com");
                elsewhere
            },
            says: &["another shop"],
        }),
        verified_by: |calls| {
            calls.last().is_some_and(|call| {
                call.path == GRAPHQL_PATH && request(call).0.contains("myshopifyDomain")
            })
        },
    },
    unknown_account: None,
};

platform_scenarios!(CASE, refreshes, refreshes_before_expiry, unrefreshable);

#[tokio::test]
async fn shopify_orders_sync_over_every_cursor_page_with_every_status_and_read_back_exactly() {
    for backend in backends() {
        let fake = fake().await;
        let app = TestApp::spawn_with(backend, options_for(&fake, Some(PAGE), 1)).await;
        let (company_id, connection_id) = connected(&app, &body(3600)).await;
        let operations = sync(&app, company_id, QueueDataTypeDataType::Orders).await;
        let operation = latest(&operations, "orders");
        assert_eq!(operation.status, PullStatus::Complete, "{operation:?}");

        let orders = list(&app, company_id, "orders").await;
        assert_eq!(orders.len(), 13, "{orders:#?}");
        for (number, status) in [
            ("#1001", "Open"),
            ("#1002", "Open"),
            ("#1003", "Completed"),
            ("#1004", "Completed"),
            ("#1005", "Pending"),
            ("#1006", "Pending"),
            ("#1007", "Refunded"),
            ("#1008", "PartiallyRefunded"),
            ("#1009", "Cancelled"),
            ("#1010", "Cancelled"),
            ("#1011", "Cancelled"),
            ("#1012", "Completed"),
            ("#1013", "Unknown"),
        ] {
            assert_eq!(by_number(&orders, number)["status"], status, "{number}");
        }
        let first = by_number(&orders, "#1001");
        assert_eq!(first["orderId"], "gid://shopify/Order/5001");
        assert_eq!(first["connectionId"], connection_id.to_string());
        assert_eq!(first["currency"], "CAD");
        assert_eq!(first["subTotal"], "904.9699");
        assert_eq!(first["totalTaxAmount"], "102.51");
        assert_eq!(first["totalDiscount"], "8.56");
        assert_eq!(first["totalAmount"], "998.9199");
        assert_eq!(first["totalRefunded"], "0.00");
        assert_eq!(first["customerRef"]["id"], "gid://shopify/Customer/701");
        assert_eq!(first["customerRef"]["companyName"], "Customer 1");
        assert_eq!(first["createdDate"], "2026-10-01T09:00:00.000000Z");
        assert_eq!(first["sourceModifiedDate"], "2026-10-01T11:30:00.000000Z");
        assert_eq!(first["closedDate"], Value::Null);
        let vase = &first["lineItems"][0];
        assert_eq!(vase["lineId"], "gid://shopify/LineItem/9001");
        assert_eq!(vase["description"], "Glazed vase - Large / Blue");
        assert_eq!(vase["sku"], "VASE-L");
        assert_eq!(vase["quantity"], "3");
        assert_eq!(vase["unitAmount"], "299.99");
        assert_eq!(vase["discountAmount"], "8.56");
        assert_eq!(vase["taxAmount"], "102.51");
        assert_eq!(vase["totalAmount"], "891.41");
        let wrapping = &first["lineItems"][1];
        assert_eq!(wrapping["sku"], Value::Null);
        assert_eq!(wrapping["unitAmount"], "4.9999");
        assert_eq!(by_number(&orders, "#1005")["customerRef"], Value::Null);
        assert_eq!(
            by_number(&orders, "#1004")["closedDate"],
            "2026-10-05T08:00:00.000000Z"
        );
        assert_eq!(
            by_number(&orders, "#1009")["closedDate"],
            "2026-10-10T07:15:00.000000Z"
        );
        assert_eq!(by_number(&orders, "#1007")["totalRefunded"], "11.30");
        assert_eq!(by_number(&orders, "#1008")["totalRefunded"], "5.25");

        // Three pages by cursor: none, then each page's endCursor.
        let calls = fake.calls();
        let afters: Vec<Value> = calls
            .iter()
            .map(|call| request(call).1["after"].clone())
            .collect();
        assert_eq!(
            afters,
            [
                Value::Null,
                json!("eyJsYXN0X2lkIjo1MDA1LCJsYXN0X3ZhbHVlIjo1MDA1fQ=="),
                json!("eyJsYXN0X2lkIjo1MDEwLCJsYXN0X3ZhbHVlIjo1MDEwfQ==")
            ]
        );
        assert!(calls.iter().all(|call| request(call).1["first"] == PAGE));
        assert!(calls.iter().all(|call| call.token == ACCESS));
        assert!(
            calls
                .iter()
                .all(|call| !call.headers.contains_key("authorization")),
            "the token goes in X-Shopify-Access-Token only"
        );
        assert_eq!(
            fake.token_calls(),
            0,
            "a token valid for an hour is not refreshed"
        );
    }
}

#[tokio::test]
async fn shopify_customers_sync_over_cursor_pages() {
    for backend in backends() {
        let fake = fake().await;
        let app = TestApp::spawn_with(backend, options_for(&fake, Some(PAGE), 1)).await;
        let (company_id, connection_id) = connected(&app, &legacy_body()).await;
        // A legacy token never expires: no expiry is stored for it.
        assert_eq!(stored(&app, connection_id).await.get("expiresAt"), None);
        let operations = sync(&app, company_id, QueueDataTypeDataType::Customers).await;
        let operation = latest(&operations, "customers");
        assert_eq!(operation.status, PullStatus::Complete, "{operation:?}");
        let customers = list(&app, company_id, "customers").await;
        assert_eq!(customers.len(), 3, "{customers:#?}");
        // By name.
        let ada = &customers[0];
        assert_eq!(ada["customerId"], "gid://shopify/Customer/701");
        assert_eq!(ada["customerName"], "Ada Lovelace");
        assert_eq!(ada["emailAddress"], "ada@example.com");
        assert_eq!(ada["phone"], "+16135550101");
        assert_eq!(ada["defaultCurrency"], Value::Null);
        assert_eq!(ada["status"], "Active");
        assert_eq!(ada["sourceModifiedDate"], "2026-09-01T12:00:00.000000Z");
        // Without a display name: the first and last names, else the e-mail.
        assert_eq!(customers[1]["customerName"], "Grace Hopper");
        assert_eq!(customers[1]["phone"], Value::Null);
        assert_eq!(customers[2]["customerName"], "no-name@example.com");
        let calls = fake.calls();
        assert_eq!(calls.len(), 2);
        assert_eq!(request(&calls[1]).1["after"], "Y3VzdG9tZXJzLTI=");
    }
}

/// A 200 answer that says THROTTLED is waited out (its refill at the
/// restore rate); throttled on every attempt, the sync ends saying so and
/// the orders stay.
#[tokio::test]
async fn shopify_throttling_is_waited_out_and_reported_when_it_persists() {
    for backend in backends() {
        let fake = fake().await;
        let app = TestApp::spawn_with(backend, options_for(&fake, Some(PAGE), 1)).await;
        let (company_id, _) = connected(&app, &body(3600)).await;
        // 200 with THROTTLED: 50 points missing at 100 a second.
        fake.with(|inner| {
            inner.scripted.push_back(Answer::json(
                200,
                fixture("shopify/fixtures/throttled.json"),
            ));
        });
        let started = std::time::Instant::now();
        let operations = sync(&app, company_id, QueueDataTypeDataType::Orders).await;
        let operation = latest(&operations, "orders");
        assert_eq!(operation.status, PullStatus::Complete, "{operation:?}");
        assert!(
            started.elapsed() >= Duration::from_millis(500),
            "the throttle's refill was honoured"
        );
        assert_eq!(list(&app, company_id, "orders").await.len(), 13);
        // One throttled attempt, then three pages.
        assert_eq!(fake.calls().len(), 4);

        fake.with(|inner| {
            for _ in 0..4 {
                inner.scripted.push_back(Answer::json(
                    200,
                    fixture("shopify/fixtures/throttled.json"),
                ));
            }
        });
        let operations = sync(&app, company_id, QueueDataTypeDataType::Orders).await;
        let operation = latest(&operations, "orders");
        assert_eq!(operation.status, PullStatus::Failed);
        let message = operation.error_message.unwrap_or_default();
        assert!(message.contains("Throttled (THROTTLED)"), "{message}");
        assert_eq!(list(&app, company_id, "orders").await.len(), 13);
    }
}

/// GraphQL errors in a 200 answer fail the sync with Shopify's words, and
/// the orders stay.
#[tokio::test]
async fn a_shopify_graphql_error_fails_the_sync_and_keeps_the_previous_orders() {
    for backend in backends() {
        let fake = fake().await;
        let app = TestApp::spawn_with(backend, options_for(&fake, Some(PAGE), 1)).await;
        let (company_id, _) = connected(&app, &body(3600)).await;
        let operations = sync(&app, company_id, QueueDataTypeDataType::Orders).await;
        assert_eq!(latest(&operations, "orders").status, PullStatus::Complete);
        let before = list(&app, company_id, "orders").await;
        fake.with(|inner| {
            inner.scripted.push_back(Answer::json(
                200,
                "{\"errors\":[{\"message\":\"Field 'orderz' doesn't exist on type 'QueryRoot'\",\"locations\":[{\"line\":2,\"column\":3}],\"path\":[\"query TributaryOrders\",\"orderz\"],\"extensions\":{\"code\":\"undefinedField\",\"typeName\":\"QueryRoot\",\"fieldName\":\"orderz\"}}]}",
            ));
        });
        let operations = sync(&app, company_id, QueueDataTypeDataType::Orders).await;
        let operation = latest(&operations, "orders");
        assert_eq!(operation.status, PullStatus::Failed);
        let message = operation.error_message.unwrap_or_default();
        assert!(
            message.contains("Shopify answered a page of orders with errors: Field 'orderz' doesn't exist on type 'QueryRoot' (undefinedField)"),
            "{message}"
        );
        assert_eq!(list(&app, company_id, "orders").await, before);
    }
}

/// Shopify as it answers an orders query searching `updated_at`: the orders
/// changed since (#1001 fulfilled and closed since the first sync, #1014
/// new), on one page; every answer dated `PLATFORM_DATE` by the scenario.
async fn fake_with_changes() -> Fake {
    let whole = router();
    let fake = Fake::start(
        "shopify",
        Scheme::Header("x-shopify-access-token"),
        ACCESS,
        REFRESH,
        fixture("shopify/fixtures/unauthorized.json"),
        Arc::new(move |call: &Call| {
            let (query, variables) = request(call);
            let changes = variables["query"].is_string();
            if changes && query.contains("orders(") {
                Answer::json(200, fixture("shopify/fixtures/orders-changed.json"))
            } else {
                whole(call)
            }
        }),
    )
    .await;
    fake.with(|inner| inner.client_in_body = true);
    fake
}

/// Shopify asked for what changed, in the shared scenario (`scenarios::changes`).
static CHANGES: Changed = Changed {
    data_type: "orders",
    fake: || Box::pin(fake_with_changes()),
    filter: |call| {
        serde_json::from_str::<Value>(&call.body)
            .ok()
            .and_then(|body| body["variables"]["query"].as_str().map(str::to_owned))
    },
    since: "updated_at:>'2026-11-27T08:55:00Z'",
    calls: 1,
    changed: 1,
    added: 1,
    quiet: |_| {
        Answer::json(
            200,
            r#"{"data":{"orders":{"pageInfo":{"hasNextPage":false,"endCursor":null},"nodes":[]}}}"#,
        )
    },
    quiet_calls: 1,
};

changes_scenario!(CASE, CHANGES);

/// Every product variant is an item: named by its product (and its own
/// title unless it is the default variant), its SKU, tracked stock as
/// inventory with its quantity, the product's status (only `ARCHIVED`
/// archived), `price` the sales price and the unit cost, when set, the
/// purchase price; two pages by `after`. A second sync searches only the
/// variants updated since the first began (Shopify's own time less five
/// minutes), with no sort key (variants have no `UPDATED_AT`).
#[tokio::test]
async fn shopify_product_variants_sync_as_items_then_only_those_updated_since() {
    use super::ledger_reads::columns;
    for backend in backends() {
        let fake = fake().await;
        fake.with(|inner| inner.date = Some(PLATFORM_DATE.to_owned()));
        let app = TestApp::spawn_with(backend, options_for(&fake, Some(PAGE), 1)).await;
        let (company_id, _) = connected(&app, &body(3600)).await;
        let operations = sync(&app, company_id, QueueDataTypeDataType::Items).await;
        let operation = latest(&operations, "items");
        assert_eq!(operation.status, PullStatus::Complete, "{operation:?}");
        let items = list(&app, company_id, "items").await;
        let variant = |n: u32| format!("gid://shopify/ProductVariant/{n}");
        let row = |cells: [&str; 10]| cells.map(str::to_owned).to_vec();
        assert_eq!(
            columns(
                &items,
                &[
                    "/itemId",
                    "/code",
                    "/name",
                    "/type",
                    "/status",
                    "/sales/unitPrice",
                    "/purchases/unitPrice",
                    "/purchases/accountRef",
                    "/quantityOnHand",
                    "/sourceModifiedDate",
                ]
            ),
            [
                row([
                    &variant(9005),
                    "-",
                    "Canoe Lesson",
                    "NonInventory",
                    "Active",
                    "60.00",
                    "-",
                    "-",
                    "-",
                    "2026-10-02T15:00:00.000000Z"
                ]),
                row([
                    &variant(9003),
                    "MUG-1",
                    "Enamel Camp Mug",
                    "Inventory",
                    "Active",
                    "18.00",
                    "-",
                    "-",
                    "-2",
                    "2026-09-11T09:30:00.000000Z"
                ]),
                row([
                    &variant(9006),
                    "GC-25",
                    "Gift Card - $25",
                    "NonInventory",
                    "Active",
                    "25.00",
                    "-",
                    "-",
                    "-",
                    "2026-10-03T16:00:00.000000Z"
                ]),
                row([
                    &variant(9007),
                    "GC-50",
                    "Gift Card - $50",
                    "NonInventory",
                    "Active",
                    "50.00",
                    "-",
                    "-",
                    "-",
                    "2026-10-03T16:05:00.000000Z"
                ]),
                row([
                    &variant(9002),
                    "TEE-L",
                    "Maple Leaf Tee - Large",
                    "Inventory",
                    "Active",
                    "27.50",
                    "10.125",
                    "-",
                    "0",
                    "2026-09-10T08:00:00.000000Z"
                ]),
                row([
                    &variant(9001),
                    "TEE-S",
                    "Maple Leaf Tee - Small",
                    "Inventory",
                    "Active",
                    "25.00",
                    "9.50",
                    "-",
                    "12",
                    "2026-09-12T10:00:00.000000Z"
                ]),
                row([
                    &variant(9004),
                    "-",
                    "Maple Syrup 500 ml",
                    "NonInventory",
                    "Archived",
                    "12.99",
                    "4.00",
                    "-",
                    "-",
                    "2026-10-01T12:00:00.000000Z"
                ]),
            ]
        );
        let asked = |calls: &[Call]| -> Vec<Value> {
            calls
                .iter()
                .map(request)
                .filter(|(query, _)| query.contains("productVariants("))
                .map(|(_, variables)| variables)
                .collect()
        };
        let first = asked(&fake.calls());
        assert_eq!(
            first,
            [
                json!({"first": PAGE, "after": null}),
                json!({"first": PAGE, "after": "eyJsYXN0X2lkIjo5MDA1LCJsYXN0X3ZhbHVlIjo5MDA1fQ=="}),
            ]
        );

        let before = fake.calls().len();
        let operations = sync(&app, company_id, QueueDataTypeDataType::Items).await;
        let second = latest(&operations, "items");
        assert_eq!(second.status, PullStatus::Complete, "{second:?}");
        assert_eq!(
            second.fetch_mode,
            Some(client::types::FetchMode::Incremental)
        );
        let changed = asked(&fake.calls()[before..]);
        assert_eq!(changed.len(), 2, "{changed:?}");
        for variables in &changed {
            assert_eq!(variables["query"], "updated_at:>'2026-11-27T08:55:00Z'");
            assert_eq!(variables.get("sortKey"), None);
        }
        assert_eq!(list(&app, company_id, "items").await, items);
    }
}
