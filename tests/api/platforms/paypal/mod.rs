//! PayPal: invoices over several numbered pages (each invoice's detail
//! fetched after the list's summary), every documented status, exact money
//! in USD and JPY, refresh before use and on a 401 with HTTP Basic (PayPal
//! keeps its refresh token), `invalid_grant`, 429, 5xx, garbage, the data
//! types PayPal lacks (customers among them), and verification. Fixtures
//! follow PayPal's invoice samples (list and show invoice, Invoicing API v2;
//! see `src/platforms/paypal/NOTES.md`).

use std::sync::Arc;
use std::time::Duration;

use serde_json::{Value, json};
use uuid::Uuid;

use client::types::{ConnectionStatus, PullStatus, QueueDataTypeDataType};

use super::fake::{Answer, Call, Fake, Scheme, fixture};
use super::{authorize, latest, options_for, set_oauth_client, stored, stored_refresh_token, sync};
use crate::connections::{count_rows, new_company, new_connection};
use crate::helpers::{TestApp, backends, captured_logs, json};

pub const PAYER: &str = "QUE6Y6N9W3ZXL";
const ACCESS: &str = "paypal-access-token-0001";
const REFRESH: &str = "paypal-refresh-token-0001";
/// Invoices per page in these tests.
const PAGE: u64 = 3;
const LIST: &str = "/v2/invoicing/invoices";

/// One invoice's detail, by id, from the fixture of all twelve.
fn detail(id: &str) -> Option<Value> {
    let all: Value =
        serde_json::from_str(&fixture("paypal/fixtures/invoice-details.json")).expect("JSON");
    all.as_array()?
        .iter()
        .find(|invoice| invoice["id"] == id)
        .cloned()
}

/// Serves the PayPal fixtures: four list pages of three summaries, and each
/// invoice's detail.
fn router() -> super::fake::Router {
    Arc::new(|call: &Call| {
        if call.path == "/v1/identity/oauth2/userinfo" {
            if call.query.get("schema").map(String::as_str) != Some("paypalv1.1") {
                return Answer::json(400, "{\"name\":\"INVALID_REQUEST\"}");
            }
            return Answer::json(200, fixture("paypal/fixtures/userinfo.json"));
        }
        if call.path == LIST {
            let page = call.query.get("page").cloned().unwrap_or_default();
            return match page.as_str() {
                "1" | "2" | "3" | "4" => Answer::json(
                    200,
                    fixture(&format!("paypal/fixtures/invoices-{page}.json")),
                ),
                _ => Answer::json(
                    200,
                    json!({"total_items": 12, "total_pages": 4, "items": []}).to_string(),
                ),
            };
        }
        match call
            .path
            .strip_prefix("/v2/invoicing/invoices/")
            .and_then(detail)
        {
            Some(invoice) => Answer::json(200, invoice.to_string()),
            None => Answer::json(404, fixture("paypal/fixtures/not-found.json")),
        }
    })
}

pub async fn fake() -> Fake {
    let fake = Fake::start(
        "paypal",
        Scheme::Bearer,
        ACCESS,
        REFRESH,
        fixture("paypal/fixtures/unauthorized.json"),
        router(),
    )
    .await;
    // PayPal's refresh answer carries no refresh token.
    fake.with(|inner| inner.rotate = false);
    fake
}

fn body(expires_in: i64) -> Value {
    json!({"payerId": PAYER, "environment": "sandbox", "accessToken": ACCESS, "refreshToken": REFRESH, "expiresIn": expires_in})
}

/// A company with an authorized PayPal connection.
async fn connected(app: &TestApp, expires_in: i64) -> (Uuid, Uuid) {
    let company_id = new_company(app, "Meyers Yoga").await;
    let connection_id = new_connection(app, company_id, "paypal").await;
    let response = authorize(app, company_id, connection_id, &body(expires_in), false).await;
    assert_eq!(response.status(), 200);
    (company_id, connection_id)
}

async fn invoices(app: &TestApp, company_id: Uuid) -> Vec<Value> {
    let page = json(
        app.get(&format!(
            "/companies/{company_id}/data/invoices?pageSize=100"
        ))
        .await,
    )
    .await;
    page["results"].as_array().cloned().unwrap_or_default()
}

fn by_number<'a>(invoices: &'a [Value], number: &str) -> &'a Value {
    invoices
        .iter()
        .find(|invoice| invoice["invoiceNumber"] == number)
        .unwrap_or_else(|| panic!("invoice {number} synced"))
}

