//! eBay's connector: the Sell Fulfillment API's orders (`GET
//! /sell/fulfillment/v1/order`), paged by `limit` and `offset` while eBay
//! names a `next` page, with the seller's OAuth user token as a bearer
//! token; tokens refresh at eBay's identity server (HTTP Basic) and are not
//! rotated. eBay has no list of buyers: orders only. After a first sync, only
//! what changed is asked for (`filter=lastmodifieddate:[<time>..]`). Sources:
//! `NOTES.md`.

use crate::platforms::kit::limits::Limits;
use chrono::{DateTime, Utc};

use super::EbayAuthorization;
use super::mapping::OrdersPage;
use crate::data::orders::{Order, Orders};
use crate::platforms::config::PlatformConfig;
use crate::platforms::connector::{
    Changes, Configured, Connector, ConnectorError, Deletions, Endpoint, Fetched, Fetcher, Since,
    Syncs, syncs,
};
use crate::platforms::kit::http::{Auth, Call, PlatformHttp};
use crate::platforms::kit::oauth::{ClientAuth, TokenEndpoint};
use crate::platforms::kit::paging::Offset;

/// Orders asked for per page by default: eBay's maximum.
pub const PAGE_SIZE: u64 = 200;

const API_BASE: &str = "https://api.ebay.com";
const TOKEN_URL: &str = "https://api.ebay.com/identity/v1/oauth2/token";

/// The eBay connector.
#[derive(Debug)]
pub struct EbayConnector {
    api_base: String,
    token_url: String,
    page_size: u64,
    http: PlatformHttp,
}

impl Configured for EbayConnector {
    const API_BASE: Endpoint = Endpoint::Fixed(API_BASE);
    const TOKEN_URL: Endpoint = Endpoint::Fixed(TOKEN_URL);

    fn new(config: &PlatformConfig, http: PlatformHttp) -> Self {
        Self {
            api_base: config.api_base_or(API_BASE),
            token_url: config.token_url_or(TOKEN_URL),
            page_size: config.page_size_or(PAGE_SIZE, PAGE_SIZE),
            http,
        }
    }
}

impl EbayConnector {
    /// `limit` orders of the seller from `offset`.
    fn orders<'a>(&self, credentials: &'a EbayAuthorization, offset: u64, limit: u64) -> Call<'a> {
        let url = format!("{}/sell/fulfillment/v1/order", self.api_base);
        Call::get(
            Self::PLATFORM,
            "a page of orders",
            url,
            Auth::bearer(&credentials.tokens),
        )
        .query("limit", limit)
        .query("offset", offset)
    }

    /// A page of orders (modified since `since`, when given: `filter`).
    async fn orders_page(
        &self,
        credentials: &EbayAuthorization,
        since: Option<DateTime<Utc>>,
        cursor: Option<String>,
    ) -> Result<Fetched<Order>, ConnectorError> {
        let offset = Offset::from_cursor(Self::PLATFORM, cursor, 0)?;
        let mut call = self.orders(credentials, offset.0, self.page_size);
        if let Some(since) = since {
            call = call.query("filter", modified_since(since));
        }
        let body: OrdersPage = self.http.json(&call).await?;
        let returned = body.orders.len() as u64;
        // eBay's `next` is a URI on its own host: we page on from our
        // offset (and our configured host), and only take its presence.
        let next = (body.next.is_some() && returned > 0).then(|| (offset.0 + returned).to_string());
        let read = body.orders.read(|order| order.into_record().map(Some));
        Ok(Fetched::read(read, next).of_total(body.total))
    }
}

/// eBay's filter of the orders modified since `since`, open-ended:
/// `lastmodifieddate:[<since>..]`, ISO 8601 in UTC with milliseconds (the
/// query string percent-encodes the brackets, as eBay requires).
pub fn modified_since(since: DateTime<Utc>) -> String {
    format!(
        "lastmodifieddate:[{}..]",
        since.format("%Y-%m-%dT%H:%M:%S%.3fZ")
    )
}

/// What eBay's changes say of deletions: orders are never deleted, and a
/// cancellation shows in `cancelStatus`, but that it moves
/// `lastModifiedDate` is not confirmed (`NOTES.md`); so a daily full fetch
/// reconciles.
const CHANGES: Option<Changes> = Some(Changes::with(Deletions::OnlyByFullFetch));

impl Connector for EbayConnector {
    type Credentials = EbayAuthorization;
    const PLATFORM: &'static str = "eBay";
    /// eBay's call limits are per application a day, per API (NOTES.md): none per seller to pace
    /// here; its 429 is the safety net.
    const LIMITS: Limits = Limits::NONE;
    const LINK_UNAVAILABLE: &'static str = "eBay's authorize step takes the application's RuName instead of a redirect URI, and the user id needs the `commerce.identity.readonly` scope; not built yet, so migrate tokens with PUT .../authorization";

    fn syncs() -> Vec<Fetcher<Self>> {
        syncs![Self: Orders]
    }

    fn token_endpoint(&self, _credentials: &EbayAuthorization) -> Option<TokenEndpoint> {
        Some(TokenEndpoint::new(
            Self::PLATFORM,
            &self.token_url,
            ClientAuth::Basic,
            &self.http,
        ))
    }

    /// One order of the seller's (`limit=1`): the only call the order scope
    /// allows, and an answer (even with no orders) proves the user token.
    /// eBay user tokens carry no user id to compare with ours.
    async fn verify(&self, credentials: &EbayAuthorization) -> Result<(), ConnectorError> {
        let _: OrdersPage = self.http.json(&self.orders(credentials, 0, 1)).await?;
        Ok(())
    }
}

impl Syncs<Orders> for EbayConnector {
    const CHANGES: Option<Changes> = CHANGES;

    async fn page(
        &self,
        credentials: &EbayAuthorization,
        cursor: Option<String>,
    ) -> Result<Fetched<Order>, ConnectorError> {
        self.orders_page(credentials, None, cursor).await
    }

    async fn changed_page(
        &self,
        credentials: &EbayAuthorization,
        since: Since,
        cursor: Option<String>,
    ) -> Result<Fetched<Order>, ConnectorError> {
        self.orders_page(credentials, Some(since.time), cursor)
            .await
    }
}
