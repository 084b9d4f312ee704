//! Wave's chart and settings, and how they become ours: accounts
//! (`accounts`, classified by their `type`), products (`products`) as
//! items, sales taxes (`salesTaxes`, whose rate is a fraction) as tax rates,
//! and the business itself (`business(id:)`) as company info. Sources:
//! `NOTES.md`, "Accounting model".

use std::str::FromStr;

use rust_decimal::Decimal;
use serde::Deserialize;
use serde::de::{self, Deserializer};
use serde_json::value::RawValue;

use super::mapping::{AccountLink, Connection, Currency, Edge};
use crate::data::accounts::{Account, AccountClassification, AccountStatus};
use crate::data::company_info::{Address, AddressType, CompanyInfo};
use crate::data::items::{Item, ItemSide, ItemStatus, ItemType};
use crate::data::money::{Money, Quantity};
use crate::data::tax_rates::{TaxRate, TaxRateComponent, TaxRateRef, TaxRateStatus};
use crate::platforms::kit::json::{self, Amount};
use crate::platforms::kit::records::{Each, Keyed};
use crate::platforms::kit::status::find;

/// Wave's account types (`AccountTypeValue`), one for each of our
/// classifications; a type Wave adds later is `Unknown`.
pub(super) const CLASSIFICATIONS: &[(&str, AccountClassification)] = &[
    ("ASSET", AccountClassification::Asset),
    ("LIABILITY", AccountClassification::Liability),
    ("EQUITY", AccountClassification::Equity),
    ("INCOME", AccountClassification::Income),
    ("EXPENSE", AccountClassification::Expense),
];

/// The account subtypes (`AccountSubtypeValue`) money is paid from and
/// into: bank and cash accounts, and credit cards.
pub(super) const BANK_SUBTYPES: &[&str] = &["CASH_AND_BANK", "CREDIT_CARD"];

/// The business with a page of its accounts.
#[derive(Deserialize)]
pub(super) struct BusinessAccounts {
    pub(super) accounts: Option<Connection<Each<Edge<WaveAccount>>>>,
}

/// The business with a page of its products.
#[derive(Deserialize)]
pub(super) struct BusinessProducts {
    pub(super) products: Option<Connection<Each<Edge<WaveProduct>>>>,
}

/// The business with a page of its sales taxes.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
pub(super) struct BusinessSalesTaxes {
    pub(super) sales_taxes: Option<Connection<Each<Edge<WaveSalesTax>>>>,
}

impl Keyed for Edge<WaveAccount> {
    const ID: &'static str = "/node/id";
}

impl Keyed for Edge<WaveProduct> {
    const ID: &'static str = "/node/id";
}

impl Keyed for Edge<WaveSalesTax> {
    const ID: &'static str = "/node/id";
}

/// An enum's value (`{ value }`): an account's `type` or `subtype`.
#[derive(Deserialize)]
struct EnumValue {
    value: Option<String>,
}

/// An account as Wave's `accounts` query gives it.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
pub(super) struct WaveAccount {
    id: String,
    display_id: Option<String>,
    name: Option<String>,
    description: Option<String>,
    #[serde(rename = "type")]
    account_type: Option<EnumValue>,
    subtype: Option<EnumValue>,
    currency: Option<Currency>,
    is_archived: Option<bool>,
    balance: Option<Amount>,
}

impl WaveAccount {
    /// Our account: classified by its `type`, its `subtype` as the
    /// platform's type (bank and credit card subtypes are bank accounts),
    /// `displayId` as the nominal code, `balance` (in the account's
    /// currency, today) as Wave gives it. Wave gives no modification time.
    pub(super) fn into_record(self) -> Account {
        let subtype = self
            .subtype
            .and_then(|subtype| json::non_empty(subtype.value));
        Account {
            nominal_code: json::non_empty(self.display_id),
            account_name: json::non_empty(self.name).unwrap_or_else(|| self.id.clone()),
            description: json::non_empty(self.description),
            classification: classification(
                self.account_type.and_then(|kind| kind.value).as_deref(),
            ),
            is_bank_account: subtype
                .as_deref()
                .is_some_and(|subtype| BANK_SUBTYPES.contains(&subtype)),
            account_type: subtype,
            status: if self.is_archived == Some(true) {
                AccountStatus::Archived
            } else {
                AccountStatus::Active
            },
            currency: Currency::code_of(self.currency),
            current_balance: self.balance.map(Amount::money),
            source_modified_date: None,
            account_id: self.id,
        }
    }
}

