//! FreeAgent's documents and what settles them: bills (net and tax signed
//! as the total, a bill refund negative) settled by the bill payments of
//! two bank accounts' explanations; credit notes with their
//! reconciliations and refunds, and payments that settle what the invoices
//! show due. The checks are consistency, not shapes: amounts due, credit
//! left, allocations, and accounts every reference names.

use serde_json::{Value, json};

use client::types::QueueDataTypeDataType;
use tributary::data::money::Money;

use super::super::super::ledger_reads::{
    amount, columns, records, refs_name_accounts, settled, synced,
};
use super::super::super::options_for;
use super::super::{connected, fake};
use crate::helpers::{TestApp, backends};

/// Bills over two pages (net and tax signed as the total, a bill refund
/// negative, the unit price worked out from an item's totals) and the bill
/// payments of both bank accounts' explanations: each bill's amount due is
/// its total less what was paid on it, no payment allocates more than it
/// is, and every line and payment names an account of the chart.
#[tokio::test]
async fn bills_and_bill_payments_settle_what_the_bills_show_due() {
    for backend in backends() {
        let fake = fake().await;
        let app = TestApp::spawn_with(backend, options_for(&fake, None, 1)).await;
        let (company_id, _) = connected(&app, 3600).await;
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
                    "/taxAmount",
                    "/totalAmount",
                    "/amountDue",
                    "/paidOnDate"
                ]
            ),
            [
                [
                    "OS-CR-3",
                    "Paid",
                    "-20.00",
                    "-4.00",
                    "-24.00",
                    "0.00",
                    "2026-10-14"
                ],
                [
                    "OS-1001",
                    "PartiallyPaid",
                    "177.50",
                    "35.50",
                    "213.00",
                    "13.00",
                    "-"
                ],
                [
                    "OS-1002",
                    "Paid",
                    "100.00",
                    "20.00",
                    "120.00",
                    "0.00",
                    "2026-10-10"
                ],
                ["JB-7", "Open", "500.00", "0.00", "500.00", "500.00", "-"],
            ]
        );
        assert_eq!(
            bills[1]["supplierRef"],
            json!({"id": "20", "supplierName": null})
        );
        assert_eq!(bills[1]["note"], "Widgets for stock");
        let line_columns = [
            "/description",
            "/unitAmount",
            "/quantity",
            "/subTotal",
            "/taxAmount",
            "/totalAmount",
            "/accountRef/id",
        ];
        assert_eq!(
            columns(
                bills[1]["lineItems"].as_array().expect("lines"),
                &line_columns
            ),
            [[
                "Widgets", "3.55", "50", "177.50", "35.50", "213.00", "609-1"
            ]]
        );
        assert_eq!(
            columns(
                bills[0]["lineItems"].as_array().expect("lines"),
                &line_columns
            ),
            [[
                "Refund for damaged books",
                "-20.00",
                "1",
                "-20.00",
                "-4.00",
                "-24.00",
                "359"
            ]]
        );

        let payments = records(&app, company_id, "billPayments").await;
        assert_eq!(
            columns(
                &payments,
                &[
                    "/billPaymentId",
                    "/date",
                    "/totalAmount",
                    "/accountRef/id",
                    "/reference",
                    "/allocations/0/id"
                ]
            ),
            [
                [
                    "101",
                    "2026-10-20",
                    "200.00",
                    "bank-account-1",
                    "000123",
                    "1"
                ],
                ["102", "2026-10-14", "-24.00", "bank-account-1", "-", "4"],
                ["201", "2026-10-10", "120.00", "bank-account-2", "-", "2"],
            ]
        );
        for bill in &bills {
            let paid = settled(&payments, "Bill", &bill["billId"]);
            assert_eq!(
                amount(&bill["amountDue"]),
                amount(&bill["totalAmount"]) - paid,
                "{bill}"
            );
        }
        allocations_never_exceed(&payments);

        let accounts = records(&app, company_id, "accounts").await;
        refs_name_accounts(&accounts, &bills, "lineItems");
        refs_name_accounts(&accounts, &payments, "");
        let calls = fake.calls();
        let explained = calls
            .iter()
            .filter(|call| call.path == "/v2/bank_transaction_explanations");
        let asked: Vec<(String, String)> = explained
            .map(|call| {
                (
                    call.query["bank_account"].clone(),
                    call.query["page"].clone(),
                )
            })
            .collect();
        assert_eq!(
            asked,
            [
                (
                    "https://api.freeagent.com/v2/bank_accounts/1".to_owned(),
                    "1".to_owned()
                ),
                (
                    "https://api.freeagent.com/v2/bank_accounts/1".to_owned(),
                    "2".to_owned()
                ),
                (
                    "https://api.freeagent.com/v2/bank_accounts/2".to_owned(),
                    "1".to_owned()
                ),
            ]
        );
    }
}

/// What each payment allocates never exceeds it, and has its sign.
fn allocations_never_exceed(payments: &[Value]) {
    for payment in payments {
        let total = amount(&payment["totalAmount"]);
        let allocated = payment["allocations"]
            .as_array()
            .expect("allocations")
            .iter()
            .fold(Money(0), |sum, allocation| {
                sum + amount(&allocation["amount"])
            });
        assert!(allocated.0.abs() <= total.0.abs(), "{payment}");
        assert!(
            allocated.0 == 0 || allocated.0.signum() == total.0.signum(),
            "{payment}"
        );
    }
}

