//! Exact's chart and reference lists as ours: G/L accounts (classified by
//! `BalanceType`, `Type` and `BalanceSide`), supplier accounts, VAT codes
//! (their `Percentage` a fraction), items (sides by `IsSalesItem` and
//! `IsPurchaseItem`) and the division as company info with its financial
//! year. Sources: `NOTES.md`, "Accounting model".

use chrono::{Datelike, NaiveDate, Utc};
use rust_decimal::Decimal;
use serde::Deserialize;

use super::sync_api::{Counter, Stamped};
use crate::data::accounts::{Account, AccountClassification, AccountRef, AccountStatus};
use crate::data::company_info::{Address, AddressType, CompanyInfo, YearStart};
use crate::data::items::{Item, ItemSide, ItemStatus, ItemType};
use crate::data::money::{Money, Quantity};
use crate::data::suppliers::{Supplier, SupplierStatus};
use crate::data::tax_rates::{TaxRate, TaxRateComponent, TaxRateRef, TaxRateStatus};
use crate::platforms::kit::json::{self, Rounded};
use crate::platforms::kit::records::Keyed;
use crate::timestamp::Timestamp;

/// The fields of `sync/Financial/GLAccounts` read.
pub(super) const GL_ACCOUNT_FIELDS: &str =
    "Timestamp,ID,Code,Description,BalanceSide,BalanceType,Type,TypeDescription,IsBlocked,Modified";
/// The fields of `sync/CRM/Accounts` read for suppliers.
pub(super) const SUPPLIER_FIELDS: &str =
    "Timestamp,ID,Code,Name,Email,Phone,Blocked,EndDate,IsSupplier,Modified";
/// The fields of `sync/Logistics/Items` read.
pub(super) const ITEM_FIELDS: &str = "Timestamp,ID,Code,Description,IsSalesItem,IsPurchaseItem,\
IsStockItem,CostPriceStandard,GLRevenue,GLRevenueDescription,GLCosts,GLCostsDescription,SalesVatCode,\
SalesVatCodeDescription,StartDate,EndDate,Modified";
/// The fields of `vat/VATCodes` read.
pub(super) const VAT_CODE_FIELDS: &str = "ID,Code,Description,Percentage,IsBlocked,Modified";
/// The fields of `system/Divisions` read.
pub(super) const DIVISION_FIELDS: &str = "Code,Description,VATNumber,ChamberOfCommerceNumber,\
Currency,AddressLine1,AddressLine2,AddressLine3,Postcode,City,State,Country,Phone,Website,Created,Modified";

/// Exact's bank-like G/L account types (`Type`): cash, bank, credit card,
/// payment services.
const BANK_TYPES: [i64; 4] = [10, 12, 14, 16];

/// The classification of a G/L account: by its `Type` where the type says
/// it, else by `BalanceType` (B balance sheet, W profit and loss) and
/// `BalanceSide` (D debit, C credit).
pub(super) fn classification(
    balance_type: Option<&str>,
    kind: Option<i64>,
    side: Option<&str>,
) -> AccountClassification {
    use AccountClassification::{Asset, Equity, Expense, Income, Liability, Unknown};
    let by_type = match (balance_type, kind) {
        (Some("W"), Some(110 | 140 | 160)) => Some(Income),
        (Some("W"), Some(111 | 120..=126 | 130 | 150)) => Some(Expense),
        (Some("B"), Some(10 | 12 | 14 | 16 | 20 | 21 | 26 | 30 | 32 | 35 | 40)) => Some(Asset),
        (Some("B"), Some(22 | 24 | 25 | 27 | 29 | 55 | 60 | 100)) => Some(Liability),
        (Some("B"), Some(50 | 52)) => Some(Equity),
        _ => None,
    };
    by_type.unwrap_or(match (balance_type, side) {
        (Some("W"), Some("C")) => Income,
        (Some("W"), Some("D")) => Expense,
        (Some("B"), Some("D")) => Asset,
        (Some("B"), Some("C")) => Liability,
        _ => Unknown,
    })
}

/// A G/L account (`sync/Financial/GLAccounts`).
#[derive(Deserialize)]
#[serde(rename_all = "PascalCase")]
pub(super) struct GlAccount {
    timestamp: Counter,
    #[serde(rename = "ID")]
    id: String,
    code: Option<String>,
    description: Option<String>,
    balance_side: Option<String>,
    balance_type: Option<String>,
    #[serde(rename = "Type")]
    kind: Option<i64>,
    type_description: Option<String>,
    is_blocked: Option<bool>,
    modified: Option<String>,
}

