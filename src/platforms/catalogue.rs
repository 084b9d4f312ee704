//! The platforms tributary integrates with. Keys are stable: they appear in
//! stored connections and in partners' code.
//!
//! Self-service migration: every platform with an authorization body.
//! Managed migration: exactly FreeAgent, FreshBooks, QuickBooks Online,
//! Shopify, Wave and Zoho Books. QuickBooks Desktop (no cloud OAuth: it
//! talks through the Web Connector) and GoCardless Bank Account Data
//! (tokens belong to the integrator, not to each end customer) support
//! neither.

use super::amazon_seller_central::AmazonSellerCentralAuthorization;
use super::bigcommerce::BigCommerceAuthorization;
use super::dynamics_365_business_central::BusinessCentralAuthorization;
use super::ebay::EbayAuthorization;
use super::exact_online::ExactOnlineAuthorization;
use super::freeagent::FreeAgentAuthorization;
use super::freshbooks::FreshBooksAuthorization;
use super::mollie::MollieAuthorization;
use super::myob::MyobAuthorization;
use super::netsuite::NetSuiteAuthorization;
use super::paypal::PayPalAuthorization;
use super::plaid::PlaidAuthorization;
use super::quickbooks_online::QuickBooksOnlineAuthorization;
use super::sage_business_cloud::SageBusinessCloudAuthorization;
use super::sandbox::SandboxAuthorization;
use super::shopify::ShopifyAuthorization;
use super::square::SquareAuthorization;
use super::stripe::StripeAuthorization;
use super::truelayer::TrueLayerAuthorization;
use super::xero::XeroAuthorization;
use super::zettle::ZettleAuthorization;
use super::zoho_books::ZohoBooksAuthorization;
use super::{BodyKind, DataType, Integration, SourceType};

const SALES: &[DataType] = &[DataType::Invoices, DataType::Customers];
const NONE_YET: &[DataType] = &[];

/// Builds a catalogue entry.
const fn platform(
    platform_key: &'static str,
    name: &'static str,
    source_type: SourceType,
    managed_migration: bool,
    data_types: &'static [DataType],
    authorization: Option<BodyKind>,
) -> Integration {
    Integration {
        platform_key,
        name,
        source_type,
        managed_migration,
        data_types,
        authorization,
    }
}

use SourceType::{Accounting, Banking, Commerce};

