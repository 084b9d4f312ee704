//! Sage's accounting lists beyond sales: ledger accounts by type, vendors,
//! tax rates (combined ones by component), products then services, purchase
//! invoices and credit notes with their lines' accounts, contact payments
//! split into payments and bill payments that settle what the documents
//! show paid, manual journals that balance, and the business's settings
//! and profile as company info.

use serde_json::{Value, json};

use client::types::QueueDataTypeDataType;
use tributary::data::money::Money;

use super::super::ledger_reads::{amount, columns, records, settled, synced};
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

/// Manual journals balance on accounts of the chart (a deleted one left
/// out); the business is one company info record from its financial
/// settings and profile; a resync asks by `updated_or_created_since`.
#[tokio::test]
async fn journals_balance_and_the_business_is_one_record() {
    for backend in backends() {
        let fake = fake().await;
        let app = TestApp::spawn_with(backend, options_for(&fake, None, 1)).await;
        let (company_id, _) = connected(&app, 1800).await;
        let kinds = [
            QueueDataTypeDataType::JournalEntries,
            QueueDataTypeDataType::CompanyInfo,
            QueueDataTypeDataType::Accounts,
        ];
        synced(&app, company_id, &kinds).await;

        let entries = records(&app, company_id, "journalEntries").await;
        assert_eq!(
            columns(&entries, &["/journalNumber", "/postedOn", "/description"]),
            [
                ["JNL-2", "2026-11-30", "Suspense cleared"],
                ["JNL-1", "2026-10-31", "Office costs accrued"],
            ]
        );
        assert_eq!(
            columns(
                entries[0]["journalLines"].as_array().expect("lines"),
                &["/accountRef/name", "/netAmount"]
            ),
            [
                ["Suspense Account (9998)", "-25.50"],
                ["Other Income (4900)", "-4.50"],
                ["Current (1200)", "30.00"],
            ]
        );
        let accounts = records(&app, company_id, "accounts").await;
        for entry in &entries {
            let lines = entry["journalLines"].as_array().expect("lines");
            let balance = lines
                .iter()
                .fold(Money(0), |sum, line| sum + amount(&line["netAmount"]));
            assert_eq!(balance, Money(0), "{entry}");
            for line in lines {
                assert!(
                    accounts
                        .iter()
                        .any(|a| a["accountId"] == line["accountRef"]["id"]),
                    "{line}"
                );
            }
        }

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

        synced(&app, company_id, &kinds[..1]).await;
        let journal_calls: Vec<Option<String>> = fake
            .calls()
            .iter()
            .filter(|call| call.path == "/journals")
            .map(|call| call.query.get("updated_or_created_since").cloned())
            .collect();
        assert_eq!(journal_calls.len(), 2);
        assert_eq!(journal_calls[0], None, "the first sync fetches whole");
        assert!(
            journal_calls[1]
                .as_deref()
                .is_some_and(|since| since.ends_with('Z')),
            "{journal_calls:?}"
        );
    }
}
