//! A resync's keys carried over from the previous generation's instead of
//! read back from every stored record: the records the resync kept as they
//! were keep their values, only their ordinals move (each kept record's
//! place among the kept ones is the same in both generations, as both are
//! in the list's order), and the few records it stamped (changed or new,
//! [`Stamped`]) add theirs. The keys are block for block those a read-back
//! would build (`tests/api/keys_built.rs` compares them).
//!
//! It holds only when every record of the previous generation is either
//! kept or stamped again; one that left the list (a deletion flagged long
//! ago and now dropped) breaks the count, and the keys are read back. So
//! does a list whose order is not computed as it was when the previous
//! generation was numbered: a few kept records spread over the list are
//! looked up in both generations first.
//!
//! Where each record of the previous generation went is then known, and
//! [`carry`] returns it (a [`LayerMap`]) for the caller to keep with the new
//! generation.

use std::cmp::Ordering;
use std::ops::Range;

use sea_orm::{
    ColumnTrait, ConnectionTrait, DbBackend, EntityTrait, QueryFilter, QueryOrder, QuerySelect,
};

use entity::record_key;

use super::blocks::{self, Block, Unpacked};
use super::gathered::{Gathered, Sorted};
use super::{declared, record_keyed, values, write_field};
use crate::data::DataType;
use crate::store::Stamped;
use crate::store::layers::{self, LayerMap};
use crate::store::lookups::each_looked_up;

/// Records looked up per statement (the stamped rows by ordinal, then by id
/// in the previous generation).
const LOOKUP_BATCH: usize = 5_000;

/// Stamped bodies parsed between two yields to the async runtime (a few
/// milliseconds' work).
const PARSED_BETWEEN_YIELDS: usize = 500;

