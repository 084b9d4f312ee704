//! Link sessions as the API creates and shows them (`link_session`): one
//! company, optionally one connection to repair or one platform, a redirect
//! URL from the client's list, thirty minutes, one completion. The token of
//! its `linkUrl` is returned once, at creation, and stored as its digest.

use chrono::{DateTime, Utc};
use sea_orm::{ActiveModelTrait, ColumnTrait, ConnectionTrait, EntityTrait, QueryFilter, Set};
use serde::{Deserialize, Serialize};
use uuid::Uuid;

use entity::link_session;

use super::{SESSION_LIFETIME, digest, random_secret, settings};
use crate::companies;
use crate::connections::{self, ConnectionStatus};
use crate::error::{Error, FieldError, Problem, Remedy};
use crate::oauth_clients;
use crate::platforms::connector::Connectors;
use crate::platforms::{self, Platform};
use crate::tenant::Tenant;
use crate::timestamp::Timestamp;

/// Where a link session stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub enum LinkSessionStatus {
    /// Created; its `linkUrl` has not been opened.
    Created,
    /// The end customer opened its `linkUrl`.
    Opened,
    /// A connection was linked (`connectionId`).
    Completed,
    /// It ended without linking (`failureReason`).
    Failed,
    /// Its thirty minutes passed before it completed.
    Expired,
}

impl LinkSessionStatus {
    /// The stored word.
    pub fn stored(self) -> &'static str {
        match self {
            Self::Created => "Created",
            Self::Opened => "Opened",
            Self::Completed => "Completed",
            Self::Failed => "Failed",
            Self::Expired => "Expired",
        }
    }
}

/// A link session as shown (never its token).
#[derive(Debug, Clone)]
pub struct LinkSessionView {
    /// Its id.
    pub id: Uuid,
    /// Its company.
    pub company_id: Uuid,
    /// The connection it links: the one asked for, or the one it created.
    pub connection_id: Option<Uuid>,
    /// The platform: the one asked for, or the one the customer chose.
    pub platform_key: Option<String>,
    /// Where the customer is sent at the end.
    pub redirect_url: Option<String>,
    /// Where it stands.
    pub status: LinkSessionStatus,
    /// Why it failed.
    pub failure_reason: Option<String>,
    /// When it was created.
    pub created: DateTime<Utc>,
    /// When it stops working.
    pub expires_at: DateTime<Utc>,
    /// When it completed or failed.
    pub ended: Option<DateTime<Utc>>,
}

/// The status a stored row shows at `now`.
pub fn status_of(row: &link_session::Model, now: DateTime<Utc>) -> LinkSessionStatus {
    match row.status.as_str() {
        "Completed" => LinkSessionStatus::Completed,
        "Failed" => LinkSessionStatus::Failed,
        _ if now >= row.expires_at => LinkSessionStatus::Expired,
        "Opened" => LinkSessionStatus::Opened,
        _ => LinkSessionStatus::Created,
    }
}

impl LinkSessionView {
    /// The view of a stored row at `now`.
    pub fn of(row: link_session::Model, now: DateTime<Utc>) -> Self {
        Self {
            status: status_of(&row, now),
            id: row.id,
            company_id: row.company_id,
            connection_id: row.result_connection_id.or(row.connection_id),
            platform_key: row.chosen_platform_key.or(row.platform_key),
            redirect_url: row.redirect_url,
            failure_reason: row.failure,
            created: row.created,
            expires_at: row.expires_at,
            ended: row.ended,
        }
    }
}

/// What creating a session asks for.
#[derive(Debug, Clone, Default)]
pub struct NewLinkSession {
    /// Only this platform (no picker).
    pub platform_key: Option<String>,
    /// Link this existing `PendingAuth` or `Deauthorized` connection again.
    pub connection_id: Option<Uuid>,
    /// Where to send the customer at the end: one of the client's allowed URLs.
    pub redirect_url: Option<String>,
}

/// A created session and the token of its `linkUrl` (shown once).
#[derive(Debug, Clone)]
pub struct CreatedLinkSession {
    /// The session.
    pub session: LinkSessionView,
    /// The link token: the `linkUrl` carries it; only its digest is kept.
    pub token: String,
}

