//! Sage Business Cloud Accounting: sales invoices and customer contacts
//! over several pages (`page`/`items_per_page` until `$next` is null) for
//! the business in `X-Business`, every status (and an unknown id decided by
//! the amounts), exact amounts from JSON numbers, line items; refresh on a
//! 401 with the rotated refresh token stored before use, `invalid_grant`,
//! 429, 5xx, garbage, an unknown business, and verification through
//! `GET /businesses`. Fixtures follow the documented shapes (NOTES.md §6, §8).

use std::sync::Arc;
use std::time::Duration;

use serde_json::{Value, json};
use uuid::Uuid;

use client::types::{ConnectionStatus, PullStatus, QueueDataTypeDataType};

use super::fake::{Answer, Call, Fake, Scheme, fixture};
use super::{authorize, latest, options_for, set_oauth_client, stored, stored_refresh_token, sync};
use crate::connections::{count_rows, new_company, new_connection};
use crate::helpers::{TestApp, backends, captured_logs, json};

const KEY: &str = "sage-business-cloud";
const BUSINESS: &str = "0d40342d0287cd6b13555c54afca6c90";
const OTHER_BUSINESS: &str = "11111111111111111111111111111111";
const ACCESS: &str = "sage-access-token-0001";
const REFRESH: &str = "sage-refresh-token-0001";

/// Serves the Sage fixtures: two pages each of sales invoices and contacts,
/// and `/businesses`; another business is not found.
fn router() -> super::fake::Router {
    Arc::new(|call: &Call| {
        let not_found = || {
            Answer::json(
                404,
                fixture("sage_business_cloud/fixtures/business-not-found.json"),
            )
        };
        if call.path == "/businesses" {
            return Answer::json(200, fixture("sage_business_cloud/fixtures/businesses.json"));
        }
        if call.headers.get("x-business").map(String::as_str) != Some(BUSINESS) {
            return not_found();
        }
        let query = |name: &str| call.query.get(name).map(String::as_str);
        if query("attributes") != Some("all") || query("items_per_page").is_none() {
            return Answer::json(
                422,
                "[{\"$severity\":\"error\",\"$dataCode\":\"InvalidRequest\",\"$message\":\"attributes=all and items_per_page expected by this fake\",\"$source\":\"\"}]",
            );
        }
        let page = query("page").unwrap_or("1");
        match call.path.as_str() {
            "/sales_invoices" => Answer::json(
                200,
                fixture(&format!(
                    "sage_business_cloud/fixtures/sales_invoices-{page}.json"
                )),
            ),
            "/contacts" if query("contact_type_id") == Some("CUSTOMER") => Answer::json(
                200,
                fixture(&format!(
                    "sage_business_cloud/fixtures/contacts-{page}.json"
                )),
            ),
            _ => not_found(),
        }
    })
}

pub(crate) async fn fake() -> Fake {
    let fake = Fake::start(
        "sage-business-cloud",
        Scheme::Bearer,
        ACCESS,
        REFRESH,
        fixture("sage_business_cloud/fixtures/unauthorized.json"),
        router(),
    )
    .await;
    // Sage takes the client credentials in the form body.
    fake.with(|inner| inner.client_in_body = true);
    fake
}

fn body(business: &str, expires_in: i64) -> Value {
    json!({"businessId": business, "accessToken": ACCESS, "refreshToken": REFRESH, "expiresIn": expires_in})
}

/// A company with an authorized Sage connection.
async fn connected(app: &TestApp, expires_in: i64) -> (Uuid, Uuid) {
    let company_id = new_company(app, "Acme Garden Centre Ltd").await;
    let connection_id = new_connection(app, company_id, KEY).await;
    let response = authorize(
        app,
        company_id,
        connection_id,
        &body(BUSINESS, expires_in),
        false,
    )
    .await;
    assert_eq!(response.status(), 200);
    (company_id, connection_id)
}

