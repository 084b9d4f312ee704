//! The API reading layered generations: the same syncs run in an app that
//! publishes every resync whole and in two that publish them as layers
//! (one remembering list orders, one reading every queried or deep merged
//! page alone), and every way of reading a list answers alike: pages by
//! number at any depth, a status's list, queries on declared fields and on
//! the JSON, `orderBy`, the pages a cursor reaches, records by id, and a
//! company's list merged from two connections, each layered.

use serde_json::Value;

use tributary::data::DataType;
use tributary::sync::engine::{EngineConfig, Layering};

use super::invoices_only;
use crate::connections::new_company;
use crate::helpers::{AppOptions, TestApp, answer, backends};
use crate::sync::{authorized_sandbox, reauthorize, sync_invoices};

/// The options of an app whose resyncs layer lists of 1,000 rows or more,
/// remembering list orders or not.
fn layering(list_orders: bool) -> AppOptions {
    let defaults = AppOptions::default();
    AppOptions {
        engine: EngineConfig {
            layering: Some(Layering { at_rows: 1_000 }),
            ..defaults.engine
        },
        list_order_cache_bytes: if list_orders {
            defaults.list_order_cache_bytes
        } else {
            0
        },
        metrics: true,
        ..AppOptions::default()
    }
}

/// The companies one app synced: one with a connection, one with two.
struct Synced {
    /// The company with one connection.
    single: uuid::Uuid,
    /// The company with two connections.
    merged: uuid::Uuid,
}

