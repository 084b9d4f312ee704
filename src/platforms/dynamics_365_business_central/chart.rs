//! Business Central's chart and company, and how they become ours: G/L
//! accounts (`accounts`), items (`items`) and the company's information
//! (`companyInformation`). Enum values arrive as member names
//! ([`super::mapping::member`]). Sources: `NOTES.md`, "Accounting model".

use chrono::Datelike;
use serde::Deserialize;

use super::mapping::member;
use crate::data::accounts::{Account, AccountClassification, AccountStatus};
use crate::data::company_info::{Address, AddressType, CompanyInfo, YearStart};
use crate::data::items::{Item, ItemSide, ItemStatus, ItemType};
use crate::platforms::kit::json::{self, Amount};
use crate::platforms::kit::records::Keyed;

impl Keyed for BcAccount {
    const ID: &'static str = "/id";
}

impl Keyed for BcItem {
    const ID: &'static str = "/id";
}

impl Keyed for BcCompanyInformation {
    const ID: &'static str = "/id";
}

/// A G/L account as the API v2.0 writes it (`account` entity).
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
pub(super) struct BcAccount {
    id: String,
    number: Option<String>,
    display_name: Option<String>,
    category: Option<String>,
    sub_category: Option<String>,
    account_type: Option<String>,
    blocked: Option<bool>,
    net_change: Option<Amount>,
    last_modified_date_time: Option<String>,
}

/// The classification of a `glAccountCategory` (its caption); the blank
/// category is `Unknown`.
pub(super) fn classification(category: &str) -> AccountClassification {
    match category {
        "Assets" => AccountClassification::Asset,
        "Liabilities" => AccountClassification::Liability,
        "Equity" => AccountClassification::Equity,
        "Income" => AccountClassification::Income,
        "Cost of Goods Sold" | "Expense" => AccountClassification::Expense,
        _ => AccountClassification::Unknown,
    }
}

impl BcAccount {
    /// Our account, `None` for a heading or a total (`accountType` other
    /// than `Posting`: lines of the chart's layout, not accounts one posts
    /// to). A balance-sheet account's balance is its all-time `netChange`
    /// in its natural sign (Business Central's amounts are debits positive,
    /// so a liability's or equity's is negated); a profit and loss
    /// account's all-time change is no balance, so it is null.
    pub(super) fn into_record(self) -> Option<Account> {
        let kind = self.account_type.as_deref().map(member);
        if kind.as_deref().is_some_and(|kind| kind != "Posting") {
            return None;
        }
        let category = self.category.as_deref().map(member).unwrap_or_default();
        let classification = classification(&category);
        let net_change = self.net_change.map(Amount::money);
        let current_balance = match classification {
            AccountClassification::Asset => net_change,
            AccountClassification::Liability | AccountClassification::Equity => {
                net_change.map(|net| -net)
            }
            _ => None,
        };
        Some(Account {
            nominal_code: json::non_empty(self.number),
            account_name: json::non_empty(self.display_name).unwrap_or_else(|| self.id.clone()),
            description: json::non_empty(self.sub_category),
            classification,
            is_bank_account: false,
            status: if self.blocked == Some(true) {
                AccountStatus::Archived
            } else {
                AccountStatus::Active
            },
            currency: None,
            current_balance,
            source_modified_date: json::timestamp(self.last_modified_date_time.as_deref()),
            account_type: json::non_empty(Some(category)),
            account_id: self.id,
        })
    }
}

/// An item as the API v2.0 writes it (`item` entity).
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
pub(super) struct BcItem {
    id: String,
    number: Option<String>,
    display_name: Option<String>,
    #[serde(rename = "type")]
    kind: Option<String>,
    blocked: Option<bool>,
    unit_price: Option<Amount>,
    unit_cost: Option<Amount>,
    inventory: Option<Amount>,
    last_modified_date_time: Option<String>,
}

impl BcItem {
    /// Our item: its type from `type`; the sale price `unitPrice`, the cost
    /// `unitCost`, stock `inventory` for an inventory item. Items name no
    /// G/L accounts (their posting groups decide) and no tax rate.
    pub(super) fn into_record(self) -> Item {
        let kind = self.kind.as_deref().map(member);
        let item_type = match kind.as_deref() {
            Some("Inventory") => ItemType::Inventory,
            Some("Service") => ItemType::Service,
            Some("Non-Inventory") => ItemType::NonInventory,
            _ => ItemType::Unknown,
        };
        Item {
            code: json::non_empty(self.number),
            name: json::non_empty(self.display_name).unwrap_or_else(|| self.id.clone()),
            status: if self.blocked == Some(true) {
                ItemStatus::Archived
            } else {
                ItemStatus::Active
            },
            sales: Some(ItemSide {
                description: None,
                unit_price: self.unit_price.map(Amount::money),
                account_ref: None,
                tax_rate_ref: None,
            }),
            purchases: self.unit_cost.map(|cost| ItemSide {
                description: None,
                unit_price: Some(cost.money()),
                account_ref: None,
                tax_rate_ref: None,
            }),
            quantity_on_hand: (item_type == ItemType::Inventory)
                .then(|| self.inventory.map(Amount::quantity))
                .flatten(),
            item_type,
            source_modified_date: json::timestamp(self.last_modified_date_time.as_deref()),
            item_id: self.id,
        }
    }
}

/// The company's information (`companyInformation`, a collection of one).
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
pub(super) struct BcCompanyInformation {
    display_name: Option<String>,
    address_line1: Option<String>,
    address_line2: Option<String>,
    city: Option<String>,
    state: Option<String>,
    country: Option<String>,
    postal_code: Option<String>,
    phone_number: Option<String>,
    website: Option<String>,
    tax_registration_number: Option<String>,
    currency_code: Option<String>,
    current_fiscal_year_start_date: Option<String>,
    last_modified_date_time: Option<String>,
}

impl BcCompanyInformation {
    /// Our company info, as the company `company_id` (the connection's
    /// company, which `companyInformation` describes): the fiscal year
    /// starts on the month and day of `currentFiscalYearStartDate`.
    pub(super) fn into_record(self, company_id: &str) -> CompanyInfo {
        let address = Address {
            address_type: AddressType::Street,
            line1: json::non_empty(self.address_line1),
            line2: json::non_empty(self.address_line2),
            city: json::non_empty(self.city),
            region: json::non_empty(self.state),
            postal_code: json::non_empty(self.postal_code),
            country: json::non_empty(self.country),
        };
        let has_address =
            address.line1.is_some() || address.city.is_some() || address.postal_code.is_some();
        CompanyInfo {
            company_info_id: company_id.to_owned(),
            company_name: json::non_empty(self.display_name)
                .unwrap_or_else(|| company_id.to_owned()),
            legal_name: None,
            registration_number: None,
            tax_number: json::non_empty(self.tax_registration_number),
            base_currency: json::non_empty(self.currency_code),
            financial_year_start: self
                .current_fiscal_year_start_date
                .as_deref()
                .and_then(json::date)
                .map(|start| YearStart {
                    month: start.month(),
                    day: start.day(),
                }),
            addresses: if has_address {
                vec![address]
            } else {
                Vec::new()
            },
            phone: json::non_empty(self.phone_number),
            website: json::non_empty(self.website),
            created_date: None,
            source_modified_date: json::timestamp(self.last_modified_date_time.as_deref()),
        }
    }
}
