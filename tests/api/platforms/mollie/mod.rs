//! Mollie: orders, customers and each profile's payments over several HAL
//! pages (`from` of `_links.next`) with every order status and refunds, read back through
//! the lists; refresh before expiry and on a 401 (the rotated refresh token
//! stored), `invalid_grant`, 429 with `Retry-After`, a 500, a malformed
//! page, the data type Mollie lacks, and verification at migration.
//!
//! The scenarios every platform shares (`super::scenarios`) run from its
//! `CASE`; the tests here are its own.

use std::sync::Arc;

use serde_json::{Value, json};
use uuid::Uuid;

use client::types::{FetchMode, PullStatus, QueueDataTypeDataType};

use super::fake::{Answer, Call, Fake, Scheme, fixture};
use super::ledger_reads::synced;
use super::scenarios::unfiltered::{Unfiltered, unfiltered_scenario};
use super::scenarios::{
    Another, Case, Cut, Errors, Pages, Refresh, Refused, Synced, Verification,
    connected as connected_as, platform_scenarios, records as list,
};
use super::{latest, options_for, sync};
use crate::helpers::{TestApp, backends};

pub(crate) const ORGANIZATION: &str = "org_12345678";
const ACCESS: &str = "access_46EUJ6x8jFJZZeAvhNH4JVey6qVpqR";
const REFRESH: &str = "refresh_FS4xc3BgPjvDKq4LPpZwCKD5mcNr6k";
/// Records per page in these tests (`limit`).
const PAGE: u64 = 5;

/// Serves the Mollie fixtures: three pages of orders and two of customers
/// by `from`, and the organization.
fn router() -> super::fake::Router {
    Arc::new(|call: &Call| {
        let from = call.query.get("from").cloned().unwrap_or_default();
        match call.path.as_str() {
            "/v2/organizations/me" => {
                Answer::json(200, fixture("mollie/fixtures/organization.json"))
            }
            "/v2/orders" => {
                let page = match from.as_str() {
                    "" => 1,
                    "ord_t06x8Q" => 2,
                    "ord_t11x8Q" => 3,
                    _ => {
                        return Answer::json(
                            400,
                            "{\"status\":400,\"title\":\"Bad Request\",\"detail\":\"Invalid from\"}",
                        );
                    }
                };
                Answer::json(200, fixture(&format!("mollie/fixtures/orders-{page}.json")))
            }
            "/v2/profiles" => match from.as_str() {
                "" => Answer::json(200, fixture("mollie/fixtures/profiles.json")),
                "pfl_v9hTwCvYqw" => Answer::json(200, fixture("mollie/fixtures/profiles-2.json")),
                _ => Answer::json(
                    400,
                    "{\"status\":400,\"title\":\"Bad Request\",\"detail\":\"Invalid from\"}",
                ),
            },
            // An organization's token must name the profile (NOTES.md).
            "/v2/payments" => {
                let profile = call.query.get("profileId").map(String::as_str);
                let page = match (profile, from.as_str()) {
                    (Some("pfl_QkEhN94Ba"), "") => 1,
                    (Some("pfl_QkEhN94Ba"), "tr_44aKxzEbr8") => 2,
                    (Some("pfl_v9hTwCvYqw"), "") => 3,
                    _ => {
                        return Answer::json(
                            400,
                            "{\"status\":400,\"title\":\"Bad Request\",\"detail\":\"The profile id is invalid\",\"field\":\"profileId\"}",
                        );
                    }
                };
                Answer::json(
                    200,
                    fixture(&format!("mollie/fixtures/payments-{page}.json")),
                )
            }
            "/v2/customers" => {
                let page = if from.is_empty() { 1 } else { 2 };
                Answer::json(
                    200,
                    fixture(&format!("mollie/fixtures/customers-{page}.json")),
                )
            }
            _ => Answer::json(
                404,
                "{\"status\":404,\"title\":\"Not Found\",\"detail\":\"No such resource\"}",
            ),
        }
    })
}

pub(crate) async fn fake() -> Fake {
    Fake::start(
        "mollie",
        Scheme::Bearer,
        ACCESS,
        REFRESH,
        fixture("mollie/fixtures/unauthorized.json"),
        router(),
    )
    .await
}

fn body(expires_in: i64) -> Value {
    json!({"organizationId": ORGANIZATION, "accessToken": ACCESS, "refreshToken": REFRESH, "expiresIn": expires_in})
}

