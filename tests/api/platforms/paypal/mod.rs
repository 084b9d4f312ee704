//! PayPal: invoices over several numbered pages (each invoice's detail
//! fetched after the list's summary), every documented status, exact money
//! in USD and JPY, refresh before use and on a 401 with HTTP Basic (PayPal
//! keeps its refresh token), `invalid_grant`, 429, 5xx, garbage, the data
//! types PayPal lacks (customers among them), and verification; payments
//! from the invoices' recorded payments and refunds, each settling its
//! invoice. Fixtures
//! follow PayPal's invoice samples (list and show invoice, Invoicing API v2;
//! see `src/platforms/paypal/NOTES.md`).
//!
//! The scenarios every platform shares (`super::scenarios`) run from its
//! `CASE`; the tests here are its own.

use std::sync::Arc;

use serde_json::{Value, json};
use uuid::Uuid;

use client::types::{FetchMode, PullStatus, QueueDataTypeDataType};

use super::fake::{Answer, Call, Fake, Scheme, fixture};
use super::scenarios::unfiltered::{Unfiltered, unfiltered_scenario};
use super::scenarios::{
    Case, Cut, Errors, Pages, Refresh, Refused, Synced, Verification, connected as connected_as,
    platform_scenarios, records,
};
use super::{latest, options_for, sync};
use crate::helpers::{TestApp, backends};

pub const PAYER: &str = "QUE6Y6N9W3ZXL";
const ACCESS: &str = "paypal-access-token-0001";
const REFRESH: &str = "paypal-refresh-token-0001";
/// Invoices per page in these tests.
const PAGE: u64 = 3;
const LIST: &str = "/v2/invoicing/invoices";
/// The first invoice of the first list page.
const FIRST: &str = "INV2-TEST-0001-Q52L-CPZ5";

/// One invoice's detail, by id, from the fixture of all twelve.
fn detail(id: &str) -> Option<Value> {
    let all: Value =
        serde_json::from_str(&fixture("paypal/fixtures/invoice-details.json")).expect("JSON");
    all.as_array()?
        .iter()
        .find(|invoice| invoice["id"] == id)
        .cloned()
}

/// Serves the PayPal fixtures: four list pages of three summaries, and each
/// invoice's detail.
fn router() -> super::fake::Router {
    Arc::new(|call: &Call| {
        if call.path == "/v1/identity/oauth2/userinfo" {
            if call.query.get("schema").map(String::as_str) != Some("paypalv1.1") {
                return Answer::json(400, "{\"name\":\"INVALID_REQUEST\"}");
            }
            return Answer::json(200, fixture("paypal/fixtures/userinfo.json"));
        }
        if call.path == LIST {
            let page = call.query.get("page").cloned().unwrap_or_default();
            return match page.as_str() {
                "1" | "2" | "3" | "4" => Answer::json(
                    200,
                    fixture(&format!("paypal/fixtures/invoices-{page}.json")),
                ),
                _ => Answer::json(
                    200,
                    json!({"total_items": 12, "total_pages": 4, "items": []}).to_string(),
                ),
            };
        }
        match call
            .path
            .strip_prefix("/v2/invoicing/invoices/")
            .and_then(detail)
        {
            Some(invoice) => Answer::json(200, invoice.to_string()),
            None => Answer::json(404, fixture("paypal/fixtures/not-found.json")),
        }
    })
}

pub async fn fake() -> Fake {
    let fake = Fake::start(
        "paypal",
        Scheme::Bearer,
        ACCESS,
        REFRESH,
        fixture("paypal/fixtures/unauthorized.json"),
        router(),
    )
    .await;
    // PayPal's refresh answer carries no refresh token.
    fake.with(|inner| inner.rotate = false);
    fake
}

fn body(expires_in: i64) -> Value {
    json!({"payerId": PAYER, "environment": "sandbox", "accessToken": ACCESS, "refreshToken": REFRESH, "expiresIn": expires_in})
}

/// A company with an authorized PayPal connection.
async fn connected(app: &TestApp, expires_in: i64) -> (Uuid, Uuid) {
    connected_as(app, &CASE, &(CASE.authorization)(expires_in)).await
}

async fn invoices(app: &TestApp, company_id: Uuid) -> Vec<Value> {
    records(app, company_id, "invoices").await
}

fn by_number<'a>(invoices: &'a [Value], number: &str) -> &'a Value {
    invoices
        .iter()
        .find(|invoice| invoice["invoiceNumber"] == number)
        .unwrap_or_else(|| panic!("invoice {number} synced"))
}

