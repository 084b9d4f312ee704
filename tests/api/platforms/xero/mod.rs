//! Xero: invoices and contacts over several pages with every status, and
//! its case of the shared scenarios (`scenarios`): a 401 mid-sync refreshed
//! with a rotated refresh token, `invalid_grant`, 429, 5xx, garbage, a
//! record it cannot read, an unknown tenant, verification at migration.
//! Its own: a refresh without an OAuth client, a token endpoint that fails
//! for a while, and one refresh for concurrent syncs.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use serde_json::{Value, json};
use uuid::Uuid;

use client::types::{ConnectionStatus, PullStatus, QueueDataTypeDataType};
use tributary::data::money::Money;

use super::fake::{Answer, Call, Fake, Scheme, fixture};
use super::scenarios::changes::{Changed, changes_scenario};
use super::scenarios::{
    Another, Case, Cut, Errors, Pages, Refresh, Refused, Synced, Verification,
    connected as connected_as, platform_scenarios, records,
};
use super::{latest, options_for, set_oauth_client, stored, sync};
use crate::helpers::{TestApp, backends, json};
use crate::webhooks::receiver::Receiver;

const TENANT: &str = "70784a63-d24b-46a9-a4db-0e70a274b056";
const ACCESS: &str = "xero-access-token-0001";
const REFRESH: &str = "xero-refresh-token-0001";
/// A tenant the token is not connected to.
const OTHER_TENANT: &str = "11111111-2222-4333-8444-555555555555";

/// Xero in the shared scenarios.
pub(crate) static CASE: Case = Case {
    key: "xero",
    name: "Xero",
    fake: || Box::pin(fake()),
    page_size: None,
    authorization: |expires_in| body(TENANT, expires_in),
    access: ACCESS,
    refresh: REFRESH,
    lasting: 1800,
    kept: &["tenantId"],
    sync: Synced {
        data_type: "invoices",
        // Seven sales invoices over two pages; the bill (ACCPAY) is not one.
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
        rate_limited: "{\"Title\":\"Too Many Requests\",\"Status\":429,\"Detail\":\"daily limit reached\"}",
        rate_limit_headers: &[],
        rate_limited_says: "daily limit reached",
        server_error: "{\"Title\":\"Internal Server Error\",\"Status\":500}",
        unavailable: (
            500,
            "{\"Title\":\"Internal Server Error\",\"Status\":500,\"Detail\":\"Xero is having a bad day\"}",
        ),
        unavailable_says: "Xero answered 500 Internal Server Error: Xero is having a bad day",
        refused: Refused::Scope {
            status: 401,
            body: r#"{"Type":null,"Title":"Unauthorized","Status":401,"Detail":"AuthorizationUnsuccessful","Instance":"2f3c568c-8d99-40c3-af5e-ba06f76fb23d","Extensions":{}}"#,
            says: "Xero answered 401 Unauthorized: AuthorizationUnsuccessful",
        },
    },
    pages: Pages {
        prelude: |_| Vec::new(),
        first: |_| Answer::json(200, fixture("xero/fixtures/invoices-1.json")),
        cut: Cut::SecondPage,
        truncated: "{\"Invoices\": [{\"InvoiceID\": \"x\", \"Total\": 12.5",
        truncated_says: "",
        records_at: "/Invoices",
        id_at: "/InvoiceID",
        field: "/Total",
    },
    refresh_with: Some(Refresh {
        invalid_grant_says: &["already used"],
        ..Refresh::ROTATING
    }),
    unrefreshable: None,
    verification: Verification {
        rejected_says: &["TokenExpired"],
        another_account: Some(Another {
            authorization: || body(OTHER_TENANT, 1800),
            says: &["not connected to tenant"],
        }),
        verified_by: |calls| calls.last().is_some_and(|call| call.path == "/connections"),
    },
    unknown_account: Some(Another {
        authorization: || body(OTHER_TENANT, 1800),
        says: &[
            "Xero answered 404 Not Found: The organisation for this tenant id could not be found",
        ],
    }),
};

platform_scenarios!(CASE, refreshes, refreshes_before_expiry, unknown_account);

/// Serves the Xero fixtures: two pages each of invoices and contacts, the
/// bills (what `where=Type=="ACCPAY"` finds), a page of payments of every
/// kind, the chart of accounts (one answer, as Xero's `GET /Accounts` has no
/// paging), and `/connections`; an unknown tenant is a 404.
pub(crate) fn router() -> super::fake::Router {
    Arc::new(|call: &Call| {
        if call.path == "/connections" {
            return Answer::json(200, fixture("xero/fixtures/connections.json"));
        }
        if call.headers.get("xero-tenant-id").map(String::as_str) != Some(TENANT) {
            return Answer::json(404, fixture("xero/fixtures/not-found.json"));
        }
        let page = call
            .query
            .get("page")
            .cloned()
            .unwrap_or_else(|| "1".to_owned());
        match call.path.as_str() {
            "/api.xro/2.0/Invoices"
                if call.query.get("where").map(String::as_str) == Some("Type==\"ACCPAY\"") =>
            {
                Answer::json(200, fixture("xero/fixtures/bills.json"))
            }
            "/api.xro/2.0/Invoices" => {
                Answer::json(200, fixture(&format!("xero/fixtures/invoices-{page}.json")))
            }
            "/api.xro/2.0/Payments" => Answer::json(200, fixture("xero/fixtures/payments.json")),
            "/api.xro/2.0/Items" => Answer::json(200, fixture("xero/fixtures/items.json")),
            "/api.xro/2.0/Journals" => match call.query.get("offset").map(String::as_str) {
                Some("0") => Answer::json(200, fixture("xero/fixtures/journals.json")),
                Some("2") => Answer::json(200, fixture("xero/fixtures/journals-after-2.json")),
                _ => Answer::json(200, "{\"Journals\": []}".to_owned()),
            },
            "/api.xro/2.0/Organisation" => {
                Answer::json(200, fixture("xero/fixtures/organisation.json"))
            }
            "/api.xro/2.0/CreditNotes"
                if call.query.get("where").map(String::as_str)
                    == Some("Type==\"ACCRECCREDIT\"") =>
            {
                Answer::json(200, fixture("xero/fixtures/credit-notes.json"))
            }
            "/api.xro/2.0/Contacts"
                if call.query.get("where").map(String::as_str) == Some("IsSupplier==true") =>
            {
                Answer::json(200, suppliers_only())
            }
            "/api.xro/2.0/Contacts" => {
                Answer::json(200, fixture(&format!("xero/fixtures/contacts-{page}.json")))
            }
            "/api.xro/2.0/Accounts" => Answer::json(200, fixture("xero/fixtures/accounts.json")),
            "/api.xro/2.0/TaxRates" => Answer::json(200, fixture("xero/fixtures/tax-rates.json")),
            _ => Answer::json(404, fixture("xero/fixtures/not-found.json")),
        }
    })
}