#[tokio::test]
async fn paypal_invoices_sync_over_every_page_with_every_status_and_exact_money() {
    for backend in backends() {
        let fake = fake().await;
        let app = TestApp::spawn_with(backend, options_for(&fake, Some(PAGE), 2)).await;
        let (company_id, _) = connected(&app, 3600).await;
        let operations = sync(&app, company_id, QueueDataTypeDataType::Invoices).await;
        let operation = latest(&operations, "invoices");
        assert_eq!(operation.status, PullStatus::Complete, "{operation:?}");

        let invoices = invoices(&app, company_id).await;
        assert_eq!(invoices.len(), 12, "{invoices:#?}");
        for (number, status) in [
            ("0001", "Draft"),
            ("0002", "Draft"),
            ("0003", "Submitted"),
            ("0004", "Submitted"),
            ("0005", "Submitted"),
            ("0006", "PartiallyPaid"),
            ("0007", "Paid"),
            ("0008", "Paid"),
            ("0009", "Paid"),
            ("0010", "Void"),
            ("0011", "Void"),
            ("0012", "Void"),
        ] {
            assert_eq!(by_number(&invoices, number)["status"], status, "{number}");
        }
        // Newest invoice date first.
        assert_eq!(invoices[0]["invoiceNumber"], "0012");

        let sent = by_number(&invoices, "0003");
        assert_eq!(sent["invoiceId"], "INV2-TEST-0003-Q52L-CPZ5");
        assert_eq!(sent["currency"], "USD");
        assert_eq!(sent["totalAmount"], "74.21");
        assert_eq!(sent["totalTaxAmount"], "4.34");
        assert_eq!(sent["subTotal"], "69.87");
        assert_eq!(sent["amountDue"], "74.21");
        assert_eq!(sent["issueDate"], "2026-10-03");
        assert_eq!(sent["dueDate"], "2026-10-13");
        assert_eq!(sent["paidOnDate"], Value::Null);
        assert_eq!(sent["note"], "Thank you for your business.");
        assert_eq!(sent["sourceModifiedDate"], "2026-10-03T09:30:00.000000Z");
        assert_eq!(sent["customerRef"]["id"], "bill-me@example.com");
        assert_eq!(sent["customerRef"]["companyName"], "Stephanie Meyers");
        let mat = &sent["lineItems"][0];
        assert_eq!(
            mat["description"],
            "Yoga Mat: Elastic mat to practice yoga."
        );
        assert_eq!(mat["quantity"], "1");
        assert_eq!(mat["unitAmount"], "50.00");
        assert_eq!(mat["discountAmount"], "2.50");
        assert_eq!(mat["subTotal"], "47.50");
        assert_eq!(mat["taxAmount"], "3.27");
        assert_eq!(mat["totalAmount"], "50.77");
        assert_eq!(sent["lineItems"][1]["description"], "Yoga T Shirt");
        assert_eq!(sent["lineItems"][1]["totalAmount"], "5.34");

        let part_paid = by_number(&invoices, "0006");
        assert_eq!(part_paid["amountDue"], "54.21");
        assert_eq!(part_paid["paidOnDate"], Value::Null);
        let paid = by_number(&invoices, "0007");
        assert_eq!(paid["amountDue"], "0.00");
        // The latest of its payments.
        assert_eq!(paid["paidOnDate"], "2026-10-21");
        assert_eq!(paid["customerRef"]["companyName"], "Meyers Yoga LLC");
        // Yen are whole: "5500" is ¥5,500.
        let yen = by_number(&invoices, "0008");
        assert_eq!(yen["currency"], "JPY");
        assert_eq!(yen["totalAmount"], "5500.00");
        assert_eq!(yen["totalTaxAmount"], "500.00");
        assert_eq!(yen["subTotal"], "5000.00");
        assert_eq!(yen["lineItems"][0]["unitAmount"], "2500.00");
        assert_eq!(yen["lineItems"][0]["totalAmount"], "5500.00");
        assert_eq!(yen["paidOnDate"], "2026-10-20");
        assert_eq!(by_number(&invoices, "0012")["amountDue"], "74.21");

        let calls = fake.calls();
        assert!(calls.iter().all(|call| call.token == ACCESS));
        let pages: Vec<(String, String, String)> = calls
            .iter()
            .filter(|call| call.path == LIST)
            .map(|call| {
                let get = |name: &str| call.query.get(name).cloned().unwrap_or_default();
                (get("page"), get("page_size"), get("total_required"))
            })
            .collect();
        let expected: Vec<(String, String, String)> = (1..=4)
            .map(|page| (page.to_string(), "3".to_owned(), "true".to_owned()))
            .collect();
        assert_eq!(pages, expected);
        assert_eq!(
            calls
                .iter()
                .filter(|call| call.path.starts_with("/v2/invoicing/invoices/INV2-"))
                .count(),
            12,
            "each invoice's detail once"
        );
        assert_eq!(
            fake.token_calls(),
            0,
            "a token valid for an hour is not refreshed"
        );
    }
}

