//! Wave's connector: GraphQL queries (`POST /graphql/public`) on the
//! connection's business, `business(id:) { invoices(page:, pageSize:) }` and
//! `customers(page:, pageSize:)` (the chart and settings: [`super::ledger`]),
//! page-numbered until `pageInfo.currentPage` reaches `totalPages`; after a
//! first sync, only what changed (`modifiedAtAfter`). Wave answers many failures with 200 and an `errors`
//! array ([`super::mapping::Answer`]). Tokens refresh at Wave's token URL
//! (client credentials in the form body) and rotate. Sources: `NOTES.md`.

use crate::platforms::kit::limits::Limits;
use chrono::{DateTime, Utc};
use serde::de::DeserializeOwned;
use serde_json::json;

use super::WaveAuthorization;
use super::mapping::{
    Answer, Business, BusinessCustomers, BusinessData, BusinessInvoices, BusinessesData,
    Connection, PageInfo, WaveInvoice,
};
use crate::data::accounts::Accounts;
use crate::data::company_info::CompanyInfos;
use crate::data::customers::{Customer, Customers};
use crate::data::invoices::{Invoice, Invoices};
use crate::data::items::Items;
use crate::data::suppliers::Suppliers;
use crate::data::tax_rates::TaxRates;
use crate::platforms::config::PlatformConfig;
use crate::platforms::connector::{
    Changes, Configured, Connector, ConnectorError, Deletions, Endpoint, Fetched, Fetcher, Since,
    Syncs, syncs,
};
use crate::platforms::kit::http::{Auth, Call, PlatformHttp};
use crate::platforms::kit::oauth::{ClientAuth, TokenEndpoint};
use crate::platforms::kit::paging::PageNumber;
use crate::platforms::link::{Grant, LinkSpec, Organization};

/// Records asked for per page by default (Wave documents no maximum).
pub const PAGE_SIZE: u64 = 50;

const API_BASE: &str = "https://gql.waveapps.com";
const AUTHORIZE_URL: &str = "https://api.waveapps.com/oauth2/authorize/";
const TOKEN_URL: &str = "https://api.waveapps.com/oauth2/token/";
/// The public GraphQL endpoint, under the API base.
const GRAPHQL_PATH: &str = "/graphql/public";

/// The business, proving the token reaches it.
const BUSINESS_QUERY: &str =
    "query WaveBusiness($businessId: ID!) { business(id: $businessId) { id name } }";

/// The businesses a linked token reaches, a page at a time.
const BUSINESSES_QUERY: &str = "query WaveBusinesses($page: Int!, $pageSize: Int!) { businesses(page: $page, pageSize: $pageSize) { pageInfo { currentPage totalPages } edges { node { id name } } } }";

/// The most pages of businesses the link flow reads (50 each).
const BUSINESS_PAGES: u64 = 20;

/// A page of the business's invoices (modified after `$modifiedAtAfter`,
/// when given), oldest first so pages stay put while invoices are added or
/// modified, with their lines and the account each posts to.
const INVOICES_QUERY: &str = "query WaveInvoices($businessId: ID!, $page: Int!, $pageSize: Int!, $modifiedAtAfter: DateTime) {
  business(id: $businessId) {
    id
    invoices(page: $page, pageSize: $pageSize, sort: [CREATED_AT_ASC], modifiedAtAfter: $modifiedAtAfter) {
      pageInfo { currentPage totalPages totalCount }
      edges { node {
        id invoiceNumber status invoiceDate dueDate createdAt modifiedAt memo
        customer { id name }
        currency { code }
        subtotal { value } taxTotal { value } total { value } amountPaid { value } amountDue { value }
        items {
          account { id name }
          product { name } description quantity unitPrice
          subtotal { value } total { value }
          taxes { amount { value } }
        }
      } }
    }
  }
}";

