//! `/integrations`: the catalogue of platforms, each with the body its
//! token migration takes.

use poem::Request;
use poem::web::Data;
use poem_openapi::param::{Path, Query};
use poem_openapi::payload::Json;
use poem_openapi::{ApiResponse, Object, OpenApi};

use crate::data::DataType;
use crate::http::api::ApiTags;
use crate::http::error::{ApiError, ErrorResponses, status};
use crate::http::json_body::JsonBody;
use crate::http::paging::{ListLocation, Paged};
use crate::http::schema::Described;
use crate::http::state::AppState;
use crate::http::types::{Nullable, Timestamp};
use crate::links::flow::Urls;
use crate::oauth_clients::{self, OAuthClientFacts};
use crate::paging::{self, PageRequest};
use crate::platforms::{self, SourceType};
use crate::tenant::Tenant;

/// Integration endpoints.
pub struct IntegrationsApi;

/// A platform tributary connects to.
#[derive(Debug, Clone, Object)]
#[oai(rename_all = "camelCase")]
pub struct Integration {
    /// The platform's key, used as `platformKey` when creating a connection.
    pub platform_key: String,
    /// The platform's name.
    pub name: String,
    /// What kind of platform it is.
    pub source_type: Described<SourceType>,
    /// Whether `PUT .../authorization` accepts tokens for it (self-service token migration).
    pub self_service_migration: bool,
    /// Whether `POST /migrations` accepts a batch of it (managed migration: tributary verifies and syncs a canary connection, then migrates the rest): it takes migrated tokens and tributary syncs it.
    pub managed_migration: bool,
    /// The data types a sync of a connection to it fetches.
    pub data_types: Vec<Described<DataType>>,
    /// Those of `dataTypes` whose syncs, after a connection's first, ask the platform only for what changed since the
    /// last one (`fetchMode: Incremental`), by the filter the platform documents; the others fetch its whole list
    /// every sync. Each platform's notes in the repository name the filter.
    pub incremental_data_types: Vec<Described<DataType>>,
    /// The name of its authorization body's schema in `openapi.yaml` (e.g. `XeroAuthorization`); null without self-service migration.
    pub authorization_schema_name: Nullable<String>,
}

/// A platform, with the JSON Schema of its authorization body.
#[derive(Debug, Clone, Object)]
#[oai(rename_all = "camelCase")]
pub struct IntegrationDetails {
    /// The platform.
    #[oai(flatten)]
    pub integration: Integration,
    /// The JSON Schema (draft 7) of the body `PUT .../authorization` takes for this platform; null without self-service migration.
    pub authorization_schema: Nullable<serde_json::Value>,
    /// Whether end customers can link it through a link session (`POST /companies/{companyId}/linkSessions`).
    pub linkable: bool,
    /// Why it cannot be linked through a link session; null when it can.
    pub link_unavailable_reason: Nullable<String>,
    /// tributary's OAuth callback for this platform: register it as a redirect URI of your OAuth application at the platform (link sessions send it as `redirect_uri`; a managed migration's `callbackUrlAdded` step is this URL). Null when it cannot be linked or needs no OAuth application (the sandbox).
    pub callback_url: Nullable<String>,
    /// The scopes a link session asks the platform for: the read scopes of what tributary syncs from it. Empty when it cannot be linked.
    pub link_scopes: Vec<String>,
}

impl From<&platforms::Platform> for Integration {
    fn from(integration: &platforms::Platform) -> Self {
        Self {
            platform_key: integration.platform_key.to_owned(),
            name: integration.name.to_owned(),
            source_type: integration.source_type.into(),
            self_service_migration: integration.self_service_migration(),
            managed_migration: integration.managed_migration(),
            data_types: integration
                .data_types
                .iter()
                .copied()
                .map(Described)
                .collect(),
            incremental_data_types: integration
                .connector
                .map(|connector| connector.incremental())
                .unwrap_or_default()
                .into_iter()
                .map(Described)
                .collect(),
            authorization_schema_name: integration
                .authorization
                .map(|body| body.schema_name())
                .into(),
        }
    }
}

