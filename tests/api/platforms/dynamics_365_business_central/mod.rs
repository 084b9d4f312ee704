//! Dynamics 365 Business Central: sales invoices (with their lines) and customers
//! over several OData pages followed by `@odata.nextLink`, every documented invoice
//! status, exact amounts, refresh at the Microsoft identity platform (client
//! credentials in the form body) with a rotated refresh token, `invalid_grant`,
//! 429, 5xx, garbage, a next page off the API host, and verification through
//! `companies({id})`. Fixtures follow the API v2.0 reference (`salesInvoice`,
//! `salesInvoiceLine`, `customer`, `company` resources and the `GET salesInvoices`
//! example response; sources B1–B6 in `src/platforms/dynamics_365_business_central/NOTES.md`).
//!
//! The scenarios every platform shares (`super::scenarios`) run from its
//! `CASE`; the tests here are its own, the accounting lists' in [`ledger`].

mod ledger;

use std::sync::Arc;

use serde_json::{Value, json};
use uuid::Uuid;

use client::types::{PullStatus, QueueDataTypeDataType};

use super::fake::{Answer, Call, Fake, Scheme, fixture};
use super::scenarios::changes::{Changed, changes_scenario};
use super::scenarios::{
    Another, Case, Cut, Errors, Pages, Refresh, Refused, Synced, Verification,
    connected as connected_as, platform_scenarios, records as list,
};
use super::{latest, options_for, sync};
use crate::helpers::{TestApp, backends};

pub const TENANT: &str = "5a2b8f0e-7c4d-4e1a-9b3f-2d6c8e0a1b47";
pub const ENVIRONMENT: &str = "production";
pub const COMPANY: &str = "f03f6225-081c-ec11-bb77-000d3abcd65f";
const ACCESS: &str = "bc-access-token-0001";
const REFRESH: &str = "bc-refresh-token-0001";
const DIR: &str = "dynamics_365_business_central/fixtures";

/// A fixture with its `{{base}}` links pointing at the fake that serves it.
fn linked(name: &str, call: &Call) -> String {
    let host = call.headers.get("host").cloned().unwrap_or_default();
    fixture(&format!("{DIR}/{name}")).replace("{{base}}", &format!("http://{host}"))
}

/// Serves the company, three pages of sales invoices and two of customers,
/// paged by `$skiptoken`; anything else (another tenant, environment or
/// company) is Business Central's 404.
fn router() -> super::fake::Router {
    Arc::new(|call: &Call| {
        let company = format!("/{TENANT}/{ENVIRONMENT}/api/v2.0/companies({COMPANY})");
        let page = call
            .query
            .get("$skiptoken")
            .map(|token| token.trim_start_matches("page").to_owned())
            .unwrap_or_else(|| "1".to_owned());
        if call.path == company {
            return Answer::json(200, linked("company.json", call));
        }
        if call.path == "/environments/v1.2" {
            return Answer::json(200, fixture(&format!("{DIR}/environments.json")));
        }
        if call.path == format!("/{TENANT}/{ENVIRONMENT}/api/v2.0/companies") {
            return Answer::json(200, linked("companies.json", call));
        }
        if call.path == format!("{company}/salesInvoices") {
            return Answer::json(200, linked(&format!("invoices-{page}.json"), call));
        }
        if call.path == format!("{company}/customers") {
            return Answer::json(200, linked(&format!("customers-{page}.json"), call));
        }
        if call.path == format!("{company}/generalLedgerEntries") {
            return ledger::general_ledger_entries(call);
        }
        for entity in [
            "accounts",
            "vendors",
            "purchaseInvoices",
            "salesCreditMemos",
            "items",
            "companyInformation",
        ] {
            if call.path == format!("{company}/{entity}") {
                return Answer::json(200, linked(&format!("{entity}.json"), call));
            }
        }
        Answer::json(404, fixture(&format!("{DIR}/not-found.json")))
    })
}

pub async fn fake() -> Fake {
    let fake = Fake::start(
        "dynamics-365-business-central",
        Scheme::Bearer,
        ACCESS,
        REFRESH,
        fixture(&format!("{DIR}/unauthorized.json")),
        router(),
    )
    .await;
    // The Microsoft identity platform takes the client credentials in the form body.
    fake.with(|inner| inner.client_in_body = true);
    fake
}

fn body(company: &str, expires_in: i64) -> Value {
    json!({
        "tenantId": TENANT, "environmentName": ENVIRONMENT, "companyId": company,
        "accessToken": ACCESS, "refreshToken": REFRESH, "expiresIn": expires_in
    })
}

/// A company with an authorized Business Central connection.
pub(super) async fn connected(app: &TestApp, expires_in: i64) -> (Uuid, Uuid) {
    connected_as(app, &CASE, &(CASE.authorization)(expires_in)).await
}

fn by_number<'a>(invoices: &'a [Value], number: &str) -> &'a Value {
    invoices
        .iter()
        .find(|invoice| invoice["invoiceNumber"] == number)
        .unwrap_or_else(|| panic!("invoice {number} synced"))
}

