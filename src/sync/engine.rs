//! The sync engine: workers inside `serve` that claim queued pull
//! operations through the database and run them.
//!
//! - **Claiming.** One UPDATE takes the oldest claimable operation (queued,
//!   or fetching under a lease that lapsed) and stamps this worker's lease
//!   on it. On PostgreSQL the inner SELECT uses `FOR UPDATE SKIP LOCKED`, so
//!   several `serve` processes share the queue without taking an operation
//!   twice; on SQLite the single writer serializes the statement.
//! - **Leases.** A running operation's lease is renewed on a heartbeat. Every
//!   write of the run (each staged batch, the final swap) happens only while
//!   this worker still holds the lease, so a worker that stalled past its
//!   lease cannot overwrite the one that took over. An operation whose
//!   worker died is taken over when its lease lapses, and is failed after
//!   [`EngineConfig::max_attempts`] claims, so nothing stays `Fetching`.
//! - **Atomic data.** Records are staged under a new generation and swapped
//!   in by one transaction (see [`super::store`]).

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use chrono::Utc;
use sea_orm::{
    ColumnTrait, ConnectionTrait, DatabaseConnection, DbBackend, EntityTrait, QueryFilter,
    Statement, TransactionTrait,
};
use tokio::sync::Notify;
use tokio::task::JoinHandle;
use uuid::Uuid;

use entity::{company, connection, pull_operation};

