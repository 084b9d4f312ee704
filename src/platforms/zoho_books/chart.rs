//! Zoho Books' settings and chart, and how they become ours: the chart of
//! accounts (`GET /chartofaccounts`), taxes (`GET /settings/taxes`), items
//! (`GET /items`) and the organization (`GET /organizations/{id}`).
//! Sources: `NOTES.md`, "Accounting model".

use chrono::NaiveTime;
use serde::Deserialize;

use super::mapping::PageContext;
use super::settlements::BaseCurrency;
use crate::data::accounts::{Account, AccountClassification, AccountRef, AccountStatus};
use crate::data::company_info::{Address, AddressType, CompanyInfo, YearStart};
use crate::data::items::{Item, ItemSide, ItemStatus, ItemType};
use crate::data::tax_rates::{TaxRate, TaxRateComponent, TaxRateRef, TaxRateStatus};
use crate::platforms::kit::json::{self, Amount};
use crate::platforms::kit::records::{Each, Keyed};
use crate::timestamp::Timestamp;

/// A page of `GET /chartofaccounts`.
#[derive(Deserialize)]
pub(super) struct AccountsPage {
    pub(super) code: Option<i64>,
    pub(super) message: Option<String>,
    #[serde(default)]
    pub(super) chartofaccounts: Each<ZohoAccount>,
    pub(super) page_context: Option<PageContext>,
}

/// A page of `GET /settings/taxes`.
#[derive(Deserialize)]
pub(super) struct TaxesPage {
    pub(super) code: Option<i64>,
    pub(super) message: Option<String>,
    #[serde(default)]
    pub(super) taxes: Each<ZohoTax>,
    pub(super) page_context: Option<PageContext>,
}

/// A page of `GET /items`.
#[derive(Deserialize)]
pub(super) struct ItemsPage {
    pub(super) code: Option<i64>,
    pub(super) message: Option<String>,
    #[serde(default)]
    pub(super) items: Each<ZohoItem>,
    pub(super) page_context: Option<PageContext>,
}

/// `GET /organizations/{organization_id}`'s answer.
#[derive(Deserialize)]
pub(super) struct OrganizationAnswer {
    pub(super) code: Option<i64>,
    pub(super) message: Option<String>,
    pub(super) organization: Option<ZohoOrganization>,
}

impl Keyed for ZohoAccount {
    const ID: &'static str = "/account_id";
}

impl Keyed for ZohoTax {
    const ID: &'static str = "/tax_id";
}

impl Keyed for ZohoItem {
    const ID: &'static str = "/item_id";
}

/// An account of the chart as Zoho writes it in its list.
#[derive(Deserialize)]
pub(super) struct ZohoAccount {
    account_id: String,
    account_name: Option<String>,
    account_code: Option<String>,
    account_type: Option<String>,
    description: Option<String>,
    is_active: Option<bool>,
    currency_code: Option<String>,
    current_balance: Option<Amount>,
    last_modified_time: Option<String>,
}

/// Zoho's account types (the document's list, which it says goes on:
/// "and more"): where each sits in the statements.
const CLASSIFICATIONS: &[(&str, AccountClassification)] = &[
    ("other_asset", AccountClassification::Asset),
    ("other_current_asset", AccountClassification::Asset),
    ("cash", AccountClassification::Asset),
    ("bank", AccountClassification::Asset),
    ("fixed_asset", AccountClassification::Asset),
    ("accounts_receivable", AccountClassification::Asset),
    ("other_current_liability", AccountClassification::Liability),
    ("credit_card", AccountClassification::Liability),
    ("long_term_liability", AccountClassification::Liability),
    ("accounts_payable", AccountClassification::Liability),
    ("equity", AccountClassification::Equity),
    ("income", AccountClassification::Income),
    ("other_income", AccountClassification::Income),
    ("expense", AccountClassification::Expense),
    ("cost_of_goods_sold", AccountClassification::Expense),
    ("other_expense", AccountClassification::Expense),
];

/// The classification of Zoho's `account_type`; a type the document does
/// not list is `Unknown` (its type is still given as `accountType`).
pub(super) fn classification(account_type: &str) -> AccountClassification {
    crate::platforms::kit::status::find(CLASSIFICATIONS, account_type)
        .unwrap_or(AccountClassification::Unknown)
}

