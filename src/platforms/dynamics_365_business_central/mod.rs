//! Dynamics 365 Business Central: its catalogue entry and authorization body; its connector
//! ([`connector`]: requests and paging), the mapping of its records and statuses
//! ([`mapping`]) and the accounting lists beyond sales ([`ledger`], [`journals`]).
//! What these rely on, with sources: `NOTES.md`.

pub mod chart;
pub mod connector;
pub mod documents;
pub mod journals;
pub mod ledger;
pub mod mapping;

use schemars::JsonSchema;
use serde::Deserialize;
use uuid::Uuid;

use crate::data::DataType;
use crate::platforms::authorization::BodyKind;
use crate::platforms::authorization::expiring_token_body;
use crate::platforms::connector::ConnectorKind;
use crate::platforms::tokens::ExpiringTokens;
use crate::platforms::{Platform, SourceType};

/// What Business Central's connector syncs: API v2.0 has no list of posted
/// payments with what they settle and no tax rates (`NOTES.md`,
/// "Accounting model"); its general ledger is rebuilt from G/L entries.
const DATA_TYPES: &[DataType] = &[
    DataType::INVOICES,
    DataType::CUSTOMERS,
    DataType::ACCOUNTS,
    DataType::SUPPLIERS,
    DataType::BILLS,
    DataType::CREDIT_NOTES,
    DataType::ITEMS,
    DataType::COMPANY_INFO,
    DataType::JOURNAL_ENTRIES,
];

/// Dynamics 365 Business Central in the catalogue.
pub static PLATFORM: Platform = Platform {
    platform_key: "dynamics-365-business-central",
    name: "Dynamics 365 Business Central",
    source_type: SourceType::Accounting,
    data_types: DATA_TYPES,
    authorization: Some(BodyKind::of::<BusinessCentralAuthorization>()),
    connector: Some(ConnectorKind::of::<connector::BusinessCentralConnector>()),
};

/// Dynamics 365 Business Central: a connection to one company of one environment.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[schemars(deny_unknown_fields)]
pub struct BusinessCentralAuthorization {
    /// The Microsoft Entra tenant (directory) id or domain that owns the environment.
    #[schemars(length(min = 1, max = 256))]
    pub tenant_id: String,
    /// The environment name, e.g. `production`.
    #[schemars(regex(pattern = r"^[A-Za-z0-9_-]{1,64}$"))]
    pub environment_name: String,
    /// The company id (`id` in `GET .../api/v2.0/companies`).
    pub company_id: Uuid,
    /// The OAuth tokens (their fields sit directly in this object).
    #[serde(flatten)]
    pub tokens: ExpiringTokens,
}

expiring_token_body!(BusinessCentralAuthorization => company_id);
