//! Square: invoices location by location over Square's cursors with every
//! invoice status, customer profiles over two cursor pages, orders searched
//! ten locations at a time with every order state, money in the currency's
//! smallest unit (cents and yen); refresh before expiry and on a 401 with
//! the grant as JSON and the expiry Square gives as a moment, the rotated
//! refresh token stored, `invalid_grant`, 429 with `Retry-After`, a 500, a
//! malformed page, the data types Square lacks, and verification at
//! migration (the locations must be the merchant's).
//!
//! The scenarios every platform shares (`super::scenarios`) run from its
//! `CASE`; the tests here are its own (catalog items: [`items`]).

mod items;

use std::sync::Arc;

use serde_json::{Value, json};
use uuid::Uuid;

use client::types::{PullStatus, QueueDataTypeDataType};

use super::fake::{Answer, Call, Fake, Scheme, fixture};
use super::scenarios::changes::{Changed, PLATFORM_DATE, changes_scenario};
use super::scenarios::{
    Another, Case, Cut, Errors, Pages, Refresh, Refused, Synced, Verification,
    connected as connected_as, platform_scenarios, records as list,
};
use super::{latest, options_for, set_oauth_client, stored, sync};
use crate::helpers::{TestApp, backends};

pub(crate) const MERCHANT: &str = "MLR6ZX4A6KXS2";
const ACCESS: &str = "EAAAEsquare-access-token-0001";
const REFRESH: &str = "EQAAEsquare-refresh-token-0001";
/// Records per page in these tests (`limit`).
const PAGE: u64 = 2;
/// The first and the last (eleventh) location.
const FIRST: &str = "L01WQ7K";
const LAST: &str = "L11WQ7K";

fn not_found() -> Answer {
    Answer::json(
        404,
        "{\"errors\":[{\"category\":\"INVALID_REQUEST_ERROR\",\"code\":\"NOT_FOUND\",\"detail\":\"Not found\"}]}",
    )
}

/// Serves the Square fixtures: eleven locations, invoices in the first
/// (two pages) and the last, two pages of customers (listed, or searched
/// for what changed), orders in two searches (the first ten locations over
/// two pages, then the eleventh), and two pages of catalog items.
fn router() -> super::fake::Router {
    Arc::new(|call: &Call| {
        if call.headers.get("square-version").map(String::as_str) != Some("2024-01-18") {
            return Answer::json(
                400,
                "{\"errors\":[{\"code\":\"INVALID_SQUARE_VERSION_FORMAT\"}]}",
            );
        }
        let cursor = call.query.get("cursor").map(String::as_str);
        match (call.method.as_str(), call.path.as_str()) {
            ("GET", "/v2/locations") => {
                Answer::json(200, fixture("square/fixtures/locations.json"))
            }
            ("GET", "/v2/invoices") => {
                let location = call.query.get("location_id").map(String::as_str);
                let file = match (location, cursor) {
                    (Some(FIRST), None) => "invoices-L01-1.json",
                    (Some(FIRST), Some("inv-cursor:2")) => "invoices-L01-2.json",
                    (Some(LAST), None) => "invoices-L11.json",
                    (Some(_), None) => "empty.json",
                    _ => return not_found(),
                };
                Answer::json(200, fixture(&format!("square/fixtures/{file}")))
            }
            ("GET", "/v2/payments") => {
                let location = call.query.get("location_id").map(String::as_str);
                let file = match (location, cursor) {
                    (Some(FIRST), None) => "payments-L01-1.json",
                    (Some(FIRST), Some("pay-cursor:2")) => "payments-L01-2.json",
                    (Some(_), None) => "empty.json",
                    _ => return not_found(),
                };
                Answer::json(200, fixture(&format!("square/fixtures/{file}")))
            }
            ("GET", "/v2/refunds") => Answer::json(200, fixture("square/fixtures/refunds.json")),
            ("POST", "/v2/catalog/search") => {
                let search: Value = serde_json::from_str(&call.body).unwrap_or_default();
                match search["cursor"].as_str() {
                    None => Answer::json(200, fixture("square/fixtures/catalog-1.json")),
                    Some("cat-cursor-2") => {
                        Answer::json(200, fixture("square/fixtures/catalog-2.json"))
                    }
                    Some(_) => not_found(),
                }
            }
            ("GET", "/v2/merchants/me") => {
                Answer::json(200, fixture("square/fixtures/merchant.json"))
            }
            ("GET", "/v2/customers") => match cursor {
                None => Answer::json(200, fixture("square/fixtures/customers-1.json")),
                Some("cust-cursor-2") => {
                    Answer::json(200, fixture("square/fixtures/customers-2.json"))
                }
                Some(_) => not_found(),
            },
            // What changed, after a first sync: the same pages, by the
            // search's cursor.
            ("POST", "/v2/customers/search") => {
                let search: Value = serde_json::from_str(&call.body).unwrap_or_default();
                match search["cursor"].as_str() {
                    None => Answer::json(200, fixture("square/fixtures/customers-1.json")),
                    Some("cust-cursor-2") => {
                        Answer::json(200, fixture("square/fixtures/customers-2.json"))
                    }
                    Some(_) => not_found(),
                }
            }
            ("POST", "/v2/orders/search") => {
                let search: Value = serde_json::from_str(&call.body).unwrap_or_default();
                let first = search["location_ids"][0].as_str();
                let file = match (first, search["cursor"].as_str()) {
                    (Some(FIRST), None) => "orders-1.json",
                    (Some(FIRST), Some("ord-cursor-2")) => "orders-2.json",
                    (Some(LAST), None) => "orders-3.json",
                    _ => return not_found(),
                };
                Answer::json(200, fixture(&format!("square/fixtures/{file}")))
            }
            _ => not_found(),
        }
    })
}

