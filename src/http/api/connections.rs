//! `/companies/{companyId}/connections`: a company's data connections and
//! their authorization (self-service token migration).

use poem::Request;
use poem::web::Data;
use poem_openapi::param::{Path, Query};
use poem_openapi::payload::Json;
use poem_openapi::{ApiResponse, Enum, Object, OpenApi};
use uuid::Uuid;

use crate::connections::{self, ConnectionStatus, ConnectionView, CredentialFacts};
use crate::http::api::ApiTags;
use crate::http::error::{ApiError, ErrorResponses, status};
use crate::http::json_body::AuthorizationPayload;
use crate::http::json_body::JsonBody;
use crate::http::paging::{ListLocation, Paged};
use crate::http::schema::Described;
use crate::http::state::AppState;
use crate::http::types::{Nullable, Timestamp};
use crate::paging::{self, PageRequest};
use crate::platforms::{self, SourceType};
use crate::tenant::Tenant;

/// Connection endpoints.
pub struct ConnectionsApi;

/// A company's link to one platform.
#[derive(Debug, Clone, Object)]
#[oai(rename_all = "camelCase")]
pub struct Connection {
    /// The connection's id, used as `{connectionId}` in paths.
    pub connection_id: Uuid,
    /// The company the connection belongs to.
    pub company_id: Uuid,
    /// The platform's key in the integrations catalogue.
    pub platform_key: String,
    /// The platform's name.
    pub platform_name: String,
    /// What kind of platform it is.
    pub source_type: Described<SourceType>,
    /// Where the connection stands.
    pub status: Described<ConnectionStatus>,
    /// When the connection was created (RFC 3339, UTC).
    pub created: Timestamp,
    /// When a data sync of the connection last completed; null until one does.
    pub last_sync: Nullable<Timestamp>,
    /// Non-secret facts about the stored authorization; null until authorized. Tokens are never returned.
    pub authorization: Nullable<AuthorizationFacts>,
}

/// What can be shown about a connection's authorization.
#[derive(Debug, Clone, Object)]
#[oai(rename_all = "camelCase")]
pub struct AuthorizationFacts {
    /// The platform's organization identifier from the authorization body (Xero's tenant id, QuickBooks' realm id, ...).
    pub organization_id: String,
    /// When the access token expires; null for tokens that do not expire.
    pub access_token_expires_at: Nullable<Timestamp>,
    /// When the authorization was last replaced.
    pub updated: Timestamp,
}

impl From<CredentialFacts> for AuthorizationFacts {
    fn from(facts: CredentialFacts) -> Self {
        Self {
            organization_id: facts.organization_id,
            access_token_expires_at: facts.access_token_expires_at.map(Timestamp).into(),
            updated: facts.updated.into(),
        }
    }
}

impl TryFrom<ConnectionView> for Connection {
    type Error = ApiError;

    fn try_from(view: ConnectionView) -> Result<Self, ApiError> {
        let row = view.connection;
        let integration = platforms::find(&row.platform_key).ok_or_else(|| {
            ApiError::internal(anyhow::anyhow!(
                "stored platform key {:?} is not in the catalogue",
                row.platform_key
            ))
        })?;
        Ok(Self {
            connection_id: row.id,
            company_id: row.company_id,
            platform_key: row.platform_key,
            platform_name: integration.name.to_owned(),
            source_type: integration.source_type.into(),
            status: row.status.into(),
            created: row.created.into(),
            last_sync: row.last_sync.map(Timestamp).into(),
            authorization: view.credential.map(AuthorizationFacts::from).into(),
        })
    }
}

/// What a new connection connects to.
#[derive(Debug, Clone, Object)]
#[oai(rename_all = "camelCase", deny_unknown_fields)]
pub struct ConnectionInput {
    /// The platform's key, from `GET /integrations` (e.g. `xero`).
    #[oai(validator(min_length = 1, max_length = 64))]
    pub platform_key: String,
}

/// The one status change a client can make.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Enum)]
pub enum StatusChange {
    /// Sever a `Linked` connection; its synced data stays readable.
    Unlinked,
}

/// A change to a connection.
#[derive(Debug, Clone, Object)]
#[oai(rename_all = "camelCase", deny_unknown_fields)]
pub struct ConnectionUpdate {
    /// The new status; only `Unlinked`, from `Linked`.
    pub status: StatusChange,
}

