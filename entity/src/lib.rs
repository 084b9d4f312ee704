//! SeaORM entities: one module per table, mirroring the `migration` crate.
//!
//! Entities carry no behaviour; queries and rules live in the `tributary`
//! crate's domain modules.

pub mod api_key;
pub mod client;
pub mod company;
pub mod connection;
pub mod connection_credential;
pub mod data_generation;
pub mod link_attempt;
pub mod link_session;
pub mod link_settings;
pub mod migration_attestation;
pub mod migration_batch;
pub mod migration_reference;
pub mod migration_row;
pub mod oauth_client;
pub mod platform_pace;
pub mod pull_operation;
pub mod record;
pub mod record_generation;
pub mod record_key;
pub mod record_staging;
pub mod retained_generation;
pub mod server_instance;
pub mod sync_request;
pub mod sync_request_operation;
pub mod sync_settings;
pub mod sync_watermark;
pub mod webhook_attempt;
pub mod webhook_delivery;
pub mod webhook_endpoint;
pub mod webhook_message;