/// A connection's sandbox data before and after a resync: (organization,
/// seed, invoices first, invoices then, changed then).
type Sandbox = (&'static str, u64, u64, u64, u64);

/// The one connection's data: 9 invoices new, 45 amended.
const SINGLE: Sandbox = ("sbx-read-one", 21, 2_991, 3_000, 45);
/// The two connections' data: one grows by 8 with 25 amended; the other
/// loses its last 7 (flagged deleted) with 20 amended. (The sandbox has a
/// customer per 10 invoices: counts that keep it keep every other invoice.)
const MERGED: [Sandbox; 2] = [
    ("sbx-read-two-a", 22, 2_001, 2_009, 25),
    ("sbx-read-two-b", 23, 1_609, 1_602, 20),
];

/// Runs the same first syncs and resyncs in `app`; checks that a layering
/// app published every resynced list as a layer.
async fn sync_all(app: &TestApp, layered: bool) -> Synced {
    let mut companies = Vec::new();
    for (name, sandboxes) in [("One", &[SINGLE][..]), ("Two", &MERGED[..])] {
        let company_id = new_company(app, name).await;
        let mut connections = Vec::new();
        for &(organization, seed, first, _, _) in sandboxes {
            let authorization = invoices_only(organization, seed, first, 0);
            connections.push(authorized_sandbox(app, company_id, authorization).await);
        }
        sync_invoices(app, company_id).await;
        // Read before the resync too: the orders the app remembers of the
        // first generations are carried over to the layers.
        reads(app, company_id, &[]).await;
        for (&(organization, seed, _, then, changed), &connection_id) in
            sandboxes.iter().zip(&connections)
        {
            let authorization = invoices_only(organization, seed, then, changed);
            reauthorize(app, company_id, connection_id, authorization).await;
        }
        sync_invoices(app, company_id).await;
        for &connection_id in &connections {
            let current = tributary::store::current(&app.db, connection_id, DataType::INVOICES)
                .await
                .expect("read")
                .expect("synced");
            assert_eq!(
                current.layer.is_some(),
                layered,
                "connection {connection_id}'s resync published as a layer: {layered}"
            );
        }
        companies.push(company_id);
    }
    Synced {
        single: companies[0],
        merged: companies[1],
    }
}

/// What two apps must answer alike: the status, and for a list its paging
/// and its records, each without its `modifiedDate` (stamped by each app's
/// own syncs) and `connectionId` (each app's own), and which links it has;
/// for one record, the record so.
fn comparable(status: u16, body: &Value) -> Value {
    let undated = |record: &Value| {
        let mut record = record.clone();
        if let Some(object) = record.as_object_mut() {
            object.remove("modifiedDate");
            object.remove("connectionId");
        }
        record
    };
    if status != 200 {
        return serde_json::json!({ "status": status, "title": body["title"] });
    }
    let Some(results) = body["results"].as_array() else {
        return serde_json::json!({ "status": status, "record": undated(body) });
    };
    let links: Vec<&String> = body["_links"]
        .as_object()
        .map(|links| links.keys().collect())
        .unwrap_or_default();
    serde_json::json!({
        "status": status,
        "pageNumber": body["pageNumber"],
        "pageSize": body["pageSize"],
        "totalResults": body["totalResults"],
        "links": links,
        "results": results.iter().map(undated).collect::<Vec<_>>(),
    })
}

/// Asserts two comparable answers are the same, saying where they part:
/// the paging, or the first record that differs (by id).
fn same(got: &Value, want: &Value, read: &str) {
    if got == want {
        return;
    }
    let ids = |answer: &Value| -> Vec<String> {
        answer["results"]
            .as_array()
            .map(|results| {
                results
                    .iter()
                    .map(|record| record["invoiceId"].as_str().unwrap_or("?").to_owned())
                    .collect()
            })
            .unwrap_or_default()
    };
    let (got_ids, want_ids) = (ids(got), ids(want));
    let first = got_ids
        .iter()
        .zip(&want_ids)
        .position(|(got, want)| got != want);
    let differing = got["results"]
        .as_array()
        .zip(want["results"].as_array())
        .and_then(|(got, want)| got.iter().zip(want).position(|(got, want)| got != want));
    panic!(
        "{read}: status {} vs {}, total {} vs {}, {} vs {} records, links {} vs {}, first other id \
         at {first:?} ({:?} vs {:?}), first other record at {differing:?}; record {} vs {}",
        got["status"],
        want["status"],
        got["totalResults"],
        want["totalResults"],
        got_ids.len(),
        want_ids.len(),
        got["links"],
        want["links"],
        first.map(|at| &got_ids[at]),
        first.map(|at| &want_ids[at]),
        got["record"],
        want["record"],
    );
}

/// The reads compared, after `/companies/{id}/data/invoices`.
const LISTS: &[&str] = &[
    "",
    "?page=2&pageSize=250",
    "?page=12&pageSize=250",
    "?page=30&pageSize=100",
    "?page=31&pageSize=100",
    "?pageSize=5000",
    "?page=2&pageSize=5000",
    "?status=Paid",
    "?status=Paid&page=3&pageSize=50",
    "?status=Draft&page=2&pageSize=100",
    "?status=Void&pageSize=5000",
    "?query=amountDue%3E500",
    "?query=amountDue%3E500&page=4&pageSize=50",
    "?query=totalAmount%3E100&page=9&pageSize=200",
    "?query=invoiceNumber~7",
    "?query=invoiceNumber~7&page=3&pageSize=40",
    "?query=currency%3DUSD||amountDue%3C100&page=2",
    "?query=status%3DPaid&page=2&pageSize=100",
    "?orderBy=amountDue",
    "?orderBy=-dueDate&page=5&pageSize=100",
    "?orderBy=totalAmount&query=amountDue%3E100&page=2&pageSize=200",
    "?orderBy=invoiceNumber&page=3&pageSize=100",
    "?status=PartiallyPaid&query=amountDue%3E100",
    "?status=Paid&orderBy=amountDue&page=2&pageSize=20",
    "?status=Submitted&query=invoiceNumber~1&page=2&pageSize=30",
    "?status=Paid&query=invoiceNumber~1&page=2&pageSize=20",
    "?status=PartiallyPaid&query=invoiceNumber~2",
    "?status=Void&query=invoiceNumber~3",
    // Pages so small that a wide match is walked in the list's order.
    "?query=amountDue%3E500&pageSize=2",
    "?query=totalAmount%3E100&pageSize=3",
];

/// Every read of `LISTS` and each page a list's `next` links reach (up to
/// two), and `ids`' records, for `company_id` in `app`, comparable.
async fn reads(app: &TestApp, company_id: uuid::Uuid, ids: &[String]) -> Vec<(String, Value)> {
    let list = format!("/companies/{company_id}/data/invoices");
    let mut found = Vec::new();
    for suffix in LISTS {
        let path = format!("{list}{suffix}");
        let (status, body) = answer(app, &path).await;
        found.push((path.clone(), comparable(status, &body)));
        // The pages its links reach: by cursor for a query, pinned.
        let mut next = body["_links"]["next"]["href"].as_str().map(str::to_owned);
        for step in 1..=2 {
            let Some(href) = next.take() else { break };
            let (status, body) = answer(app, &href).await;
            found.push((format!("{path} next {step}"), comparable(status, &body)));
            next = body["_links"]["next"]["href"].as_str().map(str::to_owned);
        }
    }
    for id in ids {
        let path = format!("{list}/{id}");
        let (status, body) = answer(app, &path).await;
        found.push((path, comparable(status, &body)));
    }
    found
}

/// Ids of `company_id`'s invoices, every 150th in the list, and of
/// invoices the resyncs amended (the sandbox's first), added (its last)
/// and flagged deleted, and one no invoice has.
async fn ids_of(app: &TestApp, company_id: uuid::Uuid) -> Vec<String> {
    let path = format!("/companies/{company_id}/data/invoices?pageSize=5000");
    let (_, body) = answer(app, &path).await;
    let mut ids: Vec<String> = body["results"]
        .as_array()
        .expect("a list")
        .iter()
        .step_by(150)
        .filter_map(|record| record["invoiceId"].as_str().map(str::to_owned))
        .collect();
    for index in [0, 66, 1_605, 2_005, 2_995] {
        ids.push(format!("sbx-inv-{index:07}"));
    }
    ids.push("no-such-invoice".to_owned());
    ids
}

#[tokio::test]
async fn every_read_of_a_layered_list_answers_as_the_list_published_whole() {
    for backend in backends() {
        eprintln!("running on {backend:?}");
        let whole = TestApp::spawn_with(backend, AppOptions::default()).await;
        let expected = sync_all(&whole, false).await;
        for list_orders in [true, false] {
            let layered = TestApp::spawn_with(backend, layering(list_orders)).await;
            let synced = sync_all(&layered, true).await;
            for (company, expected_company) in [
                (synced.single, expected.single),
                (synced.merged, expected.merged),
            ] {
                let ids = ids_of(&whole, expected_company).await;
                assert!(ids.len() >= 20 + 6, "ids to read: {}", ids.len());
                let want = reads(&whole, expected_company, &ids).await;
                // The reads' paths name each app's own company.
                let got = reads(&layered, company, &ids).await;
                assert_eq!(got.len(), want.len(), "the same links followed");
                for ((path, got), (_, want)) in got.iter().zip(&want) {
                    same(
                        got,
                        want,
                        &format!("{path} (list orders kept: {list_orders})"),
                    );
                }
                // Not a comparison of empty answers: the reads of `LISTS`
                // list records, but for the two past a short list's end
                // (the pages links reach are not counted).
                let empty: Vec<&String> = want
                    .iter()
                    .filter(|(path, _)| {
                        !path.contains(" next ") && !path.contains("/data/invoices/")
                    })
                    .filter(|(_, answer)| answer["results"].as_array().is_none_or(|r| r.is_empty()))
                    .map(|(path, _)| path)
                    .collect();
                assert!(empty.len() <= 2, "reads without records: {empty:?}");
            }
            // The orders remembered of the first generations were carried
            // over to the layers: some orders were not read again.
            if list_orders {
                let labels = [("data_type", "invoices"), ("way", "carried")];
                let carried =
                    crate::metrics::counter(&layered, "tributary_list_orders_total", &labels).await;
                assert!(carried > 0, "orders carried over to a layer");
            }
            // A second read of every list (orders remembered, totals kept)
            // answers as the first.
            let again = reads(&layered, synced.single, &[]).await;
            let first = reads(&whole, expected.single, &[]).await;
            assert_eq!(again.len(), first.len());
            for ((path, again), (_, first)) in again.iter().zip(&first) {
                same(again, first, &format!("{path} read again"));
            }
        }
    }
}
