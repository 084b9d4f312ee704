//! Zettle by PayPal: its catalogue entry and authorization body; its
//! connector ([`connector`]: the Purchase API v2) and the mapping of its
//! purchases and refunds to orders ([`mapping`]). What these rely on, with
//! sources: `NOTES.md`.

pub mod connector;
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

/// What Zettle syncs: the organization's purchases as orders (it has no customers).
const DATA_TYPES: &[DataType] = &[DataType::ORDERS];

/// Zettle by PayPal in the catalogue.
pub static PLATFORM: Platform = Platform {
    platform_key: "zettle",
    name: "Zettle by PayPal",
    source_type: SourceType::Commerce,
    data_types: DATA_TYPES,
    authorization: Some(BodyKind::of::<ZettleAuthorization>()),
    connector: Some(ConnectorKind::of::<connector::ZettleConnector>()),
};

/// Zettle: a connection to one Zettle organization.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[schemars(deny_unknown_fields)]
pub struct ZettleAuthorization {
    /// The organization's UUID (`organizationUuid` in `GET https://oauth.zettle.com/users/self`).
    pub organization_uuid: Uuid,
    /// The OAuth tokens (their fields sit directly in this object).
    #[serde(flatten)]
    pub tokens: ExpiringTokens,
}

expiring_token_body!(ZettleAuthorization => organization_uuid);
