//! The `tributary` command line: `serve` (the default), `migrate`,
//! `api-key create` and `encryption-key generate|rotate`. Every option also
//! reads a `TRIBUTARY_*` variable, and may stand before or after the
//! subcommand.
//!
//! The option structs derive no `Debug`: they hold secrets (the bootstrap
//! key, the encryption keys).

use std::sync::Arc;
use std::time::Duration;

use clap::{Args, Parser, Subcommand};

use crate::crypto::{self, Keyring};
use crate::db::{self, DEFAULT_DATABASE_URL};
use crate::http::server;
use crate::http::state::AppState;
use crate::platforms::connector::{Connectors, PlatformUrls, PlatformsConfig};
use crate::platforms::kit::http::RetryPolicy;
use crate::platforms::{quickbooks_online, xero};
use crate::sync::engine::{Engine, EngineConfig};
use crate::sync::store::PageReads;
use crate::telemetry::{self, LogFormat};
use crate::{api_keys, connections, oauth_clients};

/// tributary: companies, data connections and synced data behind one API.
#[derive(Parser)]
#[command(name = "tributary", version, about)]
pub struct Cli {
    /// What to do; `serve` when omitted.
    #[command(subcommand)]
    command: Option<Command>,
    #[command(flatten)]
    global: GlobalOptions,
    #[command(flatten)]
    serve: ServeOptions,
}

#[derive(Args)]
struct GlobalOptions {
    /// Database URL: sqlite://PATH?mode=rwc or postgres://USER@HOST:PORT/DB.
    #[arg(long, global = true, env = "TRIBUTARY_DATABASE_URL", default_value = DEFAULT_DATABASE_URL)]
    database_url: String,
    /// Log line format.
    #[arg(
        long,
        global = true,
        env = "TRIBUTARY_LOG_FORMAT",
        value_enum,
        default_value = "human"
    )]
    log_format: LogFormat,
    /// Keys sealing stored tokens: `id:base64key,...` (the first encrypts, all decrypt).
    /// Default with SQLite: a key file beside the database, created on first run.
    #[arg(long, global = true, env = crypto::KEYS_VARIABLE, hide_env_values = true)]
    encryption_keys: Option<String>,
}

#[derive(Args)]
struct ServeOptions {
    /// Address to listen on.
    #[arg(
        long,
        global = true,
        env = "TRIBUTARY_BIND",
        default_value = "127.0.0.1:8080"
    )]
    bind: String,
    /// Sync workers in this process (0 runs none: another process syncs).
    #[arg(
        long,
        global = true,
        env = "TRIBUTARY_SYNC_WORKERS",
        default_value_t = 2
    )]
    sync_workers: usize,
    /// An API key to make sure exists for client `default` (idempotent).
    /// Prefer the variable: command lines are visible to other users.
    #[arg(
        long,
        global = true,
        env = "TRIBUTARY_BOOTSTRAP_API_KEY",
        hide_env_values = true
    )]
    bootstrap_api_key: Option<String>,
    /// Read list pages with `OFFSET` and `COUNT(*)` instead of the stored
    /// ordinals: only for the benchmark, which measures both in one run.
    #[arg(long, global = true, env = "TRIBUTARY_NAIVE_PAGING", hide = true)]
    naive_paging: bool,
    #[command(flatten)]
    platforms: PlatformOptions,
}

/// Where the platform connectors reach their platforms (tests and proxies
/// point them elsewhere), and how long they wait.
#[derive(Args)]
struct PlatformOptions {
    /// Xero API base URL.
    #[arg(long, global = true, env = "TRIBUTARY_XERO_API_BASE", default_value = xero::connector::API_BASE)]
    xero_api_base: String,
    /// Xero OAuth token endpoint.
    #[arg(long, global = true, env = "TRIBUTARY_XERO_TOKEN_URL", default_value = xero::connector::TOKEN_URL)]
    xero_token_url: String,
    /// QuickBooks Online API base URL (default: Intuit's production or sandbox host, as each connection says).
    #[arg(long, global = true, env = "TRIBUTARY_QUICKBOOKS_ONLINE_API_BASE")]
    quickbooks_online_api_base: Option<String>,
    /// QuickBooks Online OAuth token endpoint.
    #[arg(long, global = true, env = "TRIBUTARY_QUICKBOOKS_ONLINE_TOKEN_URL", default_value = quickbooks_online::connector::TOKEN_URL)]
    quickbooks_online_token_url: String,
    /// Zoho Books API base URL (default: the organization's data centre, or the `api_domain` Zoho gives).
    #[arg(long, global = true, env = "TRIBUTARY_ZOHO_BOOKS_API_BASE")]
    zoho_books_api_base: Option<String>,
    /// Zoho Books OAuth token endpoint (default: the data centre's accounts server).
    #[arg(long, global = true, env = "TRIBUTARY_ZOHO_BOOKS_TOKEN_URL")]
    zoho_books_token_url: Option<String>,
    /// Seconds each call to a platform may take.
    #[arg(
        long,
        global = true,
        env = "TRIBUTARY_PLATFORM_TIMEOUT_SECS",
        default_value_t = 30
    )]
    platform_timeout_secs: u64,
    /// The longest `Retry-After` (seconds) a rate-limited call waits before retrying; longer fails the call.
    #[arg(
        long,
        global = true,
        env = "TRIBUTARY_PLATFORM_MAX_RETRY_AFTER_SECS",
        default_value_t = 60
    )]
    platform_max_retry_after_secs: u64,
}

