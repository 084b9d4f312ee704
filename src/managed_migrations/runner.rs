//! The runner: a background task in every process that advances migration
//! rows. It claims rows under a lease (so with several processes on one
//! database each row is advanced by one of them), takes each through its
//! steps (import, verify, first sync), and moves batches on when their
//! canary or their last row ends.
//!
//! Every step is one transaction fenced by the lease, so a process killed
//! at any point (kill -9 included) leaves each row either before or after
//! a step, never between: its lease lapses and a runner (another process's,
//! or this one's after the restart) takes it from where it stopped. An
//! import records the company and connection it created in the same
//! transaction, so a row is never imported twice.
//!
//! Concurrency is bounded per platform in each process; a platform that
//! cannot be reached (or keeps answering 429 past its `Retry-After`, which
//! the connectors honour first) pauses that platform's rows for a while,
//! and the row is tried again later ([`RETRY_DELAYS`]).

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use chrono::{TimeDelta, Utc};
use sea_orm::sea_query::Expr;
use sea_orm::{
    ActiveEnum, ColumnTrait, ConnectionTrait, DatabaseConnection, DbBackend, EntityTrait,
    QueryFilter, Statement, TransactionTrait,
};
use serde_json::Value;
use tokio::sync::Notify;
use tokio::task::JoinHandle;
use uuid::Uuid;

use entity::pull_operation::PullStatus;
use entity::{migration_batch, migration_row};

use super::{BatchState, RowState, has_ended, remedy_json, sealed_of, target, workable_states};
use crate::companies::{self, CompanyFields};
use crate::connections::{self, credentials};
use crate::crypto::Keyring;
use crate::error::{Error, Problem, Remedy};
use crate::platforms::authorization::AcceptedAuthorization;
use crate::platforms::connector::{ConnectorError, Connectors};
use crate::platforms::kit::oauth;
use crate::sync::operations::{self, requests};
use crate::sync::refresh::{self, Need, RefreshFailure};
use crate::tenant::Tenant;
use crate::vault::{self, Owner};

/// The waits before a row whose platform could not be reached is tried
/// again (it fails after the last): the default of
/// [`MigrationConfig::retry_delays`].
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
    /// Rows of one platform advanced at once by this process (0: this
    /// process runs no migrations).
    pub concurrency_per_platform: usize,
    /// How often an idle runner looks for work.
    pub poll: Duration,
    /// How long a claimed row is this process's: longer than any one step
    /// (a verification with its retries). A killed process's rows are taken
    /// again after it.
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
    db: DatabaseConnection,
    keyring: Arc<Keyring>,
    connectors: Connectors,
    config: MigrationConfig,
    sync_wake: Arc<Notify>,
    wake: Notify,
    stopping: AtomicBool,
    /// This process's name on leases.
    process: String,
    /// Rows in flight per platform.
    in_flight: Mutex<HashMap<String, usize>>,
    /// Platforms paused until a time, after one could not be reached.
    paused: Mutex<HashMap<String, tokio::time::Instant>>,
}

/// What a step did to its row.
enum Step {
    /// The row moved on: take its next step.
    Advanced,
    /// The row is done for now (ended, syncing, or waiting to be tried again).
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
            process: format!("migrations-{}", Uuid::new_v4().simple()),
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

    /// One round: batches whose canary or last row ended move on, finished
    /// first syncs are recorded, and free slots claim rows.
    async fn tick(self: &Arc<Self>) -> anyhow::Result<()> {
        let batches = migration_batch::Entity::find()
            .filter(migration_batch::Column::State.is_in([BatchState::Canary, BatchState::Running]))
            .all(&self.db)
            .await?;
        for batch in &batches {
            self.finish_syncs(batch).await?;
            if self.settle(batch).await? {
                continue;
            }
            self.claim_and_run(batch).await?;
        }
        Ok(())
    }

