//! The hosted link flow, step by step, as the hosted pages drive it: a
//! session opened with its token and bound to the browser that opened it;
//! the platform chosen; the trip to the platform's authorize step
//! (`link_attempt`: a single-use `state` bound to the session, the browser
//! and the platform, a PKCE verifier kept sealed); the callback, refused
//! before any token exchange unless all of that holds; the code exchanged
//! once; the organization found (or chosen, where one consent covers
//! several); and the end: a linked connection (a new one, or the session's
//! own repaired in place) or a failure, each announced through the outbox.
//!
//! The rules are RFC 9700's (OAuth 2.0 Security Best Current Practice),
//! each tested in `tests/api/links.rs`.
//!
//! This module: the session's values, opening it, its pages and the
//! platform picker. [`authorize`]: the trip to the platform (and the
//! sandbox's own consent). [`callback`]: the platform's redirect back and
//! the code exchange. [`ending`]: the organization, the linked connection
//! or the failure.

mod authorize;
mod callback;
mod ending;

pub use authorize::{authorize, challenge_of, sandbox_consent, sandbox_consent_allowed};
pub use callback::callback;
pub use ending::{choose_organization, ending_of};

use std::collections::BTreeMap;

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use chrono::{DateTime, Utc};
use sea_orm::sea_query::Expr;
use sea_orm::{
    ActiveModelTrait, ColumnTrait, ConnectionTrait, DatabaseConnection, EntityTrait, QueryFilter,
    Set, TransactionTrait,
};
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use subtle::ConstantTimeEq;
use uuid::Uuid;

use entity::{link_attempt, link_session};

use super::sessions::{LinkSessionStatus, status_of};
use super::{ATTEMPT_LIFETIME, digest, random_secret, settings};
use crate::companies;
use crate::connections::{self, ConnectionStatus};
use crate::crypto::{Keyring, Sealed};
use crate::error::Error;
use crate::oauth_clients;
use crate::platforms::connector::{AnyConnector, Connectors};
use crate::platforms::kit::code_grant::{self, CodeExchange};
use crate::platforms::link::{
    Ask, CallbackCheck, Grant, ID_TOKEN_CLAIMS, Organization, is_shop_domain, jwt_claims,
    shopify_hmac_matches,
};
use crate::platforms::{self, Platform};
use crate::sync::operations;
use crate::tenant::Tenant;
use crate::timestamp::Timestamp;
use crate::vault::{self, Owner};
use crate::webhooks::{self, Event, EventType};

