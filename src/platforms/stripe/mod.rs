//! Stripe: its catalogue entry and authorization body; its connector
//! ([`connector`]: the connected account's invoices, customers, payments
//! and the account itself) and the mapping of its objects and statuses
//! ([`mapping`]; charges, refunds and the account in [`money_in`]). What
//! these rely on, with sources: `NOTES.md`.

pub mod connector;
#[cfg(test)]
mod contract_tests;
pub mod mapping;
pub mod money_in;

use schemars::JsonSchema;
use serde::Deserialize;

use crate::data::DataType;
use crate::platforms::authorization::BodyKind;
use crate::platforms::authorization::long_lived_token_body;
use crate::platforms::connector::ConnectorKind;
use crate::platforms::tokens::{LongLivedToken, Secret};
use crate::platforms::{Platform, SourceType};

/// What Stripe syncs: the connected account's invoices, customers, payments
/// (charges and refunds) and company info (the account).
const DATA_TYPES: &[DataType] = &[
    DataType::INVOICES,
    DataType::CUSTOMERS,
    DataType::PAYMENTS,
    DataType::COMPANY_INFO,
];

/// Stripe in the catalogue.
pub static PLATFORM: Platform = Platform {
    platform_key: "stripe",
    name: "Stripe",
    source_type: SourceType::Commerce,
    data_types: DATA_TYPES,
    authorization: Some(BodyKind::of::<StripeAuthorization>()),
    connector: Some(ConnectorKind::of::<connector::StripeConnector>()),
};

/// Stripe (Connect OAuth): a connection to one connected account. Connect
/// access tokens do not expire.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[schemars(deny_unknown_fields)]
pub struct StripeAuthorization {
    /// The connected account id (`stripe_user_id` in the OAuth token response), `acct_...`.
    #[schemars(regex(pattern = r"^acct_[A-Za-z0-9]{1,64}$"))]
    pub stripe_user_id: String,
    /// The OAuth token (its field sits directly in this object).
    #[serde(flatten)]
    pub token: LongLivedToken,
    /// The refresh token from the same response, if you kept it.
    pub refresh_token: Option<Secret>,
}

long_lived_token_body!(StripeAuthorization => stripe_user_id);
