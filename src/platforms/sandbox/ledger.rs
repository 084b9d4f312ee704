//! The sandbox's ledger beyond sales: its chart of accounts (whose trial
//! balance balances), its suppliers, its tax rates, its items and the
//! company itself, each record a pure function of the seed and its index
//! (the company: of the organization id) like the rest of [`Dataset`].

use chrono::{Days, NaiveTime};

use super::dataset::{Dataset, NAME_PARTS, Random, epoch};
use crate::data::accounts::{Account, AccountClassification, AccountRef, AccountStatus};
use crate::data::company_info::{Address, AddressType, CompanyInfo, YearStart};
use crate::data::items::{Item, ItemSide, ItemStatus, ItemType};
use crate::data::money::{Money, Quantity};
use crate::data::suppliers::{Supplier, SupplierStatus};
use crate::data::tax_rates::{TaxRate, TaxRateComponent, TaxRateRef, TaxRateStatus};
use crate::platforms::connector::Fetched;
use crate::timestamp::Timestamp;

/// How many accounts its chart of accounts has.
pub const ACCOUNT_COUNT: u64 = CHART.len() as u64;
/// How many tax rates it has.
pub const TAX_RATE_COUNT: u64 = TAX_TABLE.len() as u64;
/// How many items it sells and buys.
pub const ITEM_COUNT: u64 = ITEMS.len() as u64;

impl Dataset {
    /// The `index`-th account of the chart. Balances are in each account's
    /// natural sign, and the chart balances: the debit-natured (assets,
    /// expenses) total what the credit-natured (liabilities, equity,
    /// income) do, retained earnings taking up the difference.
    pub fn account(&self, index: u64) -> Account {
        let entry = &CHART[(index as usize) % CHART.len()];
        let balance = if entry.code == BALANCING_CODE {
            let (debits, credits) = (0..ACCOUNT_COUNT)
                .filter(|other| CHART[*other as usize].code != BALANCING_CODE)
                .map(|other| (&CHART[other as usize], self.chart_balance(other)))
                .fold((0, 0), |(debits, credits), (other, balance)| {
                    if is_debit_natured(other.classification) {
                        (debits + balance.0, credits)
                    } else {
                        (debits, credits + balance.0)
                    }
                });
            Money(debits - credits)
        } else {
            self.chart_balance(index)
        };
        let mut random = Random::new(self.seed, 7, index);
        Account {
            account_id: format!("sbx-gl-{}", entry.code),
            nominal_code: Some(entry.code.to_owned()),
            account_name: entry.name.to_owned(),
            description: entry.description.map(str::to_owned),
            classification: entry.classification,
            account_type: Some(entry.account_type.to_owned()),
            is_bank_account: entry.is_bank,
            status: if entry.archived {
                AccountStatus::Archived
            } else {
                AccountStatus::Active
            },
            currency: Some("GBP".to_owned()),
            current_balance: Some(balance),
            source_modified_date: Some(Timestamp(
                (epoch() - Days::new(random.below(400)))
                    .and_time(NaiveTime::MIN)
                    .and_utc(),
            )),
        }
    }

    /// The balance of the `index`-th account of the chart, but the balancing one.
    fn chart_balance(&self, index: u64) -> Money {
        let entry = &CHART[(index as usize) % CHART.len()];
        if entry.archived {
            return Money(0);
        }
        let mut random = Random::new(self.seed, 8, index);
        Money::from_cents(random.below(entry.most_cents) as i64)
    }

    /// The accounts from record `start`, a page of them.
    pub fn accounts(&self, start: u64) -> Fetched<Account> {
        self.slice(start, ACCOUNT_COUNT, |index| self.account(index))
    }

    /// How many suppliers the organisation buys from: a fifth as many as
    /// its customers, at least one.
    pub fn supplier_count(&self) -> u64 {
        self.customer_count().div_ceil(5)
    }

