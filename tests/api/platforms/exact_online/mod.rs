//! Exact Online: a division's sales invoices (lines expanded) and sales
//! accounts over OData `d.__next` pages, every invoice status and credit
//! notes, `/Date(ms)/` dates and `Edm.Double` amounts, a refresh on a 401
//! that rotates the refresh token (client credentials in the form body),
//! `invalid_grant`, 429, 5xx, garbage, and verification through
//! `current/Me` and the division. Fixtures follow the shapes in
//! `src/platforms/exact_online/NOTES.md` (SalesInvoice [E1][E2], Account
//! [E5], Me [E6], paging [E13]).
//! A resync asks only for what changed (`Modified ge datetime'…'`).
//!
//! The scenarios every platform shares (`super::scenarios`) run from its
//! `CASE`; the tests here are its own, the accounting lists' in [`ledger`]
//! (fixtures in `fixtures/ledger/`).

mod ledger;
mod ledger_fake;

use std::sync::Arc;

use serde_json::{Value, json};
use uuid::Uuid;

use client::types::{PullStatus, QueueDataTypeDataType};

use super::fake::{Answer, Call, Fake, Scheme, fixture};
use super::scenarios::changes::{Changed, changes_scenario};
use super::scenarios::{
    Another, Case, Cut, Errors, Pages, Refresh, Refused, Synced, Verification,
    connected as connected_as, platform_scenarios, records,
};
use super::{authorize, latest, options_for, set_oauth_client, stored, sync};
use crate::connections::{new_company, new_connection};
use crate::helpers::{TestApp, backends};

pub const DIVISION: u64 = 2481632;
const ACCESS: &str = "exact-access-token-0001";
const REFRESH: &str = "stampNL001.exact-refresh-0001";

/// A fixture with `{base}` replaced by the fake's own address, as Exact's
/// `__next` links are absolute.
fn linked(call: &Call, name: &str) -> String {
    let host = call.headers.get("host").cloned().unwrap_or_default();
    fixture(&format!("exact_online/fixtures/{name}")).replace("{base}", &format!("http://{host}"))
}

/// Serves the Exact fixtures: `current/Me`, two pages each of invoices and
/// accounts (the second at `$skiptoken`), one invoice id for `$top=1`, the
/// accounting lists (`ledger::answer`); any other division is forbidden.
fn router() -> super::fake::Router {
    Arc::new(|call: &Call| {
        let query = |name: &str| call.query.get(name).map(String::as_str);
        if call.path == "/api/v1/current/Me" {
            return Answer::json(200, fixture("exact_online/fixtures/me.json"));
        }
        if call.path == format!("/api/v1/{DIVISION}/hrm/Divisions") {
            return Answer::json(200, fixture("exact_online/fixtures/divisions.json"));
        }
        if let Some(answer) = ledger_fake::answer(call) {
            return answer;
        }
        let invoices = format!("/api/v1/{DIVISION}/salesinvoice/SalesInvoices");
        let accounts = format!("/api/v1/{DIVISION}/crm/Accounts");
        if call.path == invoices {
            if query("$top") == Some("1") {
                return Answer::json(200, fixture("exact_online/fixtures/probe.json"));
            }
            if query("$skiptoken").is_some() {
                return Answer::json(200, linked(call, "invoices-2.json"));
            }
            if query("$expand") != Some("SalesInvoiceLines")
                || !query("$select")
                    .is_some_and(|select| select.contains("SalesInvoiceLines/AmountFC"))
            {
                return Answer::json(
                    400,
                    r#"{"error":{"code":"","message":{"lang":"","value":"lines were not asked for"}}}"#,
                );
            }
            return Answer::json(200, linked(call, "invoices-1.json"));
        }
        if call.path == accounts {
            if query("$skiptoken").is_some() {
                return Answer::json(200, linked(call, "accounts-2.json"));
            }
            if query("$filter") != Some("IsSales eq true") {
                return Answer::json(
                    400,
                    r#"{"error":{"code":"","message":{"lang":"","value":"not filtered"}}}"#,
                );
            }
            return Answer::json(200, linked(call, "accounts-1.json"));
        }
        if call.path.starts_with("/api/v1/") {
            return Answer::json(403, fixture("exact_online/fixtures/forbidden.json"));
        }
        Answer::json(
            404,
            r#"{"error":{"code":"","message":{"lang":"","value":"Not found"}}}"#,
        )
    })
}

