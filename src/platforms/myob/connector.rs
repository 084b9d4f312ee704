//! MYOB's connector: the AccountRight API's sale invoices (`GET
//! /accountright/{companyFileId}/Sale/Invoice`, every invoice type) and
//! customers (`/Contact/Customer`), `$top` records a page and then MYOB's
//! `NextPageLink`, with the `x-myobapi-key` (the app's client id) and
//! `x-myobapi-version: v2` headers. Tokens refresh at `secure.myob.com`
//! (client credentials in the form body); a returned refresh token replaces
//! the stored one. After a first sync, only what changed is asked for
//! (`$filter=LastModified gt datetime'…'`). Sources: `NOTES.md`.

use crate::platforms::kit::limits::Limits;
use std::time::Duration;

use chrono::{DateTime, Utc};

use super::MyobAuthorization;
use super::mapping::{CompanyFile, MyobCard, MyobInvoice, Paged};
use crate::data::accounts::Accounts;
use crate::data::bill_payments::BillPayments;
use crate::data::bills::Bills;
use crate::data::company_info::CompanyInfos;
use crate::data::credit_notes::CreditNotes;
use crate::data::customers::{Customer, Customers};
use crate::data::invoices::{Invoice, Invoices};
use crate::data::items::Items;
use crate::data::journal_entries::JournalEntries;
use crate::data::payments::Payments;
use crate::data::suppliers::Suppliers;
use crate::data::tax_rates::TaxRates;
use crate::platforms::config::PlatformConfig;
use crate::platforms::connector::{
    Changes, Configured, Connector, ConnectorError, Deletions, Endpoint, Fetched, Fetcher, Since,
    Syncs, require_reach, syncs,
};
use crate::platforms::kit::http::{Auth, Call, PlatformHttp};
use crate::platforms::kit::oauth::{ClientAuth, TokenEndpoint};
use crate::platforms::kit::paging::NextLink;
use crate::platforms::kit::records::Keyed;
use crate::platforms::link::{Grant, LinkSpec, Organization};

/// Records asked for per page by default: the most MYOB takes ("a maximum
/// of 1000 results can be set", against its default of 400: NOTES.md).
pub const PAGE_SIZE: u64 = 1000;

const API_BASE: &str = "https://api.myob.com";
const TOKEN_URL: &str = "https://secure.myob.com/oauth2/v1/authorize";
const AUTHORIZE_URL: &str = "https://secure.myob.com/oauth2/account/authorize";

/// The MYOB connector.
#[derive(Debug)]
pub struct MyobConnector {
    api_base: String,
    authorize_url: String,
    token_url: String,
    page_size: u64,
    http: PlatformHttp,
}

impl Configured for MyobConnector {
    const API_BASE: Endpoint = Endpoint::Fixed(API_BASE);
    const TOKEN_URL: Endpoint = Endpoint::Fixed(TOKEN_URL);

    fn new(config: &PlatformConfig, http: PlatformHttp) -> Self {
        Self {
            api_base: config.api_base_or(API_BASE),
            authorize_url: config.authorize_url_or(AUTHORIZE_URL),
            token_url: config.token_url_or(TOKEN_URL),
            page_size: config.page_size_or(PAGE_SIZE, PAGE_SIZE),
            http,
        }
    }
}

