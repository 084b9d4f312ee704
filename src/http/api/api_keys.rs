//! `/apiKeys`: the calling client's API keys: create (the key is shown
//! once), list, read and delete.

use poem::Request;
use poem::web::Data;
use poem_openapi::param::{Path, Query};
use poem_openapi::payload::Json;
use poem_openapi::{ApiResponse, Object, OpenApi};
use uuid::Uuid;

use crate::api_keys::{self, NewApiKey};
use crate::http::api::ApiTags;
use crate::http::error::{ErrorResponses, status};
use crate::http::json_body::JsonBody;
use crate::http::paging::{ListLocation, Paged};
use crate::http::state::AppState;
use crate::http::types::{Nullable, Timestamp};
use crate::paging::{self, PageRequest};
use crate::tenant::Tenant;

/// API key endpoints.
pub struct ApiKeysApi;

/// An API key as listed: never the key itself, which is shown only once,
/// when it is created.
#[derive(Debug, Clone, Object)]
#[oai(rename_all = "camelCase")]
pub struct ApiKey {
    /// The key's id, used as `{apiKeyId}` in paths (not secret).
    pub id: Uuid,
    /// What the key is for, as its creator named it.
    pub name: String,
    /// When the key was created (RFC 3339, UTC).
    pub created: Timestamp,
    /// When the key last authenticated a request; null if never. Recorded when a
    /// server checks the key against the database, which it does at most once a
    /// minute per key, so it can be up to a minute early.
    pub last_used: Nullable<Timestamp>,
}

impl From<entity::api_key::Model> for ApiKey {
    fn from(row: entity::api_key::Model) -> Self {
        Self {
            id: row.id,
            name: row.name,
            created: row.created.into(),
            last_used: row.last_used.map(Timestamp).into(),
        }
    }
}

/// A key just created: the only answer that contains the key.
#[derive(Debug, Clone, Object)]
#[oai(rename_all = "camelCase")]
pub struct CreatedApiKey {
    /// The key's id, used as `{apiKeyId}` in paths (not secret).
    pub id: Uuid,
    /// What the key is for.
    pub name: String,
    /// When the key was created (RFC 3339, UTC).
    pub created: Timestamp,
    /// The key. Store it now: tributary keeps only its SHA-256 digest and cannot
    /// show it again. Send it as `Authorization: Basic <base64(key)>`.
    pub key: String,
}

impl From<NewApiKey> for CreatedApiKey {
    fn from(created: NewApiKey) -> Self {
        Self {
            id: created.row.id,
            name: created.row.name,
            created: created.row.created.into(),
            key: created.key,
        }
    }
}

/// The fields of a key that you set.
#[derive(Debug, Clone, Object)]
#[oai(rename_all = "camelCase", deny_unknown_fields)]
pub struct ApiKeyInput {
    /// What the key is for (the system or person using it), 1 to 200 characters with at least one that is not a space; surrounding whitespace is trimmed. Left out: `created through the API` (the command line's keys are `created on the command line`).
    #[oai(
        default = "default_key_name",
        validator(min_length = 1, max_length = 200, pattern = r"\S")
    )]
    pub name: String,
}

/// A key's name when its creator gave none.
fn default_key_name() -> String {
    api_keys::API_KEY_NAME.to_owned()
}

/// Answer of `listApiKeys`.
#[derive(ApiResponse)]
pub enum ApiKeyPage {
    /// A page of your API keys.
    #[oai(status = 200)]
    Ok(Json<Paged<ApiKey>>),
}

/// Answer of `getApiKey`.
#[derive(ApiResponse)]
pub enum ApiKeyFound {
    /// The API key (without the key itself).
    #[oai(status = 200)]
    Ok(Json<ApiKey>),
}

/// Answer of `createApiKey`.
#[derive(ApiResponse)]
pub enum ApiKeyCreated {
    /// The key was created; the body holds the key, shown this once, and
    /// `Location` is its path.
    #[oai(status = 201)]
    Created(
        Json<CreatedApiKey>,
        /// The path of the new key.
        #[oai(header = "Location")]
        String,
    ),
}

