//! FreeAgent's chart and reference lists as ours: accounting categories and
//! bank accounts as accounts (categories classified by their group, general
//! ones by nominal-code range), price list items as items, and the company
//! as company info and as the tax rates it charges. Sources: `NOTES.md`,
//! "Accounting model (issue 34): built".

use chrono::Datelike;
use serde::Deserialize;
use serde_json::Value;

use super::mapping::{category_ref, id_of};
use crate::data::accounts::{Account, AccountClassification, AccountStatus};
use crate::data::company_info::{Address, AddressType, CompanyInfo, YearStart};
use crate::data::items::{Item, ItemSide, ItemStatus, ItemType};
use crate::data::money::Quantity;
use crate::data::tax_rates::{TaxRate, TaxRateComponent, TaxRateStatus};
use crate::platforms::kit::json::{self, Amount};
use crate::platforms::kit::records::{Each, Keyed, Unreadable};

/// The prefix of a bank account's id among accounts: FreeAgent's bank
/// accounts are resources of their own (`/v2/bank_accounts/7`), not
/// categories, so `bank-account-7` keeps them apart from nominal codes.
const BANK_ACCOUNT_ID: &str = "bank-account-";

/// The account id of the bank account at FreeAgent URL `url`.
pub(super) fn bank_account_id(url: &str) -> Option<String> {
    id_of(url).map(|id| format!("{BANK_ACCOUNT_ID}{id}"))
}

/// `GET /v2/categories`: the company's categories in four groups.
#[derive(Deserialize)]
pub(super) struct CategoriesAnswer {
    #[serde(default)]
    admin_expenses_categories: Each<Category>,
    #[serde(default)]
    cost_of_sales_categories: Each<Category>,
    #[serde(default)]
    income_categories: Each<Category>,
    #[serde(default)]
    general_categories: Each<Category>,
}

impl CategoriesAnswer {
    /// Every category with the group FreeAgent listed it in.
    pub(super) fn groups(self) -> [(Group, Each<Category>); 4] {
        [
            (Group::Income, self.income_categories),
            (Group::CostOfSales, self.cost_of_sales_categories),
            (Group::AdminExpenses, self.admin_expenses_categories),
            (Group::General, self.general_categories),
        ]
    }
}

/// The list of `GET /v2/categories` a category came in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Group {
    Income,
    CostOfSales,
    AdminExpenses,
    General,
}

impl Group {
    /// The group as FreeAgent names its list (our `accountType`).
    fn name(self) -> &'static str {
        match self {
            Self::Income => "income",
            Self::CostOfSales => "cost_of_sales",
            Self::AdminExpenses => "admin_expenses",
            Self::General => "general",
        }
    }
}

/// One accounting category.
#[derive(Deserialize)]
pub(super) struct Category {
    url: String,
    description: Option<String>,
    nominal_code: Option<String>,
    group_description: Option<String>,
    /// Set on a bank account's sub account (`750-x`): that account comes
    /// from `GET /v2/bank_accounts` instead.
    bank_account: Option<String>,
}

impl Keyed for Category {
    const ID: &'static str = "/url";

    fn kept_id(url: &str) -> Option<String> {
        id_of(url)
    }
}

/// Where a nominal code sits, for the general categories whose group does
/// not say: below 600 the profit and loss (up to 095 income, FreeAgent's
/// income codes being 001-049 and other income 050-095; then costs), from
/// 600 the balance sheet by the ranges FreeAgent lets categories be created
/// in (current assets 671-720, liabilities 731-780, equity 921-960) and its
/// fixed ones (601-609 fixed assets and stock, 8xx taxes owed, 900-910 the
/// users' accounts, owed to them).
pub(super) fn classification_of_code(code: &str) -> AccountClassification {
    let number: Option<u32> = code
        .split('-')
        .next()
        .and_then(|head| head.trim().parse().ok());
    match number {
        Some(0..=95) => AccountClassification::Income,
        Some(96..=599) => AccountClassification::Expense,
        Some(600..=729) => AccountClassification::Asset,
        Some(730..=910) => AccountClassification::Liability,
        Some(911..=999) => AccountClassification::Equity,
        _ => AccountClassification::Unknown,
    }
}

/// Whether a category stands for a bank account: the `750` header and its
/// `750-x` sub accounts, which the bank accounts themselves replace.
fn is_bank_category(category: &Category, id: &str) -> bool {
    category.bank_account.is_some() || id == "750" || id.starts_with("750-")
}

