//! BigCommerce: its catalogue entry and authorization body. tributary has no connector
//! for it yet; what its API offers, with sources: `NOTES.md`.

use schemars::JsonSchema;
use serde::Deserialize;

use crate::platforms::authorization::long_lived_token_body;
use crate::platforms::tokens::LongLivedToken;
use crate::platforms::{Platform, SourceType, NONE_YET};
use crate::platforms::authorization::BodyKind;

/// BigCommerce in the catalogue.
pub static PLATFORM: Platform = Platform {
    platform_key: "bigcommerce",
    name: "BigCommerce",
    source_type: SourceType::Commerce,
    managed_migration: false,
    data_types: NONE_YET,
    authorization: Some(BodyKind::of::<BigCommerceAuthorization>()),
    connector: None,
};

/// BigCommerce: a connection to one store. App tokens do not expire.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[schemars(deny_unknown_fields)]
pub struct BigCommerceAuthorization {
    /// The store hash (from `context: stores/{store_hash}` in the token response), used in `/stores/{storeHash}/v3`.
    #[schemars(regex(pattern = r"^[a-z0-9]{1,32}$"))]
    pub store_hash: String,
    /// The OAuth token (its field sits directly in this object).
    #[serde(flatten)]
    pub token: LongLivedToken,
}

long_lived_token_body!(BigCommerceAuthorization => store_hash);
