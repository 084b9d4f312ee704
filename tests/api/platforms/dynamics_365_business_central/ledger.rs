//! Business Central's accounting lists beyond sales: posting G/L accounts by
//! category (headings and totals left out) with balance-sheet balances in
//! their natural sign, vendors, purchase invoices and sales credit memos
//! with their lines' accounts, items and the company's information; the
//! data types API v2.0 cannot give refused without a call.

use serde_json::{Value, json};

use client::types::{PullStatus, QueueDataTypeDataType};

use super::super::ledger_reads::{columns, records, synced};
use super::super::{latest, options_for, sync};
use super::{COMPANY, connected, fake};
use crate::helpers::{TestApp, backends};

/// Posting accounts only, classified by their category as the wire writes
/// it (`Cost_x0020_of_x0020_Goods_x0020_Sold`); balances of balance-sheet
/// accounts in their natural sign; blocked accounts, vendors and items
/// archived; items typed (`Non_x002D_Inventory`), stock for inventory only;
/// the company's information as one record.
#[tokio::test]
async fn the_chart_vendors_items_and_company_sync() {
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
                    "/status",
                    "/currentBalance"
                ]
            ),
            [
                ["10100", "Asset", "Active", "8420.50"],
                ["13100", "Asset", "Active", "1234.56"],
                ["20100", "Liability", "Active", "2350.00"],
                ["30100", "Equity", "Active", "50000.00"],
                ["40100", "Income", "Active", "-"],
                ["50100", "Expense", "Active", "-"],
                ["60100", "Expense", "Active", "-"],
                ["60900", "Expense", "Archived", "-"],
            ],
            "the heading and the total are not accounts"
        );
        assert_eq!(accounts[5]["accountType"], "Cost of Goods Sold");

        let suppliers = records(&app, company_id, "suppliers").await;
        assert_eq!(
            columns(&suppliers, &["/supplierName", "/status"]),
            [
                ["Fabrikam, Inc.", "Active"],
                ["Graphic Design Institute", "Archived"],
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
                    "/sales/unitPrice",
                    "/quantityOnHand"
                ]
            ),
            [
                ["SRV-1", "Service", "Active", "60.00", "-"],
                ["1896-S", "Inventory", "Active", "1000.80", "12"],
                ["1908-S", "Inventory", "Archived", "190.10", "0"],
                ["1900-S", "NonInventory", "Active", "192.80", "-"],
            ]
        );

        let company = records(&app, company_id, "companyInfo").await;
        assert_eq!(company.len(), 1);
        assert_eq!(company[0]["companyInfoId"], COMPANY);
        assert_eq!(company[0]["companyName"], "CRONUS USA, Inc.");
        assert_eq!(company[0]["taxNumber"], "777777777");
        assert_eq!(company[0]["baseCurrency"], "USD");
        assert_eq!(
            company[0]["financialYearStart"],
            json!({"month": 1, "day": 1})
        );
        assert_eq!(
            company[0]["addresses"][0]["line1"],
            "7122 South Ashford Street"
        );
    }
}

/// Purchase invoices with their lines (an account line names its G/L
/// account, an item line none), `Open` owed whole and `Paid` nothing; a
/// paid credit memo applied to an invoice allocates its credit to it, and
/// that invoice shows it paid. Payments, bill payments, tax rates and
/// journal entries are refused without a call.
#[tokio::test]
async fn bills_and_credit_memos_name_their_accounts_and_the_rest_is_refused() {
    for backend in backends() {
        let fake = fake().await;
        let app = TestApp::spawn_with(backend, options_for(&fake, None, 1)).await;
        let (company_id, _) = connected(&app, 3600).await;
        synced(
            &app,
            company_id,
            &[
                QueueDataTypeDataType::Bills,
                QueueDataTypeDataType::CreditNotes,
                QueueDataTypeDataType::Accounts,
                QueueDataTypeDataType::Invoices,
                QueueDataTypeDataType::Suppliers,
            ],
        )
        .await;

        let bills = records(&app, company_id, "bills").await;
        assert_eq!(
            columns(
                &bills,
                &[
                    "/note",
                    "/reference",
                    "/status",
                    "/totalAmount",
                    "/amountDue"
                ]
            ),
            [
                ["108003", "-", "Draft", "450.00", "450.00"],
                ["108001", "FAB-5501", "Open", "110.00", "110.00"],
                ["108002", "FAB-5488", "Paid", "630.00", "0.00"],
                ["108004", "GDI-77", "Void", "80.00", "0.00"],
            ]
        );
        let accounts = records(&app, company_id, "accounts").await;
        let paid = &bills[2];
        assert_eq!(
            paid["lineItems"][1]["accountRef"],
            Value::Null,
            "an item line"
        );
        assert_eq!(paid["lineItems"][0]["unitAmount"], "200.00");
        let suppliers = records(&app, company_id, "suppliers").await;
        for bill in &bills {
            assert!(
                suppliers
                    .iter()
                    .any(|s| s["supplierId"] == bill["supplierRef"]["id"]),
                "{bill}"
            );
        }

        let notes = records(&app, company_id, "creditNotes").await;
        assert_eq!(
            columns(
                &notes,
                &["/creditNoteNumber", "/status", "/remainingCredit"]
            ),
            [
                ["107003", "Draft", "15.00"],
                ["107002", "Submitted", "40.00"],
                ["107001", "Paid", "0.00"],
            ]
        );
        assert_eq!(
            notes[2]["allocations"],
            json!([{"invoiceRef": {"id": "5d115c9c-44e3-ea11-bb43-000d3a2f0004", "invoiceNumber": "103004"},
                "amount": "100.00", "allocatedOnDate": null}])
        );
        let invoices = records(&app, company_id, "invoices").await;
        let credited = invoices
            .iter()
            .find(|invoice| invoice["invoiceId"] == "5d115c9c-44e3-ea11-bb43-000d3a2f0004")
            .expect("the credited invoice");
        assert_eq!(credited["totalAmount"], "172.94");
        assert_eq!(credited["amountDue"], "72.94", "100.00 of it credited");
        for document in bills.iter().chain(&notes) {
            for line in document["lineItems"].as_array().expect("lines") {
                assert!(
                    line["accountRef"].is_null()
                        || accounts
                            .iter()
                            .any(|a| a["accountId"] == line["accountRef"]["id"]),
                    "{line}"
                );
            }
        }
        assert!(
            bills[1]["lineItems"][0]["accountRef"]["id"]
                .as_str()
                .is_some_and(|id| id.ends_with("000000060100")),
            "{}",
            bills[1]
        );

        let before = fake.calls().len();
        for data_type in [
            QueueDataTypeDataType::Payments,
            QueueDataTypeDataType::BillPayments,
            QueueDataTypeDataType::TaxRates,
            QueueDataTypeDataType::JournalEntries,
        ] {
            let operations = sync(&app, company_id, data_type).await;
            assert_eq!(
                latest(&operations, &data_type.to_string()).status,
                PullStatus::NotSupported
            );
        }
        assert_eq!(fake.calls().len(), before, "refused without a call");
    }
}
