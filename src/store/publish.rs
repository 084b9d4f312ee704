//! The swap: the staged rows move into `record`, numbered in their list's
//! order (then [`super::generations::publish`] points readers at them).
//!
//! A list moves in one `INSERT … SELECT` inside the transaction that swaps
//! it in, or, on PostgreSQL from [`PARALLEL_AT_ROWS`] rows, in two halves
//! on two connections at once before that transaction: the move is one
//! server process's CPU from end to end (1M invoices kept one core busy for
//! 35 s while the other idled), and rows of an unpublished generation are
//! invisible to readers however they got there. A run that fails after
//! moving one half deletes its generation as it deletes its staging.

use sea_orm::{ConnectionTrait, DatabaseConnection, DbBackend, Statement, TransactionTrait};
use uuid::Uuid;

use crate::data::records::MODIFIED_DATE_SUFFIX_CHARS;
use crate::data::{DataType, Direction};
use crate::timestamp::Timestamp;

/// A list at least this long gets the table's planner statistics refreshed
/// in the transaction that publishes it (PostgreSQL). A shorter list read
/// through a poor plan costs little: every index a page could use is
/// prefixed by the list's connection, data type and generation.
pub const ANALYZE_AT_ROWS: u64 = 10_000;

/// What a publish has PostgreSQL analyse: `record`'s columns the planner
/// estimates its reads with (the generation above all, then the list's own
/// ordinals, filter and owners). Not the record's JSON, its sort key or its
/// id: no read is planned from their statistics (a query's JSON paths are
/// expressions, which column statistics do not describe; no index leads with
/// the sort key; an id is looked up under its generation's unique key), and
/// sorting their sampled values was over half of each `ANALYZE` (240 ms of a
/// 10,000-row list's 460 ms sync at 100,000 invoices, BENCHMARKS.md).
/// Autovacuum still analyses every column later, in the background: an
/// `ANALYZE` with a column list does not reset the table's count of changes.
const PLANNED_COLUMNS: &str =
    "generation, ordinal, filter_value, filter_ordinal, connection_id, data_type, company_id";

/// A list at least this long (as [`split_point`] counts it) moves in two
/// halves at once (PostgreSQL).
pub const PARALLEL_AT_ROWS: u64 = 10_000;

/// Which of a staged list's rows a move takes.
#[derive(Debug, Clone, Copy)]
pub enum Part<'a> {
    /// All of them.
    Whole,
    /// Those before the sort key `at` in the list's order.
    First {
        /// Where the second half starts.
        at: &'a str,
    },
    /// Those from the sort key `at` on, numbered after the first half.
    Second {
        /// Where this half starts.
        at: &'a str,
    },
}

/// The share of a long list's rows the first half moves: the second half
/// also counts the first half's rows (per filter value) and adds those
/// counts to its numbers, about a tenth more work per row at a million
/// rows, so it takes fewer rows and both halves end about together.
const FIRST_HALF_SHARE: f64 = 0.55;

/// A list counted at fewer rows than this many times [`PARALLEL_AT_ROWS`]
/// is split exactly: its count decides whether it moves in halves, so the
/// same list always moves the same way (a 1% page sample of a list near the
/// threshold decided it about as often one way as the other).
const COUNTED_UP_TO: u64 = 4;

/// The fewest sampled rows a long list is split by; a sample with fewer
/// (a few pages, whose rows often came in the list's order) is not trusted
/// to split it near [`FIRST_HALF_SHARE`], and every row is sorted instead.
const SAMPLED_AT_LEAST: i64 = 100;

