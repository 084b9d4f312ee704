//! eBay: its catalogue entry and authorization body. tributary has no connector
//! for it yet; what its API offers, with sources: `NOTES.md`.

use schemars::JsonSchema;
use serde::Deserialize;

use crate::platforms::authorization::expiring_token_body;
use crate::platforms::tokens::ExpiringTokens;
use crate::platforms::{Platform, SourceType, SALES};
use crate::platforms::authorization::BodyKind;

/// eBay in the catalogue.
pub static PLATFORM: Platform = Platform {
    platform_key: "ebay",
    name: "eBay",
    source_type: SourceType::Commerce,
    managed_migration: false,
    data_types: SALES,
    authorization: Some(BodyKind::of::<EbayAuthorization>()),
    connector: None,
};

/// eBay: a connection to one eBay user (eBay tokens are per user).
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[schemars(deny_unknown_fields)]
pub struct EbayAuthorization {
    /// The user's immutable id (`userId` from the Commerce Identity API `getUser`).
    #[schemars(length(min = 1, max = 256))]
    pub user_id: String,
    /// The OAuth tokens (their fields sit directly in this object).
    #[serde(flatten)]
    pub tokens: ExpiringTokens,
}

expiring_token_body!(EbayAuthorization => user_id);
