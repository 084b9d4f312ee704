//! FreshBooks' credit notes over two pages, with their lines (taxes as
//! percentages, one compounded), every status we give them (a draft, none
//! used, part used, all used) and a deleted one left out; their
//! allocations are the payments rows made from a credit (a deleted such
//! row left out), each naming a synced invoice, so that what each invoice
//! shows paid is what its payments and the credit applied to it settle; a
//! 403 for a consent without `user:credit_notes:read` fails credit notes
//! only. The fixture `fixtures/ledger/credit_notes-{1,2}.json` follows the
//! list example of https://www.freshbooks.com/api/credits as the official
//! SDK reads it (`src/platforms/freshbooks/NOTES.md`, [B25] [B34]).

use client::types::QueueDataTypeDataType;
use serde_json::Value;
use tributary::data::money::Money;

use super::super::ledger_reads::{amount, columns, records, refused_but_linked, settled, synced};
use super::super::options_for;
use super::{ACCOUNT, connected, fake};
use crate::helpers::{TestApp, backends};

/// What the allocations of `credit_notes` to invoice `id` add up to.
fn credited(credit_notes: &[Value], id: &Value) -> Money {
    credit_notes
        .iter()
        .flat_map(|note| note["allocations"].as_array().cloned().unwrap_or_default())
        .filter(|allocation| &allocation["invoiceRef"]["id"] == id)
        .fold(Money(0), |sum, allocation| {
            sum + amount(&allocation["amount"])
        })
}

