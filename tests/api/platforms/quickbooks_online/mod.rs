//! QuickBooks Online: the query endpoint paged by STARTPOSITION and
//! MAXRESULTS, statuses from balance against total, refresh on a 401, and
//! verification through `companyinfo`.
//! A resync asks only for what changed (`Metadata.LastUpdatedTime >`).
//!
//! The scenarios every platform shares (`super::scenarios`) run from its
//! `CASE`; the tests here are its own.

use std::sync::Arc;

use serde_json::{Value, json};

use client::types::{PullStatus, QueueDataTypeDataType};
use tributary::data::money::Money;

use super::fake::{Answer, Call, Fake, Scheme, fixture};
use super::scenarios::changes::{Changed, changes_scenario};
use super::scenarios::{
    Case, Cut, Errors, Pages, Refresh, Refused, Synced, Verification, platform_scenarios,
};
use super::{authorize, latest, options_for, sync};
use crate::connections::{new_company, new_connection};
use crate::helpers::{TestApp, backends, json};

mod journal_report;

pub(crate) const REALM: &str = "9130357096634567";
const ACCESS: &str = "qbo-access-token-0001";
const REFRESH: &str = "qbo-refresh-token-0001";

/// Reads `STARTPOSITION n MAXRESULTS m` from a query and slices the fixture.
fn page_of(fixture_text: &str, entity: &str, query: &str) -> String {
    let words: Vec<&str> = query.split_whitespace().collect();
    let number_after = |word: &str| {
        words
            .iter()
            .position(|w| w.eq_ignore_ascii_case(word))
            .and_then(|at| words.get(at + 1))
            .and_then(|n| n.parse::<usize>().ok())
    };
    let start = number_after("STARTPOSITION").unwrap_or(1);
    let max = number_after("MAXRESULTS").unwrap_or(100);
    // Re-serializing goes through floats here (in the fake, not in
    // tributary); every amount in the fixture survives that unchanged.
    let all: Value = serde_json::from_str(fixture_text).expect("fixture JSON");
    let records = all["QueryResponse"][entity]
        .as_array()
        .cloned()
        .unwrap_or_default();
    let slice: Vec<Value> = records.into_iter().skip(start - 1).take(max).collect();
    let mut response = json!({"QueryResponse": {}, "time": "2026-11-22T01:00:00.000-08:00"});
    if !slice.is_empty() {
        response["QueryResponse"] =
            json!({entity: slice, "startPosition": start, "maxResults": slice.len()});
    }
    response.to_string()
}

pub(crate) fn router() -> super::fake::Router {
    Arc::new(|call: &Call| {
        let company = format!("/v3/company/{REALM}");
        let query = call.query.get("query").cloned().unwrap_or_default();
        if call.path == format!("{company}/preferences") {
            return Answer::json(200, fixture("quickbooks_online/fixtures/preferences.json"));
        }
        if call.path == format!("{company}/companyinfo/{REALM}") {
            return Answer::json(200, fixture("quickbooks_online/fixtures/companyinfo.json"));
        }
        if call.path == format!("{company}/reports/JournalReport") {
            return journal_report::answer(call);
        }
        if call.path != format!("{company}/query") {
            return Answer::json(
                404,
                "{\"Fault\":{\"Error\":[{\"Message\":\"Object Not Found\",\"Detail\":\"Company not found\",\"code\":\"610\"}],\"type\":\"ValidationFault\"}}",
            );
        }
        if query.starts_with("select * from Invoice") {
            Answer::json(
                200,
                page_of(
                    &fixture("quickbooks_online/fixtures/invoices.json"),
                    "Invoice",
                    &query,
                ),
            )
        } else if query.starts_with("select * from Customer where Active in (true, false)") {
            Answer::json(
                200,
                page_of(
                    &fixture("quickbooks_online/fixtures/customers.json"),
                    "Customer",
                    &query,
                ),
            )
        } else if query.starts_with("select * from Vendor where Active in (true, false)") {
            Answer::json(
                200,
                page_of(
                    &fixture("quickbooks_online/fixtures/vendors.json"),
                    "Vendor",
                    &query,
                ),
            )
        } else if query.starts_with("select * from TaxRate where Active in (true, false)") {
            Answer::json(
                200,
                page_of(
                    &fixture("quickbooks_online/fixtures/taxrates.json"),
                    "TaxRate",
                    &query,
                ),
            )
        } else if query.starts_with("select * from Bill ") {
            Answer::json(
                200,
                page_of(
                    &fixture("quickbooks_online/fixtures/bills.json"),
                    "Bill",
                    &query,
                ),
            )
        } else if query.starts_with("select * from Item where Active in (true, false)") {
            Answer::json(
                200,
                page_of(
                    &fixture("quickbooks_online/fixtures/items.json"),
                    "Item",
                    &query,
                ),
            )
        } else if query.starts_with("select * from CreditMemo ") {
            Answer::json(
                200,
                page_of(
                    &fixture("quickbooks_online/fixtures/creditmemos.json"),
                    "CreditMemo",
                    &query,
                ),
            )
        } else if query.starts_with("select * from BillPayment ") {
            Answer::json(
                200,
                page_of(
                    &fixture("quickbooks_online/fixtures/billpayments.json"),
                    "BillPayment",
                    &query,
                ),
            )
        } else if query.starts_with("select * from Payment ") {
            Answer::json(
                200,
                page_of(
                    &fixture("quickbooks_online/fixtures/payments.json"),
                    "Payment",
                    &query,
                ),
            )
        } else if query.starts_with("select * from Account where Active in (true, false)") {
            Answer::json(
                200,
                page_of(
                    &fixture("quickbooks_online/fixtures/accounts.json"),
                    "Account",
                    &query,
                ),
            )
        } else {
            Answer::json(
                400,
                "{\"Fault\":{\"Error\":[{\"Message\":\"Error parsing query\",\"code\":\"4000\"}],\"type\":\"ValidationFault\"}}",
            )
        }
    })
}