/// A company with an authorized Mollie connection.
async fn connected(app: &TestApp, expires_in: i64) -> (Uuid, Uuid) {
    connected_as(app, &CASE, &(CASE.authorization)(expires_in)).await
}

fn by_number<'a>(orders: &'a [Value], number: &str) -> &'a Value {
    orders
        .iter()
        .find(|order| order["orderNumber"] == number)
        .unwrap_or_else(|| panic!("order {number} synced"))
}

/// Mollie in the shared scenarios.
static CASE: Case = Case {
    key: "mollie",
    name: "Mollie",
    fake: || Box::pin(fake()),
    page_size: Some(PAGE),
    authorization: body,
    access: ACCESS,
    refresh: REFRESH,
    lasting: 3600,
    kept: &["organizationId"],
    sync: Synced {
        data_type: "orders",
        records: 12,
        calls: 3,
    },
    syncs: &["customers", "orders", "payments"],
    errors: Errors {
        rate_limited: r#"{"status":429,"title":"Too Many Requests","detail":"Too many requests"}"#,
        rate_limit_headers: &[],
        rate_limited_says: "",
        server_error: r#"{"status":500,"title":"Internal Server Error","detail":"Something went wrong"}"#,
        unavailable: (
            503,
            r#"{"status":503,"title":"Service Unavailable","detail":"Service unavailable"}"#,
        ),
        unavailable_says: "Mollie answered 503 Service Unavailable",
        refused: Refused::Scope {
            status: 403,
            body: r#"{"status":403,"title":"Forbidden","detail":"Missing the orders.read permission for this resource","_links":{"documentation":{"href":"https://docs.mollie.com/overview/handling-errors","type":"text/html"}}}"#,
            says: "Mollie answered 403 Forbidden: Missing the orders.read permission",
        },
    },
    pages: Pages {
        prelude: |_| Vec::new(),
        first: |_| Answer::json(200, fixture("mollie/fixtures/orders-1.json")),
        cut: Cut::SecondPage,
        truncated: r#"{"count": 5, "_embedded": {"orders": [{"id": "ord_x", "amount": {"value": "12.5"#,
        truncated_says: "Mollie answered a page of orders that tributary cannot read",
        records_at: "/_embedded/orders",
        id_at: "/id",
        field: "/createdAt",
    },
    refresh_with: Some(Refresh::ROTATING),
    unrefreshable: None,
    verification: Verification {
        rejected_says: &["Mollie answered 401"],
        another_account: Some(Another {
            authorization: || {
                let mut elsewhere = body(3600);
                elsewhere["organizationId"] = json!("org_87654321");
                elsewhere
            },
            says: &["another organization"],
        }),
        verified_by: |calls| {
            calls
                .last()
                .is_some_and(|call| call.path == "/v2/organizations/me")
        },
    },
    unknown_account: None,
};

platform_scenarios!(CASE, refreshes, refreshes_before_expiry);

/// Mollie resynced, in the shared scenario of the platforms without a
/// modified-since filter (`scenarios::unfiltered`).
static UNFILTERED: Unfiltered = Unfiltered {
    why: "no modified-since filter, and neither orders nor customers carry a last-modified field",
    mode: FetchMode::Full,
    resync_calls: 3,
    quiet: None,
};

unfiltered_scenario!(CASE, UNFILTERED);

