//! The sandbox's synthetic data: every record is a pure function of
//! `(seed, index)`, so the same seed always yields the same data, any page
//! can be produced without the others, and memory stays flat whatever the
//! count.

use chrono::{DateTime, Days, NaiveDate, NaiveTime, Utc};

use super::SandboxAuthorization;
pub use super::ledger::{ACCOUNT_COUNT, TAX_RATE_COUNT};
use crate::data::accounts::Accounts;
use crate::data::bank_accounts::{BankAccount, BankAccountType, BankAccounts};
use crate::data::bank_transactions::{BankTransaction, BankTransactionStatus, BankTransactions};
use crate::data::bill_payments::BillPayments;
use crate::data::bills::Bills;
use crate::data::company_info::CompanyInfos;
use crate::data::credit_notes::CreditNotes;
use crate::data::customers::{Customer, CustomerStatus, Customers};
use crate::data::invoices::{CustomerRef, Invoice, InvoiceStatus, Invoices, LineItem};
use crate::data::items::Items;
use crate::data::journal_entries::JournalEntries;
use crate::data::money::{Money, Quantity};
use crate::data::orders::{Order, OrderLineItem, OrderStatus, Orders};
use crate::data::payments::Payments;
use crate::data::suppliers::Suppliers;
use crate::data::tax_rates::TaxRates;
use crate::data::{DataType, Definition, Records};
use crate::platforms::connector::{Fetched, Page};
use crate::platforms::numbers::{RecordCount, Seed};
use crate::timestamp::Timestamp;

/// Records per page.
pub const PAGE_SIZE: u64 = 1000;
/// `invoiceCount` when the authorization gives none.
pub const DEFAULT_INVOICE_COUNT: u64 = 250;
/// `orderCount` when the authorization gives none.
pub const DEFAULT_ORDER_COUNT: u64 = 250;
/// `bankTransactionCount` when the authorization gives none.
pub const DEFAULT_BANK_TRANSACTION_COUNT: u64 = 250;
/// How many bank accounts the synthetic organisation has.
pub const BANK_ACCOUNT_COUNT: u64 = 3;

/// The data a sandbox authorization describes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Dataset {
    /// The seed.
    pub seed: u64,
    /// How many invoices.
    pub invoice_count: u64,
    /// How many orders.
    pub order_count: u64,
    /// How many bank transactions, over all accounts.
    pub bank_transaction_count: u64,
    /// How many invoices were amended since the seed's data was made
    /// ([`Dataset::amended`]).
    pub changed_invoice_count: u64,
}

impl Dataset {
    /// The data a sandbox authorization describes.
    pub fn of(authorization: &SandboxAuthorization) -> Self {
        Self {
            seed: authorization.seed.map_or(0, Seed::get),
            invoice_count: authorization
                .invoice_count
                .map_or(DEFAULT_INVOICE_COUNT, RecordCount::get),
            order_count: authorization
                .order_count
                .map_or(DEFAULT_ORDER_COUNT, RecordCount::get),
            bank_transaction_count: authorization
                .bank_transaction_count
                .map_or(DEFAULT_BANK_TRANSACTION_COUNT, RecordCount::get),
            changed_invoice_count: authorization
                .changed_invoice_count
                .map_or(0, RecordCount::get),
        }
    }

    /// Only invoices: `invoice_count` of them, under `seed` (what the
    /// benchmark and the tests that count invoices use).
    pub fn invoices_only(seed: u64, invoice_count: u64) -> Self {
        Self {
            seed,
            invoice_count,
            order_count: 0,
            bank_transaction_count: 0,
            changed_invoice_count: 0,
        }
    }

    /// The same data with `changed` of its invoices amended.
    pub fn with_changed_invoices(self, changed: u64) -> Self {
        Self {
            changed_invoice_count: changed,
            ..self
        }
    }

    /// Whether the `index`-th invoice is one of the
    /// [`Dataset::changed_invoice_count`] amended ones: every `stride`-th
    /// from the first, so the changes spread evenly over the list.
    pub fn amended(&self, index: u64) -> bool {
        let changed = self.changed_invoice_count.min(self.invoice_count);
        if changed == 0 {
            return false;
        }
        let stride = self.invoice_count / changed;
        index.is_multiple_of(stride) && index / stride < changed
    }

    /// How many customers the invoices refer to.
    pub fn customer_count(&self) -> u64 {
        self.invoice_count.div_ceil(10).clamp(1, 50_000)
    }