/// A page of the business's customers (modified after `$modifiedAtAfter`,
/// when given), oldest first as the invoices are (Wave's schema makes
/// `sort` a required list and documents no default).
const CUSTOMERS_QUERY: &str = "query WaveCustomers($businessId: ID!, $page: Int!, $pageSize: Int!, $modifiedAtAfter: DateTime) {
  business(id: $businessId) {
    id
    customers(page: $page, pageSize: $pageSize, sort: [CREATED_AT_ASC], modifiedAtAfter: $modifiedAtAfter) {
      pageInfo { currentPage totalPages totalCount }
      edges { node {
        id name email phone mobile isArchived createdAt modifiedAt
        currency { code }
      } }
    }
  }
}";

/// The scopes a link asks for: the read scopes of what the connector syncs
/// (`NOTES.md` says which Wave's own pages confirm) and `offline_access`
/// for a refresh token.
const SCOPES: &[&str] = &[
    "business:read",
    "customer:read",
    "invoice:read",
    "account:read",
    "vendor:read",
    "product:read",
    "sales_tax:read",
    "offline_access",
];

/// The Wave connector.
#[derive(Debug)]
pub struct WaveConnector {
    api_base: String,
    authorize_url: String,
    token_url: String,
    page_size: u64,
    http: PlatformHttp,
}

impl Configured for WaveConnector {
    const API_BASE: Endpoint = Endpoint::Fixed(API_BASE);
    const TOKEN_URL: Endpoint = Endpoint::Fixed(TOKEN_URL);

    fn new(config: &PlatformConfig, http: PlatformHttp) -> Self {
        Self {
            api_base: config.api_base_or(API_BASE),
            authorize_url: config.authorize_url_or(AUTHORIZE_URL),
            token_url: config.token_url_or(TOKEN_URL),
            page_size: config.page_size_or(PAGE_SIZE, 200),
            http,
        }
    }
}

impl WaveConnector {
    /// Runs `query` with `variables` (plus the business id) and reads the
    /// business out of its `data`.
    pub(super) async fn business<T: DeserializeOwned>(
        &self,
        credentials: &WaveAuthorization,
        what: &'static str,
        query: &str,
        mut variables: serde_json::Value,
    ) -> Result<Option<T>, ConnectorError> {
        variables["businessId"] = json!(credentials.business_id);
        let url = format!("{}{GRAPHQL_PATH}", self.api_base);
        let body = json!({"query": query, "variables": variables});
        let call = Call::post(
            Self::PLATFORM,
            what,
            url,
            Auth::bearer(&credentials.tokens),
            body,
        );
        let answer: Answer<BusinessData<T>> = self.http.json(&call).await?;
        let data = answer.data(what, credentials.tokens.access_token.expose())?;
        Ok(data.business)
    }

    /// Every business a linked token reaches (`businesses`, page by page).
    async fn businesses(&self, access_token: &str) -> Result<Vec<Business>, ConnectorError> {
        let url = format!("{}{GRAPHQL_PATH}", self.api_base);
        let mut found = Vec::new();
        for page in 1..=BUSINESS_PAGES {
            let body = json!({
                "query": BUSINESSES_QUERY,
                "variables": {"page": page, "pageSize": 50},
            });
            let call = Call::post(
                Self::PLATFORM,
                "the businesses",
                url.clone(),
                Auth::Bearer(access_token),
                body,
            );
            let answer: Answer<BusinessesData> = self.http.json(&call).await?;
            let businesses = answer
                .data("the businesses", access_token)?
                .businesses
                .ok_or_else(|| without("the businesses", "businesses"))?;
            let more = more(PageNumber(page), businesses.page_info.as_ref());
            found.extend(businesses.nodes("the businesses")?);
            if !more {
                break;
            }
        }
        Ok(found)
    }

