//! Zoho Books' payments, vendor payments and journals, whose lists name
//! only ids: each record read whole, settling what the invoices and bills
//! show paid, journals balancing on accounts of the chart.

use serde_json::{Value, json};

use client::types::QueueDataTypeDataType;
use tributary::data::money::Money;

use super::super::ledger_reads::{amount, columns, records, settled, synced};
use super::super::options_for;
use super::ledger::{calls_to, connected};
use super::{ORGANIZATION, fake};
use crate::helpers::{TestApp, backends};

/// Payments and vendor payments list only their ids: each is read whole
/// (`GET /customerpayments/{id}`, `/vendorpayments/{id}`) for what it
/// settles. What each invoice and bill shows paid is what its payments
/// settle (invoice INV-000004 also had credit note CN-32 applied); a vendor
/// payment in the organization's currency id gets its code.
#[tokio::test]
async fn payments_are_read_whole_and_settle_what_invoices_and_bills_show_paid() {
    for backend in backends() {
        let fake = fake().await;
        let app = TestApp::spawn_with(backend, options_for(&fake, Some(4), 1)).await;
        let (company_id, _) = connected(&app).await;
        synced(
            &app,
            company_id,
            &[
                QueueDataTypeDataType::Payments,
                QueueDataTypeDataType::BillPayments,
                QueueDataTypeDataType::Invoices,
                QueueDataTypeDataType::Bills,
                QueueDataTypeDataType::Accounts,
            ],
        )
        .await;

        let payments = records(&app, company_id, "payments").await;
        let received = columns(&payments, &["/paymentId", "/date", "/totalAmount"]);
        assert_eq!(
            received,
            [
                ["9030000079469", "2026-11-20", "30.00"],
                ["9030000079468", "2026-11-10", "300.00"],
                ["9030000079467", "2026-10-25", "250.50"],
            ]
        );
        assert_eq!(
            payments[1]["allocations"],
            json!([
                {"type": "Invoice", "id": "4600000000004", "amount": "270.00"},
                {"type": "Invoice", "id": "4600000000007", "amount": "20.00"}
            ]),
            "10.00 left unapplied"
        );
        assert_eq!(
            payments[1]["customerRef"],
            json!({"id": "460000000026049", "companyName": "Bowman and Co"})
        );
        assert_eq!(payments[1]["reference"], "TRF-20261110");
        assert_eq!(
            payments[1]["accountRef"],
            Value::Null,
            "Zoho's document has none"
        );
        assert_eq!(
            payments[2]["accountRef"],
            json!({"id": "460000000000358", "name": "Undeposited Funds"})
        );
        assert_eq!(payments[2]["currency"], "EUR");
        let invoices = records(&app, company_id, "invoices").await;
        for (invoice_id, credited) in [
            ("4600000000004", Money(300_000)),
            ("4600000000005", Money(0)),
            ("4600000000007", Money(0)),
        ] {
            let invoice = invoices
                .iter()
                .find(|invoice| invoice["invoiceId"] == invoice_id)
                .expect("the invoice");
            let paid = amount(&invoice["totalAmount"]) - amount(&invoice["amountDue"]);
            assert_eq!(
                settled(&payments, "Invoice", &json!(invoice_id)) + credited,
                paid,
                "{invoice}"
            );
        }

        let bill_payments = records(&app, company_id, "billPayments").await;
        let paid_out = columns(
            &bill_payments,
            &[
                "/billPaymentId",
                "/totalAmount",
                "/currency",
                "/accountRef/name",
            ],
        );
        assert_eq!(
            paid_out,
            [
                ["460000000053219", "150.00", "EUR", "Business Checking"],
                ["460000000053225", "60.00", "EUR", "Business Card"],
                ["460000000053230", "200.00", "EUR", "Business Checking"],
            ],
            "the first and third give only the organization's currency id"
        );
        assert_eq!(
            bill_payments[0]["supplierRef"],
            json!({"id": "460000000000004", "supplierName": "Steel Vendor AG"})
        );
        let accounts = records(&app, company_id, "accounts").await;
        for payment in &bill_payments {
            assert!(
                accounts
                    .iter()
                    .any(|a| a["accountId"] == payment["accountRef"]["id"]
                        && a["isBankAccount"] == true),
                "{payment}"
            );
        }
        let bills = records(&app, company_id, "bills").await;
        for bill in bills
            .iter()
            .filter(|bill| bill["status"] != "Draft" && bill["status"] != "Void")
        {
            let paid = amount(&bill["totalAmount"]) - amount(&bill["amountDue"]);
            assert_eq!(
                settled(&bill_payments, "Bill", &bill["billId"]),
                paid,
                "{bill}"
            );
        }

        for (path, count) in [("customerpayments", 3), ("vendorpayments", 3)] {
            let singles = fake
                .calls()
                .iter()
                .filter(|call| call.path.starts_with(&format!("/books/v3/{path}/")))
                .count();
            assert_eq!(singles, count, "{path}: one call a payment");
        }
        // The organization is asked once for the page, for its currency.
        let organization_calls = fake
            .calls()
            .iter()
            .filter(|call| call.path == format!("/books/v3/organizations/{ORGANIZATION}"))
            .count();
        assert_eq!(organization_calls, 1);
    }
}

/// Journals: only published ones (`status=published`), each read whole for
/// its lines, debits positive and credits negative, every entry balancing
/// and naming accounts of the chart; a resync asks by `last_modified_time`.
#[tokio::test]
async fn published_journals_balance_and_post_to_the_chart() {
    for backend in backends() {
        let fake = fake().await;
        let app = TestApp::spawn_with(backend, options_for(&fake, Some(4), 1)).await;
        let (company_id, _) = connected(&app).await;
        let kinds = [
            QueueDataTypeDataType::JournalEntries,
            QueueDataTypeDataType::Accounts,
        ];
        synced(&app, company_id, &kinds).await;

        let entries = records(&app, company_id, "journalEntries").await;
        let listed = columns(&entries, &["/journalNumber", "/postedOn", "/description"]);
        assert_eq!(
            listed,
            [
                ["1", "2026-11-04", "Loan repayment"],
                ["2", "2026-10-31", "Depreciation and write-off"],
            ],
            "the draft is not posted"
        );
        assert_eq!(
            entries[1]["journalLines"],
            json!([
                {"accountRef": {"id": "460000000000403", "name": "Other Expenses"},
                 "description": "Depreciation and write-off", "netAmount": "120.25", "currency": "EUR"},
                {"accountRef": {"id": "460000000000410", "name": "Cost of Goods Sold"},
                 "description": "Depreciation and write-off", "netAmount": "30.00", "currency": "EUR"},
                {"accountRef": {"id": "460000000000385", "name": "Owner's Equity"},
                 "description": "Depreciation and write-off", "netAmount": "-150.25", "currency": "EUR"}
            ])
        );
        assert_eq!(entries[0]["source"], Value::Null, "a manual journal");
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

        synced(&app, company_id, &kinds[..1]).await;
        let lists = calls_to(&fake, "journals");
        assert!(lists.iter().all(|query| query["status"] == "published"));
        assert!(!lists[0].contains_key("last_modified_time"));
        assert!(
            lists
                .last()
                .is_some_and(|query| query.contains_key("last_modified_time")),
            "{lists:?}"
        );
    }
}
