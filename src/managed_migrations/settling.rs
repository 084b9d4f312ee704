//! Moving a batch on (the runner's part of each round): a canary that ended
//! makes its batch `AwaitingProceed` or `CanaryFailed`, and a running batch
//! none of whose rows has a step left is `Completed`.

use chrono::Utc;
use sea_orm::sea_query::Expr;
use sea_orm::{ColumnTrait, ConnectionTrait, EntityTrait, QueryFilter, TransactionTrait};
use uuid::Uuid;

use entity::{migration_batch, migration_row};

use super::runner::Runner;
use super::{BatchState, RowState, has_ended, target, workable_states};

impl Runner {
    /// Moves a batch on when it is its time: a canary that ended makes it
    /// `AwaitingProceed` or `CanaryFailed`, and a running batch none of
    /// whose rows has a step left is `Completed`. `true` if it moved (or
    /// was moved meanwhile).
    pub(super) async fn settle(&self, batch: &migration_batch::Model) -> anyhow::Result<bool> {
        // Read first, outside a transaction: most rounds find nothing to
        // move, and take no lock.
        if next_state(&self.db, batch).await?.is_none() {
            return Ok(false);
        }
        let txn = self.db.begin().await?;
        // The batch's row is written first, as `start`, `retryFailed` and
        // `cancel` write it first: they and this wait for one another, so
        // what is read again below does not change before this commits.
        let locked = migration_batch::Entity::update_many()
            .col_expr(
                migration_batch::Column::State,
                Expr::col(migration_batch::Column::State),
            )
            .filter(migration_batch::Column::Id.eq(batch.id))
            .filter(migration_batch::Column::State.eq(batch.state))
            .exec(&txn)
            .await?;
        if locked.rows_affected == 0 {
            txn.rollback().await?;
            return Ok(true);
        }
        let Some((state, failure)) = next_state(&txn, batch).await? else {
            txn.rollback().await?;
            return Ok(false);
        };
        let mut update = migration_batch::Entity::update_many()
            .col_expr(migration_batch::Column::State, Expr::value(state))
            .col_expr(migration_batch::Column::Failure, Expr::value(failure))
            .filter(migration_batch::Column::Id.eq(batch.id));
        if state == BatchState::Completed {
            update = update.col_expr(migration_batch::Column::Completed, Expr::value(Utc::now()));
        }
        update.exec(&txn).await?;
        txn.commit().await?;
        tracing::info!(migration_id = %batch.id, state = ?state, "a migration moved on");
        Ok(true)
    }
}

/// Where the batch goes next, if it is its time: a canary that ended makes
/// it `AwaitingProceed` or `CanaryFailed` (with the reason), and a running
/// batch none of whose rows has a step left is `Completed`.
async fn next_state(
    db: &impl ConnectionTrait,
    batch: &migration_batch::Model,
) -> anyhow::Result<Option<(BatchState, Option<String>)>> {
    Ok(match batch.state {
        BatchState::Canary => {
            let canary = migration_row::Entity::find_by_id(batch.canary_row_id)
                .one(db)
                .await?;
            match canary {
                Some(canary) if has_ended(canary.state, target(batch, canary.id)) => {
                    match canary.state {
                        RowState::Failed => Some((BatchState::CanaryFailed, canary.failure)),
                        _ => Some((BatchState::AwaitingProceed, None)),
                    }
                }
                _ => None,
            }
        }
        BatchState::Running => {
            let mut open = workable_states(target(batch, Uuid::nil()));
            open.push(RowState::Syncing);
            let remaining = migration_row::Entity::find()
                .filter(migration_row::Column::BatchId.eq(batch.id))
                .filter(migration_row::Column::State.is_in(open))
                .one(db)
                .await?;
            remaining.is_none().then_some((BatchState::Completed, None))
        }
        _ => None,
    })
}
