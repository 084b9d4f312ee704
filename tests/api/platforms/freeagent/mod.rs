//! FreeAgent: invoices (with nested items) and client contacts over several
//! `Link`-header pages, every documented status, refresh on a 401 with a
//! rotated refresh token (HTTP Basic), `invalid_grant`, 429, 5xx, garbage,
//! and verification through `GET /v2/company`'s subdomain. Fixtures follow
//! the examples of https://dev.freeagent.com/docs/invoices,
//! https://dev.freeagent.com/docs/contacts and
//! https://dev.freeagent.com/docs/company (see `src/platforms/freeagent/NOTES.md`).
//! A resync asks only for what changed (`updated_since`). The accounting
//! lists beyond sales: [`ledger`].
//!
//! The scenarios every platform shares (`super::scenarios`) run from its
//! `CASE`; the tests here are its own.

mod ledger;

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
use super::{latest, options_for, sync};
use crate::helpers::{TestApp, backends, json};

pub(crate) const SUBDOMAIN: &str = "acme";
const ACCESS: &str = "freeagent-access-token-0001";
const REFRESH: &str = "freeagent-refresh-token-0001";

/// A page of a list, with a `Link` header naming the next page when there
/// is one (FreeAgent's own host: only the page number is taken from it).
fn page(resource: &str, call: &Call) -> Answer {
    let page = call
        .query
        .get("page")
        .cloned()
        .unwrap_or_else(|| "1".to_owned());
    let mut answer = Answer::json(
        200,
        fixture(&format!("freeagent/fixtures/{resource}-{page}.json")),
    );
    if page == "1" {
        let link = format!(
            "<https://api.freeagent.com/v2/{resource}?page=2&per_page=100>; rel='next', \
             <https://api.freeagent.com/v2/{resource}?page=2&per_page=100>; rel='last'"
        );
        answer.headers.push(("Link".to_owned(), link));
    } else {
        let link = format!(
            "<https://api.freeagent.com/v2/{resource}?page=1&per_page=100>; rel=\"first\", \
             <https://api.freeagent.com/v2/{resource}?page=1&per_page=100>; rel=\"prev\""
        );
        answer.headers.push(("Link".to_owned(), link));
    }
    answer
}

/// Serves the FreeAgent fixtures: two pages each of invoices and contacts,
/// the company, and the accounting lists of `ledger`.
fn router() -> super::fake::Router {
    Arc::new(|call: &Call| {
        if let Some(answer) = ledger::answer(call) {
            return answer;
        }
        match call.path.as_str() {
            "/v2/company" => Answer::json(200, fixture("freeagent/fixtures/company.json")),
            "/v2/invoices" => page("invoices", call),
            "/v2/contacts" => page("contacts", call),
            _ => Answer::json(404, fixture("freeagent/fixtures/not-found.json")),
        }
    })
}

pub(crate) async fn fake() -> Fake {
    Fake::start(
        "freeagent",
        Scheme::Bearer,
        ACCESS,
        REFRESH,
        fixture("freeagent/fixtures/unauthorized.json"),
        router(),
    )
    .await
}

fn body(subdomain: &str, expires_in: i64) -> Value {
    json!({"subdomain": subdomain, "accessToken": ACCESS, "refreshToken": REFRESH, "expiresIn": expires_in})
}

/// A company with an authorized FreeAgent connection.
async fn connected(app: &TestApp, expires_in: i64) -> (Uuid, Uuid) {
    connected_as(app, &CASE, &(CASE.authorization)(expires_in)).await
}

async fn invoices(app: &TestApp, company_id: Uuid) -> Vec<Value> {
    records(app, company_id, "invoices").await
}

fn by_number<'a>(invoices: &'a [Value], number: &str) -> &'a Value {
    invoices
        .iter()
        .find(|invoice| invoice["invoiceNumber"] == number)
        .unwrap_or_else(|| panic!("invoice {number} synced"))
}

