//! FreshBooks' ledger beyond sales: bill vendors over two pages (one
//! archived, named by its contact), taxes (a compound one), items (one
//! counting inventory, one deleted), bills over two pages with their lines
//! and every status (a deleted one void), bill payments that settle what
//! the bills show paid (a deleted one left out), payments that settle what
//! the invoices show paid (a deleted one and a credit applied left out), the
//! business of the identity's memberships as company info; a
//! 403 for a scope the consent lacks fails that data type only; what
//! FreshBooks does not sync is refused without a call (the chart of
//! accounts: `super::accounts`; credit notes: `super::credits`). Fixtures follow
//! https://www.freshbooks.com/api/bills, /bill_payments, /vendors,
//! /payments, /taxes and /items as the official SDK reads them (see
//! `src/platforms/freshbooks/NOTES.md`, "Accounting model").

use serde_json::json;

use client::types::QueueDataTypeDataType;
use tributary::data::money::Money;

use super::super::ledger_reads::{amount, columns, records, refused_but_linked, settled, synced};
use super::super::options_for;
use super::{ACCOUNT, connected, fake};
use crate::helpers::{TestApp, backends, json};

/// Suppliers from both pages of bill vendors, taxes and items, each field
/// as mapped; every list is read page by page until `pages`.
#[tokio::test]
async fn freshbooks_vendors_taxes_and_items_sync() {
    for backend in backends() {
        let fake = fake().await;
        let app = TestApp::spawn_with(backend, options_for(&fake, None, 1)).await;
        let (company_id, _) = connected(&app, 43_200).await;
        synced(
            &app,
            company_id,
            &[
                QueueDataTypeDataType::Suppliers,
                QueueDataTypeDataType::TaxRates,
                QueueDataTypeDataType::Items,
            ],
        )
        .await;

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
                    "/status",
                    "/sourceModifiedDate"
                ]
            ),
            [
                [
                    "4002",
                    "Northern Hosting",
                    "billing@northern.example",
                    "613-555-0120",
                    "CAD",
                    "Active",
                    // 16:45 in Toronto in August (EDT) is 20:45 UTC.
                    "2026-08-20T20:45:00.000000Z"
                ],
                [
                    "4001",
                    "Office Depot",
                    "ap@officedepot.example",
                    "416-555-0300",
                    "CAD",
                    "Active",
                    "2026-02-10T14:30:00.000000Z"
                ],
                [
                    "4003",
                    "Pat Moreau",
                    "pat@moreau.example",
                    "-",
                    "CAD",
                    "Archived",
                    "2026-05-05T12:00:00.000000Z"
                ],
            ]
        );

        let rates = records(&app, company_id, "taxRates").await;
        assert_eq!(
            columns(
                &rates,
                &[
                    "/taxRateId",
                    "/name",
                    "/code",
                    "/effectiveTaxRate",
                    "/components/0/isCompound",
                    "/status"
                ]
            ),
            [
                ["2", "GST", "-", "5", "false", "Active"],
                ["1", "HST", "-", "13", "false", "Active"],
                ["3", "QST", "-", "9.975", "true", "Active"],
            ]
        );

        let items = records(&app, company_id, "items").await;
        assert_eq!(
            columns(
                &items,
                &[
                    "/itemId",
                    "/name",
                    "/code",
                    "/type",
                    "/status",
                    "/sales/unitPrice",
                    "/sales/taxRateRef/id",
                    "/quantityOnHand",
                    "/purchases"
                ]
            ),
            [
                [
                    "23",
                    "Old plan",
                    "-",
                    "NonInventory",
                    "Archived",
                    "49.00",
                    "-",
                    "-",
                    "-"
                ],
                [
                    "21",
                    "Web design",
                    "-",
                    "NonInventory",
                    "Active",
                    "100.00",
                    "1",
                    "-",
                    "-"
                ],
                [
                    "22",
                    "Widget",
                    "W-1",
                    "Inventory",
                    "Active",
                    "4.50",
                    "2",
                    "12",
                    "-"
                ],
            ]
        );
        assert_eq!(items[1]["sales"]["description"], "Design work, per hour");
        for item in &items {
            let tax = &item["sales"]["taxRateRef"]["id"];
            assert!(
                tax.is_null() || rates.iter().any(|rate| &rate["taxRateId"] == tax),
                "{item}"
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
        assert_eq!(pages("bill_vendors/bill_vendors"), ["1", "2"]);
        assert_eq!(pages("taxes/taxes"), ["1"]);
        assert_eq!(pages("items/items"), ["1"]);
        assert!(
            calls
                .iter()
                .all(|call| call.query.get("per_page").is_none_or(|size| size == "100"))
        );
    }
}

