//! What connectors share: HTTP to the platforms with timeouts and retries
//! ([`http`]), the OAuth refresh-token grant ([`oauth`]), and exact amounts
//! and platform dates ([`json`]).

pub mod http;
pub mod json;
pub mod oauth;
