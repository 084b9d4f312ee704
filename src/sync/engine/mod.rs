//! The sync engine: workers inside `serve` that claim queued pull
//! operations through the database and run them.
//!
//! - **Claiming** ([`operations::lease::claim`]): one UPDATE takes the
//!   oldest claimable operation (queued, or fetching under a lease that
//!   lapsed) and stamps this worker's lease on it; several processes share
//!   the queue.
//! - **Leases and fencing.** A running operation's lease is renewed on a
//!   heartbeat ([`heartbeat`]). Every write of a run (each staged page, the
//!   swap, the final status, the discard of its staging) happens in a
//!   transaction that re-asserts this worker's lease before it commits
//!   (first thing, except in the swap, which numbers the staged rows before
//!   taking the operation's row lock and rolls everything back if the lease
//!   is lost; the two halves of a long list that move at once before the
//!   swap each hold the operation's row `FOR SHARE` instead, which no claim
//!   can take until they commit), so a worker that stalled past its lease
//!   cannot touch what the worker that took over is doing.
//! - **Never stuck.** An operation whose worker died is taken over when its
//!   lease lapses, and failed after [`EngineConfig::max_attempts`] claims; a
//!   panicking run ends `Failed`; on shutdown, workers put their operation
//!   back in the queue between two pages.
//! - **Atomic data.** Records are staged under a new generation and swapped
//!   in by one transaction ([`run`]; see [`crate::store`]).
//!
//! [`run`] is one operation's run, [`tokens`] its credentials, [`ending`]
//! how a run that did not complete is recorded.

mod ending;
mod heartbeat;
mod run;
mod tokens;

use std::panic::AssertUnwindSafe;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use chrono::{DateTime, Utc};
use futures_util::FutureExt;
use sea_orm::DatabaseConnection;
use tokio::sync::Notify;
use tokio::task::JoinHandle;
use uuid::Uuid;

use entity::pull_operation;

use super::operations;
use crate::connections;
use crate::crypto::Keyring;
use crate::data::DataType;
use crate::error::Problem;
use crate::metrics::Metrics;
use crate::platforms::connector::Connectors;
use crate::store::{self, Generations};
use crate::sync::operations::issues::Issues;
use ending::RunError;

/// How the engine runs.
#[derive(Debug, Clone)]
pub struct EngineConfig {
    /// Concurrent workers in this process.
    pub workers: usize,
    /// How long a claim lasts without renewal.
    pub lease: Duration,
    /// How often a running worker renews its lease.
    pub heartbeat: Duration,
    /// How often an idle worker looks for work when nobody wakes it.
    pub poll: Duration,
    /// Claims after which an operation is failed rather than retried.
    pub max_attempts: i32,
    /// How long a generation a newer sync replaced stays readable through
    /// the pinned links of pages read from it ([`SNAPSHOT_RETENTION`]).
    pub snapshot_retention: Duration,
    /// How long after a data type's last full fetch a sync fetches the
    /// platform's whole list again, where the platform's changes do not
    /// carry its deletions ([`DEFAULT_FULL_FETCH_EVERY`]; zero: always).
    pub full_fetch_every: Duration,
    /// Whether a resync of a long list may publish a layer over the
    /// previous generation instead of a whole new one
    /// (`docs/store-next.md` §2b). Off by default, and only tests and the
    /// resync benchmark's `layering` build turn it on: the API does not
    /// read layers yet, so it would read a layered generation's changes as
    /// if they were its whole list (the sync after it compares with the
    /// layer's base, and fetches whole).
    pub layering: Option<Layering>,
}

/// When a resync publishes a layer ([`EngineConfig::layering`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Layering {
    /// A full publish of at least this many rows writes the fences a later
    /// layer over it needs; a layer goes only over such a generation.
    pub at_rows: u64,
}

/// How long, by default, after a data type's last full fetch its next sync
/// fetches whole again (a reconciliation) where the platform's changes do
/// not carry deletions: a day.
pub const DEFAULT_FULL_FETCH_EVERY: Duration = Duration::from_secs(24 * 60 * 60);