/// Bills over two pages with their lines (a line's taxes and total
/// FreshBooks'), every status FreshBooks has (a deleted bill void, paid on
/// the day of its last payment); bill payments name the bill's supplier
/// and settle exactly what each bill shows paid, a deleted one left out;
/// every bill's lines add up to it.
#[tokio::test]
async fn freshbooks_bill_payments_settle_what_the_bills_show_paid() {
    for backend in backends() {
        let fake = fake().await;
        let app = TestApp::spawn_with(backend, options_for(&fake, None, 1)).await;
        let (company_id, _) = connected(&app, 43_200).await;
        synced(
            &app,
            company_id,
            &[
                QueueDataTypeDataType::Bills,
                QueueDataTypeDataType::BillPayments,
                QueueDataTypeDataType::Suppliers,
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
                    "/supplierRef/supplierName",
                    "/issueDate",
                    "/dueDate",
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
                    "800002",
                    "NH-2026-10",
                    "4002",
                    "Northern Hosting",
                    "2026-10-05",
                    "2026-11-04",
                    "PartiallyPaid",
                    "300.00",
                    "42.95",
                    "342.95",
                    "242.95",
                    "-"
                ],
                [
                    "800001",
                    "OD-7731",
                    "4001",
                    "Office Depot",
                    "2026-10-01",
                    "2026-10-31",
                    "Open",
                    "50.00",
                    "6.50",
                    "56.50",
                    "56.50",
                    "-"
                ],
                [
                    "800003",
                    "OD-7802",
                    "4001",
                    "Office Depot",
                    "2026-09-20",
                    "2026-10-20",
                    "Paid",
                    "80.00",
                    "0.00",
                    "80.00",
                    "0.00",
                    "2026-10-25"
                ],
                [
                    "800004",
                    "NH-2026-09",
                    "4002",
                    "Northern Hosting",
                    "2026-09-05",
                    "2026-10-05",
                    "Void",
                    "40.00",
                    "0.00",
                    "40.00",
                    "40.00",
                    "-"
                ],
            ]
        );
        assert_eq!(
            columns(
                bills[0]["lineItems"].as_array().expect("lines"),
                &[
                    "/description",
                    "/unitAmount",
                    "/quantity",
                    "/subTotal",
                    "/taxAmount",
                    "/totalAmount",
                    "/accountRef"
                ]
            ),
            [
                [
                    "Software: Hosting, October",
                    "100.00",
                    "1",
                    "100.00",
                    "13.00",
                    "113.00",
                    "-"
                ],
                [
                    "Software: Support, Quebec office",
                    "100.00",
                    "2",
                    "200.00",
                    "29.95",
                    "229.95",
                    "-"
                ],
            ]
        );
        assert_eq!(bills[2]["lineItems"][0]["description"], "Office Supplies");
        // Bills' `updated_at` is UTC (as the SDK reads it), unlike the
        // US/Eastern times of invoices.
        assert_eq!(
            bills[0]["sourceModifiedDate"],
            "2026-10-15T13:20:00.000000Z"
        );
        for bill in &bills {
            let lines = bill["lineItems"].as_array().expect("lines");
            let total = lines
                .iter()
                .fold(Money(0), |sum, line| sum + amount(&line["totalAmount"]));
            assert_eq!(total, amount(&bill["totalAmount"]), "{bill}");
            let sub_total = lines
                .iter()
                .fold(Money(0), |sum, line| sum + amount(&line["subTotal"]));
            assert_eq!(sub_total, amount(&bill["subTotal"]), "{bill}");
        }

        let payments = records(&app, company_id, "billPayments").await;
        assert_eq!(
            columns(
                &payments,
                &[
                    "/billPaymentId",
                    "/date",
                    "/reference",
                    "/supplierRef/id",
                    "/supplierRef/supplierName",
                    "/currency",
                    "/totalAmount",
                    "/allocations/0/type",
                    "/allocations/0/id",
                    "/accountRef",
                    "/note"
                ]
            ),
            [
                [
                    "900003",
                    "2026-10-25",
                    "Cash",
                    "4001",
                    "Office Depot",
                    "CAD",
                    "30.00",
                    "Bill",
                    "800003",
                    "-",
                    "-"
                ],
                [
                    "900001",
                    "2026-10-15",
                    "Bank Transfer",
                    "4002",
                    "Northern Hosting",
                    "CAD",
                    "100.00",
                    "Bill",
                    "800002",
                    "-",
                    "First instalment"
                ],
                [
                    "900002",
                    "2026-10-10",
                    "Check",
                    "4001",
                    "Office Depot",
                    "CAD",
                    "50.00",
                    "Bill",
                    "800003",
                    "-",
                    "-"
                ],
            ]
        );
        for payment in &payments {
            let allocated = payment["allocations"]
                .as_array()
                .expect("allocations")
                .iter()
                .fold(Money(0), |sum, allocation| {
                    sum + amount(&allocation["amount"])
                });
            assert!(allocated <= amount(&payment["totalAmount"]), "{payment}");
        }
        for bill in &bills {
            let paid = amount(&bill["totalAmount"]) - amount(&bill["amountDue"]);
            assert_eq!(settled(&payments, "Bill", &bill["billId"]), paid, "{bill}");
        }
        let suppliers = records(&app, company_id, "suppliers").await;
        for document in bills.iter().chain(&payments) {
            let supplier = &document["supplierRef"]["id"];
            assert!(
                suppliers.iter().any(|s| &s["supplierId"] == supplier),
                "{document}"
            );
        }

        let calls = fake.calls();
        let bill_pages: Vec<_> = calls
            .iter()
            .filter(|call| call.path.ends_with("/bills/bills"))
            .collect();
        // Two for the bills, then two for the payees of each page of bill
        // payments (each has one).
        assert_eq!(bill_pages.len(), 6);
        assert!(
            bill_pages
                .iter()
                .all(|call| { call.query.contains_key("include[]") })
        );
    }
}

