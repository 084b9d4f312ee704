//! Records the platform deleted: those of the previous list that a
//! sync did not bring back, read in batches so that the run can stage them
//! again, flagged (`data::records::deleted`). And the previous copies of
//! named records ([`previous_copies`]): those the sync could not read, which
//! it stages as they were, and those the platform said it deleted. Records
//! a sync keeps as they were without reading them (after an incremental
//! fetch) are staged again inside the database ([`keep_missing`]). The walk
//! for missing records can also say whether any staged record changed
//! ([`Looking::AlsoForChanges`]).
//!
//! The previous list is the generation readers saw when the sync began: a
//! full generation's rows, or a layer's delta and the base rows it does not
//! hide ([`Visible::stored_parts`]), each part walked from its own key, a
//! range of the base's record ids at a time ([`MISSING_RANGE`]).
//!
//! Each batch walks the previous list by record id from where the
//! last one ended and probes the staged rows by primary key, one lookup per
//! record: linear in the list however many batches it takes. On PostgreSQL
//! that plan is fixed for the statement ([`PLAN_FIXED`]), because the planner
//! has no trustworthy statistics for `record_staging` (a running sync's rows,
//! never analysed, or analysed while it held another sync's rows or none):
//! believing it empty, it read every staged row once per record of the
//! batch, and a resync in which every record of 100,000 changed took minutes.

use crate::data::records::MODIFIED_DATE_SUFFIX_CHARS;
use crate::data::{DataType, Row};
use crate::store::{Staging, Visible};
use sea_orm::{ConnectionTrait, DbBackend, Statement, TransactionSession, TransactionTrait};

/// How many missing records one read returns.
pub const MISSING_BATCH: u64 = 1_000;

/// How many of a layer's base records one read of [`missing`] covers at
/// most: a layered list is walked range by range of its base's record ids,
/// so that neither part is read past the range (one part's rows, found
/// missing or not, never cost a walk of the other's rest).
pub const MISSING_RANGE: u64 = 5_000;

/// The planner settings of a batch's read on PostgreSQL (this transaction
/// only). The previous generation is walked in its primary key's order from
/// where the last batch ended (no sort: with statistics that predate the
/// generation, the planner read all of it through another index and sorted
/// it, once per batch), and each of its records is looked up in
/// `record_staging`'s primary key (no scan of it: believing it empty, the
/// planner read every staged row once per record).
pub const PLAN_FIXED: &str = "SET LOCAL enable_seqscan = off; SET LOCAL enable_bitmapscan = off; \
     SET LOCAL enable_sort = off; SET LOCAL jit = off";

/// What a walk of the previous generation ([`missing`]) reports besides
/// the records a sync did not bring back.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Looking {
    /// Only those.
    ForMissing,
    /// Also the records staged that are not their previous copy but for
    /// `modifiedDate`: the walk that finds what a whole list lost then
    /// also tells whether anything else changed, in the same lookups, so
    /// that an unchanged resync needs no second walk
    /// ([`super::unchanged`]). A walk switches to [`Looking::ForMissing`]
    /// at its first change.
    AlsoForChanges,
}

/// One read of [`missing`].
#[derive(Debug, Default)]
pub struct Walked {
    /// The records of the batch that the sync did not stage.
    pub missing: Vec<Row>,
    /// Whether the batch met a staged record that is not its previous
    /// copy but for `modifiedDate` (only when [`Looking::AlsoForChanges`]).
    pub changed: bool,
    /// The last record id the batch covered; `None` when the walk is over.
    pub last: Option<String>,
}

