//! Sage Business Cloud Accounting: sales invoices and customer contacts
//! over several pages (`page`/`items_per_page` until `$next` is null) for
//! the business in `X-Business`, every status (and an unknown id decided by
//! the amounts), exact amounts from JSON numbers, line items; refresh on a
//! 401 with the rotated refresh token stored before use, `invalid_grant`,
//! 429, 5xx, garbage, an unknown business, and verification through
//! `GET /businesses`. Fixtures follow the documented shapes (NOTES.md §6, §8).
//! A resync asks only for what changed (`updated_or_created_since`), then
//! for what was deleted (`deleted_since`), whose ids are flagged at once.
//!
//! The scenarios every platform shares (`super::scenarios`) run from its
//! `CASE`; the tests here are its own, the accounting lists' in [`ledger`].

mod ledger;

use std::sync::Arc;

use serde_json::{Value, json};
use uuid::Uuid;

use client::types::{FetchMode, PullStatus, QueueDataTypeDataType};

use super::fake::{Answer, Call, Fake, Scheme, fixture};
use super::scenarios::changes::{Changed, PLATFORM_DATE, changes_scenario};
use super::scenarios::{
    Another, Case, Cut, Errors, Pages, Refresh, Refused, Synced, Verification,
    connected as connected_as, platform_scenarios, records as list,
};
use super::{latest, options_for, sync};
use crate::helpers::{TestApp, backends};

const KEY: &str = "sage-business-cloud";
const BUSINESS: &str = "0d40342d0287cd6b13555c54afca6c90";
const OTHER_BUSINESS: &str = "11111111111111111111111111111111";
const ACCESS: &str = "sage-access-token-0001";
const REFRESH: &str = "sage-refresh-token-0001";

/// Serves the Sage fixtures: two pages each of sales invoices and contacts,
/// and `/businesses`; another business is not found. A list asked for what
/// was deleted (`deleted_since`, only the ids read, so no `attributes`) has
/// nothing deleted.
fn router() -> super::fake::Router {
    Arc::new(|call: &Call| {
        let not_found = || {
            Answer::json(
                404,
                fixture("sage_business_cloud/fixtures/business-not-found.json"),
            )
        };
        if call.path == "/businesses" {
            return Answer::json(200, fixture("sage_business_cloud/fixtures/businesses.json"));
        }
        if call.path == format!("/businesses/{BUSINESS}") {
            return Answer::json(200, fixture("sage_business_cloud/fixtures/business.json"));
        }
        if call.headers.get("x-business").map(String::as_str) != Some(BUSINESS) {
            return not_found();
        }
        if call.path == "/financial_settings" {
            return Answer::json(
                200,
                fixture("sage_business_cloud/fixtures/financial_settings.json"),
            );
        }
        let query = |name: &str| call.query.get(name).map(String::as_str);
        if query("deleted_since").is_some() && query("items_per_page").is_some() {
            return Answer::json(200, fixture("sage_business_cloud/fixtures/empty-list.json"));
        }
        if query("attributes") != Some("all") || query("items_per_page").is_none() {
            return Answer::json(
                422,
                "[{\"$severity\":\"error\",\"$dataCode\":\"InvalidRequest\",\"$message\":\"attributes=all and items_per_page expected by this fake\",\"$source\":\"\"}]",
            );
        }
        let page = query("page").unwrap_or("1");
        match call.path.as_str() {
            "/sales_invoices" => Answer::json(
                200,
                fixture(&format!(
                    "sage_business_cloud/fixtures/sales_invoices-{page}.json"
                )),
            ),
            "/contacts" if query("contact_type_id") == Some("CUSTOMER") => Answer::json(
                200,
                fixture(&format!(
                    "sage_business_cloud/fixtures/contacts-{page}.json"
                )),
            ),
            "/contacts" if query("contact_type_id") == Some("VENDOR") => {
                Answer::json(200, fixture("sage_business_cloud/fixtures/vendors.json"))
            }
            "/ledger_accounts"
            | "/tax_rates"
            | "/purchase_invoices"
            | "/sales_credit_notes"
            | "/contact_payments"
            | "/bank_accounts"
            | "/products"
            | "/services" => Answer::json(
                200,
                fixture(&format!(
                    "sage_business_cloud/fixtures/{}.json",
                    call.path.trim_start_matches('/')
                )),
            ),
            "/ledger_entries" | "/transactions" => dated_page(call),
            _ => not_found(),
        }
    })
}

