//! Customers: the parties invoices are addressed to, by name.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::{Definition, Direction, Spec, vocabulary};
use crate::timestamp::Timestamp;

/// The customers data type.
pub struct Customers;

impl Definition for Customers {
    type Record = Customer;

    const SPEC: &'static Spec = &Spec {
        name: "customers",
        noun: "customers",
        id_field: "customerId",
        order: Direction::Ascending,
        order_description: "by name (ties broken by connection, then customer id)",
        filter: None,
        keys: &["status", "defaultCurrency", "modifiedDate"],
    };

    fn id(record: &Customer) -> &str {
        &record.customer_id
    }

    fn sort_key(record: &Customer) -> String {
        record.customer_name.clone()
    }
}

vocabulary! {
    /// Whether a customer is in use.
    pub enum CustomerStatus {
        /// In use.
        Active,
        /// Archived on the platform.
        Archived,
    }
}

/// A customer synced from a platform.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Customer {
    /// The platform's id of the customer.
    pub customer_id: String,
    /// The customer's (company) name.
    pub customer_name: String,
    /// Contact e-mail; null if none.
    pub email_address: Option<String>,
    /// Contact phone; null if none.
    pub phone: Option<String>,
    /// ISO 4217 code of the currency it is invoiced in; null if unknown.
    pub default_currency: Option<String>,
    /// Whether it is in use.
    pub status: CustomerStatus,
    /// When the platform's record last changed; null when the platform does not say.
    pub source_modified_date: Option<Timestamp>,
}
