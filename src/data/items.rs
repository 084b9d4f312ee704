//! Items: the products and services a business sells and buys, with the
//! price and account of each side; by name, filterable by type.

use std::borrow::Cow;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::accounts::AccountRef;
use super::money::{Money, Quantity};
use super::tax_rates::TaxRateRef;
use super::{Definition, Direction, Filter, FilterValues, Spec, vocabulary};
use crate::timestamp::Timestamp;

/// The items data type.
pub struct Items;

impl Definition for Items {
    type Record = Item;

    const SPEC: &'static Spec = &Spec {
        name: "items",
        noun: "items",
        id_field: "itemId",
        order: Direction::Ascending,
        order_description: "by name (ties broken by connection, then item id)",
        filter: Some(Filter {
            parameter: "type",
            description: "Only items of this type",
            values: FilterValues::Vocabulary(ItemType::NAMES),
        }),
        keys: &["status", "modifiedDate"],
    };

    fn id(record: &Item) -> &str {
        &record.item_id
    }

    fn sort_key(record: &Item) -> String {
        record.name.clone()
    }

    fn filter_value(record: &Item) -> Option<Cow<'static, str>> {
        Some(Cow::Borrowed(record.item_type.as_str()))
    }
}

vocabulary! {
    /// What kind of thing an item is.
    pub enum ItemType {
        /// Goods whose stock the platform tracks.
        Inventory,
        /// Goods whose stock it does not track.
        NonInventory,
        /// Work or time.
        Service,
        /// The platform's type has no equivalent.
        Unknown,
    }
}

vocabulary! {
    /// Whether an item is in use.
    pub enum ItemStatus {
        /// In use.
        Active,
        /// Archived (hidden, kept for history) on the platform.
        Archived,
    }
}

/// One side of an item: how it is sold, or how it is bought.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ItemSide {
    /// What lines of this side say; null when the platform gives none.
    pub description: Option<String>,
    /// The price of one unit, before tax; null when the platform gives none.
    pub unit_price: Option<Money>,
    /// The account its lines post to (income for sales, expense or cost of sales for purchases), of the same connection; null when the platform gives none.
    pub account_ref: Option<AccountRef>,
    /// The tax rate its lines are charged at, of the same connection; null when the platform gives none.
    pub tax_rate_ref: Option<TaxRateRef>,
}

/// A product or service synced from an accounting platform. Prices are
/// exact decimals, as strings.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Item {
    /// The platform's id of the item.
    pub item_id: String,
    /// The code (SKU) people enter on lines; null when the platform gives none.
    pub code: Option<String>,
    /// The item's name.
    pub name: String,
    /// What kind of thing it is.
    #[serde(rename = "type")]
    pub item_type: ItemType,
    /// Whether it is in use.
    pub status: ItemStatus,
    /// How it is sold; null when it is not sold.
    pub sales: Option<ItemSide>,
    /// How it is bought; null when it is not bought.
    pub purchases: Option<ItemSide>,
    /// Units in stock, for an inventory item whose platform says; null otherwise.
    pub quantity_on_hand: Option<Quantity>,
    /// When the platform's record last changed; null when the platform does not say.
    pub source_modified_date: Option<Timestamp>,
}
