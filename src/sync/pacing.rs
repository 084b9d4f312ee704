//! `platform_pace`: a sync's calls to a platform kept under the platform's
//! documented limits ([`Limits`]) for one OAuth application and
//! organization, across every worker and process sharing the database.
//!
//! Each call reserves its turn in the key's row before it goes: the
//! rolling window's latest calls ([`Window`]), a `Retry-After` hold and
//! the day's count, read and written back under the row's version (a
//! writer that read an older version reads again after a short random
//! pause, for up to ten seconds), so two processes never
//! both take the last call of a window. A call that wakes past its turn's
//! slack gives the turn up and takes a new one in one write
//! (`admit_again`): the margin the window keeps for late calls then covers
//! every call that goes. What the platform says of its quota
//! (remaining-quota headers, where other applications' calls show; a 429's
//! `Retry-After`, or the wait it documents after a bare 429) is written to
//! the same row, so every process waits for it; a bare 429 again right after
//! that wait holds off the platform's longer quota (`Limits::spent_quota_hold`).
//! A daily quota spent refuses the call, and the run ends `RateLimitError`.
//! Where the platform limits the calls in progress, each call holds a place
//! in the same row until it is answered (or, if its process dies, until the
//! place expires). Only this module writes the table.

use std::sync::Arc;
use std::time::Duration;

use chrono::{DateTime, SecondsFormat, Utc};
use futures_util::future::BoxFuture;
use reqwest::header::HeaderMap;
use sea_orm::sea_query::{Expr, OnConflict};
use sea_orm::{ColumnTrait, DatabaseConnection, EntityTrait, QueryFilter, Set};
use sha2::{Digest, Sha256};

use entity::platform_pace;

mod said;

use said::Said;

use crate::platforms::kit::http::{CallGate, Slot, Turn};
use crate::platforms::kit::limits::{Limits, Window, kept, slack};

/// A day in milliseconds: `platform_pace.day` counts UTC days.
const DAY_MS: i64 = 24 * 60 * 60 * 1000;

/// How long a reservation keeps reading the row again after other writers
/// moved it, before letting the call go unpaced (and saying so). Each lost
/// race means another call was paced, so only a stalled database comes
/// near it: with a fixed count of 20 attempts, 32 callers of one
/// organization at once let a third of their first calls go unpaced
/// (`cargo bench --bench pace -- --processes 4 --callers 8`).
const CONTENDED_AT_MOST: Duration = Duration::from_secs(10);

/// The longest pause, in milliseconds, between two attempts at the row
/// after a lost race: a random pause, doubling from 1 ms, spreads the
/// writers that lost so they do not meet again at once.
const MOST_BACKOFF_MS: u64 = 64;

/// How long a call holds its place among the calls in progress at most
/// (past its turn): longer than any call's timeout, so only a process that
/// died mid-call leaves a place to expire.
const PLACE_LEASE_MS: i64 = 2 * 60 * 1000;

/// How long a call waits, at most, before looking again for a free place
/// among the calls in progress.
const PLACE_POLL: Duration = Duration::from_millis(25);

/// Who the limits apply to: one platform, OAuth application and organization.
#[derive(Debug, Clone, Copy)]
pub struct Subject<'a> {
    /// The platform's key (`xero`).
    pub platform_key: &'a str,
    /// The platform's name, for messages.
    pub platform: &'static str,
    /// The OAuth application whose tokens the calls carry: its client id,
    /// or, where tributary was not told it, the tributary client that owns
    /// the connection (each tenant's tokens come from its own application).
    pub application: &'a str,
    /// The platform's organization identifier.
    pub organization: &'a str,
}

/// What a run's calls for `subject` go through under `limits`, kept in
/// `db` (where the platform declares none, a `Retry-After` it sent is still
/// kept for every process).
pub fn gate(db: &DatabaseConnection, subject: Subject<'_>, limits: Limits) -> Arc<dyn CallGate> {
    Arc::new(Gate {
        db: db.clone(),
        key: key(subject),
        platform_key: subject.platform_key.to_owned(),
        platform: subject.platform,
        limits,
    })
}

/// The row's key: a digest, so neither the application's nor the
/// organization's identifier is stored.
fn key(subject: Subject<'_>) -> String {
    let digest = Sha256::digest(
        [
            subject.platform_key,
            subject.application,
            subject.organization,
        ]
        .join("\n")
        .as_bytes(),
    );
    digest.iter().map(|byte| format!("{byte:02x}")).collect()
}

