//! Xero: its authorization body and its connector.

pub mod connector;

use schemars::JsonSchema;
use serde::Deserialize;
use uuid::Uuid;

use crate::platforms::authorization::expiring_token_body;
use crate::platforms::tokens::ExpiringTokens;

/// Xero: a connection to one Xero organisation.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct XeroAuthorization {
    /// The organisation's tenant id (`tenantId` in `GET https://api.xero.com/connections`), sent as the `xero-tenant-id` header.
    pub tenant_id: Uuid,
    /// The OAuth tokens (their fields sit directly in this object).
    #[serde(flatten)]
    pub tokens: ExpiringTokens,
}

expiring_token_body!(XeroAuthorization => tenant_id);
