//! Square's connector: invoices location by location (`GET
//! /v2/invoices?location_id=` for each location of `GET /v2/locations`),
//! customer profiles (`GET /v2/customers`) and orders (`POST
//! /v2/orders/search`, ten locations a search), each paged by Square's
//! `cursor`, with a pinned `Square-Version`, on the production or sandbox
//! host as the authorization says. Tokens refresh at that host's
//! `/oauth2/token` with the client credentials in a JSON body; whatever
//! refresh token comes back is kept. After a first sync, only what changed is
//! asked for where Square can tell: orders by `updated_at` in the same
//! search, customers by `POST /v2/customers/search` on `updated_at`;
//! invoices have no such filter and are always fetched whole. Payments and
//! the seller: [`super::ledger`]; catalog items: [`super::catalog`].
//! Sources: `NOTES.md`.

use crate::platforms::kit::limits::Limits;
use chrono::{DateTime, Utc};
use serde_json::{Value, json};

use super::SquareAuthorization;
use super::mapping::{CustomersPage, InvoicesPage, Location, LocationsAnswer, OrdersPage};
use crate::data::company_info::CompanyInfos;
use crate::data::customers::{Customer, Customers};
use crate::data::invoices::{Invoice, Invoices};
use crate::data::items::Items;
use crate::data::orders::{Order, Orders};
use crate::data::payments::Payments;
use crate::platforms::authorization::Environment;
use crate::platforms::config::PlatformConfig;
use crate::platforms::connector::{
    Changes, Configured, Connector, ConnectorError, Deletions, Endpoint, Fetched, Fetcher, Since,
    Syncs, require_reach, syncs,
};
use crate::platforms::kit::http::{Auth, Call, PlatformHttp};
use crate::platforms::kit::oauth::{ClientAuth, TokenEndpoint};
use crate::platforms::kit::paging::NextLink;
use crate::platforms::link::{Grant, LinkSpec, Organization};

/// The real production API.
pub const API_BASE: &str = "https://connect.squareup.com";
/// The real sandbox API.
pub const SANDBOX_API_BASE: &str = "https://connect.squareupsandbox.com";
/// The token endpoint's path on either host.
const TOKEN_PATH: &str = "/oauth2/token";
/// The production authorize endpoint.
const AUTHORIZE_URL: &str = "https://connect.squareup.com/oauth2/authorize";
/// The API version every call asks for (`Square-Version`).
pub const SQUARE_VERSION: &str = "2024-01-18";
/// The most customers a page holds (`ListCustomers` and `SearchCustomers`).
pub const CUSTOMERS_PAGE_SIZE: u64 = 100;
/// The most invoices a page holds (`ListInvoices`' `limit`, 1 to 200).
pub const INVOICES_PAGE_SIZE: u64 = 200;
/// The most orders a search returns a page: 500, what Square's staff say it
/// keeps to, below the 1000 its OpenAPI document allows (NOTES.md).
pub const ORDERS_PAGE_SIZE: u64 = 500;
/// Locations one order search may name.
const LOCATIONS_PER_SEARCH: usize = 10;

/// The Square connector.
#[derive(Debug)]
pub struct SquareConnector {
    api_base: Option<String>,
    token_url: Option<String>,
    authorize_url: String,
    /// A page size asked for in the configuration (tests), within each
    /// list's own maximum.
    page_size: Option<u64>,
    pub(super) http: PlatformHttp,
}

impl Configured for SquareConnector {
    const API_BASE: Endpoint = Endpoint::PerConnection(
        "the connection's environment: https://connect.squareup.com or \
         https://connect.squareupsandbox.com",
    );
    const TOKEN_URL: Endpoint = Endpoint::PerConnection(
        "the connection's environment: https://connect.squareup.com/oauth2/token or \
         https://connect.squareupsandbox.com/oauth2/token",
    );

    fn new(config: &PlatformConfig, http: PlatformHttp) -> Self {
        Self {
            api_base: config.api_base(),
            token_url: config.token_url.clone(),
            authorize_url: config.authorize_url_or(AUTHORIZE_URL),
            page_size: config.page_size,
            http,
        }
    }
}

/// The host of the connection's environment.
fn environment_host(credentials: &SquareAuthorization) -> &'static str {
    match credentials.environment {
        Environment::Production => API_BASE,
        Environment::Sandbox => SANDBOX_API_BASE,
    }
}

/// Where a list stands: the seller's locations (read once, at the first
/// page of a sync, and carried from page to page), which location (or group
/// of ten) and Square's cursor within it. As a cursor:
/// `<index>:<location ids, comma-separated>` then `:<Square's cursor>` when
/// the page is not its location's first (Square's ids are letters and
/// digits, so neither separator occurs in them).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Position {
    pub(super) index: usize,
    pub(super) locations: Vec<String>,
    within: NextLink,
}

