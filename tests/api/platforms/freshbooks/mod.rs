//! FreshBooks: invoices (with lines) and clients over several pages, every
//! `v3_status` and a deleted invoice, line taxes as percentages, refresh
//! with the client in the form body and a single-use rotating refresh token,
//! `invalid_grant`, 429, 5xx, garbage, an unknown account, and verification
//! through the identity endpoint's business memberships. Fixtures follow
//! the shapes of https://www.freshbooks.com/api/invoices,
//! https://www.freshbooks.com/api/clients and
//! https://www.freshbooks.com/api/me_endpoint as the official SDK reads them
//! (see `src/platforms/freshbooks/NOTES.md`).

use std::sync::Arc;
use std::time::Duration;

use serde_json::{Value, json};
use uuid::Uuid;

use client::types::{ConnectionStatus, PullStatus, QueueDataTypeDataType};

use super::fake::{Answer, Call, Fake, Scheme, fixture};
use super::{authorize, latest, options_for, set_oauth_client, stored, stored_refresh_token, sync};
use crate::connections::{count_rows, new_company, new_connection};
use crate::helpers::{TestApp, backends, captured_logs, json};

const ACCOUNT: &str = "zDmNq";
const ACCESS: &str = "freshbooks-access-token-0001";
const REFRESH: &str = "freshbooks-refresh-token-0001";

/// Serves the FreshBooks fixtures: three pages of invoices, two of
/// clients, the identity; another account's lists are a 404.
fn router() -> super::fake::Router {
    Arc::new(|call: &Call| {
        if call.path == "/auth/api/v1/users/me" {
            return Answer::json(200, fixture("freshbooks/fixtures/users-me.json"));
        }
        let page = call
            .query
            .get("page")
            .cloned()
            .unwrap_or_else(|| "1".to_owned());
        let invoices = format!("/accounting/account/{ACCOUNT}/invoices/invoices");
        let clients = format!("/accounting/account/{ACCOUNT}/users/clients");
        if call.path == invoices {
            Answer::json(
                200,
                fixture(&format!("freshbooks/fixtures/invoices-{page}.json")),
            )
        } else if call.path == clients {
            Answer::json(
                200,
                fixture(&format!("freshbooks/fixtures/clients-{page}.json")),
            )
        } else {
            Answer::json(404, fixture("freshbooks/fixtures/not-found.json"))
        }
    })
}

pub(crate) async fn fake() -> Fake {
    let fake = Fake::start(
        "freshbooks",
        Scheme::Bearer,
        ACCESS,
        REFRESH,
        fixture("freshbooks/fixtures/unauthorized.json"),
        router(),
    )
    .await;
    // FreshBooks takes the client credentials in the form body.
    fake.with(|inner| inner.client_in_body = true);
    fake
}

fn body(account_id: &str, expires_in: i64) -> Value {
    json!({"accountId": account_id, "businessId": 77128, "accessToken": ACCESS, "refreshToken": REFRESH, "expiresIn": expires_in})
}

