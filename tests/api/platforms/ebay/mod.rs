//! eBay: orders over several `limit`/`offset` pages with every payment,
//! fulfilment and cancellation state, read back through the orders list;
//! refresh before expiry and on a 401 (eBay keeps its refresh token),
//! `invalid_grant`, 429 with `Retry-After`, a 500, a malformed page, data
//! types eBay lacks, and verification at migration.

use std::sync::Arc;
use std::time::Duration;

use serde_json::{Value, json};
use uuid::Uuid;

use client::types::{ConnectionStatus, PullStatus, QueueDataTypeDataType};

use super::fake::{Answer, Call, Fake, Scheme, fixture};
use super::{authorize, latest, options_for, set_oauth_client, stored, sync};
use crate::connections::{count_rows, new_company, new_connection};
use crate::helpers::{TestApp, backends, captured_logs, json};

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
    let company_id = new_company(app, "Maple Goods").await;
    let connection_id = new_connection(app, company_id, "ebay").await;
    let response = authorize(app, company_id, connection_id, &body(expires_in), false).await;
    assert_eq!(response.status(), 200);
    (company_id, connection_id)
}

async fn orders_page(app: &TestApp, company_id: Uuid, query: &str) -> Value {
    json(
        app.get(&format!("/companies/{company_id}/data/orders?{query}"))
            .await,
    )
    .await
}

async fn orders(app: &TestApp, company_id: Uuid) -> Vec<Value> {
    orders_page(app, company_id, "pageSize=100").await["results"]
        .as_array()
        .cloned()
        .unwrap_or_default()
}

fn by_number<'a>(orders: &'a [Value], number: &str) -> &'a Value {
    orders
        .iter()
        .find(|order| order["orderNumber"] == number)
        .unwrap_or_else(|| panic!("order {number} synced"))
}

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

#[tokio::test]
async fn ebay_has_no_invoices_or_customers_and_says_so() {
    for backend in backends() {
        let fake = fake().await;
        let app = TestApp::spawn_with(backend, options_for(&fake, Some(PAGE), 1)).await;
        let (company_id, _) = connected(&app, 7200).await;
        for data_type in ["invoices", "customers"] {
            let queued = app
                .post_json(
                    &format!("/companies/{company_id}/data/queue/{data_type}"),
                    &json!(null),
                )
                .await;
            assert_eq!(queued.status(), 202);
            let queued = json(queued).await;
            let operation = &queued[0];
            assert_eq!(operation["status"], "NotSupported", "{queued}");
            let message = operation["errorMessage"].as_str().unwrap_or_default();
            assert_eq!(
                message,
                format!("eBay has no {data_type}; it syncs orders.")
            );
        }
        crate::sync::settled(&app.client, company_id).await;
        assert!(fake.calls().is_empty(), "nothing asked of eBay");
        let integration = json(app.get("/integrations/ebay").await).await;
        assert_eq!(integration["dataTypes"], json!(["orders"]), "{integration}");
    }
}

#[tokio::test]
async fn a_token_about_to_expire_is_refreshed_first_and_ebay_keeps_its_refresh_token() {
    for backend in backends() {
        let fake = fake().await;
        let app = TestApp::spawn_with(backend, options_for(&fake, Some(PAGE), 1)).await;
        set_oauth_client(&app, "ebay").await;
        let (company_id, connection_id) = connected(&app, 60).await;
        let operations = sync(&app, company_id, QueueDataTypeDataType::Orders).await;
        assert_eq!(latest(&operations, "orders").status, PullStatus::Complete);
        assert_eq!(fake.token_calls(), 1);
        assert!(
            fake.calls()
                .iter()
                .all(|call| call.token == "at-refreshed-1")
        );
        // The refresh grant, client credentials in HTTP Basic (checked by the fake).
        let form = fake.with(|inner| inner.token_forms[0].clone());
        assert_eq!(
            form.get("grant_type").map(String::as_str),
            Some("refresh_token")
        );
        assert_eq!(form.get("refresh_token").map(String::as_str), Some(REFRESH));
        assert!(!form.contains_key("client_secret"));
        let credentials = stored(&app, connection_id).await;
        assert_eq!(credentials["accessToken"], "at-refreshed-1");
        assert_eq!(credentials["refreshToken"], REFRESH);
        assert_eq!(credentials["userId"], USER);
    }
}

