//! A page of a layered generation: its positions' runs, each one range of
//! its base's or its delta's ordinals, read in one statement
//! (`docs/store-next.md` §2b, "Reads"). Its cost follows the page and the
//! changes within it, not its depth: at most twice the page's delta rows,
//! plus the hidden base rows among its positions, plus one ranges of the
//! `(generation, ordinal)` index. A list filtered by a value reads its
//! value's map the same way, over the `(generation, filter_value,
//! filter_ordinal)` index.

use sea_orm::{ConnectionTrait, DbBackend, Statement};

use super::{LayerMap, Segment, Source};
use crate::store::lookups::values_row;

/// Runs one statement reads: four parameters each, under SQLite's limit
/// of 32,766 and PostgreSQL's of 65,535 for any page.
const RUNS_PER_STATEMENT: usize = 2_000;

/// The bodies at positions `after + 1..=after + limit` of the layered
/// generation `map` describes (its list filtered by `filter`, when given,
/// and `map` that value's), whose base rows are stored under generation
/// `base` and delta rows under `delta`, in position order. Positions
/// beyond the generation's end are not there.
pub async fn bodies(
    db: &impl ConnectionTrait,
    generations: (i64, i64),
    filter: Option<&str>,
    map: &LayerMap,
    after: u32,
    limit: u32,
) -> Result<Vec<String>, sea_orm::DbErr> {
    let runs = map.runs(after, after.saturating_add(limit));
    read_runs(db, generations, filter, &runs).await
}

/// The bodies at `positions` of the layered generation `map` describes (as
/// [`bodies`] reads them), in that order: each position a run of its own,
/// found through the map. An error when a position is not in the
/// generation.
pub async fn bodies_at(
    db: &impl ConnectionTrait,
    generations: (i64, i64),
    filter: Option<&str>,
    map: &LayerMap,
    positions: &[u32],
) -> Result<Vec<String>, sea_orm::DbErr> {
    let runs = positions
        .iter()
        .map(|&position| {
            let (source, start) = map.at(position)?;
            Some(Segment {
                position,
                source,
                start,
                length: 1,
            })
        })
        .collect::<Option<Vec<Segment>>>()
        .ok_or_else(|| {
            sea_orm::DbErr::RecordNotFound("a position beyond a layered generation".to_owned())
        })?;
    read_runs(db, generations, filter, &runs).await
}

/// The bodies of `runs`, in order, [`RUNS_PER_STATEMENT`] a statement;
/// an error unless every run's rows are there.
async fn read_runs(
    db: &impl ConnectionTrait,
    generations: (i64, i64),
    filter: Option<&str>,
    runs: &[Segment],
) -> Result<Vec<String>, sea_orm::DbErr> {
    let backend = db.get_database_backend();
    let mut bodies = Vec::new();
    for runs in runs.chunks(RUNS_PER_STATEMENT) {
        let found = db
            .query_all_raw(statement(backend, generations, filter, runs))
            .await?;
        let wanted: u32 = runs.iter().map(|run| run.length).sum();
        if found.len() != wanted as usize {
            let (base, delta) = generations;
            return Err(sea_orm::DbErr::Custom(format!(
                "a layered read of generations {base} and {delta} read {} rows of {wanted}",
                found.len()
            )));
        }
        for row in found {
            bodies.push(row.try_get("", "body")?);
        }
    }
    Ok(bodies)
}

/// The statement reading the bodies of `runs` (a page's, or part of them,
/// none empty; [`LayerMap::runs`]) in position order: each run one range
/// of the `(generation, ordinal)` index, or, for the list filtered by
/// `filter`, of the `(generation, filter_value, filter_ordinal)` index.
pub fn statement(
    backend: DbBackend,
    (base, delta): (i64, i64),
    filter: Option<&str>,
    runs: &[Segment],
) -> Statement {
    let mut values: Vec<sea_orm::Value> = Vec::with_capacity(runs.len() * 4 + 1);
    let (ordinal, of_value) = match filter {
        Some(value) => {
            values.push(value.into());
            ("filter_ordinal", " AND filter_value = $1")
        }
        None => ("ordinal", ""),
    };
    let mut rows = Vec::with_capacity(runs.len());
    for (run, segment) in runs.iter().enumerate() {
        let generation = match segment.source {
            Source::Base => base,
            Source::Delta => delta,
        };
        rows.push(values_row(
            &mut values,
            [
                (run as i64).into(),
                generation.into(),
                i64::from(segment.start).into(),
                i64::from(segment.start + segment.length - 1).into(),
            ],
        ));
    }
    let runs = rows.join(", ");
    let sql = match backend {
        // Each run its own range of the ordinal index (`OFFSET 0` keeps the
        // lookup its own): joined instead, a million-row list's statistics
        // made PostgreSQL hash the runs and scan the whole table (0.9 s a
        // page; BENCHMARKS.md, "Pages read through segments").
        DbBackend::Postgres => format!(
            "SELECT r.body AS body FROM (VALUES {runs}) AS s(run, generation, first, last), \
             LATERAL (SELECT body, {ordinal} AS ordinal FROM record \
                      WHERE generation = s.generation{of_value} \
                        AND {ordinal} BETWEEN s.first AND s.last \
                      ORDER BY {ordinal} OFFSET 0) r \
             ORDER BY s.run, r.ordinal"
        ),
        // SQLite has no `LATERAL`, and needs none: it looks each run up in
        // the ordinal index.
        _ => format!(
            "WITH s(run, generation, first, last) AS (VALUES {runs}) \
             SELECT r.body AS body FROM s JOIN record r \
               ON r.generation = s.generation{of_value} \
              AND r.{ordinal} BETWEEN s.first AND s.last \
             ORDER BY s.run, r.{ordinal}"
        ),
    };
    Statement::from_sql_and_values(backend, sql, values)
}