    /// The `index`-th invoice.
    pub fn invoice(&self, index: u64) -> Invoice {
        let mut random = Random::new(self.seed, 1, index);
        let customer_index = random.below(self.customer_count());
        // At least 60 days back, so every payment falls before the epoch.
        let issue_date = epoch() - Days::new(60 + random.below(730));
        let due_date = issue_date + Days::new([14, 30, 45, 60][random.below(4) as usize]);
        let currency = CURRENCIES[weighted(&mut random, &[40, 30, 20, 5, 5])];
        let tax_rate_percent = [0, 5, 10, 20][random.below(4) as usize];

        let line_count = 1 + random.below(4);
        let mut line_items = Vec::with_capacity(line_count as usize);
        for line in 0..line_count {
            let quantity = 1 + random.below(10) as i64;
            let unit_cents = 500 + random.below(49_500) as i64;
            let sub_total_cents = quantity * unit_cents;
            // Rounded half up to the cent, in integers.
            let tax_cents = (sub_total_cents * tax_rate_percent + 50) / 100;
            line_items.push(LineItem {
                description: format!(
                    "{} #{}",
                    PRODUCTS[random.below(PRODUCTS.len() as u64) as usize],
                    line + 1
                ),
                unit_amount: Money::from_cents(unit_cents),
                quantity: Quantity::units(quantity),
                discount_amount: Money(0),
                sub_total: Money::from_cents(sub_total_cents),
                tax_amount: Money::from_cents(tax_cents),
                total_amount: Money::from_cents(sub_total_cents + tax_cents),
                account_ref: Some(super::ledger::account_ref("4000")),
            });
        }
        let sub_total = Money(line_items.iter().map(|item| item.sub_total.0).sum());
        let total_tax_amount = Money(line_items.iter().map(|item| item.tax_amount.0).sum());
        let total_amount = Money(sub_total.0 + total_tax_amount.0);

        let status = STATUSES[weighted(&mut random, &[5, 25, 10, 50, 10])];
        let amount_due = match status {
            InvoiceStatus::Draft | InvoiceStatus::Submitted | InvoiceStatus::Unknown => {
                total_amount
            }
            InvoiceStatus::PartiallyPaid => {
                let owed_percent = 10 + random.below(80) as i64;
                // Whole cents, strictly between nothing and everything.
                Money::from_cents((total_amount.0 / 100 * owed_percent / 100).max(1))
            }
            InvoiceStatus::Paid | InvoiceStatus::Void => Money(0),
        };
        let paid_on_date =
            (status == InvoiceStatus::Paid).then(|| issue_date + Days::new(1 + random.below(60)));
        let mut note = (random.below(3) == 0).then(|| "Thank you for your business.".to_owned());
        let mut source_modified_date = paid_on_date
            .unwrap_or(issue_date)
            .and_time(NaiveTime::from_hms_opt(9, 0, 0).unwrap_or_default())
            .and_utc()
            + chrono::Duration::minutes(random.below(600) as i64);
        if self.amended(index) {
            // Nothing the other lists derive from (amounts, status, dates)
            // moves, so every data type stays consistent.
            note = Some("Amended: delivery address corrected.".to_owned());
            source_modified_date = platform_time() + chrono::Duration::hours(1);
        }

        Invoice {
            invoice_id: format!("sbx-inv-{index:07}"),
            invoice_number: Some(format!("INV-{:06}", index + 1)),
            customer_ref: Some(CustomerRef {
                id: customer_id(customer_index),
                company_name: Some(self.customer_name(customer_index)),
            }),
            issue_date,
            due_date: Some(due_date),
            paid_on_date,
            currency: currency.to_owned(),
            sub_total,
            total_tax_amount,
            total_amount,
            amount_due,
            status,
            line_items,
            note,
            source_modified_date: Some(Timestamp(source_modified_date)),
        }
    }

    fn customer_name(&self, index: u64) -> String {
        let mut random = Random::new(self.seed, 2, index);
        let first = NAME_PARTS[random.below(NAME_PARTS.len() as u64) as usize];
        let second = NAME_PARTS[random.below(NAME_PARTS.len() as u64) as usize];
        let suffix = SUFFIXES[random.below(SUFFIXES.len() as u64) as usize];
        format!("{first} {second} {suffix} {}", index + 1)
    }

