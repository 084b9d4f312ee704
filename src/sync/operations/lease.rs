//! A pull operation's run, as the engine's workers write it: claiming the
//! oldest claimable operation under a lease, renewing the lease, fencing
//! each write of a run on it, and recording how the run ended. Every write
//! but the claim applies only while the writer still holds the lease.
//!
//! On PostgreSQL the claim's inner SELECT uses `FOR UPDATE SKIP LOCKED`, so
//! several processes share the queue without taking an operation twice; on
//! SQLite the single writer serializes the statement. (Lease times are
//! compared as stored; every timestamp is written by sqlx in one RFC 3339
//! form, whose text order is time order.)

use chrono::{DateTime, Utc};
use sea_orm::sea_query::Expr;
use sea_orm::{
    ActiveEnum, ColumnTrait, ConnectionTrait, DatabaseConnection, DbBackend, EntityTrait,
    QueryFilter, Statement, TransactionTrait,
};
use uuid::Uuid;

use entity::pull_operation::{self, PullStatus};

use crate::error::Problem;
use crate::timestamp::Timestamp;

/// Claims the oldest queued operation (or one whose worker's lease lapsed)
/// for `worker`, leased until `until`.
pub async fn claim(
    db: &impl ConnectionTrait,
    worker: &str,
    until: DateTime<Utc>,
) -> Result<Option<pull_operation::Model>, sea_orm::DbErr> {
    let backend = db.get_database_backend();
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
    let values = [worker.into(), until.into(), Timestamp::now().into()];
    let claimed = db
        .query_one_raw(Statement::from_sql_and_values(backend, sql, values))
        .await?;
    let Some(row) = claimed else { return Ok(None) };
    let id: Uuid = row.try_get("", "id")?;
    pull_operation::Entity::find_by_id(id).one(db).await
}

/// The running operation `id`, while `worker` holds it.
fn held_by(id: Uuid, worker: &str) -> sea_orm::Condition {
    sea_orm::Condition::all()
        .add(pull_operation::Column::Id.eq(id))
        .add(pull_operation::Column::LeaseOwner.eq(worker))
        .add(pull_operation::Column::Status.eq(PullStatus::Fetching))
}

/// Extends `worker`'s lease on `id` to `lease` from when the database
/// writes it; `false` when another worker owns it now.
///
/// On PostgreSQL the row is locked first and the end taken from the
/// database's clock once it is (`clock_timestamp()` in a second statement:
/// an update that waits for a row lock keeps the values it computed before
/// waiting). A renewal that waited behind a publish's shared hold on the
/// row, which can outlast the lease, would otherwise write an end that has
/// passed already, and a claim could take the operation between that write
/// and the next renewal.
pub async fn renew(
    db: &DatabaseConnection,
    id: Uuid,
    worker: &str,
    lease: chrono::Duration,
) -> Result<bool, sea_orm::DbErr> {
    let backend = db.get_database_backend();
    if backend == DbBackend::Postgres {
        let txn = db.begin().await?;
        let held = txn
            .query_one_raw(Statement::from_sql_and_values(
                backend,
                "SELECT id FROM pull_operation \
                 WHERE id = $1 AND lease_owner = $2 AND status = 'Fetching' FOR UPDATE",
                [id.into(), worker.into()],
            ))
            .await?;
        if held.is_none() {
            txn.rollback().await?;
            return Ok(false);
        }
        txn.execute_raw(Statement::from_sql_and_values(
            backend,
            "UPDATE pull_operation \
             SET lease_expires_at = clock_timestamp() + make_interval(secs => $1::float8) \
             WHERE id = $2",
            [lease.as_seconds_f64().into(), id.into()],
        ))
        .await?;
        txn.commit().await?;
        return Ok(true);
    }
    // SQLite has one writer: a claim waits for the same lock, with a time
    // taken before it waited too.
    let renewed = pull_operation::Entity::update_many()
        .col_expr(
            pull_operation::Column::LeaseExpiresAt,
            Expr::value(Utc::now() + lease),
        )
        .filter(held_by(id, worker))
        .exec(db)
        .await?;
    Ok(renewed.rows_affected == 1)
}

/// Records progress (`$1` records fetched, `$2` percent) on operation `$3`
/// while worker `$4` holds it: the fence that opens every transaction of
/// a run.
const HOLD: &str = "UPDATE pull_operation SET records_fetched = $1, progress = $2 \
                    WHERE id = $3 AND lease_owner = $4 AND status = 'Fetching'";

/// Records how `worker`'s run of `id` fetches (`Full`, `Incremental`);
/// `false` when `worker` no longer holds the operation.
pub async fn record_fetch_mode(
    db: &impl ConnectionTrait,
    id: Uuid,
    worker: &str,
    mode: super::FetchMode,
) -> Result<bool, sea_orm::DbErr> {
    let backend = db.get_database_backend();
    let values = [mode.to_value().into(), id.into(), worker.into()];
    let recorded = db
        .execute_raw(Statement::from_sql_and_values(
            backend,
            "UPDATE pull_operation SET fetch_mode = $1 \
             WHERE id = $2 AND lease_owner = $3 AND status = 'Fetching'",
            values,
        ))
        .await?;
    Ok(recorded.rows_affected() == 1)
}

/// Records progress, first thing in a transaction of the run: the fence
/// that makes the rest of the transaction apply only while `worker` holds
/// the lease. `false` when it does not.
pub async fn hold(
    db: &impl ConnectionTrait,
    id: Uuid,
    worker: &str,
    fetched: i64,
    progress: i32,
) -> Result<bool, sea_orm::DbErr> {
    let backend = db.get_database_backend();
    let values = [fetched.into(), progress.into(), id.into(), worker.into()];
    let held = db
        .execute_raw(Statement::from_sql_and_values(backend, HOLD, values))
        .await?;
    Ok(held.rows_affected() == 1)
}

