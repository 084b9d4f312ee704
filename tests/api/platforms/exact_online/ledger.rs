//! Exact Online's accounting lists beyond sales: G/L accounts, suppliers
//! and items from the sync APIs (`Timestamp gt 1L` for a whole list, the
//! highest row version seen after it, deletions from `sync/Deleted`), VAT
//! codes, purchase entries as bills (credit notes among them left out),
//! sales credit notes, the division as company info, and the ledger's
//! transaction lines grouped into journal entries that balance (one that
//! does not is reported, budget lines left out, an entry cut by a page held
//! back whole). Fixtures in `fixtures/ledger/` (served by `ledger_fake`),
//! shaped from Exact's reference as its .NET client and the sync API
//! copies carry it (`src/platforms/exact_online/NOTES.md`, "Accounting
//! model"): the `d.results`/`__next` envelope, `/Date(ms)/` dates,
//! `Timestamp` as a string, amounts as numbers.

use serde_json::{Value, json};

use client::types::{ConnectionStatus, PullStatus, QueueDataTypeDataType};
use tributary::data::money::Money;

use super::super::fake::{Answer, Call};
use super::super::ledger_reads::{
    amount, columns, each_balances, issues_of, records, refs_name_accounts, settled, synced,
};
use super::super::{latest, options_for, sync};
use super::{DIVISION, connected, fake};
use crate::helpers::{TestApp, backends};

/// The chart over two pages in code order (types classified, a general
/// account by its side, the bank a bank account, a blocked one archived);
/// suppliers (the customer among the CRM accounts left out, a blocked and
/// an ended one archived); VAT codes with their fractions as percentages;
/// items by whether they are stock items, their accounts and VAT codes
/// resolving; the division with its numbers and an April year.
#[tokio::test]
async fn the_chart_suppliers_vat_codes_items_and_division_sync() {
    for backend in backends() {
        let fake = fake().await;
        let app = TestApp::spawn_with(backend, options_for(&fake, None, 1)).await;
        let (company_id, _) = connected(&app, 600).await;
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
                ["0500", "Equity", "Capital stock", "false", "Active"],
                ["1000", "Asset", "Bank", "true", "Active"],
                ["1300", "Asset", "Accounts receivable", "false", "Active"],
                ["1500", "Liability", "VAT", "false", "Active"],
                ["1600", "Liability", "Accounts payable", "false", "Active"],
                ["4000", "Expense", "General", "false", "Active"],
                [
                    "4999",
                    "Expense",
                    "Sales, general administrative expenses",
                    "false",
                    "Archived"
                ],
                ["7000", "Expense", "Cost of goods", "false", "Active"],
                ["8000", "Income", "Revenue", "false", "Active"],
            ]
        );
        assert_eq!(accounts[1]["accountName"], "ING Bank");
        assert_eq!(
            accounts[1]["accountId"],
            "9a000000-0000-4000-8000-000000001000"
        );
        assert_eq!(accounts[1]["currentBalance"], Value::Null);

        let suppliers = records(&app, company_id, "suppliers").await;
        assert_eq!(
            columns(&suppliers, &["/supplierName", "/status", "/emailAddress"]),
            [
                ["Drukkerij Jansen", "Archived", "-"],
                [
                    "Groothandel De Vries B.V.",
                    "Active",
                    "facturen@devries.example"
                ],
                ["Transport Bakker", "Archived", "-"],
            ]
        );

        let rates = records(&app, company_id, "taxRates").await;
        assert_eq!(
            columns(
                &rates,
                &["/taxRateId", "/name", "/effectiveTaxRate", "/status"]
            ),
            [
                ["5", "BTW 19% (oud)", "19", "Archived"],
                ["2", "BTW 21%", "21", "Active"],
                ["1", "BTW 9%", "9", "Active"],
                ["0", "Geen btw", "0", "Active"],
            ]
        );

        let items = records(&app, company_id, "items").await;
        assert_eq!(
            columns(
                &items,
                &[
                    "/code",
                    "/type",
                    "/status",
                    "/sales/taxRateRef/id",
                    "/purchases/unitPrice"
                ]
            ),
            [
                ["CONSULT", "NonInventory", "Active", "2", "-"],
                ["OLD-1", "NonInventory", "Archived", "-", "1.10"],
                ["PAPER-A4", "Inventory", "Active", "2", "3.25"],
            ]
        );
        refs_name_accounts(
            &accounts,
            &items
                .iter()
                .map(|item| item["sales"].clone())
                .collect::<Vec<_>>(),
            "",
        );
        refs_name_accounts(
            &accounts,
            &items
                .iter()
                .map(|item| item["purchases"].clone())
                .collect::<Vec<_>>(),
            "",
        );
        for item in &items {
            for side in ["sales", "purchases"] {
                let rate = &item[side]["taxRateRef"]["id"];
                assert!(
                    rate.is_null() || rates.iter().any(|r| &r["taxRateId"] == rate),
                    "{item}"
                );
            }
        }

        let company = records(&app, company_id, "companyInfo").await;
        assert_eq!(company.len(), 1);
        let company = &company[0];
        assert_eq!(company["companyInfoId"], DIVISION.to_string());
        assert_eq!(company["companyName"], "Van Leeuwen Advies B.V.");
        assert_eq!(company["registrationNumber"], "12345678");
        assert_eq!(company["taxNumber"], "NL123456789B01");
        assert_eq!(company["baseCurrency"], "EUR");
        assert_eq!(company["financialYearStart"], json!({"month": 4, "day": 1}));
        assert_eq!(company["addresses"][0]["line2"], "2e verdieping");
        assert_eq!(company["addresses"][0]["postalCode"], "1015 AA");

        let sync_calls: Vec<Call> = fake
            .calls()
            .into_iter()
            .filter(|call| call.path.contains("/sync/"))
            .collect();
        assert!(
            sync_calls.iter().all(|call| call
                .query
                .get("$filter")
                .is_some_and(|f| f.starts_with("Timestamp gt 1L"))),
            "a whole list starts at the first row version"
        );
        assert!(
            !sync_calls
                .iter()
                .any(|call| call.path.ends_with("/sync/Deleted")),
            "a whole list needs no deletions"
        );
    }
}