/// The statement reading up to [`MISSING_BATCH`] records of the list
/// `compared` (the connection's generation of `data_type` readers saw when
/// the sync began, layered or not) that generation `staged` has not staged
/// (and, [`Looking::AlsoForChanges`], has staged changed), by record id
/// after `after` and up to `until` when given. Each row says whether it
/// was staged (`staged`: 1 changed, `NULL` missing).
///
/// A layered list is read in its two stored parts, each from its own
/// primary key (the base's hidden rows left out), and their first rows
/// merged by record id; [`missing`] bounds each read to a range
/// ([`MISSING_RANGE`]), so each part reads only its rows in the range.
pub fn missing_statement(
    backend: DbBackend,
    compared: &Visible,
    data_type: DataType,
    staged: i64,
    (after, until): (Option<&str>, Option<&str>),
    looking: Looking,
) -> Statement {
    let mut values: Vec<sea_orm::Value> = vec![
        compared.connection_id.into(),
        data_type.name().into(),
        staged.into(),
    ];
    let mut range = String::new();
    if let Some(after) = after {
        values.push(after.into());
        range.push_str(&format!(" AND p.record_id > ${}", values.len()));
    }
    if let Some(until) = until {
        values.push(until.into());
        range.push_str(&format!(" AND p.record_id <= ${}", values.len()));
    }
    // PostgreSQL turns `NOT EXISTS` into an anti-join and plans it as a
    // whole (and a join likewise); `OFFSET 0` keeps the subquery a lookup
    // per record instead, so both key columns are its index condition
    // whatever the statistics say.
    let fence = if backend == DbBackend::Postgres {
        " OFFSET 0"
    } else {
        ""
    };
    let (was_staged, staged_copy, kept) = match looking {
        Looking::ForMissing => (
            "CAST(NULL AS INTEGER)".to_owned(),
            String::new(),
            format!(
                "NOT EXISTS (SELECT 1 FROM record_staging s WHERE s.generation = $3 \
                 AND s.record_id = p.record_id{fence})"
            ),
        ),
        Looking::AlsoForChanges => {
            let same = super::publish::same_but_for_its_date(backend);
            // SQLite has no `LATERAL`, and needs none: it looks each
            // staged row up by its key in a left join.
            let staged_copy = if backend == DbBackend::Postgres {
                " LEFT JOIN LATERAL (SELECT s.record_id, s.body FROM record_staging s \
                 WHERE s.generation = $3 AND s.record_id = p.record_id OFFSET 0) s ON true"
            } else {
                " LEFT JOIN record_staging s ON s.generation = $3 AND s.record_id = p.record_id"
            };
            (
                "CASE WHEN s.record_id IS NULL THEN NULL ELSE 1 END".to_owned(),
                staged_copy.to_owned(),
                format!("(s.record_id IS NULL OR NOT ({same}))"),
            )
        }
    };
    let parts: Vec<String> = compared
        .stored_parts(backend, "p", &mut values)
        .iter()
        .map(|part| {
            format!(
                "SELECT p.record_id, p.sort_key, p.filter_value, p.body, {was_staged} AS staged \
                 FROM record p{staged_copy} \
                 WHERE p.connection_id = $1 AND p.data_type = $2 AND {part}{range} AND {kept} \
                 ORDER BY p.record_id LIMIT {MISSING_BATCH}"
            )
        })
        .collect();
    Statement::from_sql_and_values(backend, first_by_record_id(parts, MISSING_BATCH), values)
}

/// One query of `parts` (each ordered by record id and limited to `limit`
/// rows): the only one, or the first `limit` of all their rows by record id.
fn first_by_record_id(parts: Vec<String>, limit: u64) -> String {
    if let [only] = parts.as_slice() {
        return only.clone();
    }
    let merged: Vec<String> = parts
        .iter()
        .enumerate()
        .map(|(index, part)| format!("SELECT * FROM ({part}) AS part_{index}"))
        .collect();
    format!(
        "{} ORDER BY record_id LIMIT {limit}",
        merged.join(" UNION ALL ")
    )
}

/// The next [`MISSING_BATCH`] records of the list `compared` that
/// generation `staged` has not staged (with
/// [`Looking::AlsoForChanges`], the batch counts those it staged changed
/// too, and says whether there was one), by record id after `after`: a
/// keyset walk, so that the whole previous list is compared once however
/// many batches it takes. A layered list's batch covers at most
/// [`MISSING_RANGE`] of its base's record ids, and ends there when fewer
/// records than a batch are found in them.
pub async fn missing(
    db: &impl TransactionTrait,
    compared: &Visible,
    data_type: DataType,
    staged: i64,
    after: Option<&str>,
    looking: Looking,
) -> Result<Walked, sea_orm::DbErr> {
    let txn = db.begin().await?;
    let backend = txn.get_database_backend();
    if backend == DbBackend::Postgres {
        txn.execute_unprepared(PLAN_FIXED).await?;
    }
    let until = match &compared.layer {
        Some(layer) => nth_record_id(&txn, layer.base, after, MISSING_RANGE).await?,
        None => None,
    };
    let statement = missing_statement(
        backend,
        compared,
        data_type,
        staged,
        (after, until.as_deref()),
        looking,
    );
    let rows = txn.query_all_raw(statement).await?;
    txn.commit().await?;
    let mut walked = Walked::default();
    for row in &rows {
        let was_staged: Option<i32> = row.try_get("", "staged")?;
        if was_staged.is_some() {
            walked.changed = true;
            walked.last = Some(row.try_get("", "record_id")?);
        } else {
            let missing = row_of(row)?;
            walked.last = Some(missing.id.clone());
            walked.missing.push(missing);
        }
    }
    // A range not filled: the batch covered it to its end.
    if (rows.len() as u64) < MISSING_BATCH && until.is_some() {
        walked.last = until;
    }
    Ok(walked)
}

/// The `n`-th record id of `generation` after `after` (from its first
/// without), read from its primary key alone; `None` when fewer follow.
pub async fn nth_record_id(
    db: &impl ConnectionTrait,
    generation: i64,
    after: Option<&str>,
    n: u64,
) -> Result<Option<String>, sea_orm::DbErr> {
    let mut values: Vec<sea_orm::Value> = vec![generation.into()];
    let from = match after {
        Some(after) => {
            values.push(after.into());
            " AND record_id > $2"
        }
        None => "",
    };
    db.query_one_raw(Statement::from_sql_and_values(
        db.get_database_backend(),
        format!(
            "SELECT record_id FROM record WHERE generation = $1{from} \
             ORDER BY record_id LIMIT 1 OFFSET {}",
            n.saturating_sub(1)
        ),
        values,
    ))
    .await?
    .map(|row| row.try_get::<String>("", "record_id"))
    .transpose()
}

