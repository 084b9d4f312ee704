//! FreshBooks: invoices (with lines) and clients over several pages, every
//! `v3_status` and a deleted invoice, line taxes as percentages, refresh
//! with the client in the form body and a single-use rotating refresh token,
//! `invalid_grant`, 429, 5xx, garbage, an unknown account, and verification
//! through the identity endpoint's business memberships. Fixtures follow
//! the shapes of https://www.freshbooks.com/api/invoices,
//! https://www.freshbooks.com/api/clients and
//! https://www.freshbooks.com/api/me_endpoint as the official SDK reads them
//! (see `src/platforms/freshbooks/NOTES.md`).
//!
//! The scenarios every platform shares (`super::scenarios`) run from its
//! `CASE`; the tests here are its own.

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
use crate::helpers::{TestApp, backends, json};

const ACCOUNT: &str = "zDmNq";
const ACCESS: &str = "freshbooks-access-token-0001";
const REFRESH: &str = "freshbooks-refresh-token-0001";
/// The `business_uuid` of `ACCOUNT`'s business in `users-me.json`.
const BUSINESS_UUID: &str = "6a8a4b3e-1f0e-4b2f-9c3d-5e6f7a8b9c0d";
/// The chart of accounts report of that business.
fn chart_path() -> String {
    format!("/accounting/businesses/{BUSINESS_UUID}/reports/chart_of_accounts")
}

mod accounts;
mod credits;
mod ledger;

/// Serves the FreshBooks fixtures: three pages of invoices, two of
/// clients, the identity, the ledger's lists ([`ledger_list`]), the
/// business's chart of accounts report (only with the
/// `use_ledger_entries=true` FreshBooks requires); another account's lists
/// are a 404.
fn router() -> super::fake::Router {
    Arc::new(|call: &Call| {
        if call.path == "/auth/api/v1/users/me" {
            return Answer::json(200, fixture("freshbooks/fixtures/users-me.json"));
        }
        if call.path == chart_path()
            && call.query.get("use_ledger_entries").map(String::as_str) == Some("true")
        {
            return Answer::json(
                200,
                fixture("freshbooks/fixtures/ledger/chart_of_accounts.json"),
            );
        }
        let page = call
            .query
            .get("page")
            .cloned()
            .unwrap_or_else(|| "1".to_owned());
        let invoices = format!("/accounting/account/{ACCOUNT}/invoices/invoices");
        let clients = format!("/accounting/account/{ACCOUNT}/users/clients");
        if call.path == invoices {
            Answer::json(
                200,
                fixture(&format!("freshbooks/fixtures/invoices-{page}.json")),
            )
        } else if call.path == clients {
            Answer::json(
                200,
                fixture(&format!("freshbooks/fixtures/clients-{page}.json")),
            )
        } else {
            ledger_list(&call.path, &page)
                .unwrap_or_else(|| Answer::json(404, fixture("freshbooks/fixtures/not-found.json")))
        }
    })
}

/// A page of one of the account's ledger lists (`…/bills/bills` serves
/// `fixtures/ledger/bills-{page}.json`), when there is such a fixture.
fn ledger_list(path: &str, page: &str) -> Option<Answer> {
    let list = path
        .strip_prefix(&format!("/accounting/account/{ACCOUNT}/"))?
        .split('/')
        .nth(1)?;
    let name = format!("freshbooks/fixtures/ledger/{list}-{page}.json");
    std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/api/platforms")
        .join(&name)
        .exists()
        .then(|| Answer::json(200, fixture(&name)))
}

pub(crate) async fn fake() -> Fake {
    let fake = Fake::start(
        "freshbooks",
        Scheme::Bearer,
        ACCESS,
        REFRESH,
        fixture("freshbooks/fixtures/unauthorized.json"),
        router(),
    )
    .await;
    // FreshBooks takes the client credentials in the form body.
    fake.with(|inner| inner.client_in_body = true);
    fake
}

fn body(account_id: &str, expires_in: i64) -> Value {
    json!({"accountId": account_id, "businessId": 77128, "accessToken": ACCESS, "refreshToken": REFRESH, "expiresIn": expires_in})
}

/// A company with an authorized FreshBooks connection.
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

