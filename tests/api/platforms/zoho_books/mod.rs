//! Zoho Books: `page`/`per_page` paging with `page_context.has_more_page`,
//! the status vocabulary, a refresh whose `api_domain` moves the API, and
//! verification through `organizations`.
//! A resync asks only for the invoices changed (`last_modified_time`).
//!
//! The scenarios every platform shares (`super::scenarios`) run from its
//! `CASE`; the tests here are its own, the accounting lists' in [`ledger`]
//! and [`postings`].

mod ledger;
mod limits;
mod postings;

use std::sync::Arc;

use serde_json::{Value, json};

use client::types::{PullStatus, QueueDataTypeDataType};

use super::fake::{Answer, Call, Fake, Scheme, fixture};
use super::scenarios::changes::{Changed, changes_scenario};
use super::scenarios::{
    Another, Case, Cut, Errors, Pages, Refresh, Refused, Synced, Verification, platform_scenarios,
};
use super::{authorize, latest, options_for, set_oauth_client, stored, sync};
use crate::connections::{new_company, new_connection};
use crate::helpers::{TestApp, backends, json};

pub const ORGANIZATION: &str = "10234695";
pub const ACCESS: &str = "1000.zoho-access-token";
const REFRESH: &str = "1000.zoho-refresh-token";

pub fn router() -> super::fake::Router {
    Arc::new(|call: &Call| {
        if call.path == "/books/v3/organizations" {
            return Answer::json(200, fixture("zoho_books/fixtures/organizations.json"));
        }
        if call.path == format!("/books/v3/organizations/{ORGANIZATION}") {
            return Answer::json(200, fixture("zoho_books/fixtures/organization.json"));
        }
        if call.query.get("organization_id").map(String::as_str) != Some(ORGANIZATION) {
            return Answer::json(
                400,
                "{\"code\":6041,\"message\":\"This user is not associated with the CompanyID/CompanyName:1.\"}",
            );
        }
        let page = call
            .query
            .get("page")
            .cloned()
            .unwrap_or_else(|| "1".to_owned());
        if let Some(answer) = single_record(&call.path) {
            return answer;
        }
        let vendors = call.query.get("contact_type").map(String::as_str) == Some("vendor");
        let whole = |name: &str| Answer::json(200, fixture(&format!("zoho_books/fixtures/{name}")));
        match call.path.as_str() {
            "/books/v3/invoices" => Answer::json(
                200,
                fixture(&format!("zoho_books/fixtures/invoices-{page}.json")),
            ),
            "/books/v3/contacts" if vendors => whole("vendors.json"),
            "/books/v3/chartofaccounts" => whole("chartofaccounts.json"),
            "/books/v3/settings/taxes" => whole("taxes.json"),
            "/books/v3/items" => whole("items.json"),
            "/books/v3/creditnotes" => whole("creditnotes.json"),
            "/books/v3/bills" => whole(&format!("bills-{page}.json")),
            "/books/v3/customerpayments" => whole("customerpayments.json"),
            "/books/v3/vendorpayments" => whole("vendorpayments.json"),
            "/books/v3/journals" => journals(call.query.get("status").map(String::as_str)),
            "/books/v3/contacts" => Answer::json(
                200,
                fixture(&format!("zoho_books/fixtures/contacts-{page}.json")),
            ),
            _ => Answer::json(404, "{\"code\":5,\"message\":\"Invalid URL Passed\"}"),
        }
    })
}

/// `GET /journals`, by `status` (published, draft, or both).
fn journals(status: Option<&str>) -> Answer {
    let read = |name: &str| -> Value {
        serde_json::from_str(&fixture(&format!("zoho_books/fixtures/{name}")))
            .expect("fixture JSON")
    };
    let mut answer = read("journals.json");
    match status {
        Some("published") => {}
        Some("draft") => answer = read("journals-drafts.json"),
        _ => {
            let drafts = read("journals-drafts.json")["journals"].clone();
            if let (Some(listed), Some(drafts)) =
                (answer["journals"].as_array_mut(), drafts.as_array())
            {
                listed.extend(drafts.iter().cloned());
            }
        }
    }
    Answer::json(200, answer.to_string())
}

/// `GET /customerpayments/{id}`, `/vendorpayments/{id}`, `/journals/{id}`:
/// the answer in the fixture of such answers whose record has the id, or
/// Zoho's 404; `None` for any other path.
fn single_record(path: &str) -> Option<Answer> {
    let (file, key, id_field) = [
        (
            "customerpayments",
            "customerpayment-details.json",
            "payment",
            "payment_id",
        ),
        (
            "vendorpayments",
            "vendorpayment-details.json",
            "vendorpayment",
            "payment_id",
        ),
        ("journals", "journal-details.json", "journal", "journal_id"),
    ]
    .into_iter()
    .find(|(list, ..)| path.starts_with(&format!("/books/v3/{list}/")))
    .map(|(_, file, key, id_field)| (file, key, id_field))?;
    let id = path.rsplit('/').next().unwrap_or_default();
    let answers: Vec<Value> =
        serde_json::from_str(&fixture(&format!("zoho_books/fixtures/{file}")))
            .expect("fixture JSON");
    Some(
        answers
            .into_iter()
            .find(|answer| answer[key][id_field] == id)
            .map(|answer| Answer::json(200, answer.to_string()))
            .unwrap_or_else(|| {
                Answer::json(
                    404,
                    "{\"code\":1002,\"message\":\"The record does not exist.\"}",
                )
            }),
    )
}

