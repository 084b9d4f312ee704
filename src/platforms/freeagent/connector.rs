//! FreeAgent's connector: sales invoices with their items (`GET
//! /v2/invoices?nested_invoice_items=true`) and client contacts (`GET
//! /v2/contacts?view=clients`), `page`/`per_page` paged while the `Link`
//! header names a `rel="next"` page, on the production or sandbox host as the
//! authorization says; tokens refresh at that host's token endpoint (HTTP
//! Basic) and the refresh token each answer carries is kept. After a first
//! sync, only what changed is asked for (`updated_since`). The accounting
//! lists beyond sales are fetched by [`super::ledger`]. Sources:
//! `NOTES.md`.

use crate::platforms::kit::limits::Limits;
use chrono::{DateTime, Utc};
use reqwest::header::HeaderMap;
use std::time::Duration;

use super::FreeAgentAuthorization;
use super::mapping::{CompanyAnswer, ContactsPage, InvoicesPage};
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
use crate::platforms::authorization::Environment;
use crate::platforms::config::PlatformConfig;
use crate::platforms::connector::{
    Changes, Configured, Connector, ConnectorError, Deletions, Endpoint, Fetched, Fetcher, Since,
    Syncs, require_reach, syncs,
};
use crate::platforms::kit::http::{Auth, Call, PlatformHttp};
use crate::platforms::kit::oauth::{ClientAuth, TokenEndpoint};
use crate::platforms::kit::paging::{PageNumber, link_header_next};
use crate::platforms::link::{Grant, LinkSpec, Organization};
use serde_json::Value;

/// The real production API.
pub const API_BASE: &str = "https://api.freeagent.com";
/// The real sandbox API.
pub const SANDBOX_API_BASE: &str = "https://api.sandbox.freeagent.com";
/// The token endpoint's path on either host.
const TOKEN_PATH: &str = "/v2/token_endpoint";
/// The production authorize endpoint (`approve_app`).
const AUTHORIZE_URL: &str = "https://api.freeagent.com/v2/approve_app";
/// Records asked for per page by default (the API's maximum is 100).
pub const PAGE_SIZE: u64 = 100;

/// The FreeAgent connector.
#[derive(Debug)]
pub struct FreeAgentConnector {
    api_base: Option<String>,
    token_url: Option<String>,
    authorize_url: String,
    page_size: u64,
    pub(super) http: PlatformHttp,
}

impl Configured for FreeAgentConnector {
    const API_BASE: Endpoint = Endpoint::PerConnection(
        "the connection's environment: https://api.freeagent.com or https://api.sandbox.freeagent.com",
    );
    const TOKEN_URL: Endpoint = Endpoint::PerConnection(
        "the connection's environment: https://api.freeagent.com/v2/token_endpoint or \
         https://api.sandbox.freeagent.com/v2/token_endpoint",
    );

    fn new(config: &PlatformConfig, http: PlatformHttp) -> Self {
        Self {
            api_base: config.api_base(),
            token_url: config.token_url.clone(),
            authorize_url: config.authorize_url_or(AUTHORIZE_URL),
            page_size: config.page_size_or(PAGE_SIZE, 100),
            http,
        }
    }
}

/// The host of the connection's environment.
fn environment_host(credentials: &FreeAgentAuthorization) -> &'static str {
    match credentials.environment {
        Environment::Production => API_BASE,
        Environment::Sandbox => SANDBOX_API_BASE,
    }
}

impl FreeAgentConnector {
    /// `path` of the v2 API: on the configured base, else the environment's host.
    pub(super) fn url(&self, credentials: &FreeAgentAuthorization, path: &str) -> String {
        let base = self
            .api_base
            .as_deref()
            .unwrap_or_else(|| environment_host(credentials));
        format!("{base}/v2/{path}")
    }

