//! What a run stages besides the records the platform sent readable: the
//! previous copies of the records it could not read (kept as they were),
//! and, after the platform's whole list, the records it no longer sends
//! (flagged deleted, or kept as they were when a record that could not be
//! read had no id and so may be any of them). After an incremental fetch
//! every record it did not bring is kept as it was, but those the platform
//! said it deleted, flagged at once. The walk that finds the records a whole
//! list lost also tells whether anything else changed ([`Seen`]). The
//! previous list is the one readers saw when the run began, read through
//! its layer when it is layered ([`store::deletions`]).

use super::publish::Kept;
use super::{Mode, Run, RunError};
use crate::data::records::{self, Row};
use crate::store::deletions::Looking;
use crate::store::{self, Staging, Visible};
use crate::sync::operations::issues::Issues;
use crate::timestamp::Timestamp;

/// What staging the unsent records found out about the run's changes.
#[derive(Debug, Clone, Copy)]
pub(super) enum Seen {
    /// Nothing: no walk compared the staged rows with their previous copies.
    NotCompared,
    /// A staged record is not its previous copy but for `modifiedDate`, or
    /// a missing one leaves the list or is flagged deleted now.
    AChange,
    /// Every record of the previous generation is staged as it was, and no
    /// other: the generation readers keep.
    NoChange(Kept),
}

/// What becomes of the records a whole-list sync did not bring back.
#[derive(Debug, Clone, Copy)]
enum Missing {
    /// The platform deleted them: flagged `isDeleted`.
    FlagDeleted,
    /// They may be records the run could not read: kept as they were.
    Keep,
}

