//! Exact Online: its catalogue entry and authorization body; its connector
//! ([`connector`]: the division's sales invoices and sales accounts on its
//! country site, OData `__next` paging) and the mapping of its records and
//! statuses ([`mapping`]); the accounting lists beyond sales (`ledger`,
//! over Exact's sync APIs in `sync_api`, mapped in `chart`, `documents` and
//! `journals`). What these rely on, with sources: `NOTES.md`.

mod chart;
pub mod connector;
mod documents;
mod journals;
mod ledger;
pub mod mapping;
mod sync_api;

use schemars::JsonSchema;
use serde::Deserialize;

use crate::data::DataType;
use crate::platforms::authorization::BodyKind;
use crate::platforms::authorization::expiring_token_body;
use crate::platforms::connector::ConnectorKind;
use crate::platforms::link::Region;
use crate::platforms::numbers::WholeNumber;
use crate::platforms::tokens::ExpiringTokens;
use crate::platforms::{Platform, SourceType};

/// Exact Online in the catalogue.
pub static PLATFORM: Platform = Platform {
    platform_key: "exact-online",
    name: "Exact Online",
    source_type: SourceType::Accounting,
    data_types: DATA_TYPES,
    authorization: Some(BodyKind::of::<ExactOnlineAuthorization>()),
    connector: Some(ConnectorKind::of::<connector::ExactOnlineConnector>()),
};

/// What Exact Online syncs: the accounting model but payments and bill
/// payments, which Exact keeps no record of (`NOTES.md`, "Accounting model").
const DATA_TYPES: &[DataType] = &[
    DataType::INVOICES,
    DataType::CUSTOMERS,
    DataType::ACCOUNTS,
    DataType::SUPPLIERS,
    DataType::TAX_RATES,
    DataType::BILLS,
    DataType::CREDIT_NOTES,
    DataType::ITEMS,
    DataType::COMPANY_INFO,
    DataType::JOURNAL_ENTRIES,
];

/// Exact Online's country sites: tokens and data live on one of them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum ExactRegion {
    /// start.exactonline.nl
    Nl,
    /// start.exactonline.be
    Be,
    /// start.exactonline.de
    De,
    /// start.exactonline.fr
    Fr,
    /// start.exactonline.es
    Es,
    /// start.exactonline.co.uk
    Uk,
    /// start.exactonline.com (United States)
    Us,
}

/// Exact Online: a connection to one division (administration).
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[schemars(deny_unknown_fields)]
pub struct ExactOnlineAuthorization {
    /// The division number (`CurrentDivision` in `GET /api/v1/current/Me`), used in paths `/api/v1/{division}/...`.
    pub division: WholeNumber,
    /// The country site the division lives on.
    pub region: ExactRegion,
    /// The OAuth tokens (their fields sit directly in this object).
    #[serde(flatten)]
    pub tokens: ExpiringTokens,
}

expiring_token_body!(ExactOnlineAuthorization => division);

/// The country sites the link flow's hosted page offers.
pub const REGIONS: &[Region] = &[
    Region {
        value: "nl",
        label: "Netherlands",
        host: "https://start.exactonline.nl",
    },
    Region {
        value: "be",
        label: "Belgium",
        host: "https://start.exactonline.be",
    },
    Region {
        value: "de",
        label: "Germany",
        host: "https://start.exactonline.de",
    },
    Region {
        value: "fr",
        label: "France",
        host: "https://start.exactonline.fr",
    },
    Region {
        value: "es",
        label: "Spain",
        host: "https://start.exactonline.es",
    },
    Region {
        value: "uk",
        label: "United Kingdom",
        host: "https://start.exactonline.co.uk",
    },
    Region {
        value: "us",
        label: "United States",
        host: "https://start.exactonline.com",
    },
];

impl ExactRegion {
    /// The country site: its API lives under `/api/v1`, its token endpoint
    /// at `/api/oauth2/token`.
    pub fn host(self) -> &'static str {
        match self {
            Self::Nl => "https://start.exactonline.nl",
            Self::Be => "https://start.exactonline.be",
            Self::De => "https://start.exactonline.de",
            Self::Fr => "https://start.exactonline.fr",
            Self::Es => "https://start.exactonline.es",
            Self::Uk => "https://start.exactonline.co.uk",
            Self::Us => "https://start.exactonline.com",
        }
    }
}
