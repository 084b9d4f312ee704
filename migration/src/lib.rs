//! Schema migrations for tributary, one module per step, applied in order on
//! SQLite and PostgreSQL alike.
//!
//! Migrations are append-only: a step that has shipped is never edited, a
//! change to the schema is a new step.

pub use sea_orm_migration::prelude::*;

mod m20261121_000001_tenants_and_companies;
mod m20261121_000002_connections;
mod m20261122_000003_sync;
mod m20261122_000004_dense_ordinals;
mod m20261122_000005_oauth_clients;
mod m20261123_000006_generic_records;
mod m20261123_000007_pull_failure_remedies;
mod m20261125_000008_retained_generations;
mod m20261125_000009_records_flag_deletions;
mod m20261125_000010_api_key_names;
mod m20261125_000011_webhooks;
mod m20261125_000012_server_instances;
mod m20261125_000013_managed_migrations;
mod m20261125_000014_records_without_connection_key;
mod m20261126_000015_generations_numbered_once;
mod m20261126_000016_link_sessions;
mod m20261127_000017_pull_record_issues;
mod m20261127_000018_incremental_fetches;
mod m20261127_000019_platform_pace;
mod m20261127_000020_sync_settings;
mod m20261129_000021_record_keys;
mod m20261201_000022_generation_renumbering;
mod m20261201_000023_layered_generations;

/// The ordered list of every migration step.
pub struct Migrator;

#[async_trait::async_trait]
impl MigratorTrait for Migrator {
    fn migrations() -> Vec<Box<dyn MigrationTrait>> {
        vec![
            Box::new(m20261121_000001_tenants_and_companies::Migration),
            Box::new(m20261121_000002_connections::Migration),
            Box::new(m20261122_000003_sync::Migration),
            Box::new(m20261122_000004_dense_ordinals::Migration),
            Box::new(m20261122_000005_oauth_clients::Migration),
            Box::new(m20261123_000006_generic_records::Migration),
            Box::new(m20261123_000007_pull_failure_remedies::Migration),
            Box::new(m20261125_000008_retained_generations::Migration),
            Box::new(m20261125_000009_records_flag_deletions::Migration),
            Box::new(m20261125_000010_api_key_names::Migration),
            Box::new(m20261125_000011_webhooks::Migration),
            Box::new(m20261125_000012_server_instances::Migration),
            Box::new(m20261125_000013_managed_migrations::Migration),
            Box::new(m20261125_000014_records_without_connection_key::Migration),
            Box::new(m20261126_000015_generations_numbered_once::Migration),
            Box::new(m20261126_000016_link_sessions::Migration),
            Box::new(m20261127_000017_pull_record_issues::Migration),
            Box::new(m20261127_000018_incremental_fetches::Migration),
            Box::new(m20261127_000019_platform_pace::Migration),
            Box::new(m20261127_000020_sync_settings::Migration),
            Box::new(m20261129_000021_record_keys::Migration),
            Box::new(m20261201_000022_generation_renumbering::Migration),
            Box::new(m20261201_000023_layered_generations::Migration),
        ]
    }
}
