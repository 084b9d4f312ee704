//! The accounting model's cost (issue 34): one sandbox connection of N
//! invoices (and the bills, payments, credit notes, journals and the rest
//! the sandbox makes of them), each data type synced alone and timed, its
//! rate against the invoices', then its list's page 1 and last page read
//! once each straight after its sync (the first reads, nothing warmed) and
//! then warm (the median of several).

use std::time::Duration;

use serde_json::json;

use crate::api;
use crate::phases::{self, Phases};
use crate::process::Server;

/// The data types measured, in the order they sync: invoices first, as
/// every other rate is against theirs.
pub const DATA_TYPES: [&str; 12] = [
    "invoices",
    "customers",
    "accounts",
    "suppliers",
    "taxRates",
    "bills",
    "payments",
    "billPayments",
    "creditNotes",
    "items",
    "companyInfo",
    "journalEntries",
];

/// Page size of the page cases.
const PAGE_SIZE: u64 = 100;

/// The declared reference and date of the lists partners query by them
/// (each definition's `keys`): "this supplier's bills", "bills since".
const QUERIED: [(&str, Option<&str>, &str); 6] = [
    ("invoices", Some("customerRef.id"), "issueDate"),
    ("bills", Some("supplierRef.id"), "issueDate"),
    ("payments", Some("customerRef.id"), "date"),
    ("billPayments", Some("supplierRef.id"), "date"),
    ("creditNotes", Some("customerRef.id"), "issueDate"),
    ("journalEntries", None, "postedOn"),
];

/// One keyed query's first request after its list's sync.
#[derive(Debug, Clone)]
pub struct Queried {
    /// The query, as sent.
    pub query: String,
    /// Its first request, from sending to the last byte.
    pub first: Duration,
    /// Its `totalResults`.
    pub total: u64,
}

/// One data type's figures.
#[derive(Debug, Clone)]
pub struct Measured {
    /// The data type.
    pub data_type: &'static str,
    /// Records its sync fetched.
    pub records: u64,
    /// From queueing it alone until its operation completed.
    pub sync: Duration,
    /// Where the sync's time went, from the server's log.
    pub phases: Option<Phases>,
    /// Page 1's first read after the sync, and its warm median.
    pub first_page: (Duration, Duration),
    /// The last page's first read after the sync, and its warm median.
    pub last_page: (Duration, Duration),
    /// Queries on its declared reference and date, each's first request.
    pub queries: Vec<Queried>,
}

impl Measured {
    /// Records a second.
    pub fn rate(&self) -> f64 {
        self.records as f64 / self.sync.as_secs_f64()
    }
}

/// Each of `data_types` (of [`DATA_TYPES`], in that order) of a sandbox
/// connection of `invoices` invoices.
pub async fn measure(
    server: &Server,
    invoices: u64,
    data_types: &[String],
) -> anyhow::Result<Vec<Measured>> {
    let company_id = company_with_sandbox(server, invoices).await?;
    let mut measured = Vec::new();
    let chosen = DATA_TYPES.into_iter().filter(|data_type| {
        data_types.is_empty() || data_types.iter().any(|wanted| wanted == data_type)
    });
    for data_type in chosen {
        let (sync, records) = api::sync_data_type(server, &company_id, data_type).await?;
        let phases = phases::logged(&server.log, data_type, records, Duration::from_secs(30)).await;
        let list = format!("/companies/{company_id}/data/{data_type}?pageSize={PAGE_SIZE}");
        let last = records.div_ceil(PAGE_SIZE).max(1);
        let first_page = api::page_reads(server, &format!("{list}&page=1")).await?;
        let last_page = api::page_reads(server, &format!("{list}&page={last}")).await?;
        let queries = keyed_queries(server, &list, data_type, last).await?;
        eprintln!(
            "[ledger] {data_type}: {records} records in {:.2} s; page 1 {:.1} ms, page {last} {:.1} ms (first reads)",
            sync.as_secs_f64(),
            millis(first_page.0),
            millis(last_page.0),
        );
        measured.push(Measured {
            data_type,
            records,
            sync,
            phases,
            first_page,
            last_page,
            queries,
        });
    }
    Ok(measured)
}

