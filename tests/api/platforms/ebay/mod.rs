//! eBay: orders over several `limit`/`offset` pages with every payment,
//! fulfilment and cancellation state, read back through the orders list;
//! refresh before expiry and on a 401 (eBay keeps its refresh token),
//! `invalid_grant`, 429 with `Retry-After`, a 500, a malformed page, data
//! types eBay lacks, and verification at migration.
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

const USER: &str = "nY6MXbL0Xq2";
const ACCESS: &str = "v^1.1#i^1#ebay-access-token-0001";
const REFRESH: &str = "v^1.1#i^1#ebay-refresh-token-0001";
/// Orders per page in these tests (`limit`).
const PAGE: u64 = 4;

/// Serves the eBay fixtures: three pages of orders by `offset`.
fn router() -> super::fake::Router {
    Arc::new(|call: &Call| {
        if call.path != "/sell/fulfillment/v1/order" {
            return Answer::json(
                404,
                "{\"errors\":[{\"errorId\":2002,\"message\":\"Resource not found\"}]}",
            );
        }
        if call.query.get("limit").map(String::as_str) == Some("1") {
            return Answer::json(200, fixture("ebay/fixtures/empty.json"));
        }
        let offset = call.query.get("offset").cloned().unwrap_or_default();
        Answer::json(200, fixture(&format!("ebay/fixtures/orders-{offset}.json")))
    })
}

async fn fake() -> Fake {
    let fake = Fake::start(
        "ebay",
        Scheme::Bearer,
        ACCESS,
        REFRESH,
        fixture("ebay/fixtures/unauthorized.json"),
        router(),
    )
    .await;
    // eBay's refresh answer has no new refresh token.
    fake.with(|inner| inner.rotate = false);
    fake
}

fn body(expires_in: i64) -> Value {
    json!({"userId": USER, "accessToken": ACCESS, "refreshToken": REFRESH, "expiresIn": expires_in})
}

/// A company with an authorized eBay connection.
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

fn by_number<'a>(orders: &'a [Value], number: &str) -> &'a Value {
    orders
        .iter()
        .find(|order| order["orderNumber"] == number)
        .unwrap_or_else(|| panic!("order {number} synced"))
}

/// eBay in the shared scenarios.
static CASE: Case = Case {
    key: "ebay",
    name: "eBay",
    fake: || Box::pin(fake()),
    page_size: Some(PAGE),
    authorization: body,
    access: ACCESS,
    refresh: REFRESH,
    lasting: 7200,
    kept: &["userId"],
    sync: Synced {
        data_type: "orders",
        records: 9,
        calls: 3,
    },
    syncs: &["orders"],
    errors: Errors {
        rate_limited: r#"{"errors":[{"errorId":2001,"message":"Too many requests"}]}"#,
        rate_limit_headers: &[],
        rate_limited_says: "",
        server_error: r#"{"errors":[{"errorId":10000,"message":"There was a problem with an eBay internal system or process."}]}"#,
        unavailable: (
            503,
            r#"{"errors":[{"errorId":10001,"message":"Service unavailable"}]}"#,
        ),
        unavailable_says: "eBay answered 503 Service Unavailable: Service unavailable",
        refused: Refused::Scope {
            status: 403,
            body: r#"{"errors":[{"errorId":1100,"domain":"ACCESS","category":"REQUEST","message":"Access denied","longMessage":"Insufficient permissions to fulfill the request."}]}"#,
            says: "eBay answered 403 Forbidden: Access denied",
        },
    },
    pages: Pages {
        prelude: |_| Vec::new(),
        first: |_| Answer::json(200, fixture("ebay/fixtures/orders-0.json")),
        cut: Cut::SecondPage,
        truncated: r#"{"total": 9, "orders": [{"orderId": "x", "pricingSummary": {"total": {"value": "12.5"#,
        truncated_says: "eBay answered a page of orders that tributary cannot read",
        records_at: "/orders",
        id_at: "/orderId",
        field: "/creationDate",
    },
    // eBay keeps its refresh token.
    refresh_with: Some(Refresh::KEEPING),
    unrefreshable: None,
    verification: Verification {
        rejected_says: &["Invalid access token"],
        another_account: None,
        verified_by: |calls| {
            calls.last().is_some_and(|call| {
                call.path == "/sell/fulfillment/v1/order"
                    && call.query.get("limit").map(String::as_str) == Some("1")
            })
        },
    },
    unknown_account: None,
};

platform_scenarios!(CASE, refreshes, refreshes_before_expiry);

