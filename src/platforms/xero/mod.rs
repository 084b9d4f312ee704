//! Xero: its catalogue entry and authorization body; its connector
//! ([`connector`]: requests and paging) and the mapping of its records and
//! statuses ([`mapping`], payments in `payments.rs`, the organisation and its items in
//! `company.rs`, the general ledger in `journals.rs`); linking through the hosted flow ([`link`]). What these rely on, with sources: `NOTES.md`.

mod chart;
mod company;
pub mod connector;
#[cfg(test)]
mod contract_tests;
mod journals;
pub mod link;
pub mod mapping;
mod payments;

use schemars::JsonSchema;
use serde::Deserialize;
use uuid::Uuid;

use crate::platforms::authorization::BodyKind;
use crate::platforms::authorization::expiring_token_body;
use crate::platforms::connector::ConnectorKind;
use crate::platforms::tokens::ExpiringTokens;
use crate::platforms::{LEDGER, Platform, SourceType};

/// Xero in the catalogue.
pub static PLATFORM: Platform = Platform {
    platform_key: "xero",
    name: "Xero",
    source_type: SourceType::Accounting,
    data_types: LEDGER,
    authorization: Some(BodyKind::of::<XeroAuthorization>()),
    connector: Some(ConnectorKind::of::<connector::XeroConnector>()),
};

/// Xero: a connection to one Xero organisation.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[schemars(deny_unknown_fields)]
pub struct XeroAuthorization {
    /// The organisation's tenant id (`tenantId` in `GET https://api.xero.com/connections`), sent as the `xero-tenant-id` header.
    pub tenant_id: Uuid,
    /// The OAuth tokens (their fields sit directly in this object).
    #[serde(flatten)]
    pub tokens: ExpiringTokens,
}

expiring_token_body!(XeroAuthorization => tenant_id);
