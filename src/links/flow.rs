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
use crate::platforms::kit::oauth::{self, CodeExchange};
use crate::platforms::link::{
    Ask, CallbackCheck, Grant, Organization, is_shop_domain, shopify_hmac_matches,
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
    /// What the customer gave first (the shop).
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
        if super::sessions::linkable(db, connectors, tenant, platform)
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

/// The customer confirmed: records a link attempt (a new `state`, the PKCE
/// verifier, what they gave) and returns the platform's authorize URL to
/// send them to.
pub async fn authorize(
    db: &impl ConnectionTrait,
    keyring: &Keyring,
    connectors: &Connectors,
    session_id: Uuid,
    browser: Option<&str>,
    inputs: BTreeMap<String, String>,
    urls: &Urls<'_>,
) -> Result<String, Refusal> {
    let row = live_session(db, session_id, browser).await?;
    let key = row
        .platform_key
        .clone()
        .or(row.chosen_platform_key.clone())
        .ok_or_else(|| Refusal::BadRequest("Choose a platform first.".to_owned()))?;
    let platform = platform_of(&key)?;
    let tenant = Tenant {
        client_id: row.client_id,
    };
    super::sessions::linkable(db, connectors, tenant, platform).await?;
    let spec = connector_of(connectors, platform)?
        .link_spec()
        .map_err(|why| Refusal::BadRequest(why.to_owned()))?;
    let mut kept = BTreeMap::new();
    let mut authorize_url = spec.authorize_url.clone();
    if spec.ask == Some(Ask::ShopDomain) {
        let shop = inputs
            .get("shop")
            .map(|shop| shop.trim().to_ascii_lowercase())
            .unwrap_or_default();
        let shop = if shop.contains('.') {
            shop
        } else {
            format!("{shop}.myshopify.com")
        };
        if !is_shop_domain(&shop) {
            return Err(Refusal::BadRequest(
                "Give your shop's myshopify.com domain, for example `acme-store.myshopify.com`."
                    .to_owned(),
            ));
        }
        authorize_url = authorize_url.replace("{shop}", &shop);
        kept.insert("shop".to_owned(), shop);
    }
    if authorize_url.starts_with('/') {
        authorize_url = format!("{}{authorize_url}", urls.public_base);
    }
    let client_id = if spec.in_process {
        "tributary".to_owned()
    } else {
        oauth_clients::open(db, keyring, row.client_id, platform.platform_key)
            .await
            .map_err(Error::internal)?
            .map(|client| client.client_id)
            .ok_or_else(|| Refusal::BadRequest("No OAuth client is stored.".to_owned()))?
    };
    let state = random_secret();
    let state_digest = digest(&state);
    let verifier = spec.pkce.then(random_secret);
    let secrets = AttemptSecrets {
        verifier: verifier.clone(),
        inputs: kept,
        sandbox_code: None,
    };
    let sealed = vault::seal_json(keyring, Owner::LinkAttempt(&state_digest), &secrets)
        .map_err(Error::internal)?;
    let now = Timestamp::now();
    link_attempt::ActiveModel {
        state_digest: Set(state_digest),
        session_id: Set(row.id),
        platform_key: Set(platform.platform_key.to_owned()),
        browser_digest: Set(row.browser_digest.clone().unwrap_or_default()),
        key_id: Set(sealed.key_id),
        nonce: Set(sealed.nonce),
        ciphertext: Set(sealed.ciphertext),
        created: Set(now),
        expires_at: Set((now + ATTEMPT_LIFETIME).min(row.expires_at)),
        used: Set(None),
    }
    .insert(db)
    .await?;
    let mut url = url::Url::parse(&authorize_url)
        .map_err(|_| Error::internal(anyhow::anyhow!("{key}'s authorize URL is not a URL")))?;
    {
        let mut query = url.query_pairs_mut();
        query
            .append_pair("response_type", "code")
            .append_pair("client_id", &client_id)
            .append_pair("redirect_uri", &urls.callback(platform.platform_key))
            .append_pair("scope", &spec.scopes.join(spec.scope_separator))
            .append_pair("state", &state);
        if let Some(verifier) = &verifier {
            query
                .append_pair("code_challenge", &challenge_of(verifier))
                .append_pair("code_challenge_method", "S256");
        }
        for (name, value) in spec.authorize_parameters {
            query.append_pair(name, value);
        }
    }
    Ok(url.into())
}

/// The PKCE S256 challenge of a verifier (RFC 7636 §4.2).
pub fn challenge_of(verifier: &str) -> String {
    URL_SAFE_NO_PAD.encode(Sha256::digest(verifier.as_bytes()))
}

fn connector_of(
    connectors: &Connectors,
    platform: &Platform,
) -> Result<std::sync::Arc<dyn AnyConnector>, Refusal> {
    connectors
        .get(platform.platform_key)
        .ok_or_else(|| Refusal::BadRequest(format!("{} cannot be linked here.", platform.name)))
}

/// A live, unused attempt of `state`, for this browser and platform.
async fn attempt_of(
    db: &impl ConnectionTrait,
    platform_key: &str,
    state: Option<&str>,
    browser: Option<&str>,
) -> Result<link_attempt::Model, Refusal> {
    let Some(state) = state.filter(|state| !state.is_empty()) else {
        return Err(Refusal::Callback(
            "The platform sent no `state`: this is not the end of a link started here.".to_owned(),
        ));
    };
    let attempt = link_attempt::Entity::find_by_id(digest(state))
        .one(db)
        .await?
        .ok_or_else(|| {
            Refusal::Callback(
                "This authorization was not started here (unknown `state`).".to_owned(),
            )
        })?;
    if attempt.platform_key != platform_key {
        return Err(Refusal::Callback(format!(
            "This authorization was started for another platform than {platform_key}."
        )));
    }
    if !browser.is_some_and(|browser| same_secret(&attempt.browser_digest, browser)) {
        return Err(Refusal::OtherBrowser);
    }
    if attempt.used.is_some() {
        return Err(Refusal::Callback(
            "This authorization has already been used; start again from your link.".to_owned(),
        ));
    }
    if Timestamp::now() >= attempt.expires_at {
        return Err(Refusal::Callback(
            "This authorization took too long; start again from your link.".to_owned(),
        ));
    }
    Ok(attempt)
}

/// Whether the sandbox's consent page may be shown for `state` in this
/// browser (a live, unused attempt of the sandbox).
pub async fn sandbox_consent_allowed(
    db: &impl ConnectionTrait,
    state: &str,
    browser: Option<&str>,
) -> Result<(), Refusal> {
    attempt_of(db, "sandbox", Some(state), browser)
        .await
        .map(|_| ())
}

/// The sandbox's consent page was answered: returns where to send the
/// browser (the sandbox's callback, with a code or `error=access_denied`).
pub async fn sandbox_consent(
    db: &impl ConnectionTrait,
    keyring: &Keyring,
    state: &str,
    browser: Option<&str>,
    approved: bool,
    urls: &Urls<'_>,
) -> Result<String, Refusal> {
    let attempt = attempt_of(db, "sandbox", Some(state), browser).await?;
    let mut callback = url::Url::parse(&urls.callback("sandbox"))
        .map_err(|_| Error::internal(anyhow::anyhow!("the sandbox callback is not a URL")))?;
    if approved {
        let owner = Owner::LinkAttempt(&attempt.state_digest);
        let mut secrets: AttemptSecrets =
            vault::open_json(keyring, owner, &attempt_sealed(&attempt)).map_err(Error::internal)?;
        let code = random_secret();
        secrets.sandbox_code = Some(digest(&code));
        let sealed = vault::seal_json(keyring, owner, &secrets).map_err(Error::internal)?;
        link_attempt::Entity::update_many()
            .col_expr(link_attempt::Column::KeyId, Expr::value(sealed.key_id))
            .col_expr(link_attempt::Column::Nonce, Expr::value(sealed.nonce))
            .col_expr(
                link_attempt::Column::Ciphertext,
                Expr::value(sealed.ciphertext),
            )
            .filter(link_attempt::Column::StateDigest.eq(attempt.state_digest.clone()))
            .filter(link_attempt::Column::Used.is_null())
            .exec(db)
            .await?;
        callback
            .query_pairs_mut()
            .append_pair("code", &code)
            .append_pair("state", state);
    } else {
        callback
            .query_pairs_mut()
            .append_pair("error", "access_denied")
            .append_pair("state", state);
    }
    Ok(callback.into())
}

/// The platform's callback: `parameters` as sent. Refused before any token
/// exchange unless the `state` is this browser's, live, unused and issued
/// for this platform (and, for Shopify, the signature and the shop hold).
/// Returns the session, whose page then shows the organization picker or
/// how it ended.
pub async fn callback(
    db: &DatabaseConnection,
    keyring: &Keyring,
    connectors: &Connectors,
    platform_key: &str,
    parameters: &[(String, String)],
    browser: Option<&str>,
    urls: &Urls<'_>,
) -> Result<Uuid, Refusal> {
    let given = |name: &str| {
        parameters
            .iter()
            .find(|(key, _)| key == name)
            .map(|(_, value)| value.as_str())
    };
    let platform = platforms::find(platform_key).ok_or(Refusal::UnknownLink)?;
    let attempt = attempt_of(db, platform_key, given("state"), browser).await?;
    let session = session_row(db, attempt.session_id).await?;
    let owner = Owner::LinkAttempt(&attempt.state_digest);
    let secrets: AttemptSecrets =
        vault::open_json(keyring, owner, &attempt_sealed(&attempt)).map_err(Error::internal)?;
    let connector = connector_of(connectors, platform)?;
    let spec = connector
        .link_spec()
        .map_err(|why| Refusal::BadRequest(why.to_owned()))?;
    let client = if spec.in_process {
        None
    } else {
        Some(
            oauth_clients::open(db, keyring, session.client_id, platform_key)
                .await
                .map_err(Error::internal)?
                .ok_or_else(|| {
                    Refusal::Callback("The OAuth client was removed meanwhile.".to_owned())
                })?,
        )
    };
    if spec.callback_check == CallbackCheck::ShopifyHmac {
        let secret = client
            .as_ref()
            .map(|client| client.client_secret.as_str())
            .unwrap_or_default();
        let shop = given("shop").unwrap_or_default();
        if !shopify_hmac_matches(parameters, secret) {
            return Err(Refusal::Callback(
                "The callback's signature (`hmac`) does not match: it did not come from Shopify."
                    .to_owned(),
            ));
        }
        if !is_shop_domain(shop) || secrets.inputs.get("shop").map(String::as_str) != Some(shop) {
            return Err(Refusal::Callback(
                "The callback names another shop than the one you gave.".to_owned(),
            ));
        }
    }
    // Single use: the first callback to mark the attempt used goes on.
    let used = link_attempt::Entity::update_many()
        .col_expr(link_attempt::Column::Used, Expr::value(Timestamp::now()))
        .filter(link_attempt::Column::StateDigest.eq(attempt.state_digest.clone()))
        .filter(link_attempt::Column::Used.is_null())
        .exec(db)
        .await?;
    if used.rows_affected == 0 {
        return Err(Refusal::Callback(
            "This authorization has already been used; start again from your link.".to_owned(),
        ));
    }
    match status_of(&session, Timestamp::now()) {
        LinkSessionStatus::Expired => return Err(Refusal::Expired),
        LinkSessionStatus::Completed | LinkSessionStatus::Failed => {
            return Err(Refusal::BadRequest(
                "This link has already been used.".to_owned(),
            ));
        }
        LinkSessionStatus::Created | LinkSessionStatus::Opened => {}
    }
    if let Some(error) = given("error") {
        let (code, message) = if error == "access_denied" {
            (403, format!("Access to {} was declined.", platform.name))
        } else {
            (
                502,
                format!("{} ended the authorization with `{error}`.", platform.name),
            )
        };
        fail(db, &session, platform_key, None, code, &message).await?;
        return Ok(session.id);
    }
    let Some(code) = given("code").filter(|code| !code.is_empty()) else {
        fail(
            db,
            &session,
            platform_key,
            None,
            502,
            &format!("{} sent no authorization code.", platform.name),
        )
        .await?;
        return Ok(session.id);
    };
    let answer = if spec.in_process {
        if !secrets
            .sandbox_code
            .as_deref()
            .is_some_and(|stored| same_secret(stored, code))
        {
            return Err(Refusal::Callback(
                "The sandbox did not issue this code.".to_owned(),
            ));
        }
        let mut answer = serde_json::Map::new();
        answer.insert("access_token".to_owned(), random_secret().into());
        answer
    } else {
        let shop_url = |url: &str| {
            secrets
                .inputs
                .get("shop")
                .map_or_else(|| url.to_owned(), |shop| url.replace("{shop}", shop))
        };
        let token_url = shop_url(&spec.token_url);
        let Some(client) = client.as_ref() else {
            return Err(Refusal::Callback("No OAuth client is stored.".to_owned()));
        };
        let Some(http) = connectors.http() else {
            return Err(Refusal::Callback(
                "tributary cannot reach platforms.".to_owned(),
            ));
        };
        let exchanged = oauth::exchange_code(
            http,
            CodeExchange {
                platform: platform.name,
                token_url: &token_url,
                client_auth: spec.client_auth,
                client,
                code,
                redirect_uri: &urls.callback(platform_key),
                code_verifier: secrets.verifier.as_deref(),
            },
        )
        .await;
        match exchanged {
            Ok(answer) => answer,
            Err(error) => {
                fail(db, &session, platform_key, None, 502, &error.to_string()).await?;
                return Ok(session.id);
            }
        }
    };
    let grant = grant_of(answer, parameters, secrets.inputs);
    let organizations = match connector.organizations(&grant).await {
        Ok(organizations) => organizations,
        Err(error) => {
            let message =
                format!("tributary could not find which organization you consented to: {error}");
            fail(db, &session, platform_key, None, 502, &message).await?;
            return Ok(session.id);
        }
    };
    choose_or_complete(
        db,
        keyring,
        connectors,
        &session,
        platform,
        grant,
        organizations,
    )
    .await?;
    Ok(session.id)
}

/// The grant of a token answer and a callback: tokens taken out of the
/// answer's other fields, `code` and `state` out of the callback's.
fn grant_of(
    mut answer: serde_json::Map<String, serde_json::Value>,
    parameters: &[(String, String)],
    inputs: BTreeMap<String, String>,
) -> Grant {
    let expires_in = oauth::lifetime(&answer, Utc::now());
    let take = |answer: &mut serde_json::Map<String, serde_json::Value>, name: &str| {
        answer
            .remove(name)
            .and_then(|value| value.as_str().map(str::to_owned))
    };
    let access_token = take(&mut answer, "access_token").unwrap_or_default();
    let refresh_token = take(&mut answer, "refresh_token");
    for secret in ["id_token", "stripe_publishable_key"] {
        answer.remove(secret);
    }
    Grant {
        access_token,
        refresh_token,
        expires_in,
        token_fields: answer,
        callback: parameters
            .iter()
            .filter(|(name, _)| !matches!(name.as_str(), "code" | "state" | "hmac" | "signature"))
            .cloned()
            .collect(),
        inputs,
    }
}

/// With one organization (or the session's connection's), completes; with
/// several, keeps the grant sealed and shows the picker.
async fn choose_or_complete(
    db: &DatabaseConnection,
    keyring: &Keyring,
    connectors: &Connectors,
    session: &link_session::Model,
    platform: &'static Platform,
    grant: Grant,
    organizations: Vec<Organization>,
) -> Result<(), Refusal> {
    let key = platform.platform_key;
    if organizations.is_empty() {
        let message = format!("The consent at {} reached no organization.", platform.name);
        return fail(db, session, key, None, 502, &message).await;
    }
    if let Some(connection_id) = session.connection_id {
        let wanted = connections::credentials::organization_of(db, connection_id).await?;
        if let Some(wanted) = wanted {
            let Some(chosen) = organizations
                .iter()
                .find(|organization| organization.id.eq_ignore_ascii_case(&wanted))
                .cloned()
            else {
                let offered: Vec<&str> =
                    organizations.iter().map(|org| org.name.as_str()).collect();
                let message = format!(
                    "This connection is to organization `{wanted}`, but the consent at {} was for {}. \
                     Sign in to {} as the organization this connection links, or link the other \
                     organization as a new connection.",
                    platform.name,
                    offered.join(", "),
                    platform.name
                );
                release_all(connectors, platform, &grant, None).await;
                return fail(db, session, key, Some(connection_id), 409, &message).await;
            };
            return complete(db, keyring, connectors, session, platform, grant, chosen).await;
        }
    }
    if organizations.len() == 1 {
        let chosen = organizations[0].clone();
        return complete(db, keyring, connectors, session, platform, grant, chosen).await;
    }
    let sealed = vault::seal_json(keyring, Owner::LinkSession(session.id), &Pending { grant })
        .map_err(Error::internal)?;
    let listed = serde_json::to_string(&organizations).map_err(Error::internal)?;
    link_session::Entity::update_many()
        .col_expr(link_session::Column::Organizations, Expr::value(listed))
        .col_expr(link_session::Column::GrantKeyId, Expr::value(sealed.key_id))
        .col_expr(link_session::Column::GrantNonce, Expr::value(sealed.nonce))
        .col_expr(
            link_session::Column::GrantCiphertext,
            Expr::value(sealed.ciphertext),
        )
        .filter(link_session::Column::Id.eq(session.id))
        .exec(db)
        .await?;
    Ok(())
}

/// The customer chose one of several organizations.
pub async fn choose_organization(
    db: &DatabaseConnection,
    keyring: &Keyring,
    connectors: &Connectors,
    session_id: Uuid,
    browser: Option<&str>,
    organization_id: &str,
) -> Result<(), Refusal> {
    let session = live_session(db, session_id, browser).await?;
    let (Some(listed), Some(sealed)) = (&session.organizations, session_sealed(&session)) else {
        return Err(Refusal::BadRequest(
            "There is no organization to choose.".to_owned(),
        ));
    };
    let organizations: Vec<Organization> = serde_json::from_str(listed).map_err(Error::internal)?;
    let Some(chosen) = organizations
        .iter()
        .find(|organization| organization.id == organization_id)
        .cloned()
    else {
        return Err(Refusal::BadRequest(
            "Choose one of the organizations listed.".to_owned(),
        ));
    };
    let pending: Pending = vault::open_json(keyring, Owner::LinkSession(session.id), &sealed)
        .map_err(Error::internal)?;
    let key = session
        .platform_key
        .clone()
        .or(session.chosen_platform_key.clone())
        .unwrap_or_default();
    let platform = platform_of(&key)?;
    complete(
        db,
        keyring,
        connectors,
        &session,
        platform,
        pending.grant,
        chosen,
    )
    .await
}

/// Lets go of every organization the grant reached but `keep` (all of them
/// when the flow failed).
async fn release_all(
    connectors: &Connectors,
    platform: &Platform,
    grant: &Grant,
    keep: Option<&Organization>,
) {
    if let Some(connector) = connectors.get(platform.platform_key)
        && let Err(error) = connector.release(grant, keep).await
    {
        tracing::warn!(platform = platform.platform_key, error = %error, "letting go of consented organizations failed");
    }
}

/// Links the chosen organization: the session's own connection repaired in
/// place, or a new connection of the company (refused when that
/// organization is already linked in it); lets go of the others; queues
/// the first link's data types.
async fn complete(
    db: &DatabaseConnection,
    keyring: &Keyring,
    connectors: &Connectors,
    session: &link_session::Model,
    platform: &'static Platform,
    grant: Grant,
    chosen: Organization,
) -> Result<(), Refusal> {
    let key = platform.platform_key;
    let tenant = Tenant {
        client_id: session.client_id,
    };
    let connector = connector_of(connectors, platform)?;
    let body = connector.link_body(&grant, &chosen);
    let Some(body_kind) = platform.authorization else {
        return fail(
            db,
            session,
            key,
            None,
            501,
            "This platform's authorization cannot be stored.",
        )
        .await;
    };
    let now = Timestamp::now();
    let accepted = match body_kind.accept(body, now) {
        Ok(accepted) => accepted,
        Err(error) => {
            tracing::warn!(platform = key, error = %error, "a linked grant is not a valid authorization body");
            release_all(connectors, platform, &grant, None).await;
            let message = format!(
                "{} answered with tokens tributary cannot store.",
                platform.name
            );
            return fail(db, session, key, session.connection_id, 502, &message).await;
        }
    };
    let txn = db.begin().await?;
    // The session's row first: it is the write that makes this completion
    // the only one (and SQLite's write lock is taken before any read).
    let claimed = link_session::Entity::update_many()
        .col_expr(
            link_session::Column::Status,
            Expr::value(LinkSessionStatus::Completed.stored()),
        )
        .filter(link_session::Column::Id.eq(session.id))
        .filter(link_session::Column::Status.is_in(["Created", "Opened"]))
        .exec(&txn)
        .await?;
    if claimed.rows_affected == 0 {
        return Err(Refusal::BadRequest(
            "This link has already been used.".to_owned(),
        ));
    }
    let (row, first_link) = match session.connection_id {
        Some(connection_id) => {
            let row = connections::find(&txn, tenant, session.company_id, connection_id)
                .await?
                .connection;
            if !matches!(
                row.status,
                ConnectionStatus::PendingAuth | ConnectionStatus::Deauthorized
            ) {
                drop(txn);
                let message = format!(
                    "Connection {connection_id} is {:?} now: there is nothing to repair.",
                    row.status
                );
                return fail(db, session, key, Some(connection_id), 409, &message).await;
            }
            let first = connections::credentials::organization_of(&txn, row.id)
                .await?
                .is_none();
            (row, first)
        }
        None => {
            for existing in connections::of_platform(&txn, session.company_id, key).await? {
                let organization =
                    connections::credentials::organization_of(&txn, existing.id).await?;
                if organization
                    .is_some_and(|org| org.eq_ignore_ascii_case(&accepted.organization_id))
                {
                    drop(txn);
                    release_all(connectors, platform, &grant, None).await;
                    let message = format!(
                        "{} is already linked in this company (connection {}); repair that connection instead of adding another.",
                        chosen.name, existing.id
                    );
                    return fail(db, session, key, Some(existing.id), 409, &message).await;
                }
            }
            (
                connections::insert(&txn, tenant, session.company_id, key).await?,
                true,
            )
        }
    };
    let linked =
        connections::authorization::link(&txn, keyring, tenant, row, &accepted, now).await?;
    ended_update()
        .col_expr(
            link_session::Column::ResultConnectionId,
            Expr::value(linked.id),
        )
        .col_expr(
            link_session::Column::ChosenPlatformKey,
            Expr::value(key.to_owned()),
        )
        .col_expr(link_session::Column::StatusCode, Expr::value(200))
        .col_expr(link_session::Column::Ended, Expr::value(now))
        .filter(link_session::Column::Id.eq(session.id))
        .exec(&txn)
        .await?;
    txn.commit().await?;
    // Every consent is narrowed to the one organization linked (Xero may
    // have connected practices the picker did not offer).
    release_all(connectors, platform, &grant, Some(&chosen)).await;
    if first_link {
        let settings = settings::get(db, session.client_id).await?;
        let data_types = settings.first_link_data_types(platform.data_types);
        operations::queue_first_link(db, tenant, session.company_id, linked.id, &data_types)
            .await?;
    }
    Ok(())
}

/// An update of a session that ends it: the grant kept for the picker is
/// dropped with it.
fn ended_update() -> sea_orm::UpdateMany<link_session::Entity> {
    link_session::Entity::update_many()
        .col_expr(
            link_session::Column::GrantKeyId,
            Expr::value(Option::<String>::None),
        )
        .col_expr(
            link_session::Column::GrantNonce,
            Expr::value(Option::<Vec<u8>>::None),
        )
        .col_expr(
            link_session::Column::GrantCiphertext,
            Expr::value(Option::<Vec<u8>>::None),
        )
}

/// Ends the session failed, with the status code its redirect carries and
/// why, announcing `connection.failed`.
async fn fail(
    db: &DatabaseConnection,
    session: &link_session::Model,
    platform_key: &str,
    connection_id: Option<Uuid>,
    status_code: u16,
    message: &str,
) -> Result<(), Refusal> {
    let now: DateTime<Utc> = Timestamp::now();
    let txn = db.begin().await?;
    let ended = ended_update()
        .col_expr(
            link_session::Column::Status,
            Expr::value(LinkSessionStatus::Failed.stored()),
        )
        .col_expr(
            link_session::Column::Failure,
            Expr::value(message.to_owned()),
        )
        .col_expr(
            link_session::Column::StatusCode,
            Expr::value(i32::from(status_code)),
        )
        .col_expr(
            link_session::Column::ChosenPlatformKey,
            Expr::value(platform_key.to_owned()),
        )
        .col_expr(
            link_session::Column::ResultConnectionId,
            Expr::value(connection_id),
        )
        .col_expr(link_session::Column::Ended, Expr::value(now))
        .filter(link_session::Column::Id.eq(session.id))
        .filter(link_session::Column::Status.is_in(["Created", "Opened"]))
        .exec(&txn)
        .await?;
    if ended.rows_affected == 1 {
        let data = serde_json::json!({
            "companyId": session.company_id,
            "connectionId": connection_id.or(session.connection_id),
            "platformKey": platform_key,
            "linkSessionId": session.id,
            "statusCode": status_code,
            "errorMessage": message,
        });
        webhooks::record(
            &txn,
            Event::new(EventType::ConnectionFailed, session.client_id, data),
        )
        .await?;
    }
    txn.commit().await?;
    Ok(())
}

/// The ending of a session, for the outcome page and the redirect (or
/// `None` while it has not ended).
pub async fn ending_of(
    db: &impl ConnectionTrait,
    session_id: Uuid,
    browser: Option<&str>,
) -> Result<Option<Ending>, Refusal> {
    let row = bound_session(db, session_id, browser).await?;
    match status_of(&row, Timestamp::now()) {
        LinkSessionStatus::Completed | LinkSessionStatus::Failed => {
            let context = context_of(db, &row).await?;
            Ok(Some(ending(&row, context)))
        }
        _ => Ok(None),
    }
}
