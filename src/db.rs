//! Opening the database (SQLite by default, PostgreSQL by URL) and applying
//! migrations.

use std::time::Duration;

use anyhow::Context;
use migration::{Migrator, MigratorTrait};
use sea_orm::sqlx::sqlite::SqliteJournalMode;
use sea_orm::{ConnectOptions, Database, DatabaseConnection};

/// The embedded default: an SQLite file in the working directory, created on first run.
pub const DEFAULT_DATABASE_URL: &str = "sqlite://tributary.db?mode=rwc";

/// Which database a URL selects.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Backend {
    /// A file (or memory) database, one writer at a time.
    Sqlite,
    /// A PostgreSQL server.
    Postgres,
}

impl Backend {
    /// The backend a connection URL names, if supported.
    pub fn of_url(url: &str) -> anyhow::Result<Self> {
        if url.starts_with("sqlite:") {
            Ok(Self::Sqlite)
        } else if url.starts_with("postgres://") || url.starts_with("postgresql://") {
            Ok(Self::Postgres)
        } else {
            anyhow::bail!("unsupported database URL: use sqlite://PATH or postgres://...")
        }
    }
}

/// Connects to `url` with settings suited to its backend.
///
/// `search_path`, for PostgreSQL only, selects a schema (the tests use one
/// schema per test).
pub async fn connect(url: &str, search_path: Option<&str>) -> anyhow::Result<DatabaseConnection> {
    let backend = Backend::of_url(url)?;
    let mut options = ConnectOptions::new(url.to_owned());
    options
        .sqlx_logging(false)
        .connect_timeout(Duration::from_secs(10))
        .acquire_timeout(Duration::from_secs(10));
    match backend {
        Backend::Sqlite => {
            // WAL lets readers proceed while the single writer commits; the
            // busy timeout makes concurrent writers queue instead of failing.
            options.max_connections(8).map_sqlx_sqlite_opts(|sqlite| {
                sqlite
                    .journal_mode(SqliteJournalMode::Wal)
                    .busy_timeout(Duration::from_secs(10))
                    .foreign_keys(true)
                    // Deleted rows (destroyed tokens) are overwritten, not left in free pages.
                    .pragma("secure_delete", "ON")
            });
        }
        Backend::Postgres => {
            options.max_connections(16);
            if let Some(schema) = search_path {
                options.set_schema_search_path(schema.to_owned());
            }
        }
    }
    Database::connect(options)
        .await
        .with_context(|| format!("cannot connect to the {backend:?} database"))
}

/// Applies every pending migration.
pub async fn migrate(db: &DatabaseConnection) -> anyhow::Result<()> {
    Migrator::up(db, None)
        .await
        .context("applying database migrations")
}
