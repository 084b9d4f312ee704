//! `connection_credential`: a connection's authorization body, sealed in
//! the [vault](crate::vault) and bound to the connection, beside the facts
//! the API may show (organization id, expiry); the refresh lease that keeps
//! one refresh per connection at a time (see `sync::refresh`); and
//! re-sealing under a new key.

use chrono::{DateTime, Utc};
use sea_orm::sea_query::{Condition, OnConflict};
use sea_orm::{
    ColumnTrait, ConnectionTrait, EntityTrait, QueryFilter, QueryOrder, QuerySelect, Set,
};
use serde_json::Value;
use uuid::Uuid;

use entity::connection_credential;

use crate::crypto::{Keyring, Sealed};
use crate::error::Error;
use crate::platforms::authorization::AcceptedAuthorization;
use crate::vault::{self, Owner, Rotation};

fn sealed(row: &connection_credential::Model) -> Sealed {
    Sealed {
        key_id: row.key_id.clone(),
        nonce: row.nonce.clone(),
        ciphertext: row.ciphertext.clone(),
    }
}

/// Seals `accepted` for the connection and stores it in place of any
/// earlier credential (inside the caller's transaction).
pub async fn store(
    db: &impl ConnectionTrait,
    keyring: &Keyring,
    connection_id: Uuid,
    accepted: &AcceptedAuthorization,
    updated: DateTime<Utc>,
) -> Result<(), Error> {
    let sealed = vault::seal_json(
        keyring,
        Owner::Connection(connection_id),
        &accepted.sealed_body,
    )
    .map_err(Error::internal)?;
    let credential = connection_credential::ActiveModel {
        connection_id: Set(connection_id),
        organization_id: Set(accepted.organization_id.clone()),
        access_token_expires_at: Set(accepted.access_token_expires_at),
        updated: Set(updated),
        key_id: Set(sealed.key_id),
        nonce: Set(sealed.nonce),
        ciphertext: Set(sealed.ciphertext),
        refresh_lease_owner: Set(None),
        refresh_lease_expires_at: Set(None),
    };
    connection_credential::Entity::insert(credential)
        .on_conflict(
            OnConflict::column(connection_credential::Column::ConnectionId)
                .update_columns([
                    connection_credential::Column::OrganizationId,
                    connection_credential::Column::AccessTokenExpiresAt,
                    connection_credential::Column::Updated,
                    connection_credential::Column::KeyId,
                    connection_credential::Column::Nonce,
                    connection_credential::Column::Ciphertext,
                ])
                .to_owned(),
        )
        .exec(db)
        .await?;
    Ok(())
}

/// A stored credential, opened: its body and the version read (the nonce,
/// new with every write), so a later write can apply only over it.
#[derive(Debug)]
pub struct Opened {
    /// The authorization body (with `expiresAt`, and what refreshes added).
    pub body: Value,
    /// Which write of the credential this is.
    pub version: Vec<u8>,
    /// The platform's organization identifier (not secret).
    pub organization_id: String,
}

/// The connection's credential, opened; `None` when it has none.
pub async fn read(
    db: &impl ConnectionTrait,
    keyring: &Keyring,
    connection_id: Uuid,
) -> anyhow::Result<Option<Opened>> {
    let Some(row) = connection_credential::Entity::find_by_id(connection_id)
        .one(db)
        .await?
    else {
        return Ok(None);
    };
    let body = vault::open_json(keyring, Owner::Connection(connection_id), &sealed(&row))?;
    Ok(Some(Opened {
        body,
        version: row.nonce,
        organization_id: row.organization_id,
    }))
}

/// The organization id of the connection's stored authorization, if it has one.
pub async fn organization_of(
    db: &impl ConnectionTrait,
    connection_id: Uuid,
) -> Result<Option<String>, sea_orm::DbErr> {
    Ok(connection_credential::Entity::find_by_id(connection_id)
        .one(db)
        .await?
        .map(|row| row.organization_id))
}

/// Opens the sealed authorization body of a connection (for connectors and tests).
pub async fn open_credential(
    db: &impl ConnectionTrait,
    keyring: &Keyring,
    connection_id: Uuid,
) -> anyhow::Result<Option<Value>> {
    Ok(read(db, keyring, connection_id)
        .await?
        .map(|opened| opened.body))
}