/// FreeAgent in the shared scenarios.
static CASE: Case = Case {
    key: "freeagent",
    name: "FreeAgent",
    fake: || Box::pin(fake()),
    page_size: None,
    authorization: |expires_in| body(SUBDOMAIN, expires_in),
    access: ACCESS,
    refresh: REFRESH,
    lasting: 3600,
    kept: &["subdomain"],
    sync: Synced {
        data_type: "invoices",
        records: 12,
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
    ],
    errors: Errors {
        rate_limited: r#"{"errors":{"error":{"message":"You must not exceed 120 requests per 60 seconds"}}}"#,
        rate_limit_headers: &[],
        rate_limited_says: "",
        server_error: "{}",
        unavailable: (
            503,
            r#"{"errors":{"error":{"message":"Service temporarily unavailable"}}}"#,
        ),
        unavailable_says: "FreeAgent answered 503 Service Unavailable: Service temporarily unavailable",
        refused: Refused::Scope {
            status: 403,
            body: r#"{"errors":{"error":{"message":"Access to this resource is forbidden for this user's permission level"}}}"#,
            says: "FreeAgent answered 403 Forbidden: Access to this resource is forbidden",
        },
    },
    pages: Pages {
        prelude: |_| Vec::new(),
        first: |_| {
            let mut first = Answer::json(200, fixture("freeagent/fixtures/invoices-1.json"));
            first.headers.push((
                "Link".to_owned(),
                "<https://api.freeagent.com/v2/invoices?page=2&per_page=100>; rel='next'"
                    .to_owned(),
            ));
            first
        },
        cut: Cut::SecondPage,
        truncated: r#"{"invoices": [{"url": "https://api.freeagent.com/v2/invoices/9", "total_value": "12.5"#,
        truncated_says: "",
        records_at: "/invoices",
        id_at: "/url",
        field: "/total_value",
    },
    refresh_with: Some(Refresh {
        invalid_grant_says: &["FreeAgent"],
        ..Refresh::ROTATING
    }),
    unrefreshable: None,
    verification: Verification {
        rejected_says: &["Access denied"],
        // A working token, but for another company's subdomain.
        another_account: Some(Another {
            authorization: || body("someone-else", 3600),
            says: &["someone-else"],
        }),
        verified_by: |calls| calls.last().is_some_and(|call| call.path == "/v2/company"),
    },
    unknown_account: None,
};

platform_scenarios!(CASE, refreshes, refreshes_before_expiry);