/// One run's gate.
struct Gate {
    db: DatabaseConnection,
    key: String,
    platform_key: String,
    platform: &'static str,
    limits: Limits,
}

/// What reading the row and deciding made of it.
enum Decided {
    /// Write the row back as changed; the call goes at this time.
    Write(platform_pace::Model, i64),
    /// The daily quota is spent until this time.
    Spent(i64),
    /// Every place among the calls in progress is taken; the first frees
    /// at the latest at this time.
    Busy(i64),
    /// Nothing to record (no rate, day or places declared): the call goes
    /// at this time (after a hold).
    Go(i64),
}

/// The calls in progress: each one's place and when it expires.
#[derive(Debug, Default, PartialEq, Eq)]
struct Places(Vec<(u64, i64)>);

impl Places {
    /// Reads `place@expiry,...`; what does not read is dropped.
    fn parse(stored: &str) -> Self {
        Self(
            stored
                .split(',')
                .filter_map(|part| {
                    let (place, expiry) = part.split_once('@')?;
                    Some((place.parse().ok()?, expiry.parse().ok()?))
                })
                .collect(),
        )
    }

    fn stored(&self) -> String {
        let parts: Vec<String> = self
            .0
            .iter()
            .map(|(place, expiry)| format!("{place}@{expiry}"))
            .collect();
        parts.join(",")
    }

    /// The places not expired by `now`.
    fn live(mut self, now: i64) -> Self {
        self.0.retain(|&(_, expiry)| expiry > now);
        self
    }

    fn release(&mut self, place: u64) {
        self.0.retain(|&(held, _)| held != place);
    }
}

impl Gate {
    /// Reads the key's row (creating it the first time), lets `decide`
    /// change it, and writes it back unless another writer got there first
    /// (then reads again).
    async fn update(
        &self,
        decide: impl Fn(platform_pace::Model, i64) -> Decided,
    ) -> Result<Decided, sea_orm::DbErr> {
        let started = std::time::Instant::now();
        let mut lost: u32 = 0;
        loop {
            if lost > 0 {
                if started.elapsed() >= CONTENDED_AT_MOST {
                    break;
                }
                let most = 1u64 << lost.min(MOST_BACKOFF_MS.ilog2());
                tokio::time::sleep(Duration::from_millis(rand::random_range(1..=most))).await;
            }
            let now = Utc::now().timestamp_millis();
            let Some(row) = platform_pace::Entity::find_by_id(self.key.clone())
                .one(&self.db)
                .await?
            else {
                self.create(now).await?;
                continue;
            };
            let version = row.version;
            let decided = decide(row, now);
            let Decided::Write(row, _) = &decided else {
                return Ok(decided);
            };
            let in_flight = row.in_flight.clone();
            let written = platform_pace::Entity::update_many()
                .col_expr(platform_pace::Column::Version, Expr::value(version + 1))
                .col_expr(platform_pace::Column::Calls, Expr::value(row.calls.clone()))
                .col_expr(platform_pace::Column::InFlight, Expr::value(in_flight))
                .col_expr(
                    platform_pace::Column::HoldUntil,
                    Expr::value(row.hold_until),
                )
                .col_expr(platform_pace::Column::Day, Expr::value(row.day))
                .col_expr(platform_pace::Column::DayCalls, Expr::value(row.day_calls))
                .filter(platform_pace::Column::Key.eq(self.key.clone()))
                .filter(platform_pace::Column::Version.eq(version))
                .exec(&self.db)
                .await?;
            if written.rows_affected == 1 {
                return Ok(decided);
            }
            lost = lost.saturating_add(1);
        }
        Err(sea_orm::DbErr::Custom(format!(
            "the pace of {} kept moving for {} s ({lost} writes lost)",
            self.platform_key,
            CONTENDED_AT_MOST.as_secs()
        )))
    }

