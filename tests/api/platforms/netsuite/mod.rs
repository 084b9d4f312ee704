//! Oracle NetSuite: invoices (and their lines) and customers through SuiteQL
//! (`POST /services/rest/query/v1/suiteql`, `Prefer: transient`) over several
//! `limit`/`offset` pages while `hasMore`, statuses from letters and amounts,
//! exact amounts, refresh (HTTP Basic) with and without a new refresh token,
//! `invalid_grant`, 429, 5xx, garbage, and verification with one SuiteQL row.
//! The fixtures are SuiteQL answers shaped as NetSuite documents them (Collection
//! Paging; every value a string, null columns left out; sources N1–N3 and the
//! sample in `src/platforms/netsuite/NOTES.md`); the fake slices them as NetSuite pages.

use std::sync::Arc;
use std::time::Duration;

use serde_json::{Value, json};
use uuid::Uuid;

use client::types::{ConnectionStatus, PullStatus, QueueDataTypeDataType};

use super::fake::{Answer, Call, Fake, Scheme, fixture};
use super::{authorize, latest, options_for, set_oauth_client, stored, stored_refresh_token, sync};
use crate::connections::{count_rows, new_company, new_connection};
use crate::helpers::{TestApp, backends, captured_logs, json};

pub const ACCOUNT: &str = "1234567_SB1";
const ACCESS: &str = "ns-access-token-0001";
const REFRESH: &str = "ns-refresh-token-0001";
const SUITEQL: &str = "/services/rest/query/v1/suiteql";

fn error(name: &str) -> String {
    fixture(&format!("netsuite/fixtures/{name}.json"))
}

/// The number after `marker` in `text` (`t.id > 105` → 105).
fn number_after(text: &str, marker: &str) -> Option<u64> {
    let (_, rest) = text.split_once(marker)?;
    let digits: String = rest
        .trim_start()
        .chars()
        .take_while(char::is_ascii_digit)
        .collect();
    digits.parse().ok()
}

/// The ids listed in `IN (…)`.
fn listed(text: &str) -> Vec<String> {
    text.split_once("IN (")
        .and_then(|(_, rest)| rest.split_once(')'))
        .map(|(list, _)| list.split(',').map(|id| id.trim().to_owned()).collect())
        .unwrap_or_default()
}

/// The rows of a fixture that `keep` accepts, as one SuiteQL page from
/// `offset` of at most `limit` rows.
fn page_of(name: &str, keep: impl Fn(&Value) -> bool, limit: usize, offset: usize) -> String {
    let all: Value = serde_json::from_str(&fixture(&format!("netsuite/fixtures/{name}.json")))
        .expect("fixture JSON");
    let rows: Vec<Value> = all["items"]
        .as_array()
        .cloned()
        .unwrap_or_default()
        .into_iter()
        .filter(|row| keep(row))
        .collect();
    let total = rows.len();
    let items: Vec<Value> = rows.into_iter().skip(offset).take(limit).collect();
    let self_link = format!(
        "https://1234567-sb1.suitetalk.api.netsuite.com{SUITEQL}?limit={limit}&offset={offset}"
    );
    json!({
        "links": [{"rel": "self", "href": self_link}],
        "count": items.len(),
        "hasMore": offset + items.len() < total,
        "items": items,
        "offset": offset,
        "totalResults": total,
    })
    .to_string()
}

fn id_of(row: &Value, column: &str) -> u64 {
    row[column]
        .as_str()
        .and_then(|id| id.parse().ok())
        .unwrap_or_default()
}

