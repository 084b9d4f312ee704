//! Suppliers: the parties bills come from, by name.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::{Definition, Direction, Spec, vocabulary};
use crate::timestamp::Timestamp;

/// The suppliers data type.
pub struct Suppliers;

impl Definition for Suppliers {
    type Record = Supplier;

    const SPEC: &'static Spec = &Spec {
        name: "suppliers",
        noun: "suppliers",
        id_field: "supplierId",
        order: Direction::Ascending,
        order_description: "by name (ties broken by connection, then supplier id)",
        filter: None,
        keys: &["status", "defaultCurrency", "modifiedDate"],
    };

    fn id(record: &Supplier) -> &str {
        &record.supplier_id
    }

    fn sort_key(record: &Supplier) -> String {
        record.supplier_name.clone()
    }
}

vocabulary! {
    /// Whether a supplier is in use.
    pub enum SupplierStatus {
        /// In use.
        Active,
        /// Archived on the platform.
        Archived,
    }
}

/// A supplier synced from a platform.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Supplier {
    /// The platform's id of the supplier (what bills' `supplierRef.id` names).
    pub supplier_id: String,
    /// The supplier's (company) name.
    pub supplier_name: String,
    /// Contact e-mail; null if none.
    pub email_address: Option<String>,
    /// Contact phone; null if none.
    pub phone: Option<String>,
    /// ISO 4217 code of the currency it bills in; null if unknown.
    pub default_currency: Option<String>,
    /// Whether it is in use.
    pub status: SupplierStatus,
    /// When the platform's record last changed; null when the platform does not say.
    pub source_modified_date: Option<Timestamp>,
}

/// A reference to a supplier of the same connection: follow it with
/// `GET .../data/suppliers/{supplierId}`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SupplierRef {
    /// The supplier's `supplierId`.
    pub id: String,
    /// The supplier's name, as the referring record gives it; null when it gives none.
    pub supplier_name: Option<String>,
}

impl SupplierRef {
    /// The reference to supplier `id`, when the platform names one.
    pub fn to(id: Option<String>, supplier_name: Option<String>) -> Option<Self> {
        id.map(|id| Self { id, supplier_name })
    }
}
