//! The managed migration benchmark: a batch of sandbox rows imported
//! without verification through the public API (`POST /migrations`, the
//! checklist, the canary, `proceed`), on a real server with its default
//! settings, while a reader keeps reading an invoice page; the page's
//! latency while the batch runs is compared with the same reads idle.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use anyhow::{Context, bail};
use serde_json::{Value, json};

use crate::api::{self, authorization};
use crate::process::Server;

/// What one run measured.
#[derive(Debug, Clone)]
pub struct MigrationFigures {
    /// Rows in the batch.
    pub rows: usize,
    /// `POST /migrations`: the whole batch validated, sealed and stored.
    pub create: Duration,
    /// From `start` to the canary's first sync done (`AwaitingProceed`).
    pub canary: Duration,
    /// From `proceed` to `Completed`.
    pub import: Duration,
    /// Page reads while idle: median and 95th percentile.
    pub idle: (Duration, Duration),
    /// The same reads while the batch imported: median and 95th percentile.
    pub busy: (Duration, Duration),
    /// Reads made while busy.
    pub busy_reads: usize,
}

impl MigrationFigures {
    /// The table `BENCHMARKS.md` shows.
    pub fn markdown(&self) -> String {
        let ms = |duration: Duration| duration.as_secs_f64() * 1000.0;
        let total = self.create + self.import;
        format!(
            "| case | figure |\n|---|---|\n\
             | rows (sandbox, `verify: false`) | {rows} |\n\
             | `POST /migrations` (validate, seal, store) | {create:.2} s |\n\
             | canary (import, verify, first sync) | {canary:.2} s |\n\
             | `proceed` → `Completed` | {import:.2} s ({rate:.0} rows/s) |\n\
             | create + import | {total:.2} s (target ≤ 60 s) |\n\
             | page 1 of 10,000 invoices, idle: median / p95 | {idle_median:.2} ms / {idle_p95:.2} ms |\n\
             | the same while importing ({busy_reads} reads): median / p95 | {busy_median:.2} ms / {busy_p95:.2} ms |\n\
             | median while importing / idle | {ratio:.2}x (target ≤ 2x) |\n",
            rows = self.rows,
            create = self.create.as_secs_f64(),
            canary = self.canary.as_secs_f64(),
            import = self.import.as_secs_f64(),
            rate = self.rows as f64 / self.import.as_secs_f64().max(0.001),
            total = total.as_secs_f64(),
            idle_median = ms(self.idle.0),
            idle_p95 = ms(self.idle.1),
            busy_reads = self.busy_reads,
            busy_median = ms(self.busy.0),
            busy_p95 = ms(self.busy.1),
            ratio = ms(self.busy.0) / ms(self.idle.0).max(0.001),
        )
    }
}

async fn call(method: reqwest::Method, url: String, body: Option<Value>) -> anyhow::Result<Value> {
    let client = reqwest::Client::new();
    let mut request = client
        .request(method.clone(), &url)
        .header("authorization", authorization());
    if let Some(body) = body {
        request = request.json(&body);
    }
    let response = request
        .send()
        .await
        .with_context(|| format!("{method} {url}"))?;
    let status = response.status();
    let text = response.text().await?;
    if !status.is_success() {
        bail!("{method} {url} answered {status}: {text}");
    }
    Ok(serde_json::from_str(&text).unwrap_or(Value::Null))
}

fn median_and_p95(mut samples: Vec<Duration>) -> (Duration, Duration) {
    samples.sort();
    if samples.is_empty() {
        return (Duration::ZERO, Duration::ZERO);
    }
    let at = |fraction: f64| samples[((samples.len() - 1) as f64 * fraction).round() as usize];
    (at(0.5), at(0.95))
}

/// Reads `path` one request after another until `stop`, on one kept-alive
/// connection, returning each request's time.
async fn read_until(server_url: String, path: String, stop: Arc<AtomicBool>) -> Vec<Duration> {
    let client = reqwest::Client::new();
    let mut samples = Vec::new();
    while !stop.load(Ordering::SeqCst) {
        let started = Instant::now();
        let answered = client
            .get(format!("{server_url}{path}"))
            .header("authorization", authorization())
            .send()
            .await;
        if let Ok(response) = answered
            && response.status().is_success()
            && response.bytes().await.is_ok()
        {
            samples.push(started.elapsed());
        }
    }
    samples
}

