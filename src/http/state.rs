//! What every request handler shares: the database handle, the keyring
//! that seals stored tokens, and the platforms' connectors.

use std::sync::Arc;

use sea_orm::DatabaseConnection;

use crate::api_keys::KeyCache;
use crate::crypto::Keyring;
use crate::platforms::connector::Connectors;
use crate::sync::store::PageReads;

/// Shared application state, attached to every request with `.data(...)`.
#[derive(Clone)]
pub struct AppState {
    /// The connection pool.
    pub db: DatabaseConnection,
    /// Encrypts and decrypts stored tokens.
    pub keyring: Arc<Keyring>,
    /// Wakes the sync engine's idle workers when a sync is queued.
    pub sync_wake: Arc<tokio::sync::Notify>,
    /// How list pages of synced data are read (ordinals, except in the benchmark's naive mode).
    pub page_reads: PageReads,
    /// API keys recently verified, so requests skip the lookup.
    pub key_cache: Arc<KeyCache>,
    /// The platforms' connectors, for verifying tokens at migration.
    pub connectors: Connectors,
}
