//! Shopify's catalogue as items: every product variant (`productVariants`,
//! paged by cursor like orders; after a first sync, those the search
//! `updated_at:>'<time>'` finds), each one item. A variant is what Shopify
//! sells and prices: every product has at least one (its default variant),
//! each with its own price, SKU, cost and stock, and orders' lines name
//! variants. Sources: `NOTES.md`, "Accounting model".

use chrono::{DateTime, Utc};
use serde::Deserialize;
use serde_json::json;

use super::ShopifyAuthorization;
use super::connector::{ShopifyConnector, updated_since};
use super::mapping::Connection;
use crate::data::items::{Item, ItemSide, ItemStatus, ItemType, Items};
use crate::data::money::Quantity;
use crate::platforms::connector::{Changes, ConnectorError, Deletions, Fetched, Since, Syncs};
use crate::platforms::kit::json::{self, Amount};
use crate::platforms::kit::records::{Each, Keyed};

/// A page of the shop's product variants, each with its product and
/// inventory item; of those a search `$query` finds, when given.
/// (`ProductVariantSortKeys` has no `UPDATED_AT`: the default order by id.)
pub(super) const VARIANTS_QUERY: &str =
    "query TributaryVariants($first: Int!, $after: String, $query: String) {
  productVariants(first: $first, after: $after, query: $query) {
    pageInfo { hasNextPage endCursor }
    nodes {
      id title sku price inventoryQuantity updatedAt
      inventoryItem { tracked unitCost { amount currencyCode } }
      product { id title status hasOnlyDefaultVariant updatedAt }
    }
  }
}";

/// `data` of the variants query.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
pub(super) struct VariantsData {
    pub(super) product_variants: Connection<Each<ShopifyVariant>>,
}

/// A product variant as the variants query asks for it.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
pub(super) struct ShopifyVariant {
    id: String,
    title: Option<String>,
    sku: Option<String>,
    price: Option<Amount>,
    inventory_quantity: Option<i64>,
    updated_at: Option<String>,
    inventory_item: Option<InventoryItem>,
    product: Option<Product>,
}

impl Keyed for ShopifyVariant {
    const ID: &'static str = "/id";
}

/// What the variant's stock is tracked by, and what one costs.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct InventoryItem {
    tracked: Option<bool>,
    unit_cost: Option<UnitCost>,
}

/// A `MoneyV2`: the cost's decimal string (in the shop's currency).
#[derive(Deserialize)]
struct UnitCost {
    amount: Option<Amount>,
}

/// The variant's product.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Product {
    title: Option<String>,
    status: Option<String>,
    has_only_default_variant: Option<bool>,
    updated_at: Option<String>,
}

/// The title Shopify gives the one variant of a product without options.
const DEFAULT_TITLE: &str = "Default Title";

/// Our status for a product's `status`: only `ARCHIVED` is archived
/// (`DRAFT` is being set up and `UNLISTED` sold but not listed: both in
/// use); a word Shopify adds later reads as in use.
pub(super) fn item_status(status: Option<&str>) -> ItemStatus {
    match status {
        Some("ARCHIVED") => ItemStatus::Archived,
        _ => ItemStatus::Active,
    }
}

