//! Data connections: their lifecycle, their authorization (token
//! migration), and every query on `connection` and
//! `connection_credential`, always scoped to the calling tenant through the
//! owning company.

use chrono::{DateTime, Utc};
use sea_orm::sea_query::{Expr, OnConflict};
use sea_orm::{
    ActiveEnum, ActiveModelTrait, ColumnTrait, ConnectionTrait, DatabaseConnection, EntityTrait,
    PaginatorTrait, QueryFilter, QueryOrder, QuerySelect, Set, TransactionTrait,
};
use uuid::Uuid;

use entity::{connection, connection_credential};

pub use entity::connection::ConnectionStatus;

use crate::companies;
use crate::crypto::{Keyring, Sealed};
use crate::error::{Error, FieldError, Problem, Remedy};
use crate::oauth_clients;
use crate::paging::PageRequest;
use crate::platforms::authorization::AcceptedAuthorization;
use crate::platforms::connector::{ConnectorError, Connectors};
use crate::platforms::kit::oauth::{self, RefreshError};
use crate::platforms::{self, Platform};
use crate::store::{self, StagingOf};
use crate::tenant::Tenant;
use crate::timestamp::Timestamp;

/// A connection with its non-secret authorization facts.
#[derive(Debug, Clone)]
pub struct ConnectionView {
    /// The row.
    pub connection: connection::Model,
    /// Its credential's facts, once authorized (never the sealed tokens' plaintext).
    pub credential: Option<CredentialFacts>,
}

/// What may be shown about a stored authorization.
#[derive(Debug, Clone)]
pub struct CredentialFacts {
    /// The platform's organization identifier.
    pub organization_id: String,
    /// When the access token expires, if it does.
    pub access_token_expires_at: Option<DateTime<Utc>>,
    /// When the authorization was last replaced.
    pub updated: DateTime<Utc>,
}

impl From<connection_credential::Model> for CredentialFacts {
    fn from(row: connection_credential::Model) -> Self {
        Self {
            organization_id: row.organization_id,
            access_token_expires_at: row.access_token_expires_at,
            updated: row.updated,
        }
    }
}

/// The associated data binding a sealed credential to its connection.
pub fn credential_binding(connection_id: Uuid) -> String {
    format!("tributary/connection-credential/{connection_id}")
}

fn not_found(connection_id: Uuid) -> Error {
    Error::not_found(format!(
        "No connection with id {connection_id} in this company."
    ))
}

fn integration_of(row: &connection::Model) -> Result<&'static Platform, Error> {
    platforms::find(&row.platform_key).ok_or_else(|| {
        Error::internal(anyhow::anyhow!(
            "stored platform key {:?} is not in the catalogue",
            row.platform_key
        ))
    })
}

/// Creates a `PendingAuth` connection to `platform_key` for the tenant's company.
pub async fn create(
    db: &impl ConnectionTrait,
    tenant: Tenant,
    company_id: Uuid,
    platform_key: &str,
) -> Result<ConnectionView, Error> {
    companies::find(db, tenant, company_id).await?;
    if platforms::find(platform_key).is_none() {
        return Err(Error::Invalid(vec![
            FieldError::new(
                "platformKey",
                format!("`{platform_key}` is not a known platform"),
            )
            .with_remedy(Remedy::ListPlatforms),
        ]));
    }
    let connection = connection::ActiveModel {
        id: Set(Uuid::now_v7()),
        company_id: Set(company_id),
        platform_key: Set(platform_key.to_owned()),
        status: Set(ConnectionStatus::PendingAuth),
        created: Set(Timestamp::now()),
        last_sync: Set(None),
    }
    .insert(db)
    .await?;
    Ok(ConnectionView {
        connection,
        credential: None,
    })
}

async fn find_row(
    db: &impl ConnectionTrait,
    tenant: Tenant,
    company_id: Uuid,
    connection_id: Uuid,
) -> Result<connection::Model, Error> {
    companies::find(db, tenant, company_id).await?;
    connection_of_company(db, company_id, connection_id).await
}

/// The connection of a company already checked to be the tenant's.
async fn connection_of_company(
    db: &impl ConnectionTrait,
    company_id: Uuid,
    connection_id: Uuid,
) -> Result<connection::Model, Error> {
    connection::Entity::find_by_id(connection_id)
        .filter(connection::Column::CompanyId.eq(company_id))
        .one(db)
        .await?
        .ok_or_else(|| not_found(connection_id))
}

