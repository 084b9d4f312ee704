//! Zettle: purchases as orders over several `lastPurchaseHash` pages (until
//! an empty one), refund purchases making the purchases they refund
//! `Refunded` or `PartiallyRefunded` (from the same page or fetched by id),
//! exact minor-unit money, read back through the list; refresh before expiry
//! and on a 401 (client credentials in the form, the rotated refresh token
//! stored), `invalid_grant`, 429 with `Retry-After`, a 500, a malformed
//! page, the data type Zettle lacks, and verification at migration.

use std::sync::Arc;
use std::time::Duration;

use serde_json::{Value, json};
use uuid::Uuid;

use client::types::{ConnectionStatus, PullStatus, QueueDataTypeDataType};

use super::fake::{Answer, Call, Fake, Scheme, fixture};
use super::{authorize, latest, options_for, set_oauth_client, stored, sync};
use crate::connections::{count_rows, new_company, new_connection};
use crate::helpers::{TestApp, backends, captured_logs, json};

pub(crate) const ORGANIZATION: &str = "ab305d54-75b4-431b-adb2-eb6b9e546013";
const ACCESS: &str = "eyJraWQiOiIxNDQ0NzI3MTY0Njk4IiwidHlwIjoiSldUIn0.zettle-access";
const REFRESH: &str = "IZSEC07b0edfc-f557-4e52-a995-384288e2351e";
/// Purchases per page in these tests (`limit`).
const PAGE: u64 = 3;
/// Each page's `lastPurchaseHash`, as the fixtures give them.
const HASH_1: &str = "1760115624879Bm5SpjWJEeuollr2KMFqhA";
const HASH_2: &str = "1759838400000Xdi3BjWLEeuollr2KMFqhA";
const HASH_3: &str = "1759654800000Ydi3BjWLEeuollr2KMFqhA";
/// The refund purchase on page 2 of a purchase on page 3.
const REFUND_2: &str = "2ca5c42a-8ec4-11e6-aaff-4186f29705b6";

/// Serves the Zettle fixtures: four pages of purchases by
/// `lastPurchaseHash` (the last empty), one refund purchase by id, and the
/// user on the OAuth host (the fake is both hosts).
fn router() -> super::fake::Router {
    Arc::new(|call: &Call| {
        let hash = call
            .query
            .get("lastPurchaseHash")
            .cloned()
            .unwrap_or_default();
        match call.path.as_str() {
            "/users/self" => Answer::json(200, fixture("zettle/fixtures/user.json")),
            "/purchases/v2" => {
                let page = match hash.as_str() {
                    "" => 1,
                    HASH_1 => 2,
                    HASH_2 => 3,
                    HASH_3 => 4,
                    _ => {
                        return Answer::json(
                            400,
                            "{\"developerMessage\":\"Invalid lastPurchaseHash\"}",
                        );
                    }
                };
                Answer::json(
                    200,
                    fixture(&format!("zettle/fixtures/purchases-{page}.json")),
                )
            }
            path if path == format!("/purchase/v2/{REFUND_2}") => {
                Answer::json(200, fixture("zettle/fixtures/refund-2.json"))
            }
            _ => Answer::json(404, "{\"developerMessage\":\"Not found\"}"),
        }
    })
}

pub(crate) async fn fake() -> Fake {
    let fake = Fake::start(
        "zettle",
        Scheme::Bearer,
        ACCESS,
        REFRESH,
        fixture("zettle/fixtures/unauthorized.json"),
        router(),
    )
    .await;
    fake.with(|inner| inner.client_in_body = true);
    fake
}

fn body(expires_in: i64) -> Value {
    json!({"organizationUuid": ORGANIZATION, "accessToken": ACCESS, "refreshToken": REFRESH, "expiresIn": expires_in})
}

/// A company with an authorized Zettle connection.
async fn connected(app: &TestApp, expires_in: i64) -> (Uuid, Uuid) {
    let company_id = new_company(app, "Kafé Sven").await;
    let connection_id = new_connection(app, company_id, "zettle").await;
    let response = authorize(app, company_id, connection_id, &body(expires_in), false).await;
    assert_eq!(response.status(), 200);
    (company_id, connection_id)
}

