//! Whether a run's staged list is its previous generation as it was: then
//! the run keeps that generation rather than publishing a copy of it, so an
//! unchanged resync moves no row, and readers keep their generation with
//! its keys and the list orders they already read. After a whole list whose
//! missing records were flagged, the walk that found them has already
//! compared every previous record ([`super::deletions::Looking`]); with
//! [`staged_rows`], counted before it, and the rows it flagged, the run knows
//! whether the list gained a record.

use sea_orm::{ConnectionTrait, DbBackend, Statement, TransactionSession, TransactionTrait};

use super::deletions::PLAN_FIXED;
use super::generations::Visible;
use super::publish::same_but_for_its_date;
use super::staging::Staging;
use crate::data::DataType;

/// How many rows `staging` holds of `data_type`.
pub async fn staged_rows(
    db: &impl ConnectionTrait,
    staging: Staging,
    data_type: DataType,
) -> Result<u64, sea_orm::DbErr> {
    let backend = db.get_database_backend();
    let row = db
        .query_one_raw(Statement::from_sql_and_values(
            backend,
            "SELECT count(*) AS staged FROM record_staging \
             WHERE connection_id = $1 AND data_type = $2 AND generation = $3",
            [
                staging.connection_id.into(),
                data_type.name().into(),
                staging.generation.into(),
            ],
        ))
        .await?;
    let staged: i64 = match row {
        Some(row) => row.try_get("", "staged")?,
        None => 0,
    };
    Ok(staged.max(0) as u64)
}

/// Whether a row `staging` holds of `data_type` is not its copy in the
/// list `compared` (the generation readers saw when the sync began: a full
/// generation, or a layer's delta and the base rows it does not hide) but
/// for `modifiedDate` (or has no copy there): the records a swap would
/// stamp as changed. The staged rows are walked in their primary key's
/// order, each previous copy looked up by its primary key (in each stored
/// part of a layered list), and the walk ends at the first such row: a list
/// with changes costs the lookups before its first change, an unchanged one
/// a lookup per staged row. On PostgreSQL the plan is fixed as
/// [`PLAN_FIXED`] fixes the search for missing records, for the same
/// reason: `record_staging` has no trustworthy statistics, and a hash of
/// the previous generation (its JSON included) would cost more than the
/// publish this spares.
pub async fn any_change(
    db: &impl TransactionTrait,
    staging: Staging,
    data_type: DataType,
    compared: &Visible,
) -> Result<bool, sea_orm::DbErr> {
    let txn = db.begin().await?;
    let backend = txn.get_database_backend();
    // `OFFSET 0` keeps each inner query a lookup per staged row (as
    // [`super::deletions::missing_statement`] does); `CASE`: an integer on
    // both backends (SQLite has no boolean).
    let fence = if backend == DbBackend::Postgres {
        txn.execute_unprepared(PLAN_FIXED).await?;
        " OFFSET 0"
    } else {
        ""
    };
    let same = same_but_for_its_date(backend);
    let mut values: Vec<sea_orm::Value> = vec![
        staging.connection_id.into(),
        data_type.name().into(),
        staging.generation.into(),
    ];
    // A record has one copy at most among the parts: none of them is
    // the staged row as it was.
    let no_copy_as_it_was: Vec<String> = compared
        .stored_parts(backend, "p", &mut values)
        .iter()
        .map(|part| {
            format!(
                "NOT EXISTS (SELECT 1 FROM record p \
                             WHERE {part} AND p.record_id = s.record_id AND {same}{fence})"
            )
        })
        .collect();
    let sql = format!(
        "SELECT CASE WHEN EXISTS (\
           SELECT 1 FROM record_staging s \
           WHERE s.generation = $3 AND s.connection_id = $1 AND s.data_type = $2 \
             AND {}\
         ) THEN 1 ELSE 0 END AS changed",
        no_copy_as_it_was.join(" AND ")
    );
    let row = txn
        .query_one_raw(Statement::from_sql_and_values(backend, sql, values))
        .await?;
    txn.commit().await?;
    let changed: i32 = match row {
        Some(row) => row.try_get("", "changed")?,
        None => 0,
    };
    Ok(changed != 0)
}
