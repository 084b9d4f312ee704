//! An `orderBy` of a declared field read from its keys: the field's blocks
//! in value order, ties in the list's own order, records without a value
//! last, filtered by the query's keyed matches.

use sea_orm::{ColumnTrait, ConnectionTrait, EntityTrait, QueryFilter, QueryOrder, QuerySelect};

use entity::record_key;

use super::{Compared, blocks, keyed, matching, unpacked};
use crate::data::DataType;
use crate::data::Direction;
use crate::data::query::{Operator, OrderBy, Query};

/// The ordinals of the records of `generation` (a list of `data_type` of
/// `count` records) that `query` matches (every record without one), in
/// `order_by`'s order read from its field's keys: by value (numbers by
/// value, text by character code), records of one value in the list's own
/// order, records without the field last, as the records' `ORDER BY` says.
/// `None` when the field or the query's fields have no keys here.
pub async fn ordered(
    db: &impl ConnectionTrait,
    data_type: DataType,
    generation: i64,
    count: i64,
    order_by: &OrderBy,
    query: Option<&Query>,
) -> Result<Option<Vec<i64>>, sea_orm::DbErr> {
    let name = order_by.field.name.as_str();
    let Some(count) = keyed(db, data_type, generation, count, &[name]).await? else {
        return Ok(None);
    };
    let wanted = match query {
        Some(query) => match matching(db, data_type, generation, i64::from(count), query).await? {
            Some(matched) => Some(Present::of(matched.into_iter(), count)),
            None => return Ok(None),
        },
        None => None,
    };
    // A range on the ordered field needs only its own blocks.
    let rows = match query {
        Some(Query::Compare(comparison))
            if comparison.field.name == order_by.field.name
                && comparison.operator != Operator::NotEqual =>
        {
            match Compared::new(comparison) {
                Some(compared) => compared.blocks(generation),
                None => return Ok(None),
            }
        }
        _ => record_key::Entity::find()
            .select_only()
            .filter(record_key::Column::Generation.eq(generation))
            .filter(record_key::Column::Field.eq(name)),
    };
    let packed: Vec<Vec<u8>> = rows
        .column(record_key::Column::Entries)
        .order_by_asc(record_key::Column::Block)
        .into_tuple()
        .all(db)
        .await?;
    let read = packed
        .iter()
        .map(|entries| unpacked(entries))
        .collect::<Result<Vec<_>, _>>()?;
    let descending = order_by.direction == Direction::Descending;
    Ok(Some(arrange(&read, descending, count, wanted.as_ref())))
}

/// The ordinals of a list of `count` records that `wanted` holds (every
/// one when `None`) in the order of the field whose blocks are `read` (in
/// block order): by value, ascending or `descending`; records of one value
/// ascending (the list's own order), even where its run goes on over
/// several blocks; the records without a value last, ascending.
fn arrange(
    read: &[blocks::Unpacked<'_>],
    descending: bool,
    count: u32,
    wanted: Option<&Present>,
) -> Vec<i64> {
    let mut runs: Vec<(&str, Vec<&[u32]>)> = Vec::new();
    for (value, ordinals) in read.iter().flat_map(|block| block.runs()) {
        match runs.last_mut() {
            Some((last, parts)) if *last == value => parts.push(ordinals),
            _ => runs.push((value, vec![ordinals])),
        }
    }
    arrange_runs(runs, descending, count, wanted)
}

/// The ordinals of a list of `count` records that `wanted` holds (every
/// one when `None`), in the order of `runs`: each value (in byte order)
/// with its records' ordinals, ascending across its parts. By value,
/// ascending or `descending`; records of one value in the list's own
/// order; the records without a value last, ascending.
pub(super) fn arrange_runs(
    mut runs: Vec<(&str, Vec<&[u32]>)>,
    descending: bool,
    count: u32,
    wanted: Option<&Present>,
) -> Vec<i64> {
    if descending {
        runs.reverse();
    }
    let admitted = |ordinal: u32| wanted.is_none_or(|wanted| wanted.holds(ordinal));
    let mut valued = Present::none(count);
    let mut found = Vec::with_capacity(wanted.map_or(count as usize, Present::len));
    for ordinal in runs
        .iter()
        .flat_map(|(_, parts)| parts.iter().copied().flatten())
    {
        valued.add(*ordinal);
        if admitted(*ordinal) {
            found.push(i64::from(*ordinal));
        }
    }
    found.extend(
        (1..=count)
            .filter(|ordinal| !valued.holds(*ordinal) && admitted(*ordinal))
            .map(i64::from),
    );
    found
}

/// A set of a list's ordinals (1 to a count) as one bit each.
pub(super) struct Present {
    words: Vec<u64>,
    len: usize,
}

impl Present {
    /// No ordinal of a list of `count`.
    fn none(count: u32) -> Self {
        Self {
            words: vec![0; count as usize / 64 + 1],
            len: 0,
        }
    }

    /// `ordinals` of a list of `count`.
    pub(super) fn of(ordinals: impl Iterator<Item = i64>, count: u32) -> Self {
        let mut present = Self::none(count);
        for ordinal in ordinals {
            if let Ok(ordinal) = u32::try_from(ordinal) {
                present.add(ordinal);
            }
        }
        present
    }

    fn add(&mut self, ordinal: u32) {
        if let Some(word) = self.words.get_mut(ordinal as usize / 64) {
            let bit = 1 << (ordinal % 64);
            if *word & bit == 0 {
                *word |= bit;
                self.len += 1;
            }
        }
    }

    fn holds(&self, ordinal: u32) -> bool {
        self.words
            .get(ordinal as usize / 64)
            .is_some_and(|word| word & (1 << (ordinal % 64)) != 0)
    }

    fn len(&self) -> usize {
        self.len
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_order_from_keys_is_by_value_ties_in_list_order_and_records_without_a_value_last() {
        // Ordinals 1..=3000: "b" held by 2..=1500 (a run over two blocks),
        // "a" by 1501..=2000, "c" by 2001..=2999; 1 and 3000 hold none.
        let values: Vec<(&str, Vec<u32>)> = vec![
            ("a", (1501..=2000).collect()),
            ("b", (2..=1500).collect()),
            ("c", (2001..=2999).collect()),
        ];
        let cut = blocks::cut(
            values
                .iter()
                .map(|(value, ordinals)| (*value, ordinals.as_slice())),
        )
        .expect("short values");
        assert!(cut.len() > 2, "the runs go on over blocks");
        let read: Vec<blocks::Unpacked> = cut
            .iter()
            .map(|block| blocks::Unpacked::read(&block.entries).expect("packed"))
            .collect();
        let run = |from: i64, to: i64| (from..=to).collect::<Vec<i64>>();
        let ascending = [
            run(1501, 2000),
            run(2, 1500),
            run(2001, 2999),
            vec![1, 3000],
        ]
        .concat();
        assert_eq!(arrange(&read, false, 3000, None), ascending);
        let descending = [
            run(2001, 2999),
            run(2, 1500),
            run(1501, 2000),
            vec![1, 3000],
        ]
        .concat();
        assert_eq!(arrange(&read, true, 3000, None), descending);
        let wanted = Present::of([1, 7, 1600, 2500, 3000].into_iter(), 3000);
        assert_eq!(
            arrange(&read, true, 3000, Some(&wanted)),
            vec![2500, 7, 1600, 1, 3000]
        );
    }
}