/// The sort key that splits a staged list into its two halves (the first
/// with about [`FIRST_HALF_SHARE`] of the rows, in the list's order), or
/// `None` for a list shorter than [`PARALLEL_AT_ROWS`] (moved whole).
/// PostgreSQL only.
///
/// The rows are counted up to [`COUNTED_UP_TO`] times the threshold (a few
/// milliseconds), so whether a list moves in halves is exact. A list shorter
/// than that count is split at the percentile of all its sort keys; one that
/// reaches it, at the percentile of a sample of 1% of the staging table's
/// pages (all of them again when the sample holds fewer than
/// [`SAMPLED_AT_LEAST`] of its rows): sorting a million rows' keys took a
/// second, and the halves need not be exact.
///
/// Takes the pool, not a transaction: its own transaction's planner setting
/// would outlive a savepoint and stay on for the caller's.
pub async fn split_point(
    db: &DatabaseConnection,
    connection_id: Uuid,
    data_type: DataType,
    generation: i64,
) -> Result<Option<String>, sea_orm::DbErr> {
    // The count walks the generation's primary key: with no statistics for
    // `record_staging` (never analysed while this list was in it), the
    // planner could believe a scan of every list staged cheaper.
    let txn = db.begin().await?;
    txn.execute_unprepared("SET LOCAL enable_seqscan = off")
        .await?;
    let split = split_in(&txn, connection_id, data_type, generation).await?;
    txn.commit().await?;
    Ok(split)
}

/// [`split_point`], in its transaction.
async fn split_in(
    db: &impl ConnectionTrait,
    connection_id: Uuid,
    data_type: DataType,
    generation: i64,
) -> Result<Option<String>, sea_orm::DbErr> {
    let list = || -> [sea_orm::Value; 3] {
        [
            connection_id.into(),
            data_type.name().into(),
            generation.into(),
        ]
    };
    let counted_up_to = PARALLEL_AT_ROWS * COUNTED_UP_TO;
    let row = db
        .query_one_raw(Statement::from_sql_and_values(
            DbBackend::Postgres,
            format!(
                "SELECT count(*) AS counted FROM (SELECT 1 FROM record_staging \
                 WHERE connection_id = $1 AND data_type = $2 AND generation = $3 \
                 LIMIT {counted_up_to}) list"
            ),
            list(),
        ))
        .await?;
    let counted: i64 = match row {
        Some(row) => row.try_get("", "counted")?,
        None => 0,
    };
    let counted = counted.max(0) as u64;
    if counted < PARALLEL_AT_ROWS {
        return Ok(None);
    }
    if counted == counted_up_to {
        let (sampled, at) = percentile(db, data_type, list(), Sample::Pages).await?;
        if sampled >= SAMPLED_AT_LEAST {
            return Ok(at);
        }
    }
    let (_, at) = percentile(db, data_type, list(), Sample::Every).await?;
    Ok(at)
}

/// Which of a staged list's rows [`percentile`] sorts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Sample {
    /// Those on 1% of the staging table's pages.
    Pages,
    /// All of them.
    Every,
}

/// How many of `list`'s staged rows (its connection, data type and
/// generation) `sample` takes, and the sort key [`FIRST_HALF_SHARE`] of the
/// way through them in the list's order (`None` when it takes none).
async fn percentile(
    db: &impl ConnectionTrait,
    data_type: DataType,
    list: [sea_orm::Value; 3],
    sample: Sample,
) -> Result<(i64, Option<String>), sea_orm::DbErr> {
    // The percentile is of ascending sort keys; a descending list's first
    // half is its highest keys.
    let share = match data_type.spec().order {
        Direction::Ascending => FIRST_HALF_SHARE,
        Direction::Descending => 1.0 - FIRST_HALF_SHARE,
    };
    let sampled = match sample {
        Sample::Pages => "TABLESAMPLE SYSTEM (1)",
        Sample::Every => "",
    };
    let [connection, data_type, generation] = list;
    let row = db
        .query_one_raw(Statement::from_sql_and_values(
            DbBackend::Postgres,
            format!(
                "SELECT count(*) AS sampled, \
                        percentile_disc($4) WITHIN GROUP (ORDER BY sort_key) AS at \
                 FROM record_staging {sampled} \
                 WHERE connection_id = $1 AND data_type = $2 AND generation = $3"
            ),
            [connection, data_type, generation, share.into()],
        ))
        .await?;
    match row {
        Some(row) => Ok((row.try_get("", "sampled")?, row.try_get("", "at")?)),
        None => Ok((0, None)),
    }
}

