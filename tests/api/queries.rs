//! `query` and `orderBy` on the synced-data lists: what a query selects,
//! checked against the whole list filtered in Rust, with exact totals and
//! links that carry it; orders; and the 400s that say where a query is wrong.

use std::cmp::Ordering;

use serde_json::{Value, json};
use uuid::Uuid;

use crate::connections::new_company;
use crate::helpers::{
    TestApp, answer, for_each_database, for_each_database_with, json, with_and_without_list_orders,
};
use crate::sync::{authorized_sandbox, sync_and_settle as sync};

/// A sandbox connection of the company with `invoice_count` invoices (and
/// no other records) from `seed`.
async fn invoices_from(app: &TestApp, company_id: Uuid, seed: u64, invoice_count: u64) -> Uuid {
    authorized_sandbox(app, company_id, invoices_body(seed, invoice_count)).await
}

/// One synthetic organization whose data the seed chooses (a connection
/// keeps its organization across re-authorizations).
fn invoices_body(seed: u64, invoice_count: u64) -> Value {
    json!({
        "organizationId": "sbx-q", "accessToken": "tok",
        "invoiceCount": invoice_count, "orderCount": 0, "bankTransactionCount": 0,
        "seed": seed,
    })
}

pub fn encoded(text: &str) -> String {
    url::form_urlencoded::byte_serialize(text.as_bytes()).collect()
}

/// Every record of the company's invoices, in the list's order.
pub async fn whole_list(app: &TestApp, company_id: Uuid) -> Vec<Value> {
    let (status, page) = answer(
        app,
        &format!("/companies/{company_id}/data/invoices?pageSize=5000"),
    )
    .await;
    assert_eq!(status, 200, "{page}");
    page["results"].as_array().expect("results").clone()
}

/// The records of every page from `first` on, following `_links.next`;
/// checks that every page states the same total and carries `parameters`
/// (already encoded) in its links, and returns the records and the total.
pub async fn walk(app: &TestApp, first: &str, parameters: &str) -> (Vec<Value>, u64) {
    let mut records = Vec::new();
    let mut total = None;
    let mut next = Some(first.to_owned());
    while let Some(path) = next {
        let (status, page) = answer(app, &path).await;
        assert_eq!(status, 200, "{path}: {page}");
        let stated = page["totalResults"].as_u64().expect("a total");
        assert_eq!(*total.get_or_insert(stated), stated, "{path}");
        let current = page["_links"]["current"]["href"].as_str().expect("current");
        assert!(current.contains(parameters), "{current} lacks {parameters}");
        records.extend(page["results"].as_array().expect("results").iter().cloned());
        next = page["_links"]["next"]["href"].as_str().map(str::to_owned);
        if let Some(next) = &next {
            assert!(next.contains(parameters), "{next} lacks {parameters}");
        }
    }
    (records, total.unwrap_or(0))
}

fn number(record: &Value, field: &str) -> f64 {
    record[field]
        .as_str()
        .and_then(|text| text.parse().ok())
        .expect("a decimal")
}

fn text<'a>(record: &'a Value, field: &str) -> Option<&'a str> {
    record[field].as_str()
}

type Check = Box<dyn Fn(&Value) -> bool>;