pub(crate) async fn fake() -> Fake {
    let fake = Fake::start(
        "square",
        Scheme::Bearer,
        ACCESS,
        REFRESH,
        fixture("square/fixtures/unauthorized.json"),
        router(),
    )
    .await;
    // Square's ObtainToken takes the client credentials in its JSON body
    // and answers the expiry as a moment.
    fake.with(|inner| {
        inner.client_in_body = true;
        inner.expires_at = true;
    });
    fake
}

fn body(expires_in: i64) -> Value {
    json!({
        "merchantId": MERCHANT, "environment": "production",
        "accessToken": ACCESS, "refreshToken": REFRESH, "expiresIn": expires_in
    })
}

/// A company with an authorized Square connection.
async fn connected(app: &TestApp, expires_in: i64) -> (Uuid, Uuid) {
    connected_as(app, &CASE, &(CASE.authorization)(expires_in)).await
}

fn by<'a>(records: &'a [Value], field: &str, value: &str) -> &'a Value {
    records
        .iter()
        .find(|record| record[field] == value)
        .unwrap_or_else(|| panic!("{field} {value} synced"))
}

/// Square in the shared scenarios.
static CASE: Case = Case {
    key: "square",
    name: "Square",
    fake: || Box::pin(fake()),
    page_size: Some(PAGE),
    authorization: body,
    access: ACCESS,
    refresh: REFRESH,
    lasting: 7 * 86_400,
    kept: &["merchantId", "environment"],
    sync: Synced {
        data_type: "orders",
        records: 6,
        // The locations, then two searches of the first ten and one of the eleventh.
        calls: 4,
    },
    syncs: &[
        "invoices",
        "customers",
        "orders",
        "payments",
        "items",
        "companyInfo",
    ],
    errors: Errors {
        rate_limited: r#"{"errors":[{"category":"RATE_LIMIT_ERROR","code":"RATE_LIMITED"}]}"#,
        rate_limit_headers: &[],
        rate_limited_says: "",
        server_error: r#"{"errors":[{"category":"API_ERROR","code":"INTERNAL_SERVER_ERROR"}]}"#,
        unavailable: (
            503,
            r#"{"errors":[{"category":"API_ERROR","code":"SERVICE_UNAVAILABLE"}]}"#,
        ),
        unavailable_says: "Square answered 503 Service Unavailable",
        refused: Refused::Scope {
            status: 403,
            body: r#"{"errors":[{"category":"AUTHENTICATION_ERROR","code":"INSUFFICIENT_SCOPES","detail":"The merchant has not given your application sufficient permissions to do that. The following scopes are required: MERCHANT_PROFILE_READ."}]}"#,
            says: "Square answered 403 Forbidden: INSUFFICIENT_SCOPES: The merchant has not given your application sufficient permissions",
        },
    },
    pages: Pages {
        prelude: |_| vec![Answer::json(200, fixture("square/fixtures/locations.json"))],
        first: |_| Answer::json(200, fixture("square/fixtures/orders-1.json")),
        cut: Cut::FirstPage,
        truncated: r#"{"orders": [{"id": "x", "total_money": {"amount": 12"#,
        truncated_says: "Square answered a page of orders that tributary cannot read",
        records_at: "/orders",
        id_at: "/id",
        field: "/created_at",
    },
    refresh_with: Some(Refresh {
        rejected_after: 2,
        ..Refresh::ROTATING
    }),
    unrefreshable: None,
    verification: Verification {
        rejected_says: &["Square answered 401"],
        // A token for another seller: its locations name another merchant.
        another_account: Some(Another {
            authorization: || {
                let mut other_seller = body(7 * 86_400);
                other_seller["merchantId"] = json!("ML0THERSELLER");
                other_seller
            },
            says: &["another seller than merchant ML0THERSELLER"],
        }),
        verified_by: |calls| {
            calls
                .last()
                .is_some_and(|call| call.path == "/v2/locations" && call.token == ACCESS)
        },
    },
    unknown_account: None,
};