/// Builds the keys of `generation` (`count` records of `data_type`, of
/// which `stamped` are every one its swap stamped) from those of
/// `previous`, the generation it replaces, holding `previous_count`
/// records. `None` when they cannot be carried:
/// `previous` lacks a declared field's keys, a record of it left the list,
/// kept records are not where the list's order put them before, or a block
/// or a stamped record does not read; the caller then reads them
/// back (a field's keys written before that are deleted again). Otherwise
/// where each record of `previous` went in `generation`: `previous` as the
/// base, the stamped rows as the delta ([`LayerMap::from_placed`]).
pub async fn carry<C>(
    db: &C,
    data_type: DataType,
    previous: (i64, i64),
    generation: i64,
    count: u64,
    stamped: &[Stamped],
) -> Result<Option<LayerMap>, sea_orm::DbErr>
where
    C: ConnectionTrait,
{
    let (previous, previous_count) = previous;
    let fields = declared(data_type);
    let names: Vec<&str> = fields.iter().map(|field| field.name.as_str()).collect();
    let keyed: Option<Option<String>> = entity::record_generation::Entity::find_by_id(previous)
        .select_only()
        .column(entity::record_generation::Column::KeyedFields)
        .into_tuple()
        .one(db)
        .await?;
    let keyed = keyed.flatten().unwrap_or_default();
    if names.is_empty() || keyed.split(',').ne(names.iter().copied()) {
        return Ok(None);
    }
    let (Ok(previous_count), Ok(count)) = (u32::try_from(previous_count), u32::try_from(count))
    else {
        return Ok(None);
    };
    // Where every record goes, checked on a few, before any JSON is read.
    let mut placed = Vec::with_capacity(stamped.len());
    for row in stamped {
        let Ok(ordinal) = u32::try_from(row.ordinal) else {
            return Ok(None);
        };
        placed.push(ordinal);
    }
    placed.sort_unstable();
    let replaced = previous_places(db, previous, stamped).await?;
    let Some(moved_to) = renumbered(previous_count, &replaced, count, &placed) else {
        return Ok(None);
    };
    let Ok(renumbering) = LayerMap::from_placed(previous_count, replaced, &placed) else {
        return Ok(None);
    };
    if !kept_in_place(db, (previous, generation), &moved_to).await? {
        return Ok(None);
    }
    let mut changed: Vec<Gathered> = fields
        .iter()
        .map(|field| Gathered::new(&field.kind))
        .collect();
    let mut read = 0;
    for batch in stamped.chunks(LOOKUP_BATCH) {
        let ordinals = batch.iter().map(|row| sea_orm::Value::from(row.ordinal));
        let rows = db
            .query_all_raw(each_looked_up(
                DbBackend::Postgres,
                generation,
                "ordinal",
                "ordinal, body",
                ordinals,
            ))
            .await?;
        for row in rows {
            let (ordinal, body): (i64, String) =
                (row.try_get("", "ordinal")?, row.try_get("", "body")?);
            let (Ok(ordinal), Ok(found)) =
                (u32::try_from(ordinal), values::extract(&body, &fields))
            else {
                return Ok(None);
            };
            read += 1;
            if read % PARSED_BETWEEN_YIELDS == 0 {
                // Thousands of bodies parsed in a row would hold the async
                // worker for tens of milliseconds.
                tokio::task::yield_now().await;
            }
            for (field, value) in changed.iter_mut().zip(found) {
                if let Some(value) = value {
                    field.add(ordinal, &value);
                }
            }
        }
    }
    if read != stamped.len() {
        return Ok(None);
    }
    let mut keyed = Vec::with_capacity(fields.len());
    for (field, changed) in fields.iter().zip(changed) {
        // A value no key holds: no keys for the field, as read back.
        let Some(changed) = changed.sorted() else {
            continue;
        };
        let previous_blocks: Vec<Vec<u8>> = record_key::Entity::find()
            .select_only()
            .column(record_key::Column::Entries)
            .filter(record_key::Column::Generation.eq(previous))
            .filter(record_key::Column::Field.eq(&field.name))
            .order_by_asc(record_key::Column::Block)
            .into_tuple()
            .all(db)
            .await?;
        match carried_field(&previous_blocks, &moved_to, &changed) {
            FieldKeys::Blocks(cut) => {
                write_field(db, generation, field, cut).await?;
                keyed.push(field.name.as_str());
            }
            FieldKeys::Unkeyable => {}
            FieldKeys::Unreadable => {
                // Nothing of this generation's keys stays for the read-back.
                record_key::Entity::delete_many()
                    .filter(record_key::Column::Generation.eq(generation))
                    .exec(db)
                    .await?;
                return Ok(None);
            }
        }
    }
    record_keyed(db, generation, &keyed).await?;
    Ok(Some(renumbering))
}

/// The ordinals in `previous` of the records among `stamped` it held,
/// ascending.
async fn previous_places<C>(
    db: &C,
    previous: i64,
    stamped: &[Stamped],
) -> Result<Vec<u32>, sea_orm::DbErr>
where
    C: ConnectionTrait,
{
    let mut places = Vec::with_capacity(stamped.len());
    for batch in stamped.chunks(LOOKUP_BATCH) {
        let ids = batch
            .iter()
            .map(|row| sea_orm::Value::from(row.record_id.as_str()));
        let rows = db
            .query_all_raw(each_looked_up(
                DbBackend::Postgres,
                previous,
                "record_id",
                "ordinal",
                ids,
            ))
            .await?;
        for row in rows {
            let ordinal: i64 = row.try_get("", "ordinal")?;
            places.push(u32::try_from(ordinal).unwrap_or(u32::MAX));
        }
    }
    places.sort_unstable();
    Ok(places)
}

/// How many kept records [`kept_in_place`] looks up.
const PLACES_CHECKED: usize = 64;

