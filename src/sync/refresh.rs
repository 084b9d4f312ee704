//! Keeping a connection's tokens fresh: refresh before an access token
//! expires (within [`REFRESH_AHEAD`]) and after a platform rejects one, at
//! most one refresh per connection at a time across every worker and
//! process.
//!
//! The lock is a lease on the credential row, taken with one conditional
//! UPDATE (works alike on SQLite and PostgreSQL, and holds no transaction
//! open during the HTTP call). Whoever holds it re-reads the credential
//! first: another worker may have refreshed meanwhile. A rotated refresh
//! token is sealed and committed before the new access token is used, and
//! only over the credential that was refreshed (a re-authorization that
//! landed meanwhile wins). Whoever waits polls until the lease is released
//! or lapses, then uses what the holder stored.

use std::time::Duration;

use chrono::Utc;
use sea_orm::sea_query::Condition;
use sea_orm::{ColumnTrait, DatabaseConnection, EntityTrait, QueryFilter};
use serde_json::Value;
use uuid::Uuid;

use entity::connection_credential;

use crate::connections::credential_binding;
use crate::crypto::{Keyring, Sealed};
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
    /// The platform (or the missing OAuth client) stopped it, in words.
    Platform(ConnectorError),
    /// A database or keyring failure; logged, not shown.
    Internal(String),
}

impl From<sea_orm::DbErr> for RefreshFailure {
    fn from(error: sea_orm::DbErr) -> Self {
        Self::Internal(error.to_string())
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

fn open(keyring: &Keyring, row: &connection_credential::Model) -> Result<Value, RefreshFailure> {
    let sealed = Sealed {
        key_id: row.key_id.clone(),
        nonce: row.nonce.clone(),
        ciphertext: row.ciphertext.clone(),
    };
    let plaintext = keyring
        .open(&sealed, &credential_binding(row.connection_id))
        .map_err(|error| RefreshFailure::Internal(format!("opening the credential: {error}")))?;
    serde_json::from_slice(&plaintext)
        .map_err(|error| RefreshFailure::Internal(format!("reading the credential: {error}")))
}

async fn read(
    db: &DatabaseConnection,
    keyring: &Keyring,
    connection_id: Uuid,
) -> Result<(connection_credential::Model, Value), RefreshFailure> {
    let row = connection_credential::Entity::find_by_id(connection_id)
        .one(db)
        .await?
        .ok_or_else(|| {
            RefreshFailure::Platform(ConnectorError::Auth(
                "The connection has no stored authorization.".to_owned(),
            ))
        })?;
    let credentials = open(keyring, &row)?;
    Ok((row, credentials))
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
        let (_, credentials) = read(db, keyring, subject.connection_id).await?;
        if !needs(&credentials, need) {
            return Ok(credentials);
        }
        if take_lease(db, subject.connection_id, &owner).await? {
            let outcome = refresh_holding_lease(db, keyring, subject, endpoint, need).await;
            release_lease(db, subject.connection_id, &owner).await?;
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

/// Takes the refresh lease if nobody holds a live one.
async fn take_lease(
    db: &DatabaseConnection,
    connection_id: Uuid,
    owner: &str,
) -> Result<bool, RefreshFailure> {
    let now = Utc::now();
    let until = now + chrono::Duration::from_std(LEASE).unwrap_or_default();
    let taken = connection_credential::Entity::update_many()
        .col_expr(
            connection_credential::Column::RefreshLeaseOwner,
            Some(owner.to_owned()).into(),
        )
        .col_expr(
            connection_credential::Column::RefreshLeaseExpiresAt,
            Some(until).into(),
        )
        .filter(connection_credential::Column::ConnectionId.eq(connection_id))
        .filter(
            Condition::any()
                .add(connection_credential::Column::RefreshLeaseExpiresAt.is_null())
                .add(connection_credential::Column::RefreshLeaseExpiresAt.lt(now)),
        )
        .exec(db)
        .await?;
    Ok(taken.rows_affected == 1)
}

async fn release_lease(
    db: &DatabaseConnection,
    connection_id: Uuid,
    owner: &str,
) -> Result<(), RefreshFailure> {
    connection_credential::Entity::update_many()
        .col_expr(
            connection_credential::Column::RefreshLeaseOwner,
            Option::<String>::None.into(),
        )
        .col_expr(
            connection_credential::Column::RefreshLeaseExpiresAt,
            Option::<chrono::DateTime<Utc>>::None.into(),
        )
        .filter(connection_credential::Column::ConnectionId.eq(connection_id))
        .filter(connection_credential::Column::RefreshLeaseOwner.eq(owner))
        .exec(db)
        .await?;
    Ok(())
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
    let (row, credentials) = read(db, keyring, subject.connection_id).await?;
    if !needs(&credentials, need) {
        return Ok(Some(credentials));
    }
    let platform = endpoint.platform;
    let Some(refresh_token) = oauth::refresh_token(&credentials) else {
        return Err(RefreshFailure::Platform(ConnectorError::Auth(format!(
            "The {platform} access token expired and no refresh token is stored; authorize the connection again."
        ))));
    };
    let client = oauth_clients::open(db, keyring, subject.tenant_client_id, subject.platform_key)
        .await
        .map_err(|error| RefreshFailure::Internal(format!("{error:#}")))?
        .ok_or_else(|| {
            RefreshFailure::Platform(ConnectorError::Failed(format!(
                "The {platform} access token needs refreshing, but no OAuth client is stored for {platform}: \
                 PUT /integrations/{}/oauth-client with the application that issued the tokens.",
                subject.platform_key
            )))
        })?;
    let refreshed = oauth::refresh(endpoint, &client, refresh_token)
        .await
        .map_err(|error| RefreshFailure::Platform(error.into_connector_error()))?;
    let now = Utc::now();
    let updated = oauth::apply(&credentials, &refreshed, now);
    let plaintext = serde_json::to_vec(&updated)
        .map_err(|error| RefreshFailure::Internal(error.to_string()))?;
    let sealed = keyring
        .seal(&plaintext, &credential_binding(subject.connection_id))
        .map_err(|error| RefreshFailure::Internal(format!("{error:#}")))?;
    let stored = connection_credential::Entity::update_many()
        .col_expr(connection_credential::Column::KeyId, sealed.key_id.into())
        .col_expr(connection_credential::Column::Nonce, sealed.nonce.into())
        .col_expr(
            connection_credential::Column::Ciphertext,
            sealed.ciphertext.into(),
        )
        .col_expr(
            connection_credential::Column::AccessTokenExpiresAt,
            oauth::expires_at(&updated).into(),
        )
        .filter(connection_credential::Column::ConnectionId.eq(subject.connection_id))
        .filter(connection_credential::Column::Nonce.eq(row.nonce))
        .exec(db)
        .await?;
    if stored.rows_affected == 0 {
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