impl Category {
    /// Our account, none for a bank account's category.
    pub(super) fn into_record(self, group: Group) -> Result<Option<Account>, Unreadable> {
        let account_id =
            id_of(&self.url).ok_or_else(|| Unreadable::field("url", "ends in no id"))?;
        if is_bank_category(&self, &account_id) {
            return Ok(None);
        }
        let nominal_code = json::non_empty(self.nominal_code).unwrap_or_else(|| account_id.clone());
        let classification = match group {
            Group::Income => AccountClassification::Income,
            Group::CostOfSales | Group::AdminExpenses => AccountClassification::Expense,
            Group::General => classification_of_code(&nominal_code),
        };
        Ok(Some(Account {
            account_name: json::non_empty(self.description).unwrap_or_else(|| nominal_code.clone()),
            nominal_code: Some(nominal_code),
            description: json::non_empty(self.group_description),
            classification,
            account_type: Some(group.name().to_owned()),
            is_bank_account: false,
            status: AccountStatus::Active,
            currency: None,
            current_balance: None,
            source_modified_date: None,
            account_id,
        }))
    }
}

/// A page of `GET /v2/bank_accounts`.
#[derive(Deserialize)]
pub(super) struct BankAccountsPage {
    #[serde(default)]
    pub(super) bank_accounts: Each<BankAccount>,
}

/// A bank, PayPal or credit card account.
#[derive(Deserialize)]
pub(super) struct BankAccount {
    pub(super) url: String,
    name: Option<String>,
    #[serde(rename = "type")]
    kind: Option<String>,
    pub(super) currency: Option<String>,
    status: Option<String>,
    current_balance: Option<Amount>,
    updated_at: Option<String>,
}

impl Keyed for BankAccount {
    const ID: &'static str = "/url";

    fn kept_id(url: &str) -> Option<String> {
        bank_account_id(url)
    }
}

impl BankAccount {
    /// Whether it is a credit card (money owed, not held).
    fn is_credit_card(&self) -> bool {
        self.kind
            .as_deref()
            .is_some_and(|kind| kind.eq_ignore_ascii_case("CreditCardAccount"))
    }

    /// Our account: an asset, or a liability for a credit card, whose
    /// balance FreeAgent writes as a bank does (negative when owed) and we
    /// in the liability's natural sign (positive when owed).
    pub(super) fn into_record(self) -> Result<Account, Unreadable> {
        let account_id =
            bank_account_id(&self.url).ok_or_else(|| Unreadable::field("url", "ends in no id"))?;
        let credit_card = self.is_credit_card();
        let balance = self.current_balance.map(Amount::money);
        Ok(Account {
            nominal_code: None,
            account_name: json::non_empty(self.name).unwrap_or_else(|| account_id.clone()),
            description: None,
            classification: if credit_card {
                AccountClassification::Liability
            } else {
                AccountClassification::Asset
            },
            account_type: json::non_empty(self.kind),
            is_bank_account: true,
            status: match self.status.as_deref() {
                Some(status) if status.eq_ignore_ascii_case("hidden") => AccountStatus::Archived,
                _ => AccountStatus::Active,
            },
            currency: json::non_empty(self.currency),
            current_balance: if credit_card {
                balance.map(|money| -money)
            } else {
                balance
            },
            source_modified_date: json::timestamp(self.updated_at.as_deref()),
            account_id,
        })
    }
}

/// A page of `GET /v2/price_list_items`.
#[derive(Deserialize)]
pub(super) struct PriceListPage {
    #[serde(default)]
    pub(super) price_list_items: Each<PriceListItem>,
}

/// One price list item: what the company sells (FreeAgent keeps no
/// purchase side).
#[derive(Deserialize)]
pub(super) struct PriceListItem {
    url: String,
    code: Option<String>,
    description: Option<String>,
    item_type: Option<String>,
    price: Option<Amount>,
    category: Option<String>,
    updated_at: Option<String>,
}

impl Keyed for PriceListItem {
    const ID: &'static str = "/url";

    fn kept_id(url: &str) -> Option<String> {
        id_of(url)
    }
}

/// Our type of a price list item's `item_type`: stock is inventory, units
/// of time and services are services, products and the rest (expenses,
/// bills, discounts) are goods not tracked.
fn item_type(word: Option<&str>) -> ItemType {
    match word.map(|word| word.trim().to_ascii_lowercase()).as_deref() {
        Some("stock") => ItemType::Inventory,
        Some("hours" | "days" | "weeks" | "months" | "years" | "services" | "training") => {
            ItemType::Service
        }
        Some("products") => ItemType::NonInventory,
        _ => ItemType::Unknown,
    }
}

