//! The runner: a background task in every process that advances migration
//! rows. It claims rows under a lease (so with several processes on one
//! database each row is advanced by one claim at a time), takes each
//! through its steps ([`super::steps`]: import, verify, first sync), and
//! moves batches on when their canary or their last row ends.
//!
//! Every step is one transaction fenced by the claim's lease (its own id,
//! unexpired, renewed before each step), so a process killed at any point
//! (kill -9 included) leaves each row either before or after a step, never
//! between: its lease lapses and a runner (another process's, or this
//! one's after the restart) takes it from where it stopped.
//!
//! Concurrency is bounded per platform in each process (and first syncs
//! per batch); a platform that cannot be reached (or keeps answering 429
//! past its `Retry-After`, which the connectors honour first) pauses that
//! platform's rows for a while, and the row is tried again later
//! ([`RETRY_DELAYS`]); so is a row whose step failed unexpectedly.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use chrono::{TimeDelta, Utc};
use sea_orm::sea_query::Expr;
use sea_orm::{
    ActiveEnum, ColumnTrait, Condition, ConnectionTrait, DatabaseConnection, DbBackend,
    EntityTrait, PaginatorTrait, QueryFilter, Statement,
};
use tokio::sync::Notify;
use tokio::task::JoinHandle;
use uuid::Uuid;

use entity::{migration_batch, migration_row};

use super::{BatchState, RowState, has_ended, remedy_json, target, workable_states};
use crate::crypto::Keyring;
use crate::error::{Problem, Remedy};
use crate::platforms::connector::Connectors;

/// The waits before a row whose platform could not be reached (or whose
/// step failed unexpectedly) is tried again; it fails after the last. The
/// default of [`MigrationConfig::retry_delays`].
pub const RETRY_DELAYS: [Duration; 5] = [
    Duration::from_secs(10),
    Duration::from_secs(30),
    Duration::from_secs(2 * 60),
    Duration::from_secs(10 * 60),
    Duration::from_secs(30 * 60),
];

/// How this process runs managed migrations.
#[derive(Debug, Clone)]
pub struct MigrationConfig {
    /// Rows of one platform advanced at once by this process, and first
    /// syncs of one batch running at once (0: this process runs no
    /// migrations).
    pub concurrency_per_platform: usize,
    /// How often an idle runner looks for work.
    pub poll: Duration,
    /// How long a claim holds a row without renewing it (it renews before
    /// each step): a killed process's rows are taken again after it.
    pub lease: Duration,
    /// The waits before a row whose platform could not be reached is tried
    /// again; it fails after the last ([`RETRY_DELAYS`]).
    pub retry_delays: Vec<Duration>,
}

impl Default for MigrationConfig {
    fn default() -> Self {
        Self {
            concurrency_per_platform: 4,
            poll: Duration::from_secs(1),
            lease: Duration::from_secs(60),
            retry_delays: RETRY_DELAYS.to_vec(),
        }
    }
}

/// Rows claimed at once per free slot when a row's only step is its import
/// (no platform call): a slot imports them one after the other.
const IMPORT_CHUNK: usize = 16;

/// The runner of one process.
pub struct Runner {
    pub(super) db: DatabaseConnection,
    pub(super) keyring: Arc<Keyring>,
    pub(super) connectors: Connectors,
    pub(super) config: MigrationConfig,
    pub(super) sync_wake: Arc<Notify>,
    wake: Notify,
    stopping: AtomicBool,
    /// This process's name, the prefix of its claims' leases.
    process: String,
    /// Rows in flight per platform.
    in_flight: Mutex<HashMap<String, usize>>,
    /// Platforms paused until a time, after one could not be reached.
    paused: Mutex<HashMap<String, tokio::time::Instant>>,
}

/// A row as one claim holds it: what its steps write is fenced by the
/// claim's lease and the state read.
pub(super) struct Claim<'a> {
    /// The row, as read when the step began.
    pub row: &'a migration_row::Model,
    /// The claim's lease (`lease_owner`).
    pub lease: &'a str,
}