/// Queries over the invoices in `listed`, with what each must select,
/// built from values the data holds.
fn cases(listed: &[Value]) -> Vec<(String, Check)> {
    let currency = text(&listed[0], "currency").expect("a currency").to_owned();
    let customer = listed
        .iter()
        .find_map(|record| record["customerRef"]["id"].as_str())
        .expect("a customer")
        .to_owned();
    let mut dates: Vec<&str> = listed
        .iter()
        .filter_map(|record| text(record, "issueDate"))
        .collect();
    dates.sort_unstable();
    let median = dates[dates.len() / 2].to_owned();
    let number_part = text(&listed[3], "invoiceNumber")
        .expect("a number")
        .chars()
        .rev()
        .take(2)
        .collect::<String>()
        .chars()
        .rev()
        .collect::<String>();
    let (c1, c2, c3, m1, m2) = (
        currency.clone(),
        customer.clone(),
        currency.clone(),
        median.clone(),
        median.clone(),
    );
    let n1 = number_part.clone();
    let c4 = currency.clone();
    vec![
        (
            format!("currency={currency}"),
            Box::new(move |r: &Value| text(r, "currency") == Some(c1.as_str())),
        ),
        (
            format!("customerRef.id={customer}"),
            Box::new(move |r: &Value| r["customerRef"]["id"].as_str() == Some(c2.as_str())),
        ),
        (
            "amountDue>0&&status!=draft".to_owned(),
            Box::new(|r: &Value| {
                number(r, "amountDue") > 0.0 && text(r, "status") != Some("Draft")
            }),
        ),
        (
            format!("{{status=paid || status=VOID}} && issueDate>={median}"),
            Box::new(move |r: &Value| {
                matches!(text(r, "status"), Some("Paid" | "Void"))
                    && text(r, "issueDate").is_some_and(|date| date >= m1.as_str())
            }),
        ),
        (
            format!("issueDate<{median}||currency!={currency}"),
            Box::new(move |r: &Value| {
                text(r, "issueDate").is_some_and(|date| date < m2.as_str())
                    || text(r, "currency") != Some(c3.as_str())
            }),
        ),
        (
            format!("invoiceNumber~{number_part}"),
            Box::new(move |r: &Value| {
                text(r, "invoiceNumber").is_some_and(|number| number.contains(n1.as_str()))
            }),
        ),
        // An equality on `status` is read as the `status` filter is.
        (
            "status=PAID".to_owned(),
            Box::new(|r: &Value| text(r, "status") == Some("Paid")),
        ),
        (
            format!("currency={currency}&&status=paid"),
            Box::new(move |r: &Value| {
                text(r, "currency") == Some(c4.as_str()) && text(r, "status") == Some("Paid")
            }),
        ),
        (
            "totalAmount>=100.5&&totalAmount<=2000".to_owned(),
            Box::new(|r: &Value| {
                let total = number(r, "totalAmount");
                (100.5..=2000.0).contains(&total)
            }),
        ),
    ]
}

/// Checks every case on the company's invoices: the query's pages, walked
/// by `_links.next`, are exactly the list's matching records in its order,
/// and `totalResults` counts them; with `status=paid` as well, both apply.
async fn every_case_selects_what_it_says(app: &TestApp, company_id: Uuid) {
    let listed = whole_list(app, company_id).await;
    for (query, check) in cases(&listed) {
        let expected: Vec<Value> = listed.iter().filter(|r| check(r)).cloned().collect();
        assert!(
            !expected.is_empty() && expected.len() < listed.len(),
            "`{query}` should select some but not all of {} invoices",
            listed.len()
        );
        let parameter = format!("query={}", encoded(&query));
        let (walked, total) = walk(
            app,
            &format!("/companies/{company_id}/data/invoices?pageSize=37&{parameter}"),
            &parameter,
        )
        .await;
        assert_eq!(total, expected.len() as u64, "{query}");
        assert_eq!(walked, expected, "{query}");
        // A page asked for by number, with no cursor, is the same slice.
        let (status, second) = answer(
            app,
            &format!("/companies/{company_id}/data/invoices?page=2&pageSize=37&{parameter}"),
        )
        .await;
        assert_eq!(status, 200, "{second}");
        assert_eq!(second["totalResults"], expected.len(), "{query}");
        let slice = &expected[expected.len().min(37)..expected.len().min(74)];
        assert_eq!(
            second["results"].as_array().expect("results"),
            slice,
            "{query}: page 2"
        );

        let paid: Vec<Value> = expected
            .iter()
            .filter(|r| text(r, "status") == Some("Paid"))
            .cloned()
            .collect();
        let (walked, total) = walk(
            app,
            &format!("/companies/{company_id}/data/invoices?status=paid&pageSize=50&{parameter}"),
            &parameter,
        )
        .await;
        assert_eq!(total, paid.len() as u64, "status=paid and {query}");
        assert_eq!(walked, paid, "status=paid and {query}");
    }
}

#[tokio::test]
async fn a_query_selects_exactly_the_matching_records_of_one_or_several_connections() {
    for (how, options) in with_and_without_list_orders() {
        eprintln!("{how}");
        for_each_database_with(options, queried_lists_of_one_or_several_connections).await;
    }
}

