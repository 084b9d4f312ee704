//! A list's keys at the swap. A first sync's are gathered as its rows are
//! staged (PostgreSQL): the run's [`store::keys::Gatherer`], fed each batch
//! as it is copied, and the keys built at the swap from what it gathered. A
//! resync on PostgreSQL carries the previous generation's over with the
//! few rows its swap stamped ([`store::keys::carry`]). Otherwise they are
//! read back from the stored records.

use std::sync::Arc;

use sea_orm::{DatabaseTransaction, DbErr};

use super::Run;
use crate::store::{self, Publishing};

impl Run<'_> {
    /// Hands a first sync's `lanes` of rows, as they are copied, to the
    /// thread gathering their keys.
    pub(super) async fn gather_keys(&self, lanes: Arc<store::keys::Lanes>) {
        let sender = self
            .keys
            .lock()
            .ok()
            .and_then(|keys| keys.as_ref().map(store::keys::Gatherer::sender));
        if let Some(sender) = sender {
            // A gatherer gone (its thread failed) leaves the keys to be read back.
            let _ = sender.send(lanes).await;
        }
    }

    /// Keeps `keys` as the run's gatherer (`None`: its keys are read back).
    pub(super) fn keep_keys(&self, keys: Option<store::keys::Gatherer>) {
        if let Ok(mut kept) = self.keys.lock() {
            *kept = keys;
        }
    }

    /// Builds the keys of `list`'s generation (`published` rows): from the
    /// values gathered while staging when every row was gathered (a first
    /// sync); on a resync whose swap listed the rows it `stamped`, carried
    /// over from the previous generation's where every record stayed in the
    /// list; otherwise read back from the stored records. The metric says
    /// which.
    pub(super) async fn build_keys(
        &self,
        txn: &DatabaseTransaction,
        list: Publishing,
        published: u64,
        stamped: Option<Vec<store::Stamped>>,
    ) -> Result<(), DbErr> {
        let (generation, at) = (list.generation, list.published);
        let gatherer = self.keys.lock().ok().and_then(|mut keys| keys.take());
        let ranked = match gatherer {
            Some(gatherer) => match gatherer.finish().await {
                // A million rows sorted: CPU work, off the async workers.
                Some(keys) => tokio::task::spawn_blocking(move || keys.ranked(published, at))
                    .await
                    .ok()
                    .flatten(),
                None => None,
            },
            None => None,
        };
        let gathered = match ranked {
            Some(ranked) => {
                store::keys::build_ranked(txn, generation, ranked).await?;
                "while_staging"
            }
            None if self.carry_keys(txn, list, published, stamped).await? => "carried",
            None => {
                store::keys::build(txn, self.data_type, generation).await?;
                "read_back"
            }
        };
        self.engine
            .metrics
            .keys_built(self.data_type.name(), gathered);
        tracing::info!(
            pull_operation_id = %self.operation.id,
            data_type = self.data_type.name(),
            gathered,
            "keys built"
        );
        Ok(())
    }

    /// Whether the keys of `list`'s generation were carried over from the
    /// previous generation's ([`store::keys::carry`]), given the rows its
    /// swap `stamped`: only on a resync that listed them, while the previous
    /// generation is still the one readers see (and so its count is known).
    /// Where the previous generation's rows went is then kept with the new
    /// one ([`store::layers::renumbering`]).
    async fn carry_keys(
        &self,
        txn: &DatabaseTransaction,
        list: Publishing,
        published: u64,
        stamped: Option<Vec<store::Stamped>>,
    ) -> Result<bool, DbErr> {
        let (Some(previous), Some(stamped)) = (list.previous, stamped) else {
            return Ok(false);
        };
        let Some(current) = store::current(txn, list.connection_id, self.data_type).await? else {
            return Ok(false);
        };
        if current.generation != previous {
            return Ok(false);
        }
        let carried = store::keys::carry(
            txn,
            self.data_type,
            (previous, current.record_count),
            list.generation,
            published,
            &stamped,
        )
        .await?;
        let Some(renumbering) = carried else {
            return Ok(false);
        };
        // Kept for whoever reads the list next: a query's order remembered
        // for the previous generation is then carried over too.
        store::layers::renumbering::keep(txn, list.generation, previous, &renumbering).await?;
        Ok(true)
    }
}