async fn list(app: &TestApp, company_id: Uuid, data_type: &str) -> Vec<Value> {
    let page = json(
        app.get(&format!(
            "/companies/{company_id}/data/{data_type}?pageSize=100"
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

async fn connection_status(
    app: &TestApp,
    company_id: Uuid,
    connection_id: Uuid,
) -> ConnectionStatus {
    app.client
        .get_connection(&company_id, &connection_id)
        .await
        .expect("found")
        .into_inner()
        .status
}

#[tokio::test]
async fn sage_sales_invoices_and_customers_sync_over_every_page_with_every_status() {
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

        let invoices = list(&app, company_id, "invoices").await;
        assert_eq!(invoices.len(), 6, "{invoices:#?}");
        for (number, status) in [
            ("SI-1", "Draft"),
            ("SI-2", "Submitted"),
            ("SI-3", "PartiallyPaid"),
            ("SI-4", "Paid"),
            ("SI-5", "Void"),
            // An id the sources do not list: the amounts decide.
            ("SI-6", "PartiallyPaid"),
        ] {
            assert_eq!(by_number(&invoices, number)["status"], status, "{number}");
        }
        let unpaid = by_number(&invoices, "SI-2");
        assert_eq!(unpaid["totalAmount"], "1234.56");
        assert_eq!(unpaid["subTotal"], "1028.80");
        assert_eq!(unpaid["totalTaxAmount"], "205.76");
        assert_eq!(unpaid["amountDue"], "1234.56");
        assert_eq!(unpaid["issueDate"], "2026-10-03");
        assert_eq!(unpaid["dueDate"], "2026-11-02");
        assert_eq!(unpaid["currency"], "GBP");
        assert_eq!(unpaid["note"], "PO-7781");
        assert_eq!(unpaid["paidOnDate"], Value::Null);
        assert_eq!(unpaid["sourceModifiedDate"], "2026-10-04T15:20:00.000000Z");
        assert_eq!(
            unpaid["customerRef"],
            json!({"id": "a1a1a1a1b2b2c3c3d4d4e5e5f6f6a7a7", "companyName": "Acme Garden Centre"})
        );
        let lines = unpaid["lineItems"].as_array().expect("line items");
        assert_eq!(lines.len(), 2);
        assert_eq!(lines[0]["totalAmount"], "1200.00");
        // A unit price with three decimals, read from the number's text.
        assert_eq!(lines[1]["unitAmount"], "1.152");
        assert_eq!(lines[1]["quantity"], "25");
        assert_eq!(lines[1]["subTotal"], "28.80");
        assert_eq!(lines[1]["taxAmount"], "5.76");
        assert_eq!(lines[1]["totalAmount"], "34.56");
        let paid = by_number(&invoices, "SI-4");
        assert_eq!(paid["paidOnDate"], "2026-10-20");
        assert_eq!(paid["amountDue"], "0.00");
        assert_eq!(paid["currency"], "EUR");
        // Part paid invoices have a last payment, but are not paid.
        assert_eq!(by_number(&invoices, "SI-3")["paidOnDate"], Value::Null);

        let customers = list(&app, company_id, "customers").await;
        let names: Vec<&str> = customers
            .iter()
            .filter_map(|customer| customer["customerName"].as_str())
            .collect();
        // The system contact and the supplier are not customers.
        assert_eq!(
            names,
            ["Acme Garden Centre", "Bramble Books", "Crofters Ltd"]
        );
        assert_eq!(customers[0]["phone"], "01632 960001");
        assert_eq!(customers[0]["emailAddress"], "accounts@acmegarden.example");
        assert_eq!(customers[0]["status"], "Active");
        assert_eq!(customers[1]["phone"], "07700 900002");
        assert_eq!(customers[1]["emailAddress"], "sam@bramblebooks.example");
        assert_eq!(customers[1]["defaultCurrency"], "EUR");
        assert_eq!(customers[2]["status"], "Archived");

        let calls = fake.calls();
        assert!(calls.iter().all(|call| call.token == ACCESS
            && call.headers.get("x-business").map(String::as_str) == Some(BUSINESS)));
        for path in ["/sales_invoices", "/contacts"] {
            assert!(calls.iter().any(|call| call.path == path
                && call.query.get("page").map(String::as_str) == Some("2")
                && call.query.get("items_per_page").map(String::as_str) == Some("200")));
        }
        // `$next` is null on page 2: no page 3 is asked for.
        assert!(
            !calls
                .iter()
                .any(|call| call.query.get("page").map(String::as_str) == Some("3"))
        );
        assert_eq!(fake.token_calls(), 0);
    }
}

#[tokio::test]
async fn an_access_token_rejected_mid_sync_is_refreshed_and_the_rotated_refresh_token_is_stored_before_use()
 {
    for backend in backends() {
        let fake = fake().await;
        let app = TestApp::spawn_with(backend, options_for(&fake, None, 1)).await;
        set_oauth_client(&app, KEY).await;
        let (company_id, connection_id) = connected(&app, 1800).await;
        fake.with(|inner| {
            inner.expire_after = Some(1);
            inner.on_new_token = Some(stored_refresh_token(&app, connection_id));
        });
        let operations = sync(&app, company_id, QueueDataTypeDataType::Invoices).await;
        let operation = latest(&operations, "invoices");
        assert_eq!(operation.status, PullStatus::Complete, "{operation:?}");
        assert_eq!(list(&app, company_id, "invoices").await.len(), 6);
        assert_eq!(fake.token_calls(), 1);
        assert_eq!(
            fake.with(|inner| inner.stored_at_first_use.clone()),
            [Some("rt-rotated-1".to_owned())]
        );
        let credentials = stored(&app, connection_id).await;
        assert_eq!(credentials["accessToken"], "at-refreshed-1");
        assert_eq!(credentials["refreshToken"], "rt-rotated-1");
        assert_eq!(credentials["businessId"], BUSINESS);
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
async fn a_five_minute_token_is_refreshed_before_use_and_invalid_grant_deauthorizes() {
    for backend in backends() {
        let fake = fake().await;
        let app = TestApp::spawn_with(backend, options_for(&fake, None, 1)).await;
        set_oauth_client(&app, KEY).await;
        // Sage's access tokens last five minutes: refreshed before the first call.
        let (company_id, connection_id) = connected(&app, 120).await;
        let operations = sync(&app, company_id, QueueDataTypeDataType::Customers).await;
        assert_eq!(
            latest(&operations, "customers").status,
            PullStatus::Complete
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

        // Another connection whose refresh token was already used elsewhere.
        let second_company = new_company(&app, "Bramble Books").await;
        let second = new_connection(&app, second_company, KEY).await;
        assert_eq!(
            authorize(&app, second_company, second, &body(BUSINESS, 120), false)
                .await
                .status(),
            200
        );
        let operations = sync(&app, second_company, QueueDataTypeDataType::Invoices).await;
        let operation = latest(&operations, "invoices");
        assert_eq!(operation.status, PullStatus::AuthError);
        let message = operation.error_message.unwrap_or_default();
        assert!(message.contains("invalid_grant"), "{message}");
        assert!(!message.contains(REFRESH));
        assert_eq!(
            connection_status(&app, second_company, second).await,
            ConnectionStatus::Deauthorized
        );
        // The first connection is untouched.
        assert_eq!(
            connection_status(&app, company_id, connection_id).await,
            ConnectionStatus::Linked
        );
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
                body: "[{\"$severity\":\"error\",\"$dataCode\":\"TooManyRequests\",\"$message\":\"Rate limit exceeded\",\"$source\":\"\"}]".to_owned(),
            });
            inner.scripted.push_back(Answer::json(
                500,
                "[{\"$severity\":\"error\",\"$dataCode\":\"UnexpectedError\",\"$message\":\"An unexpected error occurred.\",\"$source\":\"\"}]",
            ));
        });
        let started = std::time::Instant::now();
        let operations = sync(&app, company_id, QueueDataTypeDataType::Invoices).await;
        assert_eq!(latest(&operations, "invoices").status, PullStatus::Complete);
        assert!(
            started.elapsed() >= Duration::from_secs(1),
            "Retry-After was honoured"
        );
        assert_eq!(list(&app, company_id, "invoices").await.len(), 6);
        // Two failed attempts, then both pages.
        assert_eq!(fake.calls().len(), 4);

        // A platform that keeps failing: the operation says what it answered.
        fake.with(|inner| {
            for _ in 0..4 {
                inner.scripted.push_back(Answer::json(
                    503,
                    "[{\"$severity\":\"error\",\"$dataCode\":\"ServiceUnavailable\",\"$message\":\"Please try again later.\",\"$source\":\"\"}]",
                ));
            }
        });
        let operations = sync(&app, company_id, QueueDataTypeDataType::Invoices).await;
        let operation = latest(&operations, "invoices");
        assert_eq!(operation.status, PullStatus::Failed);
        let message = operation.error_message.unwrap_or_default();
        assert!(
            message.contains(
                "Sage Business Cloud Accounting answered 503 Service Unavailable: ServiceUnavailable: Please try again later."
            ),
            "{message}"
        );
        assert_eq!(list(&app, company_id, "invoices").await.len(), 6);
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
        let before = list(&app, company_id, "invoices").await;
        // Page 1 is fine, page 2 is cut off mid-way.
        fake.with(|inner| {
            inner.scripted.push_back(Answer::json(
                200,
                fixture("sage_business_cloud/fixtures/sales_invoices-1.json"),
            ));
            inner.scripted.push_back(Answer::json(
                200,
                "{\"$total\": 6, \"$items\": [{\"id\": \"x\", \"total_amount\": 12.5",
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
        assert_eq!(list(&app, company_id, "invoices").await, before);
    }
}

#[tokio::test]
async fn an_unknown_business_fails_with_sages_404() {
    for backend in backends() {
        let fake = fake().await;
        let app = TestApp::spawn_with(backend, options_for(&fake, None, 1)).await;
        let company_id = new_company(&app, "Nobody").await;
        let connection_id = new_connection(&app, company_id, KEY).await;
        assert_eq!(
            authorize(
                &app,
                company_id,
                connection_id,
                &body(OTHER_BUSINESS, 1800),
                false
            )
            .await
            .status(),
            200
        );
        let operations = sync(&app, company_id, QueueDataTypeDataType::Invoices).await;
        let operation = latest(&operations, "invoices");
        assert_eq!(operation.status, PullStatus::Failed);
        let message = operation.error_message.unwrap_or_default();
        assert!(
            message.contains(
                "Sage Business Cloud Accounting answered 404 Not Found: RecordNotFound: The business could not be found."
            ),
            "{message}"
        );
    }
}

#[tokio::test]
async fn verification_at_migration_accepts_working_tokens_and_rejects_others_storing_nothing() {
    for backend in backends() {
        let fake = fake().await;
        let app = TestApp::spawn_with(backend, options_for(&fake, None, 0)).await;
        let company_id = new_company(&app, "Acme Garden Centre Ltd").await;
        let connection_id = new_connection(&app, company_id, KEY).await;

        // Rejected by Sage: 422 with its reason, nothing stored.
        let mut wrong = body(BUSINESS, 1800);
        wrong["accessToken"] = json!("not-a-token-sage-knows");
        let response = authorize(&app, company_id, connection_id, &wrong, true).await;
        assert_eq!(response.status(), 422);
        let message = json(response).await["error"]
            .as_str()
            .unwrap_or_default()
            .to_owned();
        assert!(
            message.contains("401 Unauthorized: AuthorizationFailure"),
            "{message}"
        );
        assert!(!message.contains("not-a-token-sage-knows"));
        assert_eq!(count_rows(&app, "connection_credential").await, 0);
        assert_eq!(
            connection_status(&app, company_id, connection_id).await,
            ConnectionStatus::PendingAuth
        );

        // A token that works, but not for this business.
        let response = authorize(
            &app,
            company_id,
            connection_id,
            &body(OTHER_BUSINESS, 1800),
            true,
        )
        .await;
        assert_eq!(response.status(), 422);
        let message = json(response).await["error"]
            .as_str()
            .unwrap_or_default()
            .to_owned();
        assert!(
            message.contains(&format!("business {OTHER_BUSINESS} is not among the 2")),
            "{message}"
        );
        assert_eq!(count_rows(&app, "connection_credential").await, 0);

        // Accepted: one call to GET /businesses, then stored and linked.
        let response =
            authorize(&app, company_id, connection_id, &body(BUSINESS, 1800), true).await;
        assert_eq!(response.status(), 200);
        assert_eq!(json(response).await["status"], "Linked");
        assert_eq!(
            fake.calls().last().map(|call| call.path.clone()).as_deref(),
            Some("/businesses")
        );

        // Already expired: verified by a refresh, whose rotated tokens are stored.
        set_oauth_client(&app, KEY).await;
        let second = new_connection(&app, company_id, KEY).await;
        let mut expired = body(BUSINESS, 0);
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
        let third = new_connection(&app, company_id, KEY).await;
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
    }
}