pub(crate) async fn fake() -> Fake {
    Fake::start(
        "quickbooks-online",
        Scheme::Bearer,
        ACCESS,
        REFRESH,
        fixture("quickbooks_online/fixtures/unauthorized.json"),
        router(),
    )
    .await
}

fn body(access: &str, expires_in: i64) -> Value {
    json!({"realmId": REALM, "accessToken": access, "refreshToken": REFRESH, "expiresIn": expires_in})
}

/// QuickBooks Online in the shared scenarios.
static CASE: Case = Case {
    key: "quickbooks-online",
    name: "QuickBooks Online",
    fake: || Box::pin(fake()),
    page_size: Some(2),
    authorization: |expires_in| body(ACCESS, expires_in),
    access: ACCESS,
    refresh: REFRESH,
    lasting: 3600,
    kept: &["realmId"],
    sync: Synced {
        data_type: "invoices",
        records: 5,
        // Two, two and one.
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
        rate_limited: r#"{"Fault":{"Error":[{"Message":"message=ThrottleExceeded; errorCode=003001; statusCode=429","Detail":"The request limit was reached.","code":"3001"}],"type":"SERVICE"}}"#,
        rate_limit_headers: &[],
        rate_limited_says: "",
        server_error: r#"{"Fault":{"Error":[{"Message":"An application error has occurred while processing your request","Detail":"System Failure Error","code":"10000"}],"type":"SystemFault"}}"#,
        unavailable: (
            503,
            r#"{"Fault":{"Error":[{"Message":"Service Unavailable","Detail":"QuickBooks Online is down for maintenance","code":"503"}],"type":"SystemFault"}}"#,
        ),
        unavailable_says: "503 Service Unavailable",
        refused: Refused::AsARejectedToken(
            "QuickBooks Online has one scope for every entity: its 403 (ApplicationAuthorizationFailed) is about the \
             company, so it deauthorizes (a_403_deauthorizes_the_connection)",
        ),
    },
    pages: Pages {
        prelude: |_| Vec::new(),
        first: |_| {
            Answer::json(
                200,
                page_of(
                    &fixture("quickbooks_online/fixtures/invoices.json"),
                    "Invoice",
                    "select * from Invoice STARTPOSITION 1 MAXRESULTS 2",
                ),
            )
        },
        cut: Cut::SecondPage,
        truncated: r#"{"QueryResponse": {"Invoice": [{"Id": "x", "TotalAmt": 12.5"#,
        truncated_says: "",
        records_at: "/QueryResponse/Invoice",
        id_at: "/Id",
        field: "/TotalAmt",
    },
    refresh_with: Some(Refresh {
        rejected_after: 2,
        ..Refresh::ROTATING
    }),
    unrefreshable: None,
    verification: Verification {
        rejected_says: &["AuthenticationFailed"],
        another_account: None,
        verified_by: |calls| {
            calls
                .last()
                .is_some_and(|call| call.path.ends_with(&format!("/companyinfo/{REALM}")))
        },
    },
    unknown_account: None,
};

platform_scenarios!(CASE, refreshes, refreshes_before_expiry);