/// Replaces the body of version `version` by `body` (refreshed tokens)
/// and its expiry; `false` when the credential was replaced meanwhile (a
/// re-authorization wins) and nothing was written.
pub async fn replace(
    db: &impl ConnectionTrait,
    keyring: &Keyring,
    connection_id: Uuid,
    version: &[u8],
    body: &Value,
    expires_at: Option<DateTime<Utc>>,
) -> anyhow::Result<bool> {
    let sealed = vault::seal_json(keyring, Owner::Connection(connection_id), body)?;
    let stored = connection_credential::Entity::update_many()
        .col_expr(connection_credential::Column::KeyId, sealed.key_id.into())
        .col_expr(connection_credential::Column::Nonce, sealed.nonce.into())
        .col_expr(
            connection_credential::Column::Ciphertext,
            sealed.ciphertext.into(),
        )
        .col_expr(
            connection_credential::Column::AccessTokenExpiresAt,
            expires_at.into(),
        )
        .filter(connection_credential::Column::ConnectionId.eq(connection_id))
        .filter(connection_credential::Column::Nonce.eq(version))
        .exec(db)
        .await?;
    Ok(stored.rows_affected == 1)
}

/// Takes the refresh lease for `owner` until `until`, if nobody holds a
/// live one. One conditional UPDATE: it works alike on SQLite and
/// PostgreSQL, and holds no transaction open during the refresh.
pub async fn take_refresh_lease(
    db: &impl ConnectionTrait,
    connection_id: Uuid,
    owner: &str,
    until: DateTime<Utc>,
) -> Result<bool, sea_orm::DbErr> {
    let now = Utc::now();
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

/// Gives up `owner`'s refresh lease.
pub async fn release_refresh_lease(
    db: &impl ConnectionTrait,
    connection_id: Uuid,
    owner: &str,
) -> Result<(), sea_orm::DbErr> {
    connection_credential::Entity::update_many()
        .col_expr(
            connection_credential::Column::RefreshLeaseOwner,
            Option::<String>::None.into(),
        )
        .col_expr(
            connection_credential::Column::RefreshLeaseExpiresAt,
            Option::<DateTime<Utc>>::None.into(),
        )
        .filter(connection_credential::Column::ConnectionId.eq(connection_id))
        .filter(connection_credential::Column::RefreshLeaseOwner.eq(owner))
        .exec(db)
        .await?;
    Ok(())
}

/// The key ids stored credentials are sealed with.
pub async fn key_ids(db: &impl ConnectionTrait) -> Result<Vec<String>, sea_orm::DbErr> {
    connection_credential::Entity::find()
        .select_only()
        .column(connection_credential::Column::KeyId)
        .distinct()
        .into_tuple()
        .all(db)
        .await
}

/// Re-seals every stored credential under the keyring's current key.
///
/// Each credential is rewritten on its own, only if it still holds the
/// ciphertext that was read, so the command can be interrupted and run
/// again, and never overwrites a concurrent re-authorization. A credential
/// that fails to open stops the run with its connection id.
pub async fn rotate(db: &impl ConnectionTrait, keyring: &Keyring) -> anyhow::Result<Rotation> {
    let mut rotation = Rotation::default();
    let mut after = Uuid::nil();
    loop {
        let batch = connection_credential::Entity::find()
            .filter(connection_credential::Column::ConnectionId.gt(after))
            .order_by_asc(connection_credential::Column::ConnectionId)
            .limit(500)
            .all(db)
            .await?;
        let Some(last) = batch.last() else { break };
        after = last.connection_id;
        for row in batch {
            let owner = Owner::Connection(row.connection_id);
            let Some(resealed) = vault::reseal(keyring, owner, &sealed(&row))? else {
                rotation.current += 1;
                continue;
            };
            let updated = connection_credential::Entity::update_many()
                .col_expr(connection_credential::Column::KeyId, resealed.key_id.into())
                .col_expr(connection_credential::Column::Nonce, resealed.nonce.into())
                .col_expr(
                    connection_credential::Column::Ciphertext,
                    resealed.ciphertext.into(),
                )
                .filter(connection_credential::Column::ConnectionId.eq(row.connection_id))
                .filter(connection_credential::Column::Nonce.eq(row.nonce))
                .exec(db)
                .await?;
            if updated.rows_affected == 1 {
                rotation.rotated += 1;
            } else {
                rotation.remaining += 1;
            }
        }
    }
    Ok(rotation)
}