/// Bills from purchase entries over two pages (the purchase credit note
/// left out, a rejected one void, an open one draft) with their lines'
/// accounts and VAT codes, each due what no bill payment settled; credit
/// notes with Exact's negative amounts as the credit given; invoice lines
/// naming their G/L account; what Exact lacks (payments) answers
/// `NotSupported`.
#[tokio::test]
async fn bills_and_credit_notes_name_accounts_and_vat_codes_of_the_connection() {
    for backend in backends() {
        let fake = fake().await;
        let app = TestApp::spawn_with(backend, options_for(&fake, None, 1)).await;
        let (company_id, _) = connected(&app, 600).await;
        synced(
            &app,
            company_id,
            &[
                QueueDataTypeDataType::Accounts,
                QueueDataTypeDataType::TaxRates,
                QueueDataTypeDataType::Invoices,
                QueueDataTypeDataType::Bills,
                QueueDataTypeDataType::CreditNotes,
            ],
        )
        .await;
        let accounts = records(&app, company_id, "accounts").await;
        let rates = records(&app, company_id, "taxRates").await;

        let bills = records(&app, company_id, "bills").await;
        assert_eq!(
            columns(
                &bills,
                &[
                    "/reference",
                    "/status",
                    "/currency",
                    "/totalAmount",
                    "/taxAmount",
                    "/subTotal",
                    "/amountDue"
                ]
            ),
            [
                [
                    "INV-88", "Draft", "USD", "121.00", "21.00", "100.00", "121.00"
                ],
                [
                    "F-2026-1187",
                    "Open",
                    "EUR",
                    "605.00",
                    "105.00",
                    "500.00",
                    "605.00"
                ],
                ["26700004", "Void", "EUR", "50.00", "0.00", "50.00", "50.00"],
            ]
        );
        assert_eq!(
            bills[1]["supplierRef"],
            json!({"id": "c2000000-0000-4000-8000-000000002001", "supplierName": "Groothandel De Vries B.V."})
        );
        assert_eq!(
            columns(
                bills[1]["lineItems"].as_array().expect("lines"),
                &[
                    "/quantity",
                    "/unitAmount",
                    "/subTotal",
                    "/taxAmount",
                    "/accountRef/id",
                    "/taxRateRef/id"
                ]
            ),
            [
                [
                    "100",
                    "4.00",
                    "400.00",
                    "84.00",
                    "9a000000-0000-4000-8000-000000007000",
                    "2"
                ],
                [
                    "1",
                    "100.00",
                    "100.00",
                    "21.00",
                    "9a000000-0000-4000-8000-000000004000",
                    "2"
                ],
            ]
        );
        let bill_payments = records(&app, company_id, "billPayments").await;
        for bill in &bills {
            let lines = bill["lineItems"].as_array().expect("lines");
            let total = lines
                .iter()
                .fold(Money(0), |sum, line| sum + amount(&line["totalAmount"]));
            assert_eq!(total, amount(&bill["totalAmount"]), "{bill}");
            let paid = amount(&bill["totalAmount"]) - amount(&bill["amountDue"]);
            assert_eq!(
                settled(&bill_payments, "Bill", &bill["billId"]),
                paid,
                "{bill}"
            );
            for line in lines {
                let rate = &line["taxRateRef"]["id"];
                assert!(rates.iter().any(|r| &r["taxRateId"] == rate), "{line}");
            }
        }
        refs_name_accounts(&accounts, &bills, "lineItems");

        let notes = records(&app, company_id, "creditNotes").await;
        assert_eq!(
            columns(
                &notes,
                &[
                    "/creditNoteNumber",
                    "/status",
                    "/totalAmount",
                    "/totalTaxAmount",
                    "/subTotal",
                    "/remainingCredit"
                ]
            ),
            [
                ["-", "Draft", "50.00", "10.00", "40.00", "50.00"],
                [
                    "26100007",
                    "Submitted",
                    "121.00",
                    "21.00",
                    "100.00",
                    "121.00"
                ],
            ]
        );
        assert_eq!(
            columns(
                notes[1]["lineItems"].as_array().expect("lines"),
                &["/unitAmount", "/subTotal", "/totalAmount"]
            ),
            [["100.00", "100.00", "121.00"]]
        );
        for note in &notes {
            let allocated = note["allocations"]
                .as_array()
                .expect("allocations")
                .iter()
                .fold(Money(0), |sum, allocation| {
                    sum + amount(&allocation["amount"])
                });
            assert!(allocated + amount(&note["remainingCredit"]) <= amount(&note["totalAmount"]));
        }
        refs_name_accounts(&accounts, &notes, "lineItems");
        let invoices = records(&app, company_id, "invoices").await;
        refs_name_accounts(&accounts, &invoices, "lineItems");
        let named = invoices
            .iter()
            .flat_map(|invoice| invoice["lineItems"].as_array().cloned().unwrap_or_default())
            .filter(|line| !line["accountRef"].is_null())
            .count();
        assert_eq!(named, 2, "the lines Exact gives an account name it");

        let operations = sync(&app, company_id, QueueDataTypeDataType::Payments).await;
        assert_eq!(
            latest(&operations, "payments").status,
            PullStatus::NotSupported
        );
    }
}