/// A page of a dated list (`ledger_entries.json`, `transactions.json`: S20's
/// records as a bare array) as Sage serves it: the records dated within
/// `from_date`..=`to_date`, `items_per_page` of them on page `page` in
/// S3's envelope (`$next` null on the last; a page beyond it the last).
fn dated_page(call: &Call) -> Answer {
    let query = |name: &str| call.query.get(name).map(String::as_str);
    let all: Value = serde_json::from_str(&fixture(&format!(
        "sage_business_cloud/fixtures/{}.json",
        call.path.trim_start_matches('/')
    )))
    .expect("a fixture");
    let dated: Vec<Value> = all
        .as_array()
        .expect("an array")
        .iter()
        .filter(|record| {
            let date = record["date"].as_str().expect("a date");
            query("from_date").is_none_or(|from| date >= from)
                && query("to_date").is_none_or(|to| date <= to)
        })
        .cloned()
        .collect();
    let per_page: usize = query("items_per_page")
        .and_then(|n| n.parse().ok())
        .unwrap_or(20);
    let pages = dated.len().div_ceil(per_page).max(1);
    let page = query("page")
        .and_then(|n| n.parse().ok())
        .unwrap_or(1usize)
        .clamp(1, pages);
    let items: Vec<Value> = dated
        .iter()
        .skip((page - 1) * per_page)
        .take(per_page)
        .cloned()
        .collect();
    let link = |to: usize| format!("{}?page={to}&items_per_page={per_page}", call.path);
    Answer::json(
        200,
        json!({
            "$total": dated.len(),
            "$page": page,
            "$next": (page < pages).then(|| link(page + 1)),
            "$back": (page > 1).then(|| link(page - 1)),
            "$itemsPerPage": per_page,
            "$items": items,
        })
        .to_string(),
    )
}

pub(crate) async fn fake() -> Fake {
    let fake = Fake::start(
        "sage-business-cloud",
        Scheme::Bearer,
        ACCESS,
        REFRESH,
        fixture("sage_business_cloud/fixtures/unauthorized.json"),
        router(),
    )
    .await;
    // Sage takes the client credentials in the form body.
    fake.with(|inner| inner.client_in_body = true);
    fake
}

fn body(business: &str, expires_in: i64) -> Value {
    json!({"businessId": business, "accessToken": ACCESS, "refreshToken": REFRESH, "expiresIn": expires_in})
}

/// A company with an authorized Sage connection.
pub(super) async fn connected(app: &TestApp, expires_in: i64) -> (Uuid, Uuid) {
    connected_as(app, &CASE, &(CASE.authorization)(expires_in)).await
}

fn by_number<'a>(invoices: &'a [Value], number: &str) -> &'a Value {
    invoices
        .iter()
        .find(|invoice| invoice["invoiceNumber"] == number)
        .unwrap_or_else(|| panic!("invoice {number} synced"))
}

/// Sage in the shared scenarios: its access tokens last five minutes.
static CASE: Case = Case {
    key: KEY,
    name: "Sage Business Cloud Accounting",
    fake: || Box::pin(fake()),
    page_size: None,
    authorization: |expires_in| body(BUSINESS, expires_in),
    access: ACCESS,
    refresh: REFRESH,
    lasting: 1800,
    kept: &["businessId"],
    sync: Synced {
        data_type: "invoices",
        records: 6,
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
        rate_limited: r#"[{"$severity":"error","$dataCode":"TooManyRequests","$message":"Rate limit exceeded","$source":""}]"#,
        rate_limit_headers: &[],
        rate_limited_says: "",
        server_error: r#"[{"$severity":"error","$dataCode":"UnexpectedError","$message":"An unexpected error occurred.","$source":""}]"#,
        unavailable: (
            503,
            r#"[{"$severity":"error","$dataCode":"ServiceUnavailable","$message":"Please try again later.","$source":""}]"#,
        ),
        unavailable_says: "Sage Business Cloud Accounting answered 503 Service Unavailable: ServiceUnavailable: Please try again later.",
        refused: Refused::Scope {
            status: 403,
            body: r#"[{"$severity":"error","$dataCode":"Forbidden","$message":"You do not have access to sales invoices.","$source":""}]"#,
            says: "Forbidden: You do not have access to sales invoices.",
        },
    },
    pages: Pages {
        prelude: |_| Vec::new(),
        first: |_| {
            Answer::json(
                200,
                fixture("sage_business_cloud/fixtures/sales_invoices-1.json"),
            )
        },
        cut: Cut::SecondPage,
        truncated: r#"{"$total": 6, "$items": [{"id": "x", "total_amount": 12.5"#,
        truncated_says: "",
        records_at: "/$items",
        id_at: "/id",
        field: "/total_amount",
    },
    refresh_with: Some(Refresh::ROTATING),
    unrefreshable: None,
    verification: Verification {
        rejected_says: &["401 Unauthorized: AuthorizationFailure"],
        // A token that works, but not for this business.
        another_account: Some(Another {
            authorization: || body(OTHER_BUSINESS, 1800),
            says: &["business 11111111111111111111111111111111 is not among the 2"],
        }),
        verified_by: |calls| calls.last().is_some_and(|call| call.path == "/businesses"),
    },
    unknown_account: Some(Another {
        authorization: || body(OTHER_BUSINESS, 1800),
        says: &[
            "Sage Business Cloud Accounting answered 404 Not Found: RecordNotFound: The business could not be found.",
        ],
    }),
};