/// What Xero answers `where=IsSupplier==true`: the fixtures' contacts
/// that are suppliers, on one page.
fn suppliers_only() -> String {
    let suppliers: Vec<Value> = (1..=2)
        .flat_map(|page| {
            let answer: Value =
                serde_json::from_str(&fixture(&format!("xero/fixtures/contacts-{page}.json")))
                    .expect("fixture JSON");
            answer["Contacts"].as_array().cloned().unwrap_or_default()
        })
        .filter(|contact| contact["IsSupplier"] == true)
        .collect();
    json!({
        "Id": "c9c6e1f3-0000-4000-8000-000000000008",
        "Status": "OK",
        "ProviderName": "tributary tests",
        "DateTimeUTC": "/Date(1795309202000+0000)/",
        "pagination": {"page": 1, "pageSize": 100, "pageCount": 1, "itemCount": suppliers.len()},
        "Contacts": suppliers,
    })
    .to_string()
}

pub(crate) async fn fake() -> Fake {
    Fake::start(
        "xero",
        Scheme::Bearer,
        ACCESS,
        REFRESH,
        fixture("xero/fixtures/unauthorized.json"),
        router(),
    )
    .await
}

fn body(tenant: &str, expires_in: i64) -> Value {
    json!({"tenantId": tenant, "accessToken": ACCESS, "refreshToken": REFRESH, "expiresIn": expires_in})
}

/// A company with an authorized Xero connection.
pub(crate) async fn connected(app: &TestApp, expires_in: i64) -> (Uuid, Uuid) {
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

#[tokio::test]
async fn xero_invoices_and_contacts_sync_over_every_page_with_every_status() {
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

        let invoices = invoices(&app, company_id).await;
        // Seven sales invoices over two pages; the bill (ACCPAY) is not one.
        assert_eq!(invoices.len(), 7, "{invoices:#?}");
        for (number, status) in [
            ("INV-0001", "Draft"),
            ("INV-0002", "Draft"),
            ("INV-0003", "Submitted"),
            ("INV-0004", "PartiallyPaid"),
            ("INV-0005", "Paid"),
            ("INV-0006", "Void"),
            ("INV-0007", "Void"),
        ] {
            assert_eq!(by_number(&invoices, number)["status"], status, "{number}");
        }
        let authorised = by_number(&invoices, "INV-0003");
        assert_eq!(authorised["totalAmount"], "1127.81");
        assert_eq!(authorised["subTotal"], "939.84");
        assert_eq!(authorised["totalTaxAmount"], "187.97");
        assert_eq!(authorised["amountDue"], "1127.81");
        assert_eq!(authorised["issueDate"], "2026-10-03");
        assert_eq!(authorised["currency"], "GBP");
        assert_eq!(authorised["customerRef"]["companyName"], "Acme Trading Ltd");
        assert_eq!(authorised["lineItems"][0]["totalAmount"], "1127.81");
        let paid = by_number(&invoices, "INV-0005");
        assert_eq!(paid["paidOnDate"], "2026-10-20");
        assert_eq!(paid["amountDue"], "0.00");

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
            .filter_map(|customer| customer["customerName"].as_str())
            .collect();
        assert_eq!(
            names,
            ["Acme Trading Ltd", "Brightside Cafe", "Old Customer plc"]
        );
        let archived = customers["results"]
            .as_array()
            .and_then(|all| all.iter().find(|c| c["customerName"] == "Old Customer plc"))
            .expect("archived customer");
        assert_eq!(archived["status"], "Archived");

        let calls = fake.calls();
        assert!(calls.iter().all(|call| call.token == ACCESS));
        assert!(calls.iter().any(|call| call.path == "/api.xro/2.0/Invoices"
            && call.query.get("page").map(String::as_str) == Some("2")));
        assert!(calls.iter().any(|call| call.path == "/api.xro/2.0/Contacts"
            && call.query.get("page").map(String::as_str) == Some("2")));
        assert_eq!(
            fake.token_calls(),
            0,
            "a token valid for 30 minutes is not refreshed"
        );
    }
}

/// The chart of accounts is one call (Xero's `GET /Accounts` has no
/// paging), whole every time: each class classified, a `BANK` account a
/// bank account (a card account too, a liability), archived accounts kept,
/// a `DELETED` one left out; ordered by code, an account without one last;
/// filterable by classification. Xero gives no balance with its accounts.
#[tokio::test]
async fn the_chart_of_accounts_syncs_in_one_call_with_each_class() {
    for backend in backends() {
        let fake = fake().await;
        let app = TestApp::spawn_with(backend, options_for(&fake, None, 1)).await;
        let (company_id, _) = connected(&app, CASE.lasting).await;
        let operations = sync(&app, company_id, QueueDataTypeDataType::Accounts).await;
        assert_eq!(latest(&operations, "accounts").status, PullStatus::Complete);

        let accounts = records(&app, company_id, "accounts").await;
        let listed: Vec<(&str, &str, &str)> = accounts
            .iter()
            .map(|account| {
                (
                    account["nominalCode"].as_str().unwrap_or("-"),
                    account["classification"].as_str().unwrap_or_default(),
                    account["status"].as_str().unwrap_or_default(),
                )
            })
            .collect();
        assert_eq!(
            listed,
            [
                ("091", "Asset", "Active"),
                ("200", "Income", "Active"),
                ("420", "Expense", "Archived"),
                ("429", "Expense", "Active"),
                ("610", "Asset", "Active"),
                ("800", "Liability", "Active"),
                ("960", "Equity", "Active"),
                ("-", "Liability", "Active"),
            ],
            "{accounts:#?}"
        );
        let savings = &accounts[0];
        assert_eq!(savings["accountId"], "ebd06280-af70-4bed-97c6-7451a454ad85");
        assert_eq!(savings["accountName"], "Business Savings Account");
        assert_eq!(savings["accountType"], "BANK");
        assert_eq!(savings["isBankAccount"], true);
        assert_eq!(savings["currency"], "NZD");
        assert_eq!(savings["currentBalance"], Value::Null);
        assert_eq!(savings["sourceModifiedDate"], "2019-11-14T18:10:38.314000Z");
        assert_eq!(
            accounts[1]["description"],
            "Income from any normal business activity"
        );
        assert_eq!(accounts[1]["isBankAccount"], false);
        assert_eq!(accounts[7]["accountName"], "Company Credit Card");
        assert_eq!(accounts[7]["isBankAccount"], true);

        let expenses = json(
            app.get(&format!(
                "/companies/{company_id}/data/accounts?classification=expense"
            ))
            .await,
        )
        .await;
        assert_eq!(expenses["totalResults"], 2, "{expenses}");

        let calls: Vec<Call> = fake
            .calls()
            .into_iter()
            .filter(|call| call.path == "/api.xro/2.0/Accounts")
            .collect();
        assert_eq!(calls.len(), 1, "one call for the whole chart");
        assert_eq!(
            calls[0].headers.get("xero-tenant-id").map(String::as_str),
            Some(TENANT)
        );
        assert!(calls[0].query.is_empty(), "no paging: {:?}", calls[0].query);
    }
}

