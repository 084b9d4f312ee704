//! The HTTP layer: the server, the middleware around every request, the
//! API handlers, the request and response payloads, the OpenAPI document,
//! and the hosted link pages with the OAuth callbacks.

pub mod api;
pub mod auth;
pub mod error;
pub mod hosted;
pub mod json_body;
pub mod metrics;
pub mod middleware;
pub mod paging;
pub mod rate_limit;
pub mod request_targets;
pub mod routes;
pub mod schema;
pub mod server;
pub mod spec;
pub mod state;
pub mod types;
pub mod wire;
