//! Amazon Seller Central: orders over several `NextToken` pages (each
//! order's items over pages of their own) in the seller's participating
//! marketplaces, with every `OrderStatus`, read back through the orders
//! list; the token in `x-amz-access-token`; Login with Amazon refreshes
//! (client credentials in the form, the refresh token kept) before expiry
//! and on a 401, `invalid_grant`, 429 with `Retry-After`, a 500, a
//! malformed page, data types Amazon lacks, and verification at migration.

use std::sync::Arc;
use std::time::Duration;

use serde_json::{Value, json};
use uuid::Uuid;

use client::types::{ConnectionStatus, PullStatus, QueueDataTypeDataType};

use super::fake::{Answer, Call, Fake, Scheme, fixture};
use super::{authorize, latest, options_for, set_oauth_client, stored, sync};
use crate::connections::{count_rows, new_company, new_connection};
use crate::helpers::{TestApp, backends, captured_logs, json};

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
    let company_id = new_company(app, "Maple Goods").await;
    let connection_id = new_connection(app, company_id, "amazon-seller-central").await;
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

#[tokio::test]
async fn amazon_has_no_invoices_or_customers_and_says_so() {
    for backend in backends() {
        let fake = fake().await;
        let app = TestApp::spawn_with(backend, options_for(&fake, Some(4), 1)).await;
        let (company_id, _) = connected(&app, 3600).await;
        for data_type in ["invoices", "customers"] {
            let queued = app
                .post_json(
                    &format!("/companies/{company_id}/data/queue/{data_type}"),
                    &json!(null),
                )
                .await;
            assert_eq!(queued.status(), 202);
            let queued = json(queued).await;
            assert_eq!(queued[0]["status"], "NotSupported", "{queued}");
            let message = queued[0]["errorMessage"].as_str().unwrap_or_default();
            assert_eq!(
                message,
                format!("Amazon Seller Central has no {data_type}; it syncs orders.")
            );
        }
        crate::sync::settled(&app.client, company_id).await;
        assert!(fake.calls().is_empty(), "nothing asked of Amazon");
        let integration = json(app.get("/integrations/amazon-seller-central").await).await;
        assert_eq!(integration["dataTypes"], json!(["orders"]), "{integration}");
    }
}

#[tokio::test]
async fn an_amazon_token_due_to_expire_is_refreshed_at_login_with_amazon_first() {
    for backend in backends() {
        let fake = fake().await;
        let app = TestApp::spawn_with(backend, options_for(&fake, Some(4), 1)).await;
        set_oauth_client(&app, "amazon-seller-central").await;
        let (company_id, connection_id) = connected(&app, 60).await;
        let operations = sync(&app, company_id, QueueDataTypeDataType::Orders).await;
        assert_eq!(latest(&operations, "orders").status, PullStatus::Complete);
        assert_eq!(fake.token_calls(), 1);
        assert!(
            fake.calls()
                .iter()
                .all(|call| call.token == "at-refreshed-1")
        );
        let form = fake.with(|inner| inner.token_forms[0].clone());
        assert_eq!(
            form.get("grant_type").map(String::as_str),
            Some("refresh_token")
        );
        assert_eq!(form.get("refresh_token").map(String::as_str), Some(REFRESH));
        assert_eq!(
            form.get("client_id").map(String::as_str),
            Some(super::fake::CLIENT_ID)
        );
        let credentials = stored(&app, connection_id).await;
        assert_eq!(credentials["accessToken"], "at-refreshed-1");
        assert_eq!(credentials["refreshToken"], REFRESH);
        assert_eq!(credentials["sellingPartnerId"], SELLER);
        assert_eq!(credentials["region"], "na");
    }
}

