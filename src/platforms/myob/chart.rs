//! MYOB's chart and settings, and how they become ours: accounts (`GET
//! /GeneralLedger/Account`), tax codes (`/GeneralLedger/TaxCode`), items
//! (`/Inventory/Item`) and the company file itself (`/Company` and
//! `/GeneralLedger/AccountingProperties`). Sources: `NOTES.md`,
//! "Accounting model".

use serde::Deserialize;

use crate::data::accounts::{Account, AccountClassification, AccountRef, AccountStatus};
use crate::data::company_info::{Address, AddressType, CompanyInfo, YearStart};
use crate::data::items::{Item, ItemSide, ItemStatus, ItemType};
use crate::data::money::Quantity;
use crate::data::tax_rates::{TaxRate, TaxRateComponent, TaxRateRef, TaxRateStatus};
use crate::platforms::kit::json::{self, Rounded};
use crate::platforms::kit::records::Keyed;
use crate::platforms::kit::status::find;

impl Keyed for MyobAccount {
    const ID: &'static str = "/UID";
}

impl Keyed for MyobTaxCode {
    const ID: &'static str = "/UID";
}

impl Keyed for MyobItem {
    const ID: &'static str = "/UID";
}

/// MYOB's account classifications (`Classification`, read-only, following
/// the account's `Type`) in the statements: cost of sales and the "other"
/// classes fold into expense and income.
const CLASSIFICATIONS: &[(&str, AccountClassification)] = &[
    ("Asset", AccountClassification::Asset),
    ("Liability", AccountClassification::Liability),
    ("Equity", AccountClassification::Equity),
    ("Income", AccountClassification::Income),
    ("OtherIncome", AccountClassification::Income),
    ("CostOfSales", AccountClassification::Expense),
    ("Expense", AccountClassification::Expense),
    ("OtherExpense", AccountClassification::Expense),
];

/// A link to an account (`AccountLink`): its `UID`, `Name` and `DisplayID`.
#[derive(Deserialize)]
#[serde(rename_all = "PascalCase")]
pub(super) struct AccountLink {
    #[serde(rename = "UID")]
    uid: Option<String>,
    name: Option<String>,
}

impl AccountLink {
    /// Our reference to the account.
    pub(super) fn into_ref(self) -> Option<AccountRef> {
        AccountRef::to(json::non_empty(self.uid), json::non_empty(self.name))
    }
}

/// A link to a tax code (`TaxCodeLink`): its `UID` and three-letter `Code`.
#[derive(Deserialize)]
#[serde(rename_all = "PascalCase")]
pub(super) struct TaxCodeLink {
    #[serde(rename = "UID")]
    pub(super) uid: Option<String>,
    code: Option<String>,
}

impl TaxCodeLink {
    /// Our reference to the tax rate the code is.
    pub(super) fn to_ref(&self) -> Option<TaxRateRef> {
        TaxRateRef::to(
            json::non_empty(self.uid.clone()),
            json::non_empty(self.code.clone()),
        )
    }
}

/// A currency link (`CurrencyLink`).
#[derive(Deserialize)]
#[serde(rename_all = "PascalCase")]
pub(super) struct CurrencyLink {
    pub(super) code: Option<String>,
}

/// An account as `GET /GeneralLedger/Account` writes it.
#[derive(Deserialize)]
#[serde(rename_all = "PascalCase")]
pub(super) struct MyobAccount {
    #[serde(rename = "UID")]
    uid: String,
    #[serde(rename = "DisplayID")]
    display_id: Option<String>,
    name: Option<String>,
    description: Option<String>,
    classification: Option<String>,
    #[serde(rename = "Type")]
    account_type: Option<String>,
    is_active: Option<bool>,
    is_header: Option<bool>,
    current_balance: Option<Rounded>,
    foreign_currency: Option<CurrencyLink>,
    last_modified: Option<String>,
}

impl MyobAccount {
    /// Our account, in the file's `currency` unless MYOB names a foreign
    /// one; a header account (a heading of the chart, which takes no
    /// postings) is left out. `Bank` and `CreditCard` accounts are where
    /// money is paid from and into. `CurrentBalance` is MYOB's, which
    /// includes future-dated activity.
    pub(super) fn into_record(self, currency: &str) -> Option<Account> {
        if self.is_header == Some(true) {
            return None;
        }
        let account_type = json::non_empty(self.account_type);
        Some(Account {
            nominal_code: json::non_empty(self.display_id),
            account_name: json::non_empty(self.name).unwrap_or_else(|| self.uid.clone()),
            description: json::non_empty(self.description),
            classification: self
                .classification
                .as_deref()
                .and_then(|classification| find(CLASSIFICATIONS, classification))
                .unwrap_or(AccountClassification::Unknown),
            is_bank_account: matches!(account_type.as_deref(), Some("Bank" | "CreditCard")),
            account_type,
            status: if self.is_active == Some(false) {
                AccountStatus::Archived
            } else {
                AccountStatus::Active
            },
            currency: self
                .foreign_currency
                .and_then(|link| json::non_empty(link.code))
                .or_else(|| json::non_empty(Some(currency.to_owned()))),
            current_balance: self.current_balance.map(Rounded::money),
            source_modified_date: json::timestamp(self.last_modified.as_deref()),
            account_id: self.uid,
        })
    }
}

