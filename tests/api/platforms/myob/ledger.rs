//! MYOB's accounting lists beyond sales: the chart (headers left out, the
//! classifications folded into five), suppliers, tax codes (a negative
//! rate), items, bills from the four typed lists with their lines and the
//! pre-conversion bills of the untyped one, negative sales as credit notes
//! with their settlements and refunds, customer and supplier payments that
//! settle what the documents show paid, the general ledger's journal
//! transactions that balance (one that does not is reported, not stored),
//! and the company file as company info.

use serde_json::{Value, json};

use client::types::QueueDataTypeDataType;
use tributary::data::money::Money;

use super::super::ledger_reads::{
    amount, columns, issues_of, records, refs_name_accounts, settled, synced,
};
use super::super::options_for;
use super::{FILE, connected, fake};
use crate::helpers::{TestApp, backends};

/// Accounts over two pages in nominal-code order (the header account left
/// out, cost of sales an expense, other income income, the credit card a
/// bank account, an inactive one archived, in the file's currency with
/// MYOB's balance); suppliers (an individual by name, an inactive one
/// archived); tax codes (a withholding code negative); items by whether
/// they are inventoried, with their sides' prices and accounts; the company
/// file with its Australian numbers and a July year.
#[tokio::test]
async fn the_chart_suppliers_tax_codes_items_and_company_sync() {
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
                ["1-1110", "Asset", "Bank", "true", "Active"],
                ["1-1200", "Asset", "AccountReceivable", "false", "Active"],
                ["1-1300", "Asset", "OtherCurrentAsset", "false", "Active"],
                ["2-1200", "Liability", "AccountsPayable", "false", "Active"],
                [
                    "2-1310",
                    "Liability",
                    "OtherCurrentLiability",
                    "false",
                    "Active"
                ],
                ["2-1500", "Liability", "CreditCard", "true", "Active"],
                ["3-1000", "Equity", "Equity", "false", "Active"],
                ["4-1000", "Income", "Income", "false", "Active"],
                ["5-1000", "Expense", "CostOfSales", "false", "Active"],
                ["6-1100", "Expense", "Expense", "false", "Active"],
                ["6-1200", "Expense", "Expense", "false", "Archived"],
                ["8-1000", "Income", "OtherIncome", "false", "Active"],
            ]
        );
        assert_eq!(accounts[0]["accountName"], "Business Bank Account");
        assert_eq!(accounts[0]["currentBalance"], "4321.50");
        assert_eq!(accounts[0]["currency"], "AUD");

        let suppliers = records(&app, company_id, "suppliers").await;
        assert_eq!(
            columns(&suppliers, &["/supplierName", "/status", "/emailAddress"]),
            [
                ["Kai Nakamura", "Archived", "accounts@example.com.au"],
                [
                    "Reef Consulting Pty Ltd",
                    "Active",
                    "accounts@example.com.au"
                ],
            ]
        );

        let rates = records(&app, company_id, "taxRates").await;
        assert_eq!(
            columns(&rates, &["/code", "/name", "/effectiveTaxRate"]),
            [
                ["FRE", "GST Free", "0"],
                ["GST", "Goods & Services Tax", "10"],
                ["ABN", "No ABN Withholding", "-47"],
                ["N-T", "Not Reportable", "0"],
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
                    "/purchases/unitPrice",
                    "/quantityOnHand"
                ]
            ),
            [
                ["OLD-BOARD", "NonInventory", "Archived", "-", "150.00", "-"],
                ["LESSON", "NonInventory", "Active", "80.00", "-", "-"],
                ["WAX-1", "Inventory", "Active", "4.50", "1.80", "120"],
            ]
        );
        let wax = &items[2];
        assert_eq!(
            wax["sales"]["accountRef"]["id"],
            "a0000000-0000-4000-8000-000000004000"
        );
        assert_eq!(
            wax["purchases"]["accountRef"]["id"],
            "a0000000-0000-4000-8000-000000001300"
        );
        assert_eq!(wax["sales"]["taxRateRef"]["name"], "GST");
        assert_eq!(
            items[0]["purchases"]["accountRef"]["id"],
            "a0000000-0000-4000-8000-000000006100"
        );
        for side in ["/sales", "/purchases"] {
            let sides: Vec<Value> = items
                .iter()
                .filter_map(|item| item.pointer(side).cloned())
                .collect();
            refs_name_accounts(&accounts, &sides, "");
        }

        let company = records(&app, company_id, "companyInfo").await;
        assert_eq!(company.len(), 1);
        assert_eq!(company[0]["companyInfoId"], FILE);
        assert_eq!(company[0]["companyName"], "Clearwater Surf Pty Ltd");
        assert_eq!(company[0]["registrationNumber"], "004 085 616");
        assert_eq!(company[0]["taxNumber"], "53 004 085 616");
        assert_eq!(company[0]["baseCurrency"], "AUD");
        assert_eq!(
            company[0]["financialYearStart"],
            json!({"month": 7, "day": 1})
        );
        assert_eq!(
            company[0]["addresses"][0]["line1"],
            "1 Beach Rd\r\nCoogee NSW 2034"
        );
    }
}

