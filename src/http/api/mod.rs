//! The HTTP API: one file per resource, combined into one poem-openapi
//! service whose metadata is also the source of `openapi.yaml`.
//!
//! Handlers stay thin: extract, call the domain module, map the result.

use poem_openapi::{ExtraHeader, LicenseObject, OpenApiService, ServerObject, Tags};

pub mod api_keys;
pub mod companies;
pub mod connections;
pub mod data;
pub mod health;
pub mod integrations;
pub mod links;
pub mod migrations;
pub mod records;
pub mod sync_settings;
pub mod webhooks;

/// Every endpoint group, in the order they appear in the docs.
pub type Api = (
    companies::CompaniesApi,
    connections::ConnectionsApi,
    links::LinksApi,
    data::DataApi,
    sync_settings::SyncSettingsApi,
    records::RecordsApi,
    integrations::IntegrationsApi,
    migrations::MigrationsApi,
    webhooks::WebhooksApi,
    api_keys::ApiKeysApi,
    health::HealthApi,
);

/// The API's title in the spec and Swagger UI.
pub const TITLE: &str = "tributary";

/// The tags grouping operations in the docs; each operation has exactly one.
#[derive(Tags)]
pub enum ApiTags {
    /// Companies are your end customers. Create one before adding its data connections.
    Companies,
    /// A connection links a company to one platform. Link one through a link session, or migrate tokens your own OAuth application obtained with `PUT .../authorization`.
    Connections,
    /// Link sessions send an end customer through tributary's hosted pages to consent at a platform, which links (or repairs) a connection; your link settings shape those pages.
    Links,
    /// Syncing a company's data from its connections (when asked, or at a connection's first link; your sync settings choose what `data/all` syncs), and reading each synced data type: invoices, customers, orders, bank accounts, bank transactions, the chart of accounts, suppliers, tax rates, bills, payments, bill payments, credit notes, items, company info and journal entries.
    Data,
    /// The platforms tributary connects to, and the authorization body each takes.
    Integrations,
    /// Managed migrations: many companies' tokens moved from your own OAuth application in one supervised batch (checklist, canary, the rest, the report).
    Migrations,
    /// Webhooks: endpoints that receive your events (signed, retried), their deliveries, retries and replays.
    Webhooks,
    /// Your API keys: create one (shown once), list them, delete one you no longer use.
    ApiKeys,
    /// Service health, for load balancers and monitors; no API key needed.
    Service,
}

const DESCRIPTION: &str = include_str!("description.md");

/// Builds the OpenAPI service without touching a database, so the spec can
/// be produced and checked with nothing running.
pub fn service() -> OpenApiService<Api, ()> {
    OpenApiService::new(
        (
            companies::CompaniesApi,
            connections::ConnectionsApi,
            links::LinksApi,
            data::DataApi,
            sync_settings::SyncSettingsApi,
            records::RecordsApi,
            integrations::IntegrationsApi,
            migrations::MigrationsApi,
            webhooks::WebhooksApi,
            api_keys::ApiKeysApi,
            health::HealthApi,
        ),
        TITLE,
        env!("CARGO_PKG_VERSION"),
    )
    .description(DESCRIPTION)
    .license(LicenseObject::new("Apache-2.0").url("https://www.apache.org/licenses/LICENSE-2.0"))
    // Relative: the API is wherever this document is served from, so Swagger
    // UI calls the server it was loaded from and clients take a base URL.
    .server(
        ServerObject::new("/")
            .description("The server this document is served from; paths are relative to it."),
    )
    .extra_response_header::<String, _>(ExtraHeader::new("X-Correlation-Id").description(
        "The request's correlation id: yours if you sent a valid one, else a new one.",
    ))
    .extra_response_header::<Option<String>, _>(ExtraHeader::new("RateLimit-Policy").description(
        "The request quota per client (draft-ietf-httpapi-ratelimit-headers): `\"client\";q=60000;w=60` is 60,000 \
         requests per 60 seconds. Absent when the installation sets no quota.",
    ))
    .extra_response_header::<Option<String>, _>(ExtraHeader::new("RateLimit").description(
        "Where your client stands against the quota after this request: `\"client\";r=59990;t=1` leaves 59,990 \
         requests, and the quota is whole again in 1 second. On authenticated operations when a quota is set.",
    ))
}
