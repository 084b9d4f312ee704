//! A list's whole order, read once: where every record a selection holds
//! sits (its connection and its position), in the order the list is read
//! in, so that any page of it is then a slice and one lookup by position.
//!
//! This is how a page of a queried list, of a list ordered by `orderBy`, or
//! of a company's list merged from several connections is read at the same
//! cost at any depth: such lists have no stored ordinals to range over, but
//! their generations never change once published, so their order is read
//! once per snapshot (by the caller, who keeps it: `sync::list_orders`).
//! A position is the record's `ordinal`, or with the list's filter its
//! `filter_ordinal` (the same column [`super::query::page_after`] reads);
//! in a layered generation, the position its layer's map gives that stored
//! ordinal ([`super::layers::visible`]).
//! A query made only of declared fields, and an `orderBy` of a declared
//! field, get their positions from the keys ([`super::keys`]) instead of
//! reading the records.

use std::collections::{HashMap, VecDeque};

use futures_util::TryStreamExt;
use sea_orm::{
    ColumnTrait, ConnectionTrait, DbBackend, QueryFilter, QueryOrder, QuerySelect, StreamTrait,
};
use uuid::Uuid;

use entity::record;

use super::generations::Visible;
use super::keys::layered;
use super::layers::visible::{ListRead, Part, position_column};
use super::pages::of;
use super::query::{Selection, condition, ordered_by};
use crate::data::Direction;
use crate::data::query::OrderBy;

/// Where one record sits: the index of its connection in the selection's
/// visible generations (high 16 bits) and its position (low 48 bits),
/// packed into one word so that a list of a million costs 8 MB.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Place(u64);

/// The bits of a [`Place`] that hold the position.
const POSITION_BITS: u32 = 48;

impl Place {
    /// The record at `position` of the selection's `connection`th
    /// generation; `None` past what a place can hold (65,536 connections,
    /// positions up to 2^48).
    pub fn new(connection: usize, position: i64) -> Option<Self> {
        let connection = u64::try_from(connection).ok().filter(|c| *c < 1 << 16)?;
        let position = u64::try_from(position)
            .ok()
            .filter(|p| *p < 1 << POSITION_BITS)?;
        Some(Self(connection << POSITION_BITS | position))
    }

    /// The index of its connection among the selection's generations.
    pub fn connection(self) -> usize {
        (self.0 >> POSITION_BITS) as usize
    }

    /// Its position in that connection's list (ordinal or filter ordinal,
    /// through the layer's map in a layered generation).
    pub fn position(self) -> i64 {
        (self.0 & ((1 << POSITION_BITS) - 1)) as i64
    }
}

/// Rows read per connection at a time while merging several connections.
const MERGE_CHUNK: u64 = 10_000;

/// Every record of `selection`, in the order its pages show them, from the
/// keys alone: an `orderBy` of a declared field, or a query made only of
/// declared fields, on one connection's list without the list's filter;
/// `None` when the records must be read instead ([`read_places`]).
pub async fn keyed_places(
    db: &impl ConnectionTrait,
    selection: Selection<'_>,
    order_by: Option<&OrderBy>,
) -> Result<Option<Vec<Place>>, sea_orm::DbErr> {
    let ordinals = match (order_by, selection.visible) {
        (Some(order_by), _) => keyed_order(db, selection, order_by).await?,
        (None, [one]) => keyed(db, selection, one).await?,
        (None, _) => None,
    };
    ordinals
        .map(|ordinals| {
            ordinals
                .into_iter()
                .map(|ordinal| place(0, ordinal))
                .collect()
        })
        .transpose()
}

/// Every record of `selection`, in the order its pages show them, read
/// from the records: by `order_by` (nulls last) then the list's own order
/// when given (sorted by the database), else the list's own order (several
/// connections merged by sort key, then connection, then record id, as
/// [`super::pages::page_of_several`] does). Read as a stream: what is kept
/// is the places, never the rows.
pub async fn read_places<C>(
    db: &C,
    selection: Selection<'_>,
    order_by: Option<&OrderBy>,
) -> Result<Vec<Place>, sea_orm::DbErr>
where
    C: ConnectionTrait + StreamTrait,
{
    let position = position_column(selection.filter);
    if let Some(order_by) = order_by {
        return by_order(db, selection, order_by, position).await;
    }
    if selection.visible.len() > 1 {
        return merged(db, selection, position).await;
    }
    let Some(one) = selection.visible.first() else {
        return Ok(Vec::new());
    };
    let backend = ConnectionTrait::get_database_backend(db);
    let read = one.list_read(selection.filter);
    let parts = read.parts();
    let mut found = Vec::with_capacity(one.record_count.max(0) as usize / 4);
    for part in &parts {
        let mut rows = within(backend, selection, one, part)
            .order_by_asc(position)
            .select_only()
            .column(position)
            .into_tuple::<i64>()
            .stream(db)
            .await?;
        while let Some(ordinal) = rows.try_next().await? {
            if let Some(at) = part.position(ordinal) {
                found.push(place(0, at)?);
            }
        }
    }
    // A layered list's two parts, each in order, interleave.
    if parts.len() > 1 {
        found.sort_unstable_by_key(|place| place.position());
    }
    found.shrink_to_fit();
    Ok(found)
}