/// Suppliers are the contacts Xero marks `IsSupplier`, asked for with
/// `where=IsSupplier==true`, archived ones included; a contact that is only
/// a supplier is not a customer.
#[tokio::test]
async fn suppliers_are_the_contacts_xero_marks_as_suppliers() {
    for backend in backends() {
        let fake = fake().await;
        let app = TestApp::spawn_with(backend, options_for(&fake, None, 1)).await;
        let (company_id, _) = connected(&app, CASE.lasting).await;
        let operations = sync(&app, company_id, QueueDataTypeDataType::Suppliers).await;
        assert_eq!(
            latest(&operations, "suppliers").status,
            PullStatus::Complete
        );

        let suppliers = records(&app, company_id, "suppliers").await;
        let listed: Vec<(&str, &str)> = suppliers
            .iter()
            .map(|supplier| {
                (
                    supplier["supplierName"].as_str().unwrap_or_default(),
                    supplier["status"].as_str().unwrap_or_default(),
                )
            })
            .collect();
        assert_eq!(
            listed,
            [
                ("Old Freight Ltd", "Archived"),
                ("Paper Supplies Co", "Active")
            ]
        );
        let freight = &suppliers[0];
        assert_eq!(
            freight["supplierId"],
            "3e6a5c2b-0000-4000-8000-000000000005"
        );
        assert_eq!(freight["emailAddress"], "accounts@oldfreight.example");
        assert_eq!(freight["phone"], "44 20 7946 0958");
        assert_eq!(freight["defaultCurrency"], "EUR");
        assert_eq!(
            suppliers[1]["emailAddress"],
            Value::Null,
            "an empty e-mail is none"
        );

        let asked: Vec<Call> = fake
            .calls()
            .into_iter()
            .filter(|call| call.path == "/api.xro/2.0/Contacts")
            .collect();
        assert_eq!(asked.len(), 1, "one page of suppliers");
        assert_eq!(
            asked[0].query.get("where").map(String::as_str),
            Some("IsSupplier==true")
        );
        assert_eq!(
            asked[0].query.get("includeArchived").map(String::as_str),
            Some("true")
        );

        // Customers stay the contacts that are not only suppliers.
        sync(&app, company_id, QueueDataTypeDataType::Customers).await;
        let customers = records(&app, company_id, "customers").await;
        assert!(
            customers
                .iter()
                .all(|customer| customer["customerName"] != "Old Freight Ltd"
                    && customer["customerName"] != "Paper Supplies Co"),
            "{customers:#?}"
        );
    }
}

/// Tax rates are one call (no paging); each keeps Xero's `TaxType` as its
/// id and code, its effective rate and components exactly (a compound
/// component flagged); archived ones are kept, a deleted one left out.
#[tokio::test]
async fn tax_rates_sync_in_one_call_with_their_components() {
    for backend in backends() {
        let fake = fake().await;
        let app = TestApp::spawn_with(backend, options_for(&fake, None, 1)).await;
        let (company_id, _) = connected(&app, CASE.lasting).await;
        let operations = sync(&app, company_id, QueueDataTypeDataType::TaxRates).await;
        assert_eq!(latest(&operations, "taxRates").status, PullStatus::Complete);

        let rates = records(&app, company_id, "taxRates").await;
        let listed: Vec<(&str, &str, &str)> = rates
            .iter()
            .map(|rate| {
                (
                    rate["taxRateId"].as_str().unwrap_or_default(),
                    rate["effectiveTaxRate"].as_str().unwrap_or_default(),
                    rate["status"].as_str().unwrap_or_default(),
                )
            })
            .collect();
        assert_eq!(
            listed,
            [
                ("INPUT2", "15", "Active"),
                ("OUTPUT2", "15", "Active"),
                ("TAX001", "12.5", "Archived"),
                ("TAX002", "12.875", "Active"),
            ],
            "by name: {rates:#?}"
        );
        let compound = &rates[3];
        assert_eq!(compound["name"], "Provincial on Federal");
        assert_eq!(compound["code"], "TAX002");
        assert_eq!(
            compound["components"],
            json!([
                {"name": "Federal", "rate": "5", "isCompound": false},
                {"name": "Provincial", "rate": "7.5", "isCompound": true}
            ])
        );
        let calls: Vec<Call> = fake
            .calls()
            .into_iter()
            .filter(|call| call.path == "/api.xro/2.0/TaxRates")
            .collect();
        assert_eq!(calls.len(), 1);
        assert!(calls[0].query.is_empty(), "{:?}", calls[0].query);
    }
}

