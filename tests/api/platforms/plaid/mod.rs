//! Plaid: an Item's accounts of every type, and its transactions over three
//! `/transactions/sync` pages (`cursor` → `next_cursor` while `has_more`,
//! with a modified and a removed transaction), read back through the lists;
//! the keys in Plaid's headers and the access token in the body; no refresh
//! (the token does not expire); `ITEM_LOGIN_REQUIRED` deauthorizes; 429 with
//! `Retry-After`, a 500, a mutation during pagination, a malformed page,
//! data types Plaid lacks, and verification at migration.
//!
//! The scenarios every platform shares (`super::scenarios`) run from its
//! `CASE`; the tests here are its own.

use std::sync::Arc;

use serde_json::{Value, json};
use uuid::Uuid;

use client::types::{ConnectionStatus, FetchMode, PullStatus, QueueDataTypeDataType};

use super::fake::{Answer, Call, Fake, Scheme, fixture};
use super::scenarios::unfiltered::{Unfiltered, unfiltered_scenario};
use super::scenarios::{
    Another, Case, Cut, Errors, Pages, Refused, Synced, Unrefreshable, Verification,
    connected as connected_as, platform_scenarios,
};
use super::{authorize, latest, options_for, sync};
use crate::connections::{new_company, new_connection};
use crate::helpers::{TestApp, backends, json};

const ITEM: &str = "Ed6bjNrDLJfGvZWwnkQlfxwoNz54B5C97ejBr";
const ACCESS: &str = "access-sandbox-de3ce8ef-33f8-452c-a685-8671031fc0f6";
const CLIENT_ID: &str = "5f3e9c1a2b4d6e0012345678";
const SECRET: &str = "plaid-sandbox-secret-9f8e7d6c5b4a";
/// Transaction updates per `/transactions/sync` call in these tests (`count`).
const PAGE: u64 = 3;
/// The `next_cursor` of the first and of the second page.
const CURSOR_1: &str = "tVUUL15lYQN5rBnfDIc1I8xudpGdIlw9nsgeXWvhOfkECvUeR663i3Dt1uf/94S8ASkitgLcIiOSqNwzzp+bh89kirazha5vuZHBb2ZA5NtCDkkV";
const CURSOR_2: &str = "uWVVM26mZRO6sCogEJd2J9yvefHeJmx0otfhfYXwiPglDwVfS774j4Eu2vg/05T9BTljuhMdJjPTrOx00q+ci90ljbsaib6wvaICc3aB6OuDElmW";
/// The `next_cursor` of the history's last page: where the next update starts.
const CURSOR_3: &str = "vXWWN37naSP7tDphFKe3K0zwfgIfKny1pugigZYxjQhmEwWgT885k5Fv3wh/16U0CUmkviNeKkQUsPy11r+dj01mkctbjc7xwbJDd4bC7PvEFmnX";
/// The `next_cursor` of the update after it (`sync-changes.json`).
const CURSOR_4: &str = "wYXXO48obTQ8uEqiGLf4L1axhgJgLoz2qvhjhaZykRinFxXhU996l6Gw4xi/27V1DVnlwjOfLlRVtQz22s+ek12nldudkd8yxcKEe5cD8QwGnoY";

fn body_of(call: &Call) -> Value {
    serde_json::from_str(&call.body).unwrap_or(Value::Null)
}

/// Serves the Plaid fixtures: the accounts, three sync pages of the history
/// by cursor, then from the history's last cursor one update (a transaction
/// modified, one added, one removed) and from its cursor nothing new.
/// The keys come in the headers (the secret is the fake's "token"), the
/// access token in the body.
fn router() -> super::fake::Router {
    Arc::new(|call: &Call| {
        let body = body_of(call);
        if call.method != "POST" || body["access_token"] != ACCESS {
            return Answer::json(400, fixture("plaid/fixtures/invalid-access-token.json"));
        }
        if call.headers.get("plaid-client-id").map(String::as_str) != Some(CLIENT_ID) {
            return Answer::json(400, fixture("plaid/fixtures/invalid-api-keys.json"));
        }
        match call.path.as_str() {
            "/accounts/get" => Answer::json(200, fixture("plaid/fixtures/accounts.json")),
            "/transactions/sync" => {
                let page = match body["cursor"].as_str() {
                    None => "first",
                    Some(CURSOR_1) => "second",
                    Some(CURSOR_2) => "last",
                    Some(CURSOR_3) => "changes",
                    Some(CURSOR_4) => "nothing-new",
                    Some(_) => {
                        return Answer::json(
                            400,
                            "{\"error_type\":\"INVALID_INPUT\",\"error_code\":\"INVALID_FIELD\",\"error_message\":\"cursor not recognized\"}",
                        );
                    }
                };
                Answer::json(200, fixture(&format!("plaid/fixtures/sync-{page}.json")))
            }
            _ => Answer::json(
                404,
                "{\"error_type\":\"INVALID_REQUEST\",\"error_code\":\"NOT_FOUND\",\"error_message\":\"not found\"}",
            ),
        }
    })
}

