//! A layer planned over a long full base: which base rows a sync's changes
//! hide, and where each changed or new record falls among the base's rows,
//! as the [`LayerMap`] a layered publish will keep (`docs/store-next.md`
//! §2b, steps 1-5). Its work follows the change: one primary-key probe of
//! each changed or dropped id in the base, and the fences' anchors
//! ([`fences::anchors`]) for the records that are new or whose sort key
//! moved; a record whose sort key stayed is anchored just before its own
//! base row.

use std::collections::{HashMap, HashSet};

use sea_orm::ConnectionTrait;

use super::fences::{self, Fences, ListKey};
use super::{LayerMap, Refused};
use crate::store::lookups::each_looked_up;

/// Ids a statement looks up in the base.
const LOOKUP_BATCH: usize = 5_000;

/// A layer over a base, planned.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Planned {
    /// Its positions mapped to the base's and the delta's ordinals.
    pub map: LayerMap,
    /// The delta's records in delta order: ordinal `d` is `delta[d - 1]`.
    pub delta: Vec<ListKey>,
}

/// The layer over `base` (a full generation, whose `fences` these are)
/// that replaces or adds the `changed` records and drops the `dropped` ids
/// (an id the base does not hold is already gone); refused when an id is
/// repeated among them, or when the map refuses.
pub async fn plan(
    db: &impl ConnectionTrait,
    base: i64,
    fences: &Fences,
    mut changed: Vec<ListKey>,
    dropped: &[String],
) -> Result<Result<Planned, Refused>, sea_orm::DbErr> {
    let direction = fences.direction();
    let mut ids = HashSet::with_capacity(changed.len() + dropped.len());
    let all_once = changed
        .iter()
        .map(|record| record.record_id.as_str())
        .chain(dropped.iter().map(String::as_str))
        .all(|id| ids.insert(id));
    if !all_once {
        return Ok(Err(Refused::Repeated));
    }
    let copies = base_copies(db, base, ids.into_iter()).await?;
    let mut hidden: Vec<u32> = copies.values().map(|(ordinal, _)| *ordinal).collect();
    hidden.sort_unstable();

    changed.sort_by(|a, b| a.cmp_in(b, direction));
    let mut anchors = vec![0; changed.len()];
    let mut searched = Vec::new();
    let mut searched_at = Vec::new();
    for (at, record) in changed.iter().enumerate() {
        match copies.get(&record.record_id) {
            // Its base row is the first after it: the rows before that
            // are the rows before it.
            Some((ordinal, sort_key)) if *sort_key == record.sort_key => {
                anchors[at] = ordinal - 1;
            }
            _ => {
                searched.push(record.clone());
                searched_at.push(at);
            }
        }
    }
    let found = fences::anchors(db, base, fences, &searched).await?;
    for (at, anchor) in searched_at.into_iter().zip(found) {
        anchors[at] = anchor;
    }
    Ok(
        LayerMap::new(fences.count(), hidden, anchors).map(|map| Planned {
            map,
            delta: changed,
        }),
    )
}

/// The ordinal and sort key of each of `ids` that `base` holds, by id.
async fn base_copies(
    db: &impl ConnectionTrait,
    base: i64,
    ids: impl Iterator<Item = &str>,
) -> Result<HashMap<String, (u32, String)>, sea_orm::DbErr> {
    let ids: Vec<&str> = ids.collect();
    let backend = db.get_database_backend();
    let mut copies = HashMap::with_capacity(ids.len());
    for batch in ids.chunks(LOOKUP_BATCH) {
        let wanted = batch.iter().map(|&id| sea_orm::Value::from(id));
        let statement = each_looked_up(
            backend,
            base,
            "record_id",
            "record_id, ordinal, sort_key",
            wanted,
        );
        for row in db.query_all_raw(statement).await? {
            let (record_id, ordinal, sort_key): (String, i64, String) = (
                row.try_get("", "record_id")?,
                row.try_get("", "ordinal")?,
                row.try_get("", "sort_key")?,
            );
            let ordinal = u32::try_from(ordinal)
                .ok()
                .filter(|&ordinal| ordinal >= 1)
                .ok_or_else(|| {
                    sea_orm::DbErr::Custom(format!("generation {base}: an ordinal out of range"))
                })?;
            copies.insert(record_id, (ordinal, sort_key));
        }
    }
    Ok(copies)
}