async fn queried_lists_of_one_or_several_connections(app: &TestApp) {
    {
        let one = new_company(app, "Query One Ltd").await;
        invoices_from(app, one, 71, 300).await;
        sync(app, one).await;
        every_case_selects_what_it_says(app, one).await;

        let several = new_company(app, "Query Several Ltd").await;
        invoices_from(app, several, 72, 150).await;
        invoices_from(app, several, 73, 120).await;
        sync(app, several).await;
        every_case_selects_what_it_says(app, several).await;
    }
}

/// `listed` ordered by `field` (`-field` descending) as the API promises:
/// records without the field last, ties in the list's order.
fn ordered(listed: &[Value], order_by: &str) -> Vec<Value> {
    let (descending, field) = match order_by.strip_prefix('-') {
        Some(field) => (true, field),
        None => (false, order_by),
    };
    let numeric = ["amountDue", "totalAmount"].contains(&field);
    let mut sorted = listed.to_vec();
    sorted.sort_by(|x, y| {
        let (a, b) = (&x[field], &y[field]);
        match (a.is_null(), b.is_null()) {
            (true, true) => return Ordering::Equal,
            (true, false) => return Ordering::Greater,
            (false, true) => return Ordering::Less,
            _ => {}
        }
        let order = if numeric {
            number(x, field).total_cmp(&number(y, field))
        } else {
            a.as_str().cmp(&b.as_str())
        };
        if descending { order.reverse() } else { order }
    });
    sorted
}

#[tokio::test]
async fn order_by_sorts_by_the_field_nulls_last_and_ties_in_the_lists_order() {
    for (how, options) in with_and_without_list_orders() {
        eprintln!("{how}");
        for_each_database_with(options, lists_ordered_by_a_field).await;
    }
}

async fn lists_ordered_by_a_field(app: &TestApp) {
    // Two connections' lists merged, and one connection's (whose order by a
    // declared field is read from its keys).
    for seeds in [&[74, 75][..], &[76][..]] {
        let company_id = new_company(app, &format!("Ordered {seeds:?} Ltd")).await;
        for seed in seeds {
            invoices_from(app, company_id, *seed, 90).await;
        }
        sync(app, company_id).await;
        let listed = whole_list(app, company_id).await;
        assert!(
            listed.iter().any(|r| r["paidOnDate"].is_null())
                && listed.iter().any(|r| !r["paidOnDate"].is_null()),
            "the data should have invoices paid and unpaid"
        );
        for order_by in [
            "-amountDue",
            "totalAmount",
            "dueDate",
            "-dueDate",
            "currency",
        ] {
            let parameter = format!("orderBy={}", encoded(order_by));
            let (walked, total) = walk(
                app,
                &format!("/companies/{company_id}/data/invoices?pageSize=23&{parameter}"),
                &parameter,
            )
            .await;
            assert_eq!(total, listed.len() as u64, "{order_by}");
            assert_eq!(walked, ordered(&listed, order_by), "{order_by}");
        }

        // With a query: the matches, in that order.
        let parameters = format!("query={}&orderBy=-totalAmount", encoded("status!=paid"));
        let (walked, total) = walk(
            app,
            &format!("/companies/{company_id}/data/invoices?pageSize=40&{parameters}"),
            &parameters,
        )
        .await;
        let unpaid: Vec<Value> = listed
            .iter()
            .filter(|r| text(r, "status") != Some("Paid"))
            .cloned()
            .collect();
        assert_eq!(total, unpaid.len() as u64);
        assert_eq!(walked, ordered(&unpaid, "-totalAmount"));

        // A range on the field ordered by.
        let parameters = format!("query={}&orderBy=-amountDue", encoded("amountDue>100"));
        let (walked, total) = walk(
            app,
            &format!("/companies/{company_id}/data/invoices?pageSize=40&{parameters}"),
            &parameters,
        )
        .await;
        let owing: Vec<Value> = listed
            .iter()
            .filter(|r| number(r, "amountDue") > 100.0)
            .cloned()
            .collect();
        assert!(!owing.is_empty(), "some invoices owe more than 100");
        assert_eq!(total, owing.len() as u64);
        assert_eq!(walked, ordered(&owing, "-amountDue"));
    }
}

