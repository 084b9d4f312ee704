//! The HTTP API: one file per resource, combined into one poem-openapi
//! service whose metadata is also the source of `openapi.yaml`.
//!
//! Handlers stay thin: extract, call the domain module, map the result.

use poem_openapi::{OpenApiService, Tags};

pub mod companies;
pub mod health;

/// Every endpoint group, in the order they appear in the docs.
pub type Api = (companies::CompaniesApi, health::HealthApi);

/// The API's title in the spec and Swagger UI.
pub const TITLE: &str = "tributary";

/// The tags grouping operations in the docs; each operation has exactly one.
#[derive(Tags)]
pub enum ApiTags {
    /// Companies are your end customers. Create one before adding its data connections.
    Companies,
    /// Service health, for load balancers and monitors; no API key needed.
    Service,
}

const DESCRIPTION: &str = include_str!("description.md");

/// Builds the OpenAPI service without touching a database, so the spec can
/// be produced and checked with nothing running.
pub fn service() -> OpenApiService<Api, ()> {
    OpenApiService::new(
        (companies::CompaniesApi, health::HealthApi),
        TITLE,
        env!("CARGO_PKG_VERSION"),
    )
    .description(DESCRIPTION)
}
