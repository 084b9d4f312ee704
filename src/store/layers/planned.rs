//! A layer planned over a long full base: which base rows a sync's changes
//! hide, and where each changed or new record falls among the base's rows,
//! as the [`LayerMap`] a layered publish keeps (`docs/store-next.md`
//! §2b, steps 1-5). Its work follows the change: one primary-key probe of
//! each changed or dropped id in the base, and the fences' anchors
//! ([`fences::anchors`]) for the records that are new or whose sort key
//! moved; a record whose sort key stayed is anchored just before its own
//! base row. A list filtered by a value gets a map of its own, over the
//! value's filter ordinals, for each value the change touches
//! ([`filtered`]).

use std::collections::{BTreeMap, HashMap, HashSet};

use sea_orm::ConnectionTrait;

use super::fences::{self, Fences, ListKey};
use super::filtered::{self, FilterFences};
use super::{LayerMap, Refused};
use crate::store::lookups::each_looked_up;

/// Ids a statement looks up in the base.
const LOOKUP_BATCH: usize = 5_000;

/// A record a sync changed or added: its place in the list, and the value
/// its list is filtered by.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Changed {
    /// Its sort key and id.
    pub place: ListKey,
    /// Its filter value, if it has one.
    pub filter_value: Option<String>,
}

/// A layer over a base, planned.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Planned {
    /// Its positions mapped to the base's and the delta's ordinals.
    pub map: LayerMap,
    /// The delta's records in delta order: ordinal `d` is `delta[d - 1]`.
    pub delta: Vec<Changed>,
    /// For each filter value a delta record holds or a hidden base row
    /// held, that value's list mapped the same way, over its filter
    /// ordinals: the delta's are numbered per value in delta order
    /// ([`Planned::delta_filter_ordinals`]). A value not here lists its
    /// base rows as they are.
    pub filtered: BTreeMap<String, LayerMap>,
}

impl Planned {
    /// Each delta record's filter ordinal within the delta (in delta
    /// order): 1 for the first record of its value, and so on.
    pub fn delta_filter_ordinals(&self) -> Vec<Option<u32>> {
        let mut numbered: HashMap<&str, u32> = HashMap::new();
        self.delta
            .iter()
            .map(|record| {
                let value = record.filter_value.as_deref()?;
                let ordinal = numbered.entry(value).or_default();
                *ordinal += 1;
                Some(*ordinal)
            })
            .collect()
    }
}

/// A base row a changed or dropped record replaces or removes.
#[derive(Debug, Clone)]
struct BaseCopy {
    ordinal: u32,
    sort_key: String,
    filter_value: Option<String>,
    filter_ordinal: Option<u32>,
}

/// The layer over `base` (a full generation, whose `fences` and, for a
/// list with a filter, `filter_fences` these are) that replaces or adds
/// the `changed` records and drops the `dropped` ids (an id the base does
/// not hold is already gone); refused when an id is repeated among them,
/// or when a map refuses. Without `filter_fences`, no value's map is
/// planned.
pub async fn plan(
    db: &impl ConnectionTrait,
    base: i64,
    (fences, filter_fences): (&Fences, Option<&FilterFences>),
    mut changed: Vec<Changed>,
    dropped: &[String],
) -> Result<Result<Planned, Refused>, sea_orm::DbErr> {
    let direction = fences.direction();
    let mut ids = HashSet::with_capacity(changed.len() + dropped.len());
    let all_once = changed
        .iter()
        .map(|record| record.place.record_id.as_str())
        .chain(dropped.iter().map(String::as_str))
        .all(|id| ids.insert(id));
    if !all_once {
        return Ok(Err(Refused::Repeated));
    }
    let copies = base_copies(db, base, ids.into_iter()).await?;
    let mut hidden: Vec<u32> = copies.values().map(|copy| copy.ordinal).collect();
    hidden.sort_unstable();

    changed.sort_by(|a, b| a.place.cmp_in(&b.place, direction));
    let mut anchors = vec![0; changed.len()];
    let mut searched = Vec::new();
    let mut searched_at = Vec::new();
    for (at, record) in changed.iter().enumerate() {
        match copies.get(&record.place.record_id) {
            // Its base row is the first after it: the rows before that
            // are the rows before it.
            Some(copy) if copy.sort_key == record.place.sort_key => {
                anchors[at] = copy.ordinal - 1;
            }
            _ => {
                searched.push(record.place.clone());
                searched_at.push(at);
            }
        }
    }
    let found = fences::anchors(db, base, fences, &searched).await?;
    for (at, anchor) in searched_at.into_iter().zip(found) {
        anchors[at] = anchor;
    }
    let filtered = match filter_fences {
        Some(filter_fences) => {
            match filtered_maps(db, base, filter_fences, &changed, &anchors, &copies).await? {
                Ok(filtered) => filtered,
                Err(refused) => return Ok(Err(refused)),
            }
        }
        None => BTreeMap::new(),
    };
    Ok(
        LayerMap::new(fences.count(), hidden, anchors).map(|map| Planned {
            map,
            delta: changed,
            filtered,
        }),
    )
}