#[tokio::test]
async fn a_bad_query_or_order_is_400_saying_where_and_why() {
    for_each_database(async |app| {
        let company_id = new_company(app, "Bad Queries Ltd").await;
        invoices_from(app, company_id, 76, 20).await;
        sync(app, company_id).await;
        let base = format!("/companies/{company_id}/data/invoices");
        let long = format!("note~{}", "x".repeat(2044));
        let cases = [
            (
                "query",
                "currency=GBP&&",
                "at character 15: the query ends where a field name was expected",
            ),
            (
                "query",
                "{currency=GBP",
                "at character 1: this `{` is not closed",
            ),
            (
                "query",
                "currency>GBP",
                "at character 9: `>` does not apply to `currency`, which is text",
            ),
            (
                "query",
                "amountDue>lots",
                "at character 11: `lots` is not a decimal number",
            ),
            (
                "query",
                "issueDate<2024-13-01",
                "at character 11: `2024-13-01` is not a date written YYYY-MM-DD",
            ),
            (
                "query",
                "status=settled",
                "at character 8: `settled` is not one of Draft, Submitted",
            ),
            (
                "query",
                "lineItems.quantity>1",
                "at character 1: the invoices list has no field `lineItems.quantity`",
            ),
            (
                "query",
                "",
                "at character 1: the query ends where a field name was expected",
            ),
            ("query", &long, "is 2049 characters long; the most is 2048"),
            (
                "orderBy",
                "-color",
                "the invoices list has no field `color` to query or order by",
            ),
        ];
        for (parameter, value, message) in cases {
            let (status, body) =
                answer(app, &format!("{base}?{parameter}={}", encoded(value))).await;
            assert_eq!(status, 400, "{value}: {body}");
            assert_eq!(body["statusCode"], 400, "{body}");
            let error = &body["validation"]["errors"][0];
            assert_eq!(error["itemId"], parameter, "{body}");
            let said = error["message"].as_str().expect("a message");
            assert!(said.starts_with(message), "{value}: {said}");
            assert!(body["correlationId"].is_string(), "{body}");
        }
        // The longest query allowed is read.
        let longest = format!("note~{}", "x".repeat(2043));
        let (status, body) = answer(app, &format!("{base}?query={}", encoded(&longest))).await;
        assert_eq!(status, 200, "{body}");
        assert_eq!(body["totalResults"], 0, "{body}");
        // Paging is checked as without a query.
        let (status, body) = answer(app, &format!("{base}?query=currency%3DGBP&page=0")).await;
        assert_eq!(status, 400, "{body}");
        assert_eq!(body["validation"]["errors"][0]["itemId"], "page", "{body}");
        // Nothing was lost: the list reads as before.
        let (status, body) = answer(app, &base).await;
        assert_eq!(status, 200, "{body}");
        assert_eq!(body["totalResults"], 20, "{body}");
    })
    .await;
}

#[tokio::test]
async fn a_query_on_another_tenants_or_an_unsynced_company_answers_as_the_list_does() {
    for_each_database(async |app| {
        let company_id = new_company(app, "Private Queries Ltd").await;
        invoices_from(app, company_id, 77, 30).await;
        let path = format!(
            "/companies/{company_id}/data/invoices?query={}&orderBy=-amountDue",
            encoded("amountDue>0")
        );
        let (status, body) = answer(app, &path).await;
        assert_eq!(status, 409, "not synced yet: {body}");
        sync(app, company_id).await;
        let (status, body) = answer(app, &path).await;
        assert_eq!(status, 200, "{body}");

        let (other_key, _) = app.other_tenant("Nosy Ltd").await;
        let response = app
            .raw()
            .get(app.url(&path))
            .header("authorization", crate::helpers::basic(&other_key))
            .send()
            .await
            .expect("answered");
        assert_eq!(response.status(), 404);
        let body = json(response).await;
        assert!(
            !body.to_string().contains("amountDue"),
            "another tenant learns nothing of the data: {body}"
        );
    })
    .await;
}

/// The invoice ids on a page, in order (what failures print).
fn ids(page: &Value) -> Vec<String> {
    page["results"]
        .as_array()
        .expect("results")
        .iter()
        .map(|record| format!("{}/{}", record["connectionId"], record["invoiceId"]))
        .collect()
}

/// The href of one of a page's links, if present.
fn link(page: &Value, name: &str) -> Option<String> {
    page["_links"][name]["href"].as_str().map(str::to_owned)
}

