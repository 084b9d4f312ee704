//! The `tributary` command line: `serve` (the default), `migrate`,
//! `api-key create` and `encryption-key generate|rotate`. Every option also
//! reads a `TRIBUTARY_*` variable, and may stand before or after the
//! subcommand.
//!
//! The option structs derive no `Debug`: they hold secrets (the bootstrap
//! key, the encryption keys).

use std::time::Duration;

use clap::error::ErrorKind;
use clap::{Args, Parser, Subcommand};

use crate::api_keys;
use crate::app::{Application, Config, FirstKey, Keys};
use crate::crypto;
use crate::db::{self, DEFAULT_DATABASE_URL};
use crate::managed_migrations::MigrationConfig;
use crate::platforms::connector::Connectors;
use crate::rate_limits::{self, RateLimitConfig};
use crate::sync::engine::{self, EngineConfig};
use crate::sync::list_orders;
use crate::telemetry::{self, LogFormat};
use crate::webhooks::deliverer::WebhookConfig;

mod encryption_keys;
mod help;
mod migration;
mod platform_options;

use help::help_view;
use migration::MigrationCommand;
use platform_options::PlatformOptions;

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
    /// The URL end customers and platforms reach this service at: link
    /// pages and OAuth callbacks (`/oauth/<platform>/callback`) are built
    /// from it. Default: http:// and the bind address.
    #[arg(long, global = true, env = "TRIBUTARY_PUBLIC_URL")]
    public_url: Option<String>,
    /// Sync workers in this process (0 runs none: another process syncs).
    #[arg(
        long,
        global = true,
        env = "TRIBUTARY_SYNC_WORKERS",
        default_value_t = 2
    )]
    sync_workers: usize,
    /// Hours after a data type's last full fetch before a sync fetches the
    /// platform's whole list again, finding the records it deleted, where
    /// the platform's changes do not say (0: every sync fetches whole).
    #[arg(
        long,
        global = true,
        env = "TRIBUTARY_FULL_FETCH_EVERY_HOURS",
        default_value_t = engine::DEFAULT_FULL_FETCH_EVERY.as_secs() / 3600
    )]
    full_fetch_every_hours: u64,
    /// Whether this process delivers webhooks (`false`: another process
    /// on the same database does; events are recorded either way).
    #[arg(
        long,
        global = true,
        env = "TRIBUTARY_WEBHOOK_DELIVERY",
        default_value_t = true,
        action = clap::ArgAction::Set
    )]
    webhook_delivery: bool,
    /// Let webhook endpoints be on private, loopback or link-local
    /// addresses (receivers on the installation's own network); refused by
    /// default, so clients cannot reach into it.
    #[arg(
        long,
        global = true,
        env = "TRIBUTARY_WEBHOOK_ALLOW_PRIVATE_ADDRESSES",
        default_value_t = false,
        action = clap::ArgAction::Set
    )]
    webhook_allow_private_addresses: bool,
    /// Requests per minute per client, across every process on the
    /// database (0: no quota).
    #[arg(
        long,
        global = true,
        env = "TRIBUTARY_RATE_LIMIT_PER_MINUTE",
        default_value_t = rate_limits::DEFAULT_REQUESTS_PER_MINUTE
    )]
    rate_limit_per_minute: u32,
    /// Concurrent requests per company of a client, across every process
    /// on the database (0: no cap).
    #[arg(
        long,
        global = true,
        env = "TRIBUTARY_MAX_CONCURRENT_PER_COMPANY",
        default_value_t = rate_limits::DEFAULT_CONCURRENT_PER_COMPANY
    )]
    max_concurrent_per_company: u32,
    /// MiB of memory for the whole orders of queried lists and of lists
    /// merged from several connections, each read once per snapshot so that
    /// any page of it costs the same (0: none; such pages are read alone).
    #[arg(
        long,
        global = true,
        env = "TRIBUTARY_LIST_ORDER_CACHE_MIB",
        default_value_t = list_orders::DEFAULT_CAPACITY_BYTES / (1024 * 1024)
    )]
    list_order_cache_mib: u64,
    /// Migration rows of one platform advanced at once by this process
    /// (0: this process runs no managed migrations).
    #[arg(
        long,
        global = true,
        env = "TRIBUTARY_MIGRATION_CONCURRENCY",
        default_value_t = MigrationConfig::default().concurrency_per_platform
    )]
    migration_concurrency: usize,
    /// Seconds a migration row stays claimed by the process advancing it; a
    /// process that dies leaves its rows to others (or to itself, restarted)
    /// after this long.
    #[arg(
        long,
        global = true,
        env = "TRIBUTARY_MIGRATION_LEASE_SECS",
        default_value_t = MigrationConfig::default().lease.as_secs()
    )]
    migration_lease_secs: u64,
    /// Serve Prometheus metrics at `http://ADDRESS/metrics`, without an API
    /// key (keep the address off the public network); off by default.
    #[arg(long, global = true, env = "TRIBUTARY_METRICS_BIND")]
    metrics_bind: Option<String>,
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
    /// ordinals: only in the benchmark's build, which measures both in one run.
    #[cfg(feature = "naive-paging")]
    #[arg(long, global = true, env = "TRIBUTARY_NAIVE_PAGING", hide = true)]
    naive_paging: bool,
    /// Publish a resync of a list of at least this many rows as a layer
    /// (`EngineConfig::layering`): only in the resync benchmark's build,
    /// as the sync after a layer still fetches whole (ARCHITECTURE.md).
    #[cfg(feature = "layering")]
    #[arg(long, global = true, env = "TRIBUTARY_LAYERING_AT_ROWS", hide = true)]
    layering_at_rows: Option<u64>,
    #[command(flatten)]
    platforms: PlatformOptions,
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
    /// Managed migrations (batches of companies' tokens).
    #[command(subcommand)]
    Migration(MigrationCommand),
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
        /// What the key is for (1 to 200 characters), shown by `GET /apiKeys`.
        #[arg(long, default_value = api_keys::COMMAND_LINE_KEY_NAME)]
        name: String,
    },
}

