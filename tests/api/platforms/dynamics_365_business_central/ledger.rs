//! Business Central's accounting lists beyond sales: posting G/L accounts by
//! category (headings and totals left out) with balance-sheet balances in
//! their natural sign, vendors, purchase invoices and sales credit memos
//! with their lines' accounts, items and the company's information, the
//! general ledger's G/L entries grouped into journal entries; the data types
//! API v2.0 cannot give refused without a call. The G/L entries follow the
//! `generalLedgerEntry` resource and its GET example (B32 in
//! `src/platforms/dynamics_365_business_central/NOTES.md`), served in
//! `Entry No.` order (B33) as server-driven pages of the size `Prefer:
//! odata.maxpagesize` asks for (B12).

use serde_json::{Value, json};

use client::types::{PullStatus, QueueDataTypeDataType};

use super::super::fake::{Answer, Call, fixture};
use super::super::ledger_reads::{
    columns, each_balances, issues_of, records, refs_name_accounts, synced,
};
use super::super::{latest, options_for, sync};
use super::{COMPANY, DIR, connected, fake};
use crate::helpers::{TestApp, backends};

/// `generalLedgerEntries` as Business Central serves it: the entries after
/// `$filter=entryNumber gt N` (the only filter the connector sends; any
/// other is OData's 400), at most `odata.maxpagesize` of them, with an
/// `@odata.nextLink` when more follow.
pub(super) fn general_ledger_entries(call: &Call) -> Answer {
    let Some(after) = call
        .query
        .get("$filter")
        .and_then(|filter| filter.strip_prefix("entryNumber gt "))
        .and_then(|after| after.parse::<u64>().ok())
    else {
        return Answer::json(
            400,
            json!({"error": {"code": "BadRequest", "message": "Invalid filter expression."}})
                .to_string(),
        );
    };
    let page_size = call
        .headers
        .get("prefer")
        .and_then(|prefer| prefer.strip_prefix("odata.maxpagesize="))
        .and_then(|size| size.parse::<usize>().ok())
        .unwrap_or(20_000);
    let mut whole: Value =
        serde_json::from_str(&fixture(&format!("{DIR}/generalLedgerEntries.json"))).expect("JSON");
    let entries: Vec<Value> = whole["value"]
        .as_array()
        .expect("entries")
        .iter()
        .filter(|entry| entry["entryNumber"].as_u64().expect("a number") > after)
        .cloned()
        .collect();
    let more = entries.len() > page_size;
    whole["value"] = Value::Array(entries.into_iter().take(page_size).collect());
    if more {
        let host = call.headers.get("host").cloned().unwrap_or_default();
        whole["@odata.nextLink"] = json!(format!(
            "http://{host}{}?$skiptoken=after{}",
            call.path,
            after + page_size as u64
        ));
    }
    Answer::json(200, whole.to_string())
}

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
/// that invoice shows it paid. Payments, bill payments and tax rates are
/// refused without a call.
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

/// The general ledger as journal entries: consecutive G/L entries of one
/// posting date, document type and number are one entry, debits positive
/// and credits negative, each line naming an account of the chart. Pages of
/// four cut every document; each is held back and read whole from the next
/// page, asked for by entry number (`entryNumber gt`), not by the next link.
/// The group that does not balance is reported by its first entry number
/// and not stored.
#[tokio::test]
async fn the_general_ledger_is_grouped_into_entries_that_balance() {
    for backend in backends() {
        let fake = fake().await;
        let app = TestApp::spawn_with(backend, options_for(&fake, Some(4), 1)).await;
        let (company_id, _) = connected(&app, 3600).await;
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
        let mut rows = columns(
            &journals,
            &[
                "/journalEntryId",
                "/journalNumber",
                "/postedOn",
                "/source/type",
                "/description",
            ],
        );
        rows.sort();
        assert_eq!(
            rows,
            [
                ["1", "103001", "2026-01-15", "Invoice", "Order 103001"],
                ["12", "108001", "2026-02-03", "Invoice", "FAB-5501"],
                ["4", "G02001", "2026-01-20", "Payment", "Payment 103001"],
                ["6", "107001", "2026-01-22", "Credit Memo", "Return 107001"],
                ["8", "GJ0001", "2026-02-01", "Other", "Office supplies"],
            ]
        );
        let invoice = journals
            .iter()
            .find(|journal| journal["journalEntryId"] == "1")
            .expect("the invoice's entry");
        assert_eq!(
            columns(
                invoice["journalLines"].as_array().expect("lines"),
                &["/accountRef/id", "/netAmount", "/currency"]
            ),
            [
                ["a1b2c3d4-081c-ec11-bb77-000000013100", "172.94", "-"],
                ["a1b2c3d4-081c-ec11-bb77-000000040100", "-160.00", "-"],
                ["a1b2c3d4-081c-ec11-bb77-000000020100", "-12.94", "-"],
            ]
        );
        assert_eq!(invoice["source"]["id"], Value::Null);
        each_balances(&journals);
        refs_name_accounts(&accounts, &journals, "journalLines");

        assert_eq!(
            issues_of(&app, company_id, "journalEntries").await,
            [["10", "debitAmount"]]
        );
        let filters: Vec<String> = fake
            .calls()
            .iter()
            .filter(|call| call.path.ends_with("/generalLedgerEntries"))
            .map(|call| call.query.get("$filter").cloned().unwrap_or_default())
            .collect();
        assert_eq!(
            filters,
            [
                "entryNumber gt 0",
                "entryNumber gt 3",
                "entryNumber gt 5",
                "entryNumber gt 7",
                "entryNumber gt 9",
            ],
            "each page starts after the last whole group"
        );
    }
}
