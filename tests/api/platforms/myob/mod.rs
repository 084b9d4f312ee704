//! MYOB Business: sale invoices and customers over `NextPageLink` pages with
//! MYOB's headers, every sale status, a refresh on a 401 that rotates the
//! refresh token (client credentials in the form body), `invalid_grant`,
//! 429, 5xx and MYOB's 403 rate limit, garbage, and verification through
//! the company file list. Fixtures follow MYOB's documented shapes
//! (`src/platforms/myob/NOTES.md`: invoices [M1][M8], customers
//! [M16][M17], the file list [M15][M19], errors [M13]).
//! A resync asks only for what changed (`LastModified gt datetime'…'`).
//!
//! The scenarios every platform shares (`super::scenarios`) run from its
//! `CASE`; the tests here are its own, the accounting lists' in [`ledger`]
//! (fixtures in `fixtures/ledger/`, shaped from MYOB's SDK contracts [M30]).

mod ledger;

use std::sync::Arc;

use serde_json::{Value, json};
use uuid::Uuid;

use client::types::{ConnectionStatus, PullStatus, QueueDataTypeDataType};

use super::fake::{Answer, CLIENT_ID, Call, Fake, Scheme, fixture};
use super::scenarios::changes::{Changed, changes_scenario};
use super::scenarios::{
    Another, Case, Cut, Errors, Pages, Refresh, Refused, Synced, Verification,
    connected as connected_as, platform_scenarios, records,
};
use super::{authorize, latest, options_for, set_oauth_client, stored, sync};
use crate::connections::{count_rows, new_company, new_connection};
use crate::helpers::{TestApp, backends, json};

pub const FILE: &str = "d5a1c2b3-4e5f-4a6b-8c7d-9e0f1a2b3c4d";
const OTHER_FILE: &str = "11111111-2222-4333-8444-555555555555";
const ACCESS: &str = "myob-access-token-0001";
const REFRESH: &str = "Ta7J!IAAA-myob-refresh-0001";

/// A fixture with `{base}` replaced by the fake's own address, as MYOB's
/// `NextPageLink`s are absolute.
fn linked(call: &Call, name: &str) -> String {
    let host = call.headers.get("host").cloned().unwrap_or_default();
    fixture(&format!("myob/fixtures/{name}")).replace("{base}", &format!("http://{host}"))
}

/// Serves the MYOB fixtures: the company file list, two pages each of
/// invoices and customers (the second at `$skip`); calls without MYOB's
/// headers are refused as MYOB does.
fn router() -> super::fake::Router {
    Arc::new(|call: &Call| {
        if call.headers.get("x-myobapi-key").map(String::as_str) != Some(CLIENT_ID)
            || call.headers.get("x-myobapi-version").map(String::as_str) != Some("v2")
        {
            return Answer::json(
                403,
                r#"{"Errors":[{"Name":"DeveloperInactive","Message":"API key is missing or inactive","AdditionalDetails":"Header: x-myobapi-key","ErrorCode":0,"Severity":"Error"}]}"#,
            );
        }
        if call.path == "/accountright/" {
            return Answer::json(200, fixture("myob/fixtures/company-files.json"));
        }
        let skip = call.query.get("$skip").map(String::as_str);
        match (call.path.as_str(), skip) {
            (path, None) if path == format!("/accountright/{FILE}/Sale/Invoice") => {
                Answer::json(200, linked(call, "invoices-1.json"))
            }
            (path, Some("3")) if path == format!("/accountright/{FILE}/Sale/Invoice") => {
                Answer::json(200, linked(call, "invoices-2.json"))
            }
            (path, None) if path == format!("/accountright/{FILE}/Contact/Customer") => {
                Answer::json(200, linked(call, "customers-1.json"))
            }
            (path, Some("2")) if path == format!("/accountright/{FILE}/Contact/Customer") => {
                Answer::json(200, linked(call, "customers-2.json"))
            }
            (path, skip) => ledger(call, path, skip),
        }
    })
}