/// Payments over two pages, each settling the invoice it names (a deleted
/// payment and one made from a client's credit left out): what each
/// invoice shows paid is what its payments settle, but for the one a
/// credit paid part of.
#[tokio::test]
async fn freshbooks_payments_settle_what_the_invoices_show_paid() {
    for backend in backends() {
        let fake = fake().await;
        let app = TestApp::spawn_with(backend, options_for(&fake, None, 1)).await;
        let (company_id, _) = connected(&app, 43_200).await;
        synced(
            &app,
            company_id,
            &[
                QueueDataTypeDataType::Payments,
                QueueDataTypeDataType::Invoices,
            ],
        )
        .await;

        let payments = records(&app, company_id, "payments").await;
        assert_eq!(
            columns(
                &payments,
                &[
                    "/paymentId",
                    "/date",
                    "/customerRef/id",
                    "/reference",
                    "/currency",
                    "/totalAmount",
                    "/allocations/0/type",
                    "/allocations/0/id",
                    "/allocations/0/amount",
                    "/note"
                ]
            ),
            [
                [
                    "700009",
                    "2026-10-26",
                    "301",
                    "-",
                    "CAD",
                    "40.00",
                    "Invoice",
                    "500017",
                    "40.00",
                    "Check"
                ],
                [
                    "700008",
                    "2026-10-25",
                    "301",
                    "-",
                    "CAD",
                    "30.00",
                    "Invoice",
                    "500016",
                    "30.00",
                    "Cash"
                ],
                [
                    "700007",
                    "2026-10-24",
                    "301",
                    "-",
                    "CAD",
                    "120.00",
                    "Invoice",
                    "500013",
                    "120.00",
                    "Check"
                ],
                [
                    "700005",
                    "2026-10-22",
                    "301",
                    "-",
                    "CAD",
                    "120.00",
                    "Invoice",
                    "500009",
                    "120.00",
                    "Bank Transfer"
                ],
                [
                    "700004",
                    "2026-10-21",
                    "302",
                    "ch_3Pq0002",
                    "CAD",
                    "120.00",
                    "Invoice",
                    "500008",
                    "120.00",
                    "VISA"
                ],
                [
                    "700003",
                    "2026-10-20",
                    "301",
                    "ch_3Pq0001",
                    "CAD",
                    "120.00",
                    "Invoice",
                    "500007",
                    "120.00",
                    "Paid online"
                ],
                [
                    "700002",
                    "2026-10-13",
                    "301",
                    "-",
                    "CAD",
                    "20.00",
                    "Invoice",
                    "500006",
                    "20.00",
                    "Cash"
                ],
                [
                    "700001",
                    "2026-10-12",
                    "301",
                    "-",
                    "CAD",
                    "50.00",
                    "Invoice",
                    "500005",
                    "50.00",
                    "Check"
                ],
            ]
        );
        // 00:30 on 21 October in Toronto (EDT) is 04:30 UTC.
        assert_eq!(
            payments[4]["sourceModifiedDate"],
            "2026-10-21T04:30:00.000000Z"
        );

        let invoices = records(&app, company_id, "invoices").await;
        assert_eq!(invoices.len(), 18);
        for invoice in &invoices {
            let paid = amount(&invoice["totalAmount"]) - amount(&invoice["amountDue"]);
            let settled = settled(&payments, "Invoice", &invoice["invoiceId"]);
            if invoice["invoiceId"] == "500017" {
                // 20.00 of its 60.00 came from the client's credits
                // (credit notes 6001 and 6002: `super::credits`).
                assert_eq!(settled, paid - Money::from_cents(2_000), "{invoice}");
            } else {
                assert_eq!(settled, paid, "{invoice}");
            }
        }
        let pages: Vec<String> = fake
            .calls()
            .iter()
            .filter(|call| call.path.ends_with("/payments/payments"))
            .map(|call| call.query.get("page").cloned().unwrap_or_default())
            .collect();
        assert_eq!(pages, ["1", "2"]);
    }
}

