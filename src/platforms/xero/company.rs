//! What Xero says of the organisation itself (`GET /Organisation`) and of
//! what it sells and buys (`GET /Items`), and how they become our company
//! info and items. Xero's items name accounts by code, so the connector
//! reads the chart too and gives each reference the account's id.
//! Sources: `NOTES.md`.

use std::collections::HashMap;

use serde::Deserialize;

use super::mapping::{XeroPhone, updated};
use crate::data::accounts::AccountRef;
use crate::data::company_info::{Address, AddressType, CompanyInfo, YearStart};
use crate::data::items::{Item, ItemSide, ItemStatus, ItemType};
use crate::data::tax_rates::TaxRateRef;
use crate::platforms::kit::json::{self, Amount};
use crate::platforms::kit::records::{Each, Keyed};

/// `GET /api.xro/2.0/Organisation`: the tenant's organisation, in a list of one.
#[derive(Deserialize)]
#[serde(rename_all = "PascalCase")]
pub(super) struct OrganisationAnswer {
    pub(super) organisations: Each<XeroOrganisation>,
}

/// An organisation as Xero writes it (`Organisation` in Xero's document).
#[derive(Deserialize)]
#[serde(rename_all = "PascalCase")]
pub(super) struct XeroOrganisation {
    #[serde(rename = "OrganisationID")]
    organisation_id: String,
    name: Option<String>,
    legal_name: Option<String>,
    registration_number: Option<String>,
    tax_number: Option<String>,
    base_currency: Option<String>,
    financial_year_end_day: Option<u32>,
    financial_year_end_month: Option<u32>,
    #[serde(default, deserialize_with = "json::list_or_null")]
    addresses: Vec<XeroAddress>,
    #[serde(default, deserialize_with = "json::list_or_null")]
    phones: Vec<XeroPhone>,
    #[serde(default, deserialize_with = "json::list_or_null")]
    external_links: Vec<ExternalLink>,
    #[serde(rename = "CreatedDateUTC")]
    created_date_utc: Option<String>,
}

impl Keyed for XeroOrganisation {
    const ID: &'static str = "/OrganisationID";
}

#[derive(Deserialize)]
#[serde(rename_all = "PascalCase")]
struct XeroAddress {
    address_type: Option<String>,
    address_line1: Option<String>,
    address_line2: Option<String>,
    address_line3: Option<String>,
    address_line4: Option<String>,
    city: Option<String>,
    region: Option<String>,
    postal_code: Option<String>,
    country: Option<String>,
}

#[derive(Deserialize)]
#[serde(rename_all = "PascalCase")]
struct ExternalLink {
    link_type: Option<String>,
    url: Option<String>,
}

impl XeroOrganisation {
    /// Our company info. Xero gives the financial year's last day; ours
    /// is the day after. Xero's `STREET` address is where it trades,
    /// `POBOX` its postal address; a `DELIVERY` one is not the company's
    /// own and is left out.
    pub(super) fn into_record(self) -> CompanyInfo {
        let financial_year_start = self
            .financial_year_end_month
            .zip(self.financial_year_end_day)
            .and_then(|(month, day)| YearStart::after_year_end(month, day));
        let addresses = self
            .addresses
            .into_iter()
            .filter_map(|address| {
                let address_type = match address.address_type.as_deref() {
                    Some("STREET") => AddressType::Street,
                    Some("POBOX") => AddressType::Postal,
                    Some("DELIVERY") => return None,
                    _ => AddressType::Unknown,
                };
                let rest: Vec<String> = [
                    address.address_line2,
                    address.address_line3,
                    address.address_line4,
                ]
                .into_iter()
                .filter_map(json::non_empty)
                .collect();
                Some(Address {
                    address_type,
                    line1: json::non_empty(address.address_line1),
                    line2: (!rest.is_empty()).then(|| rest.join(", ")),
                    city: json::non_empty(address.city),
                    region: json::non_empty(address.region),
                    postal_code: json::non_empty(address.postal_code),
                    country: json::non_empty(address.country),
                })
            })
            .collect();
        let phone = ["OFFICE", "DEFAULT", "MOBILE", "DDI"]
            .iter()
            .find_map(|kind| {
                self.phones
                    .iter()
                    .filter(|phone| phone.phone_type.as_deref() == Some(kind))
                    .find_map(XeroPhone::formatted)
            });
        let website = self
            .external_links
            .into_iter()
            .find(|link| link.link_type.as_deref() == Some("Website"))
            .and_then(|link| json::non_empty(link.url));
        CompanyInfo {
            company_name: json::non_empty(self.name)
                .unwrap_or_else(|| self.organisation_id.clone()),
            legal_name: json::non_empty(self.legal_name),
            registration_number: json::non_empty(self.registration_number),
            tax_number: json::non_empty(self.tax_number),
            base_currency: json::non_empty(self.base_currency),
            financial_year_start,
            addresses,
            phone,
            website,
            created_date: updated(self.created_date_utc.as_deref()),
            // The organisation has no modified time.
            source_modified_date: None,
            company_info_id: self.organisation_id,
        }
    }
}