#[tokio::test]
async fn an_access_token_rejected_mid_sync_is_refreshed_once_and_the_sync_completes() {
    for backend in backends() {
        let fake = fake().await;
        let app = TestApp::spawn_with(backend, options_for(&fake, Some(PAGE), 1)).await;
        set_oauth_client(&app, "ebay").await;
        let (company_id, connection_id) = connected(&app, 7200).await;
        fake.with(|inner| inner.expire_after = Some(1));
        let operations = sync(&app, company_id, QueueDataTypeDataType::Orders).await;
        let operation = latest(&operations, "orders");
        assert_eq!(operation.status, PullStatus::Complete, "{operation:?}");
        assert_eq!(orders(&app, company_id).await.len(), 9);
        assert_eq!(fake.token_calls(), 1);
        let credentials = stored(&app, connection_id).await;
        assert_eq!(credentials["accessToken"], "at-refreshed-1");
        assert_eq!(credentials["refreshToken"], REFRESH);
        let logs = captured_logs();
        for secret in [
            ACCESS,
            REFRESH,
            "at-refreshed-1",
            super::fake::CLIENT_SECRET,
        ] {
            assert!(!logs.contains(secret), "a secret reached the logs");
        }
    }
}

#[tokio::test]
async fn invalid_grant_deauthorizes_the_ebay_connection() {
    for backend in backends() {
        let fake = fake().await;
        let app = TestApp::spawn_with(backend, options_for(&fake, Some(PAGE), 1)).await;
        set_oauth_client(&app, "ebay").await;
        let (company_id, connection_id) = connected(&app, 120).await;
        fake.with(|inner| inner.refresh_token = "revoked-in-my-ebay".to_owned());
        let operations = sync(&app, company_id, QueueDataTypeDataType::Orders).await;
        let operation = latest(&operations, "orders");
        assert_eq!(operation.status, PullStatus::AuthError);
        let message = operation.error_message.unwrap_or_default();
        assert!(message.contains("invalid_grant"), "{message}");
        assert!(!message.contains(REFRESH));
        let connection = app
            .client
            .get_connection(&company_id, &connection_id)
            .await
            .expect("found")
            .into_inner();
        assert_eq!(connection.status, ConnectionStatus::Deauthorized);
        assert!(
            fake.calls().is_empty(),
            "no API call with an expiring token"
        );
    }
}

#[tokio::test]
async fn ebay_rate_limits_wait_for_retry_after_and_server_errors_are_retried() {
    for backend in backends() {
        let fake = fake().await;
        let app = TestApp::spawn_with(backend, options_for(&fake, Some(PAGE), 1)).await;
        let (company_id, _) = connected(&app, 7200).await;
        fake.with(|inner| {
            inner.scripted.push_back(Answer {
                status: 429,
                headers: vec![("Retry-After".to_owned(), "1".to_owned())],
                body: "{\"errors\":[{\"errorId\":2001,\"message\":\"Too many requests\"}]}".to_owned(),
            });
            inner.scripted.push_back(Answer::json(
                500,
                "{\"errors\":[{\"errorId\":10000,\"message\":\"There was a problem with an eBay internal system or process.\"}]}",
            ));
        });
        let started = std::time::Instant::now();
        let operations = sync(&app, company_id, QueueDataTypeDataType::Orders).await;
        assert_eq!(latest(&operations, "orders").status, PullStatus::Complete);
        assert!(
            started.elapsed() >= Duration::from_secs(1),
            "Retry-After was honoured"
        );
        assert_eq!(orders(&app, company_id).await.len(), 9);
        // Two failed attempts, then three pages.
        assert_eq!(fake.calls().len(), 5);

        fake.with(|inner| {
            for _ in 0..4 {
                inner.scripted.push_back(Answer::json(
                    503,
                    "{\"errors\":[{\"errorId\":10001,\"message\":\"Service unavailable\"}]}",
                ));
            }
        });
        let operations = sync(&app, company_id, QueueDataTypeDataType::Orders).await;
        let operation = latest(&operations, "orders");
        assert_eq!(operation.status, PullStatus::Failed);
        let message = operation.error_message.unwrap_or_default();
        assert!(
            message.contains("eBay answered 503 Service Unavailable: Service unavailable"),
            "{message}"
        );
        assert_eq!(orders(&app, company_id).await.len(), 9);
    }
}