/// Answer of `listConnections`.
#[derive(ApiResponse)]
pub enum ConnectionPage {
    /// A page of the company's connections.
    #[oai(status = 200)]
    Ok(Json<Paged<Connection>>),
}

/// Answer of `createConnection`.
#[derive(ApiResponse)]
pub enum CreatedConnection {
    /// The connection was created, in `PendingAuth`; `Location` is its URL.
    #[oai(status = 201)]
    Created(
        Json<Connection>,
        /// The path of the new connection.
        #[oai(header = "Location")]
        String,
    ),
}

/// Answer of the operations that return one connection.
#[derive(ApiResponse)]
pub enum ConnectionFound {
    /// The connection.
    #[oai(status = 200)]
    Ok(Json<Connection>),
}

/// Answer of `deleteConnection`.
#[derive(ApiResponse)]
pub enum DeletedConnection {
    /// The connection and its stored tokens were deleted.
    #[oai(status = 204)]
    Deleted,
}

type ListErrors =
    ErrorResponses<{ status::AUTHENTICATED | status::BAD_REQUEST | status::NOT_FOUND }>;
type CreateErrors =
    ErrorResponses<{ status::AUTHENTICATED | status::JSON_BODY | status::NOT_FOUND }>;
type ReadErrors =
    ErrorResponses<{ status::AUTHENTICATED | status::BAD_REQUEST | status::NOT_FOUND }>;
type UpdateErrors = ErrorResponses<
    { status::AUTHENTICATED | status::JSON_BODY | status::NOT_FOUND | status::CONFLICT },
>;
type AuthorizeErrors = ErrorResponses<
    {
        status::AUTHENTICATED
            | status::JSON_BODY
            | status::NOT_FOUND
            | status::CONFLICT
            | status::UNPROCESSABLE
            | status::UNAVAILABLE
    },
>;

