//! Oracle NetSuite: its catalogue entry and authorization body; its connector ([`connector`]:
//! SuiteQL requests and paging) and the mapping of its rows and statuses ([`mapping`]). What
//! these rely on, with sources: `NOTES.md`.

pub mod connector;
pub mod mapping;

use schemars::JsonSchema;
use serde::Deserialize;

use crate::platforms::authorization::expiring_token_body;
use crate::platforms::tokens::ExpiringTokens;
use crate::platforms::{Platform, SourceType, SALES};
use crate::platforms::authorization::BodyKind;
use crate::platforms::connector::ConnectorKind;

/// Oracle NetSuite in the catalogue.
pub static PLATFORM: Platform = Platform {
    platform_key: "netsuite",
    name: "Oracle NetSuite",
    source_type: SourceType::Accounting,
    data_types: SALES,
    authorization: Some(BodyKind::of::<NetSuiteAuthorization>()),
    connector: Some(ConnectorKind::of::<connector::NetSuiteConnector>()),
};

/// Oracle NetSuite: a connection to one NetSuite account.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[schemars(deny_unknown_fields)]
pub struct NetSuiteAuthorization {
    /// The account id (e.g. `1234567` or `1234567_SB1` for a sandbox), as in `https://<accountId>.suitetalk.api.netsuite.com`.
    #[schemars(regex(pattern = r"^[A-Za-z0-9_-]{1,64}$"))]
    pub account_id: String,
    /// The OAuth tokens (their fields sit directly in this object).
    #[serde(flatten)]
    pub tokens: ExpiringTokens,
}

expiring_token_body!(NetSuiteAuthorization => account_id);
