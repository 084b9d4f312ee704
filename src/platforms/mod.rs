//! The platforms tributary connects to: the catalogue, and one folder per
//! platform holding its catalogue entry, its authorization body and, where
//! it syncs, its connector (and the notes on its API, with sources). Adding
//! a platform is its folder and one line in [`platforms!`](self); see
//! "Adding a platform" in `ARCHITECTURE.md`.
//!
//! Keys are stable: they appear in stored connections and in partners'
//! code. Self-service migration: every platform with an authorization body.
//! Managed migration: exactly FreeAgent, FreshBooks, QuickBooks Online,
//! Shopify, Wave and Zoho Books. QuickBooks Desktop (no cloud OAuth: it
//! talks through the Web Connector) and GoCardless Bank Account Data
//! (tokens belong to the integrator, not to each end customer) support
//! neither.
//!
//! - [`authorization`]: what authorization bodies share, and how one is validated.
//! - [`tokens`] and [`numbers`]: the parts bodies share.
//! - [`connector`]: the `Connector` trait, its typed pages, and the connectors by platform.
//! - [`config`]: where each platform's API and token endpoint are.
//! - [`link`]: what a connector declares for the hosted link flow.
//! - [`kit`]: what connectors share (HTTP with retries, paging styles, the
//!   refresh grant, exact amounts and dates, status tables).

pub mod authorization;
pub mod config;
pub mod connector;
pub mod kit;
pub mod link;
pub mod numbers;
pub mod tokens;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use authorization::BodyKind;
use connector::ConnectorKind;

use crate::data::DataType;

pub mod amazon_seller_central;
pub mod bigcommerce;
pub mod dynamics_365_business_central;
pub mod ebay;
pub mod exact_online;
pub mod freeagent;
pub mod freshbooks;
pub mod gocardless_bank_account_data;
pub mod mollie;
pub mod myob;
pub mod netsuite;
pub mod paypal;
pub mod plaid;
pub mod quickbooks_desktop;
pub mod quickbooks_online;
pub mod sage_business_cloud;
pub mod sandbox;
pub mod shopify;
pub mod square;
pub mod stripe;
pub mod truelayer;
pub mod wave;
pub mod xero;
pub mod zettle;
pub mod zoho_books;

/// Every platform, ordered by platform key: one module (folder) each, with
/// its `PLATFORM` catalogue entry. (The modules are declared one by one
/// above, not by a macro, so that `cargo fmt` reaches their files.)
static ALL: &[&Platform] = &[
    &amazon_seller_central::PLATFORM,
    &bigcommerce::PLATFORM,
    &dynamics_365_business_central::PLATFORM,
    &ebay::PLATFORM,
    &exact_online::PLATFORM,
    &freeagent::PLATFORM,
    &freshbooks::PLATFORM,
    &gocardless_bank_account_data::PLATFORM,
    &mollie::PLATFORM,
    &myob::PLATFORM,
    &netsuite::PLATFORM,
    &paypal::PLATFORM,
    &plaid::PLATFORM,
    &quickbooks_desktop::PLATFORM,
    &quickbooks_online::PLATFORM,
    &sage_business_cloud::PLATFORM,
    &sandbox::PLATFORM,
    &shopify::PLATFORM,
    &square::PLATFORM,
    &stripe::PLATFORM,
    &truelayer::PLATFORM,
    &wave::PLATFORM,
    &xero::PLATFORM,
    &zettle::PLATFORM,
    &zoho_books::PLATFORM,
];

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

/// Sales data: invoices and the customers they are addressed to.
pub const SALES: &[DataType] = &[DataType::INVOICES, DataType::CUSTOMERS];
/// Sales data and the rest of the accounting model built so far (the
/// accounting platforms whose connectors read the ledger so far).
pub const LEDGER: &[DataType] = &[
    DataType::INVOICES,
    DataType::CUSTOMERS,
    DataType::ACCOUNTS,
    DataType::SUPPLIERS,
    DataType::TAX_RATES,
    DataType::BILLS,
    DataType::PAYMENTS,
    DataType::BILL_PAYMENTS,
    DataType::CREDIT_NOTES,
    DataType::ITEMS,
    DataType::COMPANY_INFO,
    DataType::JOURNAL_ENTRIES,
];
/// Commerce data: orders and the customers who place them.
pub const COMMERCE: &[DataType] = &[DataType::ORDERS, DataType::CUSTOMERS];
/// Banking data: accounts and their transactions.
pub const BANKING: &[DataType] = &[DataType::BANK_ACCOUNTS, DataType::BANK_TRANSACTIONS];
/// Every data type: the sandbox's synthetic organisation has them all.
pub const EVERY: &[DataType] = &[
    DataType::INVOICES,
    DataType::CUSTOMERS,
    DataType::ORDERS,
    DataType::BANK_ACCOUNTS,
    DataType::BANK_TRANSACTIONS,
    DataType::ACCOUNTS,
    DataType::SUPPLIERS,
    DataType::TAX_RATES,
    DataType::BILLS,
    DataType::PAYMENTS,
    DataType::BILL_PAYMENTS,
    DataType::CREDIT_NOTES,
    DataType::ITEMS,
    DataType::COMPANY_INFO,
    DataType::JOURNAL_ENTRIES,
];
/// No data type yet.
pub const NONE_YET: &[DataType] = &[];

