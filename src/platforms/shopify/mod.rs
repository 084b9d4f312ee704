//! Shopify: its catalogue entry and authorization body; its connector
//! ([`connector`]: the GraphQL Admin API's orders and customers on the
//! shop's own host; [`catalog`]: its product variants as items) and the
//! mapping of its orders, customers and statuses ([`mapping`]). What these
//! rely on, with sources: `NOTES.md`.

pub mod catalog;
pub mod connector;
pub mod mapping;

use chrono::{DateTime, Utc};
use schemars::JsonSchema;
use serde::Deserialize;

use crate::data::DataType;
use crate::error::FieldError;
use crate::platforms::authorization::AuthorizationBody;
use crate::platforms::authorization::BodyKind;
use crate::platforms::connector::ConnectorKind;
use crate::platforms::numbers::Seconds;
use crate::platforms::tokens::{Expiry, Secret, expiry};
use crate::platforms::{Platform, SourceType};

/// What Shopify syncs: the shop's customers, orders and product variants
/// (as items).
const DATA_TYPES: &[DataType] = &[DataType::CUSTOMERS, DataType::ORDERS, DataType::ITEMS];

/// Shopify in the catalogue.
pub static PLATFORM: Platform = Platform {
    platform_key: "shopify",
    name: "Shopify",
    source_type: SourceType::Commerce,
    data_types: DATA_TYPES,
    authorization: Some(BodyKind::of::<ShopifyAuthorization>()),
    connector: Some(ConnectorKind::of::<connector::ShopifyConnector>()),
};

/// Shopify: a connection to one shop. Legacy offline tokens never expire;
/// expiring offline tokens come with a refresh token and an expiry.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[schemars(deny_unknown_fields)]
pub struct ShopifyAuthorization {
    /// The shop's permanent domain, `{shop}.myshopify.com`.
    #[schemars(regex(pattern = r"^[a-z0-9][a-z0-9-]{0,62}\.myshopify\.com$"))]
    pub shop_domain: String,
    /// The offline access token.
    pub access_token: Secret,
    /// The refresh token of an expiring offline token; absent for a legacy non-expiring token. With it, `expiresIn` or `expiresAt` is required.
    pub refresh_token: Option<Secret>,
    /// Seconds until an expiring offline token expires, counted from this request.
    pub expires_in: Option<Seconds>,
    /// When an expiring offline token expires (RFC 3339).
    pub expires_at: Option<DateTime<Utc>>,
}

impl AuthorizationBody for ShopifyAuthorization {
    fn organization_id(&self) -> String {
        self.shop_domain.clone()
    }

    /// An expiring offline token (with a refresh token) must say when it
    /// expires; a legacy token has neither.
    fn expiry(&self, now: DateTime<Utc>) -> Result<Expiry, FieldError> {
        let has_refresh_token = self.refresh_token.is_some();
        let found = expiry(self.expires_in, self.expires_at, has_refresh_token, now)?;
        if !has_refresh_token && found != Expiry::Never {
            return Err(FieldError::new(
                "refreshToken",
                "is required with an expiry: an expiring offline token cannot be kept alive without it",
            ));
        }
        Ok(found)
    }
}