/// The ledger's transaction lines as entries that balance, each naming
/// accounts of the chart: the entry the first page cut is held back and
/// read whole from the second page (asked by row version, not `__next`),
/// the one that does not balance is reported by its id and not stored,
/// budget lines are left out.
#[tokio::test]
async fn the_ledgers_entries_balance_and_one_that_does_not_is_reported() {
    for backend in backends() {
        let fake = fake().await;
        let app = TestApp::spawn_with(backend, options_for(&fake, None, 1)).await;
        let (company_id, _) = connected(&app, 600).await;
        synced(
            &app,
            company_id,
            &[
                QueueDataTypeDataType::Accounts,
                QueueDataTypeDataType::JournalEntries,
            ],
        )
        .await;
        let accounts = records(&app, company_id, "accounts").await;

        let journals = records(&app, company_id, "journalEntries").await;
        assert_eq!(
            columns(&journals, &["/journalNumber", "/postedOn", "/source/type"]),
            [
                ["26200001", "2026-10-15", "CashFlow"],
                ["26700001", "2026-10-05", "PurchaseEntry"],
                ["26100001", "2026-10-03", "SalesEntry"],
            ]
        );
        assert_eq!(
            columns(
                journals[0]["journalLines"].as_array().expect("lines"),
                &["/accountRef/id", "/netAmount", "/currency"]
            ),
            [
                ["9a000000-0000-4000-8000-000000001000", "1234.56", "-"],
                ["9a000000-0000-4000-8000-000000001300", "-1234.56", "-"],
            ]
        );
        each_balances(&journals);
        refs_name_accounts(&accounts, &journals, "journalLines");
        assert_eq!(
            issues_of(&app, company_id, "journalEntries").await,
            [["e1000000-0000-4000-8000-000000000004", "AmountDC"]]
        );

        let filters: Vec<String> = fake
            .calls()
            .iter()
            .filter(|call| call.path.ends_with("/sync/Financial/TransactionLines"))
            .map(|call| call.query.get("$filter").cloned().unwrap_or_default())
            .collect();
        assert_eq!(filters, ["Timestamp gt 1L", "Timestamp gt 2008L"]);
    }
}

