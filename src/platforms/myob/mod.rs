//! MYOB Business: its catalogue entry and authorization body; its connector
//! ([`connector`]: the AccountRight API's sale invoices and customers of one
//! company file, `NextPageLink` paging; [`ledger`]: the accounting lists
//! beyond sales) and the mapping of its records and statuses ([`mapping`]
//! for sales and cards, [`chart`], [`documents`], [`settlements`],
//! [`journals`]). What these rely on, with sources: `NOTES.md`.

pub mod chart;
pub mod connector;
pub mod documents;
pub mod journals;
pub mod ledger;
pub mod mapping;
pub mod settlements;

use schemars::JsonSchema;
use serde::Deserialize;
use uuid::Uuid;

use crate::platforms::authorization::BodyKind;
use crate::platforms::authorization::expiring_token_body;
use crate::platforms::connector::ConnectorKind;
use crate::platforms::tokens::ExpiringTokens;
use crate::platforms::{LEDGER, Platform, SourceType};

/// MYOB Business in the catalogue.
pub static PLATFORM: Platform = Platform {
    platform_key: "myob",
    name: "MYOB Business",
    source_type: SourceType::Accounting,
    data_types: LEDGER,
    authorization: Some(BodyKind::of::<MyobAuthorization>()),
    connector: Some(ConnectorKind::of::<connector::MyobConnector>()),
};

/// MYOB Business (AccountRight): a connection to one company file.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[schemars(deny_unknown_fields)]
pub struct MyobAuthorization {
    /// The company file id (`Id` in `GET https://api.myob.com/accountright/`).
    pub company_file_id: Uuid,
    /// The company file URI (`Uri` in the same list), e.g. `https://arl2.api.myob.com/accountright/<id>`; kept for reference: tributary calls `https://api.myob.com/accountright/{companyFileId}`.
    #[schemars(url, length(max = 2048))]
    pub company_file_uri: String,
    /// Your MYOB app's API key (its OAuth client id), which MYOB requires on every API call as the `x-myobapi-key` header: syncing and verification need it.
    #[schemars(length(min = 1, max = 256))]
    pub api_key: Option<String>,
    /// The OAuth tokens (their fields sit directly in this object).
    #[serde(flatten)]
    pub tokens: ExpiringTokens,
}

expiring_token_body!(MyobAuthorization => company_file_id);
