//! Rate limits: a request quota per client (a GCRA limiter from `governor`:
//! a burst of the whole quota, refilled evenly over the window) and a cap on
//! each company's concurrent requests. Only this module writes
//! `server_instance`.
//!
//! **Several processes on one database share each limit** by counting each
//! other: every process records a heartbeat in `server_instance` every few
//! seconds and counts the processes seen within three heartbeats. Each then
//! enforces its share:
//! - of the quota, by charging each request as many cells of the whole
//!   quota's bucket as there are processes (at most the whole quota), so a
//!   process admits the quota divided by that count, rounded down, at least
//!   one request a window; and since the bucket is the same whatever the
//!   count, a change of count keeps what was already spent;
//! - of the cap, the cap divided by that count, rounded up.
//!
//! A count that falls is believed only when the next heartbeat confirms it
//! (one late heartbeat of another process does not hand this one a bigger
//! share); a count that rises is believed at once. So the installation as a
//! whole admits at most the quota, plus:
//! - a change in the number of processes: a process that starts or restarts
//!   begins with a full share until its first heartbeat, and a process that
//!   stops leaves its share unused for up to two heartbeats;
//! - nothing else. Clients whose requests a load balancer spreads unevenly
//!   get less, never more: a process refuses at its share whatever the
//!   others have left.

use std::collections::HashMap;
use std::num::NonZeroU32;
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use chrono::{TimeDelta, Utc};
use governor::clock::{Clock as _, DefaultClock};
use governor::middleware::StateInformationMiddleware;
use governor::state::keyed::DefaultKeyedStateStore;
use governor::{Quota, RateLimiter};
use sea_orm::sea_query::OnConflict;
use sea_orm::{ColumnTrait, DatabaseConnection, EntityTrait, PaginatorTrait, QueryFilter, Set};
use serde_json::json;
use tokio::task::JoinHandle;
use uuid::Uuid;

use entity::server_instance;

use crate::webhooks::{self, Event, EventType};

/// The window of the request quota.
pub const WINDOW: Duration = Duration::from_secs(60);

/// The limits, as configured.
#[derive(Debug, Clone)]
pub struct RateLimitConfig {
    /// Requests per minute per client, across the installation; 0: no quota.
    pub requests_per_minute: u32,
    /// Concurrent requests per company (and client), across the installation; 0: no cap.
    pub concurrent_per_company: u32,
    /// How often this process records that it is alive and counts the others.
    pub heartbeat: Duration,
}

/// A generous default: 1,000 requests a second sustained, per client.
pub const DEFAULT_REQUESTS_PER_MINUTE: u32 = 60_000;
/// The default cap on one company's requests at once.
pub const DEFAULT_CONCURRENT_PER_COMPANY: u32 = 32;

impl Default for RateLimitConfig {
    fn default() -> Self {
        Self {
            requests_per_minute: DEFAULT_REQUESTS_PER_MINUTE,
            concurrent_per_company: DEFAULT_CONCURRENT_PER_COMPANY,
            heartbeat: Duration::from_secs(5),
        }
    }
}

type Limiter =
    RateLimiter<Uuid, DefaultKeyedStateStore<Uuid>, DefaultClock, StateInformationMiddleware>;

/// Where a client stands against its quota after a request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Standing {
    /// The quota, per [`WINDOW`].
    pub quota: u32,
    /// Requests left now (this process's share, scaled to the whole installation).
    pub remaining: u32,
    /// Seconds until the quota is whole again.
    pub reset_seconds: u64,
}

/// The verdict on one request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    /// No quota is configured.
    Unlimited,
    /// Admitted.
    Allowed(Standing),
    /// Refused: the quota is used up.
    Refused {
        /// Where the client stands (nothing remaining).
        standing: Standing,
        /// When asking again is worth it.
        retry_after: Duration,
        /// Whether this is the first refusal of the window (announce it).
        first: bool,
    },
}

/// This process's limits.
pub struct RateLimits {
    config: RateLimitConfig,
    /// The live processes, this one included (at least 1), as enforced.
    processes: AtomicU32,
    /// The live processes the last heartbeat counted, confirmed or not.
    last_counted: AtomicU32,
    /// The whole quota's bucket; a request costs one cell per process.
    limiter: Limiter,
    in_flight: Arc<Mutex<HashMap<(Uuid, Uuid), u32>>>,
    announced: Mutex<HashMap<Uuid, Instant>>,
    id: Uuid,
    stopping: AtomicBool,
    /// Wakes the heartbeat from its sleep when the process stops.
    stop_now: tokio::sync::Notify,
}

