//! Dynamics 365 Business Central's connector: API v2.0 sales invoices (with
//! `$expand=salesInvoiceLines`) and customers of one company
//! (`GET /v2.0/{tenant}/{environment}/api/v2.0/companies({id})/salesInvoices`), paged by
//! the server (`Prefer: odata.maxpagesize`, then `@odata.nextLink` as given); tokens
//! refresh at the tenant's Microsoft identity platform endpoint (client credentials in
//! the form body, a `scope`) and rotate on every refresh. After a first sync, only
//! what changed is asked for: `$filter=lastModifiedDateTime gt <time>` on the first
//! page (the next links carry it). Sources: `NOTES.md`.

use crate::platforms::kit::limits::Limits;
use chrono::{DateTime, Utc};
use std::time::Duration;

use super::BusinessCentralAuthorization;
use super::mapping::{BcCompany, BcCustomer, BcEnvironment, BcInvoice, Collection, RecordPage};
use crate::data::accounts::Accounts;
use crate::data::bills::Bills;
use crate::data::company_info::CompanyInfos;
use crate::data::credit_notes::CreditNotes;
use crate::data::customers::{Customer, Customers};
use crate::data::invoices::{Invoice, Invoices};
use crate::data::items::Items;
use crate::data::journal_entries::JournalEntries;
use crate::data::suppliers::Suppliers;
use crate::platforms::config::PlatformConfig;
use crate::platforms::connector::{
    Changes, Configured, Connector, ConnectorError, Deletions, Endpoint, Fetched, Fetcher, Since,
    Syncs, require_reach, syncs,
};
use crate::platforms::kit::http::{Auth, Call, PlatformHttp};
use crate::platforms::kit::oauth::{ClientAuth, TokenEndpoint};
use crate::platforms::kit::paging::NextLink;
use crate::platforms::link::{Grant, LinkSpec, Organization};

/// The real API host, up to the version segment the environment follows.
pub const API_BASE: &str = "https://api.businesscentral.dynamics.com/v2.0";
/// The Microsoft identity platform's token endpoint host.
const LOGIN_HOST: &str = "https://login.microsoftonline.com";
/// What a refresh asks for: the Business Central API with the app's consented
/// permissions, and a new refresh token.
pub const SCOPE: &str = "https://api.businesscentral.dynamics.com/.default offline_access";
/// What the link flow asks for: the Business Central API (it has no
/// read-only delegated permission: the user's own permission sets bound
/// the token), a refresh token, and an ID token naming the tenant.
const LINK_SCOPES: &[&str] = &[
    "https://api.businesscentral.dynamics.com/Financials.ReadWrite.All",
    "offline_access",
    "openid",
];
/// Where a multi-tenant app's users sign in, and the code is exchanged,
/// before the tenant is known.
const AUTHORIZE_URL: &str = "https://login.microsoftonline.com/organizations/oauth2/v2.0/authorize";
const CODE_TOKEN_URL: &str = "https://login.microsoftonline.com/organizations/oauth2/v2.0/token";
/// Records asked for per page by default (`Prefer: odata.maxpagesize`).
pub const PAGE_SIZE: u64 = 1000;

/// The Business Central connector.
#[derive(Debug)]
pub struct BusinessCentralConnector {
    api_base: String,
    authorize_url: String,
    token_url: Option<String>,
    page_size: u64,
    pub(super) http: PlatformHttp,
}

impl Configured for BusinessCentralConnector {
    const API_BASE: Endpoint = Endpoint::Fixed(API_BASE);
    const TOKEN_URL: Endpoint = Endpoint::PerConnection(
        "the connection's tenant: https://login.microsoftonline.com/<tenantId>/oauth2/v2.0/token",
    );

    fn new(config: &PlatformConfig, http: PlatformHttp) -> Self {
        Self {
            api_base: config.api_base_or(API_BASE),
            authorize_url: config.authorize_url_or(AUTHORIZE_URL),
            token_url: config.token_url.clone(),
            page_size: config.page_size_or(PAGE_SIZE, 20_000),
            http,
        }
    }
}

impl BusinessCentralConnector {
    /// The company's API root:
    /// `{base}/{tenant}/{environment}/api/v2.0/companies({companyId})`.
    fn company_url(&self, credentials: &BusinessCentralAuthorization) -> String {
        format!(
            "{}/{}/{}/api/v2.0/companies({})",
            self.api_base,
            segment(&credentials.tenant_id),
            segment(&credentials.environment_name),
            credentials.company_id
        )
    }

