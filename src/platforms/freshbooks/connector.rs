//! FreshBooks' connector: the accounting API's invoices with their lines
//! (`GET /accounting/account/{accountId}/invoices/invoices?include[]=lines`)
//! and clients (`…/users/clients`), `page`/`per_page` paged until the
//! answer's `pages` (the ledger's lists, read the same way: [`super::ledger`]);
//! tokens refresh at `/auth/oauth/token` with the client
//! credentials in the form body, and every refresh rotates the refresh token
//! (single use). Sources: `NOTES.md`.

use crate::platforms::kit::limits::Limits;
use chrono::NaiveDate;
use serde::de::DeserializeOwned;

use super::FreshBooksAuthorization;
use super::chart::ChartReport;
use super::mapping::{ClientsPage, IdentityAnswer, InvoicesPage, ListAnswer, check_errors};
use crate::data::accounts::Accounts;
use crate::data::bill_payments::BillPayments;
use crate::data::bills::Bills;
use crate::data::company_info::CompanyInfos;
use crate::data::credit_notes::CreditNotes;
use crate::data::customers::{Customer, Customers};
use crate::data::invoices::{Invoice, Invoices};
use crate::data::items::Items;
use crate::data::payments::Payments;
use crate::data::suppliers::Suppliers;
use crate::data::tax_rates::TaxRates;
use crate::platforms::config::PlatformConfig;
use crate::platforms::connector::{
    Configured, Connector, ConnectorError, Endpoint, Fetched, Fetcher, Syncs, require_reach, syncs,
};
use crate::platforms::kit::http::{Auth, Call, PlatformHttp};
use crate::platforms::kit::oauth::{ClientAuth, TokenEndpoint};
use crate::platforms::kit::paging::PageNumber;
use crate::platforms::link::{Grant, LinkSpec, Organization};
use serde_json::Value;

/// The real API.
pub const API_BASE: &str = "https://api.freshbooks.com";
/// The real token endpoint.
pub const TOKEN_URL: &str = "https://api.freshbooks.com/auth/oauth/token";
/// The authorize endpoint.
pub const AUTHORIZE_URL: &str = "https://auth.freshbooks.com/oauth/authorize";
/// Records asked for per page by default (FreshBooks caps `per_page` at 100).
pub const PAGE_SIZE: u64 = 100;

/// The FreshBooks connector.
#[derive(Debug)]
pub struct FreshBooksConnector {
    api_base: String,
    token_url: String,
    authorize_url: String,
    page_size: u64,
    http: PlatformHttp,
}

impl Configured for FreshBooksConnector {
    const API_BASE: Endpoint = Endpoint::Fixed(API_BASE);
    const TOKEN_URL: Endpoint = Endpoint::Fixed(TOKEN_URL);

    fn new(config: &PlatformConfig, http: PlatformHttp) -> Self {
        Self {
            api_base: config.api_base_or(API_BASE),
            token_url: config.token_url_or(TOKEN_URL),
            authorize_url: config.authorize_url_or(AUTHORIZE_URL),
            page_size: config.page_size_or(PAGE_SIZE, 100),
            http,
        }
    }
}

impl FreshBooksConnector {
    /// One page of an accounting list of the connection's account with
    /// what it `includes` (`include[]=…`), only of what was updated from
    /// `updated_min` on (`search[updated_min]`, a day) when given; its
    /// `result` (FreshBooks' errors fail it).
    pub(super) async fn list<T: DeserializeOwned>(
        &self,
        credentials: &FreshBooksAuthorization,
        (path, what): (&str, &'static str),
        (page, updated_min): (PageNumber, Option<NaiveDate>),
        includes: &[&str],
    ) -> Result<T, ConnectorError> {
        let url = format!(
            "{}/accounting/account/{}/{path}",
            self.api_base, credentials.account_id
        );
        let mut call = Call::get(Self::PLATFORM, what, url, Auth::bearer(&credentials.tokens))
            .query("page", page.0)
            .query("per_page", self.page_size);
        for include in includes {
            call = call.query("include[]", include);
        }
        if let Some(day) = updated_min {
            call = call.query("search[updated_min]", day.format("%Y-%m-%d"));
        }
        result_of(self.http.json(&call).await?, what)
    }
}

/// The `result` of an answer in the accounting envelope (`{"response":
/// {"result": …}}`); FreshBooks' errors there fail it, and so does an
/// answer without a result.
pub(super) fn result_of<T>(answer: ListAnswer<T>, what: &str) -> Result<T, ConnectorError> {
    check_errors(&answer.response.errors)?;
    answer.response.result.ok_or_else(|| {
        ConnectorError::Failed(format!(
            "FreshBooks answered {what} without a result; the previous data is kept"
        ))
    })
}

impl FreshBooksConnector {
    /// The token's user and the businesses it belongs to (`GET
    /// /auth/api/v1/users/me`).
    pub(super) async fn identity(
        &self,
        credentials: &FreshBooksAuthorization,
    ) -> Result<IdentityAnswer, ConnectorError> {
        let url = format!("{}/auth/api/v1/users/me", self.api_base);
        let call = Call::get(
            Self::PLATFORM,
            "the user's identity",
            url,
            Auth::bearer(&credentials.tokens),
        );
        self.http.json(&call).await
    }

