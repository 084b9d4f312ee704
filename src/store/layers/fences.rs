//! A full generation's fences, and the anchors they find: where a moved or
//! new record falls among a long base's rows, in work that follows the
//! records searched, not the list (`docs/store-next.md` §2b, step 4).
//!
//! The fences are every [`FENCE_EVERY`]th row's place in the list's order
//! (ordinals 1, 65, 129, …): its sort key and id. They are kept as
//! `record_key` blocks under the reserved field [`FENCES_FIELD`] (no
//! declared field starts with `:`), so they go wherever the generation's
//! keys go, and a generation's are written once its rows are numbered
//! ([`write`]). A record's *anchor*, the number of base rows before it in
//! the list's order, is then the last fence before it, found in memory
//! ([`Fences::after`]), plus a count over at most `FENCE_EVERY - 1` base
//! ordinals after that fence: one statement for a thousand records
//! ([`anchors`]). A binary search of the base's rows without fences took
//! 0.25-0.4 s per 1,000 records at a million rows; with fences, the
//! statement takes about 0.03 s (BENCHMARKS.md, "Anchors …").
//!
//! With layering on (`EngineConfig::layering`), every long full publish
//! writes them, and a layered publish over it asks them for anchors.

use std::cmp::Ordering;

use sea_orm::{
    ColumnTrait, ConnectionTrait, DbBackend, EntityTrait, QueryFilter, QueryOrder, QuerySelect,
    Set, Statement,
};

use entity::record_key;

use crate::data::Direction;
use crate::store::lookups::{each_looked_up, values_row};

/// One row in this many is a fence: an anchor is counted over fewer rows.
pub const FENCE_EVERY: u32 = 64;

/// The `record_key` field the fences are kept under.
pub const FENCES_FIELD: &str = ":fences";

/// Fences a `record_key` block holds (a million rows: 16 blocks of ~50 kB).
const FENCES_PER_BLOCK: usize = 1_024;

/// Records whose anchors one statement counts (four parameters each).
const ANCHORS_PER_STATEMENT: usize = 1_000;

/// A place in a list's order: a record's sort key, then its id.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct ListKey {
    /// What the list is ordered by.
    pub sort_key: String,
    /// The record's id, which orders records with equal sort keys.
    pub record_id: String,
}

impl ListKey {
    /// How `self` compares with `other` in a list ordered `direction`: the
    /// sort key that way, then the id ascending, byte by byte (as the
    /// publish's `ORDER BY sort_key …, record_id` under `COLLATE "C"`).
    pub fn cmp_in(&self, other: &Self, direction: Direction) -> Ordering {
        direction.compare(
            (self.sort_key.as_bytes(), self.record_id.as_bytes()),
            (other.sort_key.as_bytes(), other.record_id.as_bytes()),
        )
    }
}

/// A generation's fences, read into memory.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Fences {
    /// The list's order.
    direction: Direction,
    /// Rows in the fenced generation.
    count: u32,
    /// The places of its rows 1, 1 + `FENCE_EVERY`, …, in list order.
    places: Vec<ListKey>,
}

impl Fences {
    /// Fences of a list of `count` rows from `places` (those of ordinals 1,
    /// 1 + [`FENCE_EVERY`], …); `None` when they are not one for each of
    /// those ordinals, strictly in the list's order.
    pub fn new(direction: Direction, count: u32, places: Vec<ListKey>) -> Option<Self> {
        let ordered = places
            .windows(2)
            .all(|pair| pair[0].cmp_in(&pair[1], direction) == Ordering::Less);
        let complete = places.len() == count.div_ceil(FENCE_EVERY) as usize;
        (ordered && complete).then_some(Self {
            direction,
            count,
            places,
        })
    }

    /// The fences of `generation` (a list of `count` rows ordered
    /// `direction`), when [`write`] wrote them all and they read back in
    /// order.
    pub async fn read(
        db: &impl ConnectionTrait,
        generation: i64,
        count: u32,
        direction: Direction,
    ) -> Result<Option<Self>, sea_orm::DbErr> {
        let blocks: Vec<(i32, Vec<u8>)> = record_key::Entity::find()
            .select_only()
            .column(record_key::Column::Block)
            .column(record_key::Column::Entries)
            .filter(record_key::Column::Generation.eq(generation))
            .filter(record_key::Column::Field.eq(FENCES_FIELD))
            .order_by_asc(record_key::Column::Block)
            .into_tuple()
            .all(db)
            .await?;
        Ok(joined(&blocks).and_then(|places| Self::new(direction, count, places)))
    }

    /// The list's order.
    pub fn direction(&self) -> Direction {
        self.direction
    }

    /// Rows in the fenced generation.
    pub fn count(&self) -> u32 {
        self.count
    }