impl Position {
    /// The first page of a sync, over the seller's `locations`.
    fn first(locations: Vec<Location>) -> Self {
        Self {
            index: 0,
            locations: locations.into_iter().map(|location| location.id).collect(),
            within: NextLink::First,
        }
    }

    fn from_cursor(cursor: &str) -> Result<Self, ConnectorError> {
        let invalid = || ConnectorError::Failed(format!("invalid Square cursor {cursor:?}"));
        let mut parts = cursor.splitn(3, ':');
        let index = parts
            .next()
            .and_then(|index| index.parse().ok())
            .ok_or_else(invalid)?;
        let locations = parts
            .next()
            .ok_or_else(invalid)?
            .split(',')
            .filter(|id| !id.is_empty())
            .map(str::to_owned)
            .collect();
        let within = match parts.next() {
            Some(given) => NextLink::Given(given.to_owned()),
            None => NextLink::First,
        };
        Ok(Self {
            index,
            locations,
            within,
        })
    }

    /// The next page: Square's next cursor in this location, else the next
    /// location's first page, else none. `positions` is how many locations
    /// (or groups) the list walks.
    pub(super) fn next(&self, given: Option<String>, positions: usize) -> Option<String> {
        let locations = self.locations.join(",");
        match NextLink::next(given) {
            Some(given) => Some(format!("{}:{locations}:{given}", self.index)),
            None => (self.index + 1 < positions).then(|| format!("{}:{locations}", self.index + 1)),
        }
    }

    /// Square's cursor for this page, if it is not the first of its location.
    pub(super) fn given(&self) -> Option<&str> {
        match &self.within {
            NextLink::First => None,
            NextLink::Given(given) => Some(given),
        }
    }
}

impl SquareConnector {
    /// A page's `limit` on a list whose most is `most`: the configured page
    /// size where one is, else the most.
    pub(super) fn limit(&self, most: u64) -> u64 {
        self.page_size.unwrap_or(most).clamp(1, most)
    }

    /// `path` of the v2 API: on the configured base, else the environment's host.
    fn url(&self, credentials: &SquareAuthorization, path: &str) -> String {
        let base = self
            .api_base
            .as_deref()
            .unwrap_or_else(|| environment_host(credentials));
        format!("{base}/v2/{path}")
    }