impl Cli {
    /// Parses the process's command line. The server's and the platforms'
    /// options are global, so they may stand before the subcommand or after
    /// it (`tributary --bind X serve`, `tributary serve --bind X`); but each
    /// subcommand's `--help` shows its own options only: help is rendered
    /// from [`help_view`].
    pub fn from_command_line() -> Self {
        let arguments: Vec<std::ffi::OsString> = std::env::args_os().collect();
        if let Err(help) = help_view().try_get_matches_from(&arguments)
            && matches!(
                help.kind(),
                ErrorKind::DisplayHelp | ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand
            )
        {
            help.exit();
        }
        Self::parse_from(arguments)
    }

    /// Runs the chosen command to completion.
    pub async fn run(self) -> anyhow::Result<()> {
        telemetry::init(self.global.log_format);
        if let Some(Command::EncryptionKey(EncryptionKeyCommand::Generate)) = self.command {
            println!("{}", crypto::generate_key_entry());
            return Ok(());
        }
        if let None | Some(Command::Serve) = self.command {
            return serve(self.global, self.serve).await;
        }
        // Only `serve` and `migrate` make a database: any other command run
        // where there is none (another directory) would otherwise create an
        // empty one and its key file, then find nothing in it.
        if !matches!(self.command, Some(Command::Migrate))
            && let Some(file) = db::sqlite_file(&self.global.database_url)
            && !file.exists()
        {
            anyhow::bail!(
                "there is no database at {}: run this where the server's database is, or name it with \
                 --database-url (TRIBUTARY_DATABASE_URL); `tributary serve` or `tributary migrate` creates one",
                std::path::absolute(&file).unwrap_or(file).display()
            );
        }
        // Rotation checks its keys before anything else.
        let keyring = match self.command {
            Some(Command::EncryptionKey(_) | Command::Migration(_)) => Some(self.keyring()?),
            _ => None,
        };
        let db = db::connect(&self.global.database_url, None).await?;
        db::migrate(&db).await?;
        match (self.command, keyring) {
            (None | Some(Command::Serve), _) => Ok(()),
            (Some(Command::Migrate), _) => {
                tracing::info!("migrations applied");
                Ok(())
            }
            (Some(Command::ApiKey(ApiKeyCommand::Create { client, name })), _) => {
                let name = api_keys::validate_key_name(&name)?;
                let created = api_keys::create(&db, &client, name).await?;
                println!(
                    "API key for client '{}' (shown once, store it now):",
                    created.client_name
                );
                println!("{}", created.key);
                Ok(())
            }
            (Some(Command::EncryptionKey(EncryptionKeyCommand::Rotate)), Some(_)) => {
                encryption_keys::rotate(&db, &self.global).await
            }
            (Some(Command::EncryptionKey(EncryptionKeyCommand::Generate)), _) => Ok(()),
            (Some(Command::Migration(command)), Some(keyring)) => {
                let connectors = Connectors::for_platforms(&self.serve.platforms.config())?;
                let database = db::describe(&self.global.database_url);
                command.run(&db, &database, &keyring, &connectors).await
            }
            (_, None) => anyhow::bail!("internal: this command needs the keyring"),
        }
    }