/// FreshBooks in the shared scenarios: its refresh tokens are single-use.
static CASE: Case = Case {
    key: "freshbooks",
    name: "FreshBooks",
    fake: || Box::pin(fake()),
    page_size: None,
    authorization: |expires_in| body(ACCOUNT, expires_in),
    access: ACCESS,
    refresh: REFRESH,
    // A 12-hour token.
    lasting: 43_200,
    kept: &["accountId"],
    sync: Synced {
        data_type: "invoices",
        records: 18,
        calls: 3,
    },
    syncs: &[
        "invoices",
        "customers",
        "suppliers",
        "bills",
        "billPayments",
        "payments",
        "creditNotes",
        "taxRates",
        "items",
        "companyInfo",
        "accounts",
    ],
    errors: Errors {
        rate_limited: "{}",
        rate_limit_headers: &[],
        rate_limited_says: "",
        server_error: "{}",
        unavailable: (502, "<html>Bad Gateway</html>"),
        unavailable_says: "FreshBooks answered 502 Bad Gateway",
        refused: Refused::Scope {
            status: 403,
            body: r#"{"error":"insufficient_scope","error_description":"The access token does not have the user:billing:read scope."}"#,
            says: "FreshBooks answered 403 Forbidden: The access token does not have the user:billing:read scope.",
        },
    },
    pages: Pages {
        prelude: |_| Vec::new(),
        first: |_| Answer::json(200, fixture("freshbooks/fixtures/invoices-1.json")),
        cut: Cut::SecondPage,
        truncated: r#"{"response": {"result": {"invoices": [{"id": 9, "amount": {"amount": "12.5"#,
        truncated_says: "",
        records_at: "/response/result/invoices",
        id_at: "/id",
        field: "/create_date",
    },
    refresh_with: Some(Refresh {
        invalid_grant_says: &["FreshBooks"],
        ..Refresh::ROTATING
    }),
    unrefreshable: None,
    verification: Verification {
        rejected_says: &["invalid or has expired"],
        // A working token whose user is not a member of this account.
        another_account: Some(Another {
            authorization: || body("zzz999", 43_200),
            says: &["not a member of account zzz999"],
        }),
        verified_by: |calls| {
            calls
                .last()
                .is_some_and(|call| call.path == "/auth/api/v1/users/me")
        },
    },
    unknown_account: Some(Another {
        authorization: || body("nope42", 43_200),
        says: &["FreshBooks answered 404 Not Found: The account could not be found."],
    }),
};

platform_scenarios!(CASE, refreshes, refreshes_before_expiry, unknown_account);

/// The FreshBooks fake, but a page of payments asked with
/// `search[updated_min]` answers what changed since (one payment changed,
/// one new), on one page.
async fn fake_with_changes() -> Fake {
    let whole = router();
    let fake = Fake::start(
        "freshbooks",
        Scheme::Bearer,
        ACCESS,
        REFRESH,
        fixture("freshbooks/fixtures/unauthorized.json"),
        Arc::new(move |call: &Call| {
            let changes = call.query.contains_key("search[updated_min]");
            if changes && call.path == format!("/accounting/account/{ACCOUNT}/payments/payments") {
                Answer::json(
                    200,
                    fixture("freshbooks/fixtures/ledger/payments-changed.json"),
                )
            } else {
                whole(call)
            }
        }),
    )
    .await;
    fake.with(|inner| inner.client_in_body = true);
    fake
}

/// FreshBooks asked for the payments that changed, in the shared scenario
/// (`scenarios::changes`): the day of the platform's time less a day's
/// overlap, five hours behind UTC.
static CHANGES: Changed = Changed {
    data_type: "payments",
    fake: || Box::pin(fake_with_changes()),
    filter: |call| call.query.get("search[updated_min]").cloned(),
    since: "2026-11-26",
    calls: 1,
    changed: 1,
    added: 1,
    quiet: |_| {
        Answer::json(
            200,
            r#"{"response":{"result":{"payments":[],"page":1,"pages":0,"per_page":100,"total":0}}}"#,
        )
    },
    quiet_calls: 1,
};

changes_scenario!(CASE, CHANGES);