async fn view_of(
    db: &impl ConnectionTrait,
    connection: connection::Model,
) -> Result<ConnectionView, Error> {
    let credential = connection_credential::Entity::find_by_id(connection.id)
        .one(db)
        .await?
        .map(CredentialFacts::from);
    Ok(ConnectionView {
        connection,
        credential,
    })
}

/// The tenant's connection `connection_id` of company `company_id`.
pub async fn find(
    db: &impl ConnectionTrait,
    tenant: Tenant,
    company_id: Uuid,
    connection_id: Uuid,
) -> Result<ConnectionView, Error> {
    let row = find_row(db, tenant, company_id, connection_id).await?;
    view_of(db, row).await
}

/// One page of a company's connections, oldest first (ties by id), and the total.
pub async fn list(
    db: &impl ConnectionTrait,
    tenant: Tenant,
    company_id: Uuid,
    page: PageRequest,
) -> Result<(Vec<ConnectionView>, u64), Error> {
    companies::find(db, tenant, company_id).await?;
    let of_company =
        connection::Entity::find().filter(connection::Column::CompanyId.eq(company_id));
    let total = of_company.clone().count(db).await?;
    let rows = of_company
        .order_by_asc(connection::Column::Created)
        .order_by_asc(connection::Column::Id)
        .offset(page.offset())
        .limit(page.limit())
        .all(db)
        .await?;
    let ids: Vec<Uuid> = rows.iter().map(|row| row.id).collect();
    let mut credentials = connection_credential::Entity::find()
        .filter(connection_credential::Column::ConnectionId.is_in(ids))
        .all(db)
        .await?;
    let views = rows
        .into_iter()
        .map(|connection| {
            let credential = credentials
                .iter()
                .position(|credential| credential.connection_id == connection.id)
                .map(|index| CredentialFacts::from(credentials.swap_remove(index)));
            ConnectionView {
                connection,
                credential,
            }
        })
        .collect();
    Ok((views, total))
}

/// Unlinks a `Linked` connection; any other status is a conflict.
///
/// One conditional UPDATE decides, so a concurrent unlink or delete cannot
/// slip between a check and the write.
pub async fn unlink(
    db: &impl ConnectionTrait,
    tenant: Tenant,
    company_id: Uuid,
    connection_id: Uuid,
) -> Result<ConnectionView, Error> {
    companies::find(db, tenant, company_id).await?;
    let updated = connection::Entity::update_many()
        .col_expr(
            connection::Column::Status,
            Expr::value(ConnectionStatus::Unlinked),
        )
        .filter(connection::Column::Id.eq(connection_id))
        .filter(connection::Column::CompanyId.eq(company_id))
        .filter(connection::Column::Status.eq(ConnectionStatus::Linked))
        .exec(db)
        .await?;
    let row = connection_of_company(db, company_id, connection_id).await?;
    if updated.rows_affected == 0 {
        return Err(Error::conflict(format!(
            "Only a Linked connection can be unlinked; this one is {}.",
            row.status.to_value()
        )));
    }
    view_of(db, row).await
}

/// Deletes a connection; the database cascades to its stored tokens and
/// synced data. One scoped DELETE: no read-then-write race.
pub async fn delete(
    db: &DatabaseConnection,
    tenant: Tenant,
    company_id: Uuid,
    connection_id: Uuid,
) -> Result<(), Error> {
    companies::find(db, tenant, company_id).await?;
    // One transaction: the staging tables have no foreign key to cascade
    // from, so their rows go with the connection or not at all.
    let txn = db.begin().await?;
    let deleted = connection::Entity::delete_many()
        .filter(connection::Column::Id.eq(connection_id))
        .filter(connection::Column::CompanyId.eq(company_id))
        .exec(&txn)
        .await?;
    if deleted.rows_affected == 0 {
        return Err(not_found(connection_id));
    }
    store::delete_staging(&txn, StagingOf::Connection(connection_id)).await?;
    txn.commit().await?;
    Ok(())
}

