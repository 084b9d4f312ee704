//! Zettle by PayPal: its catalogue entry and authorization body. tributary has no connector
//! for it yet; what its API offers, with sources: `NOTES.md`.

use schemars::JsonSchema;
use serde::Deserialize;
use uuid::Uuid;

use crate::platforms::authorization::expiring_token_body;
use crate::platforms::tokens::ExpiringTokens;
use crate::platforms::{Platform, SourceType, NONE_YET};
use crate::platforms::authorization::BodyKind;

/// Zettle by PayPal in the catalogue.
pub static PLATFORM: Platform = Platform {
    platform_key: "zettle",
    name: "Zettle by PayPal",
    source_type: SourceType::Commerce,
    managed_migration: false,
    data_types: NONE_YET,
    authorization: Some(BodyKind::of::<ZettleAuthorization>()),
    connector: None,
};

/// Zettle: a connection to one Zettle organization.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[schemars(deny_unknown_fields)]
pub struct ZettleAuthorization {
    /// The organization's UUID (`organizationUuid` in `GET https://oauth.zettle.com/users/self`).
    pub organization_uuid: Uuid,
    /// The OAuth tokens (their fields sit directly in this object).
    #[serde(flatten)]
    pub tokens: ExpiringTokens,
}

expiring_token_body!(ZettleAuthorization => organization_uuid);