/// How many records one [`keep_missing`] copies at most.
pub const KEEP_BATCH: u64 = 10_000;

/// Stages again, as they were (without their `modifiedDate`, which the
/// swap adds back), the records of the list `compared` (the generation
/// readers saw when the sync began, layered or not) after the record id
/// `after` that `staging` has not staged, up to the [`KEEP_BATCH`]-th
/// record id of its full generation (a layer's base): about [`KEEP_BATCH`]
/// records, inside the database: no record's JSON travels to the
/// application and back. Returns the last record id the batch covered,
/// `None` after the last batch. Records are walked by their generation's
/// primary key, each staged row looked up by its own (on PostgreSQL with
/// the plan fixed as [`PLAN_FIXED`] says), so the whole list is compared
/// once however many batches it takes.
pub async fn keep_missing(
    db: &impl ConnectionTrait,
    staging: Staging,
    data_type: DataType,
    compared: &Visible,
    after: Option<&str>,
) -> Result<Option<String>, sea_orm::DbErr> {
    let backend = db.get_database_backend();
    let fence = if backend == DbBackend::Postgres {
        db.execute_unprepared(PLAN_FIXED).await?;
        " OFFSET 0"
    } else {
        ""
    };
    // Where this batch ends: the full generation's KEEP_BATCH-th record id
    // after `after`, read from its primary key alone. A layer's delta rows
    // go with the batch their record id falls in.
    let end = nth_record_id(db, compared.full_generation(), after, KEEP_BATCH).await?;
    let mut values: Vec<sea_orm::Value> = vec![
        staging.connection_id.into(),
        data_type.name().into(),
        staging.generation.into(),
        staging.company_id.into(),
    ];
    let mut range = String::new();
    if let Some(after) = after {
        values.push(after.into());
        range.push_str(&format!(" AND p.record_id > ${}", values.len()));
    }
    if let Some(end) = &end {
        values.push(end.as_str().into());
        range.push_str(&format!(" AND p.record_id <= ${}", values.len()));
    }
    let kept: Vec<String> = compared
        .stored_parts(backend, "p", &mut values)
        .iter()
        .map(|part| {
            format!(
                "SELECT p.connection_id, p.data_type, $3, p.record_id, $4, p.sort_key, \
                        p.filter_value, substr(p.body, 1, length(p.body) - {MODIFIED_DATE_SUFFIX_CHARS}) \
                 FROM record p \
                 WHERE {part} AND p.connection_id = $1 AND p.data_type = $2{range} \
                   AND NOT EXISTS (SELECT 1 FROM record_staging s WHERE s.generation = $3 \
                                   AND s.record_id = p.record_id{fence})"
            )
        })
        .collect();
    let sql = format!(
        "INSERT INTO record_staging (connection_id, data_type, generation, record_id, company_id, \
         sort_key, filter_value, body) {}",
        kept.join(" UNION ALL ")
    );
    db.execute_raw(Statement::from_sql_and_values(backend, sql, values))
        .await?;
    Ok(end)
}

/// How many ids one read of [`previous_copies`] binds.
const IDS_PER_READ: usize = 500;

/// The records of the list `compared` (the generation readers saw when the
/// sync began, layered or not) among `ids` that generation `staged` has not
/// staged: the previous copies of records a sync could not read (which it
/// keeps) or that the platform said it deleted (which it flags).
pub async fn previous_copies(
    db: &impl ConnectionTrait,
    compared: &Visible,
    data_type: DataType,
    staged: i64,
    ids: &[String],
) -> Result<Vec<Row>, sea_orm::DbErr> {
    let backend = db.get_database_backend();
    let mut rows = Vec::new();
    for chunk in ids.chunks(IDS_PER_READ) {
        let mut values: Vec<sea_orm::Value> = vec![
            compared.connection_id.into(),
            data_type.name().into(),
            staged.into(),
        ];
        let placeholders: Vec<String> = chunk
            .iter()
            .map(|id| {
                values.push(id.as_str().into());
                format!("${}", values.len())
            })
            .collect();
        let placeholders = placeholders.join(", ");
        let copies: Vec<String> = compared
            .stored_parts(backend, "p", &mut values)
            .iter()
            .map(|part| {
                format!(
                    "SELECT p.record_id, p.sort_key, p.filter_value, p.body FROM record p \
                     WHERE p.connection_id = $1 AND p.data_type = $2 AND {part} \
                     AND p.record_id IN ({placeholders}) \
                     AND NOT EXISTS (SELECT 1 FROM record_staging s WHERE s.generation = $3 \
                                     AND s.record_id = p.record_id)"
                )
            })
            .collect();
        let found = db
            .query_all_raw(Statement::from_sql_and_values(
                backend,
                copies.join(" UNION ALL "),
                values,
            ))
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
