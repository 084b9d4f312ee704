//! NetSuite's accounting lists beyond sales, through SuiteQL: posting
//! accounts (the summary account left out) with balances summed from the
//! primary book's posted lines in their natural sign, vendors, tax codes
//! (rates with and without `%`), items by type with their accounts, the
//! root subsidiary as company info, bills and credit memos with their lines
//! turned to their totals' sign, customer and vendor payments settling what
//! the documents show paid (a payment applied over two lines added up, a
//! voided one settling nothing), and every posting transaction as a
//! balanced journal entry (one that does not balance reported, the second
//! book's lines ignored). The fake's answers are `super::ledger_fake`'s.

use client::types::QueueDataTypeDataType;
use tributary::data::money::Money;

use super::super::fake::Answer;
use super::super::ledger_reads::{
    amount, columns, issues_of, records, refs_name_accounts, refused_but_linked, settled, synced,
};
use super::super::options_for;
use super::{connected, fake};
use crate::helpers::{TestApp, backends};

/// Posting accounts in nominal-code order (the summary account left out,
/// the statistical one without a code last, archived and unclassified);
/// balances for balance-sheet accounts in the base currency only, a
/// liability's credit balance positive; vendors (a person by name, an
/// inactive one archived); tax codes with and without a percent sign; items
/// by type, an inventory item bought into its asset account; the root
/// subsidiary with its federal id and a year starting in April.
#[tokio::test]
async fn the_chart_vendors_tax_codes_items_and_company_sync() {
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
        assert_eq!(
            columns(
                &accounts,
                &[
                    "/accountId",
                    "/nominalCode",
                    "/accountName",
                    "/classification",
                    "/accountType",
                    "/isBankAccount",
                    "/status",
                    "/currency",
                    "/currentBalance"
                ]
            ),
            [
                [
                    "1", "1000", "Checking", "Asset", "Bank", "true", "Active", "USD", "455.00"
                ],
                [
                    "8",
                    "1010",
                    "Euro Account",
                    "Asset",
                    "Bank",
                    "true",
                    "Active",
                    "EUR",
                    "-"
                ],
                [
                    "2",
                    "1100",
                    "Accounts Receivable",
                    "Asset",
                    "AcctRec",
                    "false",
                    "Active",
                    "USD",
                    "734.56"
                ],
                [
                    "11",
                    "1200",
                    "Inventory Asset",
                    "Asset",
                    "OthCurrAsset",
                    "false",
                    "Active",
                    "USD",
                    "0.00"
                ],
                [
                    "3",
                    "2000",
                    "Accounts Payable",
                    "Liability",
                    "AcctPay",
                    "false",
                    "Active",
                    "USD",
                    "110.00"
                ],
                [
                    "4",
                    "2200",
                    "Sales Tax Payable",
                    "Liability",
                    "OthCurrLiab",
                    "false",
                    "Active",
                    "USD",
                    "195.76"
                ],
                [
                    "7",
                    "3000",
                    "Retained Earnings",
                    "Equity",
                    "Equity",
                    "false",
                    "Active",
                    "USD",
                    "0.00"
                ],
                [
                    "5", "4000", "Sales", "Income", "Income", "false", "Active", "USD", "-"
                ],
                [
                    "6",
                    "6100",
                    "Office Supplies",
                    "Expense",
                    "Expense",
                    "false",
                    "Active",
                    "USD",
                    "-"
                ],
                [
                    "9",
                    "-",
                    "Headcount",
                    "Unknown",
                    "Stat",
                    "false",
                    "Archived",
                    "USD",
                    "-"
                ],
            ]
        );
        assert_eq!(
            accounts[0]["description"],
            "Operating account at First Bank"
        );

        let suppliers = records(&app, company_id, "suppliers").await;
        assert_eq!(
            columns(
                &suppliers,
                &[
                    "/supplierId",
                    "/supplierName",
                    "/emailAddress",
                    "/phone",
                    "/defaultCurrency",
                    "/status"
                ]
            ),
            [
                ["303", "Former Supplier GmbH", "-", "-", "EUR", "Archived"],
                [
                    "301",
                    "Office Depot Inc.",
                    "ap@officedepot.example",
                    "+1 800 555 0199",
                    "USD",
                    "Active"
                ],
                ["302", "Sam Smith", "-", "-", "USD", "Active"],
            ]
        );

        let tax_rates = records(&app, company_id, "taxRates").await;
        assert_eq!(
            columns(
                &tax_rates,
                &[
                    "/taxRateId",
                    "/code",
                    "/name",
                    "/effectiveTaxRate",
                    "/status",
                    "/components/0/rate"
                ]
            ),
            [
                ["502", "EXEMPT", "EXEMPT", "0", "Active", "0"],
                ["503", "NY-OLD", "NY-OLD", "7.25", "Archived", "7.25"],
                [
                    "501",
                    "CA-SF",
                    "San Francisco sales tax",
                    "8.63",
                    "Active",
                    "8.63"
                ],
            ]
        );

        let items = records(&app, company_id, "items").await;
        assert_eq!(
            columns(
                &items,
                &[
                    "/itemId",
                    "/code",
                    "/name",
                    "/type",
                    "/status",
                    "/sales/unitPrice",
                    "/sales/accountRef/id",
                    "/purchases/unitPrice",
                    "/purchases/accountRef/id",
                    "/purchases/description"
                ]
            ),
            [
                [
                    "601",
                    "ANTWERP-TBL",
                    "ANTWERP Conference Table",
                    "Inventory",
                    "Active",
                    "411.52",
                    "5",
                    "205.00",
                    "11",
                    "Oak table, flat-packed"
                ],
                [
                    "602",
                    "CONSULT-HR",
                    "Consulting hour",
                    "Service",
                    "Active",
                    "100.00",
                    "5",
                    "-",
                    "-",
                    "-"
                ],
                [
                    "603",
                    "PAPER",
                    "PAPER",
                    "NonInventory",
                    "Archived",
                    "-",
                    "-",
                    "4.99",
                    "6",
                    "-"
                ],
                [
                    "604", "SUBTOTAL", "SUBTOTAL", "Unknown", "Active", "-", "-", "-", "-", "-"
                ],
            ]
        );
        refs_name_accounts(&accounts, &items, "");

        let company = records(&app, company_id, "companyInfo").await;
        assert_eq!(
            columns(
                &company,
                &[
                    "/companyInfoId",
                    "/companyName",
                    "/legalName",
                    "/taxNumber",
                    "/baseCurrency",
                    "/financialYearStart/month",
                    "/financialYearStart/day",
                    "/website"
                ]
            ),
            [[
                super::ACCOUNT,
                "Wolfe Electronics",
                "Wolfe Electronics Inc.",
                "12-3456789",
                "USD",
                "4",
                "1",
                "https://wolfe.example"
            ]]
        );
    }
}