/// Bills are the invoices of `Type=="ACCPAY"`, asked for with that
/// `where`: each Xero status with the amounts that tell them apart, lines
/// inclusive or exclusive of tax, the amount due the total less what was
/// paid and credited; each line's `AccountID` an account of the same
/// connection and its `TaxType` one of its tax rates.
#[tokio::test]
async fn bills_sync_with_their_statuses_and_refer_to_the_connections_accounts() {
    for backend in backends() {
        let fake = fake().await;
        let app = TestApp::spawn_with(backend, options_for(&fake, None, 1)).await;
        let (company_id, _) = connected(&app, CASE.lasting).await;
        for data_type in [
            QueueDataTypeDataType::Bills,
            QueueDataTypeDataType::Accounts,
            QueueDataTypeDataType::TaxRates,
            QueueDataTypeDataType::Suppliers,
        ] {
            let operations = sync(&app, company_id, data_type).await;
            assert!(
                operations
                    .iter()
                    .all(|op| op.status == PullStatus::Complete),
                "{operations:?}"
            );
        }
        let bills = records(&app, company_id, "bills").await;
        let listed: Vec<(&str, &str, &str, &str)> = bills
            .iter()
            .map(|bill| {
                (
                    bill["reference"].as_str().unwrap_or_default(),
                    bill["status"].as_str().unwrap_or_default(),
                    bill["totalAmount"].as_str().unwrap_or_default(),
                    bill["amountDue"].as_str().unwrap_or_default(),
                )
            })
            .collect();
        assert_eq!(
            listed,
            [
                ("SUP-1005", "Void", "10.00", "0.00"),
                ("SUP-1004", "Paid", "46.00", "0.00"),
                ("SUP-1003", "PartiallyPaid", "115.00", "60.00"),
                ("SUP-1002", "Open", "230.00", "230.00"),
                ("SUP-1001", "Draft", "575.00", "575.00"),
            ],
            "newest first: {bills:#?}"
        );
        let inclusive = &bills[3];
        assert_eq!(inclusive["subTotal"], "200.00");
        assert_eq!(inclusive["taxAmount"], "30.00");
        assert_eq!(
            inclusive["lineItems"][0],
            json!({
                "description": "Printer toner",
                "unitAmount": "115.00",
                "quantity": "2",
                "discountAmount": "0.00",
                "subTotal": "200.00",
                "taxAmount": "30.00",
                "totalAmount": "230.00",
                "accountRef": {"id": "b1c2d3e4-0000-4000-8000-000000000429", "name": null},
                "taxRateRef": {"id": "INPUT2", "name": null},
            })
        );
        assert_eq!(bills[1]["paidOnDate"], "2026-10-09");
        assert_eq!(
            bills[2]["supplierRef"],
            json!({"id": "3e6a5c2b-0000-4000-8000-000000000005", "supplierName": "Old Freight Ltd"})
        );

        // Every reference names a record of the same connection.
        let accounts = records(&app, company_id, "accounts").await;
        let rates = records(&app, company_id, "taxRates").await;
        let suppliers = records(&app, company_id, "suppliers").await;
        for bill in &bills {
            assert!(
                suppliers
                    .iter()
                    .any(|supplier| supplier["supplierId"] == bill["supplierRef"]["id"]),
                "{bill}"
            );
            for line in bill["lineItems"].as_array().expect("lines") {
                assert!(
                    accounts
                        .iter()
                        .any(|account| account["accountId"] == line["accountRef"]["id"]),
                    "{line}"
                );
                assert!(
                    rates
                        .iter()
                        .any(|rate| rate["taxRateId"] == line["taxRateRef"]["id"]),
                    "{line}"
                );
            }
        }
        let calls: Vec<Call> = fake
            .calls()
            .into_iter()
            .filter(|call| call.path == "/api.xro/2.0/Invoices")
            .collect();
        assert_eq!(calls.len(), 1, "one page of bills");
        assert_eq!(
            calls[0].query.get("where").map(String::as_str),
            Some("Type==\"ACCPAY\"")
        );

        // Sales invoices' lines name their income account (`AccountID`) too.
        let operations = sync(&app, company_id, QueueDataTypeDataType::Invoices).await;
        assert_eq!(latest(&operations, "invoices").status, PullStatus::Complete);
        let invoices = records(&app, company_id, "invoices").await;
        let lines: Vec<&Value> = invoices
            .iter()
            .flat_map(|invoice| invoice["lineItems"].as_array().into_iter().flatten())
            .collect();
        assert!(!lines.is_empty());
        for line in lines {
            assert_eq!(
                line["accountRef"],
                json!({"id": "7d05a53d-613d-4eb2-a2fc-dcb6adb80b80", "name": null}),
                "{line}"
            );
            assert!(
                accounts
                    .iter()
                    .any(|account| account["accountId"] == line["accountRef"]["id"]
                        && account["classification"] == "Income"),
                "{line}"
            );
        }
    }
}

