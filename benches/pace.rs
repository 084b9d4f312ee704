//! `cargo bench --bench pace`: the largest call rate tributary's pacing
//! (`sync::pacing`) lets through against each platform's declared limits
//! (issue 33), with several processes calling for one organization at once.
//!
//! Per platform that declares limits, `--processes` connection pools to one
//! fresh PostgreSQL database (as many server processes) each run
//! `--callers` callers (as many syncs of the same organization, each with
//! its own gate, as a run has), which call as fast as their gate admits
//! them; a call lasts `--latency-ms` (the platform's answer) and answers 200
//! without quota headers. Every platform runs at once for `--seconds`. The
//! table gives the most calls seen in any rolling window of the platform's
//! declared length, the calls per window over the whole windows of the run,
//! and the most calls in progress at once, each against what the connector
//! declares.
//! What is measured is the pacing's admission, not a platform's HTTP: no
//! request is sent; a call is a sleep, and nothing on the other side counts.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use anyhow::Context;
use clap::Parser;
use sea_orm::{ConnectionTrait, DatabaseConnection};

use tributary::platforms::connector::{Connectors, Limits};
use tributary::sync::pacing::{self, Subject};

/// The pacing benchmark.
#[derive(Parser)]
#[command(about)]
struct Options {
    /// PostgreSQL URL of a user who may create databases (the run uses a fresh one and drops it).
    #[arg(long, default_value = "postgres://postgres@127.0.0.1:5432/test")]
    postgres: String,
    /// How long every platform's callers call.
    #[arg(long, default_value_t = 150)]
    seconds: u64,
    /// How many processes call (each its own connection pool).
    #[arg(long, default_value_t = 2)]
    processes: usize,
    /// How many callers each process runs per platform (syncs of the organization at once).
    #[arg(long, default_value_t = 4)]
    callers: usize,
    /// How long a call takes, in milliseconds.
    #[arg(long, default_value_t = 100)]
    latency_ms: u64,
    /// Only these platforms (keys, comma-separated).
    #[arg(long, value_delimiter = ',')]
    platforms: Vec<String>,
    /// Also write the table to this file.
    #[arg(long)]
    output: Option<PathBuf>,
    /// Passed by `cargo bench`.
    #[arg(long, hide = true)]
    bench: bool,
}

/// What the callers of one platform saw.
#[derive(Default)]
struct Seen {
    /// When each call went, since the run began.
    calls: Mutex<Vec<Duration>>,
    /// Calls in progress now.
    in_progress: AtomicU32,
    /// The most calls in progress at once.
    most_at_once: AtomicU32,
    /// Why a caller stopped before the end, when one did.
    stopped: Mutex<Option<String>>,
    /// Turns given up because the call woke past its slot's slack.
    late: AtomicU32,
    /// Calls that went unpaced: their platform declares a rate, yet their
    /// turn had no slot (the pace's row could not be read or written).
    unpaced: AtomicU32,
}

/// One platform under test.
struct Platform {
    key: &'static str,
    name: &'static str,
    limits: Limits,
    seen: Arc<Seen>,
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let options = Options::parse();
    let connectors = Connectors::standard();
    let platforms: Vec<Platform> = tributary::platforms::all()
        .iter()
        .filter(|platform| {
            options.platforms.is_empty()
                || options
                    .platforms
                    .iter()
                    .any(|key| key == platform.platform_key)
        })
        .filter_map(|platform| {
            let limits = connectors.get(platform.platform_key)?.limits();
            let declared = limits.rate.is_some() || limits.concurrent.is_some();
            declared.then(|| Platform {
                key: platform.platform_key,
                name: platform.name,
                limits,
                seen: Arc::default(),
            })
        })
        .collect();
    let database = format!("tributary_pace_bench_{}", std::process::id());
    let admin = tributary::db::connect(&options.postgres, None).await?;
    admin
        .execute_unprepared(&format!("CREATE DATABASE {database}"))
        .await
        .context("creating the benchmark's database")?;
    let mut url = url::Url::parse(&options.postgres)?;
    url.set_path(&database);
    let outcome = run(&options, url.as_str(), &platforms).await;
    admin
        .execute_unprepared(&format!("DROP DATABASE IF EXISTS {database} WITH (FORCE)"))
        .await
        .context("dropping the benchmark's database")?;
    outcome?;
    let run = Duration::from_secs(options.seconds);
    let table = markdown(&options, run, &platforms);
    println!("{table}");
    if let Some(output) = &options.output {
        std::fs::write(output, &table).context("writing the table")?;
    }
    Ok(())
}

/// Every platform's callers, in every process, until `--seconds` passed.
async fn run(options: &Options, url: &str, platforms: &[Platform]) -> anyhow::Result<()> {
    let mut processes: Vec<DatabaseConnection> = Vec::new();
    for _ in 0..options.processes.max(1) {
        processes.push(tributary::db::connect(url, None).await?);
    }
    tributary::db::migrate(&processes[0]).await?;
    let began = Instant::now();
    let length = Duration::from_secs(options.seconds);
    let latency = Duration::from_millis(options.latency_ms);
    let mut callers = tokio::task::JoinSet::new();
    for platform in platforms {
        for db in &processes {
            for _ in 0..options.callers.max(1) {
                let db = db.clone();
                let (key, name, limits) = (platform.key, platform.name, platform.limits);
                let seen = Arc::clone(&platform.seen);
                callers.spawn(async move {
                    let subject = Subject {
                        platform_key: key,
                        platform: name,
                        application: "pace-bench-application",
                        organization: "pace-bench-organization",
                    };
                    let gate = pacing::gate(&db, subject, limits);
                    let rated = limits.rate.is_some();
                    call_until(gate.as_ref(), &seen, rated, began, length, latency).await;
                });
            }
        }
    }
    while let Some(ended) = callers.join_next().await {
        ended.context("a caller panicked")?;
    }
    Ok(())
}

