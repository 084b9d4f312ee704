//! The resync-by-changes benchmark (issue 33): per list size, a sandbox
//! connection of N invoices synced, then resynced with exactly k of its
//! invoices amended (the sandbox's `changedInvoiceCount`), for each k asked
//! (0, 1,000, 100,000 by default): the resync's wall time and phases
//! (publish above all: the target is a publish that follows the
//! change, not the list), and the first and warm reads of page 1 and the
//! last page right after it; and the first read of a queried list's page 1
//! after it (a query on a field without keys, `invoiceNumber`, read once
//! before the resync as a partner paging it would have, so the question is
//! whether the resync makes it read every record again), beside one of the
//! same kind never asked before. Between two measured resyncs with amended
//! invoices, an unmeasured one puts the sandbox back to none amended, so
//! each measured resync changes exactly k records. With `layered` (a
//! server that publishes resyncs as layers) the table says so.

use std::time::Duration;

use serde_json::json;

use crate::api;
use crate::phases::{self, Phases};
use crate::process::Server;

/// The page size read after each resync.
const PAGE_SIZE: u64 = 100;

/// One list size's first sync and its resyncs.
#[derive(Debug, Clone)]
pub struct Changes {
    /// Invoices in the list.
    pub invoices: u64,
    /// The first sync's wall time.
    pub first: Duration,
    /// Per amended count: the resync and the page reads after it.
    pub resyncs: Vec<Resync>,
    /// Whether the server published resyncs as layers.
    pub layered: bool,
}

/// One measured resync.
#[derive(Debug, Clone)]
pub struct Resync {
    /// Records changed since the sync before it.
    pub changed: u64,
    /// The resync's wall time (from queueing the invoices until their
    /// operation is seen `Complete`).
    pub wall: Duration,
    /// Where its time went, from the server's log.
    pub phases: Option<Phases>,
    /// Page 1's first read after it, and the median warm read.
    pub first_page: (Duration, Duration),
    /// The last page's, likewise.
    pub last_page: (Duration, Duration),
    /// The queried list's page 1, likewise (its order remembered for the
    /// generation before the resync).
    pub queried_page: (Duration, Duration),
    /// Page 1 of a query of the same kind never asked before, likewise:
    /// its first read reads every record.
    pub unremembered_page: (Duration, Duration),
}

/// The sandbox body of the connection [`api::create_and_sync`] makes, with
/// `amended` invoices amended.
fn sandbox(invoices: u64, amended: u64) -> serde_json::Value {
    json!({
        "organizationId": "sbx-benchmark-invoices",
        "accessToken": "benchmark",
        "invoiceCount": invoices,
        "orderCount": 0,
        "bankTransactionCount": 0,
        "seed": 2026,
        "changedInvoiceCount": amended,
    })
}

/// The first sync of `invoices` (the invoices alone: `data/all` would
/// sync every list the sandbox derives from them), then one measured
/// resync per `changes`.
pub async fn measure(
    server: &Server,
    invoices: u64,
    changes: &[u64],
    layered: bool,
) -> anyhow::Result<Changes> {
    let (company_id, connection_id) =
        api::sandbox_company(server, "Benchmark changes Ltd", sandbox(invoices, 0)).await?;
    let authorize = async |amended: u64| {
        api::authorize_sandbox(
            server,
            &company_id,
            &connection_id,
            sandbox(invoices, amended),
        )
        .await
    };
    let (first, _) = api::sync_data_type(server, &company_id, "invoices").await?;
    eprintln!(
        "[changes] {invoices} invoices: first sync {:.1} s",
        secs(first)
    );
    let list = format!("/companies/{company_id}/data/invoices?pageSize={PAGE_SIZE}");
    // Invoice numbers containing `INV-0001x` (x another digit per query):
    // about 11,000 of a million, found by reading every record's JSON, as
    // `invoiceNumber` has no keys.
    let query_of = |digit: usize| format!("{list}&page=1&query=invoiceNumber~INV-0001{digit}");
    anyhow::ensure!(changes.len() < 9, "at most eight resyncs");
    let queried = query_of(0);
    let mut amended_now = 0;
    let mut synced = 1;
    let mut resyncs = Vec::with_capacity(changes.len());
    for (index, &changed) in changes.iter().enumerate() {
        if amended_now != 0 && changed != 0 {
            authorize(0).await?;
            api::sync_data_type(server, &company_id, "invoices").await?;
            synced += 1;
            eprintln!("[changes] back to none amended");
        }
        // The query's order, remembered for the generation readers see.
        api::first_request(server, &queried).await?;
        authorize(changed).await?;
        // Every sync of the list logs the same record count: this one's
        // phases are on the first line logged after it began, once every
        // sync before it is logged (a sync logs after its clean-up, a
        // moment after it reads `Complete`).
        let logged_before = logged_at_least(server, synced).await;
        synced += 1;
        let (wall, _) = api::sync_data_type(server, &company_id, "invoices").await?;
        let phases = newest_phases(server, invoices, logged_before).await;
        let last = invoices.div_ceil(PAGE_SIZE).max(1);
        let read = async |path: String| api::page_reads(server, &path).await;
        let first_page = read(format!("{list}&page=1")).await?;
        let last_page = read(format!("{list}&page={last}")).await?;
        let queried_page = read(queried.clone()).await?;
        // Another number's, never asked before: read from every record.
        let unremembered_page = read(query_of(index + 1)).await?;
        eprintln!(
            "[changes] {changed} amended: resync {:.1} s, publish {}; page 1 {:.1} ms, last {:.1} ms, queried {:.1} ms, queried anew {:.1} ms (first reads)",
            secs(wall),
            phases.map_or("?".to_owned(), |phases| format!(
                "{:.2} s",
                secs(phases.publish)
            )),
            millis(first_page.0),
            millis(last_page.0),
            millis(queried_page.0),
            millis(unremembered_page.0),
        );
        amended_now = changed;
        resyncs.push(Resync {
            changed: changed.min(invoices),
            wall,
            phases,
            first_page,
            last_page,
            queried_page,
            unremembered_page,
        });
    }
    Ok(Changes {
        invoices,
        first,
        resyncs,
        layered,
    })
}