/// Payments are the receivable kinds of Xero's payments: on a sales
/// invoice (money in), a credit note's or an overpayment's refund (money
/// out, negative); a payment to a supplier and a deleted one are left out.
/// What each invoice shows paid is what its payments settle. A payment
/// deleted after the first sync comes back `DELETED` in what changed and is
/// flagged at once.
#[tokio::test]
async fn payments_sync_the_receivable_kinds_and_a_deletion_is_flagged_at_once() {
    for backend in backends() {
        let deleted = Arc::new(AtomicBool::new(false));
        let whole = router();
        let since_deleted = deleted.clone();
        let fake = Fake::start(
            "xero",
            Scheme::Bearer,
            ACCESS,
            REFRESH,
            fixture("xero/fixtures/unauthorized.json"),
            Arc::new(move |call: &Call| {
                let changes = call.headers.contains_key("if-modified-since");
                if changes && call.path == "/api.xro/2.0/Payments" {
                    assert!(
                        since_deleted.load(Ordering::SeqCst),
                        "asked for changes after the change"
                    );
                    let mut page: Value =
                        serde_json::from_str(&fixture("xero/fixtures/payments.json"))
                            .expect("JSON");
                    let mut first = page["Payments"][0].clone();
                    first["Status"] = json!("DELETED");
                    page["Payments"] = json!([first]);
                    page["pagination"]["itemCount"] = json!(1);
                    Answer::json(200, page.to_string())
                } else {
                    whole(call)
                }
            }),
        )
        .await;
        let app = TestApp::spawn_with(backend, options_for(&fake, None, 1)).await;
        let (company_id, _) = connected(&app, CASE.lasting).await;
        for data_type in [
            QueueDataTypeDataType::Payments,
            QueueDataTypeDataType::Invoices,
            QueueDataTypeDataType::CreditNotes,
        ] {
            let operations = sync(&app, company_id, data_type).await;
            assert!(
                operations
                    .iter()
                    .all(|op| op.status == PullStatus::Complete),
                "{operations:?}"
            );
        }
        let payments = records(&app, company_id, "payments").await;
        let listed: Vec<(&str, &str, &str, &str)> = payments
            .iter()
            .map(|payment| {
                (
                    payment["date"].as_str().unwrap_or_default(),
                    payment["totalAmount"].as_str().unwrap_or_default(),
                    payment["allocations"][0]["type"]
                        .as_str()
                        .unwrap_or_default(),
                    payment["allocations"][0]["amount"]
                        .as_str()
                        .unwrap_or_default(),
                )
            })
            .collect();
        assert_eq!(
            listed,
            [
                ("2026-10-16", "-5.50", "Other", "-5.50"),
                ("2026-10-15", "-25.00", "CreditNote", "-25.00"),
                ("2026-10-13", "250.50", "Invoice", "250.50"),
                ("2026-10-11", "200.00", "Invoice", "200.00"),
            ],
            "newest first: {payments:#?}"
        );
        let first = &payments[3];
        assert_eq!(first["paymentId"], "5e8f0a1b-0000-4000-8000-0000000a0001");
        assert_eq!(first["reference"], "Part payment");
        assert_eq!(
            first["customerRef"],
            json!({"id": "3e6a5c2b-0000-4000-8000-000000000001", "companyName": "Acme Trading Ltd"})
        );
        assert_eq!(
            first["accountRef"],
            json!({"id": "ebd06280-af70-4bed-97c6-7451a454ad85", "name": "Business Savings Account"})
        );
        assert_eq!(first["currency"], "GBP");
        assert_eq!(
            payments[1]["allocations"][0]["id"],
            "c2e1d0f9-0000-4000-8000-0000000000c1"
        );

        // What each invoice shows paid is what its payments and credit
        // notes settle.
        let credit_notes = records(&app, company_id, "creditNotes").await;
        let amount = |value: &Value| -> Money {
            serde_json::from_value(value.clone()).unwrap_or_else(|_| panic!("an amount: {value}"))
        };
        for invoice in invoices(&app, company_id).await {
            let paid = amount(&invoice["totalAmount"]) - amount(&invoice["amountDue"]);
            let settled = payments
                .iter()
                .flat_map(|payment| {
                    payment["allocations"]
                        .as_array()
                        .cloned()
                        .unwrap_or_default()
                })
                .filter(|allocation| allocation["id"] == invoice["invoiceId"])
                .fold(Money(0), |sum, allocation| {
                    sum + amount(&allocation["amount"])
                });
            let credited = credit_notes
                .iter()
                .flat_map(|note| note["allocations"].as_array().cloned().unwrap_or_default())
                .filter(|allocation| allocation["invoiceRef"]["id"] == invoice["invoiceId"])
                .fold(Money(0), |sum, allocation| {
                    sum + amount(&allocation["amount"])
                });
            if invoice["status"] != "Void" {
                assert_eq!(settled + credited, paid, "{invoice}");
            }
        }

        deleted.store(true, Ordering::SeqCst);
        let operations = sync(&app, company_id, QueueDataTypeDataType::Payments).await;
        assert_eq!(latest(&operations, "payments").status, PullStatus::Complete);
        let one = json(
            app.get(&format!(
                "/companies/{company_id}/data/payments/5e8f0a1b-0000-4000-8000-0000000a0001"
            ))
            .await,
        )
        .await;
        assert_eq!(one["isDeleted"], true, "{one}");
        let other = json(
            app.get(&format!(
                "/companies/{company_id}/data/payments/5e8f0a1b-0000-4000-8000-0000000a0002"
            ))
            .await,
        )
        .await;
        assert_eq!(other["isDeleted"], false, "{other}");
    }
}

/// Bill payments are the payable kinds of Xero's payments: on a bill
/// (money out, positive), a supplier credit note's refund (money back,
/// negative); the receivable kinds are left out. What a bill shows paid
/// (less what was credited) is what its payments settle.
#[tokio::test]
async fn bill_payments_are_the_payable_kinds_of_xeros_payments() {
    for backend in backends() {
        let fake = fake().await;
        let app = TestApp::spawn_with(backend, options_for(&fake, None, 1)).await;
        let (company_id, _) = connected(&app, CASE.lasting).await;
        for data_type in [
            QueueDataTypeDataType::BillPayments,
            QueueDataTypeDataType::Bills,
        ] {
            let operations = sync(&app, company_id, data_type).await;
            assert!(
                operations
                    .iter()
                    .all(|op| op.status == PullStatus::Complete),
                "{operations:?}"
            );
        }
        let payments = records(&app, company_id, "billPayments").await;
        let listed: Vec<(&str, &str, &str, &str, &str)> = payments
            .iter()
            .map(|payment| {
                (
                    payment["date"].as_str().unwrap_or_default(),
                    payment["totalAmount"].as_str().unwrap_or_default(),
                    payment["allocations"][0]["type"]
                        .as_str()
                        .unwrap_or_default(),
                    payment["allocations"][0]["id"].as_str().unwrap_or_default(),
                    payment["supplierRef"]["supplierName"]
                        .as_str()
                        .unwrap_or_default(),
                )
            })
            .collect();
        assert_eq!(
            listed,
            [
                (
                    "2026-10-17",
                    "-12.00",
                    "SupplierCredit",
                    "c2e1d0f9-0000-4000-8000-0000000000c2",
                    "Paper Supplies Co"
                ),
                (
                    "2026-10-10",
                    "40.00",
                    "Bill",
                    "a7d4c1e0-0000-4000-8000-00000000b003",
                    "Old Freight Ltd"
                ),
                (
                    "2026-10-09",
                    "46.00",
                    "Bill",
                    "a7d4c1e0-0000-4000-8000-00000000b004",
                    "Paper Supplies Co"
                ),
            ],
            "newest first: {payments:#?}"
        );
        assert_eq!(
            payments[2]["accountRef"],
            json!({"id": "ebd06280-af70-4bed-97c6-7451a454ad85", "name": "Business Savings Account"})
        );
        // The paid bill owes nothing after its payment; the part-paid one
        // owes its total less its payment and the 15.00 credited to it.
        let bills = records(&app, company_id, "bills").await;
        let bill = |id: &str| {
            bills
                .iter()
                .find(|bill| bill["billId"] == id)
                .cloned()
                .unwrap_or_else(|| panic!("bill {id}"))
        };
        let paid = bill("a7d4c1e0-0000-4000-8000-00000000b004");
        assert_eq!(
            (paid["totalAmount"].as_str(), paid["amountDue"].as_str()),
            (Some("46.00"), Some("0.00"))
        );
        let part = bill("a7d4c1e0-0000-4000-8000-00000000b003");
        assert_eq!(
            (part["totalAmount"].as_str(), part["amountDue"].as_str()),
            (Some("115.00"), Some("60.00"))
        );
        let calls: Vec<Call> = fake
            .calls()
            .into_iter()
            .filter(|call| call.path == "/api.xro/2.0/Payments")
            .collect();
        assert_eq!(calls.len(), 1);
        assert_eq!(
            calls[0].query.get("where"),
            None,
            "no PaymentType filter: {:?}",
            calls[0].query
        );
    }
}

