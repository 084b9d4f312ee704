//! FreshBooks' taxes (`GET …/taxes/taxes`) and items (`…/items/items`), and
//! how they become our tax rates and items: a tax is its percentage, a
//! compound one applied on top of the first tax of a line; an item is what
//! an invoice line sells, at its unit cost, with its default tax. Sources:
//! `NOTES.md`, "Accounting model".

use serde::Deserialize;

use super::mapping::{FbId, FbMoney, amount, eastern};
use crate::data::items::{Item, ItemSide, ItemStatus, ItemType};
use crate::data::tax_rates::{TaxRate, TaxRateComponent, TaxRateRef, TaxRateStatus};
use crate::platforms::kit::json::{self, Amount};
use crate::platforms::kit::records::{Each, Keyed, Unreadable};

impl Keyed for FreshBooksTax {
    const ID: &'static str = "/id";
}

impl Keyed for FreshBooksItem {
    const ID: &'static str = "/id";
}

/// A page of `GET …/taxes/taxes`.
#[derive(Deserialize)]
pub(super) struct TaxesPage {
    /// The taxes.
    #[serde(default)]
    pub(super) taxes: Each<FreshBooksTax>,
    /// How many pages the list has.
    pub(super) pages: Option<u64>,
    /// How many taxes the list has.
    pub(super) total: Option<u64>,
}

/// A page of `GET …/items/items`.
#[derive(Deserialize)]
pub(super) struct ItemsPage {
    /// The items.
    #[serde(default)]
    pub(super) items: Each<FreshBooksItem>,
    /// How many pages the list has.
    pub(super) pages: Option<u64>,
    /// How many items the list has.
    pub(super) total: Option<u64>,
}

/// A tax as FreshBooks writes it.
#[derive(Deserialize)]
pub(super) struct FreshBooksTax {
    id: Option<FbId>,
    taxid: Option<FbId>,
    name: Option<String>,
    amount: Option<Amount>,
    compound: Option<bool>,
    updated: Option<String>,
}

impl FreshBooksTax {
    /// Our tax rate: `amount` is its percentage, its one component says
    /// whether it compounds. FreshBooks' `number` is the business's
    /// registration number for the tax, not a code of the rate, so the
    /// rate has no code. A deleted tax is no longer listed: taxes have no
    /// `vis_state`, and every listed one is active.
    pub(super) fn into_record(self) -> Result<TaxRate, Unreadable> {
        let tax_rate_id = self
            .id
            .and_then(FbId::named)
            .or_else(|| self.taxid.and_then(FbId::named))
            .ok_or_else(|| Unreadable::field("id", "is missing, and so is taxid"))?;
        let rate = json::quantity(self.amount);
        let name = json::non_empty(self.name).unwrap_or_else(|| tax_rate_id.clone());
        Ok(TaxRate {
            code: None,
            components: vec![TaxRateComponent {
                name: name.clone(),
                rate,
                is_compound: self.compound == Some(true),
            }],
            name,
            effective_tax_rate: rate,
            status: TaxRateStatus::Active,
            source_modified_date: self.updated.as_deref().and_then(eastern),
            tax_rate_id,
        })
    }
}

/// An item as FreshBooks writes it.
#[derive(Deserialize)]
pub(super) struct FreshBooksItem {
    id: Option<FbId>,
    itemid: Option<FbId>,
    name: Option<String>,
    description: Option<String>,
    sku: Option<String>,
    unit_cost: Option<FbMoney>,
    inventory: Option<Amount>,
    tax1: Option<FbId>,
    vis_state: Option<i64>,
    updated: Option<String>,
}

impl FreshBooksItem {
    /// Our item: its code the `sku`; an item that counts its `inventory`
    /// is `Inventory` with that quantity on hand, any other `NonInventory`
    /// (FreshBooks does not tell goods from services). It is sold at its
    /// `unit_cost` with its first default tax (`tax1`, 0 for none);
    /// FreshBooks keeps no purchase side or accounts for items. `vis_state`
    /// other than 0 is archived.
    pub(super) fn into_record(self) -> Result<Item, Unreadable> {
        let item_id = self
            .id
            .and_then(FbId::named)
            .or_else(|| self.itemid.and_then(FbId::named))
            .ok_or_else(|| Unreadable::field("id", "is missing, and so is itemid"))?;
        let on_hand = self.inventory.map(Amount::quantity);
        Ok(Item {
            code: json::non_empty(self.sku),
            name: json::non_empty(self.name).unwrap_or_else(|| item_id.clone()),
            item_type: if on_hand.is_some() {
                ItemType::Inventory
            } else {
                ItemType::NonInventory
            },
            status: match self.vis_state {
                None | Some(0) => ItemStatus::Active,
                Some(_) => ItemStatus::Archived,
            },
            sales: Some(ItemSide {
                description: json::non_empty(self.description),
                unit_price: self.unit_cost.map(|cost| amount(Some(cost))),
                account_ref: None,
                tax_rate_ref: TaxRateRef::to(self.tax1.and_then(FbId::named), None),
            }),
            purchases: None,
            quantity_on_hand: on_hand,
            source_modified_date: self.updated.as_deref().and_then(eastern),
            item_id,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::data::money::Quantity;

    #[test]
    fn a_tax_is_its_percentage_and_says_whether_it_compounds() {
        let tax: FreshBooksTax = serde_json::from_str(
            r#"{"id": 7, "taxid": 7, "name": "QST", "number": "1234567890TQ0001", "amount": "9.975",
                "compound": true, "updated": "2026-01-15 10:00:00"}"#,
        )
        .expect("a tax");
        let rate = tax.into_record().expect("read");
        assert_eq!(rate.tax_rate_id, "7");
        assert_eq!(rate.effective_tax_rate, Quantity(99_750));
        assert!(rate.components[0].is_compound);
        assert_eq!(rate.code, None);
    }

    #[test]
    fn an_item_that_counts_inventory_is_inventory_and_tax_zero_is_none() {
        let item: FreshBooksItem = serde_json::from_str(
            r#"{"id": 11, "name": "Widget", "sku": "W-1", "inventory": "12", "qty": "1",
                "unit_cost": {"amount": "4.50", "code": "CAD"}, "tax1": 0, "tax2": 0, "vis_state": 0}"#,
        )
        .expect("an item");
        let item = item.into_record().expect("read");
        assert_eq!(item.item_type, ItemType::Inventory);
        assert_eq!(item.quantity_on_hand, Some(Quantity::units(12)));
        assert_eq!(item.sales.and_then(|side| side.tax_rate_ref), None);
    }
}