/// The map of each value's list the change touches: the value's hidden base
/// rows by filter ordinal, and each of its delta records anchored among the
/// value's base rows, just before its own base row when it kept its place
/// and its value, else counted among the base rows before its `anchors`
/// place in the whole list.
async fn filtered_maps(
    db: &impl ConnectionTrait,
    base: i64,
    filter_fences: &FilterFences,
    changed: &[Changed],
    anchors: &[u32],
    copies: &HashMap<String, BaseCopy>,
) -> Result<Result<BTreeMap<String, LayerMap>, Refused>, sea_orm::DbErr> {
    let mut hidden: BTreeMap<&str, Vec<u32>> = BTreeMap::new();
    for copy in copies.values() {
        if let (Some(value), Some(filter_ordinal)) = (&copy.filter_value, copy.filter_ordinal) {
            hidden.entry(value).or_default().push(filter_ordinal);
        }
    }
    let mut value_anchors: BTreeMap<&str, Vec<u32>> = BTreeMap::new();
    let mut searched = Vec::new();
    for (record, &anchor) in changed.iter().zip(anchors) {
        let Some(value) = record.filter_value.as_deref() else {
            continue;
        };
        let list = value_anchors.entry(value).or_default();
        let copy = copies.get(&record.place.record_id);
        match copy {
            Some(BaseCopy {
                sort_key,
                filter_value: Some(copy_value),
                filter_ordinal: Some(filter_ordinal),
                ..
            }) if *sort_key == record.place.sort_key && copy_value == value => {
                list.push(filter_ordinal - 1);
            }
            _ => {
                searched.push((value, anchor, list.len()));
                list.push(0);
            }
        }
    }
    let asked: Vec<(&str, u32)> = searched
        .iter()
        .map(|&(value, anchor, _)| (value, anchor))
        .collect();
    let found = filtered::anchors(db, base, filter_fences, &asked).await?;
    for ((value, _, at), anchor) in searched.into_iter().zip(found) {
        if let Some(slot) = value_anchors
            .get_mut(value)
            .and_then(|list| list.get_mut(at))
        {
            *slot = anchor;
        }
    }
    let mut maps = BTreeMap::new();
    let values: HashSet<&str> = hidden.keys().chain(value_anchors.keys()).copied().collect();
    for value in values {
        let mut hidden_here = hidden.remove(value).unwrap_or_default();
        hidden_here.sort_unstable();
        let anchors_here = value_anchors.remove(value).unwrap_or_default();
        match LayerMap::new(filter_fences.count_of(value), hidden_here, anchors_here) {
            Ok(map) => maps.insert(value.to_owned(), map),
            Err(refused) => return Ok(Err(refused)),
        };
    }
    Ok(Ok(maps))
}

/// Where each of `ids` that `base` holds lies, by id.
async fn base_copies(
    db: &impl ConnectionTrait,
    base: i64,
    ids: impl Iterator<Item = &str>,
) -> Result<HashMap<String, BaseCopy>, sea_orm::DbErr> {
    let ids: Vec<&str> = ids.collect();
    let backend = db.get_database_backend();
    let mut copies = HashMap::with_capacity(ids.len());
    for batch in ids.chunks(LOOKUP_BATCH) {
        let wanted = batch.iter().map(|&id| sea_orm::Value::from(id));
        let statement = each_looked_up(
            backend,
            base,
            "record_id",
            "record_id, ordinal, sort_key, filter_value, filter_ordinal",
            wanted,
        );
        for row in db.query_all_raw(statement).await? {
            let (record_id, ordinal, sort_key): (String, i64, String) = (
                row.try_get("", "record_id")?,
                row.try_get("", "ordinal")?,
                row.try_get("", "sort_key")?,
            );
            let (filter_value, filter_ordinal): (Option<String>, Option<i64>) = (
                row.try_get("", "filter_value")?,
                row.try_get("", "filter_ordinal")?,
            );
            let out_of_range =
                || sea_orm::DbErr::Custom(format!("generation {base}: an ordinal out of range"));
            let positive = |ordinal: i64| u32::try_from(ordinal).ok().filter(|&at| at >= 1);
            let ordinal = positive(ordinal).ok_or_else(out_of_range)?;
            let filter_ordinal = match filter_ordinal {
                Some(filter_ordinal) => Some(positive(filter_ordinal).ok_or_else(out_of_range)?),
                None => None,
            };
            copies.insert(
                record_id,
                BaseCopy {
                    ordinal,
                    sort_key,
                    filter_value,
                    filter_ordinal,
                },
            );
        }
    }
    Ok(copies)
}