/// The list a swap publishes, and what its records are compared with.
#[derive(Debug, Clone, Copy)]
pub struct Publishing {
    /// The connection synced.
    pub connection_id: Uuid,
    /// The data type.
    pub data_type: DataType,
    /// The generation being published.
    pub generation: i64,
    /// The full generation readers saw when the sync started, or the base of
    /// the layer they saw; `None` on a first sync: a record whose JSON, but
    /// for its `modifiedDate`, is the same there keeps that copy (and so its
    /// `modifiedDate`).
    pub previous: Option<i64>,
    /// When readers saw a layered generation over `previous` (its base):
    /// that generation, whose delta holds the previous copies of the
    /// records its layer changed, found before the base's.
    pub previous_layer: Option<i64>,
    /// When the swap publishes: every other record's `modifiedDate`.
    pub published: Timestamp,
}

/// A resync's move on PostgreSQL returns its stamped rows (changed or new
/// since the previous generation) when it has at most this many: the keys
/// are then carried over from the previous generation's
/// ([`super::keys::carry`]) instead of read back from every record. At a
/// million invoices with 100,000 changed, carrying took 4.1-6.2 s against
/// 6.4-10.1 s for the read-back (BENCHMARKS.md); the ids listed cost about
/// 40 bytes each.
pub const STAMPED_AT_MOST: u64 = 250_000;

/// A row a move stamped with the swap's time: changed since the previous
/// generation, or new.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Stamped {
    /// Its place in the list.
    pub ordinal: i64,
    /// The record's id.
    pub record_id: String,
}

/// What a move did.
#[derive(Debug, Default)]
pub struct Moved {
    /// How many rows moved.
    pub rows: u64,
    /// A resync's move on PostgreSQL: the rows it stamped, or `None` when
    /// there were more than [`STAMPED_AT_MOST`] (and for every other move).
    pub stamped: Option<Vec<Stamped>>,
}