platform_scenarios!(CASE, refreshes, refreshes_before_expiry);

#[tokio::test]
async fn square_invoices_sync_location_by_location_with_every_status_and_exact_money() {
    for backend in backends() {
        let fake = fake().await;
        let app = TestApp::spawn_with(backend, options_for(&fake, Some(PAGE), 1)).await;
        let (company_id, connection_id) = connected(&app, 7 * 86_400).await;
        let operations = sync(&app, company_id, QueueDataTypeDataType::Invoices).await;
        let operation = latest(&operations, "invoices");
        assert_eq!(operation.status, PullStatus::Complete, "{operation:?}");

        let invoices = list(&app, company_id, "invoices").await;
        assert_eq!(invoices.len(), 10, "{invoices:#?}");
        for (number, status) in [
            ("000001", "Draft"),
            ("000002", "Submitted"),
            ("000003", "Submitted"),
            ("000004", "PartiallyPaid"),
            ("000005", "Paid"),
            ("000006", "Paid"),
            ("000007", "Void"),
            ("000008", "Void"),
            ("000009", "Void"),
            ("000010", "Submitted"),
        ] {
            assert_eq!(
                by(&invoices, "invoiceNumber", number)["status"],
                status,
                "{number}"
            );
        }
        // A deposit paid, the balance open: the total of both requests.
        let part_paid = by(&invoices, "invoiceNumber", "000004");
        assert_eq!(part_paid["invoiceId"], "inv:0-Chr004");
        assert_eq!(part_paid["connectionId"], connection_id.to_string());
        assert_eq!(part_paid["currency"], "USD");
        assert_eq!(part_paid["totalAmount"], "100.50");
        assert_eq!(part_paid["subTotal"], "100.50");
        assert_eq!(part_paid["totalTaxAmount"], "0.00");
        assert_eq!(part_paid["amountDue"], "75.50");
        assert_eq!(part_paid["dueDate"], "2026-11-04");
        assert_eq!(part_paid["issueDate"], "2026-10-04");
        assert_eq!(part_paid["paidOnDate"], Value::Null);
        assert_eq!(part_paid["note"], "Invoice 4");
        assert_eq!(
            part_paid["sourceModifiedDate"],
            "2026-10-04T18:00:00.000000Z"
        );
        assert_eq!(part_paid["customerRef"]["id"], "JDKYHBWT1D4F8MFH63DBMEN8Y4");
        assert_eq!(part_paid["customerRef"]["companyName"], "Amelia Earhart");
        let company = by(&invoices, "invoiceNumber", "000002");
        assert_eq!(company["totalAmount"], "123.45");
        assert_eq!(company["amountDue"], "123.45");
        assert_eq!(company["customerRef"]["companyName"], "Blue Finch LLC");
        assert_eq!(
            by(&invoices, "invoiceNumber", "000005")["amountDue"],
            "0.00"
        );
        // A scheduled invoice is issued when Square sends it.
        assert_eq!(
            by(&invoices, "invoiceNumber", "000003")["issueDate"],
            "2026-10-20"
        );
        // Yen have no minor unit: 1500 is ¥1,500.
        let yen = by(&invoices, "invoiceNumber", "000009");
        assert_eq!(yen["currency"], "JPY");
        assert_eq!(yen["totalAmount"], "1500.00");

        // The locations, then the first location's two pages, nine empty
        // ones and the last's; each page names its location.
        let invoice_calls: Vec<(String, Option<String>)> = fake
            .calls()
            .iter()
            .filter(|call| call.path == "/v2/invoices")
            .map(|call| {
                assert_eq!(call.query.get("limit").map(String::as_str), Some("2"));
                (
                    call.query.get("location_id").cloned().unwrap_or_default(),
                    call.query.get("cursor").cloned(),
                )
            })
            .collect();
        assert_eq!(invoice_calls.len(), 12, "{invoice_calls:?}");
        // The locations once, at the first page; the other pages carry them.
        let location_calls = fake
            .calls()
            .iter()
            .filter(|call| call.path == "/v2/locations")
            .count();
        assert_eq!(location_calls, 1);
        assert_eq!(invoice_calls[0], (FIRST.to_owned(), None));
        assert_eq!(
            invoice_calls[1],
            (FIRST.to_owned(), Some("inv-cursor:2".to_owned()))
        );
        assert_eq!(invoice_calls[2], ("L02WQ7K".to_owned(), None));
        assert_eq!(invoice_calls[11], (LAST.to_owned(), None));
        let calls = fake.calls();
        assert!(calls.iter().all(|call| call.token == ACCESS));
        assert!(calls.iter().all(
            |call| call.headers.get("square-version").map(String::as_str) == Some("2024-01-18")
        ));
        assert_eq!(
            fake.token_calls(),
            0,
            "a token valid for a week is not refreshed"
        );
    }
}

