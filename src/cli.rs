//! The `tributary` command line: `serve` (the default), `migrate`,
//! `api-key create` and `encryption-key generate|rotate`. Every option also
//! reads a `TRIBUTARY_*` variable, and may stand before or after the
//! subcommand.
//!
//! The option structs derive no `Debug`: they hold secrets (the bootstrap
//! key, the encryption keys).

use std::time::Duration;

use clap::error::ErrorKind;
use clap::{Arg, ArgMatches, Args, CommandFactory, FromArgMatches, Parser, Subcommand};

use crate::app::{Application, Config, FirstKey, Keys};
use crate::crypto;
use crate::db::{self, DEFAULT_DATABASE_URL};
use crate::managed_migrations::{self, MigrationConfig};
use crate::platforms::Platform;
use crate::platforms::config::{self, PlatformConfig, PlatformsConfig};
use crate::platforms::connector::Connectors;
use crate::platforms::connector::{ConnectorKind, Endpoint};
use crate::platforms::kit::http::RetryPolicy;
use crate::rate_limits::{self, RateLimitConfig};
use crate::sync::engine::EngineConfig;
use crate::sync::list_orders;
use crate::telemetry::{self, LogFormat};
use crate::webhooks::deliverer::WebhookConfig;

mod migration;

use crate::{api_keys, connections, oauth_clients, platforms, webhooks};
use migration::MigrationCommand;

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
    #[command(flatten)]
    platforms: PlatformOptions,
}

/// Where the platform connectors reach their platforms (tests and proxies
/// point them elsewhere), and how long they wait. Each platform with a
/// connector has `--<key>-api-base` and `--<key>-token-url`, also read from
/// `TRIBUTARY_<KEY>_API_BASE` and `TRIBUTARY_<KEY>_TOKEN_URL`.
struct PlatformOptions {
    /// The configured URLs, by platform key.
    urls: Vec<(&'static str, PlatformConfig)>,
    /// Seconds each call to a platform may take.
    timeout_secs: u64,
    /// The longest `Retry-After` (seconds) a rate-limited call waits.
    max_retry_after_secs: u64,
}

const TIMEOUT: &str = "platform-timeout-secs";
const MAX_RETRY_AFTER: &str = "platform-max-retry-after-secs";

/// The argument ids of one platform's URLs.
fn url_arguments(platform_key: &str) -> (String, String) {
    (
        format!("{platform_key}-api-base"),
        format!("{platform_key}-token-url"),
    )
}

/// The argument id of one platform's authorize endpoint (the link flow's).
fn authorize_argument(platform_key: &str) -> String {
    format!("{platform_key}-authorize-url")
}

/// The platforms whose connectors call out, so their URLs can be configured
/// (the sandbox's cannot: it calls nothing).
fn reaching_out() -> impl Iterator<Item = (&'static Platform, ConnectorKind)> {
    platforms::all().iter().filter_map(|platform| {
        platform
            .connector
            .filter(|connector| connector.api_base.is_used() || connector.token_url.is_used())
            .map(|connector| (*platform, connector))
    })
}

/// Where an endpoint is by default, in the words of `--help`.
fn described(endpoint: Endpoint) -> &'static str {
    match endpoint {
        Endpoint::Fixed(url) | Endpoint::PerConnection(url) => url,
        Endpoint::Unused => "none: not called",
    }
}

impl Args for PlatformOptions {
    fn augment_args(mut command: clap::Command) -> clap::Command {
        for (platform, connector) in reaching_out() {
            let (api_base, token_url) = url_arguments(platform.platform_key);
            command = command
                .arg(
                    Arg::new(api_base.clone())
                        .long(api_base)
                        .global(true)
                        .env(config::variable(platform.platform_key, "API_BASE"))
                        .help(format!(
                            "{} API base URL (default {})",
                            platform.name,
                            described(connector.api_base)
                        )),
                )
                .arg(
                    Arg::new(token_url.clone())
                        .long(token_url)
                        .global(true)
                        .env(config::variable(platform.platform_key, "TOKEN_URL"))
                        .help(format!(
                            "{} OAuth token endpoint (default {})",
                            platform.name,
                            described(connector.token_url)
                        )),
                )
                .arg(
                    Arg::new(authorize_argument(platform.platform_key))
                        .long(authorize_argument(platform.platform_key))
                        .global(true)
                        .env(config::variable(platform.platform_key, "AUTHORIZE_URL"))
                        .help(format!(
                            "{} OAuth authorize endpoint the link flow sends end customers to (default: the platform's)",
                            platform.name,
                        )),
                );
        }
        command
            .arg(
                Arg::new(TIMEOUT)
                    .long(TIMEOUT)
                    .global(true)
                    .env("TRIBUTARY_PLATFORM_TIMEOUT_SECS")
                    .value_parser(clap::value_parser!(u64))
                    .default_value("30")
                    .help("Seconds each call to a platform may take"),
            )
            .arg(
                Arg::new(MAX_RETRY_AFTER)
                    .long(MAX_RETRY_AFTER)
                    .global(true)
                    .env("TRIBUTARY_PLATFORM_MAX_RETRY_AFTER_SECS")
                    .value_parser(clap::value_parser!(u64))
                    .default_value("60")
                    .help("The longest Retry-After (seconds) a rate-limited call waits before retrying; longer fails the call"),
            )
    }

