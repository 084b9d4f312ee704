//! The keys of a layered generation (`store::layers`), read from its base's
//! and its delta's without writing any for the whole list: a query's
//! matches are the base's, less the rows the layer hides, and the delta's,
//! each moved to its position ([`LayerMap::positions_of`]); a count is the
//! base's, less the hidden rows that match, plus the delta's; an `orderBy`
//! merges the base's and the delta's blocks value by value. The base's
//! keys are read as they are: a match or a count reads what a full
//! generation's would, plus work that follows the change (an `orderBy`
//! maps every position of the field, as an order of the whole list must),
//! and nothing is written for the whole list, where carrying a million
//! records' keys over a resync cost 0.7-0.8 s (BENCHMARKS.md).

use sea_orm::{ColumnTrait, ConnectionTrait, EntityTrait, QueryFilter, QueryOrder, QuerySelect};

use entity::record_key;

use super::order::{Present, arrange_runs};
use super::{Compared, declared, keyed, unpacked, values};
use crate::data::query::{Operator, OrderBy, Query};
use crate::data::{DataType, Direction};
use crate::store::layers::{self, LayerMap};
use crate::store::lookups::each_looked_up;

/// Hidden rows looked up per statement.
const LOOKUP_BATCH: usize = 5_000;

/// The positions of the records of the layered generation `map` describes
/// (base rows under `base`, delta rows under `delta`) that `query` matches,
/// ascending; `None` when either generation lacks keys for a field it
/// compares ([`super::matching`]).
pub async fn matching(
    db: &impl ConnectionTrait,
    data_type: DataType,
    (base, delta): (i64, i64),
    map: &LayerMap,
    query: &Query,
) -> Result<Option<Vec<i64>>, sea_orm::DbErr> {
    let base_count = i64::from(map.base_count());
    let Some(from_base) = super::matching(db, data_type, base, base_count, query).await? else {
        return Ok(None);
    };
    let delta_count = i64::from(map.delta_count());
    let Some(from_delta) = super::matching(db, data_type, delta, delta_count, query).await? else {
        return Ok(None);
    };
    let (Some(from_base), Some(from_delta)) = (ordinals(from_base), ordinals(from_delta)) else {
        return Err(out_of_range());
    };
    let positions = map.positions_of(&from_base, &from_delta);
    Ok(Some(positions.into_iter().map(i64::from).collect()))
}

/// How many records of the layered generation `map` describes `query`
/// matches, when both generations count it from their keys
/// ([`super::count`]): the base's count, less its hidden rows that match
/// (their values read from their bodies, one lookup each), plus the
/// delta's.
pub async fn count(
    db: &impl ConnectionTrait,
    data_type: DataType,
    (base, delta): (i64, i64),
    map: &LayerMap,
    query: &Query,
) -> Result<Option<u64>, sea_orm::DbErr> {
    let base_count = i64::from(map.base_count());
    let Some(in_base) = super::count(db, data_type, base, base_count, query).await? else {
        return Ok(None);
    };
    let delta_count = i64::from(map.delta_count());
    let Some(in_delta) = super::count(db, data_type, delta, delta_count, query).await? else {
        return Ok(None);
    };
    // `super::count` answered: one comparison on a declared field.
    let Query::Compare(comparison) = query else {
        return Ok(None);
    };
    let Some(compared) = Compared::new(comparison) else {
        return Ok(None);
    };
    let Some(field) = declared(data_type)
        .into_iter()
        .find(|field| field.name == comparison.field.name)
    else {
        return Ok(None);
    };
    let mut hidden_matching = 0;
    let backend = db.get_database_backend();
    for batch in map.hidden().chunks(LOOKUP_BATCH) {
        let ordinals = batch
            .iter()
            .map(|&ordinal| sea_orm::Value::from(i64::from(ordinal)));
        let statement = each_looked_up(backend, base, "ordinal", "body", ordinals);
        let rows = db.query_all_raw(statement).await?;
        if rows.len() != batch.len() {
            return Err(out_of_range());
        }
        for row in rows {
            let body: String = row.try_get("", "body")?;
            let found = values::extract(&body, &[field])
                .map_err(|error| sea_orm::DbErr::Custom(error.to_string()))?;
            let key = found
                .into_iter()
                .next()
                .flatten()
                .and_then(|value| values::encode(&field.kind, value.into_owned()));
            let admitted = key.is_some_and(|key| compared.admits(&key));
            // A record without the field matches `!=`, as on the records.
            let matches = match comparison.operator {
                Operator::NotEqual => !admitted,
                _ => admitted,
            };
            hidden_matching += u64::from(matches);
        }
    }
    Ok(in_base
        .checked_sub(hidden_matching)
        .map(|kept| kept + in_delta))
}

