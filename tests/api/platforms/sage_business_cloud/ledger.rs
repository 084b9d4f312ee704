//! Sage's accounting lists beyond sales: ledger accounts by type, vendors,
//! tax rates (combined ones by component), products then services, purchase
//! invoices and credit notes with their lines' accounts, contact payments
//! split into payments and bill payments that settle what the documents
//! show paid, the general ledger by transaction (each balancing), and the
//! business's settings
//! and profile as company info.

use serde_json::{Value, json};

use client::types::QueueDataTypeDataType;

use super::super::ledger_reads::{
    amount, columns, each_balances, issues_of, records, refs_name_accounts, settled, synced,
};
use super::super::options_for;
use super::{connected, fake};
use crate::helpers::{TestApp, backends};

/// Ledger accounts classified by their type id (`SPECIAL` unknown), the
/// bank account a bank account, one left out of the chart archived, a
/// quoted nominal code read; vendors without Sage's system contacts; tax
/// rates, a combined one by its components; products (their "Sales
/// Price", stock items `Inventory`), then services.
#[tokio::test]
async fn the_chart_vendors_tax_rates_and_catalogue_sync() {
    for backend in backends() {
        let fake = fake().await;
        let app = TestApp::spawn_with(backend, options_for(&fake, None, 1)).await;
        let (company_id, _) = connected(&app, 1800).await;
        synced(
            &app,
            company_id,
            &[
                QueueDataTypeDataType::Accounts,
                QueueDataTypeDataType::Suppliers,
                QueueDataTypeDataType::TaxRates,
                QueueDataTypeDataType::Items,
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
                    "/status",
                    "/isBankAccount"
                ]
            ),
            [
                ["1100", "Asset", "Active", "false"],
                ["1200", "Asset", "Active", "true"],
                ["2100", "Liability", "Active", "false"],
                ["2200", "Liability", "Active", "false"],
                ["3200", "Equity", "Active", "false"],
                ["4000", "Income", "Active", "false"],
                ["4900", "Income", "Active", "false"],
                ["5000", "Expense", "Active", "false"],
                ["7500", "Expense", "Active", "false"],
                ["7502", "Expense", "Archived", "false"],
                ["9998", "Unknown", "Active", "false"],
            ]
        );
        assert_eq!(accounts[5]["accountType"], "SALES");
        assert_eq!(accounts[5]["accountName"], "Sales Type A");
        assert_eq!(accounts[5]["currentBalance"], Value::Null);

        let suppliers = records(&app, company_id, "suppliers").await;
        assert_eq!(
            columns(&suppliers, &["/supplierName", "/status", "/phone"]),
            [
                ["Greenhouse Glass Ltd", "Archived", "01632 960001"],
                ["Potting Supplies Co", "Active", "01632 960001"],
            ],
            "the system contact is left out"
        );

        let rates = records(&app, company_id, "taxRates").await;
        let combined = rates
            .iter()
            .find(|rate| rate["taxRateId"] == "CA_GST_PST")
            .expect("the combined rate");
        assert_eq!(combined["effectiveTaxRate"], "12");
        assert_eq!(
            columns(
                combined["components"].as_array().expect("components"),
                &["/name", "/rate"]
            ),
            [["GST", "5"], ["PST", "7"]]
        );
        let exempt = rates
            .iter()
            .find(|rate| rate["taxRateId"] == "GB_EXEMPT")
            .expect("exempt");
        assert_eq!(exempt["status"], "Archived");

        let items = records(&app, company_id, "items").await;
        assert_eq!(
            columns(
                &items,
                &[
                    "/code",
                    "/type",
                    "/status",
                    "/sales/unitPrice",
                    "/purchases/unitPrice"
                ]
            ),
            [
                ["GD-1", "Service", "Active", "60.00", "-"],
                ["OLD-9", "NonInventory", "Archived", "1.00", "-"],
                ["RB-1", "NonInventory", "Active", "45.00", "20.00"],
                ["ST-12", "Inventory", "Active", "3.50", "1.20"],
            ]
        );
        for item in &items {
            for side in ["sales", "purchases"] {
                let account = &item[side]["accountRef"];
                assert!(
                    account.is_null() || accounts.iter().any(|a| a["accountId"] == account["id"]),
                    "{item}"
                );
            }
        }
        let lists: Vec<String> = fake
            .calls()
            .iter()
            .filter(|call| call.path == "/products" || call.path == "/services")
            .map(|call| call.path.clone())
            .collect();
        assert_eq!(lists, ["/products", "/services"]);
    }
}

