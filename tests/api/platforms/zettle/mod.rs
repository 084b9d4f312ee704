//! Zettle: purchases as orders, oldest first over `lastPurchaseHash` pages
//! (until an empty one), refund purchases making the purchases they refund
//! `Refunded` or `PartiallyRefunded` (from the same page or fetched by id),
//! exact minor-unit money, read back through the list; resyncs that ask
//! only after the hash the last sync ended with, a refund in them sending
//! its earlier purchase again, and a whole fetch where no hash is kept;
//! refresh before expiry and on a 401 (client credentials in the form, the
//! rotated refresh token stored), `invalid_grant`, 429 with `Retry-After`, a
//! 500, a malformed page, the data type Zettle lacks, and verification at
//! migration.
//!
//! The scenarios every platform shares (`super::scenarios`) run from its
//! `CASE`; the tests here are its own. The shared incremental scenario
//! (`changes_scenario!`) cannot express Zettle: it checks that a first sync
//! sends no filter and that every call of the resync carries one value, a
//! time; Zettle's resync is a cursor, and its first call is the very call
//! that ended the first sync (the empty page after its last hash).

use std::sync::{Arc, Mutex};

use sea_orm::ConnectionTrait;
use serde_json::{Value, json};
use uuid::Uuid;

use client::types::{FetchMode, PullStatus, QueueDataTypeDataType};

use super::fake::{Answer, Call, Fake, Scheme, fixture};
use super::scenarios::unfiltered::{Unfiltered, unfiltered_scenario};
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
/// The `lastPurchaseHash` of the first sync's pages, oldest first: Zettle's
/// hash is the purchase's epoch milliseconds and its `purchaseUUID`.
const HASH_3: &str = "1791374400000Xdi3BjWLEeuollr2KMFqhA";
const HASH_6: &str = "1791651624879Bm5SpjWJEeuollr2KMFqhA";
/// The last purchase of the first sync: where the next one resumes.
const HASH_8: &str = "1791799200000HKXEKo7EEeaq_0GG8pcFtg";
/// The pages of the purchases added after the first sync.
const HASH_11: &str = "1791981000000Mdi3BjWLEeuollr2KMFqhA";
const HASH_12: &str = "1792051200000NKXEKo7EEeaq_0GG8pcFtg";
/// Purchases 391835 and 391839, refunded, and 391840, refunded after the
/// first sync.
const PARTLY_REFUNDED: &str = "0e935690-8ec4-11e6-91f3-27d1de799420";
const REFUNDED: &str = "066e52a6-3589-11eb-a896-5af628c16a84";
const DISCOUNTED: &str = "6e2a95e0-e893-11e6-bafa-56ab480140ef";
/// The refund purchases of 391835 and 391839 (each on a later page).
const REFUND_OF_PARTLY: &str = "2ca5c42a-8ec4-11e6-aaff-4186f29705b6";
const REFUND_OF_REFUNDED: &str = "1ca5c42a-8ec4-11e6-aaff-4186f29705b6";

/// Zettle's hash of a purchase (`firstPurchaseHash`, `lastPurchaseHash`):
/// its `timestamp` in epoch milliseconds, then its `purchaseUUID`, as Z1's
/// examples write them (`1607014824879Bm5SpjWJEeuollr2KMFqhA`).
fn hash(purchase: &Value) -> String {
    let timestamp = purchase["timestamp"].as_str().expect("a timestamp");
    let millis = chrono::DateTime::parse_from_str(timestamp, "%Y-%m-%dT%H:%M:%S%.3f%z")
        .expect("Zettle's timestamp")
        .timestamp_millis();
    format!(
        "{millis}{}",
        purchase["purchaseUUID"].as_str().unwrap_or_default()
    )
}

/// The purchase history the fake serves (from `purchases.json`, eight
/// purchases), in the order of their hashes; a test adds what Zettle took
/// since.
#[derive(Clone)]
struct History(Arc<Mutex<Vec<Value>>>);

impl History {
    fn initial() -> Self {
        let purchases: Vec<Value> =
            serde_json::from_str(&fixture("zettle/fixtures/purchases.json")).expect("purchases");
        let history = Self(Arc::new(Mutex::new(Vec::new())));
        history.add(purchases);
        history
    }

