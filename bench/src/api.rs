//! Driving tributary through its public API: a company with one `sandbox`
//! connection of N invoices (or N orders), synced with
//! `POST /companies/{id}/data/all`.

use std::time::{Duration, Instant};

use anyhow::{Context, bail};
use base64::Engine as _;
use serde_json::{Value, json};

use crate::phases::{self, Phases};
use crate::process::{API_KEY, PeakMemory, Server};

/// The `Authorization` header value for [`API_KEY`].
pub fn authorization() -> String {
    format!(
        "Basic {}",
        base64::engine::general_purpose::STANDARD.encode(API_KEY)
    )
}

/// What the benchmark synced.
#[derive(Debug, Clone)]
pub struct Synced {
    /// The company.
    pub company_id: String,
    /// The data type measured (`invoices`, `orders`).
    pub data_type: &'static str,
    /// Its records in the sync (from the server's pull operation).
    pub records: u64,
    /// From `POST data/all` to the data type's pull operation seen complete.
    pub wall: Duration,
    /// The server's peak resident memory during the sync, in bytes.
    pub peak_rss: u64,
    /// Where the time went, from the server's log (`None` if it did not
    /// log the sync within 30 s of its completion).
    pub phases: Option<Phases>,
}

async fn call(
    client: &reqwest::Client,
    method: reqwest::Method,
    url: String,
    body: Option<Value>,
) -> anyhow::Result<Value> {
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

/// `POST`s `body` to `path` of the API, its answer's JSON.
pub async fn post(server: &Server, path: &str, body: Value) -> anyhow::Result<Value> {
    call(
        &reqwest::Client::new(),
        reqwest::Method::POST,
        format!("{}{path}", server.base_url),
        Some(body),
    )
    .await
}

/// Creates a company and its sandbox connection holding `count` records of
/// `data_type` (`invoices` or `orders`; none of the other counted types),
/// then syncs it and waits for every data type, sampling the server's
/// memory throughout.
pub async fn create_and_sync(
    server: &Server,
    data_type: &'static str,
    count: u64,
) -> anyhow::Result<Synced> {
    create_and_sync_in(server, data_type, count, 1).await
}

/// [`create_and_sync`] with `count` records split between `connections`
/// sandbox connections of the company (each its own seed), synced at once;
/// the wall time is until the last of them completes.
pub async fn create_and_sync_in(
    server: &Server,
    data_type: &'static str,
    count: u64,
    connections: u64,
) -> anyhow::Result<Synced> {
    let client = reqwest::Client::new();
    let base = &server.base_url;
    let company = call(
        &client,
        reqwest::Method::POST,
        format!("{base}/companies"),
        Some(json!({"name": format!("Benchmark {data_type} Ltd")})),
    )
    .await?;
    let company_id = company["companyId"]
        .as_str()
        .context("companyId in the answer")?
        .to_owned();
    let connections = connections.max(1);
    for index in 0..connections {
        // The first connections take one more when `count` does not divide.
        let share = count / connections + u64::from(index < count % connections);
        let connection = call(
            &client,
            reqwest::Method::POST,
            format!("{base}/companies/{company_id}/connections"),
            Some(json!({"platformKey": "sandbox"})),
        )
        .await?;
        let connection_id = connection["connectionId"]
            .as_str()
            .context("connectionId in the answer")?
            .to_owned();
        call(
            &client,
            reqwest::Method::PUT,
            format!("{base}/companies/{company_id}/connections/{connection_id}/authorization"),
            Some(json!({
                "organizationId": match connections {
                    1 => format!("sbx-benchmark-{data_type}"),
                    _ => format!("sbx-benchmark-{data_type}-{index}"),
                },
                "accessToken": "benchmark",
                "invoiceCount": if data_type == "invoices" { share } else { 0 },
                "orderCount": if data_type == "orders" { share } else { 0 },
                "bankTransactionCount": 0,
                "seed": 2026 + index
            })),
        )
        .await?;
    }

    sync_company(server, &company_id, data_type, connections).await
}

/// Sets the sandbox body `authorization` on the company's connection (a
/// token migration: it starts no sync).
pub async fn authorize_sandbox(
    server: &Server,
    company_id: &str,
    connection_id: &str,
    authorization: Value,
) -> anyhow::Result<()> {
    let base = &server.base_url;
    call(
        &reqwest::Client::new(),
        reqwest::Method::PUT,
        format!("{base}/companies/{company_id}/connections/{connection_id}/authorization"),
        Some(authorization),
    )
    .await?;
    Ok(())
}

/// The company's first connection's id.
pub async fn first_connection(server: &Server, company_id: &str) -> anyhow::Result<String> {
    let base = &server.base_url;
    let page = call(
        &reqwest::Client::new(),
        reqwest::Method::GET,
        format!("{base}/companies/{company_id}/connections"),
        None,
    )
    .await?;
    page["results"][0]["connectionId"]
        .as_str()
        .map(str::to_owned)
        .context("a connection")
}

/// Syncs the company's `connections` connections (`POST .../data/all`) and
/// waits for every data type, sampling the server's memory throughout; the
/// wall time is until the last of `data_type`'s operations completes.
pub async fn sync_company(
    server: &Server,
    company_id: &str,
    data_type: &'static str,
    connections: u64,
) -> anyhow::Result<Synced> {
    let client = reqwest::Client::new();
    let base = &server.base_url;
    let memory = PeakMemory::watch(server.pid());
    let started = Instant::now();
    let queued = call(
        &client,
        reqwest::Method::POST,
        format!("{base}/companies/{company_id}/data/all"),
        None,
    )
    .await?;
    let measured_done = settle(&client, base, company_id, &queued, data_type, started).await?;
    // The engine deletes the moved staging rows right after completing.
    tokio::time::sleep(Duration::from_secs(1)).await;
    let peak_rss = memory.finish();
    let (wall, records) =
        measured_done.with_context(|| format!("no {data_type} operation completed"))?;
    // One operation's phases: a sync of several connections logs several.
    let phases = match connections {
        1 => phases::logged(&server.log, data_type, records, Duration::from_secs(30)).await,
        _ => None,
    };
    Ok(Synced {
        company_id: company_id.to_owned(),
        data_type,
        records,
        wall,
        peak_rss,
        phases,
    })
}

/// Waits until every operation of `queued` (an answer of `data/all` or
/// `data/queue`) completes; when the last of `data_type`'s did, counted
/// from `started`, and their records together.
async fn settle(
    client: &reqwest::Client,
    base: &str,
    company_id: &str,
    queued: &Value,
    data_type: &str,
    started: Instant,
) -> anyhow::Result<Option<(Duration, u64)>> {
    let operations: Vec<String> = queued
        .as_array()
        .context("queued operations")?
        .iter()
        .filter_map(|operation| operation["pullOperationId"].as_str().map(str::to_owned))
        .collect();
    // (when the last of the data type's operations completed, their records)
    let mut measured_done: Option<(Duration, u64)> = None;
    let mut pending = operations;
    while !pending.is_empty() {
        tokio::time::sleep(poll_after(started.elapsed())).await;
        let mut still = Vec::new();
        for id in pending {
            let operation = call(
                client,
                reqwest::Method::GET,
                format!("{base}/companies/{company_id}/data/history/{id}"),
                None,
            )
            .await?;
            match operation["status"].as_str() {
                Some("Queued" | "Fetching") => still.push(id),
                Some("Complete") => {
                    if operation["dataType"] == data_type {
                        let records = operation["recordsFetched"].as_u64().unwrap_or(0);
                        let before = measured_done.map_or(0, |(_, records)| records);
                        measured_done = Some((started.elapsed(), before + records));
                    }
                }
                other => bail!("the sync ended {other:?}: {operation}"),
            }
        }
        pending = still;
        if started.elapsed() > Duration::from_secs(1800) {
            bail!("the sync did not finish in 30 minutes");
        }
    }
    Ok(measured_done)
}

/// How long [`settle`] waits before its next look, `elapsed` into a sync:
/// every 10 ms for the first 3 s, so that a short sync's figure is not
/// mostly the poll's (a poll every 50 ms added up to 50 ms to a 2,000-record
/// list's 0.1 s), then every 50 ms, at most 2.5% of a longer one. The
/// operation's own `completed` cannot serve: it is the swap's time, stamped
/// as the publish begins, not when the data became readable.
fn poll_after(elapsed: Duration) -> Duration {
    if elapsed < Duration::from_secs(3) {
        Duration::from_millis(10)
    } else {
        Duration::from_millis(50)
    }
}

/// Syncs one data type of the company alone (`POST .../data/queue/{dataType}`)
/// and waits for it: the wall time from the request until its operations
/// completed, and the records they fetched.
pub async fn sync_data_type(
    server: &Server,
    company_id: &str,
    data_type: &str,
) -> anyhow::Result<(Duration, u64)> {
    let client = reqwest::Client::new();
    let base = &server.base_url;
    let started = Instant::now();
    let queued = call(
        &client,
        reqwest::Method::POST,
        format!("{base}/companies/{company_id}/data/queue/{data_type}"),
        None,
    )
    .await?;
    settle(&client, base, company_id, &queued, data_type, started)
        .await?
        .with_context(|| format!("no {data_type} operation completed"))
}

/// How long one request for `path` takes, from sending it to the last byte
/// of a 2xx answer, on a fresh connection (the first request of a case,
/// before any load has warmed anything for it).
pub async fn first_request(server: &Server, path: &str) -> anyhow::Result<std::time::Duration> {
    Ok(timed_get(server, path).await?.0)
}

/// [`first_request`], with the answer's JSON.
pub async fn timed_get(
    server: &Server,
    path: &str,
) -> anyhow::Result<(std::time::Duration, Value)> {
    let client = reqwest::Client::new();
    let started = std::time::Instant::now();
    let body = call(
        &client,
        reqwest::Method::GET,
        format!("{}{path}", server.base_url),
        None,
    )
    .await?;
    Ok((started.elapsed(), body))
}

/// `totalResults` of one list request, checking the answer is a 200.
pub async fn total_results(server: &Server, path: &str) -> anyhow::Result<u64> {
    let client = reqwest::Client::new();
    let body = call(
        &client,
        reqwest::Method::GET,
        format!("{}{path}", server.base_url),
        None,
    )
    .await?;
    body["totalResults"]
        .as_u64()
        .with_context(|| format!("totalResults of {path}"))
}

/// How many warm reads of a page [`page_reads`] takes the median of.
pub const WARM_READS: usize = 15;

/// A page's first read, then the median of [`WARM_READS`] more.
pub async fn page_reads(server: &Server, path: &str) -> anyhow::Result<(Duration, Duration)> {
    let first = first_request(server, path).await?;
    let mut warm = Vec::with_capacity(WARM_READS);
    for _ in 0..WARM_READS {
        warm.push(first_request(server, path).await?);
    }
    warm.sort();
    Ok((first, warm[WARM_READS / 2]))
}

/// A new company `name` with one sandbox connection authorized with `body`
/// (a token migration: no sync yet): the company's and connection's ids.
pub async fn sandbox_company(
    server: &Server,
    name: &str,
    body: Value,
) -> anyhow::Result<(String, String)> {
    let company = post(server, "/companies", json!({ "name": name })).await?;
    let company_id = company["companyId"]
        .as_str()
        .context("companyId in the answer")?
        .to_owned();
    let connection = post(
        server,
        &format!("/companies/{company_id}/connections"),
        json!({"platformKey": "sandbox"}),
    )
    .await?;
    let connection_id = connection["connectionId"]
        .as_str()
        .context("connectionId in the answer")?
        .to_owned();
    authorize_sandbox(server, &company_id, &connection_id, body).await?;
    Ok((company_id, connection_id))
}