/// How many syncs the server has logged as complete.
fn completions(server: &Server) -> usize {
    std::fs::read_to_string(&server.log)
        .unwrap_or_default()
        .matches("pull operation complete")
        .count()
}

/// How many syncs the server has logged as complete, once at least
/// `syncs` are (or 30 s passed).
async fn logged_at_least(server: &Server, syncs: usize) -> usize {
    for _ in 0..300 {
        let logged = completions(server);
        if logged >= syncs {
            return logged;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    completions(server)
}

/// The phases of the newest logged sync of `invoices` records, once more
/// than `before` syncs are logged (within 30 s); `None` otherwise.
async fn newest_phases(server: &Server, invoices: u64, before: usize) -> Option<Phases> {
    for _ in 0..300 {
        if completions(server) > before {
            let log = std::fs::read_to_string(&server.log).unwrap_or_default();
            return phases::from_log(&log, "invoices", invoices);
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    None
}

fn secs(duration: Duration) -> f64 {
    duration.as_secs_f64()
}

fn millis(duration: Duration) -> f64 {
    duration.as_secs_f64() * 1000.0
}

/// The figures as a Markdown table: each resync's publish against the
/// issue's target (at most 1 s at a million invoices with 1,000 changed),
/// its last page against its page 1 (within 1.5x), and a queried list's
/// first read, its order remembered or not, against its warm ones.
pub fn markdown(runs: &[Changes]) -> String {
    let mut table = String::from(
        "| invoices | changed | first sync | resync | of which fetching, staging, publish (keys) | page 1 first / warm | last page first / warm | last / page 1 (first, warm) | queried page 1 first / warm | queried anew, first / warm |\n\
         |---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n",
    );
    for run in runs {
        for resync in &run.resyncs {
            let phases = resync
                .phases
                .map_or("not logged".to_owned(), |phases: Phases| {
                    format!(
                        "{:.2}, {:.2}, {:.2} s ({})",
                        secs(phases.fetch),
                        secs(phases.staging),
                        secs(phases.publish),
                        phases
                            .keys
                            .map_or("?".to_owned(), |keys| format!("{:.2} s", secs(keys)))
                    )
                });
            let layered = if run.layered { " (layers)" } else { "" };
            table.push_str(&format!(
                "| {}{layered} | {} | {:.1} s | {:.1} s | {phases} | {:.1} / {:.1} ms | {:.1} / {:.1} ms | {:.2}, {:.2} | {:.1} / {:.1} ms | {:.1} / {:.1} ms |\n",
                run.invoices,
                resync.changed,
                secs(run.first),
                secs(resync.wall),
                millis(resync.first_page.0),
                millis(resync.first_page.1),
                millis(resync.last_page.0),
                millis(resync.last_page.1),
                millis(resync.last_page.0) / millis(resync.first_page.0),
                millis(resync.last_page.1) / millis(resync.first_page.1),
                millis(resync.queried_page.0),
                millis(resync.queried_page.1),
                millis(resync.unremembered_page.0),
                millis(resync.unremembered_page.1),
            ));
        }
    }
    table
}