    /// The key's first row (another process may have written it already).
    async fn create(&self, now: i64) -> Result<(), sea_orm::DbErr> {
        let row = platform_pace::ActiveModel {
            key: Set(self.key.clone()),
            platform: Set(self.platform_key.clone()),
            version: Set(0),
            calls: Set(String::new()),
            in_flight: Set(String::new()),
            hold_until: Set(0),
            day: Set(now.div_euclid(DAY_MS)),
            day_calls: Set(0),
        };
        platform_pace::Entity::insert(row)
            .on_conflict(
                OnConflict::column(platform_pace::Column::Key)
                    .do_nothing()
                    .to_owned(),
            )
            .try_insert()
            .exec(&self.db)
            .await?;
        Ok(())
    }

    /// The call's time under the limits, counted, with `place` among the
    /// calls in progress where they are limited; or when the daily quota
    /// frees up, or when to look for a place again. A call that woke too
    /// late for its turn gives that turn up first (`late`): its time leaves
    /// the window, its count the day, its place the calls in progress.
    fn reserve(
        &self,
        mut row: platform_pace::Model,
        now: i64,
        place: u64,
        late: Option<&Turn>,
    ) -> Decided {
        let Limits {
            rate,
            daily,
            concurrent,
            ..
        } = self.limits;
        if rate.is_none() && daily.is_none() && concurrent.is_none() {
            return Decided::Go(now.max(row.hold_until));
        }
        if let Some(late) = late {
            if let Some(slot) = late.slot {
                let mut window = Window::parse(&row.calls);
                window.give_up(slot.at);
                row.calls = window.stored();
                if row.day == slot.counted_day {
                    row.day_calls = (row.day_calls - 1).max(0);
                }
            }
            if let Some(place) = late.place {
                let mut places = Places::parse(&row.in_flight);
                places.release(place);
                row.in_flight = places.stored();
            }
        }
        let today = now.div_euclid(DAY_MS);
        if row.day != today {
            row.day = today;
            row.day_calls = 0;
        }
        if let Some(daily) = self.limits.daily
            && row.day_calls >= i64::from(daily)
        {
            return Decided::Spent((today + 1) * DAY_MS);
        }
        let mut places = Places::parse(&row.in_flight).live(now);
        if let Some(concurrent) = self.limits.concurrent
            && places.0.len() >= concurrent.max(1) as usize
        {
            let first_expiry = places.0.iter().map(|&(_, expiry)| expiry).min();
            return Decided::Busy(first_expiry.unwrap_or(now));
        }
        let at = match self.limits.rate {
            Some(rate) => {
                let (calls, window_ms) = kept(rate);
                let mut window = Window::parse(&row.calls);
                let at = window.reserve(now, row.hold_until, calls, window_ms);
                row.calls = window.stored();
                at
            }
            None => now.max(row.hold_until),
        };
        if self.limits.concurrent.is_some() {
            places.0.push((place, at.saturating_add(PLACE_LEASE_MS)));
        }
        row.in_flight = places.stored();
        row.day_calls += 1;
        Decided::Write(row, at)
    }

    /// The row with `place` free again, corrected by what an answer says.
    fn heed(
        &self,
        mut row: platform_pace::Model,
        now: i64,
        said: &Said,
        place: Option<u64>,
    ) -> Decided {
        if let Some(place) = place {
            let mut places = Places::parse(&row.in_flight).live(now);
            places.release(place);
            row.in_flight = places.stored();
        }
        let hold = match self.limits.spent_quota_hold {
            Some(hold) if said.bare_429 && self.refused_after_waiting(&row, now) => Some(hold),
            _ => said.retry_after,
        };
        if let Some(wait) = hold {
            let until = now.saturating_add(millis(wait));
            row.hold_until = row.hold_until.max(until);
        }
        if let (Some(left), Some(rate)) = (said.rate_left, self.limits.rate) {
            let (calls, window_ms) = kept(rate);
            let mut window = Window::parse(&row.calls);
            if calls == rate.calls as usize {
                let used = (rate.calls as usize).saturating_sub(left as usize);
                let platform_window_ms = millis(rate.window);
                window.add_unknown(now, used, calls, platform_window_ms, window_ms);
            } else if left == 0 {
                // Kept over a shorter window: what is left cannot be placed
                // in it, but none left means waiting a window out.
                row.hold_until = row.hold_until.max(now + window_ms);
            }
            row.calls = window.stored();
        }
        if let (Some(left), Some(daily)) = (said.day_left, self.limits.daily) {
            let today = now.div_euclid(DAY_MS);
            if row.day != today {
                row.day = today;
                row.day_calls = 0;
            }
            let used = i64::from(daily) - i64::from(left);
            row.day_calls = row.day_calls.max(used);
        }
        Decided::Write(row, now)
    }