/// Credit notes are the sales ones (`where=Type=="ACCRECCREDIT"`, a
/// supplier's credit note left out): each status, the remaining credit,
/// allocations to invoices (a deleted allocation left out), the credit
/// refunded by a payment; allocations and what remains never exceed the
/// total, and every allocation names an invoice of the connection.
#[tokio::test]
async fn credit_notes_sync_with_their_allocations_and_remaining_credit() {
    for backend in backends() {
        let fake = fake().await;
        let app = TestApp::spawn_with(backend, options_for(&fake, None, 1)).await;
        let (company_id, _) = connected(&app, CASE.lasting).await;
        for data_type in [
            QueueDataTypeDataType::CreditNotes,
            QueueDataTypeDataType::Invoices,
        ] {
            let operations = sync(&app, company_id, data_type).await;
            assert!(
                operations
                    .iter()
                    .all(|op| op.status == PullStatus::Complete),
                "{operations:?}"
            );
        }
        let notes = records(&app, company_id, "creditNotes").await;
        let listed: Vec<(&str, &str, &str, &str)> = notes
            .iter()
            .map(|note| {
                (
                    note["creditNoteNumber"].as_str().unwrap_or_default(),
                    note["status"].as_str().unwrap_or_default(),
                    note["totalAmount"].as_str().unwrap_or_default(),
                    note["remainingCredit"].as_str().unwrap_or_default(),
                )
            })
            .collect();
        assert_eq!(
            listed,
            [
                ("CN-0002", "Submitted", "60.00", "60.00"),
                ("CN-0001", "Paid", "25.00", "0.00"),
                ("CN-0003", "PartiallyPaid", "30.00", "10.00"),
                ("CN-0005", "Void", "8.00", "0.00"),
                ("CN-0004", "Draft", "12.00", "12.00"),
            ],
            "newest first, the supplier's credit note left out: {notes:#?}"
        );
        assert_eq!(notes[0]["subTotal"], "50.00");
        assert_eq!(notes[0]["totalTaxAmount"], "10.00");
        assert_eq!(
            notes[2]["allocations"],
            json!([{
                "invoiceRef": {"id": "9b2c7a10-0000-4000-8000-000000000004", "invoiceNumber": "INV-0004"},
                "amount": "20.00",
                "allocatedOnDate": "2026-10-07"
            }]),
            "the deleted allocation is left out"
        );
        assert_eq!(
            notes[1]["customerRef"],
            json!({"id": "3e6a5c2b-0000-4000-8000-000000000003", "companyName": "Brightside Cafe"})
        );
        let amount = |value: &Value| -> Money {
            serde_json::from_value(value.clone()).unwrap_or_else(|_| panic!("an amount: {value}"))
        };
        let invoices = invoices(&app, company_id).await;
        for note in &notes {
            let mut allocated = Money(0);
            for allocation in note["allocations"].as_array().expect("allocations") {
                allocated = allocated + amount(&allocation["amount"]);
                assert!(
                    invoices
                        .iter()
                        .any(|invoice| invoice["invoiceId"] == allocation["invoiceRef"]["id"]),
                    "{allocation}"
                );
            }
            assert!(
                allocated + amount(&note["remainingCredit"]) <= amount(&note["totalAmount"]),
                "{note}"
            );
        }
        let calls: Vec<Call> = fake
            .calls()
            .into_iter()
            .filter(|call| call.path == "/api.xro/2.0/CreditNotes")
            .collect();
        assert_eq!(calls.len(), 1);
        assert_eq!(
            calls[0].query.get("where").map(String::as_str),
            Some("Type==\"ACCRECCREDIT\"")
        );
    }
}

/// Items: tracked inventory or not (Xero has no service type), sold or
/// bought or both; their account codes become the chart's account ids (the
/// chart is read first, one call more), a code the chart lacks no
/// reference; tax types name the connection's tax rates.
#[tokio::test]
async fn items_sync_with_the_ids_of_the_accounts_their_codes_name() {
    for backend in backends() {
        let fake = fake().await;
        let app = TestApp::spawn_with(backend, options_for(&fake, None, 1)).await;
        let (company_id, _) = connected(&app, CASE.lasting).await;
        let operations = sync(&app, company_id, QueueDataTypeDataType::Items).await;
        assert_eq!(latest(&operations, "items").status, PullStatus::Complete);
        let items = records(&app, company_id, "items").await;
        let names: Vec<&str> = items
            .iter()
            .map(|item| item["name"].as_str().unwrap_or_default())
            .collect();
        assert_eq!(
            names,
            ["Consulting", "Copier paper", "Fiction Books"],
            "by name"
        );
        let books = &items[2];
        assert_eq!(books["type"], "Inventory");
        assert_eq!(books["code"], "BOOK");
        assert_eq!(books["quantityOnHand"], "42");
        assert_eq!(
            books["sales"],
            json!({
                "description": "Paperback fiction",
                "unitPrice": "12.99",
                "accountRef": {"id": "7d05a53d-613d-4eb2-a2fc-dcb6adb80b80", "name": "Sales"},
                "taxRateRef": {"id": "OUTPUT2", "name": null}
            })
        );
        assert_eq!(
            books["purchases"]["accountRef"],
            json!({"id": "b1c2d3e4-0000-4000-8000-000000000429", "name": "General Expenses"}),
            "a tracked item's purchases post to its cost of goods sold account"
        );
        let consulting = &items[0];
        assert_eq!(consulting["type"], "NonInventory");
        assert_eq!(consulting["purchases"], Value::Null, "not bought");
        assert_eq!(consulting["quantityOnHand"], Value::Null);
        let paper = &items[1];
        assert_eq!(paper["sales"], Value::Null, "not sold");
        assert_eq!(paper["purchases"]["unitPrice"], "12.50");
        assert_eq!(
            paper["purchases"]["accountRef"],
            Value::Null,
            "code 310 is not in the chart"
        );
        let paths: Vec<String> = fake.calls().into_iter().map(|call| call.path).collect();
        let items_call = paths.iter().position(|path| path == "/api.xro/2.0/Items");
        let accounts_call = paths
            .iter()
            .position(|path| path == "/api.xro/2.0/Accounts");
        assert!(
            accounts_call < items_call && accounts_call.is_some(),
            "{paths:?}"
        );
    }
}