    /// The `index`-th customer.
    pub fn customer(&self, index: u64) -> Customer {
        let name = self.customer_name(index);
        let mut random = Random::new(self.seed, 3, index);
        Customer {
            customer_id: customer_id(index),
            email_address: Some(format!("accounts{}@example.com", index + 1)),
            phone: Some(format!("+44 20 7946 {:04}", random.below(10_000))),
            default_currency: Some(
                CURRENCIES[random.below(CURRENCIES.len() as u64) as usize].to_owned(),
            ),
            status: if random.below(20) == 0 {
                CustomerStatus::Archived
            } else {
                CustomerStatus::Active
            },
            customer_name: name,
            source_modified_date: Some(Timestamp(
                (epoch() - Days::new(random.below(900)))
                    .and_time(NaiveTime::MIN)
                    .and_utc(),
            )),
        }
    }

    /// The invoices from record `start`, a page of them.
    pub fn invoices(&self, start: u64) -> Fetched<Invoice> {
        self.slice(start, self.invoice_count, |index| self.invoice(index))
    }

    /// The customers from record `start`, a page of them.
    pub fn customers(&self, start: u64) -> Fetched<Customer> {
        self.slice(start, self.customer_count(), |index| self.customer(index))
    }

    /// The `index`-th order.
    pub fn order(&self, index: u64) -> Order {
        let mut random = Random::new(self.seed, 4, index);
        let customer_index = random.below(self.customer_count());
        let created = platform_time()
            - chrono::Duration::minutes(60 * 24 * 60 + random.below(60 * 24 * 730) as i64);
        let currency = CURRENCIES[weighted(&mut random, &[40, 30, 20, 5, 5])];
        let line_count = 1 + random.below(3);
        let mut line_items = Vec::with_capacity(line_count as usize);
        for line in 0..line_count {
            let quantity = 1 + random.below(5) as i64;
            let unit_cents = 199 + random.below(19_800) as i64;
            let gross_cents = quantity * unit_cents;
            let discount_cents = if random.below(5) == 0 {
                gross_cents / 10
            } else {
                0
            };
            let tax_cents = ((gross_cents - discount_cents) * 20 + 50) / 100;
            line_items.push(OrderLineItem {
                line_id: Some(format!("sbx-ord-{index:07}-{}", line + 1)),
                description: PRODUCTS[random.below(PRODUCTS.len() as u64) as usize].to_owned(),
                sku: Some(format!("SKU-{:04}", random.below(10_000))),
                quantity: Quantity::units(quantity),
                unit_amount: Money::from_cents(unit_cents),
                discount_amount: Money::from_cents(discount_cents),
                tax_amount: Money::from_cents(tax_cents),
                total_amount: Money::from_cents(gross_cents - discount_cents + tax_cents),
            });
        }
        let sum = |amount: fn(&OrderLineItem) -> Money| {
            Money(line_items.iter().map(|item| amount(item).0).sum())
        };
        let sub_total = Money(
            line_items
                .iter()
                .map(|item| item.unit_amount.0 * (item.quantity.0 / Quantity::units(1).0))
                .sum(),
        );
        let total_discount = sum(|item| item.discount_amount);
        let total_tax_amount = sum(|item| item.tax_amount);
        let total_amount = sum(|item| item.total_amount);
        let status = ORDER_STATUSES[weighted(&mut random, &[5, 15, 60, 8, 7, 5])];
        let total_refunded = match status {
            OrderStatus::Refunded => total_amount,
            OrderStatus::PartiallyRefunded => Money::from_cents((total_amount.0 / 100 / 3).max(1)),
            _ => Money(0),
        };
        let closed_date = match status {
            OrderStatus::Pending | OrderStatus::Open | OrderStatus::Unknown => None,
            _ => Some(Timestamp(
                created + chrono::Duration::hours(1 + random.below(24 * 14) as i64),
            )),
        };
        Order {
            order_id: format!("sbx-ord-{index:07}"),
            order_number: Some(format!("#{}", 1001 + index)),
            customer_ref: Some(CustomerRef {
                id: customer_id(customer_index),
                company_name: Some(self.customer_name(customer_index)),
            }),
            created_date: Timestamp(created),
            source_modified_date: Some(closed_date.unwrap_or(Timestamp(created))),
            closed_date,
            currency: currency.to_owned(),
            sub_total,
            total_tax_amount,
            total_discount,
            total_amount,
            total_refunded,
            status,
            line_items,
        }
    }