/// The JSON of the records at `wanted` (places in `selection`), in that
/// order: one lookup by position per connection.
pub async fn bodies_at<C>(
    db: &C,
    selection: Selection<'_>,
    wanted: &[Place],
) -> Result<Vec<String>, sea_orm::DbErr>
where
    C: ConnectionTrait + StreamTrait,
{
    let position = position_column(selection.filter);
    let mut found: HashMap<Place, String> = HashMap::with_capacity(wanted.len());
    for (index, one) in selection.visible.iter().enumerate() {
        let read = one.list_read(selection.filter);
        // Each wanted position's stored row: (generation, ordinal).
        let mut stored: HashMap<(i64, i64), i64> = HashMap::new();
        for wanted in wanted.iter().filter(|place| place.connection() == index) {
            if let Some(row) = read.at(wanted.position()) {
                stored.insert(row, wanted.position());
            }
        }
        for part in read.parts() {
            let ordinals: Vec<i64> = stored
                .keys()
                .filter(|(generation, _)| *generation == part.generation)
                .map(|(_, ordinal)| *ordinal)
                .collect();
            if ordinals.is_empty() {
                continue;
            }
            // Row by row, so that a page's JSON is not held twice.
            let mut rows = of(selection.data_type, selection.filter)
                .filter(record::Column::ConnectionId.eq(one.connection_id))
                .filter(record::Column::Generation.eq(part.generation))
                .filter(position.is_in(ordinals))
                .select_only()
                .column(position)
                .column(record::Column::Body)
                .into_tuple::<(i64, String)>()
                .stream(db)
                .await?;
            while let Some((ordinal, body)) = rows.try_next().await? {
                if let Some(&at) = stored.get(&(part.generation, ordinal)) {
                    found.insert(place(index, at)?, body);
                }
            }
        }
    }
    // Every place was read in this snapshot's generations, which keep their
    // rows while they are visible or retained: a place not found means the
    // generation went meanwhile, which the caller's snapshot rules out.
    wanted
        .iter()
        .map(|place| {
            found.remove(place).ok_or_else(|| {
                sea_orm::DbErr::RecordNotFound(format!(
                    "no record at position {} of a visible generation",
                    place.position()
                ))
            })
        })
        .collect()
}

/// Positions looked for per statement by [`matching_among`].
const AMONG_BATCH: usize = 5_000;

/// Those of the ascending `positions` (ordinals) whose records
/// `selection`'s query holds in its one generation, ascending: how the few
/// rows a resync changed join an order carried over from the previous
/// generation (`sync::list_orders`). Each statement looks up
/// [`AMONG_BATCH`] rows by ordinal; nothing else of the list is read.
pub async fn matching_among(
    db: &impl ConnectionTrait,
    selection: Selection<'_>,
    positions: &[u32],
) -> Result<Vec<u32>, sea_orm::DbErr> {
    let Some(one) = selection.visible.first() else {
        return Ok(Vec::new());
    };
    // Positions in the whole list (the one caller, `carried`, has no
    // filter): the whole map's, over ordinals.
    if selection.filter.is_some() {
        return Err(sea_orm::DbErr::Custom(
            "matching_among reads the whole list's positions only".to_owned(),
        ));
    }
    let backend = db.get_database_backend();
    let read = one.list_read(None);
    let mut found = Vec::new();
    for batch in positions.chunks(AMONG_BATCH) {
        // Each position's stored row, by generation.
        let stored: HashMap<(i64, i64), u32> = batch
            .iter()
            .filter_map(|&position| Some((read.at(i64::from(position))?, position)))
            .collect();
        for part in read.parts() {
            let ordinals = stored
                .keys()
                .filter(|(generation, _)| *generation == part.generation)
                .map(|(_, ordinal)| *ordinal);
            let matched: Vec<i64> = within(backend, selection, one, &part)
                .filter(record::Column::Ordinal.is_in(ordinals))
                .select_only()
                .column(record::Column::Ordinal)
                .into_tuple()
                .all(db)
                .await?;
            found.extend(
                matched
                    .into_iter()
                    .filter_map(|ordinal| stored.get(&(part.generation, ordinal)).copied()),
            );
        }
    }
    found.sort_unstable();
    Ok(found)
}