    /// The ordinal of the last fence before `place` in the list's order, 0
    /// when none is: the rows up to it all come before `place`, and those
    /// from the next fence on all after it.
    pub fn after(&self, place: &ListKey) -> u32 {
        let before = self
            .places
            .partition_point(|fence| fence.cmp_in(place, self.direction) == Ordering::Less);
        // Fence `before` holds ordinal (before - 1) · FENCE_EVERY + 1, at
        // most `count` (a u32), as `new` checked.
        match before {
            0 => 0,
            _ => (before as u32 - 1) * FENCE_EVERY + 1,
        }
    }
}

/// The places of fence `blocks` (block number and entries, in block
/// order), joined; `None` when a block is missing, does not read, or is
/// not full but the last.
fn joined(blocks: &[(i32, Vec<u8>)]) -> Option<Vec<ListKey>> {
    let mut places = Vec::new();
    for (expected, (block, entries)) in blocks.iter().enumerate() {
        if usize::try_from(*block).ok() != Some(expected) {
            return None;
        }
        let mut read = unpacked(entries)?;
        let last = expected + 1 == blocks.len();
        if read.len() != FENCES_PER_BLOCK && !last {
            return None;
        }
        places.append(&mut read);
    }
    Some(places)
}

/// Writes the fences of `generation`, a numbered list of `count` rows, as
/// `record_key` blocks; how many. A sort key or id longer than a block
/// entry holds (64 kB) writes none, and a layered publish then publishes in
/// full. Call it inside the publishing transaction (a write cut short
/// leaves fences that do not read), after the keys are settled: a carry of
/// keys that fails deletes every `record_key` row of the generation.
pub async fn write(
    db: &impl ConnectionTrait,
    generation: i64,
    count: u32,
) -> Result<u64, sea_orm::DbErr> {
    let ordinals: Vec<i64> = (1..=i64::from(count))
        .step_by(FENCE_EVERY as usize)
        .collect();
    let backend = db.get_database_backend();
    let mut blocks = Vec::new();
    for (block, wanted) in ordinals.chunks(FENCES_PER_BLOCK).enumerate() {
        // Each ordinal its own probe of the ordinal index, whatever the
        // statistics of a list just numbered say.
        let statement = each_looked_up(
            backend,
            generation,
            "ordinal",
            "ordinal, sort_key, record_id",
            wanted.iter().map(|&ordinal| sea_orm::Value::from(ordinal)),
        );
        let mut places = Vec::with_capacity(wanted.len());
        for row in db.query_all_raw(statement).await? {
            let place: (i64, String, String) = (
                row.try_get("", "ordinal")?,
                row.try_get("", "sort_key")?,
                row.try_get("", "record_id")?,
            );
            places.push(place);
        }
        places.sort_unstable_by_key(|(ordinal, _, _)| *ordinal);
        let found: Vec<i64> = places.iter().map(|(ordinal, _, _)| *ordinal).collect();
        if found != wanted {
            return Err(sea_orm::DbErr::Custom(format!(
                "generation {generation} is not numbered 1..={count}: no fences"
            )));
        }
        let places: Vec<ListKey> = places
            .into_iter()
            .map(|(_, sort_key, record_id)| ListKey {
                sort_key,
                record_id,
            })
            .collect();
        let Some(entries) = packed(&places) else {
            return Ok(0);
        };
        blocks.push(record_key::ActiveModel {
            generation: Set(generation),
            field: Set(FENCES_FIELD.to_owned()),
            block: Set(block as i32),
            first_value: Set(places[0].sort_key.clone()),
            last_value: Set(places[places.len() - 1].sort_key.clone()),
            size: Set(places.len() as i32),
            entries: Set(entries),
        });
    }
    let written = blocks.len() as u64;
    for batch in blocks.chunks(16) {
        record_key::Entity::insert_many(batch.to_vec())
            .exec(db)
            .await?;
    }
    Ok(written)
}

/// The anchor of each of `places` among `generation`'s rows (a list whose
/// `fences` these are): how many of its rows come before the place in the
/// list's order. A place equal to a row's counts that row as after it.
pub async fn anchors(
    db: &impl ConnectionTrait,
    generation: i64,
    fences: &Fences,
    places: &[ListKey],
) -> Result<Vec<u32>, sea_orm::DbErr> {
    let mut anchors: Vec<u32> = places.iter().map(|place| fences.after(place)).collect();
    // A place before the first fence (row 1) has none before it.
    let searched: Vec<usize> = (0..places.len()).filter(|&at| anchors[at] > 0).collect();
    let backend = db.get_database_backend();
    for batch in searched.chunks(ANCHORS_PER_STATEMENT) {
        let statement = counted_after_fences(backend, generation, fences.direction, batch, |at| {
            (i64::from(anchors[at]), &places[at])
        });
        for row in db.query_all_raw(statement).await? {
            let at: i64 = row.try_get("", "n")?;
            let before: i64 = row.try_get("", "before")?;
            let at = usize::try_from(at).map_err(|_| counted_wrong())?;
            let before = u32::try_from(before).map_err(|_| counted_wrong())?;
            let anchor = anchors.get_mut(at).ok_or_else(counted_wrong)?;
            *anchor += before;
        }
    }
    Ok(anchors)
}

