//! Tenants' own OAuth applications, one per platform: the client id and the
//! client secret (sealed in the vault, bound to its tenant and platform,
//! never returned or logged). Refreshing a migrated token needs the
//! application that obtained it.

use chrono::{DateTime, Utc};
use sea_orm::sea_query::OnConflict;
use sea_orm::{ColumnTrait, ConnectionTrait, EntityTrait, QueryFilter, QuerySelect, Set};
use uuid::Uuid;

use entity::oauth_client;

use crate::crypto::{Keyring, Sealed};
use crate::error::{Error, Problem, Remedy};
use crate::platforms::kit::oauth::OAuthClient;
use crate::platforms::{self, Platform};
use crate::tenant::Tenant;
use crate::timestamp::Timestamp;
use crate::vault::{self, Owner, Rotation};

/// What may be shown about a stored OAuth client.
#[derive(Debug, Clone)]
pub struct OAuthClientFacts {
    /// The platform's key.
    pub platform_key: String,
    /// The OAuth application's client id.
    pub client_id: String,
    /// When it was last set.
    pub updated: DateTime<Utc>,
}

impl From<oauth_client::Model> for OAuthClientFacts {
    fn from(row: oauth_client::Model) -> Self {
        Self {
            platform_key: row.platform_key,
            client_id: row.oauth_client_id,
            updated: row.updated,
        }
    }
}

fn platform(platform_key: &str) -> Result<&'static Platform, Error> {
    let integration = platforms::find(platform_key).ok_or_else(|| {
        Error::NotFound(
            Problem::new(format!("No integration with platformKey `{platform_key}`."))
                .with_remedy(Remedy::ListPlatforms),
        )
    })?;
    // The OAuth-client resource exists only for platforms whose tokens
    // tributary refreshes: for the others it is not found (not a 422: the
    // answer depends on the path alone, never on the body or on state).
    if !integration.self_service_migration() {
        return Err(Error::not_found(format!(
            "{} has no OAuth client resource: it does not support self-service token migration, so \
             tributary never refreshes its tokens.",
            integration.name
        )));
    }
    Ok(integration)
}

fn not_set(integration: &Platform) -> Error {
    Error::NotFound(
        Problem::new(format!(
            "No OAuth client is stored for {} ({}).",
            integration.name, integration.platform_key
        ))
        .with_remedy(Remedy::SetOAuthClient {
            platform_key: integration.platform_key.to_owned(),
        }),
    )
}

/// Stores (or replaces) the tenant's OAuth client for a platform.
pub async fn put(
    db: &impl ConnectionTrait,
    keyring: &Keyring,
    tenant: Tenant,
    platform_key: &str,
    client_id: &str,
    client_secret: &str,
) -> Result<OAuthClientFacts, Error> {
    let integration = platform(platform_key)?;
    let owner = Owner::OAuthClient {
        client_id: tenant.client_id,
        platform_key: integration.platform_key,
    };
    let sealed = vault::seal(keyring, owner, client_secret.as_bytes()).map_err(Error::internal)?;
    let row = oauth_client::ActiveModel {
        client_id: Set(tenant.client_id),
        platform_key: Set(integration.platform_key.to_owned()),
        oauth_client_id: Set(client_id.to_owned()),
        updated: Set(Timestamp::now()),
        key_id: Set(sealed.key_id),
        nonce: Set(sealed.nonce),
        ciphertext: Set(sealed.ciphertext),
    };
    oauth_client::Entity::insert(row)
        .on_conflict(
            OnConflict::columns([
                oauth_client::Column::ClientId,
                oauth_client::Column::PlatformKey,
            ])
            .update_columns([
                oauth_client::Column::OauthClientId,
                oauth_client::Column::Updated,
                oauth_client::Column::KeyId,
                oauth_client::Column::Nonce,
                oauth_client::Column::Ciphertext,
            ])
            .to_owned(),
        )
        .exec(db)
        .await?;
    get(db, tenant, platform_key).await
}

