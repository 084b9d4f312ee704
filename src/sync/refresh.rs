//! Keeping a connection's tokens fresh: refresh before an access token
//! expires (within [`REFRESH_AHEAD`]) and after a platform rejects one, at
//! most one refresh per connection at a time across every worker and
//! process.
//!
//! The lock is a lease on the credential row
//! ([`credentials::take_refresh_lease`]). Whoever holds it re-reads the
//! credential first: another worker may have refreshed meanwhile. A rotated
//! refresh token is sealed and committed before the new access token is
//! used, and only over the credential that was refreshed (a
//! re-authorization that landed meanwhile wins). Whoever waits polls until
//! the lease is released or lapses, then uses what the holder stored.

use std::time::Duration;

use chrono::Utc;
use sea_orm::DatabaseConnection;
use serde_json::Value;
use uuid::Uuid;

use crate::connections::credentials::{self, Opened};
use crate::crypto::Keyring;
use crate::error::{Problem, Remedy};
use crate::oauth_clients;
use crate::platforms::connector::ConnectorError;
use crate::platforms::kit::oauth::{self, TokenEndpoint};

/// Access tokens expiring within this are refreshed before use.
pub const REFRESH_AHEAD: chrono::Duration = chrono::Duration::minutes(5);
/// How long a refresh lease lasts: longer than a refresh with all its retries.
const LEASE: Duration = Duration::from_secs(120);
/// How often a waiting worker looks at the lease.
const POLL: Duration = Duration::from_millis(50);

/// Why the tokens need refreshing.
#[derive(Debug, Clone, Copy)]
pub enum Need<'a> {
    /// Only if the access token expires within [`REFRESH_AHEAD`].
    IfExpiring,
    /// The platform rejected this access token: refresh unless it was replaced already.
    Rejected(&'a str),
}

/// Why fresh credentials could not be had.
#[derive(Debug)]
pub enum RefreshFailure {
    /// The platform stopped it, in words.
    Platform(ConnectorError),
    /// The tenant has stored no OAuth client to refresh with.
    NoOAuthClient(Problem),
    /// A database or keyring failure; logged, not shown.
    Internal(String),
}

impl From<sea_orm::DbErr> for RefreshFailure {
    fn from(error: sea_orm::DbErr) -> Self {
        Self::Internal(error.to_string())
    }
}

impl From<anyhow::Error> for RefreshFailure {
    fn from(error: anyhow::Error) -> Self {
        Self::Internal(format!("{error:#}"))
    }
}

/// Who is asking: the connection, its tenant (whose OAuth client refreshes)
/// and its platform.
#[derive(Debug, Clone, Copy)]
pub struct Subject<'a> {
    /// The connection.
    pub connection_id: Uuid,
    /// The tenant owning it.
    pub tenant_client_id: Uuid,
    /// Its platform's key.
    pub platform_key: &'a str,
}

fn needs(credentials: &Value, need: Need<'_>) -> bool {
    match need {
        Need::IfExpiring => {
            oauth::expires_at(credentials).is_some_and(|at| at <= Utc::now() + REFRESH_AHEAD)
        }
        Need::Rejected(rejected) => oauth::access_token(credentials).ok() == Some(rejected),
    }
}

async fn read(
    db: &DatabaseConnection,
    keyring: &Keyring,
    connection_id: Uuid,
) -> Result<Opened, RefreshFailure> {
    credentials::read(db, keyring, connection_id)
        .await?
        .ok_or_else(|| {
            RefreshFailure::Platform(ConnectorError::Auth(
                "The connection has no stored authorization.".to_owned(),
            ))
        })
}

/// The connection's credentials, refreshed first when `need` says so.
pub async fn fresh_credentials(
    db: &DatabaseConnection,
    keyring: &Keyring,
    subject: Subject<'_>,
    endpoint: &TokenEndpoint,
    need: Need<'_>,
) -> Result<Value, RefreshFailure> {
    let owner = format!("refresh-{}", Uuid::new_v4().simple());
    let give_up = tokio::time::Instant::now() + LEASE * 2;
    loop {
        let current = read(db, keyring, subject.connection_id).await?;
        if !needs(&current.body, need) {
            return Ok(current.body);
        }
        let until = Utc::now() + chrono::Duration::from_std(LEASE).unwrap_or_default();
        if credentials::take_refresh_lease(db, subject.connection_id, &owner, until).await? {
            let outcome = refresh_holding_lease(db, keyring, subject, endpoint, need).await;
            credentials::release_refresh_lease(db, subject.connection_id, &owner).await?;
            match outcome? {
                Some(credentials) => return Ok(credentials),
                // The authorization was replaced meanwhile: look again.
                None => continue,
            }
        }
        if tokio::time::Instant::now() > give_up {
            return Err(RefreshFailure::Platform(ConnectorError::Failed(
                "Another refresh of this connection's tokens did not finish in time.".to_owned(),
            )));
        }
        tokio::time::sleep(POLL).await;
    }
}

/// Under the lease: re-reads, refreshes if still needed, and stores the new
/// tokens over the credential that was read. `None` if that credential was
/// replaced meanwhile.
async fn refresh_holding_lease(
    db: &DatabaseConnection,
    keyring: &Keyring,
    subject: Subject<'_>,
    endpoint: &TokenEndpoint,
    need: Need<'_>,
) -> Result<Option<Value>, RefreshFailure> {
    let current = read(db, keyring, subject.connection_id).await?;
    if !needs(&current.body, need) {
        return Ok(Some(current.body));
    }
    let platform = endpoint.platform;
    let Some(refresh_token) = oauth::refresh_token(&current.body) else {
        return Err(RefreshFailure::Platform(ConnectorError::Auth(format!(
            "The {platform} access token expired and no refresh token is stored; authorize the connection again."
        ))));
    };
    let client = oauth_clients::open(db, keyring, subject.tenant_client_id, subject.platform_key)
        .await?
        .ok_or_else(|| {
            RefreshFailure::NoOAuthClient(
                Problem::new(format!(
                    "The {platform} access token needs refreshing, but no OAuth client is stored for \
                     {platform}."
                ))
                .with_remedy(Remedy::SetOAuthClient {
                    platform_key: subject.platform_key.to_owned(),
                }),
            )
        })?;
    let refreshed = oauth::refresh(endpoint, &client, refresh_token)
        .await
        .map_err(|error| RefreshFailure::Platform(error.into_connector_error()))?;
    let updated = oauth::apply(&current.body, &refreshed, Utc::now());
    let stored = credentials::replace(
        db,
        keyring,
        subject.connection_id,
        &current.version,
        &updated,
        oauth::expires_at(&updated),
    )
    .await?;
    if !stored {
        tracing::warn!(connection_id = %subject.connection_id, platform, "the authorization was replaced during a refresh; using the new one");
        return Ok(None);
    }
    tracing::info!(
        connection_id = %subject.connection_id,
        platform,
        rotated = refreshed.refresh_token.is_some(),
        "refreshed the connection's tokens"
    );
    Ok(Some(updated))
}
