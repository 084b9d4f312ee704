//! How a run fetches: the platform's whole list, or only what changed since
//! the data type's watermark, where the connector can ask for that. A full
//! fetch is the first sync of a data type, one asked for (`?full=true`),
//! and, where the platform's changes do not carry its deletions, the first
//! sync a set time ([`super::super::EngineConfig::full_fetch_every`]) after
//! the last full one: the reconciliation that finds what it deleted. A list
//! readers see as a layer fetches as any other: what the run does not bring
//! back is read from the layer ([`crate::store::deletions`]).

use chrono::{DateTime, Utc};

use super::{Run, RunError};
use crate::platforms::connector::{Changes, Deletions, Since};
use crate::store::Staging;
use crate::sync::engine::tokens::Tokens;
use crate::sync::operations::FetchMode;
use crate::sync::operations::lease;
use crate::sync::watermarks::{self, Watermark};
use crate::timestamp::Timestamp;

/// How a run fetches.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Mode {
    /// The whole list.
    Full,
    /// What changed since `since` (the watermark less the overlap, and the
    /// platform's own cursor where it keeps one).
    Incremental { since: Since },
}

impl Mode {
    /// Where changes are asked since; `None` for the whole list.
    pub fn since(&self) -> Option<Since> {
        match self {
            Self::Full => None,
            Self::Incremental { since } => Some(since.clone()),
        }
    }

    /// As the operation records it.
    pub fn recorded(&self) -> FetchMode {
        match self {
            Self::Full => FetchMode::Full,
            Self::Incremental { .. } => FetchMode::Incremental,
        }
    }
}

impl Run<'_> {
    /// Decides how this run fetches and records it on the operation.
    pub(super) async fn fetch_mode(
        &self,
        tokens: &Tokens<'_>,
        staging: Staging,
    ) -> Result<Mode, RunError> {
        let db = &self.engine.db;
        let watermark = match staging.previous {
            Some(_) => watermarks::find(db, staging.connection_id, self.data_type).await?,
            None => None,
        };
        let mode = decide(
            tokens.changes(self.data_type),
            self.operation.full_requested,
            watermark,
            self.engine.config.full_fetch_every,
            Timestamp::now(),
        );
        if !lease::record_fetch_mode(db, self.operation.id, self.worker, mode.recorded()).await? {
            return Err(RunError::LeaseLost);
        }
        Ok(mode)
    }
}

/// How a run fetches, given how its platform tells changes (`changes`),
/// whether a full fetch was asked for, the data type's watermark (`None`
/// before its first published sync, or when nothing it published is left)
/// and how often a reconciliation is due.
fn decide(
    changes: Option<Changes>,
    full_requested: bool,
    watermark: Option<Watermark>,
    full_fetch_every: std::time::Duration,
    now: DateTime<Utc>,
) -> Mode {
    let (Some(changes), Some(watermark)) = (changes, watermark) else {
        return Mode::Full;
    };
    if full_requested {
        return Mode::Full;
    }
    let reconciliation_due = changes.deletions == Deletions::OnlyByFullFetch
        && chrono::Duration::from_std(full_fetch_every)
            .map(|every| now - watermark.full_fetched >= every)
            .unwrap_or(true);
    if reconciliation_due {
        return Mode::Full;
    }
    let overlap = chrono::Duration::from_std(changes.overlap).unwrap_or(chrono::Duration::zero());
    Mode::Incremental {
        since: Since {
            time: watermark.changes_since - overlap,
            cursor: watermark.cursor,
        },
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use chrono::TimeZone;

    use super::*;

    fn at(hour: u32) -> DateTime<Utc> {
        Utc.with_ymd_and_hms(2026, 11, 27, hour, 0, 0).unwrap()
    }

    const DAY: Duration = Duration::from_secs(24 * 3600);

    fn watermark(changes_since: u32, full_fetched: u32) -> Option<Watermark> {
        Some(Watermark {
            changes_since: at(changes_since),
            full_fetched: at(full_fetched),
            cursor: Some("c-1".to_owned()),
        })
    }

    #[test]
    fn changes_since_the_watermark_less_the_overlap_and_from_the_platforms_cursor() {
        let changes = Some(Changes::with(Deletions::OnlyByFullFetch));
        let mode = decide(changes, false, watermark(12, 1), DAY, at(13));
        assert_eq!(
            mode,
            Mode::Incremental {
                since: Since {
                    time: at(12) - chrono::Duration::minutes(5),
                    cursor: Some("c-1".to_owned()),
                }
            }
        );
    }

    #[test]
    fn whole_without_a_filter_a_watermark_or_when_asked() {
        let changes = Some(Changes::with(Deletions::InChanges));
        assert_eq!(
            decide(None, false, watermark(12, 1), DAY, at(13)),
            Mode::Full
        );
        assert_eq!(decide(changes, false, None, DAY, at(13)), Mode::Full);
        assert_eq!(
            decide(changes, true, watermark(12, 1), DAY, at(13)),
            Mode::Full
        );
    }

    #[test]
    fn a_reconciliation_is_due_a_set_time_after_the_last_full_fetch_unless_changes_carry_deletions()
    {
        let missed = Some(Changes::with(Deletions::OnlyByFullFetch));
        let carried = Some(Changes::with(Deletions::InChanges));
        let hour = Duration::from_secs(3600);
        assert_eq!(
            decide(missed, false, watermark(12, 11), hour, at(12)),
            Mode::Full
        );
        assert!(matches!(
            decide(missed, false, watermark(12, 11), 2 * hour, at(12)),
            Mode::Incremental { .. }
        ));
        assert!(matches!(
            decide(carried, false, watermark(12, 1), hour, at(12)),
            Mode::Incremental { .. }
        ));
        // Zero: every sync of such a platform fetches whole.
        assert_eq!(
            decide(missed, false, watermark(12, 12), Duration::ZERO, at(12)),
            Mode::Full
        );
    }
}