use super::connectors::{ConnectorError, Connectors};
use super::operations::PullStatus;
use super::store::{self, Staging, parse_data_type};
use crate::connections::{self, ConnectionStatus};
use crate::crypto::Keyring;
use crate::error::ApiError;
use crate::integrations;
use crate::types::Timestamp;

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
        })
    }

    /// Starts the workers; they run until the runtime stops.
    pub fn start(self: &Arc<Self>) -> Vec<JoinHandle<()>> {
        (0..self.config.workers)
            .map(|index| {
                let engine = Arc::clone(self);
                let worker = format!("{}/{index}", engine.process);
                tokio::spawn(async move { engine.work(worker).await })
            })
            .collect()
    }

    async fn work(self: Arc<Self>, worker: String) {
        loop {
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

    /// Claims the oldest queued (or abandoned) operation for `worker`.
    pub async fn claim(
        &self,
        worker: &str,
    ) -> Result<Option<pull_operation::Model>, sea_orm::DbErr> {
        let backend = self.db.get_database_backend();
        let lock = match backend {
            DbBackend::Postgres => "FOR UPDATE SKIP LOCKED",
            _ => "",
        };
        let now = Utc::now();
        let sql = format!(
            "UPDATE pull_operation SET status = 'Fetching', lease_owner = $1, lease_expires_at = $2, \
             started = COALESCE(started, $3), attempts = attempts + 1 \
             WHERE id = (SELECT id FROM pull_operation \
                         WHERE status = 'Queued' OR (status = 'Fetching' AND lease_expires_at < $3) \
                         ORDER BY requested, id LIMIT 1 {lock}) \
             RETURNING id"
        );
        let lease_until = now + chrono::Duration::from_std(self.config.lease).unwrap_or_default();
        let claimed = self
            .db
            .query_one_raw(Statement::from_sql_and_values(
                backend,
                sql,
                [worker.into(), lease_until.into(), now.into()],
            ))
            .await?;
        let Some(row) = claimed else { return Ok(None) };
        let id: Uuid = row.try_get("", "id")?;
        pull_operation::Entity::find_by_id(id).one(&self.db).await
    }

    async fn run(&self, worker: &str, operation: pull_operation::Model) {
        let id = operation.id;
        if operation.attempts > self.config.max_attempts {
            let message = format!(
                "Abandoned after {} attempts: the workers running it stopped before finishing. Queue it again.",
                self.config.max_attempts
            );
            self.finish(worker, id, PullStatus::Failed, Some(message))
                .await;
            return;
        }
        let lease_lost = Arc::new(AtomicBool::new(false));
        let heartbeat = self.spawn_heartbeat(worker.to_owned(), id, Arc::clone(&lease_lost));
        let outcome = self.sync(worker, &operation, &lease_lost).await;
        heartbeat.abort();
        match outcome {
            Ok(()) => {}
            Err(RunError::LeaseLost) => {
                tracing::warn!(worker, pull_operation_id = %id, "lost the lease; another worker owns the operation");
            }
            Err(RunError::Cancelled(message)) => {
                self.discard_staging(&operation).await;
                self.finish(worker, id, PullStatus::Cancelled, Some(message))
                    .await;
            }
            Err(RunError::Auth(message)) => {
                self.discard_staging(&operation).await;
                if let Err(error) = self.deauthorize(operation.connection_id).await {
                    tracing::error!(worker, error = %error, "marking the connection deauthorized failed");
                }
                self.finish(worker, id, PullStatus::AuthError, Some(message))
                    .await;
            }
            Err(RunError::Failed(message)) => {
                self.discard_staging(&operation).await;
                self.finish(worker, id, PullStatus::Failed, Some(message))
                    .await;
            }
        }
    }

    fn spawn_heartbeat(
        &self,
        worker: String,
        id: Uuid,
        lease_lost: Arc<AtomicBool>,
    ) -> JoinHandle<()> {
        let db = self.db.clone();
        let (lease, every) = (self.config.lease, self.config.heartbeat);
        tokio::spawn(async move {
            loop {
                tokio::time::sleep(every).await;
                let until = Utc::now() + chrono::Duration::from_std(lease).unwrap_or_default();
                let renewed = pull_operation::Entity::update_many()
                    .col_expr(pull_operation::Column::LeaseExpiresAt, until.into())
                    .filter(pull_operation::Column::Id.eq(id))
                    .filter(pull_operation::Column::LeaseOwner.eq(worker.as_str()))
                    .filter(pull_operation::Column::Status.eq(PullStatus::Fetching.as_str()))
                    .exec(&db)
                    .await;
                if !matches!(renewed, Ok(result) if result.rows_affected == 1) {
                    lease_lost.store(true, Ordering::SeqCst);
                    return;
                }
            }
        })
    }

    /// Fetches every page, staging each under this worker's lease, then swaps.
    async fn sync(
        &self,
        worker: &str,
        operation: &pull_operation::Model,
        lease_lost: &AtomicBool,
    ) -> Result<(), RunError> {
        let data_type = parse_data_type(&operation.data_type).ok_or_else(|| {
            RunError::Failed(format!("unknown data type {:?}", operation.data_type))
        })?;
        let connection = connection::Entity::find_by_id(operation.connection_id)
            .one(&self.db)
            .await
            .map_err(RunError::internal)?
            .ok_or_else(|| RunError::Cancelled("The connection was deleted.".to_owned()))?;
        if connection.status != ConnectionStatus::Linked.as_str() {
            return Err(RunError::Cancelled(format!(
                "The connection is {} now; authorize it again and queue a new sync.",
                connection.status
            )));
        }
        let integration = integrations::find(&connection.platform_key).ok_or_else(|| {
            RunError::Failed(format!("unknown platform {:?}", connection.platform_key))
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

        // Leftovers of an abandoned attempt are not part of any generation readers see.
        let current = store::current_generation(&self.db, connection.id, data_type)
            .await
            .map_err(RunError::internal)?;
        store::delete_other_generations(&self.db, connection.id, data_type, current)
            .await
            .map_err(RunError::internal)?;
        let staging = Staging {
            connection_id: connection.id,
            company_id: connection.company_id,
            generation: current + 1,
            modified: Timestamp::now(),
        };

        let mut cursor = None;
        let mut fetched: i64 = 0;
        loop {
            if lease_lost.load(Ordering::SeqCst) {
                return Err(RunError::LeaseLost);
            }
            let page = connector
                .fetch(&credentials, data_type, cursor.take())
                .await
                .map_err(|error| match error {
                    ConnectorError::Auth(message) => RunError::Auth(message),
                    ConnectorError::Failed(message) => RunError::Failed(message),
                })?;
            fetched += page.records.len() as i64;
            let progress = match page.total {
                Some(total) if total > 0 => ((fetched as u64 * 100) / total).min(99) as i32,
                _ => 0,
            };
            // The page is written only while this worker holds the lease:
            // the fenced UPDATE comes first, taking the write lock too.
            let txn = self.db.begin().await.map_err(RunError::internal)?;
            let held = pull_operation::Entity::update_many()
                .col_expr(pull_operation::Column::RecordsFetched, fetched.into())
                .col_expr(pull_operation::Column::Progress, progress.into())
                .filter(pull_operation::Column::Id.eq(operation.id))
                .filter(pull_operation::Column::LeaseOwner.eq(worker))
                .filter(pull_operation::Column::Status.eq(PullStatus::Fetching.as_str()))
                .exec(&txn)
                .await
                .map_err(RunError::internal)?;
            if held.rows_affected == 0 {
                return Err(RunError::LeaseLost);
            }
            store::stage(&txn, staging, page.records)
                .await
                .map_err(RunError::from)?;
            txn.commit().await.map_err(RunError::internal)?;
            match page.next {
                Some(next) => cursor = Some(next),
                None => break,
            }
        }

        let completed = Timestamp::now();
        let txn = self.db.begin().await.map_err(RunError::internal)?;
        let done = pull_operation::Entity::update_many()
            .col_expr(
                pull_operation::Column::Status,
                PullStatus::Complete.as_str().into(),
            )
            .col_expr(pull_operation::Column::Progress, 100.into())
            .col_expr(pull_operation::Column::Completed, completed.into())
            .col_expr(
                pull_operation::Column::LeaseOwner,
                Option::<String>::None.into(),
            )
            .col_expr(
                pull_operation::Column::LeaseExpiresAt,
                Option::<chrono::DateTime<Utc>>::None.into(),
            )
            .filter(pull_operation::Column::Id.eq(operation.id))
            .filter(pull_operation::Column::LeaseOwner.eq(worker))
            .filter(pull_operation::Column::Status.eq(PullStatus::Fetching.as_str()))
            .exec(&txn)
            .await
            .map_err(RunError::internal)?;
        if done.rows_affected == 0 {
            return Err(RunError::LeaseLost);
        }
        store::publish(
            &txn,
            connection.id,
            data_type,
            staging.generation,
            fetched,
            operation.id,
            completed,
        )
        .await
        .map_err(RunError::internal)?;
        connection::Entity::update_many()
            .col_expr(connection::Column::LastSync, completed.into())
            .filter(connection::Column::Id.eq(connection.id))
            .exec(&txn)
            .await
            .map_err(RunError::internal)?;
        company::Entity::update_many()
            .col_expr(company::Column::LastSync, completed.into())
            .filter(company::Column::Id.eq(connection.company_id))
            .exec(&txn)
            .await
            .map_err(RunError::internal)?;
        txn.commit().await.map_err(RunError::internal)?;

        // Readers moved to the new generation; the old one can go.
        if let Err(error) =
            store::delete_other_generations(&self.db, connection.id, data_type, staging.generation)
                .await
        {
            tracing::warn!(error = %error, "deleting superseded records failed; the next sync retries");
        }
        tracing::info!(
            pull_operation_id = %operation.id,
            data_type = store::data_type_name(data_type),
            records = fetched,
            "pull operation complete"
        );
        Ok(())
    }

    async fn discard_staging(&self, operation: &pull_operation::Model) {
        let Some(data_type) = parse_data_type(&operation.data_type) else {
            return;
        };
        let cleanup = async {
            let current =
                store::current_generation(&self.db, operation.connection_id, data_type).await?;
            store::delete_other_generations(&self.db, operation.connection_id, data_type, current)
                .await
        };
        if let Err(error) = cleanup.await {
            tracing::warn!(error = %error, "discarding staged records failed; the next sync retries");
        }
    }

    async fn deauthorize(&self, connection_id: Uuid) -> Result<(), sea_orm::DbErr> {
        connection::Entity::update_many()
            .col_expr(
                connection::Column::Status,
                ConnectionStatus::Deauthorized.as_str().into(),
            )
            .filter(connection::Column::Id.eq(connection_id))
            .exec(&self.db)
            .await
            .map(drop)
    }

    /// Records a final status (only while this worker still holds the operation).
    async fn finish(&self, worker: &str, id: Uuid, status: PullStatus, message: Option<String>) {
        if let Some(message) = &message {
            tracing::warn!(pull_operation_id = %id, status = status.as_str(), message, "pull operation did not complete");
        }
        let result = pull_operation::Entity::update_many()
            .col_expr(pull_operation::Column::Status, status.as_str().into())
            .col_expr(pull_operation::Column::ErrorMessage, message.into())
            .col_expr(pull_operation::Column::Completed, Timestamp::now().into())
            .col_expr(
                pull_operation::Column::LeaseOwner,
                Option::<String>::None.into(),
            )
            .col_expr(
                pull_operation::Column::LeaseExpiresAt,
                Option::<chrono::DateTime<Utc>>::None.into(),
            )
            .filter(pull_operation::Column::Id.eq(id))
            .filter(pull_operation::Column::LeaseOwner.eq(worker))
            .exec(&self.db)
            .await;
        if let Err(error) = result {
            tracing::error!(pull_operation_id = %id, error = %error, "recording the outcome failed");
        }
    }
}

/// How a run ended short of completion.
#[derive(Debug)]
enum RunError {
    /// Another worker owns the operation now; stop without touching it.
    LeaseLost,
    /// Nothing to do any more (connection gone or no longer linked).
    Cancelled(String),
    /// The platform rejected the tokens.
    Auth(String),
    /// Anything else, in words for a person.
    Failed(String),
}

impl RunError {
    fn internal(error: impl std::fmt::Display) -> Self {
        Self::Failed(format!("Internal error while syncing: {error}"))
    }
}

impl From<ApiError> for RunError {
    fn from(error: ApiError) -> Self {
        Self::internal(error)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::integrations::DataType;

    #[test]
    fn the_default_lease_outlives_several_heartbeats() {
        let config = EngineConfig::default();
        assert!(config.lease >= config.heartbeat * 2);
        assert!(config.workers >= 1 && config.max_attempts >= 1);
    }

    #[test]
    fn data_types_round_trip_their_stored_names() {
        for data_type in [DataType::Invoices, DataType::Customers] {
            assert_eq!(
                parse_data_type(store::data_type_name(data_type)),
                Some(data_type)
            );
        }
    }
}