#[tokio::test]
async fn paypal_has_no_customers_orders_or_bank_data_and_says_so() {
    for backend in backends() {
        let fake = fake().await;
        let app = TestApp::spawn_with(backend, options_for(&fake, Some(PAGE), 1)).await;
        let (company_id, _) = connected(&app, 3600).await;
        for data_type in ["customers", "orders", "bankAccounts", "bankTransactions"] {
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
            assert!(
                message.starts_with("PayPal has no ") && message.ends_with("; it syncs invoices."),
                "{message}"
            );
        }
        crate::sync::settled(&app.client, company_id).await;
        assert!(fake.calls().is_empty(), "nothing asked of PayPal");
        let integration = json(app.get("/integrations/paypal").await).await;
        assert_eq!(
            integration["dataTypes"],
            json!(["invoices"]),
            "{integration}"
        );
    }
}

#[tokio::test]
async fn a_paypal_token_about_to_expire_is_refreshed_first_with_http_basic_and_paypal_keeps_its_refresh_token()
 {
    for backend in backends() {
        let fake = fake().await;
        let app = TestApp::spawn_with(backend, options_for(&fake, Some(PAGE), 1)).await;
        set_oauth_client(&app, "paypal").await;
        let (company_id, connection_id) = connected(&app, 60).await;
        let operations = sync(&app, company_id, QueueDataTypeDataType::Invoices).await;
        assert_eq!(latest(&operations, "invoices").status, PullStatus::Complete);
        // Refreshed before the first call (the fake only accepts HTTP Basic).
        assert_eq!(fake.token_calls(), 1);
        assert!(
            fake.calls()
                .iter()
                .all(|call| call.token == "at-refreshed-1")
        );
        let credentials = stored(&app, connection_id).await;
        assert_eq!(credentials["accessToken"], "at-refreshed-1");
        assert_eq!(credentials["refreshToken"], REFRESH);
        assert_eq!(credentials["payerId"], PAYER);
        assert_eq!(credentials["environment"], "sandbox");
    }
}