platform_scenarios!(CASE, refreshes, refreshes_before_expiry, unknown_account);

#[tokio::test]
async fn sage_sales_invoices_and_customers_sync_over_every_page_with_every_status() {
    for backend in backends() {
        let fake = fake().await;
        let app = TestApp::spawn_with(backend, options_for(&fake, None, 2)).await;
        let (company_id, _) = connected(&app, 1800).await;
        let operations = sync(&app, company_id, QueueDataTypeDataType::Invoices).await;
        assert_eq!(latest(&operations, "invoices").status, PullStatus::Complete);
        let operations = sync(&app, company_id, QueueDataTypeDataType::Customers).await;
        assert_eq!(
            latest(&operations, "customers").status,
            PullStatus::Complete
        );

        let invoices = list(&app, company_id, "invoices").await;
        assert_eq!(invoices.len(), 6, "{invoices:#?}");
        for (number, status) in [
            ("SI-1", "Draft"),
            ("SI-2", "Submitted"),
            ("SI-3", "PartiallyPaid"),
            ("SI-4", "Paid"),
            ("SI-5", "Void"),
            // An id the sources do not list: the amounts decide.
            ("SI-6", "PartiallyPaid"),
        ] {
            assert_eq!(by_number(&invoices, number)["status"], status, "{number}");
        }
        let unpaid = by_number(&invoices, "SI-2");
        assert_eq!(unpaid["totalAmount"], "1234.56");
        assert_eq!(unpaid["subTotal"], "1028.80");
        assert_eq!(unpaid["totalTaxAmount"], "205.76");
        assert_eq!(unpaid["amountDue"], "1234.56");
        assert_eq!(unpaid["issueDate"], "2026-10-03");
        assert_eq!(unpaid["dueDate"], "2026-11-02");
        assert_eq!(unpaid["currency"], "GBP");
        assert_eq!(unpaid["note"], "PO-7781");
        assert_eq!(unpaid["paidOnDate"], Value::Null);
        assert_eq!(unpaid["sourceModifiedDate"], "2026-10-04T15:20:00.000000Z");
        assert_eq!(
            unpaid["customerRef"],
            json!({"id": "a1a1a1a1b2b2c3c3d4d4e5e5f6f6a7a7", "companyName": "Acme Garden Centre"})
        );
        let lines = unpaid["lineItems"].as_array().expect("line items");
        assert_eq!(lines.len(), 2);
        assert_eq!(lines[0]["totalAmount"], "1200.00");
        // A unit price with three decimals, read from the number's text.
        assert_eq!(lines[1]["unitAmount"], "1.152");
        assert_eq!(lines[1]["quantity"], "25");
        assert_eq!(lines[1]["subTotal"], "28.80");
        assert_eq!(lines[1]["taxAmount"], "5.76");
        assert_eq!(lines[1]["totalAmount"], "34.56");
        let paid = by_number(&invoices, "SI-4");
        assert_eq!(paid["paidOnDate"], "2026-10-20");
        assert_eq!(paid["amountDue"], "0.00");
        assert_eq!(paid["currency"], "EUR");
        // Part paid invoices have a last payment, but are not paid.
        assert_eq!(by_number(&invoices, "SI-3")["paidOnDate"], Value::Null);

        let customers = list(&app, company_id, "customers").await;
        let names: Vec<&str> = customers
            .iter()
            .filter_map(|customer| customer["customerName"].as_str())
            .collect();
        // The system contact and the supplier are not customers.
        assert_eq!(
            names,
            ["Acme Garden Centre", "Bramble Books", "Crofters Ltd"]
        );
        assert_eq!(customers[0]["phone"], "01632 960001");
        assert_eq!(customers[0]["emailAddress"], "accounts@acmegarden.example");
        assert_eq!(customers[0]["status"], "Active");
        assert_eq!(customers[1]["phone"], "07700 900002");
        assert_eq!(customers[1]["emailAddress"], "sam@bramblebooks.example");
        assert_eq!(customers[1]["defaultCurrency"], "EUR");
        assert_eq!(customers[2]["status"], "Archived");

        let calls = fake.calls();
        assert!(calls.iter().all(|call| call.token == ACCESS
            && call.headers.get("x-business").map(String::as_str) == Some(BUSINESS)));
        for path in ["/sales_invoices", "/contacts"] {
            assert!(calls.iter().any(|call| call.path == path
                && call.query.get("page").map(String::as_str) == Some("2")
                && call.query.get("items_per_page").map(String::as_str) == Some("200")));
        }
        // `$next` is null on page 2: no page 3 is asked for.
        assert!(
            !calls
                .iter()
                .any(|call| call.query.get("page").map(String::as_str) == Some("3"))
        );
        assert_eq!(fake.token_calls(), 0);
    }
}

