//! The `tributary` command line: `serve` (the default), `migrate` and
//! `api-key create`. Every option also reads a `TRIBUTARY_*` variable.

use clap::{Args, Parser, Subcommand};

use crate::db::{self, DEFAULT_DATABASE_URL};
use crate::state::AppState;
use crate::telemetry::{self, LogFormat};
use crate::{api_keys, server};

/// tributary: companies, data connections and synced data behind one API.
#[derive(Debug, Parser)]
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

#[derive(Debug, Args)]
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
}

#[derive(Debug, Clone, Args)]
struct ServeOptions {
    /// Address to listen on.
    #[arg(long, env = "TRIBUTARY_BIND", default_value = "127.0.0.1:8080")]
    bind: String,
    /// An API key to make sure exists for client `default` (idempotent).
    #[arg(long, env = "TRIBUTARY_BOOTSTRAP_API_KEY", hide_env_values = true)]
    bootstrap_api_key: Option<String>,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Run the API server (applies migrations first).
    Serve(ServeOptions),
    /// Apply database migrations and exit.
    Migrate,
    /// Manage API keys.
    #[command(subcommand)]
    ApiKey(ApiKeyCommand),
}

#[derive(Debug, Subcommand)]
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
        let db = db::connect(&self.global.database_url, None).await?;
        db::migrate(&db).await?;
        match self.command {
            None => serve(db, self.serve).await,
            Some(Command::Serve(options)) => serve(db, options).await,
            Some(Command::Migrate) => {
                tracing::info!("migrations applied");
                Ok(())
            }
            Some(Command::ApiKey(ApiKeyCommand::Create { client })) => {
                let created = api_keys::create(&db, &client).await?;
                println!(
                    "API key for client '{}' (shown once, store it now):",
                    created.client_name
                );
                println!("{}", created.key);
                Ok(())
            }
        }
    }
}

async fn serve(db: sea_orm::DatabaseConnection, options: ServeOptions) -> anyhow::Result<()> {
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
    let app = server::app(AppState { db })?;
    tracing::info!(
        "listening on http://{}  (docs at /docs, spec at /openapi.yaml)",
        options.bind
    );
    server::serve(acceptor, app).await
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
