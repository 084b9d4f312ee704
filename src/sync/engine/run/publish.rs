//! A run's last steps: the swap that publishes the staged generation (with
//! the watermark, in the same transaction), moving long lists in two halves
//! on PostgreSQL first, and the clean-up of what readers no longer see.

use chrono::{DateTime, Utc};
use sea_orm::{ConnectionTrait, DbBackend, TransactionTrait};

use super::{Mode, Run, RunError};
use crate::companies;
use crate::connections;
use crate::store::{self, Generations, Part, Publishing, Staging};
use crate::sync::operations::issues::{self, Issues};
use crate::sync::operations::lease::{self, Ending};
use crate::sync::watermarks::{self, Published};
use crate::timestamp::Timestamp;

impl Run<'_> {
    /// The swap, in one transaction: numbers the staged rows into the
    /// readable table (unless [`Run::move_in_halves`] did), completes the
    /// operation (only while this worker holds it), points readers at the
    /// new generation, moves the data type's watermark to `watermark` (the
    /// platform's time when this run's fetch began, and its cursor) and
    /// records the sync on the connection and company. Returns the rows
    /// published and how long building their keys took.
    ///
    /// The completion time is taken before the rows move: it is every
    /// changed record's `modifiedDate`, so the records of the next sync,
    /// which starts after this one commits, are stamped later.
    pub(super) async fn publish(
        &self,
        staging: Staging,
        issues: &Issues,
        watermark: Published,
        mode: &Mode,
    ) -> Result<(u64, std::time::Duration), RunError> {
        let completed: DateTime<Utc> = Timestamp::now();
        let list = Publishing {
            connection_id: staging.connection_id,
            data_type: self.data_type,
            generation: staging.generation,
            previous: staging.previous,
            published: Timestamp(completed),
        };
        let moved = self.move_in_halves(list).await?;
        let txn = self.engine.db.begin().await?;
        // The long part first: the operation's row is locked only from the
        // fenced update on, so heartbeats keep renewing the lease meanwhile.
        let published = match moved {
            Some(moved) => moved,
            None => store::number_staged(&txn, list, Part::Whole).await?,
        };
        let keys_began = std::time::Instant::now();
        store::keys::build(&txn, self.data_type, staging.generation).await?;
        let keys = keys_began.elapsed();
        store::refresh_statistics(&txn, published).await?;
        issues::record(&txn, self.operation.id, self.worker, issues).await?;
        if !lease::end(
            &txn,
            self.operation.id,
            self.worker,
            &Ending::Complete(completed),
        )
        .await?
        {
            return Err(RunError::LeaseLost);
        }
        store::publish(
            &txn,
            staging.connection_id,
            self.data_type,
            staging.generation,
            published as i64,
            self.operation.id,
            completed,
        )
        .await?;
        let watermark = Published {
            full_at: (*mode == Mode::Full).then_some(completed),
            ..watermark
        };
        watermarks::advance(&txn, staging.connection_id, self.data_type, watermark).await?;
        connections::record_sync(&txn, staging.connection_id, completed).await?;
        companies::record_sync(&txn, staging.company_id, completed).await?;
        crate::sync::engine::ending::announce_end(&txn, self.operation, None, false).await?;
        txn.commit().await?;
        Ok((published, keys))
    }

    /// On PostgreSQL, moves a long list's staged rows into the readable
    /// table in two halves at once, each in a transaction of its own that
    /// holds the lease shared (readers see none of it until the swap); the
    /// number of rows moved,
    /// or `None` when the list moves whole in the swap instead (SQLite, or
    /// shorter than [`store::publish::PARALLEL_AT_ROWS`]).
    async fn move_in_halves(&self, list: Publishing) -> Result<Option<u64>, RunError> {
        let db = &self.engine.db;
        if db.get_database_backend() != DbBackend::Postgres {
            return Ok(None);
        }
        let (connection_id, generation) = (list.connection_id, list.generation);
        let Some(at) = store::split_point(db, connection_id, self.data_type, generation).await?
        else {
            return Ok(None);
        };
        if list.previous.is_some() {
            store::publish::analyze_before_compare(db).await?;
        }
        let (first, second) = tokio::join!(
            self.move_part(list, Part::First { at: &at }),
            self.move_part(list, Part::Second { at: &at })
        );
        let moved = first? + second?;
        // The heartbeat may have waited behind the halves: renew at once,
        // before the swap.
        if !lease::renew(db, self.operation.id, self.worker, self.engine.lease()).await? {
            return Err(RunError::LeaseLost);
        }
        Ok(Some(moved))
    }

    /// Moves `part` of the staged list in a transaction of its own, fenced
    /// by a shared hold on the lease (the other half holds it too).
    async fn move_part(&self, list: Publishing, part: Part<'_>) -> Result<u64, RunError> {
        let txn = self.engine.db.begin().await?;
        // Its rows are of a generation no reader sees before the swap, whose
        // commit waits for the log to reach the disk, and so for theirs.
        txn.execute_unprepared("SET LOCAL synchronous_commit = off")
            .await?;
        if !lease::hold_shared(&txn, self.operation.id, self.worker).await? {
            return Err(RunError::LeaseLost);
        }
        let moved = store::number_staged(&txn, list, part).await?;
        txn.commit().await?;
        Ok(moved)
    }

    /// Readers moved to the new generation: older ones go (a later sync may
    /// already be staging a newer one), but those retained for pinned
    /// snapshots, which the engine's sweep deletes when they expire; and the
    /// moved staging, whose space is reclaimed at once after a long list
    /// (`published` rows), so the next list staged does not scan it.
    pub(super) async fn clean_up(&self, staging: Staging, published: u64) {
        let db = &self.engine.db;
        let (connection_id, data_type) = (staging.connection_id, self.data_type);
        let superseded = Generations::Below(staging.generation);
        let cleared = match store::clear_staging(
            db,
            connection_id,
            data_type,
            Some(staging.generation),
        )
        .await
        {
            Ok(()) => store::delete_generations(db, connection_id, data_type, superseded).await,
            Err(error) => Err(error),
        };
        if let Err(error) = cleared {
            tracing::warn!(error = %error, "deleting superseded records failed; the next sync retries");
        }
        if let Err(error) = store::reclaim_staging(db, published).await {
            tracing::warn!(error = %error, "reclaiming the staging table's space failed; autovacuum will");
        }
    }
}
