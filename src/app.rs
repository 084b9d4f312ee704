//! Assembling the application, once, the same way for the command line, the
//! tests and the benchmark: the database (migrated), the keyring, the first
//! API key, the platforms' connectors, the sync engine, the webhook
//! deliverer, the migration runner and the HTTP listener, from one [`Config`].

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use sea_orm::DatabaseConnection;
use tokio::sync::Notify;
use tokio::task::JoinHandle;

use crate::api_keys::{self, NewApiKey};
use crate::crypto::{self, Keyring};
use crate::db;
use crate::http::server::Listener;
use crate::http::state::AppState;
use crate::managed_migrations::{self, MigrationConfig, Runner};
use crate::metrics::Metrics;
use crate::platforms::config::PlatformsConfig;
use crate::platforms::connector::Connectors;
use crate::rate_limits::{RateLimitConfig, RateLimits};
use crate::sync::engine::{Engine, EngineConfig};
use crate::sync::list_orders::ListOrders;
use crate::webhooks::deliverer::{Deliverer, WebhookConfig};
use crate::{connections, oauth_clients, webhooks};

/// Everything the application is built from.
pub struct Config {
    /// `sqlite://PATH?mode=rwc` or `postgres://USER@HOST:PORT/DB`.
    pub database_url: String,
    /// PostgreSQL only: the schema to use (the tests use one per test).
    pub search_path: Option<String>,
    /// The address to listen on (port 0: any free port).
    pub bind: String,
    /// The URL end customers and platforms reach this service at (the link
    /// pages and the OAuth callbacks are built from it); `None`:
    /// `http://` and the address it listens on.
    pub public_url: Option<String>,
    /// Where the keys sealing stored tokens come from.
    pub keys: Keys,
    /// What to do about API keys at start.
    pub first_key: FirstKey,
    /// The sync engine's workers and leases.
    pub engine: EngineConfig,
    /// Whether and how this process delivers webhooks.
    pub webhooks: WebhookConfig,
    /// How this process runs managed migrations.
    pub migrations: MigrationConfig,
    /// Where to serve `/metrics` (port 0: any free port); `None`: nowhere.
    pub metrics_bind: Option<String>,
    /// Request quotas and concurrency caps.
    pub rate_limits: RateLimitConfig,
    /// Bytes of memory for the whole orders of queried and merged lists
    /// (`sync::list_orders`; 0: none kept, every such page read alone).
    pub list_order_cache_bytes: u64,
    /// Where the connectors reach their platforms.
    pub platforms: PlatformsConfig,
    /// Read list pages with `OFFSET` and `COUNT(*)`: the benchmark's naive build.
    #[cfg(feature = "naive-paging")]
    pub naive_paging: bool,
}

/// Where the keys sealing stored tokens come from.
pub enum Keys {
    /// `id:base64key,...` (`TRIBUTARY_ENCRYPTION_KEYS`); with SQLite and
    /// `None`, the key file beside the database.
    Configured(Option<String>),
    /// A keyring already in hand (tests sharing one between instances).
    Keyring(Arc<Keyring>),
}

/// What to do about API keys at start.
pub enum FirstKey {
    /// Make sure this key exists for client `default` (idempotent).
    Bootstrap(String),
    /// Create one for client `default` if no key exists, to be shown once.
    CreateIfNone,
    /// Nothing (tests make their own).
    Leave,
}

/// The key ids stored secrets (connections' tokens, OAuth client secrets)
/// are sealed with that `keyring` lacks: starting with any would leave those
/// secrets unreadable.
async fn unknown_key_ids(
    db: &DatabaseConnection,
    keyring: &Keyring,
) -> Result<Vec<String>, sea_orm::DbErr> {
    let mut missing: Vec<String> = connections::credentials::key_ids(db)
        .await?
        .into_iter()
        .chain(oauth_clients::key_ids(db).await?)
        .chain(webhooks::endpoints::key_ids(db).await?)
        .chain(managed_migrations::key_ids(db).await?)
        .filter(|id| !keyring.has_key(id))
        .collect();
    missing.sort();
    missing.dedup();
    Ok(missing)
}

/// The built application: listening, its engine running, not yet serving.
pub struct Application {
    listener: Listener,
    address: SocketAddr,
    state: AppState,
    engine: Arc<Engine>,
    workers: Vec<JoinHandle<()>>,
    deliverer: Arc<Deliverer>,
    delivering: Option<JoinHandle<()>>,
    migrations: Arc<Runner>,
    migrating: Option<JoinHandle<()>>,
    metrics_address: Option<SocketAddr>,
    heartbeat: JoinHandle<()>,
    first_key: Option<NewApiKey>,
}

impl Application {
    /// Builds the application with the connectors tributary ships.
    pub async fn build(config: Config) -> anyhow::Result<Self> {
        let connectors = Connectors::for_platforms(&config.platforms)?;
        Self::build_with(config, connectors).await
    }