/// Business Central in the shared scenarios.
static CASE: Case = Case {
    key: "dynamics-365-business-central",
    name: "Dynamics 365 Business Central",
    fake: || Box::pin(fake()),
    page_size: Some(3),
    authorization: |expires_in| body(COMPANY, expires_in),
    access: ACCESS,
    refresh: REFRESH,
    lasting: 3600,
    kept: &["companyId", "tenantId"],
    sync: Synced {
        data_type: "invoices",
        records: 8,
        calls: 3,
    },
    syncs: &[
        "invoices",
        "customers",
        "accounts",
        "suppliers",
        "bills",
        "creditNotes",
        "items",
        "companyInfo",
        "journalEntries",
    ],
    errors: Errors {
        rate_limited: r#"{"error":{"code":"Application_TooManyRequests","message":"Too many requests reached. Actual (6001). Maximum (6000)."}}"#,
        rate_limit_headers: &[],
        rate_limited_says: "",
        server_error: r#"{"error":{"code":"Internal_ServerError","message":"An unexpected error occurred."}}"#,
        unavailable: (
            503,
            r#"{"error":{"code":"Internal_TenantUnavailable","message":"The tenant is not available."}}"#,
        ),
        // The operation quotes its OData error.
        unavailable_says: "Internal_TenantUnavailable: The tenant is not available.",
        refused: Refused::Scope {
            status: 403,
            body: r#"{"error":{"code":"Authorization_RequestDenied","message":"You do not have the following permissions on TableData Sales Invoice Header: Read."}}"#,
            says: "Authorization_RequestDenied: You do not have the following permissions",
        },
    },
    pages: Pages {
        prelude: |_| Vec::new(),
        first: |fake| {
            Answer::json(
                200,
                fixture(&format!("{DIR}/invoices-1.json")).replace("{{base}}", &fake.url()),
            )
        },
        cut: Cut::SecondPage,
        truncated: r#"{"value": [{"id": "x", "totalAmountIncludingTax": 12.5"#,
        truncated_says: "",
        records_at: "/value",
        id_at: "/id",
        field: "/totalAmountIncludingTax",
    },
    refresh_with: Some(Refresh {
        // The Microsoft identity platform refreshes only with a scope.
        grant_extras: &[(
            "scope",
            "https://api.businesscentral.dynamics.com/.default offline_access",
        )],
        invalid_grant: Some(
            r#"{"error":"invalid_grant","error_description":"AADSTS700082: The refresh token has expired due to inactivity.","error_codes":[700082]}"#,
        ),
        invalid_grant_says: &["AADSTS700082"],
        ..Refresh::ROTATING
    }),
    unrefreshable: None,
    verification: Verification {
        rejected_says: &["Authentication_InvalidCredentials"],
        // A working token, but a company it does not reach.
        another_account: Some(Another {
            authorization: || body("11111111-2222-4333-8444-555555555555", 3600),
            says: &["BadRequest_NotFound"],
        }),
        verified_by: |calls| {
            calls.last().is_some_and(|call| {
                call.path == format!("/{TENANT}/{ENVIRONMENT}/api/v2.0/companies({COMPANY})")
            })
        },
    },
    unknown_account: None,
};

platform_scenarios!(CASE, refreshes, refreshes_before_expiry);