    /// Whether a call answered at `now` was made right after the hold of a
    /// bare 429 was waited out (within one [`Limits::throttled_wait`] of its
    /// end): every process held off the platform's window, so a 429 then
    /// comes from a longer quota.
    fn refused_after_waiting(&self, row: &platform_pace::Model, now: i64) -> bool {
        let Some(wait) = self.limits.throttled_wait else {
            return false;
        };
        row.hold_until > 0 && now >= row.hold_until && now - row.hold_until < millis(wait)
    }
}

/// `duration` in milliseconds, saturating.
fn millis(duration: Duration) -> i64 {
    i64::try_from(duration.as_millis()).unwrap_or(i64::MAX)
}

/// A Unix time in milliseconds, as an RFC 3339 instant.
fn instant(ms: i64) -> String {
    DateTime::<Utc>::from_timestamp_millis(ms)
        .unwrap_or_default()
        .to_rfc3339_opts(SecondsFormat::Secs, true)
}

impl Gate {
    /// A turn: reserved, or waited for while every place is taken; `late`
    /// is given up in the same write ([`Gate::reserve`]).
    async fn turn(&self, late: Option<&Turn>) -> Result<Turn, String> {
        let place = self.limits.concurrent.map(|_| rand::random::<u64>());
        loop {
            let decided = self
                .update(|row, now| self.reserve(row, now, place.unwrap_or_default(), late))
                .await;
            let now = Utc::now().timestamp_millis();
            return match decided {
                Ok(Decided::Write(row, at)) => Ok(Turn {
                    wait: Duration::from_millis(u64::try_from(at - now).unwrap_or(0)),
                    place,
                    held: at > now && at <= row.hold_until,
                    slot: self.limits.rate.map(|rate| Slot {
                        at,
                        slack_ms: slack(rate),
                        counted_day: row.day,
                    }),
                }),
                Ok(Decided::Go(at)) => Ok(Turn {
                    wait: Duration::from_millis(u64::try_from(at - now).unwrap_or(0)),
                    place,
                    held: at > now,
                    slot: None,
                }),
                Ok(Decided::Busy(expiry)) => {
                    let until = Duration::from_millis(u64::try_from(expiry - now).unwrap_or(0));
                    tokio::time::sleep(until.min(PLACE_POLL)).await;
                    continue;
                }
                Ok(Decided::Spent(until)) => Err(format!(
                    "{}'s daily limit of {} calls for this organization is spent: the sync can \
                     continue after {}; the previous data is kept",
                    self.platform,
                    self.limits.daily.unwrap_or_default(),
                    instant(until)
                )),
                Err(error) => {
                    // Pacing is a courtesy the platform's 429 backs up: a
                    // database failure here must not fail the sync.
                    tracing::warn!(platform = %self.platform_key, error = %error, "pacing a platform call failed; the call goes unpaced");
                    // A late turn's place was not given up: the call keeps
                    // it, for `finished` to free.
                    Ok(Turn {
                        place: late.and_then(|late| late.place),
                        ..Turn::default()
                    })
                }
            };
        }
    }
}

impl CallGate for Gate {
    fn admit(&self) -> BoxFuture<'_, Result<Turn, String>> {
        Box::pin(self.turn(None))
    }

    fn admit_again<'a>(&'a self, late: &'a Turn) -> BoxFuture<'a, Result<Turn, String>> {
        Box::pin(self.turn(Some(late)))
    }

    fn finished<'a>(
        &'a self,
        turn: &'a Turn,
        answer: Option<(u16, &'a HeaderMap)>,
    ) -> BoxFuture<'a, ()> {
        Box::pin(async move {
            let said = answer
                .map(|(status, headers)| Said::read(&self.limits, status, headers))
                .unwrap_or_default();
            if said.is_empty() && turn.place.is_none() {
                return;
            }
            if let Err(error) = self
                .update(|row, now| self.heed(row, now, &said, turn.place))
                .await
            {
                tracing::warn!(platform = %self.platform_key, error = %error, "recording a platform call's end failed");
            }
        })
    }
}

#[cfg(test)]
mod tests;
