//! Tax rates: the rates a ledger applies to lines (VAT, GST, sales tax),
//! by name, each with its components.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::money::Quantity;
use super::{Definition, Direction, Spec, vocabulary};
use crate::timestamp::Timestamp;

/// The tax rates data type.
pub struct TaxRates;

impl Definition for TaxRates {
    type Record = TaxRate;

    const SPEC: &'static Spec = &Spec {
        name: "taxRates",
        noun: "tax rates",
        id_field: "taxRateId",
        order: Direction::Ascending,
        order_description: "by name (ties broken by connection, then tax rate id)",
        filter: None,
        keys: &["status", "modifiedDate"],
    };

    fn id(record: &TaxRate) -> &str {
        &record.tax_rate_id
    }

    fn sort_key(record: &TaxRate) -> String {
        record.name.clone()
    }
}

vocabulary! {
    /// Whether a tax rate can be applied.
    pub enum TaxRateStatus {
        /// In use.
        Active,
        /// Archived (kept for history) on the platform.
        Archived,
    }
}

/// One component of a tax rate (a compound rate has several: a federal
/// and a provincial tax, say).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct TaxRateComponent {
    /// The component's name.
    pub name: String,
    /// Its rate in percent, exact (`"20"` is 20%).
    pub rate: Quantity,
    /// Whether it is charged on the amount with the components before it (tax on tax).
    pub is_compound: bool,
}

/// A tax rate synced from an accounting platform. Rates are percentages as
/// exact decimals (`"12.5"` is 12.5%).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct TaxRate {
    /// The platform's id of the tax rate (what lines' `taxRateRef.id` names).
    pub tax_rate_id: String,
    /// The code the platform posts with (Xero `OUTPUT2`); null when it has none.
    pub code: Option<String>,
    /// The rate's name.
    pub name: String,
    /// The rate applied to an amount, in percent, all components included.
    pub effective_tax_rate: Quantity,
    /// Its components; one for a simple rate.
    pub components: Vec<TaxRateComponent>,
    /// Whether it can be applied.
    pub status: TaxRateStatus,
    /// When the platform's record last changed; null when the platform does not say.
    pub source_modified_date: Option<Timestamp>,
}

/// A reference to a tax rate of the same connection: follow it with
/// `GET .../data/taxRates/{taxRateId}`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct TaxRateRef {
    /// The tax rate's `taxRateId`.
    pub id: String,
    /// The tax rate's name, as the referring record gives it; null when it gives none.
    pub name: Option<String>,
}

impl TaxRateRef {
    /// The reference to tax rate `id`, when the platform names one.
    pub fn to(id: Option<String>, name: Option<String>) -> Option<Self> {
        id.map(|id| Self { id, name })
    }
}
