//! Deleting what readers no longer see: superseded generations once no
//! pinned snapshot may read them, abandoned generations, a run's staging,
//! and the synced data of a deleted connection or company (the record
//! tables have no foreign key to cascade from).

use chrono::{DateTime, Utc};
use sea_orm::sea_query::{ExprTrait, Query};
use sea_orm::{
    ColumnTrait, ConnectionTrait, DatabaseConnection, EntityTrait, QueryFilter, QueryOrder,
    QuerySelect, Statement, TransactionTrait,
};
use uuid::Uuid;

use entity::{record, record_generation, record_key, record_staging, retained_generation};

use crate::data::DataType;

/// Which generations of a connection's data type to delete.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Generations {
    /// Exactly this one (a run's own staging).
    Exactly(i64),
    /// Every one newer than this (leftovers of abandoned runs, never published).
    Above(i64),
    /// Every one older than this (superseded by a published one) but those
    /// retained for pinned snapshots ([`drop_expired`] deletes them).
    Below(i64),
}

/// Deletes the rows of `data_type` of a connection in `which` generations,
/// staged or published, and then the generations' numbers.
pub async fn delete_generations(
    db: &impl ConnectionTrait,
    connection_id: Uuid,
    data_type: DataType,
    which: Generations,
) -> Result<(), sea_orm::DbErr> {
    let numbered = match which {
        Generations::Exactly(value) => record_generation::Column::Generation.eq(value),
        Generations::Above(value) => record_generation::Column::Generation.gt(value),
        Generations::Below(value) => record_generation::Column::Generation.lt(value).and(
            record_generation::Column::Generation.not_in_subquery(
                Query::select()
                    .column(retained_generation::Column::Generation)
                    .from(retained_generation::Entity)
                    .and_where(retained_generation::Column::ConnectionId.eq(connection_id))
                    .and_where(retained_generation::Column::DataType.eq(data_type.name()))
                    .to_owned(),
            ),
        ),
    };
    let generations: Vec<i64> = record_generation::Entity::find()
        .select_only()
        .column(record_generation::Column::Generation)
        .filter(record_generation::Column::ConnectionId.eq(connection_id))
        .filter(record_generation::Column::DataType.eq(data_type.name()))
        .filter(numbered)
        .into_tuple()
        .all(db)
        .await?;
    delete_numbered(db, &generations).await
}

/// Deletes every row of `generations`, staged and published, then their
/// numbers, in that order: a number outlives its rows, never the reverse,
/// so a delete cut short is finished by the next one.
async fn delete_numbered(
    db: &impl ConnectionTrait,
    generations: &[i64],
) -> Result<(), sea_orm::DbErr> {
    if generations.is_empty() {
        return Ok(());
    }
    record_staging::Entity::delete_many()
        .filter(record_staging::Column::Generation.is_in(generations.iter().copied()))
        .exec(db)
        .await?;
    record::Entity::delete_many()
        .filter(record::Column::Generation.is_in(generations.iter().copied()))
        .exec(db)
        .await?;
    record_key::Entity::delete_many()
        .filter(record_key::Column::Generation.is_in(generations.iter().copied()))
        .exec(db)
        .await?;
    record_generation::Entity::delete_many()
        .filter(record_generation::Column::Generation.is_in(generations.iter().copied()))
        .exec(db)
        .await?;
    Ok(())
}

/// How many expired generations one [`drop_expired`] deletes.
const EXPIRED_BATCH: u64 = 16;

/// Deletes up to [`EXPIRED_BATCH`] generations superseded before `before`,
/// oldest first: each one's retention, then its rows, one statement each
/// (a reader sees the generation whole or, once its retention is gone,
/// answers 410; and no transaction is left open if the process stops
/// between the two). Returns how many. Several processes may sweep at
/// once: each delete is idempotent.
pub async fn drop_expired(
    db: &DatabaseConnection,
    before: DateTime<Utc>,
) -> Result<u64, sea_orm::DbErr> {
    let expired = retained_generation::Entity::find()
        .filter(retained_generation::Column::Superseded.lte(before))
        .order_by_asc(retained_generation::Column::Superseded)
        .limit(EXPIRED_BATCH)
        .all(db)
        .await?;
    for generation in &expired {
        retained_generation::Entity::delete_many()
            .filter(retained_generation::Column::ConnectionId.eq(generation.connection_id))
            .filter(retained_generation::Column::DataType.eq(generation.data_type.as_str()))
            .filter(retained_generation::Column::Generation.eq(generation.generation))
            .exec(db)
            .await?;
        delete_numbered(db, &[generation.generation]).await?;
    }
    Ok(expired.len() as u64)
}