/// The chart of accounts, inactive accounts included (QuickBooks does not
/// delete one), paged like every query (two a page here): each
/// `Classification` mapped, `Bank` and `Credit Card` accounts bank
/// accounts, balances of balance-sheet accounts only; ordered by `AcctNum`,
/// accounts without one last, by name.
#[tokio::test]
async fn the_chart_of_accounts_syncs_with_balance_sheet_balances() {
    for backend in backends() {
        let fake = fake().await;
        let app = TestApp::spawn_with(backend, options_for(&fake, Some(2), 1)).await;
        let company_id = new_company(&app, "Amy's Bird Sanctuary").await;
        let connection_id = new_connection(&app, company_id, "quickbooks-online").await;
        let authorized =
            authorize(&app, company_id, connection_id, &body(ACCESS, 3600), false).await;
        assert_eq!(authorized.status(), 200);
        let operations = sync(&app, company_id, QueueDataTypeDataType::Accounts).await;
        assert_eq!(latest(&operations, "accounts").status, PullStatus::Complete);

        let page = json(
            app.get(&format!("/companies/{company_id}/data/accounts"))
                .await,
        )
        .await;
        assert_eq!(page["totalResults"], 8, "{page}");
        let listed: Vec<(&str, &str, &str, Value)> = page["results"]
            .as_array()
            .expect("results")
            .iter()
            .map(|account| {
                (
                    account["accountName"].as_str().unwrap_or_default(),
                    account["classification"].as_str().unwrap_or_default(),
                    account["status"].as_str().unwrap_or_default(),
                    account["currentBalance"].clone(),
                )
            })
            .collect();
        assert_eq!(
            listed,
            [
                ("Checking", "Asset", "Active", json!("1201.00")),
                (
                    "Accounts Receivable (A/R)",
                    "Asset",
                    "Active",
                    json!("5281.52")
                ),
                (
                    "Accounts Payable (A/P)",
                    "Liability",
                    "Active",
                    json!("1602.67")
                ),
                ("Retained Earnings", "Equity", "Active", json!("0.00")),
                ("Sales of Product Income", "Income", "Active", Value::Null),
                ("Advertising", "Expense", "Active", Value::Null),
                ("Old Promotions", "Expense", "Archived", Value::Null),
                ("Mastercard", "Liability", "Active", json!("157.72")),
            ]
        );
        let results = page["results"].as_array().expect("results");
        assert_eq!(results[0]["accountId"], "35");
        assert_eq!(results[0]["nominalCode"], "1000");
        assert_eq!(results[0]["accountType"], "Bank");
        assert_eq!(results[0]["isBankAccount"], true);
        assert_eq!(results[0]["currency"], "USD");
        assert_eq!(results[7]["nominalCode"], Value::Null);
        assert_eq!(results[7]["isBankAccount"], true, "a credit card account");
        assert_eq!(results[4]["description"], "Income from selling products");

        let queries: Vec<String> = fake
            .calls()
            .iter()
            .filter_map(|call| call.query.get("query").cloned())
            .filter(|query| query.contains("from Account"))
            .collect();
        assert_eq!(
            queries,
            [
                "select * from Account where Active in (true, false) STARTPOSITION 1 MAXRESULTS 2",
                "select * from Account where Active in (true, false) STARTPOSITION 3 MAXRESULTS 2",
                "select * from Account where Active in (true, false) STARTPOSITION 5 MAXRESULTS 2",
                "select * from Account where Active in (true, false) STARTPOSITION 7 MAXRESULTS 2",
                "select * from Account where Active in (true, false) STARTPOSITION 9 MAXRESULTS 2",
            ]
        );
    }
}

/// Suppliers are QuickBooks' vendors, inactive ones included, named as
/// customers are (company name, else display name); after a first sync
/// only the vendors changed since are asked for.
#[tokio::test]
async fn vendors_sync_as_suppliers_and_then_only_what_changed() {
    for backend in backends() {
        let fake = fake().await;
        let app = TestApp::spawn_with(backend, options_for(&fake, Some(2), 1)).await;
        let company_id = new_company(&app, "Amy's Bird Sanctuary").await;
        let connection_id = new_connection(&app, company_id, "quickbooks-online").await;
        let authorized =
            authorize(&app, company_id, connection_id, &body(ACCESS, 3600), false).await;
        assert_eq!(authorized.status(), 200);
        let operations = sync(&app, company_id, QueueDataTypeDataType::Suppliers).await;
        assert_eq!(
            latest(&operations, "suppliers").status,
            PullStatus::Complete
        );

        let page = json(
            app.get(&format!("/companies/{company_id}/data/suppliers"))
                .await,
        )
        .await;
        let listed: Vec<(&str, &str, &str)> = page["results"]
            .as_array()
            .expect("results")
            .iter()
            .map(|supplier| {
                (
                    supplier["supplierId"].as_str().unwrap_or_default(),
                    supplier["supplierName"].as_str().unwrap_or_default(),
                    supplier["status"].as_str().unwrap_or_default(),
                )
            })
            .collect();
        assert_eq!(
            listed,
            [
                ("30", "Books by Bessie", "Active"),
                ("41", "Hicks Hardware", "Active"),
                ("46", "Tim Philip Masonry", "Archived"),
            ]
        );
        let bessie = &page["results"][0];
        assert_eq!(bessie["emailAddress"], "Books@Intuit.com");
        assert_eq!(bessie["phone"], "(650) 555-7745");
        assert_eq!(bessie["defaultCurrency"], "USD");

        let first = sync(&app, company_id, QueueDataTypeDataType::Suppliers).await;
        assert_eq!(latest(&first, "suppliers").status, PullStatus::Complete);
        let vendor_queries: Vec<String> = fake
            .calls()
            .iter()
            .filter_map(|call| call.query.get("query").cloned())
            .filter(|query| query.contains("from Vendor"))
            .collect();
        let last = vendor_queries.last().expect("a vendor query");
        assert!(
            last.starts_with(
                "select * from Vendor where Active in (true, false) and Metadata.LastUpdatedTime > '"
            ),
            "the resync asks for what changed: {last}"
        );
    }
}