impl MyobConnector {
    /// A request to `url` with the token and MYOB's headers.
    fn call<'a>(
        &self,
        credentials: &'a MyobAuthorization,
        what: &'static str,
        url: String,
    ) -> Result<Call<'a>, ConnectorError> {
        let api_key = credentials.api_key.as_deref().ok_or_else(|| {
            ConnectorError::Failed(
                "MYOB requires your app's API key on every call: authorize the connection again with \
                 `apiKey` (your MYOB app's client id)"
                    .to_owned(),
            )
        })?;
        Ok(
            Call::get(Self::PLATFORM, what, url, Auth::bearer(&credentials.tokens))
                .header("x-myobapi-key", api_key)
                .header("x-myobapi-version", "v2"),
        )
    }

    /// The company file's `resource` list: the first page (of what was
    /// modified since `since`, when given), or the page MYOB's
    /// `NextPageLink` named (which carries the first page's filter).
    pub(super) async fn list_page<T: serde::de::DeserializeOwned + Keyed>(
        &self,
        credentials: &MyobAuthorization,
        what: &'static str,
        resource: &str,
        link: &NextLink,
        since: Option<DateTime<Utc>>,
    ) -> Result<Paged<T>, ConnectorError> {
        let call = match link {
            NextLink::First => {
                let call = self
                    .call(
                        credentials,
                        what,
                        format!(
                            "{}/accountright/{}/{resource}",
                            self.api_base, credentials.company_file_id
                        ),
                    )?
                    .query("$top", self.page_size);
                match since {
                    Some(since) => call.query("$filter", modified_since(since)),
                    None => call,
                }
            }
            NextLink::Given(url) => {
                self.check_link(url)?;
                self.call(credentials, what, url.clone())?
            }
        };
        let page: Paged<T> = self
            .http
            .json(&call)
            .await
            .map_err(rate_limit_is_not_an_auth_failure)?;
        if page.next_page_link.is_some() && page.items.is_empty() {
            return Err(ConnectorError::Failed(format!(
                "MYOB answered {what} with no records but a next page; the previous data is kept"
            )));
        }
        Ok(page)
    }

    /// A `NextPageLink` is followed only to MYOB's hosts (or the configured
    /// API base): the access token goes nowhere else.
    fn check_link(&self, link: &str) -> Result<(), ConnectorError> {
        let parsed = url::Url::parse(link).ok();
        let configured = link.starts_with(&format!("{}/", self.api_base));
        let myob = parsed.as_ref().is_some_and(|url| {
            url.scheme() == "https"
                && url
                    .host_str()
                    .is_some_and(|host| host == "api.myob.com" || host.ends_with(".api.myob.com"))
        });
        if configured || myob {
            Ok(())
        } else {
            Err(ConnectorError::Failed(
                "MYOB named a next page outside its API; the previous data is kept".to_owned(),
            ))
        }
    }

    /// The home currency of the connection's company file, when its
    /// country implies one (`GET /accountright/`).
    pub(super) async fn file_currency(
        &self,
        credentials: &MyobAuthorization,
    ) -> Result<Option<&'static str>, ConnectorError> {
        let files = self.company_files(credentials).await?;
        let wanted = credentials.company_file_id.to_string();
        Ok(files
            .iter()
            .find(|file| file.id.eq_ignore_ascii_case(&wanted))
            .and_then(CompanyFile::currency))
    }

    /// One object of the company file (`GET /{cf}/{resource}`, no paging).
    pub(super) async fn single<T: serde::de::DeserializeOwned>(
        &self,
        credentials: &MyobAuthorization,
        what: &'static str,
        resource: &str,
    ) -> Result<T, ConnectorError> {
        let url = format!(
            "{}/accountright/{}/{resource}",
            self.api_base, credentials.company_file_id
        );
        let call = self.call(credentials, what, url)?;
        self.http
            .json(&call)
            .await
            .map_err(rate_limit_is_not_an_auth_failure)
    }

    /// The company files the token reaches (`GET /accountright/`).
    pub(super) async fn company_files(
        &self,
        credentials: &MyobAuthorization,
    ) -> Result<Vec<CompanyFile>, ConnectorError> {
        let url = format!("{}/accountright/", self.api_base);
        let call = self.call(credentials, "the list of company files", url)?;
        self.http
            .json(&call)
            .await
            .map_err(rate_limit_is_not_an_auth_failure)
    }
}