/// A fence that several transactions of one run can hold at once
/// (PostgreSQL): `FOR SHARE` on the operation's row while `worker` holds
/// it, so the halves of a list moving at once do not queue behind each
/// other's [`hold`]. Until they commit, no other worker can claim the
/// operation (the claim skips locked rows) and a renewal of the lease
/// waits. `false` when `worker` no longer holds it.
pub async fn hold_shared(
    db: &impl ConnectionTrait,
    id: Uuid,
    worker: &str,
) -> Result<bool, sea_orm::DbErr> {
    let held = db
        .query_one_raw(Statement::from_sql_and_values(
            DbBackend::Postgres,
            "SELECT id FROM pull_operation \
             WHERE id = $1 AND lease_owner = $2 AND status = 'Fetching' FOR SHARE",
            [id.into(), worker.into()],
        ))
        .await?;
    Ok(held.is_some())
}

/// [`hold`] on a PostgreSQL connection outside SeaORM: the fence of the
/// transaction in which a page is staged by `COPY`, which SeaORM cannot
/// send.
pub async fn hold_on(
    connection: &mut sea_orm::sqlx::PgConnection,
    id: Uuid,
    worker: &str,
    fetched: i64,
    progress: i32,
) -> Result<bool, sea_orm::sqlx::Error> {
    let held = sea_orm::sqlx::query(HOLD)
        .bind(fetched)
        .bind(progress)
        .bind(id)
        .bind(worker)
        .execute(connection)
        .await?;
    Ok(held.rows_affected() == 1)
}

/// The fence of a page's second `COPY` lane (PostgreSQL), which stages
/// while the first lane's transaction holds [`hold_on`]'s row lock: `FOR KEY
/// SHARE` on the operation's row while `worker` holds it. It does not wait
/// for that lock (an update that leaves the key alone), yet a claim, whose
/// `FOR UPDATE SKIP LOCKED` conflicts with it, skips the operation until
/// the lane commits, so no other worker can take the run meanwhile.
/// `false` when `worker` no longer holds it.
pub async fn share_on(
    connection: &mut sea_orm::sqlx::PgConnection,
    id: Uuid,
    worker: &str,
) -> Result<bool, sea_orm::sqlx::Error> {
    let held = sea_orm::sqlx::query(
        "SELECT id FROM pull_operation \
         WHERE id = $1 AND lease_owner = $2 AND status = 'Fetching' FOR KEY SHARE",
    )
    .bind(id)
    .bind(worker)
    .fetch_optional(connection)
    .await?;
    Ok(held.is_some())
}

/// How a run ended.
#[derive(Debug, Clone)]
pub enum Ending {
    /// It completed at this time: the data is readable.
    Complete(DateTime<Utc>),
    /// Back to the queue (shutdown); the attempt does not count.
    Requeue {
        /// Claims before this one.
        attempts_before: i32,
    },
    /// A final status, with why.
    Failed(PullStatus, Problem),
}

/// Records how `worker`'s run of `id` ended and releases the lease;
/// `false` when another worker owns the operation now (nothing is written).
pub async fn end(
    db: &impl ConnectionTrait,
    id: Uuid,
    worker: &str,
    ending: &Ending,
) -> Result<bool, sea_orm::DbErr> {
    let release = pull_operation::Entity::update_many()
        .col_expr(
            pull_operation::Column::LeaseOwner,
            Option::<String>::None.into(),
        )
        .col_expr(
            pull_operation::Column::LeaseExpiresAt,
            Option::<DateTime<Utc>>::None.into(),
        );
    let update = match ending {
        Ending::Complete(completed) => release
            .col_expr(
                pull_operation::Column::Status,
                Expr::value(PullStatus::Complete),
            )
            .col_expr(pull_operation::Column::Progress, 100.into())
            .col_expr(pull_operation::Column::Completed, (*completed).into())
            .filter(held_by(id, worker)),
        Ending::Requeue { attempts_before } => release
            .col_expr(
                pull_operation::Column::Status,
                Expr::value(PullStatus::Queued),
            )
            .col_expr(pull_operation::Column::Progress, 0.into())
            .col_expr(pull_operation::Column::RecordsFetched, 0_i64.into())
            .col_expr(
                pull_operation::Column::RecordIssues,
                Option::<String>::None.into(),
            )
            .col_expr(pull_operation::Column::RecordIssueCount, 0_i64.into())
            .col_expr(pull_operation::Column::Attempts, (*attempts_before).into())
            .filter(pull_operation::Column::Id.eq(id))
            .filter(pull_operation::Column::LeaseOwner.eq(worker)),
        Ending::Failed(status, problem) => {
            let remedy = problem
                .remedy
                .as_ref()
                .and_then(|remedy| serde_json::to_string(remedy).ok());
            release
                .col_expr(pull_operation::Column::Status, Expr::value(*status))
                .col_expr(
                    pull_operation::Column::ErrorMessage,
                    Some(problem.message.clone()).into(),
                )
                .col_expr(pull_operation::Column::ErrorRemedy, remedy.into())
                .col_expr(pull_operation::Column::Completed, Timestamp::now().into())
                .filter(pull_operation::Column::Id.eq(id))
                .filter(pull_operation::Column::LeaseOwner.eq(worker))
        }
    };
    Ok(update.exec(db).await?.rows_affected == 1)
}
