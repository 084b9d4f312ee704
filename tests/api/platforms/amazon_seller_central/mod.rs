//! Amazon Seller Central: orders over several `NextToken` pages (each
//! order's items over pages of their own) in the seller's participating
//! marketplaces, with every `OrderStatus`, read back through the orders
//! list; the token in `x-amz-access-token`; Login with Amazon refreshes
//! (client credentials in the form, the refresh token kept) before expiry
//! and on a 401, `invalid_grant`, 429 with `Retry-After`, a 500, a
//! malformed page, data types Amazon lacks, and verification at migration.
//!
//! The scenarios every platform shares (`super::scenarios`) run from its
//! `CASE`; the tests here are its own.

use std::sync::Arc;

use serde_json::{Value, json};
use uuid::Uuid;

use client::types::{PullStatus, QueueDataTypeDataType};

use super::fake::{Answer, Call, Fake, Scheme, fixture};
use super::scenarios::changes::{Changed, changes_scenario};
use super::scenarios::{
    Case, Cut, Errors, Pages, Refresh, Refused, Synced, Verification, connected as connected_as,
    platform_scenarios, records,
};
use super::{latest, options_for, sync};
use crate::helpers::{TestApp, backends, json};

const SELLER: &str = "A3TH9S8BH6GOGM";
const ACCESS: &str = "Atza|amazon-access-token-0001";
const REFRESH: &str = "Atzr|amazon-refresh-token-0001";
const FIRST: &str = "902-3159896-1390916";
const PENDING: &str = "902-3159896-1390920";
const PENDING_AVAILABILITY: &str = "902-3159896-1390921";

/// Serves the Amazon fixtures: the seller's marketplaces, three pages of
/// orders by `NextToken` (only for its two participating marketplaces),
/// and each order's items (the first order's over two pages).
fn router() -> super::fake::Router {
    Arc::new(|call: &Call| {
        let path = call.path.as_str();
        if path == "/sellers/v1/marketplaceParticipations" {
            return Answer::json(
                200,
                fixture("amazon_seller_central/fixtures/marketplace-participations.json"),
            );
        }
        if path == "/orders/v0/orders" {
            if call.query.get("MarketplaceIds").map(String::as_str)
                != Some("ATVPDKIKX0DER,A2EUQ1WTGCTBG2")
                || !call.query.contains_key("CreatedAfter")
            {
                return Answer::json(
                    400,
                    fixture("amazon_seller_central/fixtures/invalid-input.json"),
                );
            }
            let page = match call.query.get("NextToken").map(String::as_str) {
                None => "1",
                Some("2YgYW55IGNhcm5hbCBwbGVhc3VyZS1") => "2",
                Some("2YgYW55IGNhcm5hbCBwbGVhc3VyZS2") => "3",
                Some(_) => {
                    return Answer::json(
                        400,
                        fixture("amazon_seller_central/fixtures/invalid-input.json"),
                    );
                }
            };
            return Answer::json(
                200,
                fixture(&format!(
                    "amazon_seller_central/fixtures/orders-{page}.json"
                )),
            );
        }
        if let Some(order_id) = path
            .strip_prefix("/orders/v0/orders/")
            .and_then(|rest| rest.strip_suffix("/orderItems"))
        {
            let file = match (order_id, call.query.get("NextToken").map(String::as_str)) {
                (FIRST, None) => "items-first-1",
                (FIRST, Some("items-page-2")) => "items-first-2",
                (PENDING | PENDING_AVAILABILITY, None) => "items-unpriced",
                (_, None) => "items",
                _ => {
                    return Answer::json(
                        400,
                        fixture("amazon_seller_central/fixtures/invalid-input.json"),
                    );
                }
            };
            let body = fixture(&format!("amazon_seller_central/fixtures/{file}.json"))
                .replace("{orderId}", order_id);
            return Answer::json(200, body);
        }
        Answer::json(
            404,
            "{\"errors\":[{\"code\":\"NotFound\",\"message\":\"Resource not found\"}]}",
        )
    })
}

async fn fake() -> Fake {
    let fake = Fake::start(
        "amazon-seller-central",
        Scheme::Header("x-amz-access-token"),
        ACCESS,
        REFRESH,
        fixture("amazon_seller_central/fixtures/unauthorized.json"),
        router(),
    )
    .await;
    // Login with Amazon: client credentials in the form; the refresh token
    // is kept. A rejected (or expired) access token gets 403, as the Selling
    // Partner API documents it (ordersV0.json: "Expired Token").
    fake.with(|inner| {
        inner.client_in_body = true;
        inner.rotate = false;
        inner.rejected_status = 403;
    });
    fake
}

fn body(expires_in: i64) -> Value {
    json!({
        "sellingPartnerId": SELLER,
        "region": "na",
        "accessToken": ACCESS,
        "refreshToken": REFRESH,
        "expiresIn": expires_in
    })
}

