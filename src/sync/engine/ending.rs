//! How a run that did not complete ends: recorded in one transaction that
//! only applies while this worker still holds the operation (its status and
//! why, the discard of its staging, and, when the platform rejected the
//! tokens, the connection `Deauthorized`), or left alone when another worker
//! owns it now.

use sea_orm::{ActiveEnum, ConnectionTrait, TransactionTrait};
use serde_json::json;

use entity::pull_operation::{self, PullStatus};

use super::Engine;
use crate::data::DataType;
use crate::error::Problem;
use crate::platforms::connector::ConnectorError;
use crate::store::{self, Generations};
use crate::sync::operations::issues::{self, Issues};
use crate::sync::operations::lease::{self, Ending};
use crate::sync::operations::requests;
use crate::webhooks::{self, Event, EventType};
use crate::{companies, connections};

/// How a run ended short of completion.
#[derive(Debug)]
pub(super) enum RunError {
    /// Another worker owns the operation now; stop without touching it.
    LeaseLost,
    /// The process is shutting down.
    Interrupted,
    /// Nothing to do any more (connection gone or no longer linked).
    Cancelled(String),
    /// The platform rejected the tokens.
    Auth(String),
    /// The platform or its data failed, in words for a person.
    Failed(Problem),
    /// The platform's quota for the organization is spent; the problem says
    /// when the sync can continue.
    RateLimited(Problem),
    /// The platform refused the data type to the consent (a scope it lacks);
    /// the connection stays linked.
    Permissions(Problem),
    /// A bug or a database failure; logged, not shown.
    Internal(String),
}

impl RunError {
    /// How the operation ends, in a word (the metrics' `outcome`).
    pub(super) fn name(&self) -> &'static str {
        match self {
            Self::LeaseLost => "LeaseLost",
            Self::Interrupted => "Requeued",
            Self::Cancelled(_) => "Cancelled",
            Self::Auth(_) => "AuthError",
            Self::RateLimited(_) => "RateLimitError",
            Self::Permissions(_) => "PermissionsError",
            Self::Failed(_) | Self::Internal(_) => "Failed",
        }
    }
}

impl From<sea_orm::DbErr> for RunError {
    fn from(error: sea_orm::DbErr) -> Self {
        Self::Internal(error.to_string())
    }
}

impl From<ConnectorError> for RunError {
    fn from(error: ConnectorError) -> Self {
        match error {
            ConnectorError::Auth(message) | ConnectorError::Expired(message) => Self::Auth(message),
            ConnectorError::Failed(message) | ConnectorError::Unavailable(message) => {
                Self::Failed(Problem::new(message))
            }
            ConnectorError::RateLimited(message) => Self::RateLimited(Problem::new(message)),
            ConnectorError::Permissions(message) => Self::Permissions(Problem::new(format!(
                "{message}. The connection's consent does not cover this data type: its other data types \
                 still sync; to sync this one, reauthorize the connection with the platform's read access to it"
            ))),
        }
    }
}

