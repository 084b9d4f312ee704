//! A first sync's keys gathered as its rows are staged (PostgreSQL): the
//! run's [`store::keys::Gatherer`], fed each batch as it is copied, and the
//! keys built at the swap from what it gathered, or read back when it could
//! not gather them all.

use std::sync::Arc;

use sea_orm::{DatabaseTransaction, DbErr};

use super::Run;
use crate::store;
use crate::timestamp::Timestamp;

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

    /// Builds the keys of `generation` (`published` rows, stamped `at`):
    /// from the values gathered while staging when every row was gathered,
    /// otherwise read back from the stored records; the metric says which.
    pub(super) async fn build_keys(
        &self,
        txn: &DatabaseTransaction,
        generation: i64,
        published: u64,
        at: Timestamp,
    ) -> Result<(), DbErr> {
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
            None => {
                store::keys::build(txn, self.data_type, generation).await?;
                "read_back"
            }
        };
        self.engine
            .metrics
            .keys_built(self.data_type.name(), gathered);
        Ok(())
    }
}
