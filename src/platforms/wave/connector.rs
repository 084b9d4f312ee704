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
const BUSINESS_QUERY: &str = "query WaveBusiness($businessId: ID!) { business(id: $businessId) { id name } }";

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
    let total = connection.page_info.as_ref().and_then(|info| info.total_count);
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
mod tests {
    //! The queries held to Wave's public schema as its API Reference prints
    //! it (`tests/contracts/graphql/wave-public.graphql`), and the answers it
    //! allows read.

    use apollo_compiler::validation::Valid;
    use apollo_compiler::{ExecutableDocument, Schema};
    use serde::Serialize;
    use serde_json::Value;

    use super::*;
    use crate::data::accounts::AccountClassification;
    use crate::data::invoices::InvoiceStatus;
    use crate::platforms::kit::graphql_contract::{self as contract, Sample, dotted, with};
    use crate::platforms::kit::records::Read;
    use crate::platforms::wave::chart::{
        BANK_SUBTYPES, BusinessAccounts, BusinessProducts, BusinessSalesTaxes, WaveBusiness,
    };
    use crate::platforms::wave::ledger::{
        ACCOUNTS_QUERY, COMPANY_QUERY, PRODUCTS_QUERY, SALES_TAXES_QUERY, VENDORS_QUERY,
    };
    use crate::platforms::wave::mapping::{BusinessVendors, WaveContact};

    const BUSINESS_ID: &str = "QnVzaW5lc3M6NzE1MjQ3NjEtZjYxMS00ODk0LWE3NDgtNzg3MmYwODgyNWIw";

    fn schema() -> Valid<Schema> {
        contract::schema("wave-public.graphql")
    }

    fn valid(schema: &Valid<Schema>, name: &str, query: &str) -> Valid<ExecutableDocument> {
        contract::validate(schema, query, name).unwrap_or_else(|errors| panic!("{errors}"))
    }

    /// An answer of `query` with every field, `Money.value` a decimal as
    /// Wave's documentation says (its schema says only `String`).
    fn sample(schema: &Valid<Schema>, name: &str, query: &str) -> Sample {
        let mut sample = Sample::of(schema, &valid(schema, name, query));
        sample.set("value", "String", serde_json::json!("12.50"));
        sample
    }

    /// `data` as Wave's answer, read as the connector reads it.
    fn data<T: DeserializeOwned>(data: &Value) -> Result<T, String> {
        // As text: amounts are read from the number's own text.
        let answer: Answer<T> = serde_json::from_str(&json!({ "data": data }).to_string())
            .map_err(|error| format!("does not read: {error}"))?;
        answer.data("a test", "token").map_err(|error| error.to_string())
    }

    fn page<T: DeserializeOwned, L>(
        answer: &Value,
        pick: impl FnOnce(T) -> Option<Connection<L>>,
    ) -> Result<Connection<L>, String> {
        let business = data::<BusinessData<T>>(answer)?.business;
        read_page(business, BUSINESS_ID, "a page", PageNumber(1), pick)
            .map(|(connection, _, _)| connection)
            .map_err(|error| error.to_string())
    }

    /// The records read, as the API writes them; a record that could not be
    /// read costs itself, in words (`Wave's record ...`), as a failed page
    /// does.
    fn every<R: Serialize>(read: Read<R>) -> Result<Vec<Value>, String> {
        match read.issues.first() {
            None => Ok(read
                .records
                .iter()
                .map(|record| serde_json::to_value(record).expect("a record serializes"))
                .collect()),
            Some(issue) => Err(format!("Wave's record could not be read: {issue:?}")),
        }
    }

    fn invoices(answer: &Value) -> Result<Vec<Value>, String> {
        every(page(answer, |business: BusinessInvoices| business.invoices)?.read(WaveInvoice::into_record))
    }

    fn customers(answer: &Value) -> Result<Vec<Value>, String> {
        let customers = page(answer, |business: BusinessCustomers| business.customers)?;
        every(customers.read(|customer: WaveContact| Ok(customer.into_record())))
    }

    fn accounts(answer: &Value) -> Result<Vec<Value>, String> {
        let accounts = page(answer, |business: BusinessAccounts| business.accounts)?;
        every(accounts.read(|account| Ok(account.into_record())))
    }

    fn vendors(answer: &Value) -> Result<Vec<Value>, String> {
        let vendors = page(answer, |business: BusinessVendors| business.vendors)?;
        every(vendors.read(|vendor| Ok(vendor.into_supplier())))
    }

    fn products(answer: &Value) -> Result<Vec<Value>, String> {
        let products = page(answer, |business: BusinessProducts| business.products)?;
        every(products.read(|product| Ok(product.into_record())))
    }

    fn sales_taxes(answer: &Value) -> Result<Vec<Value>, String> {
        let taxes = page(answer, |business: BusinessSalesTaxes| business.sales_taxes)?;
        every(taxes.read(|tax| Ok(tax.into_record())))
    }