/// Answer of `listIntegrations`.
#[derive(ApiResponse)]
pub enum IntegrationPage {
    /// A page of integrations.
    #[oai(status = 200)]
    Ok(Json<Paged<Integration>>),
}

/// Answer of `getIntegration`.
#[derive(ApiResponse)]
pub enum IntegrationFound {
    /// The integration and its authorization body's schema.
    #[oai(status = 200)]
    Ok(Json<IntegrationDetails>),
}

/// Your own OAuth application for a platform: the one that issued the
/// tokens you migrate, which tributary uses to refresh them.
#[derive(Debug, Clone, Object)]
#[oai(rename_all = "camelCase", deny_unknown_fields)]
pub struct OAuthClientInput {
    /// The application's OAuth client id.
    #[oai(validator(min_length = 1, max_length = 1024))]
    pub client_id: String,
    /// The application's OAuth client secret. Stored encrypted; never returned.
    #[oai(validator(min_length = 1, max_length = 4096))]
    pub client_secret: String,
}

/// A stored OAuth application (its secret is never returned).
#[derive(Debug, Clone, Object)]
#[oai(rename_all = "camelCase")]
pub struct OAuthClient {
    /// The platform the application belongs to.
    pub platform_key: String,
    /// The application's OAuth client id.
    pub client_id: String,
    /// When the client id and secret were last set (RFC 3339, UTC).
    pub updated: Timestamp,
}

impl From<OAuthClientFacts> for OAuthClient {
    fn from(facts: OAuthClientFacts) -> Self {
        Self {
            platform_key: facts.platform_key,
            client_id: facts.client_id,
            updated: facts.updated.into(),
        }
    }
}

/// Answer of `setOauthClient` and `getOauthClient`.
#[derive(ApiResponse)]
pub enum OAuthClientFound {
    /// The stored OAuth application, without its secret.
    #[oai(status = 200)]
    Ok(Json<OAuthClient>),
}

/// Answer of `deleteOauthClient`.
#[derive(ApiResponse)]
pub enum DeletedOAuthClient {
    /// The OAuth application was removed; tokens of this platform are no longer refreshed.
    #[oai(status = 204)]
    Deleted,
}

type ListErrors = ErrorResponses<{ status::AUTHENTICATED | status::BAD_REQUEST }>;
type OAuthClientErrors =
    ErrorResponses<{ status::AUTHENTICATED | status::BAD_REQUEST | status::NOT_FOUND }>;
type SetOAuthClientErrors =
    ErrorResponses<{ status::AUTHENTICATED | status::JSON_BODY | status::NOT_FOUND }>;
type ReadErrors =
    ErrorResponses<{ status::AUTHENTICATED | status::BAD_REQUEST | status::NOT_FOUND }>;

