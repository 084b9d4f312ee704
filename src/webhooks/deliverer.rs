//! The deliverer: a background task in every process that claims due
//! deliveries under a lease (so with several processes on one database each
//! attempt is made by one of them), posts each event signed to its
//! endpoint, records the attempt, and schedules the next one.
//!
//! An attempt succeeds on a 2xx answer within the timeout; anything else
//! fails it. Failed deliveries are retried after 5 s, 5 min, 30 min, 2 h,
//! 5 h, 10 h and 10 h (or later, when the endpoint asks with `Retry-After`),
//! then given up. `410 Gone` disables the endpoint at once; so do five days
//! in which every attempt to it failed. A process that dies mid-attempt
//! leaves its lease to lapse, and another process (or the same one after a
//! restart) makes the attempt again: delivery is at least once, and
//! `webhook-id` tells a receiver which events it has seen.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use chrono::{DateTime, TimeDelta, Utc};
use sea_orm::sea_query::Expr;
use sea_orm::{
    ActiveModelTrait, ColumnTrait, ConnectionTrait, DatabaseConnection, DbBackend, EntityTrait,
    QueryFilter, Set, Statement, TransactionTrait,
};
use tokio::sync::Notify;
use tokio::task::JoinHandle;
use uuid::Uuid;

use entity::webhook_delivery::{self, DeliveryStatus};
use entity::{webhook_attempt, webhook_endpoint, webhook_message};

use super::{addresses, deliveries, endpoints, signature};
use crate::clock::Clock;
use crate::crypto::Keyring;
use crate::metrics::Metrics;
use crate::timestamp::Timestamp;

/// The waits between a delivery's attempts: the first retry comes 5 s
/// after the first attempt, the last about 27.6 hours after it.
pub const RETRY_DELAYS: [Duration; 7] = [
    Duration::from_secs(5),
    Duration::from_secs(5 * 60),
    Duration::from_secs(30 * 60),
    Duration::from_secs(2 * 3600),
    Duration::from_secs(5 * 3600),
    Duration::from_secs(10 * 3600),
    Duration::from_secs(10 * 3600),
];
/// An endpoint all of whose attempts failed for this long is disabled.
pub const DISABLE_AFTER_FAILING_FOR: TimeDelta = TimeDelta::days(5);
/// The longest `Retry-After` honoured; longer ones wait this long.
pub const MAX_RETRY_AFTER: Duration = Duration::from_secs(24 * 3600);
/// How long an endpoint has to answer.
pub const ATTEMPT_TIMEOUT: Duration = Duration::from_secs(15);

/// How this process delivers webhooks.
#[derive(Debug, Clone)]
pub struct WebhookConfig {
    /// Whether this process delivers at all (another may do it).
    pub deliver: bool,
    /// How often an idle deliverer looks for due deliveries.
    pub poll: Duration,
    /// How long an endpoint has to answer ([`ATTEMPT_TIMEOUT`]).
    pub timeout: Duration,
    /// Attempts made at once by this process.
    pub concurrency: usize,
    /// The time the schedule is kept in (tests move it forward).
    pub clock: Clock,
    /// Whether endpoints may be on private, loopback or link-local addresses
    /// ([`super::addresses`]); by default they may not.
    pub allow_private_addresses: bool,
}

impl Default for WebhookConfig {
    fn default() -> Self {
        Self {
            deliver: true,
            poll: Duration::from_secs(1),
            timeout: ATTEMPT_TIMEOUT,
            concurrency: 8,
            clock: Clock::default(),
            allow_private_addresses: false,
        }
    }
}

/// What an attempt's answer means for the delivery.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Next {
    /// Delivered.
    Delivered,
    /// Try again at this time.
    RetryAt(DateTime<Utc>),
    /// No attempts left.
    GiveUp,
    /// The endpoint answered 410 Gone: disable it.
    Gone,
}