/// Bills: the status from `Balance` against `TotalAmt`, tax only for the
/// whole bill, an account-based line's account an account of the same
/// connection, an item line without one (its account is the item's).
/// Payments: each line settles its linked transaction, an invoice positive
/// and a credit memo's credit negative; what is left of `TotalAmt` is
/// unallocated; what each invoice shows paid is what its payments settle.
#[tokio::test]
async fn bills_and_payments_sync_with_their_references_and_allocations() {
    for backend in backends() {
        let fake = fake().await;
        let app = TestApp::spawn_with(backend, options_for(&fake, None, 1)).await;
        let company_id = new_company(&app, "Amy's Bird Sanctuary").await;
        let connection_id = new_connection(&app, company_id, "quickbooks-online").await;
        let authorized =
            authorize(&app, company_id, connection_id, &body(ACCESS, 3600), false).await;
        assert_eq!(authorized.status(), 200);
        for data_type in [
            QueueDataTypeDataType::Bills,
            QueueDataTypeDataType::Payments,
            QueueDataTypeDataType::Invoices,
            QueueDataTypeDataType::Accounts,
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
        let read = |data_type: &'static str| {
            let app = &app;
            async move {
                json(
                    app.get(&format!("/companies/{company_id}/data/{data_type}"))
                        .await,
                )
                .await["results"]
                    .as_array()
                    .cloned()
                    .unwrap_or_default()
            }
        };
        let bills = read("bills").await;
        let listed: Vec<(&str, &str, &str, &str, &str)> = bills
            .iter()
            .map(|bill| {
                (
                    bill["billId"].as_str().unwrap_or_default(),
                    bill["status"].as_str().unwrap_or_default(),
                    bill["subTotal"].as_str().unwrap_or_default(),
                    bill["totalAmount"].as_str().unwrap_or_default(),
                    bill["amountDue"].as_str().unwrap_or_default(),
                )
            })
            .collect();
        assert_eq!(
            listed,
            [
                ("203", "Paid", "55.00", "60.00", "0.00"),
                ("202", "PartiallyPaid", "250.00", "250.00", "100.00"),
                ("201", "Open", "103.55", "103.55", "103.55"),
            ],
            "newest first: {bills:#?}"
        );
        assert_eq!(
            bills[1]["supplierRef"],
            json!({"id": "46", "supplierName": "Tim Philip Masonry"})
        );
        assert_eq!(bills[1]["reference"], Value::Null);
        assert_eq!(bills[1]["note"], "Second half due on completion");
        let item_line = &bills[1]["lineItems"][1];
        assert_eq!(item_line["unitAmount"], "25.00");
        assert_eq!(item_line["quantity"], "4");
        assert_eq!(item_line["accountRef"], Value::Null);
        assert_eq!(
            bills[2]["lineItems"][0]["accountRef"],
            json!({"id": "7", "name": "Advertising"})
        );
        let accounts = read("accounts").await;
        let suppliers = read("suppliers").await;
        for bill in &bills {
            assert!(
                suppliers
                    .iter()
                    .any(|s| s["supplierId"] == bill["supplierRef"]["id"])
            );
            for line in bill["lineItems"].as_array().expect("lines") {
                if !line["accountRef"].is_null() {
                    assert!(
                        accounts
                            .iter()
                            .any(|a| a["accountId"] == line["accountRef"]["id"]),
                        "{line}"
                    );
                }
            }
        }

        let payments = read("payments").await;
        assert_eq!(payments.len(), 2);
        let (second, first) = (&payments[0], &payments[1]);
        assert_eq!(first["totalAmount"], "190.00");
        assert_eq!(
            first["allocations"],
            json!([
                {"type": "Invoice", "id": "102", "amount": "200.00"},
                {"type": "CreditNote", "id": "150", "amount": "-10.00"}
            ])
        );
        assert_eq!(first["accountRef"], json!({"id": "35", "name": null}));
        assert!(
            accounts
                .iter()
                .any(|a| a["accountId"] == "35" && a["isBankAccount"] == true)
        );
        assert_eq!(second["totalAmount"], "260.00");
        assert_eq!(second["reference"], "4521");
        assert_eq!(
            second["allocations"][0]["amount"], "250.50",
            "9.50 unallocated"
        );
        let invoices = read("invoices").await;
        for (invoice_id, paid) in [("102", "200.00"), ("103", "250.50")] {
            let invoice = invoices
                .iter()
                .find(|invoice| invoice["invoiceId"] == invoice_id)
                .expect("the invoice");
            let total: f64 = invoice["totalAmount"]
                .as_str()
                .unwrap_or("0")
                .parse()
                .unwrap_or(0.0);
            let due: f64 = invoice["amountDue"]
                .as_str()
                .unwrap_or("0")
                .parse()
                .unwrap_or(0.0);
            assert_eq!(format!("{:.2}", total - due), paid, "{invoice}");
        }
        let queries: Vec<String> = fake
            .calls()
            .iter()
            .filter_map(|call| call.query.get("query").cloned())
            .filter(|query| query.contains("from Bill") || query.contains("from Payment"))
            .collect();
        assert_eq!(
            queries,
            [
                "select * from Bill STARTPOSITION 1 MAXRESULTS 1000",
                "select * from Payment STARTPOSITION 1 MAXRESULTS 1000"
            ]
        );
    }
}