#[tokio::test]
async fn a_queried_walk_continues_by_cursor_and_a_cursor_of_another_walk_snapshot_or_origin_is_not_followed()
 {
    for_each_database(async |app| {
        let company_id = new_company(app, "Cursors Ltd").await;
        let first_connection = invoices_from(app, company_id, 78, 200).await;
        invoices_from(app, company_id, 79, 100).await;
        sync(app, company_id).await;
        let query = format!("query={}", encoded("amountDue>0"));
        let base = format!("/companies/{company_id}/data/invoices");
        let by_number = async |page: u32, size: u32| {
            answer(app, &format!("{base}?page={page}&pageSize={size}&{query}"))
                .await
                .1
        };

        let first = by_number(1, 30).await;
        let next = link(&first, "next").expect("a next page");
        assert!(next.contains("&cursor="), "{next}");
        let (status, continued) = answer(app, &next).await;
        assert_eq!(status, 200, "{continued}");
        let second = by_number(2, 30).await;
        assert_eq!(ids(&continued), ids(&second));
        assert_eq!(continued["totalResults"], second["totalResults"]);
        assert!(link(&continued, "current").is_some_and(|href| href.contains("cursor=")));
        assert!(link(&continued, "previous").is_some_and(|href| !href.contains("cursor=")));
        assert!(link(&continued, "next").is_some_and(|href| href.contains("cursor=")));
        // A page asked for by number, or in another order, links on by number.
        assert!(link(&second, "next").is_some_and(|href| !href.contains("cursor=")));
        let (_, ordered) = answer(
            app,
            &format!("{base}?pageSize=30&{query}&orderBy=-amountDue"),
        )
        .await;
        assert!(link(&ordered, "next").is_some_and(|href| !href.contains("cursor=")));

        // The cursor with another page size or query is not followed: the
        // page is the one its number names.
        let resized = next.replace("pageSize=30", "pageSize=20");
        assert_ne!(resized, next);
        assert_eq!(
            answer(app, &resized).await.1["results"],
            by_number(2, 20).await["results"]
        );
        let cursor = next.split("cursor=").nth(1).expect("a cursor").to_owned();
        let (_, requeried) = answer(
            app,
            &format!(
                "{base}?page=2&pageSize=30&query={}&cursor={cursor}",
                encoded("amountDue=0")
            ),
        )
        .await;
        let (_, all_second) = answer(
            app,
            &format!("{base}?page=2&pageSize=30&query={}", encoded("amountDue=0")),
        )
        .await;
        // (`amountDue=0` selects none of the records `amountDue>0` does.)
        assert_eq!(all_second["results"].as_array().map(Vec::len), Some(30));
        assert_eq!(ids(&requeried), ids(&all_second));

        // After a sync that changed the data, the old cursor is not followed.
        let response = app
            .raw()
            .put(app.url(&format!(
                "/companies/{company_id}/connections/{first_connection}/authorization"
            )))
            .header("authorization", app.authorization())
            .json(&invoices_body(80, 170))
            .send()
            .await
            .expect("answered");
        assert_eq!(response.status(), 200);
        sync(app, company_id).await;
        let fresh = by_number(2, 30).await;
        assert_ne!(ids(&fresh), ids(&second), "the data changed");
        // The link still reads the snapshot the walk started on...
        let (status, pinned) = answer(app, &next).await;
        assert_eq!(status, 200, "{pinned}");
        assert_eq!(ids(&pinned), ids(&second));
        assert_eq!(pinned["totalResults"], second["totalResults"]);
        // ...and without its snapshot, on the newest data, the cursor of
        // the old one is not followed.
        let snapshot = next
            .split('&')
            .find(|part| part.starts_with("snapshot="))
            .expect("a pinned snapshot");
        let unpinned = next.replace(&format!("&{snapshot}"), "");
        assert!(unpinned.contains("&cursor="), "{unpinned}");
        let (status, stale) = answer(app, &unpinned).await;
        assert_eq!(status, 200, "{stale}");
        assert_eq!(ids(&stale), ids(&fresh));
        assert_eq!(stale["totalResults"], fresh["totalResults"]);

        // One tributary did not write is ignored: the page is its number's.
        for forged in ["bm90LWEtY3Vyc29y", "MXwyfHp6fA", ""] {
            let (status, body) = answer(
                app,
                &format!("{base}?page=2&pageSize=30&{query}&cursor={forged}"),
            )
            .await;
            assert_eq!(status, 200, "{forged}: {body}");
            assert_eq!(ids(&body), ids(&fresh), "{forged}");
        }
        // One not even shaped like a cursor is refused.
        for malformed in ["%2F%2F", "abc%3D"] {
            let (status, body) = answer(app, &format!("{base}?{query}&cursor={malformed}")).await;
            assert_eq!(status, 400, "{malformed}: {body}");
            assert_eq!(
                body["validation"]["errors"][0]["itemId"], "cursor",
                "{body}"
            );
        }
    })
    .await;
}

