//! Plaid: its catalogue entry and authorization body; its connector
//! ([`connector`]: an Item's accounts and its transactions) and the mapping
//! of its accounts and transactions ([`mapping`]). What these rely on, with
//! sources: `NOTES.md`.

pub mod connector;
#[cfg(test)]
mod contract_tests;
pub mod mapping;

use schemars::JsonSchema;
use serde::Deserialize;

use crate::data::DataType;
use crate::platforms::authorization::BodyKind;
use crate::platforms::authorization::{Environment, long_lived_token_body};
use crate::platforms::connector::ConnectorKind;
use crate::platforms::tokens::{LongLivedToken, Secret};
use crate::platforms::{Platform, SourceType};

/// What Plaid syncs: the Item's accounts and their transactions.
const DATA_TYPES: &[DataType] = &[DataType::BANK_ACCOUNTS, DataType::BANK_TRANSACTIONS];

/// Plaid in the catalogue.
pub static PLATFORM: Platform = Platform {
    platform_key: "plaid",
    name: "Plaid",
    source_type: SourceType::Banking,
    data_types: DATA_TYPES,
    authorization: Some(BodyKind::of::<PlaidAuthorization>()),
    connector: Some(ConnectorKind::of::<connector::PlaidConnector>()),
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
    /// Your Plaid API `client_id` (the application that created the access
    /// token: Plaid accepts an access token only with its keys). Needed to
    /// sync or verify.
    #[schemars(length(min = 1, max = 256))]
    pub client_id: Option<String>,
    /// Your Plaid API `secret` for this environment. Needed to sync or verify.
    pub secret: Option<Secret>,
}

long_lived_token_body!(PlaidAuthorization => item_id);
