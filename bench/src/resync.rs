//! The resync benchmark (issue 35, item 0): per case, a sandbox connection
//! of N invoices synced, then synced again after every record changed
//! (another seed: new ids, the old ones gone, so every previous record is
//! found missing and flagged deleted), or after half of them were deleted
//! (half the count, same seed); each resync against its own first sync.

use std::time::Duration;

use serde_json::json;

use crate::api::{self, Synced};
use crate::process::Server;

/// One list size's two cases, each from its own first sync.
#[derive(Debug, Clone)]
pub struct Resyncs {
    /// Invoices in each first sync.
    pub invoices: u64,
    /// The first sync of the connection whose records then all change.
    pub first: Synced,
    /// The resync in which every record changed.
    pub every_changed: Synced,
    /// The first sync of the connection that then loses half its records.
    pub second_first: Synced,
    /// The resync after half the records were deleted.
    pub half_deleted: Synced,
}

fn sandbox(organization: &str, invoices: u64, seed: u64) -> serde_json::Value {
    json!({
        "organizationId": organization,
        "accessToken": "benchmark",
        "invoiceCount": invoices,
        "orderCount": 0,
        "bankTransactionCount": 0,
        "seed": seed,
    })
}

/// One company's first sync of `invoices`, then a resync of `then` (the
/// sandbox body that follows), each timed.
async fn first_then(
    server: &Server,
    invoices: u64,
    then: serde_json::Value,
) -> anyhow::Result<(Synced, Synced)> {
    let first = api::create_and_sync(server, "invoices", invoices).await?;
    let company_id = first.company_id.clone();
    let connection_id = api::first_connection(server, &company_id).await?;
    eprintln!("[resync] first sync {:.1} s", secs(first.wall));
    api::authorize_sandbox(server, &company_id, &connection_id, then).await?;
    let resync = api::sync_company(server, &company_id, "invoices", 1).await?;
    eprintln!("[resync] resync {:.1} s", secs(resync.wall));
    Ok((first, resync))
}

/// Per case, a first sync (the sandbox body `create_and_sync` gives:
/// organization `sbx-benchmark-invoices`, seed 2026) of `invoices` and a resync: every record changed
/// (another seed), and half of them deleted (half the count).
pub async fn measure(server: &Server, invoices: u64) -> anyhow::Result<Resyncs> {
    eprintln!("[resync] {invoices} invoices, then every record changed…");
    let organization = "sbx-benchmark-invoices";
    let (first, every_changed) =
        first_then(server, invoices, sandbox(organization, invoices, 7)).await?;
    eprintln!("[resync] {invoices} invoices, then half deleted…");
    let (second_first, half_deleted) =
        first_then(server, invoices, sandbox(organization, invoices / 2, 2026)).await?;
    Ok(Resyncs {
        invoices,
        first,
        every_changed,
        second_first,
        half_deleted,
    })
}

fn secs(duration: Duration) -> f64 {
    duration.as_secs_f64()
}

/// The figures as a Markdown table, each resync against the first sync
/// (the target: within 3x).
pub fn markdown(runs: &[Resyncs]) -> String {
    let mut table = String::from(
        "| invoices | first sync | every record changed | ratio | first sync | half deleted | ratio | peak RSS |\n\
         |---:|---:|---:|---:|---:|---:|---:|---:|\n",
    );
    for run in runs {
        let first = secs(run.first.wall);
        let changed = secs(run.every_changed.wall);
        let deleted = secs(run.half_deleted.wall);
        let second_first = secs(run.second_first.wall);
        let peak = [
            &run.first,
            &run.every_changed,
            &run.second_first,
            &run.half_deleted,
        ]
        .iter()
        .map(|sync| sync.peak_rss)
        .max()
        .unwrap_or(0);
        table.push_str(&format!(
            "| {} | {first:.1} s | {changed:.1} s | {:.2} | {second_first:.1} s | {deleted:.1} s | {:.2} | {} MiB |\n",
            run.invoices,
            changed / first,
            deleted / second_first,
            peak / (1024 * 1024),
        ));
    }
    table
}
