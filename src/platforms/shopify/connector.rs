//! Shopify's connector: GraphQL queries (`POST
//! /admin/api/<version>/graphql.json` on the shop's own host, the token in
//! `X-Shopify-Access-Token`) for the shop's `orders` and `customers`, paged
//! by cursor (`first`/`after` while `pageInfo.hasNextPage`). Shopify answers
//! throttling and other failures with 200 and an `errors` array: a
//! throttled query is asked again once the cost bucket has refilled.
//! Expiring offline tokens refresh at the shop's token endpoint (client
//! credentials in the form body) and rotate; legacy offline tokens never
//! expire and are not refreshed. After a first sync, only what changed is
//! asked for: the same queries with the search filter `updated_at:>'<time>'`
//! and sorted by `UPDATED_AT`. Product variants, as items: [`super::catalog`].
//! Sources: `NOTES.md`.

use crate::platforms::kit::limits::Limits;
use chrono::{DateTime, Utc};
use serde::de::DeserializeOwned;
use serde_json::{Value, json};

use super::ShopifyAuthorization;
use super::mapping::{Answer, Connection, CustomersData, OrdersData, Outcome, ShopData};
use crate::data::customers::{Customer, Customers};
use crate::data::items::Items;
use crate::data::orders::{Order, Orders};
use crate::platforms::config::PlatformConfig;
use crate::platforms::connector::{
    Changes, Configured, Connector, ConnectorError, Deletions, Endpoint, Fetched, Fetcher, Since,
    Syncs, require_reach, syncs,
};
use crate::platforms::kit::http::{Auth, Call, PlatformHttp};
use crate::platforms::kit::oauth::{ClientAuth, TokenEndpoint};
use crate::platforms::kit::paging::NextLink;
use crate::platforms::link::{Ask, CallbackCheck, Grant, LinkSpec, Organization, is_shop_domain};

/// Records asked for per page by default: Shopify's maximum.
pub const PAGE_SIZE: u64 = 250;

/// The GraphQL Admin API version asked for (Shopify versions its API by quarter).
pub const API_VERSION: &str = "2026-10";

/// The header the Admin API reads the access token from.
const TOKEN_HEADER: &str = "x-shopify-access-token";

/// Line items asked for per order (one page of the order's lines).
const LINES_PER_ORDER: u64 = 250;

/// The shop, proving the token reaches it.
const SHOP_QUERY: &str = "query TributaryShop { shop { id name myshopifyDomain } }";

/// A page of the shop's orders with their lines; of those a search
/// `$query` finds, in `$sortKey` order, when given (neither is for a full
/// fetch, which keeps Shopify's default order by id).
const ORDERS_QUERY: &str = "query TributaryOrders($first: Int!, $after: String, $lines: Int!, $query: String, $sortKey: OrderSortKeys) {
  orders(first: $first, after: $after, query: $query, sortKey: $sortKey) {
    pageInfo { hasNextPage endCursor }
    nodes {
      id name createdAt updatedAt closedAt cancelledAt currencyCode
      displayFinancialStatus displayFulfillmentStatus
      customer { id displayName }
      totalTaxSet { shopMoney { amount currencyCode } }
      totalDiscountsSet { shopMoney { amount currencyCode } }
      totalPriceSet { shopMoney { amount currencyCode } }
      totalRefundedSet { shopMoney { amount currencyCode } }
      lineItems(first: $lines) {
        nodes {
          id name sku quantity
          originalUnitPriceSet { shopMoney { amount currencyCode } }
          originalTotalSet { shopMoney { amount currencyCode } }
          discountedTotalSet { shopMoney { amount currencyCode } }
          taxLines { priceSet { shopMoney { amount currencyCode } } }
        }
      }
    }
  }
}";

/// A page of the shop's customers; of those a search `$query` finds, in
/// `$sortKey` order, when given (as [`ORDERS_QUERY`]).
const CUSTOMERS_QUERY: &str = "query TributaryCustomers($first: Int!, $after: String, $query: String, $sortKey: CustomerSortKeys) {
  customers(first: $first, after: $after, query: $query, sortKey: $sortKey) {
    pageInfo { hasNextPage endCursor }
    nodes {
      id displayName firstName lastName updatedAt
      defaultEmailAddress { emailAddress }
      defaultPhoneNumber { phoneNumber }
    }
  }
}";

/// The Shopify connector.
#[derive(Debug)]
pub struct ShopifyConnector {
    /// A configured base replaces every shop's host (a test's local server).
    api_base: Option<String>,
    /// A configured token URL replaces every shop's token endpoint.
    token_url: Option<String>,
    /// A configured authorize URL replaces every shop's authorize endpoint.
    authorize_url: Option<String>,
    page_size: u64,
    http: PlatformHttp,
}

impl Configured for ShopifyConnector {
    const API_BASE: Endpoint =
        Endpoint::PerConnection("the connection's shop: https://<shop>.myshopify.com");
    const TOKEN_URL: Endpoint = Endpoint::PerConnection(
        "the connection's shop: https://<shop>.myshopify.com/admin/oauth/access_token",
    );

