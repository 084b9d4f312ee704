//! What connectors share, so a connector is its mapping, not its plumbing:
//!
//! - [`http`]: the retrying client and [`http::Call`], a request with its auth header;
//! - [`limits`]: a platform's documented call limits, and the rolling window that keeps them;
//! - [`errors`]: what a platform's error answer says, scrubbed of secrets;
//! - [`paging`]: the platforms' paging styles;
//! - [`oauth`]: the refresh-token grant; [`code_grant`]: the authorization-code exchange of the link flow;
//! - [`json`]: exact amounts and the platforms' date forms;
//! - [`records`]: a page's records read one by one, so one the connector cannot read costs only itself;
//! - [`status`]: status tables and the rule amounts decide;
//! - `graphql_contract` (tests only): GraphQL queries and answers held to the vendor's schema;
//! - `openapi_contract` (tests only): REST answers generated from the vendor's OpenAPI document.

pub mod code_grant;
pub mod errors;
#[cfg(test)]
pub(crate) mod graphql_contract;
pub mod http;
pub mod json;
pub mod limits;
pub mod oauth;
#[cfg(test)]
pub(crate) mod openapi_contract;
pub mod paging;
pub mod records;
pub mod status;