pub async fn fake() -> Fake {
    let fake = Fake::start(
        "exact-online",
        Scheme::Bearer,
        ACCESS,
        REFRESH,
        fixture("exact_online/fixtures/unauthorized.json"),
        router(),
    )
    .await;
    // Exact takes the client credentials in the form body.
    fake.with(|inner| inner.client_in_body = true);
    fake
}

fn body(division: u64, expires_in: i64) -> Value {
    json!({
        "division": division,
        "region": "nl",
        "accessToken": ACCESS,
        "refreshToken": REFRESH,
        "expiresIn": expires_in,
    })
}

async fn connected(app: &TestApp, expires_in: i64) -> (Uuid, Uuid) {
    connected_as(app, &CASE, &(CASE.authorization)(expires_in)).await
}

fn by_id<'a>(invoices: &'a [Value], id: &str) -> &'a Value {
    invoices
        .iter()
        .find(|invoice| invoice["invoiceId"] == id)
        .unwrap_or_else(|| panic!("invoice {id} synced"))
}

fn invoice_id(n: u8) -> String {
    format!("a1000000-0000-4000-8000-00000000000{n}")
}

/// Exact Online in the shared scenarios.
static CASE: Case = Case {
    key: "exact-online",
    name: "Exact Online",
    fake: || Box::pin(fake()),
    page_size: None,
    authorization: |expires_in| body(DIVISION, expires_in),
    access: ACCESS,
    refresh: REFRESH,
    // Exact's access tokens last ten minutes.
    lasting: 600,
    kept: &["division"],
    sync: Synced {
        data_type: "invoices",
        records: 5,
        calls: 2,
    },
    syncs: &[
        "invoices",
        "customers",
        "accounts",
        "suppliers",
        "taxRates",
        "bills",
        "creditNotes",
        "items",
        "companyInfo",
        "journalEntries",
    ],
    errors: Errors {
        rate_limited: r#"{"error":{"code":"","message":{"lang":"","value":"Too many requests"}}}"#,
        rate_limit_headers: &[("X-RateLimit-Minutely-Remaining", "0")],
        rate_limited_says: "",
        server_error: r#"{"error":{"code":"","message":{"lang":"","value":"Internal server error"}}}"#,
        unavailable: (
            503,
            r#"{"error":{"code":"","message":{"lang":"","value":"Exact Online is under maintenance"}}}"#,
        ),
        // The operation quotes Exact's OData error.
        unavailable_says: "Exact Online answered 503 Service Unavailable: Exact Online is under maintenance",
        refused: Refused::Scope {
            status: 403,
            body: r#"{"error":{"code":"","message":{"lang":"","value":"Forbidden: the scope of this application does not cover sales invoices"}}}"#,
            says: "Exact Online answered 403 Forbidden: Forbidden: the scope of this application",
        },
    },
    pages: Pages {
        prelude: |_| Vec::new(),
        first: |fake| {
            Answer::json(
                200,
                fixture("exact_online/fixtures/invoices-1.json").replace("{base}", &fake.url()),
            )
        },
        cut: Cut::SecondPage,
        truncated: r#"{"d": {"results": [{"InvoiceID": "x", "AmountFC": 1"#,
        truncated_says: "",
        records_at: "/d/results",
        id_at: "/InvoiceID",
        field: "/AmountFC",
    },
    // Exact invalidates older refresh tokens once a newer one is used.
    refresh_with: Some(Refresh::ROTATING),
    unrefreshable: None,
    verification: Verification {
        rejected_says: &["The access token is invalid or has expired"],
        // A working token, another division.
        another_account: Some(Another {
            authorization: || body(1_000_001, 600),
            says: &["not for division 1000001", "no access to this division"],
        }),
        // The user, then the division's invoices.
        verified_by: |calls| {
            let paths: Vec<&str> = calls
                .iter()
                .rev()
                .take(2)
                .map(|call| call.path.as_str())
                .collect();
            paths
                == [
                    format!("/api/v1/{DIVISION}/salesinvoice/SalesInvoices").as_str(),
                    "/api/v1/current/Me",
                ]
        },
    },
    unknown_account: None,
};