#[tokio::test]
async fn freshbooks_invoices_and_clients_sync_over_every_page_with_every_status() {
    for backend in backends() {
        let fake = fake().await;
        let app = TestApp::spawn_with(backend, options_for(&fake, None, 2)).await;
        let (company_id, _) = connected(&app, 43_200).await;
        let operations = sync(&app, company_id, QueueDataTypeDataType::Invoices).await;
        assert_eq!(latest(&operations, "invoices").status, PullStatus::Complete);
        let operations = sync(&app, company_id, QueueDataTypeDataType::Customers).await;
        assert_eq!(
            latest(&operations, "customers").status,
            PullStatus::Complete
        );

        let invoices = invoices(&app, company_id).await;
        assert_eq!(invoices.len(), 18, "{invoices:#?}");
        // Every documented v3_status, and a deleted invoice.
        for (number, status) in [
            ("0000001", "Draft"),         // created
            ("0000002", "Draft"),         // draft
            ("0000003", "Submitted"),     // sent
            ("0000004", "Submitted"),     // viewed
            ("0000005", "PartiallyPaid"), // overdue, part paid
            ("0000006", "PartiallyPaid"), // partial
            ("0000007", "Paid"),          // paid
            ("0000008", "Paid"),          // autopaid
            ("0000009", "Paid"),          // success
            ("0000010", "Submitted"),     // failed
            ("0000011", "Submitted"),     // retry
            ("0000012", "Submitted"),     // disputed
            ("0000013", "Paid"),          // resolved, nothing outstanding
            ("0000014", "Submitted"),     // declined
            ("0000015", "Submitted"),     // pending
            ("0000016", "PartiallyPaid"), // deposit-partial
            ("0000017", "PartiallyPaid"), // deposit-paid
            ("0000018", "Void"),          // sent, then deleted
        ] {
            assert_eq!(by_number(&invoices, number)["status"], status, "{number}");
        }
        let sent = by_number(&invoices, "0000003");
        assert_eq!(sent["invoiceId"], "500003");
        assert_eq!(sent["totalAmount"], "1234.56");
        assert_eq!(sent["subTotal"], "1104.56");
        assert_eq!(sent["totalTaxAmount"], "130.00");
        assert_eq!(sent["amountDue"], "1234.56");
        assert_eq!(sent["issueDate"], "2026-10-03");
        assert_eq!(sent["dueDate"], "2026-11-03");
        assert_eq!(sent["currency"], "CAD");
        assert_eq!(sent["note"], "Thank you for your business");
        assert_eq!(sent["customerRef"]["id"], "301");
        assert_eq!(sent["customerRef"]["companyName"], "Maple Leaf Foods");
        // 14:05 in Toronto in October (EDT) is 18:05 UTC.
        assert_eq!(sent["sourceModifiedDate"], "2026-10-03T18:05:00.000000Z");
        let lines = sent["lineItems"].as_array().expect("lines");
        assert_eq!(lines.len(), 2);
        assert_eq!(lines[0]["description"], "Web design: Home page");
        assert_eq!(lines[0]["unitAmount"], "1000.00");
        assert_eq!(lines[0]["quantity"], "1");
        assert_eq!(lines[0]["subTotal"], "1000.00");
        assert_eq!(lines[0]["taxAmount"], "130.00");
        assert_eq!(lines[0]["totalAmount"], "1130.00");
        assert_eq!(lines[1]["quantity"], "2");
        assert_eq!(lines[1]["unitAmount"], "52.28");
        assert_eq!(lines[1]["taxAmount"], "0.00");
        // GST 5 %, then QST 9.975 % compounded on top.
        let compounded = by_number(&invoices, "0000004");
        assert_eq!(compounded["customerRef"]["companyName"], "Jean Bouchard");
        assert_eq!(compounded["lineItems"][0]["taxAmount"], "15.47");
        assert_eq!(compounded["totalTaxAmount"], "15.47");
        assert_eq!(compounded["subTotal"], "100.00");
        // A discount lowers the subtotal.
        let discounted = by_number(&invoices, "0000002");
        assert_eq!(discounted["subTotal"], "90.00");
        assert_eq!(discounted["totalTaxAmount"], "0.00");
        let part_paid = by_number(&invoices, "0000005");
        assert_eq!(part_paid["amountDue"], "70.00");
        assert_eq!(part_paid["paidOnDate"], Value::Null);
        let paid = by_number(&invoices, "0000007");
        assert_eq!(paid["paidOnDate"], "2026-10-20");
        assert_eq!(paid["amountDue"], "0.00");

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
        assert_eq!(
            names,
            ["Closed Account Inc", "Jean Bouchard", "Maple Leaf Foods"]
        );
        assert_eq!(results[0]["status"], "Archived");
        assert_eq!(results[1]["customerId"], "302");
        assert_eq!(results[1]["phone"], "514-555-0199");
        // 23:30 on 1 July in Toronto is 03:30 UTC the next day.
        assert_eq!(
            results[1]["sourceModifiedDate"],
            "2026-07-02T03:30:00.000000Z"
        );
        assert_eq!(results[2]["emailAddress"], "ann@mapleleaf.example");
        assert_eq!(results[2]["phone"], "416-555-0100");
        assert_eq!(results[2]["defaultCurrency"], "CAD");
        assert_eq!(results[2]["status"], "Active");
        // January: EST, UTC−5.
        assert_eq!(
            results[2]["sourceModifiedDate"],
            "2026-01-15T15:00:00.000000Z"
        );

        let calls = fake.calls();
        assert!(calls.iter().all(|call| call.token == ACCESS));
        let invoice_pages: Vec<&Call> = calls
            .iter()
            .filter(|call| call.path.ends_with("/invoices/invoices"))
            .collect();
        assert_eq!(invoice_pages.len(), 3);
        assert!(invoice_pages.iter().all(|call| {
            call.query.get("include[]").map(String::as_str) == Some("lines")
                && call.query.get("per_page").map(String::as_str) == Some("100")
        }));
        assert!(
            calls
                .iter()
                .any(|call| call.path.ends_with("/users/clients")
                    && call.query.get("page").map(String::as_str) == Some("2"))
        );
        assert_eq!(fake.token_calls(), 0, "a 12-hour token is not refreshed");
    }
}

