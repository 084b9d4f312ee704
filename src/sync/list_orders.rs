//! The whole orders of lists without stored ordinals (a `query`, an
//! `orderBy`, a company's list merged from several connections),
//! remembered per snapshot: published generations never change, so the
//! first read of such a list in a snapshot reads every matching record's
//! place once ([`store::ordered::places`]) and every later page of it, at
//! any depth and by number or by link, is a slice of that order and one
//! lookup by position. Bounded in bytes; what falls out is read again, and
//! a list longer than the bound allows is read the way it was before
//! (`OFFSET`, or positions carried by a cursor).

use std::sync::Arc;

use quick_cache::sync::{Cache, DefaultLifecycle};
use quick_cache::{DefaultHashBuilder, OptionsBuilder, Weighter};
use sea_orm::{ConnectionTrait, StreamTrait};
use uuid::Uuid;

use crate::data::Direction;
use crate::data::query::OrderBy;
use crate::store::ordered::{self, Place};
use crate::store::query::Selection;

/// The bytes kept by default: a list of a million records takes 8 MB.
pub const DEFAULT_CAPACITY_BYTES: u64 = 128 * 1024 * 1024;

/// What a list's order depends on: the data type, the generations seen
/// (connection and generation), the list's filter, the query's text and
/// the `orderBy` (`-field` descending).
type OrderKey = (
    &'static str,
    Vec<(Uuid, i64)>,
    Option<String>,
    String,
    String,
);

/// The cache's default hooks.
type Lifecycle = DefaultLifecycle<OrderKey, Arc<[Place]>>;

/// A list's order costs its places' bytes.
#[derive(Debug, Clone, Copy)]
struct PlacesWeight;

impl Weighter<OrderKey, Arc<[Place]>> for PlacesWeight {
    fn weight(&self, _key: &OrderKey, places: &Arc<[Place]>) -> u64 {
        // A list with no matches is remembered too (its total is 0); the
        // key's own cost is about a small list's.
        (places.len() as u64 * std::mem::size_of::<Place>() as u64).max(256)
    }
}

/// The remembered orders of one process.
pub struct ListOrders {
    cache: Cache<OrderKey, Arc<[Place]>, PlacesWeight, DefaultHashBuilder, Lifecycle>,
    /// The most records a list may hold to be read whole and remembered.
    longest: u64,
}

impl ListOrders {
    /// Orders kept in at most `capacity_bytes` (0: none; every such list is
    /// then read page by page).
    pub fn new(capacity_bytes: u64) -> anyhow::Result<Self> {
        let options = OptionsBuilder::new()
            // One shard: a shard's capacity is its share of the total, and a
            // long list must fit in one.
            .shards(1)
            .estimated_items_capacity(1024)
            .weight_capacity(capacity_bytes.max(1))
            .build()?;
        Ok(Self {
            cache: Cache::with_options(
                options,
                PlacesWeight,
                DefaultHashBuilder::default(),
                DefaultLifecycle::default(),
            ),
            // Half the bytes, so that a list that was just read also fits
            // beside what is there.
            longest: capacity_bytes / 2 / std::mem::size_of::<Place>() as u64,
        })
    }

    /// The order of `selection` (ordered by `order_by`, then the list's own
    /// order), read once per snapshot; `None` when the list may hold more
    /// records than are kept (`at_most`: how many the generations hold).
    /// Concurrent first reads of one list wait for the one reading it.
    pub async fn places<C>(
        &self,
        db: &C,
        selection: Selection<'_>,
        query_text: Option<&str>,
        order_by: Option<&OrderBy>,
        at_most: u64,
    ) -> Result<Option<Arc<[Place]>>, sea_orm::DbErr>
    where
        C: ConnectionTrait + StreamTrait,
    {
        if at_most > self.longest {
            return Ok(None);
        }
        let key = order_key(selection, query_text, order_by);
        match self.cache.get_value_or_guard_async(&key).await {
            Ok(places) => Ok(Some(places)),
            Err(guard) => {
                let places: Arc<[Place]> = ordered::places(db, selection, order_by).await?.into();
                let _ = guard.insert(places.clone());
                Ok(Some(places))
            }
        }
    }

    /// Whether the order of `selection` (ordered by `order_by`) is
    /// remembered, so that any page of it is a slice.
    pub fn remembers(
        &self,
        selection: Selection<'_>,
        query_text: Option<&str>,
        order_by: Option<&OrderBy>,
    ) -> bool {
        self.cache
            .get(&order_key(selection, query_text, order_by))
            .is_some()
    }
}

/// What the order of `selection` ordered by `order_by` is remembered by.
fn order_key(
    selection: Selection<'_>,
    query_text: Option<&str>,
    order_by: Option<&OrderBy>,
) -> OrderKey {
    (
        selection.data_type.name(),
        selection
            .visible
            .iter()
            .map(|one| (one.connection_id, one.generation))
            .collect(),
        selection.filter.map(str::to_owned),
        query_text.unwrap_or_default().to_owned(),
        order_by.map(order_text).unwrap_or_default(),
    )
}

/// An `orderBy` as its text: the field, `-` first when descending.
fn order_text(order_by: &OrderBy) -> String {
    match order_by.direction {
        Direction::Ascending => order_by.field.name.clone(),
        Direction::Descending => format!("-{}", order_by.field.name),
    }
}
