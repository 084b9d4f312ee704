//! Zettle: purchases as orders over several `lastPurchaseHash` pages (until
//! an empty one), refund purchases making the purchases they refund
//! `Refunded` or `PartiallyRefunded` (from the same page or fetched by id),
//! exact minor-unit money, read back through the list; refresh before expiry
//! and on a 401 (client credentials in the form, the rotated refresh token
//! stored), `invalid_grant`, 429 with `Retry-After`, a 500, a malformed
//! page, the data type Zettle lacks, and verification at migration.
//!
//! The scenarios every platform shares (`super::scenarios`) run from its
//! `CASE`; the tests here are its own.

use std::sync::Arc;

use serde_json::{Value, json};
use uuid::Uuid;

use client::types::{PullStatus, QueueDataTypeDataType};

use super::fake::{Answer, Call, Fake, Scheme, fixture};
use super::scenarios::{
    Another, Case, Cut, Errors, Pages, Refresh, Refused, Synced, Verification,
    connected as connected_as, platform_scenarios, records as list,
};
use super::{latest, options_for, sync};
use crate::helpers::{TestApp, backends};

pub(crate) const ORGANIZATION: &str = "ab305d54-75b4-431b-adb2-eb6b9e546013";
const ACCESS: &str = "eyJraWQiOiIxNDQ0NzI3MTY0Njk4IiwidHlwIjoiSldUIn0.zettle-access";
const REFRESH: &str = "IZSEC07b0edfc-f557-4e52-a995-384288e2351e";
/// Purchases per page in these tests (`limit`).
const PAGE: u64 = 3;
/// Each page's `lastPurchaseHash`, as the fixtures give them.
const HASH_1: &str = "1760115624879Bm5SpjWJEeuollr2KMFqhA";
const HASH_2: &str = "1759838400000Xdi3BjWLEeuollr2KMFqhA";
const HASH_3: &str = "1759654800000Ydi3BjWLEeuollr2KMFqhA";
/// The refund purchase on page 2 of a purchase on page 3.
const REFUND_2: &str = "2ca5c42a-8ec4-11e6-aaff-4186f29705b6";

/// Serves the Zettle fixtures: four pages of purchases by
/// `lastPurchaseHash` (the last empty), one refund purchase by id, and the
/// user on the OAuth host (the fake is both hosts).
fn router() -> super::fake::Router {
    Arc::new(|call: &Call| {
        let hash = call
            .query
            .get("lastPurchaseHash")
            .cloned()
            .unwrap_or_default();
        match call.path.as_str() {
            "/users/self" => Answer::json(200, fixture("zettle/fixtures/user.json")),
            "/purchases/v2" => {
                let page = match hash.as_str() {
                    "" => 1,
                    HASH_1 => 2,
                    HASH_2 => 3,
                    HASH_3 => 4,
                    _ => {
                        return Answer::json(
                            400,
                            "{\"developerMessage\":\"Invalid lastPurchaseHash\"}",
                        );
                    }
                };
                Answer::json(
                    200,
                    fixture(&format!("zettle/fixtures/purchases-{page}.json")),
                )
            }
            path if path == format!("/purchase/v2/{REFUND_2}") => {
                Answer::json(200, fixture("zettle/fixtures/refund-2.json"))
            }
            _ => Answer::json(404, "{\"developerMessage\":\"Not found\"}"),
        }
    })
}

pub(crate) async fn fake() -> Fake {
    let fake = Fake::start(
        "zettle",
        Scheme::Bearer,
        ACCESS,
        REFRESH,
        fixture("zettle/fixtures/unauthorized.json"),
        router(),
    )
    .await;
    fake.with(|inner| inner.client_in_body = true);
    fake
}

fn body(expires_in: i64) -> Value {
    json!({"organizationUuid": ORGANIZATION, "accessToken": ACCESS, "refreshToken": REFRESH, "expiresIn": expires_in})
}

/// A company with an authorized Zettle connection.
async fn connected(app: &TestApp, expires_in: i64) -> (Uuid, Uuid) {
    connected_as(app, &CASE, &(CASE.authorization)(expires_in)).await
}