impl ShopifyVariant {
    /// Our item: the variant's SKU; its product's title, with the variant's
    /// own (`Large / Blue`) unless it is the default variant; inventory when
    /// its stock is tracked, else non-inventory (Shopify cannot tell a
    /// service from goods it does not track); the product's status; `price`
    /// the sales price and the inventory item's `unitCost`, when set, the
    /// purchase price; stock `inventoryQuantity` when tracked; modified the
    /// later of the variant's and its product's `updatedAt`.
    pub(super) fn into_record(self) -> Item {
        let product = self.product;
        let product_title = product
            .as_ref()
            .and_then(|product| json::non_empty(product.title.clone()));
        let default_variant = product
            .as_ref()
            .and_then(|product| product.has_only_default_variant)
            .unwrap_or(false);
        let title = json::non_empty(self.title).filter(|title| title != DEFAULT_TITLE);
        let name = match (product_title, title) {
            (Some(product), Some(title)) if !default_variant => format!("{product} - {title}"),
            (Some(product), _) => product,
            (None, Some(title)) => title,
            (None, None) => self.id.clone(),
        };
        let (tracked, cost) = match self.inventory_item {
            Some(item) => (
                item.tracked.unwrap_or(false),
                item.unit_cost.and_then(|cost| cost.amount),
            ),
            None => (false, None),
        };
        let side = |price: Amount| ItemSide {
            description: None,
            unit_price: Some(price.money()),
            account_ref: None,
            tax_rate_ref: None,
        };
        let modified = [
            json::timestamp(self.updated_at.as_deref()),
            product
                .as_ref()
                .and_then(|product| json::timestamp(product.updated_at.as_deref())),
        ]
        .into_iter()
        .flatten()
        .max();
        Item {
            code: json::non_empty(self.sku),
            name,
            item_type: if tracked {
                ItemType::Inventory
            } else {
                ItemType::NonInventory
            },
            status: item_status(product.as_ref().and_then(|p| p.status.as_deref())),
            sales: self.price.map(side),
            purchases: cost.map(side),
            quantity_on_hand: self
                .inventory_quantity
                .filter(|_| tracked)
                .map(Quantity::units),
            source_modified_date: modified,
            item_id: self.id,
        }
    }
}

/// What Shopify's changes say of deletions: a deleted variant or product
/// just stops being listed, so the daily full fetch reconciles (as for
/// orders and customers).
const CHANGES: Option<Changes> = Some(Changes::with(Deletions::OnlyByFullFetch));

/// The variants query's variables for what changed since `since`, when
/// given: the search filter alone (no sort key, which variants lack).
pub(super) fn variants_variables(since: Option<DateTime<Utc>>) -> serde_json::Value {
    match since {
        Some(since) => json!({"query": updated_since(since)}),
        None => json!({}),
    }
}

impl ShopifyConnector {
    /// A page of variants as items (changed since `since`, when given).
    async fn variants(
        &self,
        credentials: &ShopifyAuthorization,
        since: Option<DateTime<Utc>>,
        cursor: Option<String>,
    ) -> Result<Fetched<Item>, ConnectorError> {
        let (variants, next) = self
            .list(
                credentials,
                "a page of product variants",
                VARIANTS_QUERY,
                cursor,
                variants_variables(since),
                |data: VariantsData| data.product_variants,
            )
            .await?;
        let read = variants.read(|variant| Ok(Some(variant.into_record())));
        Ok(Fetched::read(read, next))
    }
}

impl Syncs<Items> for ShopifyConnector {
    const CHANGES: Option<Changes> = CHANGES;

    async fn page(
        &self,
        credentials: &ShopifyAuthorization,
        cursor: Option<String>,
    ) -> Result<Fetched<Item>, ConnectorError> {
        self.variants(credentials, None, cursor).await
    }

    async fn changed_page(
        &self,
        credentials: &ShopifyAuthorization,
        since: Since,
        cursor: Option<String>,
    ) -> Result<Fetched<Item>, ConnectorError> {
        self.variants(credentials, Some(since.time), cursor).await
    }
}

#[cfg(test)]
mod tests {
    //! The variants query held to Shopify's Admin API schema
    //! (`tests/contracts/graphql/`), and the answers it allows read.

    use super::*;
    use crate::platforms::kit::graphql_contract::{
        self as contract, Sample, all_null, dotted, with,
    };
    use crate::platforms::kit::records::Read;
    use crate::platforms::shopify::connector::{API_VERSION, PAGE_SIZE};
    use crate::platforms::shopify::mapping::{Answer, Outcome};

    fn schema() -> apollo_compiler::validation::Valid<apollo_compiler::Schema> {
        contract::schema(&format!("shopify-admin-{API_VERSION}.graphql"))
    }

    /// An answer's `data`, read as the connector reads it, as items.
    fn items(data: &serde_json::Value) -> Result<Vec<Item>, String> {
        let text = json!({ "data": data }).to_string();
        let answer: Answer<VariantsData> =
            serde_json::from_str(&text).map_err(|error| format!("does not read: {error}"))?;
        let Ok(Outcome::Data(data)) = answer.outcome("a test", "token") else {
            return Err("no data".to_owned());
        };
        let read: Read<Item> = data
            .product_variants
            .nodes
            .read(|variant| Ok(Some(variant.into_record())));
        match read.issues.first() {
            None => Ok(read.records),
            Some(issue) => Err(format!("does not read: {issue:?}")),
        }
    }

