//! Oracle NetSuite: its catalogue entry and authorization body; its connector ([`connector`]:
//! SuiteQL requests and paging), the mapping of its invoices and customers ([`mapping`]) and
//! the rest of the ledger (`ledger` fetches; `chart`, `documents`, `settlements` and `journals`
//! map). What these rely on, with sources: `NOTES.md`.

mod chart;
pub mod connector;
mod documents;
mod journals;
mod ledger;
pub mod mapping;
mod queries;
mod settlements;

use schemars::JsonSchema;
use serde::Deserialize;

use crate::platforms::authorization::BodyKind;
use crate::platforms::authorization::expiring_token_body;
use crate::platforms::connector::ConnectorKind;
use crate::platforms::tokens::ExpiringTokens;
use crate::platforms::{LEDGER, Platform, SourceType};

/// Oracle NetSuite in the catalogue.
pub static PLATFORM: Platform = Platform {
    platform_key: "netsuite",
    name: "Oracle NetSuite",
    source_type: SourceType::Accounting,
    data_types: LEDGER,
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
