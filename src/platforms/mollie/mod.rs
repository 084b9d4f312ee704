//! Mollie: its authorization body.

use schemars::JsonSchema;
use serde::Deserialize;

use crate::platforms::authorization::expiring_token_body;
use crate::platforms::tokens::ExpiringTokens;

/// Mollie: a connection to one Mollie organization.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct MollieAuthorization {
    /// The organization id (`org_...`, the OAuth `uid`).
    #[schemars(regex(pattern = r"^org_[A-Za-z0-9]{1,64}$"))]
    pub organization_id: String,
    /// The OAuth tokens (their fields sit directly in this object).
    #[serde(flatten)]
    pub tokens: ExpiringTokens,
}

expiring_token_body!(MollieAuthorization => organization_id);
