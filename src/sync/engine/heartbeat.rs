//! Keeping a running operation's lease: renewed on a heartbeat until the
//! run ends, given up (and the run told) only once it lapsed without a
//! successful renewal.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use chrono::Utc;
use sea_orm::DatabaseConnection;
use tokio::task::JoinHandle;
use uuid::Uuid;

use crate::sync::operations::lease;

/// Aborts the heartbeat however the run ends (return, error or panic).
pub(super) struct Heartbeat(JoinHandle<()>);

impl Drop for Heartbeat {
    fn drop(&mut self) {
        self.0.abort();
    }
}

/// Renews `worker`'s lease on `id` every `every` for `lease` at a time,
/// until dropped; sets `lease_lost` when another worker owns it now or a
/// renewal failed past the lease (one failed attempt is retried).
pub(super) fn spawn(
    db: DatabaseConnection,
    worker: String,
    id: Uuid,
    (lease, every): (Duration, Duration),
    lease_lost: Arc<AtomicBool>,
) -> Heartbeat {
    let lease = chrono::Duration::from_std(lease).unwrap_or_default();
    Heartbeat(tokio::spawn(async move {
        let mut held_until = Utc::now() + lease;
        loop {
            tokio::time::sleep(every).await;
            match lease::renew(&db, id, &worker, lease).await {
                // From now: the renewal may have waited for the row.
                Ok(true) => held_until = Utc::now() + lease,
                // Someone else owns it now.
                Ok(false) => break,
                Err(error) if Utc::now() < held_until => {
                    tracing::warn!(pull_operation_id = %id, error = %error, "renewing the lease failed; retrying");
                }
                Err(_) => break,
            }
        }
        lease_lost.store(true, Ordering::SeqCst);
    }))
}