/// The accounting lists (`fixtures/ledger/`, one file a page, named by the
/// resource's path: `Purchase-Bill-Item-1.json`); a resource without one
/// is not found, as MYOB answers.
fn ledger(call: &Call, path: &str, skip: Option<&str>) -> Answer {
    let resource = path
        .strip_prefix(&format!("/accountright/{FILE}/"))
        .map(|resource| resource.replace('/', "-"));
    let page = if skip.is_some() { 2 } else { 1 };
    let names = resource.map(|resource| {
        [
            format!("{resource}-{page}.json"),
            format!("{resource}.json"),
        ]
    });
    let found = names.into_iter().flatten().find(|name| {
        std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/api/platforms/myob/fixtures/ledger")
            .join(name)
            .exists()
    });
    match found {
        Some(name) => Answer::json(200, linked(call, &format!("ledger/{name}"))),
        None => Answer::json(404, r#"[{"Message":"The resource could not be found"}]"#),
    }
}

pub async fn fake() -> Fake {
    let fake = Fake::start(
        "myob",
        Scheme::Bearer,
        ACCESS,
        REFRESH,
        fixture("myob/fixtures/unauthorized.json"),
        router(),
    )
    .await;
    // MYOB's token endpoint takes the client credentials in the form body.
    fake.with(|inner| inner.client_in_body = true);
    fake
}

fn body(file: &str, expires_in: i64) -> Value {
    json!({
        "companyFileId": file,
        "companyFileUri": format!("https://arl2.api.myob.com/accountright/{file}"),
        "apiKey": CLIENT_ID,
        "accessToken": ACCESS,
        "refreshToken": REFRESH,
        "expiresIn": expires_in,
    })
}

async fn connected(app: &TestApp, expires_in: i64) -> (Uuid, Uuid) {
    connected_as(app, &CASE, &(CASE.authorization)(expires_in)).await
}

fn by_number<'a>(invoices: &'a [Value], number: &str) -> &'a Value {
    invoices
        .iter()
        .find(|invoice| invoice["invoiceNumber"] == number)
        .unwrap_or_else(|| panic!("invoice {number} synced"))
}

/// MYOB in the shared scenarios.
static CASE: Case = Case {
    key: "myob",
    name: "MYOB Business",
    fake: || Box::pin(fake()),
    page_size: None,
    authorization: |expires_in| body(FILE, expires_in),
    access: ACCESS,
    refresh: REFRESH,
    lasting: 1200,
    kept: &["companyFileId", "apiKey"],
    sync: Synced {
        data_type: "invoices",
        records: 6,
        // The company file list and both pages.
        calls: 3,
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
        rate_limited: include_str!("fixtures/rate-limit.json"),
        rate_limit_headers: &[],
        rate_limited_says: "",
        server_error: r#"{"Errors":[{"Name":"InternalError","Message":"An unexpected error occurred","Severity":"Error"}]}"#,
        unavailable: (
            503,
            r#"{"Errors":[{"Name":"ServiceUnavailable","Message":"The service is temporarily unavailable","Severity":"Error"}]}"#,
        ),
        unavailable_says: "503 Service Unavailable",
        refused: Refused::Scope {
            status: 403,
            body: r#"{"Errors":[{"Name":"AccessDenied","Message":"The user does not have access to Sale Invoices","Severity":"Error"}]}"#,
            says: "AccessDenied: The user does not have access to Sale Invoices",
        },
    },
    pages: Pages {
        prelude: |_| {
            vec![Answer::json(
                200,
                fixture("myob/fixtures/company-files.json"),
            )]
        },
        first: |fake| {
            Answer::json(
                200,
                fixture("myob/fixtures/invoices-1.json").replace("{base}", &fake.url()),
            )
        },
        cut: Cut::SecondPage,
        truncated: r#"{"Items": [{"UID": "x", "TotalAmount": 12.5"#,
        truncated_says: "",
        records_at: "/Items",
        id_at: "/UID",
        field: "/TotalAmount",
    },
    refresh_with: Some(Refresh {
        rejected_after: 2,
        ..Refresh::ROTATING
    }),
    unrefreshable: None,
    verification: Verification {
        rejected_says: &["OAuthTokenIsInvalid"],
        // A working token that does not reach this company file.
        another_account: Some(Another {
            authorization: || body(OTHER_FILE, 1200),
            says: &["is not among the 2"],
        }),
        // The file list names the file.
        verified_by: |calls| {
            calls
                .last()
                .is_some_and(|call| call.path == "/accountright/")
        },
    },
    unknown_account: None,
};

platform_scenarios!(CASE, refreshes, refreshes_before_expiry);

