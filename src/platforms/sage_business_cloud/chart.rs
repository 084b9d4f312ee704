//! Sage's chart and settings, and how they become ours: ledger accounts
//! (`GET /ledger_accounts`), tax rates (`GET /tax_rates`), products and
//! services (`GET /products`, `GET /services`) and the business itself
//! (`GET /financial_settings`, `GET /businesses/{id}`). Sources: `NOTES.md`,
//! "Accounting model".

use chrono::Datelike;
use serde::Deserialize;
use serde_json::Value;

use super::mapping::{Link, currency_code};
use crate::data::accounts::{Account, AccountClassification, AccountStatus};
use crate::data::company_info::{Address, AddressType, CompanyInfo, YearStart};
use crate::data::items::{Item, ItemSide, ItemStatus, ItemType};
use crate::data::tax_rates::{TaxRate, TaxRateComponent, TaxRateStatus};
use crate::platforms::kit::json::{self, Amount};
use crate::platforms::kit::records::Keyed;
use crate::platforms::kit::status::find;

impl Keyed for SageLedgerAccount {
    const ID: &'static str = "/id";
}

impl Keyed for SageTaxRate {
    const ID: &'static str = "/id";
}

impl Keyed for SageCatalogItem {
    const ID: &'static str = "/id";
}

/// Sage's ledger account types (`ledger_account_type.id`) and where each
/// sits in the statements (`NOTES.md`: the ids are not in Sage's document).
const CLASSIFICATIONS: &[(&str, AccountClassification)] = &[
    ("SALES", AccountClassification::Income),
    ("OTHER_INCOME", AccountClassification::Income),
    ("DIRECT_EXPENSES", AccountClassification::Expense),
    ("OVERHEADS", AccountClassification::Expense),
    ("DEPRECIATION", AccountClassification::Expense),
    ("CURRENT_ASSETS", AccountClassification::Asset),
    ("FIXED_ASSETS", AccountClassification::Asset),
    ("FUTURE_ASSETS", AccountClassification::Asset),
    ("BANK", AccountClassification::Asset),
    ("CURRENT_LIABILITY", AccountClassification::Liability),
    ("FUTURE_LIABILITY", AccountClassification::Liability),
    ("LINE_OF_CREDIT", AccountClassification::Liability),
    ("TAXES", AccountClassification::Liability),
    ("EQUITY", AccountClassification::Equity),
];

/// The classification of a ledger account type id; another id (`SPECIAL`)
/// is `Unknown`.
pub(super) fn classification(type_id: &str) -> AccountClassification {
    find(CLASSIFICATIONS, type_id).unwrap_or(AccountClassification::Unknown)
}

/// A code Sage may write as a number or as a string.
fn code_text(value: Option<Value>) -> Option<String> {
    match value? {
        Value::String(text) => json::non_empty(Some(text)),
        Value::Number(number) => Some(number.to_string()),
        _ => None,
    }
}

/// A ledger account as `GET /ledger_accounts?attributes=all` gives it.
#[derive(Deserialize)]
pub(super) struct SageLedgerAccount {
    id: String,
    name: Option<String>,
    displayed_as: Option<String>,
    display_name: Option<String>,
    nominal_code: Option<Value>,
    ledger_account_type: Option<Link>,
    included_in_chart: Option<bool>,
    updated_at: Option<String>,
}

impl SageLedgerAccount {
    /// Our account: `BANK` accounts are bank accounts; one left out of the
    /// chart (`included_in_chart: false`, Sage's way to retire an account,
    /// which cannot be deleted) is archived. Ledger accounts are kept in
    /// the base currency and have no plain balance (only one over a date
    /// range), so both are null.
    pub(super) fn into_record(self) -> Account {
        let account_type = self
            .ledger_account_type
            .and_then(|kind| json::non_empty(kind.id));
        let kind = account_type.as_deref().unwrap_or("");
        Account {
            nominal_code: code_text(self.nominal_code),
            account_name: json::non_empty(self.name)
                .or_else(|| json::non_empty(self.displayed_as))
                .unwrap_or_else(|| self.id.clone()),
            description: json::non_empty(self.display_name),
            classification: classification(kind),
            is_bank_account: kind == "BANK",
            status: if self.included_in_chart == Some(false) {
                AccountStatus::Archived
            } else {
                AccountStatus::Active
            },
            currency: None,
            current_balance: None,
            source_modified_date: json::timestamp(self.updated_at.as_deref()),
            account_type,
            account_id: self.id,
        }
    }
}

/// A tax rate as `GET /tax_rates?attributes=all` gives it.
#[derive(Deserialize)]
pub(super) struct SageTaxRate {
    id: String,
    name: Option<String>,
    displayed_as: Option<String>,
    percentage: Option<Amount>,
    is_visible: Option<bool>,
    is_combined_rate: Option<bool>,
    #[serde(default, deserialize_with = "json::list_or_null")]
    component_tax_rates: Vec<SageComponentRate>,
    updated_at: Option<String>,
}