/// Answers SuiteQL like NetSuite: the query in the JSON body, `limit` and
/// `offset` in the URL, `Prefer: transient` required.
fn router() -> super::fake::Router {
    Arc::new(|call: &Call| {
        if call.path != SUITEQL || call.method != "POST" {
            return Answer::json(404, error("bad-request"));
        }
        if call.headers.get("prefer").map(String::as_str) != Some("transient") {
            return Answer::json(400, error("bad-request"));
        }
        let body: Value = serde_json::from_str(&call.body).unwrap_or_default();
        let query = body["q"].as_str().unwrap_or_default().to_owned();
        let number = |name: &str| call.query.get(name).and_then(|n| n.parse::<usize>().ok());
        let (limit, offset) = (
            number("limit").unwrap_or(1000),
            number("offset").unwrap_or(0),
        );
        if query.contains("FROM transactionline tl") {
            let ids = listed(&query);
            let keep = move |row: &Value| {
                ids.iter()
                    .any(|id| row["transaction"].as_str() == Some(id.as_str()))
            };
            return Answer::json(200, page_of("lines", keep, limit, offset));
        }
        if query.contains("FROM transaction t") && query.contains("t.type = 'CustInvc'") {
            let after = number_after(&query, "t.id >").unwrap_or(0);
            let keep = move |row: &Value| id_of(row, "id") > after;
            return Answer::json(200, page_of("invoices", keep, limit, offset));
        }
        if query.contains("FROM customer c") {
            let after = number_after(&query, "c.id >").unwrap_or(0);
            let keep = move |row: &Value| id_of(row, "id") > after;
            return Answer::json(200, page_of("customers", keep, limit, offset));
        }
        Answer::json(400, error("bad-request"))
    })
}

pub async fn fake() -> Fake {
    Fake::start(
        "netsuite",
        Scheme::Bearer,
        ACCESS,
        REFRESH,
        error("unauthorized"),
        router(),
    )
    .await
}

fn body(access: &str, expires_in: i64) -> Value {
    json!({"accountId": ACCOUNT, "accessToken": access, "refreshToken": REFRESH, "expiresIn": expires_in})
}