/// The error of a count that names no searched place.
fn counted_wrong() -> sea_orm::DbErr {
    sea_orm::DbErr::Custom("an anchor's count does not fit its search".to_owned())
}

/// One statement counting, for each of `searched` (an index into the
/// places, with its fence's ordinal and place by `of`), the base rows after
/// the fence and before the next one that come before the place. Each count
/// is a range of the `(generation, ordinal)` index.
fn counted_after_fences<'a>(
    backend: DbBackend,
    generation: i64,
    direction: Direction,
    searched: &[usize],
    of: impl Fn(usize) -> (i64, &'a ListKey),
) -> Statement {
    let mut values: Vec<sea_orm::Value> = vec![generation.into()];
    let mut rows = Vec::with_capacity(searched.len());
    for &at in searched {
        let (fence, place) = of(at);
        rows.push(values_row(
            &mut values,
            [
                (at as i64).into(),
                fence.into(),
                place.sort_key.clone().into(),
                place.record_id.clone().into(),
            ],
        ));
    }
    let earlier = match direction {
        Direction::Ascending => "<",
        Direction::Descending => ">",
    };
    // PostgreSQL compares the parameters under the columns' own "C"
    // collation; SQLite compares bytes.
    let bytes = match backend {
        DbBackend::Postgres => " COLLATE \"C\"",
        _ => "",
    };
    let sql = format!(
        "WITH w(n, fence, sort_key, record_id) AS (VALUES {}) \
         SELECT w.n AS n, (SELECT count(*) FROM record r \
                  WHERE r.generation = $1 AND r.ordinal > w.fence \
                    AND r.ordinal < w.fence + {FENCE_EVERY} \
                    AND (r.sort_key {earlier} w.sort_key{bytes} \
                         OR (r.sort_key = w.sort_key{bytes} AND r.record_id < w.record_id{bytes}))) \
                AS before \
         FROM w",
        rows.join(", ")
    );
    Statement::from_sql_and_values(backend, sql, values)
}

/// A block's places packed: their count, then each sort key and id as a
/// 2-byte length and its bytes, little-endian; `None` when one is longer
/// than 64 kB.
fn packed(places: &[ListKey]) -> Option<Vec<u8>> {
    let mut entries = Vec::with_capacity(4 + places.len() * 48);
    entries.extend_from_slice(&u32::try_from(places.len()).ok()?.to_le_bytes());
    for place in places {
        for text in [&place.sort_key, &place.record_id] {
            entries.extend_from_slice(&u16::try_from(text.len()).ok()?.to_le_bytes());
            entries.extend_from_slice(text.as_bytes());
        }
    }
    Some(entries)
}

