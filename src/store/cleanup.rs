//! Deleting what readers no longer see: superseded generations once no
//! pinned snapshot may read them, abandoned generations, a run's staging,
//! and the synced data of a deleted connection or company (the record
//! tables have no foreign key to cascade from).

use chrono::{DateTime, Utc};
use sea_orm::sea_query::{ExprTrait, Query};
use sea_orm::{
    ColumnTrait, ConnectionTrait, DatabaseConnection, DatabaseTransaction, EntityTrait,
    PaginatorTrait, QueryFilter, QueryOrder, QuerySelect, Statement, TransactionTrait,
};
use uuid::Uuid;

use entity::{
    data_generation, record, record_generation, record_key, record_staging, retained_generation,
};

use crate::data::DataType;

/// Which generations of a connection's data type to delete.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Generations {
    /// Exactly this one (a run's own staging).
    Exactly(i64),
    /// Every one newer than this (leftovers of abandoned runs, never published).
    Above(i64),
    /// Every one older than this (superseded by a published one) but those
    /// retained for pinned snapshots ([`drop_expired`] deletes them) and
    /// the bases of this one, of newer ones and of retained ones (a later
    /// clean-up, or [`drop_expired`], deletes a base no layer reads).
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
            record_generation::Column::Generation
                .not_in_subquery(retained(connection_id, data_type))
                .and(
                    record_generation::Column::Generation.not_in_subquery(bases_kept(
                        connection_id,
                        data_type,
                        value,
                    )),
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

/// The list's generations retained for pinned snapshots.
fn retained(connection_id: Uuid, data_type: DataType) -> sea_orm::sea_query::SelectStatement {
    Query::select()
        .column(retained_generation::Column::Generation)
        .from(retained_generation::Entity)
        .and_where(retained_generation::Column::ConnectionId.eq(connection_id))
        .and_where(retained_generation::Column::DataType.eq(data_type.name()))
        .to_owned()
}

/// The bases of the list's layered generations that stay: those of
/// `from` and newer (readers' generation) and of those retained for pinned
/// snapshots.
fn bases_kept(
    connection_id: Uuid,
    data_type: DataType,
    from: i64,
) -> sea_orm::sea_query::SelectStatement {
    Query::select()
        .column(record_generation::Column::Base)
        .from(record_generation::Entity)
        .and_where(record_generation::Column::ConnectionId.eq(connection_id))
        .and_where(record_generation::Column::DataType.eq(data_type.name()))
        .and_where(record_generation::Column::Base.is_not_null())
        .and_where(record_generation::Column::Generation.gte(from).or(
            record_generation::Column::Generation.in_subquery(retained(connection_id, data_type)),
        ))
        .to_owned()
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
/// oldest first: each one's retention, then its rows (unless a layered
/// generation reads them as its base; and a layer's base with it once
/// nothing reads or sees it), one statement each
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
        // A layer over it still reads it: left to the clean-up that finds
        // no layer reading it.
        if !read_as_base(db, generation.generation).await? {
            let base: Option<Option<i64>> =
                record_generation::Entity::find_by_id(generation.generation)
                    .select_only()
                    .column(record_generation::Column::Base)
                    .into_tuple()
                    .one(db)
                    .await?;
            delete_numbered(db, &[generation.generation]).await?;
            // A layer's base that no other generation reads, and that
            // readers no longer see, goes with it.
            if let Some(Some(base)) = base
                && !read_as_base(db, base).await?
                && !visible_or_retained(db, base).await?
            {
                delete_numbered(db, &[base]).await?;
            }
        }
    }
    Ok(expired.len() as u64)
}

/// Whether a layered generation reads `generation` as its base.
async fn read_as_base(db: &impl ConnectionTrait, generation: i64) -> Result<bool, sea_orm::DbErr> {
    let layers = record_generation::Entity::find()
        .filter(record_generation::Column::Base.eq(generation))
        .count(db)
        .await?;
    Ok(layers > 0)
}