/// The tenant's OAuth client for a platform (never its secret).
pub async fn get(
    db: &impl ConnectionTrait,
    tenant: Tenant,
    platform_key: &str,
) -> Result<OAuthClientFacts, Error> {
    let integration = platform(platform_key)?;
    oauth_client::Entity::find_by_id((tenant.client_id, integration.platform_key.to_owned()))
        .one(db)
        .await?
        .map(OAuthClientFacts::from)
        .ok_or_else(|| not_set(integration))
}

/// Removes the tenant's OAuth client for a platform.
pub async fn delete(
    db: &impl ConnectionTrait,
    tenant: Tenant,
    platform_key: &str,
) -> Result<(), Error> {
    let integration = platform(platform_key)?;
    let deleted = oauth_client::Entity::delete_many()
        .filter(oauth_client::Column::ClientId.eq(tenant.client_id))
        .filter(oauth_client::Column::PlatformKey.eq(integration.platform_key))
        .exec(db)
        .await?;
    if deleted.rows_affected == 0 {
        return Err(not_set(integration));
    }
    Ok(())
}

/// The OAuth client (with its opened secret) a refresh uses, if stored.
pub async fn open(
    db: &impl ConnectionTrait,
    keyring: &Keyring,
    tenant_client_id: Uuid,
    platform_key: &str,
) -> anyhow::Result<Option<OAuthClient>> {
    let Some(row) = oauth_client::Entity::find_by_id((tenant_client_id, platform_key.to_owned()))
        .one(db)
        .await?
    else {
        return Ok(None);
    };
    let owner = Owner::OAuthClient {
        client_id: tenant_client_id,
        platform_key,
    };
    let secret = vault::open(keyring, owner, &sealed(&row))?;
    Ok(Some(OAuthClient {
        client_id: row.oauth_client_id,
        client_secret: String::from_utf8(secret)?,
    }))
}

/// The client id of the OAuth application `tenant_client_id` stored for
/// `platform_key`, if any (not secret: the secret is not read).
pub async fn application_of(
    db: &impl ConnectionTrait,
    tenant_client_id: Uuid,
    platform_key: &str,
) -> Result<Option<String>, sea_orm::DbErr> {
    Ok(
        oauth_client::Entity::find_by_id((tenant_client_id, platform_key.to_owned()))
            .one(db)
            .await?
            .map(|row| row.oauth_client_id),
    )
}

/// The key ids stored OAuth client secrets use.
pub async fn key_ids(db: &impl ConnectionTrait) -> Result<Vec<String>, sea_orm::DbErr> {
    oauth_client::Entity::find()
        .select_only()
        .column(oauth_client::Column::KeyId)
        .distinct()
        .into_tuple()
        .all(db)
        .await
}

/// Re-seals every stored client secret under the keyring's current key,
/// each only if unchanged since read.
pub async fn rotate(db: &impl ConnectionTrait, keyring: &Keyring) -> anyhow::Result<Rotation> {
    let mut rotation = Rotation::default();
    for row in oauth_client::Entity::find().all(db).await? {
        let owner = Owner::OAuthClient {
            client_id: row.client_id,
            platform_key: &row.platform_key,
        };
        let Some(resealed) = vault::reseal(keyring, owner, &sealed(&row))? else {
            rotation.current += 1;
            continue;
        };
        let updated = oauth_client::Entity::update_many()
            .col_expr(oauth_client::Column::KeyId, resealed.key_id.into())
            .col_expr(oauth_client::Column::Nonce, resealed.nonce.into())
            .col_expr(oauth_client::Column::Ciphertext, resealed.ciphertext.into())
            .filter(oauth_client::Column::ClientId.eq(row.client_id))
            .filter(oauth_client::Column::PlatformKey.eq(row.platform_key.as_str()))
            .filter(oauth_client::Column::Nonce.eq(row.nonce.clone()))
            .exec(db)
            .await?;
        if updated.rows_affected == 1 {
            rotation.rotated += 1;
        } else {
            rotation.remaining += 1;
        }
    }
    Ok(rotation)
}

fn sealed(row: &oauth_client::Model) -> Sealed {
    Sealed {
        key_id: row.key_id.clone(),
        nonce: row.nonce.clone(),
        ciphertext: row.ciphertext.clone(),
    }
}