    /// The `index`-th supplier.
    pub fn supplier(&self, index: u64) -> Supplier {
        let mut random = Random::new(self.seed, 9, index);
        let first = NAME_PARTS[random.below(NAME_PARTS.len() as u64) as usize];
        let trade = SUPPLIER_TRADES[random.below(SUPPLIER_TRADES.len() as u64) as usize];
        Supplier {
            supplier_id: format!("sbx-sup-{index:05}"),
            supplier_name: format!("{first} {trade} {}", index + 1),
            email_address: Some(format!("billing{}@supplier.example", index + 1)),
            phone: Some(format!("+44 161 496 {:04}", random.below(10_000))),
            default_currency: Some(if random.below(5) == 0 { "EUR" } else { "GBP" }.to_owned()),
            status: if random.below(15) == 0 {
                SupplierStatus::Archived
            } else {
                SupplierStatus::Active
            },
            source_modified_date: Some(Timestamp(
                (epoch() - Days::new(random.below(900)))
                    .and_time(NaiveTime::MIN)
                    .and_utc(),
            )),
        }
    }

    /// The suppliers from record `start`, a page of them.
    pub fn suppliers(&self, start: u64) -> Fetched<Supplier> {
        self.slice(start, self.supplier_count(), |index| self.supplier(index))
    }

    /// The `index`-th tax rate: the invoices' rates (0, 5, 10, 20%), an
    /// exempt one, an archived one and one of two components; the
    /// effective rate is the sum of the components (none is compound).
    pub fn tax_rate(&self, index: u64) -> TaxRate {
        let (code, name, components, archived) = TAX_TABLE[(index as usize) % TAX_TABLE.len()];
        let components: Vec<TaxRateComponent> = components
            .iter()
            .map(|(component, ten_thousandths)| TaxRateComponent {
                name: (*component).to_owned(),
                rate: Quantity(*ten_thousandths),
                is_compound: false,
            })
            .collect();
        TaxRate {
            tax_rate_id: format!("sbx-tax-{}", code.to_lowercase()),
            code: Some(code.to_owned()),
            name: name.to_owned(),
            effective_tax_rate: Quantity(components.iter().map(|component| component.rate.0).sum()),
            components,
            status: if archived {
                TaxRateStatus::Archived
            } else {
                TaxRateStatus::Active
            },
            source_modified_date: Some(Timestamp(
                (epoch() - Days::new(400))
                    .and_time(NaiveTime::MIN)
                    .and_utc(),
            )),
        }
    }

    /// The tax rates from record `start`, a page of them.
    pub fn tax_rates(&self, start: u64) -> Fetched<TaxRate> {
        self.slice(start, TAX_RATE_COUNT, |index| self.tax_rate(index))
    }

    /// The `index`-th item: goods sold into `4000` Sales (and bought into
    /// `5000` Cost of Goods Sold), services sold into `4100` Services, all
    /// at the standard rate; inventory items with a quantity in stock.
    pub fn item(&self, index: u64) -> Item {
        let entry = &ITEMS[(index as usize) % ITEMS.len()];
        let mut random = Random::new(self.seed, 14, index);
        let standard = || {
            Some(TaxRateRef {
                id: "sbx-tax-s".to_owned(),
                name: Some("Standard Rate".to_owned()),
            })
        };
        let account = |code: &str, name: &str| {
            Some(AccountRef {
                id: format!("sbx-gl-{code}"),
                name: Some(name.to_owned()),
            })
        };
        let (income_code, income_name) = if entry.item_type == ItemType::Service {
            ("4100", "Services")
        } else {
            ("4000", "Sales")
        };
        Item {
            item_id: format!("sbx-item-{}", entry.code.to_lowercase()),
            code: Some(entry.code.to_owned()),
            name: entry.name.to_owned(),
            item_type: entry.item_type,
            status: if entry.archived {
                ItemStatus::Archived
            } else {
                ItemStatus::Active
            },
            sales: Some(ItemSide {
                description: Some(entry.name.to_owned()),
                unit_price: Some(Money::from_cents(entry.sale_cents)),
                account_ref: account(income_code, income_name),
                tax_rate_ref: standard(),
            }),
            purchases: entry.purchase_cents.map(|cents| ItemSide {
                description: Some(format!("{} (bought in)", entry.name)),
                unit_price: Some(Money::from_cents(cents)),
                account_ref: account("5000", "Cost of Goods Sold"),
                tax_rate_ref: standard(),
            }),
            quantity_on_hand: (entry.item_type == ItemType::Inventory)
                .then(|| Quantity::units(random.below(500) as i64)),
            source_modified_date: Some(Timestamp(
                (epoch() - Days::new(random.below(300)))
                    .and_time(NaiveTime::MIN)
                    .and_utc(),
            )),
        }
    }

