//! Token migration (`PUT .../authorization`): a body validated against the
//! connection's platform, optionally proved with the platform first
//! (`?verify=true`), sealed, stored in place of any earlier tokens, and the
//! connection linked. No sync starts.

use chrono::Utc;
use sea_orm::sea_query::Expr;
use sea_orm::{
    ColumnTrait, ConnectionTrait, DatabaseConnection, EntityTrait, QueryFilter, TransactionTrait,
};
use uuid::Uuid;

use entity::connection;

use super::{
    ConnectionStatus, ConnectionView, connection_of_company, find_row, not_found, platform_of,
    view_of,
};
use crate::crypto::Keyring;
use crate::error::{Error, Problem, Remedy};
use crate::oauth_clients;
use crate::platforms::authorization::AcceptedAuthorization;
use crate::platforms::connector::{ConnectorError, Connectors};
use crate::platforms::kit::oauth::{self, RefreshError};
use crate::platforms::{self, Platform};
use crate::tenant::Tenant;
use crate::timestamp::Timestamp;
use crate::webhooks::{self, EventType};

/// Token migration: validates `body` against the connection's platform,
/// proves the tokens with the platform when `verify` gives the connectors,
/// seals the body, stores it (replacing any earlier tokens), links the
/// connection and announces `connection.connected`. Starts no sync.
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
    let platform = platform_of(&row)?;
    let Some(body_kind) = platform.authorization else {
        return Err(Error::unprocessable(no_self_service(platform)));
    };
    let now = Timestamp::now();
    let accepted = match body_kind.accept(body.clone(), now) {
        Ok(accepted) => accepted,
        Err(Error::Invalid(errors)) => {
            // A well-formed body for the wrong platform deserves a sentence
            // saying so rather than a list of fields.
            let others = platforms::authorization::platforms_of_body(&body, platform.platform_key);
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
                        this = platform.name,
                        schema = body_kind.schema_name(),
                    ))
                    .with_remedy(Remedy::ReadAuthorizationSchema {
                        platform_key: platform.platform_key.to_owned(),
                    }),
                ));
            }
            return Err(Error::Invalid(errors));
        }
        Err(error) => return Err(error),
    };
    let mut accepted = accepted;
    same_organization(db, platform, &row, &accepted.organization_id).await?;
    if let Some(connectors) = verify {
        verify_tokens(db, keyring, tenant, platform, connectors, &mut accepted).await?;
    }
    let txn = db.begin().await?;
    let linked_row = link(&txn, keyring, tenant, row, &accepted, now).await?;
    txn.commit().await?;
    let row = connection_of_company(db, company_id, linked_row.id).await?;
    view_of(db, row).await
}

/// Inside the caller's transaction: links `row`, stores `accepted` as its
/// credential (replacing any earlier one) and announces
/// `connection.connected` (`connection.reconnected` when it was
/// `Deauthorized`). Its first statement is the write, so SQLite
/// takes the write lock first (a read-then-write transaction cannot wait
/// for it), and a connection deleted meanwhile is a 404, not a foreign-key
/// failure.
pub async fn link(
    db: &impl ConnectionTrait,
    keyring: &Keyring,
    tenant: Tenant,
    row: connection::Model,
    accepted: &AcceptedAuthorization,
    now: chrono::DateTime<Utc>,
) -> Result<connection::Model, Error> {
    let linked = connection::Entity::update_many()
        .col_expr(
            connection::Column::Status,
            Expr::value(ConnectionStatus::Linked),
        )
        .filter(connection::Column::Id.eq(row.id))
        .filter(connection::Column::CompanyId.eq(row.company_id))
        .exec(db)
        .await?;
    if linked.rows_affected == 0 {
        return Err(not_found(row.id));
    }
    super::credentials::store(db, keyring, row.id, accepted, now).await?;
    let event_type = if row.status == ConnectionStatus::Deauthorized {
        EventType::ConnectionReconnected
    } else {
        EventType::ConnectionConnected
    };
    let linked_row = connection::Model {
        status: ConnectionStatus::Linked,
        ..row
    };
    let event = super::event(event_type, tenant, &linked_row);
    webhooks::record(db, event).await?;
    Ok(linked_row)
}

/// A connection that already has an organization keeps it: tokens for
/// another organization are refused (a 409 naming both), since moving to
/// another organization means a new connection (its synced data, events
/// and partners' records all refer to the one it has).
pub async fn same_organization(
    db: &impl ConnectionTrait,
    platform: &Platform,
    row: &connection::Model,
    organization_id: &str,
) -> Result<(), Error> {
    let Some(existing) = super::credentials::organization_of(db, row.id).await? else {
        return Ok(());
    };
    if existing.eq_ignore_ascii_case(organization_id) {
        return Ok(());
    }
    Err(Error::Conflict(Problem::new(format!(
        "Connection {} is to {} organization `{existing}`; these tokens are for organization \
         `{organization_id}`. A connection keeps its organization: create a new connection for \
         `{organization_id}`.",
        row.id, platform.name
    ))))
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
    platform: &Platform,
    connectors: &Connectors,
    accepted: &mut AcceptedAuthorization,
) -> Result<(), Error> {
    let name = platform.name;
    let cannot_verify = || {
        Error::unprocessable(format!(
            "tributary cannot verify {name} tokens yet (it has no connector for {name}); send them \
             without `verify`."
        ))
    };
    let connector = connectors
        .get(platform.platform_key)
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
        let client = oauth_clients::open(db, keyring, tenant.client_id, platform.platform_key)
            .await
            .map_err(Error::internal)?
            .ok_or_else(|| {
                Error::Unprocessable(
                    Problem::new(
                        "The access token has already expired, so verifying needs a refresh with your OAuth \
                         application, and none is stored. Nothing was stored.",
                    )
                    .with_remedy(Remedy::SetOAuthClient {
                        platform_key: platform.platform_key.to_owned(),
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
        ConnectorError::Unavailable(message) | ConnectorError::RateLimited(message) => {
            Error::Unavailable(Problem::new(format!(
                "{message}. Nothing was stored; try again."
            )))
        }
        ConnectorError::Auth(message)
        | ConnectorError::Expired(message)
        | ConnectorError::Permissions(message)
        | ConnectorError::Failed(message) => Error::unprocessable(format!(
            "{name} did not accept the tokens: {message}. Nothing was stored."
        )),
    })
}

fn no_self_service(platform: &Platform) -> String {
    format!(
        "{} takes no migrated tokens (neither here nor in a batch of POST /migrations): its end customers \
         connect again, through a link session where the platform can be linked \
         (GET /integrations/{} says).",
        platform.name, platform.platform_key
    )
}