#[tokio::test]
async fn an_amazon_token_rejected_mid_sync_is_refreshed_once_and_the_sync_completes() {
    for backend in backends() {
        let fake = fake().await;
        let app = TestApp::spawn_with(backend, options_for(&fake, Some(4), 1)).await;
        set_oauth_client(&app, "amazon-seller-central").await;
        let (company_id, connection_id) = connected(&app, 3600).await;
        // The marketplaces and the first page pass; then the token stops working.
        fake.with(|inner| inner.expire_after = Some(3));
        let operations = sync(&app, company_id, QueueDataTypeDataType::Orders).await;
        let operation = latest(&operations, "orders");
        assert_eq!(operation.status, PullStatus::Complete, "{operation:?}");
        assert_eq!(orders(&app, company_id).await.len(), 9);
        assert_eq!(fake.token_calls(), 1);
        assert_eq!(
            stored(&app, connection_id).await["accessToken"],
            "at-refreshed-1"
        );
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
async fn invalid_grant_deauthorizes_the_amazon_connection() {
    for backend in backends() {
        let fake = fake().await;
        let app = TestApp::spawn_with(backend, options_for(&fake, Some(4), 1)).await;
        set_oauth_client(&app, "amazon-seller-central").await;
        let (company_id, connection_id) = connected(&app, 120).await;
        fake.with(|inner| inner.refresh_token = "authorization-removed-by-seller".to_owned());
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
        assert!(fake.calls().is_empty());
    }
}

#[tokio::test]
async fn amazon_rate_limits_wait_for_retry_after_and_server_errors_are_retried() {
    for backend in backends() {
        let fake = fake().await;
        let app = TestApp::spawn_with(backend, options_for(&fake, Some(4), 1)).await;
        let (company_id, _) = connected(&app, 3600).await;
        fake.with(|inner| {
            inner.scripted.push_back(Answer {
                status: 429,
                headers: vec![("Retry-After".to_owned(), "1".to_owned())],
                body: "{\"errors\":[{\"code\":\"QuotaExceeded\",\"message\":\"You exceeded your quota for the requested resource.\"}]}".to_owned(),
            });
            inner.scripted.push_back(Answer::json(
                500,
                "{\"errors\":[{\"code\":\"InternalFailure\",\"message\":\"We encountered an internal error. Please try again.\"}]}",
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
        assert_eq!(order_calls(&fake).len(), 3);

        fake.with(|inner| {
            for _ in 0..4 {
                inner.scripted.push_back(Answer::json(
                    500,
                    "{\"errors\":[{\"code\":\"InternalFailure\",\"message\":\"We encountered an internal error. Please try again.\"}]}",
                ));
            }
        });
        let operations = sync(&app, company_id, QueueDataTypeDataType::Orders).await;
        let operation = latest(&operations, "orders");
        assert_eq!(operation.status, PullStatus::Failed);
        let message = operation.error_message.unwrap_or_default();
        assert!(
            message.contains(
                "Amazon answered 500 Internal Server Error: We encountered an internal error"
            ),
            "{message}"
        );
        assert_eq!(orders(&app, company_id).await.len(), 9);
    }
}

#[tokio::test]
async fn a_malformed_amazon_page_fails_the_sync_and_keeps_the_previous_orders() {
    for backend in backends() {
        let fake = fake().await;
        let app = TestApp::spawn_with(backend, options_for(&fake, Some(4), 1)).await;
        let (company_id, _) = connected(&app, 3600).await;
        let operations = sync(&app, company_id, QueueDataTypeDataType::Orders).await;
        assert_eq!(latest(&operations, "orders").status, PullStatus::Complete);
        let before = orders(&app, company_id).await;
        // The marketplaces answer, then the first page of orders is cut off.
        fake.with(|inner| {
            inner.scripted.push_back(Answer::json(
                200,
                fixture("amazon_seller_central/fixtures/marketplace-participations.json"),
            ));
            inner.scripted.push_back(Answer::json(
                200,
                "{\"payload\": {\"Orders\": [{\"AmazonOrderId\": \"x\", \"OrderTotal\": {\"Amount\": \"12.5",
            ));
        });
        let operations = sync(&app, company_id, QueueDataTypeDataType::Orders).await;
        let operation = latest(&operations, "orders");
        assert_eq!(operation.status, PullStatus::Failed);
        let message = operation.error_message.unwrap_or_default();
        assert!(
            message.contains("Amazon answered a page of orders that tributary cannot read"),
            "{message}"
        );
        assert_eq!(orders(&app, company_id).await, before);
    }
}

#[tokio::test]
async fn amazon_verification_at_migration_accepts_working_tokens_and_rejects_others() {
    for backend in backends() {
        let fake = fake().await;
        let app = TestApp::spawn_with(backend, options_for(&fake, Some(4), 0)).await;
        let company_id = new_company(&app, "Maple Goods").await;
        let connection_id = new_connection(&app, company_id, "amazon-seller-central").await;

        let mut wrong = body(3600);
        wrong["accessToken"] = json!("Atza|not-a-token-amazon-knows");
        let response = authorize(&app, company_id, connection_id, &wrong, true).await;
        assert_eq!(response.status(), 422);
        let message = json(response).await["error"]
            .as_str()
            .unwrap_or_default()
            .to_owned();
        assert!(
            message.contains("Access to requested resource is denied"),
            "{message}"
        );
        assert!(!message.contains("not-a-token-amazon-knows"));
        assert_eq!(count_rows(&app, "connection_credential").await, 0);

        let response = authorize(&app, company_id, connection_id, &body(3600), true).await;
        assert_eq!(response.status(), 200);
        assert_eq!(json(response).await["status"], "Linked");
        assert_eq!(
            fake.calls().last().map(|call| call.path.clone()).as_deref(),
            Some("/sellers/v1/marketplaceParticipations")
        );

        // Already expired: verified by a refresh, whose token is stored.
        set_oauth_client(&app, "amazon-seller-central").await;
        let second = new_connection(&app, company_id, "amazon-seller-central").await;
        let mut expired = body(0);
        expired
            .as_object_mut()
            .expect("an object")
            .remove("expiresIn");
        expired["expiresAt"] = json!("2026-01-01T00:00:00Z");
        let response = authorize(&app, company_id, second, &expired, true).await;
        assert_eq!(response.status(), 200);
        assert_eq!(fake.token_calls(), 1);
        let credentials = stored(&app, second).await;
        assert_eq!(credentials["accessToken"], "at-refreshed-1");
        assert_eq!(credentials["refreshToken"], REFRESH);
    }
}