/// Credit notes over two pages (magnitudes of FreeAgent's negative
/// amounts; a reconciliation allocates credit to an invoice; what remains
/// is never more than the total less the refunds and allocations) and the
/// payments of invoices and credit note refunds: each invoice not written
/// off is due its total less its payments and credits, each credit note's
/// credit is what remains plus what was allocated and refunded, and every
/// line names an account of the chart.
#[tokio::test]
async fn credit_notes_and_payments_settle_what_the_invoices_show_due() {
    for backend in backends() {
        let fake = fake().await;
        let app = TestApp::spawn_with(backend, options_for(&fake, None, 1)).await;
        let (company_id, _) = connected(&app, 3600).await;
        synced(
            &app,
            company_id,
            &[
                QueueDataTypeDataType::Invoices,
                QueueDataTypeDataType::CreditNotes,
                QueueDataTypeDataType::Payments,
                QueueDataTypeDataType::Accounts,
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
                    "/subTotal",
                    "/totalTaxAmount",
                    "/totalAmount",
                    "/remainingCredit"
                ]
            ),
            [
                ["CN-006", "Submitted", "40.00", "8.00", "48.00", "48.00"],
                ["CN-005", "Void", "100.00", "0.00", "100.00", "0.00"],
                ["CN-004", "Paid", "10.00", "2.00", "12.00", "0.00"],
                ["CN-003", "Draft", "20.00", "4.00", "24.00", "24.00"],
                [
                    "CN-002",
                    "PartiallyPaid",
                    "50.00",
                    "10.00",
                    "60.00",
                    "10.00"
                ],
                [
                    "CN-001",
                    "PartiallyPaid",
                    "125.00",
                    "25.00",
                    "150.00",
                    "30.00"
                ],
            ]
        );
        assert_eq!(
            notes[5]["allocations"],
            json!([{
                "invoiceRef": {"id": "109", "invoiceNumber": null},
                "amount": "120.00",
                "allocatedOnDate": "2026-10-20"
            }])
        );
        assert_eq!(notes[5]["customerRef"]["id"], "2");
        assert_eq!(
            columns(
                notes[0]["lineItems"].as_array().expect("lines"),
                &[
                    "/unitAmount",
                    "/quantity",
                    "/subTotal",
                    "/taxAmount",
                    "/totalAmount",
                    "/accountRef/id"
                ]
            ),
            [["20.00", "2", "40.00", "8.00", "48.00", "001"]]
        );

        let payments = records(&app, company_id, "payments").await;
        assert_eq!(
            columns(
                &payments,
                &[
                    "/paymentId",
                    "/date",
                    "/totalAmount",
                    "/allocations/0/type",
                    "/allocations/0/id",
                    "/accountRef/id"
                ]
            ),
            [
                [
                    "108",
                    "2026-10-25",
                    "-12.00",
                    "CreditNote",
                    "4",
                    "bank-account-1"
                ],
                [
                    "107",
                    "2026-10-22",
                    "-50.00",
                    "CreditNote",
                    "2",
                    "bank-account-1"
                ],
                [
                    "103",
                    "2026-10-15",
                    "234.56",
                    "Invoice",
                    "104",
                    "bank-account-1"
                ],
                [
                    "106",
                    "2026-09-01",
                    "60.00",
                    "Invoice",
                    "111",
                    "bank-account-1"
                ],
                [
                    "105",
                    "2026-08-21",
                    "130.00",
                    "Invoice",
                    "108",
                    "bank-account-1"
                ],
                [
                    "104",
                    "2026-08-20",
                    "120.00",
                    "Invoice",
                    "107",
                    "bank-account-1"
                ],
            ]
        );
        allocations_never_exceed(&payments);

        let invoices = records(&app, company_id, "invoices").await;
        let credited = |invoice: &Value| {
            notes
                .iter()
                .flat_map(|note| note["allocations"].as_array().cloned().unwrap_or_default())
                .filter(|allocation| allocation["invoiceRef"]["id"] == invoice["invoiceId"])
                .fold(Money(0), |sum, allocation| {
                    sum + amount(&allocation["amount"])
                })
        };
        // 010 and 011 were written off: what is not due was neither paid nor credited.
        for invoice in invoices.iter().filter(|invoice| {
            !["010", "011"].contains(&invoice["invoiceNumber"].as_str().unwrap_or(""))
        }) {
            let paid = settled(&payments, "Invoice", &invoice["invoiceId"]);
            assert_eq!(
                amount(&invoice["amountDue"]),
                amount(&invoice["totalAmount"]) - paid - credited(invoice),
                "{invoice}"
            );
        }
        for note in notes.iter().filter(|note| {
            ["Submitted", "PartiallyPaid", "Paid"].contains(&note["status"].as_str().unwrap_or(""))
        }) {
            let refunded = -settled(&payments, "CreditNote", &note["creditNoteId"]);
            let allocated = note["allocations"]
                .as_array()
                .expect("allocations")
                .iter()
                .fold(Money(0), |sum, allocation| {
                    sum + amount(&allocation["amount"])
                });
            assert_eq!(
                amount(&note["remainingCredit"]) + allocated + refunded,
                amount(&note["totalAmount"]),
                "{note}"
            );
        }

        let accounts = records(&app, company_id, "accounts").await;
        refs_name_accounts(&accounts, &invoices, "lineItems");
        refs_name_accounts(&accounts, &notes, "lineItems");
        refs_name_accounts(&accounts, &payments, "");
        assert_eq!(
            invoices
                .iter()
                .filter(|invoice| invoice["lineItems"][0]["accountRef"]["id"] == "001")
                .count(),
            6
        );
    }
}
