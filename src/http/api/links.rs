//! `/companies/{companyId}/linkSessions` and `/linkSettings`: sessions that
//! send an end customer through tributary's hosted pages to link (or
//! repair) a connection, and the client's settings for those pages.

use poem::web::Data;
use poem_openapi::param::Path;
use poem_openapi::payload::Json;
use poem_openapi::{ApiResponse, Object, OpenApi};
use uuid::Uuid;

use crate::http::api::ApiTags;
use crate::http::error::{ErrorResponses, status};
use crate::http::json_body::JsonBody;
use crate::http::schema::Described;
use crate::http::state::AppState;
use crate::http::types::{Nullable, Timestamp};
use crate::links::sessions::{self, LinkSessionStatus, LinkSessionView, NewLinkSession};
use crate::links::settings::{self, LinkSettings as Settings, NewLinkSettings};
use crate::tenant::Tenant;

/// Link session endpoints.
pub struct LinksApi;

/// What a new link session is for.
#[derive(Debug, Clone, Object)]
#[oai(rename_all = "camelCase", deny_unknown_fields)]
pub struct LinkSessionInput {
    /// Only this platform: the hosted pages skip the platform picker. Absent: the customer picks among the platforms you can link (those with your OAuth client stored, and the sandbox).
    #[oai(default, validator(min_length = 1, max_length = 64))]
    pub platform_key: Nullable<String>,
    /// Link this existing `PendingAuth` or `Deauthorized` connection again (same `connectionId`, its synced data kept). The platform's organization must be the one it had.
    #[oai(default)]
    pub connection_id: Nullable<Uuid>,
    /// Where the customer is sent at the end (303), with `linkSessionId`, `companyId`, `connectionId`, `platformKey`, `statusCode` and `errorMessage`: exactly one of your `allowedRedirectUrls`. Absent: the last page says how it went.
    #[oai(default, validator(max_length = 2048))]
    pub redirect_url: Nullable<String>,
}

/// A link session.
#[derive(Debug, Clone, Object)]
#[oai(rename_all = "camelCase")]
pub struct LinkSession {
    /// Its id.
    pub id: Uuid,
    /// The company whose connection it links.
    pub company_id: Uuid,
    /// The connection it links: the one it was created for, or the one it created once `Completed`.
    pub connection_id: Nullable<Uuid>,
    /// The platform: the one it was created for, or the one the customer chose.
    pub platform_key: Nullable<String>,
    /// Where the customer is sent at the end.
    pub redirect_url: Nullable<String>,
    /// `Created`, `Opened`, `Completed`, `Failed` or `Expired`.
    pub status: Described<LinkSessionStatus>,
    /// Why it failed; null otherwise.
    pub failure_reason: Nullable<String>,
    /// When it was created (RFC 3339, UTC).
    pub created: Timestamp,
    /// When its link stops working: 30 minutes after creation.
    pub expires_at: Timestamp,
    /// When it completed or failed.
    pub ended: Nullable<Timestamp>,
}

impl From<LinkSessionView> for LinkSession {
    fn from(view: LinkSessionView) -> Self {
        Self {
            id: view.id,
            company_id: view.company_id,
            connection_id: view.connection_id.into(),
            platform_key: view.platform_key.into(),
            redirect_url: view.redirect_url.into(),
            status: view.status.into(),
            failure_reason: view.failure_reason.into(),
            created: view.created.into(),
            expires_at: view.expires_at.into(),
            ended: view.ended.map(Timestamp::from).into(),
        }
    }
}

/// A link session just created, with its link (shown only now).
#[derive(Debug, Clone, Object)]
#[oai(rename_all = "camelCase")]
pub struct CreatedLinkSession {
    /// The session.
    #[oai(flatten)]
    pub session: LinkSession,
    /// Send your end customer here (a browser, not your server): it carries a one-time token, shown only in this answer. It works once, until `expiresAt`, in the browser that opens it.
    pub link_url: String,
}