    /// The `index`-th bank account.
    pub fn bank_account(&self, index: u64) -> BankAccount {
        let mut random = Random::new(self.seed, 5, index);
        let (name, account_type) = BANK_ACCOUNTS[(index as usize) % BANK_ACCOUNTS.len()];
        let balance = Money::from_cents(random.below(5_000_000) as i64 - 500_000);
        BankAccount {
            account_id: bank_account_id(index),
            account_name: format!("{name} {}", index + 1),
            account_type,
            currency: "GBP".to_owned(),
            current_balance: Some(balance),
            available_balance: Some(if account_type == BankAccountType::CreditCard {
                Money::from_cents(1_000_000) + balance
            } else {
                balance
            }),
            institution: Some("Sandbox Bank".to_owned()),
            masked_account_number: Some(format!("••••{:04}", random.below(10_000))),
            source_modified_date: Some(Timestamp(platform_time())),
        }
    }

    /// The `index`-th bank transaction.
    pub fn bank_transaction(&self, index: u64) -> BankTransaction {
        let mut random = Random::new(self.seed, 6, index);
        let account = random.below(BANK_ACCOUNT_COUNT);
        let date = epoch() - Days::new(random.below(730));
        let (description, merchant, category, sign) =
            TRANSACTIONS[random.below(TRANSACTIONS.len() as u64) as usize];
        let cents = 100 + random.below(250_000) as i64;
        BankTransaction {
            transaction_id: format!("sbx-txn-{index:07}"),
            account_id: bank_account_id(account),
            date,
            description: format!("{description} {:06}", random.below(1_000_000)),
            amount: Money::from_cents(sign * cents),
            currency: "GBP".to_owned(),
            // The newest few days are still pending, as at a real bank.
            status: if date > epoch() - Days::new(3) {
                BankTransactionStatus::Pending
            } else {
                BankTransactionStatus::Posted
            },
            merchant_name: merchant.map(str::to_owned),
            category: Some(category.to_owned()),
            source_modified_date: Some(Timestamp(
                date.and_time(NaiveTime::MIN).and_utc() + chrono::Duration::hours(18),
            )),
        }
    }

    /// The orders from record `start`, a page of them.
    pub fn orders(&self, start: u64) -> Fetched<Order> {
        self.slice(start, self.order_count, |index| self.order(index))
    }

    /// The bank accounts from record `start`, a page of them.
    pub fn bank_accounts(&self, start: u64) -> Fetched<BankAccount> {
        self.slice(start, BANK_ACCOUNT_COUNT, |index| self.bank_account(index))
    }

    /// The bank transactions from record `start`, a page of them.
    pub fn bank_transactions(&self, start: u64) -> Fetched<BankTransaction> {
        self.slice(start, self.bank_transaction_count, |index| {
            self.bank_transaction(index)
        })
    }

    /// The page of `data_type` from record `start` (for test connectors
    /// standing in for the sandbox).
    pub fn page(&self, data_type: DataType, start: u64) -> Page {
        fn typed<D: Definition>(page: Fetched<D::Record>) -> Page {
            Page {
                records: Records::of::<D>(page.records),
                next: page.next,
                total: page.total,
                whole_list: true,
                issues: page.issues,
                resume: None,
                removed: Vec::new(),
            }
        }
        match data_type.name() {
            "invoices" => typed::<Invoices>(self.invoices(start)),
            "orders" => typed::<Orders>(self.orders(start)),
            "bankAccounts" => typed::<BankAccounts>(self.bank_accounts(start)),
            "bankTransactions" => typed::<BankTransactions>(self.bank_transactions(start)),
            "accounts" => typed::<Accounts>(self.accounts(start)),
            "suppliers" => typed::<Suppliers>(self.suppliers(start)),
            "taxRates" => typed::<TaxRates>(self.tax_rates(start)),
            "bills" => typed::<Bills>(self.bills(start)),
            "payments" => typed::<Payments>(self.payments(start)),
            "billPayments" => typed::<BillPayments>(self.bill_payments(start)),
            "creditNotes" => typed::<CreditNotes>(self.credit_notes(start)),
            "items" => typed::<Items>(self.items(start)),
            "journalEntries" => typed::<JournalEntries>(self.journal_entries(start)),
            "companyInfo" => typed::<CompanyInfos>(Fetched::all(
                vec![self.company_info("sbx-standing-in", None)],
                None,
            )),
            _ => typed::<Customers>(self.customers(start)),
        }
    }

