//! FreshBooks: its catalogue entry and authorization body; its connector
//! ([`connector`]: the account's accounting lists, paging) and the mapping
//! of its records and statuses ([`mapping`]). What these rely on, with
//! sources: `NOTES.md`.

pub mod connector;
pub mod mapping;

use schemars::JsonSchema;
use serde::Deserialize;

use crate::platforms::authorization::expiring_token_body;
use crate::platforms::numbers::WholeNumber;
use crate::platforms::tokens::ExpiringTokens;
use crate::platforms::{Platform, SourceType, SALES};
use crate::platforms::authorization::BodyKind;
use crate::platforms::connector::ConnectorKind;

/// FreshBooks in the catalogue.
pub static PLATFORM: Platform = Platform {
    platform_key: "freshbooks",
    name: "FreshBooks",
    source_type: SourceType::Accounting,
    data_types: SALES,
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