/// How long, by default, a replaced generation stays readable for clients
/// paging through it (unless a second newer sync completes first: a list
/// keeps at most the generation it replaced beside its newest): long
/// enough to walk a million records at 5,000 a page many times over.
pub const SNAPSHOT_RETENTION: Duration = Duration::from_secs(30 * 60);

impl Default for EngineConfig {
    fn default() -> Self {
        Self {
            workers: 2,
            lease: Duration::from_secs(30),
            heartbeat: Duration::from_secs(10),
            poll: Duration::from_secs(2),
            max_attempts: 3,
            snapshot_retention: SNAPSHOT_RETENTION,
            full_fetch_every: DEFAULT_FULL_FETCH_EVERY,
            layering: None,
        }
    }
}

/// The engine of one process.
pub struct Engine {
    db: DatabaseConnection,
    keyring: Arc<Keyring>,
    connectors: Connectors,
    config: EngineConfig,
    wake: Arc<Notify>,
    process: String,
    stopping: AtomicBool,
    metrics: Arc<Metrics>,
}

impl Engine {
    /// An engine; `wake` is notified by the API when it queues work.
    pub fn new(
        db: DatabaseConnection,
        keyring: Arc<Keyring>,
        connectors: Connectors,
        config: EngineConfig,
        wake: Arc<Notify>,
        metrics: Arc<Metrics>,
    ) -> Arc<Self> {
        let process = format!("{}-{}", std::process::id(), Uuid::new_v4().simple());
        Arc::new(Self {
            db,
            keyring,
            connectors,
            config,
            wake,
            process,
            stopping: AtomicBool::new(false),
            metrics,
        })
    }

    /// Starts the workers, and the sweep that deletes expired snapshots;
    /// they run until [`Engine::stop`].
    pub fn start(self: &Arc<Self>) -> Vec<JoinHandle<()>> {
        let mut tasks: Vec<JoinHandle<()>> = (0..self.config.workers)
            .map(|index| {
                let engine = Arc::clone(self);
                let worker = format!("{}/{index}", engine.process);
                tokio::spawn(async move { engine.work(worker).await })
            })
            .collect();
        let engine = Arc::clone(self);
        tasks.push(tokio::spawn(async move { engine.sweep().await }));
        tasks
    }

    /// Deletes the generations whose retention ended, every half retention
    /// (from 1 s to a minute), in every process: a process that only serves
    /// the API still keeps the table from growing.
    async fn sweep(self: Arc<Self>) {
        let every = (self.config.snapshot_retention / 2)
            .clamp(Duration::from_secs(1), Duration::from_secs(60));
        while !self.stopping() {
            crate::idle::wait(&self.wake, every, &self.stopping).await;
            if self.stopping() {
                return;
            }
            let before = Utc::now()
                - chrono::Duration::from_std(self.config.snapshot_retention).unwrap_or_default();
            loop {
                match store::drop_expired(&self.db, before).await {
                    Ok(0) => break,
                    Ok(_) if self.stopping() => return,
                    Ok(_) => {}
                    Err(error) => {
                        tracing::warn!(error = %error, "deleting expired snapshots failed; the next sweep retries");
                        break;
                    }
                }
            }
        }
    }

    /// Stops claiming; running operations go back to the queue after their
    /// current page. Waits up to `grace` for the workers.
    pub async fn stop(&self, workers: Vec<JoinHandle<()>>, grace: Duration) {
        self.stopping.store(true, Ordering::SeqCst);
        self.wake.notify_waiters();
        let all = futures_util::future::join_all(workers);
        if tokio::time::timeout(grace, all).await.is_err() {
            tracing::warn!(
                "sync workers still busy at shutdown; their leases will lapse and another process takes over"
            );
        }
    }

    fn stopping(&self) -> bool {
        self.stopping.load(Ordering::SeqCst)
    }

