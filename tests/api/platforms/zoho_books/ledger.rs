//! Zoho Books' accounting lists beyond sales: the chart of accounts with
//! balances, vendors as suppliers, taxes, items, bills and credit notes
//! (paged, then asked for by `last_modified_time`), the organization as
//! company info, and a consent without a list's scope failing only that
//! data type; payments and journals are in [`super::postings`].

use serde_json::{Value, json};
use uuid::Uuid;

use client::types::{ConnectionStatus, PullStatus, QueueDataTypeDataType};

use super::super::fake::{Answer, Fake};
use super::super::ledger_reads::{columns, records, synced};
use super::super::{authorize, latest, options_for, set_oauth_client, sync};
use super::{ACCESS, ORGANIZATION, body, fake};
use crate::connections::{new_company, new_connection};
use crate::helpers::{TestApp, backends};

/// A company with a Zoho Books connection authorized at `fake`, four
/// records a page.
pub(super) async fn connected(app: &TestApp) -> (Uuid, Uuid) {
    set_oauth_client(app, "zoho-books").await;
    let company_id = new_company(app, "Zillium Inc").await;
    let connection_id = new_connection(app, company_id, "zoho-books").await;
    let authorized = authorize(
        app,
        company_id,
        connection_id,
        &body(ACCESS, ORGANIZATION, None),
        false,
    )
    .await;
    assert_eq!(authorized.status(), 200);
    (company_id, connection_id)
}

/// The calls `fake` received at `path`, as their query strings.
pub(super) fn calls_to(fake: &Fake, path: &str) -> Vec<std::collections::BTreeMap<String, String>> {
    fake.calls()
        .into_iter()
        .filter(|call| call.path == format!("/books/v3/{path}"))
        .map(|call| call.query.into_iter().collect())
        .collect()
}

/// The chart with balances (`showbalance`), every account type mapped and
/// one the document does not list `Unknown`, inactive accounts archived;
/// vendors (`contact_type=vendor`) as suppliers; taxes, the compound one
/// compound.
#[tokio::test]
async fn the_chart_vendors_and_taxes_sync_whole_with_balances() {
    for backend in backends() {
        let fake = fake().await;
        let app = TestApp::spawn_with(backend, options_for(&fake, Some(4), 1)).await;
        let (company_id, _) = connected(&app).await;
        synced(
            &app,
            company_id,
            &[
                QueueDataTypeDataType::Accounts,
                QueueDataTypeDataType::Suppliers,
                QueueDataTypeDataType::TaxRates,
            ],
        )
        .await;

        let accounts = records(&app, company_id, "accounts").await;
        let listed = columns(
            &accounts,
            &[
                "/nominalCode",
                "/accountName",
                "/classification",
                "/status",
                "/isBankAccount",
            ],
        );
        assert_eq!(
            listed,
            [
                ["1000", "Petty Cash", "Asset", "Active", "true"],
                ["1010", "Undeposited Funds", "Asset", "Active", "true"],
                ["1020", "Business Checking", "Asset", "Active", "true"],
                ["1100", "Accounts Receivable", "Asset", "Active", "false"],
                ["2000", "Accounts Payable", "Liability", "Active", "false"],
                ["2100", "Business Card", "Liability", "Active", "true"],
                ["2500", "Notes Payable", "Liability", "Active", "false"],
                ["3000", "Owner's Equity", "Equity", "Active", "false"],
                ["4000", "Sales", "Income", "Active", "false"],
                ["5000", "Cost of Goods Sold", "Expense", "Active", "false"],
                ["6100", "Old Marketing", "Expense", "Archived", "false"],
                ["6900", "Other Expenses", "Expense", "Active", "false"],
                ["-", "Payment Clearing", "Unknown", "Active", "false"],
            ]
        );
        assert_eq!(accounts[2]["currentBalance"], "8420.50");
        assert_eq!(accounts[2]["accountType"], "bank");
        assert_eq!(accounts[2]["accountId"], "460000000000365");
        assert_eq!(accounts[12]["accountType"], "payment_clearing");
        let chart_calls = calls_to(&fake, "chartofaccounts");
        assert_eq!(chart_calls.len(), 1, "no page_context: the only page");
        assert_eq!(chart_calls[0]["showbalance"], "true");
        assert_eq!(chart_calls[0]["filter_by"], "AccountType.All");
        assert_eq!(chart_calls[0]["organization_id"], ORGANIZATION);

        let suppliers = records(&app, company_id, "suppliers").await;
        let named = columns(&suppliers, &["/supplierId", "/supplierName", "/status"]);
        assert_eq!(
            named,
            [
                ["460000000000005", "Kraus Office Supplies", "Archived"],
                ["460000000044001", "Richards Electric Company", "Active"],
                ["460000000000004", "Steel Vendor AG", "Active"],
            ]
        );
        assert_eq!(suppliers[2]["defaultCurrency"], "EUR");
        assert_eq!(suppliers[2]["emailAddress"], "ap@steel.example");
        let vendor_calls = calls_to(&fake, "contacts");
        assert_eq!(vendor_calls.len(), 1);
        assert_eq!(vendor_calls[0]["contact_type"], "vendor");
        assert_eq!(vendor_calls[0]["filter_by"], "Status.All");

        let taxes = records(&app, company_id, "taxRates").await;
        let rates = columns(
            &taxes,
            &["/name", "/effectiveTaxRate", "/components/0/isCompound"],
        );
        assert!(
            rates
                .iter()
                .any(|row| row == &["VAT (12.5%)", "12.5", "false"]),
            "{rates:?}"
        );
        assert!(
            rates
                .iter()
                .any(|row| row == &["Reduced VAT", "7", "false"]),
            "{rates:?}"
        );
        assert!(
            rates
                .iter()
                .any(|row| row == &["Sales Group", "10.5", "true"]),
            "{rates:?}"
        );
        assert_eq!(rates.len(), 3);
    }
}