impl PriceListItem {
    /// Our item, sold at its price into its income category.
    pub(super) fn into_record(self) -> Result<Item, Unreadable> {
        let item_id = id_of(&self.url).ok_or_else(|| Unreadable::field("url", "ends in no id"))?;
        let code = json::non_empty(self.code);
        let description = json::non_empty(self.description);
        Ok(Item {
            name: code
                .clone()
                .or_else(|| description.clone())
                .unwrap_or_else(|| item_id.clone()),
            code,
            item_type: item_type(self.item_type.as_deref()),
            status: ItemStatus::Active,
            sales: Some(ItemSide {
                description,
                unit_price: self.price.map(Amount::money),
                account_ref: category_ref(self.category.as_deref()),
                tax_rate_ref: None,
            }),
            purchases: None,
            quantity_on_hand: None,
            source_modified_date: json::timestamp(self.updated_at.as_deref()),
            item_id,
        })
    }
}

/// `GET /v2/company`, for the ledger.
#[derive(Deserialize)]
pub(super) struct CompanyDetailsAnswer {
    pub(super) company: CompanyDetails,
}

/// One accounting period of the company's annual accounts.
#[derive(Deserialize)]
struct AccountingPeriod {
    starts_on: Option<String>,
}

/// The company as the ledger reads it.
#[derive(Deserialize)]
pub(super) struct CompanyDetails {
    /// A number or a string in FreeAgent's examples.
    id: Option<Value>,
    subdomain: Option<String>,
    name: Option<String>,
    currency: Option<String>,
    company_registration_number: Option<String>,
    sales_tax_registration_number: Option<String>,
    sales_tax_name: Option<String>,
    #[serde(default, deserialize_with = "json::list_or_null")]
    sales_tax_rates: Vec<Amount>,
    second_sales_tax_name: Option<String>,
    #[serde(default, deserialize_with = "json::list_or_null")]
    second_sales_tax_rates: Vec<Amount>,
    second_sales_tax_is_compound: Option<bool>,
    first_accounting_year_end: Option<String>,
    #[serde(default, deserialize_with = "json::list_or_null")]
    annual_accounting_periods: Vec<AccountingPeriod>,
    address1: Option<String>,
    address2: Option<String>,
    address3: Option<String>,
    town: Option<String>,
    region: Option<String>,
    postcode: Option<String>,
    country: Option<String>,
    contact_phone: Option<String>,
    website: Option<String>,
    created_at: Option<String>,
    updated_at: Option<String>,
}

/// A tax rate's id: the tax (`sales-tax` or `second-sales-tax`) and the
/// percentage without trailing zeros (`sales-tax-17.5`), stable while the
/// rate exists.
fn tax_rate_id(tax: &str, rate: Quantity) -> String {
    format!("{tax}-{}", rate.to_decimal())
}

impl CompanyDetails {
    /// The company's id: FreeAgent's `id`, else its subdomain.
    fn company_id(&self) -> Option<String> {
        match &self.id {
            Some(Value::String(id)) => json::non_empty(Some(id.clone())),
            Some(Value::Number(id)) => Some(id.to_string()),
            _ => None,
        }
        .or_else(|| json::non_empty(self.subdomain.clone()))
    }

    /// When the financial year starts: the latest accounting period's first
    /// day, else the day after the first accounting year's end.
    fn year_start(&self) -> Option<YearStart> {
        let latest = self
            .annual_accounting_periods
            .iter()
            .filter_map(|period| period.starts_on.as_deref().and_then(json::date))
            .max();
        if let Some(start) = latest {
            return Some(YearStart {
                month: start.month(),
                day: start.day(),
            });
        }
        let end = self
            .first_accounting_year_end
            .as_deref()
            .and_then(json::date)?;
        YearStart::after_year_end(end.month(), end.day())
    }

    /// Our company info; none without an id.
    pub(super) fn into_record(self) -> Result<CompanyInfo, Unreadable> {
        let company_info_id = self
            .company_id()
            .ok_or_else(|| Unreadable::field("id", "is missing"))?;
        let financial_year_start = self.year_start();
        let street = [self.address2, self.address3]
            .into_iter()
            .filter_map(json::non_empty)
            .collect::<Vec<_>>()
            .join(", ");
        let address = Address {
            address_type: AddressType::Unknown,
            line1: json::non_empty(self.address1),
            line2: json::non_empty(Some(street)),
            city: json::non_empty(self.town),
            region: json::non_empty(self.region),
            postal_code: json::non_empty(self.postcode),
            country: json::non_empty(self.country),
        };
        let has_address =
            address.line1.is_some() || address.city.is_some() || address.postal_code.is_some();
        Ok(CompanyInfo {
            company_name: json::non_empty(self.name).unwrap_or_else(|| company_info_id.clone()),
            legal_name: None,
            registration_number: json::non_empty(self.company_registration_number),
            tax_number: json::non_empty(self.sales_tax_registration_number),
            base_currency: json::non_empty(self.currency),
            financial_year_start,
            addresses: if has_address {
                vec![address]
            } else {
                Vec::new()
            },
            phone: json::non_empty(self.contact_phone),
            website: json::non_empty(self.website),
            created_date: json::timestamp(self.created_at.as_deref()),
            source_modified_date: json::timestamp(self.updated_at.as_deref()),
            company_info_id,
        })
    }

