//! The platforms tributary connects to: the catalogue, and one folder per
//! platform holding its authorization body and, where it syncs, its
//! connector.
//!
//! - [`catalogue`]: the list of platforms.
//! - [`authorization`]: what authorization bodies share, and how one is validated.
//! - [`tokens`] and [`numbers`]: the parts bodies share.
//! - [`connector`]: the `Connector` trait and the connectors by platform.
//! - [`kit`]: what connectors share (HTTP with retries, the refresh grant, exact amounts and dates).

pub mod authorization;
mod catalogue;
pub mod connector;
pub mod kit;
pub mod numbers;
pub mod tokens;

pub mod amazon_seller_central;
pub mod bigcommerce;
pub mod dynamics_365_business_central;
pub mod ebay;
pub mod exact_online;
pub mod freeagent;
pub mod freshbooks;
pub mod mollie;
pub mod myob;
pub mod netsuite;
pub mod paypal;
pub mod plaid;
pub mod quickbooks_online;
pub mod sage_business_cloud;
pub mod sandbox;
pub mod shopify;
pub mod square;
pub mod stripe;
pub mod truelayer;
pub mod xero;
pub mod zettle;
pub mod zoho_books;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use authorization::BodyKind;

pub use catalogue::{all, find};

/// The kind of platform, as the reference product classifies connections.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub enum SourceType {
    /// Accounting and invoicing software.
    Accounting,
    /// Commerce: shops, payments, marketplaces.
    Commerce,
    /// Banking and open-banking data.
    Banking,
}

/// The kinds of data a sync can fetch.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub enum DataType {
    /// Sales invoices.
    Invoices,
    /// Customers that invoices refer to.
    Customers,
}

/// One platform of the catalogue.
#[derive(Debug)]
pub struct Integration {
    /// Lower-case, readable key (`xero`, `quickbooks-online`).
    pub platform_key: &'static str,
    /// The platform's name.
    pub name: &'static str,
    /// What kind of platform it is.
    pub source_type: SourceType,
    /// Whether the support team runs managed migrations from it.
    pub managed_migration: bool,
    /// The data types a sync of it can fetch.
    pub data_types: &'static [DataType],
    /// Its authorization body, when it supports self-service migration.
    pub authorization: Option<BodyKind>,
}

impl Integration {
    /// Whether `PUT .../authorization` accepts tokens for it.
    pub fn self_service_migration(&self) -> bool {
        self.authorization.is_some()
    }
}
