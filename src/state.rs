//! What every request handler shares: the database handle.

use sea_orm::DatabaseConnection;

/// Shared application state, attached to every request with `.data(...)`.
#[derive(Clone)]
pub struct AppState {
    /// The connection pool.
    pub db: DatabaseConnection,
}