async fn fake() -> Fake {
    Fake::start(
        "plaid",
        Scheme::Header("plaid-secret"),
        SECRET,
        "plaid-has-no-refresh-token",
        fixture("plaid/fixtures/invalid-api-keys.json"),
        router(),
    )
    .await
}

fn body() -> Value {
    json!({"itemId": ITEM, "environment": "sandbox", "accessToken": ACCESS, "clientId": CLIENT_ID, "secret": SECRET})
}

/// A company with an authorized Plaid connection.
async fn connected(app: &TestApp) -> (Uuid, Uuid) {
    connected_as(app, &CASE, &(CASE.authorization)(0)).await
}

async fn list(app: &TestApp, company_id: Uuid, data_type: &str, query: &str) -> Value {
    json(
        app.get(&format!("/companies/{company_id}/data/{data_type}?{query}"))
            .await,
    )
    .await
}

async fn all(app: &TestApp, company_id: Uuid, data_type: &str) -> Vec<Value> {
    list(app, company_id, data_type, "pageSize=100").await["results"]
        .as_array()
        .cloned()
        .unwrap_or_default()
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

/// Plaid in the shared scenarios: its access token never expires and there
/// is nothing to refresh it with.
static CASE: Case = Case {
    key: "plaid",
    name: "Plaid",
    fake: || Box::pin(fake()),
    page_size: Some(PAGE),
    authorization: |_| body(),
    access: ACCESS,
    refresh: "plaid-has-no-refresh-token",
    lasting: 3600,
    kept: &[],
    sync: Synced {
        data_type: "bankTransactions",
        // Six added, one of them modified later, one removed.
        records: 5,
        calls: 3,
    },
    syncs: &["bankAccounts", "bankTransactions"],
    errors: Errors {
        rate_limited: include_str!("fixtures/rate-limit.json"),
        rate_limit_headers: &[],
        rate_limited_says: "",
        server_error: include_str!("fixtures/internal-server-error.json"),
        unavailable: (500, include_str!("fixtures/internal-server-error.json")),
        unavailable_says: "Plaid answered 500 Internal Server Error: INTERNAL_SERVER_ERROR: an unexpected error occurred",
        refused: Refused::AsARejectedToken(
            "a product the Item was not granted (ADDITIONAL_CONSENT_REQUIRED) needs its owner in Link's update mode, so it deauthorizes like the Item errors that need them",
        ),
    },
    pages: Pages {
        prelude: |_| Vec::new(),
        first: |_| Answer::json(200, fixture("plaid/fixtures/sync-first.json")),
        cut: Cut::SecondPage,
        truncated: r#"{"added": [{"transaction_id": "x", "amount": 12.5"#,
        truncated_says: "Plaid answered a page of transactions that tributary cannot read",
        // The second: the first is modified readably on a later page.
        records_at: "/added/1",
        id_at: "/transaction_id",
        field: "/amount",
    },
    refresh_with: None,
    // Keys Plaid no longer accepts.
    unrefreshable: Some(Unrefreshable {
        authorization: body,
        says: &["INVALID_API_KEYS"],
    }),
    verification: Verification {
        rejected_says: &["INVALID_ACCESS_TOKEN"],
        another_account: Some(Another {
            authorization: || {
                let mut other_item = body();
                other_item["itemId"] = json!("someone-elses-item");
                other_item
            },
            says: &["another Plaid Item"],
        }),
        verified_by: |calls| {
            calls
                .last()
                .is_some_and(|call| call.path == "/accounts/get" && call.token == SECRET)
        },
    },
    unknown_account: None,
};

platform_scenarios!(CASE, unrefreshable);

/// Plaid resynced, in the shared scenario of the platforms without a
/// modified-since filter (`scenarios::unfiltered`).
static UNFILTERED: Unfiltered = Unfiltered {
    why: "not a time filter but a cursor: `/transactions/sync` from the last `next_cursor`",
    mode: FetchMode::Incremental,
    resync_calls: 1,
    // The fake's update from the history's last cursor changes three
    // transactions; unchanged, Plaid answers it with nothing new.
    quiet: Some(|call| {
        (call.path == "/transactions/sync" && body_of(call)["cursor"] == CURSOR_3)
            .then(|| Answer::json(200, fixture("plaid/fixtures/sync-nothing-new.json")))
    }),
};

unfiltered_scenario!(CASE, UNFILTERED);

#[tokio::test]
async fn plaid_accounts_of_every_type_sync_with_balances_read_back_exactly() {
    for backend in backends() {
        let fake = fake().await;
        let app = TestApp::spawn_with(backend, options_for(&fake, Some(PAGE), 1)).await;
        let (company_id, connection_id) = connected(&app).await;
        let operations = sync(&app, company_id, QueueDataTypeDataType::BankAccounts).await;
        let operation = latest(&operations, "bankAccounts");
        assert_eq!(operation.status, PullStatus::Complete, "{operation:?}");

        let accounts = all(&app, company_id, "bankAccounts").await;
        assert_eq!(accounts.len(), 6, "{accounts:#?}");
        // By name.
        let names: Vec<_> = accounts.iter().map(|a| a["accountName"].clone()).collect();
        assert_eq!(
            names,
            [
                "Crypto wallet",
                "Plaid 401k",
                "Plaid Checking",
                "Plaid Credit Card",
                "Plaid Mortgage",
                "Plaid Saving"
            ]
        );
        for (id, kind, current, available) in [
            (
                "BxBXxLj1m4HMXBm9WZZmCWVbPjX16EHwv99vp",
                "Current",
                json!("110.25"),
                json!("100.00"),
            ),
            (
                "dVzbVMLjrxTnLjX4G66XUp5GLklm4oiZy88yK",
                "Savings",
                json!("210.1234"),
                Value::Null,
            ),
            // What is owed on a card or a loan is negative; available credit is not.
            (
                "Pp1Vpkl9w8sajvK6oEEKtr7vZxBnGpf7LxxLE",
                "CreditCard",
                json!("-410.00"),
                json!("11600.00"),
            ),
            (
                "BxBXxLj1m4HMXBm9WZJyUg9XLd4rKEhw8Pb1J",
                "Loan",
                json!("-56302.06"),
                Value::Null,
            ),
            (
                "6PdjjRP6LmugpBy5NgQvUqpRXMWxzktg3rwrk",
                "Investment",
                json!("23631.9805"),
                Value::Null,
            ),
            (
                "XMBvvyMGQ1UoLbKByoMqH3nXMj84ALSdE5B58",
                "Other",
                json!("12.50"),
                Value::Null,
            ),
        ] {
            let account = by(&accounts, "accountId", id);
            assert_eq!(account["accountType"], kind, "{account}");
            assert_eq!(account["currentBalance"], current, "{account}");
            assert_eq!(account["availableBalance"], available, "{account}");
        }
        let checking = by(
            &accounts,
            "accountId",
            "BxBXxLj1m4HMXBm9WZZmCWVbPjX16EHwv99vp",
        );
        assert_eq!(checking["currency"], "USD");
        assert_eq!(checking["institution"], "First Platypus Bank");
        assert_eq!(checking["maskedAccountNumber"], "••••0000");
        assert_eq!(checking["connectionId"], connection_id.to_string());
        assert_eq!(checking["sourceModifiedDate"], Value::Null);
        let wallet = by(
            &accounts,
            "accountId",
            "XMBvvyMGQ1UoLbKByoMqH3nXMj84ALSdE5B58",
        );
        assert_eq!(wallet["currency"], "BTC");
        assert_eq!(wallet["maskedAccountNumber"], Value::Null);
        assert_eq!(wallet["sourceModifiedDate"], "2026-11-01T08:30:00.000000Z");

        let calls = fake.calls();
        assert_eq!(calls.len(), 1);
        assert_eq!(calls[0].path, "/accounts/get");
        assert_eq!(calls[0].token, SECRET, "the secret in PLAID-SECRET");
        assert_eq!(body_of(&calls[0]), json!({"access_token": ACCESS}));
        assert_eq!(fake.token_calls(), 0, "Plaid tokens are never refreshed");
    }
}

#[tokio::test]
async fn plaid_transactions_sync_over_every_cursor_page_signed_and_read_back_exactly() {
    for backend in backends() {
        let fake = fake().await;
        let app = TestApp::spawn_with(backend, options_for(&fake, Some(PAGE), 1)).await;
        let (company_id, connection_id) = connected(&app).await;
        let operations = sync(&app, company_id, QueueDataTypeDataType::BankTransactions).await;
        let operation = latest(&operations, "bankTransactions");
        assert_eq!(operation.status, PullStatus::Complete, "{operation:?}");

        let transactions = all(&app, company_id, "bankTransactions").await;
        // Six added, one of them modified later, one removed (its pending
        // form, replaced by the posted one).
        assert_eq!(transactions.len(), 5, "{transactions:#?}");
        assert!(
            transactions
                .iter()
                .all(|t| t["transactionId"] != "qYpG3mE0Ba8nRVkzJDyoHj5MLbxqgXtd7Kw2P"),
            "the removed pending transaction is gone"
        );
        // Newest first.
        assert_eq!(
            transactions[0]["transactionId"],
            "Zr8kPqW2nB5yLx0vJmT7cHd3sGfA9eRuNo1Ki"
        );
        for (id, date, amount, status, merchant, category) in [
            // Modified on the second page: 72.10 became 72.15, money out.
            (
                "lPNjeW1nR6CDn5okmGQ6hEpMo4lLNoSrzqDje",
                "2026-10-28",
                "-72.15",
                "Posted",
                json!("Walmart"),
                json!("GENERAL_MERCHANDISE_SUPERSTORES"),
            ),
            // Plaid's negative is money in.
            (
                "4uGzFJzRk8HmgoLtXr9AfPLJDkRMbqHPdMZ0D",
                "2026-10-30",
                "2500.00",
                "Posted",
                Value::Null,
                json!("INCOME_WAGES"),
            ),
            (
                "no86Eox18VHMvaOVL7gPUM9ap3aR1LsAVZ5nc",
                "2026-11-02",
                "-4.33",
                "Pending",
                json!("Starbucks"),
                json!("FOOD_AND_DRINK_COFFEE"),
            ),
            // No personal finance category: the legacy one.
            (
                "x7d9LJ8kq1FoXE3ZyJzwTpy9a1LvGRSNw3XYd",
                "2026-10-31",
                "0.0125",
                "Posted",
                Value::Null,
                json!("Interest > Interest Earned"),
            ),
            (
                "Zr8kPqW2nB5yLx0vJmT7cHd3sGfA9eRuNo1Ki",
                "2026-11-03",
                "-91.05",
                "Posted",
                json!("Uber"),
                json!("TRANSPORTATION_TAXIS_AND_RIDE_SHARES"),
            ),
        ] {
            let transaction = by(&transactions, "transactionId", id);
            assert_eq!(transaction["date"], date, "{transaction}");
            assert_eq!(transaction["amount"], amount, "{transaction}");
            assert_eq!(transaction["status"], status, "{transaction}");
            assert_eq!(transaction["merchantName"], merchant, "{transaction}");
            assert_eq!(transaction["category"], category, "{transaction}");
            assert_eq!(transaction["currency"], "USD");
        }
        let walmart = by(
            &transactions,
            "transactionId",
            "lPNjeW1nR6CDn5okmGQ6hEpMo4lLNoSrzqDje",
        );
        assert_eq!(walmart["description"], "PURCHASE WM SUPERCENTER #1700");
        assert_eq!(
            walmart["accountId"],
            "BxBXxLj1m4HMXBm9WZZmCWVbPjX16EHwv99vp"
        );
        assert_eq!(walmart["connectionId"], connection_id.to_string());

        // Filtered by account, with its total after the filter.
        let card = list(
            &app,
            company_id,
            "bankTransactions",
            "accountId=Pp1Vpkl9w8sajvK6oEEKtr7vZxBnGpf7LxxLE&pageSize=1",
        )
        .await;
        assert_eq!(card["totalResults"], 2, "{card}");
        assert_eq!(
            card["results"][0]["transactionId"],
            "Zr8kPqW2nB5yLx0vJmT7cHd3sGfA9eRuNo1Ki"
        );

        // Three pages: no cursor, then each next_cursor; `count` each time.
        let calls = fake.calls();
        let sent: Vec<Value> = calls.iter().map(body_of).collect();
        assert_eq!(
            sent,
            [
                json!({"access_token": ACCESS, "count": PAGE}),
                json!({"access_token": ACCESS, "count": PAGE, "cursor": CURSOR_1}),
                json!({"access_token": ACCESS, "count": PAGE, "cursor": CURSOR_2}),
            ]
        );
        assert!(calls.iter().all(|call| call.path == "/transactions/sync"
            && call.token == SECRET
            && call.headers.get("plaid-client-id").map(String::as_str) == Some(CLIENT_ID)));
        // Plaid's OpenAPI document requires the version on every operation
        // (its `plaidVersion` security scheme).
        assert!(calls.iter().all(
            |call| call.headers.get("plaid-version").map(String::as_str) == Some("2020-09-14")
        ));
        assert_eq!(fake.token_calls(), 0);
    }
}

#[tokio::test]
async fn item_login_required_deauthorizes_the_plaid_connection_with_a_clear_message() {
    for backend in backends() {
        let fake = fake().await;
        let app = TestApp::spawn_with(backend, options_for(&fake, Some(PAGE), 1)).await;
        let (company_id, connection_id) = connected(&app).await;
        // The first page comes, then the bank wants its user again.
        fake.with(|inner| {
            inner
                .scripted
                .push_back(Answer::json(200, fixture("plaid/fixtures/sync-first.json")));
            inner.scripted.push_back(Answer::json(
                400,
                fixture("plaid/fixtures/item-login-required.json"),
            ));
        });
        let operations = sync(&app, company_id, QueueDataTypeDataType::BankTransactions).await;
        let operation = latest(&operations, "bankTransactions");
        assert_eq!(operation.status, PullStatus::AuthError, "{operation:?}");
        let message = operation.error_message.unwrap_or_default();
        assert!(
            message
                .contains("Plaid answered 400 Bad Request: ITEM_LOGIN_REQUIRED: the login details"),
            "{message}"
        );
        assert!(message.contains("Plaid Link's update mode"), "{message}");
        assert!(!message.contains(ACCESS) && !message.contains(SECRET));
        assert!(deauthorized(&app, company_id, connection_id).await);
        assert_eq!(fake.token_calls(), 0, "nothing to refresh");
        assert!(all(&app, company_id, "bankTransactions").await.is_empty());
    }
}

#[tokio::test]
async fn a_plaid_connection_without_keys_or_with_wrong_ones_is_deauthorized() {
    for backend in backends() {
        let fake = fake().await;
        let app = TestApp::spawn_with(backend, options_for(&fake, Some(PAGE), 1)).await;
        let company_id = new_company(&app, "Platypus Savings Club").await;

        let without = new_connection(&app, company_id, "plaid").await;
        let mut keyless = body();
        if let Some(fields) = keyless.as_object_mut() {
            fields.remove("clientId");
            fields.remove("secret");
        }
        assert_eq!(
            authorize(&app, company_id, without, &keyless, false)
                .await
                .status(),
            200
        );
        let operations = sync(&app, company_id, QueueDataTypeDataType::BankAccounts).await;
        let operation = latest(&operations, "bankAccounts");
        assert_eq!(operation.status, PullStatus::AuthError, "{operation:?}");
        let message = operation.error_message.unwrap_or_default();
        assert!(message.contains("`clientId` and `secret`"), "{message}");
        assert!(deauthorized(&app, company_id, without).await);
        assert!(fake.calls().is_empty());

        let company_id = new_company(&app, "Wrong Keys Ltd").await;
        let wrong = new_connection(&app, company_id, "plaid").await;
        let mut other_secret = body();
        other_secret["secret"] = json!("a-secret-plaid-never-issued");
        assert_eq!(
            authorize(&app, company_id, wrong, &other_secret, false)
                .await
                .status(),
            200
        );
        let operations = sync(&app, company_id, QueueDataTypeDataType::BankAccounts).await;
        let operation = latest(&operations, "bankAccounts");
        assert_eq!(operation.status, PullStatus::AuthError, "{operation:?}");
        let message = operation.error_message.unwrap_or_default();
        assert!(message.contains("INVALID_API_KEYS"), "{message}");
        assert!(!message.contains("a-secret-plaid-never-issued"));
        assert!(deauthorized(&app, company_id, wrong).await);
    }
}

#[tokio::test]
async fn a_plaid_update_that_changes_while_paged_is_restarted_from_the_start() {
    for backend in backends() {
        let fake = fake().await;
        let app = TestApp::spawn_with(backend, options_for(&fake, Some(PAGE), 1)).await;
        let (company_id, _) = connected(&app).await;
        fake.with(|inner| {
            inner
                .scripted
                .push_back(Answer::json(200, fixture("plaid/fixtures/sync-first.json")));
            inner.scripted.push_back(Answer::json(
                400,
                fixture("plaid/fixtures/mutation-during-pagination.json"),
            ));
        });
        let operations = sync(&app, company_id, QueueDataTypeDataType::BankTransactions).await;
        let operation = latest(&operations, "bankTransactions");
        assert_eq!(operation.status, PullStatus::Complete, "{operation:?}");
        assert_eq!(all(&app, company_id, "bankTransactions").await.len(), 5);
        let cursors: Vec<Value> = fake
            .calls()
            .iter()
            .map(|call| body_of(call)["cursor"].clone())
            .collect();
        assert_eq!(
            cursors,
            [
                Value::Null,
                json!(CURSOR_1),
                Value::Null,
                json!(CURSOR_1),
                json!(CURSOR_2)
            ]
        );
    }
}

#[tokio::test]
async fn a_plaid_resync_resumes_from_the_cursor_the_last_one_ended_with_and_flags_removals_at_once()
{
    const MODIFIED: &str = "no86Eox18VHMvaOVL7gPUM9ap3aR1LsAVZ5nc";
    const REMOVED: &str = "4uGzFJzRk8HmgoLtXr9AfPLJDkRMbqHPdMZ0D";
    const ADDED: &str = "Wm3bQ7kLp2XzR9vN4cTy8HdJf6GsA1eUoK5Bi";
    for backend in backends() {
        let fake = fake().await;
        let app = TestApp::spawn_with(backend, options_for(&fake, Some(PAGE), 1)).await;
        let (company_id, _) = connected(&app).await;
        let transactions = QueueDataTypeDataType::BankTransactions;
        let first = latest(
            &sync(&app, company_id, transactions).await,
            "bankTransactions",
        );
        assert_eq!(first.fetch_mode, Some(client::types::FetchMode::Full));
        let before = all(&app, company_id, "bankTransactions").await;
        assert_eq!(before.len(), 5);
        let calls_before = fake.calls().len();

        let second = latest(
            &sync(&app, company_id, transactions).await,
            "bankTransactions",
        );
        assert_eq!(second.status, PullStatus::Complete, "{second:?}");
        assert_eq!(
            second.fetch_mode,
            Some(client::types::FetchMode::Incremental)
        );
        let cursors: Vec<Value> = fake.calls()[calls_before..]
            .iter()
            .filter(|call| call.path == "/transactions/sync")
            .map(|call| body_of(call)["cursor"].clone())
            .collect();
        assert_eq!(
            cursors,
            [json!(CURSOR_3)],
            "one call, from the history's last cursor"
        );

        let after = all(&app, company_id, "bankTransactions").await;
        assert_eq!(after.len(), 6, "one added; the removed one stays, flagged");
        let removed = by(&after, "transactionId", REMOVED);
        assert_eq!(
            removed["isDeleted"], true,
            "Plaid's `removed` is flagged at once"
        );
        assert_eq!(
            removed["amount"],
            by(&before, "transactionId", REMOVED)["amount"]
        );
        let modified = by(&after, "transactionId", MODIFIED);
        assert_eq!(modified["amount"], "-4.75");
        assert_eq!(modified["isDeleted"], false);
        assert_eq!(by(&after, "transactionId", ADDED)["amount"], "-12.50");
        for was in &before {
            let id = was["transactionId"].as_str().expect("an id");
            if id != MODIFIED && id != REMOVED {
                assert_eq!(by(&after, "transactionId", id), was, "kept as it was");
            }
        }

        // Nothing new since: from the update's own cursor, nothing moves.
        let third = latest(
            &sync(&app, company_id, transactions).await,
            "bankTransactions",
        );
        assert_eq!(third.status, PullStatus::Complete, "{third:?}");
        let last_call = fake.calls().last().map(body_of).expect("a call");
        assert_eq!(last_call["cursor"], CURSOR_4);
        assert_eq!(all(&app, company_id, "bankTransactions").await, after);
    }
}