impl PlatformOptions {
    fn config(&self) -> PlatformsConfig {
        PlatformsConfig {
            xero: PlatformUrls {
                api_base: Some(self.xero_api_base.clone()),
                token_url: Some(self.xero_token_url.clone()),
                page_size: None,
            },
            quickbooks_online: PlatformUrls {
                api_base: self.quickbooks_online_api_base.clone(),
                token_url: Some(self.quickbooks_online_token_url.clone()),
                page_size: None,
            },
            zoho_books: PlatformUrls {
                api_base: self.zoho_books_api_base.clone(),
                token_url: self.zoho_books_token_url.clone(),
                page_size: None,
            },
            timeout: Duration::from_secs(self.platform_timeout_secs.max(1)),
            retry: RetryPolicy {
                max_retry_after: Duration::from_secs(self.platform_max_retry_after_secs),
                ..RetryPolicy::default()
            },
        }
    }
}

#[derive(Subcommand)]
enum Command {
    /// Run the API server (applies migrations first).
    Serve,
    /// Apply database migrations and exit.
    Migrate,
    /// Manage API keys.
    #[command(subcommand)]
    ApiKey(ApiKeyCommand),
    /// Manage the keys that seal stored tokens.
    #[command(subcommand)]
    EncryptionKey(EncryptionKeyCommand),
}

#[derive(Subcommand)]
enum EncryptionKeyCommand {
    /// Print a new random key, `id:base64key`, to put first in TRIBUTARY_ENCRYPTION_KEYS.
    Generate,
    /// Re-encrypt every stored token under the first configured key. Safe to
    /// interrupt and run again; afterwards older keys can be removed.
    Rotate,
}

#[derive(Subcommand)]
enum ApiKeyCommand {
    /// Create a key for a client (created if new) and print it once.
    Create {
        /// The client (tenant) the key authenticates as.
        #[arg(long)]
        client: String,
    },
}

impl Cli {
    /// Runs the chosen command to completion.
    pub async fn run(self) -> anyhow::Result<()> {
        telemetry::init(self.global.log_format);
        if let Some(Command::EncryptionKey(EncryptionKeyCommand::Generate)) = self.command {
            println!("{}", crypto::generate_key_entry());
            return Ok(());
        }
        // Commands that seal or open tokens check their keys before anything else.
        let keyring = match self.command {
            None | Some(Command::Serve) | Some(Command::EncryptionKey(_)) => Some(self.keyring()?),
            _ => None,
        };
        let db = db::connect(&self.global.database_url, None).await?;
        db::migrate(&db).await?;
        match (self.command, keyring) {
            (None | Some(Command::Serve), Some(keyring)) => serve(db, keyring, self.serve).await,
            (Some(Command::Migrate), _) => {
                tracing::info!("migrations applied");
                Ok(())
            }
            (Some(Command::ApiKey(ApiKeyCommand::Create { client })), _) => {
                let created = api_keys::create(&db, &client).await?;
                println!(
                    "API key for client '{}' (shown once, store it now):",
                    created.client_name
                );
                println!("{}", created.key);
                Ok(())
            }
            (Some(Command::EncryptionKey(EncryptionKeyCommand::Rotate)), Some(_)) => {
                rotate(&db, &self.global).await
            }
            (Some(Command::EncryptionKey(EncryptionKeyCommand::Generate)), _) => Ok(()),
            (_, None) => anyhow::bail!("internal: this command needs the keyring"),
        }
    }

    fn keyring(&self) -> anyhow::Result<Arc<Keyring>> {
        crypto::load_keyring(
            self.global.encryption_keys.as_deref(),
            &self.global.database_url,
        )
        .map(Arc::new)
    }
}