/// A company with an authorized FreshBooks connection.
async fn connected(app: &TestApp, expires_in: i64) -> (Uuid, Uuid) {
    let company_id = new_company(app, "Maple Leaf Foods").await;
    let connection_id = new_connection(app, company_id, "freshbooks").await;
    let response = authorize(
        app,
        company_id,
        connection_id,
        &body(ACCOUNT, expires_in),
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
async fn freshbooks_invoices_and_clients_sync_over_every_page_with_every_status() {
    for backend in backends() {
        let fake = fake().await;
        let app = TestApp::spawn_with(backend, options_for(&fake, None, 2)).await;
        let (company_id, _) = connected(&app, 43_200).await;
        let operations = sync(&app, company_id, QueueDataTypeDataType::Invoices).await;
        assert_eq!(latest(&operations, "invoices").status, PullStatus::Complete);
        let operations = sync(&app, company_id, QueueDataTypeDataType::Customers).await;
        assert_eq!(
            latest(&operations, "customers").status,
            PullStatus::Complete
        );

        let invoices = invoices(&app, company_id).await;
        assert_eq!(invoices.len(), 18, "{invoices:#?}");
        // Every documented v3_status, and a deleted invoice.
        for (number, status) in [
            ("0000001", "Draft"),         // created
            ("0000002", "Draft"),         // draft
            ("0000003", "Submitted"),     // sent
            ("0000004", "Submitted"),     // viewed
            ("0000005", "PartiallyPaid"), // overdue, part paid
            ("0000006", "PartiallyPaid"), // partial
            ("0000007", "Paid"),          // paid
            ("0000008", "Paid"),          // autopaid
            ("0000009", "Paid"),          // success
            ("0000010", "Submitted"),     // failed
            ("0000011", "Submitted"),     // retry
            ("0000012", "Submitted"),     // disputed
            ("0000013", "Paid"),          // resolved, nothing outstanding
            ("0000014", "Submitted"),     // declined
            ("0000015", "Submitted"),     // pending
            ("0000016", "PartiallyPaid"), // deposit-partial
            ("0000017", "PartiallyPaid"), // deposit-paid
            ("0000018", "Void"),          // sent, then deleted
        ] {
            assert_eq!(by_number(&invoices, number)["status"], status, "{number}");
        }
        let sent = by_number(&invoices, "0000003");
        assert_eq!(sent["invoiceId"], "500003");
        assert_eq!(sent["totalAmount"], "1234.56");
        assert_eq!(sent["subTotal"], "1104.56");
        assert_eq!(sent["totalTaxAmount"], "130.00");
        assert_eq!(sent["amountDue"], "1234.56");
        assert_eq!(sent["issueDate"], "2026-10-03");
        assert_eq!(sent["dueDate"], "2026-11-03");
        assert_eq!(sent["currency"], "CAD");
        assert_eq!(sent["note"], "Thank you for your business");
        assert_eq!(sent["customerRef"]["id"], "301");
        assert_eq!(sent["customerRef"]["companyName"], "Maple Leaf Foods");
        // 14:05 in Toronto in October (EDT) is 18:05 UTC.
        assert_eq!(sent["sourceModifiedDate"], "2026-10-03T18:05:00.000000Z");
        let lines = sent["lineItems"].as_array().expect("lines");
        assert_eq!(lines.len(), 2);
        assert_eq!(lines[0]["description"], "Web design: Home page");
        assert_eq!(lines[0]["unitAmount"], "1000.00");
        assert_eq!(lines[0]["quantity"], "1");
        assert_eq!(lines[0]["subTotal"], "1000.00");
        assert_eq!(lines[0]["taxAmount"], "130.00");
        assert_eq!(lines[0]["totalAmount"], "1130.00");
        assert_eq!(lines[1]["quantity"], "2");
        assert_eq!(lines[1]["unitAmount"], "52.28");
        assert_eq!(lines[1]["taxAmount"], "0.00");
        // GST 5 %, then QST 9.975 % compounded on top.
        let compounded = by_number(&invoices, "0000004");
        assert_eq!(compounded["customerRef"]["companyName"], "Jean Bouchard");
        assert_eq!(compounded["lineItems"][0]["taxAmount"], "15.47");
        assert_eq!(compounded["totalTaxAmount"], "15.47");
        assert_eq!(compounded["subTotal"], "100.00");
        // A discount lowers the subtotal.
        let discounted = by_number(&invoices, "0000002");
        assert_eq!(discounted["subTotal"], "90.00");
        assert_eq!(discounted["totalTaxAmount"], "0.00");
        let part_paid = by_number(&invoices, "0000005");
        assert_eq!(part_paid["amountDue"], "70.00");
        assert_eq!(part_paid["paidOnDate"], Value::Null);
        let paid = by_number(&invoices, "0000007");
        assert_eq!(paid["paidOnDate"], "2026-10-20");
        assert_eq!(paid["amountDue"], "0.00");

        let customers = json(
            app.get(&format!(
                "/companies/{company_id}/data/customers?pageSize=100"
            ))
            .await,
        )
        .await;
        let results = customers["results"].as_array().expect("results").clone();
        let names: Vec<&str> = results
            .iter()
            .filter_map(|customer| customer["customerName"].as_str())
            .collect();
        assert_eq!(
            names,
            ["Closed Account Inc", "Jean Bouchard", "Maple Leaf Foods"]
        );
        assert_eq!(results[0]["status"], "Archived");
        assert_eq!(results[1]["customerId"], "302");
        assert_eq!(results[1]["phone"], "514-555-0199");
        // 23:30 on 1 July in Toronto is 03:30 UTC the next day.
        assert_eq!(
            results[1]["sourceModifiedDate"],
            "2026-07-02T03:30:00.000000Z"
        );
        assert_eq!(results[2]["emailAddress"], "ann@mapleleaf.example");
        assert_eq!(results[2]["phone"], "416-555-0100");
        assert_eq!(results[2]["defaultCurrency"], "CAD");
        assert_eq!(results[2]["status"], "Active");
        // January: EST, UTC−5.
        assert_eq!(
            results[2]["sourceModifiedDate"],
            "2026-01-15T15:00:00.000000Z"
        );

        let calls = fake.calls();
        assert!(calls.iter().all(|call| call.token == ACCESS));
        let invoice_pages: Vec<&Call> = calls
            .iter()
            .filter(|call| call.path.ends_with("/invoices/invoices"))
            .collect();
        assert_eq!(invoice_pages.len(), 3);
        assert!(invoice_pages.iter().all(|call| {
            call.query.get("include[]").map(String::as_str) == Some("lines")
                && call.query.get("per_page").map(String::as_str) == Some("100")
        }));
        assert!(
            calls
                .iter()
                .any(|call| call.path.ends_with("/users/clients")
                    && call.query.get("page").map(String::as_str) == Some("2"))
        );
        assert_eq!(fake.token_calls(), 0, "a 12-hour token is not refreshed");
    }
}

#[tokio::test]
async fn a_freshbooks_token_rejected_mid_sync_is_refreshed_and_the_single_use_refresh_token_is_stored_before_use()
 {
    for backend in backends() {
        let fake = fake().await;
        let app = TestApp::spawn_with(backend, options_for(&fake, None, 1)).await;
        set_oauth_client(&app, "freshbooks").await;
        let (company_id, connection_id) = connected(&app, 43_200).await;
        fake.with(|inner| {
            inner.expire_after = Some(1);
            inner.on_new_token = Some(stored_refresh_token(&app, connection_id));
        });
        let operations = sync(&app, company_id, QueueDataTypeDataType::Invoices).await;
        let operation = latest(&operations, "invoices");
        assert_eq!(operation.status, PullStatus::Complete, "{operation:?}");
        assert_eq!(invoices(&app, company_id).await.len(), 18);
        // One refresh, client credentials in the body (the fake refuses Basic).
        assert_eq!(fake.token_calls(), 1);
        assert_eq!(
            fake.with(|inner| inner.stored_at_first_use.clone()),
            [Some("rt-rotated-1".to_owned())]
        );
        let credentials = stored(&app, connection_id).await;
        assert_eq!(credentials["accessToken"], "at-refreshed-1");
        assert_eq!(credentials["refreshToken"], "rt-rotated-1");
        assert_eq!(credentials["accountId"], ACCOUNT);
        // The old refresh token is spent: the next refresh uses the new one.
        fake.with(|inner| inner.expire_after = Some(inner.served));
        let operations = sync(&app, company_id, QueueDataTypeDataType::Customers).await;
        assert_eq!(
            latest(&operations, "customers").status,
            PullStatus::Complete
        );
        assert_eq!(fake.token_calls(), 2);
        assert_eq!(
            stored(&app, connection_id).await["refreshToken"],
            "rt-rotated-2"
        );
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
async fn a_freshbooks_invalid_grant_deauthorizes_the_connection() {
    for backend in backends() {
        let fake = fake().await;
        let app = TestApp::spawn_with(backend, options_for(&fake, None, 1)).await;
        set_oauth_client(&app, "freshbooks").await;
        let (company_id, connection_id) = connected(&app, 120).await;
        fake.with(|inner| inner.refresh_token = "already-used-elsewhere".to_owned());
        let operations = sync(&app, company_id, QueueDataTypeDataType::Invoices).await;
        let operation = latest(&operations, "invoices");
        assert_eq!(operation.status, PullStatus::AuthError);
        let message = operation.error_message.unwrap_or_default();
        assert!(
            message.contains("FreshBooks") && message.contains("invalid_grant"),
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
async fn freshbooks_rate_limits_wait_for_retry_after_and_server_errors_are_retried() {
    for backend in backends() {
        let fake = fake().await;
        let app = TestApp::spawn_with(backend, options_for(&fake, None, 1)).await;
        let (company_id, _) = connected(&app, 43_200).await;
        fake.with(|inner| {
            inner.scripted.push_back(Answer {
                status: 429,
                headers: vec![("Retry-After".to_owned(), "1".to_owned())],
                body: "{}".to_owned(),
            });
            inner.scripted.push_back(Answer::json(500, "{}"));
        });
        let started = std::time::Instant::now();
        let operations = sync(&app, company_id, QueueDataTypeDataType::Invoices).await;
        assert_eq!(latest(&operations, "invoices").status, PullStatus::Complete);
        assert!(
            started.elapsed() >= Duration::from_secs(1),
            "Retry-After was honoured"
        );
        assert_eq!(invoices(&app, company_id).await.len(), 18);
        // Two failed attempts, then the three pages.
        assert_eq!(fake.calls().len(), 5);

        // A platform that keeps failing: the operation says what it answered.
        fake.with(|inner| {
            for _ in 0..4 {
                inner
                    .scripted
                    .push_back(Answer::json(502, "<html>Bad Gateway</html>"));
            }
        });
        let operations = sync(&app, company_id, QueueDataTypeDataType::Invoices).await;
        let operation = latest(&operations, "invoices");
        assert_eq!(operation.status, PullStatus::Failed);
        let message = operation.error_message.unwrap_or_default();
        assert!(
            message.contains("FreshBooks answered 502 Bad Gateway"),
            "{message}"
        );
        assert_eq!(invoices(&app, company_id).await.len(), 18);
    }
}

#[tokio::test]
async fn a_malformed_freshbooks_answer_fails_the_sync_and_keeps_the_previous_data() {
    for backend in backends() {
        let fake = fake().await;
        let app = TestApp::spawn_with(backend, options_for(&fake, None, 1)).await;
        let (company_id, _) = connected(&app, 43_200).await;
        let operations = sync(&app, company_id, QueueDataTypeDataType::Invoices).await;
        assert_eq!(latest(&operations, "invoices").status, PullStatus::Complete);
        let before = invoices(&app, company_id).await;
        // Page 1 is fine, page 2 is cut off mid-way.
        fake.with(|inner| {
            inner.scripted.push_back(Answer::json(
                200,
                fixture("freshbooks/fixtures/invoices-1.json"),
            ));
            inner.scripted.push_back(Answer::json(
                200,
                "{\"response\": {\"result\": {\"invoices\": [{\"id\": 9, \"amount\": {\"amount\": \"12.5",
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

        // Errors in a 200 answer fail the sync with FreshBooks' words.
        fake.with(|inner| {
            inner.scripted.push_back(Answer::json(
                200,
                "{\"response\": {\"errors\": [{\"errno\": 1012, \"field\": \"page\", \"message\": \"Invalid page.\", \"object\": \"invoice\", \"value\": \"x\"}]}}",
            ));
        });
        let operations = sync(&app, company_id, QueueDataTypeDataType::Invoices).await;
        let operation = latest(&operations, "invoices");
        assert_eq!(operation.status, PullStatus::Failed);
        let message = operation.error_message.unwrap_or_default();
        assert!(message.contains("Invalid page. (errno 1012)"), "{message}");
        assert_eq!(invoices(&app, company_id).await, before);
    }
}

#[tokio::test]
async fn an_unknown_freshbooks_account_fails_with_the_platforms_404() {
    for backend in backends() {
        let fake = fake().await;
        let app = TestApp::spawn_with(backend, options_for(&fake, None, 1)).await;
        let company_id = new_company(&app, "Nobody").await;
        let connection_id = new_connection(&app, company_id, "freshbooks").await;
        assert_eq!(
            authorize(
                &app,
                company_id,
                connection_id,
                &body("nope42", 43_200),
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
            message.contains("FreshBooks answered 404 Not Found: The account could not be found."),
            "{message}"
        );
    }
}

#[tokio::test]
async fn freshbooks_verification_accepts_a_members_token_and_rejects_others_storing_nothing() {
    for backend in backends() {
        let fake = fake().await;
        let app = TestApp::spawn_with(backend, options_for(&fake, None, 0)).await;
        let company_id = new_company(&app, "Maple Leaf Foods").await;

        // Rejected by FreshBooks: 422 with its reason, nothing stored.
        let connection_id = new_connection(&app, company_id, "freshbooks").await;
        let mut wrong = body(ACCOUNT, 43_200);
        wrong["accessToken"] = json!("not-a-token-freshbooks-knows");
        let response = authorize(&app, company_id, connection_id, &wrong, true).await;
        assert_eq!(response.status(), 422);
        let message = json(response).await["error"]
            .as_str()
            .unwrap_or_default()
            .to_owned();
        assert!(message.contains("invalid or has expired"), "{message}");
        assert!(!message.contains("not-a-token-freshbooks-knows"));
        assert_eq!(count_rows(&app, "connection_credential").await, 0);

        // A working token whose user is not a member of this account.
        let other = body("zzz999", 43_200);
        let response = authorize(&app, company_id, connection_id, &other, true).await;
        assert_eq!(response.status(), 422);
        let message = json(response).await["error"]
            .as_str()
            .unwrap_or_default()
            .to_owned();
        assert!(
            message.contains("not a member of account zzz999"),
            "{message}"
        );
        assert_eq!(count_rows(&app, "connection_credential").await, 0);

        // Accepted, for either business the user belongs to.
        let response = authorize(
            &app,
            company_id,
            connection_id,
            &body(ACCOUNT, 43_200),
            true,
        )
        .await;
        assert_eq!(response.status(), 200);
        assert_eq!(json(response).await["status"], "Linked");
        assert_eq!(
            fake.calls().last().map(|call| call.path.clone()).as_deref(),
            Some("/auth/api/v1/users/me")
        );
        let second = new_connection(&app, company_id, "freshbooks").await;
        let response = authorize(&app, company_id, second, &body("kQ3pZ", 43_200), true).await;
        assert_eq!(response.status(), 200);
        assert_eq!(stored(&app, second).await["accountId"], "kQ3pZ");
    }
}