/// Our classification of Wave's account type `value`.
pub(super) fn classification(value: Option<&str>) -> AccountClassification {
    value
        .and_then(|value| find(CLASSIFICATIONS, value))
        .unwrap_or(AccountClassification::Unknown)
}

/// A sales tax a product is charged by default.
#[derive(Deserialize)]
struct TaxLink {
    id: Option<String>,
    name: Option<String>,
}

/// A product as Wave's `products` query gives it.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
pub(super) struct WaveProduct {
    id: String,
    name: Option<String>,
    description: Option<String>,
    unit_price: Option<Amount>,
    is_sold: Option<bool>,
    is_bought: Option<bool>,
    is_archived: Option<bool>,
    modified_at: Option<String>,
    income_account: Option<AccountLink>,
    expense_account: Option<AccountLink>,
    #[serde(default, deserialize_with = "json::list_or_null")]
    default_sales_taxes: Vec<TaxLink>,
}

impl WaveProduct {
    /// Our item. Wave keeps no code (SKU), no stock and no kind of product,
    /// so the type is `Unknown`. A sold product sells at its one
    /// `unitPrice` into its income account, taxed by its default sales tax
    /// when it has exactly one; a bought one is bought into its expense
    /// account, at `unitPrice` only when it is not also sold (the one price
    /// is then the sale price).
    pub(super) fn into_record(self) -> Item {
        let description = json::non_empty(self.description);
        let sold = self.is_sold == Some(true);
        let price = self.unit_price.map(Amount::money);
        let tax_rate_ref = match self.default_sales_taxes.as_slice() {
            [only] => TaxRateRef::to(
                json::non_empty(only.id.clone()),
                json::non_empty(only.name.clone()),
            ),
            _ => None,
        };
        let sales = sold.then(|| ItemSide {
            description: description.clone(),
            unit_price: price,
            account_ref: AccountLink::to_ref(self.income_account),
            tax_rate_ref,
        });
        let purchases = (self.is_bought == Some(true)).then(|| ItemSide {
            description: description.clone(),
            unit_price: if sold { None } else { price },
            account_ref: AccountLink::to_ref(self.expense_account),
            tax_rate_ref: None,
        });
        Item {
            code: None,
            name: json::non_empty(self.name).unwrap_or_else(|| self.id.clone()),
            item_type: ItemType::Unknown,
            status: if self.is_archived == Some(true) {
                ItemStatus::Archived
            } else {
                ItemStatus::Active
            },
            sales,
            purchases,
            quantity_on_hand: None,
            source_modified_date: json::timestamp(self.modified_at.as_deref()),
            item_id: self.id,
        }
    }
}

/// A rate Wave writes as a fraction (`0.13` for 13%), read exactly from
/// the number's own text and kept as a percentage; a percentage finer than
/// ten-thousandths of a percent is rounded to them (half to even).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Fraction(pub(super) Quantity);

impl<'de> Deserialize<'de> for Fraction {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let raw: &RawValue = Deserialize::deserialize(deserializer)?;
        let text = raw.get().trim();
        let text = text
            .strip_prefix('"')
            .and_then(|inner| inner.strip_suffix('"'))
            .unwrap_or(text);
        percentage(text).map(Fraction).ok_or_else(|| {
            de::Error::custom(format!(
                "the rate {text} is not a fraction tributary can keep"
            ))
        })
    }
}

