//! TrueLayer: accounts of every type with their balances, and their
//! transactions one account per page (posted over a date window, and
//! pending), signed by `transaction_type`, read back through the lists;
//! refresh before expiry and on a 401 (client credentials in the form, the
//! rotated refresh token stored), `invalid_grant` after the 90-day consent,
//! `access_denied` and `sca_exceeded`, 429 with `Retry-After`, a 500, a
//! malformed page, data types TrueLayer lacks, and verification at migration.
//!
//! The scenarios every platform shares (`super::scenarios`) run from its
//! `CASE`; the tests here are its own.

use std::sync::Arc;

use chrono::{NaiveDateTime, Utc};
use serde_json::{Value, json};
use uuid::Uuid;

use client::types::{ConnectionStatus, FetchMode, PullStatus, QueueDataTypeDataType};

use super::fake::{Answer, Call, Fake, Scheme, fixture};
use super::scenarios::unfiltered::{Unfiltered, unfiltered_scenario};
use super::scenarios::{
    Another, Case, Cut, Errors, Pages, Refresh, Refused, Synced, Verification,
    connected as connected_as, platform_scenarios, records,
};
use super::{latest, options_for, sync};
use crate::helpers::{TestApp, backends, json};

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
    connected_as(app, &CASE, &(CASE.authorization)(expires_in)).await
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
    records(app, company_id, "bankTransactions").await
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

/// TrueLayer in the shared scenarios.
static CASE: Case = Case {
    key: "truelayer",
    name: "TrueLayer",
    fake: || Box::pin(fake()),
    page_size: None,
    authorization: body,
    access: ACCESS,
    refresh: REFRESH,
    lasting: 3600,
    kept: &["credentialsId", "environment"],
    sync: Synced {
        data_type: "bankTransactions",
        records: 6,
        // The accounts and eight transaction calls.
        calls: 9,
    },
    syncs: &["bankAccounts", "bankTransactions"],
    errors: Errors {
        rate_limited: include_str!("fixtures/rate-limited.json"),
        rate_limit_headers: &[],
        rate_limited_says: "",
        server_error: include_str!("fixtures/internal-server-error.json"),
        unavailable: (500, include_str!("fixtures/internal-server-error.json")),
        unavailable_says: "TrueLayer answered 500 Internal Server Error: Internal server error.",
        refused: Refused::AsARejectedToken(
            "TrueLayer answers 403 when the consent lapsed, was revoked or the strong-authentication window passed: the end user must reconnect (NOTES.md)",
        ),
    },
    pages: Pages {
        prelude: |_| {
            vec![Answer::json(
                200,
                fixture("truelayer/fixtures/accounts.json"),
            )]
        },
        first: |_| Answer::json(200, fixture("truelayer/fixtures/transactions-current.json")),
        cut: Cut::FirstPage,
        truncated: r#"{"results": [{"transaction_id": "x", "amount": 12.5"#,
        truncated_says: "TrueLayer answered an account's transactions that tributary cannot read",
        records_at: "/results",
        id_at: "/transaction_id",
        field: "/amount",
    },
    refresh_with: Some(Refresh {
        rejected_after: 3,
        ..Refresh::ROTATING
    }),
    unrefreshable: None,
    verification: Verification {
        rejected_says: &["The credentials or token are no longer valid"],
        another_account: Some(Another {
            authorization: || {
                let mut other = body(3600);
                other["credentialsId"] = json!("someone-elses-credentials");
                other
            },
            says: &["another TrueLayer connection"],
        }),
        verified_by: |calls| {
            calls
                .last()
                .is_some_and(|call| call.path == "/data/v1/me" && call.token == ACCESS)
        },
    },
    unknown_account: None,
};

platform_scenarios!(CASE, refreshes, refreshes_before_expiry);

/// TrueLayer resynced, in the shared scenario of the platforms without a
/// modified-since filter (`scenarios::unfiltered`).
static UNFILTERED: Unfiltered = Unfiltered {
    why: "transactions filter by booking date, not change time: every sync reads a trailing 89-day window",
    mode: FetchMode::Full,
    resync_calls: 9,
    quiet: None,
};

unfiltered_scenario!(CASE, UNFILTERED);

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
