//! Mollie: orders and customers over several HAL pages (`from` of
//! `_links.next`) with every order status and refunds, read back through
//! the lists; refresh before expiry and on a 401 (the rotated refresh token
//! stored), `invalid_grant`, 429 with `Retry-After`, a 500, a malformed
//! page, the data type Mollie lacks, and verification at migration.

use std::sync::Arc;
use std::time::Duration;

use serde_json::{Value, json};
use uuid::Uuid;

use client::types::{ConnectionStatus, PullStatus, QueueDataTypeDataType};

use super::fake::{Answer, Call, Fake, Scheme, fixture};
use super::{authorize, latest, options_for, set_oauth_client, stored, sync};
use crate::connections::{count_rows, new_company, new_connection};
use crate::helpers::{TestApp, backends, captured_logs, json};

pub(crate) const ORGANIZATION: &str = "org_12345678";
const ACCESS: &str = "access_46EUJ6x8jFJZZeAvhNH4JVey6qVpqR";
const REFRESH: &str = "refresh_FS4xc3BgPjvDKq4LPpZwCKD5mcNr6k";
/// Records per page in these tests (`limit`).
const PAGE: u64 = 5;

/// Serves the Mollie fixtures: three pages of orders and two of customers
/// by `from`, and the organization.
fn router() -> super::fake::Router {
    Arc::new(|call: &Call| {
        let from = call.query.get("from").cloned().unwrap_or_default();
        match call.path.as_str() {
            "/v2/organizations/me" => {
                Answer::json(200, fixture("mollie/fixtures/organization.json"))
            }
            "/v2/orders" => {
                let page = match from.as_str() {
                    "" => 1,
                    "ord_t06x8Q" => 2,
                    "ord_t11x8Q" => 3,
                    _ => {
                        return Answer::json(
                            400,
                            "{\"status\":400,\"title\":\"Bad Request\",\"detail\":\"Invalid from\"}",
                        );
                    }
                };
                Answer::json(200, fixture(&format!("mollie/fixtures/orders-{page}.json")))
            }
            "/v2/customers" => {
                let page = if from.is_empty() { 1 } else { 2 };
                Answer::json(
                    200,
                    fixture(&format!("mollie/fixtures/customers-{page}.json")),
                )
            }
            _ => Answer::json(
                404,
                "{\"status\":404,\"title\":\"Not Found\",\"detail\":\"No such resource\"}",
            ),
        }
    })
}

pub(crate) async fn fake() -> Fake {
    Fake::start(
        "mollie",
        Scheme::Bearer,
        ACCESS,
        REFRESH,
        fixture("mollie/fixtures/unauthorized.json"),
        router(),
    )
    .await
}

fn body(expires_in: i64) -> Value {
    json!({"organizationId": ORGANIZATION, "accessToken": ACCESS, "refreshToken": REFRESH, "expiresIn": expires_in})
}