fn limiter(quota: u32) -> Limiter {
    let quota = NonZeroU32::new(quota.max(1)).unwrap_or(NonZeroU32::MIN);
    RateLimiter::dashmap(Quota::per_minute(quota)).with_middleware::<StateInformationMiddleware>()
}

/// A cap of `total` split between `processes`, rounded up.
fn share(total: u32, processes: u32) -> u32 {
    total.div_ceil(processes.max(1))
}

impl RateLimits {
    /// Limits as `config` says, for one process until the heartbeat counts.
    pub fn new(config: RateLimitConfig) -> Arc<Self> {
        Arc::new(Self {
            limiter: limiter(config.requests_per_minute),
            config,
            processes: AtomicU32::new(1),
            last_counted: AtomicU32::new(1),
            in_flight: Arc::default(),
            announced: Mutex::default(),
            id: Uuid::now_v7(),
            stopping: AtomicBool::new(false),
            stop_now: tokio::sync::Notify::new(),
        })
    }

    /// The quota per minute, if one is configured.
    pub fn quota(&self) -> Option<u32> {
        (self.config.requests_per_minute > 0).then_some(self.config.requests_per_minute)
    }

    /// Counts one request of `client_id` against its quota.
    pub fn check(&self, client_id: Uuid) -> Verdict {
        let Some(quota) = self.quota() else {
            return Verdict::Unlimited;
        };
        let processes = self.processes.load(Ordering::Relaxed).max(1);
        // Never more than the bucket holds, so one request a window always fits.
        let cost = NonZeroU32::new(processes.min(quota)).unwrap_or(NonZeroU32::MIN);
        let limiter = &self.limiter;
        match limiter.check_key_n(&client_id, cost) {
            Ok(Ok(snapshot)) => {
                let burst = snapshot.quota().burst_size().get();
                let remaining = snapshot.remaining_burst_capacity();
                let refill = snapshot.quota().replenish_interval() * (burst - remaining);
                Verdict::Allowed(Standing {
                    quota,
                    remaining,
                    reset_seconds: refill.as_secs_f64().ceil() as u64,
                })
            }
            Ok(Err(not_until)) => {
                let wait = not_until.wait_time_from(limiter.clock().now());
                let retry_after = Duration::from_secs(wait.as_secs_f64().ceil().max(1.0) as u64);
                Verdict::Refused {
                    standing: Standing {
                        quota,
                        remaining: 0,
                        reset_seconds: retry_after.as_secs(),
                    },
                    retry_after,
                    first: self.first_refusal(client_id),
                }
            }
            // The cost is capped at the bucket's size, so this cannot happen;
            // were it to, the request is not worth refusing for it.
            Err(_insufficient) => Verdict::Allowed(Standing {
                quota,
                remaining: 0,
                reset_seconds: WINDOW.as_secs(),
            }),
        }
    }

    /// Whether `client_id` has not been refused in the last window (by this process).
    fn first_refusal(&self, client_id: Uuid) -> bool {
        let mut announced = self
            .announced
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        let now = Instant::now();
        announced.retain(|_, at| now.duration_since(*at) < WINDOW);
        match announced.get(&client_id) {
            Some(_) => false,
            None => {
                announced.insert(client_id, now);
                true
            }
        }
    }

    /// Admits one more request of `client_id` for company `company_id`
    /// unless its share of the cap is taken; the slot is held until the
    /// returned guard drops. `Ok(None)`: no cap is configured.
    pub fn enter(&self, client_id: Uuid, company_id: Uuid) -> Result<Option<InFlight>, u32> {
        if self.config.concurrent_per_company == 0 {
            return Ok(None);
        }
        let processes = self.processes.load(Ordering::Relaxed).max(1);
        let cap = share(self.config.concurrent_per_company, processes);
        let key = (client_id, company_id);
        let mut in_flight = self
            .in_flight
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        let count = in_flight.entry(key).or_insert(0);
        if *count >= cap {
            return Err(self.config.concurrent_per_company);
        }
        *count += 1;
        Ok(Some(InFlight {
            in_flight: Arc::clone(&self.in_flight),
            key,
        }))
    }