#[tokio::test]
async fn business_central_invoices_and_customers_sync_over_every_page_with_every_status() {
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
        assert_eq!(invoices.len(), 8, "{invoices:#?}");
        for (number, status) in [
            ("103001", "Draft"),
            ("103002", "Draft"),
            ("103003", "Submitted"),
            ("103004", "PartiallyPaid"),
            ("103005", "Paid"),
            ("103006", "Void"),
            ("103007", "Void"),
            ("103008", "Unknown"),
        ] {
            assert_eq!(by_number(&invoices, number)["status"], status, "{number}");
        }
        let open = by_number(&invoices, "103003");
        assert_eq!(open["totalAmount"], "1234.56");
        assert_eq!(open["subTotal"], "1028.80");
        assert_eq!(open["totalTaxAmount"], "205.76");
        assert_eq!(open["amountDue"], "1234.56");
        assert_eq!(open["issueDate"], "2026-10-03");
        assert_eq!(open["dueDate"], "2026-11-02");
        assert_eq!(open["currency"], "USD");
        assert_eq!(open["note"], "PO-88121");
        assert_eq!(
            open["customerRef"]["id"],
            "7d5e2a1c-081c-ec11-bb77-000d3abcd65f"
        );
        assert_eq!(open["customerRef"]["companyName"], "Adatum Corporation");
        assert_eq!(open["sourceModifiedDate"], "2026-10-06T09:15:42.337000Z");
        let lines = open["lineItems"].as_array().expect("lines");
        assert_eq!(lines.len(), 2);
        assert_eq!(lines[0]["description"], "ANTWERP Conference Table");
        assert_eq!(lines[0]["quantity"], "2.5");
        assert_eq!(lines[0]["unitAmount"], "411.52");
        assert_eq!(lines[0]["subTotal"], "1028.80");
        assert_eq!(lines[0]["taxAmount"], "205.76");
        assert_eq!(lines[0]["totalAmount"], "1234.56");
        assert_eq!(lines[1]["description"], "Delivered to the Chicago office");
        assert_eq!(lines[1]["totalAmount"], "0.00");
        let part_paid = by_number(&invoices, "103004");
        assert_eq!(part_paid["amountDue"], "72.94");
        assert_eq!(part_paid["totalAmount"], "172.94");
        assert_eq!(part_paid["subTotal"], "164.70");
        assert_eq!(by_number(&invoices, "103005")["amountDue"], "0.00");
        // Four decimals survive exactly.
        assert_eq!(
            by_number(&invoices, "103008")["lineItems"][0]["unitAmount"],
            "12.3456"
        );

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
                ("Adatum Corporation", "Active"),
                ("Relecloud", "Archived"),
                ("School of Fine Art", "Archived"),
                ("Trey Research", "Active"),
            ]
        );
        assert_eq!(customers[0]["emailAddress"], "robert.townes@contoso.com");
        assert_eq!(customers[0]["phone"], "+1 425 555 0100");
        assert_eq!(customers[0]["defaultCurrency"], "USD");
        assert_eq!(customers[3]["emailAddress"], Value::Null);

        let calls = fake.calls();
        assert!(calls.iter().all(|call| call.token == ACCESS));
        let invoice_calls: Vec<&Call> = calls
            .iter()
            .filter(|call| call.path.ends_with("/salesInvoices"))
            .collect();
        assert_eq!(invoice_calls.len(), 3, "one call per page");
        assert_eq!(
            invoice_calls[0].query.get("$expand").map(String::as_str),
            Some("salesInvoiceLines")
        );
        // The next pages are the links Business Central gave, as given.
        assert_eq!(
            invoice_calls[2].query.get("$skiptoken").map(String::as_str),
            Some("page3")
        );
        assert!(invoice_calls.iter().all(|call| {
            call.headers.get("prefer").map(String::as_str) == Some("odata.maxpagesize=3")
        }));
        assert!(calls.iter().any(|call| call.path.ends_with("/customers")
            && call.query.get("$skiptoken").map(String::as_str) == Some("page2")));
        assert_eq!(
            fake.token_calls(),
            0,
            "a token valid for an hour is not refreshed"
        );
    }
}

/// A next page on another host is not followed with the token: the sync
/// fails and the previous data stays.
#[tokio::test]
async fn a_next_link_to_another_host_is_not_followed_and_keeps_the_previous_data() {
    for backend in backends() {
        let fake = fake().await;
        let app = TestApp::spawn_with(backend, options_for(&fake, Some(3), 1)).await;
        let (company_id, _) = connected(&app, 3600).await;
        let operations = sync(&app, company_id, QueueDataTypeDataType::Invoices).await;
        assert_eq!(latest(&operations, "invoices").status, PullStatus::Complete);
        let before = list(&app, company_id, "invoices").await;
        let foreign = fixture(&format!("{DIR}/invoices-1.json"))
            .replace("{{base}}", "https://elsewhere.example");
        let calls = fake.calls().len();
        fake.with(|inner| inner.scripted.push_back(Answer::json(200, foreign)));
        let operations = sync(&app, company_id, QueueDataTypeDataType::Invoices).await;
        let operation = latest(&operations, "invoices");
        assert_eq!(operation.status, PullStatus::Failed);
        assert!(
            operation
                .error_message
                .unwrap_or_default()
                .contains("outside"),
        );
        assert_eq!(fake.calls().len(), calls + 1);
        assert_eq!(list(&app, company_id, "invoices").await, before);
    }
}

/// Business Central as it answers `$filter=lastModifiedDateTime gt …`: the
/// sales invoices modified since (103003 paid since the first sync, 103009
/// new), on one page; every answer dated `PLATFORM_DATE` by the scenario.
async fn fake_with_changes() -> Fake {
    let whole = router();
    let fake = Fake::start(
        "dynamics-365-business-central",
        Scheme::Bearer,
        ACCESS,
        REFRESH,
        fixture(&format!("{DIR}/unauthorized.json")),
        Arc::new(move |call: &Call| {
            let invoices =
                format!("/{TENANT}/{ENVIRONMENT}/api/v2.0/companies({COMPANY})/salesInvoices");
            let changes = call.query.contains_key("$filter");
            if changes && call.path == invoices {
                Answer::json(200, linked("invoices-changed.json", call))
            } else {
                whole(call)
            }
        }),
    )
    .await;
    fake.with(|inner| inner.client_in_body = true);
    fake
}

/// Business Central asked for what changed, in the shared scenario (`scenarios::changes`).
static CHANGES: Changed = Changed {
    data_type: "invoices",
    fake: || Box::pin(fake_with_changes()),
    filter: |call| {
        call.query
            .get("$filter")
            .filter(|filter| filter.contains("lastModifiedDateTime"))
            .cloned()
    },
    since: "lastModifiedDateTime gt 2026-11-27T08:55:00Z",
    calls: 1,
    changed: 1,
    added: 1,
    quiet: |_| Answer::json(200, r#"{"value":[]}"#),
    quiet_calls: 1,
};

changes_scenario!(CASE, CHANGES);
