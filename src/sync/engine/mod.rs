//! The sync engine: workers inside `serve` that claim queued pull
//! operations through the database and run them.
//!
//! - **Claiming.** One UPDATE takes the oldest claimable operation (queued,
//!   or fetching under a lease that lapsed) and stamps this worker's lease
//!   on it. On PostgreSQL the inner SELECT uses `FOR UPDATE SKIP LOCKED`, so
//!   several `serve` processes share the queue without taking an operation
//!   twice; on SQLite the single writer serializes the statement. (Lease
//!   times are compared as stored; every timestamp is written by sqlx in one
//!   RFC 3339 form, whose text order is time order.)
//! - **Leases and fencing.** A running operation's lease is renewed on a
//!   heartbeat. Every write of a run (each staged page, the swap, the final
//!   status, the discard of its staging) happens in a transaction that
//!   re-asserts this worker's lease before it commits (first thing, except
//!   in the swap, which numbers the staged rows before taking the
//!   operation's row lock and rolls everything back if the lease is lost),
//!   so a worker that stalled past its lease cannot touch what the worker
//!   that took over is doing.
//! - **Never stuck.** An operation whose worker died is taken over when its
//!   lease lapses, and failed after [`EngineConfig::max_attempts`] claims; a
//!   panicking run ends `Failed`; on shutdown, workers put their operation
//!   back in the queue between two pages.
//! - **Atomic data.** Records are staged under a new generation and swapped
//!   in by one transaction (see [`crate::store`]).

use std::panic::AssertUnwindSafe;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use chrono::{DateTime, Utc};
use futures_util::FutureExt;
use sea_orm::sea_query::Expr;
use sea_orm::{
    ActiveEnum, ColumnTrait, ConnectionTrait, DatabaseConnection, DbBackend, EntityTrait,
    QueryFilter, Statement, TransactionTrait,
};
use tokio::sync::Notify;
use tokio::task::JoinHandle;
use uuid::Uuid;

use entity::{company, connection, pull_operation};

use super::operations::PullStatus;
use super::refresh::{self, RefreshFailure};
use crate::connections::{self, ConnectionStatus};
use crate::crypto::Keyring;
use crate::data::DataType;
use crate::platforms;
use crate::platforms::connector::{AnyConnector, ConnectorError, Connectors, Page};
use crate::platforms::kit::oauth::{self, TokenEndpoint};
use crate::store::{self, Generations, Staging};
use crate::timestamp::Timestamp;

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
}

impl Default for EngineConfig {
    fn default() -> Self {
        Self {
            workers: 2,
            lease: Duration::from_secs(30),
            heartbeat: Duration::from_secs(10),
            poll: Duration::from_secs(2),
            max_attempts: 3,
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
}

/// Aborts the heartbeat however the run ends (return, error or panic).
struct HeartbeatGuard(JoinHandle<()>);

impl Drop for HeartbeatGuard {
    fn drop(&mut self) {
        self.0.abort();
    }
}

impl Engine {
    /// An engine; `wake` is notified by the API when it queues work.
    pub fn new(
        db: DatabaseConnection,
        keyring: Arc<Keyring>,
        connectors: Connectors,
        config: EngineConfig,
        wake: Arc<Notify>,
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
        })
    }

