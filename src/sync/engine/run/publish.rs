//! A run's last steps: the swap that publishes the staged generation (with
//! the watermark, in the same transaction), moving long lists in two halves
//! on PostgreSQL first, or, when the run changed nothing, keeps the
//! generation readers see; and the clean-up of what readers no longer see.

use chrono::{DateTime, Utc};
use sea_orm::{ConnectionTrait, DatabaseTransaction, DbBackend, TransactionTrait};

use super::{Mode, Run, RunError};
use crate::companies;
use crate::connections;
use crate::store::{self, Generations, Moved, Part, Publishing, Staging, Visible};
use crate::sync::operations::issues::{self, Issues};
use crate::sync::operations::lease::{self, Ending};
use crate::sync::watermarks::{self, Published};
use crate::timestamp::Timestamp;

/// What [`Run::unchanged`] still has to compare.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Compare {
    /// What an incremental fetch staged (the changes alone) with their
    /// previous copies.
    Changes,
    /// A whole list staged again: as many rows as the previous generation,
    /// each its previous copy (where the walk for its missing records did
    /// not compare them already: [`super::missing::Seen`]).
    WholeList,
}

/// The generation a run that changed nothing keeps ([`Run::unchanged`]).
#[derive(Debug, Clone, Copy)]
pub(super) struct Kept {
    /// The generation readers see, and keep seeing.
    generation: i64,
    /// How many rows it holds.
    rows: u64,
    /// How many rows the run staged (and its clean-up deletes).
    pub staged: u64,
}

impl Kept {
    /// The generation readers see (`generation`, of `rows` rows), while
    /// the run has staged `staged` rows that are its records as they were.
    pub(super) fn new(generation: i64, rows: u64, staged: u64) -> Self {
        Self {
            generation,
            rows,
            staged,
        }
    }

    /// Whether the run staged as many rows as the generation holds: with
    /// each a record of it as it was, no record left or joined the list.
    pub(super) fn holds_every_row(&self) -> bool {
        self.staged == self.rows
    }
}