    fn augment_args_for_update(command: clap::Command) -> clap::Command {
        Self::augment_args(command)
    }
}

impl FromArgMatches for PlatformOptions {
    fn from_arg_matches(matches: &ArgMatches) -> Result<Self, clap::Error> {
        let urls = reaching_out()
            .map(|(platform, _)| {
                let (api_base, token_url) = url_arguments(platform.platform_key);
                let configured = PlatformConfig {
                    api_base: matches.get_one::<String>(&api_base).cloned(),
                    token_url: matches.get_one::<String>(&token_url).cloned(),
                    authorize_url: matches
                        .get_one::<String>(&authorize_argument(platform.platform_key))
                        .cloned(),
                    page_size: None,
                };
                (platform.platform_key, configured)
            })
            .collect();
        Ok(Self {
            urls,
            timeout_secs: matches.get_one::<u64>(TIMEOUT).copied().unwrap_or(30),
            max_retry_after_secs: matches
                .get_one::<u64>(MAX_RETRY_AFTER)
                .copied()
                .unwrap_or(60),
        })
    }

    fn update_from_arg_matches(&mut self, matches: &ArgMatches) -> Result<(), clap::Error> {
        *self = Self::from_arg_matches(matches)?;
        Ok(())
    }
}

impl PlatformOptions {
    fn config(&self) -> PlatformsConfig {
        PlatformsConfig {
            platforms: self
                .urls
                .iter()
                .map(|(key, config)| ((*key).to_owned(), config.clone()))
                .collect(),
            timeout: Duration::from_secs(self.timeout_secs.max(1)),
            retry: RetryPolicy {
                max_retry_after: Duration::from_secs(self.max_retry_after_secs),
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
    /// Managed migrations (batches of companies' tokens).
    #[command(subcommand)]
    Migration(MigrationCommand),
}

/// The heading the platforms' options are listed under in `--help`.
const PLATFORMS_HEADING: &str = "Where the platforms are (tests and proxies point them elsewhere)";

/// The command line as `--help` shows it: the server's options belong to
/// the top level (`serve` when the subcommand is omitted) and to `serve`,
/// the platforms' also to `migration import` (it verifies tokens with
/// them), and no other subcommand lists them.
fn help_view() -> clap::Command {
    let full = Cli::command();
    let ids_of = |command: clap::Command| -> Vec<clap::Id> {
        command
            .get_arguments()
            .map(|argument| argument.get_id().clone())
            .collect()
    };
    let server = ids_of(ServeOptions::augment_args(clap::Command::new("serve")));
    let platforms = ids_of(PlatformOptions::augment_args(clap::Command::new(
        "platforms",
    )));
    // The platforms' options (about 60) come last, under their own heading.
    let shown = |argument: Arg| -> Arg {
        let global = argument.is_global_set() && !server.contains(argument.get_id());
        let heading = platforms
            .contains(argument.get_id())
            .then_some(PLATFORMS_HEADING);
        argument.global(global).help_heading(heading)
    };
    let local = |ids: &[clap::Id]| -> Vec<Arg> {
        full.get_arguments()
            .filter(|argument| ids.contains(argument.get_id()))
            .map(|argument| shown(argument.clone()))
            .collect()
    };
    let (server_arguments, platform_arguments) = (local(&server), local(&platforms));
    full.clone()
        .mut_args(shown)
        .mut_subcommand("serve", |serve| serve.args(server_arguments))
        .mut_subcommand("migration", |migration| {
            migration.mut_subcommand("import", |import| import.args(platform_arguments))
        })
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
                rotate(&db, &self.global).await
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

/// With a key file, rotation adds a fresh key to it first and retires the
/// old ones once every credential has moved; with configured keys, it
/// re-encrypts under the first one.
async fn rotate(db: &sea_orm::DatabaseConnection, global: &GlobalOptions) -> anyhow::Result<()> {
    let (mut keyring, source) =
        crypto::load_keyring_with_source(global.encryption_keys.as_deref(), &global.database_url)?;
    if let crypto::KeySource::File(path) = &source {
        keyring = crypto::add_key_to_file(path)?;
    }
    let rotation = connections::credentials::rotate(db, &keyring).await?;
    let clients = oauth_clients::rotate(db, &keyring).await?;
    let endpoints = webhooks::endpoints::rotate_sealing(db, &keyring).await?;
    let rows = managed_migrations::rotate(db, &keyring).await?;
    let (clients_rotated, clients_current, clients_remaining) =
        (clients.rotated, clients.current, clients.remaining);
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
    if endpoints.rotated + endpoints.current + endpoints.remaining > 0 {
        println!(
            "{} webhook endpoints' signing secrets re-encrypted; {} already were.",
            endpoints.rotated, endpoints.current
        );
    }
    if rows.rotated + rows.current + rows.remaining > 0 {
        println!(
            "{} migration rows' waiting tokens re-encrypted; {} already were.",
            rows.rotated, rows.current
        );
    }
    anyhow::ensure!(
        rows.remaining == 0,
        "{} migration rows changed while rotating and are still under an older key: run the rotation again \
         before removing any key",
        rows.remaining
    );
    anyhow::ensure!(
        endpoints.remaining == 0,
        "{} webhook endpoints changed while rotating and are still under an older key: run the rotation \
         again before removing any key",
        endpoints.remaining
    );
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

    fn parsed(arguments: &[&str]) -> Result<Cli, clap::Error> {
        Cli::try_parse_from(std::iter::once("tributary").chain(arguments.iter().copied()))
    }

    #[test]
    fn each_calling_connector_has_its_url_flags_before_or_after_the_command() {
        let cli = parsed(&[
            "--xero-api-base",
            "http://127.0.0.1:9001",
            "serve",
            "--zoho-books-token-url",
            "http://127.0.0.1:9002/token",
        ])
        .expect("parses");
        let config = cli.serve.platforms.config();
        let xero = config.platforms.get("xero").expect("xero is configurable");
        assert_eq!(xero.api_base.as_deref(), Some("http://127.0.0.1:9001"));
        assert_eq!(xero.token_url, None);
        let zoho = config
            .platforms
            .get("zoho-books")
            .expect("zoho is configurable");
        assert_eq!(
            zoho.token_url.as_deref(),
            Some("http://127.0.0.1:9002/token")
        );
        assert!(config.platforms.contains_key("quickbooks-online"));
    }

    fn help_of(path: &[&str]) -> String {
        let mut command = help_view();
        command.build();
        let found = path.iter().fold(&mut command, |command, name| {
            command
                .find_subcommand_mut(name)
                .expect("the subcommand exists")
        });
        found.render_long_help().to_string()
    }

    #[test]
    fn each_subcommands_help_lists_its_own_options() {
        let import = help_of(&["migration", "import"]);
        assert!(import.contains("--client"), "{import}");
        assert!(import.contains("--xero-api-base"), "{import}");
        assert!(import.contains("--database-url"), "{import}");
        assert!(!import.contains("--bind"), "{import}");
        assert!(!import.contains("--sync-workers"), "{import}");
        let key = help_of(&["api-key", "create"]);
        assert!(
            key.contains("--client") && key.contains("--database-url"),
            "{key}"
        );
        assert!(
            !key.contains("--bind") && !key.contains("--xero-api-base"),
            "{key}"
        );
        let serve = help_of(&["serve"]);
        assert!(
            serve.contains("--bind") && serve.contains("--xero-api-base"),
            "{serve}"
        );
        let top = help_view().render_long_help().to_string();
        assert!(top.contains("--bind") && top.contains("migration"), "{top}");
    }

    #[test]
    fn platforms_that_call_nothing_have_no_url_flags() {
        assert!(parsed(&["--sandbox-api-base", "http://127.0.0.1:9"]).is_err());
        assert!(parsed(&["--quickbooks-desktop-api-base", "http://127.0.0.1:9"]).is_err());
        let cli = parsed(&[]).expect("parses");
        assert!(
            !cli.serve
                .platforms
                .config()
                .platforms
                .contains_key("sandbox")
        );
    }
}