async fn wait_for_state(server: &Server, id: &str, wanted: &str) -> anyhow::Result<()> {
    let deadline = Instant::now() + Duration::from_secs(600);
    loop {
        let batch = call(
            reqwest::Method::GET,
            format!("{}/migrations/{id}", server.base_url),
            None,
        )
        .await?;
        if batch["state"] == wanted {
            return Ok(());
        }
        if batch["state"] == "CanaryFailed" {
            bail!("the canary failed: {}", batch["failure"]);
        }
        if Instant::now() > deadline {
            bail!("the batch did not become {wanted} in 10 minutes: {batch}");
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// Runs the migration benchmark against `server`: `rows` sandbox rows.
pub async fn measure(server: &Server, rows: usize) -> anyhow::Result<MigrationFigures> {
    let base = server.base_url.clone();
    eprintln!("[migration] a company with 10,000 invoices to read while importing…");
    let synced = api::create_and_sync(server, "invoices", 10_000).await?;
    let page = format!("/companies/{}/data/invoices?page=1", synced.company_id);

    let stop = Arc::new(AtomicBool::new(false));
    let reader = tokio::spawn(read_until(base.clone(), page.clone(), stop.clone()));
    tokio::time::sleep(Duration::from_secs(10)).await;
    stop.store(true, Ordering::SeqCst);
    let idle = median_and_p95(reader.await?);

    let batch: Vec<Value> = (0..rows)
        .map(|n| {
            json!({
                "externalReference": format!("bench-{n}"),
                "companyName": format!("Benchmark company {n}"),
                "authorization": {
                    "organizationId": format!("sbx-bench-{n}"),
                    "accessToken": format!("sbx-token-{n:08}"),
                    "refreshToken": format!("sbx-refresh-{n:08}"),
                    "invoiceCount": 25,
                    "orderCount": 0,
                    "bankTransactionCount": 0,
                },
            })
        })
        .collect();
    eprintln!("[migration] POST /migrations with {rows} rows…");
    let started = Instant::now();
    let created = call(
        reqwest::Method::POST,
        format!("{base}/migrations"),
        Some(json!({"platformKey": "sandbox", "verify": false, "rows": batch})),
    )
    .await?;
    let create = started.elapsed();
    let id = created["migration"]["id"]
        .as_str()
        .context("the batch's id")?
        .to_owned();
    call(
        reqwest::Method::PUT,
        format!("{base}/integrations/sandbox/oauth-client"),
        Some(json!({"clientId": "bench-app", "clientSecret": "bench-secret"})),
    )
    .await?;
    for step in [
        "migrationScheduled",
        "callbackUrlAdded",
        "oldApplicationSyncDisabled",
    ] {
        call(
            reqwest::Method::PUT,
            format!("{base}/migrations/{id}/checklist/{step}"),
            Some(json!({"attestedBy": "benchmark"})),
        )
        .await?;
    }
    let started = Instant::now();
    call(
        reqwest::Method::POST,
        format!("{base}/migrations/{id}/start"),
        None,
    )
    .await?;
    wait_for_state(server, &id, "AwaitingProceed").await?;
    let canary = started.elapsed();

    eprintln!("[migration] proceeding, reading a page throughout…");
    let stop = Arc::new(AtomicBool::new(false));
    let reader = tokio::spawn(read_until(base.clone(), page, stop.clone()));
    let started = Instant::now();
    call(
        reqwest::Method::POST,
        format!("{base}/migrations/{id}/proceed"),
        None,
    )
    .await?;
    wait_for_state(server, &id, "Completed").await?;
    let import = started.elapsed();
    stop.store(true, Ordering::SeqCst);
    let busy_samples = reader.await?;
    let busy_reads = busy_samples.len();
    let busy = median_and_p95(busy_samples);

    let done = call(
        reqwest::Method::GET,
        format!("{base}/migrations/{id}"),
        None,
    )
    .await?;
    let imported = done["counts"]["imported"].as_u64().unwrap_or(0)
        + done["counts"]["synced"].as_u64().unwrap_or(0);
    if imported != rows as u64 {
        bail!("{imported} of {rows} rows were imported: {done}");
    }
    Ok(MigrationFigures {
        rows,
        create,
        canary,
        import,
        idle,
        busy,
        busy_reads,
    })
}
