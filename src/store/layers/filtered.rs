//! A long full generation's lists by filter value, for a layer over it: how
//! many rows each value holds and where every [`FENCE_EVERY`]th of them lies
//! in the whole list (the *filter fences*), and so how many rows of a value
//! come before a place, in work that follows the places searched
//! ([`anchors`]). A layer's map for one value's list ([`super::planned`])
//! is the same [`super::LayerMap`] as the whole list's, over that value's
//! filter ordinals.
//!
//! A value's rows are numbered by filter ordinal in the list's order, so
//! their ordinals in the whole list ascend with it: the rows of a value
//! among the base's first `a` rows are those up to the last fence at or
//! before ordinal `a`, plus a count over at most `FENCE_EVERY - 1` filter
//! ordinals after it, one range of the `(generation, filter_value,
//! filter_ordinal)` index.
//!
//! The fences are kept whole in one `record_key` row under the reserved
//! field [`FILTER_FENCES_FIELD`], written with the list's own fences
//! ([`write`]): a run per value (in byte order) whose first number is the
//! value's row count and the rest its fences' ordinals. One row, so that
//! they read whole or not at all (a million rows: about 16,000 numbers,
//! plus the values).

use std::collections::BTreeMap;

use sea_orm::{
    ColumnTrait, ConnectionTrait, DbBackend, EntityTrait, QueryFilter, QuerySelect, Set, Statement,
};

use entity::record_key;

use super::fences::FENCE_EVERY;
use crate::store::keys::blocks::{self, Unpacked};
use crate::store::lookups::values_row;

/// The `record_key` field the filter fences are kept under.
pub const FILTER_FENCES_FIELD: &str = ":filter-fences";

/// Fences one statement looks up (two parameters each), and anchors one
/// statement counts (four each).
const PER_STATEMENT: usize = 1_000;

/// One value's list in the base.
#[derive(Debug, Clone, PartialEq, Eq)]
struct ValueFences {
    /// Rows holding the value: its highest filter ordinal.
    count: u32,
    /// The whole list's ordinals of its filter ordinals 1, 1 +
    /// [`FENCE_EVERY`], …, ascending.
    ordinals: Vec<u32>,
}

/// A generation's filter fences, read into memory.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FilterFences {
    values: BTreeMap<String, ValueFences>,
}

impl FilterFences {
    /// The filter fences of `generation` when [`write`] wrote them and they
    /// read: every value's fences one for each of its filter ordinals 1, 1 +
    /// [`FENCE_EVERY`], …, their ordinals ascending.
    pub async fn read(
        db: &impl ConnectionTrait,
        generation: i64,
    ) -> Result<Option<Self>, sea_orm::DbErr> {
        let rows: Vec<(i32, Vec<u8>)> = record_key::Entity::find()
            .select_only()
            .column(record_key::Column::Block)
            .column(record_key::Column::Entries)
            .filter(record_key::Column::Generation.eq(generation))
            .filter(record_key::Column::Field.eq(FILTER_FENCES_FIELD))
            .into_tuple()
            .all(db)
            .await?;
        let [(0, entries)] = rows.as_slice() else {
            return Ok(None);
        };
        Ok(Unpacked::read(entries).and_then(|read| Self::from_runs(read.runs())))
    }

    /// The fences from their runs (each a value, its count, then its
    /// fences' ordinals); `None` when a value repeats or its fences are not
    /// its count's, ascending.
    fn from_runs<'a>(runs: impl Iterator<Item = (&'a str, &'a [u32])>) -> Option<Self> {
        let mut values = BTreeMap::new();
        for (value, numbers) in runs {
            let (&count, ordinals) = numbers.split_first()?;
            let complete = ordinals.len() == count.div_ceil(FENCE_EVERY) as usize;
            let ascending = ordinals.windows(2).all(|pair| pair[0] < pair[1]);
            if !complete || !ascending || count == 0 {
                return None;
            }
            let fences = ValueFences {
                count,
                ordinals: ordinals.to_vec(),
            };
            if values.insert(value.to_owned(), fences).is_some() {
                return None;
            }
        }
        Some(Self { values })
    }

    /// How many rows of the base hold `value`.
    pub fn count_of(&self, value: &str) -> u32 {
        self.values.get(value).map_or(0, |fences| fences.count)
    }

    /// The filter ordinal of `value`'s last fence at or before the whole
    /// list's ordinal `ordinal`, 0 when none is: every row of the value up
    /// to it lies at or before `ordinal`, and from its next fence on after.
    pub fn after(&self, value: &str, ordinal: u32) -> u32 {
        let Some(fences) = self.values.get(value) else {
            return 0;
        };
        match fences.ordinals.partition_point(|&fence| fence <= ordinal) {
            0 => 0,
            // Fence `n` (from 1) holds filter ordinal (n - 1) · FENCE_EVERY + 1.
            fence => (fence as u32 - 1) * FENCE_EVERY + 1,
        }
    }
}