impl Keyed for GlAccount {
    const ID: &'static str = "/ID";
}

impl Stamped for GlAccount {
    fn timestamp(&self) -> Counter {
        self.timestamp
    }
}

impl GlAccount {
    /// Our account: no balance (Exact keeps balances in `ReportingBalance`,
    /// per period), in the division's currency (null).
    pub(super) fn into_record(self) -> Account {
        let code = json::non_empty(self.code);
        Account {
            classification: classification(
                self.balance_type.as_deref(),
                self.kind,
                self.balance_side.as_deref(),
            ),
            account_name: json::non_empty(self.description.clone())
                .or_else(|| code.clone())
                .unwrap_or_else(|| self.id.clone()),
            nominal_code: code,
            description: None,
            account_type: json::non_empty(self.type_description),
            is_bank_account: self.kind.is_some_and(|kind| BANK_TYPES.contains(&kind)),
            status: if self.is_blocked == Some(true) {
                AccountStatus::Archived
            } else {
                AccountStatus::Active
            },
            currency: None,
            current_balance: None,
            source_modified_date: modified(self.modified.as_deref()),
            account_id: self.id,
        }
    }
}

/// A CRM account read for suppliers (`sync/CRM/Accounts`).
#[derive(Deserialize)]
#[serde(rename_all = "PascalCase")]
pub(super) struct SupplierAccount {
    timestamp: Counter,
    #[serde(rename = "ID")]
    id: String,
    code: Option<String>,
    name: Option<String>,
    email: Option<String>,
    phone: Option<String>,
    blocked: Option<bool>,
    end_date: Option<String>,
    is_supplier: Option<bool>,
    modified: Option<String>,
}

impl Keyed for SupplierAccount {
    const ID: &'static str = "/ID";
}

impl Stamped for SupplierAccount {
    fn timestamp(&self) -> Counter {
        self.timestamp
    }
}

impl SupplierAccount {
    /// Whether Exact marks it a supplier.
    pub(super) fn is_supplier(&self) -> bool {
        self.is_supplier == Some(true)
    }

    /// The account's id.
    pub(super) fn id(&self) -> &str {
        &self.id
    }

    /// Our supplier: archived when blocked or past its end date.
    pub(super) fn into_record(self) -> Supplier {
        let ended = self
            .end_date
            .as_deref()
            .and_then(json::xero_date)
            .is_some_and(|end| end < Utc::now().date_naive());
        Supplier {
            supplier_name: json::non_empty(self.name)
                .or_else(|| json::non_empty(self.code))
                .unwrap_or_else(|| self.id.clone()),
            email_address: json::non_empty(self.email),
            phone: json::non_empty(self.phone),
            default_currency: None,
            status: if self.blocked == Some(true) || ended {
                SupplierStatus::Archived
            } else {
                SupplierStatus::Active
            },
            source_modified_date: modified(self.modified.as_deref()),
            supplier_id: self.id,
        }
    }
}

/// A VAT code (`vat/VATCodes`).
#[derive(Deserialize)]
#[serde(rename_all = "PascalCase")]
pub(super) struct VatCode {
    code: Option<String>,
    description: Option<String>,
    percentage: Option<Rounded>,
    is_blocked: Option<bool>,
    modified: Option<String>,
}

impl Keyed for VatCode {
    const ID: &'static str = "/Code";
}

/// A VAT percentage in percent: Exact writes a fraction (`0.21`); a value
/// above one is taken as already in percent.
pub(super) fn percent(fraction: Money) -> Quantity {
    let value = fraction.to_decimal();
    let percent = if value.abs() <= Decimal::ONE {
        value * Decimal::ONE_HUNDRED
    } else {
        value
    };
    Quantity::from_decimal(percent.normalize()).unwrap_or(Quantity(0))
}