/// What a step did to its row.
pub(super) enum Step {
    /// The row moved on: take its next step.
    Advanced,
    /// The row is done for now (ended, syncing, waiting, or no longer this claim's).
    Stop,
}

impl Runner {
    /// A runner over the application's database and connectors.
    pub fn new(
        db: DatabaseConnection,
        keyring: Arc<Keyring>,
        connectors: Connectors,
        config: MigrationConfig,
        sync_wake: Arc<Notify>,
    ) -> Arc<Self> {
        Arc::new(Self {
            db,
            keyring,
            connectors,
            config,
            sync_wake,
            wake: Notify::new(),
            stopping: AtomicBool::new(false),
            // Short enough that a claim's lease (this, a dash and a UUID)
            // fits `lease_owner` (64 characters).
            process: format!("migrations-{}", &Uuid::new_v4().simple().to_string()[..8]),
            in_flight: Mutex::default(),
            paused: Mutex::default(),
        })
    }

    /// Asks the runner to look for work now (a batch started or proceeded).
    pub fn wake(&self) {
        self.wake.notify_one();
    }

    /// Starts the runner's loop; `None` when this process runs no migrations.
    pub fn start(self: &Arc<Self>) -> Option<JoinHandle<()>> {
        if self.config.concurrency_per_platform == 0 {
            return None;
        }
        let runner = self.clone();
        Some(tokio::spawn(async move {
            while !runner.stopping.load(Ordering::SeqCst) {
                if let Err(error) = runner.tick().await {
                    tracing::warn!(error = %error, "the migration runner's round failed; it tries again");
                }
                tokio::select! {
                    () = runner.wake.notified() => {}
                    () = tokio::time::sleep(runner.config.poll) => {}
                }
            }
        }))
    }

    /// Stops claiming rows and waits up to `grace` for the loop; steps in
    /// flight finish or leave their leases to lapse.
    pub async fn stop(&self, running: Option<JoinHandle<()>>, grace: Duration) {
        self.stopping.store(true, Ordering::SeqCst);
        self.wake.notify_one();
        if let Some(running) = running {
            let _ = tokio::time::timeout(grace, running).await;
        }
    }

    /// One round over the batches that have work: running ones, and
    /// recently cancelled ones whose rows may still be syncing.
    async fn tick(self: &Arc<Self>) -> anyhow::Result<()> {
        let recently = Utc::now() - TimeDelta::days(1);
        let batches = migration_batch::Entity::find()
            .filter(
                Condition::any()
                    .add(
                        migration_batch::Column::State
                            .is_in([BatchState::Canary, BatchState::Running]),
                    )
                    .add(
                        Condition::all()
                            .add(migration_batch::Column::State.eq(BatchState::Cancelled))
                            .add(migration_batch::Column::Completed.gt(recently)),
                    ),
            )
            .all(&self.db)
            .await?;
        for batch in &batches {
            // One batch's failure does not hold the others up.
            if let Err(error) = self.round(batch).await {
                tracing::warn!(migration_id = %batch.id, error = %format!("{error:#}"), "a migration's round failed; it is tried again");
            }
        }
        Ok(())
    }

    /// One batch's round: finished first syncs are recorded, the batch moves
    /// on if its canary or last row ended, and free slots claim rows.
    async fn round(self: &Arc<Self>, batch: &migration_batch::Model) -> anyhow::Result<()> {
        self.finish_syncs(batch).await?;
        if batch.state == BatchState::Cancelled || self.settle(batch).await? {
            return Ok(());
        }
        self.claim_and_run(batch).await
    }

