//! Amazon Seller Central's connector: the Selling Partner API's Orders v0
//! (`getOrders`, paged by `NextToken`, and `getOrderItems` for each order's
//! lines) in every marketplace the seller takes part in
//! (`getMarketplaceParticipations`), on the regional host of the
//! connection's region, with the Login with Amazon access token in
//! `x-amz-access-token`. Tokens refresh at `api.amazon.com` (client
//! credentials in the form body). Amazon has no list of customers (buyer
//! data is restricted): orders only. After a first sync, only what changed
//! is asked for: `LastUpdatedAfter` instead of `CreatedAfter`. Sources:
//! `NOTES.md`.

use crate::platforms::kit::limits::Limits;
use std::collections::BTreeMap;

use chrono::{DateTime, Duration, SecondsFormat, Utc};
use serde::{Deserialize, Serialize};

use super::mapping::{AmazonItem, ItemsAnswer, OrdersAnswer, ParticipationsAnswer};
use super::{AmazonRegion, AmazonSellerCentralAuthorization};
use crate::data::orders::{Order, Orders};
use crate::platforms::config::PlatformConfig;
use crate::platforms::connector::{
    Changes, Configured, Connector, ConnectorError, Deletions, Endpoint, Fetched, Fetcher, Since,
    Syncs, syncs,
};
use crate::platforms::kit::http::{Auth, Call, PlatformHttp};
use crate::platforms::kit::oauth::{ClientAuth, TokenEndpoint};
use crate::platforms::kit::paging::NextLink;
use crate::platforms::kit::records::{Read, Unreadable};

/// Orders asked for per page by default: `MaxResultsPerPage`'s maximum.
pub const PAGE_SIZE: u64 = 100;

/// How far back a sync reaches: the Orders API serves orders up to two years old.
const HISTORY_DAYS: i64 = 730;

/// Login with Amazon's token endpoint, for every region.
const TOKEN_URL: &str = "https://api.amazon.com/auth/o2/token";

/// The header the SP-API reads the access token from.
const TOKEN_HEADER: &str = "x-amz-access-token";

impl AmazonRegion {
    /// The region's Selling Partner API endpoint.
    pub fn api_base(self) -> &'static str {
        match self {
            Self::Na => "https://sellingpartnerapi-na.amazon.com",
            Self::Eu => "https://sellingpartnerapi-eu.amazon.com",
            Self::Fe => "https://sellingpartnerapi-fe.amazon.com",
        }
    }
}

/// The Amazon Seller Central connector.
#[derive(Debug)]
pub struct AmazonSellerCentralConnector {
    /// A configured base replaces every region's (a test's local server).
    api_base: Option<String>,
    token_url: String,
    page_size: u64,
    http: PlatformHttp,
}

impl Configured for AmazonSellerCentralConnector {
    const API_BASE: Endpoint = Endpoint::PerConnection(
        "the connection's region: https://sellingpartnerapi-<na|eu|fe>.amazon.com",
    );
    const TOKEN_URL: Endpoint = Endpoint::Fixed(TOKEN_URL);

    fn new(config: &PlatformConfig, http: PlatformHttp) -> Self {
        Self {
            api_base: config.api_base(),
            token_url: config.token_url_or(TOKEN_URL),
            page_size: config.page_size_or(PAGE_SIZE, PAGE_SIZE),
            http,
        }
    }
}

/// Where a sync of orders stands between pages: the marketplaces and the
/// window asked for (Amazon's example repeats them with `NextToken`), each
/// marketplace's currency, and Amazon's token for the next page.
#[derive(Debug, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
struct OrdersCursor {
    marketplace_ids: Vec<String>,
    currencies: BTreeMap<String, String>,
    /// The start of a full fetch's window (`CreatedAfter`).
    created_after: String,
    /// What changed is asked for since then (`LastUpdatedAfter`, which
    /// Amazon does not take with `CreatedAfter`); `None` for a full fetch.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    last_updated_after: Option<String>,
    next_token: Option<String>,
}

impl AmazonSellerCentralConnector {
    fn url(&self, credentials: &AmazonSellerCentralAuthorization, path: &str) -> String {
        let base = self
            .api_base
            .as_deref()
            .unwrap_or_else(|| credentials.region.api_base());
        format!("{base}{path}")
    }

