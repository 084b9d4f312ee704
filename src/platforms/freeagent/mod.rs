//! FreeAgent: its catalogue entry and authorization body; its connector
//! ([`connector`]: the environment's host, `Link`-header paging;
//! [`ledger`]: the accounting lists beyond sales) and the mapping of its
//! records and statuses ([`mapping`] for sales and contacts, [`chart`],
//! [`documents`], [`settlements`]). What these rely on, with sources:
//! `NOTES.md`.

pub mod chart;
pub mod connector;
pub mod documents;
pub mod ledger;
pub mod mapping;
pub mod settlements;

use schemars::JsonSchema;
use serde::Deserialize;

use crate::data::DataType;
use crate::platforms::authorization::BodyKind;
use crate::platforms::authorization::{Environment, expiring_token_body};
use crate::platforms::connector::ConnectorKind;
use crate::platforms::tokens::ExpiringTokens;
use crate::platforms::{Platform, SourceType};

/// What FreeAgent syncs: sales and the accounting model but journal
/// entries, which its API cannot give as entries that balance (`NOTES.md`).
const DATA_TYPES: &[DataType] = &[
    DataType::INVOICES,
    DataType::CUSTOMERS,
    DataType::ACCOUNTS,
    DataType::SUPPLIERS,
    DataType::TAX_RATES,
    DataType::BILLS,
    DataType::PAYMENTS,
    DataType::BILL_PAYMENTS,
    DataType::CREDIT_NOTES,
    DataType::ITEMS,
    DataType::COMPANY_INFO,
];

/// FreeAgent in the catalogue.
pub static PLATFORM: Platform = Platform {
    platform_key: "freeagent",
    name: "FreeAgent",
    source_type: SourceType::Accounting,
    data_types: DATA_TYPES,
    authorization: Some(BodyKind::of::<FreeAgentAuthorization>()),
    connector: Some(ConnectorKind::of::<connector::FreeAgentConnector>()),
};

/// FreeAgent: a connection to one FreeAgent company (tokens are per company).
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[schemars(deny_unknown_fields)]
pub struct FreeAgentAuthorization {
    /// The company's FreeAgent subdomain (`subdomain` in `GET /v2/company`), e.g. `acme` for acme.freeagent.com.
    #[schemars(regex(pattern = r"^[a-z0-9][a-z0-9-]{0,62}$"))]
    pub subdomain: String,
    /// `production` (default) or `sandbox` (api.sandbox.freeagent.com).
    #[serde(default)]
    pub environment: Environment,
    /// The OAuth tokens (their fields sit directly in this object).
    #[serde(flatten)]
    pub tokens: ExpiringTokens,
}

expiring_token_body!(FreeAgentAuthorization => subdomain);
