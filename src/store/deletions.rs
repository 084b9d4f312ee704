//! Records the platform deleted: those of the previous generation that a
//! sync did not bring back, read in batches so that the run can stage them
//! again, flagged (`data::records::deleted`). And the previous copies of
//! named records ([`previous_copies`]): those the sync could not read, which
//! it stages as they were, and those the platform said it deleted.
//!
//! Each batch walks the previous generation by record id from where the
//! last one ended and probes the staged rows by primary key, one lookup per
//! record: linear in the list however many batches it takes. On PostgreSQL
//! that plan is fixed for the statement ([`PLAN_FIXED`]), because the planner
//! has no trustworthy statistics for `record_staging` (a running sync's rows,
//! never analysed, or analysed while it held another sync's rows or none):
//! believing it empty, it read every staged row once per record of the
//! batch, and a resync in which every record of 100,000 changed took minutes.

use sea_orm::{ConnectionTrait, DbBackend, Statement, TransactionSession, TransactionTrait};
use uuid::Uuid;

use crate::data::{DataType, Row};

/// How many missing records one read returns.
pub const MISSING_BATCH: u64 = 1_000;

/// The planner settings of a batch's read on PostgreSQL (this transaction
/// only). The previous generation is walked in its primary key's order from
/// where the last batch ended (no sort: with statistics that predate the
/// generation, the planner read all of it through another index and sorted
/// it, once per batch), and each of its records is looked up in
/// `record_staging`'s primary key (no scan of it: believing it empty, the
/// planner read every staged row once per record).
pub const PLAN_FIXED: &str = "SET LOCAL enable_seqscan = off; SET LOCAL enable_bitmapscan = off; \
     SET LOCAL enable_sort = off; SET LOCAL jit = off";

/// The statement reading up to [`MISSING_BATCH`] records of the
/// connection's `previous` generation of `data_type` that generation
/// `staged` has not staged, by record id after `after`.
pub fn missing_statement(
    backend: DbBackend,
    connection_id: Uuid,
    data_type: DataType,
    previous: i64,
    staged: i64,
    after: Option<&str>,
) -> Statement {
    let mut values: Vec<sea_orm::Value> = vec![
        connection_id.into(),
        data_type.name().into(),
        previous.into(),
        staged.into(),
    ];
    let after = match after {
        Some(after) => {
            values.push(after.into());
            " AND p.record_id > $5"
        }
        None => "",
    };
    // PostgreSQL turns `NOT EXISTS` into an anti-join and plans it as a
    // whole; `OFFSET 0` keeps the subquery a lookup per record instead, so
    // both key columns are its index condition whatever the statistics say.
    let fence = if backend == DbBackend::Postgres {
        " OFFSET 0"
    } else {
        ""
    };
    let sql = format!(
        "SELECT p.record_id, p.sort_key, p.filter_value, p.body FROM record p \
         WHERE p.connection_id = $1 AND p.data_type = $2 AND p.generation = $3{after} \
         AND NOT EXISTS (SELECT 1 FROM record_staging s WHERE s.generation = $4 \
                         AND s.record_id = p.record_id{fence}) \
         ORDER BY p.record_id LIMIT {MISSING_BATCH}"
    );
    Statement::from_sql_and_values(backend, sql, values)
}

/// Up to [`MISSING_BATCH`] records of the connection's `previous`
/// generation of `data_type` that generation `staged` has not staged, by
/// record id after `after`: a keyset walk, so that the whole previous list is
/// compared once however many batches it takes.
pub async fn missing(
    db: &impl TransactionTrait,
    connection_id: Uuid,
    data_type: DataType,
    previous: i64,
    staged: i64,
    after: Option<&str>,
) -> Result<Vec<Row>, sea_orm::DbErr> {
    let txn = db.begin().await?;
    let backend = txn.get_database_backend();
    if backend == DbBackend::Postgres {
        txn.execute_unprepared(PLAN_FIXED).await?;
    }
    let statement = missing_statement(backend, connection_id, data_type, previous, staged, after);
    let rows = txn.query_all_raw(statement).await?;
    txn.commit().await?;
    rows.iter().map(row_of).collect()
}

/// How many ids one read of [`previous_copies`] binds.
const IDS_PER_READ: usize = 500;

/// The records of the connection's `previous` generation of `data_type`
/// among `ids` that generation `staged` has not staged: the previous copies
/// of records a sync could not read (which it keeps) or that the platform
/// said it deleted (which it flags).
pub async fn previous_copies(
    db: &impl ConnectionTrait,
    connection_id: Uuid,
    data_type: DataType,
    previous: i64,
    staged: i64,
    ids: &[String],
) -> Result<Vec<Row>, sea_orm::DbErr> {
    let backend = db.get_database_backend();
    let mut rows = Vec::new();
    for chunk in ids.chunks(IDS_PER_READ) {
        let mut values: Vec<sea_orm::Value> = vec![
            connection_id.into(),
            data_type.name().into(),
            previous.into(),
            staged.into(),
        ];
        let placeholders: Vec<String> = chunk
            .iter()
            .map(|id| {
                values.push(id.as_str().into());
                format!("${}", values.len())
            })
            .collect();
        let sql = format!(
            "SELECT p.record_id, p.sort_key, p.filter_value, p.body FROM record p \
             WHERE p.connection_id = $1 AND p.data_type = $2 AND p.generation = $3 \
             AND p.record_id IN ({}) \
             AND NOT EXISTS (SELECT 1 FROM record_staging s WHERE s.generation = $4 \
                             AND s.record_id = p.record_id)",
            placeholders.join(", ")
        );
        let found = db
            .query_all_raw(Statement::from_sql_and_values(backend, sql, values))
            .await?;
        for row in &found {
            rows.push(row_of(row)?);
        }
    }
    Ok(rows)
}

fn row_of(row: &sea_orm::QueryResult) -> Result<Row, sea_orm::DbErr> {
    let filter_value: Option<String> = row.try_get("", "filter_value")?;
    Ok(Row {
        id: row.try_get("", "record_id")?,
        sort_key: row.try_get("", "sort_key")?,
        filter_value: filter_value.map(Into::into),
        body: row.try_get("", "body")?,
    })
}
