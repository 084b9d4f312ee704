//! Mollie: its catalogue entry and authorization body; its connector
//! ([`connector`]: the Orders and Customers APIs) and the mapping of its
//! orders, customers and statuses ([`mapping`]). What these rely on, with
//! sources: `NOTES.md`.

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

/// What Mollie syncs: the organization's customers, orders and (paid)
/// payments.
const DATA_TYPES: &[DataType] = &[DataType::CUSTOMERS, DataType::ORDERS, DataType::PAYMENTS];

/// Mollie in the catalogue.
pub static PLATFORM: Platform = Platform {
    platform_key: "mollie",
    name: "Mollie",
    source_type: SourceType::Commerce,
    data_types: DATA_TYPES,
    authorization: Some(BodyKind::of::<MollieAuthorization>()),
    connector: Some(ConnectorKind::of::<connector::MollieConnector>()),
};

/// Mollie: a connection to one Mollie organization.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[schemars(deny_unknown_fields)]
pub struct MollieAuthorization {
    /// The organization id (`org_...`, the OAuth `uid`).
    #[schemars(regex(pattern = r"^org_[A-Za-z0-9]{1,64}$"))]
    pub organization_id: String,
    /// The OAuth tokens (their fields sit directly in this object).
    #[serde(flatten)]
    pub tokens: ExpiringTokens,
}

expiring_token_body!(MollieAuthorization => organization_id);