    /// A `GET` of the v2 API with the pinned version.
    pub(super) fn get<'a>(
        &self,
        credentials: &'a SquareAuthorization,
        path: &str,
        what: &'static str,
    ) -> Call<'a> {
        Call::get(
            Self::PLATFORM,
            what,
            self.url(credentials, path),
            Auth::bearer(&credentials.tokens),
        )
        .header("Square-Version", SQUARE_VERSION)
    }

    /// A `POST` to the v2 API with the pinned version.
    pub(super) fn post<'a>(
        &self,
        credentials: &'a SquareAuthorization,
        path: &str,
        what: &'static str,
        body: Value,
    ) -> Call<'a> {
        Call::post(
            Self::PLATFORM,
            what,
            self.url(credentials, path),
            Auth::bearer(&credentials.tokens),
            body,
        )
        .header("Square-Version", SQUARE_VERSION)
    }

    /// A page of customers: of the whole list (`GET /v2/customers`), or of
    /// those updated since `since` (`POST /v2/customers/search`, whose
    /// answer has the same `customers` and `cursor`).
    async fn customers(
        &self,
        credentials: &SquareAuthorization,
        since: Option<DateTime<Utc>>,
        cursor: Option<String>,
    ) -> Result<Fetched<Customer>, ConnectorError> {
        let given = match NextLink::from_cursor(cursor) {
            NextLink::Given(given) => Some(given),
            NextLink::First => None,
        };
        let call = match since {
            None => {
                let call = self
                    .get(credentials, "customers", "a page of customers")
                    .query("limit", self.limit(CUSTOMERS_PAGE_SIZE));
                match given {
                    Some(given) => call.query("cursor", given),
                    None => call,
                }
            }
            Some(since) => {
                // The same query on every page, as Square requires with a cursor.
                let mut search = json!({
                    "limit": self.limit(CUSTOMERS_PAGE_SIZE),
                    "query": {"filter": {"updated_at": updated_since(since)}},
                });
                if let Some(given) = given {
                    search["cursor"] = json!(given);
                }
                self.post(
                    credentials,
                    "customers/search",
                    "a page of customers",
                    search,
                )
            }
        };
        let body: CustomersPage = self.http.json(&call).await?;
        let read = body
            .customers
            .read(|customer| Ok(Some(customer.into_record())));
        Ok(Fetched::read(read, NextLink::next(body.cursor)))
    }

    /// A page of orders, ten locations a search: all of them by creation,
    /// or those updated since `since` (Square then requires the sort by
    /// `UPDATED_AT`).
    async fn orders(
        &self,
        credentials: &SquareAuthorization,
        since: Option<DateTime<Utc>>,
        cursor: Option<String>,
    ) -> Result<Fetched<Order>, ConnectorError> {
        let position = self.position(credentials, cursor).await?;
        let groups: Vec<&[String]> = position.locations.chunks(LOCATIONS_PER_SEARCH).collect();
        let Some(group) = groups.get(position.index) else {
            return Ok(Fetched::all(Vec::new(), None));
        };
        // The same query on every page, as Square requires with a cursor.
        let query = match since {
            None => json!({"sort": {"sort_field": "CREATED_AT", "sort_order": "ASC"}}),
            Some(since) => json!({
                "filter": {"date_time_filter": {"updated_at": updated_since(since)}},
                "sort": {"sort_field": "UPDATED_AT", "sort_order": "ASC"},
            }),
        };
        let mut search = json!({
            "location_ids": group,
            "limit": self.limit(ORDERS_PAGE_SIZE),
            "return_entries": false,
            "query": query,
        });
        if let Some(given) = position.given() {
            search["cursor"] = json!(given);
        }
        let call = self.post(credentials, "orders/search", "a page of orders", search);
        let body: OrdersPage = self.http.json(&call).await?;
        let read = body.orders.read(|order| order.into_record().map(Some));
        Ok(Fetched::read(
            read,
            position.next(body.cursor, groups.len()),
        ))
    }

    /// Where the page of `cursor` is; the first page of a sync reads the
    /// seller's locations, the others carry them in their cursor.
    pub(super) async fn position(
        &self,
        credentials: &SquareAuthorization,
        cursor: Option<String>,
    ) -> Result<Position, ConnectorError> {
        match cursor {
            Some(cursor) => Position::from_cursor(&cursor),
            None => Ok(Position::first(self.locations(credentials).await?)),
        }
    }

    /// The seller's locations, in Square's order.
    async fn locations(
        &self,
        credentials: &SquareAuthorization,
    ) -> Result<Vec<Location>, ConnectorError> {
        let call = self.get(credentials, "locations", "the locations");
        let answer: LocationsAnswer = self.http.json(&call).await?;
        Ok(answer.locations)
    }
}

/// A `TimeRange` of what was updated since `since`: `start_at` in RFC 3339,
/// UTC, to the second (inclusive); no `end_at`, which Square pins to the
/// time of the search's first request.
fn updated_since(since: DateTime<Utc>) -> Value {
    json!({"start_at": since.format("%Y-%m-%dT%H:%M:%SZ").to_string()})
}

/// What Square's changes say of deletions: orders cannot be deleted (the v2
/// API has no such operation) and a cancelled one keeps its id with state
/// `CANCELED`, but Square does not say in so many words that cancelling
/// moves `updated_at`; a deleted customer just stops being listed
/// (`NOTES.md`). So, as for Xero, a daily full fetch reconciles both.
const CHANGES: Option<Changes> = Some(Changes::with(Deletions::OnlyByFullFetch));

impl Connector for SquareConnector {
    type Credentials = SquareAuthorization;
    const PLATFORM: &'static str = "Square";
    /// Square publishes no call numbers (NOTES.md): its 429 is the safety net.
    const LIMITS: Limits = Limits::NONE;

    fn syncs() -> Vec<Fetcher<Self>> {
        syncs![Self: Invoices, Customers, Orders, Payments, Items, CompanyInfos]
    }

    fn token_endpoint(&self, credentials: &SquareAuthorization) -> Option<TokenEndpoint> {
        let url = self
            .token_url
            .clone()
            .unwrap_or_else(|| format!("{}{TOKEN_PATH}", environment_host(credentials)));
        Some(TokenEndpoint::new(
            Self::PLATFORM,
            &url,
            ClientAuth::JsonBody,
            &self.http,
        ))
    }

    /// Square's code flow (production sellers; PKCE S256 as Square's PKCE
    /// flow takes it): the seller is the token answer's `merchant_id`.
    fn link_spec(&self) -> Option<LinkSpec> {
        Some(
            LinkSpec::code_flow(
                self.authorize_url.clone(),
                self.token_url
                    .clone()
                    .unwrap_or_else(|| format!("{API_BASE}{TOKEN_PATH}")),
                ClientAuth::JsonBody,
                &[
                    "MERCHANT_PROFILE_READ",
                    "INVOICES_READ",
                    "ORDERS_READ",
                    "CUSTOMERS_READ",
                    "PAYMENTS_READ",
                    "ITEMS_READ",
                ],
            )
            .with_pkce()
            .with_parameters(&[("session", "false")]),
        )
    }