/// Moves `part` of a run's staged rows into the readable table, numbering
/// each in its list's order (the order [`super::pages`] reads): one sorted
/// `INSERT … SELECT` in the caller's transaction. The second half counts
/// the first half's rows (per filter value too) to number on from them.
/// A record unchanged since `list.previous` is moved as it was there; the
/// others are stamped `list.published`, and a resync's move on PostgreSQL
/// returns those ([`Moved::stamped`]).
pub async fn number_staged(
    db: &impl ConnectionTrait,
    list: Publishing,
    part: Part<'_>,
) -> Result<Moved, sea_orm::DbErr> {
    let Publishing {
        connection_id,
        data_type,
        generation,
        ..
    } = list;
    let backend = db.get_database_backend();
    let spec = data_type.spec();
    let (direction, before) = match spec.order {
        Direction::Ascending => ("ASC", "<"),
        Direction::Descending => ("DESC", ">"),
    };
    let order = format!("ORDER BY s.sort_key {direction}, s.record_id");
    let of_list = "connection_id = $1 AND data_type = $2 AND generation = $3";
    let of_staged = "s.connection_id = $1 AND s.data_type = $2 AND s.generation = $3";
    let mut values = vec![
        connection_id.into(),
        data_type.name().into(),
        generation.into(),
    ];
    // What the rows of this part are numbered after, and which they are.
    let (counted, base, filter_base, joined, range) = match part {
        Part::Whole => (String::new(), "0", "0", "", String::new()),
        Part::First { at } => {
            values.push(at.into());
            let range = format!(" AND s.sort_key {before} $4");
            (String::new(), "0", "0", "", range)
        }
        Part::Second { at } => {
            values.push(at.into());
            let counted = format!(
                "first_half AS (SELECT filter_value, count(*) AS size FROM record_staging \
                 WHERE {of_list} AND sort_key {before} $4 GROUP BY filter_value), "
            );
            (
                counted,
                "(SELECT COALESCE(sum(size), 0) FROM first_half)::bigint",
                // Joined by equality, which hashes: `IS NOT DISTINCT FROM`
                // does not, and compared every row with every value of the
                // first half (60,000 payments by 10,000 customers: 11 s).
                // The rows without a value take that group's count, read
                // once.
                "COALESCE(CASE WHEN s.filter_value IS NULL \
                 THEN (SELECT size FROM first_half WHERE filter_value IS NULL) \
                 ELSE f.size END, 0)",
                " LEFT JOIN first_half f ON f.filter_value = s.filter_value",
                format!(" AND NOT (s.sort_key {before} $4)"),
            )
        }
    };
    // Only lists with a filter pay for the second numbering.
    let filter_ordinal = match spec.filter {
        Some(_) => {
            format!("{filter_base} + row_number() OVER (PARTITION BY s.filter_value {order})")
        }
        // Typed: the numbers go through a CTE, where a bare NULL is text.
        None => "CAST(NULL AS BIGINT)".to_owned(),
    };
    // The previous copy, when it is the staged JSON followed by a date
    // ([`same_but_for_its_date`]), keeps its own; every other record gets
    // the swap's time. One primary-key lookup per row.
    values.push(crate::data::records::modified_date_suffix(list.published).into());
    let suffix_at = values.len();
    let stamped = format!("s.body || ${suffix_at}");
    let (body, previous_join) = match list.previous {
        None => (stamped, String::new()),
        Some(previous) => {
            values.push(previous.into());
            let same = same_but_for_its_date(backend);
            if let Some(layer) = list.previous_layer {
                values.push(layer.into());
                over_a_layer(backend, part, &same, &stamped, values.len())
            } else if backend == DbBackend::Postgres && matches!(part, Part::Whole) {
                (
                    format!("CASE WHEN {same} THEN p.body ELSE {stamped} END"),
                    format!(
                        " LEFT JOIN record p ON p.connection_id = s.connection_id \
                         AND p.data_type = s.data_type AND p.generation = ${} \
                         AND p.record_id = s.record_id",
                        values.len()
                    ),
                )
            } else {
                (
                    format!(
                        "COALESCE((SELECT p.body FROM record p WHERE p.connection_id = s.connection_id \
                         AND p.data_type = s.data_type AND p.generation = ${} \
                         AND p.record_id = s.record_id AND {same}), {stamped})",
                        values.len()
                    ),
                    String::new(),
                )
            }
        }
    };
    // How a numbered row is found again, and where the moved rows are read.
    let (handle, source) = if backend == DbBackend::Postgres && !matches!(part, Part::Whole) {
        // A half of a long list: its rows are numbered by their keys alone
        // (sorts of ids and sort keys, in memory), with where each row lies
        // in the staging table; then, in list order, each row is fetched
        // from where it lies (a TID scan per row) and inserted. `OFFSET 0`
        // keeps the subquery from being flattened into a join, which the
        // planner would hash, sorting the rows with their JSON again: that
        // sort wrote 540-650 MB of temporary files per half of a
        // million-row list (BENCHMARKS.md).
        //
        // Each numbered row is fetched once, as numbered: the numbering and
        // the fetch share the statement's snapshot, which no `VACUUM` prunes
        // under (and nothing rewrites `record_staging`), and a row staged
        // twice was numbered at its live version's position.
        (
            "s.ctid AS staged_row",
            "(SELECT * FROM numbered ORDER BY ordinal) n, \
             LATERAL (SELECT * FROM record_staging s WHERE s.ctid = n.staged_row OFFSET 0) s"
                .to_owned(),
        )
    } else {
        // The rows are numbered by their keys alone, then joined with their
        // numbers by a hash on the id and inserted in list order: one sort
        // of the rows with their JSON, where numbering the rows themselves
        // took two.
        (
            "s.record_id",
            format!(
                "record_staging s JOIN numbered n ON n.record_id = s.record_id{previous_join} \
                 WHERE {of_staged}{range}"
            ),
        )
    };
    let insert = format!(
        "INSERT INTO record (connection_id, data_type, generation, record_id, company_id, \
         sort_key, filter_value, body, ordinal, filter_ordinal) \
         SELECT s.connection_id, s.data_type, s.generation, s.record_id, s.company_id, s.sort_key, \
                s.filter_value, {body}, n.ordinal, n.filter_ordinal \
         FROM {source} \
         ORDER BY n.ordinal"
    );
    let numbered = format!(
        "WITH {counted}numbered AS MATERIALIZED (\
           SELECT {handle}, {base} + row_number() OVER ({order}) AS ordinal, \
                  {filter_ordinal} AS filter_ordinal \
           FROM record_staging s{joined} WHERE {of_staged}{range})"
    );
    // A resync's move also says which rows it stamped: those whose stored
    // JSON ends with the swap's `modifiedDate` (a kept copy ends with an
    // earlier one), counted, and listed unless over the cap. Only their ids
    // are returned (what every moved row returns is held until the
    // statement ends: the JSON would spill to disk when much changed).
    let returns_stamped = backend == DbBackend::Postgres && list.previous.is_some();
    let sql = if returns_stamped {
        format!(
            "{numbered}, moved AS ({insert} \
               RETURNING ordinal, \
               CASE WHEN right(body, {MODIFIED_DATE_SUFFIX_CHARS}) = ${suffix_at} THEN record_id END \
               AS stamped) \
             SELECT c.moved, c.stamped_rows, m.ordinal, m.stamped \
             FROM (SELECT count(*) AS moved, count(stamped) AS stamped_rows FROM moved) c \
             LEFT JOIN (SELECT * FROM moved WHERE stamped IS NOT NULL \
                        AND (SELECT count(stamped) FROM moved) <= {STAMPED_AT_MOST}) m ON true"
        )
    } else {
        format!("{numbered} {insert}")
    };
    if backend == DbBackend::Postgres {
        // The numbering sorts of a large sync fit in memory instead of
        // spilling to disk (this transaction only).
        //
        // Joins are by hash: for a whole list (under `PARALLEL_AT_ROWS`, or
        // SQLite's), on the record id with the numbers and with its previous
        // copies; for the second half, with the first half's counts. (A
        // half's fetch by position is a loop by design: nothing else can join
        // a subquery kept whole.)
        // The planner has no statistics for freshly staged rows and, for the
        // previous copies, may have some that predate the previous
        // generation: it could otherwise look each row up through another
        // index on the same connection and generation and filter the whole
        // list per row (3,000 rows took 25 s). The halves of a long list look
        // each previous copy up by primary key, after `ANALYZE`
        // ([`analyze_before_compare`]).
        //
        // No JIT: the joins switched off above (and a half's loop) count as a
        // huge cost, which
        // made the server compile and optimize each half (0.7 s of a core)
        // for a statement whose time is writing rows and index entries.
        db.execute_unprepared(
            "SET LOCAL work_mem = '256MB'; SET LOCAL enable_nestloop = off; \
             SET LOCAL enable_mergejoin = off; SET LOCAL jit = off",
        )
        .await?;
    }
    let statement = Statement::from_sql_and_values(backend, sql, values);
    if !returns_stamped {
        let rows = db.execute_raw(statement).await?.rows_affected();
        return Ok(Moved {
            rows,
            stamped: None,
        });
    }
    let rows = db.query_all_raw(statement).await?;
    let mut moved = Moved::default();
    let mut stamped = Vec::new();
    for row in &rows {
        let (count, stamped_rows): (i64, i64) =
            (row.try_get("", "moved")?, row.try_get("", "stamped_rows")?);
        moved.rows = count as u64;
        if stamped_rows as u64 > STAMPED_AT_MOST {
            return Ok(moved);
        }
        if let Some(record_id) = row.try_get::<Option<String>>("", "stamped")? {
            stamped.push(Stamped {
                ordinal: row.try_get("", "ordinal")?,
                record_id,
            });
        }
    }
    moved.stamped = Some(stamped);
    Ok(moved)
}