/// The step after attempt number `attempts_made` (1 for the first) answered
/// `status` (`None`: no answer), asking to wait `retry_after`, at `now`.
pub fn next_step(
    attempts_made: i32,
    status: Option<u16>,
    retry_after: Option<Duration>,
    now: DateTime<Utc>,
) -> Next {
    match status {
        Some(code) if (200..300).contains(&code) => return Next::Delivered,
        Some(410) => return Next::Gone,
        _ => {}
    }
    let index = usize::try_from(attempts_made - 1).unwrap_or(0);
    let Some(delay) = RETRY_DELAYS.get(index) else {
        return Next::GiveUp;
    };
    let wait = retry_after
        .map(|asked| asked.min(MAX_RETRY_AFTER).max(*delay))
        .unwrap_or(*delay);
    Next::RetryAt(now + TimeDelta::from_std(wait).unwrap_or(TimeDelta::MAX))
}

/// `Retry-After` as seconds or as an HTTP date, from `now`.
fn retry_after(value: &str, now: DateTime<Utc>) -> Option<Duration> {
    let value = value.trim();
    if let Ok(seconds) = value.parse::<u64>() {
        return Some(Duration::from_secs(seconds));
    }
    let at = DateTime::parse_from_rfc2822(value)
        .ok()?
        .with_timezone(&Utc);
    (at - now).to_std().ok()
}

/// How one attempt went, as recorded.
struct Attempted {
    status: Option<u16>,
    retry_after: Option<Duration>,
    outcome: &'static str,
    error: Option<String>,
    duration: Duration,
}

/// The deliverer of one process.
pub struct Deliverer {
    db: DatabaseConnection,
    keyring: Arc<Keyring>,
    config: WebhookConfig,
    http: reqwest::Client,
    process: String,
    stopping: AtomicBool,
    wake: Notify,
    metrics: Arc<Metrics>,
}

impl Deliverer {
    /// A deliverer for this process.
    pub fn new(
        db: DatabaseConnection,
        keyring: Arc<Keyring>,
        config: WebhookConfig,
        metrics: Arc<Metrics>,
    ) -> anyhow::Result<Arc<Self>> {
        // reqwest is built without a bundled crypto provider: use ring, as
        // the platform client does (installing twice is harmless).
        let _ = rustls::crypto::ring::default_provider().install_default();
        let mut http = reqwest::Client::builder();
        if !config.allow_private_addresses {
            http = http.dns_resolver(addresses::PublicOnly);
        }
        let http = http
            .timeout(config.timeout)
            .connect_timeout(config.timeout.min(Duration::from_secs(10)))
            // A redirect is a failed attempt (Standard Webhooks): the
            // endpoint's URL is what its owner registered.
            .redirect(reqwest::redirect::Policy::none())
            .user_agent(concat!("tributary-webhooks/", env!("CARGO_PKG_VERSION")))
            .build()?;
        let process = format!("{}-{}", std::process::id(), Uuid::new_v4().simple());
        Ok(Arc::new(Self {
            db,
            keyring,
            config,
            http,
            process,
            stopping: AtomicBool::new(false),
            wake: Notify::new(),
            metrics,
        }))
    }

    /// Starts delivering, unless this process does not deliver; runs until
    /// [`Deliverer::stop`].
    pub fn start(self: &Arc<Self>) -> Option<JoinHandle<()>> {
        if !self.config.deliver {
            return None;
        }
        let deliverer = Arc::clone(self);
        Some(tokio::spawn(async move { deliverer.run().await }))
    }

    /// Stops claiming and waits up to `grace` for attempts in flight; an
    /// attempt still running then is made again after its lease lapses.
    pub async fn stop(&self, task: Option<JoinHandle<()>>, grace: Duration) {
        self.stopping.store(true, Ordering::SeqCst);
        self.wake.notify_waiters();
        if let Some(task) = task
            && tokio::time::timeout(grace, task).await.is_err()
        {
            tracing::warn!(
                "webhook attempts still running at shutdown; another process repeats them"
            );
        }
    }

    fn stopping(&self) -> bool {
        self.stopping.load(Ordering::SeqCst)
    }

    async fn run(self: Arc<Self>) {
        let mut last_cleanup: Option<Instant> = None;
        while !self.stopping() {
            match self.claim().await {
                Ok(claimed) if !claimed.is_empty() => {
                    let attempts = claimed.into_iter().map(|id| self.attempt(id));
                    futures_util::future::join_all(attempts).await;
                    continue;
                }
                Ok(_) => {}
                Err(error) => {
                    tracing::warn!(error = %error, "claiming webhook deliveries failed; retrying");
                }
            }
            if last_cleanup.is_none_or(|at| at.elapsed() > Duration::from_secs(3600)) {
                last_cleanup = Some(Instant::now());
                if let Err(error) =
                    deliveries::drop_expired(&self.db, self.config.clock.now()).await
                {
                    tracing::warn!(error = %error, "dropping expired webhook messages failed");
                }
            }
            crate::idle::wait(&self.wake, self.config.poll, &self.stopping).await;
        }
    }