/// MYOB answers a rate limit with 403 and `RateLimitError`: a wait cures
/// it, so it must not fail the data type as a permission it lacks.
fn rate_limit_is_not_an_auth_failure(error: ConnectorError) -> ConnectorError {
    match error {
        ConnectorError::Permissions(message)
            if message.contains("RateLimitError") || message.contains("rate limit") =>
        {
            ConnectorError::Unavailable(format!("{message}; sync again later"))
        }
        other => other,
    }
}

impl Connector for MyobConnector {
    type Credentials = MyobAuthorization;
    const PLATFORM: &'static str = "MYOB";
    /// MYOB: 8 calls a second and 1,000,000 a day per API key (NOTES.md).
    const LIMITS: Limits = Limits::per_second(8).daily(1_000_000);

    fn syncs() -> Vec<Fetcher<Self>> {
        syncs![
            Self: Invoices, Customers, Accounts, Suppliers, TaxRates, Bills, Payments, BillPayments, CreditNotes,
            Items, CompanyInfos, JournalEntries
        ]
    }

    /// `prompt=consent` is what makes MYOB name the company file on the
    /// callback (and lets a user link a second file).
    fn link_spec(&self) -> Option<LinkSpec> {
        Some(
            LinkSpec::code_flow(
                self.authorize_url.clone(),
                self.token_url.clone(),
                ClientAuth::RequestBody,
                &[
                    "sme-company-file",
                    "sme-sales",
                    "sme-contacts-customer",
                    "sme-contacts-supplier",
                    "sme-purchases",
                    "sme-general-ledger",
                    "sme-inventory",
                    "sme-company-settings",
                ],
            )
            .with_parameters(&[("prompt", "consent")]),
        )
    }

    /// The one company file the administrator approved: the callback's
    /// `businessId` (its GUID; "the only place the GUID is returned") and
    /// `businessName`.
    async fn organizations(&self, grant: &Grant) -> Result<Vec<Organization>, ConnectorError> {
        let file = grant
            .given("businessId")
            .and_then(|id| id.parse::<uuid::Uuid>().ok())
            .ok_or_else(|| {
                ConnectorError::Failed(
                    "MYOB named no company file (`businessId`) on the callback: the MYOB app's key \
                     must be one created after 12 March 2025"
                        .to_owned(),
                )
            })?;
        Ok(vec![Organization {
            id: file.to_string(),
            name: grant
                .given("businessName")
                .filter(|name| !name.trim().is_empty())
                .map_or_else(|| format!("MYOB company file {file}"), str::to_owned),
            handle: None,
        }])
    }

    /// The company file's URI is built from its id (the flow returns none),
    /// and the API key is the client id the grant was issued to.
    fn link_body(&self, grant: &Grant, organization: &Organization) -> serde_json::Value {
        let mut body = grant.token_body();
        body.insert("companyFileId".to_owned(), organization.id.clone().into());
        body.insert(
            "companyFileUri".to_owned(),
            format!("{}/accountright/{}", self.api_base, organization.id).into(),
        );
        body.insert("apiKey".to_owned(), grant.client_id.clone().into());
        serde_json::Value::Object(body)
    }

    fn token_endpoint(&self, _credentials: &MyobAuthorization) -> Option<TokenEndpoint> {
        let endpoint = TokenEndpoint::new(
            Self::PLATFORM,
            &self.token_url,
            ClientAuth::RequestBody,
            &self.http,
        );
        Some(endpoint)
    }

    /// `GET /accountright/` lists the company files the token reaches: it
    /// must reach ours.
    async fn verify(&self, credentials: &MyobAuthorization) -> Result<(), ConnectorError> {
        let files = self.company_files(credentials).await?;
        let wanted = credentials.company_file_id.to_string();
        let reached = files.iter().map(|file| file.id.as_str());
        require_reach(&wanted, reached, |count| {
            format!(
                "MYOB accepted the access token, but company file {wanted} is not among the {count} \
                 it reaches"
            )
        })
    }
}

