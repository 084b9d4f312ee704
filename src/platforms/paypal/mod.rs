//! PayPal: its catalogue entry and authorization body; its connector
//! ([`connector`]: the Invoicing API v2's invoices, on the environment's
//! host) and the mapping of its invoices and statuses ([`mapping`]) and of
//! the payments recorded against them ([`payments`]). What these rely on,
//! with sources: `NOTES.md`.

pub mod connector;
#[cfg(test)]
mod contract_tests;
pub mod mapping;
pub mod payments;

use schemars::JsonSchema;
use serde::Deserialize;

use crate::data::DataType;
use crate::platforms::authorization::BodyKind;
use crate::platforms::authorization::{Environment, expiring_token_body};
use crate::platforms::connector::ConnectorKind;
use crate::platforms::tokens::ExpiringTokens;
use crate::platforms::{Platform, SourceType};

/// What PayPal syncs: invoices (PayPal's REST API has no customers) and
/// the payments and refunds recorded against them.
const DATA_TYPES: &[DataType] = &[DataType::INVOICES, DataType::PAYMENTS];

/// PayPal in the catalogue.
pub static PLATFORM: Platform = Platform {
    platform_key: "paypal",
    name: "PayPal",
    source_type: SourceType::Commerce,
    data_types: DATA_TYPES,
    authorization: Some(BodyKind::of::<PayPalAuthorization>()),
    connector: Some(ConnectorKind::of::<connector::PayPalConnector>()),
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
