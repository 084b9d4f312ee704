//! Zoho Books: its authorization body and its connector.

pub mod connector;

use schemars::JsonSchema;
use serde::Deserialize;

use crate::platforms::authorization::expiring_token_body;
use crate::platforms::tokens::ExpiringTokens;

/// Zoho's data centres: each has its own accounts server and API domain.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize, JsonSchema)]
pub enum ZohoDataCenter {
    /// United States: accounts.zoho.com, www.zohoapis.com (the default).
    #[default]
    #[serde(rename = "com")]
    Com,
    /// Europe: accounts.zoho.eu.
    #[serde(rename = "eu")]
    Eu,
    /// India: accounts.zoho.in.
    #[serde(rename = "in")]
    In,
    /// Australia: accounts.zoho.com.au.
    #[serde(rename = "com.au")]
    ComAu,
    /// Japan: accounts.zoho.jp.
    #[serde(rename = "jp")]
    Jp,
    /// Canada: accounts.zohocloud.ca.
    #[serde(rename = "ca")]
    Ca,
    /// China: accounts.zoho.com.cn.
    #[serde(rename = "com.cn")]
    ComCn,
    /// Saudi Arabia: accounts.zoho.sa.
    #[serde(rename = "sa")]
    Sa,
}

/// Zoho Books: a connection to one Zoho Books organization.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ZohoBooksAuthorization {
    /// The organization id (`organization_id` in `GET /books/v3/organizations`), sent as the `organization_id` query parameter.
    #[schemars(regex(pattern = r"^[0-9]{1,32}$"))]
    pub organization_id: String,
    /// The data centre the organization lives in (tokens only work there); default `com`.
    #[serde(default)]
    pub data_center: ZohoDataCenter,
    /// The OAuth tokens (their fields sit directly in this object).
    #[serde(flatten)]
    pub tokens: ExpiringTokens,
}

expiring_token_body!(ZohoBooksAuthorization => organization_id);
