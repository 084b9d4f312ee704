//! PayPal: its catalogue entry and authorization body. tributary has no connector
//! for it yet; what its API offers, with sources: `NOTES.md`.

use schemars::JsonSchema;
use serde::Deserialize;

use crate::platforms::authorization::{Environment, expiring_token_body};
use crate::platforms::tokens::ExpiringTokens;
use crate::platforms::{Platform, SourceType, NONE_YET};
use crate::platforms::authorization::BodyKind;

/// PayPal in the catalogue.
pub static PLATFORM: Platform = Platform {
    platform_key: "paypal",
    name: "PayPal",
    source_type: SourceType::Commerce,
    managed_migration: false,
    data_types: NONE_YET,
    authorization: Some(BodyKind::of::<PayPalAuthorization>()),
    connector: None,
};

/// PayPal: a connection to one merchant account.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[schemars(deny_unknown_fields)]
pub struct PayPalAuthorization {
    /// The merchant's payer id (13 characters, `payer_id` of the account).
    #[schemars(regex(pattern = r"^[A-Z0-9]{13}$"))]
    pub payer_id: String,
    /// `production` (default) or `sandbox`.
    #[serde(default)]
    pub environment: Environment,
    /// The OAuth tokens (their fields sit directly in this object).
    #[serde(flatten)]
    pub tokens: ExpiringTokens,
}

expiring_token_body!(PayPalAuthorization => payer_id);