/// A tax code as `GET /GeneralLedger/TaxCode` writes it.
#[derive(Deserialize)]
#[serde(rename_all = "PascalCase")]
pub(super) struct MyobTaxCode {
    #[serde(rename = "UID")]
    pub(super) uid: String,
    code: Option<String>,
    description: Option<String>,
    pub(super) rate: Option<Rounded>,
    is_rate_negative: Option<bool>,
    last_modified: Option<String>,
}

impl MyobTaxCode {
    /// The rate as a percentage, negative when MYOB says so (`Rate` is
    /// always written positive).
    pub(super) fn percentage(&self) -> Quantity {
        let rate = self.rate.map_or(Quantity(0), Rounded::quantity);
        if self.is_rate_negative == Some(true) {
            Quantity(-rate.0)
        } else {
            rate
        }
    }

    /// Our tax rate: the code's own rate as its one component (MYOB does not
    /// list a consolidated code's parts). MYOB has no inactive codes.
    pub(super) fn into_record(self) -> TaxRate {
        let rate = self.percentage();
        let code = json::non_empty(self.code);
        let name = json::non_empty(self.description)
            .or_else(|| code.clone())
            .unwrap_or_else(|| self.uid.clone());
        TaxRate {
            components: vec![TaxRateComponent {
                name: name.clone(),
                rate,
                is_compound: false,
            }],
            code,
            name,
            effective_tax_rate: rate,
            status: TaxRateStatus::Active,
            source_modified_date: json::timestamp(self.last_modified.as_deref()),
            tax_rate_id: self.uid,
        }
    }
}

/// One side of an item (`SellingDetails` or `BuyingDetails`).
#[derive(Deserialize)]
#[serde(rename_all = "PascalCase")]
struct ItemDetails {
    base_selling_price: Option<Rounded>,
    last_purchase_price: Option<Rounded>,
    standard_cost: Option<Rounded>,
    tax_code: Option<TaxCodeLink>,
}

/// An item as `GET /Inventory/Item` writes it.
#[derive(Deserialize)]
#[serde(rename_all = "PascalCase")]
pub(super) struct MyobItem {
    #[serde(rename = "UID")]
    uid: String,
    number: Option<String>,
    name: Option<String>,
    description: Option<String>,
    is_active: Option<bool>,
    is_bought: Option<bool>,
    is_sold: Option<bool>,
    is_inventoried: Option<bool>,
    quantity_on_hand: Option<Rounded>,
    base_selling_price: Option<Rounded>,
    income_account: Option<AccountLink>,
    expense_account: Option<AccountLink>,
    asset_account: Option<AccountLink>,
    selling_details: Option<ItemDetails>,
    buying_details: Option<ItemDetails>,
    last_modified: Option<String>,
}

impl MyobItem {
    /// Our item: inventoried items are `Inventory`, others `NonInventory`
    /// (MYOB does not tell goods from services). A sold item sells at its
    /// base selling price into its income account; a bought one is bought
    /// at its standard cost (else the last purchase price) into its expense
    /// account, or its asset account when inventoried.
    pub(super) fn into_record(self) -> Item {
        let inventoried = self.is_inventoried == Some(true);
        let description = json::non_empty(self.description);
        let sales = (self.is_sold == Some(true)).then(|| {
            let details = self.selling_details;
            ItemSide {
                description: description.clone(),
                unit_price: details
                    .as_ref()
                    .and_then(|details| details.base_selling_price)
                    .or(self.base_selling_price)
                    .map(Rounded::money),
                account_ref: self.income_account.and_then(AccountLink::into_ref),
                tax_rate_ref: details
                    .and_then(|details| details.tax_code)
                    .and_then(|code| code.to_ref()),
            }
        });
        let purchases = (self.is_bought == Some(true)).then(|| {
            let details = self.buying_details;
            let price = details.as_ref().and_then(|details| {
                details
                    .standard_cost
                    .filter(|cost| cost.0.0 != 0)
                    .or(details.last_purchase_price)
            });
            let account = if inventoried {
                self.asset_account
            } else {
                self.expense_account
            };
            ItemSide {
                description: description.clone(),
                unit_price: price.map(Rounded::money),
                account_ref: account.and_then(AccountLink::into_ref),
                tax_rate_ref: details
                    .and_then(|details| details.tax_code)
                    .and_then(|code| code.to_ref()),
            }
        });
        Item {
            code: json::non_empty(self.number),
            name: json::non_empty(self.name).unwrap_or_else(|| self.uid.clone()),
            item_type: if inventoried {
                ItemType::Inventory
            } else {
                ItemType::NonInventory
            },
            status: if self.is_active == Some(false) {
                ItemStatus::Archived
            } else {
                ItemStatus::Active
            },
            sales,
            purchases,
            quantity_on_hand: inventoried
                .then(|| self.quantity_on_hand.map(Rounded::quantity))
                .flatten(),
            source_modified_date: json::timestamp(self.last_modified.as_deref()),
            item_id: self.uid,
        }
    }
}