pub async fn fake() -> Fake {
    let fake = Fake::start(
        "zoho-books",
        Scheme::ZohoOauthtoken,
        ACCESS,
        REFRESH,
        fixture("zoho_books/fixtures/unauthorized.json"),
        router(),
    )
    .await;
    fake.with(|inner| {
        inner.client_in_body = true;
        inner.rotate = false;
    });
    fake
}

pub fn body(access: &str, organization: &str, expires_at: Option<&str>) -> Value {
    let mut body = json!({"organizationId": organization, "dataCenter": "eu", "accessToken": access, "refreshToken": REFRESH});
    match expires_at {
        Some(at) => body["expiresAt"] = json!(at),
        None => body["expiresIn"] = json!(3600),
    }
    body
}

/// Zoho Books in the shared scenarios: Zoho does not rotate refresh tokens.
static CASE: Case = Case {
    key: "zoho-books",
    name: "Zoho Books",
    fake: || Box::pin(fake()),
    page_size: Some(4),
    authorization: |expires_in| {
        let mut body = body(ACCESS, ORGANIZATION, None);
        body["expiresIn"] = json!(expires_in);
        body
    },
    access: ACCESS,
    refresh: REFRESH,
    lasting: 3600,
    kept: &["organizationId", "dataCenter"],
    sync: Synced {
        data_type: "invoices",
        records: 7,
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
        rate_limited: r#"{"code":44,"message":"You have made too many requests. Please try after some time."}"#,
        rate_limit_headers: &[],
        rate_limited_says: "",
        server_error: r#"{"code":1,"message":"Internal error"}"#,
        unavailable: (
            503,
            r#"{"code":1,"message":"Zoho Books is under maintenance"}"#,
        ),
        unavailable_says: "503 Service Unavailable",
        refused: Refused::AsARejectedToken(
            "Zoho documents no 403 and no answer for a scope the token lacks: a 401 is a rejected token (NOTES.md)",
        ),
    },
    pages: Pages {
        prelude: |_| Vec::new(),
        first: |_| Answer::json(200, fixture("zoho_books/fixtures/invoices-1.json")),
        cut: Cut::SecondPage,
        truncated: r#"{"code": 0, "invoices": [{"invoice_id": "x", "total": 12"#,
        truncated_says: "",
        records_at: "/invoices",
        id_at: "/invoice_id",
        field: "/total",
    },
    refresh_with: Some(Refresh::KEEPING),
    unrefreshable: None,
    verification: Verification {
        rejected_says: &["You are not authorized"],
        another_account: Some(Another {
            authorization: || body(ACCESS, "99999", None),
            says: &["organization 99999"],
        }),
        verified_by: |calls| {
            calls
                .last()
                .is_some_and(|call| call.path == "/books/v3/organizations")
        },
    },
    unknown_account: None,
};

platform_scenarios!(CASE, refreshes, refreshes_before_expiry);