/// A block's places read back; `None` when `entries` are not [`packed`].
fn unpacked(entries: &[u8]) -> Option<Vec<ListKey>> {
    let mut at = 0;
    let mut take = |count: usize| {
        let part = entries.get(at..at + count)?;
        at += count;
        Some(part)
    };
    let count = u32::from_le_bytes(take(4)?.try_into().ok()?) as usize;
    let mut places = Vec::with_capacity(count.min(FENCES_PER_BLOCK));
    for _ in 0..count {
        let mut text = || {
            let length = u16::from_le_bytes(take(2)?.try_into().ok()?) as usize;
            String::from_utf8(take(length)?.to_vec()).ok()
        };
        let sort_key = text()?;
        let record_id = text()?;
        places.push(ListKey {
            sort_key,
            record_id,
        });
    }
    (at == entries.len()).then_some(places)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A place from its sort key and id.
    fn place(sort_key: &str, record_id: &str) -> ListKey {
        ListKey {
            sort_key: sort_key.to_owned(),
            record_id: record_id.to_owned(),
        }
    }

    /// The places of a list ordered `direction`, every row's, in order.
    fn list(direction: Direction, rows: usize) -> Vec<ListKey> {
        let mut rows: Vec<ListKey> = (0..rows)
            .map(|row| place(&format!("2024-{:02}", row % 37), &format!("id-{row:05}")))
            .collect();
        rows.sort_by(|a, b| a.cmp_in(b, direction));
        rows
    }

    #[test]
    fn a_descending_list_orders_its_sort_keys_down_and_its_ids_up() {
        let (early, late) = (place("2024-01", "b"), place("2024-02", "a"));
        assert_eq!(early.cmp_in(&late, Direction::Ascending), Ordering::Less);
        assert_eq!(
            early.cmp_in(&late, Direction::Descending),
            Ordering::Greater
        );
        let (first, second) = (place("2024-01", "a"), place("2024-01", "b"));
        for direction in [Direction::Ascending, Direction::Descending] {
            assert_eq!(first.cmp_in(&second, direction), Ordering::Less);
        }
        // Bytes, not letters: "Z" (0x5A) comes before "a" (0x61).
        assert_eq!(
            place("Z", "1").cmp_in(&place("a", "1"), Direction::Ascending),
            Ordering::Less
        );
    }

    #[test]
    fn the_fence_after_a_place_brackets_its_anchor() {
        for direction in [Direction::Ascending, Direction::Descending] {
            let rows = list(direction, 1_000);
            let fences: Vec<ListKey> = rows.iter().step_by(FENCE_EVERY as usize).cloned().collect();
            let fences = Fences::new(direction, rows.len() as u32, fences).expect("in order");
            let mut searched: Vec<ListKey> = rows.clone();
            searched.extend((0..40).map(|at| place(&format!("2024-{at:02}"), "")));
            searched.extend((0..40).map(|at| place(&format!("2024-{at:02}"), "~")));
            searched.extend([place("", ""), place("~", "~"), place("2024-05x", "id")]);
            for wanted in &searched {
                let anchor = rows
                    .iter()
                    .filter(|row| row.cmp_in(wanted, direction) == Ordering::Less)
                    .count() as u32;
                let after = fences.after(wanted);
                assert!(
                    after <= anchor && anchor < after + FENCE_EVERY,
                    "{direction:?} {wanted:?}: fence {after}, anchor {anchor}"
                );
                // Right after a fence the anchor is exact: 0 or the fence.
                if after == 0 {
                    assert_eq!(anchor, 0, "{wanted:?}");
                }
            }
        }
    }

    #[test]
    fn fences_out_of_order_or_too_few_are_refused() {
        let fences = vec![place("2024-02", "a"), place("2024-01", "a")];
        assert!(Fences::new(Direction::Ascending, 100, fences.clone()).is_none());
        assert!(Fences::new(Direction::Descending, 100, fences.clone()).is_some());
        // Two fences are rows 1 and 65: a list of 65 to 128 rows.
        assert!(Fences::new(Direction::Descending, 65, fences.clone()).is_some());
        assert!(Fences::new(Direction::Descending, 64, fences.clone()).is_none());
        assert!(Fences::new(Direction::Descending, 129, fences).is_none());
        let repeated = vec![place("2024-01", "a"), place("2024-01", "a")];
        assert!(Fences::new(Direction::Ascending, 100, repeated).is_none());
        assert!(Fences::new(Direction::Ascending, 0, Vec::new()).is_some());
    }

    #[test]
    fn blocks_join_only_when_none_is_missing_or_short() {
        let rows = list(Direction::Ascending, FENCES_PER_BLOCK * 2 + 10);
        let blocks: Vec<(i32, Vec<u8>)> = rows
            .chunks(FENCES_PER_BLOCK)
            .enumerate()
            .map(|(block, places)| (block as i32, packed(places).expect("short")))
            .collect();
        assert_eq!(blocks.len(), 3);
        assert_eq!(joined(&blocks), Some(rows.clone()));
        // The second block gone: the third is out of place.
        let missing = vec![blocks[0].clone(), blocks[2].clone()];
        assert_eq!(joined(&missing), None);
        // A short block before the last.
        let short = vec![
            (0, packed(&rows[..10]).expect("short")),
            (1, packed(&rows[10..20]).expect("short")),
        ];
        assert_eq!(joined(&short), None);
        // The last block gone: they join, but are too few for the list.
        let cut = joined(&blocks[..2]).expect("joined");
        let count = (rows.len() as u32) * FENCE_EVERY;
        assert!(Fences::new(Direction::Ascending, count, cut).is_none());
        assert!(Fences::new(Direction::Ascending, count, rows).is_some());
    }

    #[test]
    fn a_packed_block_reads_back_and_a_cut_one_does_not() {
        let places = vec![place("2024-01", "inv-1"), place("", ""), place("é", "ü")];
        let entries = packed(&places).expect("short");
        assert_eq!(unpacked(&entries), Some(places));
        assert_eq!(unpacked(&entries[..entries.len() - 1]), None);
        let mut longer = entries.clone();
        longer.push(0);
        assert_eq!(unpacked(&longer), None);
        assert_eq!(packed(&[place(&"x".repeat(70_000), "a")]), None);
    }
}
