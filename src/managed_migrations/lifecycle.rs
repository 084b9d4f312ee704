//! A batch's moves that people make: start (its checklist done), proceed
//! after the canary, retry failed rows, cancel. Each writes the batch's row
//! first, as the runner's own moves do, so they wait for one another.

use chrono::Utc;
use sea_orm::sea_query::Expr;
use sea_orm::{
    ActiveEnum, ColumnTrait, ConnectionTrait, DatabaseConnection, EntityTrait, QueryFilter,
    TransactionTrait,
};
use uuid::Uuid;

use entity::{migration_batch, migration_row};

use super::{BatchState, BatchSummary, RowState, checklist, find, find_batch};
use crate::error::{Error, Problem};
use crate::tenant::Tenant;

/// Moves the tenant's batch from one of `from` to `to`, writing first (so
/// SQLite takes its write lock before reading); 409 naming the state it is
/// in otherwise.
async fn transition(
    db: &impl ConnectionTrait,
    tenant: Tenant,
    migration_id: Uuid,
    from: &[BatchState],
    to: BatchState,
    columns: &[(migration_batch::Column, sea_orm::Value)],
    refusal: impl Fn(BatchState) -> Problem,
) -> Result<(), Error> {
    let mut update = migration_batch::Entity::update_many()
        .col_expr(migration_batch::Column::State, Expr::value(to))
        .filter(migration_batch::Column::Id.eq(migration_id))
        .filter(migration_batch::Column::ClientId.eq(tenant.client_id))
        .filter(migration_batch::Column::State.is_in(from.iter().copied()));
    for (column, value) in columns {
        update = update.col_expr(*column, Expr::value(value.clone()));
    }
    if update.exec(db).await?.rows_affected == 1 {
        return Ok(());
    }
    let batch = find_batch(db, tenant, migration_id).await?;
    Err(Error::Conflict(refusal(batch.state)))
}

/// Step 5: checks the checklist and starts the canary (again, after it
/// failed: its row goes back to the step it failed at).
pub async fn start(
    db: &DatabaseConnection,
    tenant: Tenant,
    migration_id: Uuid,
) -> Result<BatchSummary, Error> {
    let batch = find_batch(db, tenant, migration_id).await?;
    let items = checklist::items(db, &batch).await?;
    checklist::require_done(&batch, &items)?;
    let txn = db.begin().await?;
    transition(
        &txn,
        tenant,
        migration_id,
        &[BatchState::Draft, BatchState::CanaryFailed],
        BatchState::Canary,
        &[
            (migration_batch::Column::Started, Utc::now().into()),
            (
                migration_batch::Column::Failure,
                sea_orm::Value::String(None),
            ),
        ],
        |state| {
            Problem::new(format!(
                "Migration {migration_id} is {}: only a Draft batch, or one whose canary failed, starts.",
                state.to_value()
            ))
        },
    )
    .await?;
    reset_failed(&txn, migration_id, Some(batch.canary_row_id)).await?;
    txn.commit().await?;
    find(db, tenant, migration_id).await
}

/// Step 6: lets the rest of a batch whose canary passed proceed.
pub async fn proceed(
    db: &DatabaseConnection,
    tenant: Tenant,
    migration_id: Uuid,
) -> Result<BatchSummary, Error> {
    transition(
        db,
        tenant,
        migration_id,
        &[BatchState::AwaitingProceed],
        BatchState::Running,
        &[(migration_batch::Column::Proceeded, Utc::now().into())],
        |state| {
            let hint = match state {
                BatchState::Draft => " Start its canary first.",
                BatchState::Canary => " Its canary is still running.",
                BatchState::CanaryFailed => " Its canary failed: fix the cause and start it again.",
                _ => "",
            };
            Problem::new(format!(
                "Migration {migration_id} is {}: only a batch whose canary passed (AwaitingProceed) \
                 proceeds.{hint}",
                state.to_value()
            ))
        },
    )
    .await?;
    find(db, tenant, migration_id).await
}

/// Tries the batch's failed rows again from the step each failed at.
pub async fn retry_failed(
    db: &DatabaseConnection,
    tenant: Tenant,
    migration_id: Uuid,
) -> Result<BatchSummary, Error> {
    let txn = db.begin().await?;
    transition(
        &txn,
        tenant,
        migration_id,
        &[BatchState::Running, BatchState::Completed],
        BatchState::Running,
        &[(
            migration_batch::Column::Completed,
            sea_orm::Value::ChronoDateTimeUtc(None),
        )],
        |state| {
            Problem::new(format!(
                "Migration {migration_id} is {}: failed rows are retried once the batch runs or has \
                 completed (a failed canary is retried by starting the batch again).",
                state.to_value()
            ))
        },
    )
    .await?;
    reset_failed(&txn, migration_id, None).await?;
    txn.commit().await?;
    find(db, tenant, migration_id).await
}

/// Cancels a batch: rows not imported yet (waiting, or failed before
/// their import) end `Cancelled` and their tokens are dropped; imported
/// rows stay as they are. A completed batch can be cancelled too, to drop
/// the tokens its failed rows still hold.
pub async fn cancel(
    db: &DatabaseConnection,
    tenant: Tenant,
    migration_id: Uuid,
) -> Result<BatchSummary, Error> {
    let txn = db.begin().await?;
    transition(
        &txn,
        tenant,
        migration_id,
        &[
            BatchState::Draft,
            BatchState::Canary,
            BatchState::AwaitingProceed,
            BatchState::CanaryFailed,
            BatchState::Running,
            BatchState::Completed,
        ],
        BatchState::Cancelled,
        &[(migration_batch::Column::Completed, Utc::now().into())],
        |state| {
            Problem::new(format!(
                "Migration {migration_id} is {} already.",
                state.to_value()
            ))
        },
    )
    .await?;
    migration_row::Entity::update_many()
        .col_expr(
            migration_row::Column::State,
            Expr::value(RowState::Cancelled),
        )
        .col_expr(migration_row::Column::KeyId, Expr::value(None::<String>))
        .col_expr(migration_row::Column::Nonce, Expr::value(None::<Vec<u8>>))
        .col_expr(
            migration_row::Column::Ciphertext,
            Expr::value(None::<Vec<u8>>),
        )
        .col_expr(migration_row::Column::Updated, Expr::value(Utc::now()))
        .filter(migration_row::Column::BatchId.eq(migration_id))
        .filter(
            sea_orm::Condition::any()
                .add(migration_row::Column::State.eq(RowState::Pending))
                .add(
                    sea_orm::Condition::all()
                        .add(migration_row::Column::State.eq(RowState::Failed))
                        .add(migration_row::Column::ConnectionId.is_null()),
                ),
        )
        .exec(&txn)
        .await?;
    txn.commit().await?;
    find(db, tenant, migration_id).await
}

/// Puts the batch's failed rows (or only `only`) back at the step each
/// failed at: `Pending` if it was never imported, else `Imported`.
async fn reset_failed(
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