async fn list(app: &TestApp, company_id: Uuid, data_type: &str) -> Vec<Value> {
    json(
        app.get(&format!(
            "/companies/{company_id}/data/{data_type}?pageSize=100"
        ))
        .await,
    )
    .await["results"]
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
async fn zettle_purchases_sync_over_every_hash_page_with_refunds_and_read_back_exactly() {
    for backend in backends() {
        let fake = fake().await;
        let app = TestApp::spawn_with(backend, options_for(&fake, Some(PAGE), 1)).await;
        let (company_id, connection_id) = connected(&app, 3600).await;
        let operations = sync(&app, company_id, QueueDataTypeDataType::Orders).await;
        let operation = latest(&operations, "orders");
        assert_eq!(operation.status, PullStatus::Complete, "{operation:?}");

        // Six purchases; the two refund purchases are not orders.
        let orders = list(&app, company_id, "orders").await;
        assert_eq!(orders.len(), 6, "{orders:#?}");
        for (number, status) in [
            ("391840", "Completed"),
            ("391839", "Refunded"),
            ("391837", "Unknown"),
            ("391836", "Completed"),
            ("391835", "PartiallyRefunded"),
            ("391834", "Completed"),
        ] {
            assert_eq!(by_number(&orders, number)["status"], status, "{number}");
        }
        assert!(
            orders
                .iter()
                .all(|order| order["orderNumber"] != "391841" && order["orderNumber"] != "391838")
        );

        // Row and purchase-level discounts, VAT from the taxable amounts.
        let discounted = by_number(&orders, "391840");
        assert_eq!(
            discounted["orderId"],
            "6e2a95e0-e893-11e6-bafa-56ab480140ef"
        );
        assert_eq!(discounted["connectionId"], connection_id.to_string());
        assert_eq!(discounted["currency"], "SEK");
        assert_eq!(discounted["subTotal"], "140.00");
        assert_eq!(discounted["totalDiscount"], "40.00");
        assert_eq!(discounted["totalTaxAmount"], "13.31");
        assert_eq!(discounted["totalAmount"], "100.00");
        assert_eq!(discounted["totalRefunded"], "0.00");
        assert_eq!(discounted["customerRef"], Value::Null);
        assert_eq!(discounted["createdDate"], "2026-10-11T15:31:00.648000Z");
        assert_eq!(discounted["closedDate"], "2026-10-11T15:31:00.648000Z");
        assert_eq!(discounted["sourceModifiedDate"], Value::Null);
        let foo = &discounted["lineItems"][0];
        assert_eq!(foo["lineId"], "0");
        assert_eq!(foo["description"], "Foo");
        assert_eq!(foo["sku"], "FOO-1");
        assert_eq!(foo["quantity"], "2");
        assert_eq!(foo["unitAmount"], "20.00");
        assert_eq!(foo["discountAmount"], "5.00");
        assert_eq!(foo["taxAmount"], "5.60");
        assert_eq!(foo["totalAmount"], "35.00");
        let bar = &discounted["lineItems"][1];
        assert_eq!(bar["description"], "Bar (Large)");
        assert_eq!(bar["sku"], Value::Null);
        assert_eq!(bar["quantity"], "10");
        assert_eq!(bar["taxAmount"], "7.71");
        assert_eq!(bar["totalAmount"], "90.00");

        // Refunded in full by a refund purchase on its own page.
        let refunded = by_number(&orders, "391839");
        assert_eq!(refunded["totalAmount"], "50.00");
        assert_eq!(refunded["totalRefunded"], "50.00");
        // In part, by a refund purchase on the page before, fetched by id.
        let partly = by_number(&orders, "391835");
        assert_eq!(partly["totalAmount"], "170.00");
        assert_eq!(partly["totalRefunded"], "35.00");
        assert_eq!(partly["lineItems"].as_array().map(Vec::len), Some(3));
        // No `refunded` flag: Unknown; no VAT given.
        let unknown = by_number(&orders, "391837");
        assert_eq!(unknown["currency"], "EUR");
        assert_eq!(unknown["totalAmount"], "24.50");
        assert_eq!(unknown["totalTaxAmount"], "0.00");
        // A currency without minor units, and a fractional quantity.
        let krona = by_number(&orders, "391836");
        assert_eq!(krona["currency"], "ISK");
        assert_eq!(krona["totalAmount"], "1500.00");
        assert_eq!(krona["totalTaxAmount"], "300.00");
        assert_eq!(krona["lineItems"][0]["unitAmount"], "500.00");
        let beans = &by_number(&orders, "391834")["lineItems"][0];
        assert_eq!(beans["description"], "Coffee beans (Ethiopia)");
        assert_eq!(beans["quantity"], "0.5");
        assert_eq!(beans["unitAmount"], "24.00");
        assert_eq!(beans["taxAmount"], "2.00");
        assert_eq!(beans["totalAmount"], "12.00");

        // Four pages by `lastPurchaseHash`, the refund purchase by id.
        let calls = fake.calls();
        let asked: Vec<_> = calls
            .iter()
            .map(|call| {
                (
                    call.path.clone(),
                    call.query.get("limit").cloned().unwrap_or_default(),
                    call.query.get("descending").cloned().unwrap_or_default(),
                    call.query
                        .get("lastPurchaseHash")
                        .cloned()
                        .unwrap_or_default(),
                )
            })
            .collect();
        let page = |hash: &str| {
            (
                "/purchases/v2".to_owned(),
                "3".to_owned(),
                "true".to_owned(),
                hash.to_owned(),
            )
        };
        assert_eq!(
            asked,
            [
                page(""),
                page(HASH_1),
                page(HASH_2),
                (
                    format!("/purchase/v2/{REFUND_2}"),
                    String::new(),
                    String::new(),
                    String::new()
                ),
                page(HASH_3),
            ]
        );
        assert!(calls.iter().all(|call| call.token == ACCESS));
        assert_eq!(
            fake.token_calls(),
            0,
            "a token valid for an hour is not refreshed"
        );
    }
}

#[tokio::test]
async fn zettle_has_no_customers_and_says_so() {
    for backend in backends() {
        let fake = fake().await;
        let app = TestApp::spawn_with(backend, options_for(&fake, Some(PAGE), 1)).await;
        let (company_id, _) = connected(&app, 3600).await;
        let queued = app
            .post_json(
                &format!("/companies/{company_id}/data/queue/customers"),
                &json!(null),
            )
            .await;
        assert_eq!(queued.status(), 202);
        let queued = json(queued).await;
        assert_eq!(queued[0]["status"], "NotSupported", "{queued}");
        assert_eq!(
            queued[0]["errorMessage"],
            "Zettle by PayPal has no customers; it syncs orders."
        );
        crate::sync::settled(&app.client, company_id).await;
        assert!(fake.calls().is_empty(), "nothing asked of Zettle");
    }
}

#[tokio::test]
async fn a_zettle_token_about_to_expire_is_refreshed_first_and_the_rotated_refresh_token_stored() {
    for backend in backends() {
        let fake = fake().await;
        let app = TestApp::spawn_with(backend, options_for(&fake, Some(PAGE), 1)).await;
        set_oauth_client(&app, "zettle").await;
        let (company_id, connection_id) = connected(&app, 60).await;
        let operations = sync(&app, company_id, QueueDataTypeDataType::Orders).await;
        assert_eq!(latest(&operations, "orders").status, PullStatus::Complete);
        assert_eq!(fake.token_calls(), 1);
        assert!(
            fake.calls()
                .iter()
                .all(|call| call.token == "at-refreshed-1")
        );
        // The refresh grant, client credentials in the form body (checked by the fake).
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
        assert_eq!(credentials["refreshToken"], "rt-rotated-1");
        assert_eq!(credentials["organizationUuid"], ORGANIZATION);
    }
}

#[tokio::test]
async fn a_zettle_token_rejected_mid_sync_is_refreshed_once_and_the_sync_completes() {
    for backend in backends() {
        let fake = fake().await;
        let app = TestApp::spawn_with(backend, options_for(&fake, Some(PAGE), 1)).await;
        set_oauth_client(&app, "zettle").await;
        let (company_id, connection_id) = connected(&app, 3600).await;
        fake.with(|inner| inner.expire_after = Some(1));
        let operations = sync(&app, company_id, QueueDataTypeDataType::Orders).await;
        let operation = latest(&operations, "orders");
        assert_eq!(operation.status, PullStatus::Complete, "{operation:?}");
        assert_eq!(list(&app, company_id, "orders").await.len(), 6);
        assert_eq!(fake.token_calls(), 1);
        let credentials = stored(&app, connection_id).await;
        assert_eq!(credentials["accessToken"], "at-refreshed-1");
        assert_eq!(credentials["refreshToken"], "rt-rotated-1");
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
async fn invalid_grant_deauthorizes_the_zettle_connection() {
    for backend in backends() {
        let fake = fake().await;
        let app = TestApp::spawn_with(backend, options_for(&fake, Some(PAGE), 1)).await;
        set_oauth_client(&app, "zettle").await;
        let (company_id, connection_id) = connected(&app, 120).await;
        fake.with(|inner| inner.refresh_token = "revoked-in-my-zettle".to_owned());
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
async fn zettle_rate_limits_wait_for_retry_after_and_server_errors_are_retried() {
    for backend in backends() {
        let fake = fake().await;
        let app = TestApp::spawn_with(backend, options_for(&fake, Some(PAGE), 1)).await;
        let (company_id, _) = connected(&app, 3600).await;
        fake.with(|inner| {
            inner.scripted.push_back(Answer {
                status: 429,
                headers: vec![("Retry-After".to_owned(), "1".to_owned())],
                body: "{\"developerMessage\":\"Too many requests\"}".to_owned(),
            });
            inner.scripted.push_back(Answer::json(
                500,
                "{\"developerMessage\":\"Internal error\"}",
            ));
        });
        let started = std::time::Instant::now();
        let operations = sync(&app, company_id, QueueDataTypeDataType::Orders).await;
        assert_eq!(latest(&operations, "orders").status, PullStatus::Complete);
        assert!(
            started.elapsed() >= Duration::from_secs(1),
            "Retry-After was honoured"
        );
        assert_eq!(list(&app, company_id, "orders").await.len(), 6);
        // Two failed attempts, then four pages and one refund purchase.
        assert_eq!(fake.calls().len(), 7);

        fake.with(|inner| {
            for _ in 0..4 {
                inner.scripted.push_back(Answer::json(
                    503,
                    "{\"developerMessage\":\"Service unavailable\"}",
                ));
            }
        });
        let operations = sync(&app, company_id, QueueDataTypeDataType::Orders).await;
        let operation = latest(&operations, "orders");
        assert_eq!(operation.status, PullStatus::Failed);
        let message = operation.error_message.unwrap_or_default();
        assert!(
            message.contains("Zettle answered 503 Service Unavailable"),
            "{message}"
        );
        assert_eq!(list(&app, company_id, "orders").await.len(), 6);
    }
}

#[tokio::test]
async fn a_malformed_zettle_page_fails_the_sync_and_keeps_the_previous_orders() {
    for backend in backends() {
        let fake = fake().await;
        let app = TestApp::spawn_with(backend, options_for(&fake, Some(PAGE), 1)).await;
        let (company_id, _) = connected(&app, 3600).await;
        let operations = sync(&app, company_id, QueueDataTypeDataType::Orders).await;
        assert_eq!(latest(&operations, "orders").status, PullStatus::Complete);
        let before = list(&app, company_id, "orders").await;
        fake.with(|inner| {
            inner.scripted.push_back(Answer::json(
                200,
                fixture("zettle/fixtures/purchases-1.json"),
            ));
            inner.scripted.push_back(Answer::json(
                200,
                "{\"purchases\": [{\"purchaseUUID1\": \"x\", \"amount\": 12",
            ));
        });
        let operations = sync(&app, company_id, QueueDataTypeDataType::Orders).await;
        let operation = latest(&operations, "orders");
        assert_eq!(operation.status, PullStatus::Failed);
        assert!(
            operation
                .error_message
                .unwrap_or_default()
                .contains("Zettle answered a page of purchases that tributary cannot read")
        );
        assert_eq!(list(&app, company_id, "orders").await, before);
    }
}

#[tokio::test]
async fn zettle_verification_at_migration_accepts_the_organizations_token_and_rejects_others() {
    for backend in backends() {
        let fake = fake().await;
        let app = TestApp::spawn_with(backend, options_for(&fake, Some(PAGE), 0)).await;
        let company_id = new_company(&app, "Lego Cars").await;
        let connection_id = new_connection(&app, company_id, "zettle").await;

        let mut wrong = body(3600);
        wrong["accessToken"] = json!("access_not_a_token_zettle_knows");
        let response = authorize(&app, company_id, connection_id, &wrong, true).await;
        assert_eq!(response.status(), 422);
        let message = json(response).await["error"]
            .as_str()
            .unwrap_or_default()
            .to_owned();
        assert!(message.contains("Zettle answered 401"), "{message}");
        assert!(!message.contains("access_not_a_token_zettle_knows"));
        assert_eq!(count_rows(&app, "connection_credential").await, 0);

        let mut elsewhere = body(3600);
        elsewhere["organizationUuid"] = json!("0a3c3c1e-2f4b-4d5e-9a8b-7c6d5e4f3a21");
        let response = authorize(&app, company_id, connection_id, &elsewhere, true).await;
        assert_eq!(response.status(), 422);
        let message = json(response).await["error"]
            .as_str()
            .unwrap_or_default()
            .to_owned();
        assert!(message.contains("another organization"), "{message}");

        let response = authorize(&app, company_id, connection_id, &body(3600), true).await;
        assert_eq!(response.status(), 200);
        assert_eq!(json(response).await["status"], "Linked");
        let last = fake.calls().last().cloned().expect("a verification call");
        assert_eq!(last.path, "/users/self");
    }
}
