//! Xero: invoices and contacts over several pages, every status, refresh on
//! a 401 with a rotated refresh token, `invalid_grant`, 429, 5xx, garbage,
//! an unknown tenant, one refresh for concurrent syncs, and verification at
//! migration.

use std::sync::Arc;
use std::time::Duration;

use serde_json::{Value, json};
use uuid::Uuid;

use client::types::{ConnectionStatus, PullStatus, QueueDataTypeDataType};

use super::fake::{Answer, Call, Fake, Scheme, fixture};
use super::{authorize, latest, options_for, set_oauth_client, stored, stored_refresh_token, sync};
use crate::connections::{count_rows, new_company, new_connection};
use crate::helpers::{TestApp, backends, captured_logs, json};

const TENANT: &str = "70784a63-d24b-46a9-a4db-0e70a274b056";
const ACCESS: &str = "xero-access-token-0001";
const REFRESH: &str = "xero-refresh-token-0001";

/// Serves the Xero fixtures: two pages each of invoices and contacts, and
/// `/connections`; an unknown tenant is a 404.
pub(crate) fn router() -> super::fake::Router {
    Arc::new(|call: &Call| {
        if call.path == "/connections" {
            return Answer::json(200, fixture("xero/fixtures/connections.json"));
        }
        if call.headers.get("xero-tenant-id").map(String::as_str) != Some(TENANT) {
            return Answer::json(404, fixture("xero/fixtures/not-found.json"));
        }
        let page = call
            .query
            .get("page")
            .cloned()
            .unwrap_or_else(|| "1".to_owned());
        match call.path.as_str() {
            "/api.xro/2.0/Invoices" => {
                Answer::json(200, fixture(&format!("xero/fixtures/invoices-{page}.json")))
            }
            "/api.xro/2.0/Contacts" => {
                Answer::json(200, fixture(&format!("xero/fixtures/contacts-{page}.json")))
            }
            _ => Answer::json(404, fixture("xero/fixtures/not-found.json")),
        }
    })
}

pub(crate) async fn fake() -> Fake {
    Fake::start(
        "xero",
        Scheme::Bearer,
        ACCESS,
        REFRESH,
        fixture("xero/fixtures/unauthorized.json"),
        router(),
    )
    .await
}

fn body(tenant: &str, expires_in: i64) -> Value {
    json!({"tenantId": tenant, "accessToken": ACCESS, "refreshToken": REFRESH, "expiresIn": expires_in})
}