#[tokio::test]
async fn a_paypal_token_rejected_mid_sync_is_refreshed_once_and_the_sync_completes() {
    for backend in backends() {
        let fake = fake().await;
        let app = TestApp::spawn_with(backend, options_for(&fake, Some(PAGE), 1)).await;
        set_oauth_client(&app, "paypal").await;
        let (company_id, connection_id) = connected(&app, 3600).await;
        fake.with(|inner| {
            inner.expire_after = Some(2);
            inner.on_new_token = Some(stored_refresh_token(&app, connection_id));
        });
        let operations = sync(&app, company_id, QueueDataTypeDataType::Invoices).await;
        let operation = latest(&operations, "invoices");
        assert_eq!(operation.status, PullStatus::Complete, "{operation:?}");
        assert_eq!(invoices(&app, company_id).await.len(), 12);
        assert_eq!(fake.token_calls(), 1);
        // PayPal did not rotate it: the stored refresh token is still the first.
        assert_eq!(
            fake.with(|inner| inner.stored_at_first_use.clone()),
            [Some(REFRESH.to_owned())]
        );
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
async fn a_paypal_invalid_grant_deauthorizes_the_connection() {
    for backend in backends() {
        let fake = fake().await;
        let app = TestApp::spawn_with(backend, options_for(&fake, Some(PAGE), 1)).await;
        set_oauth_client(&app, "paypal").await;
        let (company_id, connection_id) = connected(&app, 120).await;
        fake.with(|inner| inner.refresh_token = "revoked-by-paypal".to_owned());
        let operations = sync(&app, company_id, QueueDataTypeDataType::Invoices).await;
        let operation = latest(&operations, "invoices");
        assert_eq!(operation.status, PullStatus::AuthError);
        let message = operation.error_message.unwrap_or_default();
        assert!(
            message.contains("PayPal") && message.contains("invalid_grant"),
            "{message}"
        );
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
async fn paypal_rate_limits_wait_for_retry_after_and_server_errors_are_retried() {
    for backend in backends() {
        let fake = fake().await;
        let app = TestApp::spawn_with(backend, options_for(&fake, Some(PAGE), 1)).await;
        let (company_id, _) = connected(&app, 3600).await;
        fake.with(|inner| {
            inner.scripted.push_back(Answer {
                status: 429,
                headers: vec![("Retry-After".to_owned(), "1".to_owned())],
                body: "{\"name\":\"RATE_LIMIT_REACHED\",\"message\":\"Too many requests. Blocked due to rate limiting.\"}".to_owned(),
            });
            inner.scripted.push_back(Answer::json(
                500,
                "{\"name\":\"INTERNAL_SERVER_ERROR\",\"message\":\"An internal server error occurred.\"}",
            ));
        });
        let started = std::time::Instant::now();
        let operations = sync(&app, company_id, QueueDataTypeDataType::Invoices).await;
        assert_eq!(latest(&operations, "invoices").status, PullStatus::Complete);
        assert!(
            started.elapsed() >= Duration::from_secs(1),
            "Retry-After was honoured"
        );
        assert_eq!(invoices(&app, company_id).await.len(), 12);
        // Two failed attempts, then four pages and twelve details.
        assert_eq!(fake.calls().len(), 2 + 4 + 12);

        fake.with(|inner| {
            for _ in 0..4 {
                inner.scripted.push_back(Answer::json(
                    503,
                    "{\"name\":\"SERVICE_UNAVAILABLE\",\"message\":\"Service Unavailable.\"}",
                ));
            }
        });
        let operations = sync(&app, company_id, QueueDataTypeDataType::Invoices).await;
        let operation = latest(&operations, "invoices");
        assert_eq!(operation.status, PullStatus::Failed);
        let message = operation.error_message.unwrap_or_default();
        assert!(
            message.contains("PayPal answered 503 Service Unavailable: Service Unavailable."),
            "{message}"
        );
        assert_eq!(invoices(&app, company_id).await.len(), 12);
    }
}

#[tokio::test]
async fn a_malformed_paypal_answer_fails_the_sync_and_keeps_the_previous_data() {
    for backend in backends() {
        let fake = fake().await;
        let app = TestApp::spawn_with(backend, options_for(&fake, Some(PAGE), 1)).await;
        let (company_id, _) = connected(&app, 3600).await;
        let operations = sync(&app, company_id, QueueDataTypeDataType::Invoices).await;
        assert_eq!(latest(&operations, "invoices").status, PullStatus::Complete);
        let before = invoices(&app, company_id).await;
        // The list's first page is fine, the first invoice's detail is cut off.
        fake.with(|inner| {
            inner.scripted.push_back(Answer::json(
                200,
                fixture("paypal/fixtures/invoices-1.json"),
            ));
            inner.scripted.push_back(Answer::json(
                200,
                "{\"id\": \"INV2-TEST-0001-Q52L-CPZ5\", \"amount\": {\"value\": \"12.5",
            ));
        });
        let operations = sync(&app, company_id, QueueDataTypeDataType::Invoices).await;
        let operation = latest(&operations, "invoices");
        assert_eq!(operation.status, PullStatus::Failed);
        assert!(
            operation
                .error_message
                .unwrap_or_default()
                .contains("cannot read")
        );
        assert_eq!(invoices(&app, company_id).await, before);
    }
}

#[tokio::test]
async fn paypal_verification_accepts_a_working_token_and_rejects_others_storing_nothing() {
    for backend in backends() {
        let fake = fake().await;
        let app = TestApp::spawn_with(backend, options_for(&fake, Some(PAGE), 0)).await;
        let company_id = new_company(&app, "Meyers Yoga").await;
        let connection_id = new_connection(&app, company_id, "paypal").await;

        let mut wrong = body(3600);
        wrong["accessToken"] = json!("not-a-token-paypal-knows");
        let response = authorize(&app, company_id, connection_id, &wrong, true).await;
        assert_eq!(response.status(), 422);
        let message = json(response).await["error"]
            .as_str()
            .unwrap_or_default()
            .to_owned();
        assert!(message.contains("Authentication failed"), "{message}");
        assert!(!message.contains("not-a-token-paypal-knows"));
        assert_eq!(count_rows(&app, "connection_credential").await, 0);
        let connection = app
            .client
            .get_connection(&company_id, &connection_id)
            .await
            .expect("found")
            .into_inner();
        assert_eq!(connection.status, ConnectionStatus::PendingAuth);

        let response = authorize(&app, company_id, connection_id, &body(3600), true).await;
        assert_eq!(response.status(), 200);
        assert_eq!(json(response).await["status"], "Linked");
        let last = fake.calls().last().cloned().expect("a call");
        assert_eq!(last.path, LIST);
        assert_eq!(last.query.get("page_size").map(String::as_str), Some("1"));
        assert_eq!(stored(&app, connection_id).await["accessToken"], ACCESS);
    }
}