    async fn organizations(&self, grant: &Grant) -> Result<Vec<Organization>, ConnectorError> {
        let Some(merchant) = grant.token_field("merchant_id") else {
            return Err(ConnectorError::Failed(
                "Square's token answer names no seller (`merchant_id`)".to_owned(),
            ));
        };
        Ok(vec![Organization {
            id: merchant.to_owned(),
            name: merchant.to_owned(),
            handle: None,
        }])
    }

    fn link_body(&self, grant: &Grant, organization: &Organization) -> serde_json::Value {
        let mut body = grant.token_body();
        body.insert("merchantId".to_owned(), organization.id.clone().into());
        serde_json::Value::Object(body)
    }

    /// `GET /v2/locations`, the call Square names for checking a token:
    /// its locations must belong to our merchant.
    async fn verify(&self, credentials: &SquareAuthorization) -> Result<(), ConnectorError> {
        let locations = self.locations(credentials).await?;
        let merchant = &credentials.merchant_id;
        let reached = locations
            .iter()
            .filter_map(|location| location.merchant_id.as_deref());
        require_reach(merchant, reached, |count| {
            format!(
                "Square accepted the access token, but its {count} location(s) belong to another \
                 seller than merchant {merchant}"
            )
        })
    }
}

impl Syncs<Invoices> for SquareConnector {
    async fn page(
        &self,
        credentials: &SquareAuthorization,
        cursor: Option<String>,
    ) -> Result<Fetched<Invoice>, ConnectorError> {
        let position = self.position(credentials, cursor).await?;
        let locations = &position.locations;
        let Some(location) = locations.get(position.index) else {
            return Ok(Fetched::all(Vec::new(), None));
        };
        let mut call = self
            .get(credentials, "invoices", "a page of invoices")
            .query("location_id", location)
            .query("limit", self.limit(INVOICES_PAGE_SIZE));
        if let Some(given) = position.given() {
            call = call.query("cursor", given);
        }
        let body: InvoicesPage = self.http.json(&call).await?;
        let read = body
            .invoices
            .read(|invoice| invoice.into_record().map(Some));
        Ok(Fetched::read(
            read,
            position.next(body.cursor, locations.len()),
        ))
    }
}

impl Syncs<Customers> for SquareConnector {
    const CHANGES: Option<Changes> = CHANGES;

    async fn page(
        &self,
        credentials: &SquareAuthorization,
        cursor: Option<String>,
    ) -> Result<Fetched<Customer>, ConnectorError> {
        self.customers(credentials, None, cursor).await
    }

    async fn changed_page(
        &self,
        credentials: &SquareAuthorization,
        since: Since,
        cursor: Option<String>,
    ) -> Result<Fetched<Customer>, ConnectorError> {
        self.customers(credentials, Some(since.time), cursor).await
    }
}

impl Syncs<Orders> for SquareConnector {
    const CHANGES: Option<Changes> = CHANGES;

    async fn page(
        &self,
        credentials: &SquareAuthorization,
        cursor: Option<String>,
    ) -> Result<Fetched<Order>, ConnectorError> {
        self.orders(credentials, None, cursor).await
    }

    async fn changed_page(
        &self,
        credentials: &SquareAuthorization,
        since: Since,
        cursor: Option<String>,
    ) -> Result<Fetched<Order>, ConnectorError> {
        self.orders(credentials, Some(since.time), cursor).await
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_position_names_the_locations_the_location_and_square_cursor_within_it() {
        let first = Position {
            index: 0,
            locations: vec!["L1".to_owned(), "L2".to_owned(), "L3".to_owned()],
            within: NextLink::First,
        };
        assert_eq!(first.given(), None);
        assert_eq!(
            first.next(Some("c:2".to_owned()), 3).as_deref(),
            Some("0:L1,L2,L3:c:2")
        );
        let within = Position::from_cursor("0:L1,L2,L3:c:2").expect("a page");
        assert_eq!(within.index, 0);
        assert_eq!(within.locations, first.locations);
        assert_eq!(within.given(), Some("c:2"));
        assert_eq!(within.next(None, 3).as_deref(), Some("1:L1,L2,L3"));
        let last = Position::from_cursor("2:L1,L2,L3").expect("a location");
        assert_eq!(last.given(), None);
        assert_eq!(last.next(Some(String::new()), 3), None);
        assert_eq!(
            Position::from_cursor("0:").expect("no locations").locations,
            Vec::<String>::new()
        );
        assert!(Position::from_cursor("x:L1").is_err());
        assert!(Position::from_cursor("1").is_err());
    }
}