    /// A page of a list of the business (`pick` takes it out of the
    /// answer): page `page`, with `filters` (more variables) besides the
    /// page's own.
    pub(super) async fn list<T: DeserializeOwned, L>(
        &self,
        credentials: &WaveAuthorization,
        (what, query): (&'static str, &str),
        page: PageNumber,
        filters: serde_json::Value,
        pick: impl FnOnce(T) -> Option<Connection<L>>,
    ) -> Result<Page<L>, ConnectorError> {
        let mut variables = page_variables(page, self.page_size);
        if let serde_json::Value::Object(filters) = filters {
            for (name, value) in filters {
                variables[name] = value;
            }
        }
        let business = self.business(credentials, what, query, variables).await?;
        read_page(business, &credentials.business_id, what, page, pick)
    }
}

/// A page's edges, whether more pages follow, and the total Wave counts.
pub(super) type Page<L> = (Connection<L>, bool, Option<u64>);

/// A page's variables besides the business: the page number and its size.
fn page_variables(page: PageNumber, page_size: u64) -> serde_json::Value {
    json!({"page": page.0, "pageSize": page_size})
}

/// Page `page` of a list of the business (`pick` takes it out): a null
/// business is one the token does not reach; a null list fails the page.
fn read_page<T, L>(
    business: Option<T>,
    business_id: &str,
    what: &str,
    page: PageNumber,
    pick: impl FnOnce(T) -> Option<Connection<L>>,
) -> Result<Page<L>, ConnectorError> {
    let business = business.ok_or_else(|| unreachable_business(business_id))?;
    let connection = pick(business).ok_or_else(|| without(what, "the list"))?;
    let more = more(page, connection.page_info.as_ref());
    let total = connection
        .page_info
        .as_ref()
        .and_then(|info| info.total_count);
    Ok((connection, more, total))
}

/// Wave answered `what` with `missing` null and no error to say why.
fn without(what: &str, missing: &str) -> ConnectorError {
    ConnectorError::Failed(format!(
        "Wave answered {what} without {missing}; the previous data is kept"
    ))
}

/// Whether there are pages after `page`: while `currentPage < totalPages`.
fn more(page: PageNumber, info: Option<&PageInfo>) -> bool {
    let Some(info) = info else {
        return false;
    };
    let current = info.current_page.unwrap_or(page.0);
    info.total_pages.is_some_and(|total| current < total)
}

/// The business is not one the token reaches (`business(id:)` is null).
pub(super) fn unreachable_business(business_id: &str) -> ConnectorError {
    ConnectorError::Auth(format!(
        "Wave accepted the access token, but business {business_id} is not reachable with it \
         (business(id:) answered null)"
    ))
}

impl Connector for WaveConnector {
    type Credentials = WaveAuthorization;
    const PLATFORM: &'static str = "Wave";
    /// Wave: 60 calls a minute per token (a third party's figure; Wave publishes none) (NOTES.md).
    const LIMITS: Limits = Limits::per_minute(60);

    fn syncs() -> Vec<Fetcher<Self>> {
        syncs![Self: Invoices, Customers, Accounts, Suppliers, TaxRates, Items, CompanyInfos]
    }

    fn link_spec(&self) -> Option<LinkSpec> {
        Some(LinkSpec::code_flow(
            self.authorize_url.clone(),
            self.token_url.clone(),
            ClientAuth::RequestBody,
            SCOPES,
        ))
    }

    /// The businesses the token reaches (`businesses`); only the one the
    /// token answer names (`businessId`) when the app's tokens are
    /// restricted to a single business.
    async fn organizations(&self, grant: &Grant) -> Result<Vec<Organization>, ConnectorError> {
        let only = grant.token_field("businessId");
        let businesses = self.businesses(&grant.access_token).await?;
        Ok(businesses
            .into_iter()
            .filter(|business| only.is_none_or(|only| only == business.id))
            .map(|business| Organization {
                name: business.name.unwrap_or_else(|| business.id.clone()),
                id: business.id,
                handle: None,
            })
            .collect())
    }

    fn link_body(&self, grant: &Grant, organization: &Organization) -> serde_json::Value {
        let mut body = grant.token_body();
        body.insert("businessId".to_owned(), organization.id.clone().into());
        serde_json::Value::Object(body)
    }

    fn token_endpoint(&self, _credentials: &WaveAuthorization) -> Option<TokenEndpoint> {
        Some(TokenEndpoint::new(
            Self::PLATFORM,
            &self.token_url,
            ClientAuth::RequestBody,
            &self.http,
        ))
    }