impl ZohoAccount {
    /// Our account: bank, cash and credit card accounts are bank accounts;
    /// the balance is Zoho's `current_balance` as it gives it.
    pub(super) fn into_record(self) -> Account {
        let account_type = json::non_empty(self.account_type);
        let kind = account_type.as_deref().unwrap_or("");
        Account {
            nominal_code: json::non_empty(self.account_code),
            account_name: json::non_empty(self.account_name)
                .unwrap_or_else(|| self.account_id.clone()),
            description: json::non_empty(self.description),
            classification: classification(kind),
            is_bank_account: matches!(kind, "bank" | "cash" | "credit_card"),
            status: if self.is_active == Some(false) {
                AccountStatus::Archived
            } else {
                AccountStatus::Active
            },
            currency: json::non_empty(self.currency_code),
            current_balance: self.current_balance.map(Amount::money),
            source_modified_date: json::timestamp(self.last_modified_time.as_deref()),
            account_type,
            account_id: self.account_id,
        }
    }
}

/// A tax as Zoho writes it (`GET /settings/taxes`): simple or compound.
#[derive(Deserialize)]
pub(super) struct ZohoTax {
    tax_id: String,
    tax_name: Option<String>,
    tax_percentage: Option<Amount>,
    tax_type: Option<String>,
}

impl ZohoTax {
    /// Our tax rate: one component, the tax itself (compound when its
    /// `tax_type` is `compound_tax`). Zoho's taxes have no status; a tax
    /// deleted at Zoho stops being listed.
    pub(super) fn into_record(self) -> TaxRate {
        let name = json::non_empty(self.tax_name).unwrap_or_else(|| self.tax_id.clone());
        let rate = json::quantity(self.tax_percentage);
        TaxRate {
            code: None,
            components: vec![TaxRateComponent {
                name: name.clone(),
                rate,
                is_compound: self.tax_type.as_deref() == Some("compound_tax"),
            }],
            name,
            effective_tax_rate: rate,
            status: TaxRateStatus::Active,
            source_modified_date: None,
            tax_rate_id: self.tax_id,
        }
    }
}

/// An item as Zoho writes it in its list. `item_type`, `purchase_rate`,
/// the accounts and `stock_on_hand` are in the document's requests only;
/// they are read where the answer carries them.
#[derive(Deserialize)]
pub(super) struct ZohoItem {
    item_id: String,
    name: Option<String>,
    sku: Option<String>,
    status: Option<String>,
    item_type: Option<String>,
    product_type: Option<String>,
    description: Option<String>,
    rate: Option<Amount>,
    account_id: Option<String>,
    account_name: Option<String>,
    tax_id: Option<String>,
    tax_name: Option<String>,
    purchase_description: Option<String>,
    purchase_rate: Option<Amount>,
    purchase_account_id: Option<String>,
    purchase_account_name: Option<String>,
    stock_on_hand: Option<Amount>,
    last_modified_time: Option<String>,
}

impl ZohoItem {
    /// Our item: `inventory` items are stock; otherwise the `product_type`
    /// says service or goods. An item is sold unless it is only bought
    /// (`item_type` `purchases`), and bought when it has a purchase side.
    pub(super) fn into_record(self) -> Item {
        let kind = self.item_type.as_deref();
        let item_type = match (kind, self.product_type.as_deref()) {
            (Some("inventory"), _) => ItemType::Inventory,
            (_, Some("service" | "digital_service" | "capital_service")) => ItemType::Service,
            (_, Some("goods" | "capital_goods")) => ItemType::NonInventory,
            _ => ItemType::Unknown,
        };
        let sold = kind != Some("purchases");
        let bought = matches!(
            kind,
            Some("purchases" | "sales_and_purchases" | "inventory")
        ) || self.purchase_rate.is_some()
            || self.purchase_account_id.is_some();
        let sales = sold.then(|| ItemSide {
            description: json::non_empty(self.description),
            unit_price: self.rate.map(Amount::money),
            account_ref: AccountRef::to(
                json::non_empty(self.account_id),
                json::non_empty(self.account_name),
            ),
            tax_rate_ref: TaxRateRef::to(
                json::non_empty(self.tax_id),
                json::non_empty(self.tax_name),
            ),
        });
        let purchases = bought.then(|| ItemSide {
            description: json::non_empty(self.purchase_description),
            unit_price: self.purchase_rate.map(Amount::money),
            account_ref: AccountRef::to(
                json::non_empty(self.purchase_account_id),
                json::non_empty(self.purchase_account_name),
            ),
            tax_rate_ref: None,
        });
        Item {
            code: json::non_empty(self.sku),
            name: json::non_empty(self.name).unwrap_or_else(|| self.item_id.clone()),
            item_type,
            status: if self.status.as_deref() == Some("inactive") {
                ItemStatus::Archived
            } else {
                ItemStatus::Active
            },
            sales,
            purchases,
            quantity_on_hand: self.stock_on_hand.map(Amount::quantity),
            source_modified_date: json::timestamp(self.last_modified_time.as_deref()),
            item_id: self.item_id,
        }
    }
}