    /// Records this process's heartbeat, counts the live processes, and
    /// moves to the new share when the count changed.
    async fn beat(&self, db: &DatabaseConnection) -> Result<(), sea_orm::DbErr> {
        let now = Utc::now();
        let row = server_instance::ActiveModel {
            id: Set(self.id),
            last_seen: Set(now),
        };
        server_instance::Entity::insert(row)
            .on_conflict(
                OnConflict::column(server_instance::Column::Id)
                    .update_column(server_instance::Column::LastSeen)
                    .to_owned(),
            )
            .exec_without_returning(db)
            .await?;
        let live_since =
            now - TimeDelta::from_std(self.config.heartbeat * 3).unwrap_or(TimeDelta::seconds(15));
        server_instance::Entity::delete_many()
            .filter(server_instance::Column::LastSeen.lt(now - TimeDelta::minutes(10)))
            .exec(db)
            .await?;
        let live = server_instance::Entity::find()
            .filter(server_instance::Column::LastSeen.gte(live_since))
            .count(db)
            .await?;
        let live = u32::try_from(live).unwrap_or(u32::MAX).max(1);
        self.counted(live);
        // Clients idle long enough to have their whole quota back need no state.
        self.limiter.retain_recent();
        Ok(())
    }

    /// Takes a heartbeat's count of the live processes: a rise at once, a
    /// fall once the next count confirms it.
    fn counted(&self, live: u32) {
        let previous = self.last_counted.swap(live, Ordering::Relaxed);
        self.set_processes(live.max(previous));
    }

    /// Enforces the share of `processes` from now on.
    fn set_processes(&self, processes: u32) {
        let previous = self.processes.swap(processes, Ordering::Relaxed);
        if previous != processes {
            tracing::info!(
                processes,
                requests_per_minute = (self.config.requests_per_minute / processes).max(1),
                concurrent_per_company = share(self.config.concurrent_per_company, processes),
                "rate limits shared between processes"
            );
        }
    }

    /// Starts the heartbeat; it runs until [`RateLimits::stop`], and then
    /// removes this process from the count.
    pub fn start(self: &Arc<Self>, db: DatabaseConnection) -> JoinHandle<()> {
        let limits = Arc::clone(self);
        tokio::spawn(async move {
            while !limits.stopping.load(Ordering::SeqCst) {
                if let Err(error) = limits.beat(&db).await {
                    tracing::warn!(error = %error, "the rate-limit heartbeat failed; keeping the last count");
                }
                tokio::select! {
                () = tokio::time::sleep(limits.config.heartbeat) => {}
                () = limits.stop_now.notified() => {}
                }
            }
            let _ = server_instance::Entity::delete_by_id(limits.id)
                .exec(&db)
                .await;
        })
    }

    /// This process's row in `server_instance`.
    pub fn instance_id(&self) -> Uuid {
        self.id
    }

    /// Stops the heartbeat at once (its sleep is cut short) and forgets
    /// this process; a beat already under way gets one heartbeat to end.
    pub async fn stop(&self, task: JoinHandle<()>) {
        self.stopping.store(true, Ordering::SeqCst);
        // `notify_one` keeps the wake-up for a heartbeat not yet asleep.
        self.stop_now.notify_one();
        let _ = tokio::time::timeout(self.config.heartbeat + Duration::from_secs(1), task).await;
    }
}

/// A company request's slot; freed when dropped.
#[derive(Debug)]
pub struct InFlight {
    in_flight: Arc<Mutex<HashMap<(Uuid, Uuid), u32>>>,
    key: (Uuid, Uuid),
}

impl Drop for InFlight {
    fn drop(&mut self) {
        let mut in_flight = self
            .in_flight
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        if let Some(count) = in_flight.get_mut(&self.key) {
            *count = count.saturating_sub(1);
            if *count == 0 {
                in_flight.remove(&self.key);
            }
        }
    }
}