/// Bill payments: by cheque from a bank account or by card, each line
/// settling its linked bill (positive) or vendor credit (negative); what
/// each bill shows paid is what its payments settle.
#[tokio::test]
async fn bill_payments_settle_bills_by_cheque_or_card() {
    for backend in backends() {
        let fake = fake().await;
        let app = TestApp::spawn_with(backend, options_for(&fake, None, 1)).await;
        let company_id = new_company(&app, "Amy's Bird Sanctuary").await;
        let connection_id = new_connection(&app, company_id, "quickbooks-online").await;
        let authorized =
            authorize(&app, company_id, connection_id, &body(ACCESS, 3600), false).await;
        assert_eq!(authorized.status(), 200);
        for data_type in [
            QueueDataTypeDataType::BillPayments,
            QueueDataTypeDataType::Bills,
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
        let read = |data_type: &'static str| {
            let app = &app;
            async move {
                json(
                    app.get(&format!("/companies/{company_id}/data/{data_type}"))
                        .await,
                )
                .await["results"]
                    .as_array()
                    .cloned()
                    .unwrap_or_default()
            }
        };
        let payments = read("billPayments").await;
        assert_eq!(payments.len(), 2);
        let (cheque, card) = (&payments[0], &payments[1]);
        assert_eq!(cheque["billPaymentId"], "401");
        assert_eq!(cheque["date"], "2026-10-12");
        assert_eq!(cheque["reference"], "1047");
        assert_eq!(
            cheque["supplierRef"],
            json!({"id": "46", "supplierName": "Tim Philip Masonry"})
        );
        assert_eq!(
            cheque["accountRef"],
            json!({"id": "35", "name": "Checking"})
        );
        assert_eq!(
            card["accountRef"],
            json!({"id": "41", "name": "Mastercard"})
        );
        assert_eq!(card["totalAmount"], "50.00");
        assert_eq!(
            card["allocations"],
            json!([
                {"type": "Bill", "id": "203", "amount": "60.00"},
                {"type": "SupplierCredit", "id": "501", "amount": "-10.00"}
            ])
        );
        assert_eq!(card["note"], "Less the September credit");
        let accounts = read("accounts").await;
        for payment in &payments {
            assert!(
                accounts
                    .iter()
                    .any(|a| a["accountId"] == payment["accountRef"]["id"]
                        && a["isBankAccount"] == true),
                "{payment}"
            );
        }
        // What each bill shows paid is what its payments settle.
        let bills = read("bills").await;
        for bill in &bills {
            let paid = serde_json::from_value::<Money>(bill["totalAmount"].clone()).expect("total")
                - serde_json::from_value::<Money>(bill["amountDue"].clone()).expect("due");
            let settled = payments
                .iter()
                .flat_map(|payment| {
                    payment["allocations"]
                        .as_array()
                        .cloned()
                        .unwrap_or_default()
                })
                .filter(|allocation| {
                    allocation["type"] == "Bill" && allocation["id"] == bill["billId"]
                })
                .map(|allocation| {
                    serde_json::from_value::<Money>(allocation["amount"].clone()).expect("amount")
                })
                .fold(Money(0), |sum, amount| sum + amount);
            assert_eq!(settled, paid, "{bill}");
        }
    }
}

