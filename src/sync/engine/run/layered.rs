//! A resync published as a layer over the previous full generation, when
//! [`EngineConfig::layering`](super::super::EngineConfig::layering) is on
//! (`docs/store-next.md` §2b): only the records that changed since that
//! base are written, with the maps that set them among the base's rows; and
//! the fences a later layer needs, written at each long full publish. A
//! resync after a layer compares with its base, so its layer replaces the
//! one readers see on the same base, holding every change since; once they
//! are too many, the resync publishes in full, which is the next base.
//! Layering stays off by default: see `docs/store-next.md`.

use sea_orm::{ConnectionTrait, DatabaseTransaction};

use super::{Run, RunError};
use crate::store::layers::fences::{self, Fences};
use crate::store::layers::filtered::{self, FilterFences};
use crate::store::layers::planned::{self, Planned};
use crate::store::layers::written::{self, Layer};
use crate::store::{self, Publishing, Staging, Visible};

/// The most records a layer holds, as a share of its base (one in this
/// many), and at most [`LAYER_AT_MOST`].
const LAYER_SHARE: u64 = 50;

/// The most records a layer holds, however long its base.
const LAYER_AT_MOST: u64 = 20_000;

impl Run<'_> {
    /// The layer this resync may publish over the run's `previous`: when
    /// layering is on, readers see that generation or a layer over it, it
    /// is a full one of at least the configured rows with its fences, and
    /// at most one of [`LAYER_SHARE`] of its records (and
    /// [`LAYER_AT_MOST`]) changed or left since; `None` otherwise, and the
    /// run publishes in full.
    pub(super) async fn planned_layer(
        &self,
        staging: Staging,
        compared: Option<&Visible>,
    ) -> Result<Option<(i64, Planned)>, RunError> {
        let Some(layering) = self.engine.config.layering else {
            return Ok(None);
        };
        let db = &self.engine.db;
        let Some(previous) = staging.previous else {
            return Ok(None);
        };
        let Some(current) = compared else {
            return Ok(None);
        };
        // Readers see `previous`, or a layer over it: the new layer then
        // replaces that one on the same base, its delta every change since
        // the base (`Run::prepare` compares with the base).
        let layered_on_base = match current.layer.as_deref() {
            Some(layer) if layer.base == previous => Some(layer),
            Some(_) => return Ok(None),
            None if current.generation == previous => None,
            None => return Ok(None),
        };
        let count = match layered_on_base {
            Some(layer) => layer.map.base_count(),
            None => u32::try_from(current.record_count.max(0)).unwrap_or(u32::MAX),
        };
        let count = u64::from(count);
        if count < layering.at_rows {
            return Ok(None);
        }
        if written::read(db, previous).await?.is_some() {
            // One level only, until a layer over a layer is built.
            return Ok(None);
        }
        let Ok(count) = u32::try_from(count) else {
            return Ok(None);
        };
        let direction = self.data_type.spec().order;
        let Some(fenced) = Fences::read(db, previous, count, direction).await? else {
            return Ok(None);
        };
        let filter_fences = match self.data_type.spec().filter {
            Some(_) => match FilterFences::read(db, previous).await? {
                Some(read) => Some(read),
                None => return Ok(None),
            },
            None => None,
        };
        let at_most = (u64::from(count) / LAYER_SHARE).min(LAYER_AT_MOST) as usize;
        let began = std::time::Instant::now();
        let Some(mut changes) =
            written::changes(db, staging, self.data_type, previous, at_most).await?
        else {
            return Ok(None);
        };
        // Over a layer on the same base, what it changed is compared with
        // its copies, not the base's: a record changed back is a change.
        if let Some(layer) = layered_on_base {
            let since = written::staged_since_layer(db, staging, current.generation, layer).await?;
            let found: std::collections::HashSet<String> = changes
                .changed
                .iter()
                .map(|record| record.place.record_id.clone())
                .collect();
            changes.changed.extend(
                since
                    .into_iter()
                    .filter(|record| !found.contains(&record.place.record_id)),
            );
            if changes.changed.len() + changes.dropped.len() > at_most {
                return Ok(None);
            }
        }
        let compared = began.elapsed();
        let fences = (&fenced, filter_fences.as_ref());
        let planned =
            planned::plan(db, previous, fences, changes.changed, &changes.dropped).await?;
        tracing::info!(
            pull_operation_id = %self.operation.id,
            data_type = self.data_type.name(),
            changes_ms = compared.as_millis() as u64,
            plan_ms = (began.elapsed() - compared).as_millis() as u64,
            planned = planned.is_ok(),
            "layer planned"
        );
        Ok(planned.ok().map(|planned| (previous, planned)))
    }

    /// Writes the planned layer's delta under `list.generation` in the
    /// swap's transaction, with its keys (the delta's own) and its maps;
    /// returns the rows readers see in it.
    pub(super) async fn write_layer(
        &self,
        txn: &DatabaseTransaction,
        list: Publishing,
        (base, planned): (i64, Planned),
    ) -> Result<u64, RunError> {
        let began = std::time::Instant::now();
        written::write_delta(txn, list, &planned).await?;
        // The keys gathered while staging are a whole list's: not the delta's.
        drop(self.keys.lock().ok().and_then(|mut keys| keys.take()));
        store::keys::build(txn, self.data_type, list.generation).await?;
        let layer = Layer {
            base,
            map: planned.map,
            filtered: planned.filtered,
        };
        written::keep(txn, list.generation, &layer).await?;
        tracing::info!(
            pull_operation_id = %self.operation.id,
            data_type = self.data_type.name(),
            base,
            delta = layer.map.delta_count(),
            written_ms = began.elapsed().as_millis() as u64,
            "layer written"
        );
        Ok(u64::from(layer.map.count()))
    }

    /// After a full publish of `rows` rows, when layering is on and the list
    /// is long enough: its fences (and its filter fences), which a later
    /// layer over it needs. Written last in the swap's transaction, after
    /// the keys (a carry of keys that fails deletes the generation's).
    pub(super) async fn write_fences(
        &self,
        txn: &impl ConnectionTrait,
        generation: i64,
        rows: u64,
    ) -> Result<(), RunError> {
        let Some(layering) = self.engine.config.layering else {
            return Ok(());
        };
        let Ok(count) = u32::try_from(rows) else {
            return Ok(());
        };
        if rows < layering.at_rows {
            return Ok(());
        }
        fences::write(txn, generation, count).await?;
        if self.data_type.spec().filter.is_some() {
            filtered::write(txn, generation).await?;
        }
        Ok(())
    }
}