    fn get<'a>(
        &self,
        credentials: &'a AmazonSellerCentralAuthorization,
        what: &'static str,
        path: &str,
    ) -> Call<'a> {
        let auth = Auth::Header(TOKEN_HEADER, credentials.tokens.access_token.expose());
        Call::get(Self::PLATFORM, what, self.url(credentials, path), auth)
    }

    /// The marketplaces the seller takes part in.
    async fn participations(
        &self,
        credentials: &AmazonSellerCentralAuthorization,
    ) -> Result<ParticipationsAnswer, ConnectorError> {
        let call = self.get(
            credentials,
            "the seller's marketplaces",
            "/sellers/v1/marketplaceParticipations",
        );
        self.http.json(&call).await
    }

    /// Every item of `order_id`, over as many pages as Amazon gives; an
    /// item that cannot be read makes the order unreadable (`Ok(Err(..))`).
    async fn items(
        &self,
        credentials: &AmazonSellerCentralAuthorization,
        order_id: &str,
    ) -> Result<Result<Vec<AmazonItem>, Unreadable>, ConnectorError> {
        let path = format!("/orders/v0/orders/{order_id}/orderItems");
        let mut items = Vec::new();
        let mut next: Option<String> = None;
        loop {
            let mut call = self.get(credentials, "an order's items", &path);
            if let Some(token) = &next {
                call = call.query("NextToken", token);
            }
            let answer: ItemsAnswer = self.http.json(&call).await?;
            match answer.payload.order_items.all("payload.OrderItems") {
                Ok(read) => items.extend(read),
                Err(problem) => return Ok(Err(problem)),
            }
            next = NextLink::next(answer.payload.next_token);
            if next.is_none() {
                return Ok(Ok(items));
            }
        }
    }
}

impl Connector for AmazonSellerCentralConnector {
    type Credentials = AmazonSellerCentralAuthorization;
    const PLATFORM: &'static str = "Amazon";
    /// `getOrderItems`' bucket (0.5 a second, a burst of 30), the call a
    /// sync makes most (one an order), as a rolling window the bucket
    /// always admits: 30 in any minute. `getOrders`' own rate (0.0167 a
    /// second after a burst of 20) is kept by that pace in practice (one
    /// call in 101: a page of 100 orders); per-operation limits are not
    /// declared yet (NOTES.md).
    const LIMITS: Limits = Limits::per(30, std::time::Duration::from_secs(60));
    const LINK_UNAVAILABLE: &'static str = "Selling Partner API authorization starts in Seller Central (the website authorization workflow: `application_id`, then `spapi_oauth_code` and `selling_partner_id` on the callback) for one region chosen first; not built yet, so migrate tokens with PUT .../authorization";

    fn syncs() -> Vec<Fetcher<Self>> {
        syncs![Self: Orders]
    }

    fn token_endpoint(&self, _credentials: &Self::Credentials) -> Option<TokenEndpoint> {
        Some(TokenEndpoint::new(
            Self::PLATFORM,
            &self.token_url,
            ClientAuth::RequestBody,
            &self.http,
        ))
    }

    /// `getMarketplaceParticipations`: cheap (no order data), and it
    /// proves the token works on the connection's regional host.
    async fn verify(&self, credentials: &Self::Credentials) -> Result<(), ConnectorError> {
        self.participations(credentials).await.map(|_| ())
    }
}

fn unreadable_cursor() -> ConnectorError {
    ConnectorError::Failed("invalid Amazon cursor".to_owned())
}

/// What Amazon's changes say of deletions: orders are not deleted, and "an
/// update is defined as any change in order status" (`getOrders`'
/// `LastUpdatedAfter`), so a cancelled order comes back `Canceled`, which
/// its mapping reads as cancelled (`NOTES.md`).
const CHANGES: Option<Changes> = Some(Changes::with(Deletions::InChanges));

impl Syncs<Orders> for AmazonSellerCentralConnector {
    /// Orders created in the last [`HISTORY_DAYS`] only.
    const WHOLE_LIST: bool = false;
    const CHANGES: Option<Changes> = CHANGES;

    async fn page(
        &self,
        credentials: &AmazonSellerCentralAuthorization,
        cursor: Option<String>,
    ) -> Result<Fetched<Order>, ConnectorError> {
        self.orders_page(credentials, None, cursor)
            .await
            .map_err(forbidden_may_be_expired)
    }

    async fn changed_page(
        &self,
        credentials: &AmazonSellerCentralAuthorization,
        since: Since,
        cursor: Option<String>,
    ) -> Result<Fetched<Order>, ConnectorError> {
        self.orders_page(credentials, Some(since.time), cursor)
            .await
            .map_err(forbidden_may_be_expired)
    }
}

