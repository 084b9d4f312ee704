//! QuickBooks Online's company (`companyinfo`, with the home currency from
//! `preferences`) and its items, and how they become our company info and
//! items.

use serde::Deserialize;

use super::mapping::{MetaData, Phone, Reference};
use crate::data::accounts::AccountRef;
use crate::data::company_info::{Address, AddressType, CompanyInfo, YearStart};
use crate::data::items::{Item, ItemSide, ItemStatus, ItemType};
use crate::platforms::kit::json::{self, Amount};
use crate::platforms::kit::records::{Each, Keyed};

/// `GET /companyinfo/{realmId}`'s answer.
#[derive(Deserialize)]
pub(super) struct CompanyInfoAnswer {
    #[serde(rename = "CompanyInfo")]
    pub(super) company_info: QboCompanyInfo,
}

/// The company as QuickBooks writes it (the `CompanyInfo` entity).
#[derive(Deserialize)]
#[serde(rename_all = "PascalCase")]
pub(super) struct QboCompanyInfo {
    company_name: Option<String>,
    legal_name: Option<String>,
    company_addr: Option<PhysicalAddress>,
    legal_addr: Option<PhysicalAddress>,
    primary_phone: Option<Phone>,
    web_addr: Option<WebAddress>,
    fiscal_year_start_month: Option<String>,
    company_start_date: Option<String>,
    meta_data: Option<MetaData>,
}

#[derive(Deserialize)]
#[serde(rename_all = "PascalCase")]
struct PhysicalAddress {
    line1: Option<String>,
    line2: Option<String>,
    line3: Option<String>,
    city: Option<String>,
    country_sub_division_code: Option<String>,
    postal_code: Option<String>,
    country: Option<String>,
}

#[derive(Deserialize)]
struct WebAddress {
    #[serde(rename = "URI")]
    uri: Option<String>,
}

/// `GET /preferences`' answer: the company's home currency.
#[derive(Deserialize)]
pub(super) struct PreferencesAnswer {
    #[serde(rename = "Preferences")]
    preferences: Preferences,
}

#[derive(Deserialize)]
#[serde(rename_all = "PascalCase")]
struct Preferences {
    currency_prefs: Option<CurrencyPrefs>,
}

#[derive(Deserialize)]
#[serde(rename_all = "PascalCase")]
struct CurrencyPrefs {
    home_currency: Option<Reference>,
}

impl PreferencesAnswer {
    /// The currency the company's books are kept in.
    pub(super) fn home_currency(self) -> Option<String> {
        self.preferences
            .currency_prefs
            .and_then(|prefs| prefs.home_currency)
            .and_then(|currency| json::non_empty(currency.value))
    }
}

/// The month QuickBooks names (`January`), 1 to 12.
fn month_named(name: &str) -> Option<u32> {
    const MONTHS: [&str; 12] = [
        "January",
        "February",
        "March",
        "April",
        "May",
        "June",
        "July",
        "August",
        "September",
        "October",
        "November",
        "December",
    ];
    MONTHS
        .iter()
        .position(|month| month.eq_ignore_ascii_case(name))
        .map(|index| index as u32 + 1)
}

impl PhysicalAddress {
    fn into_address(self, address_type: AddressType) -> Address {
        let rest: Vec<String> = [self.line2, self.line3]
            .into_iter()
            .filter_map(json::non_empty)
            .collect();
        Address {
            address_type,
            line1: json::non_empty(self.line1),
            line2: (!rest.is_empty()).then(|| rest.join(", ")),
            city: json::non_empty(self.city),
            region: json::non_empty(self.country_sub_division_code),
            postal_code: json::non_empty(self.postal_code),
            country: json::non_empty(self.country),
        }
    }
}