    /// One page of a list; of what was updated since `since`, when given
    /// (`updated_since`).
    pub(super) fn list<'a>(
        &self,
        credentials: &'a FreeAgentAuthorization,
        path: &str,
        what: &'static str,
        page: PageNumber,
        since: Option<DateTime<Utc>>,
    ) -> Call<'a> {
        let call = Call::get(
            Self::PLATFORM,
            what,
            self.url(credentials, path),
            Auth::bearer(&credentials.tokens),
        )
        .query("page", page.0)
        .query("per_page", self.page_size);
        match since {
            Some(since) => call.query("updated_since", updated_since(since)),
            None => call,
        }
    }

    /// A page of invoices with their items (updated since `since`, when given).
    async fn invoices(
        &self,
        credentials: &FreeAgentAuthorization,
        since: Option<DateTime<Utc>>,
        cursor: Option<String>,
    ) -> Result<Fetched<Invoice>, ConnectorError> {
        let page = PageNumber::from_cursor(Self::PLATFORM, cursor)?;
        let call = self
            .list(credentials, "invoices", "a page of invoices", page, since)
            .query("view", "all")
            .query("nested_invoice_items", "true");
        let (body, headers): (InvoicesPage, _) = self.http.json_with_headers(&call).await?;
        let read = body
            .invoices
            .read(|invoice| invoice.into_record().map(Some));
        Ok(Fetched::read(read, next_page(page, &headers)))
    }

    /// A page of client contacts (updated since `since`, when given).
    async fn contacts(
        &self,
        credentials: &FreeAgentAuthorization,
        since: Option<DateTime<Utc>>,
        cursor: Option<String>,
    ) -> Result<Fetched<Customer>, ConnectorError> {
        let page = PageNumber::from_cursor(Self::PLATFORM, cursor)?;
        let call = self
            .list(credentials, "contacts", "a page of contacts", page, since)
            .query("view", "clients");
        let (body, headers): (ContactsPage, _) = self.http.json_with_headers(&call).await?;
        let read = body.contacts.read(|contact| Ok(contact.into_record()));
        Ok(Fetched::read(read, next_page(page, &headers)))
    }
}

/// `updated_since` as FreeAgent's document writes it
/// (`2017-05-22T09:00:00.000Z`: UTC, to the millisecond).
pub fn updated_since(since: DateTime<Utc>) -> String {
    since.format("%Y-%m-%dT%H:%M:%S%.3fZ").to_string()
}

/// What FreeAgent's changes say of deletions: a cancelled, refunded or
/// written-off invoice is updated and comes back, but a deleted invoice or
/// contact just stops being listed (no tombstone, no deleted-since filter:
/// `NOTES.md`), so a daily full fetch reconciles.
pub(super) const CHANGES: Option<Changes> = Some(Changes::with(Deletions::OnlyByFullFetch));

/// The page after `page`, when the `Link` header names a next one: the
/// `page` it asks for, else the following number.
pub(super) fn next_page(page: PageNumber, headers: &HeaderMap) -> Option<String> {
    let next = link_header_next(headers)?;
    let named = url::Url::parse(&next).ok().and_then(|url| {
        url.query_pairs()
            .find(|(name, _)| name == "page")
            .and_then(|(_, value)| value.parse::<u64>().ok())
    });
    match named {
        Some(number) if number > page.0 => Some(number.to_string()),
        _ => page.next(true),
    }
}

impl Connector for FreeAgentConnector {
    type Credentials = FreeAgentAuthorization;
    const PLATFORM: &'static str = "FreeAgent";
    /// FreeAgent: 120 calls a minute and 3,600 an hour per user (NOTES.md): kept as the hour's
    /// rate, which keeps both.
    const LIMITS: Limits = Limits::per(3_600, Duration::from_secs(60 * 60));

    fn syncs() -> Vec<Fetcher<Self>> {
        syncs![
            Self: Invoices, Customers, Accounts, Suppliers, TaxRates, Bills, Payments, BillPayments, CreditNotes,
            Items, CompanyInfos
        ]
    }

    fn token_endpoint(&self, credentials: &FreeAgentAuthorization) -> Option<TokenEndpoint> {
        let url = self
            .token_url
            .clone()
            .unwrap_or_else(|| format!("{}{TOKEN_PATH}", environment_host(credentials)));
        Some(TokenEndpoint::new(
            Self::PLATFORM,
            &url,
            ClientAuth::Basic,
            &self.http,
        ))
    }

