//! Square's catalogue as items: the seller's catalog items (`POST
//! /v2/catalog/search` for objects of type `ITEM`, paged by Square's
//! `cursor`; after a first sync, those modified after `begin_time`), each
//! item variation one item of ours: a variation is what Square prices and
//! sells (`price_money`, `sku`), and orders' lines name variations.
//! Sources: `NOTES.md`, "Accounting model".

use chrono::{DateTime, Utc};
use serde::Deserialize;
use serde_json::json;

use super::SquareAuthorization;
use super::connector::SquareConnector;
use super::mapping::SquareMoney;
use crate::data::items::{Item, ItemSide, ItemStatus, ItemType, Items};
use crate::platforms::connector::{Changes, ConnectorError, Deletions, Fetched, Since, Syncs};
use crate::platforms::kit::json;
use crate::platforms::kit::paging::NextLink;
use crate::platforms::kit::records::{Each, Keyed, Read, Unreadable};

/// The most objects a search returns a page (`limit`: "higher than the
/// maximum limit of 1,000" is ignored).
pub const CATALOG_PAGE_SIZE: u64 = 1000;

/// A page of `POST /v2/catalog/search`.
#[derive(Deserialize)]
pub(super) struct CatalogPage {
    #[serde(default)]
    pub(super) objects: Each<CatalogObject>,
    pub(super) cursor: Option<String>,
}

/// A catalog object of type `ITEM` (`CatalogObject` with `item_data`).
#[derive(Deserialize)]
pub(super) struct CatalogObject {
    id: String,
    updated_at: Option<String>,
    item_data: Option<CatalogItem>,
}

impl Keyed for CatalogObject {
    const ID: &'static str = "/id";
}

/// `CatalogItem`: the item's name, type, archiving and variations.
#[derive(Deserialize)]
struct CatalogItem {
    name: Option<String>,
    product_type: Option<String>,
    is_archived: Option<bool>,
    #[serde(default, deserialize_with = "json::list_or_null")]
    variations: Vec<VariationObject>,
}

/// A variation as its item carries it (a `CatalogObject` of type
/// `ITEM_VARIATION`).
#[derive(Deserialize)]
struct VariationObject {
    id: Option<String>,
    updated_at: Option<String>,
    item_variation_data: Option<CatalogItemVariation>,
}

/// `CatalogItemVariation`: its name, SKU, price and stock tracking.
#[derive(Deserialize)]
struct CatalogItemVariation {
    name: Option<String>,
    sku: Option<String>,
    pricing_type: Option<String>,
    price_money: Option<SquareMoney>,
    track_inventory: Option<bool>,
    sellable: Option<bool>,
}

/// The product types that are services (booked, or fulfilled by hand).
const SERVICES: &[&str] = &["APPOINTMENTS_SERVICE", "LEGACY_SQUARE_ONLINE_SERVICE"];