#[tokio::test]
async fn freeagent_invoices_and_contacts_sync_over_every_page_with_every_status() {
    for backend in backends() {
        let fake = fake().await;
        let app = TestApp::spawn_with(backend, options_for(&fake, None, 2)).await;
        let (company_id, _) = connected(&app, 3600).await;
        let operations = sync(&app, company_id, QueueDataTypeDataType::Invoices).await;
        assert_eq!(latest(&operations, "invoices").status, PullStatus::Complete);
        let operations = sync(&app, company_id, QueueDataTypeDataType::Customers).await;
        assert_eq!(
            latest(&operations, "customers").status,
            PullStatus::Complete
        );

        let invoices = invoices(&app, company_id).await;
        assert_eq!(invoices.len(), 12, "{invoices:#?}");
        // Every documented status word.
        for (number, status) in [
            ("001", "Draft"),
            ("002", "Draft"),
            ("003", "Submitted"),
            ("004", "PartiallyPaid"),
            ("005", "Paid"),
            ("006", "Submitted"),
            ("007", "Paid"),
            ("008", "Paid"),
            ("009", "Void"),
            ("010", "Void"),
            ("011", "Paid"),
            ("012", "Submitted"),
        ] {
            assert_eq!(by_number(&invoices, number)["status"], status, "{number}");
        }
        let open = by_number(&invoices, "003");
        assert_eq!(open["invoiceId"], "103");
        assert_eq!(open["totalAmount"], "1127.81");
        assert_eq!(open["subTotal"], "939.84");
        assert_eq!(open["totalTaxAmount"], "187.97");
        assert_eq!(open["amountDue"], "1127.81");
        assert_eq!(open["issueDate"], "2026-10-03");
        assert_eq!(open["dueDate"], "2026-11-02");
        assert_eq!(open["currency"], "GBP");
        assert_eq!(open["note"], "Thank you for your business.");
        assert_eq!(open["sourceModifiedDate"], "2026-10-04T10:11:12.000000Z");
        assert_eq!(open["customerRef"]["id"], "2");
        assert_eq!(open["customerRef"]["companyName"], "Acme Trading Ltd");
        let line = &open["lineItems"][0];
        assert_eq!(line["description"], "Design work");
        assert_eq!(line["unitAmount"], "93.984");
        assert_eq!(line["quantity"], "10");
        assert_eq!(line["subTotal"], "939.84");
        assert_eq!(line["taxAmount"], "187.97");
        assert_eq!(line["totalAmount"], "1127.81");
        let part_paid = by_number(&invoices, "004");
        assert_eq!(part_paid["totalAmount"], "1234.56");
        assert_eq!(part_paid["amountDue"], "1000.00");
        assert_eq!(part_paid["paidOnDate"], Value::Null);
        let paid = by_number(&invoices, "007");
        assert_eq!(paid["paidOnDate"], "2026-08-20");
        assert_eq!(paid["amountDue"], "0.00");
        assert_eq!(by_number(&invoices, "006")["currency"], "EUR");

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
        assert_eq!(names, ["Acme Trading Ltd", "Jane Doe", "Old Customer plc"]);
        assert_eq!(results[0]["customerId"], "2");
        assert_eq!(results[0]["emailAddress"], "accounts@acme.example");
        assert_eq!(results[0]["phone"], "020 7946 0000");
        assert_eq!(results[0]["status"], "Active");
        assert_eq!(
            results[0]["sourceModifiedDate"],
            "2026-09-16T09:34:41.000000Z"
        );
        assert_eq!(results[1]["emailAddress"], "jane@doe.example");
        assert_eq!(results[1]["phone"], "07700 900123");
        assert_eq!(results[2]["status"], "Archived");

        let calls = fake.calls();
        assert!(calls.iter().all(|call| call.token == ACCESS));
        let invoice_pages: Vec<&Call> = calls
            .iter()
            .filter(|call| call.path == "/v2/invoices")
            .collect();
        assert_eq!(invoice_pages.len(), 2);
        assert!(invoice_pages.iter().all(|call| {
            call.query.get("nested_invoice_items").map(String::as_str) == Some("true")
                && call.query.get("per_page").map(String::as_str) == Some("100")
        }));
        assert_eq!(
            invoice_pages[1].query.get("page").map(String::as_str),
            Some("2")
        );
        assert!(calls.iter().any(|call| call.path == "/v2/contacts"
            && call.query.get("page").map(String::as_str) == Some("2")
            && call.query.get("view").map(String::as_str) == Some("clients")));
        assert!(calls.iter().all(|call| {
            call.headers
                .get("user-agent")
                .is_some_and(|agent| agent.starts_with("tributary/"))
        }));
        assert_eq!(
            fake.token_calls(),
            0,
            "a token valid for an hour is not refreshed"
        );
    }
}

/// FreeAgent as it answers `updated_since`: the invoices updated since (one
/// paid since the first sync, one new), on one page (no `Link` to another);
/// every answer dated `PLATFORM_DATE` by the scenario.
async fn fake_with_changes() -> Fake {
    let whole = router();
    Fake::start(
        "freeagent",
        Scheme::Bearer,
        ACCESS,
        REFRESH,
        fixture("freeagent/fixtures/unauthorized.json"),
        Arc::new(move |call: &Call| {
            let changes = call.query.contains_key("updated_since");
            if changes && call.path == "/v2/invoices" {
                Answer::json(200, fixture("freeagent/fixtures/invoices-changed.json"))
            } else {
                whole(call)
            }
        }),
    )
    .await
}

/// FreeAgent asked for what changed, in the shared scenario (`scenarios::changes`).
static CHANGES: Changed = Changed {
    data_type: "invoices",
    fake: || Box::pin(fake_with_changes()),
    filter: |call| call.query.get("updated_since").cloned(),
    since: "2026-11-27T08:55:00.000Z",
    calls: 1,
    changed: 1,
    added: 1,
    quiet: |_| Answer::json(200, r#"{"invoices":[]}"#),
    quiet_calls: 1,
};

changes_scenario!(CASE, CHANGES);
