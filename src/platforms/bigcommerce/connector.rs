//! BigCommerce's connector: orders (V2 `GET /stores/{store_hash}/v2/orders`,
//! `page`/`limit` until a page comes back short or empty, each order's
//! products from `GET .../v2/orders/{id}/products`) and customers (V3 `GET
//! /stores/{store_hash}/v3/customers`, `page`/`limit` until
//! `meta.pagination` says the last page), with the store's token in
//! `X-Auth-Token`. App tokens do not expire and cannot be refreshed: a 401
//! deauthorizes the connection. After a first sync, only what changed is
//! asked for: orders by `min_date_modified`, customers by
//! `date_modified:min`. The catalogue's products, as items: [`super::catalog`].
//! Sources: `NOTES.md`.

use crate::platforms::kit::limits::{Limits, Quota, Remaining};
use chrono::{DateTime, Utc};
use std::time::Duration;

use super::BigCommerceAuthorization;
use super::mapping::{BigCommerceOrder, CustomersPage, OrderProduct};
use crate::data::customers::{Customer, Customers};
use crate::data::items::Items;
use crate::data::orders::{Order, Orders};
use crate::platforms::config::PlatformConfig;
use crate::platforms::connector::{
    Changes, Configured, Connector, ConnectorError, Deletions, Endpoint, Fetched, Fetcher, Since,
    Syncs, syncs,
};
use crate::platforms::kit::http::{Auth, Call, PlatformHttp};
use crate::platforms::kit::paging::PageNumber;
use crate::platforms::kit::records::{Each, Read};

/// The real API (every store's, by its hash).
pub const API_BASE: &str = "https://api.bigcommerce.com";
/// Records asked for per page by default: the V2 orders list's maximum.
pub const PAGE_SIZE: u64 = 250;

/// The BigCommerce connector.
#[derive(Debug)]
pub struct BigCommerceConnector {
    api_base: String,
    pub(super) page_size: u64,
    pub(super) http: PlatformHttp,
}

impl Configured for BigCommerceConnector {
    const API_BASE: Endpoint = Endpoint::Fixed(API_BASE);
    // Store tokens never expire: nothing is refreshed.
    const TOKEN_URL: Endpoint = Endpoint::Unused;

    fn new(config: &PlatformConfig, http: PlatformHttp) -> Self {
        Self {
            api_base: config.api_base_or(API_BASE),
            page_size: config.page_size_or(PAGE_SIZE, PAGE_SIZE),
            http,
        }
    }
}

impl BigCommerceConnector {
    /// A `GET` of the store's `path` (`v2/orders`, `v3/customers`).
    pub(super) fn get<'a>(
        &self,
        credentials: &'a BigCommerceAuthorization,
        path: &str,
        what: &'static str,
    ) -> Call<'a> {
        let url = format!("{}/stores/{}/{path}", self.api_base, credentials.store_hash);
        Call::get(
            Self::PLATFORM,
            what,
            url,
            Auth::Header("X-Auth-Token", credentials.token.access_token.expose()),
        )
    }

    /// A page of customers (modified since `since`, when given:
    /// `date_modified:min`).
    fn customers<'a>(
        &self,
        credentials: &'a BigCommerceAuthorization,
        page: PageNumber,
        limit: u64,
        since: Option<DateTime<Utc>>,
    ) -> Call<'a> {
        let call = self
            .get(credentials, "v3/customers", "a page of customers")
            .query("page", page.0)
            .query("limit", limit);
        match since {
            Some(since) => call.query("date_modified:min", customers_modified_since(since)),
            None => call,
        }
    }

    /// A page of orders with their products (modified since `since`, when
    /// given: `min_date_modified`).
    async fn orders(
        &self,
        credentials: &BigCommerceAuthorization,
        since: Option<DateTime<Utc>>,
        cursor: Option<String>,
    ) -> Result<Fetched<Order>, ConnectorError> {
        let page = PageNumber::from_cursor(Self::PLATFORM, cursor)?;
        let mut call = self
            .get(credentials, "v2/orders", "a page of orders")
            .query("page", page.0)
            .query("limit", self.page_size);
        if let Some(since) = since {
            call = call.query("min_date_modified", orders_modified_since(since));
        }
        // Past the last page V2 answers 204 No Content.
        let orders: Each<BigCommerceOrder> = self.http.json_or_default(&call).await?;
        let full = orders.len() as u64 >= self.page_size;
        let mut read = Read::default();
        for entry in orders.entries() {
            let (order, named) = match entry {
                Ok(readable) => readable,
                Err(issue) => {
                    read.issues.push(issue);
                    continue;
                }
            };
            let path = format!("v2/orders/{}/products", order.id);
            let call = self
                .get(credentials, &path, "an order's products")
                // Required by BigCommerce's OpenAPI document for this
                // operation (orders.v2), though the call has no body.
                .header("Content-Type", "application/json")
                .query("limit", PAGE_SIZE);
            let products: Each<OrderProduct> = self.http.json_or_default(&call).await?;
            match products
                .all("products")
                .and_then(|products| order.into_record(products))
            {
                Ok(record) => read.records.push(record),
                Err(problem) => read.issues.push(named.issue(problem)),
            }
        }
        Ok(Fetched::read(read, page.next(full)))
    }

    /// A page of customers (modified since `since`, when given).
    async fn customers_page(
        &self,
        credentials: &BigCommerceAuthorization,
        since: Option<DateTime<Utc>>,
        cursor: Option<String>,
    ) -> Result<Fetched<Customer>, ConnectorError> {
        let page = PageNumber::from_cursor(Self::PLATFORM, cursor)?;
        let body: CustomersPage = self
            .http
            .json(&self.customers(credentials, page, self.page_size, since))
            .await?;
        let pagination = body.meta.and_then(|meta| meta.pagination);
        let more = match &pagination {
            Some(pagination) => {
                pagination.current_page.unwrap_or(page.0) < pagination.total_pages.unwrap_or(0)
            }
            None => body.data.len() as u64 >= self.page_size,
        };
        let read = body.data.read(|customer| Ok(Some(customer.into_record())));
        Ok(Fetched::read(read, page.next(more))
            .of_total(pagination.and_then(|pagination| pagination.total)))
    }
}

