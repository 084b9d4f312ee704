//! The swap: inside the transaction that completes a sync, the staged rows
//! move into `record`, numbered in their list's order (then
//! [`super::generations::publish`] points readers at them).

use sea_orm::{ConnectionTrait, DbBackend, Statement};
use uuid::Uuid;

use crate::data::{DataType, Direction};

/// A list at least this long gets the table's planner statistics refreshed
/// in the transaction that publishes it (PostgreSQL). A shorter list read
/// through a poor plan costs little: every index a page could use is
/// prefixed by the list's connection, data type and generation.
pub const ANALYZE_AT_ROWS: u64 = 10_000;

/// Moves a run's staged rows into the readable table, numbering each in
/// its list's order (the order [`super::pages`] reads): one sorted
/// `INSERT … SELECT` inside the caller's transaction, then, for a list of
/// [`ANALYZE_AT_ROWS`] or more on PostgreSQL, fresh planner statistics.
/// Returns how many rows moved.
pub async fn number_staged(
    db: &impl ConnectionTrait,
    connection_id: Uuid,
    data_type: DataType,
    generation: i64,
) -> Result<u64, sea_orm::DbErr> {
    let spec = data_type.spec();
    let direction = match spec.order {
        Direction::Ascending => "ASC",
        Direction::Descending => "DESC",
    };
    let order = format!("ORDER BY sort_key {direction}, record_id");
    // Only lists with a filter pay for the second numbering.
    let filter_ordinal = match spec.filter {
        Some(_) => format!("row_number() OVER (PARTITION BY filter_value {order})"),
        None => "NULL".to_owned(),
    };
    let sql = format!(
        "INSERT INTO record (connection_id, data_type, generation, record_id, company_id, sort_key, \
         filter_value, body, ordinal, filter_ordinal) \
         SELECT connection_id, data_type, generation, record_id, company_id, sort_key, \
                filter_value, body, row_number() OVER ({order}), {filter_ordinal} \
         FROM record_staging WHERE connection_id = $1 AND data_type = $2 AND generation = $3"
    );
    if db.get_database_backend() == DbBackend::Postgres {
        // The window sorts of a large sync fit in memory instead of
        // spilling to disk (this transaction only).
        db.execute_unprepared("SET LOCAL work_mem = '256MB'")
            .await?;
    }
    let moved = db
        .execute_raw(Statement::from_sql_and_values(
            db.get_database_backend(),
            sql,
            [
                connection_id.into(),
                data_type.name().into(),
                generation.into(),
            ],
        ))
        .await?
        .rows_affected();
    if db.get_database_backend() == DbBackend::Postgres && moved >= ANALYZE_AT_ROWS {
        // Until statistics cover the new rows, the planner may believe the
        // list empty and read a page's total through an index that makes it
        // filter the whole list (1.5 s at a million rows). Autovacuum gets
        // there in its own time; readers must not wait for it. ANALYZE
        // counts this transaction's own rows, and its statistics commit with
        // them, so the first read already has them.
        db.execute_unprepared("ANALYZE record").await?;
    }
    Ok(moved)
}