#[tokio::test]
async fn square_customers_sync_over_cursor_pages() {
    for backend in backends() {
        let fake = fake().await;
        let app = TestApp::spawn_with(backend, options_for(&fake, Some(PAGE), 1)).await;
        let (company_id, _) = connected(&app, 7 * 86_400).await;
        let operations = sync(&app, company_id, QueueDataTypeDataType::Customers).await;
        assert_eq!(
            latest(&operations, "customers").status,
            PullStatus::Complete
        );
        let customers = list(&app, company_id, "customers").await;
        assert_eq!(customers.len(), 3, "{customers:#?}");
        let amelia = by(&customers, "customerId", "JDKYHBWT1D4F8MFH63DBMEN8Y4");
        assert_eq!(amelia["customerName"], "Amelia Earhart");
        assert_eq!(amelia["emailAddress"], "Amelia.Earhart@example.com");
        assert_eq!(amelia["phone"], "1-212-555-4240");
        assert_eq!(amelia["status"], "Active");
        assert_eq!(amelia["defaultCurrency"], Value::Null);
        assert_eq!(amelia["sourceModifiedDate"], "2026-03-23T20:21:55.000000Z");
        assert_eq!(
            by(&customers, "customerId", "CUST-B")["customerName"],
            "Blue Finch LLC"
        );
        let walk_in = by(&customers, "customerId", "CUST-C");
        assert_eq!(walk_in["customerName"], "Walk-in regular");
        assert_eq!(walk_in["emailAddress"], Value::Null);
        let cursors: Vec<Option<String>> = fake
            .calls()
            .iter()
            .map(|call| {
                assert_eq!(call.path, "/v2/customers");
                assert_eq!(call.query.get("limit").map(String::as_str), Some("2"));
                call.query.get("cursor").cloned()
            })
            .collect();
        assert_eq!(cursors, [None, Some("cust-cursor-2".to_owned())]);
    }
}