    fn new(config: &PlatformConfig, http: PlatformHttp) -> Self {
        Self {
            api_base: config.api_base(),
            token_url: config.token_url.clone(),
            authorize_url: config.authorize_url.clone(),
            page_size: config.page_size_or(PAGE_SIZE, PAGE_SIZE),
            http,
        }
    }
}

/// The shop's own host: `https://<shop>.myshopify.com`.
pub fn shop_host(shop_domain: &str) -> String {
    format!("https://{}", shop_domain.to_ascii_lowercase())
}

impl ShopifyConnector {
    /// The shop's GraphQL Admin endpoint (or the configured base's).
    fn graphql_url(&self, credentials: &ShopifyAuthorization) -> String {
        let base = self
            .api_base
            .clone()
            .unwrap_or_else(|| shop_host(&credentials.shop_domain));
        format!("{base}/admin/api/{API_VERSION}/graphql.json")
    }

    /// Runs `query` with `variables` and reads its `data`, asking again
    /// while Shopify throttles it (as long as the retry policy allows).
    async fn query<T: DeserializeOwned>(
        &self,
        credentials: &ShopifyAuthorization,
        what: &'static str,
        query: &str,
        variables: Value,
    ) -> Result<T, ConnectorError> {
        let token = credentials.access_token.expose();
        let body = json!({"query": query, "variables": variables});
        let call = Call::post(
            Self::PLATFORM,
            what,
            self.graphql_url(credentials),
            Auth::Header(TOKEN_HEADER, token),
            body,
        );
        let mut retry = 0;
        loop {
            let answer: Answer<T> = self.http.json(&call).await?;
            match answer.outcome(what, token)? {
                Outcome::Data(data) => return Ok(data),
                Outcome::Throttled(wait, message) => {
                    let policy = &self.http.retry;
                    if retry >= policy.retries || wait > policy.max_retry_after {
                        return Err(ConnectorError::Unavailable(format!(
                            "{message} (still throttled after {} attempts)",
                            retry + 1
                        )));
                    }
                    tracing::info!(
                        platform = Self::PLATFORM,
                        retry = retry + 1,
                        wait_ms = wait.as_millis() as u64,
                        "Shopify throttled a query; asking again"
                    );
                    tokio::time::sleep(wait).await;
                    retry += 1;
                }
            }
        }
    }

    /// A page of a connection: its nodes and the next page's cursor.
    pub(super) async fn list<T: DeserializeOwned, L>(
        &self,
        credentials: &ShopifyAuthorization,
        what: &'static str,
        query: &str,
        cursor: Option<String>,
        variables: Value,
        pick: impl FnOnce(T) -> Connection<L>,
    ) -> Result<(L, Option<String>), ConnectorError> {
        let variables = page_variables(self.page_size, cursor, variables);
        let data: T = self.query(credentials, what, query, variables).await?;
        let connection = pick(data);
        let next = connection.next();
        Ok((connection.nodes, next))
    }
}

/// A page's variables: `variables` with `first` (the page size) and `after`
/// (the previous page's cursor, null for the first page).
pub(super) fn page_variables(
    page_size: u64,
    cursor: Option<String>,
    mut variables: Value,
) -> Value {
    variables["first"] = json!(page_size);
    variables["after"] = match NextLink::from_cursor(cursor) {
        NextLink::First => Value::Null,
        NextLink::Given(after) => json!(after),
    };
    variables
}

/// A page's variables for what changed since `since`, when given: the
/// search filter `updated_at:>'<since>'` and the matching sort key
/// (Shopify advises sorting by the field searched on); none for a full fetch.
fn changed_variables(since: Option<DateTime<Utc>>, mut variables: Value) -> Value {
    if let Some(since) = since {
        variables["query"] = json!(updated_since(since));
        variables["sortKey"] = json!("UPDATED_AT");
    }
    variables
}

/// Shopify's search term for what was updated after `since`: ISO 8601 in
/// UTC to the second, in single quotes (Shopify's search syntax).
pub fn updated_since(since: DateTime<Utc>) -> String {
    format!("updated_at:>'{}'", since.format("%Y-%m-%dT%H:%M:%SZ"))
}

/// What Shopify's changes say of deletions: a cancelled order stays, with
/// `cancelledAt`, and is updated; but a deleted order or customer just stops
/// being listed, and no deletion feed was confirmed (`NOTES.md`), so a daily
/// full fetch reconciles.
const CHANGES: Option<Changes> = Some(Changes::with(Deletions::OnlyByFullFetch));

impl ShopifyConnector {
    /// A page of orders with their lines (changed since `since`, when given).
    async fn orders(
        &self,
        credentials: &ShopifyAuthorization,
        since: Option<DateTime<Utc>>,
        cursor: Option<String>,
    ) -> Result<Fetched<Order>, ConnectorError> {
        let (orders, next) = self
            .list(
                credentials,
                "a page of orders",
                ORDERS_QUERY,
                cursor,
                changed_variables(since, json!({"lines": LINES_PER_ORDER})),
                |data: OrdersData| data.orders,
            )
            .await?;
        let read = orders.read(|order| order.into_record().map(Some));
        Ok(Fetched::read(read, next))
    }

