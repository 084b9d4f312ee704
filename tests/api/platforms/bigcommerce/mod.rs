//! BigCommerce: V2 orders over full `page`/`limit` pages until the empty
//! `204` past the last, every status id, each order's products; V3 customers
//! until `meta.pagination` names the last page; the `X-Auth-Token` header;
//! V3 catalogue products as items over two pages, then only those modified
//! since (`date_modified:min`);
//! a rejected token deauthorizes (nothing to refresh); 429 with
//! `Retry-After`, a 500, a malformed page, the data types BigCommerce
//! lacks, and verification at migration.
//!
//! The scenarios every platform shares (`super::scenarios`) run from its
//! `CASE`; the tests here are its own.

use std::sync::Arc;

use serde_json::{Value, json};
use uuid::Uuid;

use client::types::{PullStatus, QueueDataTypeDataType};

use super::fake::{Answer, Call, Fake, Scheme, fixture};
use super::scenarios::changes::{Changed, PLATFORM_DATE, changes_scenario};
use super::scenarios::{
    Another, Case, Cut, Errors, Pages, Refused, Synced, Unrefreshable, Verification,
    connected as connected_as, platform_scenarios, records as list,
};
use super::{latest, options_for, sync};
use crate::helpers::{TestApp, backends};

const STORE: &str = "h8x3kq2m7p";
const TOKEN: &str = "bc-store-token-0001xyz";
/// Records per page in these tests (`limit`).
const PAGE: u64 = 4;

fn not_found() -> Answer {
    Answer::json(
        404,
        "{\"status\":404,\"title\":\"The requested resource was not found.\"}",
    )
}

/// Serves the BigCommerce fixtures: four full pages of orders and a 204
/// past them, products for order 101 (none for the others: 204), two
/// pages of customers and two of catalogue products.
fn router() -> super::fake::Router {
    Arc::new(|call: &Call| {
        let Some(path) = call.path.strip_prefix(&format!("/stores/{STORE}/")) else {
            return not_found();
        };
        let page = call.query.get("page").cloned().unwrap_or_default();
        let limit = call.query.get("limit").map(String::as_str);
        match path {
            "v2/orders" => match page.as_str() {
                "1" | "2" | "3" | "4" if limit == Some("4") => Answer::json(
                    200,
                    fixture(&format!("bigcommerce/fixtures/orders-{page}.json")),
                ),
                "5" => Answer::json(204, ""),
                _ => not_found(),
            },
            "v2/orders/101/products" => {
                Answer::json(200, fixture("bigcommerce/fixtures/products-101.json"))
            }
            path if path.starts_with("v2/orders/") && path.ends_with("/products") => {
                Answer::json(204, "")
            }
            "v3/catalog/products" => match (page.as_str(), limit) {
                ("1" | "2", Some("4")) => Answer::json(
                    200,
                    fixture(&format!(
                        "bigcommerce/fixtures/catalog-products-{page}.json"
                    )),
                ),
                _ => not_found(),
            },
            "v3/customers" => match (page.as_str(), limit) {
                ("1", Some("1")) => {
                    Answer::json(200, fixture("bigcommerce/fixtures/customers-verify.json"))
                }
                ("1" | "2", Some("4")) => Answer::json(
                    200,
                    fixture(&format!("bigcommerce/fixtures/customers-{page}.json")),
                ),
                _ => not_found(),
            },
            _ => not_found(),
        }
    })
}

async fn fake() -> Fake {
    Fake::start(
        "bigcommerce",
        Scheme::Header("x-auth-token"),
        TOKEN,
        "no-refresh-token",
        fixture("bigcommerce/fixtures/unauthorized.json"),
        router(),
    )
    .await
}

fn body() -> Value {
    json!({"storeHash": STORE, "accessToken": TOKEN})
}

/// A company with an authorized BigCommerce connection.
async fn connected(app: &TestApp) -> (Uuid, Uuid) {
    connected_as(app, &CASE, &(CASE.authorization)(0)).await
}

fn by<'a>(records: &'a [Value], field: &str, value: &str) -> &'a Value {
    records
        .iter()
        .find(|record| record[field] == value)
        .unwrap_or_else(|| panic!("{field} {value} synced"))
}