/// A company with an authorized Mollie connection.
async fn connected(app: &TestApp, expires_in: i64) -> (Uuid, Uuid) {
    let company_id = new_company(app, "Lego Cars").await;
    let connection_id = new_connection(app, company_id, "mollie").await;
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
async fn mollie_orders_sync_over_every_hal_page_with_every_status_and_read_back_exactly() {
    for backend in backends() {
        let fake = fake().await;
        let app = TestApp::spawn_with(backend, options_for(&fake, Some(PAGE), 1)).await;
        let (company_id, connection_id) = connected(&app, 3600).await;
        let operations = sync(&app, company_id, QueueDataTypeDataType::Orders).await;
        let operation = latest(&operations, "orders");
        assert_eq!(operation.status, PullStatus::Complete, "{operation:?}");

        let orders = list(&app, company_id, "orders").await;
        assert_eq!(orders.len(), 12, "{orders:#?}");
        for (number, status) in [
            ("1337", "Open"),
            ("1338", "Pending"),
            ("1339", "Pending"),
            ("1340", "Open"),
            ("1341", "Open"),
            ("1342", "Completed"),
            ("1343", "Cancelled"),
            ("1344", "Cancelled"),
            ("1345", "Refunded"),
            ("1346", "PartiallyRefunded"),
            ("1347", "Refunded"),
            ("1348", "Unknown"),
        ] {
            assert_eq!(by_number(&orders, number)["status"], status, "{number}");
        }
        let first = by_number(&orders, "1337");
        assert_eq!(first["orderId"], "ord_t01x8Q");
        assert_eq!(first["connectionId"], connection_id.to_string());
        assert_eq!(first["currency"], "EUR");
        assert_eq!(first["subTotal"], "1127.99");
        assert_eq!(first["totalDiscount"], "110.00");
        assert_eq!(first["totalTaxAmount"], "176.67");
        assert_eq!(first["totalAmount"], "1017.99");
        assert_eq!(first["totalRefunded"], "0.00");
        assert_eq!(first["customerRef"], Value::Null);
        assert_eq!(first["createdDate"], "2026-10-01T09:29:56.000000Z");
        assert_eq!(first["closedDate"], Value::Null);
        assert_eq!(first["sourceModifiedDate"], Value::Null);
        let bugatti = &first["lineItems"][0];
        assert_eq!(bugatti["lineId"], "odl_1a");
        assert_eq!(bugatti["description"], "LEGO 42083 Bugatti Chiron");
        assert_eq!(bugatti["sku"], "5702016116977");
        assert_eq!(bugatti["quantity"], "2");
        assert_eq!(bugatti["unitAmount"], "399.00");
        assert_eq!(bugatti["discountAmount"], "100.00");
        assert_eq!(bugatti["taxAmount"], "121.14");
        assert_eq!(bugatti["totalAmount"], "698.00");
        let voucher = &first["lineItems"][2];
        assert_eq!(voucher["description"], "Spring voucher");
        assert_eq!(voucher["sku"], Value::Null);
        assert_eq!(voucher["totalAmount"], "-10.00");
        assert_eq!(
            by_number(&orders, "1342")["closedDate"],
            "2026-10-09T12:00:00.000000Z"
        );
        assert_eq!(
            by_number(&orders, "1343")["closedDate"],
            "2026-10-08T08:15:00.000000Z"
        );
        assert_eq!(
            by_number(&orders, "1344")["closedDate"],
            "2026-10-30T09:29:56.000000Z"
        );
        assert_eq!(by_number(&orders, "1345")["totalRefunded"], "121.00");
        assert_eq!(by_number(&orders, "1346")["totalRefunded"], "21.00");

        // Three pages: `limit`, then `from` as each page's next link said.
        let calls = fake.calls();
        let pages: Vec<_> = calls
            .iter()
            .map(|call| {
                (
                    call.query.get("limit").cloned().unwrap_or_default(),
                    call.query.get("from").cloned().unwrap_or_default(),
                )
            })
            .collect();
        assert_eq!(
            pages,
            [
                ("5".to_owned(), String::new()),
                ("5".to_owned(), "ord_t06x8Q".to_owned()),
                ("5".to_owned(), "ord_t11x8Q".to_owned())
            ]
        );
        assert!(calls.iter().all(|call| call.token == ACCESS));
        // The only media type Mollie's OpenAPI document answers in.
        assert!(
            calls
                .iter()
                .all(|call| call.headers.get("accept").map(String::as_str)
                    == Some("application/hal+json"))
        );
        assert_eq!(
            fake.token_calls(),
            0,
            "a token valid for an hour is not refreshed"
        );
    }
}

#[tokio::test]
async fn mollie_customers_sync_over_hal_pages() {
    for backend in backends() {
        let fake = fake().await;
        let app = TestApp::spawn_with(backend, options_for(&fake, Some(PAGE), 1)).await;
        let (company_id, _) = connected(&app, 3600).await;
        let operations = sync(&app, company_id, QueueDataTypeDataType::Customers).await;
        let operation = latest(&operations, "customers");
        assert_eq!(operation.status, PullStatus::Complete, "{operation:?}");
        let customers = list(&app, company_id, "customers").await;
        assert_eq!(customers.len(), 3, "{customers:#?}");
        // By name.
        assert_eq!(customers[0]["customerName"], "Anna de Vries");
        assert_eq!(customers[0]["customerId"], "cst_8wmqcHMN2");
        assert_eq!(customers[0]["emailAddress"], "anna@example.nl");
        assert_eq!(customers[0]["phone"], Value::Null);
        assert_eq!(customers[0]["status"], "Active");
        assert_eq!(customers[1]["customerName"], "Piet Mondriaan");
        // Without a name: the e-mail.
        assert_eq!(customers[2]["customerName"], "nameless@example.nl");
        let calls = fake.calls();
        assert_eq!(calls.len(), 2);
        assert_eq!(
            calls[1].query.get("from").map(String::as_str),
            Some("cst_8wmqcHMN3")
        );
    }
}

#[tokio::test]
async fn mollie_has_no_invoices_and_says_so() {
    for backend in backends() {
        let fake = fake().await;
        let app = TestApp::spawn_with(backend, options_for(&fake, Some(PAGE), 1)).await;
        let (company_id, _) = connected(&app, 3600).await;
        let queued = app
            .post_json(
                &format!("/companies/{company_id}/data/queue/invoices"),
                &json!(null),
            )
            .await;
        assert_eq!(queued.status(), 202);
        let queued = json(queued).await;
        assert_eq!(queued[0]["status"], "NotSupported", "{queued}");
        assert_eq!(
            queued[0]["errorMessage"],
            "Mollie has no invoices; it syncs customers, orders."
        );
        crate::sync::settled(&app.client, company_id).await;
        assert!(fake.calls().is_empty(), "nothing asked of Mollie");
    }
}

#[tokio::test]
async fn a_mollie_token_about_to_expire_is_refreshed_first_and_the_rotated_refresh_token_stored() {
    for backend in backends() {
        let fake = fake().await;
        let app = TestApp::spawn_with(backend, options_for(&fake, Some(PAGE), 1)).await;
        set_oauth_client(&app, "mollie").await;
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
        assert_eq!(credentials["refreshToken"], "rt-rotated-1");
        assert_eq!(credentials["organizationId"], ORGANIZATION);
    }
}

#[tokio::test]
async fn a_mollie_token_rejected_mid_sync_is_refreshed_once_and_the_sync_completes() {
    for backend in backends() {
        let fake = fake().await;
        let app = TestApp::spawn_with(backend, options_for(&fake, Some(PAGE), 1)).await;
        set_oauth_client(&app, "mollie").await;
        let (company_id, connection_id) = connected(&app, 3600).await;
        fake.with(|inner| inner.expire_after = Some(1));
        let operations = sync(&app, company_id, QueueDataTypeDataType::Orders).await;
        let operation = latest(&operations, "orders");
        assert_eq!(operation.status, PullStatus::Complete, "{operation:?}");
        assert_eq!(list(&app, company_id, "orders").await.len(), 12);
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
async fn invalid_grant_deauthorizes_the_mollie_connection() {
    for backend in backends() {
        let fake = fake().await;
        let app = TestApp::spawn_with(backend, options_for(&fake, Some(PAGE), 1)).await;
        set_oauth_client(&app, "mollie").await;
        let (company_id, connection_id) = connected(&app, 120).await;
        fake.with(|inner| inner.refresh_token = "revoked-in-the-dashboard".to_owned());
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
async fn mollie_rate_limits_wait_for_retry_after_and_server_errors_are_retried() {
    for backend in backends() {
        let fake = fake().await;
        let app = TestApp::spawn_with(backend, options_for(&fake, Some(PAGE), 1)).await;
        let (company_id, _) = connected(&app, 3600).await;
        fake.with(|inner| {
            inner.scripted.push_back(Answer {
                status: 429,
                headers: vec![("Retry-After".to_owned(), "1".to_owned())],
                body: "{\"status\":429,\"title\":\"Too Many Requests\",\"detail\":\"Too many requests\"}".to_owned(),
            });
            inner.scripted.push_back(Answer::json(
                500,
                "{\"status\":500,\"title\":\"Internal Server Error\",\"detail\":\"Something went wrong\"}",
            ));
        });
        let started = std::time::Instant::now();
        let operations = sync(&app, company_id, QueueDataTypeDataType::Orders).await;
        assert_eq!(latest(&operations, "orders").status, PullStatus::Complete);
        assert!(
            started.elapsed() >= Duration::from_secs(1),
            "Retry-After was honoured"
        );
        assert_eq!(list(&app, company_id, "orders").await.len(), 12);
        // Two failed attempts, then three pages.
        assert_eq!(fake.calls().len(), 5);

        fake.with(|inner| {
            for _ in 0..4 {
                inner.scripted.push_back(Answer::json(
                    503,
                    "{\"status\":503,\"title\":\"Service Unavailable\",\"detail\":\"Service unavailable\"}",
                ));
            }
        });
        let operations = sync(&app, company_id, QueueDataTypeDataType::Orders).await;
        let operation = latest(&operations, "orders");
        assert_eq!(operation.status, PullStatus::Failed);
        let message = operation.error_message.unwrap_or_default();
        assert!(
            message.contains("Mollie answered 503 Service Unavailable"),
            "{message}"
        );
        assert_eq!(list(&app, company_id, "orders").await.len(), 12);
    }
}

#[tokio::test]
async fn a_malformed_mollie_page_fails_the_sync_and_keeps_the_previous_orders() {
    for backend in backends() {
        let fake = fake().await;
        let app = TestApp::spawn_with(backend, options_for(&fake, Some(PAGE), 1)).await;
        let (company_id, _) = connected(&app, 3600).await;
        let operations = sync(&app, company_id, QueueDataTypeDataType::Orders).await;
        assert_eq!(latest(&operations, "orders").status, PullStatus::Complete);
        let before = list(&app, company_id, "orders").await;
        fake.with(|inner| {
            inner
                .scripted
                .push_back(Answer::json(200, fixture("mollie/fixtures/orders-1.json")));
            inner.scripted.push_back(Answer::json(
                200,
                "{\"count\": 5, \"_embedded\": {\"orders\": [{\"id\": \"ord_x\", \"amount\": {\"value\": \"12.5",
            ));
        });
        let operations = sync(&app, company_id, QueueDataTypeDataType::Orders).await;
        let operation = latest(&operations, "orders");
        assert_eq!(operation.status, PullStatus::Failed);
        assert!(
            operation
                .error_message
                .unwrap_or_default()
                .contains("Mollie answered a page of orders that tributary cannot read")
        );
        assert_eq!(list(&app, company_id, "orders").await, before);
    }
}

#[tokio::test]
async fn mollie_verification_at_migration_accepts_the_organizations_token_and_rejects_others() {
    for backend in backends() {
        let fake = fake().await;
        let app = TestApp::spawn_with(backend, options_for(&fake, Some(PAGE), 0)).await;
        let company_id = new_company(&app, "Lego Cars").await;
        let connection_id = new_connection(&app, company_id, "mollie").await;

        let mut wrong = body(3600);
        wrong["accessToken"] = json!("access_not_a_token_mollie_knows");
        let response = authorize(&app, company_id, connection_id, &wrong, true).await;
        assert_eq!(response.status(), 422);
        let message = json(response).await["error"]
            .as_str()
            .unwrap_or_default()
            .to_owned();
        assert!(message.contains("Mollie answered 401"), "{message}");
        assert!(!message.contains("access_not_a_token_mollie_knows"));
        assert_eq!(count_rows(&app, "connection_credential").await, 0);

        let mut elsewhere = body(3600);
        elsewhere["organizationId"] = json!("org_87654321");
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
        assert_eq!(last.path, "/v2/organizations/me");
    }
}