    fn keyring(&self) -> anyhow::Result<crypto::Keyring> {
        crypto::load_keyring(
            self.global.encryption_keys.as_deref(),
            &self.global.database_url,
        )
    }
}

async fn serve(global: GlobalOptions, options: ServeOptions) -> anyhow::Result<()> {
    let config = Config {
        database_url: global.database_url,
        search_path: None,
        bind: options.bind.clone(),
        public_url: options.public_url.clone(),
        keys: Keys::Configured(global.encryption_keys),
        first_key: match options.bootstrap_api_key {
            Some(key) => FirstKey::Bootstrap(key),
            None => FirstKey::CreateIfNone,
        },
        engine: EngineConfig {
            workers: options.sync_workers,
            full_fetch_every: Duration::from_secs(options.full_fetch_every_hours * 3600),
            #[cfg(feature = "layering")]
            layering: options
                .layering_at_rows
                .map(|at_rows| engine::Layering { at_rows }),
            ..EngineConfig::default()
        },
        webhooks: WebhookConfig {
            deliver: options.webhook_delivery,
            allow_private_addresses: options.webhook_allow_private_addresses,
            ..WebhookConfig::default()
        },
        migrations: MigrationConfig {
            concurrency_per_platform: options.migration_concurrency,
            lease: Duration::from_secs(options.migration_lease_secs.max(1)),
            ..MigrationConfig::default()
        },
        metrics_bind: options.metrics_bind.clone(),
        rate_limits: RateLimitConfig {
            requests_per_minute: options.rate_limit_per_minute,
            concurrent_per_company: options.max_concurrent_per_company,
            ..RateLimitConfig::default()
        },
        platforms: options.platforms.config(),
        list_order_cache_bytes: options.list_order_cache_mib.saturating_mul(1024 * 1024),
        #[cfg(feature = "naive-paging")]
        naive_paging: options.naive_paging,
    };
    let application = Application::build(config).await?;
    if let Some(created) = application.first_api_key() {
        print_first_key(&created.key, &options.bind);
    }
    tracing::info!(
        "listening on http://{}  (docs at /docs, spec at /openapi.yaml)",
        options.bind
    );
    application.run_until_stopped().await
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

#[cfg(test)]
mod tests {
    use super::*;

    pub(super) fn parsed(arguments: &[&str]) -> Result<Cli, clap::Error> {
        Cli::try_parse_from(std::iter::once("tributary").chain(arguments.iter().copied()))
    }
}
