//! Amazon Seller Central: its catalogue entry and authorization body; its
//! connector ([`connector`]: the Selling Partner API's orders) and the
//! mapping of its orders and statuses ([`mapping`]). What these rely on,
//! with sources: `NOTES.md`.

pub mod connector;
#[cfg(test)]
mod contract_tests;
pub mod mapping;

use schemars::JsonSchema;
use serde::Deserialize;

use crate::data::DataType;
use crate::platforms::authorization::BodyKind;
use crate::platforms::authorization::expiring_token_body;
use crate::platforms::connector::ConnectorKind;
use crate::platforms::tokens::ExpiringTokens;
use crate::platforms::{Platform, SourceType};

/// What Amazon syncs: orders (the Selling Partner API has no customer list).
const DATA_TYPES: &[DataType] = &[DataType::ORDERS];

/// Amazon Seller Central in the catalogue.
pub static PLATFORM: Platform = Platform {
    platform_key: "amazon-seller-central",
    name: "Amazon Seller Central",
    source_type: SourceType::Commerce,
    data_types: DATA_TYPES,
    authorization: Some(BodyKind::of::<AmazonSellerCentralAuthorization>()),
    connector: Some(ConnectorKind::of::<connector::AmazonSellerCentralConnector>()),
};

/// Selling Partner API regions.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum AmazonRegion {
    /// North America: sellingpartnerapi-na.amazon.com.
    Na,
    /// Europe: sellingpartnerapi-eu.amazon.com.
    Eu,
    /// Far East: sellingpartnerapi-fe.amazon.com.
    Fe,
}

/// Amazon Seller Central (Selling Partner API): a connection to one selling partner.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[schemars(deny_unknown_fields)]
pub struct AmazonSellerCentralAuthorization {
    /// The selling partner id (`selling_partner_id` on the authorization redirect).
    #[schemars(regex(pattern = r"^[A-Z0-9]{1,32}$"))]
    pub selling_partner_id: String,
    /// The Selling Partner API region of the seller's marketplaces.
    pub region: AmazonRegion,
    /// The OAuth tokens (their fields sit directly in this object).
    #[serde(flatten)]
    pub tokens: ExpiringTokens,
}

expiring_token_body!(AmazonSellerCentralAuthorization => selling_partner_id);