/// SQL that holds when `p.body`, a published copy, is `s.body`, a staged
/// row's JSON, followed by a `modifiedDate`: staged JSON lacks its
/// `modifiedDate` (and closing brace), which comes last in a fixed width,
/// so this is a byte-wise prefix test and a length, no parsing and no
/// character counting.
pub(crate) fn same_but_for_its_date(backend: DbBackend) -> String {
    match backend {
        DbBackend::Postgres => format!(
            "starts_with(p.body, s.body) \
             AND octet_length(p.body) = octet_length(s.body) + {MODIFIED_DATE_SUFFIX_CHARS}"
        ),
        _ => format!(
            "substr(p.body, 1, length(s.body)) = s.body \
             AND length(p.body) = length(s.body) + {MODIFIED_DATE_SUFFIX_CHARS}"
        ),
    }
}

/// The moved JSON and the join that finds a staged record's previous copy
/// (as [`number_staged`] reads it) when readers saw a layer: the copy in the
/// layered generation (parameter `layer_at`), which holds what its layer
/// changed, else in its base (the parameter before), two primary-key
/// probes at most. `stamped` is the JSON a changed record moves with.
fn over_a_layer(
    backend: DbBackend,
    part: Part<'_>,
    same: &str,
    stamped: &str,
    layer_at: usize,
) -> (String, String) {
    let copy = format!(
        "FROM record p WHERE p.connection_id = s.connection_id AND p.data_type = s.data_type \
         AND p.generation IN (${}, ${layer_at}) AND p.record_id = s.record_id \
         ORDER BY p.generation DESC LIMIT 1",
        layer_at - 1
    );
    if backend == DbBackend::Postgres && matches!(part, Part::Whole) {
        (
            format!("CASE WHEN {same} THEN p.body ELSE {stamped} END"),
            format!(" LEFT JOIN LATERAL (SELECT p.body {copy}) p ON true"),
        )
    } else {
        (
            format!("COALESCE((SELECT CASE WHEN {same} THEN p.body END {copy}), {stamped})"),
            String::new(),
        )
    }
}