/// The rows of `selection` (its filter and query) in `part` of the
/// generation `one`.
fn within(
    backend: DbBackend,
    selection: Selection<'_>,
    one: &Visible,
    part: &Part<'_>,
) -> sea_orm::Select<record::Entity> {
    let rows = of(selection.data_type, selection.filter)
        .filter(record::Column::ConnectionId.eq(one.connection_id))
        .filter(part.rows(backend, position_column(selection.filter)));
    match selection.query {
        Some(query) => rows.filter(condition(backend, query)),
        None => rows,
    }
}

/// The positions of the records of `selection` in the generation `one`,
/// ascending, from the keys of a query on declared fields; `None` when the
/// records must be read instead (no query, a field without keys, or the
/// list's filter, whose positions are filter ordinals).
async fn keyed(
    db: &impl ConnectionTrait,
    selection: Selection<'_>,
    one: &Visible,
) -> Result<Option<Vec<i64>>, sea_orm::DbErr> {
    let (Some(query), None) = (selection.query, selection.filter) else {
        return Ok(None);
    };
    match &one.layer {
        Some(layer) => {
            let generations = (layer.base, one.generation);
            layered::matching(db, selection.data_type, generations, &layer.map, query).await
        }
        None => {
            let count = one.record_count;
            super::keys::matching(db, selection.data_type, one.generation, count, query).await
        }
    }
}

/// The positions of the records of `selection` in `order_by`'s order, from
/// the keys of its field (and of the query's, if any), when the selection
/// is one connection's list without the list's filter; `None` when the
/// records must be sorted instead.
async fn keyed_order(
    db: &impl ConnectionTrait,
    selection: Selection<'_>,
    order_by: &OrderBy,
) -> Result<Option<Vec<i64>>, sea_orm::DbErr> {
    let ([one], None) = (selection.visible, selection.filter) else {
        return Ok(None);
    };
    let (data_type, query) = (selection.data_type, selection.query);
    match &one.layer {
        Some(layer) => {
            let generations = (layer.base, one.generation);
            layered::ordered(db, data_type, generations, &layer.map, order_by, query).await
        }
        None => {
            let count = one.record_count;
            super::keys::ordered(db, data_type, one.generation, count, order_by, query).await
        }
    }
}

/// A place, or the error of a position no place can hold.
fn place(connection: usize, position: i64) -> Result<Place, sea_orm::DbErr> {
    Place::new(connection, position).ok_or_else(|| {
        sea_orm::DbErr::Custom(format!(
            "position {position} of connection {connection} is out of a list's range"
        ))
    })
}

/// Every record of `selection` ordered by `order_by` (nulls last), then in
/// the list's own order: the database sorts the matches once.
async fn by_order<C>(
    db: &C,
    selection: Selection<'_>,
    order_by: &OrderBy,
    position: record::Column,
) -> Result<Vec<Place>, sea_orm::DbErr>
where
    C: ConnectionTrait + StreamTrait,
{
    let rows = ordered_by(
        ConnectionTrait::get_database_backend(db),
        selection,
        Some(order_by),
    );
    let mut rows = rows
        .select_only()
        .column(record::Column::ConnectionId)
        .column(record::Column::Generation)
        .column(position)
        .into_tuple::<(Uuid, i64, i64)>()
        .stream(db)
        .await?;
    let reads: Vec<ListRead<'_>> = selection
        .visible
        .iter()
        .map(|one| one.list_read(selection.filter))
        .collect();
    let mut found = Vec::new();
    while let Some((connection_id, generation, ordinal)) = rows.try_next().await? {
        let outside =
            || sea_orm::DbErr::Custom("a row of a generation outside the selection".to_owned());
        let index = selection
            .visible
            .iter()
            .position(|one| one.connection_id == connection_id)
            .ok_or_else(outside)?;
        let at = reads[index]
            .parts()
            .into_iter()
            .find(|part| part.generation == generation)
            .and_then(|part| part.position(ordinal))
            .ok_or_else(outside)?;
        found.push(place(index, at)?);
    }
    found.shrink_to_fit();
    Ok(found)
}

/// One connection's matching rows (of one part of a layered generation),
/// read a chunk at a time in its own order (which is the list's order
/// within the connection).
struct Source<'a> {
    /// Its index among the selection's generations.
    index: usize,
    /// The stored rows it reads, and their positions.
    part: Part<'a>,
    /// Its matching stored ordinals not yet read, when its keys hold them
    /// (ascending); else its rows are read by the query's conditions.
    keyed: Option<VecDeque<i64>>,
    /// Rows read and not yet merged: position and sort key.
    buffer: VecDeque<(i64, String)>,
    /// The highest stored ordinal read so far.
    after: i64,
    /// Whether every row has been read.
    exhausted: bool,
}