    /// Moves a batch on when it is its time: a canary that ended makes it
    /// `AwaitingProceed` or `CanaryFailed`, and a running batch none of
    /// whose rows has a step left is `Completed`. `true` if it moved.
    async fn settle(&self, batch: &migration_batch::Model) -> anyhow::Result<bool> {
        match batch.state {
            BatchState::Canary => {
                let Some(canary) = migration_row::Entity::find_by_id(batch.canary_row_id)
                    .one(&self.db)
                    .await?
                else {
                    return Ok(false);
                };
                if !has_ended(canary.state, target(batch, canary.id)) {
                    return Ok(false);
                }
                let (state, failure) = match canary.state {
                    RowState::Failed => (BatchState::CanaryFailed, canary.failure.clone()),
                    _ => (BatchState::AwaitingProceed, None),
                };
                migration_batch::Entity::update_many()
                    .col_expr(migration_batch::Column::State, Expr::value(state))
                    .col_expr(migration_batch::Column::Failure, Expr::value(failure))
                    .filter(migration_batch::Column::Id.eq(batch.id))
                    .filter(migration_batch::Column::State.eq(BatchState::Canary))
                    .exec(&self.db)
                    .await?;
                tracing::info!(migration_id = %batch.id, state = ?state, "a migration's canary ended");
                Ok(true)
            }
            BatchState::Running => {
                let mut open = workable_states(target(batch, Uuid::nil()));
                open.push(RowState::Syncing);
                let remaining = migration_row::Entity::find()
                    .filter(migration_row::Column::BatchId.eq(batch.id))
                    .filter(migration_row::Column::State.is_in(open))
                    .one(&self.db)
                    .await?;
                if remaining.is_some() {
                    return Ok(false);
                }
                migration_batch::Entity::update_many()
                    .col_expr(
                        migration_batch::Column::State,
                        Expr::value(BatchState::Completed),
                    )
                    .col_expr(migration_batch::Column::Completed, Expr::value(Utc::now()))
                    .filter(migration_batch::Column::Id.eq(batch.id))
                    .filter(migration_batch::Column::State.eq(BatchState::Running))
                    .exec(&self.db)
                    .await?;
                tracing::info!(migration_id = %batch.id, "a migration completed");
                Ok(true)
            }
            _ => Ok(false),
        }
    }