impl Engine {
    /// Records how `worker`'s run of `operation` ended (with the records
    /// it could not read), and discards `staging` (the run's staged
    /// generation, or leftovers of earlier runs).
    pub(super) async fn end(
        &self,
        worker: &str,
        operation: &pull_operation::Model,
        error: RunError,
        staging: Option<(DataType, Generations)>,
        issues: &Issues,
    ) {
        let id = operation.id;
        let (ending, deauthorize) = match error {
            RunError::LeaseLost => {
                tracing::warn!(worker, pull_operation_id = %id, "lost the lease; another worker owns the operation");
                return;
            }
            RunError::Interrupted => (
                Ending::Requeue {
                    attempts_before: (operation.attempts - 1).max(0),
                },
                false,
            ),
            RunError::Cancelled(message) => (
                Ending::Failed(PullStatus::Cancelled, Problem::new(message)),
                false,
            ),
            RunError::Auth(message) => (
                Ending::Failed(PullStatus::AuthError, Problem::new(message)),
                true,
            ),
            RunError::Failed(problem) => (Ending::Failed(PullStatus::Failed, problem), false),
            RunError::RateLimited(problem) => {
                (Ending::Failed(PullStatus::RateLimitError, problem), false)
            }
            RunError::Permissions(problem) => {
                (Ending::Failed(PullStatus::PermissionsError, problem), false)
            }
            RunError::Internal(cause) => {
                tracing::error!(worker, pull_operation_id = %id, cause, "internal error while syncing");
                let problem = Problem::new(format!(
                    "An internal error stopped the sync; the server log has it under pull operation {id}."
                ));
                (Ending::Failed(PullStatus::Failed, problem), false)
            }
        };
        let recorded = self
            .record(worker, operation, &ending, deauthorize, staging, issues)
            .await;
        match (&ending, recorded) {
            (_, Err(error)) => {
                tracing::error!(pull_operation_id = %id, error = %error, "recording the outcome failed");
            }
            (_, Ok(false)) => {}
            (Ending::Requeue { .. }, Ok(true)) => {
                tracing::info!(pull_operation_id = %id, "shutting down: pull operation back in the queue");
            }
            (Ending::Failed(PullStatus::AuthError, problem), Ok(true)) => {
                tracing::warn!(pull_operation_id = %id, message = problem.message, "platform rejected the tokens; connection deauthorized");
            }
            (Ending::Failed(status, problem), Ok(true)) => {
                tracing::warn!(pull_operation_id = %id, status = %status.to_value(), message = problem.message, "pull operation did not complete");
            }
            (Ending::Complete(_), Ok(true)) => {}
        }
    }

    /// The ending's one transaction; `false` when another worker owns the
    /// operation now and nothing was written.
    async fn record(
        &self,
        worker: &str,
        operation: &pull_operation::Model,
        ending: &Ending,
        deauthorize: bool,
        staging: Option<(DataType, Generations)>,
        issues: &Issues,
    ) -> Result<bool, sea_orm::DbErr> {
        let txn = self.db.begin().await?;
        if matches!(ending, Ending::Failed(..)) {
            issues::record(&txn, operation.id, worker, issues).await?;
        }
        if !lease::end(&txn, operation.id, worker, ending).await? {
            // Another worker owns it now: leave everything to it.
            return Ok(false);
        }
        if let Some((data_type, which)) = staging {
            store::delete_generations(&txn, operation.connection_id, data_type, which).await?;
        }
        if deauthorize {
            connections::deauthorize(&txn, operation.connection_id).await?;
        }
        let failure = match ending {
            Ending::Failed(status, problem) => Some((*status, problem)),
            _ => None,
        };
        announce_end(&txn, operation, failure, deauthorize).await?;
        txn.commit().await?;
        Ok(true)
    }
}

/// Inside the transaction that ended `operation`: the events its end causes
/// (`dataType.syncFailed`, `connection.deauthorized`) and, when it was the
/// last of a sync request, `read.completed`.
pub(super) async fn announce_end(
    db: &impl ConnectionTrait,
    operation: &pull_operation::Model,
    failure: Option<(PullStatus, &Problem)>,
    deauthorized: bool,
) -> Result<(), sea_orm::DbErr> {
    let Some(client_id) = companies::owner(db, operation.company_id).await? else {
        return Ok(()); // The company is gone, and with it whoever wanted to know.
    };
    if let Some((
        status @ (PullStatus::Failed
        | PullStatus::AuthError
        | PullStatus::PermissionsError
        | PullStatus::RateLimitError),
        problem,
    )) = failure
    {
        let data = json!({
            "companyId": operation.company_id,
            "connectionId": operation.connection_id,
            "dataType": operation.data_type,
            "pullOperationId": operation.id,
            "status": status.to_value(),
            "errorMessage": problem.message,
        });
        webhooks::record(
            db,
            Event::new(EventType::DataTypeSyncFailed, client_id, data),
        )
        .await?;
    }
    if deauthorized
        && let Some(connection) = connections::for_sync(db, operation.connection_id).await?
    {
        let reason = failure.map(|(_, problem)| problem.message.clone());
        let data = json!({
            "companyId": connection.company_id,
            "connectionId": connection.id,
            "platformKey": connection.platform_key,
            "status": "Deauthorized",
            "reason": reason,
        });
        webhooks::record(
            db,
            Event::new(EventType::ConnectionDeauthorized, client_id, data),
        )
        .await?;
    }
    requests::operation_ended(db, client_id, operation.id).await
}
