//! Spawning the real application for a test: a fresh database, the server
//! on a free loopback port, and clients (generated and raw) pointed at it.
//!
//! Every scenario runs through [`for_each_database`]: always on SQLite, and
//! also on PostgreSQL when `TRIBUTARY_TEST_POSTGRES_URL` is set, each time
//! with a fresh database (a temporary SQLite file, or a new PostgreSQL
//! schema dropped afterwards).

use std::net::SocketAddr;
use std::sync::{Arc, Mutex, OnceLock};

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use reqwest::header::{AUTHORIZATION, HeaderMap, HeaderValue};
use sea_orm::{ConnectionTrait, DatabaseConnection};
use tributary::api_keys;
use tributary::app::{Application, Config, FirstKey, Keys};
use tributary::crypto::{self, Keyring};
use tributary::managed_migrations::MigrationConfig;
use tributary::platforms::config::PlatformsConfig;
use tributary::platforms::connector::{AnyConnector, Connectors};
use tributary::rate_limits::RateLimitConfig;
use tributary::sync::engine::EngineConfig;
use tributary::sync::list_orders;
use tributary::webhooks::deliverer::WebhookConfig;

/// The variable that enables the PostgreSQL runs.
pub const POSTGRES_URL_VAR: &str = "TRIBUTARY_TEST_POSTGRES_URL";

/// Which database a run uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Backend {
    Sqlite,
    Postgres,
}

/// The backends to run every scenario on.
pub fn backends() -> Vec<Backend> {
    let mut backends = vec![Backend::Sqlite];
    if std::env::var_os(POSTGRES_URL_VAR).is_some() {
        backends.push(Backend::Postgres);
    }
    backends
}

/// Runs `scenario` once per backend, each against a fresh app.
///
/// The scenario borrows the app, so the app (and the database guard in it)
/// lives until the scenario ends. A closure taking the app by value would
/// capture only the fields its body uses, and drop the guard at once.
pub async fn for_each_database(scenario: impl AsyncFn(&TestApp)) {
    for_each_database_with(AppOptions::default, scenario).await;
}

/// [`for_each_database`] with apps built with `options()`.
pub async fn for_each_database_with(
    options: impl Fn() -> AppOptions,
    scenario: impl AsyncFn(&TestApp),
) {
    for backend in backends() {
        let app = TestApp::spawn_with(backend, options()).await;
        eprintln!("running on {backend:?}");
        scenario(&app).await;
    }
}

/// Builds the options of an app.
pub type OptionsOf = fn() -> AppOptions;