#[tokio::test]
async fn square_orders_are_searched_ten_locations_at_a_time_with_every_state() {
    for backend in backends() {
        let fake = fake().await;
        let app = TestApp::spawn_with(backend, options_for(&fake, Some(PAGE), 1)).await;
        let (company_id, _) = connected(&app, 7 * 86_400).await;
        let operations = sync(&app, company_id, QueueDataTypeDataType::Orders).await;
        let operation = latest(&operations, "orders");
        assert_eq!(operation.status, PullStatus::Complete, "{operation:?}");
        let orders = list(&app, company_id, "orders").await;
        assert_eq!(orders.len(), 6, "{orders:#?}");
        for (id, status) in [
            ("CAISENgvlJ6jLWAzERDzjyHVybY", "Open"),
            ("CAISEM82RcpmcFBM0TfOyiHV3es", "Completed"),
            ("CAISEM52YcpmcWAzERDOyiWS3ty", "Cancelled"),
            ("CAISEDRAFTmcWAzERDOyiWS4tz", "Pending"),
            ("CAISEJPYmcWAzERDOyiWS5ua", "Completed"),
            ("CAISEWEIRDmcWAzERDOyiWS6ub", "Unknown"),
        ] {
            assert_eq!(by(&orders, "orderId", id)["status"], status, "{id}");
        }
        let open = by(&orders, "orderId", "CAISENgvlJ6jLWAzERDzjyHVybY");
        assert_eq!(open["orderNumber"], "WEB-1001");
        assert_eq!(open["customerRef"]["id"], "JDKYHBWT1D4F8MFH63DBMEN8Y4");
        assert_eq!(open["currency"], "USD");
        assert_eq!(open["subTotal"], "18.00");
        assert_eq!(open["totalTaxAmount"], "1.45");
        assert_eq!(open["totalDiscount"], "1.35");
        assert_eq!(open["totalAmount"], "18.10");
        assert_eq!(open["totalRefunded"], "0.00");
        assert_eq!(open["createdDate"], "2026-10-01T10:05:00.123000Z");
        assert_eq!(open["sourceModifiedDate"], "2026-10-01T23:59:00.000000Z");
        assert_eq!(open["closedDate"], Value::Null);
        let latte = &open["lineItems"][0];
        assert_eq!(latte["lineId"], "ln-1");
        assert_eq!(latte["description"], "Latte (Large)");
        assert_eq!(latte["sku"], Value::Null);
        assert_eq!(latte["quantity"], "3");
        assert_eq!(latte["unitAmount"], "4.50");
        assert_eq!(latte["discountAmount"], "1.35");
        assert_eq!(latte["taxAmount"], "1.09");
        assert_eq!(latte["totalAmount"], "13.24");
        assert_eq!(open["lineItems"][1]["quantity"], "1.5");
        let completed = by(&orders, "orderId", "CAISEM82RcpmcFBM0TfOyiHV3es");
        assert_eq!(completed["orderNumber"], "Table 4");
        assert_eq!(completed["totalRefunded"], "25.92");
        assert_eq!(completed["closedDate"], "2026-10-02T11:30:00.000000Z");
        assert_eq!(completed["customerRef"], Value::Null);
        let yen = by(&orders, "orderId", "CAISEJPYmcWAzERDOyiWS5ua");
        assert_eq!(yen["currency"], "JPY");
        assert_eq!(yen["totalAmount"], "1200.00");
        assert_eq!(yen["lineItems"][0]["unitAmount"], "600.00");

        // Two searches of the first ten locations (the same query, then
        // Square's cursor), then one of the eleventh.
        let searches: Vec<Value> = fake
            .calls()
            .iter()
            .filter(|call| call.path == "/v2/orders/search")
            .map(|call| {
                assert_eq!(call.method, "POST");
                serde_json::from_str(&call.body).expect("a JSON search")
            })
            .collect();
        assert_eq!(searches.len(), 3, "{searches:#?}");
        let location_calls = fake
            .calls()
            .iter()
            .filter(|call| call.path == "/v2/locations")
            .count();
        assert_eq!(location_calls, 1, "the locations are listed once a sync");
        let first_ten: Vec<String> = (1..=10).map(|n| format!("L{n:02}WQ7K")).collect();
        assert_eq!(searches[0]["location_ids"], json!(first_ten));
        assert_eq!(searches[0]["limit"], 2);
        assert_eq!(searches[0]["return_entries"], false);
        assert_eq!(searches[0].get("cursor"), None);
        assert_eq!(searches[1]["cursor"], "ord-cursor-2");
        assert_eq!(searches[1]["query"], searches[0]["query"]);
        assert_eq!(searches[2]["location_ids"], json!([LAST]));
    }
}