    /// The items from record `start`, a page of them.
    pub fn items(&self, start: u64) -> Fetched<Item> {
        self.slice(start, ITEM_COUNT, |index| self.item(index))
    }

    /// The organization itself, called `organization_id` at the sandbox
    /// (a linkable organization has its name; any other is named after
    /// its id): British, books in pounds, a year that starts in April.
    pub fn company_info(&self, organization_id: &str, name: Option<&str>) -> CompanyInfo {
        let mut random = Random::new(self.seed, 15, 0);
        let company_name = name.map_or_else(
            || format!("Sandbox Trading Ltd ({organization_id})"),
            str::to_owned,
        );
        CompanyInfo {
            company_info_id: organization_id.to_owned(),
            legal_name: Some(format!("{company_name} (registered)")),
            company_name,
            registration_number: Some(format!("{:08}", random.below(100_000_000))),
            tax_number: Some(format!("GB{:09}", random.below(1_000_000_000))),
            base_currency: Some("GBP".to_owned()),
            financial_year_start: Some(YearStart { month: 4, day: 1 }),
            addresses: vec![
                Address {
                    address_type: AddressType::Registered,
                    line1: Some("1 Harbour Street".to_owned()),
                    line2: Some("Suite 4".to_owned()),
                    city: Some("Bristol".to_owned()),
                    region: None,
                    postal_code: Some("BS1 4RN".to_owned()),
                    country: Some("GB".to_owned()),
                },
                Address {
                    address_type: AddressType::Street,
                    line1: Some(format!("{} Market Place", 1 + random.below(90))),
                    line2: None,
                    city: Some("Bath".to_owned()),
                    region: Some("Somerset".to_owned()),
                    postal_code: Some("BA1 1AA".to_owned()),
                    country: Some("GB".to_owned()),
                },
            ],
            phone: Some(format!("+44 117 496 {:04}", random.below(10_000))),
            website: Some("https://sandbox.example".to_owned()),
            created_date: Some(Timestamp(
                (epoch() - Days::new(3 * 365))
                    .and_time(NaiveTime::MIN)
                    .and_utc(),
            )),
            source_modified_date: Some(Timestamp(
                (epoch() - Days::new(30)).and_time(NaiveTime::MIN).and_utc(),
            )),
        }
    }
}

/// An item the sandbox sells (and perhaps buys).
struct ItemEntry {
    code: &'static str,
    name: &'static str,
    item_type: ItemType,
    sale_cents: i64,
    purchase_cents: Option<i64>,
    archived: bool,
}

const fn item(
    code: &'static str,
    name: &'static str,
    item_type: ItemType,
    sale_cents: i64,
    purchase_cents: Option<i64>,
) -> ItemEntry {
    ItemEntry {
        code,
        name,
        item_type,
        sale_cents,
        purchase_cents,
        archived: false,
    }
}