/// A company with an authorized NetSuite connection.
async fn connected(app: &TestApp, expires_in: i64) -> (Uuid, Uuid) {
    let company_id = new_company(app, "Wolfe Electronics").await;
    let connection_id = new_connection(app, company_id, "netsuite").await;
    let response = authorize(
        app,
        company_id,
        connection_id,
        &body(ACCESS, expires_in),
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

/// The SuiteQL calls whose query reads `table`.
fn queries_of(calls: &[Call], table: &str) -> Vec<Call> {
    calls
        .iter()
        .filter(|call| call.body.contains(&format!("FROM {table} ")))
        .cloned()
        .collect()
}

#[tokio::test]
async fn netsuite_invoices_and_customers_sync_over_every_page_with_every_status() {
    for backend in backends() {
        let fake = fake().await;
        let app = TestApp::spawn_with(backend, options_for(&fake, Some(3), 2)).await;
        let (company_id, _) = connected(&app, 3600).await;
        let operations = sync(&app, company_id, QueueDataTypeDataType::Invoices).await;
        assert_eq!(latest(&operations, "invoices").status, PullStatus::Complete);
        let operations = sync(&app, company_id, QueueDataTypeDataType::Customers).await;
        assert_eq!(
            latest(&operations, "customers").status,
            PullStatus::Complete
        );

        let invoices = list(&app, company_id, "invoices").await;
        assert_eq!(invoices.len(), 7, "{invoices:#?}");
        for (number, status) in [
            ("INV10001", "Submitted"),
            ("INV10002", "PartiallyPaid"),
            ("INV10003", "Paid"),
            ("INV10004", "Draft"),
            ("INV10005", "Void"),
            ("INV10006", "Void"),
            ("INV10007", "Submitted"),
        ] {
            assert_eq!(by_number(&invoices, number)["status"], status, "{number}");
        }
        let open = by_number(&invoices, "INV10001");
        assert_eq!(open["invoiceId"], "101");
        assert_eq!(open["totalAmount"], "1234.56");
        assert_eq!(open["totalTaxAmount"], "205.76");
        assert_eq!(open["subTotal"], "1028.80");
        assert_eq!(open["amountDue"], "1234.56");
        assert_eq!(open["issueDate"], "2026-10-03");
        assert_eq!(open["dueDate"], "2026-11-02");
        assert_eq!(open["currency"], "USD");
        assert_eq!(open["note"], "Thank you for your business");
        assert_eq!(open["customerRef"]["id"], "201");
        assert_eq!(open["customerRef"]["companyName"], "Acme Trading Ltd");
        assert_eq!(open["sourceModifiedDate"], "2026-10-05T14:03:11.000000Z");
        // Lines are negated back to what was sold; the tax line is the tax.
        let lines = open["lineItems"].as_array().expect("lines");
        assert_eq!(lines.len(), 1, "{lines:#?}");
        assert_eq!(lines[0]["description"], "Conference table, oak");
        assert_eq!(lines[0]["quantity"], "2.5");
        assert_eq!(lines[0]["unitAmount"], "411.52");
        assert_eq!(lines[0]["subTotal"], "1028.80");
        let part_paid = by_number(&invoices, "INV10002");
        assert_eq!(part_paid["currency"], "EUR");
        assert_eq!(part_paid["amountDue"], "72.94");
        assert_eq!(part_paid["totalTaxAmount"], "8.24");
        assert_eq!(
            part_paid["lineItems"][0]["description"],
            "BERLIN Guest Chair, yellow"
        );
        assert_eq!(part_paid["lineItems"][0]["quantity"], "3");
        assert_eq!(by_number(&invoices, "INV10003")["amountDue"], "0.00");
        assert_eq!(by_number(&invoices, "INV10006")["totalAmount"], "0.00");
        let fine = by_number(&invoices, "INV10007");
        assert_eq!(fine["lineItems"][0]["unitAmount"], "12.3456");
        assert_eq!(fine["totalAmount"], "12.35");
        assert_eq!(fine["note"], Value::Null);

        let customers = list(&app, company_id, "customers").await;
        let summary: Vec<(&str, &str)> = customers
            .iter()
            .map(|customer| {
                (
                    customer["customerName"].as_str().unwrap_or_default(),
                    customer["status"].as_str().unwrap_or_default(),
                )
            })
            .collect();
        assert_eq!(
            summary,
            [
                ("Acme Trading Ltd", "Active"),
                ("Brightside Cafe GmbH", "Active"),
                ("CUST-205 Fallback Ltd", "Active"),
                ("Jane Doe", "Active"),
                ("Old Customer plc", "Archived"),
            ]
        );
        assert_eq!(customers[0]["customerId"], "201");
        assert_eq!(customers[0]["emailAddress"], "accounts@acme.example");
        assert_eq!(customers[0]["phone"], "+1 212 555 0101");
        assert_eq!(customers[1]["defaultCurrency"], "EUR");
        assert_eq!(customers[2]["emailAddress"], Value::Null);

        let calls = fake.calls();
        assert!(calls.iter().all(|call| call.token == ACCESS
            && call.method == "POST"
            && call.path == SUITEQL
            && call.headers.get("prefer").map(String::as_str) == Some("transient")));
        // Three pages of invoices by offset, each followed by one query for its lines.
        let headers = queries_of(&calls, "transaction");
        let offsets: Vec<&str> = headers
            .iter()
            .filter_map(|call| call.query.get("offset").map(String::as_str))
            .collect();
        assert_eq!(offsets, ["0", "3", "6"]);
        assert!(
            headers
                .iter()
                .all(|call| call.query.get("limit").map(String::as_str) == Some("3"))
        );
        assert_eq!(queries_of(&calls, "transactionline").len(), 3);
        assert_eq!(queries_of(&calls, "customer").len(), 2);
        assert_eq!(
            fake.token_calls(),
            0,
            "a token valid for an hour is not refreshed"
        );
    }
}

#[tokio::test]
async fn an_access_token_rejected_mid_sync_is_refreshed_and_a_new_refresh_token_is_stored_before_use()
 {
    for backend in backends() {
        let fake = fake().await;
        let app = TestApp::spawn_with(backend, options_for(&fake, Some(3), 1)).await;
        set_oauth_client(&app, "netsuite").await;
        let (company_id, connection_id) = connected(&app, 3600).await;
        fake.with(|inner| {
            inner.expire_after = Some(1);
            inner.on_new_token = Some(stored_refresh_token(&app, connection_id));
        });
        let operations = sync(&app, company_id, QueueDataTypeDataType::Invoices).await;
        let operation = latest(&operations, "invoices");
        assert_eq!(operation.status, PullStatus::Complete, "{operation:?}");
        assert_eq!(list(&app, company_id, "invoices").await.len(), 7);
        assert_eq!(fake.token_calls(), 1);
        assert_eq!(
            fake.with(|inner| inner.stored_at_first_use.clone()),
            [Some("rt-rotated-1".to_owned())]
        );
        let credentials = stored(&app, connection_id).await;
        assert_eq!(credentials["accessToken"], "at-refreshed-1");
        assert_eq!(credentials["refreshToken"], "rt-rotated-1");
        assert_eq!(credentials["accountId"], ACCOUNT);
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
async fn a_refresh_without_a_new_refresh_token_keeps_the_one_stored() {
    for backend in backends() {
        let fake = fake().await;
        // A confidential client's refresh answers no refresh token (N4).
        fake.with(|inner| inner.rotate = false);
        let app = TestApp::spawn_with(backend, options_for(&fake, None, 1)).await;
        set_oauth_client(&app, "netsuite").await;
        let (company_id, connection_id) = connected(&app, 60).await;
        let operations = sync(&app, company_id, QueueDataTypeDataType::Customers).await;
        assert_eq!(
            latest(&operations, "customers").status,
            PullStatus::Complete
        );
        assert_eq!(fake.token_calls(), 1);
        let credentials = stored(&app, connection_id).await;
        assert_eq!(credentials["accessToken"], "at-refreshed-1");
        assert_eq!(credentials["refreshToken"], REFRESH);
        assert!(
            fake.calls()
                .iter()
                .all(|call| call.token == "at-refreshed-1")
        );
    }
}

#[tokio::test]
async fn invalid_grant_deauthorizes_the_connection() {
    for backend in backends() {
        let fake = fake().await;
        let app = TestApp::spawn_with(backend, options_for(&fake, None, 1)).await;
        set_oauth_client(&app, "netsuite").await;
        let (company_id, connection_id) = connected(&app, 120).await;
        // What NetSuite answers once the refresh token has expired (N4).
        fake.with(|inner| {
            inner.token_error = Some(Answer::json(400, "{\"error\":\"invalid_grant\"}"))
        });
        let operations = sync(&app, company_id, QueueDataTypeDataType::Invoices).await;
        let operation = latest(&operations, "invoices");
        assert_eq!(operation.status, PullStatus::AuthError);
        let message = operation.error_message.unwrap_or_default();
        assert!(message.contains("invalid_grant"), "{message}");
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
async fn rate_limits_wait_for_retry_after_and_server_errors_are_retried() {
    for backend in backends() {
        let fake = fake().await;
        let app = TestApp::spawn_with(backend, options_for(&fake, None, 1)).await;
        let (company_id, _) = connected(&app, 3600).await;
        let limited = json!({
            "type": "https://www.rfc-editor.org/rfc/rfc6585.html#section-4",
            "title": "Too Many Requests",
            "status": 429,
            "o:errorDetails": [{"detail": "Concurrent request limit exceeded. Request blocked.", "o:errorCode": "CONCURRENCY_LIMIT_EXCEEDED"}]
        });
        fake.with(|inner| {
            inner.scripted.push_back(Answer {
                status: 429,
                headers: vec![("Retry-After".to_owned(), "1".to_owned())],
                body: limited.to_string(),
            });
            inner.scripted.push_back(Answer::json(
                500,
                json!({"title": "Internal Server Error", "status": 500, "o:errorDetails": [{"detail": "An unexpected error occurred.", "o:errorCode": "UNEXPECTED_ERROR"}]}).to_string(),
            ));
        });
        let started = std::time::Instant::now();
        let operations = sync(&app, company_id, QueueDataTypeDataType::Invoices).await;
        assert_eq!(latest(&operations, "invoices").status, PullStatus::Complete);
        assert!(
            started.elapsed() >= Duration::from_secs(1),
            "Retry-After was honoured"
        );
        assert_eq!(list(&app, company_id, "invoices").await.len(), 7);
        // Two failed attempts, then the invoices and their lines.
        assert_eq!(fake.calls().len(), 4);

        // A platform that keeps failing: the operation quotes its error detail.
        fake.with(|inner| {
            for _ in 0..4 {
                inner.scripted.push_back(Answer::json(
                    503,
                    json!({"title": "Service Unavailable", "status": 503, "o:errorDetails": [{"detail": "NetSuite is undergoing maintenance.", "o:errorCode": "SERVICE_UNAVAILABLE"}]}).to_string(),
                ));
            }
        });
        let operations = sync(&app, company_id, QueueDataTypeDataType::Invoices).await;
        let operation = latest(&operations, "invoices");
        assert_eq!(operation.status, PullStatus::Failed);
        let message = operation.error_message.unwrap_or_default();
        assert!(
            message.contains("SERVICE_UNAVAILABLE: NetSuite is undergoing maintenance."),
            "{message}"
        );
        assert_eq!(list(&app, company_id, "invoices").await.len(), 7);
    }
}

#[tokio::test]
async fn a_malformed_answer_fails_the_sync_and_keeps_the_previous_data() {
    for backend in backends() {
        let fake = fake().await;
        let app = TestApp::spawn_with(backend, options_for(&fake, None, 1)).await;
        let (company_id, _) = connected(&app, 3600).await;
        let operations = sync(&app, company_id, QueueDataTypeDataType::Customers).await;
        assert_eq!(
            latest(&operations, "customers").status,
            PullStatus::Complete
        );
        let before = list(&app, company_id, "customers").await;
        assert_eq!(before.len(), 5);
        fake.with(|inner| {
            inner.scripted.push_back(Answer::json(
                200,
                "{\"links\": [], \"count\": 1, \"hasMore\": false, \"items\": [{\"id\": \"201\", \"entityid\": ",
            ));
        });
        let operations = sync(&app, company_id, QueueDataTypeDataType::Customers).await;
        let operation = latest(&operations, "customers");
        assert_eq!(operation.status, PullStatus::Failed);
        assert!(
            operation
                .error_message
                .unwrap_or_default()
                .contains("cannot read")
        );
        assert_eq!(list(&app, company_id, "customers").await, before);
    }
}

#[tokio::test]
async fn verification_at_migration_accepts_working_tokens_and_rejects_others_storing_nothing() {
    for backend in backends() {
        let fake = fake().await;
        let app = TestApp::spawn_with(backend, options_for(&fake, None, 0)).await;
        let company_id = new_company(&app, "Wolfe Electronics").await;
        let connection_id = new_connection(&app, company_id, "netsuite").await;

        // Rejected by NetSuite: 422 with its reason, nothing stored.
        let wrong = body("not-a-token-netsuite-knows", 3600);
        let response = authorize(&app, company_id, connection_id, &wrong, true).await;
        assert_eq!(response.status(), 422);
        let message = json(response).await["error"]
            .as_str()
            .unwrap_or_default()
            .to_owned();
        assert!(
            message.contains("INVALID_LOGIN: Invalid login attempt."),
            "{message}"
        );
        assert!(!message.contains("not-a-token-netsuite-knows"));
        assert_eq!(count_rows(&app, "connection_credential").await, 0);
        let connection = app
            .client
            .get_connection(&company_id, &connection_id)
            .await
            .expect("found")
            .into_inner();
        assert_eq!(connection.status, ConnectionStatus::PendingAuth);

        // Accepted: one SuiteQL row, then stored and linked.
        let response = authorize(&app, company_id, connection_id, &body(ACCESS, 3600), true).await;
        assert_eq!(response.status(), 200);
        assert_eq!(json(response).await["status"], "Linked");
        let last = fake.calls().last().cloned().expect("a call");
        assert_eq!(last.path, SUITEQL);
        assert_eq!(last.query.get("limit").map(String::as_str), Some("1"));
        assert_eq!(stored(&app, connection_id).await["accessToken"], ACCESS);

        // Already expired, and the refresh is refused: 422, nothing stored.
        set_oauth_client(&app, "netsuite").await;
        let second = new_connection(&app, company_id, "netsuite").await;
        let mut expired = body(ACCESS, 0);
        expired
            .as_object_mut()
            .expect("an object")
            .remove("expiresIn");
        expired["expiresAt"] = json!("2026-01-01T00:00:00Z");
        fake.with(|inner| inner.refresh_token = "another-one".to_owned());
        let response = authorize(&app, company_id, second, &expired, true).await;
        assert_eq!(response.status(), 422);
        assert!(
            json(response).await["error"]
                .as_str()
                .unwrap_or_default()
                .contains("invalid_grant")
        );
        assert!(
            tributary::connections::open_credential(&app.db, &app.keyring, second)
                .await
                .expect("readable")
                .is_none()
        );
    }
}