    /// Claims the batch's rows that have a step to take, as many as the
    /// platform's free slots (and, for first syncs, the batch's) allow, and
    /// advances them in the background.
    async fn claim_and_run(self: &Arc<Self>, batch: &migration_batch::Model) -> anyhow::Result<()> {
        if self.stopping.load(Ordering::SeqCst) || self.is_paused(&batch.platform_key) {
            return Ok(());
        }
        let free = {
            let in_flight = self
                .in_flight
                .lock()
                .map_err(|_| anyhow::anyhow!("poisoned"))?;
            self.config
                .concurrency_per_platform
                .saturating_sub(in_flight.get(&batch.platform_key).copied().unwrap_or(0))
        };
        let canary_only = batch.state == BatchState::Canary;
        let row_target = target(batch, Uuid::nil());
        let import_only = !canary_only && row_target == RowState::Imported;
        let per_slot = if import_only { IMPORT_CHUNK } else { 1 };
        let mut wanted = free * per_slot;
        if !canary_only && row_target == RowState::Synced && wanted > 0 {
            // First syncs run on the engine, which every company shares: at
            // most as many of one batch at once as the platform's slots.
            let syncing = migration_row::Entity::find()
                .filter(migration_row::Column::BatchId.eq(batch.id))
                .filter(migration_row::Column::State.eq(RowState::Syncing))
                .count(&self.db)
                .await?;
            let room = self
                .config
                .concurrency_per_platform
                .saturating_sub(usize::try_from(syncing).unwrap_or(usize::MAX));
            wanted = wanted.min(room);
        }
        if wanted == 0 {
            return Ok(());
        }
        let lease = format!("{}-{}", self.process, Uuid::new_v4().simple());
        let claimed = self.claim(batch, canary_only, wanted, &lease).await?;
        for chunk in claimed.chunks(per_slot) {
            let rows = chunk.to_vec();
            self.enter(&batch.platform_key);
            let runner = self.clone();
            let batch = batch.clone();
            let lease = lease.clone();
            tokio::spawn(async move {
                for row_id in rows {
                    if let Err(error) = runner.advance(&batch, row_id, &lease).await {
                        tracing::warn!(%row_id, error = %format!("{error:#}"), "a migration row's step failed; it is tried again later");
                        if let Err(error) = runner.set_back(row_id, &lease).await {
                            tracing::warn!(%row_id, error = %format!("{error:#}"), "a migration row's failure was not recorded; its lease lapses");
                        }
                    }
                }
                runner.leave(&batch.platform_key);
                runner.wake();
            });
        }
        Ok(())
    }

    fn enter(&self, platform_key: &str) {
        if let Ok(mut in_flight) = self.in_flight.lock() {
            *in_flight.entry(platform_key.to_owned()).or_default() += 1;
        }
    }

    fn leave(&self, platform_key: &str) {
        if let Ok(mut in_flight) = self.in_flight.lock()
            && let Some(count) = in_flight.get_mut(platform_key)
        {
            *count = count.saturating_sub(1);
        }
    }

    fn is_paused(&self, platform_key: &str) -> bool {
        self.paused
            .lock()
            .ok()
            .and_then(|paused| paused.get(platform_key).copied())
            .is_some_and(|until| until > tokio::time::Instant::now())
    }

    fn pause(&self, platform_key: &str, wait: Duration) {
        if let Ok(mut paused) = self.paused.lock() {
            paused.insert(platform_key.to_owned(), tokio::time::Instant::now() + wait);
        }
    }

    fn lease_length(&self) -> TimeDelta {
        TimeDelta::from_std(self.config.lease).unwrap_or(TimeDelta::minutes(1))
    }