/// Company info: the organisation (`GET /Organisation`), one record per
/// connection, its financial year starting the day after Xero's year end,
/// its street and postal addresses (a delivery address is not the
/// company's), its office phone and website.
#[tokio::test]
async fn company_info_is_the_organisation_one_record_per_connection() {
    for backend in backends() {
        let fake = fake().await;
        let app = TestApp::spawn_with(backend, options_for(&fake, None, 1)).await;
        let (company_id, connection_id) = connected(&app, CASE.lasting).await;
        let operations = sync(&app, company_id, QueueDataTypeDataType::CompanyInfo).await;
        assert_eq!(
            latest(&operations, "companyInfo").status,
            PullStatus::Complete
        );
        let page = json(
            app.get(&format!("/companies/{company_id}/data/companyInfo"))
                .await,
        )
        .await;
        assert_eq!(page["totalResults"], 1, "{page}");
        let company = &page["results"][0];
        assert_eq!(
            company["companyInfoId"],
            "b2c885a9-4bb9-4a00-9b6e-6c2bf60b1a2b"
        );
        assert_eq!(company["connectionId"], connection_id.to_string());
        assert_eq!(company["companyName"], "Maple Florists");
        assert_eq!(company["legalName"], "Maple Florists Limited");
        assert_eq!(company["registrationNumber"], "09876543");
        assert_eq!(company["taxNumber"], "GB123456789");
        assert_eq!(company["baseCurrency"], "GBP");
        assert_eq!(company["financialYearStart"], json!({"month": 4, "day": 1}));
        assert_eq!(company["phone"], "44 117 496 0321");
        assert_eq!(company["website"], "https://maple-florists.example");
        assert_eq!(company["createdDate"], "2017-08-10T00:00:00.000000Z");
        assert_eq!(
            company["addresses"],
            json!([
                {"type": "Street", "line1": "12 Park Row", "line2": "Unit 3", "city": "Bristol", "region": null, "postalCode": "BS1 5LJ", "country": "United Kingdom"},
                {"type": "Postal", "line1": "PO Box 77", "line2": null, "city": "Bristol", "region": null, "postalCode": "BS99 7ZZ", "country": "United Kingdom"}
            ])
        );
    }
}

/// Journal entries are Xero's journals, the whole ledger: signed net
/// amounts (debits positive) that balance, on the chart's accounts, with
/// the document that posted each. Journals are only ever added, so a resync
/// asks only for those numbered after the last one read (`offset`) and
/// keeps the others.
#[tokio::test]
async fn journals_are_the_ledger_and_a_resync_asks_after_the_last_number() {
    for backend in backends() {
        let fake = fake().await;
        let app = TestApp::spawn_with(backend, options_for(&fake, None, 1)).await;
        let (company_id, _) = connected(&app, CASE.lasting).await;
        for data_type in [
            QueueDataTypeDataType::JournalEntries,
            QueueDataTypeDataType::Accounts,
        ] {
            let operations = sync(&app, company_id, data_type).await;
            assert!(
                operations
                    .iter()
                    .all(|op| op.status == PullStatus::Complete),
                "{operations:?}"
            );
        }
        let entries = records(&app, company_id, "journalEntries").await;
        assert_eq!(entries.len(), 2, "{entries:#?}");
        let payment = &entries[0];
        assert_eq!(payment["journalNumber"], "2");
        assert_eq!(payment["postedOn"], "2026-10-11");
        assert_eq!(
            payment["source"],
            json!({"type": "ACCRECPAYMENT", "id": "5e8f0a1b-0000-4000-8000-0000000a0001"})
        );
        assert_eq!(
            payment["journalLines"][0],
            json!({
                "accountRef": {"id": "ebd06280-af70-4bed-97c6-7451a454ad85", "name": "Business Savings Account"},
                "description": null,
                "netAmount": "200.00",
                "currency": null
            })
        );
        let amount = |value: &Value| -> Money {
            serde_json::from_value(value.clone()).unwrap_or_else(|_| panic!("an amount: {value}"))
        };
        let accounts = records(&app, company_id, "accounts").await;
        let check = |entries: &[Value]| {
            for entry in entries {
                let lines = entry["journalLines"].as_array().expect("lines");
                let balance = lines
                    .iter()
                    .fold(Money(0), |sum, line| sum + amount(&line["netAmount"]));
                assert_eq!(balance, Money(0), "the entry balances: {entry}");
                for line in lines {
                    assert!(
                        accounts
                            .iter()
                            .any(|account| account["accountId"] == line["accountRef"]["id"]),
                        "{line}"
                    );
                }
            }
        };
        check(&entries);

        let operations = sync(&app, company_id, QueueDataTypeDataType::JournalEntries).await;
        assert_eq!(
            latest(&operations, "journalEntries").status,
            PullStatus::Complete
        );
        let entries = records(&app, company_id, "journalEntries").await;
        let numbers: Vec<&str> = entries
            .iter()
            .map(|entry| entry["journalNumber"].as_str().unwrap_or_default())
            .collect();
        assert_eq!(
            numbers,
            ["3", "2", "1"],
            "the new journal added, the others kept"
        );
        check(&entries);
        let offsets: Vec<String> = fake
            .calls()
            .into_iter()
            .filter(|call| call.path == "/api.xro/2.0/Journals")
            .filter_map(|call| call.query.get("offset").cloned())
            .collect();
        assert_eq!(offsets, ["0", "2"], "the resync starts after journal 2");
    }
}

/// A refused scope is announced (`dataType.syncFailed` with
/// `PermissionsError` and Xero's words), and the connection's other data
/// types go on syncing.
#[tokio::test]
async fn a_refused_scope_is_announced_and_the_other_data_types_still_sync() {
    for backend in backends() {
        let fake = fake().await;
        let app = TestApp::spawn_with(backend, options_for(&fake, None, 1)).await;
        let receiver = Receiver::start().await;
        let endpoint = app
            .post_json(
                "/webhooks/endpoints",
                &json!({"url": receiver.url("/hooks"), "eventTypes": ["dataType.syncFailed"]}),
            )
            .await;
        assert_eq!(endpoint.status(), 201);
        let (company_id, connection_id) = connected(&app, CASE.lasting).await;
        let Refused::Scope { status, body, .. } = CASE.errors.refused else {
            panic!("Xero's refusal is told apart");
        };
        fake.with(|inner| inner.scripted.push_back(Answer::json(status, body)));
        let operations = sync(&app, company_id, QueueDataTypeDataType::Invoices).await;
        let refused = latest(&operations, "invoices");
        assert_eq!(refused.status, PullStatus::PermissionsError, "{refused:?}");

        let events = receiver.wait_for(1).await;
        let data = &events[0].envelope()["data"];
        assert_eq!(data["status"], "PermissionsError", "{data}");
        assert_eq!(data["dataType"], "invoices");
        assert_eq!(data["connectionId"], connection_id.to_string());
        assert!(
            data["errorMessage"]
                .as_str()
                .is_some_and(|message| message.contains("AuthorizationUnsuccessful")),
            "{data}"
        );

        let operations = sync(&app, company_id, QueueDataTypeDataType::Customers).await;
        assert_eq!(
            latest(&operations, "customers").status,
            PullStatus::Complete
        );
        assert!(!records(&app, company_id, "customers").await.is_empty());
        receiver.stays_at(1, Duration::from_millis(300)).await;
    }
}

