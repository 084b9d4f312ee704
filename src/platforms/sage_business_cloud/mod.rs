//! Sage Business Cloud Accounting: its catalogue entry and authorization
//! body; its connector ([`connector`]: the `X-Business` header, `$next`
//! paging; [`ledger`]: the accounting lists beyond sales) and the mapping
//! of its records and statuses ([`mapping`] for sales, [`chart`],
//! [`documents`], [`settlements`], [`journals`]; the general ledger in
//! [`general_ledger`]). What
//! these rely on, with sources: `NOTES.md`.

pub mod chart;
pub mod connector;
pub mod documents;
pub mod general_ledger;
pub mod journals;
pub mod ledger;
pub mod mapping;
pub mod settlements;

use schemars::JsonSchema;
use serde::Deserialize;

use crate::platforms::authorization::BodyKind;
use crate::platforms::authorization::expiring_token_body;
use crate::platforms::connector::ConnectorKind;
use crate::platforms::tokens::ExpiringTokens;
use crate::platforms::{LEDGER, Platform, SourceType};

/// Sage Business Cloud Accounting in the catalogue.
pub static PLATFORM: Platform = Platform {
    platform_key: "sage-business-cloud",
    name: "Sage Business Cloud Accounting",
    source_type: SourceType::Accounting,
    data_types: LEDGER,
    authorization: Some(BodyKind::of::<SageBusinessCloudAuthorization>()),
    connector: Some(ConnectorKind::of::<connector::SageBusinessCloudConnector>()),
};

/// Sage Business Cloud Accounting: a connection to one Sage business.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[schemars(deny_unknown_fields)]
pub struct SageBusinessCloudAuthorization {
    /// The business id (`id` in `GET /v3.1/businesses`, 32 hexadecimal characters), sent as the `X-Business` header.
    #[schemars(regex(pattern = r"^[0-9a-f]{32}$"))]
    pub business_id: String,
    /// The OAuth tokens (their fields sit directly in this object).
    #[serde(flatten)]
    pub tokens: ExpiringTokens,
}

expiring_token_body!(SageBusinessCloudAuthorization => business_id);