/// Items name accounts of the chart and taxes of the tax list; an
/// inventory item has stock, one only sold has no purchase side. The
/// organization is one company info record.
#[tokio::test]
async fn items_refer_to_the_chart_and_the_organization_is_one_record() {
    for backend in backends() {
        let fake = fake().await;
        let app = TestApp::spawn_with(backend, options_for(&fake, Some(4), 1)).await;
        let (company_id, _) = connected(&app).await;
        synced(
            &app,
            company_id,
            &[
                QueueDataTypeDataType::Items,
                QueueDataTypeDataType::Accounts,
                QueueDataTypeDataType::TaxRates,
                QueueDataTypeDataType::CompanyInfo,
            ],
        )
        .await;

        let items = records(&app, company_id, "items").await;
        let names = columns(&items, &["/name", "/type", "/status"]);
        assert_eq!(
            names,
            [
                ["Basic Monthly", "Service", "Active"],
                ["Hard Drive", "NonInventory", "Active"],
                ["Old Cable", "NonInventory", "Archived"],
                ["Steel Bracket", "Inventory", "Active"],
            ]
        );
        let drive = &items[1];
        assert_eq!(drive["code"], "s12345");
        assert_eq!(drive["sales"]["unitPrice"], "120.00");
        assert_eq!(
            drive["sales"]["accountRef"],
            json!({"id": "460000000000388", "name": "Sales"})
        );
        assert_eq!(
            drive["sales"]["taxRateRef"],
            json!({"id": "460000000027005", "name": "VAT (12.5%)"})
        );
        assert_eq!(drive["purchases"]["unitPrice"], "80.00");
        assert_eq!(
            drive["purchases"]["description"],
            "500GB, from Steel Vendor AG"
        );
        assert_eq!(items[0]["purchases"], Value::Null, "only sold");
        assert_eq!(items[2]["sales"]["accountRef"], Value::Null);
        assert_eq!(items[2]["sales"]["taxRateRef"], Value::Null);
        assert_eq!(items[3]["quantityOnHand"], "120");
        let accounts = records(&app, company_id, "accounts").await;
        let taxes = records(&app, company_id, "taxRates").await;
        for item in &items {
            for side in ["sales", "purchases"] {
                let account = &item[side]["accountRef"];
                assert!(
                    account.is_null() || accounts.iter().any(|a| a["accountId"] == account["id"]),
                    "{item}"
                );
                let tax = &item[side]["taxRateRef"];
                assert!(
                    tax.is_null() || taxes.iter().any(|t| t["taxRateId"] == tax["id"]),
                    "{item}"
                );
            }
        }

        let company = records(&app, company_id, "companyInfo").await;
        assert_eq!(company.len(), 1);
        let zillium = &company[0];
        assert_eq!(zillium["companyInfoId"], ORGANIZATION);
        assert_eq!(zillium["companyName"], "Zillium Inc");
        assert_eq!(zillium["legalName"], Value::Null);
        assert_eq!(zillium["registrationNumber"], "HRB 123456");
        assert_eq!(zillium["taxNumber"], "DE123456789");
        assert_eq!(zillium["baseCurrency"], "EUR");
        assert_eq!(
            zillium["financialYearStart"],
            json!({"month": 4, "day": 1}),
            "Zoho's month 3 counts from 0"
        );
        assert_eq!(
            zillium["addresses"],
            json!([{"type": "Street", "line1": "Friedrichstrasse 100", "line2": null,
                "city": "Berlin", "region": "Berlin", "postalCode": "10117", "country": "Germany"}])
        );
        assert_eq!(zillium["website"], "www.zillium.example");
        assert!(
            zillium["createdDate"]
                .as_str()
                .is_some_and(|date| date.starts_with("2012-02-15")),
            "{zillium}"
        );
    }
}