/// PayPal in the shared scenarios: its refresh answer carries no refresh token.
static CASE: Case = Case {
    key: "paypal",
    name: "PayPal",
    fake: || Box::pin(fake()),
    page_size: Some(PAGE),
    authorization: body,
    access: ACCESS,
    refresh: REFRESH,
    lasting: 3600,
    kept: &["payerId", "environment"],
    sync: Synced {
        data_type: "invoices",
        records: 12,
        // Four pages and twelve details.
        calls: 4 + 12,
    },
    syncs: &["invoices", "payments"],
    errors: Errors {
        rate_limited: r#"{"name":"RATE_LIMIT_REACHED","message":"Too many requests. Blocked due to rate limiting."}"#,
        rate_limit_headers: &[],
        rate_limited_says: "",
        server_error: r#"{"name":"INTERNAL_SERVER_ERROR","message":"An internal server error occurred."}"#,
        unavailable: (
            503,
            r#"{"name":"SERVICE_UNAVAILABLE","message":"Service Unavailable."}"#,
        ),
        unavailable_says: "PayPal answered 503 Service Unavailable: Service Unavailable.",
        refused: Refused::Scope {
            status: 403,
            body: r#"{"name":"NOT_AUTHORIZED","message":"Authorization failed due to insufficient permissions.","debug_id":"90957fca61718"}"#,
            says: "PayPal answered 403 Forbidden: Authorization failed due to insufficient permissions.",
        },
    },
    pages: Pages {
        // The list summarises invoices by id; each invoice is read from its
        // own detail, one a call: the first list page, then those details.
        prelude: |_| {
            vec![Answer::json(
                200,
                fixture("paypal/fixtures/invoices-1.json"),
            )]
        },
        first: |_| {
            let first = detail(FIRST).expect("the first invoice's detail");
            Answer::json(200, first.to_string())
        },
        // The list's first page and the first detail are fine, the second
        // detail is cut off.
        cut: Cut::SecondPage,
        truncated: r#"{"id": "INV2-TEST-0002-ABCD-EFGH", "amount": {"value": "12.5"#,
        truncated_says: "",
        records_at: "",
        id_at: "/id",
        field: "/status",
    },
    refresh_with: Some(Refresh {
        rejected_after: 2,
        invalid_grant_says: &["PayPal"],
        ..Refresh::KEEPING
    }),
    unrefreshable: None,
    verification: Verification {
        rejected_says: &["Authentication failed"],
        another_account: None,
        verified_by: |calls| {
            calls.last().is_some_and(|call| {
                call.path == LIST && call.query.get("page_size").map(String::as_str) == Some("1")
            })
        },
    },
    unknown_account: None,
};

platform_scenarios!(CASE, refreshes, refreshes_before_expiry);

/// PayPal resynced, in the shared scenario of the platforms without a
/// modified-since filter (`scenarios::unfiltered`).
static UNFILTERED: Unfiltered = Unfiltered {
    why: "invoicing search has no filter on `last_update_time`; creation and payment dates miss status changes without a payment",
    mode: FetchMode::Full,
    resync_calls: 4 + 12,
    quiet: None,
};

unfiltered_scenario!(CASE, UNFILTERED);