/// The company file's details (`GET /Company`).
#[derive(Deserialize)]
#[serde(rename_all = "PascalCase")]
pub(super) struct MyobCompany {
    company_name: Option<String>,
    address: Option<String>,
    phone_number: Option<String>,
    #[serde(rename = "ABNOrTFN")]
    abn_or_tfn: Option<String>,
    #[serde(rename = "ACN")]
    acn: Option<String>,
    #[serde(rename = "GSTRegistrationNumber")]
    gst_registration_number: Option<String>,
    company_registration_number: Option<String>,
}

/// The file's financial year (`GET /GeneralLedger/AccountingProperties`).
#[derive(Deserialize)]
#[serde(rename_all = "PascalCase")]
pub(super) struct AccountingProperties {
    last_month_financial_year: Option<u32>,
}

impl MyobCompany {
    /// Our company info for `file` (the company file id), in its
    /// `currency`: an Australian file's ACN is its registration number and
    /// its ABN its tax number; a New Zealand file's company and GST numbers.
    /// The year starts the month after `LastMonthFinancialYear`. MYOB keeps
    /// the address as one text, kept whole as its first line.
    pub(super) fn into_record(
        self,
        file: &str,
        currency: Option<&str>,
        properties: AccountingProperties,
    ) -> CompanyInfo {
        let name = json::non_empty(self.company_name).unwrap_or_else(|| file.to_owned());
        let address = json::non_empty(self.address).map(|text| Address {
            address_type: AddressType::Unknown,
            line1: Some(text),
            line2: None,
            city: None,
            region: None,
            postal_code: None,
            country: None,
        });
        CompanyInfo {
            company_info_id: file.to_owned(),
            legal_name: Some(name.clone()),
            company_name: name,
            registration_number: json::non_empty(self.acn)
                .or_else(|| json::non_empty(self.company_registration_number)),
            tax_number: json::non_empty(self.abn_or_tfn)
                .or_else(|| json::non_empty(self.gst_registration_number)),
            base_currency: currency.map(str::to_owned),
            financial_year_start: properties
                .last_month_financial_year
                .filter(|month| (1..=12).contains(month))
                .map(|last| YearStart {
                    month: last % 12 + 1,
                    day: 1,
                }),
            addresses: address.into_iter().collect(),
            phone: json::non_empty(self.phone_number),
            website: None,
            created_date: None,
            source_modified_date: None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn classifications_fold_into_the_five_statements_classes() {
        assert_eq!(
            find(CLASSIFICATIONS, "CostOfSales"),
            Some(AccountClassification::Expense)
        );
        assert_eq!(
            find(CLASSIFICATIONS, "OtherIncome"),
            Some(AccountClassification::Income)
        );
        assert_eq!(
            find(CLASSIFICATIONS, "Equity"),
            Some(AccountClassification::Equity)
        );
    }

    #[test]
    fn a_year_ending_in_june_starts_in_july_and_one_ending_in_december_in_january() {
        let company = || MyobCompany {
            company_name: Some("Clearwater".to_owned()),
            address: None,
            phone_number: None,
            abn_or_tfn: None,
            acn: None,
            gst_registration_number: None,
            company_registration_number: None,
        };
        let june = AccountingProperties {
            last_month_financial_year: Some(6),
        };
        let december = AccountingProperties {
            last_month_financial_year: Some(12),
        };
        let start = |properties| {
            company()
                .into_record("f", Some("AUD"), properties)
                .financial_year_start
        };
        assert_eq!(start(june), Some(YearStart { month: 7, day: 1 }));
        assert_eq!(start(december), Some(YearStart { month: 1, day: 1 }));
    }
}
