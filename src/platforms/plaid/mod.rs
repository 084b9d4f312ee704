//! Plaid: its catalogue entry and authorization body. tributary has no connector
//! for it yet; what its API offers, with sources: `NOTES.md`.

use schemars::JsonSchema;
use serde::Deserialize;

use crate::platforms::authorization::{Environment, long_lived_token_body};
use crate::platforms::tokens::LongLivedToken;
use crate::platforms::{Platform, SourceType, NONE_YET};
use crate::platforms::authorization::BodyKind;

/// Plaid in the catalogue.
pub static PLATFORM: Platform = Platform {
    platform_key: "plaid",
    name: "Plaid",
    source_type: SourceType::Banking,
    managed_migration: false,
    data_types: NONE_YET,
    authorization: Some(BodyKind::of::<PlaidAuthorization>()),
    connector: None,
};

/// Plaid: a connection to one Item (a login at one institution). Plaid
/// access tokens do not expire.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[schemars(deny_unknown_fields)]
pub struct PlaidAuthorization {
    /// The Item's id (`item_id` from `/item/public_token/exchange`).
    #[schemars(length(min = 1, max = 256))]
    pub item_id: String,
    /// `production` (default) or `sandbox`; it selects Plaid's host.
    #[serde(default)]
    pub environment: Environment,
    /// The OAuth token (its field sits directly in this object).
    #[serde(flatten)]
    pub token: LongLivedToken,
}

long_lived_token_body!(PlaidAuthorization => item_id);