#[tokio::test]
async fn freshbooks_credit_notes_sync_with_the_credit_applied_from_them() {
    for backend in backends() {
        let fake = fake().await;
        let app = TestApp::spawn_with(backend, options_for(&fake, None, 1)).await;
        let (company_id, _) = connected(&app, 43_200).await;
        synced(
            &app,
            company_id,
            &[
                QueueDataTypeDataType::CreditNotes,
                QueueDataTypeDataType::Invoices,
                QueueDataTypeDataType::Customers,
                QueueDataTypeDataType::Payments,
            ],
        )
        .await;

        let credit_notes = records(&app, company_id, "creditNotes").await;
        assert_eq!(
            columns(
                &credit_notes,
                &[
                    "/creditNoteId",
                    "/creditNoteNumber",
                    "/customerRef/id",
                    "/customerRef/companyName",
                    "/issueDate",
                    "/status",
                    "/currency",
                    "/subTotal",
                    "/totalTaxAmount",
                    "/totalAmount",
                    "/remainingCredit",
                    "/note"
                ]
            ),
            [
                [
                    "6004",
                    "0000104",
                    "301",
                    "Maple Leaf Foods",
                    "2026-10-25",
                    "Draft",
                    "CAD",
                    "30.00",
                    "0.00",
                    "30.00",
                    "30.00",
                    "-"
                ],
                [
                    "6003",
                    "0000103",
                    "302",
                    "Jean Bouchard",
                    "2026-10-22",
                    "Submitted",
                    "CAD",
                    "100.00",
                    "15.47",
                    "115.47",
                    "115.47",
                    "-"
                ],
                [
                    "6002",
                    "0000102",
                    "301",
                    "Maple Leaf Foods",
                    "2026-10-21",
                    "PartiallyPaid",
                    "CAD",
                    "50.00",
                    "6.50",
                    "56.50",
                    "48.50",
                    "Returned widgets"
                ],
                [
                    "6001",
                    "0000101",
                    "301",
                    "Maple Leaf Foods",
                    "2026-10-20",
                    "Paid",
                    "CAD",
                    "12.00",
                    "0.00",
                    "12.00",
                    "0.00",
                    "Sorry for the late delivery"
                ],
            ]
        );
        // The deleted credit note (0000105) is left out.
        assert!(
            credit_notes
                .iter()
                .all(|note| note["creditNoteNumber"] != "0000105")
        );
        assert_eq!(
            columns(
                credit_notes[2]["lineItems"].as_array().expect("lines"),
                &[
                    "/description",
                    "/quantity",
                    "/unitAmount",
                    "/subTotal",
                    "/taxAmount",
                    "/totalAmount"
                ]
            ),
            [[
                "Widgets: Returned, damaged",
                "2",
                "25.00",
                "50.00",
                "6.50",
                "56.50"
            ]]
        );
        assert_eq!(
            columns(
                credit_notes[2]["allocations"]
                    .as_array()
                    .expect("allocations"),
                &["/invoiceRef/id", "/amount", "/allocatedOnDate"]
            ),
            [["500017", "8.00", "2026-10-27"]]
        );
        assert_eq!(
            columns(
                credit_notes[3]["allocations"]
                    .as_array()
                    .expect("allocations"),
                &["/invoiceRef/id", "/amount", "/allocatedOnDate"]
            ),
            [["500017", "12.00", "2026-10-26"]]
        );
        // The deleted payments row made from credit 6003 allocates nothing.
        assert_eq!(credit_notes[1]["allocations"], serde_json::json!([]));

        let invoices = records(&app, company_id, "invoices").await;
        let customers = records(&app, company_id, "customers").await;
        let payments = records(&app, company_id, "payments").await;
        for note in &credit_notes {
            let allocations = note["allocations"].as_array().expect("allocations");
            let allocated = allocations.iter().fold(Money(0), |sum, allocation| {
                sum + amount(&allocation["amount"])
            });
            assert!(allocated <= amount(&note["totalAmount"]), "{note}");
            assert_eq!(
                allocated + amount(&note["remainingCredit"]),
                amount(&note["totalAmount"]),
                "{note}"
            );
            for allocation in allocations {
                assert!(
                    invoices
                        .iter()
                        .any(|invoice| invoice["invoiceId"] == allocation["invoiceRef"]["id"]),
                    "{allocation}"
                );
            }
            assert!(
                customers
                    .iter()
                    .any(|customer| customer["customerId"] == note["customerRef"]["id"]),
                "{note}"
            );
        }
        // What each invoice shows paid is what its payments and the credit
        // applied to it settle: nothing counted twice, nothing missing.
        for invoice in &invoices {
            let paid = amount(&invoice["totalAmount"]) - amount(&invoice["amountDue"]);
            let id = &invoice["invoiceId"];
            assert_eq!(
                settled(&payments, "Invoice", id) + credited(&credit_notes, id),
                paid,
                "{invoice}"
            );
        }

        let calls = fake.calls();
        let pages = |list: &str| -> Vec<String> {
            calls
                .iter()
                .filter(|call| call.path == format!("/accounting/account/{ACCOUNT}/{list}"))
                .map(|call| call.query.get("page").cloned().unwrap_or_default())
                .collect()
        };
        assert_eq!(pages("credit_notes/credit_notes"), ["1", "2"]);
        // The payments for each page of credit notes (each has one not
        // deleted), then for the payments data type.
        assert_eq!(pages("payments/payments"), ["1", "2", "1", "2", "1", "2"]);
        assert!(calls.iter().all(|call| {
            !call.path.ends_with("/credit_notes/credit_notes")
                || (call.query.get("include[]").map(String::as_str) == Some("lines")
                    && call.query.get("per_page").map(String::as_str) == Some("100"))
        }));
    }
}

/// A token whose consent lacks `user:credit_notes:read` gets a 403 for
/// credit notes: that data type fails `PermissionsError`, the connection
/// stays linked, and the others still sync.
#[tokio::test]
async fn a_missing_credit_notes_scope_fails_credit_notes_only() {
    for backend in backends() {
        let fake = fake().await;
        let app = TestApp::spawn_with(backend, options_for(&fake, None, 1)).await;
        let (company_id, connection_id) = connected(&app, 43_200).await;
        fake.with(|inner| {
            inner.scripted.push_back(super::Answer::json(
                403,
                r#"{"error":"insufficient_scope","error_description":"The access token does not have the user:credit_notes:read scope."}"#,
            ));
        });
        refused_but_linked(
            &app,
            (company_id, connection_id),
            QueueDataTypeDataType::CreditNotes,
            "user:credit_notes:read",
        )
        .await;
        assert!(
            fake.calls()
                .iter()
                .all(|call| !call.path.ends_with("/payments/payments")),
            "the payments are not read for a refused list"
        );
        synced(&app, company_id, &[QueueDataTypeDataType::Payments]).await;
        assert_eq!(fake.token_calls(), 0, "a 403 is not a reason to refresh");
    }
}