/// `min_date_modified` of V2 orders, in the ISO 8601 form of the document's
/// example (`2017-04-20T11:32:00.000-04:00`), with UTC's offset spelt out.
pub fn orders_modified_since(since: DateTime<Utc>) -> String {
    since.format("%Y-%m-%dT%H:%M:%S%.3f+00:00").to_string()
}

/// `date_modified:min` of V3 customers, in the form of the document's
/// example (`2024-05-14T09:34:00`, no offset): the time in UTC, as V3's
/// dates are (the zone the filter applies is not confirmed: `NOTES.md`).
pub fn customers_modified_since(since: DateTime<Utc>) -> String {
    since.format("%Y-%m-%dT%H:%M:%S").to_string()
}

/// What BigCommerce's changes say of deletions: a deleted order is archived
/// (`is_deleted`) and still listed, but that archiving moves
/// `date_modified` is not confirmed; a deleted customer just stops being
/// listed (`NOTES.md`). So a daily full fetch reconciles.
const CHANGES: Option<Changes> = Some(Changes::with(Deletions::OnlyByFullFetch));

impl Connector for BigCommerceConnector {
    type Credentials = BigCommerceAuthorization;
    const PLATFORM: &'static str = "BigCommerce";
    /// BigCommerce: 150 calls per 30 seconds per store on the Standard and Plus plans (more on Pro
    /// and Enterprise), with what is left in `X-Rate-Limit-Requests-Left` (NOTES.md).
    const LIMITS: Limits = Limits::per(150, Duration::from_secs(30)).remaining(&[Remaining {
        header: "x-rate-limit-requests-left",
        quota: Quota::Rate,
    }]);
    const LINK_UNAVAILABLE: &'static str = "BigCommerce apps are installed from the store's control panel, which calls the app's Auth Callback URL with `code`, `context` and `scope` but no `state` tributary could bind to a session; tributary does not take app installs yet, so migrate tokens with PUT .../authorization";

    fn syncs() -> Vec<Fetcher<Self>> {
        syncs![Self: Customers, Orders, Items]
    }

    /// One customer of the store (`limit=1`): the store hash is in the
    /// URL, so an answer proves the token works for this store.
    async fn verify(&self, credentials: &BigCommerceAuthorization) -> Result<(), ConnectorError> {
        let _: CustomersPage = self
            .http
            .json(&self.customers(credentials, PageNumber(1), 1, None))
            .await?;
        Ok(())
    }
}

impl Syncs<Orders> for BigCommerceConnector {
    const CHANGES: Option<Changes> = CHANGES;

    async fn page(
        &self,
        credentials: &BigCommerceAuthorization,
        cursor: Option<String>,
    ) -> Result<Fetched<Order>, ConnectorError> {
        self.orders(credentials, None, cursor).await
    }

    async fn changed_page(
        &self,
        credentials: &BigCommerceAuthorization,
        since: Since,
        cursor: Option<String>,
    ) -> Result<Fetched<Order>, ConnectorError> {
        self.orders(credentials, Some(since.time), cursor).await
    }
}

impl Syncs<Customers> for BigCommerceConnector {
    const CHANGES: Option<Changes> = CHANGES;

    async fn page(
        &self,
        credentials: &BigCommerceAuthorization,
        cursor: Option<String>,
    ) -> Result<Fetched<Customer>, ConnectorError> {
        self.customers_page(credentials, None, cursor).await
    }

    async fn changed_page(
        &self,
        credentials: &BigCommerceAuthorization,
        since: Since,
        cursor: Option<String>,
    ) -> Result<Fetched<Customer>, ConnectorError> {
        self.customers_page(credentials, Some(since.time), cursor)
            .await
    }
}
