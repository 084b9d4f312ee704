//! eBay: its catalogue entry and authorization body; its connector
//! ([`connector`]: the Fulfillment API's orders) and the mapping of its
//! orders and statuses ([`mapping`]). What these rely on, with sources:
//! `NOTES.md`.

pub mod connector;
pub mod mapping;

use schemars::JsonSchema;
use serde::Deserialize;

use crate::data::DataType;
use crate::platforms::authorization::BodyKind;
use crate::platforms::authorization::expiring_token_body;
use crate::platforms::connector::ConnectorKind;
use crate::platforms::tokens::ExpiringTokens;
use crate::platforms::{Platform, SourceType};

/// What eBay syncs: orders (the Fulfillment API has no list of buyers).
const DATA_TYPES: &[DataType] = &[DataType::ORDERS];

/// eBay in the catalogue.
pub static PLATFORM: Platform = Platform {
    platform_key: "ebay",
    name: "eBay",
    source_type: SourceType::Commerce,
    data_types: DATA_TYPES,
    authorization: Some(BodyKind::of::<EbayAuthorization>()),
    connector: Some(ConnectorKind::of::<connector::EbayConnector>()),
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