    /// Adds purchases. A refund among them is listed on the purchase it
    /// refunds (`refunded`, `refundedByPurchaseUUIDs` and `…1`), as Z1's
    /// refund example shows that purchase afterwards.
    fn add(&self, purchases: Vec<Value>) {
        let mut history = self.0.lock().expect("history");
        for purchase in purchases {
            if purchase["refund"] == true
                && let Some(original) = history
                    .iter_mut()
                    .find(|original| original["purchaseUUID1"] == purchase["refundsPurchaseUUID1"])
            {
                original["refunded"] = json!(true);
                for (list, id) in [
                    ("refundedByPurchaseUUIDs", &purchase["purchaseUUID"]),
                    ("refundedByPurchaseUUIDs1", &purchase["purchaseUUID1"]),
                ] {
                    let listed = original[list].as_array().cloned().unwrap_or_default();
                    if !listed.contains(id) {
                        let mut listed = listed;
                        listed.push(id.clone());
                        original[list] = Value::Array(listed);
                    }
                }
            }
            history.push(purchase);
        }
        history.sort_by_key(hash);
    }

    /// `GET /purchases/v2`: `limit` purchases after `after` (from the first
    /// without one), highest timestamp first when `descending` (Z1's
    /// default is false); an empty page past the last; an unknown hash 400.
    fn page(&self, after: Option<&str>, limit: usize, descending: bool) -> Answer {
        let mut history = self.0.lock().expect("history").clone();
        if descending {
            history.reverse();
        }
        let start = match after {
            None => 0,
            Some(after) => match history.iter().position(|purchase| hash(purchase) == after) {
                Some(at) => at + 1,
                None => {
                    return Answer::json(400, r#"{"developerMessage":"Invalid lastPurchaseHash"}"#);
                }
            },
        };
        let purchases: Vec<Value> = history.into_iter().skip(start).take(limit).collect();
        let (Some(first), Some(last)) = (purchases.first(), purchases.last()) else {
            return Answer::json(200, json!({"purchases": [], "linkUrls": []}).to_string());
        };
        let (first, last) = (hash(first), hash(last));
        let next = format!(
            "<https://purchase.izettle.com/purchases/v2?limit={limit}&descending={descending}&lastPurchaseHash={last}>; rel=\"next\""
        );
        Answer::json(
            200,
            json!({
                "purchases": purchases,
                "firstPurchaseHash": first,
                "lastPurchaseHash": last,
                "linkUrls": [next],
            })
            .to_string(),
        )
    }

    /// `GET /purchase/v2/{uuid}`: the purchase as it is now, or 404.
    fn by_id(&self, id: &str) -> Answer {
        let history = self.0.lock().expect("history");
        match history
            .iter()
            .find(|purchase| purchase["purchaseUUID1"] == id)
        {
            Some(purchase) => Answer::json(200, purchase.to_string()),
            None => Answer::json(
                404,
                r#"{"developerMessage":"Purchase with given id not found"}"#,
            ),
        }
    }
}

/// Serves `history` by `lastPurchaseHash` pages and by id, and the user on
/// the OAuth host (the fake is both hosts).
fn router(history: History) -> super::fake::Router {
    Arc::new(move |call: &Call| match call.path.as_str() {
        "/users/self" => Answer::json(200, fixture("zettle/fixtures/user.json")),
        "/purchases/v2" => {
            let limit = call
                .query
                .get("limit")
                .and_then(|limit| limit.parse::<usize>().ok())
                .filter(|limit| (1..=1000).contains(limit));
            let Some(limit) = limit else {
                return Answer::json(400, r#"{"developerMessage":"Invalid limit"}"#);
            };
            let descending = call.query.get("descending").is_some_and(|d| d == "true");
            history.page(
                call.query.get("lastPurchaseHash").map(String::as_str),
                limit,
                descending,
            )
        }
        path => match path.strip_prefix("/purchase/v2/") {
            Some(id) => history.by_id(id),
            None => Answer::json(404, r#"{"developerMessage":"Not found"}"#),
        },
    })
}

pub(crate) async fn fake() -> Fake {
    fake_of(History::initial()).await
}

/// The fake serving `history`.
async fn fake_of(history: History) -> Fake {
    let fake = Fake::start(
        "zettle",
        Scheme::Bearer,
        ACCESS,
        REFRESH,
        fixture("zettle/fixtures/unauthorized.json"),
        router(history),
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
        // Four pages; a refund purchase listed on an earlier page, and the
        // purchases that two refunds refund, by id.
        calls: 8,
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
        first: |_| History::initial().page(None, PAGE as usize, false),
        // The first page already asks for a refund purchase by id.
        cut: Cut::FirstPage,
        truncated: r#"{"purchases": [{"purchaseUUID1": "x", "amount": 12"#,
        truncated_says: "Zettle answered a page of purchases that tributary cannot read",
        // The oldest: a purchase no refund names.
        records_at: "/purchases/0",
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

/// Zettle resynced, in the shared scenario of the platforms without a
/// modified-since filter (`scenarios::unfiltered`).
static UNFILTERED: Unfiltered = Unfiltered {
    why: "purchases are immutable (a refund is a new purchase): no modified-since; a resync resumes after the last `lastPurchaseHash`",
    mode: FetchMode::Incremental,
    resync_calls: 1,
    quiet: None,
};

unfiltered_scenario!(CASE, UNFILTERED);

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

        // Four pages by `lastPurchaseHash`, oldest first (the last empty);
        // the refund purchase of 391835 (on the page after it) by id; the
        // purchases the refunds on pages 2 and 3 refund, by id, and on page
        // 2 the refund purchase of 391839 (on page 3).
        assert_eq!(
            asked(&fake.calls()),
            [
                page(""),
                by_id(REFUND_OF_PARTLY),
                page(HASH_3),
                by_id(PARTLY_REFUNDED),
                by_id(REFUND_OF_REFUNDED),
                page(HASH_6),
                by_id(REFUNDED),
                page(HASH_8),
            ]
        );
        assert!(fake.calls().iter().all(|call| call.token == ACCESS));
        assert_eq!(
            fake.token_calls(),
            0,
            "a token valid for an hour is not refreshed"
        );
    }
}

/// What each call asked: its path, `limit`, `descending` and `lastPurchaseHash`.
fn asked(calls: &[Call]) -> Vec<(String, String, String, String)> {
    calls
        .iter()
        .map(|call| {
            let query = |name: &str| call.query.get(name).cloned().unwrap_or_default();
            (
                call.path.clone(),
                query("limit"),
                query("descending"),
                query("lastPurchaseHash"),
            )
        })
        .collect()
}

/// A page of purchases after `hash` (none: the first), oldest first.
fn page(hash: &str) -> (String, String, String, String) {
    (
        "/purchases/v2".to_owned(),
        PAGE.to_string(),
        "false".to_owned(),
        hash.to_owned(),
    )
}

/// A purchase by id.
fn by_id(id: &str) -> (String, String, String, String) {
    (
        format!("/purchase/v2/{id}"),
        String::new(),
        String::new(),
        String::new(),
    )
}

/// The purchases Zettle takes after the first sync: 391842 and 391844
/// (new), 391843 (a refund of 25.00 of 391840) and 391845 (a refund of the
/// 135.00 of 391835 that its first refund left).
fn purchases_since() -> Vec<Value> {
    serde_json::from_str(&fixture("zettle/fixtures/purchases-new.json")).expect("purchases")
}

#[tokio::test]
async fn zettle_resyncs_ask_after_the_last_hash_and_store_exactly_the_new_purchases_and_refunds() {
    for backend in backends() {
        let history = History::initial();
        let fake = fake_of(history.clone()).await;
        let app = TestApp::spawn_with(backend, options_for(&fake, Some(PAGE), 1)).await;
        let (company_id, _) = connected(&app, 3600).await;

        let first = latest(
            &sync(&app, company_id, QueueDataTypeDataType::Orders).await,
            "orders",
        );
        assert_eq!(first.status, PullStatus::Complete, "{first:?}");
        assert_eq!(first.fetch_mode, Some(FetchMode::Full));
        let whole = asked(&fake.calls());
        assert_eq!(whole.first(), Some(&page("")));
        assert_eq!(whole.last(), Some(&page(HASH_8)), "to the empty page");
        let before = list(&app, company_id, "orders").await;
        assert_eq!(before.len(), 6);
        let first_stamp = before[0]["modifiedDate"].as_str().map(str::to_owned);

        history.add(purchases_since());
        let calls_before = fake.calls().len();
        let second = latest(
            &sync(&app, company_id, QueueDataTypeDataType::Orders).await,
            "orders",
        );
        assert_eq!(second.status, PullStatus::Complete, "{second:?}");
        assert_eq!(second.fetch_mode, Some(FetchMode::Incremental));
        // After the first sync's last hash only; each refund's purchase by
        // id, and the earlier refund of 391835 that it lists.
        assert_eq!(
            asked(&fake.calls()[calls_before..]),
            [
                page(HASH_8),
                by_id(DISCOUNTED),
                page(HASH_11),
                by_id(PARTLY_REFUNDED),
                by_id(REFUND_OF_PARTLY),
                page(HASH_12),
            ]
        );

        let after = list(&app, company_id, "orders").await;
        assert_eq!(after.len(), 8, "two new orders; refunds are not orders");
        let kept: Vec<&Value> = after
            .iter()
            .filter(|order| before.contains(order))
            .collect();
        assert_eq!(
            kept.len(),
            4,
            "every order no refund touched is kept byte for byte: {after:#?}"
        );
        for number in ["391834", "391836", "391837", "391839"] {
            assert!(
                kept.iter().any(|order| order["orderNumber"] == number),
                "{number}"
            );
        }
        for order in after.iter().filter(|order| !before.contains(order)) {
            assert!(
                order["modifiedDate"].as_str().map(str::to_owned) > first_stamp,
                "a changed or new order is newer: {order}"
            );
        }
        // A refund of an order of the first sync updates that order.
        let discounted = by_number(&after, "391840");
        assert_eq!(discounted["status"], "PartiallyRefunded");
        assert_eq!(discounted["totalRefunded"], "25.00");
        assert_eq!(discounted["totalAmount"], "100.00");
        let mut unchanged = discounted.clone();
        let earlier = by_number(&before, "391840");
        for field in ["status", "totalRefunded", "modifiedDate"] {
            unchanged[field] = earlier[field].clone();
        }
        assert_eq!(&unchanged, earlier, "only what the refund changes");
        // Its second refund refunds the rest of 391835.
        let partly = by_number(&after, "391835");
        assert_eq!(partly["status"], "Refunded");
        assert_eq!(partly["totalRefunded"], "170.00");
        for (number, total, tax) in [("391842", "35.00", "3.75"), ("391844", "40.00", "4.29")] {
            let new = by_number(&after, number);
            assert_eq!(new["status"], "Completed", "{number}");
            assert_eq!(new["totalAmount"], total, "{number}");
            assert_eq!(new["totalTaxAmount"], tax, "{number}");
            assert_eq!(new["totalRefunded"], "0.00", "{number}");
        }

        // Nothing new: one call after the last hash, which stays the place
        // the sync after resumes from.
        for _ in 0..2 {
            let calls_before = fake.calls().len();
            let quiet = latest(
                &sync(&app, company_id, QueueDataTypeDataType::Orders).await,
                "orders",
            );
            assert_eq!(quiet.status, PullStatus::Complete, "{quiet:?}");
            assert_eq!(quiet.fetch_mode, Some(FetchMode::Incremental));
            assert_eq!(asked(&fake.calls()[calls_before..]), [page(HASH_12)]);
            assert_eq!(list(&app, company_id, "orders").await, after);
        }
    }
}

#[tokio::test]
async fn zettle_without_a_kept_hash_an_incremental_sync_fetches_every_purchase() {
    for backend in backends() {
        let history = History::initial();
        let fake = fake_of(history.clone()).await;
        let app = TestApp::spawn_with(backend, options_for(&fake, Some(PAGE), 1)).await;
        let (company_id, _) = connected(&app, 3600).await;
        let first = latest(
            &sync(&app, company_id, QueueDataTypeDataType::Orders).await,
            "orders",
        );
        assert_eq!(first.status, PullStatus::Complete, "{first:?}");
        // A watermark from before hashes were kept.
        app.db
            .execute_unprepared("UPDATE sync_watermark SET \"cursor\" = NULL")
            .await
            .expect("the watermark's hash removed");
        history.add(purchases_since());
        // A refund of a purchase Zettle no longer has (older than its three
        // years): nothing to update, and not an order.
        let mut orphan = purchases_since()[1].clone();
        orphan["purchaseUUID"] = json!("PKXEKo7EEeaq_0GG8pcFtg");
        orphan["purchaseUUID1"] = json!("5ca5c42a-8ec4-11e6-aaff-4186f29705b6");
        orphan["timestamp"] = json!("2026-10-16T08:00:00.000+0000");
        orphan["refundsPurchaseUUID1"] = json!("00000000-8ec4-11e6-aaff-4186f29705b6");
        history.add(vec![orphan]);

        let calls_before = fake.calls().len();
        let second = latest(
            &sync(&app, company_id, QueueDataTypeDataType::Orders).await,
            "orders",
        );
        assert_eq!(second.status, PullStatus::Complete, "{second:?}");
        assert_eq!(second.fetch_mode, Some(FetchMode::Incremental));
        let calls = asked(&fake.calls()[calls_before..]);
        assert_eq!(calls.first(), Some(&page("")), "from the first purchase");
        assert!(calls.contains(&by_id("00000000-8ec4-11e6-aaff-4186f29705b6")));
        let orders = list(&app, company_id, "orders").await;
        assert_eq!(orders.len(), 8, "{orders:#?}");
        assert_eq!(by_number(&orders, "391840")["status"], "PartiallyRefunded");
        assert_eq!(by_number(&orders, "391835")["status"], "Refunded");
        assert!(
            second.issues.is_empty(),
            "a refund of a purchase Zettle no longer has is no issue: {second:?}"
        );

        // Its last hash is kept again.
        let calls_before = fake.calls().len();
        latest(
            &sync(&app, company_id, QueueDataTypeDataType::Orders).await,
            "orders",
        );
        assert_eq!(
            asked(&fake.calls()[calls_before..]),
            [page("1792137600000PKXEKo7EEeaq_0GG8pcFtg")]
        );
    }
}