/// Bills (paid, part paid, pending approval) with their lines and tax;
/// credit memos stored negative shown positive with what remains; customer
/// and vendor payments whose applications add up to what every invoice and
/// bill shows paid, never more than the payment; every account named is
/// one of the chart's.
#[tokio::test]
async fn documents_and_payments_settle_what_they_show_paid() {
    for backend in backends() {
        let fake = fake().await;
        let app = TestApp::spawn_with(backend, options_for(&fake, None, 1)).await;
        let (company_id, _) = connected(&app, 3600).await;
        synced(
            &app,
            company_id,
            &[
                QueueDataTypeDataType::Accounts,
                QueueDataTypeDataType::Invoices,
                QueueDataTypeDataType::Bills,
                QueueDataTypeDataType::CreditNotes,
                QueueDataTypeDataType::Payments,
                QueueDataTypeDataType::BillPayments,
            ],
        )
        .await;

        let bills = records(&app, company_id, "bills").await;
        assert_eq!(
            columns(
                &bills,
                &[
                    "/billId",
                    "/reference",
                    "/supplierRef/id",
                    "/issueDate",
                    "/dueDate",
                    "/status",
                    "/subTotal",
                    "/taxAmount",
                    "/totalAmount",
                    "/amountDue",
                    "/note"
                ]
            ),
            [
                [
                    "703",
                    "BILL-0003",
                    "301",
                    "2026-10-12",
                    "2026-11-11",
                    "Draft",
                    "20.00",
                    "0.00",
                    "20.00",
                    "20.00",
                    "-"
                ],
                [
                    "702",
                    "BILL-0002",
                    "302",
                    "2026-10-10",
                    "2026-11-09",
                    "PartiallyPaid",
                    "50.00",
                    "5.00",
                    "55.00",
                    "25.00",
                    "-"
                ],
                [
                    "701",
                    "BILL-0001",
                    "301",
                    "2026-10-01",
                    "2026-10-31",
                    "Paid",
                    "100.00",
                    "10.00",
                    "110.00",
                    "0.00",
                    "October supplies"
                ],
            ]
        );
        assert_eq!(
            columns(
                bills[2]["lineItems"].as_array().expect("lines"),
                &[
                    "/description",
                    "/quantity",
                    "/unitAmount",
                    "/totalAmount",
                    "/accountRef/id",
                    "/accountRef/name"
                ]
            ),
            [
                [
                    "Printer paper",
                    "12",
                    "5.00",
                    "60.00",
                    "6",
                    "6100 Office Supplies"
                ],
                ["Toner", "0", "0.00", "40.00", "6", "6100 Office Supplies"],
            ]
        );

        let credit_notes = records(&app, company_id, "creditNotes").await;
        assert_eq!(
            columns(
                &credit_notes,
                &[
                    "/creditNoteId",
                    "/creditNoteNumber",
                    "/customerRef/id",
                    "/currency",
                    "/status",
                    "/totalAmount",
                    "/remainingCredit",
                    "/allocations/0/invoiceRef/id",
                    "/allocations/0/amount",
                    "/lineItems/0/totalAmount"
                ]
            ),
            [
                [
                    "802",
                    "CM-0002",
                    "204",
                    "EUR",
                    "Submitted",
                    "20.00",
                    "20.00",
                    "-",
                    "-",
                    "20.00"
                ],
                [
                    "801", "CM-0001", "201", "USD", "Paid", "100.00", "0.00", "105", "100.00",
                    "100.00"
                ],
            ]
        );

        let payments = records(&app, company_id, "payments").await;
        assert_eq!(
            columns(
                &payments,
                &[
                    "/paymentId",
                    "/reference",
                    "/customerRef/id",
                    "/accountRef/id",
                    "/currency",
                    "/totalAmount",
                    "/allocations"
                ]
            ),
            [
                ["904", "PYMT-0004", "202", "1", "USD", "0.00", "[]"],
                ["903", "PYMT-0003", "201", "1", "USD", "300.00", "[]"],
                [
                    "902",
                    "PYMT-0002",
                    "201",
                    "1",
                    "USD",
                    "500.00",
                    r#"[{"type":"Invoice","id":"105","amount":"500.00"}]"#
                ],
                [
                    "901",
                    "PYMT-0001",
                    "204",
                    "8",
                    "EUR",
                    "100.00",
                    r#"[{"type":"Invoice","id":"102","amount":"100.00"}]"#
                ],
            ]
        );
        let bill_payments = records(&app, company_id, "billPayments").await;
        assert_eq!(
            columns(
                &bill_payments,
                &[
                    "/billPaymentId",
                    "/supplierRef/id",
                    "/accountRef/id",
                    "/totalAmount",
                    "/allocations"
                ]
            ),
            [
                [
                    "952",
                    "302",
                    "1",
                    "30.00",
                    r#"[{"type":"Bill","id":"702","amount":"30.00"}]"#
                ],
                [
                    "951",
                    "301",
                    "1",
                    "110.00",
                    r#"[{"type":"Bill","id":"701","amount":"110.00"}]"#
                ],
            ]
        );

        for payment in payments.iter().chain(&bill_payments) {
            let allocated = payment["allocations"]
                .as_array()
                .expect("allocations")
                .iter()
                .fold(Money(0), |sum, allocation| {
                    sum + amount(&allocation["amount"])
                });
            assert!(allocated <= amount(&payment["totalAmount"]), "{payment}");
        }
        let invoices = records(&app, company_id, "invoices").await;
        for invoice in &invoices {
            let paid = amount(&invoice["totalAmount"]) - amount(&invoice["amountDue"]);
            let credited = credit_notes
                .iter()
                .flat_map(|note| note["allocations"].as_array().cloned().unwrap_or_default())
                .filter(|allocation| allocation["invoiceRef"]["id"] == invoice["invoiceId"])
                .fold(Money(0), |sum, allocation| {
                    sum + amount(&allocation["amount"])
                });
            let voided = invoice["status"] == "Void";
            if !voided {
                assert_eq!(
                    paid,
                    settled(&payments, "Invoice", &invoice["invoiceId"]) + credited,
                    "{invoice}"
                );
            }
        }
        for bill in &bills {
            let paid = amount(&bill["totalAmount"]) - amount(&bill["amountDue"]);
            assert_eq!(
                paid,
                settled(&bill_payments, "Bill", &bill["billId"]),
                "{bill}"
            );
        }
        let accounts = records(&app, company_id, "accounts").await;
        refs_name_accounts(&accounts, &bills, "lineItems");
        refs_name_accounts(&accounts, &payments, "");
        refs_name_accounts(&accounts, &bill_payments, "");
    }
}