    pub(super) fn slice<R>(&self, start: u64, total: u64, record: impl Fn(u64) -> R) -> Fetched<R> {
        let end = start.saturating_add(PAGE_SIZE).min(total);
        Fetched::all(
            (start.min(end)..end).map(record).collect(),
            (end < total).then(|| end.to_string()),
        )
        .of_total(Some(total))
    }
}

fn customer_id(index: u64) -> String {
    format!("sbx-cus-{index:06}")
}

fn bank_account_id(index: u64) -> String {
    format!("sbx-acc-{index}")
}

/// Dates count back from a fixed day, not from today, so data never drifts.
pub(super) fn epoch() -> NaiveDate {
    NaiveDate::from_ymd_opt(2026, 6, 30).unwrap_or_default()
}

const CURRENCIES: [&str; 5] = ["GBP", "USD", "EUR", "AUD", "CAD"];
const STATUSES: [InvoiceStatus; 5] = [
    InvoiceStatus::Draft,
    InvoiceStatus::Submitted,
    InvoiceStatus::PartiallyPaid,
    InvoiceStatus::Paid,
    InvoiceStatus::Void,
];
const ORDER_STATUSES: [OrderStatus; 6] = [
    OrderStatus::Pending,
    OrderStatus::Open,
    OrderStatus::Completed,
    OrderStatus::Cancelled,
    OrderStatus::Refunded,
    OrderStatus::PartiallyRefunded,
];
const BANK_ACCOUNTS: [(&str, BankAccountType); 3] = [
    ("Business Current", BankAccountType::Current),
    ("Business Savings", BankAccountType::Savings),
    ("Business Card", BankAccountType::CreditCard),
];
/// (statement text, merchant, category, sign): what a small business's
/// statement is made of.
const TRANSACTIONS: [(&str, Option<&str>, &str, i64); 6] = [
    (
        "CARD PAYMENT TO OFFICE SUPPLIES CO",
        Some("Office Supplies Co"),
        "Office",
        -1,
    ),
    ("FASTER PAYMENT FROM CUSTOMER", None, "Income", 1),
    (
        "DIRECT DEBIT CLOUD HOSTING",
        Some("Cloud Hosting Ltd"),
        "Software",
        -1,
    ),
    (
        "CARD PAYMENT TO RAIL OPERATOR",
        Some("National Rail"),
        "Travel",
        -1,
    ),
    ("BANK GIRO CREDIT REFUND", None, "Refunds", 1),
    (
        "STANDING ORDER RENT",
        Some("Harbour Properties"),
        "Rent",
        -1,
    ),
];
const PRODUCTS: [&str; 8] = [
    "Consulting hours",
    "Annual licence",
    "Support plan",
    "Hardware kit",
    "Training day",
    "Design retainer",
    "Cloud hosting",
    "Installation",
];
pub(super) const NAME_PARTS: [&str; 12] = [
    "Northwind",
    "Blue",
    "Harbour",
    "Oak",
    "Summit",
    "River",
    "Copper",
    "Maple",
    "Atlas",
    "Granite",
    "Willow",
    "Beacon",
];
const SUFFIXES: [&str; 5] = ["Ltd", "LLC", "GmbH", "Pty Ltd", "Inc"];

/// Picks an index with the given weights (they sum to 100).
pub(super) fn weighted(random: &mut Random, weights: &[u64]) -> usize {
    let mut roll = random.below(weights.iter().sum());
    for (index, weight) in weights.iter().enumerate() {
        if roll < *weight {
            return index;
        }
        roll -= weight;
    }
    weights.len() - 1
}

/// SplitMix64 seeded by (seed, stream, index): a fast, well-mixed
/// deterministic sequence per record.
pub(super) struct Random(u64);

impl Random {
    pub(super) fn new(seed: u64, stream: u64, index: u64) -> Self {
        let mut random = Self(
            seed ^ stream.wrapping_mul(0xA076_1D64_78BD_642F)
                ^ index.wrapping_mul(0x9E37_79B9_7F4A_7C15),
        );
        random.next();
        random
    }

    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    pub(super) fn below(&mut self, bound: u64) -> u64 {
        if bound == 0 { 0 } else { self.next() % bound }
    }
}

/// When the sandbox's records changed on "the platform": a fixed instant.
pub fn platform_time() -> DateTime<Utc> {
    epoch().and_time(NaiveTime::MIN).and_utc()
}

#[cfg(test)]
mod tests;