    /// Leases up to `limit` of the batch's rows with a step to take to
    /// `lease`, in batch order (`FOR UPDATE SKIP LOCKED` on PostgreSQL, so
    /// processes never claim the same row).
    async fn claim(
        &self,
        batch: &migration_batch::Model,
        canary_only: bool,
        limit: usize,
        lease: &str,
    ) -> anyhow::Result<Vec<Uuid>> {
        let goal = target(
            batch,
            if canary_only {
                batch.canary_row_id
            } else {
                Uuid::nil()
            },
        );
        let states: Vec<String> = workable_states(goal)
            .into_iter()
            .map(|state| format!("'{}'", state.to_value()))
            .collect();
        let backend = self.db.get_database_backend();
        let lock = match backend {
            DbBackend::Postgres => "FOR UPDATE SKIP LOCKED",
            _ => "",
        };
        let canary = if canary_only { "AND id = $5" } else { "" };
        let sql = format!(
            "UPDATE migration_row SET lease_owner = $1, lease_expires = $2 \
             WHERE id IN (SELECT id FROM migration_row \
                          WHERE batch_id = $3 AND state IN ({states}) \
                            AND (lease_expires IS NULL OR lease_expires < $4) \
                            AND (next_attempt IS NULL OR next_attempt <= $4) {canary} \
                          ORDER BY position LIMIT {limit} {lock}) \
             RETURNING id",
            states = states.join(", "),
        );
        let now = Utc::now();
        let mut values: Vec<sea_orm::Value> = vec![
            lease.to_owned().into(),
            (now + self.lease_length()).into(),
            batch.id.into(),
            now.into(),
        ];
        if canary_only {
            values.push(batch.canary_row_id.into());
        }
        let rows = self
            .db
            .query_all_raw(Statement::from_sql_and_values(backend, sql, values))
            .await?;
        Ok(rows
            .iter()
            .map(|row| row.try_get("", "id"))
            .collect::<Result<_, _>>()?)
    }

    /// Takes the row through its steps until it ends, waits, or syncs,
    /// renewing the lease before each step; stops as soon as the lease is
    /// no longer this claim's (it lapsed and another claim took the row).
    async fn advance(
        &self,
        batch: &migration_batch::Model,
        row_id: Uuid,
        lease: &str,
    ) -> anyhow::Result<()> {
        loop {
            let renewed = migration_row::Entity::update_many()
                .col_expr(
                    migration_row::Column::LeaseExpires,
                    Expr::value(Utc::now() + self.lease_length()),
                )
                .filter(migration_row::Column::Id.eq(row_id))
                .filter(migration_row::Column::LeaseOwner.eq(lease))
                .filter(migration_row::Column::LeaseExpires.gt(Utc::now()))
                .exec(&self.db)
                .await?;
            if renewed.rows_affected == 0 {
                return Ok(());
            }
            let Some(row) = migration_row::Entity::find_by_id(row_id)
                .one(&self.db)
                .await?
            else {
                return Ok(());
            };
            let claim = Claim { row: &row, lease };
            let goal = target(batch, row.id);
            if has_ended(row.state, goal) || self.stopping.load(Ordering::SeqCst) {
                self.release(&claim).await?;
                return Ok(());
            }
            let step = match row.state {
                RowState::Pending => self.import(&claim).await?,
                RowState::Imported if batch.verify || row.id == batch.canary_row_id => {
                    self.verify(batch, &claim).await?
                }
                RowState::Imported | RowState::Verified => self.queue_sync(&claim).await?,
                _ => Step::Stop,
            };
            if let Step::Stop = step {
                self.release(&claim).await?;
                return Ok(());
            }
        }
    }

    /// Gives up the claim's lease.
    async fn release(&self, claim: &Claim<'_>) -> anyhow::Result<()> {
        migration_row::Entity::update_many()
            .col_expr(
                migration_row::Column::LeaseOwner,
                Expr::value(None::<String>),
            )
            .col_expr(
                migration_row::Column::LeaseExpires,
                Expr::value(None::<chrono::DateTime<Utc>>),
            )
            .filter(migration_row::Column::Id.eq(claim.row.id))
            .filter(migration_row::Column::LeaseOwner.eq(claim.lease))
            .exec(&self.db)
            .await?;
        Ok(())
    }

