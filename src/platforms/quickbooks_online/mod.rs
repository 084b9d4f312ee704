//! QuickBooks Online: its authorization body and its connector.

pub mod connector;

use schemars::JsonSchema;
use serde::Deserialize;

use crate::platforms::authorization::{Environment, expiring_token_body};
use crate::platforms::tokens::ExpiringTokens;

/// QuickBooks Online: a connection to one QuickBooks company.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct QuickBooksOnlineAuthorization {
    /// The company's realm id (`realmId` on the OAuth redirect), used in API paths `/v3/company/{realmId}`.
    #[schemars(regex(pattern = r"^[0-9]{1,32}$"))]
    pub realm_id: String,
    /// `production` (default) or `sandbox` (Intuit's sandbox companies).
    #[serde(default)]
    pub environment: Environment,
    /// The OAuth tokens (their fields sit directly in this object).
    #[serde(flatten)]
    pub tokens: ExpiringTokens,
}

expiring_token_body!(QuickBooksOnlineAuthorization => realm_id);
