//! TrueLayer: accounts of every type with their balances, and their
//! transactions one account per page (posted over a date window, and
//! pending), signed by `transaction_type`, read back through the lists;
//! refresh before expiry and on a 401 (client credentials in the form, the
//! rotated refresh token stored), `invalid_grant` after the 90-day consent,
//! `access_denied` and `sca_exceeded`, 429 with `Retry-After`, a 500, a
//! malformed page, data types TrueLayer lacks, and verification at migration.

use std::sync::Arc;
use std::time::Duration;

use chrono::{NaiveDateTime, Utc};
use serde_json::{Value, json};
use uuid::Uuid;

use client::types::{ConnectionStatus, PullStatus, QueueDataTypeDataType};

use super::fake::{Answer, Call, Fake, Scheme, fixture};
use super::{authorize, latest, options_for, set_oauth_client, stored, sync};
use crate::connections::{count_rows, new_company, new_connection};
use crate::helpers::{TestApp, backends, captured_logs, json};

pub(crate) const CREDENTIALS: &str = "6L7ZvLhhzN7Dg2fIMeqJsU1gdZcJKwFvXpFGAtbeLHE=";
const ACCESS: &str = "eyJhbGciOiJSUzI1NiIsImtpZCI6IjE0NTk4OUIwNTdDOUMzMzg0MDc4MDBBOEJBNkNCOUZGQjc0RERBN0IiLCJ0eXAiOiJKV1QifQ.truelayer-access";
const REFRESH: &str = "1C5C9C7E0D2B3A4F5E6D7C8B9A0F1E2D3C4B5A6F7E8D9C0B1A2F3E4D5C6B7A8F";

const CURRENT: &str = "56c7b029e0f8ec5a2334fb0ffc2fface";
const SAVINGS: &str = "9a3b2c1d0e8f7a6b5c4d3e2f1a0b9c8d";
const BUSINESS: &str = "e2f1a0b9c8d7e6f5a4b3c2d1e0f9a8b7";
const RESERVE: &str = "0f9e8d7c6b5a4f3e2d1c0b9a8f7e6d5c";

/// The fixture name of each account.
fn short(account_id: &str) -> Option<&'static str> {
    match account_id {
        CURRENT => Some("current"),
        SAVINGS => Some("savings"),
        BUSINESS => Some("business"),
        RESERVE => Some("business-savings"),
        _ => None,
    }
}

/// Serves the TrueLayer fixtures by path.
fn router() -> super::fake::Router {
    Arc::new(|call: &Call| {
        let not_found = || {
            Answer::json(
                404,
                "{\"error\":\"account_not_found\",\"error_description\":\"The requested account cannot be found.\",\"error_details\":{}}",
            )
        };
        let Some(path) = call.path.strip_prefix("/data/v1") else {
            return not_found();
        };
        let segments: Vec<&str> = path.trim_start_matches('/').split('/').collect();
        match segments.as_slice() {
            ["me"] => Answer::json(200, fixture("truelayer/fixtures/me.json")),
            ["accounts"] => Answer::json(200, fixture("truelayer/fixtures/accounts.json")),
            ["accounts", id, "balance"] => match short(id) {
                Some(name) => Answer::json(
                    200,
                    fixture(&format!("truelayer/fixtures/balance-{name}.json")),
                ),
                None => not_found(),
            },
            ["accounts", id, "transactions"] => match short(id) {
                Some("business-savings") => {
                    Answer::json(200, fixture("truelayer/fixtures/empty.json"))
                }
                Some(name) => Answer::json(
                    200,
                    fixture(&format!("truelayer/fixtures/transactions-{name}.json")),
                ),
                None => not_found(),
            },
            ["accounts", id, "transactions", "pending"] => match short(id) {
                Some("current") => {
                    Answer::json(200, fixture("truelayer/fixtures/pending-current.json"))
                }
                Some(_) => Answer::json(200, fixture("truelayer/fixtures/empty.json")),
                None => not_found(),
            },
            _ => not_found(),
        }
    })
}

pub(crate) async fn fake() -> Fake {
    let fake = Fake::start(
        "truelayer",
        Scheme::Bearer,
        ACCESS,
        REFRESH,
        fixture("truelayer/fixtures/unauthorized.json"),
        router(),
    )
    .await;
    // TrueLayer's client authenticates in the form body.
    fake.with(|inner| inner.client_in_body = true);
    fake
}

