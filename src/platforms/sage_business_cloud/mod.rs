//! Sage Business Cloud Accounting: its catalogue entry and authorization
//! body; its connector ([`connector`]: the `X-Business` header, `$next`
//! paging) and the mapping of its records and statuses ([`mapping`]). What
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

/// Sage Business Cloud Accounting in the catalogue.
pub static PLATFORM: Platform = Platform {
    platform_key: "sage-business-cloud",
    name: "Sage Business Cloud Accounting",
    source_type: SourceType::Accounting,
    data_types: SALES,
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