/// Token migration: validates `body` against the connection's platform,
/// proves the tokens with the platform when `verify` gives the connectors,
/// seals the body, stores it (replacing any earlier tokens) and links the
/// connection. Starts no sync.
pub async fn authorize(
    db: &DatabaseConnection,
    keyring: &Keyring,
    tenant: Tenant,
    company_id: Uuid,
    connection_id: Uuid,
    body: serde_json::Value,
    verify: Option<&Connectors>,
) -> Result<ConnectionView, Error> {
    let row = find_row(db, tenant, company_id, connection_id).await?;
    let integration = integration_of(&row)?;
    let Some(body_kind) = integration.authorization else {
        return Err(Error::unprocessable(no_self_service(integration)));
    };
    let now = Timestamp::now();
    let accepted = match body_kind.accept(body.clone(), now) {
        Ok(accepted) => accepted,
        Err(Error::Invalid(errors)) => {
            // A well-formed body for the wrong platform deserves a sentence
            // saying so rather than a list of fields.
            let others =
                platforms::authorization::platforms_of_body(&body, integration.platform_key);
            if !others.is_empty() {
                let other = others
                    .iter()
                    .map(|other| other.name)
                    .collect::<Vec<_>>()
                    .join(" or ");
                return Err(Error::Conflict(
                    Problem::new(format!(
                        "This body is a {other} authorization, but connection {connection_id} is to {this}: send \
                         the fields of {schema}, or create a connection to {other}.",
                        this = integration.name,
                        schema = body_kind.schema_name(),
                    ))
                    .with_remedy(Remedy::ReadAuthorizationSchema {
                        platform_key: integration.platform_key.to_owned(),
                    }),
                ));
            }
            return Err(Error::Invalid(errors));
        }
        Err(error) => return Err(error),
    };
    let mut accepted = accepted;
    if let Some(connectors) = verify {
        verify_tokens(db, keyring, tenant, integration, connectors, &mut accepted).await?;
    }
    let plaintext = serde_json::to_vec(&accepted.sealed_body).map_err(Error::internal)?;
    let sealed = keyring
        .seal(&plaintext, &credential_binding(connection_id))
        .map_err(Error::internal)?;

    let txn = db.begin().await?;
    // The transaction starts with its write, so SQLite takes the write lock
    // first (a read-then-write transaction cannot wait for it), and a
    // connection deleted meanwhile is a 404, not a foreign-key failure.
    let linked = connection::Entity::update_many()
        .col_expr(
            connection::Column::Status,
            Expr::value(ConnectionStatus::Linked),
        )
        .filter(connection::Column::Id.eq(connection_id))
        .filter(connection::Column::CompanyId.eq(company_id))
        .exec(&txn)
        .await?;
    if linked.rows_affected == 0 {
        return Err(not_found(connection_id));
    }
    store_credential(
        &txn,
        connection_id,
        &accepted.organization_id,
        accepted.access_token_expires_at,
        now,
        sealed,
    )
    .await?;
    txn.commit().await?;
    let row = connection_of_company(db, company_id, row.id).await?;
    view_of(db, row).await
}

/// `?verify=true`: one cheap authenticated call to the platform, or, when
/// the access token has already expired, a refresh with the tenant's OAuth
/// client (whose new tokens are then the ones stored: a rotated refresh
/// token must not be lost). Rejection is a 422 with the platform's reason;
/// a platform that cannot be reached is a 503. Nothing is stored on failure.
async fn verify_tokens(
    db: &DatabaseConnection,
    keyring: &Keyring,
    tenant: Tenant,
    integration: &Platform,
    connectors: &Connectors,
    accepted: &mut AcceptedAuthorization,
) -> Result<(), Error> {
    let name = integration.name;
    let cannot_verify = || {
        Error::unprocessable(format!(
            "tributary cannot verify {name} tokens yet (it has no connector for {name}); send them \
             without `verify`."
        ))
    };
    let connector = connectors
        .get(integration.platform_key)
        .ok_or_else(cannot_verify)?;
    let body = &accepted.sealed_body;
    let now = Utc::now();
    // A platform without a token endpoint (the sandbox, whose tokens never
    // lapse for it) is asked directly, expired or not.
    let expired = accepted.access_token_expires_at.is_some_and(|at| at <= now);
    if expired && let Some(endpoint) = connector.token_endpoint(body) {
        let refresh_token = oauth::refresh_token(body).ok_or_else(|| {
            Error::unprocessable(
                "The access token has already expired and no refresh token was given. Nothing was stored."
                    .to_owned(),
            )
        })?;
        let client = oauth_clients::open(db, keyring, tenant.client_id, integration.platform_key)
            .await
            .map_err(Error::internal)?
            .ok_or_else(|| {
                Error::Unprocessable(
                    Problem::new(
                        "The access token has already expired, so verifying needs a refresh with your OAuth \
                         application, and none is stored. Nothing was stored.",
                    )
                    .with_remedy(Remedy::SetOAuthClient {
                        platform_key: integration.platform_key.to_owned(),
                    }),
                )
            })?;
        let refreshed = oauth::refresh(&endpoint, &client, refresh_token)
            .await
            .map_err(|error| match error {
                RefreshError::Unavailable(message) => Error::Unavailable(Problem::new(format!(
                    "{message}. Nothing was stored; try again."
                ))),
                RefreshError::Rejected(message) | RefreshError::Failed(message) => {
                    Error::unprocessable(format!("{message}. Nothing was stored."))
                }
            })?;
        accepted.sealed_body = oauth::apply(body, &refreshed, now);
        accepted.access_token_expires_at = oauth::expires_at(&accepted.sealed_body);
        return Ok(());
    }
    let check = connector.verify(body).ok_or_else(cannot_verify)?;
    check.await.map_err(|error| match error {
        ConnectorError::Unavailable(message) => Error::Unavailable(Problem::new(format!(
            "{message}. Nothing was stored; try again."
        ))),
        ConnectorError::Auth(message)
        | ConnectorError::Expired(message)
        | ConnectorError::Failed(message) => Error::unprocessable(format!(
            "{name} did not accept the tokens: {message}. Nothing was stored."
        )),
    })
}