/// One platform of the catalogue.
#[derive(Debug)]
pub struct Platform {
    /// Lower-case, readable key (`xero`, `quickbooks-online`).
    pub platform_key: &'static str,
    /// The platform's name.
    pub name: &'static str,
    /// What kind of platform it is.
    pub source_type: SourceType,
    /// The data types a sync of it can fetch.
    pub data_types: &'static [DataType],
    /// Its authorization body, when it supports self-service migration.
    pub authorization: Option<BodyKind>,
    /// Its connector, when tributary syncs from it.
    pub connector: Option<ConnectorKind>,
}

impl Platform {
    /// Whether `PUT .../authorization` accepts tokens for it.
    pub fn self_service_migration(&self) -> bool {
        self.authorization.is_some()
    }

    /// Whether `POST /migrations` accepts a batch of it: it takes migrated
    /// tokens and tributary has a connector to verify and sync its canary.
    pub fn managed_migration(&self) -> bool {
        self.authorization.is_some() && self.connector.is_some()
    }
}

/// Every platform, ordered by platform key.
pub fn all() -> &'static [&'static Platform] {
    ALL
}

/// The platform whose connector calls itself `connector_name`
/// (`Connector::PLATFORM`, as HTTP calls name their platform).
pub fn of_connector(connector_name: &str) -> Option<&'static Platform> {
    all().iter().copied().find(|platform| {
        platform
            .connector
            .is_some_and(|connector| connector.connector_name == connector_name)
    })
}

/// The platform with `platform_key`, if any.
pub fn find(platform_key: &str) -> Option<&'static Platform> {
    ALL.iter()
        .copied()
        .find(|platform| platform.platform_key == platform_key)
}

#[cfg(test)]
mod tests {
    use super::*;
    use SourceType::{Accounting, Banking, Commerce};

    #[test]
    fn the_catalogue_meets_its_promises() {
        let real: Vec<_> = all()
            .iter()
            .filter(|i| i.platform_key != "sandbox")
            .collect();
        assert!(real.len() >= 24, "{} real platforms", real.len());
        assert!(real.iter().filter(|i| i.self_service_migration()).count() >= 20);
        assert!(real.iter().filter(|i| i.managed_migration()).count() >= 20);
        let neither = find("quickbooks-desktop").expect("listed");
        assert!(!neither.self_service_migration() && !neither.managed_migration());
        for source_type in [Accounting, Commerce, Banking] {
            assert!(real.iter().any(|i| i.source_type == source_type));
        }
    }

    #[test]
    fn every_platform_folder_is_in_the_catalogue() {
        let folder = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("src/platforms");
        let mut platforms: Vec<String> = std::fs::read_dir(folder)
            .expect("src/platforms")
            .filter_map(Result::ok)
            .filter(|entry| entry.path().join("NOTES.md").is_file())
            .map(|entry| entry.file_name().to_string_lossy().into_owned())
            .collect();
        platforms.sort();
        let catalogued = ALL.len();
        assert_eq!(platforms.len(), catalogued, "{platforms:?}");
    }

    #[test]
    fn each_platform_lists_exactly_the_data_types_its_connector_syncs() {
        for platform in all() {
            let listed: Vec<DataType> = platform.data_types.to_vec();
            let synced = platform
                .connector
                .as_ref()
                .map_or_else(Vec::new, |connector| connector.data_types());
            assert_eq!(listed, synced, "{}", platform.platform_key);
        }
    }

    #[test]
    fn each_connector_name_leads_back_to_its_own_platform() {
        for platform in all() {
            if let Some(connector) = platform.connector {
                let found = of_connector(connector.connector_name).map(|p| p.platform_key);
                assert_eq!(
                    found,
                    Some(platform.platform_key),
                    "{}",
                    connector.connector_name
                );
            }
        }
        assert!(of_connector("Nobody").is_none());
    }

    #[test]
    fn keys_are_sorted_unique_and_readable() {
        let keys: Vec<_> = all().iter().map(|i| i.platform_key).collect();
        let mut sorted = keys.clone();
        sorted.sort_unstable();
        sorted.dedup();
        assert_eq!(keys, sorted);
        assert!(keys.iter().all(|key| {
            key.bytes()
                .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
        }));
    }
}