/// A company with an authorized Amazon connection.
async fn connected(app: &TestApp, expires_in: i64) -> (Uuid, Uuid) {
    connected_as(app, &CASE, &(CASE.authorization)(expires_in)).await
}

async fn orders_page(app: &TestApp, company_id: Uuid, query: &str) -> Value {
    json(
        app.get(&format!("/companies/{company_id}/data/orders?{query}"))
            .await,
    )
    .await
}

async fn orders(app: &TestApp, company_id: Uuid) -> Vec<Value> {
    records(app, company_id, "orders").await
}

fn by_id<'a>(orders: &'a [Value], id: &str) -> &'a Value {
    orders
        .iter()
        .find(|order| order["orderId"] == id)
        .unwrap_or_else(|| panic!("order {id} synced"))
}

/// Calls for orders (not items or marketplaces).
fn order_calls(fake: &Fake) -> Vec<Call> {
    fake.calls()
        .into_iter()
        .filter(|call| call.path == "/orders/v0/orders")
        .collect()
}

/// Amazon Seller Central in the shared scenarios.
static CASE: Case = Case {
    key: "amazon-seller-central",
    name: "Amazon Seller Central",
    fake: || Box::pin(fake()),
    page_size: Some(4),
    authorization: body,
    access: ACCESS,
    refresh: REFRESH,
    lasting: 3600,
    kept: &["sellingPartnerId", "region"],
    sync: Synced {
        data_type: "orders",
        records: 9,
        // The marketplaces, three pages of orders and each order's items
        // (the first order's over two pages).
        calls: 14,
    },
    syncs: &["orders"],
    errors: Errors {
        rate_limited: r#"{"errors":[{"code":"QuotaExceeded","message":"You exceeded your quota for the requested resource."}]}"#,
        rate_limit_headers: &[],
        rate_limited_says: "",
        server_error: r#"{"errors":[{"code":"InternalFailure","message":"We encountered an internal error. Please try again."}]}"#,
        unavailable: (
            500,
            r#"{"errors":[{"code":"InternalFailure","message":"We encountered an internal error. Please try again."}]}"#,
        ),
        unavailable_says: "Amazon answered 500 Internal Server Error: We encountered an internal error",
        refused: Refused::AsARejectedToken(
            "the Selling Partner API answers 403 both to an expired token and to a role the application lacks (NOTES.md): a 403 is refreshed, and a 403 again deauthorizes",
        ),
    },
    pages: Pages {
        prelude: |_| {
            vec![Answer::json(
                200,
                fixture("amazon_seller_central/fixtures/marketplace-participations.json"),
            )]
        },
        first: |_| Answer::json(200, fixture("amazon_seller_central/fixtures/orders-1.json")),
        cut: Cut::FirstPage,
        truncated: r#"{"payload": {"Orders": [{"AmazonOrderId": "x", "OrderTotal": {"Amount": "12.5"#,
        truncated_says: "Amazon answered a page of orders that tributary cannot read",
        records_at: "/payload/Orders",
        id_at: "/AmazonOrderId",
        field: "/PurchaseDate",
    },
    refresh_with: Some(Refresh {
        // The marketplaces and the first page pass; then the token stops working.
        rejected_after: 3,
        ..Refresh::KEEPING
    }),
    unrefreshable: None,
    verification: Verification {
        rejected_says: &["Access to requested resource is denied"],
        another_account: None,
        verified_by: |calls| {
            calls
                .last()
                .is_some_and(|call| call.path == "/sellers/v1/marketplaceParticipations")
        },
    },
    unknown_account: None,
};

platform_scenarios!(CASE, refreshes, refreshes_before_expiry);

