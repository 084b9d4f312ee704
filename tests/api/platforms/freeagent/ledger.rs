//! FreeAgent's accounting lists beyond sales, from fixtures shaped as
//! https://dev.freeagent.com/docs documents them (amounts as strings,
//! `Link`-header paging): here the fake's answers and the chart (categories
//! by group and code range, sub accounts beside their parents, bank
//! accounts in place of the 750 categories, a credit card a liability),
//! suppliers, the company's VAT rates, price list items and the company;
//! [`documents`]: bills, credit notes and the payments that settle them;
//! [`syncing`]: a 403 that fails one data type, journal entries refused,
//! and resyncs that ask only for what changed.

mod documents;
mod syncing;

use std::path::Path;

use serde_json::{Value, json};

use client::types::QueueDataTypeDataType;

use super::super::fake::{Answer, Call, fixture};
use super::super::ledger_reads::{columns, records, refs_name_accounts, synced};
use super::super::options_for;
use super::{connected, fake};
use crate::helpers::{TestApp, backends};
/// The fixture of page `page` of the ledger list `name`.
fn ledger_fixture(name: &str, page: u64) -> String {
    format!("freeagent/fixtures/ledger/{name}-{page}.json")
}

/// Whether the ledger list `name` has a page `page`.
fn has_page(name: &str, page: u64) -> bool {
    let path = format!(
        "{}/tests/api/platforms/{}",
        env!("CARGO_MANIFEST_DIR"),
        ledger_fixture(name, page)
    );
    Path::new(&path).exists()
}

/// Page `page` of the ledger list `name` (served at `/v2/{resource}`), with
/// the `Link` header FreeAgent sends: `next` and `last` while another page
/// follows, `first` and `prev` after the first.
fn ledger_page(resource: &str, name: &str, call: &Call) -> Answer {
    let page: u64 = call
        .query
        .get("page")
        .and_then(|page| page.parse().ok())
        .unwrap_or(1);
    if !has_page(name, page) {
        return Answer::json(200, format!("{{\"{resource}\": []}}"));
    }
    let mut answer = Answer::json(200, fixture(&ledger_fixture(name, page)));
    let link = |page: u64, rel: &str| {
        format!("<https://api.freeagent.com/v2/{resource}?page={page}&per_page=100>; rel=\"{rel}\"")
    };
    let mut links = Vec::new();
    if page > 1 {
        links.push(link(page - 1, "prev"));
        links.push(link(1, "first"));
    }
    if has_page(name, page + 1) {
        links.push(link(page + 1, "next"));
        let mut last = page + 1;
        while has_page(name, last + 1) {
            last += 1;
        }
        links.push(link(last, "last"));
    }
    if !links.is_empty() {
        answer.headers.push(("Link".to_owned(), links.join(", ")));
    }
    answer
}

/// The fake's answer to a call of the accounting lists; `None` for the
/// sales lists and the company.
pub(super) fn answer(call: &Call) -> Option<Answer> {
    let query = |name: &str| call.query.get(name).map(String::as_str);
    Some(match call.path.as_str() {
        "/v2/categories" if query("sub_accounts") == Some("true") => Answer::json(
            200,
            fixture("freeagent/fixtures/ledger/categories-sub_accounts.json"),
        ),
        "/v2/categories" => Answer::json(200, fixture("freeagent/fixtures/ledger/categories.json")),
        "/v2/contacts" if query("view") == Some("suppliers") => {
            ledger_page("contacts", "contacts-suppliers", call)
        }
        "/v2/bank_transaction_explanations" => {
            let bank = query("bank_account")?.rsplit('/').next()?.to_owned();
            ledger_page(
                "bank_transaction_explanations",
                &format!("bank_transaction_explanations-{bank}"),
                call,
            )
        }
        path => {
            let resource = path.strip_prefix("/v2/")?;
            let lists = [
                "bank_accounts",
                "bills",
                "credit_notes",
                "credit_note_reconciliations",
                "price_list_items",
            ];
            if !lists.contains(&resource) {
                return None;
            }
            ledger_page(resource, resource, call)
        }
    })
}

