//! The `sandbox` platform: synthetic data of every data type derived from
//! the authorization's `seed` and counts, for demos, tests and
//! benchmarks ([`dataset`]; the chart of accounts, suppliers and tax rates
//! in `ledger.rs`, bills and bill payments in `payables.rs`, payments in
//! `receivables.rs`, the general ledger in `journals.rs`),
//! and its connector. Notes: `NOTES.md`.

pub mod connector;
pub mod dataset;
mod journals;
mod ledger;
mod payables;
mod receivables;

use chrono::{DateTime, Utc};
use schemars::JsonSchema;
use serde::Deserialize;

use crate::error::FieldError;
use crate::platforms::authorization::AuthorizationBody;
use crate::platforms::authorization::BodyKind;
use crate::platforms::connector::ConnectorKind;
use crate::platforms::numbers::{RecordCount, Seconds, Seed};
use crate::platforms::tokens::{Expiry, Secret, expiry};
use crate::platforms::{EVERY, Platform, SourceType};

/// The sandbox's consent page, which tributary serves itself (relative to
/// its public base URL): the sandbox's "authorize endpoint".
pub const CONSENT_PATH: &str = "/link/sandbox/consent";

/// The synthetic organizations a consent on the sandbox's own page covers
/// (id, name); the customer chooses one.
pub const LINKABLE_ORGANIZATIONS: &[(&str, &str)] = &[
    ("sbx-demo-books", "Demo Books Ltd"),
    ("sbx-demo-traders", "Demo Traders Ltd"),
];

/// tributary Sandbox in the catalogue.
pub static PLATFORM: Platform = Platform {
    platform_key: "sandbox",
    name: "tributary Sandbox",
    source_type: SourceType::Accounting,
    data_types: EVERY,
    authorization: Some(BodyKind::of::<SandboxAuthorization>()),
    connector: Some(ConnectorKind::of::<connector::SandboxConnector>()),
};

/// tributary's synthetic platform, for demos, tests and benchmarks: its
/// data (invoices and the payments of them, customers, orders, bank
/// accounts and transactions, a chart of accounts, suppliers, their bills
/// and the payments of them, and tax rates) is generated from `seed` and
/// the counts.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[schemars(deny_unknown_fields)]
pub struct SandboxAuthorization {
    /// An identifier you choose for the synthetic organization, starting with `sbx-` (so a sandbox body is never mistaken for a real platform's).
    #[schemars(regex(pattern = r"^sbx-[A-Za-z0-9._-]{1,60}$"))]
    pub organization_id: String,
    /// Any non-empty string; the sandbox accepts every token.
    pub access_token: Secret,
    /// Optional refresh token.
    pub refresh_token: Option<Secret>,
    /// Optional seconds until the access token expires.
    pub expires_in: Option<Seconds>,
    /// How many invoices the synthetic organization has (default 250).
    #[schemars(extend("default" = 250))]
    pub invoice_count: Option<RecordCount>,
    /// How many orders the synthetic organization has (default 250).
    #[schemars(extend("default" = 250))]
    pub order_count: Option<RecordCount>,
    /// How many bank transactions its three bank accounts have between them (default 250).
    #[schemars(extend("default" = 250))]
    pub bank_transaction_count: Option<RecordCount>,
    /// The seed of the synthetic data: the same seed always yields the same data (default 0).
    #[schemars(extend("default" = 0))]
    pub seed: Option<Seed>,
    /// How many of its invoices were amended since the seed's data was made (default 0): spread evenly over the
    /// list, each with a new note and a later `sourceModifiedDate`, the rest unchanged. Authorizing the same
    /// organization again with a count makes the next sync a resync in which exactly that many records changed.
    #[schemars(extend("default" = 0))]
    pub changed_invoice_count: Option<RecordCount>,
}

impl AuthorizationBody for SandboxAuthorization {
    fn organization_id(&self) -> String {
        self.organization_id.clone()
    }

    fn expiry(&self, now: DateTime<Utc>) -> Result<Expiry, FieldError> {
        expiry(self.expires_in, None, false, now)
    }
}