    /// A page of customers (changed since `since`, when given).
    async fn customers(
        &self,
        credentials: &ShopifyAuthorization,
        since: Option<DateTime<Utc>>,
        cursor: Option<String>,
    ) -> Result<Fetched<Customer>, ConnectorError> {
        let (customers, next) = self
            .list(
                credentials,
                "a page of customers",
                CUSTOMERS_QUERY,
                cursor,
                changed_variables(since, json!({})),
                |data: CustomersData| data.customers,
            )
            .await?;
        let read = customers.read(|customer| Ok(Some(customer.into_record())));
        Ok(Fetched::read(read, next))
    }
}

impl Connector for ShopifyConnector {
    type Credentials = ShopifyAuthorization;
    const PLATFORM: &'static str = "Shopify";
    /// Shopify's GraphQL cost bucket refills 100 points a second on the standard plan; its cost is
    /// not modelled here, two queries a second is the pace and a throttled answer the safety net
    /// (NOTES.md).
    const LIMITS: Limits = Limits::per_second(2);

    fn syncs() -> Vec<Fetcher<Self>> {
        syncs![Self: Customers, Orders, Items]
    }

    /// An expiring offline token (one with a refresh token) refreshes at the
    /// shop's token endpoint; a legacy offline token never expires.
    fn token_endpoint(&self, credentials: &ShopifyAuthorization) -> Option<TokenEndpoint> {
        credentials.refresh_token.as_ref()?;
        let url = self.token_url.clone().unwrap_or_else(|| {
            format!(
                "{}/admin/oauth/access_token",
                shop_host(&credentials.shop_domain)
            )
        });
        Some(TokenEndpoint::new(
            Self::PLATFORM,
            &url,
            ClientAuth::RequestBody,
            &self.http,
        ))
    }

    /// Shopify's code flow, per shop: the customer gives the shop's
    /// `myshopify.com` domain first; the callback is signed (`hmac`) and
    /// names the shop, which is the organization.
    fn link_spec(&self) -> Option<LinkSpec> {
        Some(
            LinkSpec::code_flow(
                self.authorize_url
                    .clone()
                    .unwrap_or_else(|| "https://{shop}/admin/oauth/authorize".to_owned()),
                self.token_url
                    .clone()
                    .unwrap_or_else(|| "https://{shop}/admin/oauth/access_token".to_owned()),
                ClientAuth::RequestBody,
                &["read_orders", "read_customers", "read_products"],
            )
            .scopes_separated_by(",")
            .asking(Ask::ShopDomain)
            .checked_by(CallbackCheck::ShopifyHmac),
        )
    }

    async fn organizations(&self, grant: &Grant) -> Result<Vec<Organization>, ConnectorError> {
        let Some(shop) = grant.given("shop").filter(|shop| is_shop_domain(shop)) else {
            return Err(ConnectorError::Failed(
                "Shopify sent no shop on the callback".to_owned(),
            ));
        };
        Ok(vec![Organization {
            id: shop.to_owned(),
            name: shop.to_owned(),
            handle: None,
        }])
    }

    fn link_body(&self, grant: &Grant, organization: &Organization) -> Value {
        let mut body = grant.token_body();
        body.insert("shopDomain".to_owned(), organization.id.clone().into());
        Value::Object(body)
    }

    /// `shop { myshopifyDomain }` must be the connection's shop.
    async fn verify(&self, credentials: &ShopifyAuthorization) -> Result<(), ConnectorError> {
        let data: ShopData = self
            .query(credentials, "the shop", SHOP_QUERY, json!({}))
            .await?;
        let domain = data.shop.and_then(|shop| shop.myshopify_domain);
        require_reach(&credentials.shop_domain, domain.as_deref(), |_| {
            format!(
                "Shopify accepted the access token, but for another shop than {}",
                credentials.shop_domain
            )
        })
    }
}

impl Syncs<Orders> for ShopifyConnector {
    const CHANGES: Option<Changes> = CHANGES;

    async fn page(
        &self,
        credentials: &ShopifyAuthorization,
        cursor: Option<String>,
    ) -> Result<Fetched<Order>, ConnectorError> {
        self.orders(credentials, None, cursor).await
    }

    async fn changed_page(
        &self,
        credentials: &ShopifyAuthorization,
        since: Since,
        cursor: Option<String>,
    ) -> Result<Fetched<Order>, ConnectorError> {
        self.orders(credentials, Some(since.time), cursor).await
    }
}

impl Syncs<Customers> for ShopifyConnector {
    const CHANGES: Option<Changes> = CHANGES;

    async fn page(
        &self,
        credentials: &ShopifyAuthorization,
        cursor: Option<String>,
    ) -> Result<Fetched<Customer>, ConnectorError> {
        self.customers(credentials, None, cursor).await
    }

    async fn changed_page(
        &self,
        credentials: &ShopifyAuthorization,
        since: Since,
        cursor: Option<String>,
    ) -> Result<Fetched<Customer>, ConnectorError> {
        self.customers(credentials, Some(since.time), cursor).await
    }
}

#[cfg(test)]
mod tests;