/// What the sandbox sells: the invoices' products, and one archived item.
const ITEMS: [ItemEntry; 9] = {
    use ItemType::{Inventory, NonInventory, Service};
    [
        item("CONS-HR", "Consulting hours", Service, 12_000, None),
        item(
            "LIC-ANN",
            "Annual licence",
            NonInventory,
            99_900,
            Some(45_000),
        ),
        item("SUP-PLN", "Support plan", Service, 30_000, None),
        item("HW-KIT", "Hardware kit", Inventory, 45_000, Some(28_000)),
        item("TRN-DAY", "Training day", Service, 80_000, None),
        item("DES-RET", "Design retainer", Service, 150_000, None),
        item("CLD-HST", "Cloud hosting", NonInventory, 5_000, Some(2_000)),
        item("INST", "Installation", Service, 20_000, None),
        ItemEntry {
            archived: true,
            ..item("OLD-KIT", "Legacy kit", Inventory, 30_000, Some(20_000))
        },
    ]
};

/// A reference to the chart's account of `code` (its name as the chart
/// has it; the code alone should the chart not have it).
pub(super) fn account_ref(code: &str) -> AccountRef {
    AccountRef {
        id: format!("sbx-gl-{code}"),
        name: CHART
            .iter()
            .find(|entry| entry.code == code)
            .map(|entry| entry.name.to_owned()),
    }
}

/// An account of the sandbox's chart.
struct ChartEntry {
    code: &'static str,
    name: &'static str,
    description: Option<&'static str>,
    classification: AccountClassification,
    account_type: &'static str,
    is_bank: bool,
    archived: bool,
    /// The largest balance it is given, in cents.
    most_cents: u64,
}

/// The account whose balance makes the chart balance.
const BALANCING_CODE: &str = "3100";

/// Whether an account of `classification` carries a debit balance.
fn is_debit_natured(classification: AccountClassification) -> bool {
    matches!(
        classification,
        AccountClassification::Asset | AccountClassification::Expense
    )
}

const fn entry(
    code: &'static str,
    name: &'static str,
    classification: AccountClassification,
    account_type: &'static str,
    most_cents: u64,
) -> ChartEntry {
    ChartEntry {
        code,
        name,
        description: None,
        classification,
        account_type,
        is_bank: false,
        archived: false,
        most_cents,
    }
}

/// A small business's chart of accounts, in code order.
const CHART: [ChartEntry; 21] = {
    use AccountClassification::{Asset, Equity, Expense, Income, Liability};
    [
        ChartEntry {
            is_bank: true,
            description: Some("The main operating account"),
            ..entry("1000", "Business Current Account", Asset, "Bank", 5_000_000)
        },
        ChartEntry {
            is_bank: true,
            ..entry(
                "1010",
                "Business Savings Account",
                Asset,
                "Bank",
                10_000_000,
            )
        },
        entry(
            "1100",
            "Accounts Receivable",
            Asset,
            "Accounts Receivable",
            8_000_000,
        ),
        entry("1200", "Inventory", Asset, "Current Asset", 3_000_000),
        entry("1500", "Office Equipment", Asset, "Fixed Asset", 2_000_000),
        entry(
            "2000",
            "Accounts Payable",
            Liability,
            "Accounts Payable",
            4_000_000,
        ),
        ChartEntry {
            description: Some("VAT collected on sales less VAT paid on purchases"),
            ..entry(
                "2100",
                "VAT Control",
                Liability,
                "Current Liability",
                1_500_000,
            )
        },
        ChartEntry {
            is_bank: true,
            ..entry(
                "2200",
                "Business Credit Card",
                Liability,
                "Credit Card",
                500_000,
            )
        },
        entry(
            "2500",
            "Bank Loan",
            Liability,
            "Non-current Liability",
            6_000_000,
        ),
        entry("3000", "Owner's Capital", Equity, "Equity", 2_500_000),
        ChartEntry {
            description: Some("Profits kept in the business from earlier years"),
            ..entry("3100", "Retained Earnings", Equity, "Equity", 0)
        },
        entry("4000", "Sales", Income, "Revenue", 20_000_000),
        entry("4100", "Services", Income, "Revenue", 8_000_000),
        entry("4900", "Interest Income", Income, "Other Income", 100_000),
        entry(
            "5000",
            "Cost of Goods Sold",
            Expense,
            "Direct Costs",
            9_000_000,
        ),
        entry("6000", "Rent", Expense, "Overhead", 2_400_000),
        entry("6100", "Wages and Salaries", Expense, "Overhead", 9_000_000),
        entry(
            "6200",
            "Software Subscriptions",
            Expense,
            "Overhead",
            300_000,
        ),
        entry("6300", "Travel", Expense, "Overhead", 400_000),
        ChartEntry {
            archived: true,
            ..entry("6400", "Entertainment", Expense, "Overhead", 0)
        },
        entry("6900", "Bank Fees", Expense, "Overhead", 50_000),
    ]
};