/// For a list of [`QUERIED`], the first request of an equality on its
/// declared reference (the first record's), of a range on its declared date
/// (from the middle page's first record on, about half the list) and of
/// both: what a query on declared fields costs on the first read after the
/// sync (issue 34: within 3x of page 1's first request; a conjunction
/// within 300 ms). `list` is the list's path with its page size.
async fn keyed_queries(
    server: &Server,
    list: &str,
    data_type: &str,
    pages: u64,
) -> anyhow::Result<Vec<Queried>> {
    let Some((_, reference, date)) = QUERIED.iter().find(|(name, _, _)| *name == data_type) else {
        return Ok(Vec::new());
    };
    let value_at = |page: &serde_json::Value, field: &str| -> Option<String> {
        let value = field
            .split('.')
            .try_fold(&page["results"][0], |value, part| value.get(part))?;
        value.as_str().map(str::to_owned)
    };
    // Read before any timing, and not timed: the values the queries use.
    let (_, first) = api::timed_get(server, &format!("{list}&page=1")).await?;
    let (_, middle) = api::timed_get(server, &format!("{list}&page={}", pages.div_ceil(2))).await?;
    let mut queries = Vec::new();
    let since = value_at(&middle, date).map(|day| format!("{date}>={day}"));
    let of = reference.and_then(|field| value_at(&first, field).map(|id| format!("{field}={id}")));
    let both = of
        .clone()
        .zip(since.clone())
        .map(|(of, since)| format!("{of}%26%26{since}"));
    for query in [of, since, both].into_iter().flatten() {
        let (first, answer) = api::timed_get(server, &format!("{list}&query={query}")).await?;
        queries.push(Queried {
            query: query.replace("%26", "&"),
            first,
            total: answer["totalResults"].as_u64().unwrap_or_default(),
        });
    }
    Ok(queries)
}

/// A company with one sandbox connection of `invoices` invoices (no orders
/// or bank transactions), migrated, not yet synced.
async fn company_with_sandbox(server: &Server, invoices: u64) -> anyhow::Result<String> {
    let body = json!({
        "organizationId": "sbx-benchmark-ledger",
        "accessToken": "benchmark",
        "invoiceCount": invoices,
        "orderCount": 0,
        "bankTransactionCount": 0,
        "seed": 2026,
    });
    let (company_id, _) = api::sandbox_company(server, "Benchmark ledger Ltd", body).await?;
    Ok(company_id)
}

fn millis(duration: Duration) -> f64 {
    duration.as_secs_f64() * 1000.0
}

/// The figures as a Markdown table: each data type's rate against the
/// invoices' (the target: within 1.5x for the lists that hold thousands of
/// records), and its last page against its page 1 (within 1.5x).
pub fn markdown(invoices: u64, runs: &[Measured]) -> String {
    let invoice_rate = runs
        .iter()
        .find(|run| run.data_type == "invoices")
        .map_or(f64::NAN, Measured::rate);
    let mut table = format!(
        "A sandbox connection of {invoices} invoices; each data type synced alone.\n\n\
         | data type | records | sync | of which fetching, staging, publish | records/s | invoices' rate / this | page 1 first / warm | last page first / warm | last / page 1 (first, warm) |\n\
         |---|---:|---:|---:|---:|---:|---:|---:|---:|\n"
    );
    for run in runs {
        let phases = run.phases.as_ref().map_or_else(
            || "-".to_owned(),
            |phases| {
                format!(
                    "{:.2}, {:.2}, {:.2} s{}",
                    phases.fetch.as_secs_f64(),
                    phases.staging.as_secs_f64(),
                    phases.publish.as_secs_f64(),
                    phases.keys.map_or(String::new(), |keys| format!(
                        " (keys {:.2} s)",
                        keys.as_secs_f64()
                    ))
                )
            },
        );
        table.push_str(&format!(
            "| {} | {} | {:.2} s | {phases} | {:.0} | {:.2} | {:.1} / {:.1} ms | {:.1} / {:.1} ms | {:.2}, {:.2} |\n",
            run.data_type,
            run.records,
            run.sync.as_secs_f64(),
            run.rate(),
            invoice_rate / run.rate(),
            millis(run.first_page.0),
            millis(run.first_page.1),
            millis(run.last_page.0),
            millis(run.last_page.1),
            millis(run.last_page.0) / millis(run.first_page.0),
            millis(run.last_page.1) / millis(run.first_page.1),
        ));
    }
    table.push_str(
        "\nQueries on declared fields, each's first request straight after its list's sync (targets: an equality \
         or one range within 3x of page 1's first request; a conjunction within 300 ms).\n\n\
         | data type | query | totalResults | first request | / page 1's first |\n\
         |---|---|---:|---:|---:|\n",
    );
    for run in runs {
        for queried in &run.queries {
            table.push_str(&format!(
                "| {} | `{}` | {} | {:.1} ms | {:.2} |\n",
                run.data_type,
                queried.query,
                queried.total,
                millis(queried.first),
                millis(queried.first) / millis(run.first_page.0),
            ));
        }
    }
    table
}
