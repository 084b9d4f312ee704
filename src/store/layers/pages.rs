//! A page of a layered generation: its positions' runs, each one range of
//! its base's or its delta's ordinals, read in one statement
//! (`docs/store-next.md` §2b, "Reads"). Its cost follows the page and the
//! changes within it, not its depth: at most about twice the page's delta
//! rows plus one ranges of the `(generation, ordinal)` index.

use sea_orm::{ConnectionTrait, DbBackend, Statement};

use super::{LayerMap, Source};

/// The bodies at positions `after + 1..=after + limit` of the layered
/// generation `map` describes, whose base rows are stored under
/// generation `base` and delta rows under `delta`, in position order.
/// Positions beyond the generation's end are not there.
pub async fn bodies(
    db: &impl ConnectionTrait,
    generations: (i64, i64),
    map: &LayerMap,
    after: u32,
    limit: u32,
) -> Result<Vec<String>, sea_orm::DbErr> {
    let Some((statement, wanted)) =
        statement(db.get_database_backend(), generations, map, after, limit)
    else {
        return Ok(Vec::new());
    };
    let found = db.query_all_raw(statement).await?;
    if found.len() != wanted as usize {
        let (base, delta) = generations;
        return Err(sea_orm::DbErr::Custom(format!(
            "a layered page of generations {base} and {delta} read {} rows of {wanted}",
            found.len()
        )));
    }
    found
        .into_iter()
        .map(|row| row.try_get("", "body"))
        .collect()
}

/// The statement [`bodies`] reads, and how many rows it must find; `None`
/// when the page is past the generation's end.
pub fn statement(
    backend: DbBackend,
    (base, delta): (i64, i64),
    map: &LayerMap,
    after: u32,
    limit: u32,
) -> Option<(Statement, u32)> {
    let runs = map.runs(after, after.saturating_add(limit));
    if runs.is_empty() {
        return None;
    }
    let mut values: Vec<sea_orm::Value> = Vec::with_capacity(runs.len() * 4);
    let mut rows = Vec::with_capacity(runs.len());
    for (run, segment) in runs.iter().enumerate() {
        let generation = match segment.source {
            Source::Base => base,
            Source::Delta => delta,
        };
        let first = values.len() + 1;
        rows.push(format!(
            "(${first}, ${}, ${}, ${})",
            first + 1,
            first + 2,
            first + 3
        ));
        values.extend([
            (run as i64).into(),
            generation.into(),
            i64::from(segment.start).into(),
            i64::from(segment.start + segment.length - 1).into(),
        ]);
    }
    // Each run joins its range of the ordinal index; a page has few runs.
    let sql = format!(
        "WITH s(run, generation, first, last) AS (VALUES {}) \
         SELECT r.body AS body FROM s JOIN record r \
           ON r.generation = s.generation AND r.ordinal BETWEEN s.first AND s.last \
         ORDER BY s.run, r.ordinal",
        rows.join(", ")
    );
    let wanted = runs.iter().map(|run| run.length).sum();
    Some((Statement::from_sql_and_values(backend, sql, values), wanted))
}