impl VatCode {
    /// Our tax rate, whose id is the VAT code itself: every line and item
    /// names a VAT code by its code, never by its `ID`.
    pub(super) fn into_record(self) -> Option<TaxRate> {
        let code = json::non_empty(self.code)?;
        let name = json::non_empty(self.description).unwrap_or_else(|| code.clone());
        let rate = percent(json::rounded(self.percentage));
        Some(TaxRate {
            tax_rate_id: code.clone(),
            code: Some(code),
            components: vec![TaxRateComponent {
                name: name.clone(),
                rate,
                is_compound: false,
            }],
            name,
            effective_tax_rate: rate,
            status: if self.is_blocked == Some(true) {
                TaxRateStatus::Archived
            } else {
                TaxRateStatus::Active
            },
            source_modified_date: modified(self.modified.as_deref()),
        })
    }
}

/// The reference to the tax rate of VAT code `code`.
pub(super) fn tax_rate_ref(code: Option<String>, name: Option<String>) -> Option<TaxRateRef> {
    TaxRateRef::to(json::non_empty(code), json::non_empty(name))
}

/// The reference to G/L account `id`.
pub(super) fn account_ref(id: Option<String>, name: Option<String>) -> Option<AccountRef> {
    AccountRef::to(json::non_empty(id), json::non_empty(name))
}

/// An item (`sync/Logistics/Items`).
#[derive(Deserialize)]
#[serde(rename_all = "PascalCase")]
pub(super) struct ExactItem {
    timestamp: Counter,
    #[serde(rename = "ID")]
    id: String,
    code: Option<String>,
    description: Option<String>,
    is_sales_item: Option<bool>,
    is_purchase_item: Option<bool>,
    is_stock_item: Option<bool>,
    cost_price_standard: Option<Rounded>,
    #[serde(rename = "GLRevenue")]
    gl_revenue: Option<String>,
    #[serde(rename = "GLRevenueDescription")]
    gl_revenue_description: Option<String>,
    #[serde(rename = "GLCosts")]
    gl_costs: Option<String>,
    #[serde(rename = "GLCostsDescription")]
    gl_costs_description: Option<String>,
    sales_vat_code: Option<String>,
    sales_vat_code_description: Option<String>,
    start_date: Option<String>,
    end_date: Option<String>,
    modified: Option<String>,
}

impl Keyed for ExactItem {
    const ID: &'static str = "/ID";
}

impl Stamped for ExactItem {
    fn timestamp(&self) -> Counter {
        self.timestamp
    }
}

impl ExactItem {
    /// Our item: a stock item is inventory, others non-inventory (Exact has
    /// no service flag on the item); active within `StartDate`..`EndDate`.
    /// No sales price (it lives in price lists) and no stock (it moves
    /// without the item's row version).
    pub(super) fn into_record(self) -> Item {
        let today = Utc::now().date_naive();
        let date = |text: Option<&str>| text.and_then(json::xero_date);
        let ended = date(self.end_date.as_deref()).is_some_and(|end| end < today);
        let not_started = date(self.start_date.as_deref()).is_some_and(|start| start > today);
        let sales = (self.is_sales_item == Some(true)).then(|| ItemSide {
            description: None,
            unit_price: None,
            account_ref: account_ref(self.gl_revenue, self.gl_revenue_description),
            tax_rate_ref: tax_rate_ref(self.sales_vat_code, self.sales_vat_code_description),
        });
        let purchases = (self.is_purchase_item == Some(true)).then(|| ItemSide {
            description: None,
            unit_price: self.cost_price_standard.map(Rounded::money),
            account_ref: account_ref(self.gl_costs, self.gl_costs_description),
            tax_rate_ref: None,
        });
        let code = json::non_empty(self.code);
        Item {
            name: json::non_empty(self.description)
                .or_else(|| code.clone())
                .unwrap_or_else(|| self.id.clone()),
            code,
            item_type: if self.is_stock_item == Some(true) {
                ItemType::Inventory
            } else {
                ItemType::NonInventory
            },
            status: if ended || not_started {
                ItemStatus::Archived
            } else {
                ItemStatus::Active
            },
            sales,
            purchases,
            quantity_on_hand: None,
            source_modified_date: modified(self.modified.as_deref()),
            item_id: self.id,
        }
    }
}

/// The division (`system/Divisions`, the licence's list, filtered on its code).
#[derive(Deserialize)]
#[serde(rename_all = "PascalCase")]
pub(super) struct DivisionDetails {
    code: i64,
    description: Option<String>,
    #[serde(rename = "VATNumber")]
    vat_number: Option<String>,
    chamber_of_commerce_number: Option<String>,
    currency: Option<String>,
    address_line1: Option<String>,
    address_line2: Option<String>,
    address_line3: Option<String>,
    postcode: Option<String>,
    city: Option<String>,
    state: Option<String>,
    country: Option<String>,
    phone: Option<String>,
    website: Option<String>,
    created: Option<String>,
    modified: Option<String>,
}