platform_scenarios!(CASE, refreshes, refreshes_before_expiry);

#[tokio::test]
async fn exact_invoices_and_accounts_sync_over_every_page_with_every_status() {
    for backend in backends() {
        let fake = fake().await;
        let app = TestApp::spawn_with(backend, options_for(&fake, None, 2)).await;
        let (company_id, _) = connected(&app, 600).await;
        let operations = sync(&app, company_id, QueueDataTypeDataType::Invoices).await;
        let operation = latest(&operations, "invoices");
        assert_eq!(operation.status, PullStatus::Complete, "{operation:?}");
        let operations = sync(&app, company_id, QueueDataTypeDataType::Customers).await;
        let operation = latest(&operations, "customers");
        assert_eq!(operation.status, PullStatus::Complete, "{operation:?}");

        let invoices = records(&app, company_id, "invoices").await;
        // Six over two pages; the credit note (type 8021) is not an invoice.
        assert_eq!(invoices.len(), 5, "{invoices:#?}");
        assert!(
            invoices
                .iter()
                .all(|invoice| invoice["invoiceId"] != invoice_id(4))
        );
        for (n, status) in [
            (1, "Submitted"),
            (2, "Draft"),
            (3, "Draft"),
            (5, "Unknown"),
            (6, "Submitted"),
        ] {
            assert_eq!(by_id(&invoices, &invoice_id(n))["status"], status, "{n}");
        }
        let processed = by_id(&invoices, &invoice_id(1));
        assert_eq!(processed["invoiceNumber"], "26100001");
        assert_eq!(processed["totalAmount"], "1234.56");
        assert_eq!(processed["subTotal"], "1020.30");
        assert_eq!(processed["totalTaxAmount"], "214.26");
        assert_eq!(processed["amountDue"], "1234.56");
        assert_eq!(processed["issueDate"], "2026-10-03");
        assert_eq!(processed["dueDate"], "2026-11-02");
        assert_eq!(processed["currency"], "EUR");
        assert_eq!(
            processed["customerRef"]["id"],
            "c2000000-0000-4000-8000-000000000001"
        );
        assert_eq!(
            processed["customerRef"]["companyName"],
            "Van Dijk Bouw B.V."
        );
        assert_eq!(processed["note"], "Consultancy October");
        assert!(
            processed["sourceModifiedDate"]
                .as_str()
                .is_some_and(|at| at.starts_with("2026-10-05T09:12:44")),
            "{processed}"
        );
        let lines = processed["lineItems"].as_array().expect("lines");
        assert_eq!(lines.len(), 2);
        assert_eq!(lines[0]["description"], "Consultancy");
        assert_eq!(lines[0]["quantity"], "8");
        assert_eq!(lines[0]["unitAmount"], "95.00");
        assert_eq!(lines[0]["subTotal"], "760.00");
        assert_eq!(lines[0]["taxAmount"], "159.60");
        assert_eq!(lines[0]["totalAmount"], "919.60");
        // A binary double's noise is rounded away; deferred lines are none.
        let draft = by_id(&invoices, &invoice_id(2));
        assert_eq!(draft["invoiceNumber"], Value::Null);
        assert_eq!(draft["totalAmount"], "0.30");
        assert_eq!(draft["currency"], "SEK");
        assert_eq!(draft["note"], "Draft for review");
        assert_eq!(draft["lineItems"], json!([]));
        // More decimals than money keeps: four, rounded.
        let direct = by_id(&invoices, &invoice_id(6));
        assert_eq!(direct["totalAmount"], "1000.1236");
        assert_eq!(direct["lineItems"][0]["quantity"], "2.5");
        assert_eq!(direct["lineItems"][0]["unitAmount"], "330.6194");

        let customers = records(&app, company_id, "customers").await;
        let customer = |name: &str| {
            customers
                .iter()
                .find(|customer| customer["customerName"] == name)
                .cloned()
                .unwrap_or_else(|| panic!("{name} synced"))
        };
        assert_eq!(customers.len(), 3);
        let van_dijk = customer("Van Dijk Bouw B.V.");
        assert_eq!(
            van_dijk["customerId"],
            "c2000000-0000-4000-8000-000000000001"
        );
        assert_eq!(
            van_dijk["emailAddress"],
            "administratie@vandijkbouw.example"
        );
        assert_eq!(van_dijk["phone"], "+31 20 123 4567");
        assert_eq!(van_dijk["defaultCurrency"], "EUR");
        assert_eq!(van_dijk["status"], "Active");
        // Blocked, and past its end date: archived.
        assert_eq!(customer("Lindqvist AB")["status"], "Archived");
        assert_eq!(customer("Lindqvist AB")["emailAddress"], Value::Null);
        assert_eq!(customer("Oude Klant")["status"], "Archived");

        let calls = fake.calls();
        assert!(calls.iter().all(|call| call.token == ACCESS));
        assert!(
            calls
                .iter()
                .any(|call| call.path.ends_with("/SalesInvoices")
                    && call.query.contains_key("$skiptoken"))
        );
        assert!(
            calls.iter().any(|call| call.path.ends_with("/crm/Accounts")
                && call.query.contains_key("$skiptoken"))
        );
        assert_eq!(fake.token_calls(), 0);
    }
}

