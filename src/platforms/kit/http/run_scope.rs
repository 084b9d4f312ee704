//! What one run's platform calls share, kept task-local for the run: the
//! [`CallGate`] every call goes through first ([`paced`]) and the
//! platform's time when the run's fetch began ([`platform_time`], from the
//! first answer's `Date` header).

use std::cell::Cell;
use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use chrono::{DateTime, Utc};
use futures_util::future::BoxFuture;
use reqwest::header::{DATE, HeaderMap};

tokio::task_local! {
    /// The `Date` of the first answer a platform gave within [`platform_time`].
    static FIRST_ANSWERED: Cell<Option<DateTime<Utc>>>;
    /// What every call within [`paced`] goes through first.
    static GATE: Arc<dyn CallGate>;
}

/// What a run's calls to a platform go through: its limits for the
/// connection's OAuth application and organization.
pub trait CallGate: Send + Sync {
    /// The call's turn: how long it waits first (the caller sleeps, and
    /// counts the wait), or why it may not go at all (a daily quota spent,
    /// in words that say when the sync can continue).
    fn admit(&self) -> BoxFuture<'_, Result<Turn, String>>;
    /// `late` woke past its slot's slack ([`Turn::started_late`]) and did
    /// not go: its reservation is given up and the call takes a new turn,
    /// after every turn reserved meanwhile, as [`CallGate::admit`] gives
    /// one (a refusal leaves `late`'s place for [`CallGate::finished`]).
    fn admit_again<'a>(&'a self, late: &'a Turn) -> BoxFuture<'a, Result<Turn, String>>;
    /// The call of `turn` is over: the platform answered (its status and
    /// headers, which may say what is left of its quota, or a 429's
    /// `Retry-After`), or did not (`None`); its place among the calls in
    /// progress is free again.
    fn finished<'a>(
        &'a self,
        turn: &'a Turn,
        answer: Option<(u16, &'a HeaderMap)>,
    ) -> BoxFuture<'a, ()>;
}

/// A call's turn under a [`CallGate`].
#[derive(Debug, Default)]
pub struct Turn {
    /// How long the call waits before it goes.
    pub wait: Duration,
    /// Its place among the calls in progress, where the platform limits
    /// them: handed back by [`CallGate::finished`].
    pub place: Option<u64>,
    /// Whether the wait is a hold the platform asked for (a `Retry-After`,
    /// or the wait it documents after a 429), rather than the declared
    /// rate's window: only a hold longer than the longest `Retry-After` a
    /// call waits ends the sync.
    pub held: bool,
    /// Where the call stands among the rolling window's calls, where the
    /// platform limits their rate.
    pub slot: Option<Slot>,
}

/// A call's reserved time in the rolling window, and how late it may start.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Slot {
    /// The time reserved (Unix milliseconds), as the window records it.
    pub at: i64,
    /// How many milliseconds after `at` the call may still start
    /// (`kit::limits::slack`).
    pub slack_ms: i64,
    /// The UTC day (days since the Unix epoch) whose count the call was
    /// counted in, where the platform limits calls a day.
    pub counted_day: i64,
}

impl Turn {
    /// Whether the call, about to start now, is later than its slot
    /// allows: the margin kept for late calls would no longer keep it
    /// apart from the calls reserved a window after it, so it asks for a
    /// new turn instead of going ([`CallGate::admit_again`]).
    pub fn started_late(&self) -> bool {
        self.slot.is_some_and(|slot| {
            Utc::now().timestamp_millis() > slot.at.saturating_add(slot.slack_ms)
        })
    }
}

/// Runs `work` (a run's fetch) with every platform call it makes admitted by
/// `gate` first.
pub async fn paced<F: Future>(gate: Arc<dyn CallGate>, work: F) -> F::Output {
    GATE.scope(gate, work).await
}

/// Runs `work` (a run's fetch), and tells the platform's time when it
/// began: the `Date` header of the first answer any call of `work` got,
/// whatever its status; `None` when no answer carried one (or none came).
/// Incremental fetches ask for what changed since then, on the platform's
/// clock rather than tributary's.
pub async fn platform_time<F: Future>(work: F) -> (F::Output, Option<DateTime<Utc>>) {
    FIRST_ANSWERED
        .scope(Cell::new(None), async move {
            let output = work.await;
            let began = FIRST_ANSWERED.with(Cell::get);
            (output, began)
        })
        .await
}

/// Notes an answer's `Date` as the platform's time, unless an earlier
/// answer within [`platform_time`] did (outside it, nothing).
pub(super) fn note_platform_time(headers: &HeaderMap) {
    let _ = FIRST_ANSWERED.try_with(|first| {
        if first.get().is_some() {
            return;
        }
        let date = headers
            .get(DATE)
            .and_then(|value| value.to_str().ok())
            .and_then(|value| DateTime::parse_from_rfc2822(value).ok());
        if let Some(date) = date {
            first.set(Some(date.with_timezone(&Utc)));
        }
    });
}

/// The gate of the run this task belongs to ([`paced`]), if any.
pub(super) fn current_gate() -> Option<Arc<dyn CallGate>> {
    GATE.try_with(Arc::clone).ok()
}