/// Every posting transaction with lines in the primary book is a journal
/// entry whose lines balance, debits positive; the second book's lines and
/// a zero line are left out, a transaction that posted nothing is no entry,
/// and one whose lines do not balance is reported, not stored.
#[tokio::test]
async fn posting_transactions_are_balanced_journal_entries() {
    for backend in backends() {
        let fake = fake().await;
        let app = TestApp::spawn_with(backend, options_for(&fake, None, 1)).await;
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
        let journals = records(&app, company_id, "journalEntries").await;
        assert_eq!(
            columns(
                &journals,
                &[
                    "/journalEntryId",
                    "/journalNumber",
                    "/postedOn",
                    "/description",
                    "/source/type",
                    "/source/id"
                ]
            ),
            [
                [
                    "1001",
                    "JE-0001",
                    "2026-10-25",
                    "Petty cash purchase",
                    "Journal",
                    "1001"
                ],
                [
                    "902",
                    "PYMT-0002",
                    "2026-10-16",
                    "Wire 88213",
                    "CustPymt",
                    "902"
                ],
                ["101", "INV10001", "2026-10-03", "-", "CustInvc", "101"],
                [
                    "701",
                    "BILL-0001",
                    "2026-10-01",
                    "October supplies",
                    "VendBill",
                    "701"
                ],
            ]
        );
        let invoice = &journals[2];
        assert_eq!(
            columns(
                invoice["journalLines"].as_array().expect("lines"),
                &["/accountRef/id", "/netAmount", "/currency"]
            ),
            [
                ["2", "1234.56", "USD"],
                ["5", "-1028.80", "USD"],
                ["4", "-205.76", "USD"]
            ]
        );
        for journal in &journals {
            let sum = journal["journalLines"]
                .as_array()
                .expect("lines")
                .iter()
                .fold(Money(0), |sum, line| sum + amount(&line["netAmount"]));
            assert_eq!(sum, Money(0), "{journal}");
        }
        let accounts = records(&app, company_id, "accounts").await;
        refs_name_accounts(&accounts, &journals, "journalLines");

        assert_eq!(
            issues_of(&app, company_id, "journalEntries").await,
            [["1002", "journalLines"]]
        );
    }
}