fn body(expires_in: i64) -> Value {
    json!({
        "credentialsId": CREDENTIALS,
        "providerId": "lloyds",
        "environment": "sandbox",
        "accessToken": ACCESS,
        "refreshToken": REFRESH,
        "expiresIn": expires_in
    })
}

/// A company with an authorized TrueLayer connection.
async fn connected(app: &TestApp, expires_in: i64) -> (Uuid, Uuid) {
    let company_id = new_company(app, "Lloyd's Bakery").await;
    let connection_id = new_connection(app, company_id, "truelayer").await;
    let response = authorize(app, company_id, connection_id, &body(expires_in), false).await;
    assert_eq!(response.status(), 200);
    (company_id, connection_id)
}

async fn list(app: &TestApp, company_id: Uuid, data_type: &str, query: &str) -> Vec<Value> {
    json(
        app.get(&format!("/companies/{company_id}/data/{data_type}?{query}"))
            .await,
    )
    .await["results"]
        .as_array()
        .cloned()
        .unwrap_or_default()
}

async fn transactions(app: &TestApp, company_id: Uuid) -> Vec<Value> {
    list(app, company_id, "bankTransactions", "pageSize=100").await
}

fn by<'a>(records: &'a [Value], field: &str, id: &str) -> &'a Value {
    records
        .iter()
        .find(|record| record[field] == id)
        .unwrap_or_else(|| panic!("{id} synced"))
}

async fn deauthorized(app: &TestApp, company_id: Uuid, connection_id: Uuid) -> bool {
    let connection = app
        .client
        .get_connection(&company_id, &connection_id)
        .await
        .expect("found")
        .into_inner();
    connection.status == ConnectionStatus::Deauthorized
}

#[tokio::test]
async fn truelayer_accounts_of_every_type_sync_with_balances_and_masked_numbers() {
    for backend in backends() {
        let fake = fake().await;
        let app = TestApp::spawn_with(backend, options_for(&fake, None, 1)).await;
        let (company_id, connection_id) = connected(&app, 3600).await;
        let operations = sync(&app, company_id, QueueDataTypeDataType::BankAccounts).await;
        let operation = latest(&operations, "bankAccounts");
        assert_eq!(operation.status, PullStatus::Complete, "{operation:?}");

        let accounts = list(&app, company_id, "bankAccounts", "pageSize=100").await;
        assert_eq!(accounts.len(), 4, "{accounts:#?}");
        for (id, name, kind, currency, current, available, masked, institution) in [
            (
                CURRENT,
                "Club Lloyds",
                "Current",
                "GBP",
                json!("1161.20"),
                json!("1161.20"),
                json!("••••5678"),
                "LLOYDS",
            ),
            (
                SAVINGS,
                "Easy Saver",
                "Savings",
                "GBP",
                json!("2500.0625"),
                json!("2500.0625"),
                json!("••••4321"),
                "LLOYDS",
            ),
            (
                BUSINESS,
                "Business Current",
                "Current",
                "EUR",
                json!("-320.45"),
                Value::Null,
                json!("••••5678"),
                "ob-aib",
            ),
            (
                RESERVE,
                "Business Reserve",
                "Savings",
                "GBP",
                Value::Null,
                Value::Null,
                Value::Null,
                "LLOYDS",
            ),
        ] {
            let account = by(&accounts, "accountId", id);
            assert_eq!(account["accountName"], name, "{account}");
            assert_eq!(account["accountType"], kind, "{account}");
            assert_eq!(account["currency"], currency, "{account}");
            assert_eq!(account["currentBalance"], current, "{account}");
            assert_eq!(account["availableBalance"], available, "{account}");
            assert_eq!(account["maskedAccountNumber"], masked, "{account}");
            assert_eq!(account["institution"], institution, "{account}");
            assert_eq!(account["connectionId"], connection_id.to_string());
        }
        assert_eq!(
            by(&accounts, "accountId", CURRENT)["sourceModifiedDate"],
            "2026-11-03T10:35:03.012000Z"
        );
        // Without a balance, the account's own update time.
        assert_eq!(
            by(&accounts, "accountId", RESERVE)["sourceModifiedDate"],
            "2026-11-01T08:00:00.000000Z"
        );
        let paths: Vec<String> = fake.calls().iter().map(|call| call.path.clone()).collect();
        assert_eq!(
            paths,
            [
                "/data/v1/accounts".to_owned(),
                format!("/data/v1/accounts/{CURRENT}/balance"),
                format!("/data/v1/accounts/{SAVINGS}/balance"),
                format!("/data/v1/accounts/{BUSINESS}/balance"),
                format!("/data/v1/accounts/{RESERVE}/balance"),
            ]
        );
        assert!(fake.calls().iter().all(|call| call.token == ACCESS));
        assert_eq!(fake.token_calls(), 0, "an hour-long token is not refreshed");
    }
}