/// Exact writes `expires_in` as a string: an expired token verified by a
/// refresh stores the rotated refresh token and an expiry from that string.
#[tokio::test]
async fn an_expired_exact_token_is_verified_by_a_refresh_whose_expiry_is_a_string() {
    for backend in backends() {
        let fake = fake().await;
        let app = TestApp::spawn_with(backend, options_for(&fake, None, 0)).await;
        let company_id = new_company(&app, "Van Dijk Bouw").await;
        set_oauth_client(&app, "exact-online").await;
        fake.with(|inner| {
            inner.token_error = Some(Answer::json(
                200,
                r#"{"access_token":"at-exact-refreshed","token_type":"bearer","expires_in":"600","refresh_token":"stampNL001.rotated"}"#,
            ));
        });
        let second = new_connection(&app, company_id, "exact-online").await;
        let mut expired = body(DIVISION, 0);
        expired
            .as_object_mut()
            .expect("an object")
            .remove("expiresIn");
        expired["expiresAt"] = json!("2026-01-01T00:00:00Z");
        let response = authorize(&app, company_id, second, &expired, true).await;
        assert_eq!(response.status(), 200);
        let credentials = stored(&app, second).await;
        assert_eq!(credentials["accessToken"], "at-exact-refreshed");
        assert_eq!(credentials["refreshToken"], "stampNL001.rotated");
        let expires = credentials["expiresAt"].as_str().expect("an expiry");
        let expires = chrono::DateTime::parse_from_rfc3339(expires).expect("RFC 3339");
        assert!(expires > chrono::Utc::now() + chrono::Duration::minutes(8));
    }
}

/// Exact as it answers `$filter=Modified ge datetime'…'` on sales invoices:
/// the invoices modified since (one processed since the first sync, one
/// new), on one page (no `__next`); lines must still be asked for, as for a
/// whole list. Every answer dated `PLATFORM_DATE` by the scenario.
async fn fake_with_changes() -> Fake {
    let whole = router();
    let fake = Fake::start(
        "exact-online",
        Scheme::Bearer,
        ACCESS,
        REFRESH,
        fixture("exact_online/fixtures/unauthorized.json"),
        Arc::new(move |call: &Call| {
            let invoices = format!("/api/v1/{DIVISION}/salesinvoice/SalesInvoices");
            let changes = call.path == invoices && call.query.contains_key("$filter");
            match whole(call) {
                ok if ok.status == 200 && changes => {
                    Answer::json(200, linked(call, "invoices-changed.json"))
                }
                answer => answer,
            }
        }),
    )
    .await;
    fake.with(|inner| inner.client_in_body = true);
    fake
}

/// Exact Online asked for what changed, in the shared scenario (`scenarios::changes`).
static CHANGES: Changed = Changed {
    data_type: "invoices",
    fake: || Box::pin(fake_with_changes()),
    filter: |call| {
        call.query
            .get("$filter")
            .filter(|filter| filter.contains("Modified ge"))
            .cloned()
    },
    since: "Modified ge datetime'2026-11-26T21:00:00'",
    calls: 1,
    changed: 1,
    added: 1,
    quiet: |_| Answer::json(200, r#"{"d":{"results":[]}}"#),
    quiet_calls: 1,
};

changes_scenario!(CASE, CHANGES);