/// One rate of a combined tax rate.
#[derive(Deserialize)]
struct SageComponentRate {
    id: Option<String>,
    name: Option<String>,
    percentage: Option<Amount>,
}

impl SageTaxRate {
    /// Our tax rate: a combined rate's components, else the rate itself;
    /// one Sage hides (`is_visible: false`) is archived.
    pub(super) fn into_record(self) -> TaxRate {
        let name = json::non_empty(self.name)
            .or_else(|| json::non_empty(self.displayed_as))
            .unwrap_or_else(|| self.id.clone());
        let rate = json::quantity(self.percentage);
        let components =
            if self.is_combined_rate == Some(true) && !self.component_tax_rates.is_empty() {
                self.component_tax_rates
                    .into_iter()
                    .map(|component| TaxRateComponent {
                        name: json::non_empty(component.name)
                            .or_else(|| json::non_empty(component.id))
                            .unwrap_or_default(),
                        rate: json::quantity(component.percentage),
                        is_compound: false,
                    })
                    .collect()
            } else {
                vec![TaxRateComponent {
                    name: name.clone(),
                    rate,
                    is_compound: false,
                }]
            };
        TaxRate {
            code: None,
            components,
            name,
            effective_tax_rate: rate,
            status: if self.is_visible == Some(false) {
                TaxRateStatus::Archived
            } else {
                TaxRateStatus::Active
            },
            source_modified_date: json::timestamp(self.updated_at.as_deref()),
            tax_rate_id: self.id,
        }
    }
}

/// A product (`GET /products`) or a service (`GET /services`): they share
/// their accounts and tax rates; a product has `sales_prices`, a service
/// `sales_rates`.
#[derive(Deserialize)]
pub(super) struct SageCatalogItem {
    id: String,
    item_code: Option<String>,
    description: Option<String>,
    purchase_description: Option<String>,
    catalog_item_type: Option<Link>,
    sales_ledger_account: Option<Link>,
    purchase_ledger_account: Option<Link>,
    sales_tax_rate: Option<Link>,
    purchase_tax_rate: Option<Link>,
    cost_price: Option<Amount>,
    #[serde(default, deserialize_with = "json::list_or_null")]
    sales_prices: Vec<SagePrice>,
    #[serde(default, deserialize_with = "json::list_or_null")]
    sales_rates: Vec<SageRate>,
    active: Option<bool>,
    deleted_at: Option<String>,
    updated_at: Option<String>,
}

/// A product's price (`sales_prices[]`).
#[derive(Deserialize)]
struct SagePrice {
    price_name: Option<String>,
    price: Option<Amount>,
}

/// A service's rate (`sales_rates[]`).
#[derive(Deserialize)]
struct SageRate {
    rate_name: Option<String>,
    rate: Option<Amount>,
}

/// Which list an item came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Catalog {
    /// `GET /products`: stock and non-stock products.
    Products,
    /// `GET /services`.
    Services,
}

impl SageCatalogItem {
    /// Our item; `None` for one Sage deleted. A service is a `Service`; a
    /// product of `catalog_item_type` `PRODUCT` is non-stock, another
    /// (a stock item) `Inventory`. The sale price is the one named "Sales
    /// Price" (or rate), else the first; `active: null` is active.
    pub(super) fn into_record(self, catalog: Catalog) -> Option<Item> {
        if json::non_empty(self.deleted_at).is_some() {
            return None;
        }
        let item_type = match catalog {
            Catalog::Services => ItemType::Service,
            Catalog::Products => match self.catalog_item_type.and_then(|kind| kind.id).as_deref() {
                Some("PRODUCT") => ItemType::NonInventory,
                Some("SERVICE") => ItemType::Service,
                Some(_) => ItemType::Inventory,
                None => ItemType::Unknown,
            },
        };
        let price = match catalog {
            Catalog::Products => named_first(
                self.sales_prices
                    .into_iter()
                    .map(|price| (price.price_name, price.price)),
                "Sales Price",
            ),
            Catalog::Services => named_first(
                self.sales_rates
                    .into_iter()
                    .map(|rate| (rate.rate_name, rate.rate)),
                "Sales Rate",
            ),
        };
        let sales = ItemSide {
            description: json::non_empty(self.description.clone()),
            unit_price: price,
            account_ref: Link::account(self.sales_ledger_account),
            tax_rate_ref: Link::tax_rate(self.sales_tax_rate),
        };
        let purchases = ItemSide {
            description: json::non_empty(self.purchase_description),
            unit_price: self.cost_price.map(Amount::money),
            account_ref: Link::account(self.purchase_ledger_account),
            tax_rate_ref: Link::tax_rate(self.purchase_tax_rate),
        };
        let bought = purchases.account_ref.is_some() || purchases.unit_price.is_some();
        Some(Item {
            code: json::non_empty(self.item_code.clone()),
            name: json::non_empty(self.description)
                .or_else(|| json::non_empty(self.item_code))
                .unwrap_or_else(|| self.id.clone()),
            item_type,
            status: if self.active == Some(false) {
                ItemStatus::Archived
            } else {
                ItemStatus::Active
            },
            sales: Some(sales),
            purchases: bought.then_some(purchases),
            quantity_on_hand: None,
            source_modified_date: json::timestamp(self.updated_at.as_deref()),
            item_id: self.id,
        })
    }
}