/// BigCommerce in the shared scenarios: a store token never expires and is
/// never refreshed.
static CASE: Case = Case {
    key: "bigcommerce",
    name: "BigCommerce",
    fake: || Box::pin(fake()),
    page_size: Some(PAGE),
    authorization: |_| body(),
    access: TOKEN,
    refresh: "no-refresh-token",
    lasting: 3600,
    kept: &[],
    sync: Synced {
        data_type: "customers",
        records: 5,
        calls: 2,
    },
    syncs: &["customers", "orders", "items"],
    errors: Errors {
        rate_limited: r#"{"status":429,"title":"Too many requests"}"#,
        rate_limit_headers: &[("X-Rate-Limit-Time-Reset-Ms", "1000")],
        rate_limited_says: "",
        server_error: r#"{"status":500,"title":"Internal Server Error"}"#,
        unavailable: (503, r#"{"status":503,"title":"Service Unavailable"}"#),
        unavailable_says: "BigCommerce answered 503 Service Unavailable",
        refused: Refused::Scope {
            status: 403,
            body: r#"{"status":403,"title":"You don't have a required scope to access the endpoint","type":"https://developer.bigcommerce.com/api-docs/getting-started/api-status-codes","errors":{}}"#,
            says: "BigCommerce answered 403 Forbidden: You don't have a required scope to access the endpoint",
        },
    },
    pages: Pages {
        prelude: |_| Vec::new(),
        first: |_| Answer::json(200, fixture("bigcommerce/fixtures/customers-1.json")),
        cut: Cut::SecondPage,
        truncated: r#"{"data": [{"id": 16, "email": "x@example.com""#,
        truncated_says: "BigCommerce answered a page of customers that tributary cannot read",
        records_at: "/data",
        id_at: "/id",
        field: "/email",
    },
    refresh_with: None,
    // The app was uninstalled, or its scopes changed: the token is dead.
    unrefreshable: Some(Unrefreshable {
        authorization: body,
        says: &["BigCommerce answered 401"],
    }),
    verification: Verification {
        rejected_says: &["BigCommerce answered 401"],
        // The token of this store, but another store's hash: not found there.
        another_account: Some(Another {
            authorization: || {
                let mut other = body();
                other["storeHash"] = json!("zz99otherstore");
                other
            },
            says: &[],
        }),
        verified_by: |calls| {
            calls.last().is_some_and(|call| {
                call.path == format!("/stores/{STORE}/v3/customers")
                    && call.query.get("limit").map(String::as_str) == Some("1")
            })
        },
    },
    unknown_account: None,
};

platform_scenarios!(CASE, unrefreshable);

#[tokio::test]
async fn bigcommerce_orders_sync_page_by_page_with_every_status_id_and_their_products() {
    for backend in backends() {
        let fake = fake().await;
        let app = TestApp::spawn_with(backend, options_for(&fake, Some(PAGE), 1)).await;
        let (company_id, connection_id) = connected(&app).await;
        let operations = sync(&app, company_id, QueueDataTypeDataType::Orders).await;
        let operation = latest(&operations, "orders");
        assert_eq!(operation.status, PullStatus::Complete, "{operation:?}");

        let orders = list(&app, company_id, "orders").await;
        assert_eq!(orders.len(), 16, "{orders:#?}");
        for (id, status) in [
            ("101", "Open"),
            ("102", "Pending"),
            ("103", "Pending"),
            ("104", "Completed"),
            ("105", "Open"),
            ("106", "Refunded"),
            ("107", "Cancelled"),
            ("108", "Cancelled"),
            ("109", "Pending"),
            ("110", "Open"),
            ("111", "Open"),
            ("112", "Completed"),
            ("113", "Open"),
            ("114", "Open"),
            ("115", "PartiallyRefunded"),
            ("116", "Unknown"),
        ] {
            assert_eq!(by(&orders, "orderId", id)["status"], status, "{id}");
        }
        let first = by(&orders, "orderId", "101");
        assert_eq!(first["orderNumber"], "101");
        assert_eq!(first["connectionId"], connection_id.to_string());
        assert_eq!(first["currency"], "USD");
        assert_eq!(first["subTotal"], "225.00");
        assert_eq!(first["totalTaxAmount"], "18.00");
        assert_eq!(first["totalDiscount"], "15.00");
        assert_eq!(first["totalAmount"], "228.00");
        assert_eq!(first["totalRefunded"], "0.00");
        assert_eq!(first["customerRef"]["id"], "11");
        assert_eq!(first["customerRef"]["companyName"], "Jane Doe");
        assert_eq!(first["createdDate"], "2026-10-01T10:00:00.000000Z");
        assert_eq!(first["sourceModifiedDate"], "2026-10-01T18:30:00.000000Z");
        assert_eq!(first["closedDate"], Value::Null);
        let terrarium = &first["lineItems"][0];
        assert_eq!(terrarium["lineId"], "1");
        assert_eq!(terrarium["description"], "Orbit Terrarium - Large");
        assert_eq!(terrarium["sku"], "OTL-1");
        assert_eq!(terrarium["quantity"], "2");
        assert_eq!(terrarium["unitAmount"], "100.00");
        assert_eq!(terrarium["discountAmount"], "10.00");
        assert_eq!(terrarium["taxAmount"], "16.00");
        assert_eq!(terrarium["totalAmount"], "216.00");
        assert_eq!(first["lineItems"][1]["sku"], Value::Null);
        assert_eq!(by(&orders, "orderId", "102")["lineItems"], json!([]));
        // A guest order names no customer.
        assert_eq!(by(&orders, "orderId", "102")["customerRef"], Value::Null);
        assert_eq!(
            by(&orders, "orderId", "107")["customerRef"]["companyName"],
            "Blue Finch LLC"
        );
        assert_eq!(
            by(&orders, "orderId", "104")["closedDate"],
            "2026-10-05T15:45:00.000000Z"
        );
        assert_eq!(
            by(&orders, "orderId", "107")["closedDate"],
            "2026-10-07T18:30:00.000000Z"
        );
        assert_eq!(by(&orders, "orderId", "115")["totalRefunded"], "12.50");

        // Four full pages, then the empty page past them; the store token
        // in X-Auth-Token on every call.
        let calls = fake.calls();
        let pages: Vec<String> = calls
            .iter()
            .filter(|call| call.path.ends_with("/v2/orders"))
            .map(|call| call.query.get("page").cloned().unwrap_or_default())
            .collect();
        assert_eq!(pages, ["1", "2", "3", "4", "5"]);
        let products: Vec<_> = calls
            .iter()
            .filter(|call| call.path.ends_with("/products"))
            .collect();
        assert_eq!(products.len(), 16);
        // A header BigCommerce's OpenAPI document marks required there.
        assert!(products.iter().all(|call| {
            call.headers.get("content-type").map(String::as_str) == Some("application/json")
        }));
        assert!(calls.iter().all(|call| call.token == TOKEN));
        assert!(
            calls
                .iter()
                .all(|call| !call.headers.contains_key("authorization"))
        );
        assert_eq!(fake.token_calls(), 0);
    }
}

#[tokio::test]
async fn bigcommerce_customers_sync_until_the_last_page_the_meta_names() {
    for backend in backends() {
        let fake = fake().await;
        let app = TestApp::spawn_with(backend, options_for(&fake, Some(PAGE), 1)).await;
        let (company_id, _) = connected(&app).await;
        let operations = sync(&app, company_id, QueueDataTypeDataType::Customers).await;
        assert_eq!(
            latest(&operations, "customers").status,
            PullStatus::Complete
        );
        let customers = list(&app, company_id, "customers").await;
        assert_eq!(customers.len(), 5, "{customers:#?}");
        let jane = by(&customers, "customerId", "11");
        assert_eq!(jane["customerName"], "Jane Doe");
        assert_eq!(jane["emailAddress"], "jane@example.com");
        assert_eq!(jane["phone"], "+1 512 555 0100");
        assert_eq!(jane["status"], "Active");
        assert_eq!(jane["sourceModifiedDate"], "2026-03-11T08:00:00.000000Z");
        assert_eq!(
            by(&customers, "customerId", "12")["customerName"],
            "Blue Finch LLC"
        );
        assert_eq!(by(&customers, "customerId", "12")["phone"], Value::Null);
        assert_eq!(
            by(&customers, "customerId", "15")["customerName"],
            "nameless@example.com"
        );
        let pages: Vec<String> = fake
            .calls()
            .iter()
            .map(|call| call.query.get("page").cloned().unwrap_or_default())
            .collect();
        assert_eq!(pages, ["1", "2"], "no page past total_pages");
    }
}

/// BigCommerce as it answers `min_date_modified`: the orders modified since
/// (102 shipped since the first sync, 117 new), on one short page; every
/// answer dated `PLATFORM_DATE` by the scenario.
async fn fake_with_changes() -> Fake {
    let whole = router();
    Fake::start(
        "bigcommerce",
        Scheme::Header("x-auth-token"),
        TOKEN,
        "no-refresh-token",
        fixture("bigcommerce/fixtures/unauthorized.json"),
        Arc::new(move |call: &Call| {
            let changes = call.query.contains_key("min_date_modified");
            if changes && call.path == format!("/stores/{STORE}/v2/orders") {
                match call.query.get("page").map(String::as_str) {
                    Some("1") => {
                        Answer::json(200, fixture("bigcommerce/fixtures/orders-changed.json"))
                    }
                    _ => Answer::json(204, ""),
                }
            } else {
                whole(call)
            }
        }),
    )
    .await
}

/// BigCommerce asked for what changed, in the shared scenario (`scenarios::changes`).
static CHANGES: Changed = Changed {
    data_type: "orders",
    fake: || Box::pin(fake_with_changes()),
    filter: |call| call.query.get("min_date_modified").cloned(),
    since: "2026-11-27T08:55:00.000+00:00",
    calls: 1,
    changed: 1,
    added: 1,
    // "An empty answer (`204 No Content`) or `[]` ends it" (NOTES.md).
    quiet: |_| Answer::json(204, ""),
    quiet_calls: 1,
};

changes_scenario!(CASE, CHANGES);

/// The catalogue's products are the store's items, each field from the
/// product: SKU, name, type by `type` and `inventory_tracking`, archived
/// when hidden, `price` the sales price, `cost_price` (when set) the
/// purchase price, stock when tracked by product; two pages until
/// `meta.pagination`'s last. A second sync asks only for the products
/// modified since the first began (`date_modified:min`, BigCommerce's own
/// time less five minutes).
#[tokio::test]
async fn bigcommerce_catalogue_products_sync_as_items_then_only_those_modified_since() {
    use super::ledger_reads::columns;
    for backend in backends() {
        let fake = fake().await;
        fake.with(|inner| inner.date = Some(PLATFORM_DATE.to_owned()));
        let app = TestApp::spawn_with(backend, options_for(&fake, Some(PAGE), 1)).await;
        let (company_id, _) = connected(&app).await;
        let operations = sync(&app, company_id, QueueDataTypeDataType::Items).await;
        let operation = latest(&operations, "items");
        assert_eq!(operation.status, PullStatus::Complete, "{operation:?}");
        let items = list(&app, company_id, "items").await;
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
                    "/sales/accountRef",
                    "/purchases/unitPrice",
                    "/quantityOnHand",
                    "/sourceModifiedDate",
                ]
            ),
            [
                [
                    "82",
                    "CC3C",
                    "Chemex Coffeemaker 3 Cup",
                    "Inventory",
                    "Active",
                    "49.50",
                    "-",
                    "22.00",
                    "7",
                    "2026-10-07T16:20:00.000000Z"
                ],
                [
                    "81",
                    "DPB-1",
                    "Dustpan & Brush (old)",
                    "Inventory",
                    "Archived",
                    "34.95",
                    "-",
                    "20.125",
                    "0",
                    "2026-10-06T14:45:00.000000Z"
                ],
                [
                    "80",
                    "DL-PACK",
                    "Gift Card Design Pack",
                    "NonInventory",
                    "Active",
                    "5.00",
                    "-",
                    "-",
                    "-",
                    "2026-10-05T08:00:00.000000Z"
                ],
                [
                    "78",
                    "OTL",
                    "Orbit Terrarium - Large",
                    "Inventory",
                    "Active",
                    "109.00",
                    "-",
                    "-",
                    "-",
                    "2026-10-03T11:00:00.000000Z"
                ],
                [
                    "77",
                    "SM-13",
                    "Smith Journal 13",
                    "Inventory",
                    "Active",
                    "12.99",
                    "-",
                    "4.50",
                    "41",
                    "2026-10-02T09:15:00.000000Z"
                ],
                [
                    "79",
                    "-",
                    "Utility Caddy",
                    "NonInventory",
                    "Active",
                    "45.95",
                    "-",
                    "-",
                    "-",
                    "2026-10-04T12:30:00.000000Z"
                ],
            ]
        );
        let listed = |calls: &[Call]| -> Vec<(String, Option<String>)> {
            calls
                .iter()
                .filter(|call| call.path == format!("/stores/{STORE}/v3/catalog/products"))
                .map(|call| {
                    (
                        call.query.get("page").cloned().unwrap_or_default(),
                        call.query.get("date_modified:min").cloned(),
                    )
                })
                .collect()
        };
        assert_eq!(
            listed(&fake.calls()),
            [("1".to_owned(), None), ("2".to_owned(), None)],
            "no page past total_pages"
        );

        let before = fake.calls().len();
        let operations = sync(&app, company_id, QueueDataTypeDataType::Items).await;
        let second = latest(&operations, "items");
        assert_eq!(second.status, PullStatus::Complete, "{second:?}");
        assert_eq!(
            second.fetch_mode,
            Some(client::types::FetchMode::Incremental)
        );
        let since = Some("2026-11-27T08:55:00Z".to_owned());
        assert_eq!(
            listed(&fake.calls()[before..]),
            [("1".to_owned(), since.clone()), ("2".to_owned(), since)]
        );
        assert_eq!(
            list(&app, company_id, "items").await,
            items,
            "nothing changed"
        );
    }
}