impl MyobConnector {
    /// A page of sale invoices, credit notes left out (modified since
    /// `since`, when given); the first page looks up the file's currency.
    async fn invoices(
        &self,
        credentials: &MyobAuthorization,
        since: Option<DateTime<Utc>>,
        cursor: Option<String>,
    ) -> Result<Fetched<Invoice>, ConnectorError> {
        let walk = self.walk(credentials, cursor).await?;
        let page: Paged<MyobInvoice> = self
            .list_page(
                credentials,
                "a page of invoices",
                "Sale/Invoice",
                &walk.link,
                since,
            )
            .await?;
        let read = page.items.read(|invoice| {
            if invoice.is_credit_note() {
                Ok(None)
            } else {
                invoice.into_record(walk.currency()).map(Some)
            }
        });
        Ok(Fetched::read(read, walk.after(page.next_page_link, 1)))
    }

    /// A page of customers (modified since `since`, when given).
    async fn customers(
        &self,
        credentials: &MyobAuthorization,
        since: Option<DateTime<Utc>>,
        cursor: Option<String>,
    ) -> Result<Fetched<Customer>, ConnectorError> {
        let link = NextLink::from_cursor(cursor);
        let page: Paged<MyobCard> = self
            .list_page(
                credentials,
                "a page of customers",
                "Contact/Customer",
                &link,
                since,
            )
            .await?;
        let read = page.items.read(|customer| Ok(Some(customer.into_record())));
        Ok(Fetched::read(read, NextLink::next(page.next_page_link)))
    }
}

/// The OData v3 condition `LastModified gt datetime'…'`: the `datetime`
/// literal carries no offset (`YYYY-MM-DDTHH:mm:ss`), and the time is
/// written as UTC's wall clock. Whether MYOB reads it as UTC or as the
/// company file's local time is not confirmed (`NOTES.md`); [`CHANGES`]'s
/// overlap covers either.
pub fn modified_since(since: DateTime<Utc>) -> String {
    format!(
        "LastModified gt datetime'{}'",
        since.format("%Y-%m-%dT%H:%M:%S")
    )
}

/// What MYOB's changes say: nothing of deletions (a deleted invoice or
/// customer just stops being listed: `NOTES.md` §7), so a daily full fetch
/// reconciles. The overlap is fourteen hours, not five minutes, as
/// `NOTES.md` advises while the timezone of `LastModified` is not
/// confirmed: a UTC wall clock read as the file's local time in Australia
/// or New Zealand already asks from earlier than meant, and fourteen hours
/// also cover a reading on any clock behind UTC by as much.
pub(super) const CHANGES: Option<Changes> = Some(Changes {
    overlap: Duration::from_secs(14 * 60 * 60),
    deletions: Deletions::OnlyByFullFetch,
});

impl Syncs<Invoices> for MyobConnector {
    const CHANGES: Option<Changes> = CHANGES;

    async fn page(
        &self,
        credentials: &MyobAuthorization,
        cursor: Option<String>,
    ) -> Result<Fetched<Invoice>, ConnectorError> {
        self.invoices(credentials, None, cursor).await
    }

    async fn changed_page(
        &self,
        credentials: &MyobAuthorization,
        since: Since,
        cursor: Option<String>,
    ) -> Result<Fetched<Invoice>, ConnectorError> {
        self.invoices(credentials, Some(since.time), cursor).await
    }
}

impl Syncs<Customers> for MyobConnector {
    const CHANGES: Option<Changes> = CHANGES;

    async fn page(
        &self,
        credentials: &MyobAuthorization,
        cursor: Option<String>,
    ) -> Result<Fetched<Customer>, ConnectorError> {
        self.customers(credentials, None, cursor).await
    }

    async fn changed_page(
        &self,
        credentials: &MyobAuthorization,
        since: Since,
        cursor: Option<String>,
    ) -> Result<Fetched<Customer>, ConnectorError> {
        self.customers(credentials, Some(since.time), cursor).await
    }
}