/// The connection's business (not the user's other one) is the one
/// company info record: its name, address and phone from `/users/me`; what
/// FreshBooks does not say there is null.
#[tokio::test]
async fn freshbooks_company_info_is_the_connections_business() {
    for backend in backends() {
        let fake = fake().await;
        let app = TestApp::spawn_with(backend, options_for(&fake, None, 1)).await;
        let (company_id, _) = connected(&app, 43_200).await;
        synced(&app, company_id, &[QueueDataTypeDataType::CompanyInfo]).await;
        let company = records(&app, company_id, "companyInfo").await;
        assert_eq!(company.len(), 1, "{company:?}");
        assert_eq!(
            columns(
                &company,
                &[
                    "/companyInfoId",
                    "/companyName",
                    "/phone",
                    "/baseCurrency",
                    "/legalName",
                    "/taxNumber",
                    "/financialYearStart"
                ]
            ),
            [[
                "zDmNq",
                "Maple Leaf Foods",
                "416-555-0100",
                "-",
                "-",
                "-",
                "-"
            ]]
        );
        assert_eq!(
            company[0]["addresses"],
            json!([{
                "type": "Unknown",
                "line1": "1 Main St",
                "line2": null,
                "city": "Toronto",
                "region": "Ontario",
                "postalCode": "M5V 2T6",
                "country": "Canada"
            }])
        );
    }
}

/// A token whose consent lacks `user:bills:read` gets a 403 for bills:
/// that data type fails `PermissionsError`, the connection stays linked,
/// and the other data types still sync.
#[tokio::test]
async fn a_missing_bills_scope_fails_bills_only() {
    for backend in backends() {
        let fake = fake().await;
        let app = TestApp::spawn_with(backend, options_for(&fake, None, 1)).await;
        let (company_id, connection_id) = connected(&app, 43_200).await;
        fake.with(|inner| {
            inner.scripted.push_back(super::Answer::json(
                403,
                r#"{"error":"insufficient_scope","error_description":"The access token does not have the user:bills:read scope."}"#,
            ));
        });
        refused_but_linked(
            &app,
            (company_id, connection_id),
            QueueDataTypeDataType::Bills,
            "user:bills:read",
        )
        .await;
        synced(&app, company_id, &[QueueDataTypeDataType::Suppliers]).await;
        assert_eq!(fake.token_calls(), 0, "a 403 is not a reason to refresh");
    }
}

/// Journal entries are not synced from FreshBooks: queued, they answer
/// `NotSupported` without a call.
#[tokio::test]
async fn what_freshbooks_does_not_sync_is_refused_without_a_call() {
    for backend in backends() {
        let fake = fake().await;
        let app = TestApp::spawn_with(backend, options_for(&fake, None, 1)).await;
        let (company_id, _) = connected(&app, 43_200).await;
        let before = fake.calls().len();
        for data_type in ["journalEntries"] {
            let queued = json(
                app.post_json(
                    &format!("/companies/{company_id}/data/queue/{data_type}"),
                    &json!(null),
                )
                .await,
            )
            .await;
            assert_eq!(queued[0]["status"], "NotSupported", "{queued}");
        }
        assert_eq!(fake.calls().len(), before, "refused without a call");
    }
}