/// The percentage of a fraction written as `text`.
pub(super) fn percentage(text: &str) -> Option<Quantity> {
    let fraction = Decimal::from_str(text)
        .or_else(|_| Decimal::from_scientific(text))
        .ok()?;
    let percent = fraction.checked_mul(Decimal::ONE_HUNDRED)?;
    Quantity::from_decimal(percent.round_dp(Money::SCALE))
}

/// A sales tax as Wave's `salesTaxes` query gives it.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
pub(super) struct WaveSalesTax {
    id: String,
    name: Option<String>,
    abbreviation: Option<String>,
    /// Today's rate (`rate(for:)` without a date), a fraction.
    rate: Option<Fraction>,
    is_compound: Option<bool>,
    is_archived: Option<bool>,
    modified_at: Option<String>,
}

impl WaveSalesTax {
    /// Our tax rate: the abbreviation as the code, today's rate as a
    /// percentage, one component (Wave has no tax of several parts; a
    /// compound tax is charged on the other taxes of the line).
    pub(super) fn into_record(self) -> TaxRate {
        let rate = self.rate.map_or(Quantity(0), |rate| rate.0);
        let code = json::non_empty(self.abbreviation);
        let name = json::non_empty(self.name)
            .or_else(|| code.clone())
            .unwrap_or_else(|| self.id.clone());
        TaxRate {
            components: vec![TaxRateComponent {
                name: name.clone(),
                rate,
                is_compound: self.is_compound == Some(true),
            }],
            code,
            name,
            effective_tax_rate: rate,
            status: if self.is_archived == Some(true) {
                TaxRateStatus::Archived
            } else {
                TaxRateStatus::Active
            },
            source_modified_date: json::timestamp(self.modified_at.as_deref()),
            tax_rate_id: self.id,
        }
    }
}

/// A named place of an address: a `Province` or a `Country`.
#[derive(Deserialize)]
struct Place {
    name: Option<String>,
}

/// The business's `Address`.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct WaveAddress {
    address_line1: Option<String>,
    address_line2: Option<String>,
    city: Option<String>,
    province: Option<Place>,
    country: Option<Place>,
    postal_code: Option<String>,
}

/// The business as the company info query gives it.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
pub(super) struct WaveBusiness {
    id: String,
    name: Option<String>,
    currency: Option<Currency>,
    address: Option<WaveAddress>,
    phone: Option<String>,
    mobile: Option<String>,
    toll_free: Option<String>,
    website: Option<String>,
    created_at: Option<String>,
    modified_at: Option<String>,
}