    /// `business(id:) { id }` must answer the connection's business.
    async fn verify(&self, credentials: &WaveAuthorization) -> Result<(), ConnectorError> {
        let business: Option<Business> = self
            .business(credentials, "the business", BUSINESS_QUERY, json!({}))
            .await?;
        match business {
            Some(business) if business.id == credentials.business_id => Ok(()),
            _ => Err(unreachable_business(&credentials.business_id)),
        }
    }
}

/// What Wave's `modifiedAtAfter` says: records changed since, not those
/// deleted (a deleted invoice just stops being listed: `NOTES.md` §7), so
/// the full fetch the engine runs from time to time flags what is gone.
pub(super) const CHANGES: Option<Changes> = Some(Changes::with(Deletions::OnlyByFullFetch));

/// The filter of what changed since `since` (`modifiedAtAfter`, RFC 3339
/// in UTC to the second), when given; no variable for a whole list.
pub(super) fn changed_since(since: Option<DateTime<Utc>>) -> serde_json::Value {
    match since {
        Some(since) => json!({"modifiedAtAfter": since.format("%Y-%m-%dT%H:%M:%SZ").to_string()}),
        None => json!({}),
    }
}

impl WaveConnector {
    /// A page of invoices (modified since `since`, when given).
    async fn invoices(
        &self,
        credentials: &WaveAuthorization,
        since: Option<DateTime<Utc>>,
        cursor: Option<String>,
    ) -> Result<Fetched<Invoice>, ConnectorError> {
        let page = PageNumber::from_cursor(Self::PLATFORM, cursor)?;
        let (invoices, more, total) = self
            .list(
                credentials,
                ("a page of invoices", INVOICES_QUERY),
                page,
                changed_since(since),
                |business: BusinessInvoices| business.invoices,
            )
            .await?;
        let read = invoices.read(WaveInvoice::into_record);
        Ok(Fetched::read(read, page.next(more)).of_total(total))
    }

    /// A page of customers (modified since `since`, when given).
    async fn customers(
        &self,
        credentials: &WaveAuthorization,
        since: Option<DateTime<Utc>>,
        cursor: Option<String>,
    ) -> Result<Fetched<Customer>, ConnectorError> {
        let page = PageNumber::from_cursor(Self::PLATFORM, cursor)?;
        let (customers, more, total) = self
            .list(
                credentials,
                ("a page of customers", CUSTOMERS_QUERY),
                page,
                changed_since(since),
                |business: BusinessCustomers| business.customers,
            )
            .await?;
        let read = customers.read(|customer| Ok(customer.into_record()));
        Ok(Fetched::read(read, page.next(more)).of_total(total))
    }
}

impl Syncs<Invoices> for WaveConnector {
    const CHANGES: Option<Changes> = CHANGES;

    async fn page(
        &self,
        credentials: &WaveAuthorization,
        cursor: Option<String>,
    ) -> Result<Fetched<Invoice>, ConnectorError> {
        self.invoices(credentials, None, cursor).await
    }

    async fn changed_page(
        &self,
        credentials: &WaveAuthorization,
        since: Since,
        cursor: Option<String>,
    ) -> Result<Fetched<Invoice>, ConnectorError> {
        self.invoices(credentials, Some(since.time), cursor).await
    }
}

impl Syncs<Customers> for WaveConnector {
    const CHANGES: Option<Changes> = CHANGES;

    async fn page(
        &self,
        credentials: &WaveAuthorization,
        cursor: Option<String>,
    ) -> Result<Fetched<Customer>, ConnectorError> {
        self.customers(credentials, None, cursor).await
    }

    async fn changed_page(
        &self,
        credentials: &WaveAuthorization,
        since: Since,
        cursor: Option<String>,
    ) -> Result<Fetched<Customer>, ConnectorError> {
        self.customers(credentials, Some(since.time), cursor).await
    }
}

#[cfg(test)]
#[path = "connector_tests.rs"]
mod tests;