/// The amount named `name`, else the first.
fn named_first(
    amounts: impl Iterator<Item = (Option<String>, Option<Amount>)>,
    name: &str,
) -> Option<crate::data::money::Money> {
    let amounts: Vec<(Option<String>, Option<Amount>)> = amounts.collect();
    amounts
        .iter()
        .find(|(named, _)| named.as_deref() == Some(name))
        .or_else(|| amounts.first())
        .and_then(|(_, amount)| amount.map(Amount::money))
}

/// `GET /financial_settings`: the business's books.
#[derive(Deserialize)]
pub(super) struct SageFinancialSettings {
    year_end_date: Option<String>,
    accounts_start_date: Option<String>,
    base_currency: Option<Link>,
    tax_number: Option<String>,
}

impl SageFinancialSettings {
    /// The day the business's accounts start (`accounts_start_date`).
    pub(super) fn accounts_start(&self) -> Option<chrono::NaiveDate> {
        self.accounts_start_date.as_deref().and_then(json::date)
    }
}

/// `GET /businesses/{id}`: the business's profile.
#[derive(Deserialize)]
pub(super) struct SageBusinessProfile {
    id: String,
    name: Option<String>,
    displayed_as: Option<String>,
    address_line_1: Option<String>,
    address_line_2: Option<String>,
    city: Option<String>,
    region: Option<String>,
    postal_code: Option<String>,
    country: Option<Link>,
    telephone: Option<String>,
    mobile: Option<String>,
    website: Option<String>,
    created_at: Option<String>,
    updated_at: Option<String>,
}

impl SageBusinessProfile {
    /// Our company info, from the profile and the financial settings: the
    /// year starts the day after `year_end_date`; the VAT number is the
    /// tax number. Sage has no company registration number outside France.
    pub(super) fn into_record(self, settings: SageFinancialSettings) -> CompanyInfo {
        let address = Address {
            address_type: AddressType::Street,
            line1: json::non_empty(self.address_line_1),
            line2: json::non_empty(self.address_line_2),
            city: json::non_empty(self.city),
            region: json::non_empty(self.region),
            postal_code: json::non_empty(self.postal_code),
            country: self
                .country
                .and_then(|country| json::non_empty(country.displayed_as).or(country.id)),
        };
        let has_address =
            address.line1.is_some() || address.city.is_some() || address.postal_code.is_some();
        CompanyInfo {
            company_name: json::non_empty(self.name)
                .or_else(|| json::non_empty(self.displayed_as))
                .unwrap_or_else(|| self.id.clone()),
            legal_name: None,
            registration_number: None,
            tax_number: json::non_empty(settings.tax_number),
            base_currency: currency_code(settings.base_currency),
            financial_year_start: settings
                .year_end_date
                .as_deref()
                .and_then(json::date)
                .and_then(|end| YearStart::after_year_end(end.month(), end.day())),
            addresses: if has_address {
                vec![address]
            } else {
                Vec::new()
            },
            phone: json::non_empty(self.telephone).or_else(|| json::non_empty(self.mobile)),
            website: json::non_empty(self.website),
            created_date: json::timestamp(self.created_at.as_deref()),
            source_modified_date: json::timestamp(self.updated_at.as_deref()),
            company_info_id: self.id,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ledger_account_types_have_their_classification() {
        assert_eq!(classification("SALES"), AccountClassification::Income);
        assert_eq!(classification("OVERHEADS"), AccountClassification::Expense);
        assert_eq!(classification("BANK"), AccountClassification::Asset);
        assert_eq!(
            classification("CURRENT_LIABILITY"),
            AccountClassification::Liability
        );
        assert_eq!(classification("EQUITY"), AccountClassification::Equity);
        assert_eq!(classification("SPECIAL"), AccountClassification::Unknown);
    }

    #[test]
    fn nominal_codes_are_read_as_numbers_or_strings() {
        assert_eq!(code_text(Some(Value::from(4000))).as_deref(), Some("4000"));
        assert_eq!(
            code_text(Some(Value::from("0040"))).as_deref(),
            Some("0040")
        );
        assert_eq!(code_text(Some(Value::Null)), None);
    }
}