/// Whether readers see `generation` or a pinned snapshot retains it.
async fn visible_or_retained(
    db: &impl ConnectionTrait,
    generation: i64,
) -> Result<bool, sea_orm::DbErr> {
    let visible = data_generation::Entity::find()
        .filter(data_generation::Column::Generation.eq(generation))
        .count(db)
        .await?;
    let retained = retained_generation::Entity::find()
        .filter(retained_generation::Column::Generation.eq(generation))
        .count(db)
        .await?;
    Ok(visible + retained > 0)
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
/// PostgreSQL), or were discarded unchanged, empties the table with
/// `TRUNCATE` when nothing else is staged in it: a new empty file at once,
/// where deleting a million rows and then `VACUUM`ing them cost 3 s of the
/// server's time after each long publish (`BENCHMARKS.md`, "Where a
/// million-invoice sync's database time goes"). Returns whether it did; when
/// it did not, the caller deletes its rows ([`clear_staging`]) and reclaims
/// their space ([`reclaim_staging`]).
///
/// It never queues and never takes another run's rows:
/// - another generation's rows (a run between pages, or an abandoned one's
///   leftovers) are looked for first, without the lock, and then again
///   holding it;
/// - the lock is asked for without waiting (`NOWAIT`): a statement of
///   another run reading or writing the table at that moment makes it try
///   again after [`TRUNCATE_PAUSE`], up to [`TRUNCATE_TRIES`] times, rather
///   than queue behind that run (and every other run behind itself);
/// - each try ends its transaction explicitly, so the lock is never held
///   past it.
///
/// `TRUNCATE` is not MVCC-safe: a transaction whose snapshot is older would
/// find the table empty. The only rows it removes are this run's, which no
/// one reads once it has published or discarded them.
pub async fn truncate_staging(
    db: &DatabaseConnection,
    generation: i64,
    rows: u64,
) -> Result<bool, sea_orm::DbErr> {
    if db.get_database_backend() != sea_orm::DbBackend::Postgres
        || rows < super::publish::ANALYZE_AT_ROWS
    {
        return Ok(false);
    }
    for attempt in 1..=TRUNCATE_TRIES {
        let look = db.begin().await?;
        let others = staged_by_others(&look, generation).await;
        look.rollback().await?;
        if others? {
            tracing::debug!("other runs have rows staged: this run's are deleted instead");
            return Ok(false);
        }
        let txn = db.begin().await?;
        let tried = truncate_alone(&txn, generation).await;
        match tried {
            Ok(Some(true)) => {
                txn.commit().await?;
                return Ok(true);
            }
            Ok(Some(false)) => {
                txn.rollback().await?;
                return Ok(false);
            }
            Ok(None) => txn.rollback().await?,
            Err(error) => {
                txn.rollback().await?;
                return Err(error);
            }
        }
        if attempt < TRUNCATE_TRIES {
            tokio::time::sleep(TRUNCATE_PAUSE).await;
        }
    }
    tracing::debug!("the staging table stayed in use: its rows are deleted instead");
    Ok(false)
}

/// How many times [`truncate_staging`] asks for the table's lock.
const TRUNCATE_TRIES: u32 = 5;

/// How long [`truncate_staging`] waits between two tries.
const TRUNCATE_PAUSE: std::time::Duration = std::time::Duration::from_millis(20);

/// In `txn`: takes the staging table's lock if no one holds any (`None`
/// when someone does), then truncates it if no other generation has rows
/// there (`Some(true)`; `Some(false)` when one does). The caller ends `txn`.
async fn truncate_alone(
    txn: &DatabaseTransaction,
    generation: i64,
) -> Result<Option<bool>, sea_orm::DbErr> {
    if let Err(busy) = txn
        .execute_unprepared("LOCK TABLE record_staging IN ACCESS EXCLUSIVE MODE NOWAIT")
        .await
    {
        tracing::debug!(error = %busy, "the staging table is in use");
        return Ok(None);
    }
    if staged_by_others(txn, generation).await? {
        return Ok(Some(false));
    }
    txn.execute_unprepared("TRUNCATE record_staging").await?;
    Ok(Some(true))
}

/// Whether a generation other than `generation` has rows staged, read in
/// `txn`: the highest generation below it and the lowest above, each one
/// probe of the primary key `(generation, record_id)`. A scan is ruled out
/// for the transaction: the planner may take the table for empty.
async fn staged_by_others(
    txn: &DatabaseTransaction,
    generation: i64,
) -> Result<bool, sea_orm::DbErr> {
    txn.execute_unprepared("SET LOCAL enable_seqscan = off")
        .await?;
    let row = txn
        .query_one_raw(Statement::from_sql_and_values(
            sea_orm::DbBackend::Postgres,
            "SELECT (SELECT max(generation) FROM record_staging WHERE generation < $1) IS NOT NULL \
                 OR (SELECT min(generation) FROM record_staging WHERE generation > $1) IS NOT NULL \
                 AS others",
            [generation.into()],
        ))
        .await?;
    match row {
        Some(row) => row.try_get::<bool>("", "others"),
        None => Ok(true),
    }
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
