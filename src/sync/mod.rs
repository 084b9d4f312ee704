//! Syncing data from platforms: pull operations (the queue), the engine
//! that runs them with the platforms' connectors into the store, token
//! refresh, and reading what was synced.
//!
//! - [`operations`]: queuing syncs, history, data status.
//! - [`engine`]: workers, leases, claiming, running an operation.
//! - [`refresh`]: refreshing a connection's tokens, one refresh at a time.
//! - [`reads`]: a company's synced data, page by page.
//! - [`list_orders`]: the orders of queried and merged lists, read once per
//!   snapshot.
//! - [`watermarks`]: where each data type's next incremental fetch starts.
//! - [`pacing`]: every sync's platform calls kept under the platform's
//!   limits, across processes.
//! - [`settings`]: each client's choice of the data types `data/all` queues.

pub mod engine;
pub mod list_orders;
pub mod operations;
pub mod pacing;
pub mod reads;
pub mod refresh;
pub mod settings;
pub mod watermarks;
