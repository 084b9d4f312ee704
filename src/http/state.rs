//! What every request handler shares: the database handle, the keyring
//! that seals stored tokens, the engine's wake-up, the webhook deliverer, the
//! migration runner, the key cache and the platforms' connectors. Built once, by `app::Application::build`.

use std::sync::Arc;

use sea_orm::DatabaseConnection;

use crate::api_keys::KeyCache;
use crate::clock::Clock;
use crate::crypto::Keyring;
use crate::managed_migrations::Runner;
use crate::metrics::Metrics;
use crate::platforms::connector::Connectors;
use crate::rate_limits::RateLimits;
use crate::sync::list_orders::ListOrders;
use crate::sync::reads::QueryTotals;
use crate::webhooks::deliverer::Deliverer;

/// Shared application state, attached to every request with `.data(...)`.
#[derive(Clone)]
pub struct AppState {
    /// The URL end customers and platforms reach this service at, without
    /// a trailing `/` (`TRIBUTARY_PUBLIC_URL`).
    pub public_url: String,
    /// The connection pool.
    pub db: DatabaseConnection,
    /// Encrypts and decrypts stored tokens.
    pub keyring: Arc<Keyring>,
    /// This process's webhook deliverer, woken when a retry or replay is queued.
    pub deliverer: Arc<Deliverer>,
    /// This process's managed migration runner, woken when a batch starts or proceeds.
    pub migrations: Arc<Runner>,
    /// The time webhook secrets and schedules are kept in (tests move it).
    pub clock: Clock,
    /// This application's metrics.
    pub metrics: Arc<Metrics>,
    /// Request quotas and concurrency caps, shared with other processes.
    pub rate_limits: Arc<RateLimits>,
    /// Wakes the sync engine's idle workers when a sync is queued.
    pub sync_wake: Arc<tokio::sync::Notify>,
    /// API keys recently verified, so requests skip the lookup.
    pub key_cache: Arc<KeyCache>,
    /// The platforms' connectors, for verifying tokens at migration.
    pub connectors: Connectors,
    /// Totals of queried lists, counted once per snapshot and query.
    pub query_totals: Arc<QueryTotals>,
    /// Whole orders of queried and merged lists, read once per snapshot.
    pub list_orders: Arc<ListOrders>,
    /// How long a replaced generation stays readable through pinned links.
    pub snapshot_retention: std::time::Duration,
    /// Read list pages with `OFFSET` and `COUNT(*)`: the benchmark's naive build.
    #[cfg(feature = "naive-paging")]
    pub naive_paging: bool,
}