    /// One page of a company's collection `path`: the first from our own
    /// request (of the entities modified since `since`, when given), the next
    /// ones from the `@odata.nextLink` Business Central gave, which must stay
    /// on the API host (the access token goes with it) and carries the filter.
    pub(super) fn list<'a>(
        &self,
        credentials: &'a BusinessCentralAuthorization,
        path: &str,
        expand: Option<&str>,
        what: &'static str,
        page: NextLink,
        since: Option<DateTime<Utc>>,
    ) -> Result<Call<'a>, ConnectorError> {
        let auth = Auth::bearer(&credentials.tokens);
        let call = match page {
            NextLink::First => {
                let url = format!("{}/{path}", self.company_url(credentials));
                let mut call = Call::get(Self::PLATFORM, what, url, auth);
                if let Some(since) = since {
                    call = call.query("$filter", modified_since(since));
                }
                match expand {
                    Some(expand) => call.query("$expand", expand),
                    None => call,
                }
            }
            NextLink::Given(url) => {
                if !url.starts_with(&format!("{}/", self.api_base)) {
                    return Err(ConnectorError::Failed(format!(
                        "Business Central gave a next page outside {}; tributary does not send \
                         the token there",
                        self.api_base
                    )));
                }
                Call::get(Self::PLATFORM, what, url, auth)
            }
        };
        Ok(call.header("Prefer", format!("odata.maxpagesize={}", self.page_size)))
    }
}

impl BusinessCentralConnector {
    /// A page of sales invoices with their lines (modified since `since`, when given).
    async fn invoices(
        &self,
        credentials: &BusinessCentralAuthorization,
        since: Option<DateTime<Utc>>,
        cursor: Option<String>,
    ) -> Result<Fetched<Invoice>, ConnectorError> {
        let page = NextLink::from_cursor(cursor);
        let call = self.list(
            credentials,
            "salesInvoices",
            Some("salesInvoiceLines"),
            "a page of sales invoices",
            page,
            since,
        )?;
        let body: RecordPage<BcInvoice> = self.http.json(&call).await?;
        let read = body.value.read(|invoice| invoice.into_record().map(Some));
        Ok(Fetched::read(read, NextLink::next(body.next_link)))
    }

    /// A page of customers (modified since `since`, when given).
    async fn customers(
        &self,
        credentials: &BusinessCentralAuthorization,
        since: Option<DateTime<Utc>>,
        cursor: Option<String>,
    ) -> Result<Fetched<Customer>, ConnectorError> {
        let page = NextLink::from_cursor(cursor);
        let call = self.list(
            credentials,
            "customers",
            None,
            "a page of customers",
            page,
            since,
        )?;
        let body: RecordPage<BcCustomer> = self.http.json(&call).await?;
        let read = body.value.read(|customer| Ok(Some(customer.into_record())));
        Ok(Fetched::read(read, NextLink::next(body.next_link)))
    }
}

/// The OData filter of what was modified after `since`: `lastModifiedDateTime`
/// (read-only on both entities) against an unquoted OData v4
/// `DateTimeOffset` literal in UTC, to the second.
pub fn modified_since(since: DateTime<Utc>) -> String {
    format!(
        "lastModifiedDateTime gt {}",
        since.format("%Y-%m-%dT%H:%M:%SZ")
    )
}

/// What Business Central's filtered lists say of deletions: nothing (a
/// deleted unposted invoice or a deleted customer just stops being listed;
/// only delta links report deletions, and they are not used: `NOTES.md`), so
/// a daily full fetch reconciles.
pub(super) const CHANGES: Option<Changes> = Some(Changes::with(Deletions::OnlyByFullFetch));

impl BusinessCentralConnector {
    /// The environments a linked token's user can open, then each one's
    /// companies.
    async fn companies_of(
        &self,
        tenant: &str,
        access_token: &str,
    ) -> Result<Vec<Organization>, ConnectorError> {
        let root = self
            .api_base
            .strip_suffix("/v2.0")
            .unwrap_or(&self.api_base);
        let call = Call::get(
            Self::PLATFORM,
            "the environments",
            format!("{root}/environments/v1.2"),
            Auth::Bearer(access_token),
        );
        let environments: Collection<BcEnvironment> = self.http.json(&call).await?;
        let mut found = Vec::new();
        for environment in environments.value {
            let url = format!(
                "{}/{}/{}/api/v2.0/companies",
                self.api_base,
                segment(tenant),
                segment(&environment.name)
            );
            let call = Call::get(
                Self::PLATFORM,
                "the companies",
                url,
                Auth::Bearer(access_token),
            );
            let companies: Collection<BcCompany> = self.http.json(&call).await?;
            found.extend(companies.value.into_iter().map(|company| {
                let name = company
                    .display_name
                    .filter(|name| !name.is_empty())
                    .or(company.name)
                    .unwrap_or_else(|| company.id.clone());
                Organization {
                    name: format!("{name} ({})", environment.name),
                    id: company.id,
                    handle: Some(environment.name.clone()),
                }
            }));
        }
        Ok(found)
    }
}

/// The tenant of a linked grant: the `tid` claim of its ID token.
fn tenant_of(grant: &Grant) -> Result<&str, ConnectorError> {
    grant
        .id_token_claim("tid")
        .filter(|tenant| !tenant.is_empty())
        .ok_or_else(|| {
            ConnectorError::Failed(
                "the Microsoft identity platform's answer named no tenant (no `tid` in its ID token)"
                    .to_owned(),
            )
        })
}