impl Keyed for DivisionDetails {
    const ID: &'static str = "/Code";
}

/// A financial period (`financial/FinancialPeriods`).
#[derive(Deserialize)]
#[serde(rename_all = "PascalCase")]
pub(super) struct FinancialPeriod {
    fin_year: Option<i64>,
    start_date: Option<String>,
}

impl Keyed for FinancialPeriod {
    const ID: &'static str = "/FinYear";
}

/// The start of the financial year in force on `today`: the latest first
/// period (`FinPeriod` 1) that has started.
pub(super) fn year_start(periods: &[FinancialPeriod], today: NaiveDate) -> Option<YearStart> {
    periods
        .iter()
        .filter_map(|period| {
            let start = period.start_date.as_deref().and_then(json::xero_date)?;
            Some((period.fin_year.unwrap_or_default(), start))
        })
        .filter(|(_, start)| *start <= today)
        .max()
        .map(|(_, start)| YearStart {
            month: start.month(),
            day: start.day(),
        })
}

impl DivisionDetails {
    /// Our company info: the division's name, its Chamber of Commerce and
    /// VAT numbers, currency and address, and the financial year's start.
    pub(super) fn into_record(self, financial_year_start: Option<YearStart>) -> CompanyInfo {
        let extra = [self.address_line2, self.address_line3]
            .into_iter()
            .filter_map(json::non_empty)
            .collect::<Vec<_>>()
            .join(", ");
        let address = Address {
            address_type: AddressType::Registered,
            line1: json::non_empty(self.address_line1),
            line2: json::non_empty(Some(extra)),
            city: json::non_empty(self.city),
            region: json::non_empty(self.state),
            postal_code: json::non_empty(self.postcode),
            country: json::non_empty(self.country),
        };
        let has_address =
            address.line1.is_some() || address.city.is_some() || address.postal_code.is_some();
        CompanyInfo {
            company_info_id: self.code.to_string(),
            company_name: json::non_empty(self.description)
                .unwrap_or_else(|| format!("Division {}", self.code)),
            legal_name: None,
            registration_number: json::non_empty(self.chamber_of_commerce_number),
            tax_number: json::non_empty(self.vat_number),
            base_currency: json::non_empty(self.currency),
            financial_year_start,
            addresses: if has_address {
                vec![address]
            } else {
                Vec::new()
            },
            phone: json::non_empty(self.phone),
            website: json::non_empty(self.website),
            created_date: modified(self.created.as_deref()),
            source_modified_date: modified(self.modified.as_deref()),
        }
    }
}

/// A date-time Exact writes (`/Date(ms)/`), as ours.
pub(super) fn modified(text: Option<&str>) -> Option<Timestamp> {
    text.and_then(json::xero_datetime).map(Timestamp)
}

#[cfg(test)]
mod tests {
    use super::*;
    use AccountClassification::{Asset, Equity, Expense, Income, Liability, Unknown};

    #[test]
    fn a_gl_account_is_classified_by_its_type_then_by_its_side() {
        assert_eq!(classification(Some("B"), Some(12), Some("D")), Asset);
        assert_eq!(classification(Some("B"), Some(22), Some("C")), Liability);
        assert_eq!(classification(Some("B"), Some(52), Some("C")), Equity);
        assert_eq!(classification(Some("W"), Some(110), Some("C")), Income);
        assert_eq!(classification(Some("W"), Some(121), Some("D")), Expense);
        // General (90) falls back on the side.
        assert_eq!(classification(Some("W"), Some(90), Some("C")), Income);
        assert_eq!(classification(Some("B"), Some(90), Some("C")), Liability);
        assert_eq!(classification(None, Some(90), None), Unknown);
    }

    #[test]
    fn a_vat_fraction_becomes_a_percentage() {
        let rate = |text: &str| {
            percent(crate::platforms::kit::json::parse_amount(text).expect("an amount"))
        };
        assert_eq!(rate("0.21"), Quantity::units(21));
        assert_eq!(rate("0.09"), Quantity::units(9));
        assert_eq!(rate("0"), Quantity(0));
        assert_eq!(rate("21"), Quantity::units(21));
    }
}