    /// FreeAgent's `approve_app` (production; it takes no scopes: access
    /// follows the user's); the company is `GET /v2/company`.
    fn link_spec(&self) -> Option<LinkSpec> {
        Some(LinkSpec::code_flow(
            self.authorize_url.clone(),
            self.token_url
                .clone()
                .unwrap_or_else(|| format!("{API_BASE}{TOKEN_PATH}")),
            ClientAuth::Basic,
            &[],
        ))
    }

    async fn organizations(&self, grant: &Grant) -> Result<Vec<Organization>, ConnectorError> {
        let base = self.api_base.as_deref().unwrap_or(API_BASE);
        let url = format!("{base}/v2/company");
        let call = Call::get(
            Self::PLATFORM,
            "the company",
            url,
            Auth::Bearer(&grant.access_token),
        );
        let answer: CompanyAnswer = self.http.json(&call).await?;
        let Some(subdomain) = answer.company.subdomain else {
            return Err(ConnectorError::Failed(
                "FreeAgent named no company subdomain".to_owned(),
            ));
        };
        Ok(vec![Organization {
            name: answer.company.name.unwrap_or_else(|| subdomain.clone()),
            id: subdomain,
            handle: None,
        }])
    }

    fn link_body(&self, grant: &Grant, organization: &Organization) -> Value {
        let mut body = grant.token_body();
        body.insert("subdomain".to_owned(), organization.id.clone().into());
        Value::Object(body)
    }

    /// `GET /v2/company` names the company the token belongs to: its
    /// subdomain must be ours.
    async fn verify(&self, credentials: &FreeAgentAuthorization) -> Result<(), ConnectorError> {
        let call = Call::get(
            Self::PLATFORM,
            "the company",
            self.url(credentials, "company"),
            Auth::bearer(&credentials.tokens),
        );
        let answer: CompanyAnswer = self.http.json(&call).await?;
        let subdomain = &credentials.subdomain;
        let reached = answer.company.subdomain.as_deref().into_iter();
        require_reach(subdomain, reached, |_| {
            format!(
                "FreeAgent accepted the access token, but it belongs to another company than \
                 {subdomain} (GET /v2/company names a different subdomain)"
            )
        })
    }
}

impl Syncs<Invoices> for FreeAgentConnector {
    const CHANGES: Option<Changes> = CHANGES;

    async fn page(
        &self,
        credentials: &FreeAgentAuthorization,
        cursor: Option<String>,
    ) -> Result<Fetched<Invoice>, ConnectorError> {
        self.invoices(credentials, None, cursor).await
    }

    async fn changed_page(
        &self,
        credentials: &FreeAgentAuthorization,
        since: Since,
        cursor: Option<String>,
    ) -> Result<Fetched<Invoice>, ConnectorError> {
        self.invoices(credentials, Some(since.time), cursor).await
    }
}

impl Syncs<Customers> for FreeAgentConnector {
    const CHANGES: Option<Changes> = CHANGES;

    async fn page(
        &self,
        credentials: &FreeAgentAuthorization,
        cursor: Option<String>,
    ) -> Result<Fetched<Customer>, ConnectorError> {
        self.contacts(credentials, None, cursor).await
    }

    async fn changed_page(
        &self,
        credentials: &FreeAgentAuthorization,
        since: Since,
        cursor: Option<String>,
    ) -> Result<Fetched<Customer>, ConnectorError> {
        self.contacts(credentials, Some(since.time), cursor).await
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use reqwest::header::{HeaderValue, LINK};

    #[test]
    fn the_next_page_is_the_one_the_link_header_names() {
        let mut headers = HeaderMap::new();
        assert_eq!(next_page(PageNumber(1), &headers), None);
        headers.insert(
            LINK,
            HeaderValue::from_static(
                "<https://api.freeagent.com/v2/invoices?page=3&per_page=100>; rel='next'",
            ),
        );
        assert_eq!(next_page(PageNumber(2), &headers).as_deref(), Some("3"));
        headers.insert(
            LINK,
            HeaderValue::from_static(
                "<https://api.freeagent.com/v2/invoices?per_page=100>; rel=\"next\"",
            ),
        );
        assert_eq!(next_page(PageNumber(2), &headers).as_deref(), Some("3"));
    }
}