/// Sage as it answers `updated_or_created_since`: the sales invoices updated
/// or created since (one paid since the first sync, one new), on one page
/// (`$next` null); every answer dated `PLATFORM_DATE` by the scenario. The business, the
/// attributes and the page size are checked as for a whole list.
async fn fake_with_changes() -> Fake {
    let whole = router();
    let fake = Fake::start(
        "sage-business-cloud",
        Scheme::Bearer,
        ACCESS,
        REFRESH,
        fixture("sage_business_cloud/fixtures/unauthorized.json"),
        Arc::new(move |call: &Call| {
            let changes = call.query.contains_key("updated_or_created_since");
            match whole(call) {
                ok if ok.status == 200 && changes && call.path == "/sales_invoices" => {
                    Answer::json(
                        200,
                        fixture("sage_business_cloud/fixtures/sales_invoices-changed.json"),
                    )
                }
                answer => answer,
            }
        }),
    )
    .await;
    fake.with(|inner| inner.client_in_body = true);
    fake
}

/// Sage asked for what changed, in the shared scenario (`scenarios::changes`).
/// A resync costs two calls at least, even when nothing changed: Sage's list
/// of changes holds no deletions, so each resync also asks the list's
/// `deleted_since` (NOTES.md, "Deletions").
static CHANGES: Changed = Changed {
    data_type: "invoices",
    fake: || Box::pin(fake_with_changes()),
    // Both of a resync's questions: what changed, then what was deleted.
    filter: |call| {
        call.query
            .get("updated_or_created_since")
            .or_else(|| call.query.get("deleted_since"))
            .cloned()
    },
    since: "2026-11-27T08:55:00Z",
    calls: 2,
    changed: 1,
    added: 1,
    quiet: |_| Answer::json(200, fixture("sage_business_cloud/fixtures/empty-list.json")),
    quiet_calls: 2,
};

changes_scenario!(CASE, CHANGES);

/// Sage after a sales invoice (SI-1, a draft), a customer contact (Bramble
/// Books), a vendor contact (Potting Supplies) and a service (Garden design)
/// were deleted, and an invoice never synced (created and deleted since):
/// `deleted_since` on `GET /sales_invoices` (two pages, one id each),
/// `GET /contacts` (one page, both contacts: the filter is not narrowed by
/// type) and `GET /services` lists them as S20 has it, the list's own
/// `$items` with `id` and `deleted_at`; no product was deleted, and nothing
/// was updated or created since.
async fn fake_with_deletions() -> Fake {
    let whole = router();
    let fake = Fake::start(
        "sage-business-cloud",
        Scheme::Bearer,
        ACCESS,
        REFRESH,
        fixture("sage_business_cloud/fixtures/unauthorized.json"),
        Arc::new(move |call: &Call| {
            let asked = |name: &str| call.query.contains_key(name);
            let page = call.query.get("page").map_or("1", String::as_str);
            match whole(call) {
                ok if ok.status == 200 && asked("deleted_since") => match call.path.as_str() {
                    "/sales_invoices" => Answer::json(
                        200,
                        fixture(&format!(
                            "sage_business_cloud/fixtures/sales_invoices-deleted-{page}.json"
                        )),
                    ),
                    "/contacts" => Answer::json(
                        200,
                        fixture("sage_business_cloud/fixtures/contacts-deleted.json"),
                    ),
                    "/services" => Answer::json(
                        200,
                        fixture("sage_business_cloud/fixtures/services-deleted.json"),
                    ),
                    _ => ok,
                },
                ok if ok.status == 200 && asked("updated_or_created_since") => {
                    Answer::json(200, fixture("sage_business_cloud/fixtures/empty-list.json"))
                }
                answer => answer,
            }
        }),
    )
    .await;
    fake.with(|inner| inner.client_in_body = true);
    fake
}

