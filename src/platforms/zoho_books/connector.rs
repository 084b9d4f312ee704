//! Zoho Books' connector: invoices and contacts (`GET
//! /books/v3/invoices?organization_id=…&page=&per_page=`, paged by
//! `page_context.has_more_page`), with the `Zoho-oauthtoken` scheme. The API
//! lives on the organisation's data centre: the `api_domain` of the last
//! token answer when there is one, else the data centre's; tokens refresh at
//! that centre's accounts server (client credentials in the form body) and
//! are not rotated. Sources: `NOTES.md`.

use super::ZohoBooksAuthorization;
use super::mapping::{ContactsPage, InvoicesPage, OrganizationsAnswer, check_code};
use crate::data::customers::{Customer, Customers};
use crate::data::invoices::{Invoice, Invoices};
use crate::platforms::config::PlatformConfig;
use crate::platforms::connector::{
    Configured, Connector, ConnectorError, Endpoint, Fetched, Fetcher, Syncs, require_reach, syncs,
};
use crate::platforms::kit::http::{Auth, Call, PlatformHttp};
use crate::platforms::kit::oauth::{ClientAuth, TokenEndpoint};
use crate::platforms::kit::paging::PageNumber;

/// Records asked for per page by default (the API's maximum is 200).
pub const PAGE_SIZE: u64 = 200;

/// The Zoho Books connector.
#[derive(Debug)]
pub struct ZohoBooksConnector {
    api_base: Option<String>,
    token_url: Option<String>,
    page_size: u64,
    http: PlatformHttp,
}

impl Configured for ZohoBooksConnector {
    const API_BASE: Endpoint = Endpoint::PerConnection(
        "the connection's data centre: https://www.zohoapis.<dc>; an api_domain in Zoho's token answer wins",
    );
    const TOKEN_URL: Endpoint =
        Endpoint::PerConnection("the connection's data centre: https://accounts.zoho.<dc>/oauth/v2/token");

    fn new(config: &PlatformConfig, http: PlatformHttp) -> Self {
        Self {
            api_base: config.api_base(),
            token_url: config.token_url.clone(),
            page_size: config.page_size_or(PAGE_SIZE, 200),
            http,
        }
    }
}

impl ZohoBooksConnector {
    /// `path` of the Books API: on the `api_domain` Zoho gave, else the
    /// configured base, else the data centre's domain.
    fn books_url(&self, credentials: &ZohoBooksAuthorization, path: &str) -> String {
        let base = credentials
            .api_domain
            .clone()
            .or_else(|| self.api_base.clone())
            .unwrap_or_else(|| credentials.data_center.hosts().0.to_owned());
        format!("{base}/books/v3/{path}")
    }

    fn list<'a>(
        &self,
        credentials: &'a ZohoBooksAuthorization,
        path: &str,
        what: &'static str,
        page: PageNumber,
    ) -> Call<'a> {
        Call::get(
            Self::PLATFORM,
            what,
            self.books_url(credentials, path),
            auth(credentials),
        )
        .query("organization_id", &credentials.organization_id)
        .query("page", page.0)
        .query("per_page", self.page_size)
    }
}

fn auth(credentials: &ZohoBooksAuthorization) -> Auth<'_> {
    Auth::Scheme("Zoho-oauthtoken", credentials.tokens.access_token.expose())
}

impl Connector for ZohoBooksConnector {
    type Credentials = ZohoBooksAuthorization;
    const PLATFORM: &'static str = "Zoho Books";
    const LINK_UNAVAILABLE: &'static str =
        "Zoho's code must be exchanged at the data centre the callback names (`accounts-server`, `location`), then the organization chosen from that data centre's API; not built yet, so migrate tokens with PUT .../authorization";

    fn syncs() -> Vec<Fetcher<Self>> {
        syncs![Self: Invoices, Customers]
    }

    fn token_endpoint(&self, credentials: &ZohoBooksAuthorization) -> Option<TokenEndpoint> {
        let url = self.token_url.clone().unwrap_or_else(|| {
            format!("{}/oauth/v2/token", credentials.data_center.hosts().1)
        });
        Some(TokenEndpoint::new(Self::PLATFORM, &url, ClientAuth::RequestBody, &self.http))
    }

    /// `GET /organizations` lists the organizations the token reaches: it
    /// must reach ours.
    async fn verify(&self, credentials: &ZohoBooksAuthorization) -> Result<(), ConnectorError> {
        let url = self.books_url(credentials, "organizations");
        let call = Call::get(
            Self::PLATFORM,
            "a list of organizations",
            url,
            auth(credentials),
        );
        let body: OrganizationsAnswer = self.http.json(&call).await?;
        check_code(body.code, body.message)?;
        let organization_id = &credentials.organization_id;
        let reached = body.organizations.iter().map(|organization| organization.organization_id.as_str());
        require_reach(organization_id, reached, |count| {
            format!(
                "Zoho Books accepted the access token, but organization {organization_id} is not among \
                 the {count} it gives access to"
            )
        })
    }
}

impl Syncs<Invoices> for ZohoBooksConnector {
    async fn page(
        &self,
        credentials: &ZohoBooksAuthorization,
        cursor: Option<String>,
    ) -> Result<Fetched<Invoice>, ConnectorError> {
        let page = PageNumber::from_cursor(Self::PLATFORM, cursor)?;
        let call = self.list(credentials, "invoices", "a page of invoices", page);
        let body: InvoicesPage = self.http.json(&call).await?;
        check_code(body.code, body.message)?;
        let records = body
            .invoices
            .into_iter()
            .map(|invoice| invoice.into_record())
            .collect::<Result<Vec<_>, _>>()?;
        Ok(Fetched {
            records,
            next: page.next(body.page_context.is_some_and(|page| page.has_more_page)),
            total: None,
        })
    }
}

impl Syncs<Customers> for ZohoBooksConnector {
    async fn page(
        &self,
        credentials: &ZohoBooksAuthorization,
        cursor: Option<String>,
    ) -> Result<Fetched<Customer>, ConnectorError> {
        let page = PageNumber::from_cursor(Self::PLATFORM, cursor)?;
        let call = self
            .list(credentials, "contacts", "a page of contacts", page)
            .query("filter_by", "Status.All");
        let body: ContactsPage = self.http.json(&call).await?;
        check_code(body.code, body.message)?;
        let records = body
            .contacts
            .into_iter()
            .filter(|contact| contact.is_customer())
            .map(|contact| contact.into_record())
            .collect();
        Ok(Fetched {
            records,
            next: page.next(body.page_context.is_some_and(|page| page.has_more_page)),
            total: None,
        })
    }
}