/// Why a hosted step is refused: each is a page saying what happened and
/// what to do, never the API's JSON.
#[derive(Debug, thiserror::Error)]
pub enum Refusal {
    /// No such link (unknown session, or a token that is not its).
    #[error("This link is not valid.")]
    UnknownLink,
    /// The session's thirty minutes have passed.
    #[error("This link has expired.")]
    Expired,
    /// The step came from a browser other than the one that opened the link.
    #[error("This step was started in another browser.")]
    OtherBrowser,
    /// The request itself is wrong (a missing or bad field), said in words.
    #[error("{0}")]
    BadRequest(String),
    /// A callback refused before any token exchange: an unknown, used or
    /// expired `state`, one issued for another platform, a bad signature.
    #[error("{0}")]
    Callback(String),
    /// Something failed on our side.
    #[error(transparent)]
    Internal(#[from] Error),
}

impl From<sea_orm::DbErr> for Refusal {
    fn from(error: sea_orm::DbErr) -> Self {
        Self::Internal(error.into())
    }
}

/// What every page of a session shows.
#[derive(Debug, Clone)]
pub struct Context {
    /// The session.
    pub session_id: Uuid,
    /// The company's name.
    pub company_name: String,
    /// The name of the service that sent the customer (the client's `displayName`).
    pub display_name: Option<String>,
    /// Origins that may frame the pages.
    pub frame_origins: Vec<String>,
}

/// The page a session is at.
#[derive(Debug, Clone)]
pub enum Page {
    /// Choose a platform among those the client can link.
    ChoosePlatform {
        /// The session.
        context: Context,
        /// The platforms offered.
        platforms: Vec<&'static Platform>,
    },
    /// Confirm going to the platform (and give what it needs first).
    Confirm {
        /// The session.
        context: Context,
        /// The platform.
        platform: &'static Platform,
        /// What to ask first.
        ask: Option<Ask>,
        /// Whether the session repairs an existing connection.
        repair: bool,
    },
    /// Choose the organization to link, where one consent covered several.
    ChooseOrganization {
        /// The session.
        context: Context,
        /// The platform.
        platform: &'static Platform,
        /// The organizations consented to.
        organizations: Vec<Organization>,
    },
    /// The session has ended.
    Ended(Ending),
}

/// How a session ended: what the outcome page and the redirect say.
#[derive(Debug, Clone)]
pub struct Ending {
    /// The session.
    pub context: Context,
    /// Its company.
    pub company_id: Uuid,
    /// The connection linked (or the one that failed to be).
    pub connection_id: Option<Uuid>,
    /// The platform.
    pub platform_key: Option<String>,
    /// 200 when linked; 4xx or 5xx otherwise.
    pub status_code: u16,
    /// Why it failed.
    pub error_message: Option<String>,
    /// Where the customer goes now.
    pub redirect_url: Option<String>,
}

/// What a link attempt keeps sealed.
#[derive(Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
struct AttemptSecrets {
    /// The PKCE verifier, where a challenge was sent.
    verifier: Option<String>,
    /// What the customer gave first (the shop, the region and its host).
    inputs: BTreeMap<String, String>,
    /// The sandbox's code, as a digest, once its consent page issued one.
    sandbox_code: Option<String>,
}

/// A session's grant kept while its customer chooses an organization.
#[derive(Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
struct Pending {
    grant: Grant,
}

fn session_sealed(row: &link_session::Model) -> Option<Sealed> {
    Some(Sealed {
        key_id: row.grant_key_id.clone()?,
        nonce: row.grant_nonce.clone()?,
        ciphertext: row.grant_ciphertext.clone()?,
    })
}

fn attempt_sealed(row: &link_attempt::Model) -> Sealed {
    Sealed {
        key_id: row.key_id.clone(),
        nonce: row.nonce.clone(),
        ciphertext: row.ciphertext.clone(),
    }
}

fn same_secret(stored_digest: &str, secret: &str) -> bool {
    bool::from(stored_digest.as_bytes().ct_eq(digest(secret).as_bytes()))
}

async fn session_row(
    db: &impl ConnectionTrait,
    session_id: Uuid,
) -> Result<link_session::Model, Refusal> {
    link_session::Entity::find_by_id(session_id)
        .one(db)
        .await?
        .ok_or(Refusal::UnknownLink)
}

/// The session, checked to be this browser's.
async fn bound_session(
    db: &impl ConnectionTrait,
    session_id: Uuid,
    browser: Option<&str>,
) -> Result<link_session::Model, Refusal> {
    let row = session_row(db, session_id).await?;
    match (&row.browser_digest, browser) {
        (Some(bound), Some(browser)) if same_secret(bound, browser) => Ok(row),
        _ => Err(Refusal::OtherBrowser),
    }
}

async fn context_of(
    db: &impl ConnectionTrait,
    row: &link_session::Model,
) -> Result<Context, Refusal> {
    let tenant = Tenant {
        client_id: row.client_id,
    };
    let company = companies::find(db, tenant, row.company_id).await?;
    let settings = settings::get(db, row.client_id).await?;
    Ok(Context {
        session_id: row.id,
        company_name: company.name,
        display_name: settings.display_name,
        frame_origins: settings.allowed_frame_origins,
    })
}

/// The origins that may frame a session's pages (for the headers of a page
/// that cannot be built, such as a refusal).
pub async fn frame_origins(db: &impl ConnectionTrait, session_id: Uuid) -> Vec<String> {
    match session_row(db, session_id).await {
        Ok(row) => settings::get(db, row.client_id)
            .await
            .map(|settings| settings.allowed_frame_origins)
            .unwrap_or_default(),
        Err(_) => Vec::new(),
    }
}

/// Opens a session with its link token, from a browser (whose cookie, if
/// it has one, is `browser`): binds the session to that browser and returns
/// the browser's secret, to be set as its cookie. A link opened again (the
/// customer moved to another device) is bound to the newest browser.
pub async fn open(
    db: &impl ConnectionTrait,
    session_id: Uuid,
    token: &str,
    browser: Option<&str>,
) -> Result<String, Refusal> {
    let row = session_row(db, session_id).await?;
    if !same_secret(&row.token_digest, token) {
        return Err(Refusal::UnknownLink);
    }
    let browser = match browser {
        Some(secret) if secret.len() == 43 => secret.to_owned(),
        _ => random_secret(),
    };
    let now = Timestamp::now();
    let status = status_of(&row, now);
    if status == LinkSessionStatus::Expired {
        return Err(Refusal::Expired);
    }
    let opened = if status == LinkSessionStatus::Created {
        LinkSessionStatus::Opened
    } else {
        status
    };
    link_session::Entity::update_many()
        .col_expr(
            link_session::Column::BrowserDigest,
            Expr::value(digest(&browser)),
        )
        .col_expr(link_session::Column::Status, Expr::value(opened.stored()))
        .filter(link_session::Column::Id.eq(row.id))
        .exec(db)
        .await?;
    Ok(browser)
}

/// The platforms the session's client can link (its OAuth client stored,
/// or none needed), in catalogue order.
async fn offered(
    db: &impl ConnectionTrait,
    connectors: &Connectors,
    client_id: Uuid,
) -> Vec<&'static Platform> {
    let tenant = Tenant { client_id };
    let mut offered = Vec::new();
    for platform in platforms::all() {
        if crate::links::sessions::linkable(db, connectors, tenant, platform)
            .await
            .is_ok()
        {
            offered.push(*platform);
        }
    }
    offered
}