/// Xero inverts the usual statuses (NOTES.md, "Errors"): a scope the consent
/// lacks answers 401 `AuthorizationUnsuccessful` (the shared scenario: only
/// the data type fails), while a tenant disconnected from the application
/// answers 403 `AuthenticationUnsuccessful`, which no refresh cures: the
/// connection is deauthorized, saying what happened.
#[tokio::test]
async fn a_disconnected_tenant_deauthorizes_the_connection() {
    for backend in backends() {
        let fake = fake().await;
        let app = TestApp::spawn_with(backend, options_for(&fake, None, 1)).await;
        let (company_id, connection_id) = connected(&app, CASE.lasting).await;
        fake.with(|inner| {
            inner.scripted.push_back(Answer::json(
                403,
                r#"{"Type":null,"Title":"Forbidden","Status":403,"Detail":"AuthenticationUnsuccessful","Instance":"79f299a4-f3a6-4c0d-a4a0-d4c48d1f3be4","Extensions":{}}"#,
            ))
        });
        let operations = sync(&app, company_id, QueueDataTypeDataType::Invoices).await;
        let operation = latest(&operations, "invoices");
        assert_eq!(operation.status, PullStatus::AuthError, "{operation:?}");
        let message = operation.error_message.unwrap_or_default();
        assert!(
            message.contains("AuthenticationUnsuccessful")
                && message.contains("no longer connected to the application"),
            "{message}"
        );
        let connection = app
            .client
            .get_connection(&company_id, &connection_id)
            .await
            .expect("found")
            .into_inner();
        assert_eq!(connection.status, ConnectionStatus::Deauthorized);
    }
}

#[tokio::test]
async fn a_refresh_without_an_oauth_client_fails_without_deauthorizing() {
    for backend in backends() {
        let fake = fake().await;
        let app = TestApp::spawn_with(backend, options_for(&fake, None, 1)).await;
        let (company_id, connection_id) = connected(&app, 60).await;
        let operations = sync(&app, company_id, QueueDataTypeDataType::Invoices).await;
        let operation = latest(&operations, "invoices");
        assert_eq!(operation.status, PullStatus::Failed);
        assert!(
            operation
                .error_message
                .unwrap_or_default()
                .contains("/integrations/xero/oauth-client")
        );
        let connection = app
            .client
            .get_connection(&company_id, &connection_id)
            .await
            .expect("found")
            .into_inner();
        assert_eq!(connection.status, ConnectionStatus::Linked);
    }
}

#[tokio::test]
async fn a_transient_token_endpoint_failure_is_retried_and_does_not_deauthorize() {
    for backend in backends() {
        let fake = fake().await;
        let app = TestApp::spawn_with(backend, options_for(&fake, None, 1)).await;
        set_oauth_client(&app, "xero").await;
        let (company_id, connection_id) = connected(&app, 60).await;
        fake.with(|inner| {
            inner.token_error = Some(Answer::json(503, "{\"error\":\"temporarily_unavailable\"}"))
        });
        let operations = sync(&app, company_id, QueueDataTypeDataType::Invoices).await;
        let operation = latest(&operations, "invoices");
        assert_eq!(operation.status, PullStatus::Failed);
        assert!(
            operation
                .error_message
                .unwrap_or_default()
                .contains("gave up after 4 attempts")
        );
        assert_eq!(fake.token_calls(), 4);
        let connection = app
            .client
            .get_connection(&company_id, &connection_id)
            .await
            .expect("found")
            .into_inner();
        assert_eq!(connection.status, ConnectionStatus::Linked);
    }
}

#[tokio::test]
async fn two_syncs_needing_a_refresh_at_once_make_exactly_one_refresh_call() {
    for backend in backends() {
        let fake = fake().await;
        let app = TestApp::spawn_with(backend, options_for(&fake, None, 2)).await;
        // A second process on the same database competes too.
        app.another_instance(options_for(&fake, None, 2)).await;
        set_oauth_client(&app, "xero").await;
        let (company_id, connection_id) = connected(&app, 60).await;
        fake.with(|inner| inner.token_delay = Duration::from_millis(300));
        app.client
            .sync_all_data(&company_id, None)
            .await
            .expect("queued");
        let operations = crate::sync::settled(&app.client, company_id).await;
        assert!(
            operations
                .iter()
                .all(|operation| operation.status == PullStatus::Complete),
            "{operations:?}"
        );
        assert_eq!(fake.token_calls(), 1);
        assert!(
            fake.calls()
                .iter()
                .all(|call| call.token == "at-refreshed-1")
        );
        assert_eq!(
            stored(&app, connection_id).await["refreshToken"],
            "rt-rotated-1"
        );
    }
}

/// Xero as it answers `If-Modified-Since`: the invoices changed since
/// (one paid since the first sync, one new), on one page; every answer
/// dated `PLATFORM_DATE` by the scenario.
async fn fake_with_changes() -> Fake {
    let whole = router();
    Fake::start(
        "xero",
        Scheme::Bearer,
        ACCESS,
        REFRESH,
        fixture("xero/fixtures/unauthorized.json"),
        Arc::new(move |call: &Call| {
            let changes = call.headers.contains_key("if-modified-since");
            if changes && call.path == "/api.xro/2.0/Invoices" {
                Answer::json(200, fixture("xero/fixtures/invoices-changed.json"))
            } else {
                whole(call)
            }
        }),
    )
    .await
}

/// Xero asked for what changed, in the shared scenario (`scenarios::changes`).
static CHANGES: Changed = Changed {
    data_type: "invoices",
    fake: || Box::pin(fake_with_changes()),
    filter: |call| call.headers.get("if-modified-since").cloned(),
    since: "2026-11-27T08:55:00Z",
    calls: 1,
    changed: 1,
    added: 1,
    // Xero documents no 304 for `If-Modified-Since`: an empty list.
    quiet: |_| {
        Answer::json(
            200,
            r#"{"Status":"OK","pagination":{"page":1,"pageSize":100,"pageCount":0,"itemCount":0},"Invoices":[]}"#,
        )
    },
    quiet_calls: 1,
};

changes_scenario!(CASE, CHANGES);