    /// Whether any delivery is due: a read, so an idle deliverer's polls
    /// never take SQLite's write lock.
    async fn any_due(&self, now: DateTime<Utc>) -> Result<bool, sea_orm::DbErr> {
        let due = webhook_delivery::Entity::find()
            .filter(webhook_delivery::Column::Status.eq(DeliveryStatus::Pending))
            .filter(webhook_delivery::Column::NextAttempt.lte(now))
            .one(&self.db)
            .await?;
        Ok(due.is_some())
    }

    /// Leases up to `concurrency` due deliveries to enabled endpoints.
    async fn claim(&self) -> Result<Vec<Uuid>, sea_orm::DbErr> {
        let now = self.config.clock.now();
        if !self.any_due(now).await? {
            return Ok(Vec::new());
        }
        let backend = self.db.get_database_backend();
        let lock = match backend {
            DbBackend::Postgres => "FOR UPDATE OF d SKIP LOCKED",
            _ => "",
        };
        let limit = self.config.concurrency.max(1);
        let sql = format!(
            "UPDATE webhook_delivery SET lease_owner = $1, lease_expires = $2 \
             WHERE id IN (SELECT d.id FROM webhook_delivery d \
                          JOIN webhook_endpoint e ON e.id = d.endpoint_id \
                          WHERE d.status = 'Pending' AND d.next_attempt <= $3 \
                            AND (d.lease_expires IS NULL OR d.lease_expires < $3) \
                            AND e.enabled = $4 \
                          ORDER BY d.next_attempt, d.id LIMIT {limit} {lock}) \
             RETURNING id"
        );
        let lease = TimeDelta::from_std(self.config.timeout * 2 + Duration::from_secs(5))
            .unwrap_or(TimeDelta::minutes(1));
        let values = [
            self.process.clone().into(),
            (now + lease).into(),
            now.into(),
            true.into(),
        ];
        let rows = self
            .db
            .query_all_raw(Statement::from_sql_and_values(backend, sql, values))
            .await?;
        rows.iter().map(|row| row.try_get("", "id")).collect()
    }

    async fn attempt(&self, delivery_id: Uuid) {
        if let Err(error) = self.try_attempt(delivery_id).await {
            tracing::warn!(%delivery_id, error = %error, "a webhook attempt could not be recorded; its lease lapses and it is made again");
        }
    }

    async fn try_attempt(&self, delivery_id: Uuid) -> anyhow::Result<()> {
        let Some((delivery, Some(message))) = webhook_delivery::Entity::find_by_id(delivery_id)
            .find_also_related(webhook_message::Entity)
            .one(&self.db)
            .await?
        else {
            return Ok(());
        };
        let Some(endpoint) = webhook_endpoint::Entity::find_by_id(delivery.endpoint_id)
            .one(&self.db)
            .await?
        else {
            return Ok(());
        };
        let now = self.config.clock.now();
        let attempted = match endpoints::signing_secrets(&self.keyring, &endpoint, now) {
            Ok(secrets) => self.post(&endpoint, &message, &secrets, now).await,
            Err(error) => {
                tracing::error!(endpoint_id = %endpoint.id, error = %error, "an endpoint's signing secret does not open");
                Attempted {
                    status: None,
                    retry_after: None,
                    outcome: "Failed",
                    error: Some("tributary could not sign the event; it will try again".to_owned()),
                    duration: Duration::ZERO,
                }
            }
        };
        self.record(&delivery, &endpoint, attempted, now).await
    }