#[tokio::test]
async fn a_resync_after_deletions_at_sage_flags_exactly_the_deleted_records_and_keeps_the_rest() {
    const DELETED_INVOICE: &str = "5b1c2a3d4e5f46a7b8c9d0e1f2a3b4c5";
    const DELETED_CUSTOMER: &str = "b2b2b2b2c3c3d4d4e5e5f6f6a7a7b8b8";
    const DELETED_SUPPLIER: &str = "e5e5e5e5f6f6a7a7b8b8c9c9d0d0e1e1";
    const DELETED_SERVICE: &str = "f4f4f4f4a5a5b6b6c7c7d8d8e9e9f0f0";
    for backend in backends() {
        let fake = fake_with_deletions().await;
        fake.with(|inner| inner.date = Some(PLATFORM_DATE.to_owned()));
        let app = TestApp::spawn_with(backend, options_for(&fake, None, 2)).await;
        let (company_id, _) = connected(&app, 1800).await;
        let data_types = [
            (
                "invoices",
                "invoiceId",
                QueueDataTypeDataType::Invoices,
                DELETED_INVOICE,
            ),
            (
                "customers",
                "customerId",
                QueueDataTypeDataType::Customers,
                DELETED_CUSTOMER,
            ),
            (
                "suppliers",
                "supplierId",
                QueueDataTypeDataType::Suppliers,
                DELETED_SUPPLIER,
            ),
            (
                "items",
                "itemId",
                QueueDataTypeDataType::Items,
                DELETED_SERVICE,
            ),
        ];
        for (name, _, data_type, _) in data_types {
            let operations = sync(&app, company_id, data_type).await;
            assert_eq!(latest(&operations, name).fetch_mode, Some(FetchMode::Full));
        }
        assert!(
            fake.calls()
                .iter()
                .all(|call| !call.query.contains_key("deleted_since")),
            "a first sync fetches whole"
        );
        let mut befores = Vec::new();
        for (name, ..) in data_types {
            befores.push(list(&app, company_id, name).await);
        }
        let calls_before = fake.calls().len();

        for (name, _, data_type, _) in data_types {
            let operations = sync(&app, company_id, data_type).await;
            let operation = latest(&operations, name);
            assert_eq!(operation.status, PullStatus::Complete, "{name}");
            assert_eq!(operation.fetch_mode, Some(FetchMode::Incremental), "{name}");
        }
        let calls = fake.calls()[calls_before..].to_vec();

        for ((name, id_field, _, deleted), before) in data_types.into_iter().zip(&befores) {
            let after = list(&app, company_id, name).await;
            assert_eq!(after.len(), before.len(), "{name}: none added, none left");
            for record in &after {
                if record[id_field] == deleted {
                    assert_eq!(record["isDeleted"], true, "{name}: {record}");
                } else {
                    assert!(before.contains(record), "{name}: kept as it was: {record}");
                }
            }
            assert!(
                after.iter().any(|record| record[id_field] == deleted),
                "{name}: {deleted} still listed, flagged"
            );
        }

        // The deletions are asked for after the changes, from the same
        // time: Sage's `Date` on the first fetch less five minutes, RFC 3339
        // UTC; every page of them, for the business.
        let deleted: Vec<(&str, &str, &str)> = calls
            .iter()
            .filter_map(|call| {
                Some((
                    call.path.as_str(),
                    call.query.get("deleted_since")?.as_str(),
                    call.query.get("page")?.as_str(),
                ))
            })
            .collect();
        assert_eq!(
            deleted,
            [
                ("/sales_invoices", "2026-11-27T08:55:00Z", "1"),
                ("/sales_invoices", "2026-11-27T08:55:00Z", "2"),
                ("/contacts", "2026-11-27T08:55:00Z", "1"),
                ("/contacts", "2026-11-27T08:55:00Z", "1"),
                ("/products", "2026-11-27T08:55:00Z", "1"),
                ("/services", "2026-11-27T08:55:00Z", "1"),
            ]
        );
        for path in ["/sales_invoices", "/contacts", "/services"] {
            let at = |filter: &str| {
                calls
                    .iter()
                    .position(|call| call.path == path && call.query.contains_key(filter))
                    .unwrap_or_else(|| panic!("{path} asked with {filter}"))
            };
            assert!(
                at("updated_or_created_since") < at("deleted_since"),
                "{path}"
            );
        }
        assert!(calls.iter().all(|call| {
            call.headers.get("x-business").map(String::as_str) == Some(BUSINESS)
                && !(call.query.contains_key("deleted_since")
                    && call.query.contains_key("updated_or_created_since"))
        }));
    }
}