/// Credit notes are credit memos: the status from what remains of the
/// credit (`RemainingCredit`), lines as on invoices (the subtotal line left
/// out), no allocations (QuickBooks keeps them on the payments that applied
/// the credit: the one payment here names credit memo 150).
#[tokio::test]
async fn credit_memos_sync_as_credit_notes_with_what_remains() {
    for backend in backends() {
        let fake = fake().await;
        let app = TestApp::spawn_with(backend, options_for(&fake, None, 1)).await;
        let company_id = new_company(&app, "Amy's Bird Sanctuary").await;
        let connection_id = new_connection(&app, company_id, "quickbooks-online").await;
        let authorized =
            authorize(&app, company_id, connection_id, &body(ACCESS, 3600), false).await;
        assert_eq!(authorized.status(), 200);
        for data_type in [
            QueueDataTypeDataType::CreditNotes,
            QueueDataTypeDataType::Payments,
        ] {
            let operations = sync(&app, company_id, data_type).await;
            assert!(
                operations
                    .iter()
                    .all(|op| op.status == PullStatus::Complete),
                "{operations:?}"
            );
        }
        let notes = json(
            app.get(&format!("/companies/{company_id}/data/creditNotes"))
                .await,
        )
        .await;
        let notes = notes["results"].as_array().cloned().unwrap_or_default();
        let listed: Vec<(&str, &str, &str, &str)> = notes
            .iter()
            .map(|note| {
                (
                    note["creditNoteId"].as_str().unwrap_or_default(),
                    note["status"].as_str().unwrap_or_default(),
                    note["totalAmount"].as_str().unwrap_or_default(),
                    note["remainingCredit"].as_str().unwrap_or_default(),
                )
            })
            .collect();
        assert_eq!(
            listed,
            [
                ("151", "Submitted", "40.00", "40.00"),
                ("150", "Paid", "10.00", "0.00")
            ],
            "newest first: {notes:#?}"
        );
        assert_eq!(notes[1]["creditNoteNumber"], "CM-150");
        assert_eq!(
            notes[1]["lineItems"].as_array().map(Vec::len),
            Some(1),
            "the subtotal line is left out"
        );
        assert_eq!(notes[1]["note"], "Refund for a missed visit");
        assert_eq!(notes[1]["allocations"], json!([]));
        let payments = json(
            app.get(&format!("/companies/{company_id}/data/payments"))
                .await,
        )
        .await;
        let applied = payments["results"]
            .as_array()
            .into_iter()
            .flatten()
            .flat_map(|payment| {
                payment["allocations"]
                    .as_array()
                    .cloned()
                    .unwrap_or_default()
            })
            .find(|allocation| allocation["type"] == "CreditNote")
            .expect("the payment that applied the credit");
        assert_eq!(applied["id"], notes[1]["creditNoteId"]);
        assert_eq!(
            applied["amount"], "-10.00",
            "all of credit memo 150's credit"
        );
    }
}

/// Items: services, inventory (with its quantity) and non-inventory items,
/// inactive ones archived, a category left out; sold when they have an
/// income account, bought when they have an expense account. Company info:
/// the company info and the home currency from the preferences (two calls).
#[tokio::test]
async fn items_and_company_info_sync_as_quickbooks_describes_them() {
    for backend in backends() {
        let fake = fake().await;
        let app = TestApp::spawn_with(backend, options_for(&fake, None, 1)).await;
        let company_id = new_company(&app, "Amy's Bird Sanctuary").await;
        let connection_id = new_connection(&app, company_id, "quickbooks-online").await;
        let authorized =
            authorize(&app, company_id, connection_id, &body(ACCESS, 3600), false).await;
        assert_eq!(authorized.status(), 200);
        for data_type in [
            QueueDataTypeDataType::Items,
            QueueDataTypeDataType::CompanyInfo,
        ] {
            let operations = sync(&app, company_id, data_type).await;
            assert!(
                operations
                    .iter()
                    .all(|op| op.status == PullStatus::Complete),
                "{operations:?}"
            );
        }
        let items = json(
            app.get(&format!("/companies/{company_id}/data/items"))
                .await,
        )
        .await;
        let items = items["results"].as_array().cloned().unwrap_or_default();
        let listed: Vec<(&str, &str, &str)> = items
            .iter()
            .map(|item| {
                (
                    item["name"].as_str().unwrap_or_default(),
                    item["type"].as_str().unwrap_or_default(),
                    item["status"].as_str().unwrap_or_default(),
                )
            })
            .collect();
        assert_eq!(
            listed,
            [
                ("Concrete", "Service", "Active"),
                ("Old Flyers", "NonInventory", "Archived"),
                ("Pavers", "Inventory", "Active"),
            ],
            "by name, the category left out"
        );
        let pavers = &items[2];
        assert_eq!(pavers["code"], "PAV-4");
        assert_eq!(pavers["quantityOnHand"], "120");
        assert_eq!(pavers["sales"]["unitPrice"], "30.00");
        assert_eq!(
            pavers["sales"]["accountRef"],
            json!({"id": "79", "name": "Sales of Product Income"})
        );
        assert_eq!(pavers["purchases"]["unitPrice"], "25.00");
        assert_eq!(pavers["purchases"]["accountRef"]["id"], "7");
        assert_eq!(
            items[0]["purchases"],
            Value::Null,
            "no expense account: not bought"
        );
        assert_eq!(
            items[1]["sales"],
            Value::Null,
            "no income account: not sold"
        );

        let page = json(
            app.get(&format!("/companies/{company_id}/data/companyInfo"))
                .await,
        )
        .await;
        assert_eq!(page["totalResults"], 1);
        let company = &page["results"][0];
        assert_eq!(company["companyInfoId"], REALM);
        assert_eq!(company["companyName"], "Sandbox Company_US_1");
        assert_eq!(company["legalName"], "Sandbox Company US 1 LLC");
        assert_eq!(company["baseCurrency"], "USD");
        assert_eq!(company["financialYearStart"], json!({"month": 1, "day": 1}));
        assert_eq!(company["taxNumber"], Value::Null);
        assert_eq!(company["phone"], "(650) 944-4444");
        assert_eq!(company["addresses"][0]["type"], "Registered");
        assert_eq!(company["addresses"][0]["line2"], "Floor 2");
        assert_eq!(company["addresses"][1]["type"], "Street");
        assert_eq!(company["addresses"][1]["region"], "CA");
        assert!(
            fake.calls()
                .iter()
                .any(|call| call.path.ends_with("/preferences")),
            "the home currency comes from the preferences"
        );
    }
}