    /// Posts `message` to `endpoint`, signed with `secrets`, at `now`.
    async fn post(
        &self,
        endpoint: &webhook_endpoint::Model,
        message: &webhook_message::Model,
        secrets: &[Vec<u8>],
        now: DateTime<Utc>,
    ) -> Attempted {
        if let Some(refused) = self.refused_literal(&endpoint.url) {
            return Attempted {
                status: None,
                retry_after: None,
                outcome: "Unreachable",
                error: Some(addresses::refusal(&refused)),
                duration: Duration::ZERO,
            };
        }
        let id = message.id.to_string();
        let timestamp = now.timestamp();
        let body = message.payload.as_bytes();
        let started = Instant::now();
        let sent = self
            .http
            .post(&endpoint.url)
            .header(reqwest::header::CONTENT_TYPE, "application/json")
            .header("webhook-id", &id)
            .header("webhook-timestamp", timestamp.to_string())
            .header(
                "webhook-signature",
                signature::header(secrets, &id, timestamp, body),
            )
            .body(message.payload.clone())
            .send()
            .await;
        let duration = started.elapsed();
        match sent {
            Ok(answer) => {
                let status = answer.status().as_u16();
                let retry_after = answer
                    .headers()
                    .get(reqwest::header::RETRY_AFTER)
                    .and_then(|value| value.to_str().ok())
                    .and_then(|value| retry_after(value, now));
                let delivered = answer.status().is_success();
                Attempted {
                    status: Some(status),
                    retry_after,
                    outcome: if delivered { "Succeeded" } else { "Failed" },
                    error: (!delivered).then(|| format!("the endpoint answered HTTP {status}")),
                    duration,
                }
            }
            Err(error) => {
                let timed_out = error.is_timeout();
                Attempted {
                    status: None,
                    retry_after: None,
                    outcome: if timed_out { "Timeout" } else { "Unreachable" },
                    error: Some(if timed_out {
                        format!("no answer within {} s", self.config.timeout.as_secs_f64())
                    } else {
                        // Without the URL: a partner may have put a token in it.
                        with_causes(&error.without_url())
                    }),
                    duration,
                }
            }
        }
    }

    /// Whether webhooks may reach private addresses on this installation
    /// (`TRIBUTARY_WEBHOOK_ALLOW_PRIVATE_ADDRESSES`).
    pub fn allows_private_addresses(&self) -> bool {
        self.config.allow_private_addresses
    }

    /// The URL's host, when it is an address literal or `localhost` this
    /// installation refuses (other names are checked by the resolver as
    /// they are connected).
    fn refused_literal(&self, url: &str) -> Option<String> {
        if self.config.allow_private_addresses {
            return None;
        }
        addresses::refused_host(&url::Url::parse(url).ok()?)
    }

    /// Records the attempt and what follows, while this process still holds
    /// the delivery; disables the endpoint when the attempt says so.
    async fn record(
        &self,
        delivery: &webhook_delivery::Model,
        endpoint: &webhook_endpoint::Model,
        attempted: Attempted,
        now: DateTime<Utc>,
    ) -> anyhow::Result<()> {
        self.metrics.webhook_attempt(attempted.outcome);
        if attempted.outcome != "Succeeded" {
            tracing::warn!(
                endpoint_id = %endpoint.id,
                delivery_id = %delivery.id,
                outcome = attempted.outcome,
                status = attempted.status,
                error = attempted.error.as_deref().unwrap_or_default(),
                "a webhook delivery attempt failed"
            );
        }
        let attempts_made = delivery.attempts + 1;
        let next = next_step(attempts_made, attempted.status, attempted.retry_after, now);
        let txn = self.db.begin().await?;
        let (status, next_attempt) = match next {
            Next::Delivered => (DeliveryStatus::Succeeded, None),
            Next::RetryAt(at) => (DeliveryStatus::Pending, Some(at)),
            Next::GiveUp | Next::Gone => (DeliveryStatus::Failed, None),
        };
        let updated = webhook_delivery::Entity::update_many()
            .col_expr(webhook_delivery::Column::Status, Expr::value(status))
            .col_expr(
                webhook_delivery::Column::Attempts,
                Expr::value(attempts_made),
            )
            .col_expr(webhook_delivery::Column::NextAttempt, next_attempt.into())
            .col_expr(
                webhook_delivery::Column::LeaseOwner,
                Option::<String>::None.into(),
            )
            .col_expr(
                webhook_delivery::Column::LeaseExpires,
                Option::<DateTime<Utc>>::None.into(),
            )
            .filter(webhook_delivery::Column::Id.eq(delivery.id))
            .filter(webhook_delivery::Column::LeaseOwner.eq(self.process.as_str()))
            .filter(webhook_delivery::Column::Status.eq(DeliveryStatus::Pending))
            .exec(&txn)
            .await?;
        if updated.rows_affected == 0 {
            // The lease lapsed and another process took the delivery over.
            return Ok(());
        }
        webhook_attempt::ActiveModel {
            id: Set(Uuid::now_v7()),
            delivery_id: Set(delivery.id),
            attempted: Set(now),
            status_code: Set(attempted.status.map(i32::from)),
            duration_ms: Set(i64::try_from(attempted.duration.as_millis()).unwrap_or(i64::MAX)),
            outcome: Set(attempted.outcome.to_owned()),
            error: Set(attempted.error),
        }
        .insert(&txn)
        .await?;
        let failing_since =
            endpoints::record_outcome(&txn, endpoint.id, next == Next::Delivered, now).await?;
        if next == Next::Gone {
            let reason = format!(
                "the endpoint answered 410 Gone at {}",
                Timestamp(now).to_rfc3339()
            );
            endpoints::disable(&txn, endpoint.id, &reason).await?;
        } else if let Some(since) = failing_since
            && now - since >= DISABLE_AFTER_FAILING_FOR
        {
            let reason = format!(
                "every delivery attempt failed from {} to {} (5 days); the last: {}",
                Timestamp(since).to_rfc3339(),
                Timestamp(now).to_rfc3339(),
                webhook_attempt_words(attempted.status, attempted.outcome)
            );
            endpoints::disable(&txn, endpoint.id, &reason).await?;
        }
        txn.commit().await?;
        Ok(())
    }
}

