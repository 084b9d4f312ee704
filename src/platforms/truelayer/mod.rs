//! TrueLayer: its catalogue entry and authorization body; its connector
//! ([`connector`]: the Data API v1's accounts, balances and transactions)
//! and the mapping of its accounts and transactions ([`mapping`]). What
//! these rely on, with sources: `NOTES.md`.

pub mod connector;
pub mod mapping;

use schemars::JsonSchema;
use serde::Deserialize;

use crate::data::DataType;
use crate::platforms::authorization::BodyKind;
use crate::platforms::authorization::{Environment, expiring_token_body};
use crate::platforms::connector::ConnectorKind;
use crate::platforms::tokens::ExpiringTokens;
use crate::platforms::{Platform, SourceType};

/// What TrueLayer syncs: the connection's accounts and their transactions.
const DATA_TYPES: &[DataType] = &[DataType::BANK_ACCOUNTS, DataType::BANK_TRANSACTIONS];

/// TrueLayer in the catalogue.
pub static PLATFORM: Platform = Platform {
    platform_key: "truelayer",
    name: "TrueLayer",
    source_type: SourceType::Banking,
    data_types: DATA_TYPES,
    authorization: Some(BodyKind::of::<TrueLayerAuthorization>()),
    connector: Some(ConnectorKind::of::<connector::TrueLayerConnector>()),
};

/// TrueLayer (Data API): a connection to one end user's bank via one provider.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[schemars(deny_unknown_fields)]
pub struct TrueLayerAuthorization {
    /// The connection's credentials id (`credentials_id` in `GET /data/v1/me`): one per end user and bank.
    #[schemars(length(min = 1, max = 256))]
    pub credentials_id: String,
    /// The provider id of the bank (`provider.provider_id` in the same answer, e.g. `ob-monzo`).
    #[schemars(regex(pattern = r"^[a-z0-9-]{1,64}$"))]
    pub provider_id: String,
    /// `production` (default) or `sandbox` (truelayer-sandbox.com).
    #[serde(default)]
    pub environment: Environment,
    /// The OAuth tokens (their fields sit directly in this object).
    #[serde(flatten)]
    pub tokens: ExpiringTokens,
}

expiring_token_body!(TrueLayerAuthorization => credentials_id);
