//! BigCommerce's catalogue as items: the store's products (V3 `GET
//! /stores/{store_hash}/v3/catalog/products`, `page`/`limit` until
//! `meta.pagination` says the last page; after a first sync, those whose
//! `date_modified` is at or after `date_modified:min`), each one item: the
//! product is what a shopper buys and what carries the price; a product's
//! variants only override it. Sources: `NOTES.md`, "Accounting model".

use chrono::{DateTime, Utc};
use serde::Deserialize;

use super::BigCommerceAuthorization;
use super::connector::BigCommerceConnector;
use super::mapping::{Meta, rfc2822};
use crate::data::items::{Item, ItemSide, ItemStatus, ItemType, Items};
use crate::data::money::Quantity;
use crate::platforms::connector::{
    Changes, Connector, ConnectorError, Deletions, Fetched, Since, Syncs,
};
use crate::platforms::kit::json::{self, Rounded};
use crate::platforms::kit::paging::PageNumber;
use crate::platforms::kit::records::{Each, Keyed};

/// A page of `GET /v3/catalog/products`.
#[derive(Deserialize)]
pub(super) struct ProductsPage {
    #[serde(default)]
    pub(super) data: Each<Product>,
    pub(super) meta: Option<Meta>,
}

/// A product as the catalogue writes it (`product_Full`).
#[derive(Deserialize)]
pub(super) struct Product {
    id: u64,
    name: Option<String>,
    sku: Option<String>,
    #[serde(rename = "type")]
    product_type: Option<String>,
    // Prices are `number`s of `format: float`: read from their text and
    // rounded to ten-thousandths, as for other platforms writing doubles.
    price: Option<Rounded>,
    cost_price: Option<Rounded>,
    is_visible: Option<bool>,
    inventory_tracking: Option<String>,
    inventory_level: Option<i64>,
    date_modified: Option<String>,
}

impl Keyed for Product {
    const ID: &'static str = "/id";
}

impl Product {
    /// Our item: the product's SKU and name; `physical` goods whose stock
    /// BigCommerce tracks (`inventory_tracking` `product` or `variant`) are
    /// inventory, other physical and `digital` goods not; a product hidden
    /// from shoppers (`is_visible` false) is archived. Its `price` is the
    /// sales price (BigCommerce has no sales account or tax rate of its
    /// chart), its `cost_price`, when set, the purchase price ("stored for
    /// reference only"). Stock is the product's `inventory_level` when it is
    /// tracked by product (by variant, each variant has its own).
    pub(super) fn into_record(self) -> Item {
        let id = self.id.to_string();
        let tracking = self.inventory_tracking.as_deref();
        let tracked = matches!(tracking, Some("product" | "variant"));
        let item_type = match self.product_type.as_deref() {
            Some("physical") if tracked => ItemType::Inventory,
            Some("physical" | "digital") => ItemType::NonInventory,
            _ => ItemType::Unknown,
        };
        let side = |price: Option<Rounded>| ItemSide {
            description: None,
            unit_price: price.map(Rounded::money),
            account_ref: None,
            tax_rate_ref: None,
        };
        let cost = self.cost_price.filter(|cost| cost.money().0 > 0);
        Item {
            code: json::non_empty(self.sku),
            name: json::non_empty(self.name).unwrap_or_else(|| id.clone()),
            item_type,
            status: if self.is_visible == Some(false) {
                ItemStatus::Archived
            } else {
                ItemStatus::Active
            },
            sales: Some(side(self.price)),
            purchases: cost.map(|cost| side(Some(cost))),
            quantity_on_hand: match tracking {
                Some("product") => self.inventory_level.map(Quantity::units),
                _ => None,
            },
            source_modified_date: rfc2822(self.date_modified.as_deref()),
            item_id: id,
        }
    }
}

/// `date_modified:min` of the catalogue, in the form of its document's
/// example (`2025-01-15T00:03:17Z`): UTC, to the second, with its `Z`.
pub fn products_modified_since(since: DateTime<Utc>) -> String {
    since.format("%Y-%m-%dT%H:%M:%SZ").to_string()
}

impl BigCommerceConnector {
    /// A page of products (modified since `since`, when given).
    async fn products(
        &self,
        credentials: &BigCommerceAuthorization,
        since: Option<DateTime<Utc>>,
        cursor: Option<String>,
    ) -> Result<Fetched<Item>, ConnectorError> {
        let page = PageNumber::from_cursor(Self::PLATFORM, cursor)?;
        let mut call = self
            .get(credentials, "v3/catalog/products", "a page of products")
            .query("page", page.0)
            .query("limit", self.page_size);
        if let Some(since) = since {
            call = call.query("date_modified:min", products_modified_since(since));
        }
        let body: ProductsPage = self.http.json(&call).await?;
        let pagination = body.meta.and_then(|meta| meta.pagination);
        let more = match &pagination {
            Some(pagination) => {
                pagination.current_page.unwrap_or(page.0) < pagination.total_pages.unwrap_or(0)
            }
            None => body.data.len() as u64 >= self.page_size,
        };
        let read = body.data.read(|product| Ok(Some(product.into_record())));
        Ok(Fetched::read(read, page.next(more))
            .of_total(pagination.and_then(|pagination| pagination.total)))
    }
}

/// A deleted product stops being listed (the catalogue has no deletion
/// feed), so the daily full fetch reconciles.
const CHANGES: Option<Changes> = Some(Changes::with(Deletions::OnlyByFullFetch));

impl Syncs<Items> for BigCommerceConnector {
    const CHANGES: Option<Changes> = CHANGES;

    async fn page(
        &self,
        credentials: &BigCommerceAuthorization,
        cursor: Option<String>,
    ) -> Result<Fetched<Item>, ConnectorError> {
        self.products(credentials, None, cursor).await
    }

    async fn changed_page(
        &self,
        credentials: &BigCommerceAuthorization,
        since: Since,
        cursor: Option<String>,
    ) -> Result<Fetched<Item>, ConnectorError> {
        self.products(credentials, Some(since.time), cursor).await
    }
}