impl CatalogObject {
    /// The item's variations as our items: named by the item (and the
    /// variation's own name when the item has several); a service's as
    /// services, a variation whose stock is tracked as inventory, others
    /// non-inventory; archived with its item; sold at its fixed
    /// `price_money` (a variable price has none; a variation that cannot be
    /// sold has no sales side); never bought (Square keeps no cost on a
    /// variation). An item without its `item_data`, or with a variation
    /// without an id, cannot be read.
    pub(super) fn into_records(self) -> Result<Vec<Item>, Unreadable> {
        // Only `ITEM`s are asked for, and each carries its `item_data`.
        let item = self
            .item_data
            .ok_or_else(|| Unreadable::field("item_data", "is missing"))?;
        let item_name = json::non_empty(item.name).unwrap_or_else(|| self.id.clone());
        let service = item
            .product_type
            .as_deref()
            .is_some_and(|kind| SERVICES.contains(&kind));
        let status = if item.is_archived == Some(true) {
            ItemStatus::Archived
        } else {
            ItemStatus::Active
        };
        let several = item.variations.len() > 1;
        let item_modified = json::timestamp(self.updated_at.as_deref());
        let mut items = Vec::new();
        for (index, variation) in item.variations.into_iter().enumerate() {
            let field = |name: &str| format!("item_data.variations[{index}].{name}");
            let id = json::non_empty(variation.id)
                .ok_or_else(|| Unreadable::field(field("id"), "is missing"))?;
            let data = variation.item_variation_data;
            let (name, sku, fixed, price, tracked, sellable) = match data {
                Some(data) => (
                    json::non_empty(data.name),
                    json::non_empty(data.sku),
                    data.pricing_type.as_deref() != Some("VARIABLE_PRICING"),
                    data.price_money,
                    data.track_inventory == Some(true),
                    data.sellable != Some(false),
                ),
                None => (None, None, true, None, false, true),
            };
            let unit_price = match price.filter(|_| fixed) {
                Some(price) => Some(price.money().ok_or_else(|| {
                    Unreadable::field(field("price_money"), "is too large to keep")
                })?),
                None => None,
            };
            let modified = [
                item_modified,
                json::timestamp(variation.updated_at.as_deref()),
            ]
            .into_iter()
            .flatten()
            .max();
            items.push(Item {
                code: sku,
                name: match name {
                    Some(name) if several => format!("{item_name} - {name}"),
                    _ => item_name.clone(),
                },
                item_type: if service {
                    ItemType::Service
                } else if tracked {
                    ItemType::Inventory
                } else {
                    ItemType::NonInventory
                },
                status,
                sales: sellable.then_some(ItemSide {
                    description: None,
                    unit_price,
                    account_ref: None,
                    tax_rate_ref: None,
                }),
                purchases: None,
                quantity_on_hand: None,
                source_modified_date: modified,
                item_id: id,
            });
        }
        Ok(items)
    }
}

/// Every object of a page as items: an object that cannot be read, or one
/// of whose variations cannot, is the page's issue (the rest kept).
pub(super) fn items_of(objects: Each<CatalogObject>) -> Read<Item> {
    let mut read = Read::default();
    for entry in objects.entries() {
        match entry {
            Ok((object, named)) => match object.into_records() {
                Ok(items) => read.records.extend(items),
                Err(problem) => read.issues.push(named.issue(problem)),
            },
            Err(issue) => read.issues.push(issue),
        }
    }
    read
}

impl SquareConnector {
    /// A page of catalog items (modified after `since`, when given).
    async fn catalog(
        &self,
        credentials: &SquareAuthorization,
        since: Option<DateTime<Utc>>,
        cursor: Option<String>,
    ) -> Result<Fetched<Item>, ConnectorError> {
        // The same search on every page, as Square requires with a cursor.
        let mut search = json!({
            "object_types": ["ITEM"],
            "limit": self.limit(CATALOG_PAGE_SIZE),
        });
        if let Some(since) = since {
            search["begin_time"] = json!(since.format("%Y-%m-%dT%H:%M:%SZ").to_string());
        }
        if let NextLink::Given(given) = NextLink::from_cursor(cursor) {
            search["cursor"] = json!(given);
        }
        let call = self.post(
            credentials,
            "catalog/search",
            "a page of catalog items",
            search,
        );
        let body: CatalogPage = self.http.json(&call).await?;
        Ok(Fetched::read(
            items_of(body.objects),
            NextLink::next(body.cursor),
        ))
    }
}

/// What Square's changes say of deletions: a search leaves deleted objects
/// out unless asked (`include_deleted_objects`), so a deleted item or
/// variation is flagged by the daily full fetch.
const CHANGES: Option<Changes> = Some(Changes::with(Deletions::OnlyByFullFetch));

impl Syncs<Items> for SquareConnector {
    const CHANGES: Option<Changes> = CHANGES;

    async fn page(
        &self,
        credentials: &SquareAuthorization,
        cursor: Option<String>,
    ) -> Result<Fetched<Item>, ConnectorError> {
        self.catalog(credentials, None, cursor).await
    }

    async fn changed_page(
        &self,
        credentials: &SquareAuthorization,
        since: Since,
        cursor: Option<String>,
    ) -> Result<Fetched<Item>, ConnectorError> {
        self.catalog(credentials, Some(since.time), cursor).await
    }
}
