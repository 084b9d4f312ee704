//! Opening the database (SQLite by default, PostgreSQL by URL) and applying
//! migrations.

use std::time::Duration;

use anyhow::Context;
use migration::{Migrator, MigratorTrait};
use sea_orm::sqlx::sqlite::SqliteJournalMode;
use sea_orm::{ConnectOptions, Database, DatabaseConnection, DbErr, RuntimeErr};

/// The embedded default: an SQLite file in the working directory, created on first run.
pub const DEFAULT_DATABASE_URL: &str = "sqlite://tributary.db?mode=rwc";

/// The SQLite file a database URL names; `None` for PostgreSQL and for an
/// in-memory database.
pub fn sqlite_file(database_url: &str) -> Option<std::path::PathBuf> {
    let path = database_url
        .strip_prefix("sqlite://")
        .or_else(|| database_url.strip_prefix("sqlite:"))?
        .split('?')
        .next()
        .unwrap_or_default();
    (!path.is_empty() && !path.contains(":memory:")).then(|| std::path::PathBuf::from(path))
}

/// The database a URL names, for messages: an SQLite file's absolute path,
/// or a PostgreSQL URL without its password.
pub fn describe(database_url: &str) -> String {
    if let Some(file) = sqlite_file(database_url) {
        let absolute = std::path::absolute(&file).unwrap_or(file);
        return format!("the SQLite database {}", absolute.display());
    }
    match url::Url::parse(database_url) {
        Ok(mut url) if url.password().is_some() => {
            let _ = url.set_password(Some("***"));
            format!("the database {url}")
        }
        _ => format!("the database {database_url}"),
    }
}

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

/// Whether `error` says the database could not be reached (no connection
/// could be opened or handed out in time, or the server closed it), as
/// opposed to a statement that failed on a working connection. The first
/// kind is an outage a client may retry through; the second is a bug.
pub fn is_unreachable(error: &DbErr) -> bool {
    match error {
        DbErr::ConnectionAcquire(_) | DbErr::Conn(_) => true,
        DbErr::Exec(RuntimeErr::SqlxError(cause)) | DbErr::Query(RuntimeErr::SqlxError(cause)) => {
            lost_connection(cause)
        }
        _ => false,
    }
}

/// The sqlx errors of a connection that broke or could not be had:
/// transport failures, and PostgreSQL's connection-exception (`08…`) and
/// operator-intervention (`57P…`: shutdown, terminated backend, "cannot
/// connect now") classes.
fn lost_connection(error: &sea_orm::sqlx::Error) -> bool {
    use sea_orm::sqlx::Error as Sqlx;
    match error {
        Sqlx::Io(_)
        | Sqlx::Tls(_)
        | Sqlx::PoolTimedOut
        | Sqlx::PoolClosed
        | Sqlx::WorkerCrashed => true,
        Sqlx::Database(database) => database
            .code()
            .is_some_and(|code| code.starts_with("08") || code.starts_with("57P")),
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use sea_orm::ConnAcquireErr;

    use super::*;

    #[test]
    fn pool_and_transport_failures_are_unreachable_and_statement_failures_are_not() {
        assert!(is_unreachable(&DbErr::ConnectionAcquire(
            ConnAcquireErr::Timeout
        )));
        let io =
            || sea_orm::sqlx::Error::Io(std::io::Error::from(std::io::ErrorKind::ConnectionReset));
        assert!(is_unreachable(&DbErr::Query(RuntimeErr::SqlxError(
            Arc::new(io())
        ))));
        assert!(is_unreachable(&DbErr::Conn(RuntimeErr::SqlxError(
            Arc::new(io())
        ))));
        assert!(!is_unreachable(&DbErr::Query(RuntimeErr::SqlxError(
            Arc::new(sea_orm::sqlx::Error::RowNotFound)
        ))));
        assert!(!is_unreachable(&DbErr::RecordNotFound("x".to_owned())));
        assert!(!is_unreachable(&DbErr::Custom("a bug".to_owned())));
    }
}