/// Categories by group and code, sub accounts beside their parents, the 750
/// categories left to the bank accounts (a card a liability with what is
/// owed positive); suppliers by name; the company's VAT rates; price list
/// items by type; the company with its numbers and its May year.
#[tokio::test]
async fn the_chart_suppliers_tax_rates_items_and_company_sync() {
    for backend in backends() {
        let fake = fake().await;
        let app = TestApp::spawn_with(backend, options_for(&fake, None, 1)).await;
        let (company_id, _) = connected(&app, 3600).await;
        synced(
            &app,
            company_id,
            &[
                QueueDataTypeDataType::Accounts,
                QueueDataTypeDataType::Suppliers,
                QueueDataTypeDataType::TaxRates,
                QueueDataTypeDataType::Items,
                QueueDataTypeDataType::CompanyInfo,
            ],
        )
        .await;

        let accounts = records(&app, company_id, "accounts").await;
        let row = |code: &str, class: &str, kind: &str, bank: &str| {
            [code, class, kind, bank, "Active"]
                .map(str::to_owned)
                .to_vec()
        };
        assert_eq!(
            columns(
                &accounts,
                &[
                    "/nominalCode",
                    "/classification",
                    "/accountType",
                    "/isBankAccount",
                    "/status"
                ]
            ),
            [
                row("001", "Income", "income", "false"),
                row("051", "Income", "general", "false"),
                row("101", "Expense", "cost_of_sales", "false"),
                row("285", "Expense", "admin_expenses", "false"),
                row("359", "Expense", "admin_expenses", "false"),
                row("602", "Asset", "general", "false"),
                row("602-1", "Asset", "general", "false"),
                row("609", "Asset", "general", "false"),
                row("609-1", "Asset", "general", "false"),
                row("681", "Asset", "general", "false"),
                row("796", "Liability", "general", "false"),
                row("819", "Liability", "general", "false"),
                row("907", "Liability", "general", "false"),
                row("907-1", "Liability", "general", "false"),
                row("921", "Equity", "general", "false"),
                row("-", "Liability", "CreditCardAccount", "true"),
                row("-", "Asset", "StandardBankAccount", "true"),
            ]
        );
        assert_eq!(
            columns(
                &accounts[15..],
                &["/accountId", "/accountName", "/currency", "/currentBalance"]
            ),
            [
                ["bank-account-2", "Business Card", "GBP", "120.00"],
                ["bank-account-1", "Current Account", "GBP", "15234.56"],
            ]
        );
        assert_eq!(accounts[0]["accountId"], "001");
        assert_eq!(accounts[0]["description"], "Income (normally VATable)");
        assert_eq!(accounts[8]["accountName"], "Stock: Widgets");
        let calls = fake.calls();
        assert!(calls.iter().any(|call| call.path == "/v2/bank_accounts"
            && call.query.get("page").map(String::as_str) == Some("2")
            && call.query.get("per_page").map(String::as_str) == Some("100")));

        let suppliers = records(&app, company_id, "suppliers").await;
        assert_eq!(
            columns(
                &suppliers,
                &[
                    "/supplierId",
                    "/supplierName",
                    "/emailAddress",
                    "/phone",
                    "/status"
                ]
            ),
            [
                [
                    "21",
                    "Jo Bloggs",
                    "jo@bloggs.example",
                    "07700 900456",
                    "Active"
                ],
                [
                    "20",
                    "Office Supplies Ltd",
                    "sales@officesupplies.example",
                    "0161 496 0000",
                    "Active"
                ],
            ]
        );
        assert!(calls.iter().any(|call| call.path == "/v2/contacts"
            && call.query.get("view").map(String::as_str) == Some("suppliers")));

        let rates = records(&app, company_id, "taxRates").await;
        assert_eq!(
            columns(
                &rates,
                &[
                    "/taxRateId",
                    "/name",
                    "/effectiveTaxRate",
                    "/components/0/name"
                ]
            ),
            [
                ["sales-tax-0", "VAT 0%", "0", "VAT"],
                ["sales-tax-20", "VAT 20%", "20", "VAT"],
                ["sales-tax-5", "VAT 5%", "5", "VAT"],
            ]
        );

        let items = records(&app, company_id, "items").await;
        assert_eq!(
            columns(
                &items,
                &[
                    "/itemId",
                    "/code",
                    "/type",
                    "/sales/unitPrice",
                    "/sales/description",
                    "/purchases"
                ]
            ),
            [
                ["1", "A001", "NonInventory", "10.99", "Apple", "-"],
                [
                    "2",
                    "CONSULT",
                    "Service",
                    "95.00",
                    "Consulting, per hour",
                    "-"
                ],
                ["3", "WIDGET", "Inventory", "4.50", "Widget", "-"],
            ]
        );
        let sides: Vec<Value> = items.iter().map(|item| item["sales"].clone()).collect();
        refs_name_accounts(&accounts, &sides, "");
        assert!(sides.iter().all(|side| side["accountRef"]["id"] == "001"));

        let company = records(&app, company_id, "companyInfo").await;
        assert_eq!(company.len(), 1);
        let company = &company[0];
        assert_eq!(company["companyInfoId"], "1");
        assert_eq!(company["companyName"], "Acme Trading Ltd");
        assert_eq!(company["registrationNumber"], "SC123456");
        assert_eq!(company["taxNumber"], "GB123456789");
        assert_eq!(company["baseCurrency"], "GBP");
        assert_eq!(company["financialYearStart"], json!({"month": 5, "day": 1}));
        assert_eq!(company["phone"], "0131 496 0000");
        assert_eq!(company["website"], "https://acme.example");
        assert_eq!(
            company["addresses"],
            json!([{
                "type": "Unknown",
                "line1": "1 High Street",
                "line2": "Old Town",
                "city": "Edinburgh",
                "region": "Midlothian",
                "postalCode": "EH1 1AA",
                "country": "United Kingdom"
            }])
        );
    }
}