/// A company with an authorized Xero connection.
pub(crate) async fn connected(app: &TestApp, expires_in: i64) -> (Uuid, Uuid) {
    let company_id = new_company(app, "Maple Florists").await;
    let connection_id = new_connection(app, company_id, "xero").await;
    let response = authorize(
        app,
        company_id,
        connection_id,
        &body(TENANT, expires_in),
        false,
    )
    .await;
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
async fn xero_invoices_and_contacts_sync_over_every_page_with_every_status() {
    for backend in backends() {
        let fake = fake().await;
        let app = TestApp::spawn_with(backend, options_for(&fake, None, 2)).await;
        let (company_id, _) = connected(&app, 1800).await;
        let operations = sync(&app, company_id, QueueDataTypeDataType::Invoices).await;
        assert_eq!(latest(&operations, "invoices").status, PullStatus::Complete);
        let operations = sync(&app, company_id, QueueDataTypeDataType::Customers).await;
        assert_eq!(
            latest(&operations, "customers").status,
            PullStatus::Complete
        );

        let invoices = invoices(&app, company_id).await;
        // Seven sales invoices over two pages; the bill (ACCPAY) is not one.
        assert_eq!(invoices.len(), 7, "{invoices:#?}");
        for (number, status) in [
            ("INV-0001", "Draft"),
            ("INV-0002", "Draft"),
            ("INV-0003", "Submitted"),
            ("INV-0004", "PartiallyPaid"),
            ("INV-0005", "Paid"),
            ("INV-0006", "Void"),
            ("INV-0007", "Void"),
        ] {
            assert_eq!(by_number(&invoices, number)["status"], status, "{number}");
        }
        let authorised = by_number(&invoices, "INV-0003");
        assert_eq!(authorised["totalAmount"], "1127.81");
        assert_eq!(authorised["subTotal"], "939.84");
        assert_eq!(authorised["totalTaxAmount"], "187.97");
        assert_eq!(authorised["amountDue"], "1127.81");
        assert_eq!(authorised["issueDate"], "2026-10-03");
        assert_eq!(authorised["currency"], "GBP");
        assert_eq!(authorised["customerRef"]["companyName"], "Acme Trading Ltd");
        assert_eq!(authorised["lineItems"][0]["totalAmount"], "1127.81");
        let paid = by_number(&invoices, "INV-0005");
        assert_eq!(paid["paidOnDate"], "2026-10-20");
        assert_eq!(paid["amountDue"], "0.00");

        let customers = json(
            app.get(&format!(
                "/companies/{company_id}/data/customers?pageSize=100"
            ))
            .await,
        )
        .await;
        let names: Vec<&str> = customers["results"]
            .as_array()
            .expect("results")
            .iter()
            .filter_map(|customer| customer["customerName"].as_str())
            .collect();
        assert_eq!(
            names,
            ["Acme Trading Ltd", "Brightside Cafe", "Old Customer plc"]
        );
        let archived = customers["results"]
            .as_array()
            .and_then(|all| all.iter().find(|c| c["customerName"] == "Old Customer plc"))
            .expect("archived customer");
        assert_eq!(archived["status"], "Archived");

        let calls = fake.calls();
        assert!(calls.iter().all(|call| call.token == ACCESS));
        assert!(calls.iter().any(|call| call.path == "/api.xro/2.0/Invoices"
            && call.query.get("page").map(String::as_str) == Some("2")));
        assert!(calls.iter().any(|call| call.path == "/api.xro/2.0/Contacts"
            && call.query.get("page").map(String::as_str) == Some("2")));
        assert_eq!(
            fake.token_calls(),
            0,
            "a token valid for 30 minutes is not refreshed"
        );
    }
}

#[tokio::test]
async fn an_access_token_rejected_mid_sync_is_refreshed_and_the_rotated_refresh_token_is_stored_before_use()
 {
    for backend in backends() {
        let fake = fake().await;
        let app = TestApp::spawn_with(backend, options_for(&fake, None, 1)).await;
        set_oauth_client(&app, "xero").await;
        let (company_id, connection_id) = connected(&app, 1800).await;
        fake.with(|inner| {
            inner.expire_after = Some(1);
            inner.on_new_token = Some(stored_refresh_token(&app, connection_id));
        });
        let operations = sync(&app, company_id, QueueDataTypeDataType::Invoices).await;
        let operation = latest(&operations, "invoices");
        assert_eq!(operation.status, PullStatus::Complete, "{operation:?}");
        assert_eq!(invoices(&app, company_id).await.len(), 7);
        assert_eq!(fake.token_calls(), 1);
        // When the platform first saw the new access token, the rotated
        // refresh token was already in the database.
        assert_eq!(
            fake.with(|inner| inner.stored_at_first_use.clone()),
            [Some("rt-rotated-1".to_owned())]
        );
        let credentials = stored(&app, connection_id).await;
        assert_eq!(credentials["accessToken"], "at-refreshed-1");
        assert_eq!(credentials["refreshToken"], "rt-rotated-1");
        assert_eq!(credentials["tenantId"], TENANT);
        // The connection shows the new expiry.
        let connection = json(
            app.get(&format!(
                "/companies/{company_id}/connections/{connection_id}"
            ))
            .await,
        )
        .await;
        let expires = connection["authorization"]["accessTokenExpiresAt"]
            .as_str()
            .expect("an expiry");
        let expires = chrono::DateTime::parse_from_rfc3339(expires).expect("RFC 3339");
        assert!(expires > chrono::Utc::now() + chrono::Duration::minutes(25));
        let logs = captured_logs();
        for secret in [
            ACCESS,
            REFRESH,
            "at-refreshed-1",
            "rt-rotated-1",
            super::fake::CLIENT_SECRET,
        ] {
            assert!(!logs.contains(secret), "a secret reached the logs");
        }
    }
}

#[tokio::test]
async fn invalid_grant_deauthorizes_the_connection_with_the_platforms_message() {
    for backend in backends() {
        let fake = fake().await;
        let app = TestApp::spawn_with(backend, options_for(&fake, None, 1)).await;
        set_oauth_client(&app, "xero").await;
        // Expiring within five minutes: refreshed before the first call.
        let (company_id, connection_id) = connected(&app, 120).await;
        fake.with(|inner| inner.refresh_token = "someone-else-used-it".to_owned());
        let operations = sync(&app, company_id, QueueDataTypeDataType::Invoices).await;
        let operation = latest(&operations, "invoices");
        assert_eq!(operation.status, PullStatus::AuthError);
        let message = operation.error_message.unwrap_or_default();
        assert!(
            message.contains("invalid_grant") && message.contains("already used"),
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
async fn a_refresh_without_an_oauth_client_fails_without_deauthorizing() {
    for backend in backends() {
        let fake = fake().await;
        let app = TestApp::spawn_with(backend, options_for(&fake, None, 1)).await;
        let (company_id, connection_id) = connected(&app, 60).await;
        let operations = sync(&app, company_id, QueueDataTypeDataType::Invoices).await;
        let operation = latest(&operations, "invoices");
        assert_eq!(operation.status, PullStatus::Failed);
        assert!(
            operation
                .error_message
                .unwrap_or_default()
                .contains("/integrations/xero/oauth-client")
        );
        let connection = app
            .client
            .get_connection(&company_id, &connection_id)
            .await
            .expect("found")
            .into_inner();
        assert_eq!(connection.status, ConnectionStatus::Linked);
    }
}

#[tokio::test]
async fn a_transient_token_endpoint_failure_is_retried_and_does_not_deauthorize() {
    for backend in backends() {
        let fake = fake().await;
        let app = TestApp::spawn_with(backend, options_for(&fake, None, 1)).await;
        set_oauth_client(&app, "xero").await;
        let (company_id, connection_id) = connected(&app, 60).await;
        fake.with(|inner| {
            inner.token_error = Some(Answer::json(503, "{\"error\":\"temporarily_unavailable\"}"))
        });
        let operations = sync(&app, company_id, QueueDataTypeDataType::Invoices).await;
        let operation = latest(&operations, "invoices");
        assert_eq!(operation.status, PullStatus::Failed);
        assert!(
            operation
                .error_message
                .unwrap_or_default()
                .contains("gave up after 4 attempts")
        );
        assert_eq!(fake.token_calls(), 4);
        let connection = app
            .client
            .get_connection(&company_id, &connection_id)
            .await
            .expect("found")
            .into_inner();
        assert_eq!(connection.status, ConnectionStatus::Linked);
    }
}

#[tokio::test]
async fn rate_limits_wait_for_retry_after_and_server_errors_are_retried() {
    for backend in backends() {
        let fake = fake().await;
        let app = TestApp::spawn_with(backend, options_for(&fake, None, 1)).await;
        let (company_id, _) = connected(&app, 1800).await;
        fake.with(|inner| {
            inner.scripted.push_back(Answer {
                status: 429,
                headers: vec![("Retry-After".to_owned(), "1".to_owned())],
                body: "{\"Title\":\"Too Many Requests\",\"Status\":429}".to_owned(),
            });
            inner.scripted.push_back(Answer::json(
                500,
                "{\"Title\":\"Internal Server Error\",\"Status\":500}",
            ));
        });
        let started = std::time::Instant::now();
        let operations = sync(&app, company_id, QueueDataTypeDataType::Invoices).await;
        assert_eq!(latest(&operations, "invoices").status, PullStatus::Complete);
        assert!(
            started.elapsed() >= Duration::from_secs(1),
            "Retry-After was honoured"
        );
        assert_eq!(invoices(&app, company_id).await.len(), 7);
        // Two failed attempts, then both pages.
        assert_eq!(fake.calls().len(), 4);

        // A platform that keeps failing: the operation says what it answered.
        fake.with(|inner| {
            for _ in 0..4 {
                inner.scripted.push_back(Answer::json(500, "{\"Title\":\"Internal Server Error\",\"Status\":500,\"Detail\":\"Xero is having a bad day\"}"));
            }
        });
        let operations = sync(&app, company_id, QueueDataTypeDataType::Invoices).await;
        let operation = latest(&operations, "invoices");
        assert_eq!(operation.status, PullStatus::Failed);
        let message = operation.error_message.unwrap_or_default();
        assert!(
            message.contains("Xero answered 500 Internal Server Error: Xero is having a bad day"),
            "{message}"
        );
        // A Retry-After beyond the cap fails at once.
        fake.with(|inner| {
            inner.scripted.push_back(Answer {
                status: 429,
                headers: vec![("Retry-After".to_owned(), "3600".to_owned())],
                body: "{\"Title\":\"Too Many Requests\",\"Status\":429,\"Detail\":\"daily limit reached\"}".to_owned(),
            });
        });
        let operations = sync(&app, company_id, QueueDataTypeDataType::Invoices).await;
        let message = latest(&operations, "invoices")
            .error_message
            .unwrap_or_default();
        assert!(
            message.contains("429")
                && message.contains("daily limit reached")
                && message.contains("3600 s"),
            "{message}"
        );
        // The data of the first sync is still served.
        assert_eq!(invoices(&app, company_id).await.len(), 7);
    }
}

#[tokio::test]
async fn a_malformed_answer_fails_the_sync_and_keeps_the_previous_data() {
    for backend in backends() {
        let fake = fake().await;
        let app = TestApp::spawn_with(backend, options_for(&fake, None, 1)).await;
        let (company_id, _) = connected(&app, 1800).await;
        let operations = sync(&app, company_id, QueueDataTypeDataType::Invoices).await;
        assert_eq!(latest(&operations, "invoices").status, PullStatus::Complete);
        let before = invoices(&app, company_id).await;
        // Page 1 is fine, page 2 is cut off mid-way.
        fake.with(|inner| {
            inner
                .scripted
                .push_back(Answer::json(200, fixture("xero/fixtures/invoices-1.json")));
            inner.scripted.push_back(Answer::json(
                200,
                "{\"Invoices\": [{\"InvoiceID\": \"x\", \"Total\": 12.5",
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
async fn an_unknown_tenant_fails_with_the_platforms_404() {
    for backend in backends() {
        let fake = fake().await;
        let app = TestApp::spawn_with(backend, options_for(&fake, None, 1)).await;
        let company_id = new_company(&app, "Nobody").await;
        let connection_id = new_connection(&app, company_id, "xero").await;
        let unknown = "11111111-2222-4333-8444-555555555555";
        assert_eq!(
            authorize(&app, company_id, connection_id, &body(unknown, 1800), false)
                .await
                .status(),
            200
        );
        let operations = sync(&app, company_id, QueueDataTypeDataType::Invoices).await;
        let operation = latest(&operations, "invoices");
        assert_eq!(operation.status, PullStatus::Failed);
        let message = operation.error_message.unwrap_or_default();
        assert!(message.contains("Xero answered 404 Not Found: The organisation for this tenant id could not be found"), "{message}");
    }
}

#[tokio::test]
async fn two_syncs_needing_a_refresh_at_once_make_exactly_one_refresh_call() {
    for backend in backends() {
        let fake = fake().await;
        let app = TestApp::spawn_with(backend, options_for(&fake, None, 2)).await;
        // A second process on the same database competes too.
        app.another_instance(options_for(&fake, None, 2)).await;
        set_oauth_client(&app, "xero").await;
        let (company_id, connection_id) = connected(&app, 60).await;
        fake.with(|inner| inner.token_delay = Duration::from_millis(300));
        app.client.sync_all_data(&company_id).await.expect("queued");
        let operations = crate::sync::settled(&app.client, company_id).await;
        assert!(
            operations
                .iter()
                .all(|operation| operation.status == PullStatus::Complete),
            "{operations:?}"
        );
        assert_eq!(fake.token_calls(), 1);
        assert!(
            fake.calls()
                .iter()
                .all(|call| call.token == "at-refreshed-1")
        );
        assert_eq!(
            stored(&app, connection_id).await["refreshToken"],
            "rt-rotated-1"
        );
    }
}

#[tokio::test]
async fn verification_at_migration_accepts_working_tokens_and_rejects_others_storing_nothing() {
    for backend in backends() {
        let fake = fake().await;
        let app = TestApp::spawn_with(backend, options_for(&fake, None, 0)).await;
        let company_id = new_company(&app, "Maple Florists").await;

        // Rejected by Xero: 422 with its reason, nothing stored.
        let connection_id = new_connection(&app, company_id, "xero").await;
        let mut wrong = body(TENANT, 1800);
        wrong["accessToken"] = json!("not-a-token-xero-knows");
        let response = authorize(&app, company_id, connection_id, &wrong, true).await;
        assert_eq!(response.status(), 422);
        let error = json(response).await;
        let message = error["error"].as_str().unwrap_or_default();
        assert!(message.contains("TokenExpired"), "{message}");
        assert!(!message.contains("not-a-token-xero-knows"));
        assert_eq!(count_rows(&app, "connection_credential").await, 0);
        let connection = app
            .client
            .get_connection(&company_id, &connection_id)
            .await
            .expect("found")
            .into_inner();
        assert_eq!(connection.status, ConnectionStatus::PendingAuth);

        // A token that works, but not for this tenant.
        let other = body("11111111-2222-4333-8444-555555555555", 1800);
        let response = authorize(&app, company_id, connection_id, &other, true).await;
        assert_eq!(response.status(), 422);
        assert!(
            json(response).await["error"]
                .as_str()
                .unwrap_or_default()
                .contains("not connected to tenant")
        );

        // Accepted: one call to GET /connections, then stored and linked.
        let response = authorize(&app, company_id, connection_id, &body(TENANT, 1800), true).await;
        assert_eq!(response.status(), 200);
        assert_eq!(json(response).await["status"], "Linked");
        assert_eq!(
            fake.calls().last().map(|call| call.path.clone()).as_deref(),
            Some("/connections")
        );

        // Already expired: verified by a refresh, whose rotated tokens are stored.
        set_oauth_client(&app, "xero").await;
        let second = new_connection(&app, company_id, "xero").await;
        let mut expired = body(TENANT, 0);
        expired
            .as_object_mut()
            .expect("an object")
            .remove("expiresIn");
        expired["expiresAt"] = json!("2026-01-01T00:00:00Z");
        let response = authorize(&app, company_id, second, &expired, true).await;
        assert_eq!(response.status(), 200);
        assert_eq!(fake.token_calls(), 1);
        let credentials = stored(&app, second).await;
        assert_eq!(credentials["refreshToken"], "rt-rotated-1");
        assert_eq!(credentials["accessToken"], "at-refreshed-1");

        // An expired token whose refresh is refused: 422, nothing stored.
        let third = new_connection(&app, company_id, "xero").await;
        let response = authorize(&app, company_id, third, &expired, true).await;
        assert_eq!(response.status(), 422);
        assert!(
            json(response).await["error"]
                .as_str()
                .unwrap_or_default()
                .contains("invalid_grant")
        );
        assert!(
            tributary::connections::open_credential(&app.db, &app.keyring, third)
                .await
                .expect("readable")
                .is_none()
        );

        // Without verify nothing is called.
        let calls = fake.calls().len();
        let fourth = new_connection(&app, company_id, "xero").await;
        assert_eq!(
            authorize(&app, company_id, fourth, &wrong, false)
                .await
                .status(),
            200
        );
        assert_eq!(fake.calls().len(), calls);
    }
}