#[tokio::test]
async fn myob_invoices_and_customers_sync_over_every_page_with_every_status() {
    for backend in backends() {
        let fake = fake().await;
        let app = TestApp::spawn_with(backend, options_for(&fake, None, 2)).await;
        let (company_id, _) = connected(&app, 1200).await;
        let operations = sync(&app, company_id, QueueDataTypeDataType::Invoices).await;
        let operation = latest(&operations, "invoices");
        assert_eq!(operation.status, PullStatus::Complete, "{operation:?}");
        let operations = sync(&app, company_id, QueueDataTypeDataType::Customers).await;
        let operation = latest(&operations, "customers");
        assert_eq!(operation.status, PullStatus::Complete, "{operation:?}");

        let invoices = records(&app, company_id, "invoices").await;
        // Seven sales over two pages; the credit note is not an invoice.
        assert_eq!(invoices.len(), 6, "{invoices:#?}");
        assert!(
            invoices
                .iter()
                .all(|invoice| invoice["invoiceNumber"] != "00000105")
        );
        for (number, status) in [
            ("00000101", "Submitted"),
            ("00000102", "PartiallyPaid"),
            ("00000103", "Paid"),
            ("00000104", "Paid"),
            ("00000106", "Unknown"),
            ("00000107", "Paid"),
        ] {
            assert_eq!(by_number(&invoices, number)["status"], status, "{number}");
        }
        let open = by_number(&invoices, "00000101");
        assert_eq!(open["totalAmount"], "1234.56");
        assert_eq!(open["subTotal"], "1122.33");
        assert_eq!(open["totalTaxAmount"], "112.23");
        assert_eq!(open["amountDue"], "1234.56");
        assert_eq!(open["issueDate"], "2026-10-03");
        assert_eq!(open["dueDate"], "2026-11-02");
        assert_eq!(open["paidOnDate"], Value::Null);
        // The file's country (AU) sets the currency.
        assert_eq!(open["currency"], "AUD");
        assert_eq!(
            open["customerRef"]["id"],
            "7c1e0c55-aaaa-4d2b-9e51-000000000001"
        );
        assert_eq!(open["customerRef"]["companyName"], "Coogee Board Co");
        assert_eq!(open["note"], "Thank you for your business.");
        assert!(
            open["sourceModifiedDate"]
                .as_str()
                .is_some_and(|at| at.starts_with("2026-10-05T09:12:44")),
            "{open}"
        );
        // A balance with more decimals than money keeps four.
        let part_paid = by_number(&invoices, "00000102");
        assert_eq!(part_paid["amountDue"], "24.3766");
        assert_eq!(part_paid["paidOnDate"], Value::Null);
        let closed = by_number(&invoices, "00000103");
        assert_eq!(closed["paidOnDate"], "2026-10-19");
        assert_eq!(closed["amountDue"], "0.00");
        assert_eq!(by_number(&invoices, "00000104")["note"], "Hire of racks");
        assert_eq!(by_number(&invoices, "00000106")["customerRef"], Value::Null);
        // Overpaid (`Credit` with a positive total): paid, nothing due.
        let overpaid = by_number(&invoices, "00000107");
        assert_eq!(overpaid["amountDue"], "-20.00");
        assert_eq!(overpaid["paidOnDate"], "2026-10-12");

        let customers = records(&app, company_id, "customers").await;
        let mut names: Vec<&str> = customers
            .iter()
            .filter_map(|customer| customer["customerName"].as_str())
            .collect();
        names.sort_unstable();
        assert_eq!(
            names,
            ["Ana Nguyen", "Coogee Board Co", "Old Surf Shack Pty Ltd"]
        );
        let customer = |name: &str| {
            customers
                .iter()
                .find(|customer| customer["customerName"] == name)
                .cloned()
                .expect("synced")
        };
        let coogee = customer("Coogee Board Co");
        assert_eq!(coogee["emailAddress"], "hello@coogeeboards.example");
        assert_eq!(coogee["phone"], "02 9000 0001");
        assert_eq!(coogee["status"], "Active");
        let ana = customer("Ana Nguyen");
        assert_eq!(ana["emailAddress"], "ana@manlywetsuits.example");
        assert_eq!(ana["defaultCurrency"], "NZD");
        assert_eq!(customer("Old Surf Shack Pty Ltd")["status"], "Archived");

        let calls = fake.calls();
        assert!(calls.iter().all(|call| call.token == ACCESS));
        assert!(calls.iter().any(|call| call.path.ends_with("/Sale/Invoice")
            && call.query.get("$top").map(String::as_str) == Some("1000")
            && !call.query.contains_key("$skip")));
        assert!(calls.iter().any(|call| call.path.ends_with("/Sale/Invoice")
            && call.query.get("$skip").map(String::as_str) == Some("3")));
        assert!(
            calls
                .iter()
                .any(|call| call.path.ends_with("/Contact/Customer")
                    && call.query.get("$skip").map(String::as_str) == Some("2"))
        );
        assert_eq!(fake.token_calls(), 0);
    }
}