/// Square takes its refresh grant as one JSON object, and answers the
/// expiry as a moment (`expires_at`), which becomes the stored expiry.
#[tokio::test]
async fn a_square_refresh_is_a_json_grant_whose_expiry_is_a_moment() {
    for backend in backends() {
        let fake = fake().await;
        let app = TestApp::spawn_with(backend, options_for(&fake, Some(PAGE), 1)).await;
        set_oauth_client(&app, "square").await;
        let (company_id, connection_id) = connected(&app, 60).await;
        let operations = sync(&app, company_id, QueueDataTypeDataType::Customers).await;
        assert_eq!(
            latest(&operations, "customers").status,
            PullStatus::Complete
        );
        assert_eq!(fake.token_calls(), 1);
        let content_type = fake.with(|inner| inner.token_content_types[0].clone());
        assert!(
            content_type.starts_with("application/json"),
            "{content_type}"
        );
        // `expires_at`, thirty days out, became the stored expiry.
        let credentials = stored(&app, connection_id).await;
        let expires = chrono::DateTime::parse_from_rfc3339(
            credentials["expiresAt"].as_str().expect("an expiry"),
        )
        .expect("RFC 3339");
        let left = expires.with_timezone(&chrono::Utc) - chrono::Utc::now();
        assert!(
            left > chrono::Duration::days(29) && left <= chrono::Duration::days(30),
            "{left}"
        );
    }
}

/// Square's schema makes an invoice's `payment_requests` and an order's
/// `line_items` nullable: `null` reads as none, and the rest of the page and
/// the sync are stored (it used to fail the whole sync, keeping old data).
#[tokio::test]
async fn square_invoices_and_orders_whose_lists_are_null_read_as_none() {
    for backend in backends() {
        let fake = fake().await;
        let app = TestApp::spawn_with(backend, options_for(&fake, Some(PAGE), 1)).await;
        let (company_id, _) = connected(&app, 7 * 86_400).await;
        let mut invoices: Value =
            serde_json::from_str(&fixture("square/fixtures/invoices-L01-1.json")).expect("JSON");
        invoices["invoices"][0]["payment_requests"] = Value::Null;
        let mut orders: Value =
            serde_json::from_str(&fixture("square/fixtures/orders-1.json")).expect("JSON");
        orders["orders"][1]["line_items"] = Value::Null;
        // Each sync's first two calls: the locations, then the first page.
        for (data_type, name, first_page) in [
            (QueueDataTypeDataType::Invoices, "invoices", invoices),
            (QueueDataTypeDataType::Orders, "orders", orders),
        ] {
            fake.with(|inner| {
                let locations = fixture("square/fixtures/locations.json");
                inner.scripted.push_back(Answer::json(200, locations));
                inner
                    .scripted
                    .push_back(Answer::json(200, first_page.to_string()));
            });
            let operations = sync(&app, company_id, data_type).await;
            let operation = latest(&operations, name);
            assert_eq!(operation.status, PullStatus::Complete, "{operation:?}");
        }
        let invoices = list(&app, company_id, "invoices").await;
        assert_eq!(invoices.len(), 10);
        assert!(by(&invoices, "invoiceNumber", "000001")["dueDate"].is_null());
        let orders = list(&app, company_id, "orders").await;
        assert_eq!(orders.len(), 6);
        let completed = by(&orders, "orderId", "CAISEM82RcpmcFBM0TfOyiHV3es");
        assert_eq!(completed["lineItems"], json!([]));
    }
}