#[tokio::test]
async fn truelayer_transactions_sync_one_account_per_page_signed_posted_and_pending() {
    for backend in backends() {
        let fake = fake().await;
        let app = TestApp::spawn_with(backend, options_for(&fake, None, 1)).await;
        let (company_id, _) = connected(&app, 3600).await;
        let operations = sync(&app, company_id, QueueDataTypeDataType::BankTransactions).await;
        let operation = latest(&operations, "bankTransactions");
        assert_eq!(operation.status, PullStatus::Complete, "{operation:?}");

        let transactions = transactions(&app, company_id).await;
        assert_eq!(transactions.len(), 6, "{transactions:#?}");
        for (id, account, date, amount, currency, status, merchant, category) in [
            (
                "a15d8156569ba848d84c07c34d291bca",
                CURRENT,
                "2026-10-28",
                "-24.57",
                "GBP",
                "Posted",
                json!("Sainsbury's"),
                json!("Shopping > Groceries"),
            ),
            (
                "b26e9267670cb959e95d18d45e302cdb",
                CURRENT,
                "2026-10-30",
                "2100.00",
                "GBP",
                "Posted",
                Value::Null,
                json!("CREDIT"),
            ),
            // A DEBIT the bank wrote unsigned is still money out.
            (
                "c37fa378781dca6afa6e29e56f413dec",
                CURRENT,
                "2026-10-31",
                "-7.80",
                "GBP",
                "Posted",
                json!("Transport for London"),
                json!("Transport"),
            ),
            (
                "d48ab48989aedb7bab7f3af67a524efd",
                CURRENT,
                "2026-11-03",
                "-3.45",
                "GBP",
                "Pending",
                json!("Pret A Manger"),
                json!("Food & Dining > Coffee shops"),
            ),
            (
                "e59bc59a9abfec8cbc8a4ba78b635f0e",
                SAVINGS,
                "2026-10-31",
                "3.1275",
                "GBP",
                "Posted",
                Value::Null,
                json!("INTEREST"),
            ),
            // The bank's own date, whatever its offset.
            (
                "f6acd6ababc0fd9dcd9b5cb89c74601f",
                BUSINESS,
                "2026-10-29",
                "980.50",
                "EUR",
                "Posted",
                Value::Null,
                json!("TRANSFER"),
            ),
        ] {
            let transaction = by(&transactions, "transactionId", id);
            assert_eq!(transaction["accountId"], account, "{transaction}");
            assert_eq!(transaction["date"], date, "{transaction}");
            assert_eq!(transaction["amount"], amount, "{transaction}");
            assert_eq!(transaction["currency"], currency, "{transaction}");
            assert_eq!(transaction["status"], status, "{transaction}");
            assert_eq!(transaction["merchantName"], merchant, "{transaction}");
            assert_eq!(transaction["category"], category, "{transaction}");
        }
        assert_eq!(
            by(
                &transactions,
                "transactionId",
                "a15d8156569ba848d84c07c34d291bca"
            )["description"],
            "SAINSBURYS SMKT LONDON"
        );
        let savings = list(
            &app,
            company_id,
            "bankTransactions",
            &format!("accountId={SAVINGS}&pageSize=10"),
        )
        .await;
        assert_eq!(savings.len(), 1);

        // The account list, then per account its posted and pending transactions.
        let calls = fake.calls();
        let paths: Vec<String> = calls.iter().map(|call| call.path.clone()).collect();
        let mut expected = vec!["/data/v1/accounts".to_owned()];
        for account in [CURRENT, SAVINGS, BUSINESS, RESERVE] {
            expected.push(format!("/data/v1/accounts/{account}/transactions"));
            expected.push(format!("/data/v1/accounts/{account}/transactions/pending"));
        }
        assert_eq!(paths, expected);
        // Posted transactions over the last 89 days.
        let posted = &calls[1];
        let at = |name: &str| {
            NaiveDateTime::parse_from_str(&posted.query[name], "%Y-%m-%dT%H:%M:%SZ")
                .expect("a UTC date-time")
                .and_utc()
        };
        assert_eq!((at("to") - at("from")).num_days(), 89);
        assert!((Utc::now() - at("to")).num_minutes() < 5);
        assert!(calls[2].query.is_empty(), "pending takes no window");
    }
}

