//! `GET /healthz`: whether the service and its database answer.

use poem::web::Data;
use poem_openapi::payload::Json;
use poem_openapi::{ApiResponse, Object, OpenApi};
use sea_orm::ConnectionTrait;

use crate::http::api::ApiTags;
use crate::http::error::{ApiError, ErrorResponses, status};
use crate::http::state::AppState;

/// Health endpoints.
pub struct HealthApi;

/// The service's health.
#[derive(Debug, Object)]
pub struct Health {
    /// Always `ok` in a 200 answer.
    pub status: String,
}

/// A healthy answer.
#[derive(ApiResponse)]
pub enum HealthResponse {
    /// The service and its database answer.
    #[oai(status = 200)]
    Healthy(Json<Health>),
}

#[OpenApi(tag = "ApiTags::Service")]
impl HealthApi {
    /// Check health
    ///
    /// Answers 200 when the database answers a trivial query, 503 otherwise.
    /// Needs no API key.
    #[oai(path = "/healthz", method = "get", operation_id = "getHealth")]
    async fn get_health(
        &self,
        state: Data<&AppState>,
    ) -> Result<HealthResponse, ErrorResponses<{ status::UNAVAILABLE | status::INTERNAL }>> {
        state
            .db
            .execute_unprepared("SELECT 1")
            .await
            .map_err(|error| {
                tracing::warn!(error = %error, "health check: database not answering");
                ApiError::Unavailable("The database is not answering.".to_owned())
            })?;
        Ok(HealthResponse::Healthy(Json(Health {
            status: "ok".to_owned(),
        })))
    }
}