#[tokio::test]
async fn ebay_orders_sync_over_every_page_with_every_status_and_read_back_exactly() {
    for backend in backends() {
        let fake = fake().await;
        let app = TestApp::spawn_with(backend, options_for(&fake, Some(PAGE), 1)).await;
        let (company_id, connection_id) = connected(&app, 7200).await;
        let operations = sync(&app, company_id, QueueDataTypeDataType::Orders).await;
        let operation = latest(&operations, "orders");
        assert_eq!(operation.status, PullStatus::Complete, "{operation:?}");

        let orders = orders(&app, company_id).await;
        assert_eq!(orders.len(), 9, "{orders:#?}");
        for (number, status) in [
            ("1001", "Open"),
            ("1002", "Open"),
            ("1003", "Completed"),
            ("1004", "Pending"),
            ("1005", "Cancelled"),
            ("1006", "Cancelled"),
            ("1007", "Refunded"),
            ("1008", "PartiallyRefunded"),
            ("1009", "Unknown"),
        ] {
            assert_eq!(by_number(&orders, number)["status"], status, "{number}");
        }
        // Newest first.
        assert_eq!(orders[0]["orderNumber"], "1009");
        let first = by_number(&orders, "1001");
        assert_eq!(first["orderId"], "01-10001-20001");
        assert_eq!(first["connectionId"], connection_id.to_string());
        assert_eq!(first["currency"], "USD");
        assert_eq!(first["subTotal"], "1049.97");
        assert_eq!(first["totalTaxAmount"], "84.00");
        assert_eq!(first["totalDiscount"], "8.56");
        assert_eq!(first["totalAmount"], "1127.81");
        assert_eq!(first["totalRefunded"], "0.00");
        assert_eq!(first["customerRef"]["id"], "buyer_01");
        assert_eq!(first["createdDate"], "2026-10-01T10:05:00.000000Z");
        assert_eq!(first["sourceModifiedDate"], "2026-10-01T12:05:00.000000Z");
        assert_eq!(first["closedDate"], Value::Null);
        let vase = &first["lineItems"][0];
        assert_eq!(vase["description"], "Large glazed vase");
        assert_eq!(vase["sku"], "VASE-L");
        assert_eq!(vase["quantity"], "3");
        assert_eq!(vase["unitAmount"], "299.99");
        assert_eq!(vase["discountAmount"], "8.56");
        assert_eq!(vase["taxAmount"], "72.00");
        assert_eq!(vase["totalAmount"], "963.41");
        assert_eq!(first["lineItems"][1]["sku"], Value::Null);
        assert_eq!(
            by_number(&orders, "1006")["closedDate"],
            "2026-10-07T09:30:00.000000Z"
        );
        assert_eq!(by_number(&orders, "1007")["totalRefunded"], "23.98");
        // A pending refund has not reached the buyer yet.
        assert_eq!(by_number(&orders, "1008")["totalRefunded"], "5.25");

        // The status filter, with its total after the filter.
        let open = orders_page(&app, company_id, "status=Open&pageSize=1").await;
        assert_eq!(open["totalResults"], 2, "{open}");
        assert_eq!(open["results"][0]["orderNumber"], "1002");

        // Three pages by offset, while eBay names a next one.
        let calls = fake.calls();
        let offsets: Vec<_> = calls
            .iter()
            .map(|call| {
                (
                    call.query.get("limit").cloned().unwrap_or_default(),
                    call.query.get("offset").cloned().unwrap_or_default(),
                )
            })
            .collect();
        assert_eq!(
            offsets,
            [
                ("4".to_owned(), "0".to_owned()),
                ("4".to_owned(), "4".to_owned()),
                ("4".to_owned(), "8".to_owned())
            ]
        );
        assert!(calls.iter().all(|call| call.token == ACCESS));
        assert_eq!(
            fake.token_calls(),
            0,
            "a token valid for two hours is not refreshed"
        );
    }
}

/// eBay as it answers `filter=lastmodifieddate:[…]`: the orders modified
/// since (1001 fulfilled since the first sync, 1010 new), on one page;
/// every answer dated `PLATFORM_DATE` by the scenario.
async fn fake_with_changes() -> Fake {
    let whole = router();
    let fake = Fake::start(
        "ebay",
        Scheme::Bearer,
        ACCESS,
        REFRESH,
        fixture("ebay/fixtures/unauthorized.json"),
        Arc::new(move |call: &Call| {
            let changes = call.query.contains_key("filter");
            if changes && call.path == "/sell/fulfillment/v1/order" {
                Answer::json(200, fixture("ebay/fixtures/orders-changed.json"))
            } else {
                whole(call)
            }
        }),
    )
    .await;
    fake.with(|inner| inner.rotate = false);
    fake
}

/// eBay asked for what changed, in the shared scenario (`scenarios::changes`).
static CHANGES: Changed = Changed {
    data_type: "orders",
    fake: || Box::pin(fake_with_changes()),
    filter: |call| {
        call.query
            .get("filter")
            .filter(|filter| filter.starts_with("lastmodifieddate"))
            .cloned()
    },
    since: "lastmodifieddate:[2026-11-27T08:55:00.000Z..]",
    calls: 1,
    changed: 1,
    added: 1,
    quiet: |_| {
        Answer::json(
            200,
            r#"{"total":0,"limit":4,"offset":0,"warnings":[],"orders":[]}"#,
        )
    },
    quiet_calls: 1,
};

changes_scenario!(CASE, CHANGES);
