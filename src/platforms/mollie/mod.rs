//! Mollie: its catalogue entry and authorization body. tributary has no connector
//! for it yet; what its API offers, with sources: `NOTES.md`.

use schemars::JsonSchema;
use serde::Deserialize;

use crate::platforms::authorization::expiring_token_body;
use crate::platforms::tokens::ExpiringTokens;
use crate::platforms::{Platform, SourceType, NONE_YET};
use crate::platforms::authorization::BodyKind;

/// Mollie in the catalogue.
pub static PLATFORM: Platform = Platform {
    platform_key: "mollie",
    name: "Mollie",
    source_type: SourceType::Commerce,
    managed_migration: false,
    data_types: NONE_YET,
    authorization: Some(BodyKind::of::<MollieAuthorization>()),
    connector: None,
};

/// Mollie: a connection to one Mollie organization.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[schemars(deny_unknown_fields)]
pub struct MollieAuthorization {
    /// The organization id (`org_...`, the OAuth `uid`).
    #[schemars(regex(pattern = r"^org_[A-Za-z0-9]{1,64}$"))]
    pub organization_id: String,
    /// The OAuth tokens (their fields sit directly in this object).
    #[serde(flatten)]
    pub tokens: ExpiringTokens,
}

expiring_token_body!(MollieAuthorization => organization_id);