/// FreshBooks' refresh tokens are single-use: after one refresh the old one
/// is spent, and the next refresh uses the new one.
#[tokio::test]
async fn each_freshbooks_refresh_uses_the_refresh_token_of_the_last_one() {
    for backend in backends() {
        let fake = fake().await;
        let app = TestApp::spawn_with(backend, options_for(&fake, None, 1)).await;
        set_oauth_client(&app, "freshbooks").await;
        let (company_id, connection_id) = connected(&app, 43_200).await;
        fake.with(|inner| inner.expire_after = Some(1));
        let operations = sync(&app, company_id, QueueDataTypeDataType::Invoices).await;
        assert_eq!(latest(&operations, "invoices").status, PullStatus::Complete);
        assert_eq!(
            stored(&app, connection_id).await["refreshToken"],
            "rt-rotated-1"
        );
        fake.with(|inner| inner.expire_after = Some(inner.served));
        let operations = sync(&app, company_id, QueueDataTypeDataType::Customers).await;
        assert_eq!(
            latest(&operations, "customers").status,
            PullStatus::Complete
        );
        assert_eq!(fake.token_calls(), 2);
        assert_eq!(
            stored(&app, connection_id).await["refreshToken"],
            "rt-rotated-2"
        );
    }
}

/// Errors in a 200 answer fail the sync with FreshBooks' words, and the
/// previous data stays.
#[tokio::test]
async fn errors_in_a_freshbooks_200_answer_fail_the_sync_with_its_words() {
    for backend in backends() {
        let fake = fake().await;
        let app = TestApp::spawn_with(backend, options_for(&fake, None, 1)).await;
        let (company_id, _) = connected(&app, 43_200).await;
        let operations = sync(&app, company_id, QueueDataTypeDataType::Invoices).await;
        assert_eq!(latest(&operations, "invoices").status, PullStatus::Complete);
        let before = invoices(&app, company_id).await;
        fake.with(|inner| {
            inner.scripted.push_back(Answer::json(
                200,
                "{\"response\": {\"errors\": [{\"errno\": 1012, \"field\": \"page\", \"message\": \"Invalid page.\", \"object\": \"invoice\", \"value\": \"x\"}]}}",
            ));
        });
        let operations = sync(&app, company_id, QueueDataTypeDataType::Invoices).await;
        let operation = latest(&operations, "invoices");
        assert_eq!(operation.status, PullStatus::Failed);
        let message = operation.error_message.unwrap_or_default();
        assert!(message.contains("Invalid page. (errno 1012)"), "{message}");
        assert_eq!(invoices(&app, company_id).await, before);
    }
}

/// Verification accepts the token for either business the user belongs to.
#[tokio::test]
async fn freshbooks_verification_accepts_every_business_the_user_belongs_to() {
    for backend in backends() {
        let fake = fake().await;
        let app = TestApp::spawn_with(backend, options_for(&fake, None, 0)).await;
        let company_id = new_company(&app, "Maple Leaf Foods").await;
        for account in [ACCOUNT, "kQ3pZ"] {
            let connection_id = new_connection(&app, company_id, "freshbooks").await;
            let response = authorize(
                &app,
                company_id,
                connection_id,
                &body(account, 43_200),
                true,
            )
            .await;
            assert_eq!(response.status(), 200);
            assert_eq!(stored(&app, connection_id).await["accountId"], account);
        }
    }
}
