//! End-to-end tests of tributary through its real HTTP server, mostly via
//! the client generated from `openapi.yaml`. One binary, modules mirroring
//! the URL tree; every scenario runs on SQLite and, when
//! `TRIBUTARY_TEST_POSTGRES_URL` is set, on PostgreSQL.

mod helpers;

mod api_keys;
mod auth;
mod authorization;
mod benchmark;
mod cli;
mod companies;
mod connections;
mod data_types;
mod depth;
mod faults;
mod fetch_modes;
mod halves;
mod incremental;
mod integrations;
mod keys;
mod keys_built;
mod layers;
mod ledger;
mod links;
mod list_orders;
mod metrics;
mod migrations;
mod paging;
mod plans;
mod platform_limits;
mod platforms;
mod queries;
mod rate_limits;
mod service;
mod single_records;
mod snapshots;
mod sync;
mod sync_settings;
mod unchanged;
mod unreadable;
mod webhooks;
