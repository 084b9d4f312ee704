//! QuickBooks Online: its catalogue entry and authorization body; its
//! connector ([`connector`]: the query endpoint, paging) and the mapping of
//! its records and statuses ([`mapping`]; bills and payments in
//! `settlements.rs`, the company and items in `company.rs`, journal entries
//! from the general ledger's `JournalReport` in `journals.rs`). What these rely on, with sources:
//! `NOTES.md`.

mod company;
pub mod connector;
mod journals;
pub mod mapping;
mod settlements;

use schemars::JsonSchema;
use serde::Deserialize;

use crate::platforms::authorization::BodyKind;
use crate::platforms::authorization::{Environment, expiring_token_body};
use crate::platforms::connector::ConnectorKind;
use crate::platforms::tokens::ExpiringTokens;
use crate::platforms::{LEDGER, Platform, SourceType};

/// QuickBooks Online in the catalogue.
pub static PLATFORM: Platform = Platform {
    platform_key: "quickbooks-online",
    name: "QuickBooks Online",
    source_type: SourceType::Accounting,
    data_types: LEDGER,
    authorization: Some(BodyKind::of::<QuickBooksOnlineAuthorization>()),
    connector: Some(ConnectorKind::of::<connector::QuickBooksConnector>()),
};

/// QuickBooks Online: a connection to one QuickBooks company.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[schemars(deny_unknown_fields)]
pub struct QuickBooksOnlineAuthorization {
    /// The company's realm id (`realmId` on the OAuth redirect), used in API paths `/v3/company/{realmId}`.
    #[schemars(regex(pattern = r"^[0-9]{1,32}$"))]
    pub realm_id: String,
    /// `production` (default) or `sandbox` (Intuit's sandbox companies).
    #[serde(default)]
    pub environment: Environment,
    /// The OAuth tokens (their fields sit directly in this object).
    #[serde(flatten)]
    pub tokens: ExpiringTokens,
}

expiring_token_body!(QuickBooksOnlineAuthorization => realm_id);