impl Run<'_> {
    /// Stages what the platform did not send readable ([`Run::keep_unreadable`],
    /// and after a whole list [`Run::stage_missing`]); after an incremental
    /// fetch, every record of the previous generation it did not bring
    /// (unchanged at the platform, or unreadable) as it was. After a whole
    /// list whose missing records are flagged, what the walk saw of changes.
    pub(super) async fn stage_unsent(
        &self,
        staging: Staging,
        compared: Option<&Visible>,
        issues: &Issues,
        fetched: i64,
        whole_list: bool,
        mode: &Mode,
    ) -> Result<Seen, RunError> {
        if let Mode::Incremental { .. } = mode {
            return self
                .stage_missing(staging, compared, fetched, Missing::Keep)
                .await;
        }
        self.keep_unreadable(staging, compared, issues.ids(), fetched)
            .await?;
        if !whole_list {
            return Ok(Seen::NotCompared);
        }
        // A record that could not be read nor named may be any of those
        // missing: then every missing record keeps its copy, unflagged,
        // until a sync that reads them all.
        let missing = if issues.all_named() {
            Missing::FlagDeleted
        } else {
            tracing::warn!(
                pull_operation_id = %self.operation.id,
                "a record that could not be read had no readable id: records missing this sync keep their copies"
            );
            Missing::Keep
        };
        self.stage_missing(staging, compared, fetched, missing)
            .await
    }

    /// Stages again the records of the list readers saw when the run began
    /// (`compared`, layered or not) that this run did not bring back, a batch per fenced transaction: after an
    /// incremental fetch, kept as they were; else only after
    /// fetching the platform's whole list (`Syncs::WHOLE_LIST`), where a
    /// record missing is one it deleted: flagged deleted (or dropped once
    /// flagged for longer than
    /// [`crate::data::records::DELETED_RETENTION_DAYS`]), or kept as they
    /// were when the run cannot tell them from records it could not read.
    ///
    /// Flagging, the walk also looks for a staged record that changed, until
    /// it meets one ([`Looking::AlsoForChanges`]), and for a missing record
    /// that changes (flagged now, or dropped): so whether a whole list is
    /// its previous generation again costs no walk of its own.
    async fn stage_missing(
        &self,
        staging: Staging,
        compared: Option<&Visible>,
        fetched: i64,
        missing: Missing,
    ) -> Result<Seen, RunError> {
        let Some(compared) = compared else {
            return Ok(Seen::NotCompared);
        };
        if let Missing::Keep = missing {
            self.keep_missing(staging, compared, fetched).await?;
            return Ok(Seen::NotCompared);
        }
        let internal = |error: serde_json::Error| RunError::Internal(error.to_string());
        let found_gone = Timestamp(staging.modified);
        let mut after: Option<String> = None;
        // While nothing changed: the generation that would be kept, with the
        // rows staged so far.
        let mut unchanged = self.may_be_unchanged(staging, compared).await?;
        loop {
            let looking = match unchanged {
                Some(_) => Looking::AlsoForChanges,
                None => Looking::ForMissing,
            };
            let walked = store::deletions::missing(
                &self.engine.db,
                compared,
                self.data_type,
                staging.generation,
                after.as_deref(),
                looking,
            )
            .await?;
            if walked.changed {
                unchanged = None;
            }
            let Some(last) = walked.last else {
                return Ok(match unchanged.filter(Kept::holds_every_row) {
                    Some(kept) => Seen::NoChange(kept),
                    None => Seen::AChange,
                });
            };
            if self.engine.stopping() {
                return Err(RunError::Interrupted);
            }
            after = Some(last);
            let mut flagged = Vec::with_capacity(walked.missing.len());
            for row in walked.missing {
                match records::deleted(&row.body, found_gone).map_err(internal)? {
                    Some(body) => {
                        let body = records::without_modified_date(body);
                        if !store::publish::is_same_but_for_its_date(&row.body, &body) {
                            unchanged = None;
                        }
                        flagged.push(Row { body, ..row });
                    }
                    None => unchanged = None,
                }
            }
            if let Some(kept) = &mut unchanged {
                kept.staged += flagged.len() as u64;
            }
            if flagged.is_empty() {
                continue;
            }
            let txn = self.fenced(fetched, 99).await?;
            store::stage(&txn, staging, self.data_type, &flagged)
                .await
                .map_err(|error| RunError::Internal(error.to_string()))?;
            txn.commit().await?;
        }
    }

    /// The generation readers see (`compared`), while the rows staged so
    /// far may still be it as it was (with how many are staged): not when
    /// more rows are staged than it holds (the list gained a record), which
    /// no comparison of copies could undo. Then the walk for missing records
    /// compares nothing.
    async fn may_be_unchanged(
        &self,
        staging: Staging,
        compared: &Visible,
    ) -> Result<Option<Kept>, RunError> {
        let db = &self.engine.db;
        let staged = store::unchanged::staged_rows(db, staging, self.data_type).await?;
        let rows = compared.record_count.max(0) as u64;
        Ok((staged <= rows).then(|| Kept::new(compared.generation, rows, staged)))
    }

    /// Stages again, as they were, the records of the list readers saw
    /// (`compared`) this run did not bring back, inside the database, a
    /// batch ([`store::deletions::KEEP_BATCH`] records) per fenced transaction.
    async fn keep_missing(
        &self,
        staging: Staging,
        compared: &Visible,
        fetched: i64,
    ) -> Result<(), RunError> {
        let mut after: Option<String> = None;
        loop {
            if self.engine.stopping() {
                return Err(RunError::Interrupted);
            }
            let txn = self.fenced(fetched, 99).await?;
            let end = store::deletions::keep_missing(
                &txn,
                staging,
                self.data_type,
                compared,
                after.as_deref(),
            )
            .await?;
            txn.commit().await?;
            match end {
                Some(end) => after = Some(end),
                None => return Ok(()),
            }
        }
    }

    /// Stages the previous copies of the records the platform says it
    /// deleted (`removed`, Plaid's `removed`), flagged deleted, unless this
    /// run staged them again since (deleted, then added back).
    pub(super) async fn flag_removed(
        &self,
        staging: Staging,
        compared: Option<&Visible>,
        removed: &[String],
        fetched: i64,
    ) -> Result<(), RunError> {
        let Some(compared) = compared else {
            return Ok(());
        };
        if removed.is_empty() {
            return Ok(());
        }
        let internal = |error: serde_json::Error| RunError::Internal(error.to_string());
        let found_gone = Timestamp(staging.modified);
        let previous_copies = store::deletions::previous_copies(
            &self.engine.db,
            compared,
            self.data_type,
            staging.generation,
            removed,
        )
        .await?;
        let mut flagged = Vec::with_capacity(previous_copies.len());
        for row in previous_copies {
            if let Some(body) = records::deleted(&row.body, found_gone).map_err(internal)? {
                let body = records::without_modified_date(body);
                flagged.push(Row { body, ..row });
            }
        }
        let txn = self.fenced(fetched, 99).await?;
        store::stage(&txn, staging, self.data_type, &flagged)
            .await
            .map_err(|error| RunError::Internal(error.to_string()))?;
        txn.commit().await?;
        Ok(())
    }

    /// Stages again, as they were, the previous copies of the records this
    /// run could not read (`ids`), so that each keeps its copy rather than
    /// leaving the list or being flagged deleted.
    async fn keep_unreadable(
        &self,
        staging: Staging,
        compared: Option<&Visible>,
        ids: &[String],
        fetched: i64,
    ) -> Result<(), RunError> {
        let Some(compared) = compared else {
            return Ok(());
        };
        if ids.is_empty() {
            return Ok(());
        }
        let kept = store::deletions::previous_copies(
            &self.engine.db,
            compared,
            self.data_type,
            staging.generation,
            ids,
        )
        .await?;
        let kept: Vec<Row> = kept
            .into_iter()
            .map(|row| Row {
                body: records::without_modified_date(row.body),
                ..row
            })
            .collect();
        let txn = self.fenced(fetched, 99).await?;
        store::stage(&txn, staging, self.data_type, &kept)
            .await
            .map_err(|error| RunError::Internal(error.to_string()))?;
        txn.commit().await?;
        Ok(())
    }
}