fn no_self_service(integration: &Platform) -> String {
    if integration.managed_migration {
        format!(
            "{} does not support self-service token migration. Its connections are moved by a managed \
             migration, run with our support team: contact support to schedule one.",
            integration.name
        )
    } else {
        format!(
            "{} does not support self-service token migration, and no managed migration is offered for \
             it: its end customers need to connect again.",
            integration.name
        )
    }
}

async fn store_credential(
    db: &impl ConnectionTrait,
    connection_id: Uuid,
    organization_id: &str,
    access_token_expires_at: Option<DateTime<Utc>>,
    updated: DateTime<Utc>,
    sealed: Sealed,
) -> Result<(), Error> {
    let credential = connection_credential::ActiveModel {
        connection_id: Set(connection_id),
        organization_id: Set(organization_id.to_owned()),
        access_token_expires_at: Set(access_token_expires_at),
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

/// Outcome of [`rotate_credentials`].
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Rotation {
    /// Credentials re-encrypted under the current key.
    pub rotated: u64,
    /// Credentials already under the current key.
    pub current: u64,
    /// Credentials still under another key (replaced while the run read
    /// them, three passes in a row); run the rotation again.
    pub remaining: u64,
}

/// The key ids stored credentials use that `keyring` lacks: starting with
/// any would leave those tokens unreadable.
pub async fn unknown_key_ids(
    db: &DatabaseConnection,
    keyring: &Keyring,
) -> Result<Vec<String>, sea_orm::DbErr> {
    let stored: Vec<String> = connection_credential::Entity::find()
        .select_only()
        .column(connection_credential::Column::KeyId)
        .distinct()
        .into_tuple()
        .all(db)
        .await?;
    let mut missing: Vec<String> = stored
        .into_iter()
        .chain(oauth_clients::key_ids(db).await?)
        .filter(|id| !keyring.has_key(id))
        .collect();
    missing.sort();
    missing.dedup();
    Ok(missing)
}

/// Re-encrypts every stored credential under the keyring's current key.
///
/// Each credential is rewritten on its own, only if it still holds the
/// ciphertext that was read, so the command can be interrupted and run
/// again, and never overwrites a concurrent re-authorization. A credential
/// that fails to decrypt stops the run with its connection id.
pub async fn rotate_credentials(
    db: &DatabaseConnection,
    keyring: &Keyring,
) -> anyhow::Result<Rotation> {
    let current_key = keyring.current_key_id().to_owned();
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
            if row.key_id == current_key {
                rotation.current += 1;
                continue;
            }
            let binding = credential_binding(row.connection_id);
            let sealed = Sealed {
                key_id: row.key_id.clone(),
                nonce: row.nonce.clone(),
                ciphertext: row.ciphertext.clone(),
            };
            let plaintext = keyring
                .open(&sealed, &binding)
                .map_err(|error| anyhow::anyhow!("connection {}: {error}", row.connection_id))?;
            let resealed = keyring.seal(&plaintext, &binding)?;
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

/// Opens the sealed authorization body of a connection (for connectors and tests).
pub async fn open_credential(
    db: &impl ConnectionTrait,
    keyring: &Keyring,
    connection_id: Uuid,
) -> anyhow::Result<Option<serde_json::Value>> {
    let Some(row) = connection_credential::Entity::find_by_id(connection_id)
        .one(db)
        .await?
    else {
        return Ok(None);
    };
    let sealed = Sealed {
        key_id: row.key_id,
        nonce: row.nonce,
        ciphertext: row.ciphertext,
    };
    let plaintext = keyring
        .open(&sealed, &credential_binding(connection_id))
        .map_err(|error| anyhow::anyhow!("connection {connection_id}: {error}"))?;
    Ok(Some(serde_json::from_slice(&plaintext)?))
}