#[tokio::test]
async fn truelayer_has_no_invoices_customers_or_orders_and_says_so() {
    for backend in backends() {
        let fake = fake().await;
        let app = TestApp::spawn_with(backend, options_for(&fake, None, 1)).await;
        let (company_id, _) = connected(&app, 3600).await;
        for data_type in ["invoices", "customers", "orders"] {
            let queued = app
                .post_json(
                    &format!("/companies/{company_id}/data/queue/{data_type}"),
                    &json!(null),
                )
                .await;
            assert_eq!(queued.status(), 202);
            let queued = json(queued).await;
            assert_eq!(queued[0]["status"], "NotSupported", "{queued}");
            assert_eq!(
                queued[0]["errorMessage"],
                format!("TrueLayer has no {data_type}; it syncs bankAccounts, bankTransactions.")
            );
        }
        crate::sync::settled(&app.client, company_id).await;
        assert!(fake.calls().is_empty(), "nothing asked of TrueLayer");
        let integration = json(app.get("/integrations/truelayer").await).await;
        assert_eq!(
            integration["dataTypes"],
            json!(["bankAccounts", "bankTransactions"]),
            "{integration}"
        );
    }
}

#[tokio::test]
async fn a_truelayer_token_about_to_expire_is_refreshed_first_and_the_new_refresh_token_kept() {
    for backend in backends() {
        let fake = fake().await;
        let app = TestApp::spawn_with(backend, options_for(&fake, None, 1)).await;
        set_oauth_client(&app, "truelayer").await;
        let (company_id, connection_id) = connected(&app, 60).await;
        let operations = sync(&app, company_id, QueueDataTypeDataType::BankAccounts).await;
        assert_eq!(
            latest(&operations, "bankAccounts").status,
            PullStatus::Complete
        );
        assert_eq!(fake.token_calls(), 1);
        assert!(
            fake.calls()
                .iter()
                .all(|call| call.token == "at-refreshed-1")
        );
        // The refresh grant, client credentials in the form (checked by the fake).
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
        assert_eq!(credentials["credentialsId"], CREDENTIALS);
        assert_eq!(credentials["environment"], "sandbox");
    }
}