    /// Claims the batch's rows that have a step to take, as many as the
    /// platform's free slots allow, and advances them in the background.
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
        if free == 0 {
            return Ok(());
        }
        let canary_only = batch.state == BatchState::Canary;
        let row_target = target(batch, Uuid::nil());
        let import_only = !canary_only && row_target == RowState::Imported;
        let per_slot = if import_only { IMPORT_CHUNK } else { 1 };
        let claimed = self.claim(batch, canary_only, free * per_slot).await?;
        if claimed.is_empty() {
            return Ok(());
        }
        for chunk in claimed.chunks(per_slot) {
            let rows = chunk.to_vec();
            self.enter(&batch.platform_key);
            let runner = self.clone();
            let batch = batch.clone();
            tokio::spawn(async move {
                for row_id in rows {
                    if let Err(error) = runner.advance(&batch, row_id).await {
                        tracing::warn!(%row_id, error = %format!("{error:#}"), "a migration row's step failed; its lease lapses and it is taken again");
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

    /// Leases up to `limit` of the batch's rows with a step to take, in
    /// batch order (`FOR UPDATE SKIP LOCKED` on PostgreSQL, so processes
    /// never claim the same row).
    async fn claim(
        &self,
        batch: &migration_batch::Model,
        canary_only: bool,
        limit: usize,
    ) -> anyhow::Result<Vec<Uuid>> {
        let states: Vec<String> = workable_states(target(
            batch,
            if canary_only {
                batch.canary_row_id
            } else {
                Uuid::nil()
            },
        ))
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
        let lease = TimeDelta::from_std(self.config.lease).unwrap_or(TimeDelta::minutes(1));
        let mut values: Vec<sea_orm::Value> = vec![
            self.process.clone().into(),
            (now + lease).into(),
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

    /// Takes the row through its steps until it ends, waits, or syncs.
    async fn advance(&self, batch: &migration_batch::Model, row_id: Uuid) -> anyhow::Result<()> {
        loop {
            let Some(row) = migration_row::Entity::find_by_id(row_id)
                .filter(migration_row::Column::LeaseOwner.eq(self.process.as_str()))
                .one(&self.db)
                .await?
            else {
                return Ok(());
            };
            let goal = target(batch, row.id);
            if has_ended(row.state, goal) || self.stopping.load(Ordering::SeqCst) {
                self.release(&row).await?;
                return Ok(());
            }
            let step = match row.state {
                RowState::Pending => self.import(&row).await?,
                RowState::Imported if batch.verify || row.id == batch.canary_row_id => {
                    self.verify(batch, &row).await?
                }
                RowState::Imported | RowState::Verified => self.queue_sync(&row).await?,
                _ => Step::Stop,
            };
            if let Step::Stop = step {
                self.release(&row).await?;
                return Ok(());
            }
        }
    }

    /// Gives up the row's lease.
    async fn release(&self, row: &migration_row::Model) -> anyhow::Result<()> {
        migration_row::Entity::update_many()
            .col_expr(
                migration_row::Column::LeaseOwner,
                Expr::value(None::<String>),
            )
            .col_expr(
                migration_row::Column::LeaseExpires,
                Expr::value(None::<chrono::DateTime<Utc>>),
            )
            .filter(migration_row::Column::Id.eq(row.id))
            .filter(migration_row::Column::LeaseOwner.eq(self.process.as_str()))
            .exec(&self.db)
            .await?;
        Ok(())
    }

    /// The row's update, fenced by this process's lease and the state read.
    fn fenced(&self, row: &migration_row::Model) -> sea_orm::UpdateMany<migration_row::Entity> {
        migration_row::Entity::update_many()
            .col_expr(migration_row::Column::Updated, Expr::value(Utc::now()))
            .filter(migration_row::Column::Id.eq(row.id))
            .filter(migration_row::Column::LeaseOwner.eq(self.process.as_str()))
            .filter(migration_row::Column::State.eq(row.state))
    }

    /// Ends the row `Failed` with `problem` (its waiting tokens stay sealed,
    /// so a retry can import them).
    async fn fail(
        &self,
        db: &impl ConnectionTrait,
        row: &migration_row::Model,
        problem: Problem,
    ) -> anyhow::Result<Step> {
        tracing::info!(row_id = %row.id, migration_id = %row.batch_id, state = ?row.state, "a migration row failed");
        self.fenced(row)
            .col_expr(migration_row::Column::State, Expr::value(RowState::Failed))
            .col_expr(migration_row::Column::Failure, Expr::value(problem.message))
            .col_expr(
                migration_row::Column::Remedy,
                Expr::value(problem.remedy.as_ref().and_then(remedy_json)),
            )
            .exec(db)
            .await?;
        Ok(Step::Stop)
    }

    /// The platform could not be reached: the row waits and is tried again,
    /// or fails once it has been tried enough.
    async fn unavailable(
        &self,
        row: &migration_row::Model,
        message: String,
    ) -> anyhow::Result<Step> {
        let attempt = usize::try_from(row.attempts).unwrap_or(0);
        let Some(wait) = self.config.retry_delays.get(attempt).copied() else {
            return self
                .fail(
                    &self.db,
                    row,
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
        self.fenced(row)
            .col_expr(
                migration_row::Column::Attempts,
                Expr::value(row.attempts + 1),
            )
            .col_expr(migration_row::Column::NextAttempt, Expr::value(at))
            .exec(&self.db)
            .await?;
        tracing::info!(row_id = %row.id, wait_seconds = wait.as_secs(), "a migration row's platform could not be reached; it is tried again later");
        Ok(Step::Stop)
    }

    /// Step: the row's company (named, reused from an earlier batch's row
    /// of the same reference, or created), its connection (reused or
    /// created), its tokens stored on the connection and dropped from the
    /// row: one transaction.
    async fn import(&self, row: &migration_row::Model) -> anyhow::Result<Step> {
        let tenant = Tenant {
            client_id: row.client_id,
        };
        let Some(sealed) = sealed_of(row) else {
            return self
                .fail(
                    &self.db,
                    row,
                    Problem::new("The row's tokens are no longer held (its batch was cancelled).")
                        .with_remedy(Remedy::ResendRow),
                )
                .await;
        };
        let body: Value = vault::open_json(&self.keyring, Owner::MigrationRow(row.id), &sealed)?;
        let accepted = AcceptedAuthorization {
            organization_id: row.organization_id.clone(),
            access_token_expires_at: oauth::expires_at(&body),
            sealed_body: body,
        };
        let now = Utc::now();
        let txn = self.db.begin().await?;
        // Written first: the fence, and SQLite's write lock before any read.
        let fenced = self.fenced(row).exec(&txn).await?;
        if fenced.rows_affected == 0 {
            return Ok(Step::Stop);
        }
        let (company_id, reuse_connection) = match self.company_of(&txn, tenant, row).await {
            Ok(found) => found,
            Err(Error::NotFound(problem)) => {
                self.fail(&txn, row, problem).await?;
                txn.commit().await?;
                return Ok(Step::Stop);
            }
            Err(error) => return Err(anyhow::Error::new(error)),
        };
        let existing = connections::of_platform(&txn, company_id, &row.platform_key).await?;
        let connection = match reuse_connection
            .and_then(|id| existing.iter().find(|connection| connection.id == id))
            .or_else(|| existing.first())
        {
            Some(connection) => connection.clone(),
            None => connections::insert(&txn, tenant, company_id, &row.platform_key).await?,
        };
        let connection = connections::authorization::link(
            &txn,
            &self.keyring,
            tenant,
            connection,
            &accepted,
            now,
        )
        .await?;
        migration_row::Entity::update_many()
            .col_expr(
                migration_row::Column::State,
                Expr::value(RowState::Imported),
            )
            .col_expr(migration_row::Column::CompanyId, Expr::value(company_id))
            .col_expr(
                migration_row::Column::ConnectionId,
                Expr::value(connection.id),
            )
            .col_expr(migration_row::Column::KeyId, Expr::value(None::<String>))
            .col_expr(migration_row::Column::Nonce, Expr::value(None::<Vec<u8>>))
            .col_expr(
                migration_row::Column::Ciphertext,
                Expr::value(None::<Vec<u8>>),
            )
            .col_expr(migration_row::Column::Imported, Expr::value(now))
            .col_expr(migration_row::Column::Attempts, Expr::value(0))
            .filter(migration_row::Column::Id.eq(row.id))
            .exec(&txn)
            .await?;
        txn.commit().await?;
        Ok(Step::Advanced)
    }

    /// The row's company, and the connection an earlier row of the same
    /// reference imported (to reuse), creating the company if there is none.
    async fn company_of(
        &self,
        db: &impl ConnectionTrait,
        tenant: Tenant,
        row: &migration_row::Model,
    ) -> Result<(Uuid, Option<Uuid>), Error> {
        if let Some(company_id) = row.company_id {
            companies::find(db, tenant, company_id).await.map_err(|_| {
                Error::NotFound(
                    Problem::new(format!(
                        "Company {company_id}, named by this row, no longer exists."
                    ))
                    .with_remedy(Remedy::ResendRow),
                )
            })?;
            return Ok((company_id, None));
        }
        let earlier = migration_row::Entity::find()
            .filter(migration_row::Column::ClientId.eq(row.client_id))
            .filter(migration_row::Column::PlatformKey.eq(row.platform_key.as_str()))
            .filter(migration_row::Column::ExternalReference.eq(row.external_reference.as_str()))
            .filter(migration_row::Column::ConnectionId.is_not_null())
            .filter(migration_row::Column::Id.ne(row.id))
            .all(db)
            .await?;
        for earlier in earlier.iter().rev() {
            if let Some(company_id) = earlier.company_id
                && companies::find(db, tenant, company_id).await.is_ok()
            {
                return Ok((company_id, earlier.connection_id));
            }
        }
        let name = row
            .company_name
            .clone()
            .unwrap_or_else(|| row.external_reference.clone());
        let fields = CompanyFields::parse(&name, None)?;
        let company = companies::insert(db, tenant, fields).await?;
        Ok((company.id, None))
    }

    /// Step: proves the stored tokens with the platform, refreshing them
    /// first (with the tenant's OAuth client) when they expire soon.
    async fn verify(
        &self,
        batch: &migration_batch::Model,
        row: &migration_row::Model,
    ) -> anyhow::Result<Step> {
        let Some(connection_id) = row.connection_id else {
            return self
                .fail(&self.db, row, Problem::new("The row has no connection."))
                .await;
        };
        let Some(connector) = self.connectors.get(&row.platform_key) else {
            return self
                .fail(
                    &self.db,
                    row,
                    Problem::new("tributary has no connector for this platform to verify with."),
                )
                .await;
        };
        let Some(opened) = credentials::read(&self.db, &self.keyring, connection_id).await? else {
            return self
                .fail(
                    &self.db,
                    row,
                    Problem::new(format!(
                        "Connection {connection_id} no longer holds the imported tokens (it was deleted or \
                         unlinked)."
                    ))
                    .with_remedy(Remedy::ResendRow),
                )
                .await;
        };
        let mut body = opened.body;
        let mut refreshed = false;
        if let Some(endpoint) = connector.token_endpoint(&body) {
            let subject = refresh::Subject {
                connection_id,
                tenant_client_id: row.client_id,
                platform_key: &row.platform_key,
            };
            match refresh::fresh_credentials(
                &self.db,
                &self.keyring,
                subject,
                &endpoint,
                Need::IfExpiring,
            )
            .await
            {
                Ok(fresh) => {
                    refreshed = fresh != body;
                    body = fresh;
                }
                Err(RefreshFailure::Platform(error)) => {
                    return self
                        .platform_failed(batch, row, connection_id, error, true)
                        .await;
                }
                Err(RefreshFailure::NoOAuthClient(problem)) => {
                    return self.fail(&self.db, row, problem).await;
                }
                Err(RefreshFailure::Internal(cause)) => anyhow::bail!(cause),
            }
        }
        let outcome = match connector.verify(&body) {
            Some(check) => check.await,
            None => Ok(()),
        };
        if let Err(error) = outcome {
            return self
                .platform_failed(batch, row, connection_id, error, refreshed)
                .await;
        }
        self.fenced(row)
            .col_expr(
                migration_row::Column::State,
                Expr::value(RowState::Verified),
            )
            .col_expr(migration_row::Column::Verified, Expr::value(Utc::now()))
            .col_expr(migration_row::Column::Refreshed, Expr::value(refreshed))
            .col_expr(migration_row::Column::Attempts, Expr::value(0))
            .exec(&self.db)
            .await?;
        Ok(Step::Advanced)
    }

    /// The platform refused or could not be reached while verifying.
    async fn platform_failed(
        &self,
        batch: &migration_batch::Model,
        row: &migration_row::Model,
        connection_id: Uuid,
        error: ConnectorError,
        refreshing: bool,
    ) -> anyhow::Result<Step> {
        let platform = crate::platforms::find(&batch.platform_key)
            .map(|platform| platform.name)
            .unwrap_or("The platform");
        match error {
            ConnectorError::Unavailable(message) => self.unavailable(row, message).await,
            ConnectorError::Auth(message) | ConnectorError::Expired(message) => {
                let hint = if refreshing {
                    " An `invalid_grant` on refresh usually means another application refreshed these tokens \
                     first: check that syncing is disabled in the old application (checklist step 4)."
                } else {
                    ""
                };
                let txn = self.db.begin().await?;
                self.fail(
                    &txn,
                    row,
                    Problem::new(format!("{platform} rejected the tokens: {message}.{hint}"))
                        .with_remedy(Remedy::ResendRow),
                )
                .await?;
                connections::deauthorize(&txn, connection_id).await?;
                txn.commit().await?;
                Ok(Step::Stop)
            }
            ConnectorError::Failed(message) => {
                self.fail(
                    &self.db,
                    row,
                    Problem::new(format!(
                        "{platform} could not verify the tokens: {message}."
                    ))
                    .with_remedy(Remedy::RetryFailedRows {
                        migration_id: row.batch_id,
                    }),
                )
                .await
            }
        }
    }

    /// Step: queues the connection's first sync (every data type); the row
    /// is `Syncing` until [`Self::finish_syncs`] sees the request complete.
    async fn queue_sync(&self, row: &migration_row::Model) -> anyhow::Result<Step> {
        let (Some(company_id), Some(connection_id)) = (row.company_id, row.connection_id) else {
            return self
                .fail(&self.db, row, Problem::new("The row has no connection."))
                .await;
        };
        let tenant = Tenant {
            client_id: row.client_id,
        };
        let request_id =
            match operations::queue_connection(&self.db, tenant, company_id, connection_id).await {
                Ok(request_id) => request_id,
                Err(Error::Conflict(problem) | Error::NotFound(problem)) => {
                    return self
                        .fail(
                            &self.db,
                            row,
                            Problem::new(format!(
                                "Its first sync could not be queued: {}",
                                problem.message
                            ))
                            .with_remedy(Remedy::ResendRow),
                        )
                        .await;
                }
                Err(error) => return Err(anyhow::Error::new(error)),
            };
        self.sync_wake.notify_waiters();
        self.fenced(row)
            .col_expr(migration_row::Column::State, Expr::value(RowState::Syncing))
            .col_expr(
                migration_row::Column::SyncRequestId,
                Expr::value(request_id),
            )
            .exec(&self.db)
            .await?;
        Ok(Step::Stop)
    }

    /// Records the first syncs of the batch's `Syncing` rows that have
    /// completed: `Synced` with the records per data type, or `Failed`
    /// with the operations' reasons.
    async fn finish_syncs(&self, batch: &migration_batch::Model) -> anyhow::Result<()> {
        let syncing = migration_row::Entity::find()
            .filter(migration_row::Column::BatchId.eq(batch.id))
            .filter(migration_row::Column::State.eq(RowState::Syncing))
            .all(&self.db)
            .await?;
        for row in syncing {
            let Some(request_id) = row.sync_request_id else {
                continue;
            };
            let Some(operations) = requests::outcome(&self.db, request_id).await? else {
                continue;
            };
            let mut records: std::collections::BTreeMap<String, i64> = Default::default();
            let mut failures = Vec::new();
            let mut rejected = false;
            for operation in &operations {
                match operation.status {
                    PullStatus::Complete => {
                        *records.entry(operation.data_type.clone()).or_default() +=
                            operation.records_fetched;
                    }
                    PullStatus::NotSupported => {}
                    status => {
                        rejected |= status == PullStatus::AuthError;
                        failures.push(format!(
                            "{}: {}",
                            operation.data_type,
                            operation
                                .error_message
                                .clone()
                                .unwrap_or_else(|| status.to_value())
                        ));
                    }
                }
            }
            let records_json = serde_json::to_string(&records)?;
            let mut update = migration_row::Entity::update_many()
                .col_expr(migration_row::Column::Records, Expr::value(records_json))
                .col_expr(migration_row::Column::Updated, Expr::value(Utc::now()))
                .filter(migration_row::Column::Id.eq(row.id))
                .filter(migration_row::Column::State.eq(RowState::Syncing));
            if failures.is_empty() {
                update = update
                    .col_expr(migration_row::Column::State, Expr::value(RowState::Synced))
                    .col_expr(migration_row::Column::Synced, Expr::value(Utc::now()));
            } else {
                let remedy = if rejected {
                    Remedy::ResendRow
                } else {
                    Remedy::RetryFailedRows {
                        migration_id: row.batch_id,
                    }
                };
                update = update
                    .col_expr(migration_row::Column::State, Expr::value(RowState::Failed))
                    .col_expr(
                        migration_row::Column::Failure,
                        Expr::value(format!("Its first sync failed: {}", failures.join("; "))),
                    )
                    .col_expr(
                        migration_row::Column::Remedy,
                        Expr::value(remedy_json(&remedy)),
                    );
            }
            update.exec(&self.db).await?;
        }
        Ok(())
    }
}

/// Puts the batch's failed rows (or only `only`) back at the step each
/// failed at: `Pending` if it was never imported, else `Imported`.
pub(super) async fn reset_failed(
    db: &impl ConnectionTrait,
    migration_id: Uuid,
    only: Option<Uuid>,
) -> Result<(), Error> {
    for (imported, state) in [(false, RowState::Pending), (true, RowState::Imported)] {
        let mut update = migration_row::Entity::update_many()
            .col_expr(migration_row::Column::State, Expr::value(state))
            .col_expr(migration_row::Column::Failure, Expr::value(None::<String>))
            .col_expr(migration_row::Column::Remedy, Expr::value(None::<String>))
            .col_expr(migration_row::Column::Attempts, Expr::value(0))
            .col_expr(
                migration_row::Column::NextAttempt,
                Expr::value(None::<chrono::DateTime<Utc>>),
            )
            .col_expr(migration_row::Column::Updated, Expr::value(Utc::now()))
            .filter(migration_row::Column::BatchId.eq(migration_id))
            .filter(migration_row::Column::State.eq(RowState::Failed));
        update = if imported {
            update.filter(migration_row::Column::ConnectionId.is_not_null())
        } else {
            update.filter(migration_row::Column::ConnectionId.is_null())
        };
        if let Some(row_id) = only {
            update = update.filter(migration_row::Column::Id.eq(row_id));
        }
        update.exec(db).await?;
    }
    Ok(())
}
