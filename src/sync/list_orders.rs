//! The whole orders of lists without stored ordinals (a `query`, an
//! `orderBy`, a company's list merged from several connections),
//! remembered per snapshot: published generations never change, so the
//! first read of such a list in a snapshot reads every matching record's
//! place once ([`store::ordered::keyed_places`] from the keys where they
//! answer, else [`store::ordered::read_places`]) and every later page of it, at
//! any depth and by number or by link, is a slice of that order and one
//! lookup by position. Bounded in bytes; what falls out is read again, and
//! a list longer than the bound allows is read the way it was before
//! (`OFFSET`, or positions carried by a cursor).
//!
//! After a resync that carried its keys over (`store::keys::carry`), the
//! new generation knows where each row of the previous one went
//! (`store::layers::renumbering`): a query's order remembered for the
//! previous generation is then carried over, each place moved and the
//! resync's few changed rows tested against the query, instead of read
//! again from every record ([`ListOrders::places`]).

use std::sync::Arc;

use quick_cache::sync::{Cache, DefaultLifecycle};
use quick_cache::{DefaultHashBuilder, OptionsBuilder, Weighter};
use sea_orm::{ConnectionTrait, StreamTrait};
use uuid::Uuid;

use crate::data::Direction;
use crate::data::query::OrderBy;
use crate::metrics::Metrics;
use crate::store::layers::{self, renumbering};
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
    /// Counts how each order was found.
    metrics: Arc<Metrics>,
}

impl ListOrders {
    /// Orders kept in at most `capacity_bytes` (0: none; every such list is
    /// then read page by page), each counted in `metrics` as it is found.
    pub fn new(capacity_bytes: u64, metrics: Arc<Metrics>) -> anyhow::Result<Self> {
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
            metrics,
        })
    }

    /// The order of `selection` (ordered by `order_by`, then the list's own
    /// order), read once per snapshot, or carried over from the previous
    /// generation's where a resync kept how it renumbered the list
    /// ([`ListOrders::carried`]); `None` when the list may hold more
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
                // The keys first: they answer in reads that follow the
                // matches, which carrying (reads that follow the change)
                // does not beat.
                let keyed = ordered::keyed_places(db, selection, order_by).await?;
                let (places, way) = match keyed {
                    Some(places) => (places, "keyed"),
                    None => match self.carried(db, selection, &key, order_by).await? {
                        Some(places) => (places, "carried"),
                        None => (ordered::read_places(db, selection, order_by).await?, "read"),
                    },
                };
                let places: Arc<[Place]> = places.into();
                self.metrics.list_order(selection.data_type.name(), way);
                let _ = guard.insert(places.clone());
                Ok(Some(places))
            }
        }
    }

    /// The order `key` names carried over from the one remembered for the
    /// generation a resync renumbered into `selection`'s: the previous
    /// places the resync kept, moved to where it put them, and those of its
    /// stamped rows (changed or new) that the query holds, merged in
    /// position order. Work and reads follow the change, not the list.
    /// `None` unless the list is one connection's in its own order (no
    /// filter, whose positions the renumbering does not cover, and no
    /// `orderBy`, whose values it does not know), the renumbering was kept
    /// and the previous generation's order is remembered here.
    async fn carried<C>(
        &self,
        db: &C,
        selection: Selection<'_>,
        key: &OrderKey,
        order_by: Option<&OrderBy>,
    ) -> Result<Option<Vec<Place>>, sea_orm::DbErr>
    where
        C: ConnectionTrait,
    {
        let ([one], None, None) = (selection.visible, selection.filter, order_by) else {
            return Ok(None);
        };
        // A layered generation is its base renumbered by its layer.
        let previous = match &one.layer {
            Some(layer) => Some(layer.base),
            None => renumbering::renumbered_from(db, one.generation).await?,
        };
        let Some(previous) = previous else {
            return Ok(None);
        };
        let mut previous_key = key.clone();
        previous_key.1 = vec![(one.connection_id, previous)];
        let Some(previous_places) = self.cache.get(&previous_key) else {
            return Ok(None);
        };
        let map = match &one.layer {
            Some(layer) => Some(layer.map.clone()),
            None => renumbering::renumbering(db, one.generation).await?,
        };
        let Some(map) = map else {
            return Ok(None);
        };
        if i64::from(map.count()) != one.record_count {
            return Ok(None);
        }
        let kept = previous_places
            .iter()
            .filter_map(|place| u32::try_from(place.position()).ok())
            .filter_map(|ordinal| map.base_position(ordinal));
        let matched = ordered::matching_among(db, selection, &map.delta_positions()).await?;
        let places = layers::merged(kept, matched.into_iter())
            .into_iter()
            .filter_map(|position| Place::new(0, i64::from(position)))
            .collect();
        Ok(Some(places))
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