/// A role that may not read vendors gets SuiteQL's 400 "Record 'vendor'
/// was not found": suppliers fail `PermissionsError` naming the
/// permission, the connection stays linked, and the rest still syncs.
#[tokio::test]
async fn a_table_the_role_cannot_read_fails_its_data_type_only() {
    for backend in backends() {
        let fake = fake().await;
        let app = TestApp::spawn_with(backend, options_for(&fake, None, 1)).await;
        let (company_id, connection_id) = connected(&app, 3600).await;
        fake.with(|inner| {
            inner.scripted.push_back(Answer::json(
                400,
                r#"{"type":"https://www.rfc-editor.org/rfc/rfc9110.html#section-15.5.1","title":"Bad Request","status":400,"o:errorDetails":[{"detail":"Invalid search query. Detailed unprocessed description follows. Search error occurred: Record 'vendor' was not found.","o:errorQueryParam":"q","o:errorCode":"INVALID_PARAMETER"}]}"#,
            ));
        });
        refused_but_linked(
            &app,
            (company_id, connection_id),
            QueueDataTypeDataType::Suppliers,
            "Lists › Vendors",
        )
        .await;
        synced(
            &app,
            company_id,
            &[
                QueueDataTypeDataType::Suppliers,
                QueueDataTypeDataType::Bills,
            ],
        )
        .await;
        assert_eq!(
            fake.token_calls(),
            0,
            "a missing permission is not a reason to refresh"
        );
    }
}

/// After a first sync, bills, payments and journals ask only for what
/// changed since the watermark less a day, by `lastmodifieddate`; the chart
/// and tax codes are read whole again.
#[tokio::test]
async fn a_resync_asks_for_changed_documents_and_the_whole_chart() {
    for backend in backends() {
        let fake = fake().await;
        let app = TestApp::spawn_with(backend, options_for(&fake, None, 1)).await;
        let (company_id, _) = connected(&app, 3600).await;
        let kinds = [
            QueueDataTypeDataType::Accounts,
            QueueDataTypeDataType::TaxRates,
            QueueDataTypeDataType::Bills,
            QueueDataTypeDataType::Payments,
            QueueDataTypeDataType::JournalEntries,
        ];
        synced(&app, company_id, &kinds).await;
        let first = fake.calls().len();
        synced(&app, company_id, &kinds).await;
        let calls = fake.calls();
        let again: Vec<&str> = calls[first..]
            .iter()
            .map(|call| call.body.as_str())
            .collect();
        let asked = |table: &str| {
            again
                .iter()
                .filter(|body| body.contains(table))
                .copied()
                .collect::<Vec<&str>>()
        };
        for kind in [
            "t.type = 'VendBill'",
            "t.type = 'CustPymt'",
            "t.posting = 'T'",
        ] {
            let queries = asked(kind);
            assert!(!queries.is_empty(), "{kind}");
            assert!(
                queries
                    .iter()
                    .all(|query| query.contains("t.lastmodifieddate > TO_TIMESTAMP('")),
                "{queries:?}"
            );
        }
        for table in ["FROM account a", "FROM salestaxitem s"] {
            let queries = asked(table);
            assert!(!queries.is_empty(), "{table}");
            assert!(
                queries
                    .iter()
                    .all(|query| !query.contains("lastmodifieddate >")),
                "{queries:?}"
            );
        }
    }
}