/// Tax rates: each `TaxRate` one agency's rate, a single component;
/// inactive ones archived.
#[tokio::test]
async fn tax_rates_sync_as_single_component_rates() {
    for backend in backends() {
        let fake = fake().await;
        let app = TestApp::spawn_with(backend, options_for(&fake, None, 1)).await;
        let company_id = new_company(&app, "Amy's Bird Sanctuary").await;
        let connection_id = new_connection(&app, company_id, "quickbooks-online").await;
        let authorized =
            authorize(&app, company_id, connection_id, &body(ACCESS, 3600), false).await;
        assert_eq!(authorized.status(), 200);
        let operations = sync(&app, company_id, QueueDataTypeDataType::TaxRates).await;
        assert_eq!(latest(&operations, "taxRates").status, PullStatus::Complete);
        let page = json(
            app.get(&format!("/companies/{company_id}/data/taxRates"))
                .await,
        )
        .await;
        let listed: Vec<(&str, &str, &str, &str)> = page["results"]
            .as_array()
            .expect("results")
            .iter()
            .map(|rate| {
                (
                    rate["taxRateId"].as_str().unwrap_or_default(),
                    rate["name"].as_str().unwrap_or_default(),
                    rate["effectiveTaxRate"].as_str().unwrap_or_default(),
                    rate["status"].as_str().unwrap_or_default(),
                )
            })
            .collect();
        assert_eq!(
            listed,
            [
                ("2", "California", "8", "Active"),
                ("4", "Old State Rate", "7.25", "Archived"),
                ("3", "Tucson City", "0.5", "Active"),
            ]
        );
        assert_eq!(
            page["results"][0]["components"],
            json!([{"name": "California", "rate": "8", "isCompound": false}])
        );
        assert_eq!(page["results"][0]["code"], Value::Null);
    }
}

/// QuickBooks' 403 (`ApplicationAuthorizationFailed`) is about the company,
/// not one data type (one scope covers every entity): it deauthorizes the
/// connection, saying so, rather than failing only the data type.
#[tokio::test]
async fn a_403_deauthorizes_the_connection() {
    for backend in backends() {
        let fake = fake().await;
        let app = TestApp::spawn_with(backend, options_for(&fake, None, 1)).await;
        let company_id = new_company(&app, "Amy's Bird Sanctuary").await;
        let connection_id = new_connection(&app, company_id, "quickbooks-online").await;
        let authorized =
            authorize(&app, company_id, connection_id, &body(ACCESS, 3600), false).await;
        assert_eq!(authorized.status(), 200);
        fake.with(|inner| {
            inner.scripted.push_back(Answer::json(
                403,
                r#"{"Fault":{"Error":[{"Message":"message=ApplicationAuthorizationFailed; errorCode=003100; statusCode=403","Detail":"The application is not authorized to access this company","code":"3100"}],"type":"AUTHENTICATION"}}"#,
            ))
        });
        let operations = sync(&app, company_id, QueueDataTypeDataType::Invoices).await;
        let operation = latest(&operations, "invoices");
        assert_eq!(operation.status, PullStatus::AuthError, "{operation:?}");
        let message = operation.error_message.unwrap_or_default();
        assert!(
            message.contains("ApplicationAuthorizationFailed")
                && message.contains("no longer lets the application read this company"),
            "{message}"
        );
        let connection = json(
            app.get(&format!(
                "/companies/{company_id}/connections/{connection_id}"
            ))
            .await,
        )
        .await;
        assert_eq!(connection["status"], "Deauthorized", "{connection}");
    }
}