/// The positions of the records of the layered generation `map` describes
/// that `query` matches (every record without one), in `order_by`'s order,
/// as [`super::ordered`] gives a full generation's: the base's blocks of
/// the field, less the hidden rows, and the delta's, merged value by value,
/// each record at its position. `None` when either generation lacks keys
/// for the field or the query's fields.
pub async fn ordered(
    db: &impl ConnectionTrait,
    data_type: DataType,
    (base, delta): (i64, i64),
    map: &LayerMap,
    order_by: &OrderBy,
    query: Option<&Query>,
) -> Result<Option<Vec<i64>>, sea_orm::DbErr> {
    let name = order_by.field.name.as_str();
    let base_count = i64::from(map.base_count());
    let delta_count = i64::from(map.delta_count());
    if keyed(db, data_type, base, base_count, &[name])
        .await?
        .is_none()
        || keyed(db, data_type, delta, delta_count, &[name])
            .await?
            .is_none()
    {
        return Ok(None);
    }
    let wanted = match query {
        Some(query) => match matching(db, data_type, (base, delta), map, query).await? {
            Some(matched) => Some(Present::of(matched.into_iter(), map.count())),
            None => return Ok(None),
        },
        None => None,
    };
    let from_base = value_runs(db, base, name, |ordinal| map.base_position(ordinal)).await?;
    let from_delta = value_runs(db, delta, name, |ordinal| map.delta_position(ordinal)).await?;
    let merged = merged_by_value(from_base, from_delta);
    let runs = merged
        .iter()
        .map(|(value, positions)| (value.as_str(), vec![positions.as_slice()]))
        .collect();
    let descending = order_by.direction == Direction::Descending;
    Ok(Some(arrange_runs(
        runs,
        descending,
        map.count(),
        wanted.as_ref(),
    )))
}

/// Each value of field `name` in `generation`'s keys (in byte order) with
/// its records' positions, ascending: each ordinal moved by `position_of`,
/// and dropped where it gives none.
async fn value_runs(
    db: &impl ConnectionTrait,
    generation: i64,
    name: &str,
    position_of: impl Fn(u32) -> Option<u32>,
) -> Result<Vec<(String, Vec<u32>)>, sea_orm::DbErr> {
    let packed: Vec<Vec<u8>> = record_key::Entity::find()
        .select_only()
        .column(record_key::Column::Entries)
        .filter(record_key::Column::Generation.eq(generation))
        .filter(record_key::Column::Field.eq(name))
        .order_by_asc(record_key::Column::Block)
        .into_tuple()
        .all(db)
        .await?;
    let mut runs: Vec<(String, Vec<u32>)> = Vec::new();
    for entries in &packed {
        for (value, ordinals) in unpacked(entries)?.runs() {
            let positions = ordinals.iter().filter_map(|&ordinal| position_of(ordinal));
            match runs.last_mut() {
                Some((last, held)) if last == value => held.extend(positions),
                _ => runs.push((value.to_owned(), positions.collect())),
            }
        }
    }
    Ok(runs)
}

/// Two lists of values (each in byte order, with ascending positions) as
/// one: a value in both holds both's positions, merged.
fn merged_by_value(
    a: Vec<(String, Vec<u32>)>,
    b: Vec<(String, Vec<u32>)>,
) -> Vec<(String, Vec<u32>)> {
    let mut merged = Vec::with_capacity(a.len() + b.len());
    let (mut a, mut b) = (a.into_iter().peekable(), b.into_iter().peekable());
    loop {
        let next = match (a.peek(), b.peek()) {
            (Some((x, _)), Some((y, _))) => match x.cmp(y) {
                std::cmp::Ordering::Less => a.next(),
                std::cmp::Ordering::Greater => b.next(),
                std::cmp::Ordering::Equal => {
                    let (value, first) = a.next().unwrap_or_default();
                    let (_, second) = b.next().unwrap_or_default();
                    Some((value, layers::merged(first.into_iter(), second.into_iter())))
                }
            },
            (Some(_), None) => a.next(),
            (None, Some(_)) => b.next(),
            (None, None) => None,
        };
        match next {
            Some((value, positions)) if !positions.is_empty() => merged.push((value, positions)),
            Some(_) => {}
            None => return merged,
        }
    }
}

/// Ordinals as the map takes them; `None` when one is out of range.
fn ordinals(found: Vec<i64>) -> Option<Vec<u32>> {
    found
        .into_iter()
        .map(|ordinal| u32::try_from(ordinal).ok())
        .collect()
}

/// The error of keys or rows that do not fit the layer's map.
fn out_of_range() -> sea_orm::DbErr {
    sea_orm::DbErr::Custom("a layered generation's keys do not fit its map".to_owned())
}