/// Deletes the staged (unpublished) rows of a connection's data type, of
/// every generation up to `through` (all of them when `None`). A run that
/// has just published passes its own generation: the next run may already
/// be staging the one after.
pub async fn clear_staging(
    db: &impl ConnectionTrait,
    connection_id: Uuid,
    data_type: DataType,
    through: Option<i64>,
) -> Result<(), sea_orm::DbErr> {
    let mut of_list = Query::select()
        .column(record_generation::Column::Generation)
        .from(record_generation::Entity)
        .and_where(record_generation::Column::ConnectionId.eq(connection_id))
        .and_where(record_generation::Column::DataType.eq(data_type.name()))
        .to_owned();
    if let Some(through) = through {
        of_list.and_where(record_generation::Column::Generation.lte(through));
    }
    record_staging::Entity::delete_many()
        .filter(record_staging::Column::Generation.in_subquery(of_list))
        .exec(db)
        .await?;
    Ok(())
}

/// After a list of `published` rows of `generation` moved out of
/// `record_staging` (at least [`super::publish::ANALYZE_AT_ROWS`], on
/// PostgreSQL), empties the table with `TRUNCATE` when nothing else is
/// staged in it: a new empty file at once, where deleting a million rows and
/// then `VACUUM`ing them cost 3 s of the server's time after each long
/// publish (`BENCHMARKS.md`, "Where a million-invoice sync's database time
/// goes"). Returns whether it did; when it did not, the caller deletes its
/// rows ([`clear_staging`]) and reclaims their space ([`reclaim_staging`]).
///
/// It never waits and never takes another run's rows: the table's lock is
/// asked for without waiting (`NOWAIT`), so a run staging or publishing at
/// that moment makes it give up at once rather than queue behind it (and
/// queue every other run behind itself); and holding the lock, it truncates
/// only if no row of another generation is there (a run between pages, or
/// an abandoned one's leftovers). `TRUNCATE` is not MVCC-safe: a transaction
/// whose snapshot is older would find the table empty. The only rows it
/// removes are this run's, already published and read by nobody.
pub async fn truncate_staging(
    db: &DatabaseConnection,
    generation: i64,
    published: u64,
) -> Result<bool, sea_orm::DbErr> {
    if db.get_database_backend() != sea_orm::DbBackend::Postgres
        || published < super::publish::ANALYZE_AT_ROWS
    {
        return Ok(false);
    }
    let txn = db.begin().await?;
    if let Err(busy) = txn
        .execute_unprepared("LOCK TABLE record_staging IN ACCESS EXCLUSIVE MODE NOWAIT")
        .await
    {
        tracing::debug!(error = %busy, "the staging table is in use: its rows are deleted instead");
        return Ok(false);
    }
    // The primary key `(generation, record_id)` answers both bounds at
    // once; the table's statistics may say it is empty, so a scan is ruled
    // out rather than left to the planner.
    txn.execute_unprepared("SET LOCAL enable_seqscan = off")
        .await?;
    let others = txn
        .query_one_raw(Statement::from_sql_and_values(
            sea_orm::DbBackend::Postgres,
            "SELECT EXISTS (SELECT 1 FROM record_staging WHERE generation < $1) \
                 OR EXISTS (SELECT 1 FROM record_staging WHERE generation > $1) AS others",
            [generation.into()],
        ))
        .await?
        .map(|row| row.try_get::<bool>("", "others"))
        .transpose()?
        .unwrap_or(true);
    if others {
        return Ok(false);
    }
    txn.execute_unprepared("TRUNCATE record_staging").await?;
    txn.commit().await?;
    Ok(true)
}

/// After a list of `published` rows moved out of `record_staging` (at
/// least [`super::publish::ANALYZE_AT_ROWS`], on PostgreSQL), `VACUUM`s the
/// table: the numbering statements of the next list staged read it, and
/// with a million dead rows left for autovacuum, the 50,000 customers synced
/// right after a million invoices took 2.75 s to publish, 1.83 s without
/// them (`BENCHMARKS.md`, "The accounting model's cost"). Outside any
/// transaction, as `VACUUM` must be; it takes no lock that stops staging.
pub async fn reclaim_staging(
    db: &impl ConnectionTrait,
    published: u64,
) -> Result<(), sea_orm::DbErr> {
    if db.get_database_backend() == sea_orm::DbBackend::Postgres
        && published >= super::publish::ANALYZE_AT_ROWS
    {
        db.execute_unprepared("VACUUM record_staging").await?;
    }
    Ok(())
}

/// Deletes every row, staged or published, of deleted connections (those
/// of a deleted company). Run after the delete, in its transaction:
/// neither table has a foreign key to cascade from (on PostgreSQL a key
/// checked per inserted row cost a sync 2-3 s per million records), and a
/// sync still running for them writes nothing more, as its fence finds its
/// pull operation gone, or holds the operation's row, so that the delete
/// waits for that write to commit and then deletes what it wrote too.
pub async fn delete_synced_data(
    db: &impl ConnectionTrait,
    connections: &[Uuid],
) -> Result<(), sea_orm::DbErr> {
    if connections.is_empty() {
        return Ok(());
    }
    let generations: Vec<i64> = record_generation::Entity::find()
        .select_only()
        .column(record_generation::Column::Generation)
        .filter(record_generation::Column::ConnectionId.is_in(connections.iter().copied()))
        .into_tuple()
        .all(db)
        .await?;
    delete_numbered(db, &generations).await
}