/// An error and its causes, `: `-separated (reqwest's own text says only
/// that sending failed; the cause says why).
fn with_causes(error: &dyn std::error::Error) -> String {
    let mut words = error.to_string();
    let mut cause = error.source();
    while let Some(inner) = cause {
        let text = inner.to_string();
        if !words.contains(&text) {
            words.push_str(": ");
            words.push_str(&text);
        }
        cause = inner.source();
    }
    words
}

fn webhook_attempt_words(status: Option<u16>, outcome: &str) -> String {
    match status {
        Some(code) => format!("HTTP {code}"),
        None => outcome.to_lowercase(),
    }
}

/// Wakes `deliverer` (the API queued a retry or replay).
pub fn wake(deliverer: &Deliverer) {
    deliverer.wake.notify_one();
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(seconds: i64) -> DateTime<Utc> {
        DateTime::from_timestamp(1_700_000_000 + seconds, 0).expect("a time")
    }

    #[test]
    fn the_schedule_follows_the_delays_then_gives_up() {
        let now = at(0);
        assert_eq!(next_step(1, Some(500), None, now), Next::RetryAt(at(5)));
        assert_eq!(next_step(2, None, None, now), Next::RetryAt(at(300)));
        assert_eq!(
            next_step(7, Some(502), None, now),
            Next::RetryAt(at(36_000))
        );
        assert_eq!(next_step(8, Some(500), None, now), Next::GiveUp);
        assert_eq!(next_step(3, Some(204), None, now), Next::Delivered);
        assert_eq!(next_step(1, Some(410), None, now), Next::Gone);
        assert_eq!(next_step(1, Some(301), None, now), Next::RetryAt(at(5)));
    }

    #[test]
    fn retry_after_waits_longer_never_shorter_and_at_most_a_day() {
        let now = at(0);
        let asked = |seconds| Some(Duration::from_secs(seconds));
        assert_eq!(
            next_step(1, Some(503), asked(600), now),
            Next::RetryAt(at(600))
        );
        assert_eq!(
            next_step(2, Some(429), asked(1), now),
            Next::RetryAt(at(300))
        );
        assert_eq!(
            next_step(1, Some(503), asked(10 * 86_400), now),
            Next::RetryAt(at(86_400))
        );
        assert_eq!(retry_after("120", now), asked(120));
        assert_eq!(
            retry_after("Wed, 15 Nov 2023 00:13:20 GMT", at(0)),
            Some(Duration::from_secs(7200))
        );
        assert_eq!(retry_after("soon", now), None);
    }
}
