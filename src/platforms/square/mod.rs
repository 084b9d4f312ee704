//! Square: its catalogue entry and authorization body. tributary has no connector
//! for it yet; what its API offers, with sources: `NOTES.md`.

use schemars::JsonSchema;
use serde::Deserialize;

use crate::platforms::authorization::{Environment, expiring_token_body};
use crate::platforms::tokens::ExpiringTokens;
use crate::platforms::{Platform, SourceType, NONE_YET};
use crate::platforms::authorization::BodyKind;

/// Square in the catalogue.
pub static PLATFORM: Platform = Platform {
    platform_key: "square",
    name: "Square",
    source_type: SourceType::Commerce,
    managed_migration: false,
    data_types: NONE_YET,
    authorization: Some(BodyKind::of::<SquareAuthorization>()),
    connector: None,
};

/// Square: a connection to one seller (merchant).
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[schemars(deny_unknown_fields)]
pub struct SquareAuthorization {
    /// The seller's merchant id (`merchant_id` in the ObtainToken response).
    #[schemars(regex(pattern = r"^[A-Za-z0-9_-]{1,64}$"))]
    pub merchant_id: String,
    /// `production` (default) or `sandbox` (connect.squareupsandbox.com).
    #[serde(default)]
    pub environment: Environment,
    /// The OAuth tokens (their fields sit directly in this object).
    #[serde(flatten)]
    pub tokens: ExpiringTokens,
}

expiring_token_body!(SquareAuthorization => merchant_id);