/// Answer of `createLinkSession`.
#[derive(ApiResponse)]
pub enum LinkSessionCreated {
    /// The session was created; `Location` is its URL.
    #[oai(status = 201)]
    Created(
        Json<CreatedLinkSession>,
        /// The path of the new session.
        #[oai(header = "Location")]
        String,
    ),
}

/// Answer of `getLinkSession`.
#[derive(ApiResponse)]
pub enum LinkSessionFound {
    /// The session.
    #[oai(status = 200)]
    Ok(Json<LinkSession>),
}

/// Your link settings: what the hosted pages show your end customers and where they may send them.
#[derive(Debug, Clone, Object)]
#[oai(rename_all = "camelCase")]
pub struct LinkSettings {
    /// The name your end customers see on the hosted pages ("… wants to connect to your Xero organisation"); null: a neutral wording.
    pub display_name: Nullable<String>,
    /// The URLs a link session may send the customer back to, compared exactly: `https`, or `http` to a loopback host. At most 20.
    pub allowed_redirect_urls: Vec<String>,
    /// Origins (`https://app.example.com`) allowed to show the hosted pages in a frame; empty: none (`frame-ancestors 'none'`). At most 20.
    pub allowed_frame_origins: Vec<String>,
    /// The data types queued when a connection is first linked through a link session (fetch on first link); null: every data type the platform syncs. Token migrations never fetch on first link.
    pub fetch_on_first_link: Nullable<Vec<String>>,
    /// When they were last set; null: never (these are the defaults).
    pub updated: Nullable<Timestamp>,
}

impl From<Settings> for LinkSettings {
    fn from(settings: Settings) -> Self {
        Self {
            display_name: settings.display_name.into(),
            allowed_redirect_urls: settings.allowed_redirect_urls,
            allowed_frame_origins: settings.allowed_frame_origins,
            fetch_on_first_link: settings
                .fetch_on_first_link
                .map(|chosen| chosen.iter().map(|dt| dt.name().to_owned()).collect())
                .into(),
            updated: settings.updated.map(Timestamp::from).into(),
        }
    }
}

/// New link settings (they replace the old ones whole).
#[derive(Debug, Clone, Object)]
#[oai(rename_all = "camelCase", deny_unknown_fields)]
pub struct LinkSettingsInput {
    /// The name your end customers see, 1 to 100 characters with at least one that is not a space; null or absent: a neutral wording.
    #[oai(default, validator(min_length = 1, max_length = 100, pattern = r"\S"))]
    pub display_name: Nullable<String>,
    /// Redirect URLs sessions may use (exact match): `https`, or `http` to a loopback host; no fragment. At most 20.
    #[oai(default)]
    pub allowed_redirect_urls: Vec<String>,
    /// Origins allowed to frame the hosted pages. At most 20.
    #[oai(default)]
    pub allowed_frame_origins: Vec<String>,
    /// Data types to queue on a first link (`invoices`, `customers`, ...; those a platform lacks are skipped); null or absent: every data type the platform syncs; `[]`: none.
    #[oai(default)]
    pub fetch_on_first_link: Nullable<Vec<String>>,
}

/// Answer of `getLinkSettings` and `setLinkSettings`.
#[derive(ApiResponse)]
pub enum LinkSettingsFound {
    /// The settings.
    #[oai(status = 200)]
    Ok(Json<LinkSettings>),
}

type CreateErrors = ErrorResponses<
    {
        status::AUTHENTICATED
            | status::JSON_BODY
            | status::NOT_FOUND
            | status::CONFLICT
            | status::UNPROCESSABLE
    },
>;
type ReadErrors =
    ErrorResponses<{ status::AUTHENTICATED | status::BAD_REQUEST | status::NOT_FOUND }>;
type SettingsErrors = ErrorResponses<{ status::AUTHENTICATED }>;
type SetSettingsErrors = ErrorResponses<{ status::AUTHENTICATED | status::JSON_BODY }>;