#[tokio::test]
async fn paypal_invoices_sync_over_every_page_with_every_status_and_exact_money() {
    for backend in backends() {
        let fake = fake().await;
        let app = TestApp::spawn_with(backend, options_for(&fake, Some(PAGE), 2)).await;
        let (company_id, _) = connected(&app, 3600).await;
        let operations = sync(&app, company_id, QueueDataTypeDataType::Invoices).await;
        let operation = latest(&operations, "invoices");
        assert_eq!(operation.status, PullStatus::Complete, "{operation:?}");

        let invoices = invoices(&app, company_id).await;
        assert_eq!(invoices.len(), 12, "{invoices:#?}");
        for (number, status) in [
            ("0001", "Draft"),
            ("0002", "Draft"),
            ("0003", "Submitted"),
            ("0004", "Submitted"),
            ("0005", "Submitted"),
            ("0006", "PartiallyPaid"),
            ("0007", "Paid"),
            ("0008", "Paid"),
            ("0009", "Paid"),
            ("0010", "Void"),
            ("0011", "Void"),
            ("0012", "Void"),
        ] {
            assert_eq!(by_number(&invoices, number)["status"], status, "{number}");
        }
        // Newest invoice date first.
        assert_eq!(invoices[0]["invoiceNumber"], "0012");

        let sent = by_number(&invoices, "0003");
        assert_eq!(sent["invoiceId"], "INV2-TEST-0003-Q52L-CPZ5");
        assert_eq!(sent["currency"], "USD");
        assert_eq!(sent["totalAmount"], "74.21");
        assert_eq!(sent["totalTaxAmount"], "4.34");
        assert_eq!(sent["subTotal"], "69.87");
        assert_eq!(sent["amountDue"], "74.21");
        assert_eq!(sent["issueDate"], "2026-10-03");
        assert_eq!(sent["dueDate"], "2026-10-13");
        assert_eq!(sent["paidOnDate"], Value::Null);
        assert_eq!(sent["note"], "Thank you for your business.");
        assert_eq!(sent["sourceModifiedDate"], "2026-10-03T09:30:00.000000Z");
        assert_eq!(sent["customerRef"]["id"], "bill-me@example.com");
        assert_eq!(sent["customerRef"]["companyName"], "Stephanie Meyers");
        let mat = &sent["lineItems"][0];
        assert_eq!(
            mat["description"],
            "Yoga Mat: Elastic mat to practice yoga."
        );
        assert_eq!(mat["quantity"], "1");
        assert_eq!(mat["unitAmount"], "50.00");
        assert_eq!(mat["discountAmount"], "2.50");
        assert_eq!(mat["subTotal"], "47.50");
        assert_eq!(mat["taxAmount"], "3.27");
        assert_eq!(mat["totalAmount"], "50.77");
        assert_eq!(sent["lineItems"][1]["description"], "Yoga T Shirt");
        assert_eq!(sent["lineItems"][1]["totalAmount"], "5.34");

        let part_paid = by_number(&invoices, "0006");
        assert_eq!(part_paid["amountDue"], "54.21");
        assert_eq!(part_paid["paidOnDate"], Value::Null);
        let paid = by_number(&invoices, "0007");
        assert_eq!(paid["amountDue"], "0.00");
        // The latest of its payments.
        assert_eq!(paid["paidOnDate"], "2026-10-21");
        assert_eq!(paid["customerRef"]["companyName"], "Meyers Yoga LLC");
        // Yen are whole: "5500" is ¥5,500.
        let yen = by_number(&invoices, "0008");
        assert_eq!(yen["currency"], "JPY");
        assert_eq!(yen["totalAmount"], "5500.00");
        assert_eq!(yen["totalTaxAmount"], "500.00");
        assert_eq!(yen["subTotal"], "5000.00");
        assert_eq!(yen["lineItems"][0]["unitAmount"], "2500.00");
        assert_eq!(yen["lineItems"][0]["totalAmount"], "5500.00");
        assert_eq!(yen["paidOnDate"], "2026-10-20");
        assert_eq!(by_number(&invoices, "0012")["amountDue"], "74.21");

        let calls = fake.calls();
        assert!(calls.iter().all(|call| call.token == ACCESS));
        let pages: Vec<(String, String, String)> = calls
            .iter()
            .filter(|call| call.path == LIST)
            .map(|call| {
                let get = |name: &str| call.query.get(name).cloned().unwrap_or_default();
                (get("page"), get("page_size"), get("total_required"))
            })
            .collect();
        let expected: Vec<(String, String, String)> = (1..=4)
            .map(|page| (page.to_string(), "3".to_owned(), "true".to_owned()))
            .collect();
        assert_eq!(pages, expected);
        assert_eq!(
            calls
                .iter()
                .filter(|call| call.path.starts_with("/v2/invoicing/invoices/INV2-"))
                .count(),
            12,
            "each invoice's detail once"
        );
        assert_eq!(
            fake.token_calls(),
            0,
            "a token valid for an hour is not refreshed"
        );
    }
}