/// Bills from every typed list with their lines (header and subtotal rows
/// left out; a line's tax worked out from its code, with tax or without it
/// as the bill is entered) and the pre-conversion bill of the untyped list
/// (a supplier debit left out); supplier payments and a debit refund; what
/// each bill shows paid is what the bill payments settle, and every line's
/// account is one of the chart.
#[tokio::test]
async fn bills_and_bill_payments_settle_what_the_bills_show_paid() {
    for backend in backends() {
        let fake = fake().await;
        let app = TestApp::spawn_with(backend, options_for(&fake, None, 1)).await;
        let (company_id, _) = connected(&app, 1800).await;
        synced(
            &app,
            company_id,
            &[
                QueueDataTypeDataType::Bills,
                QueueDataTypeDataType::BillPayments,
                QueueDataTypeDataType::Accounts,
            ],
        )
        .await;

        let bills = records(&app, company_id, "bills").await;
        assert_eq!(
            columns(
                &bills,
                &[
                    "/reference",
                    "/status",
                    "/subTotal",
                    "/totalAmount",
                    "/amountDue"
                ]
            ),
            [
                ["INV-00000023", "Open", "200.00", "200.00", "200.00"],
                ["INV-00000022", "PartiallyPaid", "108.00", "118.80", "68.80"],
                ["INV-00000021", "Paid", "500.00", "550.00", "0.00"],
                ["INV-00000001", "Open", "77.00", "77.00", "77.00"],
            ]
        );
        assert_eq!(bills[2]["paidOnDate"], "2026-10-20");
        assert_eq!(
            bills[2]["supplierRef"]["supplierName"],
            "Reef Consulting Pty Ltd"
        );
        assert_eq!(
            columns(
                bills[2]["lineItems"].as_array().expect("lines"),
                &[
                    "/description",
                    "/unitAmount",
                    "/quantity",
                    "/subTotal",
                    "/taxAmount",
                    "/totalAmount",
                    "/taxRateRef/name"
                ]
            ),
            [[
                "Consulting, October",
                "125.00",
                "4",
                "500.00",
                "50.00",
                "550.00",
                "GST"
            ]]
        );
        assert_eq!(
            columns(
                bills[1]["lineItems"].as_array().expect("lines"),
                &[
                    "/unitAmount",
                    "/quantity",
                    "/subTotal",
                    "/taxAmount",
                    "/totalAmount"
                ]
            ),
            [["1.80", "60", "108.00", "10.80", "118.80"]],
            "a tax-inclusive line holds its tax"
        );
        assert_eq!(
            bills[3]["lineItems"],
            json!([]),
            "a pre-conversion bill has no lines"
        );
        let accounts = records(&app, company_id, "accounts").await;
        refs_name_accounts(&accounts, &bills, "lineItems");
        for bill in &bills {
            let lines = bill["lineItems"].as_array().expect("lines");
            if !lines.is_empty() {
                let total = lines
                    .iter()
                    .fold(Money(0), |sum, line| sum + amount(&line["totalAmount"]));
                assert_eq!(total, amount(&bill["totalAmount"]), "{bill}");
            }
        }

        let payments = records(&app, company_id, "billPayments").await;
        assert_eq!(
            columns(
                &payments,
                &[
                    "/reference",
                    "/totalAmount",
                    "/accountRef/id",
                    "/allocations/0/type"
                ]
            ),
            [
                [
                    "DR-1",
                    "-30.00",
                    "a0000000-0000-4000-8000-000000001110",
                    "SupplierCredit"
                ],
                ["00000008", "50.00", "-", "Bill"],
                [
                    "00000007",
                    "550.00",
                    "a0000000-0000-4000-8000-000000001110",
                    "Bill"
                ],
            ]
        );
        refs_name_accounts(&accounts, &payments, "");
        for payment in &payments {
            let allocated = payment["allocations"]
                .as_array()
                .expect("allocations")
                .iter()
                .fold(Money(0), |sum, allocation| {
                    sum + amount(&allocation["amount"])
                });
            assert!(
                allocated.0.abs() <= amount(&payment["totalAmount"]).0.abs(),
                "{payment}"
            );
        }
        for bill in &bills {
            let paid = amount(&bill["totalAmount"]) - amount(&bill["amountDue"]);
            assert_eq!(settled(&payments, "Bill", &bill["billId"]), paid, "{bill}");
        }
        let lists: Vec<String> = fake
            .calls()
            .iter()
            .map(|call| call.path.clone())
            .filter(|path| path.contains("/Purchase/Bill"))
            .collect();
        let list = |name: &str| format!("/accountright/{FILE}/Purchase/Bill{name}");
        assert_eq!(
            lists,
            [
                list("/Service"),
                list("/Item"),
                list("/Professional"),
                list("/Miscellaneous"),
                list(""),
                list(""),
            ]
        );
    }
}