/// The app options of the product's defaults, and of an app that remembers
/// no list orders (every queried or deep merged page read alone): the two
/// ways such pages are read, which must answer alike.
pub fn with_and_without_list_orders() -> [(&'static str, OptionsOf); 2] {
    [
        ("with remembered list orders", AppOptions::default),
        ("without remembered list orders", || AppOptions {
            list_order_cache_bytes: 0,
            ..AppOptions::default()
        }),
    ]
}

/// Keeps a test database alive for the test and removes it afterwards.
enum DatabaseGuard {
    Sqlite(#[expect(dead_code, reason = "held for its Drop")] tempfile::TempDir),
    Postgres {
        admin_url: String,
        schema: String,
    },
    /// A whole database of its own, for tests that take it offline.
    PostgresDatabase {
        admin_url: String,
        name: String,
    },
}

impl Drop for DatabaseGuard {
    fn drop(&mut self) {
        let (cleanup, schema) = match self {
            DatabaseGuard::Sqlite(_) => return,
            DatabaseGuard::Postgres { admin_url, schema } => (
                (
                    admin_url.clone(),
                    format!("DROP SCHEMA IF EXISTS \"{schema}\" CASCADE"),
                ),
                Some(schema.clone()),
            ),
            DatabaseGuard::PostgresDatabase { admin_url, name } => (
                (
                    admin_url.clone(),
                    format!("DROP DATABASE IF EXISTS \"{name}\" WITH (FORCE)"),
                ),
                None,
            ),
        };
        let (admin_url, statement) = cleanup;
        let refuse_connections = match self {
            DatabaseGuard::PostgresDatabase { name, .. } => {
                format!("ALTER DATABASE \"{name}\" WITH ALLOW_CONNECTIONS false")
            }
            _ => String::new(),
        };
        // Drop runs inside the test's runtime, which cannot be blocked
        // on; a short-lived thread with its own runtime does the cleanup.
        let cleanup = std::thread::spawn(move || {
            let runtime = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .expect("a runtime for cleanup");
            runtime.block_on(async {
                let admin = sea_orm::Database::connect(&admin_url)
                    .await
                    .expect("admin connection");
                // This drop blocks the test's runtime, so a background task of
                // the app (a sync, the migration runner) caught between two
                // statements of a transaction can never finish it; its
                // locks would keep DROP SCHEMA waiting for ever. Such
                // backends hold locks in this test's schema only: they are
                // ended, then the drop is tried again.
                let mut attempts = 0;
                loop {
                    attempts += 1;
                    let dropped = match &schema {
                        Some(_) => {
                            admin
                                .execute_unprepared(&format!("SET lock_timeout = '5s'; {statement}"))
                                .await
                        }
                        // DROP DATABASE must be a statement of its own (not
                        // in a multi-statement string); refusing new
                        // connections first keeps the app's pool, which
                        // reconnects by itself, from racing it.
                        None => {
                            let _ = admin.execute_unprepared(&refuse_connections).await;
                            admin.execute_unprepared(&statement).await
                        }
                    };
                    match (dropped, &schema) {
                        (Ok(_), _) => break,
                        (Err(error), Some(schema)) if attempts < 5 => {
                            eprintln!("dropping {schema} waited: {error}; ending the backends holding its locks");
                            admin
                                .execute_unprepared(&format!(
                                    "SELECT pg_terminate_backend(l.pid) FROM pg_locks l \
                                     JOIN pg_class c ON c.oid = l.relation \
                                     JOIN pg_namespace n ON n.oid = c.relnamespace \
                                     WHERE n.nspname = '{schema}' AND l.pid <> pg_backend_pid()"
                                ))
                                .await
                                .expect("blocking backends ended");
                        }
                        (Err(error), _) => panic!("test schema or database not dropped: {error}"),
                    }
                }
                let _ = admin.close().await;
            });
        });
        if cleanup.join().is_err() {
            // Panicking again in a drop could abort the run; say it loudly.
            eprintln!("the test's PostgreSQL schema or database was NOT dropped (see above)");
        }
    }
}

/// An app on a PostgreSQL database of its own, and an admin connection to
/// the server (outside that database) to take it offline and back.
pub struct OwnDatabase {
    pub app: TestApp,
    pub admin: DatabaseConnection,
    /// The database's name.
    pub name: String,
}

/// What a test may change about the app it starts.
pub struct AppOptions {
    /// The connectors the engine uses.
    pub connectors: Connectors,
    /// The engine's settings (workers, leases).
    pub engine: EngineConfig,
    /// Read list pages as the benchmark's naive build does (`OFFSET`, `COUNT(*)`).
    pub naive_paging: bool,
    /// The webhook deliverer's settings (its clock, how often it looks).
    pub webhooks: WebhookConfig,
    /// Serve `/metrics` on a free loopback port.
    pub metrics: bool,
    /// Request quotas and caps (the product's defaults unless a test sets them).
    pub rate_limits: RateLimitConfig,
    /// The managed migration runner's settings (it looks for work every 50 ms).
    pub migrations: MigrationConfig,
    /// Bytes for remembered list orders (the product's default unless a
    /// test sets it; 0 reads every queried or deep merged page alone).
    pub list_order_cache_bytes: u64,
}

impl AppOptions {
    /// No sync workers: queued operations stay queued.
    pub fn idle() -> Self {
        Self {
            engine: EngineConfig {
                workers: 0,
                ..EngineConfig::default()
            },
            ..Self::default()
        }
    }

    /// The standard engine, with `connector` standing in for the sandbox's.
    pub fn with_sandbox(connector: Arc<dyn AnyConnector>) -> Self {
        Self {
            connectors: Connectors::standard().with("sandbox", connector),
            ..Self::default()
        }
    }

    /// `workers` sync workers that look for work every 20 ms.
    pub fn working(workers: usize) -> Self {
        Self {
            engine: EngineConfig {
                workers,
                poll: std::time::Duration::from_millis(20),
                ..EngineConfig::default()
            },
            ..Self::default()
        }
    }
}

impl Default for AppOptions {
    fn default() -> Self {
        Self {
            connectors: Connectors::standard(),
            engine: EngineConfig {
                poll: std::time::Duration::from_millis(100),
                ..EngineConfig::default()
            },
            naive_paging: false,
            // The tests' receivers listen on loopback.
            webhooks: WebhookConfig {
                poll: std::time::Duration::from_millis(50),
                allow_private_addresses: true,
                ..WebhookConfig::default()
            },
            metrics: false,
            rate_limits: RateLimitConfig::default(),
            migrations: MigrationConfig {
                poll: std::time::Duration::from_millis(50),
                ..MigrationConfig::default()
            },
            list_order_cache_bytes: list_orders::DEFAULT_CAPACITY_BYTES,
        }
    }
}

/// A running application with its own database and one tenant's API key.
pub struct TestApp {
    /// The database URL and PostgreSQL schema, for second instances.
    database: (String, Option<String>),
    /// The keyring sealing this app's stored tokens.
    pub keyring: Arc<Keyring>,
    /// That keyring's one key, as `id:base64key`.
    pub key_entry: String,
    pub address: SocketAddr,
    pub db: DatabaseConnection,
    pub api_key: String,
    /// The generated client, authenticated with `api_key`.
    pub client: client::Client,
    /// Where `/metrics` is served, when the options asked for it.
    pub metrics_address: Option<SocketAddr>,
    _database: DatabaseGuard,
}

impl TestApp {
    /// Starts the app on a free port with a fresh, migrated database and a
    /// key for client `default`.
    pub async fn spawn(backend: Backend) -> TestApp {
        Self::spawn_with(backend, AppOptions::default()).await
    }

    /// [`TestApp::spawn`] with other connectors or engine settings.
    pub async fn spawn_with(backend: Backend, options: AppOptions) -> TestApp {
        let (guard, database) = match backend {
            Backend::Sqlite => {
                let dir = tempfile::tempdir().expect("a temporary directory");
                let url = format!("sqlite://{}?mode=rwc", dir.path().join("test.db").display());
                (DatabaseGuard::Sqlite(dir), (url, None))
            }
            Backend::Postgres => {
                let admin_url = std::env::var(POSTGRES_URL_VAR).expect("checked by backends()");
                let schema = format!("test_{}", uuid::Uuid::new_v4().simple());
                let admin = sea_orm::Database::connect(&admin_url)
                    .await
                    .unwrap_or_else(|error| {
                        panic!("PostgreSQL at {admin_url} is unreachable: {error}")
                    });
                admin
                    .execute_unprepared(&format!("CREATE SCHEMA \"{schema}\""))
                    .await
                    .expect("test schema created");
                let _ = admin.close().await;
                let database = (admin_url.clone(), Some(schema.clone()));
                (DatabaseGuard::Postgres { admin_url, schema }, database)
            }
        };
        Self::start(guard, database, options).await
    }

    async fn start(
        guard: DatabaseGuard,
        database: (String, Option<String>),
        options: AppOptions,
    ) -> TestApp {
        capture_logs();
        let key_entry = crypto::generate_key_entry();
        let keyring = Arc::new(Keyring::parse(&key_entry).expect("a generated key parses"));
        // The test reads and writes through the application's own pool.
        let (address, db, metrics_address) =
            start_instance(&database, keyring.clone(), options).await;
        let api_key = api_keys::create(&db, api_keys::DEFAULT_CLIENT, "test key")
            .await
            .expect("a key is created")
            .key;
        let client = client_for(address, &api_key);
        TestApp {
            database,
            keyring,
            key_entry,
            address,
            db,
            api_key,
            client,
            metrics_address,
            _database: guard,
        }
    }

    /// Starts the app on a PostgreSQL database of its own (not a schema of
    /// the shared one), which the test may take offline; `None` without
    /// PostgreSQL.
    pub async fn spawn_in_own_postgres_database() -> Option<OwnDatabase> {
        let admin_url = std::env::var(POSTGRES_URL_VAR).ok()?;
        let name = format!("tributary_test_{}", uuid::Uuid::new_v4().simple());
        let admin = sea_orm::Database::connect(&admin_url)
            .await
            .unwrap_or_else(|error| panic!("PostgreSQL at {admin_url} is unreachable: {error}"));
        admin
            .execute_unprepared(&format!("CREATE DATABASE \"{name}\""))
            .await
            .expect("test database created");
        let mut url = url::Url::parse(&admin_url).expect("a PostgreSQL URL");
        url.set_path(&format!("/{name}"));
        let database = (url.to_string(), None);
        let guard = DatabaseGuard::PostgresDatabase {
            admin_url,
            name: name.clone(),
        };
        let app = Self::start(guard, database, AppOptions::default()).await;
        Some(OwnDatabase { app, admin, name })
    }

    /// Starts another server and sync engine on this app's database, with
    /// its own connection pool, as a second process would.
    pub async fn another_instance(&self, options: AppOptions) -> SocketAddr {
        start_instance(&self.database, self.keyring.clone(), options)
            .await
            .0
    }

    /// The absolute URL of `path` (which may carry a query string).
    pub fn url(&self, path: &str) -> String {
        format!("http://{}{path}", self.address)
    }

    /// `Basic base64(key)` for this app's key.
    pub fn authorization(&self) -> String {
        basic(&self.api_key)
    }

    /// A raw HTTP client, for requests the generated client cannot make.
    pub fn raw(&self) -> reqwest::Client {
        http_client()
    }

    /// A raw authenticated GET of `path`.
    pub async fn get(&self, path: &str) -> reqwest::Response {
        self.raw()
            .get(self.url(path))
            .header(AUTHORIZATION, self.authorization())
            .send()
            .await
            .expect("the server answers")
    }

    /// A raw authenticated POST of a JSON body to `path`.
    pub async fn post_json(&self, path: &str, body: &serde_json::Value) -> reqwest::Response {
        self.raw()
            .post(self.url(path))
            .header(AUTHORIZATION, self.authorization())
            .json(body)
            .send()
            .await
            .expect("the server answers")
    }

    /// The first page of companies with default paging, via the generated client.
    pub async fn companies_first_page(&self) -> client::types::PagedCompany {
        self.client
            .list_companies(None, None)
            .await
            .expect("a page of companies")
            .into_inner()
    }

    /// A second tenant: a key of another client, and a client using it.
    pub async fn other_tenant(&self, name: &str) -> (String, client::Client) {
        let key = api_keys::create(&self.db, name, "test key")
            .await
            .expect("a key is created")
            .key;
        let client = client_for(self.address, &key);
        (key, client)
    }
}

/// Builds the application on the database `(url, schema)`, as the
/// command line does, and serves it on a free loopback port; returns its
/// address, its database pool and its metrics address (if any).
async fn start_instance(
    (url, schema): &(String, Option<String>),
    keyring: Arc<Keyring>,
    options: AppOptions,
) -> (SocketAddr, DatabaseConnection, Option<SocketAddr>) {
    let config = Config {
        database_url: url.clone(),
        search_path: schema.clone(),
        bind: "127.0.0.1:0".to_owned(),
        public_url: None,
        keys: Keys::Keyring(keyring),
        first_key: FirstKey::Leave,
        engine: options.engine,
        webhooks: options.webhooks,
        migrations: options.migrations,
        metrics_bind: options.metrics.then(|| "127.0.0.1:0".to_owned()),
        rate_limits: options.rate_limits,
        platforms: PlatformsConfig::default(),
        list_order_cache_bytes: options.list_order_cache_bytes,
        naive_paging: options.naive_paging,
    };
    let application = Application::build_with(config, options.connectors)
        .await
        .expect("the application builds");
    let db = application.db().clone();
    let metrics_address = application.metrics_address();
    (application.spawn(), db, metrics_address)
}

/// An HTTP client for the tests' own requests. reqwest (with rustls and
/// no provider of its own) needs a process-wide crypto provider; the app
/// installs one when it builds its platform client, but a test that talks
/// to a separate process may run before any app exists, alone under a
/// filter.
pub fn http_client() -> reqwest::Client {
    let _ = rustls::crypto::ring::default_provider().install_default();
    reqwest::Client::new()
}

/// `Basic base64(key)`.
pub fn basic(key: &str) -> String {
    format!("Basic {}", STANDARD.encode(key))
}

/// A generated client authenticating with `key`.
pub fn client_for(address: SocketAddr, key: &str) -> client::Client {
    let mut headers = HeaderMap::new();
    headers.insert(
        AUTHORIZATION,
        HeaderValue::from_str(&basic(key)).expect("ASCII header"),
    );
    let http = reqwest::Client::builder()
        .default_headers(headers)
        .build()
        .expect("a reqwest client");
    client::Client::new_with_client(&format!("http://{address}"), http)
}

/// Reads a JSON body.
pub async fn json(response: reqwest::Response) -> serde_json::Value {
    response.json().await.expect("a JSON body")
}

/// The status and JSON body of a GET of `path`.
pub async fn answer(app: &TestApp, path: &str) -> (u16, serde_json::Value) {
    let response = app.get(path).await;
    let status = response.status().as_u16();
    (status, json(response).await)
}

/// The status and body of an error returned by the generated client.
pub fn error_of<T: std::fmt::Debug>(
    result: Result<T, client::Error<client::types::ErrorBody>>,
) -> (u16, client::types::ErrorBody) {
    match result {
        Err(client::Error::ErrorResponse(response)) => {
            let status = response.status().as_u16();
            (status, response.into_inner())
        }
        other => panic!("expected an error response, got {other:?}"),
    }
}

/// Everything any test's server logged, at every level, since the first app started.
static LOGS: OnceLock<Arc<Mutex<Vec<u8>>>> = OnceLock::new();

#[derive(Clone)]
struct LogBuffer(Arc<Mutex<Vec<u8>>>);

impl std::io::Write for LogBuffer {
    fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
        if let Ok(mut buffer) = self.0.lock() {
            buffer.extend_from_slice(bytes);
        }
        Ok(bytes.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// Installs, once per test binary, a subscriber keeping every log line in memory.
fn capture_logs() {
    LOGS.get_or_init(|| {
        let buffer = Arc::new(Mutex::new(Vec::new()));
        let writer = LogBuffer(buffer.clone());
        let _ = tracing_subscriber::fmt()
            .with_env_filter(tracing_subscriber::EnvFilter::new("trace"))
            .with_writer(move || writer.clone())
            .try_init();
        buffer
    });
}

/// The captured log output so far.
pub fn captured_logs() -> String {
    LOGS.get()
        .and_then(|buffer| {
            buffer
                .lock()
                .ok()
                .map(|bytes| String::from_utf8_lossy(&bytes).into_owned())
        })
        .unwrap_or_default()
}

/// A company body for the generated client (which checks the spec's limits).
pub fn company_input(name: &str, description: Option<&str>) -> client::types::CompanyInput {
    client::types::CompanyInput {
        name: name.parse().expect("a name within the spec's limits"),
        description: description.map(|text| {
            text.parse()
                .expect("a description within the spec's limits")
        }),
    }
}

/// A list link without the `snapshot` it pins (the rest of it is what the
/// request asked for).
pub fn unpinned(href: &str) -> String {
    let Some((path, query)) = href.split_once('?') else {
        return href.to_owned();
    };
    let kept: Vec<&str> = query
        .split('&')
        .filter(|part| !part.starts_with("snapshot="))
        .collect();
    format!("{path}?{}", kept.join("&"))
}