#[tokio::test]
async fn other_lists_query_their_own_fields_date_times_and_filters_included() {
    for_each_database(async |app| {
        let company_id = new_company(app, "Other Lists Ltd").await;
        authorized_sandbox(
            app,
            company_id,
            json!({
                "organizationId": "sbx-q-other", "accessToken": "tok",
                "invoiceCount": 60, "orderCount": 120, "bankTransactionCount": 90, "seed": 81,
            }),
        )
        .await;
        sync(app, company_id).await;
        let all = async |list: &str, filter: &str| -> Vec<Value> {
            let (status, page) = answer(
                app,
                &format!("/companies/{company_id}/data/{list}?pageSize=5000{filter}"),
            )
            .await;
            assert_eq!(status, 200, "{page}");
            page["results"].as_array().expect("results").clone()
        };

        // Orders by a date-time: the median creation time, as the records write it.
        let orders = all("orders", "").await;
        let mut created: Vec<&str> = orders
            .iter()
            .filter_map(|r| text(r, "createdDate"))
            .collect();
        created.sort_unstable();
        let median = created[created.len() / 2].to_owned();
        let query = format!("createdDate>={median}&&totalAmount>100");
        let expected: Vec<Value> = orders
            .iter()
            .filter(|r| {
                text(r, "createdDate").is_some_and(|at| at >= median.as_str())
                    && number(r, "totalAmount") > 100.0
            })
            .cloned()
            .collect();
        assert!(!expected.is_empty() && expected.len() < orders.len());
        let parameter = format!("query={}", encoded(&query));
        let (walked, total) = walk(
            app,
            &format!("/companies/{company_id}/data/orders?pageSize=7&{parameter}"),
            &parameter,
        )
        .await;
        assert_eq!(total, expected.len() as u64, "{query}");
        assert_eq!(walked, expected, "{query}");

        // The orders walk's cursor is not followed on the invoices list,
        // whose generation and connection are the same.
        let gbp = format!("query={}", encoded("currency=GBP"));
        let (_, orders_first) = answer(
            app,
            &format!("/companies/{company_id}/data/orders?pageSize=5&{gbp}"),
        )
        .await;
        let next = link(&orders_first, "next").expect("a next page of orders");
        let cursor = next.split("cursor=").nth(1).expect("a cursor");
        let invoices = format!("/companies/{company_id}/data/invoices?page=2&pageSize=5&{gbp}");
        let (_, by_number) = answer(app, &invoices).await;
        let (_, with_cursor) = answer(app, &format!("{invoices}&cursor={cursor}")).await;
        assert_eq!(by_number["results"].as_array().map(Vec::len), Some(5));
        assert_eq!(ids(&with_cursor), ids(&by_number));

        // A date alone is that day's midnight, UTC.
        let day = &median[..10];
        let (status, page) = answer(
            app,
            &format!(
                "/companies/{company_id}/data/orders?pageSize=5000&query={}",
                encoded(&format!("createdDate<{day}"))
            ),
        )
        .await;
        assert_eq!(status, 200, "{page}");
        let midnight = format!("{day}T00:00:00.000000Z");
        let before = orders
            .iter()
            .filter(|r| text(r, "createdDate").is_some_and(|at| at < midnight.as_str()))
            .count();
        assert!(before > 0, "some orders were created before {day}");
        assert_eq!(page["totalResults"], before as u64);

        // Bank transactions of one account (the list's filter) going out.
        let account = all("bankTransactions", "").await[0]["accountId"]
            .as_str()
            .expect("an account")
            .to_owned();
        let of_account = all("bankTransactions", &format!("&accountId={account}")).await;
        let parameter = format!("query={}", encoded("amount<0"));
        let (walked, total) = walk(
            app,
            &format!(
                "/companies/{company_id}/data/bankTransactions?accountId={account}&pageSize=5&{parameter}"
            ),
            &parameter,
        )
        .await;
        let expected: Vec<Value> = of_account
            .iter()
            .filter(|r| number(r, "amount") < 0.0)
            .cloned()
            .collect();
        assert!(!expected.is_empty() && expected.len() < of_account.len());
        assert_eq!(total, expected.len() as u64);
        assert_eq!(walked, expected);
    })
    .await;
}