/// Writes the filter fences of `generation`, a numbered full list; how many
/// values they cover. Like [`super::fences::write`], call it inside the
/// publishing transaction, after the keys are settled.
pub async fn write(db: &impl ConnectionTrait, generation: i64) -> Result<u64, sea_orm::DbErr> {
    let backend = db.get_database_backend();
    let mut values: BTreeMap<String, Vec<u32>> = BTreeMap::new();
    for row in db.query_all_raw(value_counts(backend, generation)).await? {
        let (value, count): (String, i64) = (row.try_get("", "value")?, row.try_get("", "count")?);
        let count = u32::try_from(count).map_err(|_| numbered_wrong(generation))?;
        values.insert(value, vec![count]);
    }
    let wanted: Vec<(String, i64)> = values
        .iter()
        .flat_map(|(value, numbers)| {
            (1..=i64::from(numbers[0]))
                .step_by(FENCE_EVERY as usize)
                .map(move |filter_ordinal| (value.clone(), filter_ordinal))
        })
        .collect();
    let mut found = Vec::with_capacity(wanted.len());
    for batch in wanted.chunks(PER_STATEMENT) {
        let statement = fences_looked_up(backend, generation, batch);
        for row in db.query_all_raw(statement).await? {
            let fence: (String, i64, i64) = (
                row.try_get("", "filter_value")?,
                row.try_get("", "filter_ordinal")?,
                row.try_get("", "ordinal")?,
            );
            found.push(fence);
        }
    }
    if found.len() != wanted.len() {
        return Err(numbered_wrong(generation));
    }
    found.sort_unstable();
    for (value, _, ordinal) in found {
        let ordinal = u32::try_from(ordinal).map_err(|_| numbered_wrong(generation))?;
        values
            .get_mut(&value)
            .ok_or_else(|| numbered_wrong(generation))?
            .push(ordinal);
    }
    let runs: Vec<(&str, &[u32])> = values
        .iter()
        .map(|(value, numbers)| (value.as_str(), numbers.as_slice()))
        .collect();
    if FilterFences::from_runs(runs.iter().copied()).is_none() {
        return Err(numbered_wrong(generation));
    }
    if runs
        .iter()
        .any(|(value, _)| u16::try_from(value.len()).is_err())
    {
        // A value too long for a run: no layer over this generation.
        return Ok(0);
    }
    let size = runs.iter().map(|(_, numbers)| numbers.len()).sum();
    let block = blocks::pack(&runs, size);
    record_key::Entity::insert(record_key::ActiveModel {
        generation: Set(generation),
        field: Set(FILTER_FENCES_FIELD.to_owned()),
        block: Set(0),
        first_value: Set(block.first_value),
        last_value: Set(block.last_value),
        size: Set(i32::try_from(block.size).map_err(|_| numbered_wrong(generation))?),
        entries: Set(block.entries),
    })
    .exec(db)
    .await?;
    Ok(runs.len() as u64)
}

/// The error of a generation whose filter ordinals are not dense per value.
fn numbered_wrong(generation: i64) -> sea_orm::DbErr {
    sea_orm::DbErr::Custom(format!(
        "generation {generation}'s filter ordinals are not numbered 1..=n per value: no filter fences"
    ))
}

/// Each filter value of `generation` and its row count (its highest
/// filter ordinal), by a skip through the `(generation, filter_value,
/// filter_ordinal)` index: two probes a value, however many rows it holds.
fn value_counts(backend: DbBackend, generation: i64) -> Statement {
    let sql = "WITH RECURSIVE v(value) AS ( \
           SELECT (SELECT filter_value FROM record WHERE generation = $1 \
                   AND filter_value IS NOT NULL ORDER BY filter_value LIMIT 1) \
           UNION ALL \
           SELECT (SELECT r.filter_value FROM record r WHERE r.generation = $1 \
                   AND r.filter_value > v.value ORDER BY r.filter_value LIMIT 1) \
           FROM v WHERE v.value IS NOT NULL) \
         SELECT v.value AS value, \
                (SELECT r.filter_ordinal FROM record r WHERE r.generation = $1 \
                 AND r.filter_value = v.value ORDER BY r.filter_ordinal DESC LIMIT 1) AS count \
         FROM v WHERE v.value IS NOT NULL";
    Statement::from_sql_and_values(backend, sql, [generation.into()])
}