/// Purchase invoices and credit notes with their statuses and lines, every
/// line's account one of the chart; contact payments split by type, each
/// through the ledger account of its bank account, refunds negative, a
/// credit note set against a receipt negative; what each invoice and bill
/// shows paid is what the payments settle.
#[tokio::test]
async fn bills_credit_notes_and_payments_settle_what_the_documents_show_paid() {
    for backend in backends() {
        let fake = fake().await;
        let app = TestApp::spawn_with(backend, options_for(&fake, None, 1)).await;
        let (company_id, _) = connected(&app, 1800).await;
        synced(
            &app,
            company_id,
            &[
                QueueDataTypeDataType::Bills,
                QueueDataTypeDataType::CreditNotes,
                QueueDataTypeDataType::Payments,
                QueueDataTypeDataType::BillPayments,
                QueueDataTypeDataType::Invoices,
                QueueDataTypeDataType::Accounts,
            ],
        )
        .await;

        let bills = records(&app, company_id, "bills").await;
        assert_eq!(
            columns(
                &bills,
                &["/reference", "/status", "/totalAmount", "/amountDue"]
            ),
            [
                ["POT-890", "Draft", "30.00", "30.00"],
                ["POT-881", "Open", "120.00", "120.00"],
                ["POT-874", "PartiallyPaid", "240.00", "90.00"],
                ["GLA-19", "Paid", "60.00", "0.00"],
                ["GLA-17", "Void", "48.00", "0.00"],
            ]
        );
        assert_eq!(bills[3]["paidOnDate"], "2026-11-03");
        assert_eq!(
            bills[1]["lineItems"][0]["taxRateRef"],
            json!({"id": "GB_STANDARD", "name": "Standard 20.00%"})
        );
        let notes = records(&app, company_id, "creditNotes").await;
        assert_eq!(
            columns(
                &notes,
                &["/creditNoteNumber", "/status", "/remainingCredit"]
            ),
            [
                ["SCN-3", "Draft", "6.00"],
                ["SCN-1", "Submitted", "24.00"],
                ["SCN-2", "Paid", "0.00"],
            ]
        );
        let accounts = records(&app, company_id, "accounts").await;
        let invoices = records(&app, company_id, "invoices").await;
        for document in bills.iter().chain(&notes).chain(&invoices) {
            for line in document["lineItems"].as_array().expect("lines") {
                assert!(
                    accounts
                        .iter()
                        .any(|a| a["accountId"] == line["accountRef"]["id"]),
                    "{line}"
                );
            }
        }

        let payments = records(&app, company_id, "payments").await;
        assert_eq!(
            columns(
                &payments,
                &["/reference", "/totalAmount", "/accountRef/name"]
            ),
            [
                ["REFUND-1118", "-10.00", "Current (1200)"],
                ["CARD-1115", "40.00", "Current (1200)"],
                ["BACS-1105", "288.00", "Current (1200)"],
                ["BACS-1030", "99.99", "Current (1200)"],
            ]
        );
        assert_eq!(
            columns(
                payments[2]["allocations"].as_array().expect("allocations"),
                &["/type", "/amount"]
            ),
            [["Invoice", "300.00"], ["CreditNote", "-12.00"]]
        );
        let bank = accounts
            .iter()
            .find(|a| a["accountId"] == payments[0]["accountRef"]["id"])
            .expect("the bank account's ledger account");
        assert_eq!(bank["isBankAccount"], true);
        for invoice in invoices
            .iter()
            .filter(|invoice| invoice["status"] != "Void")
        {
            let paid = amount(&invoice["totalAmount"]) - amount(&invoice["amountDue"]);
            assert_eq!(
                settled(&payments, "Invoice", &invoice["invoiceId"]),
                paid,
                "{invoice}"
            );
        }

        let bill_payments = records(&app, company_id, "billPayments").await;
        assert_eq!(
            columns(&bill_payments, &["/reference", "/totalAmount"]),
            [
                ["POT credit", "-5.00"],
                ["GLA-19", "60.00"],
                ["POT-874 part", "150.00"],
            ]
        );
        for bill in bills
            .iter()
            .filter(|bill| bill["status"] != "Void" && bill["status"] != "Draft")
        {
            let paid = amount(&bill["totalAmount"]) - amount(&bill["amountDue"]);
            assert_eq!(
                settled(&bill_payments, "Bill", &bill["billId"]),
                paid,
                "{bill}"
            );
        }
        let bank_calls = fake
            .calls()
            .iter()
            .filter(|call| call.path == "/bank_accounts")
            .count();
        assert_eq!(bank_calls, 2, "once for each side's page");
    }
}