impl QboCompanyInfo {
    /// Our company info for the company `realm_id`, whose books are in
    /// `base_currency` (from the preferences). QuickBooks' financial year
    /// starts on the first of `FiscalYearStartMonth`; its legal address is
    /// the registered one, its company address where it trades. It gives no
    /// registration or tax number.
    pub(super) fn into_record(self, realm_id: &str, base_currency: Option<String>) -> CompanyInfo {
        let addresses = [
            self.legal_addr
                .map(|address| address.into_address(AddressType::Registered)),
            self.company_addr
                .map(|address| address.into_address(AddressType::Street)),
        ]
        .into_iter()
        .flatten()
        .collect();
        CompanyInfo {
            company_info_id: realm_id.to_owned(),
            company_name: json::non_empty(self.company_name).unwrap_or_else(|| realm_id.to_owned()),
            legal_name: json::non_empty(self.legal_name),
            registration_number: None,
            tax_number: None,
            base_currency,
            financial_year_start: self
                .fiscal_year_start_month
                .as_deref()
                .and_then(month_named)
                .map(|month| YearStart { month, day: 1 }),
            addresses,
            phone: self
                .primary_phone
                .and_then(|phone| json::non_empty(phone.free_form_number)),
            website: self.web_addr.and_then(|web| json::non_empty(web.uri)),
            created_date: json::timestamp(self.company_start_date.as_deref()),
            source_modified_date: json::timestamp(
                self.meta_data
                    .and_then(|meta| meta.last_updated_time)
                    .as_deref(),
            ),
        }
    }
}

/// Items a query found.
#[derive(Deserialize, Default)]
pub(super) struct ItemList {
    #[serde(rename = "Item", default)]
    pub(super) item: Each<QboItem>,
}

/// An item as QuickBooks writes it (the `Item` entity).
#[derive(Deserialize)]
#[serde(rename_all = "PascalCase")]
pub(super) struct QboItem {
    id: String,
    name: Option<String>,
    sku: Option<String>,
    #[serde(rename = "Type")]
    kind: Option<String>,
    active: Option<bool>,
    description: Option<String>,
    purchase_desc: Option<String>,
    unit_price: Option<Amount>,
    purchase_cost: Option<Amount>,
    income_account_ref: Option<Reference>,
    expense_account_ref: Option<Reference>,
    qty_on_hand: Option<Amount>,
    track_qty_on_hand: Option<bool>,
    meta_data: Option<MetaData>,
}

impl Keyed for QboItem {
    const ID: &'static str = "/Id";
}

impl QboItem {
    /// Our item; `None` for a `Category` (a heading for items, not one
    /// itself). `Group` (a bundle) has no equivalent type. An item is sold
    /// when it has an income account, bought when it has an expense
    /// account; its tax codes name tax codes, not rates, so no tax rate is
    /// given.
    pub(super) fn into_record(self) -> Option<Item> {
        let item_type = match self.kind.as_deref() {
            Some("Inventory") => ItemType::Inventory,
            Some("NonInventory") => ItemType::NonInventory,
            Some("Service") => ItemType::Service,
            Some("Category") => return None,
            _ => ItemType::Unknown,
        };
        let sales = self.income_account_ref.map(|account| ItemSide {
            description: json::non_empty(self.description),
            unit_price: self.unit_price.map(Amount::money),
            account_ref: AccountRef::to(account.value, account.name),
            tax_rate_ref: None,
        });
        let purchases = self.expense_account_ref.map(|account| ItemSide {
            description: json::non_empty(self.purchase_desc),
            unit_price: self.purchase_cost.map(Amount::money),
            account_ref: AccountRef::to(account.value, account.name),
            tax_rate_ref: None,
        });
        Some(Item {
            code: json::non_empty(self.sku),
            name: json::non_empty(self.name).unwrap_or_else(|| self.id.clone()),
            item_type,
            status: if self.active == Some(false) {
                ItemStatus::Archived
            } else {
                ItemStatus::Active
            },
            sales,
            purchases,
            quantity_on_hand: (self.track_qty_on_hand == Some(true))
                .then(|| self.qty_on_hand.map(Amount::quantity))
                .flatten(),
            source_modified_date: json::timestamp(
                self.meta_data
                    .and_then(|meta| meta.last_updated_time)
                    .as_deref(),
            ),
            item_id: self.id,
        })
    }
}