#[tokio::test]
async fn mollie_orders_sync_over_every_hal_page_with_every_status_and_read_back_exactly() {
    for backend in backends() {
        let fake = fake().await;
        let app = TestApp::spawn_with(backend, options_for(&fake, Some(PAGE), 1)).await;
        let (company_id, connection_id) = connected(&app, 3600).await;
        let operations = sync(&app, company_id, QueueDataTypeDataType::Orders).await;
        let operation = latest(&operations, "orders");
        assert_eq!(operation.status, PullStatus::Complete, "{operation:?}");

        let orders = list(&app, company_id, "orders").await;
        assert_eq!(orders.len(), 12, "{orders:#?}");
        for (number, status) in [
            ("1337", "Open"),
            ("1338", "Pending"),
            ("1339", "Pending"),
            ("1340", "Open"),
            ("1341", "Open"),
            ("1342", "Completed"),
            ("1343", "Cancelled"),
            ("1344", "Cancelled"),
            ("1345", "Refunded"),
            ("1346", "PartiallyRefunded"),
            ("1347", "Refunded"),
            ("1348", "Unknown"),
        ] {
            assert_eq!(by_number(&orders, number)["status"], status, "{number}");
        }
        let first = by_number(&orders, "1337");
        assert_eq!(first["orderId"], "ord_t01x8Q");
        assert_eq!(first["connectionId"], connection_id.to_string());
        assert_eq!(first["currency"], "EUR");
        assert_eq!(first["subTotal"], "1127.99");
        assert_eq!(first["totalDiscount"], "110.00");
        assert_eq!(first["totalTaxAmount"], "176.67");
        assert_eq!(first["totalAmount"], "1017.99");
        assert_eq!(first["totalRefunded"], "0.00");
        assert_eq!(first["customerRef"], Value::Null);
        assert_eq!(first["createdDate"], "2026-10-01T09:29:56.000000Z");
        assert_eq!(first["closedDate"], Value::Null);
        assert_eq!(first["sourceModifiedDate"], Value::Null);
        let bugatti = &first["lineItems"][0];
        assert_eq!(bugatti["lineId"], "odl_1a");
        assert_eq!(bugatti["description"], "LEGO 42083 Bugatti Chiron");
        assert_eq!(bugatti["sku"], "5702016116977");
        assert_eq!(bugatti["quantity"], "2");
        assert_eq!(bugatti["unitAmount"], "399.00");
        assert_eq!(bugatti["discountAmount"], "100.00");
        assert_eq!(bugatti["taxAmount"], "121.14");
        assert_eq!(bugatti["totalAmount"], "698.00");
        let voucher = &first["lineItems"][2];
        assert_eq!(voucher["description"], "Spring voucher");
        assert_eq!(voucher["sku"], Value::Null);
        assert_eq!(voucher["totalAmount"], "-10.00");
        assert_eq!(
            by_number(&orders, "1342")["closedDate"],
            "2026-10-09T12:00:00.000000Z"
        );
        assert_eq!(
            by_number(&orders, "1343")["closedDate"],
            "2026-10-08T08:15:00.000000Z"
        );
        assert_eq!(
            by_number(&orders, "1344")["closedDate"],
            "2026-10-30T09:29:56.000000Z"
        );
        assert_eq!(by_number(&orders, "1345")["totalRefunded"], "121.00");
        assert_eq!(by_number(&orders, "1346")["totalRefunded"], "21.00");

        // Three pages: `limit`, then `from` as each page's next link said.
        let calls = fake.calls();
        let pages: Vec<_> = calls
            .iter()
            .map(|call| {
                (
                    call.query.get("limit").cloned().unwrap_or_default(),
                    call.query.get("from").cloned().unwrap_or_default(),
                )
            })
            .collect();
        assert_eq!(
            pages,
            [
                ("5".to_owned(), String::new()),
                ("5".to_owned(), "ord_t06x8Q".to_owned()),
                ("5".to_owned(), "ord_t11x8Q".to_owned())
            ]
        );
        assert!(calls.iter().all(|call| call.token == ACCESS));
        // The only media type Mollie's OpenAPI document answers in.
        assert!(
            calls
                .iter()
                .all(|call| call.headers.get("accept").map(String::as_str)
                    == Some("application/hal+json"))
        );
        assert_eq!(
            fake.token_calls(),
            0,
            "a token valid for an hour is not refreshed"
        );
    }
}

#[tokio::test]
async fn mollie_customers_sync_over_hal_pages() {
    for backend in backends() {
        let fake = fake().await;
        let app = TestApp::spawn_with(backend, options_for(&fake, Some(PAGE), 1)).await;
        let (company_id, _) = connected(&app, 3600).await;
        let operations = sync(&app, company_id, QueueDataTypeDataType::Customers).await;
        let operation = latest(&operations, "customers");
        assert_eq!(operation.status, PullStatus::Complete, "{operation:?}");
        let customers = list(&app, company_id, "customers").await;
        assert_eq!(customers.len(), 3, "{customers:#?}");
        // By name.
        assert_eq!(customers[0]["customerName"], "Anna de Vries");
        assert_eq!(customers[0]["customerId"], "cst_8wmqcHMN2");
        assert_eq!(customers[0]["emailAddress"], "anna@example.nl");
        assert_eq!(customers[0]["phone"], Value::Null);
        assert_eq!(customers[0]["status"], "Active");
        assert_eq!(customers[1]["customerName"], "Piet Mondriaan");
        // Without a name: the e-mail.
        assert_eq!(customers[2]["customerName"], "nameless@example.nl");
        let calls = fake.calls();
        assert_eq!(calls.len(), 2);
        assert_eq!(
            calls[1].query.get("from").map(String::as_str),
            Some("cst_8wmqcHMN3")
        );
    }
}