/// Announces that `client_id` reached its quota (`rateLimit.reached`).
pub async fn announce(db: &DatabaseConnection, client_id: Uuid, quota: u32) {
    let data = json!({
        "limit": "requestsPerMinute",
        "quota": quota,
        "windowSeconds": WINDOW.as_secs(),
    });
    let event = Event::new(EventType::RateLimitReached, client_id, data);
    if let Err(error) = webhooks::record(db, event).await {
        tracing::warn!(%client_id, error = %error, "could not record rateLimit.reached");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn limits(per_minute: u32, concurrent: u32) -> Arc<RateLimits> {
        RateLimits::new(RateLimitConfig {
            requests_per_minute: per_minute,
            concurrent_per_company: concurrent,
            heartbeat: Duration::from_secs(5),
        })
    }

    #[test]
    fn a_client_gets_its_quota_then_a_wait() {
        let limits = limits(3, 0);
        let (client, other) = (Uuid::from_u128(1), Uuid::from_u128(2));
        let remaining: Vec<u32> = (0..3)
            .map(|_| match limits.check(client) {
                Verdict::Allowed(standing) => standing.remaining,
                other => panic!("{other:?}"),
            })
            .collect();
        assert_eq!(remaining, [2, 1, 0]);
        let Verdict::Refused {
            retry_after,
            first,
            standing,
        } = limits.check(client)
        else {
            panic!("the fourth request is refused");
        };
        assert!(first && standing.remaining == 0);
        assert!(
            (19..=20).contains(&retry_after.as_secs()),
            "{retry_after:?}"
        );
        assert!(matches!(
            limits.check(client),
            Verdict::Refused { first: false, .. }
        ));
        assert!(
            matches!(limits.check(other), Verdict::Allowed(_)),
            "quotas are per client"
        );
    }

    #[test]
    fn processes_share_the_quota_and_the_cap() {
        let limits = limits(10, 4);
        limits.set_processes(2);
        let client = Uuid::from_u128(1);
        let allowed = (0..10)
            .filter(|_| matches!(limits.check(client), Verdict::Allowed(_)))
            .count();
        assert_eq!(allowed, 5, "half of the quota each");
        let company = Uuid::from_u128(9);
        let first = limits.enter(client, company).expect("a slot");
        let second = limits.enter(client, company).expect("a slot");
        assert_eq!(
            limits.enter(client, company).err(),
            Some(4),
            "half of the cap each"
        );
        drop(first);
        assert!(
            limits.enter(client, company).is_ok(),
            "a freed slot is reused"
        );
        drop(second);
        assert_eq!(share(5, 2), 3, "shares of the cap round up");
    }

    #[test]
    fn a_share_of_the_quota_rounds_down_to_at_least_one_request() {
        let two = limits(5, 0);
        two.set_processes(2);
        let client = Uuid::from_u128(1);
        let allowed = (0..5)
            .filter(|_| matches!(two.check(client), Verdict::Allowed(_)))
            .count();
        assert_eq!(allowed, 2, "two processes admit four of five, not six");
        let three = limits(2, 0);
        three.set_processes(3);
        assert!(matches!(three.check(client), Verdict::Allowed(_)));
        assert!(matches!(three.check(client), Verdict::Refused { .. }));
    }

    #[test]
    fn a_change_of_share_keeps_what_was_spent() {
        let limits = limits(10, 0);
        limits.set_processes(2);
        let client = Uuid::from_u128(1);
        let allowed = (0..10)
            .filter(|_| matches!(limits.check(client), Verdict::Allowed(_)))
            .count();
        assert_eq!(allowed, 5);
        limits.set_processes(1);
        assert!(
            matches!(limits.check(client), Verdict::Refused { .. }),
            "the whole quota is spent; a smaller count does not refill it"
        );
    }

    #[test]
    fn a_falling_count_waits_for_the_next_heartbeat_and_a_rising_one_does_not() {
        let limits = limits(10, 0);
        limits.counted(2);
        assert_eq!(
            limits.processes.load(Ordering::Relaxed),
            2,
            "a rise at once"
        );
        limits.counted(1);
        assert_eq!(
            limits.processes.load(Ordering::Relaxed),
            2,
            "one late heartbeat of the other process changes nothing"
        );
        limits.counted(2);
        limits.counted(1);
        limits.counted(1);
        assert_eq!(limits.processes.load(Ordering::Relaxed), 1, "confirmed");
    }

    #[test]
    fn zero_turns_each_limit_off() {
        let limits = limits(0, 0);
        assert_eq!(limits.check(Uuid::nil()), Verdict::Unlimited);
        assert!(matches!(limits.enter(Uuid::nil(), Uuid::nil()), Ok(None)));
    }
}