/// Square as it answers searches filtered on `updated_at`: the orders
/// updated since (WEB-1001 completed since the first sync, WEB-1007 new) in
/// the first ten locations, none in the eleventh; the customers updated
/// since (Blue Finch's new e-mail address); every answer dated
/// `PLATFORM_DATE` by the scenario.
async fn fake_with_changes() -> Fake {
    let whole = router();
    let fake = Fake::start(
        "square",
        Scheme::Bearer,
        ACCESS,
        REFRESH,
        fixture("square/fixtures/unauthorized.json"),
        Arc::new(move |call: &Call| {
            let search: Value = serde_json::from_str(&call.body).unwrap_or_default();
            let changes = !search["query"]["filter"]["date_time_filter"]["updated_at"].is_null();
            let changed_customers = !search["query"]["filter"]["updated_at"].is_null();
            if changed_customers && call.path == "/v2/customers/search" {
                Answer::json(200, fixture("square/fixtures/customers-changed.json"))
            } else if changes && call.path == "/v2/orders/search" {
                match search["location_ids"][0].as_str() {
                    Some(FIRST) => {
                        Answer::json(200, fixture("square/fixtures/orders-changed.json"))
                    }
                    _ => Answer::json(200, fixture("square/fixtures/empty.json")),
                }
            } else {
                whole(call)
            }
        }),
    )
    .await;
    fake.with(|inner| {
        inner.client_in_body = true;
        inner.expires_at = true;
    });
    fake
}

#[tokio::test]
async fn a_resync_of_customers_searches_those_updated_since_the_first_fetch() {
    for backend in backends() {
        let fake = fake_with_changes().await;
        fake.with(|inner| inner.date = Some(PLATFORM_DATE.to_owned()));
        let app = TestApp::spawn_with(backend, options_for(&fake, Some(PAGE), 1)).await;
        let (company_id, _) = connected(&app, 7 * 86_400).await;
        let operations = sync(&app, company_id, QueueDataTypeDataType::Customers).await;
        let first = latest(&operations, "customers");
        assert_eq!(first.status, PullStatus::Complete, "{first:?}");
        assert_eq!(first.fetch_mode, Some(client::types::FetchMode::Full));
        assert!(
            fake.calls()
                .iter()
                .all(|call| call.path == "/v2/customers" && call.method == "GET"),
            "a first sync lists them whole"
        );
        let before = list(&app, company_id, "customers").await;
        let calls_before = fake.calls().len();

        let operations = sync(&app, company_id, QueueDataTypeDataType::Customers).await;
        let second = latest(&operations, "customers");
        assert_eq!(second.status, PullStatus::Complete, "{second:?}");
        assert_eq!(
            second.fetch_mode,
            Some(client::types::FetchMode::Incremental)
        );
        let calls = fake.calls();
        let asked = &calls[calls_before..];
        assert_eq!(asked.len(), 1, "one page of changes, one call");
        assert_eq!(
            (asked[0].method.as_str(), asked[0].path.as_str()),
            ("POST", "/v2/customers/search")
        );
        let search: Value = serde_json::from_str(&asked[0].body).expect("a JSON search");
        assert_eq!(
            search,
            json!({
                "limit": 2,
                "query": {"filter": {"updated_at": {"start_at": "2026-11-27T08:55:00Z"}}},
            }),
            "Square's own time when the first fetch began, less five minutes, in UTC"
        );

        let after = list(&app, company_id, "customers").await;
        assert_eq!(after.len(), 3, "two kept, one changed");
        let changed = by(&after, "customerId", "CUST-B");
        assert_eq!(changed["emailAddress"], "accounts@bluefinch.example");
        assert_eq!(changed["sourceModifiedDate"], "2026-11-27T08:57:12.000000Z");
        for was in &before {
            if was["customerId"] != "CUST-B" {
                let id = was["customerId"].as_str().expect("an id");
                assert_eq!(by(&after, "customerId", id), was, "kept as it was");
            }
        }
    }
}