impl WaveBusiness {
    /// Our company info: the business's name, currency, address (its
    /// street address), phone (else mobile, else toll-free) and website.
    /// Wave gives no legal name, registration or tax number, nor financial
    /// year: those are null.
    pub(super) fn into_record(self) -> CompanyInfo {
        let address = self.address.map(|address| Address {
            address_type: AddressType::Street,
            line1: json::non_empty(address.address_line1),
            line2: json::non_empty(address.address_line2),
            city: json::non_empty(address.city),
            region: address
                .province
                .and_then(|place| json::non_empty(place.name)),
            postal_code: json::non_empty(address.postal_code),
            country: address
                .country
                .and_then(|place| json::non_empty(place.name)),
        });
        let addresses = address
            .into_iter()
            .filter(|address| {
                address.line1.is_some() || address.city.is_some() || address.postal_code.is_some()
            })
            .collect();
        CompanyInfo {
            company_name: json::non_empty(self.name).unwrap_or_else(|| self.id.clone()),
            legal_name: None,
            registration_number: None,
            tax_number: None,
            base_currency: Currency::code_of(self.currency),
            financial_year_start: None,
            addresses,
            phone: json::non_empty(self.phone)
                .or_else(|| json::non_empty(self.mobile))
                .or_else(|| json::non_empty(self.toll_free)),
            website: json::non_empty(self.website),
            created_date: json::timestamp(self.created_at.as_deref()),
            source_modified_date: json::timestamp(self.modified_at.as_deref()),
            company_info_id: self.id,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_account_type_is_a_classification_and_a_new_one_unknown() {
        assert_eq!(classification(Some("ASSET")), AccountClassification::Asset);
        assert_eq!(
            classification(Some("LIABILITY")),
            AccountClassification::Liability
        );
        assert_eq!(
            classification(Some("EQUITY")),
            AccountClassification::Equity
        );
        assert_eq!(
            classification(Some("INCOME")),
            AccountClassification::Income
        );
        assert_eq!(
            classification(Some("EXPENSE")),
            AccountClassification::Expense
        );
        assert_eq!(
            classification(Some("asset")),
            AccountClassification::Unknown
        );
        assert_eq!(classification(None), AccountClassification::Unknown);
    }

    #[test]
    fn a_fraction_is_a_percentage_exactly_and_a_finer_one_rounds() {
        assert_eq!(percentage("0.13"), Some(Quantity::units(13)));
        assert_eq!(percentage("0.05"), Some(Quantity::units(5)));
        assert_eq!(percentage("0"), Some(Quantity(0)));
        assert_eq!(percentage("1"), Some(Quantity::units(100)));
        // 9.975%: Quebec's QST.
        assert_eq!(percentage("0.09975"), Some(Quantity(99_750)));
        assert_eq!(percentage("0.049875"), Some(Quantity(49_875)));
        // 12.3456785% keeps ten-thousandths of a percent, half to even.
        assert_eq!(percentage("0.123456785"), Some(Quantity(123_457)));
        assert_eq!(percentage("1.5E-1"), Some(Quantity::units(15)));
        assert_eq!(percentage("thirteen"), None);
        let read: Fraction = serde_json::from_str("\"0.0825\"").expect("a fraction");
        assert_eq!(read, Fraction(Quantity(82_500)));
        let read: Fraction = serde_json::from_str("0.15").expect("a number too");
        assert_eq!(read, Fraction(Quantity::units(15)));
    }

    fn product(sold: bool, bought: bool, taxes: &str) -> Item {
        let json = format!(
            r#"{{"id": "P1", "name": "Widget", "description": "A widget", "unitPrice": "2.0625",
                "isSold": {sold}, "isBought": {bought}, "isArchived": false,
                "modifiedAt": "2026-10-01T12:00:00Z",
                "incomeAccount": {{"id": "A-INCOME", "name": "Sales"}},
                "expenseAccount": {{"id": "A-COGS", "name": "Cost of goods sold"}},
                "defaultSalesTaxes": {taxes}}}"#
        );
        serde_json::from_str::<WaveProduct>(&json)
            .expect("a product")
            .into_record()
    }

    #[test]
    fn a_products_one_price_is_its_sale_price_unless_it_is_only_bought() {
        let both = product(true, true, r#"[{"id": "T1", "name": "HST"}]"#);
        let sales = both.sales.expect("sold");
        assert_eq!(sales.unit_price, Some(Money(20_625)));
        assert_eq!(
            sales.account_ref.map(|account| account.id).as_deref(),
            Some("A-INCOME")
        );
        assert_eq!(sales.tax_rate_ref.map(|tax| tax.id).as_deref(), Some("T1"));
        let purchases = both.purchases.expect("bought");
        assert_eq!(purchases.unit_price, None);
        assert_eq!(
            purchases.account_ref.map(|account| account.id).as_deref(),
            Some("A-COGS")
        );
        assert_eq!(both.item_type, ItemType::Unknown);

        let bought = product(false, true, "[]");
        assert!(bought.sales.is_none());
        assert_eq!(
            bought.purchases.and_then(|side| side.unit_price),
            Some(Money(20_625))
        );

        let two_taxes = product(true, false, r#"[{"id": "T1"}, {"id": "T2"}]"#);
        assert!(two_taxes.purchases.is_none());
        assert_eq!(two_taxes.sales.and_then(|side| side.tax_rate_ref), None);
    }
}