#[tokio::test]
async fn a_malformed_ebay_page_fails_the_sync_and_keeps_the_previous_orders() {
    for backend in backends() {
        let fake = fake().await;
        let app = TestApp::spawn_with(backend, options_for(&fake, Some(PAGE), 1)).await;
        let (company_id, _) = connected(&app, 7200).await;
        let operations = sync(&app, company_id, QueueDataTypeDataType::Orders).await;
        assert_eq!(latest(&operations, "orders").status, PullStatus::Complete);
        let before = orders(&app, company_id).await;
        fake.with(|inner| {
            inner
                .scripted
                .push_back(Answer::json(200, fixture("ebay/fixtures/orders-0.json")));
            inner.scripted.push_back(Answer::json(
                200,
                "{\"total\": 9, \"orders\": [{\"orderId\": \"x\", \"pricingSummary\": {\"total\": {\"value\": \"12.5",
            ));
        });
        let operations = sync(&app, company_id, QueueDataTypeDataType::Orders).await;
        let operation = latest(&operations, "orders");
        assert_eq!(operation.status, PullStatus::Failed);
        assert!(
            operation
                .error_message
                .unwrap_or_default()
                .contains("eBay answered a page of orders that tributary cannot read")
        );
        assert_eq!(orders(&app, company_id).await, before);
    }
}

#[tokio::test]
async fn ebay_verification_at_migration_accepts_working_tokens_and_rejects_others() {
    for backend in backends() {
        let fake = fake().await;
        let app = TestApp::spawn_with(backend, options_for(&fake, Some(PAGE), 0)).await;
        let company_id = new_company(&app, "Maple Goods").await;
        let connection_id = new_connection(&app, company_id, "ebay").await;

        let mut wrong = body(7200);
        wrong["accessToken"] = json!("not-a-token-ebay-knows");
        let response = authorize(&app, company_id, connection_id, &wrong, true).await;
        assert_eq!(response.status(), 422);
        let message = json(response).await["error"]
            .as_str()
            .unwrap_or_default()
            .to_owned();
        assert!(message.contains("Invalid access token"), "{message}");
        assert!(!message.contains("not-a-token-ebay-knows"));
        assert_eq!(count_rows(&app, "connection_credential").await, 0);

        let response = authorize(&app, company_id, connection_id, &body(7200), true).await;
        assert_eq!(response.status(), 200);
        assert_eq!(json(response).await["status"], "Linked");
        let last = fake.calls().last().cloned().expect("a verification call");
        assert_eq!(last.path, "/sell/fulfillment/v1/order");
        assert_eq!(last.query.get("limit").map(String::as_str), Some("1"));

        // Without verify nothing is called.
        let calls = fake.calls().len();
        let other = new_connection(&app, company_id, "ebay").await;
        assert_eq!(
            authorize(&app, company_id, other, &wrong, false)
                .await
                .status(),
            200
        );
        assert_eq!(fake.calls().len(), calls);
    }
}