/// A consent whose rights do not cover purchase entries: Exact's 403 fails
/// bills alone (`PermissionsError`, quoting Exact), nothing is refreshed,
/// the connection stays linked and the chart still syncs.
#[tokio::test]
async fn a_403_on_purchase_entries_fails_bills_alone_and_the_connection_stays_linked() {
    for backend in backends() {
        let fake = fake().await;
        let app = TestApp::spawn_with(backend, options_for(&fake, Some(4), 1)).await;
        let (company_id, connection_id) = connected(&app, 600).await;
        fake.with(|inner| {
            inner.scripted.push_back(Answer::json(
                403,
                r#"{"error":{"code":"","message":{"lang":"","value":"Forbidden: no rights to purchase entries"}}}"#,
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
            message.contains("no rights to purchase entries"),
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
        synced(&app, company_id, &[QueueDataTypeDataType::Accounts]).await;
        assert_eq!(records(&app, company_id, "accounts").await.len(), 9);
    }
}

/// A resync of the chart asks the sync API from the highest row version the
/// first sync saw (`Timestamp gt 1290L`), then Exact's deletions of G/L
/// accounts: the renamed account is updated, the new one added, the
/// deleted one flagged; the next resync starts from both new highs.
#[tokio::test]
async fn a_resync_of_the_chart_asks_from_the_highest_row_version_and_flags_deletions() {
    for backend in backends() {
        let fake = fake().await;
        let app = TestApp::spawn_with(backend, options_for(&fake, None, 1)).await;
        let (company_id, _) = connected(&app, 600).await;
        synced(&app, company_id, &[QueueDataTypeDataType::Accounts]).await;
        synced(&app, company_id, &[QueueDataTypeDataType::Accounts]).await;

        let filters = |path: &str| -> Vec<String> {
            fake.calls()
                .iter()
                .filter(|call| call.path.ends_with(path) && !call.query.contains_key("$skiptoken"))
                .map(|call| call.query.get("$filter").cloned().unwrap_or_default())
                .collect()
        };
        assert_eq!(
            filters("/sync/Financial/GLAccounts"),
            ["Timestamp gt 1L", "Timestamp gt 1290L"]
        );
        assert_eq!(
            filters("/sync/Deleted"),
            ["Timestamp gt 1L and EntityType eq 7"]
        );

        let accounts = records(&app, company_id, "accounts").await;
        let by_code = |code: &str| {
            accounts
                .iter()
                .find(|account| account["nominalCode"] == code)
                .cloned()
                .unwrap_or_else(|| panic!("{code} synced"))
        };
        assert_eq!(accounts.len(), 10);
        assert_eq!(by_code("8000")["accountName"], "Omzet diensten");
        assert_eq!(by_code("8100")["classification"], "Income");
        assert_eq!(by_code("4999")["isDeleted"], true);
        assert_eq!(by_code("1000")["isDeleted"], false);

        synced(&app, company_id, &[QueueDataTypeDataType::Accounts]).await;
        assert_eq!(
            filters("/sync/Financial/GLAccounts")
                .last()
                .map(String::as_str),
            Some("Timestamp gt 1302L")
        );
        assert_eq!(
            filters("/sync/Deleted").last().map(String::as_str),
            Some("Timestamp gt 880L and EntityType eq 7")
        );
        assert_eq!(records(&app, company_id, "accounts").await.len(), 10);
    }
}