    /// How long a lease lasts.
    fn lease(&self) -> chrono::Duration {
        chrono::Duration::from_std(self.config.lease).unwrap_or_default()
    }

    fn lease_until(&self) -> DateTime<Utc> {
        Utc::now() + self.lease()
    }

    async fn work(self: Arc<Self>, worker: String) {
        while !self.stopping() {
            match operations::lease::claim(&self.db, &worker, self.lease_until()).await {
                Ok(Some(operation)) => self.run(&worker, operation).await,
                Ok(None) => {
                    crate::idle::wait(&self.wake, self.config.poll, &self.stopping).await;
                }
                Err(error) => {
                    tracing::error!(worker, error = %error, "claiming a pull operation failed");
                    crate::idle::wait(&self.wake, self.config.poll, &self.stopping).await;
                }
            }
        }
    }

    /// Runs a claimed operation to its end, whatever happens, and counts how it ended.
    async fn run(&self, worker: &str, operation: pull_operation::Model) {
        let started = std::time::Instant::now();
        let (outcome, unreadable) = self.run_to_end(worker, &operation).await;
        let platform = connections::for_sync(&self.db, operation.connection_id)
            .await
            .ok()
            .flatten()
            .map(|connection| connection.platform_key)
            .unwrap_or_else(|| "unknown".to_owned());
        self.metrics.pull_operation(
            &platform,
            &operation.data_type,
            outcome,
            started.elapsed().as_secs_f64(),
        );
        self.metrics
            .unreadable_records(&platform, &operation.data_type, unreadable);
    }

    /// Runs a claimed operation to its end; the outcome's name and how many
    /// records could not be read, for the metrics.
    async fn run_to_end(
        &self,
        worker: &str,
        operation: &pull_operation::Model,
    ) -> (&'static str, u64) {
        let none = Issues::default();
        let Some(data_type) = DataType::named(&operation.data_type) else {
            let problem = Problem::new(format!("Unknown data type {:?}.", operation.data_type));
            self.end(worker, operation, RunError::Failed(problem), None, &none)
                .await;
            return ("Failed", 0);
        };
        if operation.attempts > self.config.max_attempts {
            let problem = Problem::new(format!(
                "Abandoned after {} attempts: the workers running it stopped before finishing. Queue it again.",
                self.config.max_attempts
            ));
            let current = store::current_generation(&self.db, operation.connection_id, data_type)
                .await
                .unwrap_or_default();
            let leftovers = (data_type, Generations::Above(current));
            self.end(
                worker,
                operation,
                RunError::Failed(problem),
                Some(leftovers),
                &none,
            )
            .await;
            return ("Failed", 0);
        }
        let lease_lost = Arc::new(AtomicBool::new(false));
        let _heartbeat = heartbeat::spawn(
            self.db.clone(),
            worker.to_owned(),
            operation.id,
            (self.config.lease, self.config.heartbeat),
            Arc::clone(&lease_lost),
        );
        let mut staged = None;
        let running = run::Run {
            engine: self,
            worker,
            operation,
            data_type,
            lease_lost: &lease_lost,
            issues: std::sync::Mutex::default(),
            keys: std::sync::Mutex::default(),
        };
        let outcome = match AssertUnwindSafe(running.sync(&mut staged))
            .catch_unwind()
            .await
        {
            Ok(Ok(())) => return ("Complete", running.issues().count()),
            Ok(Err(error)) => error,
            Err(_) => RunError::Internal("the sync panicked".to_owned()),
        };
        let name = outcome.name();
        let staging = staged.map(|generation| (data_type, Generations::Exactly(generation)));
        let issues = running.issues();
        self.end(worker, operation, outcome, staging, &issues).await;
        (name, issues.count())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_default_lease_outlives_several_heartbeats() {
        let config = EngineConfig::default();
        assert!(config.lease >= config.heartbeat * 2);
        assert!(config.workers >= 1 && config.max_attempts >= 1);
    }
}