    /// Starts the workers; they run until [`Engine::stop`].
    pub fn start(self: &Arc<Self>) -> Vec<JoinHandle<()>> {
        (0..self.config.workers)
            .map(|index| {
                let engine = Arc::clone(self);
                let worker = format!("{}/{index}", engine.process);
                tokio::spawn(async move { engine.work(worker).await })
            })
            .collect()
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

    async fn work(self: Arc<Self>, worker: String) {
        while !self.stopping() {
            match self.claim(&worker).await {
                Ok(Some(operation)) => self.run(&worker, operation).await,
                Ok(None) => {
                    let _ = tokio::time::timeout(self.config.poll, self.wake.notified()).await;
                }
                Err(error) => {
                    tracing::error!(worker, error = %error, "claiming a pull operation failed");
                    tokio::time::sleep(self.config.poll).await;
                }
            }
        }
    }

    fn lease_until(&self) -> DateTime<Utc> {
        Utc::now() + chrono::Duration::from_std(self.config.lease).unwrap_or_default()
    }

    /// Claims the oldest queued (or abandoned) operation for `worker`.
    async fn claim(&self, worker: &str) -> Result<Option<pull_operation::Model>, sea_orm::DbErr> {
        let backend = self.db.get_database_backend();
        let lock = match backend {
            DbBackend::Postgres => "FOR UPDATE SKIP LOCKED",
            _ => "",
        };
        let sql = format!(
            "UPDATE pull_operation SET status = 'Fetching', lease_owner = $1, lease_expires_at = $2, \
             started = COALESCE(started, $3), attempts = attempts + 1 \
             WHERE id = (SELECT id FROM pull_operation \
                         WHERE status = 'Queued' OR (status = 'Fetching' AND lease_expires_at < $3) \
                         ORDER BY requested, id LIMIT 1 {lock}) \
             RETURNING id"
        );
        let values = [
            worker.into(),
            self.lease_until().into(),
            Timestamp::now().into(),
        ];
        let claimed = self
            .db
            .query_one_raw(Statement::from_sql_and_values(backend, sql, values))
            .await?;
        let Some(row) = claimed else { return Ok(None) };
        let id: Uuid = row.try_get("", "id")?;
        pull_operation::Entity::find_by_id(id).one(&self.db).await
    }

    async fn run(&self, worker: &str, operation: pull_operation::Model) {
        let id = operation.id;
        let Some(data_type) = DataType::named(&operation.data_type) else {
            let message = format!("Unknown data type {:?}.", operation.data_type);
            self.settle(
                worker,
                &operation,
                Outcome::Final(PullStatus::Failed, message),
                None,
            )
            .await;
            return;
        };
        if operation.attempts > self.config.max_attempts {
            let message = format!(
                "Abandoned after {} attempts: the workers running it stopped before finishing. Queue it again.",
                self.config.max_attempts
            );
            let current = store::current_generation(&self.db, operation.connection_id, data_type)
                .await
                .unwrap_or_default();
            let leftovers = (data_type, Generations::Above(current));
            self.settle(
                worker,
                &operation,
                Outcome::Final(PullStatus::Failed, message),
                Some(leftovers),
            )
            .await;
            return;
        }
        let lease_lost = Arc::new(AtomicBool::new(false));
        let _heartbeat =
            HeartbeatGuard(self.spawn_heartbeat(worker.to_owned(), id, Arc::clone(&lease_lost)));
        let mut staged = None;
        let run =
            AssertUnwindSafe(self.sync(worker, &operation, data_type, &lease_lost, &mut staged));
        let outcome = match run.catch_unwind().await {
            Ok(Ok(())) => return,
            Ok(Err(error)) => error,
            Err(_) => RunError::Internal("the sync panicked".to_owned()),
        };
        let staging = staged.map(|generation| (data_type, Generations::Exactly(generation)));
        let outcome = match outcome {
            RunError::LeaseLost => {
                tracing::warn!(worker, pull_operation_id = %id, "lost the lease; another worker owns the operation");
                return;
            }
            RunError::Interrupted => Outcome::Requeue,
            RunError::Cancelled(message) => Outcome::Final(PullStatus::Cancelled, message),
            RunError::Auth(message) => Outcome::Deauthorize(message),
            RunError::Failed(message) => Outcome::Final(PullStatus::Failed, message),
            RunError::Internal(cause) => {
                tracing::error!(worker, pull_operation_id = %id, cause, "internal error while syncing");
                Outcome::Final(
                    PullStatus::Failed,
                    format!(
                        "An internal error stopped the sync; the server log has it under pull operation {id}."
                    ),
                )
            }
        };
        self.settle(worker, &operation, outcome, staging).await;
    }

    /// Renews the lease until aborted; gives it up only once it has lapsed
    /// without a successful renewal (one failed attempt is retried).
    fn spawn_heartbeat(
        &self,
        worker: String,
        id: Uuid,
        lease_lost: Arc<AtomicBool>,
    ) -> JoinHandle<()> {
        let db = self.db.clone();
        let (lease, every) = (self.config.lease, self.config.heartbeat);
        tokio::spawn(async move {
            let mut held_until = Utc::now() + chrono::Duration::from_std(lease).unwrap_or_default();
            loop {
                tokio::time::sleep(every).await;
                let until = Utc::now() + chrono::Duration::from_std(lease).unwrap_or_default();
                let renewed = pull_operation::Entity::update_many()
                    .col_expr(pull_operation::Column::LeaseExpiresAt, until.into())
                    .filter(pull_operation::Column::Id.eq(id))
                    .filter(pull_operation::Column::LeaseOwner.eq(worker.as_str()))
                    .filter(pull_operation::Column::Status.eq(PullStatus::Fetching))
                    .exec(&db)
                    .await;
                match renewed {
                    Ok(result) if result.rows_affected == 1 => held_until = until,
                    // Someone else owns it now.
                    Ok(_) => break,
                    Err(error) if Utc::now() < held_until => {
                        tracing::warn!(pull_operation_id = %id, error = %error, "renewing the lease failed; retrying");
                    }
                    Err(_) => break,
                }
            }
            lease_lost.store(true, Ordering::SeqCst);
        })
    }

    /// Fetches every page, staging each under this worker's lease, then swaps.
    async fn sync(
        &self,
        worker: &str,
        operation: &pull_operation::Model,
        data_type: DataType,
        lease_lost: &AtomicBool,
        staged: &mut Option<i64>,
    ) -> Result<(), RunError> {
        let connection = connection::Entity::find_by_id(operation.connection_id)
            .one(&self.db)
            .await?
            .ok_or_else(|| RunError::Cancelled("The connection was deleted.".to_owned()))?;
        if connection.status != ConnectionStatus::Linked {
            return Err(RunError::Cancelled(format!(
                "The connection is {} now; authorize it again and queue a new sync.",
                connection.status.to_value()
            )));
        }
        let integration = platforms::find(&connection.platform_key).ok_or_else(|| {
            RunError::Failed(format!("Unknown platform {:?}.", connection.platform_key))
        })?;
        let connector = self
            .connectors
            .get(&connection.platform_key)
            .ok_or_else(|| {
                RunError::Failed(format!(
                    "Syncing from {} is not available yet: tributary has no connector for it.",
                    integration.name
                ))
            })?;
        let credentials = connections::open_credential(&self.db, &self.keyring, connection.id)
            .await
            .map_err(|error| {
                RunError::Failed(format!("The stored authorization cannot be read: {error}."))
            })?
            .ok_or_else(|| {
                RunError::Cancelled("The connection has no stored authorization.".to_owned())
            })?;
        let tenant_client_id = company::Entity::find_by_id(connection.company_id)
            .one(&self.db)
            .await?
            .map(|company| company.client_id)
            .ok_or_else(|| RunError::Cancelled("The company was deleted.".to_owned()))?;
        let mut tokens = Tokens {
            subject: refresh::Subject {
                connection_id: connection.id,
                tenant_client_id,
                platform_key: &connection.platform_key,
            },
            endpoint: connector.token_endpoint(&credentials),
            credentials,
        };
        tokens.refresh(self, refresh::Need::IfExpiring).await?;

        let current = store::current_generation(&self.db, connection.id, data_type).await?;
        let staging = Staging {
            connection_id: connection.id,
            company_id: connection.company_id,
            generation: current + 1,
            modified: Timestamp::now(),
        };
        // Leftovers of abandoned attempts (never published) go first.
        let txn = self.fenced(worker, operation.id, 0, 0).await?;
        store::clear_staging(&txn, connection.id, data_type, None).await?;
        store::delete_generations(&txn, connection.id, data_type, Generations::Above(current))
            .await?;
        txn.commit().await?;
        *staged = Some(staging.generation);

        let staging_started = std::time::Instant::now();
        let mut fetching = std::time::Duration::ZERO;
        let mut cursor = None;
        let mut fetched: i64 = 0;
        loop {
            if lease_lost.load(Ordering::SeqCst) {
                return Err(RunError::LeaseLost);
            }
            if self.stopping() {
                return Err(RunError::Interrupted);
            }
            let fetch_started = std::time::Instant::now();
            let page = tokens
                .fetch(self, connector.as_ref(), data_type, cursor.take())
                .await?;
            fetching += fetch_started.elapsed();
            fetched += page.records.len() as i64;
            let progress = match page.total {
                Some(total) if total > 0 => ((fetched as u64 * 100) / total).min(99) as i32,
                _ => 0,
            };
            let txn = self.fenced(worker, operation.id, fetched, progress).await?;
            store::stage(&txn, staging, &page.records)
                .await
                .map_err(|error| RunError::Internal(error.to_string()))?;
            txn.commit().await?;
            match page.next {
                Some(next) => cursor = Some(next),
                None => break,
            }
        }

        let staged_in = staging_started.elapsed();
        let publish_started = std::time::Instant::now();
        let completed = Timestamp::now();
        let txn = self.db.begin().await?;
        // The long part first: the operation's row is locked only from the
        // fenced update on, so heartbeats keep renewing the lease meanwhile.
        let published =
            store::number_staged(&txn, connection.id, data_type, staging.generation).await?;
        let done = pull_operation::Entity::update_many()
            .col_expr(
                pull_operation::Column::Status,
                Expr::value(PullStatus::Complete),
            )
            .col_expr(pull_operation::Column::Progress, 100.into())
            .col_expr(pull_operation::Column::Completed, completed.into())
            .col_expr(
                pull_operation::Column::LeaseOwner,
                Option::<String>::None.into(),
            )
            .col_expr(
                pull_operation::Column::LeaseExpiresAt,
                Option::<DateTime<Utc>>::None.into(),
            )
            .filter(pull_operation::Column::Id.eq(operation.id))
            .filter(pull_operation::Column::LeaseOwner.eq(worker))
            .filter(pull_operation::Column::Status.eq(PullStatus::Fetching))
            .exec(&txn)
            .await?;
        if done.rows_affected == 0 {
            return Err(RunError::LeaseLost);
        }
        store::publish(
            &txn,
            connection.id,
            data_type,
            staging.generation,
            published as i64,
            operation.id,
            completed,
        )
        .await?;
        connection::Entity::update_many()
            .col_expr(connection::Column::LastSync, completed.into())
            .filter(connection::Column::Id.eq(connection.id))
            .exec(&txn)
            .await?;
        company::Entity::update_many()
            .col_expr(company::Column::LastSync, completed.into())
            .filter(company::Column::Id.eq(connection.company_id))
            .exec(&txn)
            .await?;
        txn.commit().await?;
        *staged = None;
        let published_in = publish_started.elapsed();
        let cleanup_started = std::time::Instant::now();

        // Readers moved to the new generation; only older ones go (a later
        // sync may already be staging a newer one), and the moved staging.
        let superseded = Generations::Below(staging.generation);
        let cleared = match store::clear_staging(
            &self.db,
            connection.id,
            data_type,
            Some(staging.generation),
        )
        .await
        {
            Ok(()) => {
                store::delete_generations(&self.db, connection.id, data_type, superseded).await
            }
            Err(error) => Err(error),
        };
        if let Err(error) = cleared {
            tracing::warn!(error = %error, "deleting superseded records failed; the next sync retries");
        }
        tracing::info!(
            pull_operation_id = %operation.id,
            data_type = data_type.name(),
            records = published,
            fetch_ms = fetching.as_millis() as u64,
            staging_ms = staged_in.as_millis() as u64,
            publish_ms = published_in.as_millis() as u64,
            cleanup_ms = cleanup_started.elapsed().as_millis() as u64,
            "pull operation complete"
        );
        Ok(())
    }

    /// A transaction that starts by re-asserting this worker's lease (and
    /// recording progress); `LeaseLost` if another worker owns the operation.
    async fn fenced(
        &self,
        worker: &str,
        id: Uuid,
        fetched: i64,
        progress: i32,
    ) -> Result<sea_orm::DatabaseTransaction, RunError> {
        let txn = self.db.begin().await?;
        if txn.get_database_backend() == DbBackend::Postgres {
            // A staged page need not reach the disk before the next one is
            // fetched: after a crash the run restarts and discards its
            // staging anyway (unlogged on PostgreSQL). The swap stays durable.
            txn.execute_unprepared("SET LOCAL synchronous_commit = off")
                .await?;
        }
        let held = pull_operation::Entity::update_many()
            .col_expr(pull_operation::Column::RecordsFetched, fetched.into())
            .col_expr(pull_operation::Column::Progress, progress.into())
            .filter(pull_operation::Column::Id.eq(id))
            .filter(pull_operation::Column::LeaseOwner.eq(worker))
            .filter(pull_operation::Column::Status.eq(PullStatus::Fetching))
            .exec(&txn)
            .await?;
        if held.rows_affected == 0 {
            return Err(RunError::LeaseLost);
        }
        Ok(txn)
    }

    /// Ends a run that did not complete, in one transaction that only
    /// applies while this worker still holds the operation: records the
    /// outcome, discards the run's staged rows, and deauthorizes the
    /// connection when the platform rejected its tokens.
    async fn settle(
        &self,
        worker: &str,
        operation: &pull_operation::Model,
        outcome: Outcome,
        staging: Option<(DataType, Generations)>,
    ) {
        let result: Result<(), sea_orm::DbErr> = async {
            let txn = self.db.begin().await?;
            let mut update = pull_operation::Entity::update_many()
                .col_expr(
                    pull_operation::Column::LeaseOwner,
                    Option::<String>::None.into(),
                )
                .col_expr(
                    pull_operation::Column::LeaseExpiresAt,
                    Option::<DateTime<Utc>>::None.into(),
                );
            update = match &outcome {
                Outcome::Requeue => update
                    .col_expr(
                        pull_operation::Column::Status,
                        Expr::value(PullStatus::Queued),
                    )
                    .col_expr(pull_operation::Column::Progress, 0.into())
                    .col_expr(pull_operation::Column::RecordsFetched, 0_i64.into())
                    .col_expr(
                        pull_operation::Column::Attempts,
                        (operation.attempts - 1).max(0).into(),
                    ),
                Outcome::Final(status, message) => update
                    .col_expr(pull_operation::Column::Status, Expr::value(*status))
                    .col_expr(
                        pull_operation::Column::ErrorMessage,
                        Some(message.clone()).into(),
                    )
                    .col_expr(pull_operation::Column::Completed, Timestamp::now().into()),
                Outcome::Deauthorize(message) => update
                    .col_expr(
                        pull_operation::Column::Status,
                        Expr::value(PullStatus::AuthError),
                    )
                    .col_expr(
                        pull_operation::Column::ErrorMessage,
                        Some(message.clone()).into(),
                    )
                    .col_expr(pull_operation::Column::Completed, Timestamp::now().into()),
            };
            let held = update
                .filter(pull_operation::Column::Id.eq(operation.id))
                .filter(pull_operation::Column::LeaseOwner.eq(worker))
                .exec(&txn)
                .await?;
            if held.rows_affected == 0 {
                // Another worker owns it now: leave everything to it.
                return Ok(());
            }
            if let Some((data_type, which)) = staging {
                store::delete_generations(&txn, operation.connection_id, data_type, which).await?;
            }
            if let Outcome::Deauthorize(_) = outcome {
                connection::Entity::update_many()
                    .col_expr(
                        connection::Column::Status,
                        Expr::value(ConnectionStatus::Deauthorized),
                    )
                    .filter(connection::Column::Id.eq(operation.connection_id))
                    .exec(&txn)
                    .await?;
            }
            txn.commit().await
        }
        .await;
        match (&outcome, result) {
            (_, Err(error)) => {
                tracing::error!(pull_operation_id = %operation.id, error = %error, "recording the outcome failed");
            }
            (Outcome::Requeue, Ok(())) => {
                tracing::info!(pull_operation_id = %operation.id, "shutting down: pull operation back in the queue");
            }
            (Outcome::Final(status, message), Ok(())) => {
                tracing::warn!(pull_operation_id = %operation.id, status = %status.to_value(), message, "pull operation did not complete");
            }
            (Outcome::Deauthorize(message), Ok(())) => {
                tracing::warn!(pull_operation_id = %operation.id, message, "platform rejected the tokens; connection deauthorized");
            }
        }
    }
}

/// A run's credentials, refreshed as needed.
struct Tokens<'a> {
    subject: refresh::Subject<'a>,
    /// Where the platform refreshes tokens; `None` where they are not refreshed.
    endpoint: Option<TokenEndpoint>,
    credentials: serde_json::Value,
}