    #[test]
    fn the_variants_query_is_valid_with_the_variables_it_is_sent() {
        let schema = schema();
        let document = contract::validate(&schema, VARIANTS_QUERY, "VARIANTS_QUERY")
            .unwrap_or_else(|errors| panic!("{errors}"));
        let since = DateTime::parse_from_rfc3339("2026-11-27T08:55:00Z")
            .map(|since| since.with_timezone(&Utc))
            .unwrap_or_else(|error| panic!("{error}"));
        for variables in [
            crate::platforms::shopify::connector::page_variables(
                PAGE_SIZE,
                None,
                variants_variables(None),
            ),
            crate::platforms::shopify::connector::page_variables(
                PAGE_SIZE,
                Some("eyJsYXN0X2lkIjo0fQ==".into()),
                variants_variables(Some(since)),
            ),
        ] {
            contract::coerce_variables(&schema, &document, &variables)
                .unwrap_or_else(|error| panic!("{variables}: {error}"));
        }
        assert_eq!(
            variants_variables(Some(since)),
            json!({"query": "updated_at:>'2026-11-27T08:55:00Z'"})
        );
    }

    #[test]
    fn every_variant_shopify_may_answer_reads_and_every_product_status_maps() {
        let schema = schema();
        let document = contract::validate(&schema, VARIANTS_QUERY, "VARIANTS_QUERY")
            .unwrap_or_else(|errors| panic!("{errors}"));
        let sample = Sample::of(&schema, &document);
        let read = items(&sample.data).unwrap_or_else(|error| panic!("every field: {error}"));
        assert_eq!(read.len(), 1);
        for place in &sample.nullable {
            items(&with(&sample.data, place, serde_json::Value::Null))
                .unwrap_or_else(|error| panic!("{} null: {error}", dotted(place)));
        }
        items(&all_null(&sample.data, &sample.nullable))
            .unwrap_or_else(|error| panic!("every nullable field null: {error}"));
        let mut statuses = 0;
        for (at, values) in &sample.enums {
            let field = dotted(at);
            match field.as_str() {
                "productVariants.nodes.0.product.status" => {
                    statuses += 1;
                    for value in values {
                        let item = items(&with(&sample.data, at, json!(value)))
                            .unwrap_or_else(|error| panic!("{value}: {error}"))
                            .remove(0);
                        let archived = value == "ARCHIVED";
                        assert_eq!(item.status == ItemStatus::Archived, archived, "{value}");
                    }
                }
                // A currency code, passed on as it is (items carry none).
                "productVariants.nodes.0.inventoryItem.unitCost.currencyCode" => {}
                _ => panic!("{field} is an enum the connector reads: map each of its values"),
            }
        }
        assert_eq!(statuses, 1);
    }

    #[test]
    fn a_default_variant_is_named_by_its_product_and_others_by_both() {
        let variant = |title: &str, default: bool| ShopifyVariant {
            id: "gid://shopify/ProductVariant/1".to_owned(),
            title: Some(title.to_owned()),
            sku: Some(String::new()),
            price: None,
            inventory_quantity: Some(4),
            updated_at: Some("2026-10-01T10:00:00Z".to_owned()),
            inventory_item: None,
            product: Some(Product {
                title: Some("Tee".to_owned()),
                status: Some("DRAFT".to_owned()),
                has_only_default_variant: Some(default),
                updated_at: Some("2026-10-02T10:00:00Z".to_owned()),
            }),
        };
        let default = variant(DEFAULT_TITLE, true).into_record();
        assert_eq!(default.name, "Tee");
        assert_eq!(default.code, None);
        assert_eq!(default.status, ItemStatus::Active);
        assert_eq!(default.item_type, ItemType::NonInventory);
        assert_eq!(
            default.quantity_on_hand, None,
            "untracked stock is not read"
        );
        assert_eq!(default.sales, None);
        let modified = default.source_modified_date.map(|at| at.0.to_rfc3339());
        assert_eq!(modified.as_deref(), Some("2026-10-02T10:00:00+00:00"));
        assert_eq!(variant("Large", false).into_record().name, "Tee - Large");
    }
}