/// A tenant or environment as one path segment: anything but letters, digits
/// and `-._~` is percent-encoded, so no value can change the path.
fn segment(text: &str) -> String {
    text.bytes()
        .map(|byte| match byte {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'.' | b'_' | b'~' => {
                char::from(byte).to_string()
            }
            other => format!("%{other:02X}"),
        })
        .collect()
}

impl Connector for BusinessCentralConnector {
    type Credentials = BusinessCentralAuthorization;
    const PLATFORM: &'static str = "Business Central";
    /// Business Central: 6,000 OData calls per 5 minutes and 5 at once per user (NOTES.md).
    const LIMITS: Limits = Limits::per(6_000, Duration::from_secs(5 * 60)).concurrent(5);

    fn syncs() -> Vec<Fetcher<Self>> {
        syncs![Self: Invoices, Customers, Accounts, Suppliers, Bills, CreditNotes, Items, CompanyInfos, JournalEntries]
    }

    /// The Microsoft identity platform's code flow, with PKCE ("recommended
    /// for all application types") and the code in the callback's query.
    fn link_spec(&self) -> Option<LinkSpec> {
        Some(
            LinkSpec::code_flow(
                self.authorize_url.clone(),
                self.token_url
                    .clone()
                    .unwrap_or_else(|| CODE_TOKEN_URL.to_owned()),
                ClientAuth::RequestBody,
                LINK_SCOPES,
            )
            .with_pkce()
            .with_parameters(&[("response_mode", "query")]),
        )
    }

    /// The tenant is the ID token's `tid`; the companies are those of every
    /// environment the user can open (`GET /environments/v1.2`, then
    /// `GET .../api/v2.0/companies` of each).
    async fn organizations(&self, grant: &Grant) -> Result<Vec<Organization>, ConnectorError> {
        let tenant = tenant_of(grant)?;
        self.companies_of(tenant, &grant.access_token).await
    }

    fn link_body(&self, grant: &Grant, organization: &Organization) -> serde_json::Value {
        let mut body = grant.token_body();
        body.insert(
            "tenantId".to_owned(),
            tenant_of(grant).unwrap_or_default().into(),
        );
        body.insert(
            "environmentName".to_owned(),
            organization.handle.clone().unwrap_or_default().into(),
        );
        body.insert("companyId".to_owned(), organization.id.clone().into());
        serde_json::Value::Object(body)
    }

    fn token_endpoint(&self, credentials: &BusinessCentralAuthorization) -> Option<TokenEndpoint> {
        let url = self.token_url.clone().unwrap_or_else(|| {
            format!(
                "{LOGIN_HOST}/{}/oauth2/v2.0/token",
                segment(&credentials.tenant_id)
            )
        });
        let endpoint =
            TokenEndpoint::new(Self::PLATFORM, &url, ClientAuth::RequestBody, &self.http);
        Some(endpoint.with_scope(SCOPE))
    }

    /// `GET .../companies({id})` answers only when the token reaches the
    /// tenant, the environment and the company.
    async fn verify(
        &self,
        credentials: &BusinessCentralAuthorization,
    ) -> Result<(), ConnectorError> {
        let url = self.company_url(credentials);
        let auth = Auth::bearer(&credentials.tokens);
        let call = Call::get(Self::PLATFORM, "the company", url, auth);
        let company: BcCompany = self.http.json(&call).await?;
        let company_id = credentials.company_id.to_string();
        require_reach(&company_id, [company.id.as_str()], |_| {
            format!(
                "Business Central accepted the access token, but answered for company {} \
                 instead of {company_id}",
                company.id
            )
        })
    }
}

impl Syncs<Invoices> for BusinessCentralConnector {
    const CHANGES: Option<Changes> = CHANGES;

    async fn page(
        &self,
        credentials: &BusinessCentralAuthorization,
        cursor: Option<String>,
    ) -> Result<Fetched<Invoice>, ConnectorError> {
        self.invoices(credentials, None, cursor).await
    }

    async fn changed_page(
        &self,
        credentials: &BusinessCentralAuthorization,
        since: Since,
        cursor: Option<String>,
    ) -> Result<Fetched<Invoice>, ConnectorError> {
        self.invoices(credentials, Some(since.time), cursor).await
    }
}

impl Syncs<Customers> for BusinessCentralConnector {
    const CHANGES: Option<Changes> = CHANGES;

    async fn page(
        &self,
        credentials: &BusinessCentralAuthorization,
        cursor: Option<String>,
    ) -> Result<Fetched<Customer>, ConnectorError> {
        self.customers(credentials, None, cursor).await
    }

    async fn changed_page(
        &self,
        credentials: &BusinessCentralAuthorization,
        since: Since,
        cursor: Option<String>,
    ) -> Result<Fetched<Customer>, ConnectorError> {
        self.customers(credentials, Some(since.time), cursor).await
    }
}