/// A negative sale is a credit note with its amounts made positive, the
/// settlement from it an allocation to the invoice it settled, its refund a
/// negative payment; customer payments allocate to invoices (an order's
/// deposit `Other`); what each invoice shows paid is what payments and
/// credits settle.
#[tokio::test]
async fn credit_notes_and_payments_settle_what_the_invoices_show_paid() {
    for backend in backends() {
        let fake = fake().await;
        let app = TestApp::spawn_with(backend, options_for(&fake, None, 1)).await;
        let (company_id, _) = connected(&app, 1800).await;
        synced(
            &app,
            company_id,
            &[
                QueueDataTypeDataType::Invoices,
                QueueDataTypeDataType::CreditNotes,
                QueueDataTypeDataType::Payments,
            ],
        )
        .await;

        let notes = records(&app, company_id, "creditNotes").await;
        assert_eq!(
            columns(
                &notes,
                &[
                    "/creditNoteNumber",
                    "/status",
                    "/totalAmount",
                    "/totalTaxAmount",
                    "/remainingCredit"
                ]
            ),
            [["00000105", "PartiallyPaid", "55.00", "5.00", "15.00"]]
        );
        assert_eq!(
            notes[0]["allocations"],
            json!([{
                "invoiceRef": {"id": "1b0f6a10-0002-4c3e-9a1b-000000000002", "invoiceNumber": "00000102"},
                "amount": "30.00",
                "allocatedOnDate": "2026-10-15"
            }])
        );

        let payments = records(&app, company_id, "payments").await;
        assert_eq!(
            columns(
                &payments,
                &[
                    "/reference",
                    "/totalAmount",
                    "/accountRef/name",
                    "/allocations/0/type"
                ]
            ),
            [
                ["CRF-1", "-10.00", "Business Bank Account", "CreditNote"],
                ["CR000004", "50.00", "Business Bank Account", "Other"],
                ["CR000003", "220.00", "Business Bank Account", "Invoice"],
                ["CR000002", "89.6234", "-", "Invoice"],
                ["CR000001", "550.00", "Business Bank Account", "Invoice"],
            ]
        );
        let refunded = settled(&payments, "CreditNote", &notes[0]["creditNoteId"]);
        let credited = notes[0]["allocations"]
            .as_array()
            .expect("allocations")
            .iter()
            .fold(Money(0), |sum, allocation| {
                sum + amount(&allocation["amount"])
            });
        assert_eq!(
            credited - refunded + amount(&notes[0]["remainingCredit"]),
            amount(&notes[0]["totalAmount"]),
            "what a credit note gave plus what is left is its total"
        );

        let invoices = records(&app, company_id, "invoices").await;
        for invoice in invoices
            .iter()
            .filter(|invoice| invoice["status"] != "Unknown")
        {
            let paid = amount(&invoice["totalAmount"]) - amount(&invoice["amountDue"]);
            let credited = notes
                .iter()
                .flat_map(|note| note["allocations"].as_array().cloned().unwrap_or_default())
                .filter(|allocation| allocation["invoiceRef"]["id"] == invoice["invoiceId"])
                .fold(Money(0), |sum, allocation| {
                    sum + amount(&allocation["amount"])
                });
            assert_eq!(
                settled(&payments, "Invoice", &invoice["invoiceId"]) + credited,
                paid,
                "{invoice}"
            );
        }
        let settlements = fake
            .calls()
            .iter()
            .filter(|call| call.path.ends_with("/Sale/CreditSettlement"))
            .count();
        assert_eq!(
            settlements, 1,
            "read for the one page that has a credit note"
        );
    }
}

