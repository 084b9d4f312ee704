//! The sandbox's connector: its synthetic data, a page at a time; any token
//! works, and none is refreshed.

use super::SandboxAuthorization;
use super::dataset::Dataset;
use crate::data::accounts::{Account, Accounts};
use crate::data::bank_accounts::{BankAccount, BankAccounts};
use crate::data::bank_transactions::{BankTransaction, BankTransactions};
use crate::data::bill_payments::{BillPayment, BillPayments};
use crate::data::bills::{Bill, Bills};
use crate::data::company_info::{CompanyInfo, CompanyInfos};
use crate::data::credit_notes::{CreditNote, CreditNotes};
use crate::data::customers::{Customer, Customers};
use crate::data::invoices::{Invoice, Invoices};
use crate::data::items::{Item, Items};
use crate::data::journal_entries::{JournalEntries, JournalEntry};
use crate::data::orders::{Order, Orders};
use crate::data::payments::{Payment, Payments};
use crate::data::suppliers::{Supplier, Suppliers};
use crate::data::tax_rates::{TaxRate, TaxRates};
use crate::platforms::config::PlatformConfig;
use crate::platforms::connector::{
    Configured, Connector, ConnectorError, Endpoint, Fetched, Fetcher, Syncs, syncs,
};
use crate::platforms::kit::http::PlatformHttp;
use crate::platforms::kit::limits::Limits;
use crate::platforms::kit::oauth::ClientAuth;
use crate::platforms::kit::paging::Offset;
use crate::platforms::link::{Grant, LinkSpec, Organization};
use serde_json::{Value, json};

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
    /// The sandbox answers in process: no platform to keep limits for.
    const LIMITS: Limits = Limits::NONE;

    fn syncs() -> Vec<Fetcher<Self>> {
        syncs![
            Self: Invoices, Customers, Orders, BankAccounts, BankTransactions, Accounts, Suppliers, TaxRates, Bills, Payments, BillPayments, CreditNotes, Items, CompanyInfos, JournalEntries
        ]
    }

    /// Consent at the sandbox is a page tributary serves itself; the code
    /// it issues is checked in process.
    fn link_spec(&self) -> Option<LinkSpec> {
        Some(
            LinkSpec::code_flow(
                super::CONSENT_PATH.to_owned(),
                String::new(),
                ClientAuth::RequestBody,
                &["sandbox.read"],
            )
            .with_pkce()
            .in_process(),
        )
    }

    /// One consent covers the sandbox's two synthetic organizations, as a
    /// Xero consent may cover several: the customer chooses one.
    async fn organizations(&self, _grant: &Grant) -> Result<Vec<Organization>, ConnectorError> {
        Ok(super::LINKABLE_ORGANIZATIONS
            .iter()
            .map(|(id, name)| Organization {
                id: (*id).to_owned(),
                name: (*name).to_owned(),
                handle: None,
            })
            .collect())
    }

    fn link_body(&self, grant: &Grant, organization: &Organization) -> Value {
        json!({"organizationId": organization.id, "accessToken": grant.access_token})
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

impl Syncs<Accounts> for SandboxConnector {
    async fn page(
        &self,
        credentials: &SandboxAuthorization,
        cursor: Option<String>,
    ) -> Result<Fetched<Account>, ConnectorError> {
        let start = Offset::from_cursor("sandbox", cursor, 0)?;
        Ok(Dataset::of(credentials).accounts(start.0))
    }
}

impl Syncs<Suppliers> for SandboxConnector {
    async fn page(
        &self,
        credentials: &SandboxAuthorization,
        cursor: Option<String>,
    ) -> Result<Fetched<Supplier>, ConnectorError> {
        let start = Offset::from_cursor("sandbox", cursor, 0)?;
        Ok(Dataset::of(credentials).suppliers(start.0))
    }
}

impl Syncs<TaxRates> for SandboxConnector {
    async fn page(
        &self,
        credentials: &SandboxAuthorization,
        cursor: Option<String>,
    ) -> Result<Fetched<TaxRate>, ConnectorError> {
        let start = Offset::from_cursor("sandbox", cursor, 0)?;
        Ok(Dataset::of(credentials).tax_rates(start.0))
    }
}

impl Syncs<Bills> for SandboxConnector {
    async fn page(
        &self,
        credentials: &SandboxAuthorization,
        cursor: Option<String>,
    ) -> Result<Fetched<Bill>, ConnectorError> {
        let start = Offset::from_cursor("sandbox", cursor, 0)?;
        Ok(Dataset::of(credentials).bills(start.0))
    }
}

impl Syncs<Payments> for SandboxConnector {
    async fn page(
        &self,
        credentials: &SandboxAuthorization,
        cursor: Option<String>,
    ) -> Result<Fetched<Payment>, ConnectorError> {
        let start = Offset::from_cursor("sandbox", cursor, 0)?;
        Ok(Dataset::of(credentials).payments(start.0))
    }
}

impl Syncs<BillPayments> for SandboxConnector {
    async fn page(
        &self,
        credentials: &SandboxAuthorization,
        cursor: Option<String>,
    ) -> Result<Fetched<BillPayment>, ConnectorError> {
        let start = Offset::from_cursor("sandbox", cursor, 0)?;
        Ok(Dataset::of(credentials).bill_payments(start.0))
    }
}

impl Syncs<CreditNotes> for SandboxConnector {
    async fn page(
        &self,
        credentials: &SandboxAuthorization,
        cursor: Option<String>,
    ) -> Result<Fetched<CreditNote>, ConnectorError> {
        let start = Offset::from_cursor("sandbox", cursor, 0)?;
        Ok(Dataset::of(credentials).credit_notes(start.0))
    }
}

impl Syncs<Items> for SandboxConnector {
    async fn page(
        &self,
        credentials: &SandboxAuthorization,
        cursor: Option<String>,
    ) -> Result<Fetched<Item>, ConnectorError> {
        let start = Offset::from_cursor("sandbox", cursor, 0)?;
        Ok(Dataset::of(credentials).items(start.0))
    }
}

/// The one organization the authorization names.
impl Syncs<CompanyInfos> for SandboxConnector {
    async fn page(
        &self,
        credentials: &SandboxAuthorization,
        _cursor: Option<String>,
    ) -> Result<Fetched<CompanyInfo>, ConnectorError> {
        let organization_id = credentials.organization_id.as_str();
        let name = super::LINKABLE_ORGANIZATIONS
            .iter()
            .find(|(id, _)| *id == organization_id)
            .map(|(_, name)| *name);
        let company = Dataset::of(credentials).company_info(organization_id, name);
        Ok(Fetched::all(vec![company], None))
    }
}

impl Syncs<JournalEntries> for SandboxConnector {
    async fn page(
        &self,
        credentials: &SandboxAuthorization,
        cursor: Option<String>,
    ) -> Result<Fetched<JournalEntry>, ConnectorError> {
        let start = Offset::from_cursor("sandbox", cursor, 0)?;
        Ok(Dataset::of(credentials).journal_entries(start.0))
    }
}