#[tokio::test]
async fn amazon_orders_sync_over_every_page_with_every_status_and_read_back_exactly() {
    for backend in backends() {
        let fake = fake().await;
        let app = TestApp::spawn_with(backend, options_for(&fake, Some(4), 1)).await;
        let (company_id, connection_id) = connected(&app, 3600).await;
        let operations = sync(&app, company_id, QueueDataTypeDataType::Orders).await;
        let operation = latest(&operations, "orders");
        assert_eq!(operation.status, PullStatus::Complete, "{operation:?}");

        let orders = orders(&app, company_id).await;
        assert_eq!(orders.len(), 9, "{orders:#?}");
        for (suffix, status) in [
            ("16", "Open"),
            ("17", "Open"),
            ("18", "Completed"),
            ("19", "Completed"),
            ("20", "Pending"),
            ("21", "Pending"),
            ("22", "Cancelled"),
            ("23", "Cancelled"),
            ("24", "Unknown"),
        ] {
            let id = format!("902-3159896-13909{suffix}");
            assert_eq!(by_id(&orders, &id)["status"], status, "{id}");
        }
        assert_eq!(orders[0]["orderId"], "902-3159896-1390924", "newest first");
        let first = by_id(&orders, FIRST);
        assert_eq!(first["orderNumber"], "MAPLE-1001");
        assert_eq!(first["connectionId"], connection_id.to_string());
        assert_eq!(first["customerRef"], Value::Null);
        assert_eq!(first["currency"], "USD");
        assert_eq!(first["subTotal"], "1049.97");
        assert_eq!(first["totalTaxAmount"], "84.00");
        assert_eq!(first["totalDiscount"], "8.56");
        assert_eq!(first["totalAmount"], "1127.81");
        assert_eq!(first["totalRefunded"], "0.00");
        assert_eq!(first["createdDate"], "2026-10-01T10:05:00.000000Z");
        assert_eq!(first["sourceModifiedDate"], "2026-10-01T14:05:00.000000Z");
        assert_eq!(first["closedDate"], Value::Null);
        // Both pages of its items.
        let lines = first["lineItems"].as_array().expect("lines");
        assert_eq!(lines.len(), 2);
        assert_eq!(lines[0]["sku"], "VASE-L");
        assert_eq!(lines[0]["quantity"], "3");
        assert_eq!(lines[0]["unitAmount"], "299.99");
        assert_eq!(lines[0]["discountAmount"], "8.56");
        assert_eq!(lines[0]["taxAmount"], "72.00");
        assert_eq!(lines[0]["totalAmount"], "963.41");
        assert_eq!(lines[1]["description"], "Gift wrap");
        assert_eq!(lines[1]["sku"], Value::Null);
        // The order number is Amazon's own without a seller's.
        assert_eq!(
            by_id(&orders, "902-3159896-1390918")["orderNumber"],
            "902-3159896-1390918"
        );
        assert_eq!(
            by_id(&orders, "902-3159896-1390918")["closedDate"],
            "2026-10-03T14:00:00.000000Z"
        );
        // A pending order has no total yet: its marketplace's currency.
        let pending = by_id(&orders, PENDING);
        assert_eq!(pending["currency"], "CAD");
        assert_eq!(pending["totalAmount"], "0.00");

        let completed = orders_page(&app, company_id, "status=Completed&pageSize=1").await;
        assert_eq!(completed["totalResults"], 2, "{completed}");

        // Three pages by NextToken, every one for the participating marketplaces.
        let calls = order_calls(&fake);
        assert_eq!(calls.len(), 3);
        assert_eq!(calls[0].query.get("NextToken"), None);
        assert_eq!(
            calls[0].query.get("MaxResultsPerPage").map(String::as_str),
            Some("4")
        );
        assert_eq!(
            calls[2].query.get("NextToken").map(String::as_str),
            Some("2YgYW55IGNhcm5hbCBwbGVhc3VyZS2")
        );
        let all = fake.calls();
        assert!(all.iter().all(|call| call.token == ACCESS));
        assert!(
            all.iter()
                .all(|call| !call.headers.contains_key("authorization"))
        );
        assert_eq!(
            fake.token_calls(),
            0,
            "a token valid for an hour is not refreshed"
        );
    }
}

/// Amazon as it answers `LastUpdatedAfter` (and refuses it with
/// `CreatedAfter`, as `getOrders` says): the orders updated since (the first
/// shipped since the first sync, one new), on one page; every answer dated
/// `PLATFORM_DATE` by the scenario.
async fn fake_with_changes() -> Fake {
    let whole = router();
    let fake = Fake::start(
        "amazon-seller-central",
        Scheme::Header("x-amz-access-token"),
        ACCESS,
        REFRESH,
        fixture("amazon_seller_central/fixtures/unauthorized.json"),
        Arc::new(move |call: &Call| {
            let changes = call.query.contains_key("LastUpdatedAfter");
            if changes && call.path == "/orders/v0/orders" {
                if call.query.contains_key("CreatedAfter") {
                    Answer::json(
                        400,
                        fixture("amazon_seller_central/fixtures/invalid-input.json"),
                    )
                } else {
                    Answer::json(
                        200,
                        fixture("amazon_seller_central/fixtures/orders-changed.json"),
                    )
                }
            } else {
                whole(call)
            }
        }),
    )
    .await;
    fake.with(|inner| {
        inner.client_in_body = true;
        inner.rotate = false;
        inner.rejected_status = 403;
    });
    fake
}

/// Amazon asked for what changed, in the shared scenario (`scenarios::changes`).
/// A resync costs two calls at least: the marketplaces the seller takes
/// part in (`getMarketplaceParticipations`, the `MarketplaceIds` every
/// orders call requires) are asked again each sync, as the connector keeps
/// nothing between syncs.
static CHANGES: Changed = Changed {
    data_type: "orders",
    fake: || Box::pin(fake_with_changes()),
    filter: |call| call.query.get("LastUpdatedAfter").cloned(),
    since: "2026-11-27T08:55:00Z",
    calls: 1,
    changed: 1,
    added: 1,
    quiet: |_| {
        Answer::json(
            200,
            r#"{"payload":{"LastUpdatedBefore":"2026-11-27T08:58:00Z","Orders":[]}}"#,
        )
    },
    quiet_calls: 2,
};

changes_scenario!(CASE, CHANGES);