/// Whether kept records spread over the previous generation are where
/// `moved_to` puts them in the new one (`previous` and `generation`). Both
/// were numbered in the list's order, so they are, unless that order is not
/// computed as it was (a release that sorts a data type differently), which
/// the counts do not show: then every kept record may have moved, and the
/// keys are read back. Two statements of [`PLACES_CHECKED`] lookups; an
/// order that changed for only a few records can slip through.
async fn kept_in_place<C>(
    db: &C,
    (previous, generation): (i64, i64),
    moved_to: &[u32],
) -> Result<bool, sea_orm::DbErr>
where
    C: ConnectionTrait,
{
    let checked = spread_over_kept(moved_to, PLACES_CHECKED);
    if checked.is_empty() {
        return Ok(true);
    }
    let ordinals = checked.iter().map(|&ordinal| i64::from(ordinal).into());
    let rows = db
        .query_all_raw(each_looked_up(
            DbBackend::Postgres,
            previous,
            "ordinal",
            "ordinal, record_id",
            ordinals,
        ))
        .await?;
    let mut expected = std::collections::HashMap::with_capacity(rows.len());
    for row in rows {
        let (ordinal, record_id): (i64, String) =
            (row.try_get("", "ordinal")?, row.try_get("", "record_id")?);
        let to = usize::try_from(ordinal - 1)
            .ok()
            .and_then(|index| moved_to.get(index));
        expected.insert(record_id, to.copied().unwrap_or_default());
    }
    if expected.len() != checked.len() {
        return Ok(false);
    }
    let ids = expected
        .keys()
        .map(|id| id.as_str().into())
        .collect::<Vec<_>>();
    let rows = db
        .query_all_raw(each_looked_up(
            DbBackend::Postgres,
            generation,
            "record_id",
            "record_id, ordinal",
            ids.into_iter(),
        ))
        .await?;
    let mut found = 0;
    for row in rows {
        let (record_id, ordinal): (String, i64) =
            (row.try_get("", "record_id")?, row.try_get("", "ordinal")?);
        if expected.get(&record_id).map(|&to| i64::from(to)) != Some(ordinal) {
            return Ok(false);
        }
        found += 1;
    }
    Ok(found == expected.len())
}

/// Up to about `most` ordinals of the previous generation's kept records
/// (those `moved_to` gives a place), evenly spread from the first,
/// ascending.
fn spread_over_kept(moved_to: &[u32], most: usize) -> Vec<u32> {
    let kept = moved_to.iter().filter(|&&to| to > 0).count();
    let step = kept.div_ceil(most.max(1)).max(1);
    moved_to
        .iter()
        .zip(1u32..)
        .filter(|&(&to, _)| to > 0)
        .step_by(step)
        .map(|(_, ordinal)| ordinal)
        .collect()
}

/// One field's keys carried over.
#[derive(Debug, PartialEq, Eq)]
enum FieldKeys {
    /// Its blocks.
    Blocks(Vec<Block>),
    /// None: a value is longer than a block holds, as read back too.
    Unkeyable,
    /// A block of the previous generation does not read, names a record it
    /// does not hold, or has its values out of order: the keys are read
    /// back.
    Unreadable,
}

/// A field's keys as runs of values (in byte order, each once) with the
/// ordinals of their records (ascending), borrowing the values.
#[derive(Default)]
struct Runs<'a> {
    runs: Vec<(&'a str, Range<usize>)>,
    ordinals: Vec<u32>,
}

impl<'a> Runs<'a> {
    /// Adds `ordinals` (above those `value` holds) to `value`, the last
    /// value or one after it; nothing when there are none.
    fn push(&mut self, value: &'a str, ordinals: impl IntoIterator<Item = u32>) {
        let start = self.ordinals.len();
        self.ordinals.extend(ordinals);
        let end = self.ordinals.len();
        if end == start {
            return;
        }
        match self.runs.last_mut() {
            Some((last, range)) if *last == value => range.end = end,
            _ => self.runs.push((value, start..end)),
        }
    }