/// One caller: calls as its gate admits it until `length` passed since
/// `began`, or the gate refuses (a spent quota).
async fn call_until(
    gate: &dyn tributary::platforms::kit::http::CallGate,
    seen: &Seen,
    rated: bool,
    began: Instant,
    length: Duration,
    latency: Duration,
) {
    let answered = http::HeaderMap::new();
    while began.elapsed() < length {
        let turn = match gate.admit().await {
            Ok(turn) => turn,
            Err(refused) => {
                if let Ok(mut stopped) = seen.stopped.lock() {
                    stopped.get_or_insert(refused);
                }
                return;
            }
        };
        if began.elapsed() + turn.wait >= length {
            gate.finished(&turn, None).await;
            return;
        }
        tokio::time::sleep(turn.wait).await;
        // As `kit::http` does: a call that woke past its slot's slack takes
        // a new turn (as many times as it does) rather than going late.
        let mut turn = turn;
        for _ in 0..tributary::platforms::kit::http::LATE_TURNS_TAKEN_AGAIN {
            if !turn.started_late() {
                break;
            }
            turn = match gate.admit_again(&turn).await {
                Ok(again) => {
                    seen.late.fetch_add(1, Ordering::SeqCst);
                    again
                }
                Err(refused) => {
                    gate.finished(&turn, None).await;
                    if let Ok(mut stopped) = seen.stopped.lock() {
                        stopped.get_or_insert(refused);
                    }
                    return;
                }
            };
            tokio::time::sleep(turn.wait).await;
        }
        if rated && turn.slot.is_none() {
            seen.unpaced.fetch_add(1, Ordering::SeqCst);
        }
        let now = seen.in_progress.fetch_add(1, Ordering::SeqCst) + 1;
        seen.most_at_once.fetch_max(now, Ordering::SeqCst);
        if let Ok(mut calls) = seen.calls.lock() {
            calls.push(began.elapsed());
        }
        tokio::time::sleep(latency).await;
        seen.in_progress.fetch_sub(1, Ordering::SeqCst);
        gate.finished(&turn, Some((200, &answered))).await;
    }
}

/// The most of `times` (sorted) inside any window of `window`.
fn most_in_any_window(times: &[Duration], window: Duration) -> usize {
    let mut most = 0;
    let mut start = 0;
    for (end, at) in times.iter().enumerate() {
        while *at >= times[start] + window {
            start += 1;
        }
        most = most.max(end + 1 - start);
    }
    most
}

/// The table: one row per platform.
fn markdown(options: &Options, run: Duration, platforms: &[Platform]) -> String {
    let mut rows = BTreeMap::new();
    for platform in platforms {
        let mut times = platform
            .seen
            .calls
            .lock()
            .map(|calls| calls.clone())
            .unwrap_or_default();
        times.sort();
        let (declared, most, share, steady) = match platform.limits.rate {
            Some(rate) => {
                let most = most_in_any_window(&times, rate.window);
                let window = rate.window.as_secs_f64();
                // Whole windows from the first call: a burst at the start
                // and one cut off by the end would skew a plain average.
                let first = times.first().copied().unwrap_or_default();
                let whole = (run.saturating_sub(first)).as_secs_f64() / window;
                let steady = if whole >= 1.0 {
                    let windows = whole.floor();
                    let end = first + rate.window.mul_f64(windows);
                    let inside = times.iter().filter(|at| **at < end).count();
                    format!(
                        "{:.1} over {windows} windows ({:.2})",
                        inside as f64 / windows,
                        inside as f64 / windows / f64::from(rate.calls)
                    )
                } else {
                    "run shorter than the window".to_owned()
                };
                (
                    format!("{} in {} s", rate.calls, window),
                    most.to_string(),
                    format!("{:.2}", most as f64 / f64::from(rate.calls)),
                    steady,
                )
            }
            None => (
                "none".to_owned(),
                "—".to_owned(),
                "—".to_owned(),
                "—".to_owned(),
            ),
        };
        let at_once = format!(
            "{} ({})",
            platform.seen.most_at_once.load(Ordering::SeqCst),
            platform
                .limits
                .concurrent
                .map_or("none declared".to_owned(), |calls| calls.to_string())
        );
        let stopped = platform
            .seen
            .stopped
            .lock()
            .ok()
            .and_then(|stopped| stopped.clone())
            .unwrap_or_default();
        rows.insert(
            platform.key,
            format!(
                "| {} | {declared} | {} | {most} | {share} | {steady} | {at_once} | {} | {} | {stopped} |\n",
                platform.key,
                times.len(),
                platform.seen.late.load(Ordering::SeqCst),
                platform.seen.unpaced.load(Ordering::SeqCst),
            ),
        );
    }
    let mut table = format!(
        "{} s, {} processes × {} callers per platform, calls of {} ms, every platform at once.\n\n\
         | platform | declared rate | calls | most in any window | of the rate | calls a window, sustained (of the rate) | most at once (declared) | turns taken again (woke late) | unpaced (pacing failed) | a caller stopped |\n\
         |---|---|---:|---:|---:|---:|---:|---:|---:|---|\n",
        run.as_secs(),
        options.processes,
        options.callers,
        options.latency_ms,
    );
    for row in rows.values() {
        table.push_str(row);
    }
    table
}