/// Sends `target` as typed, byte for byte (as curl sends a URL with `>`,
/// `"` or a space in it), with the app's key; the status and JSON body.
async fn raw_get(app: &TestApp, target: &[u8]) -> (u16, Value) {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let address = app
        .url("/")
        .trim_start_matches("http://")
        .trim_end_matches('/')
        .to_owned();
    let mut socket = tokio::net::TcpStream::connect(&address)
        .await
        .expect("connected");
    let mut request = b"GET ".to_vec();
    request.extend_from_slice(target);
    request.extend_from_slice(
        format!(
            " HTTP/1.1\r\nHost: {address}\r\nAuthorization: {}\r\nConnection: close\r\n\r\n",
            app.authorization()
        )
        .as_bytes(),
    );
    socket.write_all(&request).await.expect("sent");
    let mut answer = Vec::new();
    socket.read_to_end(&mut answer).await.expect("read");
    let answer = String::from_utf8_lossy(&answer).into_owned();
    let (head, body) = answer.split_once("\r\n\r\n").expect("a head and a body");
    let status = head[9..12].parse().expect("a status");
    let body = if head
        .to_ascii_lowercase()
        .contains("transfer-encoding: chunked")
    {
        // One chunk is all these answers take: its size line, then the JSON.
        body.split_once("\r\n")
            .map(|(_, rest)| rest)
            .unwrap_or(body)
    } else {
        body
    };
    let json_end = body.rfind('}').map_or(0, |end| end + 1);
    (
        status,
        serde_json::from_str(&body[..json_end]).unwrap_or(Value::Null),
    )
}

/// The README's query pasted into a shell: curl sends `>` (and `"`, `<`,
/// spaces) unencoded. tributary reads them as the client meant them, the
/// same list as the encoded URL gives; a byte no URL may hold still gets a
/// JSON 400 saying to URL-encode.
#[tokio::test]
async fn a_query_typed_with_unencoded_characters_reads_as_the_encoded_one() {
    for_each_database(async |app| {
        let company_id = new_company(app, "Pasted Queries Ltd").await;
        invoices_from(app, company_id, 23, 40).await;
        sync(app, company_id).await;
        let base = format!("/companies/{company_id}/data/invoices");
        for typed in [
            "query=currency=GBP%26%26amountDue>0&orderBy=-amountDue",
            "query=amountDue>=100||amountDue<10&orderBy=-amountDue",
            "query=status=\"Paid\"",
            "query=status=Paid &orderBy=issueDate",
        ] {
            let (status, pasted) = raw_get(app, format!("{base}?{typed}").as_bytes()).await;
            let encoded_query: String = typed
                .bytes()
                .map(|byte| match byte {
                    b'>' | b'<' | b'"' | b' ' | b'|' => format!("%{byte:02X}"),
                    other => char::from(other).to_string(),
                })
                .collect();
            let (expected_status, expected) = answer(app, &format!("{base}?{encoded_query}")).await;
            assert_eq!(status, expected_status, "{typed}: {pasted}");
            assert_eq!(pasted["results"], expected["results"], "{typed}");
            assert_eq!(pasted["totalResults"], expected["totalResults"], "{typed}");
        }
        let (status, pasted) = raw_get(
            app,
            format!("{base}?query=currency=GBP%26%26amountDue>0").as_bytes(),
        )
        .await;
        assert_eq!(status, 200, "{pasted}");
        assert!(
            pasted["totalResults"]
                .as_u64()
                .is_some_and(|total| total > 0),
            "{pasted}"
        );

        let (status, refused) = raw_get(app, format!("{base}?query=a\x01b").as_bytes()).await;
        assert_eq!(status, 400);
        assert!(
            refused["error"]
                .as_str()
                .is_some_and(|said| said.contains("--data-urlencode")),
            "{refused}"
        );
    })
    .await;
}