/// The general ledger, read by date window (the open one before the
/// accounts' start, then each month to the current one, open at its end),
/// every page of each: entries from a sales invoice, a customer receipt, a
/// manual journal and the opening balances, each balancing on accounts of
/// the chart, with the document that made it as the source; a deleted
/// transaction left out, one that does not balance reported; the business
/// is one company info record from its financial settings and profile.
#[tokio::test]
async fn the_ledger_balances_by_transaction_and_the_business_is_one_record() {
    for backend in backends() {
        let fake = fake().await;
        let app = TestApp::spawn_with(backend, options_for(&fake, Some(2), 1)).await;
        let (company_id, _) = connected(&app, 1800).await;
        let kinds = [
            QueueDataTypeDataType::JournalEntries,
            QueueDataTypeDataType::CompanyInfo,
            QueueDataTypeDataType::Accounts,
        ];
        synced(&app, company_id, &kinds).await;

        let entries = records(&app, company_id, "journalEntries").await;
        let mut rows = columns(
            &entries,
            &[
                "/journalEntryId",
                "/journalNumber",
                "/postedOn",
                "/source/type",
                "/source/id",
            ],
        );
        rows.sort();
        assert_eq!(
            rows,
            [
                [
                    "e0e0e0e0f1f1a2a2b3b3c4c4d5d5e6e6",
                    "OPENING",
                    "2026-03-31",
                    "JOURNAL",
                    "-"
                ],
                [
                    "e2e2e2e2f3f3a4a4b5b5c6c6d7d7e8e8",
                    "SI-2",
                    "2026-10-03",
                    "SALES_INVOICE",
                    "6c2d3e4f5a6b47c8d9e0f1a2b3c4d5e6"
                ],
                [
                    "e3e3e3e3f4f4a5a5b6b6c7c7d8d8e9e9",
                    "RCPT-1",
                    "2026-10-20",
                    "CUSTOMER_RECEIPT",
                    "c3c3c3c3d4d4e5e5f6f6a7a7b8b8c9c9"
                ],
                [
                    "t9a9a9a9b0b0c1c1d2d2e3e3f4f4a5a5",
                    "JNL-1",
                    "2026-10-31",
                    "JOURNAL",
                    "a9a9a9a9b0b0c1c1d2d2e3e3f4f4a5a5"
                ],
            ]
        );
        let invoice = entries
            .iter()
            .find(|entry| entry["journalNumber"] == "SI-2")
            .expect("the invoice's entry");
        let mut lines = columns(
            invoice["journalLines"].as_array().expect("lines"),
            &["/accountRef/name", "/netAmount"],
        );
        lines.sort();
        assert_eq!(
            lines,
            [
                ["Sales Tax Control Account (2200)", "-205.76"],
                ["Sales Type A (4000)", "-1028.80"],
                ["Trade Debtors (1100)", "1234.56"],
            ]
        );
        each_balances(&entries);
        let accounts = records(&app, company_id, "accounts").await;
        refs_name_accounts(&accounts, &entries, "journalLines");
        assert_eq!(
            issues_of(&app, company_id, "journalEntries").await,
            [["e1e1e1e1f2f2a3a3b4b4c5c5d6d6e7e7", "debit"]]
        );

        // The windows asked for: before the accounts' start (2026-04-01),
        // then each month to today's, whose end is open.
        let today = chrono::Utc::now().date_naive();
        let mut expected = vec![(String::new(), "2026-03-31".to_owned())];
        let mut month = chrono::NaiveDate::from_ymd_opt(2026, 4, 1).expect("a date");
        loop {
            let next = month + chrono::Months::new(1);
            if next > today {
                expected.push((month.to_string(), String::new()));
                break;
            }
            let end = next.pred_opt().expect("a date");
            expected.push((month.to_string(), end.to_string()));
            month = next;
        }
        for path in ["/ledger_entries", "/transactions"] {
            let windows: Vec<(String, String)> = fake
                .calls()
                .iter()
                .filter(|call| call.path == path)
                .filter(|call| call.query.get("page").map(String::as_str) == Some("1"))
                .map(|call| {
                    let get = |name: &str| call.query.get(name).cloned().unwrap_or_default();
                    (get("from_date"), get("to_date"))
                })
                .collect();
            assert_eq!(windows, expected, "{path}");
        }
        let pages = fake
            .calls()
            .iter()
            .filter(|call| {
                call.path == "/ledger_entries"
                    && call.query.get("from_date").map(String::as_str) == Some("2026-10-01")
            })
            .count();
        assert_eq!(pages, 4, "October's seven entries, two a page");

        let company = records(&app, company_id, "companyInfo").await;
        assert_eq!(company.len(), 1);
        let acme = &company[0];
        assert_eq!(acme["companyName"], "Acme Garden Centre Ltd");
        assert_eq!(acme["baseCurrency"], "GBP");
        assert_eq!(acme["taxNumber"], "GB123456789");
        assert_eq!(acme["registrationNumber"], Value::Null);
        assert_eq!(acme["financialYearStart"], json!({"month": 4, "day": 1}));
        assert_eq!(acme["addresses"][0]["postalCode"], "EX1 1AA");
        assert_eq!(acme["addresses"][0]["country"], "United Kingdom (GB)");
        assert_eq!(acme["website"], "www.acmegarden.example");
    }
}