/// What [`same_but_for_its_date`] says of `previous`, a published copy, and
/// `staged`, a row's JSON as staged, for a row the application holds.
pub fn is_same_but_for_its_date(previous: &str, staged: &str) -> bool {
    previous.starts_with(staged) && previous.len() == staged.len() + MODIFIED_DATE_SUFFIX_CHARS
}

/// Before the halves of a long list are compared with their previous copies
/// (PostgreSQL): statistics that cover the previous generation, so that each
/// copy is looked up by primary key rather than through an index that only
/// narrows to the generation.
pub async fn analyze_before_compare(db: &impl ConnectionTrait) -> Result<(), sea_orm::DbErr> {
    if db.get_database_backend() == DbBackend::Postgres {
        analyze(db).await?;
    }
    Ok(())
}

/// `ANALYZE` of `record`'s [`PLANNED_COLUMNS`].
async fn analyze(db: &impl ConnectionTrait) -> Result<(), sea_orm::DbErr> {
    db.execute_unprepared(&format!("ANALYZE record ({PLANNED_COLUMNS})"))
        .await?;
    Ok(())
}

/// For a list of [`ANALYZE_AT_ROWS`] or more on PostgreSQL, fresh planner
/// statistics, in the transaction that publishes it.
///
/// Until statistics cover the new rows, the planner may believe the list
/// empty and read a page's total through an index that makes it filter the
/// whole list (1.5 s at a million rows). Autovacuum gets there in its own
/// time; readers must not wait for it. ANALYZE counts the rows committed
/// and this transaction's own, and its statistics commit with the swap, so
/// the first read already has them.
pub async fn refresh_statistics(
    db: &impl ConnectionTrait,
    published: u64,
) -> Result<(), sea_orm::DbErr> {
    if db.get_database_backend() == DbBackend::Postgres && published >= ANALYZE_AT_ROWS {
        analyze(db).await?;
    }
    Ok(())
}