/// The general ledger: each journal transaction an entry whose lines are
/// signed by `IsCredit` and balance, naming what posted it and accounts of
/// the chart; one whose lines do not balance is reported by its id and not
/// stored.
#[tokio::test]
async fn journal_transactions_balance_and_one_that_does_not_is_reported() {
    for backend in backends() {
        let fake = fake().await;
        let app = TestApp::spawn_with(backend, options_for(&fake, None, 1)).await;
        let (company_id, _) = connected(&app, 1800).await;
        synced(
            &app,
            company_id,
            &[
                QueueDataTypeDataType::JournalEntries,
                QueueDataTypeDataType::Accounts,
            ],
        )
        .await;

        let journals = records(&app, company_id, "journalEntries").await;
        assert_eq!(
            columns(&journals, &["/journalNumber", "/postedOn", "/source/type"]),
            [
                ["GJ000001", "2026-10-31", "GeneralJournal"],
                ["00000007", "2026-10-20", "SupplierPayment"],
                ["00000103", "2026-10-07", "Invoice"],
                ["00000021", "2026-10-02", "Bill"],
            ]
        );
        assert_eq!(
            columns(
                journals[3]["journalLines"].as_array().expect("lines"),
                &["/accountRef/id", "/netAmount", "/currency"]
            ),
            [
                ["a0000000-0000-4000-8000-000000006100", "500.00", "AUD"],
                ["a0000000-0000-4000-8000-000000002310", "50.00", "AUD"],
                ["a0000000-0000-4000-8000-000000002200", "-550.00", "AUD"],
            ]
        );
        assert_eq!(
            journals[3]["source"]["id"],
            "b1000000-0000-4000-8000-000000000001"
        );
        let accounts = records(&app, company_id, "accounts").await;
        for journal in &journals {
            let lines = journal["journalLines"].as_array().expect("lines");
            let balance = lines
                .iter()
                .fold(Money(0), |sum, line| sum + amount(&line["netAmount"]));
            assert_eq!(balance, Money(0), "{journal}");
        }
        refs_name_accounts(&accounts, &journals, "journalLines");

        assert_eq!(
            issues_of(&app, company_id, "journalEntries").await,
            [["1e000000-0000-4000-8000-000000000005", "Lines"]]
        );
    }
}