#[OpenApi(tag = "ApiTags::Connections")]
impl ConnectionsApi {
    /// List connections
    ///
    /// The company's connections, oldest first (ties broken by id), in the paged envelope.
    #[oai(
        path = "/companies/:companyId/connections",
        method = "get",
        operation_id = "listConnections"
    )]
    async fn list_connections(
        &self,
        tenant: Tenant,
        state: Data<&AppState>,
        request: &Request,
        /// The company's id.
        #[oai(name = "companyId")]
        company_id: Path<Uuid>,
        /// The page to return, from 1.
        #[oai(default = "paging::default_page", validator(minimum(value = "1")))]
        page: Query<i32>,
        /// Results per page, from 1 to 5000.
        #[oai(
            name = "pageSize",
            default = "paging::default_page_size",
            validator(minimum(value = "1"), maximum(value = "5000"))
        )]
        page_size: Query<i32>,
    ) -> Result<ConnectionPage, ListErrors> {
        let page = PageRequest::new(page.0, page_size.0)?;
        let (views, total) = connections::list(&state.db, tenant, company_id.0, page).await?;
        let results = views
            .into_iter()
            .map(Connection::try_from)
            .collect::<Result<_, _>>()?;
        let location = ListLocation::new(request.uri().path());
        Ok(ConnectionPage::Ok(Json(Paged::new(
            results, total, page, &location,
        ))))
    }

    /// Create a connection
    ///
    /// Creates a connection of the company to a platform, in `PendingAuth`.
    /// To migrate tokens your own OAuth application obtained, follow with
    /// `PUT .../authorization`; nothing syncs until you ask.
    #[oai(
        path = "/companies/:companyId/connections",
        method = "post",
        operation_id = "createConnection"
    )]
    async fn create_connection(
        &self,
        tenant: Tenant,
        state: Data<&AppState>,
        /// The company's id.
        #[oai(name = "companyId")]
        company_id: Path<Uuid>,
        body: JsonBody<ConnectionInput>,
    ) -> Result<CreatedConnection, CreateErrors> {
        let view =
            connections::create(&state.db, tenant, company_id.0, &body.0.platform_key).await?;
        let location = format!(
            "/companies/{}/connections/{}",
            company_id.0, view.connection.id
        );
        Ok(CreatedConnection::Created(Json(view.try_into()?), location))
    }

    /// Get a connection
    #[oai(
        path = "/companies/:companyId/connections/:connectionId",
        method = "get",
        operation_id = "getConnection"
    )]
    async fn get_connection(
        &self,
        tenant: Tenant,
        state: Data<&AppState>,
        /// The company's id.
        #[oai(name = "companyId")]
        company_id: Path<Uuid>,
        /// The connection's id.
        #[oai(name = "connectionId")]
        connection_id: Path<Uuid>,
    ) -> Result<ConnectionFound, ReadErrors> {
        let view = connections::find(&state.db, tenant, company_id.0, connection_id.0).await?;
        Ok(ConnectionFound::Ok(Json(view.try_into()?)))
    }

    /// Unlink a connection
    ///
    /// Sets a `Linked` connection to `Unlinked` (409 from any other status).
    /// Its synced data stays readable; new tokens link it again.
    #[oai(
        path = "/companies/:companyId/connections/:connectionId",
        method = "patch",
        operation_id = "updateConnection"
    )]
    async fn update_connection(
        &self,
        tenant: Tenant,
        state: Data<&AppState>,
        /// The company's id.
        #[oai(name = "companyId")]
        company_id: Path<Uuid>,
        /// The connection's id.
        #[oai(name = "connectionId")]
        connection_id: Path<Uuid>,
        body: JsonBody<ConnectionUpdate>,
    ) -> Result<ConnectionFound, UpdateErrors> {
        let StatusChange::Unlinked = body.0.status;
        let view = connections::unlink(&state.db, tenant, company_id.0, connection_id.0).await?;
        Ok(ConnectionFound::Ok(Json(view.try_into()?)))
    }

    /// Delete a connection
    ///
    /// Deletes the connection and destroys its stored tokens.
    #[oai(
        path = "/companies/:companyId/connections/:connectionId",
        method = "delete",
        operation_id = "deleteConnection"
    )]
    async fn delete_connection(
        &self,
        tenant: Tenant,
        state: Data<&AppState>,
        /// The company's id.
        #[oai(name = "companyId")]
        company_id: Path<Uuid>,
        /// The connection's id.
        #[oai(name = "connectionId")]
        connection_id: Path<Uuid>,
    ) -> Result<DeletedConnection, ReadErrors> {
        connections::delete(&state.db, tenant, company_id.0, connection_id.0).await?;
        Ok(DeletedConnection::Deleted)
    }

    /// Authorize a connection (token migration)
    ///
    /// Hands over the tokens your own OAuth application obtained for this
    /// end customer, so nobody has to reconnect. The body depends on the
    /// connection's platform: `GET /integrations/{platformKey}` gives its
    /// JSON Schema, and `openapi.yaml` has each as a component
    /// (`XeroAuthorization`, `QuickBooksOnlineAuthorization`, ...). Every
    /// problem is reported by field and nothing is stored on a 400; a body
    /// that is another platform's answers 409 saying so. Platforms without
    /// self-service migration answer 422.
    ///
    /// On success the connection is `Linked`; the tokens are encrypted at
    /// rest and never returned. Sending new tokens replaces the old ones and
    /// links the connection again. No sync starts: call
    /// `POST /companies/{companyId}/data/all` when you are ready.
    ///
    /// With `verify=true`, tributary first proves the tokens with the
    /// platform: one cheap authenticated call (Xero `GET /connections`,
    /// checking the tenant; QuickBooks `companyinfo`; Zoho Books
    /// `organizations`, checking the organization), or, when the access token
    /// has already expired, a refresh with your OAuth client (`PUT
    /// /integrations/{platformKey}/oauth-client`), whose new tokens are the
    /// ones stored. Tokens the platform rejects answer 422 with its reason,
    /// and nothing is stored; 503 if the platform cannot be reached. Platforms
    /// tributary has no connector for answer 422 to `verify=true`.
    #[oai(
        path = "/companies/:companyId/connections/:connectionId/authorization",
        method = "put",
        operation_id = "authorizeConnection"
    )]
    async fn authorize_connection(
        &self,
        tenant: Tenant,
        state: Data<&AppState>,
        /// The company's id.
        #[oai(name = "companyId")]
        company_id: Path<Uuid>,
        /// The connection's id.
        #[oai(name = "connectionId")]
        connection_id: Path<Uuid>,
        /// `true`: prove the tokens with the platform before storing them (default `false`).
        verify: Query<Option<bool>>,
        body: AuthorizationPayload,
    ) -> Result<ConnectionFound, AuthorizeErrors> {
        let verify = verify.0.unwrap_or(false).then_some(&state.connectors);
        let view = connections::authorize(
            &state.db,
            &state.keyring,
            tenant,
            company_id.0,
            connection_id.0,
            body.0,
            verify,
        )
        .await?;
        Ok(ConnectionFound::Ok(Json(view.try_into()?)))
    }
}
