//! tributary: a data integration service. Businesses connect their
//! accounting, commerce and banking platforms to our customers' products;
//! this crate serves the REST API that manages companies and their data
//! connections and pages through the data synced from those platforms.
//!
//! # Layout
//! - [`cli`]: the `tributary` command (`serve`, `migrate`, `api-key create`).
//! - [`http`]: the server, the middleware (correlation ids, access log, body limit, error
//!   rendering), the poem-openapi endpoints (one file per resource), the request and response
//!   payloads, and the OpenAPI document (served, and committed as `openapi.yaml`).
//! - [`error`]: the one error type, its JSON body, and its mapping to HTTP.
//! - [`validation`]: request bodies checked against the spec's own schemas.
//! - [`paging`]: the generic `Paged<T>` envelope and its link rules.
//! - [`auth`] and [`api_keys`]: Basic authentication to a tenant; key storage.
//! - [`companies`] and [`connections`]: company and connection rules and queries; token migration.
//! - [`links`]: link sessions, link settings and the hosted link flow (the OAuth callback).
//! - [`platforms`]: the catalogue; per platform, its authorization body and connector.
//! - [`sync`]: pull operations, the sync engine, token refresh, and the synced records.
//! - [`oauth_clients`]: tenants' own OAuth applications, used to refresh migrated tokens.
//! - [`webhooks`]: endpoints, the event outbox, signed delivery with retries; [`clock`]: its time.
//! - [`crypto`]: AES-256-GCM sealing of stored tokens; the keyring.
//! - [`db`]: connecting to SQLite or PostgreSQL and migrating.
//! - [`types`]: JSON value types (`Nullable<T>`, `Timestamp`).
//! - [`telemetry`]: log set-up; [`metrics`]: the Prometheus metrics; [`rate_limits`]: quotas shared by processes.
//!
//! Tables are defined by the `entity` and `migration` crates.

pub mod api_keys;
pub mod app;
pub mod cli;
pub mod clock;
pub mod companies;
pub mod connections;
pub mod crypto;
pub mod data;
pub mod db;
pub mod error;
pub mod http;
pub mod idle;
pub mod links;
pub mod managed_migrations;
pub mod metrics;
pub mod oauth_clients;
pub mod paging;
pub mod platforms;
pub mod rate_limits;
pub mod store;
pub mod sync;
pub mod telemetry;
pub mod tenant;
pub mod timestamp;
pub mod validation;
pub mod vault;
pub mod webhooks;
