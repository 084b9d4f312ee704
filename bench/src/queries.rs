//! The query cases (issue 14): `query` and `orderBy` on the invoices list,
//! read through the API straight after the sync. Each case's first request
//! is the first with its query (and order) since the sync, so it pays for
//! reading where every match sits, in order; the load after it reads with
//! that order remembered, as every later page of the same list does. Two cases follow `_links.next`: the
//! hop from page 1, and the hop to the last full page at the end of a walk.

use anyhow::Context;

use crate::Config;
use crate::api;
use crate::load::{self, Requests};
use crate::process::Server;
use crate::report::CaseResult;

/// How a case reaches its page.
#[derive(Debug, Clone, Copy)]
enum How {
    /// Page 1.
    First,
    /// The middle page, asked for by number.
    MiddleByNumber,
    /// The `_links.next` of page 1.
    HopAtStart,
    /// The `_links.next` leading to the last full page, at the end of a walk.
    HopAtEnd,
}

/// The page size of the walks: the largest that still gives a walk of
/// four pages or more (5000 at a million invoices; smaller on the smoke
/// test's few hundred).
const WALK_PAGE_SIZE: u64 = 0;

/// The page size of a walk through `total` matches.
fn walk_page_size(total: u64) -> u64 {
    [5000, 100, 10]
        .into_iter()
        .find(|size| total >= 4 * size)
        .unwrap_or(1)
}

/// The queries of [`CASES`] made only of the invoices' declared fields
/// (`Spec::keys`), which are answered from the keys kept at publish: their
/// page 1's first request is held to issue 34's targets.
pub const KEYED_QUERIES: [&str; 5] = [
    "currency=GBP",
    "customerRef.id=sbx-cus-000042",
    "issueDate>=2025-01-01&&dueDate<2026-01-01",
    "amountDue>1000",
    "customerRef.id=sbx-cus-000042&&issueDate>=2025-01-01",
];

/// The cases: (name, query, orderBy, page size or [`WALK_PAGE_SIZE`], how).
const CASES: [(&str, &str, Option<&str>, u64, How); 10] = [
    (
        "query currency=GBP: page 1",
        "currency=GBP",
        None,
        100,
        How::First,
    ),
    (
        "query status=paid: page 1",
        "status=paid",
        None,
        100,
        How::First,
    ),
    (
        "query customerRef.id=sbx-cus-000042: page 1",
        "customerRef.id=sbx-cus-000042",
        None,
        100,
        How::First,
    ),
    (
        "query issueDate>=2025-01-01&&dueDate<2026-01-01: page 1",
        "issueDate>=2025-01-01&&dueDate<2026-01-01",
        None,
        100,
        How::First,
    ),
    (
        "query customerRef.id=sbx-cus-000042&&issueDate>=2025-01-01: page 1",
        "customerRef.id=sbx-cus-000042&&issueDate>=2025-01-01",
        None,
        100,
        How::First,
    ),
    (
        "query amountDue>1000: page 1",
        "amountDue>1000",
        None,
        100,
        How::First,
    ),
    (
        "query amountDue>1000: middle page by number",
        "amountDue>1000",
        None,
        100,
        How::MiddleByNumber,
    ),
    (
        "query amountDue>1000, orderBy=-amountDue: page 1",
        "amountDue>1000",
        Some("-amountDue"),
        100,
        How::First,
    ),
    (
        "query amountDue>1000: next link from page 1",
        "amountDue>1000",
        None,
        WALK_PAGE_SIZE,
        How::HopAtStart,
    ),
    (
        "query amountDue>1000: next link to the last full page",
        "amountDue>1000",
        None,
        WALK_PAGE_SIZE,
        How::HopAtEnd,
    ),
];

fn encoded(text: &str) -> String {
    url::form_urlencoded::byte_serialize(text.as_bytes()).collect()
}

fn next_link(page: &serde_json::Value) -> Option<String> {
    page["_links"]["next"]["href"].as_str().map(str::to_owned)
}

/// Measures every query case on the invoices list at `invoices_path`.
pub async fn measure(
    config: &Config,
    backend: &str,
    server: &Server,
    invoices_path: &str,
) -> anyhow::Result<Vec<CaseResult>> {
    let mut cases = Vec::new();
    for (name, query, order_by, page_size, how) in CASES {
        let page_size = if page_size == WALK_PAGE_SIZE {
            let probe = format!("{invoices_path}?pageSize=1&query={}", encoded(query));
            walk_page_size(api::total_results(server, &probe).await?)
        } else {
            page_size
        };
        let order = order_by.map_or(String::new(), |order| {
            format!("&orderBy={}", encoded(order))
        });
        let first_page = format!(
            "{invoices_path}?pageSize={page_size}&query={}{order}",
            encoded(query)
        );
        let (path, first, total, page) = match how {
            How::First => {
                let (first, body) = api::timed_get(server, &first_page).await?;
                (first_page, first, total_of(&body)?, 1)
            }
            How::MiddleByNumber => {
                let total = api::total_results(server, &first_page).await?;
                let middle = total.div_ceil(page_size).max(1).div_ceil(2);
                let path = format!("{first_page}&page={middle}");
                let first = api::first_request(server, &path).await?;
                (path, first, total, middle)
            }
            How::HopAtStart => {
                let (_, body) = api::timed_get(server, &first_page).await?;
                let path = next_link(&body).context("page 1 of the walk has a next page")?;
                let first = api::first_request(server, &path).await?;
                (path, first, total_of(&body)?, 2)
            }
            How::HopAtEnd => {
                let started = std::time::Instant::now();
                let (_, mut body) = api::timed_get(server, &first_page).await?;
                let total = total_of(&body)?;
                // The last full page: the last may hold a few records only.
                let last = total.div_ceil(page_size).max(1);
                let target = if total % page_size == 0 {
                    last
                } else {
                    last - 1
                }
                .max(2);
                let mut path = next_link(&body).context("page 1 of the walk has a next page")?;
                for _ in 2..target {
                    body = api::timed_get(server, &path).await?.1;
                    path = next_link(&body).context("the walk goes on to the last page")?;
                }
                eprintln!(
                    "[{backend}] walked {} pages of {page_size} in {:.1} s",
                    target - 1,
                    started.elapsed().as_secs_f64()
                );
                let first = api::first_request(server, &path).await?;
                (path, first, total, target)
            }
        };
        eprintln!("[{backend}] {name}: {path}");
        // A query that must read the whole list for a page gets time for a
        // few requests rather than failing the run.
        let duration = config.case_duration.max(first * 3);
        let api = load::run(
            config.load,
            &server.base_url,
            &Requests::Path(path.clone()),
            1,
            duration,
            &config.workdir,
        )?;
        cases.push(CaseResult {
            name,
            page_size,
            status: None,
            page,
            total,
            path,
            first,
            api,
            sql: None,
            naive_api: None,
            naive_sql: None,
        });
    }
    Ok(cases)
}

fn total_of(body: &serde_json::Value) -> anyhow::Result<u64> {
    body["totalResults"].as_u64().context("totalResults")
}
