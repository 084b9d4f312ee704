//! Syncing data from platforms: pull operations (the queue), the engine
//! that runs them, the connectors that fetch, and the store that swaps the
//! fetched records in atomically.
//!
//! - [`operations`]: queuing syncs, history, data status.
//! - [`engine`]: workers, leases, claiming, running an operation.
//! - [`refresh`]: refreshing a connection's tokens, one refresh at a time.
//! - [`reads`]: a company's synced data, page by page.
//! - [`store`]: staged generations, the swap, and the read queries.
//! - [`records`]: invoices, customers and exact money.

pub mod engine;
pub mod operations;
pub mod reads;
pub mod records;
pub mod refresh;
pub mod store;
