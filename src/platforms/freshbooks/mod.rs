//! FreshBooks: its catalogue entry and authorization body; its connector
//! ([`connector`]: the account's accounting lists, paging; [`ledger`]: the
//! lists beyond sales) and the mapping of its records and statuses
//! ([`mapping`] for sales and clients, [`purchases`], [`receipts`],
//! [`credits`], [`catalogue`], [`company`], [`chart`]). What these rely on,
//! with sources: `NOTES.md`.

pub mod catalogue;
pub mod chart;
pub mod company;
pub mod connector;
pub mod credits;
pub mod ledger;
pub mod mapping;
pub mod purchases;
pub mod receipts;

use schemars::JsonSchema;
use serde::Deserialize;

use crate::data::DataType;
use crate::platforms::authorization::BodyKind;
use crate::platforms::authorization::expiring_token_body;
use crate::platforms::connector::ConnectorKind;
use crate::platforms::numbers::WholeNumber;
use crate::platforms::tokens::ExpiringTokens;
use crate::platforms::{Platform, SourceType};

/// What FreshBooks' connector syncs, in the order of its `syncs!` (credit
/// notes with allocations inferred from the payments made from a credit,
/// [`credits`]; the chart of accounts from its report, [`chart`]). Not
/// journal entries (no documented list of whole, balanced entries):
/// `NOTES.md`, "Accounting model".
const DATA_TYPES: &[DataType] = &[
    DataType::INVOICES,
    DataType::CUSTOMERS,
    DataType::SUPPLIERS,
    DataType::BILLS,
    DataType::BILL_PAYMENTS,
    DataType::PAYMENTS,
    DataType::CREDIT_NOTES,
    DataType::TAX_RATES,
    DataType::ITEMS,
    DataType::COMPANY_INFO,
    DataType::ACCOUNTS,
];

/// FreshBooks in the catalogue.
pub static PLATFORM: Platform = Platform {
    platform_key: "freshbooks",
    name: "FreshBooks",
    source_type: SourceType::Accounting,
    data_types: DATA_TYPES,
    authorization: Some(BodyKind::of::<FreshBooksAuthorization>()),
    connector: Some(ConnectorKind::of::<connector::FreshBooksConnector>()),
};

/// FreshBooks: a connection to one FreshBooks business.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[schemars(deny_unknown_fields)]
pub struct FreshBooksAuthorization {
    /// The accounting account id (`account_id` of the business in `GET /auth/api/v1/users/me`), used in `/accounting/account/{accountId}/...`.
    #[schemars(regex(pattern = r"^[A-Za-z0-9]{1,32}$"))]
    pub account_id: String,
    /// The business id (`business_memberships[].business.id`), used by the projects and time-tracking APIs.
    pub business_id: Option<WholeNumber>,
    /// The OAuth tokens (their fields sit directly in this object).
    #[serde(flatten)]
    pub tokens: ExpiringTokens,
}

expiring_token_body!(FreshBooksAuthorization => account_id);