/// The sandbox's tax rates: code, name, components (name, rate in
/// ten-thousandths of a percent), archived.
type TaxEntry = (
    &'static str,
    &'static str,
    &'static [(&'static str, i64)],
    bool,
);
const TAX_TABLE: [TaxEntry; 7] = [
    ("S", "Standard Rate", &[("VAT", 200_000)], false),
    ("I", "Intermediate Rate", &[("VAT", 100_000)], false),
    ("R", "Reduced Rate", &[("VAT", 50_000)], false),
    ("Z", "Zero Rated", &[("VAT", 0)], false),
    ("E", "Exempt", &[], false),
    ("OLD", "Old Standard Rate", &[("VAT", 175_000)], true),
    (
        "GSTQST",
        "GST + QST",
        &[("GST", 50_000), ("QST", 99_750)],
        false,
    ),
];

/// What the sandbox's suppliers sell it.
const SUPPLIER_TRADES: [&str; 8] = [
    "Wholesale",
    "Packaging",
    "Logistics",
    "Office Supplies",
    "Print Works",
    "IT Services",
    "Cleaning",
    "Utilities",
];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_chart_of_accounts_balances_with_unique_codes() {
        for seed in [0, 1, 42] {
            let accounts = Dataset::invoices_only(seed, 10).accounts(0).records;
            assert_eq!(accounts.len() as u64, ACCOUNT_COUNT);
            let mut debits = 0;
            let mut credits = 0;
            for account in &accounts {
                let balance = account.current_balance.expect("a balance").0;
                if is_debit_natured(account.classification) {
                    debits += balance;
                } else {
                    credits += balance;
                }
            }
            assert_eq!(debits, credits, "seed {seed}: the trial balance balances");
            let codes: Vec<_> = accounts.iter().map(|a| a.nominal_code.clone()).collect();
            let mut sorted = codes.clone();
            sorted.sort();
            sorted.dedup();
            assert_eq!(sorted, codes, "codes are unique and in order");
            for classification in AccountClassification::ALL {
                assert!(
                    *classification == AccountClassification::Unknown
                        || accounts.iter().any(|a| a.classification == *classification),
                    "{classification:?} is used"
                );
            }
            assert!(accounts.iter().any(|a| a.status == AccountStatus::Archived));
            assert_eq!(
                Dataset::invoices_only(seed, 10).account(10),
                accounts[10],
                "pure"
            );
        }
    }

    #[test]
    fn each_tax_rate_is_the_sum_of_its_components() {
        let rates = Dataset::invoices_only(3, 10).tax_rates(0).records;
        assert_eq!(rates.len() as u64, TAX_RATE_COUNT);
        for rate in &rates {
            let sum: i64 = rate
                .components
                .iter()
                .map(|component| component.rate.0)
                .sum();
            assert_eq!(rate.effective_tax_rate.0, sum, "{}", rate.name);
        }
        let standard = &rates[0];
        assert_eq!(
            serde_json::to_value(standard.effective_tax_rate).ok(),
            Some("20".into())
        );
        assert_eq!(rates[6].effective_tax_rate, Quantity(149_750));
    }
}