impl Run<'_> {
    /// The swap, in one transaction: numbers the staged rows into the
    /// readable table (unless [`Run::move_in_halves`] did), or, for a
    /// resync that may ([`Run::planned_layer`]), writes only its changes as
    /// a layer over the previous generation; completes the
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
        compared: Option<&Visible>,
        issues: &Issues,
        watermark: Published,
        mode: &Mode,
    ) -> Result<(u64, std::time::Duration), RunError> {
        let completed: DateTime<Utc> = Timestamp::now();
        // Over a layer, the swap compares with its base (`Run::prepare`),
        // finding the previous copies of what the layer changed in the
        // layer first.
        let previous_layer = compared
            .filter(|compared| compared.layer.is_some())
            .map(|compared| compared.generation);
        let list = Publishing {
            connection_id: staging.connection_id,
            data_type: self.data_type,
            generation: staging.generation,
            previous: staging.previous,
            previous_layer,
            published: Timestamp(completed),
        };
        let layer = self.planned_layer(staging, compared).await?;
        let moved = match layer {
            Some(_) => None,
            None => self.move_in_halves(list).await?,
        };
        let txn = self.engine.db.begin().await?;
        // The long part first: the operation's row is locked only from the
        // fenced update on, so heartbeats keep renewing the lease meanwhile.
        let (published, keys) = match layer {
            Some(layer) => {
                let began = std::time::Instant::now();
                let rows = self.write_layer(&txn, list, layer).await?;
                (rows, began.elapsed())
            }
            None => self.write_whole(&txn, list, moved).await?,
        };
        self.end_complete(&txn, issues, completed).await?;
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
        self.record_completion(&txn, staging, watermark, mode, completed)
            .await?;
        txn.commit().await?;
        Ok((published, keys))
    }

    /// A full publish's part of the swap: numbers the staged rows into the
    /// readable table (unless [`Run::move_in_halves`] `moved` them),
    /// refreshes statistics, builds the keys and, when layering is on, the
    /// fences. Returns the rows published and how long their keys took.
    async fn write_whole(
        &self,
        txn: &DatabaseTransaction,
        list: Publishing,
        moved: Option<Moved>,
    ) -> Result<(u64, std::time::Duration), RunError> {
        let moved = match moved {
            Some(moved) => moved,
            None => store::number_staged(txn, list, Part::Whole).await?,
        };
        let published = moved.rows;
        // Statistics first when the keys are carried over: they look up the
        // rows the move stamped, which the planner would otherwise believe
        // the new generation does not hold (it then read all of it through
        // the primary key: 3 s at a million rows, for a thousand lookups).
        // Otherwise last, so that the `ANALYZE`'s lock on `record` (which
        // other lists' `ANALYZE`s wait for) is not held while keys are read
        // back.
        let carrying = moved.stamped.is_some();
        if carrying {
            store::refresh_statistics(txn, published).await?;
        }
        let keys_began = std::time::Instant::now();
        self.build_keys(txn, list, published, moved.stamped).await?;
        let keys = keys_began.elapsed();
        if !carrying {
            store::refresh_statistics(txn, published).await?;
        }
        self.write_fences(txn, list.generation, published).await?;
        Ok((published, keys))
    }

    /// Whether the rows this run staged leave the generation readers saw
    /// (`compared`, layered or not) as it was ([`store::unchanged`]),
    /// compared as `compare` says: each staged row (changed at the
    /// platform, or flagged removed) is its previous copy but for
    /// `modifiedDate`, and, when the run staged the whole list again, there
    /// are as many as that generation holds, so no record left or joined
    /// the list. `None` when something changed, and on a first sync.
    pub(super) async fn unchanged(
        &self,
        staging: Staging,
        compared: Option<&Visible>,
        compare: Compare,
    ) -> Result<Option<Kept>, RunError> {
        let db = &self.engine.db;
        let Some(previous) = compared else {
            return Ok(None);
        };
        let staged = store::unchanged::staged_rows(db, staging, self.data_type).await?;
        let kept = Kept::new(
            previous.generation,
            previous.record_count.max(0) as u64,
            staged,
        );
        if compare == Compare::WholeList && !kept.holds_every_row() {
            return Ok(None);
        }
        if store::unchanged::any_change(db, staging, self.data_type, previous).await? {
            return Ok(None);
        }
        Ok(Some(kept))
    }

    /// The swap of a run that changed nothing ([`Run::unchanged`]), in one
    /// transaction: completes the operation, keeps readers on the previous
    /// generation (naming this sync as its latest), moves the
    /// watermark and records the sync, as [`Run::publish`] does, but moves
    /// no row, builds no key and leaves readers the list orders they read.
    /// Returns the rows readers keep seeing.
    pub(super) async fn keep_previous(
        &self,
        staging: Staging,
        kept: Kept,
        issues: &Issues,
        watermark: Published,
        mode: &Mode,
    ) -> Result<u64, RunError> {
        let completed: DateTime<Utc> = Timestamp::now();
        let txn = self.engine.db.begin().await?;
        self.end_complete(&txn, issues, completed).await?;
        let confirmed = store::confirm(
            &txn,
            staging.connection_id,
            self.data_type,
            kept.generation,
            self.operation.id,
            completed,
        )
        .await?;
        if !confirmed {
            // Only this run publishes the list while it holds the lease.
            return Err(RunError::Internal(
                "the list's published generation changed during its sync".to_owned(),
            ));
        }
        self.record_completion(&txn, staging, watermark, mode, completed)
            .await?;
        txn.commit().await?;
        Ok(kept.rows)
    }

    /// Records the records the run could not read and completes the
    /// operation at `completed`, only while this worker holds it.
    async fn end_complete(
        &self,
        txn: &impl ConnectionTrait,
        issues: &Issues,
        completed: DateTime<Utc>,
    ) -> Result<(), RunError> {
        issues::record(txn, self.operation.id, self.worker, issues).await?;
        let ending = Ending::Complete(completed);
        if !lease::end(txn, self.operation.id, self.worker, &ending).await? {
            return Err(RunError::LeaseLost);
        }
        Ok(())
    }

    /// What a completed sync moves on besides the list: the data type's
    /// watermark (with the time of a full fetch), the connection's and
    /// company's last sync, and the operation's end for webhooks.
    async fn record_completion(
        &self,
        txn: &impl ConnectionTrait,
        staging: Staging,
        watermark: Published,
        mode: &Mode,
        completed: DateTime<Utc>,
    ) -> Result<(), RunError> {
        let watermark = Published {
            full_at: (*mode == Mode::Full).then_some(completed),
            ..watermark
        };
        watermarks::advance(txn, staging.connection_id, self.data_type, watermark).await?;
        connections::record_sync(txn, staging.connection_id, completed).await?;
        companies::record_sync(txn, staging.company_id, completed).await?;
        crate::sync::engine::ending::announce_end(txn, self.operation, None, false).await?;
        Ok(())
    }

    /// On PostgreSQL, moves a long list's staged rows into the readable
    /// table in two halves at once, each in a transaction of its own that
    /// holds the lease shared (readers see none of it until the swap); what
    /// moved (on a resync, with the rows stamped when both halves listed
    /// theirs), or `None` when the list moves whole in the swap instead
    /// (SQLite, or shorter than [`store::publish::PARALLEL_AT_ROWS`]).
    async fn move_in_halves(&self, list: Publishing) -> Result<Option<Moved>, RunError> {
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
        let (first, second) = (first?, second?);
        let stamped = match (first.stamped, second.stamped) {
            (Some(mut stamped), Some(more)) => {
                stamped.extend(more);
                Some(stamped)
            }
            _ => None,
        };
        // The heartbeat may have waited behind the halves: renew at once,
        // before the swap.
        if !lease::renew(db, self.operation.id, self.worker, self.engine.lease()).await? {
            return Err(RunError::LeaseLost);
        }
        Ok(Some(Moved {
            rows: first.rows + second.rows,
            stamped,
        }))
    }

    /// Moves `part` of the staged list in a transaction of its own, fenced
    /// by a shared hold on the lease (the other half holds it too).
    async fn move_part(&self, list: Publishing, part: Part<'_>) -> Result<Moved, RunError> {
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
    /// moved staging: after a long list (`published` rows) the staging table
    /// is emptied whole when nothing else is staged, or its rows are deleted
    /// and their space reclaimed at once, so the next list staged does not
    /// scan them.
    pub(super) async fn clean_up(&self, staging: Staging, published: u64) {
        let db = &self.engine.db;
        let (connection_id, data_type) = (staging.connection_id, self.data_type);
        let truncated = self.truncate_staging(staging, published).await;
        let superseded = Generations::Below(staging.generation);
        let cleared = if truncated {
            Ok(())
        } else {
            store::clear_staging(db, connection_id, data_type, Some(staging.generation)).await
        };
        let cleared = match cleared {
            Ok(()) => store::delete_generations(db, connection_id, data_type, superseded).await,
            Err(error) => Err(error),
        };
        if let Err(error) = cleared {
            tracing::warn!(error = %error, "deleting superseded records failed; the next sync retries");
        }
        if !truncated {
            self.reclaim_staging(published).await;
        }
    }

    /// After [`Run::keep_previous`]: the run's own staging goes (`staged`
    /// rows: after a long list, the table emptied whole or the rows' space
    /// reclaimed at once, as in [`Run::clean_up`]); readers' generation and
    /// those retained for pinned snapshots stay.
    pub(super) async fn clean_up_kept(&self, staging: Staging, staged: u64) {
        let db = &self.engine.db;
        let truncated = self.truncate_staging(staging, staged).await;
        let own = Generations::Exactly(staging.generation);
        if let Err(error) =
            store::delete_generations(db, staging.connection_id, self.data_type, own).await
        {
            tracing::warn!(error = %error, "deleting the staged rows failed; the next sync retries");
        }
        if !truncated {
            self.reclaim_staging(staged).await;
        }
    }

    /// Whether the staging table was emptied whole after `rows` moved out
    /// of it ([`store::truncate_staging`]); a failure only means the rows
    /// are deleted instead.
    async fn truncate_staging(&self, staging: Staging, rows: u64) -> bool {
        store::truncate_staging(&self.engine.db, staging.generation, rows)
            .await
            .unwrap_or_else(|error| {
                tracing::warn!(error = %error, "emptying the staging table failed; its rows are deleted instead");
                false
            })
    }

    async fn reclaim_staging(&self, rows: u64) {
        if let Err(error) = store::reclaim_staging(&self.engine.db, rows).await {
            tracing::warn!(error = %error, "reclaiming the staging table's space failed; autovacuum will");
        }
    }
}
