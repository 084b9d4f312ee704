//! Square: its catalogue entry and authorization body; its connector
//! ([`connector`]: invoices, customers and orders, location by location;
//! [`ledger`]: payments and the seller; [`catalog`]: catalog items) and
//! the mapping of its money, records and statuses ([`mapping`];
//! [`commerce`] for payments and the seller). What these rely on, with sources:
//! `NOTES.md`.

pub mod catalog;
pub mod commerce;
pub mod connector;
#[cfg(test)]
mod contract_tests;
pub mod ledger;
pub mod mapping;

use schemars::JsonSchema;
use serde::Deserialize;

use crate::data::DataType;
use crate::platforms::authorization::BodyKind;
use crate::platforms::authorization::{Environment, expiring_token_body};
use crate::platforms::connector::ConnectorKind;
use crate::platforms::tokens::ExpiringTokens;
use crate::platforms::{Platform, SourceType};

/// What Square syncs: invoices, customer profiles, orders, payments (and
/// refunds), catalog item variations as items and the seller as company
/// info.
const DATA_TYPES: &[DataType] = &[
    DataType::INVOICES,
    DataType::CUSTOMERS,
    DataType::ORDERS,
    DataType::PAYMENTS,
    DataType::ITEMS,
    DataType::COMPANY_INFO,
];

/// Square in the catalogue.
pub static PLATFORM: Platform = Platform {
    platform_key: "square",
    name: "Square",
    source_type: SourceType::Commerce,
    data_types: DATA_TYPES,
    authorization: Some(BodyKind::of::<SquareAuthorization>()),
    connector: Some(ConnectorKind::of::<connector::SquareConnector>()),
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