#[tokio::test]
async fn a_truelayer_token_rejected_mid_sync_is_refreshed_once_and_the_sync_completes() {
    for backend in backends() {
        let fake = fake().await;
        let app = TestApp::spawn_with(backend, options_for(&fake, None, 1)).await;
        set_oauth_client(&app, "truelayer").await;
        let (company_id, connection_id) = connected(&app, 3600).await;
        fake.with(|inner| inner.expire_after = Some(3));
        let operations = sync(&app, company_id, QueueDataTypeDataType::BankTransactions).await;
        let operation = latest(&operations, "bankTransactions");
        assert_eq!(operation.status, PullStatus::Complete, "{operation:?}");
        assert_eq!(transactions(&app, company_id).await.len(), 6);
        assert_eq!(fake.token_calls(), 1);
        let credentials = stored(&app, connection_id).await;
        assert_eq!(credentials["accessToken"], "at-refreshed-1");
        assert_eq!(credentials["refreshToken"], "rt-rotated-1");
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
async fn invalid_grant_after_the_consent_lapsed_deauthorizes_the_truelayer_connection() {
    for backend in backends() {
        let fake = fake().await;
        let app = TestApp::spawn_with(backend, options_for(&fake, None, 1)).await;
        set_oauth_client(&app, "truelayer").await;
        let (company_id, connection_id) = connected(&app, 120).await;
        fake.with(|inner| inner.refresh_token = "consent-expired-after-90-days".to_owned());
        let operations = sync(&app, company_id, QueueDataTypeDataType::BankAccounts).await;
        let operation = latest(&operations, "bankAccounts");
        assert_eq!(operation.status, PullStatus::AuthError);
        let message = operation.error_message.unwrap_or_default();
        assert!(message.contains("invalid_grant"), "{message}");
        assert!(!message.contains(REFRESH));
        assert!(deauthorized(&app, company_id, connection_id).await);
        assert!(
            fake.calls().is_empty(),
            "no API call with an expiring token"
        );
    }
}

#[tokio::test]
async fn access_denied_and_sca_exceeded_deauthorize_with_a_clear_message() {
    for backend in backends() {
        for (fixture_name, words) in [
            ("access-denied", "Access to this resource has been denied"),
            ("sca-exceeded", "SCA exemption has expired"),
        ] {
            let fake = fake().await;
            let app = TestApp::spawn_with(backend, options_for(&fake, None, 1)).await;
            let (company_id, connection_id) = connected(&app, 3600).await;
            fake.with(|inner| {
                inner.scripted.push_back(Answer::json(
                    200,
                    fixture("truelayer/fixtures/accounts.json"),
                ));
                inner.scripted.push_back(Answer::json(
                    403,
                    fixture(&format!("truelayer/fixtures/{fixture_name}.json")),
                ));
            });
            let operations = sync(&app, company_id, QueueDataTypeDataType::BankTransactions).await;
            let operation = latest(&operations, "bankTransactions");
            assert_eq!(operation.status, PullStatus::AuthError, "{operation:?}");
            let message = operation.error_message.unwrap_or_default();
            assert!(
                message.contains(&format!("TrueLayer answered 403 Forbidden: {words}")),
                "{message}"
            );
            assert!(
                message.contains("TrueLayer connections last 90 days"),
                "{message}"
            );
            assert!(message.contains("have them reconnect"), "{message}");
            assert!(deauthorized(&app, company_id, connection_id).await);
            assert_eq!(fake.token_calls(), 0, "a 403 is not cured by a refresh");
        }
    }
}

#[tokio::test]
async fn truelayer_rate_limits_wait_for_retry_after_and_server_errors_are_retried() {
    for backend in backends() {
        let fake = fake().await;
        let app = TestApp::spawn_with(backend, options_for(&fake, None, 1)).await;
        let (company_id, _) = connected(&app, 3600).await;
        fake.with(|inner| {
            inner.scripted.push_back(Answer {
                status: 429,
                headers: vec![("Retry-After".to_owned(), "1".to_owned())],
                body: fixture("truelayer/fixtures/rate-limited.json"),
            });
            inner.scripted.push_back(Answer::json(
                500,
                fixture("truelayer/fixtures/internal-server-error.json"),
            ));
        });
        let started = std::time::Instant::now();
        let operations = sync(&app, company_id, QueueDataTypeDataType::BankTransactions).await;
        assert_eq!(
            latest(&operations, "bankTransactions").status,
            PullStatus::Complete
        );
        assert!(
            started.elapsed() >= Duration::from_secs(1),
            "Retry-After was honoured"
        );
        assert_eq!(transactions(&app, company_id).await.len(), 6);
        // Two failed attempts, then the accounts and eight transaction calls.
        assert_eq!(fake.calls().len(), 11);

        fake.with(|inner| {
            for _ in 0..4 {
                inner.scripted.push_back(Answer::json(
                    500,
                    fixture("truelayer/fixtures/internal-server-error.json"),
                ));
            }
        });
        let operations = sync(&app, company_id, QueueDataTypeDataType::BankTransactions).await;
        let operation = latest(&operations, "bankTransactions");
        assert_eq!(operation.status, PullStatus::Failed);
        let message = operation.error_message.unwrap_or_default();
        assert!(
            message
                .contains("TrueLayer answered 500 Internal Server Error: Internal server error."),
            "{message}"
        );
        assert_eq!(transactions(&app, company_id).await.len(), 6);
    }
}

#[tokio::test]
async fn a_malformed_truelayer_page_fails_the_sync_and_keeps_the_previous_transactions() {
    for backend in backends() {
        let fake = fake().await;
        let app = TestApp::spawn_with(backend, options_for(&fake, None, 1)).await;
        let (company_id, _) = connected(&app, 3600).await;
        let operations = sync(&app, company_id, QueueDataTypeDataType::BankTransactions).await;
        assert_eq!(
            latest(&operations, "bankTransactions").status,
            PullStatus::Complete
        );
        let before = transactions(&app, company_id).await;
        fake.with(|inner| {
            inner.scripted.push_back(Answer::json(
                200,
                fixture("truelayer/fixtures/accounts.json"),
            ));
            inner.scripted.push_back(Answer::json(
                200,
                "{\"results\": [{\"transaction_id\": \"x\", \"amount\": 12.5",
            ));
        });
        let operations = sync(&app, company_id, QueueDataTypeDataType::BankTransactions).await;
        let operation = latest(&operations, "bankTransactions");
        assert_eq!(operation.status, PullStatus::Failed);
        let message = operation.error_message.unwrap_or_default();
        assert!(
            message.contains(
                "TrueLayer answered an account's transactions that tributary cannot read"
            ),
            "{message}"
        );
        assert_eq!(transactions(&app, company_id).await, before);
    }
}

#[tokio::test]
async fn truelayer_verification_at_migration_accepts_working_tokens_and_rejects_others() {
    for backend in backends() {
        let fake = fake().await;
        let app = TestApp::spawn_with(backend, options_for(&fake, None, 0)).await;
        let company_id = new_company(&app, "Lloyd's Bakery").await;
        let connection_id = new_connection(&app, company_id, "truelayer").await;

        let mut wrong = body(3600);
        wrong["accessToken"] = json!("not-a-token-truelayer-knows");
        let response = authorize(&app, company_id, connection_id, &wrong, true).await;
        assert_eq!(response.status(), 422);
        let message = json(response).await["error"]
            .as_str()
            .unwrap_or_default()
            .to_owned();
        assert!(
            message.contains("The credentials or token are no longer valid"),
            "{message}"
        );
        assert!(!message.contains("not-a-token-truelayer-knows"));

        let mut other = body(3600);
        other["credentialsId"] = json!("someone-elses-credentials");
        let response = authorize(&app, company_id, connection_id, &other, true).await;
        assert_eq!(response.status(), 422);
        let message = json(response).await["error"]
            .as_str()
            .unwrap_or_default()
            .to_owned();
        assert!(
            message.contains("another TrueLayer connection"),
            "{message}"
        );
        assert_eq!(count_rows(&app, "connection_credential").await, 0);

        let response = authorize(&app, company_id, connection_id, &body(3600), true).await;
        assert_eq!(response.status(), 200);
        assert_eq!(json(response).await["status"], "Linked");
        let last = fake.calls().last().cloned().expect("a verification call");
        assert_eq!(last.path, "/data/v1/me");
        assert_eq!(last.token, ACCESS);

        // Without verify nothing is called.
        let calls = fake.calls().len();
        let second = new_connection(&app, company_id, "truelayer").await;
        assert_eq!(
            authorize(&app, company_id, second, &wrong, false)
                .await
                .status(),
            200
        );
        assert_eq!(fake.calls().len(), calls);
    }
}

#[tokio::test]
async fn a_transaction_leaving_truelayers_89_day_window_leaves_the_list_unflagged() {
    for backend in backends() {
        let fake = fake().await;
        let app = TestApp::spawn_with(backend, options_for(&fake, None, 1)).await;
        let (company_id, _) = connected(&app, 3600).await;
        sync(&app, company_id, QueueDataTypeDataType::BankTransactions).await;
        let before = transactions(&app, company_id).await;
        // The current account's oldest posted transaction is no longer in
        // the window the next sync asks for.
        let mut current: Value =
            serde_json::from_str(&fixture("truelayer/fixtures/transactions-current.json"))
                .expect("JSON");
        let posted = current["results"].as_array_mut().expect("results");
        let aged_out = posted.remove(0);
        fake.with(|inner| {
            inner.scripted.push_back(Answer::json(
                200,
                fixture("truelayer/fixtures/accounts.json"),
            ));
            inner
                .scripted
                .push_back(Answer::json(200, current.to_string()));
        });
        let operations = sync(&app, company_id, QueueDataTypeDataType::BankTransactions).await;
        assert_eq!(
            latest(&operations, "bankTransactions").status,
            PullStatus::Complete
        );
        let after = transactions(&app, company_id).await;
        assert_eq!(after.len(), before.len() - 1, "gone, not flagged deleted");
        assert!(
            after
                .iter()
                .all(|transaction| transaction["isDeleted"] == false)
        );
        assert!(
            !after
                .iter()
                .any(|transaction| transaction["transactionId"] == aged_out["transaction_id"])
        );
    }
}