    /// Builds the application with `connectors` (tests stand in for platforms).
    pub async fn build_with(config: Config, connectors: Connectors) -> anyhow::Result<Self> {
        // The keys are checked before anything touches the database.
        let keyring = match config.keys {
            Keys::Configured(list) => {
                Arc::new(crypto::load_keyring(list.as_deref(), &config.database_url)?)
            }
            Keys::Keyring(keyring) => keyring,
        };
        let db = db::connect(&config.database_url, config.search_path.as_deref()).await?;
        db::migrate(&db).await?;
        let missing = unknown_key_ids(&db, &keyring).await?;
        anyhow::ensure!(
            missing.is_empty(),
            "stored tokens are sealed with encryption keys that are not configured ({}): add them to {}",
            missing.join(", "),
            crypto::KEYS_VARIABLE
        );
        let first_key = match config.first_key {
            FirstKey::Bootstrap(key) => {
                api_keys::ensure_bootstrap(&db, &key).await?;
                tracing::info!(
                    "bootstrap API key ensured for client '{}'",
                    api_keys::DEFAULT_CLIENT
                );
                None
            }
            FirstKey::CreateIfNone => api_keys::create_first_if_none(&db).await?,
            FirstKey::Leave => None,
        };
        let listener = Listener::bind(&config.bind).await?;
        let address = listener.local_addr()?;
        let sync_wake = Arc::new(Notify::new());
        let metrics = Metrics::new();
        if let Some(http) = connectors.http() {
            // The first application built over these connectors counts their
            // calls; another built over the same ones does not.
            http.observe(metrics.clone());
        }
        let metrics_address = match &config.metrics_bind {
            Some(bind) => {
                Some(crate::http::metrics::serve(bind, metrics.clone(), db.clone()).await?)
            }
            None => None,
        };
        let snapshot_retention = config.engine.snapshot_retention;
        let engine = Engine::new(
            db.clone(),
            keyring.clone(),
            connectors.clone(),
            config.engine,
            sync_wake.clone(),
            metrics.clone(),
        );
        let workers = engine.start();
        let rate_limits = RateLimits::new(config.rate_limits);
        let heartbeat = rate_limits.start(db.clone());
        let clock = config.webhooks.clock.clone();
        let deliverer = Deliverer::new(
            db.clone(),
            keyring.clone(),
            config.webhooks,
            metrics.clone(),
        )?;
        let delivering = deliverer.start();
        let migrations = Runner::new(
            db.clone(),
            keyring.clone(),
            connectors.clone(),
            config.migrations,
            sync_wake.clone(),
        );
        let migrating = migrations.start();
        let public_url = match &config.public_url {
            Some(url) => crate::links::settings::public_url(url)?,
            None => format!("http://{address}"),
        };
        let list_orders = Arc::new(ListOrders::new(
            config.list_order_cache_bytes,
            Arc::clone(&metrics),
        )?);
        let state = AppState {
            public_url,
            db,
            keyring,
            deliverer: deliverer.clone(),
            migrations: migrations.clone(),
            clock,
            metrics,
            rate_limits,
            sync_wake,
            key_cache: Arc::default(),
            connectors,
            query_totals: Arc::default(),
            list_orders,
            snapshot_retention,
            #[cfg(feature = "naive-paging")]
            naive_paging: config.naive_paging,
        };
        #[cfg(feature = "naive-paging")]
        if config.naive_paging {
            tracing::warn!(
                "naive paging: every list page pays OFFSET and COUNT(*) (benchmark mode)"
            );
        }
        Ok(Self {
            listener,
            address,
            state,
            engine,
            workers,
            deliverer,
            delivering,
            migrations,
            migrating,
            metrics_address,
            heartbeat,
            first_key,
        })
    }

    /// The address it listens on.
    pub fn address(&self) -> SocketAddr {
        self.address
    }

    /// Where it serves `/metrics`, if anywhere.
    pub fn metrics_address(&self) -> Option<SocketAddr> {
        self.metrics_address
    }

    /// Its database pool.
    pub fn db(&self) -> &DatabaseConnection {
        &self.state.db
    }

    /// The keyring sealing its stored tokens.
    pub fn keyring(&self) -> Arc<Keyring> {
        self.state.keyring.clone()
    }

    /// The key created at start because none existed, to show once.
    pub fn first_api_key(&self) -> Option<&NewApiKey> {
        self.first_key.as_ref()
    }

    /// Serves until SIGINT or SIGTERM; requests in flight finish, running
    /// syncs go back to the queue after their current page, and webhook
    /// attempts in flight get their timeout to finish.
    pub async fn run_until_stopped(self) -> anyhow::Result<()> {
        let limits = self.state.rate_limits.clone();
        let served = self.listener.serve_until_stopped(self.state).await;
        let (engine, deliverer) = (self.engine, self.deliverer);
        tokio::join!(
            self.migrations
                .stop(self.migrating, Duration::from_secs(15)),
            engine.stop(self.workers, Duration::from_secs(15)),
            deliverer.stop(self.delivering, Duration::from_secs(16)),
            limits.stop(self.heartbeat),
        );
        served
    }

    /// Serves in the background for as long as the runtime lives (tests).
    pub fn spawn(self) -> SocketAddr {
        let address = self.address;
        let state = self.state;
        tokio::spawn(async move {
            if let Err(error) = self.listener.serve(state).await {
                tracing::error!(error = %error, "the test server stopped");
            }
        });
        address
    }
}