#[tokio::test]
async fn zoho_syncs_every_page_and_a_refresh_moves_the_api_to_its_api_domain() {
    for backend in backends() {
        let fake = fake().await;
        // The configured API base is dead: only the token response's
        // api_domain leads to the API.
        let mut options = options_for(&fake, Some(4), 1);
        let dead = tributary::platforms::config::PlatformConfig {
            api_base: Some("http://127.0.0.1:9".to_owned()),
            token_url: Some(fake.token_url()),
            authorize_url: None,
            page_size: Some(4),
        };
        options.connectors = tributary::platforms::connector::Connectors::for_platforms(
            &tributary::platforms::config::PlatformsConfig {
                platforms: [("zoho-books".to_owned(), dead)].into(),
                retry: super::fast_retries(),
                ..Default::default()
            },
        )
        .expect("connectors");
        fake.with(|inner| inner.api_domain = Some(fake.url()));
        let app = TestApp::spawn_with(backend, options).await;
        set_oauth_client(&app, "zoho-books").await;
        let company_id = new_company(&app, "Bowman and Co").await;
        let connection_id = new_connection(&app, company_id, "zoho-books").await;
        let expired = body(ACCESS, ORGANIZATION, Some("2026-01-01T00:00:00Z"));
        assert_eq!(
            authorize(&app, company_id, connection_id, &expired, false)
                .await
                .status(),
            200
        );
        sync(&app, company_id, QueueDataTypeDataType::Invoices).await;
        let operations = sync(&app, company_id, QueueDataTypeDataType::Customers).await;
        let invoices_operation = latest(&operations, "invoices");
        assert_eq!(
            invoices_operation.status,
            PullStatus::Complete,
            "{invoices_operation:?}"
        );
        assert_eq!(
            latest(&operations, "customers").status,
            PullStatus::Complete
        );
        assert_eq!(fake.token_calls(), 1);
        let credentials = stored(&app, connection_id).await;
        assert_eq!(credentials["apiDomain"], fake.url());
        assert_eq!(
            credentials["refreshToken"], REFRESH,
            "Zoho does not rotate refresh tokens"
        );
        assert_eq!(credentials["accessToken"], "at-refreshed-1");

        let page = json(
            app.get(&format!(
                "/companies/{company_id}/data/invoices?pageSize=100"
            ))
            .await,
        )
        .await;
        let invoices = page["results"].as_array().cloned().unwrap_or_default();
        assert_eq!(invoices.len(), 7);
        let find = |number: &str| {
            invoices
                .iter()
                .find(|i| i["invoiceNumber"] == number)
                .cloned()
                .expect("synced")
        };
        for (number, status) in [
            ("INV-000001", "Draft"),
            ("INV-000002", "Submitted"),
            ("INV-000003", "Submitted"),
            ("INV-000004", "PartiallyPaid"),
            ("INV-000005", "Paid"),
            ("INV-000006", "Void"),
            ("INV-000007", "PartiallyPaid"),
        ] {
            assert_eq!(find(number)["status"], status, "{number}");
        }
        assert_eq!(find("INV-000002")["totalAmount"], "1127.81");
        assert_eq!(find("INV-000004")["amountDue"], "200.00");
        assert_eq!(find("INV-000005")["paidOnDate"], "2026-10-25");
        assert_eq!(find("INV-000001")["currency"], "EUR");

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
            .filter_map(|c| c["customerName"].as_str())
            .collect();
        assert_eq!(
            names,
            ["Bowman and Co", "Lindqvist GmbH", "Ortega Textiles"]
        );
        let calls = fake.calls();
        assert!(
            calls
                .iter()
                .all(|call| call.headers.get("authorization").map(String::as_str)
                    == Some("Zoho-oauthtoken at-refreshed-1"))
        );
        assert!(calls.iter().any(|call| call.path == "/books/v3/invoices"
            && call.query.get("page").map(String::as_str) == Some("2")
            && call.query.get("per_page").map(String::as_str) == Some("4")));
    }
}

#[tokio::test]
async fn zohos_invalid_code_answered_with_200_deauthorizes_the_connection() {
    for backend in backends() {
        let fake = fake().await;
        let app = TestApp::spawn_with(backend, options_for(&fake, None, 1)).await;
        set_oauth_client(&app, "zoho-books").await;
        // Zoho answers a revoked refresh token with 200 and an error field.
        fake.with(|inner| {
            inner.token_error = Some(Answer::json(200, "{\"error\":\"invalid_code\"}"))
        });
        let company_id = new_company(&app, "Bowman and Co").await;
        let connection_id = new_connection(&app, company_id, "zoho-books").await;
        let expired = body(ACCESS, ORGANIZATION, Some("2026-01-01T00:00:00Z"));
        assert_eq!(
            authorize(&app, company_id, connection_id, &expired, false)
                .await
                .status(),
            200
        );
        let operations = sync(&app, company_id, QueueDataTypeDataType::Invoices).await;
        let operation = latest(&operations, "invoices");
        assert_eq!(operation.status, PullStatus::AuthError);
        assert!(
            operation
                .error_message
                .unwrap_or_default()
                .contains("invalid_code")
        );
        let connection = app
            .client
            .get_connection(&company_id, &connection_id)
            .await
            .expect("found")
            .into_inner();
        assert_eq!(
            connection.status,
            client::types::ConnectionStatus::Deauthorized
        );
    }
}

/// Zoho Books as it answers `last_modified_time`: the invoices modified
/// after it (one paid since the first sync, one new), on one page; every
/// answer dated `PLATFORM_DATE` by the scenario.
async fn fake_with_changes() -> Fake {
    let whole = router();
    let fake = Fake::start(
        "zoho-books",
        Scheme::ZohoOauthtoken,
        ACCESS,
        REFRESH,
        fixture("zoho_books/fixtures/unauthorized.json"),
        Arc::new(move |call: &Call| {
            let changes = call.query.contains_key("last_modified_time");
            if changes && call.path == "/books/v3/invoices" {
                Answer::json(200, fixture("zoho_books/fixtures/invoices-changed.json"))
            } else {
                whole(call)
            }
        }),
    )
    .await;
    fake.with(|inner| {
        inner.client_in_body = true;
        inner.rotate = false;
    });
    fake
}

/// Zoho Books asked for what changed, in the shared scenario (`scenarios::changes`).
static CHANGES: Changed = Changed {
    data_type: "invoices",
    fake: || Box::pin(fake_with_changes()),
    filter: |call| call.query.get("last_modified_time").cloned(),
    since: "2026-11-27T08:55:00+0000",
    calls: 1,
    changed: 1,
    added: 1,
    quiet: |_| {
        Answer::json(
            200,
            r#"{"code":0,"message":"success","invoices":[],"page_context":{"page":1,"per_page":200,"has_more_page":false}}"#,
        )
    },
    quiet_calls: 1,
};

changes_scenario!(CASE, CHANGES);