/// Bills page by `page_context.has_more_page` with each status mapped by
/// word and balance; credit notes keep what remains of their credit. A
/// resync asks for both with `last_modified_time`.
#[tokio::test]
async fn bills_and_credit_notes_page_and_then_ask_only_for_what_changed() {
    for backend in backends() {
        let fake = fake().await;
        let app = TestApp::spawn_with(backend, options_for(&fake, Some(4), 1)).await;
        let (company_id, _) = connected(&app).await;
        let kinds = [
            QueueDataTypeDataType::Bills,
            QueueDataTypeDataType::CreditNotes,
            QueueDataTypeDataType::Suppliers,
        ];
        synced(&app, company_id, &kinds).await;

        let bills = records(&app, company_id, "bills").await;
        let listed = columns(
            &bills,
            &["/reference", "/status", "/totalAmount", "/amountDue"],
        );
        assert_eq!(
            listed,
            [
                ["00454", "Open", "40.00", "40.00"],
                ["00455", "PartiallyPaid", "250.00", "100.00"],
                ["00456", "Paid", "60.00", "0.00"],
                ["00457", "PartiallyPaid", "300.00", "120.00"],
                ["00458", "Draft", "75.00", "75.00"],
                ["00459", "Void", "20.00", "0.00"],
            ],
            "newest first"
        );
        assert_eq!(bills[0]["note"], "4321133");
        assert_eq!(bills[0]["dueDate"], "2026-11-26");
        assert_eq!(bills[0]["currency"], "EUR");
        assert_eq!(
            bills[0]["supplierRef"],
            json!({"id": "460000000000004", "supplierName": "Steel Vendor AG"})
        );
        let suppliers = records(&app, company_id, "suppliers").await;
        for bill in &bills {
            assert!(
                suppliers
                    .iter()
                    .any(|s| s["supplierId"] == bill["supplierRef"]["id"]),
                "{bill}"
            );
        }
        let pages: Vec<(String, String)> = calls_to(&fake, "bills")
            .into_iter()
            .map(|query| (query["page"].clone(), query["per_page"].clone()))
            .collect();
        assert_eq!(
            pages,
            [
                ("1".to_owned(), "4".to_owned()),
                ("2".to_owned(), "4".to_owned())
            ]
        );

        let notes = records(&app, company_id, "creditNotes").await;
        let credits = columns(
            &notes,
            &["/creditNoteNumber", "/status", "/remainingCredit"],
        );
        assert_eq!(
            credits,
            [
                ["CN-29", "Draft", "450.00"],
                ["CN-30", "Submitted", "100.00"],
                ["CN-31", "PartiallyPaid", "20.00"],
                ["CN-32", "Paid", "0.00"],
                ["CN-33", "Void", "0.00"],
            ]
        );
        assert_eq!(
            notes[0]["customerRef"],
            json!({"id": "460000000026049", "companyName": "Bowman and Co"})
        );
        assert_eq!(notes[0]["allocations"], json!([]));

        synced(&app, company_id, &kinds[..2]).await;
        for path in ["bills", "creditnotes"] {
            let calls = calls_to(&fake, path);
            let last = calls.last().expect("a resync");
            assert!(
                last.get("last_modified_time")
                    .is_some_and(|since| since.ends_with("+0000")),
                "{path}: {last:?}"
            );
            assert!(
                !calls[0].contains_key("last_modified_time"),
                "{path}: the first sync fetches whole"
            );
        }
    }
}

/// Zoho answers a list the consent's scopes do not cover with the 401 it
/// gives a rejected token: while the token still reads the organization
/// list, only that data type fails (`PermissionsError`, naming the scope),
/// nothing is refreshed, and the connection stays linked.
#[tokio::test]
async fn a_consent_without_the_bills_scope_fails_bills_alone() {
    for backend in backends() {
        let fake = fake().await;
        let app = TestApp::spawn_with(backend, options_for(&fake, Some(4), 1)).await;
        let (company_id, connection_id) = connected(&app).await;
        synced(&app, company_id, &[QueueDataTypeDataType::Invoices]).await;

        fake.with(|inner| {
            inner.scripted.push_back(Answer::json(
                401,
                r#"{"code":57,"message":"You are not authorized to perform this operation"}"#,
            ))
        });
        let operations = sync(&app, company_id, QueueDataTypeDataType::Bills).await;
        let operation = latest(&operations, "bills");
        assert_eq!(
            operation.status,
            PullStatus::PermissionsError,
            "{operation:?}"
        );
        let message = operation.error_message.clone().unwrap_or_default();
        assert!(
            message.contains("ZohoBooks.bills.READ")
                && message.contains("consent does not cover this data type"),
            "{message}"
        );
        assert_eq!(fake.token_calls(), 0, "not refreshed");
        let connection = app
            .client
            .get_connection(&company_id, &connection_id)
            .await
            .expect("found")
            .into_inner();
        assert_eq!(connection.status, ConnectionStatus::Linked);
        assert_eq!(records(&app, company_id, "invoices").await.len(), 7);
        synced(&app, company_id, &[QueueDataTypeDataType::Invoices]).await;
    }
}