/// Payments: each website profile's (listed first, then named by
/// `profileId` on every page, as an organization's token must), over their
/// HAL pages; only the paid ones, money received, each from the customer
/// and for the order it names, both synced from the same connection.
#[tokio::test]
async fn mollie_payments_are_each_profiles_paid_payments_with_their_customer_and_order() {
    for backend in backends() {
        let fake = fake().await;
        let app = TestApp::spawn_with(backend, options_for(&fake, Some(PAGE), 1)).await;
        let (company_id, _) = connected(&app, 3600).await;
        synced(
            &app,
            company_id,
            &[
                QueueDataTypeDataType::Payments,
                QueueDataTypeDataType::Customers,
                QueueDataTypeDataType::Orders,
            ],
        )
        .await;
        let payments = list(&app, company_id, "payments").await;
        let summary: Vec<(&str, &str, &str, &str)> = payments
            .iter()
            .map(|payment| {
                (
                    payment["paymentId"].as_str().expect("an id"),
                    payment["date"].as_str().expect("a date"),
                    payment["totalAmount"].as_str().expect("an amount"),
                    payment["currency"].as_str().expect("a currency"),
                )
            })
            .collect();
        assert_eq!(
            summary,
            [
                ("tr_ncaPcAhuUV", "2026-11-07", "5.00", "EUR"),
                ("tr_MrA5TQ8UTd", "2026-11-06", "20.00", "GBP"),
                ("tr_Hg2ew4wBxD", "2026-11-04", "10.50", "EUR"),
                ("tr_7UhSN1zuXS", "2026-11-02", "75.00", "EUR"),
            ],
            "the paid ones of both profiles, newest first: {payments:#?}"
        );
        let customers = list(&app, company_id, "customers").await;
        let orders = list(&app, company_id, "orders").await;
        for payment in &payments {
            if let Some(customer) = payment["customerRef"]["id"].as_str() {
                assert!(
                    customers.iter().any(|one| one["customerId"] == customer),
                    "{customer} is a customer of the connection"
                );
            }
            for allocation in payment["allocations"].as_array().expect("allocations") {
                assert_eq!(allocation["type"], "Other", "an order, not an invoice");
                assert_eq!(allocation["amount"], payment["totalAmount"]);
                assert!(
                    orders
                        .iter()
                        .any(|order| order["orderId"] == allocation["id"]),
                    "{allocation} names an order of the connection"
                );
            }
        }
        assert_eq!(payments[3]["note"], "Order 1337");
        assert_eq!(
            payments[3]["date"], "2026-11-02",
            "paid the day after it was created"
        );
        for (at, order) in [(0, "ord_t02x8Q"), (3, "ord_t01x8Q")] {
            assert_eq!(
                payments[at]["allocations"],
                json!([{"type": "Other", "id": order, "amount": payments[at]["totalAmount"]}])
            );
        }
        assert_eq!(payments[2]["allocations"], json!([]), "no order");
        assert_eq!(payments[3]["customerRef"]["id"], "cst_8wmqcHMN1");
        assert_eq!(payments[2]["customerRef"], Value::Null);

        let profile_pages = fake
            .calls()
            .iter()
            .filter(|call| call.path == "/v2/profiles")
            .count();
        assert_eq!(profile_pages, 2, "every page of profiles");
        let profiles: Vec<Option<String>> = fake
            .calls()
            .iter()
            .filter(|call| call.path == "/v2/payments")
            .map(|call| call.query.get("profileId").cloned())
            .collect();
        assert_eq!(
            profiles,
            [
                Some("pfl_QkEhN94Ba".to_owned()),
                Some("pfl_QkEhN94Ba".to_owned()),
                Some("pfl_v9hTwCvYqw".to_owned())
            ]
        );
    }
}