/// `GET /api.xro/2.0/Items`: every item in one answer (no paging).
#[derive(Deserialize)]
#[serde(rename_all = "PascalCase")]
pub(super) struct ItemsAnswer {
    pub(super) items: Each<XeroItem>,
}

/// An item as Xero writes it (`Item` in Xero's document).
#[derive(Deserialize)]
#[serde(rename_all = "PascalCase")]
pub(super) struct XeroItem {
    #[serde(rename = "ItemID")]
    item_id: String,
    code: Option<String>,
    name: Option<String>,
    description: Option<String>,
    purchase_description: Option<String>,
    is_sold: Option<bool>,
    is_purchased: Option<bool>,
    is_tracked_as_inventory: Option<bool>,
    quantity_on_hand: Option<Amount>,
    sales_details: Option<Details>,
    purchase_details: Option<Details>,
    #[serde(rename = "UpdatedDateUTC")]
    updated_date_utc: Option<String>,
}

impl Keyed for XeroItem {
    const ID: &'static str = "/ItemID";
}

/// An item's sales or purchase details (`Purchase` in Xero's document).
#[derive(Deserialize)]
#[serde(rename_all = "PascalCase")]
struct Details {
    unit_price: Option<Amount>,
    account_code: Option<String>,
    #[serde(rename = "COGSAccountCode")]
    cogs_account_code: Option<String>,
    tax_type: Option<String>,
}

/// The chart's accounts by code: what an item's account code names.
pub(super) type AccountsByCode = HashMap<String, AccountRef>;

impl XeroItem {
    /// Our item. Xero tells tracked inventory from everything else (it has
    /// no service type), and an item sold or bought by `IsSold` and
    /// `IsPurchased`; a tracked item's purchases post to its cost of goods
    /// sold account. An account code the chart does not have gives no
    /// reference.
    pub(super) fn into_record(self, accounts: &AccountsByCode) -> Item {
        let tracked = self.is_tracked_as_inventory == Some(true);
        let side = |description: Option<String>, details: Option<Details>, cost: bool| {
            let details = details?;
            let code = if cost {
                details.cogs_account_code.or(details.account_code)
            } else {
                details.account_code
            };
            Some(ItemSide {
                description: json::non_empty(description),
                unit_price: details.unit_price.map(Amount::money),
                account_ref: json::non_empty(code).and_then(|code| accounts.get(&code).cloned()),
                tax_rate_ref: TaxRateRef::to(json::non_empty(details.tax_type), None),
            })
        };
        let sales = if self.is_sold == Some(false) {
            None
        } else {
            side(self.description, self.sales_details, false)
        };
        let purchases = if self.is_purchased == Some(false) {
            None
        } else {
            side(self.purchase_description, self.purchase_details, tracked)
        };
        Item {
            code: json::non_empty(self.code),
            name: json::non_empty(self.name).unwrap_or_else(|| self.item_id.clone()),
            item_type: if tracked {
                ItemType::Inventory
            } else {
                ItemType::NonInventory
            },
            // Xero's items have no status: a deleted one leaves the list.
            status: ItemStatus::Active,
            sales,
            purchases,
            quantity_on_hand: tracked
                .then(|| self.quantity_on_hand.map(Amount::quantity))
                .flatten(),
            source_modified_date: updated(self.updated_date_utc.as_deref()),
            item_id: self.item_id,
        }
    }
}