#[tokio::test]
async fn quickbooks_invoices_and_customers_sync_page_by_page_with_statuses_from_balances() {
    for backend in backends() {
        let fake = fake().await;
        let app = TestApp::spawn_with(backend, options_for(&fake, Some(2), 1)).await;
        let company_id = new_company(&app, "Amy's Bird Sanctuary").await;
        let connection_id = new_connection(&app, company_id, "quickbooks-online").await;
        assert_eq!(
            authorize(&app, company_id, connection_id, &body(ACCESS, 3600), false)
                .await
                .status(),
            200
        );
        sync(&app, company_id, QueueDataTypeDataType::Invoices).await;
        let operations = sync(&app, company_id, QueueDataTypeDataType::Customers).await;
        assert_eq!(latest(&operations, "invoices").status, PullStatus::Complete);
        assert_eq!(
            latest(&operations, "customers").status,
            PullStatus::Complete
        );

        let page = json(
            app.get(&format!(
                "/companies/{company_id}/data/invoices?pageSize=100"
            ))
            .await,
        )
        .await;
        let invoices = page["results"].as_array().cloned().unwrap_or_default();
        assert_eq!(invoices.len(), 5);
        let find = |number: &str| {
            invoices
                .iter()
                .find(|i| i["invoiceNumber"] == number)
                .cloned()
                .expect("synced")
        };
        for (number, status) in [
            ("1001", "Submitted"),
            ("1002", "PartiallyPaid"),
            ("1003", "Paid"),
            ("1004", "Void"),
            ("1005", "Submitted"),
        ] {
            assert_eq!(find(number)["status"], status, "{number}");
        }
        let first = find("1001");
        assert_eq!(first["totalAmount"], "1127.81");
        assert_eq!(first["totalTaxAmount"], "87.81");
        assert_eq!(first["subTotal"], "1040.00");
        assert_eq!(first["dueDate"], "2026-10-31");
        assert_eq!(first["currency"], "USD");
        assert_eq!(first["note"], "Thank you for your business");
        assert_eq!(first["lineItems"].as_array().map(Vec::len), Some(1));
        assert_eq!(find("1002")["amountDue"], "300.00");

        let customers = json(
            app.get(&format!(
                "/companies/{company_id}/data/customers?pageSize=100"
            ))
            .await,
        )
        .await;
        let names: Vec<(String, String)> = customers["results"]
            .as_array()
            .expect("results")
            .iter()
            .map(|c| {
                (
                    c["customerName"].as_str().unwrap_or_default().to_owned(),
                    c["status"].as_str().unwrap_or_default().to_owned(),
                )
            })
            .collect();
        assert_eq!(
            names,
            [
                ("Amy's Bird Sanctuary".to_owned(), "Active".to_owned()),
                ("Bill's Windsurf Shop".to_owned(), "Active".to_owned()),
                ("Cool Cars".to_owned(), "Archived".to_owned()),
                ("Diego Rodriguez".to_owned(), "Active".to_owned()),
            ]
        );
        let starts: Vec<String> = fake
            .calls()
            .iter()
            .filter_map(|call| call.query.get("query").cloned())
            .filter(|query| query.contains("from Invoice"))
            .collect();
        assert_eq!(
            starts,
            [
                "select * from Invoice STARTPOSITION 1 MAXRESULTS 2",
                "select * from Invoice STARTPOSITION 3 MAXRESULTS 2",
                "select * from Invoice STARTPOSITION 5 MAXRESULTS 2",
            ]
        );
        assert!(
            fake.calls()
                .iter()
                .all(|call| call.query.contains_key("minorversion"))
        );
    }
}

/// The filter a resync adds: QuickBooks' time when the first fetch began,
/// less five minutes, as Intuit's query example writes a time.
const CHANGED_SINCE: &str = "Metadata.LastUpdatedTime > '2026-11-27T08:55:00+0000'";

/// QuickBooks as it answers a query filtered by `Metadata.LastUpdatedTime`:
/// the invoices changed since (one paid since the first sync, one new),
/// paged as any query; a filter on anything but that time, or with another
/// time, is a parse error. Every answer is dated `PLATFORM_DATE` by the scenario.
async fn fake_with_changes() -> Fake {
    let whole = router();
    Fake::start(
        "quickbooks-online",
        Scheme::Bearer,
        ACCESS,
        REFRESH,
        fixture("quickbooks_online/fixtures/unauthorized.json"),
        Arc::new(move |call: &Call| {
            let query = call.query.get("query").cloned().unwrap_or_default();
            let filter = format!("select * from Invoice where {CHANGED_SINCE} STARTPOSITION ");
            if query.starts_with(&filter) {
                Answer::json(
                    200,
                    page_of(
                        &fixture("quickbooks_online/fixtures/invoices-changed.json"),
                        "Invoice",
                        &query,
                    ),
                )
            } else if query.contains("LastUpdatedTime") {
                Answer::json(
                    400,
                    "{\"Fault\":{\"Error\":[{\"Message\":\"Error parsing query\",\"code\":\"4000\"}],\"type\":\"ValidationFault\"}}",
                )
            } else {
                whole(call)
            }
        }),
    )
    .await
}

/// QuickBooks Online asked for what changed, in the shared scenario (`scenarios::changes`).
static CHANGES: Changed = Changed {
    data_type: "invoices",
    fake: || Box::pin(fake_with_changes()),
    filter: |call| {
        call.query
            .get("query")
            .filter(|query| query.contains(CHANGED_SINCE))
            .map(|_| CHANGED_SINCE.to_owned())
    },
    since: CHANGED_SINCE,
    // Two records fill a page of the case's size: an empty page follows.
    calls: 2,
    changed: 1,
    added: 1,
    // A query matching nothing answers an empty `QueryResponse`.
    quiet: |_| {
        Answer::json(
            200,
            r#"{"QueryResponse":{},"time":"2026-11-27T01:00:00.000-08:00"}"#,
        )
    },
    quiet_calls: 1,
};

changes_scenario!(CASE, CHANGES);