#[OpenApi(tag = "ApiTags::Links")]
impl LinksApi {
    /// Create a link session
    ///
    /// Starts one end customer's way to a linked connection of the company:
    /// send them to `linkUrl`, where tributary's hosted pages let them pick
    /// the platform (unless `platformKey` is given), consent at the platform
    /// (as your OAuth application: store it first with
    /// `PUT /integrations/{platformKey}/oauth-client`, and register
    /// `callbackUrl` from `GET /integrations/{platformKey}` with it), choose
    /// the organization where one consent covers several, and come back to
    /// your `redirectUrl`. A connection first linked this way queues the
    /// data types of your `fetchOnFirstLink` at once. With `connectionId`,
    /// the session repairs that `PendingAuth` or `Deauthorized` connection
    /// in place. The session lasts 30 minutes and completes once; confirm
    /// how it ended with `GET .../linkSessions/{linkSessionId}`, since
    /// anyone can forge the parameters of a redirect.
    #[oai(
        path = "/companies/:companyId/linkSessions",
        method = "post",
        operation_id = "createLinkSession"
    )]
    async fn create_link_session(
        &self,
        tenant: Tenant,
        state: Data<&AppState>,
        /// The company's id.
        #[oai(name = "companyId")]
        company_id: Path<Uuid>,
        body: JsonBody<LinkSessionInput>,
    ) -> Result<LinkSessionCreated, CreateErrors> {
        let input = body.0;
        let created = sessions::create(
            &state.db,
            &state.connectors,
            tenant,
            company_id.0,
            NewLinkSession {
                platform_key: input.platform_key.0,
                connection_id: input.connection_id.0,
                redirect_url: input.redirect_url.0,
            },
        )
        .await?;
        let id = created.session.id;
        let link_url = format!("{}/link/{id}?token={}", state.public_url, created.token);
        let location = format!("/companies/{}/linkSessions/{id}", company_id.0);
        Ok(LinkSessionCreated::Created(
            Json(CreatedLinkSession {
                session: created.session.into(),
                link_url,
            }),
            location,
        ))
    }

    /// Get a link session
    ///
    /// Where a link session stands, and once `Completed` the connection it
    /// linked: the trustworthy answer to a redirect's parameters.
    #[oai(
        path = "/companies/:companyId/linkSessions/:linkSessionId",
        method = "get",
        operation_id = "getLinkSession"
    )]
    async fn get_link_session(
        &self,
        tenant: Tenant,
        state: Data<&AppState>,
        /// The company's id.
        #[oai(name = "companyId")]
        company_id: Path<Uuid>,
        /// The link session's id.
        #[oai(name = "linkSessionId")]
        link_session_id: Path<Uuid>,
    ) -> Result<LinkSessionFound, ReadErrors> {
        let session = sessions::get(&state.db, tenant, company_id.0, link_session_id.0).await?;
        Ok(LinkSessionFound::Ok(Json(session.into())))
    }

    /// Get your link settings
    ///
    /// The name your end customers see, the redirect URLs and framing
    /// origins you allow, and what a first link fetches (the defaults until
    /// you set them).
    #[oai(
        path = "/linkSettings",
        method = "get",
        operation_id = "getLinkSettings"
    )]
    async fn get_link_settings(
        &self,
        tenant: Tenant,
        state: Data<&AppState>,
    ) -> Result<LinkSettingsFound, SettingsErrors> {
        let found = settings::get(&state.db, tenant.client_id).await?;
        Ok(LinkSettingsFound::Ok(Json(found.into())))
    }

    /// Set your link settings
    ///
    /// Replaces your link settings whole; every problem is listed at once.
    #[oai(
        path = "/linkSettings",
        method = "put",
        operation_id = "setLinkSettings"
    )]
    async fn set_link_settings(
        &self,
        tenant: Tenant,
        state: Data<&AppState>,
        body: JsonBody<LinkSettingsInput>,
    ) -> Result<LinkSettingsFound, SetSettingsErrors> {
        let input = body.0;
        let stored = settings::put(
            &state.db,
            tenant,
            NewLinkSettings {
                display_name: input.display_name.0,
                allowed_redirect_urls: input.allowed_redirect_urls,
                allowed_frame_origins: input.allowed_frame_origins,
                fetch_on_first_link: input.fetch_on_first_link.0,
            },
        )
        .await?;
        Ok(LinkSettingsFound::Ok(Json(stored.into())))
    }
}