fn by_number<'a>(orders: &'a [Value], number: &str) -> &'a Value {
    orders
        .iter()
        .find(|order| order["orderNumber"] == number)
        .unwrap_or_else(|| panic!("order {number} synced"))
}

/// Zettle in the shared scenarios.
static CASE: Case = Case {
    key: "zettle",
    name: "Zettle by PayPal",
    fake: || Box::pin(fake()),
    page_size: Some(PAGE),
    authorization: body,
    access: ACCESS,
    refresh: REFRESH,
    lasting: 3600,
    kept: &["organizationUuid"],
    sync: Synced {
        data_type: "orders",
        records: 6,
        // Four pages and the refund purchase.
        calls: 5,
    },
    syncs: &["orders"],
    errors: Errors {
        rate_limited: r#"{"developerMessage":"Too many requests"}"#,
        rate_limit_headers: &[],
        rate_limited_says: "",
        server_error: r#"{"developerMessage":"Internal error"}"#,
        unavailable: (503, r#"{"developerMessage":"Service unavailable"}"#),
        unavailable_says: "Zettle answered 503 Service Unavailable",
        refused: Refused::Scope {
            status: 403,
            body: r#"{"errorType":"FORBIDDEN","developerMessage":"Missing required scope READ:PURCHASE"}"#,
            says: "Zettle answered 403 Forbidden: Missing required scope READ:PURCHASE",
        },
    },
    pages: Pages {
        prelude: |_| Vec::new(),
        first: |_| Answer::json(200, fixture("zettle/fixtures/purchases-1.json")),
        cut: Cut::SecondPage,
        truncated: r#"{"purchases": [{"purchaseUUID1": "x", "amount": 12"#,
        truncated_says: "Zettle answered a page of purchases that tributary cannot read",
        // The second: the first is a refund purchase, not an order.
        records_at: "/purchases/1",
        id_at: "/purchaseUUID1",
        field: "/timestamp",
    },
    refresh_with: Some(Refresh::ROTATING),
    unrefreshable: None,
    verification: Verification {
        rejected_says: &["Zettle answered 401"],
        another_account: Some(Another {
            authorization: || {
                let mut elsewhere = body(3600);
                elsewhere["organizationUuid"] = json!("00000000-0000-4000-8000-000000000000");
                elsewhere
            },
            says: &["another organization"],
        }),
        verified_by: |calls| calls.last().is_some_and(|call| call.path == "/users/self"),
    },
    unknown_account: None,
};

platform_scenarios!(CASE, refreshes, refreshes_before_expiry);

#[tokio::test]
async fn zettle_purchases_sync_over_every_hash_page_with_refunds_and_read_back_exactly() {
    for backend in backends() {
        let fake = fake().await;
        let app = TestApp::spawn_with(backend, options_for(&fake, Some(PAGE), 1)).await;
        let (company_id, connection_id) = connected(&app, 3600).await;
        let operations = sync(&app, company_id, QueueDataTypeDataType::Orders).await;
        let operation = latest(&operations, "orders");
        assert_eq!(operation.status, PullStatus::Complete, "{operation:?}");

        // Six purchases; the two refund purchases are not orders.
        let orders = list(&app, company_id, "orders").await;
        assert_eq!(orders.len(), 6, "{orders:#?}");
        for (number, status) in [
            ("391840", "Completed"),
            ("391839", "Refunded"),
            ("391837", "Unknown"),
            ("391836", "Completed"),
            ("391835", "PartiallyRefunded"),
            ("391834", "Completed"),
        ] {
            assert_eq!(by_number(&orders, number)["status"], status, "{number}");
        }
        assert!(
            orders
                .iter()
                .all(|order| order["orderNumber"] != "391841" && order["orderNumber"] != "391838")
        );

        // Row and purchase-level discounts, VAT from the taxable amounts.
        let discounted = by_number(&orders, "391840");
        assert_eq!(
            discounted["orderId"],
            "6e2a95e0-e893-11e6-bafa-56ab480140ef"
        );
        assert_eq!(discounted["connectionId"], connection_id.to_string());
        assert_eq!(discounted["currency"], "SEK");
        assert_eq!(discounted["subTotal"], "140.00");
        assert_eq!(discounted["totalDiscount"], "40.00");
        assert_eq!(discounted["totalTaxAmount"], "13.31");
        assert_eq!(discounted["totalAmount"], "100.00");
        assert_eq!(discounted["totalRefunded"], "0.00");
        assert_eq!(discounted["customerRef"], Value::Null);
        assert_eq!(discounted["createdDate"], "2026-10-11T15:31:00.648000Z");
        assert_eq!(discounted["closedDate"], "2026-10-11T15:31:00.648000Z");
        assert_eq!(discounted["sourceModifiedDate"], Value::Null);
        let foo = &discounted["lineItems"][0];
        assert_eq!(foo["lineId"], "0");
        assert_eq!(foo["description"], "Foo");
        assert_eq!(foo["sku"], "FOO-1");
        assert_eq!(foo["quantity"], "2");
        assert_eq!(foo["unitAmount"], "20.00");
        assert_eq!(foo["discountAmount"], "5.00");
        assert_eq!(foo["taxAmount"], "5.60");
        assert_eq!(foo["totalAmount"], "35.00");
        let bar = &discounted["lineItems"][1];
        assert_eq!(bar["description"], "Bar (Large)");
        assert_eq!(bar["sku"], Value::Null);
        assert_eq!(bar["quantity"], "10");
        assert_eq!(bar["taxAmount"], "7.71");
        assert_eq!(bar["totalAmount"], "90.00");

        // Refunded in full by a refund purchase on its own page.
        let refunded = by_number(&orders, "391839");
        assert_eq!(refunded["totalAmount"], "50.00");
        assert_eq!(refunded["totalRefunded"], "50.00");
        // In part, by a refund purchase on the page before, fetched by id.
        let partly = by_number(&orders, "391835");
        assert_eq!(partly["totalAmount"], "170.00");
        assert_eq!(partly["totalRefunded"], "35.00");
        assert_eq!(partly["lineItems"].as_array().map(Vec::len), Some(3));
        // No `refunded` flag: Unknown; no VAT given.
        let unknown = by_number(&orders, "391837");
        assert_eq!(unknown["currency"], "EUR");
        assert_eq!(unknown["totalAmount"], "24.50");
        assert_eq!(unknown["totalTaxAmount"], "0.00");
        // A currency without minor units, and a fractional quantity.
        let krona = by_number(&orders, "391836");
        assert_eq!(krona["currency"], "ISK");
        assert_eq!(krona["totalAmount"], "1500.00");
        assert_eq!(krona["totalTaxAmount"], "300.00");
        assert_eq!(krona["lineItems"][0]["unitAmount"], "500.00");
        let beans = &by_number(&orders, "391834")["lineItems"][0];
        assert_eq!(beans["description"], "Coffee beans (Ethiopia)");
        assert_eq!(beans["quantity"], "0.5");
        assert_eq!(beans["unitAmount"], "24.00");
        assert_eq!(beans["taxAmount"], "2.00");
        assert_eq!(beans["totalAmount"], "12.00");

        // Four pages by `lastPurchaseHash`, the refund purchase by id.
        let calls = fake.calls();
        let asked: Vec<_> = calls
            .iter()
            .map(|call| {
                (
                    call.path.clone(),
                    call.query.get("limit").cloned().unwrap_or_default(),
                    call.query.get("descending").cloned().unwrap_or_default(),
                    call.query
                        .get("lastPurchaseHash")
                        .cloned()
                        .unwrap_or_default(),
                )
            })
            .collect();
        let page = |hash: &str| {
            (
                "/purchases/v2".to_owned(),
                "3".to_owned(),
                "true".to_owned(),
                hash.to_owned(),
            )
        };
        assert_eq!(
            asked,
            [
                page(""),
                page(HASH_1),
                page(HASH_2),
                (
                    format!("/purchase/v2/{REFUND_2}"),
                    String::new(),
                    String::new(),
                    String::new()
                ),
                page(HASH_3),
            ]
        );
        assert!(calls.iter().all(|call| call.token == ACCESS));
        assert_eq!(
            fake.token_calls(),
            0,
            "a token valid for an hour is not refreshed"
        );
    }
}
