//! Wave: its catalogue entry and authorization body; its connector
//! ([`connector`]: GraphQL queries on one business, page-numbered;
//! [`ledger`]: the chart and settings beyond sales) and the mapping of its
//! records and statuses ([`mapping`] for sales and contacts, [`chart`]).
//! What these rely on, with sources: `NOTES.md`.

pub mod chart;
pub mod connector;
pub mod ledger;
pub mod mapping;

use schemars::JsonSchema;
use serde::Deserialize;

use crate::data::DataType;
use crate::platforms::authorization::BodyKind;
use crate::platforms::authorization::expiring_token_body;
use crate::platforms::connector::ConnectorKind;
use crate::platforms::tokens::ExpiringTokens;
use crate::platforms::{Platform, SourceType};

/// What Wave's connector syncs: its public API has no bills, payments,
/// bill payments, credit notes or journals (`NOTES.md`, "Accounting
/// model"); those answer `NotSupported`.
const DATA_TYPES: &[DataType] = &[
    DataType::INVOICES,
    DataType::CUSTOMERS,
    DataType::ACCOUNTS,
    DataType::SUPPLIERS,
    DataType::TAX_RATES,
    DataType::ITEMS,
    DataType::COMPANY_INFO,
];

/// Wave in the catalogue.
pub static PLATFORM: Platform = Platform {
    platform_key: "wave",
    name: "Wave",
    source_type: SourceType::Accounting,
    data_types: DATA_TYPES,
    authorization: Some(BodyKind::of::<WaveAuthorization>()),
    connector: Some(ConnectorKind::of::<connector::WaveConnector>()),
};

/// Wave: a connection to one Wave business.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[schemars(deny_unknown_fields)]
pub struct WaveAuthorization {
    /// The business id: the GraphQL `ID` of the business (`businessId` in Wave's token answer, or `id` in the `businesses` query), base64 of `Business:<uuid>`, so it starts `QnVzaW5lc3M6`; not the id in the Wave web app's URL. Sent as `business(id:)` in every query.
    #[schemars(regex(pattern = r"^QnVzaW5lc3M6[A-Za-z0-9+/]{1,200}={0,2}$"))]
    pub business_id: String,
    /// The OAuth tokens (their fields sit directly in this object).
    #[serde(flatten)]
    pub tokens: ExpiringTokens,
}

expiring_token_body!(WaveAuthorization => business_id);