/// MYOB's own rate limit is a 403: the sync fails with its words, the
/// connection stays linked and the data stays.
#[tokio::test]
async fn myobs_403_rate_limit_fails_the_sync_without_deauthorizing() {
    for backend in backends() {
        let fake = fake().await;
        let app = TestApp::spawn_with(backend, options_for(&fake, None, 1)).await;
        let (company_id, connection_id) = connected(&app, 1200).await;
        let operations = sync(&app, company_id, QueueDataTypeDataType::Invoices).await;
        assert_eq!(latest(&operations, "invoices").status, PullStatus::Complete);
        fake.with(|inner| {
            inner
                .scripted
                .push_back(Answer::json(403, fixture("myob/fixtures/rate-limit.json")));
        });
        let operations = sync(&app, company_id, QueueDataTypeDataType::Invoices).await;
        let operation = latest(&operations, "invoices");
        assert_eq!(operation.status, PullStatus::Failed, "{operation:?}");
        let message = operation.error_message.unwrap_or_default();
        assert!(
            message.contains("RateLimitError: API key has exceeded the per-second rate limit"),
            "{message}"
        );
        let connection = app
            .client
            .get_connection(&company_id, &connection_id)
            .await
            .expect("found")
            .into_inner();
        assert_eq!(connection.status, ConnectionStatus::Linked);
        assert_eq!(records(&app, company_id, "invoices").await.len(), 6);
    }
}

/// Without the API key MYOB cannot be called: verification says so and
/// sends nothing. MYOB writes `expires_in` as a string: an expired token
/// verified by a refresh stores the rotated refresh token and that expiry.
#[tokio::test]
async fn myob_verification_needs_the_api_key_and_reads_expires_in_as_a_string() {
    for backend in backends() {
        let fake = fake().await;
        let app = TestApp::spawn_with(backend, options_for(&fake, None, 0)).await;
        let company_id = new_company(&app, "Bondi Surf Supplies").await;
        let connection_id = new_connection(&app, company_id, "myob").await;

        let mut keyless = body(FILE, 1200);
        keyless.as_object_mut().expect("an object").remove("apiKey");
        let response = authorize(&app, company_id, connection_id, &keyless, true).await;
        assert_eq!(response.status(), 422);
        assert!(
            json(response).await["error"]
                .as_str()
                .unwrap_or_default()
                .contains("apiKey")
        );
        assert!(fake.calls().is_empty());
        assert_eq!(count_rows(&app, "connection_credential").await, 0);

        set_oauth_client(&app, "myob").await;
        fake.with(|inner| {
            inner.access_tokens.insert("at-myob-refreshed".to_owned());
            inner.token_error = Some(Answer::json(
                200,
                r#"{"access_token":"at-myob-refreshed","token_type":"bearer","expires_in":"1200","refresh_token":"rt-myob-rotated","scope":"CompanyFile","user":{"uid":"5b0d2f1e-0000-4000-8000-000000000009","username":"owner@bondisurf.example"}}"#,
            ));
        });
        let second = new_connection(&app, company_id, "myob").await;
        let mut expired = body(FILE, 0);
        expired
            .as_object_mut()
            .expect("an object")
            .remove("expiresIn");
        expired["expiresAt"] = json!("2026-01-01T00:00:00Z");
        let response = authorize(&app, company_id, second, &expired, true).await;
        assert_eq!(response.status(), 200);
        let credentials = stored(&app, second).await;
        assert_eq!(credentials["accessToken"], "at-myob-refreshed");
        assert_eq!(credentials["refreshToken"], "rt-myob-rotated");
        let expires = credentials["expiresAt"].as_str().expect("an expiry");
        let expires = chrono::DateTime::parse_from_rfc3339(expires).expect("RFC 3339");
        assert!(expires > chrono::Utc::now() + chrono::Duration::minutes(15));
    }
}

/// MYOB as it answers `$filter=LastModified gt datetime'…'` on sale
/// invoices: the invoices modified since (one paid since the first sync,
/// one new), on one page (no `NextPageLink`); MYOB's headers are checked as
/// for a whole list. Every answer dated `PLATFORM_DATE` by the scenario.
async fn fake_with_changes() -> Fake {
    let whole = router();
    let fake = Fake::start(
        "myob",
        Scheme::Bearer,
        ACCESS,
        REFRESH,
        fixture("myob/fixtures/unauthorized.json"),
        Arc::new(move |call: &Call| {
            let invoices = format!("/accountright/{FILE}/Sale/Invoice");
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

/// MYOB asked for what changed, in the shared scenario (`scenarios::changes`).
/// A resync costs two calls at least: the company files
/// (`/accountright/`) are read each sync for the file's URI, as the
/// connector keeps nothing between syncs.
static CHANGES: Changed = Changed {
    data_type: "invoices",
    fake: || Box::pin(fake_with_changes()),
    filter: |call| {
        call.query
            .get("$filter")
            .filter(|filter| filter.contains("LastModified"))
            .cloned()
    },
    since: "LastModified gt datetime'2026-11-26T19:00:00'",
    calls: 1,
    changed: 1,
    added: 1,
    quiet: |_| Answer::json(200, r#"{"Items":[],"NextPageLink":null,"Count":0}"#),
    quiet_calls: 2,
};

changes_scenario!(CASE, CHANGES);
