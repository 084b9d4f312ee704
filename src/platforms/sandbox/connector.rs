//! The sandbox's connector: its synthetic data, a page at a time; any token
//! works, and none is refreshed.

use super::SandboxAuthorization;
use super::dataset::Dataset;
use crate::data::bank_accounts::{BankAccount, BankAccounts};
use crate::data::bank_transactions::{BankTransaction, BankTransactions};
use crate::data::customers::{Customer, Customers};
use crate::data::invoices::{Invoice, Invoices};
use crate::data::orders::{Order, Orders};
use crate::platforms::config::PlatformConfig;
use crate::platforms::connector::{
    Configured, Connector, ConnectorError, Endpoint, Fetched, Fetcher, Syncs, syncs,
};
use crate::platforms::kit::http::PlatformHttp;
use crate::platforms::kit::paging::Offset;

/// The synthetic platform.
#[derive(Debug, Default)]
pub struct SandboxConnector;

impl Configured for SandboxConnector {
    const API_BASE: Endpoint = Endpoint::Unused;
    const TOKEN_URL: Endpoint = Endpoint::Unused;

    fn new(_config: &PlatformConfig, _http: PlatformHttp) -> Self {
        Self
    }
}

impl Connector for SandboxConnector {
    type Credentials = SandboxAuthorization;
    const PLATFORM: &'static str = "The sandbox";

    fn syncs() -> Vec<Fetcher<Self>> {
        syncs![Self: Invoices, Customers, Orders, BankAccounts, BankTransactions]
    }

    /// Synthetic tokens prove nothing; a readable authorization is all it takes.
    async fn verify(&self, _credentials: &SandboxAuthorization) -> Result<(), ConnectorError> {
        Ok(())
    }
}

impl Syncs<Invoices> for SandboxConnector {
    async fn page(
        &self,
        credentials: &SandboxAuthorization,
        cursor: Option<String>,
    ) -> Result<Fetched<Invoice>, ConnectorError> {
        let start = Offset::from_cursor("sandbox", cursor, 0)?;
        Ok(Dataset::of(credentials).invoices(start.0))
    }
}

impl Syncs<Customers> for SandboxConnector {
    async fn page(
        &self,
        credentials: &SandboxAuthorization,
        cursor: Option<String>,
    ) -> Result<Fetched<Customer>, ConnectorError> {
        let start = Offset::from_cursor("sandbox", cursor, 0)?;
        Ok(Dataset::of(credentials).customers(start.0))
    }
}

impl Syncs<Orders> for SandboxConnector {
    async fn page(
        &self,
        credentials: &SandboxAuthorization,
        cursor: Option<String>,
    ) -> Result<Fetched<Order>, ConnectorError> {
        let start = Offset::from_cursor("sandbox", cursor, 0)?;
        Ok(Dataset::of(credentials).orders(start.0))
    }
}

impl Syncs<BankAccounts> for SandboxConnector {
    async fn page(
        &self,
        credentials: &SandboxAuthorization,
        cursor: Option<String>,
    ) -> Result<Fetched<BankAccount>, ConnectorError> {
        let start = Offset::from_cursor("sandbox", cursor, 0)?;
        Ok(Dataset::of(credentials).bank_accounts(start.0))
    }
}

impl Syncs<BankTransactions> for SandboxConnector {
    async fn page(
        &self,
        credentials: &SandboxAuthorization,
        cursor: Option<String>,
    ) -> Result<Fetched<BankTransaction>, ConnectorError> {
        let start = Offset::from_cursor("sandbox", cursor, 0)?;
        Ok(Dataset::of(credentials).bank_transactions(start.0))
    }
}