/// The organization as Zoho writes it (`organization` of
/// `GET /organizations/{organization_id}`).
#[derive(Deserialize)]
pub(super) struct ZohoOrganization {
    organization_id: String,
    name: Option<String>,
    company_id_value: Option<String>,
    tax_id_value: Option<String>,
    currency_id: Option<String>,
    currency_code: Option<String>,
    fiscal_year_start_month: Option<u32>,
    account_created_date: Option<String>,
    phone: Option<String>,
    website: Option<String>,
    address: Option<ZohoAddress>,
}

/// The organization's address.
#[derive(Deserialize)]
struct ZohoAddress {
    street_address1: Option<String>,
    street_address2: Option<String>,
    city: Option<String>,
    state: Option<String>,
    zip: Option<String>,
    country: Option<String>,
}

impl ZohoOrganization {
    /// The currency its books are kept in, with Zoho's id of it.
    pub(super) fn base_currency(&self) -> BaseCurrency {
        BaseCurrency {
            id: json::non_empty(self.currency_id.clone()),
            code: json::non_empty(self.currency_code.clone()).unwrap_or_default(),
        }
    }

    /// Our company info. Zoho numbers the fiscal year's first month from 0
    /// (January); a year starts on that month's first day. The company and
    /// tax ids are the profile's `company_id_value` and `tax_id_value`,
    /// whatever the country calls them; the profile has no legal name.
    pub(super) fn into_record(self) -> CompanyInfo {
        let address = self.address.map(|address| Address {
            address_type: AddressType::Street,
            line1: json::non_empty(address.street_address1),
            line2: json::non_empty(address.street_address2),
            city: json::non_empty(address.city),
            region: json::non_empty(address.state),
            postal_code: json::non_empty(address.zip),
            country: json::non_empty(address.country),
        });
        CompanyInfo {
            company_name: json::non_empty(self.name)
                .unwrap_or_else(|| self.organization_id.clone()),
            legal_name: None,
            registration_number: json::non_empty(self.company_id_value),
            tax_number: json::non_empty(self.tax_id_value),
            base_currency: json::non_empty(self.currency_code),
            financial_year_start: self
                .fiscal_year_start_month
                .filter(|month| *month < 12)
                .map(|month| YearStart {
                    month: month + 1,
                    day: 1,
                }),
            addresses: address
                .into_iter()
                .filter(|address| {
                    address.line1.is_some() || address.city.is_some() || address.country.is_some()
                })
                .collect(),
            phone: json::non_empty(self.phone),
            website: json::non_empty(self.website),
            created_date: self
                .account_created_date
                .as_deref()
                .and_then(json::date)
                .map(|day| Timestamp(day.and_time(NaiveTime::MIN).and_utc())),
            source_modified_date: None,
            company_info_id: self.organization_id,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_documented_account_type_has_a_classification() {
        assert_eq!(classification("bank"), AccountClassification::Asset);
        assert_eq!(
            classification("accounts_payable"),
            AccountClassification::Liability
        );
        assert_eq!(
            classification("cost_of_goods_sold"),
            AccountClassification::Expense
        );
        assert_eq!(
            classification("other_income"),
            AccountClassification::Income
        );
        assert_eq!(classification("equity"), AccountClassification::Equity);
        assert_eq!(
            classification("payment_clearing"),
            AccountClassification::Unknown
        );
        assert_eq!(CLASSIFICATIONS.len(), 16, "the document lists sixteen");
    }
}