fn platform_of(key: &str) -> Result<&'static Platform, Refusal> {
    platforms::find(key).ok_or_else(|| Refusal::BadRequest(format!("`{key}` is not a platform.")))
}

/// The ending of a session that has ended.
fn ending(row: &link_session::Model, context: Context) -> Ending {
    Ending {
        context,
        company_id: row.company_id,
        connection_id: row.result_connection_id.or(row.connection_id),
        platform_key: row.chosen_platform_key.clone().or(row.platform_key.clone()),
        status_code: row
            .status_code
            .and_then(|code| u16::try_from(code).ok())
            .unwrap_or(500),
        error_message: row.failure.clone(),
        redirect_url: row.redirect_url.clone(),
    }
}

/// The page the session is at, for this browser.
pub async fn page(
    db: &impl ConnectionTrait,
    connectors: &Connectors,
    session_id: Uuid,
    browser: Option<&str>,
) -> Result<Page, Refusal> {
    let row = bound_session(db, session_id, browser).await?;
    let context = context_of(db, &row).await?;
    match status_of(&row, Timestamp::now()) {
        LinkSessionStatus::Completed | LinkSessionStatus::Failed => {
            return Ok(Page::Ended(ending(&row, context)));
        }
        LinkSessionStatus::Expired => return Err(Refusal::Expired),
        LinkSessionStatus::Created | LinkSessionStatus::Opened => {}
    }
    let chosen = row
        .platform_key
        .as_deref()
        .or(row.chosen_platform_key.as_deref());
    match (chosen, &row.organizations) {
        (Some(key), Some(organizations)) => Ok(Page::ChooseOrganization {
            context,
            platform: platform_of(key)?,
            organizations: serde_json::from_str(organizations).unwrap_or_default(),
        }),
        (Some(key), None) => {
            let platform = platform_of(key)?;
            let ask = connectors
                .get(key)
                .and_then(|connector| connector.link_spec().ok())
                .and_then(|spec| spec.ask);
            Ok(Page::Confirm {
                context,
                platform,
                ask,
                repair: row.connection_id.is_some(),
            })
        }
        (None, _) => Ok(Page::ChoosePlatform {
            context,
            platforms: offered(db, connectors, row.client_id).await,
        }),
    }
}

/// The customer chose a platform on the picker.
pub async fn choose_platform(
    db: &impl ConnectionTrait,
    connectors: &Connectors,
    session_id: Uuid,
    browser: Option<&str>,
    platform_key: &str,
) -> Result<(), Refusal> {
    let row = live_session(db, session_id, browser).await?;
    if row.platform_key.is_some() {
        return Err(Refusal::BadRequest(
            "This link is for one platform only.".to_owned(),
        ));
    }
    let offered = offered(db, connectors, row.client_id).await;
    if !offered
        .iter()
        .any(|platform| platform.platform_key == platform_key)
    {
        return Err(Refusal::BadRequest(format!(
            "`{platform_key}` cannot be linked here: choose one of the platforms listed."
        )));
    }
    link_session::Entity::update_many()
        .col_expr(
            link_session::Column::ChosenPlatformKey,
            Expr::value(platform_key.to_owned()),
        )
        .filter(link_session::Column::Id.eq(row.id))
        .exec(db)
        .await?;
    Ok(())
}

/// A session of this browser that has neither ended nor expired.
async fn live_session(
    db: &impl ConnectionTrait,
    session_id: Uuid,
    browser: Option<&str>,
) -> Result<link_session::Model, Refusal> {
    let row = bound_session(db, session_id, browser).await?;
    match status_of(&row, Timestamp::now()) {
        LinkSessionStatus::Expired => Err(Refusal::Expired),
        LinkSessionStatus::Completed | LinkSessionStatus::Failed => Err(Refusal::BadRequest(
            "This link has already been used.".to_owned(),
        )),
        LinkSessionStatus::Created | LinkSessionStatus::Opened => Ok(row),
    }
}

/// Where the flow's own URLs are: under the public base URL, the sandbox's
/// consent page and each platform's callback.
pub struct Urls<'a> {
    /// The public base URL, without a trailing `/`.
    pub public_base: &'a str,
}

impl Urls<'_> {
    /// A platform's callback URL: what the partner registers with its OAuth
    /// application, and exactly the `redirect_uri` sent.
    pub fn callback(&self, platform_key: &str) -> String {
        format!("{}/oauth/{platform_key}/callback", self.public_base)
    }
}

fn connector_of(
    connectors: &Connectors,
    platform: &Platform,
) -> Result<std::sync::Arc<dyn AnyConnector>, Refusal> {
    connectors
        .get(platform.platform_key)
        .ok_or_else(|| Refusal::BadRequest(format!("{} cannot be linked here.", platform.name)))
}
