//! BigCommerce: its catalogue entry and authorization body; its connector
//! ([`connector`]: V2 orders with their products, V3 customers;
//! [`catalog`]: V3 catalogue products as items) and the mapping of its
//! records and status ids ([`mapping`]). What these rely on,
//! with sources: `NOTES.md`.

pub mod catalog;
pub mod connector;
#[cfg(test)]
mod contract_tests;
pub mod mapping;

use schemars::JsonSchema;
use serde::Deserialize;

use crate::data::DataType;
use crate::platforms::authorization::BodyKind;
use crate::platforms::authorization::long_lived_token_body;
use crate::platforms::connector::ConnectorKind;
use crate::platforms::tokens::LongLivedToken;
use crate::platforms::{Platform, SourceType};

/// What BigCommerce syncs: customers, orders (a store issues no invoices)
/// and its catalogue's products as items.
const DATA_TYPES: &[DataType] = &[DataType::CUSTOMERS, DataType::ORDERS, DataType::ITEMS];

/// BigCommerce in the catalogue.
pub static PLATFORM: Platform = Platform {
    platform_key: "bigcommerce",
    name: "BigCommerce",
    source_type: SourceType::Commerce,
    data_types: DATA_TYPES,
    authorization: Some(BodyKind::of::<BigCommerceAuthorization>()),
    connector: Some(ConnectorKind::of::<connector::BigCommerceConnector>()),
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