    /// The chart of accounts report of the business `uuid` (`GET
    /// /accounting/businesses/{uuid}/reports/chart_of_accounts`), with the
    /// `use_ledger_entries=true` FreshBooks requires; its `result`, in the
    /// accounting envelope.
    pub(super) async fn chart(
        &self,
        credentials: &FreshBooksAuthorization,
        uuid: &str,
    ) -> Result<ChartReport, ConnectorError> {
        const WHAT: &str = "the chart of accounts report";
        let url = format!(
            "{}/accounting/businesses/{uuid}/reports/chart_of_accounts",
            self.api_base
        );
        let call = Call::get(Self::PLATFORM, WHAT, url, Auth::bearer(&credentials.tokens))
            .query("use_ledger_entries", "true");
        result_of(self.http.json(&call).await?, WHAT)
    }
}

/// Whether pages follow `page`: FreshBooks says how many there are.
pub(super) fn more(page: PageNumber, pages: Option<u64>) -> bool {
    pages.is_some_and(|pages| page.0 < pages)
}

impl Connector for FreshBooksConnector {
    type Credentials = FreshBooksAuthorization;
    const PLATFORM: &'static str = "FreshBooks";
    /// FreshBooks publishes no call numbers (NOTES.md): its 429 is the safety net.
    const LIMITS: Limits = Limits::NONE;

    fn syncs() -> Vec<Fetcher<Self>> {
        syncs![Self: Invoices, Customers, Suppliers, Bills, BillPayments, Payments, CreditNotes, TaxRates, Items, CompanyInfos, Accounts]
    }

    fn token_endpoint(&self, _credentials: &FreshBooksAuthorization) -> Option<TokenEndpoint> {
        let endpoint = TokenEndpoint::new(
            Self::PLATFORM,
            &self.token_url,
            ClientAuth::RequestBody,
            &self.http,
        );
        Some(endpoint)
    }

    /// FreshBooks' code flow (read scopes of the profile, invoices,
    /// clients, the lists of the ledger it syncs, credit notes among them,
    /// and the chart of accounts report, `user:account:read`); the user's businesses are `GET /auth/api/v1/users/me`'s
    /// memberships (not those where the user is only a client): several,
    /// and the customer chooses.
    fn link_spec(&self) -> Option<LinkSpec> {
        Some(LinkSpec::code_flow(
            self.authorize_url.clone(),
            self.token_url.clone(),
            ClientAuth::RequestBody,
            &[
                "user:profile:read",
                "user:invoices:read",
                "user:clients:read",
                "user:bill_vendors:read",
                "user:bills:read",
                "user:bill_payments:read",
                "user:payments:read",
                "user:credit_notes:read",
                "user:taxes:read",
                "user:billable_items:read",
                "user:account:read",
            ],
        ))
    }

    async fn organizations(&self, grant: &Grant) -> Result<Vec<Organization>, ConnectorError> {
        let url = format!("{}/auth/api/v1/users/me", self.api_base);
        let call = Call::get(
            Self::PLATFORM,
            "the user's identity",
            url,
            Auth::Bearer(&grant.access_token),
        );
        let answer: IdentityAnswer = self.http.json(&call).await?;
        Ok(answer
            .response
            .business_memberships
            .into_iter()
            .filter(|membership| membership.role.as_deref() != Some("client"))
            .filter_map(|membership| {
                let business = membership.business?;
                let account_id = business.account_id?;
                Some(Organization {
                    name: business.name.unwrap_or_else(|| account_id.clone()),
                    id: account_id,
                    handle: business.id.map(|id| id.to_string()),
                })
            })
            .collect())
    }

    fn link_body(&self, grant: &Grant, organization: &Organization) -> Value {
        let mut body = grant.token_body();
        body.insert("accountId".to_owned(), organization.id.clone().into());
        if let Some(business_id) = organization
            .handle
            .as_deref()
            .and_then(|id| id.parse::<u64>().ok())
        {
            body.insert("businessId".to_owned(), business_id.into());
        }
        Value::Object(body)
    }

    /// `GET /auth/api/v1/users/me` lists the businesses the token's user
    /// belongs to: one must have our account id.
    async fn verify(&self, credentials: &FreshBooksAuthorization) -> Result<(), ConnectorError> {
        let answer = self.identity(credentials).await?;
        let account_id = &credentials.account_id;
        let reached = answer
            .response
            .business_memberships
            .iter()
            .filter_map(|membership| membership.business.as_ref())
            .filter_map(|business| business.account_id.as_deref());
        require_reach(account_id, reached, |count| {
            format!(
                "FreshBooks accepted the access token, but its user is not a member of account \
                 {account_id} (GET /auth/api/v1/users/me lists {count} other account(s))"
            )
        })
    }
}

impl Syncs<Invoices> for FreshBooksConnector {
    async fn page(
        &self,
        credentials: &FreshBooksAuthorization,
        cursor: Option<String>,
    ) -> Result<Fetched<Invoice>, ConnectorError> {
        let page = PageNumber::from_cursor(Self::PLATFORM, cursor)?;
        let result: InvoicesPage = self
            .list(
                credentials,
                ("invoices/invoices", "a page of invoices"),
                (page, None),
                &["lines"],
            )
            .await?;
        let read = result
            .invoices
            .read(|invoice| invoice.into_record().map(Some));
        Ok(Fetched::read(read, page.next(more(page, result.pages))).of_total(result.total))
    }
}

impl Syncs<Customers> for FreshBooksConnector {
    async fn page(
        &self,
        credentials: &FreshBooksAuthorization,
        cursor: Option<String>,
    ) -> Result<Fetched<Customer>, ConnectorError> {
        let page = PageNumber::from_cursor(Self::PLATFORM, cursor)?;
        let result: ClientsPage = self
            .list(
                credentials,
                ("users/clients", "a page of clients"),
                (page, None),
                &[],
            )
            .await?;
        let read = result.clients.read(|client| Ok(Some(client.into_record())));
        Ok(Fetched::read(read, page.next(more(page, result.pages))).of_total(result.total))
    }
}