    fn iter(&self) -> impl Iterator<Item = (&'a str, &[u32])> + '_ {
        self.runs
            .iter()
            .map(|(value, range)| (*value, &self.ordinals[range.clone()]))
    }
}

/// A field's keys in the previous generation (its packed blocks, in
/// order), each kept record moved to its new ordinal (`moved_to[p - 1]`,
/// 0 for one replaced), merged with the stamped records' (`changed`), and
/// cut into blocks.
fn carried_field(previous_blocks: &[Vec<u8>], moved_to: &[u32], changed: &Sorted) -> FieldKeys {
    let mut unpacked = Vec::with_capacity(previous_blocks.len());
    for entries in previous_blocks {
        let Some(block) = Unpacked::read(entries) else {
            return FieldKeys::Unreadable;
        };
        unpacked.push(block);
    }
    let mut kept = Runs::default();
    let mut unheld = false;
    for block in &unpacked {
        for (value, ordinals) in block.runs() {
            kept.push(
                value,
                ordinals.iter().filter_map(|ordinal| {
                    let to = (*ordinal as usize)
                        .checked_sub(1)
                        .and_then(|index| moved_to.get(index));
                    unheld |= to.is_none();
                    to.copied().filter(|to| *to > 0)
                }),
            );
        }
    }
    if unheld {
        return FieldKeys::Unreadable;
    }
    let mut merged = Runs::default();
    let (mut kept, mut changed) = (kept.iter().peekable(), changed.runs().peekable());
    loop {
        let order = match (kept.peek(), changed.peek()) {
            (Some((a, _)), Some((b, _))) => a.cmp(b),
            (Some(_), None) => Ordering::Less,
            (None, Some(_)) => Ordering::Greater,
            (None, None) => break,
        };
        let (value, ordinals) = match order {
            Ordering::Less => kept.next(),
            Ordering::Greater => changed.next(),
            Ordering::Equal => {
                let (Some((value, a)), Some((_, b))) = (kept.next(), changed.next()) else {
                    break;
                };
                merged.push(value, layers::merged(a.iter().copied(), b.iter().copied()));
                continue;
            }
        }
        .unwrap_or_default();
        merged.push(value, ordinals.iter().copied());
    }
    // Values out of order mean the previous keys were not written as keys
    // are now (a change to how values are encoded): read back instead.
    if merged.runs.windows(2).any(|pair| pair[0].0 >= pair[1].0) {
        return FieldKeys::Unreadable;
    }
    match blocks::cut(merged.iter()) {
        Some(cut) => FieldKeys::Blocks(cut),
        None => FieldKeys::Unkeyable,
    }
}

/// Where each record of the previous generation (`previous_count` of them)
/// goes in the new one (`count`): `moved_to[p - 1]`, 0 for those at the
/// ascending ordinals `replaced` (stamped again). The kept records fill the
/// places the stamped ones (at the ascending ordinals `placed`) leave, in
/// their order. `None` unless that fills the new generation exactly: a
/// record of the previous generation neither kept nor stamped left the list.
fn renumbered(
    previous_count: u32,
    replaced: &[u32],
    count: u32,
    placed: &[u32],
) -> Option<Vec<u32>> {
    let kept = previous_count.checked_sub(u32::try_from(replaced.len()).ok()?)?;
    if kept != count.checked_sub(u32::try_from(placed.len()).ok()?)? {
        return None;
    }
    let mut moved_to = vec![0u32; previous_count as usize];
    let (mut replaced, mut placed) = (replaced.iter().peekable(), placed.iter().peekable());
    let mut next = 1u32;
    for (index, to) in moved_to.iter_mut().enumerate() {
        let ordinal = u32::try_from(index + 1).ok()?;
        if replaced.next_if_eq(&&ordinal).is_some() {
            continue;
        }
        while placed.next_if_eq(&&next).is_some() {
            next += 1;
        }
        *to = next;
        next += 1;
    }
    while placed.next_if_eq(&&next).is_some() {
        next += 1;
    }
    let filled = replaced.next().is_none() && placed.next().is_none() && next == count + 1;
    filled.then_some(moved_to)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_places_checked_are_kept_records_spread_from_the_first() {
        // Ten records, the 1st and 6th stamped again: eight kept.
        let moved_to = [0, 1, 2, 3, 4, 0, 5, 6, 7, 8];
        assert_eq!(spread_over_kept(&moved_to, 4), vec![2, 4, 7, 9]);
        assert_eq!(
            spread_over_kept(&moved_to, 64),
            vec![2, 3, 4, 5, 7, 8, 9, 10]
        );
        assert!(spread_over_kept(&[0, 0], 64).is_empty(), "none kept");
    }

    #[test]
    fn kept_records_fill_the_places_the_stamped_ones_leave_in_their_order() {
        // Five records; the 2nd and 4th were stamped again (at 1 and 5 now)
        // and a new one went to 3.
        assert_eq!(
            renumbered(5, &[2, 4], 6, &[1, 3, 5]),
            Some(vec![2, 0, 4, 0, 6])
        );
        // Nothing changed but a record joined at the end.
        assert_eq!(renumbered(3, &[], 4, &[4]), Some(vec![1, 2, 3]));
        // Everything stamped again.
        assert_eq!(renumbered(2, &[1, 2], 2, &[1, 2]), Some(vec![0, 0]));
    }

    #[test]
    fn kept_keys_move_to_their_new_places_and_merge_with_the_stamped_ones() {
        // The previous generation: "a" at 1, 2, 4 (one run across two
        // blocks), "b" at 3; record 2 was stamped again (now "c" at 5) and
        // a new record holds "a" at 3.
        let previous =
            blocks::cut([("a", &[1, 2][..]), ("a", &[4][..]), ("b", &[3][..])]).expect("cut");
        assert_eq!(previous.len(), 1);
        let moved_to = renumbered(4, &[2], 5, &[3, 5]).expect("fits");
        assert_eq!(moved_to, vec![1, 0, 2, 4]);
        let mut changed = Gathered::new(&crate::data::fields::Kind::Text);
        changed.add(3, "a");
        changed.add(5, "c");
        let changed = changed.sorted().expect("keyable");
        let entries: Vec<Vec<u8>> = previous.into_iter().map(|block| block.entries).collect();
        let FieldKeys::Blocks(carried) = carried_field(&entries, &moved_to, &changed) else {
            panic!("carried");
        };
        let expected =
            blocks::cut([("a", &[1, 3, 4][..]), ("b", &[2][..]), ("c", &[5][..])]).expect("cut");
        assert_eq!(carried, expected);
        // A block naming a record the previous generation does not hold.
        assert_eq!(
            carried_field(&entries, &moved_to[..2], &changed),
            FieldKeys::Unreadable
        );
        // Previous values out of byte order.
        let unordered = blocks::cut([("b", &[1][..]), ("a", &[3][..])]).expect("cut");
        let entries: Vec<Vec<u8>> = unordered.into_iter().map(|block| block.entries).collect();
        assert_eq!(
            carried_field(&entries, &moved_to, &changed),
            FieldKeys::Unreadable
        );
    }

    #[test]
    fn a_record_that_left_the_list_or_places_that_do_not_fit_carry_nothing() {
        // Record 3 neither kept nor stamped: it left.
        assert_eq!(renumbered(4, &[1], 2, &[1]), None);
        // A stamped place beyond the list, or twice.
        assert_eq!(renumbered(3, &[1], 3, &[4]), None);
        assert_eq!(renumbered(3, &[1], 3, &[2, 2]), None);
        // A replaced ordinal the previous generation does not hold.
        assert_eq!(renumbered(3, &[4], 3, &[3]), None);
    }
}