impl Tokens<'_> {
    async fn refresh(&mut self, engine: &Engine, need: refresh::Need<'_>) -> Result<(), RunError> {
        let Some(endpoint) = &self.endpoint else {
            return Ok(());
        };
        self.credentials =
            refresh::fresh_credentials(&engine.db, &engine.keyring, self.subject, endpoint, need)
                .await
                .map_err(|failure| match failure {
                    RefreshFailure::Platform(error) => RunError::from(error),
                    RefreshFailure::Internal(cause) => RunError::Internal(cause),
                })?;
        Ok(())
    }

    /// One page; a rejected access token is refreshed once and the page asked again.
    async fn fetch(
        &mut self,
        engine: &Engine,
        connector: &dyn AnyConnector,
        data_type: DataType,
        cursor: Option<String>,
    ) -> Result<Page, RunError> {
        match connector
            .fetch(&self.credentials, data_type, cursor.clone())
            .await
        {
            Err(ConnectorError::Expired(_)) if self.endpoint.is_some() => {
                tracing::info!(connection_id = %self.subject.connection_id, "the platform rejected the access token; refreshing");
                let rejected = oauth::access_token(&self.credentials)
                    .map(str::to_owned)
                    .map_err(RunError::from)?;
                self.refresh(engine, refresh::Need::Rejected(&rejected))
                    .await?;
                connector
                    .fetch(&self.credentials, data_type, cursor)
                    .await
                    .map_err(RunError::from)
            }
            other => other.map_err(RunError::from),
        }
    }
}