/// Answer of `deleteApiKey`.
#[derive(ApiResponse)]
pub enum ApiKeyDeleted {
    /// The key was deleted.
    #[oai(status = 204)]
    Deleted,
}

type ListErrors = ErrorResponses<{ status::AUTHENTICATED | status::BAD_REQUEST }>;
type CreateErrors =
    ErrorResponses<{ status::AUTHENTICATED | status::JSON_BODY | status::CONFLICT }>;
type ReadErrors =
    ErrorResponses<{ status::AUTHENTICATED | status::BAD_REQUEST | status::NOT_FOUND }>;
type DeleteErrors = ErrorResponses<
    { status::AUTHENTICATED | status::BAD_REQUEST | status::NOT_FOUND | status::CONFLICT },
>;

#[OpenApi(tag = "ApiTags::ApiKeys")]
impl ApiKeysApi {
    /// List API keys
    ///
    /// Your API keys, oldest first (ties broken by id), in the paged envelope:
    /// their ids, names, and when each was created and last used. The keys
    /// themselves are never shown again after their creation.
    #[oai(path = "/apiKeys", method = "get", operation_id = "listApiKeys")]
    async fn list_api_keys(
        &self,
        tenant: Tenant,
        state: Data<&AppState>,
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
    ) -> Result<ApiKeyPage, ListErrors> {
        let page = PageRequest::new(page.0, page_size.0)?;
        let (rows, total) = api_keys::list(&state.db, tenant, page).await?;
        let results = rows.into_iter().map(ApiKey::from).collect();
        let location = ListLocation::new(request.uri().path());
        Ok(ApiKeyPage::Ok(Json(Paged::new(
            results, total, page, &location,
        ))))
    }

    /// Create an API key
    ///
    /// Creates another key for your client: it sees and changes the same
    /// companies as the key that created it. The answer is the only time the
    /// key is shown. A client holds at most 10 keys; creating an eleventh
    /// answers 409 (delete one first). Rotate a key by creating its successor,
    /// moving your systems to it, then deleting the old one.
    #[oai(path = "/apiKeys", method = "post", operation_id = "createApiKey")]
    async fn create_api_key(
        &self,
        tenant: Tenant,
        state: Data<&AppState>,
        body: JsonBody<ApiKeyInput>,
    ) -> Result<ApiKeyCreated, CreateErrors> {
        let created = api_keys::create_for(&state.db, tenant, &body.0.name).await?;
        let location = format!("/apiKeys/{}", created.row.id);
        Ok(ApiKeyCreated::Created(Json(created.into()), location))
    }

    /// Get an API key
    ///
    /// The key's id, name, and when it was created and last used; never the key.
    #[oai(
        path = "/apiKeys/:apiKeyId",
        method = "get",
        operation_id = "getApiKey"
    )]
    async fn get_api_key(
        &self,
        tenant: Tenant,
        state: Data<&AppState>,
        /// The key's id.
        #[oai(name = "apiKeyId")]
        api_key_id: Path<Uuid>,
    ) -> Result<ApiKeyFound, ReadErrors> {
        let row = api_keys::find(&state.db, tenant, api_key_id.0).await?;
        Ok(ApiKeyFound::Ok(Json(row.into())))
    }

    /// Delete an API key
    ///
    /// The key stops working at once on the server that answers, and on every
    /// other server of the same installation within 60 seconds (each remembers
    /// a verified key for that long). A key may delete itself. Your last key
    /// cannot be deleted (409): create its successor first.
    #[oai(
        path = "/apiKeys/:apiKeyId",
        method = "delete",
        operation_id = "deleteApiKey"
    )]
    async fn delete_api_key(
        &self,
        tenant: Tenant,
        state: Data<&AppState>,
        /// The key's id.
        #[oai(name = "apiKeyId")]
        api_key_id: Path<Uuid>,
    ) -> Result<ApiKeyDeleted, DeleteErrors> {
        api_keys::delete(&state.db, &state.key_cache, tenant, api_key_id.0).await?;
        Ok(ApiKeyDeleted::Deleted)
    }
}