static CATALOGUE: &[Integration] = &[
    platform(
        "amazon-seller-central",
        "Amazon Seller Central",
        Commerce,
        false,
        SALES,
        Some(BodyKind::of::<AmazonSellerCentralAuthorization>()),
    ),
    platform(
        "bigcommerce",
        "BigCommerce",
        Commerce,
        false,
        SALES,
        Some(BodyKind::of::<BigCommerceAuthorization>()),
    ),
    platform(
        "dynamics-365-business-central",
        "Dynamics 365 Business Central",
        Accounting,
        false,
        SALES,
        Some(BodyKind::of::<BusinessCentralAuthorization>()),
    ),
    platform(
        "ebay",
        "eBay",
        Commerce,
        false,
        SALES,
        Some(BodyKind::of::<EbayAuthorization>()),
    ),
    platform(
        "exact-online",
        "Exact Online",
        Accounting,
        false,
        SALES,
        Some(BodyKind::of::<ExactOnlineAuthorization>()),
    ),
    platform(
        "freeagent",
        "FreeAgent",
        Accounting,
        true,
        SALES,
        Some(BodyKind::of::<FreeAgentAuthorization>()),
    ),
    platform(
        "freshbooks",
        "FreshBooks",
        Accounting,
        true,
        SALES,
        Some(BodyKind::of::<FreshBooksAuthorization>()),
    ),
    platform(
        "gocardless-bank-account-data",
        "GoCardless Bank Account Data",
        Banking,
        false,
        NONE_YET,
        None,
    ),
    platform(
        "mollie",
        "Mollie",
        Commerce,
        false,
        SALES,
        Some(BodyKind::of::<MollieAuthorization>()),
    ),
    platform(
        "myob",
        "MYOB Business",
        Accounting,
        false,
        SALES,
        Some(BodyKind::of::<MyobAuthorization>()),
    ),
    platform(
        "netsuite",
        "Oracle NetSuite",
        Accounting,
        false,
        SALES,
        Some(BodyKind::of::<NetSuiteAuthorization>()),
    ),
    platform(
        "paypal",
        "PayPal",
        Commerce,
        false,
        SALES,
        Some(BodyKind::of::<PayPalAuthorization>()),
    ),
    platform(
        "plaid",
        "Plaid",
        Banking,
        false,
        NONE_YET,
        Some(BodyKind::of::<PlaidAuthorization>()),
    ),
    platform(
        "quickbooks-desktop",
        "QuickBooks Desktop",
        Accounting,
        false,
        SALES,
        None,
    ),
    platform(
        "quickbooks-online",
        "QuickBooks Online",
        Accounting,
        true,
        SALES,
        Some(BodyKind::of::<QuickBooksOnlineAuthorization>()),
    ),
    platform(
        "sage-business-cloud",
        "Sage Business Cloud Accounting",
        Accounting,
        false,
        SALES,
        Some(BodyKind::of::<SageBusinessCloudAuthorization>()),
    ),
    platform(
        "sandbox",
        "tributary Sandbox",
        Accounting,
        false,
        SALES,
        Some(BodyKind::of::<SandboxAuthorization>()),
    ),
    platform(
        "shopify",
        "Shopify",
        Commerce,
        true,
        SALES,
        Some(BodyKind::of::<ShopifyAuthorization>()),
    ),
    platform(
        "square",
        "Square",
        Commerce,
        false,
        SALES,
        Some(BodyKind::of::<SquareAuthorization>()),
    ),
    platform(
        "stripe",
        "Stripe",
        Commerce,
        false,
        SALES,
        Some(BodyKind::of::<StripeAuthorization>()),
    ),
    platform(
        "truelayer",
        "TrueLayer",
        Banking,
        false,
        NONE_YET,
        Some(BodyKind::of::<TrueLayerAuthorization>()),
    ),
    platform("wave", "Wave", Accounting, true, SALES, None),
    platform(
        "xero",
        "Xero",
        Accounting,
        false,
        SALES,
        Some(BodyKind::of::<XeroAuthorization>()),
    ),
    platform(
        "zettle",
        "Zettle by PayPal",
        Commerce,
        false,
        SALES,
        Some(BodyKind::of::<ZettleAuthorization>()),
    ),
    platform(
        "zoho-books",
        "Zoho Books",
        Accounting,
        true,
        SALES,
        Some(BodyKind::of::<ZohoBooksAuthorization>()),
    ),
];

/// Every integration, ordered by platform key.
pub fn all() -> &'static [Integration] {
    CATALOGUE
}

/// The integration with `platform_key`, if any.
pub fn find(platform_key: &str) -> Option<&'static Integration> {
    CATALOGUE
        .iter()
        .find(|integration| integration.platform_key == platform_key)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_catalogue_meets_its_promises() {
        let real: Vec<_> = all()
            .iter()
            .filter(|i| i.platform_key != "sandbox")
            .collect();
        assert!(real.len() >= 24, "{} real platforms", real.len());
        assert!(real.iter().filter(|i| i.self_service_migration()).count() >= 20);
        let mut managed: Vec<_> = all()
            .iter()
            .filter(|i| i.managed_migration)
            .map(|i| i.name)
            .collect();
        managed.sort_unstable();
        assert_eq!(
            managed,
            [
                "FreeAgent",
                "FreshBooks",
                "QuickBooks Online",
                "Shopify",
                "Wave",
                "Zoho Books"
            ]
        );
        let neither = find("quickbooks-desktop").expect("listed");
        assert!(!neither.self_service_migration() && !neither.managed_migration);
        for source_type in [Accounting, Commerce, Banking] {
            assert!(real.iter().any(|i| i.source_type == source_type));
        }
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