/// With a key file, rotation adds a fresh key to it first and retires the
/// old ones once every credential has moved; with configured keys, it
/// re-encrypts under the first one.
async fn rotate(db: &sea_orm::DatabaseConnection, global: &GlobalOptions) -> anyhow::Result<()> {
    let (mut keyring, source) =
        crypto::load_keyring_with_source(global.encryption_keys.as_deref(), &global.database_url)?;
    if let crypto::KeySource::File(path) = &source {
        keyring = crypto::add_key_to_file(path)?;
    }
    let rotation = connections::rotate_credentials(db, &keyring).await?;
    let (clients_rotated, clients_current, clients_remaining) =
        oauth_clients::rotate(db, &keyring).await?;
    println!(
        "{} stored credentials re-encrypted under key `{}`; {} already were.",
        rotation.rotated,
        keyring.current_key_id(),
        rotation.current
    );
    if clients_rotated + clients_current + clients_remaining > 0 {
        println!(
            "{clients_rotated} stored OAuth client secrets re-encrypted; {clients_current} already were."
        );
    }
    anyhow::ensure!(
        clients_remaining == 0,
        "{clients_remaining} OAuth clients changed while rotating and are still under an older key: run the \
         rotation again before removing any key"
    );
    anyhow::ensure!(
        rotation.remaining == 0,
        "{} credentials changed while rotating and are still under an older key: run the rotation again \
         before removing any key",
        rotation.remaining
    );
    match source {
        crypto::KeySource::File(path) => {
            crypto::retire_other_keys_in_file(&path, keyring.current_key_id())?;
            println!(
                "The key file now holds only `{}`. Restart running servers.",
                keyring.current_key_id()
            );
        }
        crypto::KeySource::Configured => println!(
            "Every credential is under `{}`; older keys can be removed from {} once servers restart with it first.",
            keyring.current_key_id(),
            crypto::KEYS_VARIABLE
        ),
    }
    Ok(())
}

async fn serve(
    db: sea_orm::DatabaseConnection,
    keyring: Arc<Keyring>,
    options: ServeOptions,
) -> anyhow::Result<()> {
    let missing = connections::unknown_key_ids(&db, &keyring).await?;
    anyhow::ensure!(
        missing.is_empty(),
        "stored tokens are sealed with encryption keys that are not configured ({}): add them to {}",
        missing.join(", "),
        crypto::KEYS_VARIABLE
    );
    if let Some(key) = &options.bootstrap_api_key {
        api_keys::ensure_bootstrap(&db, key).await?;
        tracing::info!(
            "bootstrap API key ensured for client '{}'",
            api_keys::DEFAULT_CLIENT
        );
    } else if let Some(created) = api_keys::create_first_if_none(&db).await? {
        print_first_key(&created.key, &options.bind);
    }
    let acceptor = server::bind(&options.bind).await?;
    let sync_wake = Arc::new(tokio::sync::Notify::new());
    let connectors = Connectors::for_platforms(&options.platforms.config())?;
    let engine = Engine::new(
        db.clone(),
        keyring.clone(),
        connectors.clone(),
        EngineConfig {
            workers: options.sync_workers,
            ..EngineConfig::default()
        },
        sync_wake.clone(),
    );
    let workers = engine.start();
    let page_reads = if options.naive_paging {
        tracing::warn!("naive paging: every list page pays OFFSET and COUNT(*) (benchmark mode)");
        PageReads::OffsetAndCount
    } else {
        PageReads::Ordinals
    };
    let app = server::app(AppState {
        db,
        keyring,
        sync_wake,
        page_reads,
        key_cache: Arc::default(),
        connectors,
    })?;
    tracing::info!(
        "listening on http://{}  (docs at /docs, spec at /openapi.yaml)",
        options.bind
    );
    let served = server::serve(acceptor, app).await;
    // Running syncs go back to the queue after their current page.
    engine
        .stop(workers, std::time::Duration::from_secs(15))
        .await;
    served
}

/// Shown once, on the first start of an empty database: the key and a
/// request that works as pasted.
fn print_first_key(key: &str, bind: &str) {
    use base64::Engine;
    let credential = base64::engine::general_purpose::STANDARD.encode(key);
    println!();
    println!(
        "No API key existed, so one was created for client 'default'. It is shown only this once:"
    );
    println!();
    println!("    {key}");
    println!();
    println!("Try it:");
    println!("    curl -s -H 'Authorization: Basic {credential}' http://{bind}/companies");
    println!();
}