/// Whether the tenant can link `platform` now, or why not.
pub async fn linkable(
    db: &impl ConnectionTrait,
    connectors: &Connectors,
    tenant: Tenant,
    platform: &Platform,
) -> Result<(), Error> {
    let Some(connector) = connectors.get(platform.platform_key) else {
        return Err(Error::unprocessable(format!(
            "{} cannot be linked through tributary: it has no connector.",
            platform.name
        )));
    };
    let spec = connector.link_spec().map_err(|why| {
        Error::unprocessable(format!(
            "{} cannot be linked through tributary: {why}.",
            platform.name
        ))
    })?;
    if spec.in_process {
        return Ok(());
    }
    if oauth_clients::get(db, tenant, platform.platform_key)
        .await
        .is_err()
    {
        return Err(Error::Conflict(
            Problem::new(format!(
                "No OAuth client is stored for {}: tributary links it as your OAuth application.",
                platform.name
            ))
            .with_remedy(Remedy::SetOAuthClient {
                platform_key: platform.platform_key.to_owned(),
            }),
        ));
    }
    Ok(())
}

/// Creates a session for the tenant's company.
pub async fn create(
    db: &impl ConnectionTrait,
    connectors: &Connectors,
    tenant: Tenant,
    company_id: Uuid,
    new: NewLinkSession,
) -> Result<CreatedLinkSession, Error> {
    companies::find(db, tenant, company_id).await?;
    let mut platform_key = new.platform_key.clone();
    if let Some(key) = &platform_key
        && platforms::find(key).is_none()
    {
        return Err(Error::Invalid(vec![
            FieldError::new("platformKey", format!("`{key}` is not a known platform"))
                .with_remedy(Remedy::ListPlatforms),
        ]));
    }
    if let Some(connection_id) = new.connection_id {
        let connection = connections::find(db, tenant, company_id, connection_id).await?;
        let row = connection.connection;
        if platform_key
            .as_ref()
            .is_some_and(|key| *key != row.platform_key)
        {
            return Err(Error::Invalid(vec![FieldError::new(
                "platformKey",
                format!(
                    "connection {connection_id} is to `{}`; leave platformKey out or give that",
                    row.platform_key
                ),
            )]));
        }
        match row.status {
            ConnectionStatus::PendingAuth | ConnectionStatus::Deauthorized => {}
            ConnectionStatus::Linked => {
                return Err(Error::conflict(format!(
                    "Connection {connection_id} is Linked: there is nothing to repair."
                )));
            }
            ConnectionStatus::Unlinked => {
                return Err(Error::conflict(format!(
                    "Connection {connection_id} was Unlinked; link a new connection instead."
                )));
            }
        }
        platform_key = Some(row.platform_key);
    }
    if let Some(key) = &platform_key
        && let Some(platform) = platforms::find(key)
    {
        linkable(db, connectors, tenant, platform).await?;
    }
    if let Some(redirect_url) = &new.redirect_url {
        let allowed = settings::get(db, tenant.client_id).await?;
        if !allowed.allowed_redirect_urls.contains(redirect_url) {
            return Err(Error::Invalid(vec![FieldError::new(
                "redirectUrl",
                "is not one of your allowedRedirectUrls (compared exactly); add it with PUT /linkSettings",
            )]));
        }
    }
    let token = random_secret();
    let now = Timestamp::now();
    let row = link_session::ActiveModel {
        id: Set(Uuid::now_v7()),
        client_id: Set(tenant.client_id),
        company_id: Set(company_id),
        connection_id: Set(new.connection_id),
        platform_key: Set(platform_key),
        redirect_url: Set(new.redirect_url),
        token_digest: Set(digest(&token)),
        browser_digest: Set(None),
        status: Set(LinkSessionStatus::Created.stored().to_owned()),
        failure: Set(None),
        status_code: Set(None),
        result_connection_id: Set(None),
        chosen_platform_key: Set(None),
        organizations: Set(None),
        grant_key_id: Set(None),
        grant_nonce: Set(None),
        grant_ciphertext: Set(None),
        created: Set(now),
        expires_at: Set(now + SESSION_LIFETIME),
        ended: Set(None),
    }
    .insert(db)
    .await?;
    Ok(CreatedLinkSession {
        session: LinkSessionView::of(row, now),
        token,
    })
}

/// One session of the tenant's company.
pub async fn get(
    db: &impl ConnectionTrait,
    tenant: Tenant,
    company_id: Uuid,
    session_id: Uuid,
) -> Result<LinkSessionView, Error> {
    companies::find(db, tenant, company_id).await?;
    link_session::Entity::find_by_id(session_id)
        .filter(link_session::Column::CompanyId.eq(company_id))
        .filter(link_session::Column::ClientId.eq(tenant.client_id))
        .one(db)
        .await?
        .map(|row| LinkSessionView::of(row, Timestamp::now()))
        .ok_or_else(|| {
            Error::not_found(format!(
                "No link session with id {session_id} in this company."
            ))
        })
}