impl From<ConnectorError> for RunError {
    fn from(error: ConnectorError) -> Self {
        match error {
            ConnectorError::Auth(message) | ConnectorError::Expired(message) => Self::Auth(message),
            ConnectorError::Failed(message) | ConnectorError::Unavailable(message) => {
                Self::Failed(message)
            }
        }
    }
}

/// How a run that did not complete is recorded.
enum Outcome {
    /// Back to the queue (shutdown); the attempt does not count.
    Requeue,
    /// A final status with its message.
    Final(PullStatus, String),
    /// `AuthError`, and the connection becomes `Deauthorized`.
    Deauthorize(String),
}

/// How a run ended short of completion.
#[derive(Debug)]
enum RunError {
    /// Another worker owns the operation now; stop without touching it.
    LeaseLost,
    /// The process is shutting down.
    Interrupted,
    /// Nothing to do any more (connection gone or no longer linked).
    Cancelled(String),
    /// The platform rejected the tokens.
    Auth(String),
    /// The platform or its data failed, in words for a person.
    Failed(String),
    /// A bug or a database failure; logged, not shown.
    Internal(String),
}

impl From<sea_orm::DbErr> for RunError {
    fn from(error: sea_orm::DbErr) -> Self {
        Self::Internal(error.to_string())
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