/// The whole list's ordinal of each of `wanted` (a value and a filter
/// ordinal) in `generation`, each its own probe of the filter ordinal
/// index (`OFFSET 0` on PostgreSQL, as in [`crate::store::lookups`]).
fn fences_looked_up(backend: DbBackend, generation: i64, wanted: &[(String, i64)]) -> Statement {
    let mut values: Vec<sea_orm::Value> = vec![generation.into()];
    let rows: Vec<String> = wanted
        .iter()
        .map(|(value, filter_ordinal)| {
            values_row(
                &mut values,
                [value.as_str().into(), (*filter_ordinal).into()],
            )
        })
        .collect();
    let sql = match backend {
        DbBackend::Postgres => format!(
            "SELECT r.* FROM (VALUES {}) AS w(value, filter_ordinal), \
             LATERAL (SELECT filter_value, filter_ordinal, ordinal FROM record \
                      WHERE generation = $1 AND filter_value = w.value \
                        AND filter_ordinal = w.filter_ordinal OFFSET 0) r",
            rows.join(", ")
        ),
        _ => format!(
            "WITH w(value, filter_ordinal) AS (VALUES {}) \
             SELECT r.filter_value, r.filter_ordinal, r.ordinal FROM w JOIN record r \
               ON r.generation = $1 AND r.filter_value = w.value \
              AND r.filter_ordinal = w.filter_ordinal",
            rows.join(", ")
        ),
    };
    Statement::from_sql_and_values(backend, sql, values)
}

/// For each of `searched` (a filter value and an anchor in the whole list,
/// `a`), how many of `generation`'s rows of that value lie among its first
/// `a` rows (a list whose filter `fences` these are).
pub async fn anchors(
    db: &impl ConnectionTrait,
    generation: i64,
    fences: &FilterFences,
    searched: &[(&str, u32)],
) -> Result<Vec<u32>, sea_orm::DbErr> {
    let mut anchors: Vec<u32> = searched
        .iter()
        .map(|&(value, anchor)| fences.after(value, anchor))
        .collect();
    // A value with no row at or before the anchor has none before it.
    let counted: Vec<usize> = (0..searched.len()).filter(|&at| anchors[at] > 0).collect();
    let backend = db.get_database_backend();
    for batch in counted.chunks(PER_STATEMENT) {
        let mut values: Vec<sea_orm::Value> = vec![generation.into()];
        let rows: Vec<String> = batch
            .iter()
            .map(|&at| {
                let (value, anchor) = searched[at];
                values_row(
                    &mut values,
                    [
                        (at as i64).into(),
                        value.into(),
                        i64::from(anchors[at]).into(),
                        i64::from(anchor).into(),
                    ],
                )
            })
            .collect();
        let sql = format!(
            "WITH w(n, value, fence, anchor) AS (VALUES {}) \
             SELECT w.n AS n, (SELECT count(*) FROM record r \
                      WHERE r.generation = $1 AND r.filter_value = w.value \
                        AND r.filter_ordinal > w.fence AND r.filter_ordinal < w.fence + {FENCE_EVERY} \
                        AND r.ordinal <= w.anchor) AS before \
             FROM w",
            rows.join(", ")
        );
        let statement = Statement::from_sql_and_values(backend, sql, values);
        for row in db.query_all_raw(statement).await? {
            let (at, before): (i64, i64) = (row.try_get("", "n")?, row.try_get("", "before")?);
            let counted_wrong =
                || sea_orm::DbErr::Custom("a filter anchor's count does not fit".to_owned());
            let at = usize::try_from(at).map_err(|_| counted_wrong())?;
            let before = u32::try_from(before).map_err(|_| counted_wrong())?;
            *anchors.get_mut(at).ok_or_else(counted_wrong)? += before;
        }
    }
    Ok(anchors)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Fences of values with these counts and fence ordinals.
    fn fences(values: &[(&str, &[u32])]) -> Option<FilterFences> {
        FilterFences::from_runs(values.iter().copied())
    }

    #[test]
    fn a_values_last_fence_at_or_before_an_ordinal_is_found() {
        // "a": 130 rows, fences (filter ordinals 1, 65, 129) at ordinals
        // 3, 200, 400.
        let read = fences(&[("a", &[130, 3, 200, 400]), ("b", &[1, 7])]).expect("fences");
        assert_eq!(read.count_of("a"), 130);
        assert_eq!(read.count_of("none"), 0);
        assert_eq!(read.after("a", 2), 0);
        assert_eq!(read.after("a", 3), 1);
        assert_eq!(read.after("a", 199), 1);
        assert_eq!(read.after("a", 200), 65);
        assert_eq!(read.after("a", 1_000), 129);
        assert_eq!(read.after("b", 6), 0);
        assert_eq!(read.after("b", 7), 1);
        assert_eq!(read.after("none", 1_000), 0);
    }

    #[test]
    fn fences_too_few_out_of_order_or_repeated_do_not_read() {
        assert!(fences(&[("a", &[65, 3])]).is_none(), "65 rows need two");
        assert!(fences(&[("a", &[65, 3, 2])]).is_none(), "descending");
        assert!(fences(&[("a", &[0])]).is_none(), "no rows");
        assert!(fences(&[("a", &[1, 3]), ("a", &[1, 4])]).is_none());
        assert!(fences(&[("a", &[65, 3, 90]), ("b", &[64, 1])]).is_some());
    }
}