/// Payments are each invoice's recorded payments (PayPal's and external
/// ones) and refunds (negative), read from the same details as invoices,
/// each allocated whole to its invoice: every allocation names a synced
/// invoice, never exceeds its payment, and a payment's customer is its
/// invoice's.
#[tokio::test]
async fn paypal_payments_are_the_invoices_payments_and_refunds_each_settling_its_invoice() {
    use super::ledger_reads::{amount, columns, settled, synced};
    for backend in backends() {
        let fake = fake().await;
        let app = TestApp::spawn_with(backend, options_for(&fake, Some(PAGE), 2)).await;
        let (company_id, _) = connected(&app, 3600).await;
        synced(
            &app,
            company_id,
            &[
                QueueDataTypeDataType::Invoices,
                QueueDataTypeDataType::Payments,
            ],
        )
        .await;
        let invoices = invoices(&app, company_id).await;
        let payments = records(&app, company_id, "payments").await;
        let mut rows = columns(
            &payments,
            &[
                "/paymentId",
                "/date",
                "/currency",
                "/totalAmount",
                "/allocations/0/type",
                "/allocations/0/id",
                "/allocations/0/amount",
                "/reference",
                "/note",
            ],
        );
        rows.sort();
        let row = |cells: [&str; 9]| cells.map(str::to_owned).to_vec();
        let usd = |id, date, total, invoice: &str, reference: &str, note: &str| {
            row([
                id, date, "USD", total, "Invoice", invoice, total, reference, note,
            ])
        };
        let inv = |n: u32| format!("INV2-TEST-{n:04}-Q52L-CPZ5");
        let (i6, i7, i9, i10, i11) = (inv(6), inv(7), inv(9), inv(10), inv(11));
        let refund_11 = format!("{i11}-refund-1");
        let paid_8 = format!("{}-payment-1", inv(8));
        let mut expected = vec![
            usd(
                "1AB06000PQ0000060",
                "2026-10-18",
                "20.00",
                &i6,
                "1AB06000PQ0000060",
                "-",
            ),
            usd(
                "2CD07001PQ0000071",
                "2026-10-19",
                "20.00",
                &i7,
                "2CD07001PQ0000071",
                "-",
            ),
            usd(
                "2CD07002PQ0000072",
                "2026-10-21",
                "54.21",
                &i7,
                "2CD07002PQ0000072",
                "-",
            ),
            usd(
                "3EF09001PQ0000091",
                "2026-10-19",
                "20.00",
                &i9,
                "3EF09001PQ0000091",
                "-",
            ),
            usd(
                "3EF09002PQ0000092",
                "2026-10-21",
                "54.21",
                &i9,
                "3EF09002PQ0000092",
                "-",
            ),
            usd(
                "4GH10001PQ0000101",
                "2026-10-19",
                "74.21",
                &i10,
                "4GH10001PQ0000101",
                "-",
            ),
            usd(
                "5JK11001PQ0000111",
                "2026-10-19",
                "20.00",
                &i11,
                "5JK11001PQ0000111",
                "-",
            ),
            usd(
                "5JK11002PQ0000112",
                "2026-10-21",
                "54.21",
                &i11,
                "5JK11002PQ0000112",
                "-",
            ),
            usd(
                "6LM09001RF0000091",
                "2026-10-24",
                "-10.00",
                &i9,
                "6LM09001RF0000091",
                "-",
            ),
            usd(
                "7NP10001RF0000101",
                "2026-10-25",
                "-74.21",
                &i10,
                "7NP10001RF0000101",
                "-",
            ),
            row([
                &paid_8,
                "2026-10-20",
                "JPY",
                "5500.00",
                "Invoice",
                &inv(8),
                "5500.00",
                "-",
                "Paid by transfer",
            ]),
            usd(&refund_11, "2026-10-26", "-74.21", &i11, "-", "-"),
        ];
        expected.sort();
        assert_eq!(rows, expected);
        // Newest first.
        assert_eq!(payments[0]["paymentId"], refund_11.as_str());

        for payment in &payments {
            let total = amount(&payment["totalAmount"]);
            let allocations = payment["allocations"].as_array().expect("allocations");
            let allocated = allocations
                .iter()
                .fold(tributary::data::money::Money(0), |sum, allocation| {
                    sum + amount(&allocation["amount"])
                });
            assert!(
                allocated.0 * total.0.signum() <= total.0.abs()
                    && allocated.0 * total.0.signum() >= 0,
                "{payment}"
            );
            for allocation in allocations {
                let invoice = invoices
                    .iter()
                    .find(|invoice| invoice["invoiceId"] == allocation["id"])
                    .unwrap_or_else(|| panic!("{allocation} names a synced invoice"));
                assert_eq!(payment["customerRef"], invoice["customerRef"], "{payment}");
                assert_eq!(payment["currency"], invoice["currency"], "{payment}");
            }
        }
        // What an invoice was paid (less what was refunded) is its total
        // less what it still owes, unless it was refunded.
        for invoice in &invoices {
            let paid = settled(&payments, "Invoice", &invoice["invoiceId"]);
            let refunded = invoice["status"] == "Void" || invoice["invoiceNumber"] == "0009";
            if !refunded {
                assert_eq!(
                    paid,
                    amount(&invoice["totalAmount"]) - amount(&invoice["amountDue"]),
                    "{invoice}"
                );
            }
        }
        assert_eq!(
            settled(&payments, "Invoice", &json!(i9))
                .to_decimal()
                .to_string(),
            "64.21"
        );
        assert_eq!(
            settled(&payments, "Invoice", &json!(i10))
                .to_decimal()
                .to_string(),
            "0.00"
        );
    }
}