/// A time as `getOrders` takes it: ISO 8601, UTC (`Z`), to the second.
fn iso_8601(time: DateTime<Utc>) -> String {
    time.to_rfc3339_opts(SecondsFormat::Secs, true)
}

/// The Selling Partner API answers an expired access token with 403, not
/// 401 (its OpenAPI documents, `ordersV0.json`: 403 "Access Denied,
/// Unauthorized, Expired Token, or Invalid Signature"), and its LWA tokens
/// last an hour while `getOrders` allows one request a minute. So a 403
/// during a sync is taken as a token to refresh: the engine refreshes once
/// and retries, and a 403 again deauthorizes the connection, as before.
/// (A role the application lacks answers 403 too, and cannot be told
/// apart: it deauthorizes, and reauthorizing shows the missing role.)
fn forbidden_may_be_expired(error: ConnectorError) -> ConnectorError {
    match error {
        ConnectorError::Auth(message) | ConnectorError::Permissions(message) => {
            ConnectorError::Expired(message)
        }
        other => other,
    }
}

impl AmazonSellerCentralConnector {
    /// A page of orders, each with its items: created in the last
    /// [`HISTORY_DAYS`], or updated since `since` when given (the first
    /// page's choice, carried in the cursor).
    async fn orders_page(
        &self,
        credentials: &AmazonSellerCentralAuthorization,
        since: Option<DateTime<Utc>>,
        cursor: Option<String>,
    ) -> Result<Fetched<Order>, ConnectorError> {
        let cursor = match cursor {
            Some(text) => {
                serde_json::from_str::<OrdersCursor>(&text).map_err(|_| unreadable_cursor())?
            }
            None => {
                let participations = self.participations(credentials).await?;
                let active: Vec<_> = participations
                    .payload
                    .into_iter()
                    .filter(|participation| participation.active())
                    .collect();
                let created_after = iso_8601(Utc::now() - Duration::days(HISTORY_DAYS));
                OrdersCursor {
                    marketplace_ids: active.iter().map(|p| p.marketplace.id.clone()).collect(),
                    currencies: active
                        .iter()
                        .filter_map(|p| {
                            let currency = p.marketplace.default_currency_code.clone()?;
                            Some((p.marketplace.id.clone(), currency))
                        })
                        .collect(),
                    created_after,
                    last_updated_after: since.map(iso_8601),
                    next_token: None,
                }
            }
        };
        if cursor.marketplace_ids.is_empty() {
            // A seller in no marketplace has no orders.
            return Ok(Fetched::all(Vec::new(), None).of_total(Some(0)));
        }
        // Amazon takes at most 50 marketplaces, comma-separated.
        let marketplaces = cursor
            .marketplace_ids
            .iter()
            .take(50)
            .cloned()
            .collect::<Vec<_>>()
            .join(",");
        let call = self
            .get(credentials, "a page of orders", "/orders/v0/orders")
            .query("MarketplaceIds", marketplaces);
        let mut call = match &cursor.last_updated_after {
            Some(since) => call.query("LastUpdatedAfter", since),
            None => call.query("CreatedAfter", &cursor.created_after),
        }
        .query("MaxResultsPerPage", self.page_size);
        if let Some(token) = &cursor.next_token {
            call = call.query("NextToken", token);
        }
        let answer: OrdersAnswer = self.http.json(&call).await?;
        let mut read = Read::default();
        for entry in answer.payload.orders.entries() {
            let (order, named) = match entry {
                Ok(readable) => readable,
                Err(issue) => {
                    read.issues.push(issue);
                    continue;
                }
            };
            let items = self.items(credentials, &order.amazon_order_id).await?;
            let currency = order
                .marketplace_id()
                .and_then(|id| cursor.currencies.get(id))
                .cloned();
            match items.and_then(|items| order.into_record(&items, currency.as_deref())) {
                Ok(record) => read.records.push(record),
                Err(problem) => read.issues.push(named.issue(problem)),
            }
        }
        let next = match NextLink::next(answer.payload.next_token) {
            Some(token) => Some(
                serde_json::to_string(&OrdersCursor {
                    next_token: Some(token),
                    ..cursor
                })
                .map_err(|_| unreadable_cursor())?,
            ),
            None => None,
        };
        Ok(Fetched::read(read, next))
    }
}