/// Every record of `selection` (several connections) in the list's order:
/// each connection's rows come sorted by position, so they are merged by
/// sort key (in the list's direction), then connection id, reading at
/// most [`MERGE_CHUNK`] rows of each at a time.
async fn merged(
    db: &impl ConnectionTrait,
    selection: Selection<'_>,
    position: record::Column,
) -> Result<Vec<Place>, sea_orm::DbErr> {
    let backend = ConnectionTrait::get_database_backend(db);
    let descending = selection.data_type.spec().order == Direction::Descending;
    let mut sources: Vec<Source> = Vec::with_capacity(selection.visible.len());
    for (index, one) in selection.visible.iter().enumerate() {
        let read = one.list_read(selection.filter);
        let keyed_positions = keyed(db, selection, one).await?;
        for part in read.parts() {
            // Its share of the keyed positions, as its stored ordinals.
            let keyed = keyed_positions.as_ref().map(|positions| {
                positions
                    .iter()
                    .filter_map(|&position| read.at(position))
                    .filter(|(generation, _)| *generation == part.generation)
                    .map(|(_, ordinal)| ordinal)
                    .collect::<VecDeque<i64>>()
            });
            sources.push(Source {
                index,
                part,
                keyed,
                buffer: VecDeque::new(),
                after: 0,
                exhausted: false,
            });
        }
    }
    let mut found = Vec::new();
    loop {
        for source in &mut sources {
            if !source.buffer.is_empty() || source.exhausted {
                continue;
            }
            let one = &selection.visible[source.index];
            let rows = match &mut source.keyed {
                // The next rows its keys name: their sort keys.
                Some(ordinals) => {
                    let take = ordinals.len().min(MERGE_CHUNK as usize);
                    let next: Vec<i64> = ordinals.drain(..take).collect();
                    of(selection.data_type, selection.filter)
                        .filter(record::Column::Generation.eq(source.part.generation))
                        .filter(position.is_in(next))
                }
                None => {
                    within(backend, selection, one, &source.part).filter(position.gt(source.after))
                }
            };
            let chunk: Vec<(i64, String)> = rows
                .order_by_asc(position)
                .limit(MERGE_CHUNK)
                .select_only()
                .column(position)
                .column(record::Column::SortKey)
                .into_tuple()
                .all(db)
                .await?;
            source.exhausted = match &source.keyed {
                Some(positions) => positions.is_empty(),
                None => (chunk.len() as u64) < MERGE_CHUNK,
            };
            if let Some((last, _)) = chunk.last() {
                source.after = *last;
            }
            let part = source.part;
            source.buffer.extend(
                chunk
                    .into_iter()
                    .filter_map(|(ordinal, key)| Some((part.position(ordinal)?, key))),
            );
        }
        // The next record: the least sort key (greatest when descending),
        // the lesser connection id on a tie (a pinned snapshot's
        // generations need not be in connection order), then the lesser
        // position (a layered generation's two parts).
        let next = sources
            .iter()
            .enumerate()
            .filter_map(|(at, source)| {
                let connection_id = selection.visible[source.index].connection_id;
                source
                    .buffer
                    .front()
                    .map(|(position, key)| (at, connection_id, key, *position))
            })
            .min_by(|a, b| {
                let by_key = if descending {
                    b.2.cmp(a.2)
                } else {
                    a.2.cmp(b.2)
                };
                by_key
                    .then_with(|| a.1.cmp(&b.1))
                    .then_with(|| a.3.cmp(&b.3))
            })
            .map(|(at, _, _, _)| at);
        let Some(at) = next else {
            break;
        };
        let index = sources[at].index;
        if let Some((position, _)) = sources[at].buffer.pop_front() {
            found.push(place(index, position)?);
        }
    }
    found.shrink_to_fit();
    Ok(found)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_place_holds_its_connection_and_position_and_refuses_what_does_not_fit() {
        let place = Place::new(3, 1_000_000).expect("fits");
        assert_eq!((place.connection(), place.position()), (3, 1_000_000));
        let widest = Place::new((1 << 16) - 1, (1 << 48) - 1).expect("fits");
        assert_eq!(
            (widest.connection(), widest.position()),
            ((1 << 16) - 1, (1 << 48) - 1)
        );
        assert_eq!(Place::new(1 << 16, 1), None);
        assert_eq!(Place::new(0, 1 << 48), None);
        assert_eq!(Place::new(0, -1), None);
    }
}
