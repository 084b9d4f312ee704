//! Oracle NetSuite: invoices (and their lines) and customers through SuiteQL
//! (`POST /services/rest/query/v1/suiteql`, `Prefer: transient`) over several
//! `limit`/`offset` pages while `hasMore`, statuses from letters and amounts,
//! exact amounts, refresh (HTTP Basic) with and without a new refresh token,
//! `invalid_grant`, 429, 5xx, garbage, and verification with one SuiteQL row.
//! The fixtures are SuiteQL answers shaped as NetSuite documents them (Collection
//! Paging; every value a string, null columns left out; sources N1–N3 and the
//! sample in `src/platforms/netsuite/NOTES.md`); the fake slices them as NetSuite pages.
//!
//! The scenarios every platform shares (`super::scenarios`) run from its
//! `CASE`; the tests here are its own.

mod ledger;
mod ledger_fake;

use std::sync::Arc;

use serde_json::{Value, json};
use uuid::Uuid;

use client::types::{PullStatus, QueueDataTypeDataType};

use super::fake::{Answer, Call, Fake, Scheme, fixture};
use super::scenarios::changes::{Changed, changes_scenario};
use super::scenarios::{
    Case, Cut, Errors, Pages, Refresh, Refused, Synced, Verification, connected as connected_as,
    platform_scenarios, records as list,
};
use super::{latest, options_for, set_oauth_client, stored, sync};
use crate::helpers::{TestApp, backends};

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
        if let Some(answer) = ledger_fake::answer(&query, limit, offset) {
            return answer;
        }
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
    connected_as(app, &CASE, &(CASE.authorization)(expires_in)).await
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

/// NetSuite in the shared scenarios.
static CASE: Case = Case {
    key: "netsuite",
    name: "Oracle NetSuite",
    fake: || Box::pin(fake()),
    page_size: None,
    authorization: |expires_in| body(ACCESS, expires_in),
    access: ACCESS,
    refresh: REFRESH,
    lasting: 3600,
    kept: &["accountId"],
    sync: Synced {
        data_type: "invoices",
        records: 7,
        // The invoices and their lines.
        calls: 2,
    },
    syncs: &[
        "invoices",
        "customers",
        "accounts",
        "suppliers",
        "taxRates",
        "bills",
        "payments",
        "billPayments",
        "creditNotes",
        "items",
        "companyInfo",
        "journalEntries",
    ],
    errors: Errors {
        rate_limited: r#"{"type":"https://www.rfc-editor.org/rfc/rfc6585.html#section-4","title":"Too Many Requests","status":429,"o:errorDetails":[{"detail":"Concurrent request limit exceeded. Request blocked.","o:errorCode":"CONCURRENCY_LIMIT_EXCEEDED"}]}"#,
        rate_limit_headers: &[],
        rate_limited_says: "",
        server_error: r#"{"title":"Internal Server Error","status":500,"o:errorDetails":[{"detail":"An unexpected error occurred.","o:errorCode":"UNEXPECTED_ERROR"}]}"#,
        unavailable: (
            503,
            r#"{"title":"Service Unavailable","status":503,"o:errorDetails":[{"detail":"NetSuite is undergoing maintenance.","o:errorCode":"SERVICE_UNAVAILABLE"}]}"#,
        ),
        // The operation quotes its error detail.
        unavailable_says: "SERVICE_UNAVAILABLE: NetSuite is undergoing maintenance.",
        refused: Refused::Scope {
            status: 403,
            body: r#"{"title":"Forbidden","status":403,"o:errorDetails":[{"detail":"Permission Violation: You need the 'Transactions -> Invoice' permission to access this page.","o:errorCode":"INSUFFICIENT_PERMISSION"}]}"#,
            says: "INSUFFICIENT_PERMISSION: Permission Violation",
        },
    },
    pages: Pages {
        prelude: |_| Vec::new(),
        first: |_| Answer::json(200, page_of("invoices", |_| true, 1000, 0)),
        cut: Cut::FirstPage,
        truncated: r#"{"links": [], "count": 1, "hasMore": false, "items": [{"id": "101", "tranid": "#,
        truncated_says: "",
        records_at: "/items",
        id_at: "/id",
        field: "/foreigntotal",
    },
    refresh_with: Some(Refresh {
        // What NetSuite answers once the refresh token has expired (N4).
        invalid_grant: Some(r#"{"error":"invalid_grant"}"#),
        ..Refresh::ROTATING
    }),
    unrefreshable: None,
    verification: Verification {
        rejected_says: &["INVALID_LOGIN: Invalid login attempt."],
        another_account: None,
        // One SuiteQL row.
        verified_by: |calls| {
            calls.last().is_some_and(|call| {
                call.path == SUITEQL && call.query.get("limit").map(String::as_str) == Some("1")
            })
        },
    },
    unknown_account: None,
};

platform_scenarios!(CASE, refreshes, refreshes_before_expiry);

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

/// NetSuite as it answers the invoice query with a `lastmodifieddate`
/// condition: the invoices changed since (INV10001 paid since the first
/// sync, INV10008 new); every answer dated `PLATFORM_DATE` by the scenario.
async fn fake_with_changes() -> Fake {
    let whole = router();
    Fake::start(
        "netsuite",
        Scheme::Bearer,
        ACCESS,
        REFRESH,
        error("unauthorized"),
        Arc::new(move |call: &Call| {
            let body: Value = serde_json::from_str(&call.body).unwrap_or_default();
            let query = body["q"].as_str().unwrap_or_default();
            let changes = query.contains("FROM transaction t")
                && query.contains("t.type = 'CustInvc'")
                && query.contains("lastmodifieddate >");
            if changes {
                let number = |name: &str| call.query.get(name).and_then(|n| n.parse().ok());
                let (limit, offset) = (
                    number("limit").unwrap_or(1000),
                    number("offset").unwrap_or(0),
                );
                let after = number_after(query, "t.id >").unwrap_or(0);
                let keep = move |row: &Value| id_of(row, "id") > after;
                Answer::json(200, page_of("invoices-changed", keep, limit, offset))
            } else {
                whole(call)
            }
        }),
    )
    .await
}

/// NetSuite asked for what changed, in the shared scenario (`scenarios::changes`).
static CHANGES: Changed = Changed {
    data_type: "invoices",
    fake: || Box::pin(fake_with_changes()),
    filter: |call| {
        let start = call.body.find("t.lastmodifieddate > ")?;
        let rest = &call.body[start..];
        let end = rest.find("')")?;
        Some(rest[..end + 2].to_owned())
    },
    since: "t.lastmodifieddate > TO_TIMESTAMP('2026-11-26 09:00:00', 'YYYY-MM-DD HH24:MI:SS')",
    calls: 1,
    changed: 1,
    added: 1,
    quiet: |_| {
        Answer::json(
            200,
            r#"{"links":[],"count":0,"hasMore":false,"items":[],"offset":0,"totalResults":0}"#,
        )
    },
    quiet_calls: 1,
};

changes_scenario!(CASE, CHANGES);