#[OpenApi(tag = "ApiTags::Integrations")]
impl IntegrationsApi {
    /// List integrations
    ///
    /// Every platform you can connect to, ordered by `platformKey`, with what
    /// each supports.
    #[oai(
        path = "/integrations",
        method = "get",
        operation_id = "listIntegrations"
    )]
    async fn list_integrations(
        &self,
        _tenant: Tenant,
        request: &Request,
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
    ) -> Result<IntegrationPage, ListErrors> {
        let page = PageRequest::new(page.0, page_size.0)?;
        let catalogue = platforms::all();
        let results = page
            .slice(catalogue)
            .iter()
            .map(|platform| Integration::from(*platform))
            .collect();
        let location = ListLocation::new(request.uri().path());
        Ok(IntegrationPage::Ok(Json(Paged::new(
            results,
            catalogue.len() as u64,
            page,
            &location,
        ))))
    }

    /// Get an integration
    ///
    /// One platform, with `authorizationSchema`: the JSON Schema of the body
    /// `PUT /companies/{companyId}/connections/{connectionId}/authorization`
    /// takes for it (also in `openapi.yaml` as the component named by
    /// `authorizationSchemaName`).
    #[oai(
        path = "/integrations/:platformKey",
        method = "get",
        operation_id = "getIntegration"
    )]
    async fn get_integration(
        &self,
        _tenant: Tenant,
        state: Data<&AppState>,
        /// The platform's key, e.g. `xero`.
        #[oai(name = "platformKey")]
        platform_key: Path<String>,
    ) -> Result<IntegrationFound, ReadErrors> {
        let integration = platforms::find(&platform_key.0).ok_or_else(|| {
            ApiError::NotFound(format!(
                "No integration with platformKey `{}`; GET /integrations lists them.",
                platform_key.0
            ))
        })?;
        let link = match state.connectors.get(integration.platform_key) {
            Some(connector) => connector.link_spec(),
            None => Err("tributary has no connector for this platform"),
        };
        let urls = Urls {
            public_base: &state.public_url,
        };
        let (callback_url, link_scopes) = match &link {
            Ok(spec) if spec.in_process => {
                (None, spec.scopes.iter().map(|s| (*s).to_owned()).collect())
            }
            Ok(spec) => (
                Some(urls.callback(integration.platform_key)),
                spec.scopes
                    .iter()
                    .map(|scope| (*scope).to_owned())
                    .collect(),
            ),
            Err(_) => (None, Vec::new()),
        };
        Ok(IntegrationFound::Ok(Json(IntegrationDetails {
            integration: integration.into(),
            authorization_schema: integration
                .authorization
                .map(|body| body.json_schema())
                .into(),
            linkable: link.is_ok(),
            link_unavailable_reason: link.err().map(str::to_owned).into(),
            callback_url: callback_url.into(),
            link_scopes,
        })))
    }

    /// Set your OAuth client for a platform
    ///
    /// Stores the client id and secret of your own OAuth application for the
    /// platform (replacing any earlier one). tributary uses it to refresh the
    /// tokens you migrated for this platform's connections: before an access
    /// token expires, and when the platform rejects one. The secret is
    /// encrypted at rest and never returned. Only platforms with self-service
    /// token migration have this resource (404 for the others).
    #[oai(
        path = "/integrations/:platformKey/oauth-client",
        method = "put",
        operation_id = "setOauthClient"
    )]
    async fn set_oauth_client(
        &self,
        tenant: Tenant,
        state: Data<&AppState>,
        /// The platform's key, e.g. `xero`.
        #[oai(name = "platformKey")]
        platform_key: Path<String>,
        body: JsonBody<OAuthClientInput>,
    ) -> Result<OAuthClientFound, SetOAuthClientErrors> {
        let facts = oauth_clients::put(
            &state.db,
            &state.keyring,
            tenant,
            &platform_key.0,
            &body.0.client_id,
            &body.0.client_secret,
        )
        .await?;
        Ok(OAuthClientFound::Ok(Json(facts.into())))
    }

    /// Get your OAuth client for a platform
    ///
    /// The client id of your stored OAuth application and when it was set
    /// (never the secret); 404 if none is stored.
    #[oai(
        path = "/integrations/:platformKey/oauth-client",
        method = "get",
        operation_id = "getOauthClient"
    )]
    async fn get_oauth_client(
        &self,
        tenant: Tenant,
        state: Data<&AppState>,
        /// The platform's key, e.g. `xero`.
        #[oai(name = "platformKey")]
        platform_key: Path<String>,
    ) -> Result<OAuthClientFound, OAuthClientErrors> {
        let facts = oauth_clients::get(&state.db, tenant, &platform_key.0).await?;
        Ok(OAuthClientFound::Ok(Json(facts.into())))
    }

    /// Delete your OAuth client for a platform
    ///
    /// Removes the stored OAuth application; the platform's tokens are no
    /// longer refreshed (syncs needing a refresh fail saying so).
    #[oai(
        path = "/integrations/:platformKey/oauth-client",
        method = "delete",
        operation_id = "deleteOauthClient"
    )]
    async fn delete_oauth_client(
        &self,
        tenant: Tenant,
        state: Data<&AppState>,
        /// The platform's key, e.g. `xero`.
        #[oai(name = "platformKey")]
        platform_key: Path<String>,
    ) -> Result<DeletedOAuthClient, OAuthClientErrors> {
        oauth_clients::delete(&state.db, tenant, &platform_key.0).await?;
        Ok(DeletedOAuthClient::Deleted)
    }
}