    /// The rates the company charges now: one per percentage of its sales
    /// tax, then of its second sales tax (compound when FreeAgent says so).
    pub(super) fn tax_rates(&self) -> Vec<TaxRate> {
        let first =
            json::non_empty(self.sales_tax_name.clone()).unwrap_or_else(|| "Sales tax".to_owned());
        let second = json::non_empty(self.second_sales_tax_name.clone())
            .unwrap_or_else(|| "Second sales tax".to_owned());
        let compound = self.second_sales_tax_is_compound.unwrap_or(false);
        let rates = |tax: &'static str, name: &str, rates: &[Amount], is_compound: bool| {
            rates
                .iter()
                .map(|rate| rate.quantity())
                .map(|rate| TaxRate {
                    tax_rate_id: tax_rate_id(tax, rate),
                    code: None,
                    name: format!("{name} {}%", rate.to_decimal()),
                    effective_tax_rate: rate,
                    components: vec![TaxRateComponent {
                        name: name.to_owned(),
                        rate,
                        is_compound,
                    }],
                    status: TaxRateStatus::Active,
                    source_modified_date: None,
                })
                .collect::<Vec<_>>()
        };
        let mut all = rates("sales-tax", &first, &self.sales_tax_rates, false);
        all.extend(rates(
            "second-sales-tax",
            &second,
            &self.second_sales_tax_rates,
            compound,
        ));
        all.dedup_by(|a, b| a.tax_rate_id == b.tax_rate_id);
        all
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::data::money::Money;

    #[test]
    fn general_categories_are_classified_by_their_code_range() {
        for (code, ours) in [
            ("051", AccountClassification::Income),
            ("250", AccountClassification::Expense),
            ("602-1", AccountClassification::Asset),
            ("681", AccountClassification::Asset),
            ("796", AccountClassification::Liability),
            ("819", AccountClassification::Liability),
            ("907", AccountClassification::Liability),
            ("921", AccountClassification::Equity),
            ("SALES", AccountClassification::Unknown),
        ] {
            assert_eq!(classification_of_code(code), ours, "{code}");
        }
    }

    #[test]
    fn a_credit_cards_balance_is_owed_and_positive() {
        let card: BankAccount = serde_json::from_str(
            r#"{"url":"https://api.freeagent.com/v2/bank_accounts/3","type":"CreditCardAccount",
                "name":"Card","currency":"GBP","status":"active","current_balance":"-120.50"}"#,
        )
        .expect("a bank account");
        let account = card.into_record().expect("an account");
        assert_eq!(account.account_id, "bank-account-3");
        assert_eq!(account.classification, AccountClassification::Liability);
        assert_eq!(account.current_balance, Some(Money::from_cents(12_050)));
    }

    #[test]
    fn tax_rates_are_the_companys_percentages_with_stable_ids() {
        let company: CompanyDetails = serde_json::from_str(
            r#"{"id":1,"sales_tax_name":"VAT","sales_tax_rates":["20.0","5.0","0.0"]}"#,
        )
        .expect("a company");
        let rates = company.tax_rates();
        let ids: Vec<&str> = rates.iter().map(|rate| rate.tax_rate_id.as_str()).collect();
        assert_eq!(ids, ["sales-tax-20", "sales-tax-5", "sales-tax-0"]);
        assert_eq!(rates[0].name, "VAT 20%");
    }

    #[test]
    fn a_company_without_periods_starts_its_year_after_its_first_year_end() {
        let company: CompanyDetails = serde_json::from_str(
            r#"{"id":"12345","name":"My Company","first_accounting_year_end":"2011-04-30",
                "second_sales_tax_name":"PST","second_sales_tax_rates":["7.0"],
                "second_sales_tax_is_compound":true}"#,
        )
        .expect("a company");
        let rates = company.tax_rates();
        assert_eq!(rates[0].tax_rate_id, "second-sales-tax-7");
        assert!(rates[0].components[0].is_compound);
        let info = company.into_record().expect("readable");
        assert_eq!(info.company_info_id, "12345");
        assert_eq!(
            info.financial_year_start,
            Some(YearStart { month: 5, day: 1 })
        );
        assert!(info.addresses.is_empty());
    }

    #[test]
    fn price_list_item_types_become_ours() {
        for (word, ours) in [
            (Some("Stock"), ItemType::Inventory),
            (Some("Hours"), ItemType::Service),
            (Some("Training"), ItemType::Service),
            (Some("Products"), ItemType::NonInventory),
            (Some("Discount"), ItemType::Unknown),
            (None, ItemType::Unknown),
        ] {
            assert_eq!(item_type(word), ours, "{word:?}");
        }
    }
}