/// Square asked for what changed, in the shared scenario (`scenarios::changes`).
/// A resync costs three calls here: the locations (`ListLocations`, once a
/// sync), then one search per group of ten locations (the most
/// `SearchOrders` takes), and the fixture's merchant has eleven.
static CHANGES: Changed = Changed {
    data_type: "orders",
    fake: || Box::pin(fake_with_changes()),
    filter: |call| {
        serde_json::from_str::<Value>(&call.body)
            .ok()
            .and_then(|body| {
                body["query"]["filter"]["date_time_filter"]["updated_at"]["start_at"]
                    .as_str()
                    .map(str::to_owned)
            })
    },
    since: "2026-11-27T08:55:00Z",
    // Two records fill a page of the case's size: an empty page follows.
    calls: 2,
    changed: 1,
    added: 1,
    // Square leaves out what is empty: a search matching nothing is `{}`.
    quiet: |_| Answer::json(200, "{}"),
    quiet_calls: 3,
};

changes_scenario!(CASE, CHANGES);

/// Payments are the completed payments of each location in turn (over
/// Square's cursor; a failed and an only approved one left out), each
/// allocated to its order, asked for since 2009 (Square lists only the last
/// year otherwise), then the completed refunds as negative payments (a
/// pending one left out). Company info is the seller with its main
/// location's address, phone and site.
#[tokio::test]
async fn square_payments_are_completed_payments_and_refunds_and_the_seller_is_the_company() {
    use super::ledger_reads::{columns, records, synced};
    for backend in backends() {
        let fake = fake().await;
        let app = TestApp::spawn_with(backend, options_for(&fake, None, 2)).await;
        let (company_id, _) = connected(&app, 3600).await;
        synced(
            &app,
            company_id,
            &[
                QueueDataTypeDataType::Payments,
                QueueDataTypeDataType::CompanyInfo,
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
                    "/currency",
                    "/totalAmount",
                    "/customerRef/id",
                    "/allocations/0/type",
                    "/allocations/0/id",
                    "/allocations/0/amount"
                ]
            ),
            [
                [
                    "REF-1",
                    "2026-10-09",
                    "USD",
                    "-3.50",
                    "-",
                    "Other",
                    "PAY-3",
                    "-3.50"
                ],
                [
                    "PAY-3",
                    "2026-10-07",
                    "USD",
                    "18.50",
                    "-",
                    "Other",
                    "ORD-COUNTER-9",
                    "18.50"
                ],
                [
                    "PAY-1",
                    "2026-10-05",
                    "USD",
                    "50.00",
                    "CUST-A",
                    "Other",
                    "ORD-FOR-INV-004",
                    "50.00"
                ],
            ]
        );
        let calls = fake.calls();
        let listed: Vec<&Call> = calls
            .iter()
            .filter(|call| call.path == "/v2/payments" || call.path == "/v2/refunds")
            .collect();
        assert_eq!(
            listed.len(),
            11 + 1 + 1,
            "each location, its second page, then the refunds"
        );
        assert!(
            listed
                .iter()
                .all(|call| call.query.get("begin_time").map(String::as_str)
                    == Some("2009-01-01T00:00:00Z")),
            "{listed:?}"
        );

        let company = records(&app, company_id, "companyInfo").await;
        assert_eq!(
            columns(
                &company,
                &[
                    "/companyInfoId",
                    "/companyName",
                    "/baseCurrency",
                    "/phone",
                    "/website",
                    "/addresses/0/line1",
                    "/addresses/0/city",
                    "/createdDate"
                ]
            ),
            [[
                "MLR6ZX4A6KXS2",
                "Harbor Coffee",
                "USD",
                "+1 206-555-0142",
                "https://harbor.example",
                "12 Pier Way",
                "Seattle",
                "2024-03-01T17:30:00.000000Z"
            ]]
        );
    }
}