    /// A step failed unexpectedly (the database, the keyring): the row is
    /// tried again after the retry waits, then fails, so a lasting fault
    /// cannot keep its batch from completing.
    async fn set_back(&self, row_id: Uuid, lease: &str) -> anyhow::Result<()> {
        let Some(row) = migration_row::Entity::find_by_id(row_id)
            .one(&self.db)
            .await?
        else {
            return Ok(());
        };
        let claim = Claim { row: &row, lease };
        self.unavailable(
            &claim,
            "tributary could not complete the step (its log says why)".to_owned(),
        )
        .await?;
        self.release(&claim).await
    }

    /// The row's update, fenced by the claim's lease (unexpired) and the
    /// state read.
    pub(super) fn fenced(&self, claim: &Claim<'_>) -> sea_orm::UpdateMany<migration_row::Entity> {
        migration_row::Entity::update_many()
            .col_expr(migration_row::Column::Updated, Expr::value(Utc::now()))
            .filter(migration_row::Column::Id.eq(claim.row.id))
            .filter(migration_row::Column::LeaseOwner.eq(claim.lease))
            .filter(migration_row::Column::LeaseExpires.gt(Utc::now()))
            .filter(migration_row::Column::State.eq(claim.row.state))
    }

    /// Ends the claimed row `Failed` with `problem` (its waiting tokens, if
    /// any, stay sealed for a retry); `false` if the claim no longer held it.
    pub(super) async fn record_failure(
        &self,
        db: &impl ConnectionTrait,
        claim: &Claim<'_>,
        problem: Problem,
    ) -> anyhow::Result<bool> {
        let row = claim.row;
        let failed = self
            .fenced(claim)
            .col_expr(migration_row::Column::State, Expr::value(RowState::Failed))
            .col_expr(migration_row::Column::Failure, Expr::value(problem.message))
            .col_expr(
                migration_row::Column::Remedy,
                Expr::value(problem.remedy.as_ref().and_then(remedy_json)),
            )
            .exec(db)
            .await?;
        if failed.rows_affected == 1 {
            tracing::info!(row_id = %row.id, migration_id = %row.batch_id, state = ?row.state, "a migration row failed");
        }
        Ok(failed.rows_affected == 1)
    }

    /// [`Self::record_failure`], as a step's end.
    pub(super) async fn fail(
        &self,
        db: &impl ConnectionTrait,
        claim: &Claim<'_>,
        problem: Problem,
    ) -> anyhow::Result<Step> {
        self.record_failure(db, claim, problem).await?;
        Ok(Step::Stop)
    }

    /// The platform could not be reached (or the step failed unexpectedly):
    /// the row waits and is tried again, or fails once tried enough.
    pub(super) async fn unavailable(
        &self,
        claim: &Claim<'_>,
        message: String,
    ) -> anyhow::Result<Step> {
        let row = claim.row;
        let attempt = usize::try_from(row.attempts).unwrap_or(0);
        let Some(wait) = self.config.retry_delays.get(attempt).copied() else {
            return self
                .fail(
                    &self.db,
                    claim,
                    Problem::new(format!(
                        "The platform could not be reached in {} attempts: {message}.",
                        row.attempts + 1
                    ))
                    .with_remedy(Remedy::RetryFailedRows {
                        migration_id: row.batch_id,
                    }),
                )
                .await;
        };
        let first = self.config.retry_delays.first().copied().unwrap_or(wait);
        self.pause(&row.platform_key, wait.min(first));
        let at = Utc::now() + TimeDelta::from_std(wait).unwrap_or(TimeDelta::minutes(1));
        self.fenced(claim)
            .col_expr(
                migration_row::Column::Attempts,
                Expr::value(row.attempts + 1),
            )
            .col_expr(migration_row::Column::NextAttempt, Expr::value(at))
            .exec(&self.db)
            .await?;
        tracing::info!(row_id = %row.id, wait_seconds = wait.as_secs(), "a migration row is tried again later");
        Ok(Step::Stop)
    }
}