    fn company(answer: &Value) -> Result<Vec<Value>, String> {
        let business = data::<BusinessData<WaveBusiness>>(answer)?
            .business
            .ok_or_else(|| unreachable_business(BUSINESS_ID).to_string())?;
        Ok(vec![serde_json::to_value(business.into_record()).expect("a record serializes")])
    }

    fn businesses(answer: &Value) -> Result<Vec<Value>, String> {
        let businesses = data::<BusinessesData>(answer)?
            .businesses
            .ok_or_else(|| without("the businesses", "businesses").to_string())?;
        let found = businesses.nodes("the businesses").map_err(|error| error.to_string())?;
        Ok(found.into_iter().map(|business| json!(business.id)).collect())
    }

    fn business(answer: &Value) -> Result<Vec<Value>, String> {
        let business = data::<BusinessData<Business>>(answer)?.business;
        business
            .map(|business| vec![json!(business.id)])
            .ok_or_else(|| unreachable_business(BUSINESS_ID).to_string())
    }

    /// How the connector reads an answer: the records, as the API writes them.
    type Reader = fn(&Value) -> Result<Vec<Value>, String>;

    /// Each query, the variables the connector sends it, how the connector
    /// reads its answer, and the places whose `null` fails the page (or the
    /// verification), or costs the record (a null node), in the connector's
    /// own words.
    fn queries() -> Vec<(&'static str, &'static str, Value, Reader, &'static [&'static str])> {
        let page = |page, filters: Value| {
            let mut variables = page_variables(PageNumber(page), PAGE_SIZE);
            variables["businessId"] = json!(BUSINESS_ID);
            if let Value::Object(filters) = filters {
                for (name, value) in filters {
                    variables[name] = value;
                }
            }
            variables
        };
        let since = json!({"modifiedAtAfter": "2026-11-27T08:55:00Z"});
        let archived_since = json!({"isArchived": true, "modifiedAtAfter": "2026-11-27T08:55:00Z"});
        vec![
            (
                "BUSINESS_QUERY",
                BUSINESS_QUERY,
                json!({"businessId": BUSINESS_ID}),
                business as Reader,
                &["business"],
            ),
            (
                "BUSINESSES_QUERY",
                BUSINESSES_QUERY,
                json!({"page": 1, "pageSize": 50}),
                businesses as Reader,
                &["businesses", "businesses.edges.0.node"],
            ),
            (
                "INVOICES_QUERY",
                INVOICES_QUERY,
                page(2, since.clone()),
                invoices as Reader,
                &["business", "business.invoices"],
            ),
            (
                "CUSTOMERS_QUERY",
                CUSTOMERS_QUERY,
                page(1, since.clone()),
                customers as Reader,
                &["business", "business.customers", "business.customers.edges.0.node"],
            ),
            (
                "ACCOUNTS_QUERY",
                ACCOUNTS_QUERY,
                page(1, json!({"isArchived": false})),
                accounts as Reader,
                &["business", "business.accounts", "business.accounts.edges.0.node"],
            ),
            (
                "VENDORS_QUERY",
                VENDORS_QUERY,
                page(1, since),
                vendors as Reader,
                &["business", "business.vendors"],
            ),
            (
                "PRODUCTS_QUERY",
                PRODUCTS_QUERY,
                page(1, archived_since.clone()),
                products as Reader,
                &["business", "business.products"],
            ),
            (
                "SALES_TAXES_QUERY",
                SALES_TAXES_QUERY,
                page(2, archived_since),
                sales_taxes as Reader,
                &["business", "business.salesTaxes", "business.salesTaxes.edges.0.node"],
            ),
            (
                "COMPANY_QUERY",
                COMPANY_QUERY,
                json!({"businessId": BUSINESS_ID}),
                company as Reader,
                &["business"],
            ),
        ]
    }

    #[test]
    fn every_query_is_valid_against_waves_schema_with_the_variables_it_is_sent() {
        let schema = schema();
        for (name, query, variables, _, _) in queries() {
            let document = valid(&schema, name, query);
            contract::coerce_variables(&schema, &document, &variables)
                .unwrap_or_else(|error| panic!("{name} with {variables}: {error}"));
            // A whole list is asked for without `modifiedAtAfter`.
            if let Some(whole) = variables.as_object().filter(|all| all.contains_key("modifiedAtAfter")) {
                let mut whole = whole.clone();
                whole.remove("modifiedAtAfter");
                contract::coerce_variables(&schema, &document, &Value::Object(whole))
                    .unwrap_or_else(|error| panic!("{name}, a whole list: {error}"));
            }
        }
    }

    #[test]
    fn a_misspelt_field_a_missing_sort_or_a_variable_of_the_wrong_type_is_refused() {
        let schema = schema();
        let misspelt = INVOICES_QUERY.replace("invoiceNumber", "invoiceNo");
        let errors = contract::validate(&schema, &misspelt, "misspelt").expect_err("refused");
        assert!(errors.contains("invoiceNo"), "{errors}");
        // What the customers query was before: `sort` is a required argument.
        let unsorted = CUSTOMERS_QUERY.replace(", sort: [CREATED_AT_ASC]", "");
        let errors = contract::validate(&schema, &unsorted, "unsorted").expect_err("refused");
        assert!(errors.contains("sort"), "{errors}");
        let unsorted = PRODUCTS_QUERY.replace(", sort: [CREATED_AT_ASC]", "");
        let errors = contract::validate(&schema, &unsorted, "unsorted").expect_err("refused");
        assert!(errors.contains("sort"), "{errors}");
        // Accounts have no `modifiedAt` to ask by.
        let filtered = ACCOUNTS_QUERY.replace(
            "isArchived: $isArchived)",
            "isArchived: $isArchived, modifiedAtAfter: \"2026-01-01T00:00:00Z\")",
        );
        let errors = contract::validate(&schema, &filtered, "filtered").expect_err("refused");
        assert!(errors.contains("modifiedAtAfter"), "{errors}");
        let document = valid(&schema, "BUSINESSES_QUERY", BUSINESSES_QUERY);
        let sent = json!({"page": "1", "pageSize": 50});
        assert!(contract::coerce_variables(&schema, &document, &sent).is_err());
        let document = valid(&schema, "ACCOUNTS_QUERY", ACCOUNTS_QUERY);
        let unhalved = json!({"businessId": BUSINESS_ID, "page": 1, "pageSize": 50});
        assert!(contract::coerce_variables(&schema, &document, &unhalved).is_err());
    }

    #[test]
    fn every_field_wave_may_leave_null_reads_or_fails_the_page_in_words() {
        let schema = schema();
        for (name, query, _, read, failing) in queries() {
            let sample = sample(&schema, name, query);
            read(&sample.data).unwrap_or_else(|error| panic!("{name}, every field: {error}"));
            let mut least = sample.data.clone();
            let mut deepest_first = sample.nullable.clone();
            deepest_first.sort_by_key(|place| std::cmp::Reverse(place.len()));
            for place in &deepest_first {
                let at = dotted(place);
                let answer = with(&sample.data, place, Value::Null);
                if failing.contains(&at.as_str()) {
                    let error = read(&answer).err().unwrap_or_else(|| panic!("{name}, {at} null"));
                    assert!(error.starts_with("Wave"), "{name}, {at} null: {error}");
                } else {
                    read(&answer).unwrap_or_else(|error| panic!("{name}, {at} null: {error}"));
                    least = with(&least, place, Value::Null);
                }
            }
            read(&least).unwrap_or_else(|error| panic!("{name}, every nullable field null: {error}"));
            let nullable: Vec<String> = sample.nullable.iter().map(|p| dotted(p)).collect();
            for place in failing {
                assert!(nullable.contains(&place.to_string()), "{name}: {place} in {nullable:?}");
            }
        }
    }

    /// The one record `read` gives for `answer`.
    fn one(read: Reader, answer: &Value) -> Value {
        read(answer).expect("reads").remove(0)
    }

    #[test]
    fn every_enum_value_of_waves_schema_the_connector_reads_maps_and_a_new_word_does_not_fail() {
        let schema = schema();
        for (name, query, _, read, _) in queries() {
            let sample = sample(&schema, name, query);
            for (at, values) in &sample.enums {
                let field = dotted(at);
                let new_word = with(&sample.data, at, json!("A_WORD_WAVE_ADDS_LATER"));
                let each = |value: &str| one(read, &with(&sample.data, at, json!(value)));
                match field.as_str() {
                    "business.invoices.edges.0.node.status" => {
                        for value in values {
                            let status: InvoiceStatus =
                                serde_json::from_value(each(value)["status"].clone()).expect("a status");
                            assert_ne!(status, InvoiceStatus::Unknown, "{value}");
                        }
                        assert_eq!(one(read, &new_word)["status"], "Unknown");
                    }
                    // Every account type is a classification.
                    "business.accounts.edges.0.node.type.value" => {
                        for value in values {
                            let classification: AccountClassification =
                                serde_json::from_value(each(value)["classification"].clone())
                                    .expect("a classification");
                            assert_ne!(classification, AccountClassification::Unknown, "{value}");
                        }
                        assert_eq!(one(read, &new_word)["classification"], "Unknown");
                    }
                    // A subtype is the account's type as Wave writes it;
                    // bank and card subtypes are bank accounts.
                    "business.accounts.edges.0.node.subtype.value" => {
                        for value in values.iter().map(String::as_str).chain(["A_WORD_WAVE_ADDS_LATER"]) {
                            let account = each(value);
                            assert_eq!(account["accountType"], value);
                            assert_eq!(account["isBankAccount"], BANK_SUBTYPES.contains(&value), "{value}");
                        }
                    }
                    // Currency codes are words passed on as they are.
                    _ if field.ends_with("currency.code") => {
                        for value in values.iter().map(String::as_str).chain(["XYZ"]) {
                            let record = each(value).to_string();
                            assert!(record.contains(&format!("\"{value}\"")), "{name} {value}: {record}");
                        }
                    }
                    _ => panic!("{name}: {field} is an enum the connector reads: map each of its values"),
                }
            }
        }
    }
}
