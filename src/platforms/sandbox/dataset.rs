//! The sandbox's synthetic data: every record is a pure function of
//! `(seed, index)`, so the same seed always yields the same data, any page
//! can be produced without the others, and memory stays flat whatever the
//! count.

use chrono::{DateTime, Days, NaiveDate, NaiveTime, Utc};

use super::SandboxAuthorization;
use crate::data::customers::{Customer, CustomerStatus, Customers};
use crate::data::invoices::{CustomerRef, Invoice, InvoiceStatus, Invoices, LineItem};
use crate::data::money::{Money, Quantity};
use crate::data::{DataType, Records};
use crate::platforms::connector::{Fetched, Page};
use crate::platforms::numbers::{InvoiceCount, Seed};
use crate::timestamp::Timestamp;

/// Records per page.
pub const PAGE_SIZE: u64 = 1000;
/// `invoiceCount` when the authorization gives none.
pub const DEFAULT_INVOICE_COUNT: u64 = 250;

/// The data a sandbox authorization describes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Dataset {
    /// The seed.
    pub seed: u64,
    /// How many invoices.
    pub invoice_count: u64,
}

impl Dataset {
    /// The data a sandbox authorization describes.
    pub fn of(authorization: &SandboxAuthorization) -> Self {
        Self {
            seed: authorization.seed.map_or(0, Seed::get),
            invoice_count: authorization
                .invoice_count
                .map_or(DEFAULT_INVOICE_COUNT, InvoiceCount::get),
        }
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
        let note = (random.below(3) == 0).then(|| "Thank you for your business.".to_owned());
        let source_modified_date = paid_on_date
            .unwrap_or(issue_date)
            .and_time(NaiveTime::from_hms_opt(9, 0, 0).unwrap_or_default())
            .and_utc()
            + chrono::Duration::minutes(random.below(600) as i64);

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

    /// The page of `data_type` from record `start` (for test connectors
    /// standing in for the sandbox).
    pub fn page(&self, data_type: DataType, start: u64) -> Page {
        let (records, next, total) = if data_type == DataType::INVOICES {
            let page = self.invoices(start);
            (Records::of::<Invoices>(page.records), page.next, page.total)
        } else {
            let page = self.customers(start);
            (Records::of::<Customers>(page.records), page.next, page.total)
        };
        Page {
            records,
            next,
            total,
        }
    }

    fn slice<R>(&self, start: u64, total: u64, record: impl Fn(u64) -> R) -> Fetched<R> {
        let end = start.saturating_add(PAGE_SIZE).min(total);
        Fetched {
            records: (start.min(end)..end).map(record).collect(),
            next: (end < total).then(|| end.to_string()),
            total: Some(total),
        }
    }
}

fn customer_id(index: u64) -> String {
    format!("sbx-cus-{index:06}")
}

/// Dates count back from a fixed day, not from today, so data never drifts.
fn epoch() -> NaiveDate {
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
const NAME_PARTS: [&str; 12] = [
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
fn weighted(random: &mut Random, weights: &[u64]) -> usize {
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
struct Random(u64);

impl Random {
    fn new(seed: u64, stream: u64, index: u64) -> Self {
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

    fn below(&mut self, bound: u64) -> u64 {
        if bound == 0 { 0 } else { self.next() % bound }
    }
}

/// When the sandbox's records changed on "the platform": a fixed instant.
pub fn platform_time() -> DateTime<Utc> {
    epoch().and_time(NaiveTime::MIN).and_utc()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dataset(seed: u64, invoice_count: u64) -> Dataset {
        Dataset {
            seed,
            invoice_count,
        }
    }

    #[test]
    fn the_same_seed_gives_the_same_data_and_another_seed_other_data() {
        assert_eq!(dataset(7, 10).invoice(3), dataset(7, 10).invoice(3));
        assert_ne!(dataset(7, 10).invoice(3), dataset(8, 10).invoice(3));
    }

    #[test]
    fn invoices_are_internally_consistent() {
        let data = dataset(42, 2000);
        let mut seen_statuses = std::collections::HashSet::new();
        for index in 0..2000 {
            let invoice = data.invoice(index);
            seen_statuses.insert(invoice.status);
            let line_total: i64 = invoice
                .line_items
                .iter()
                .map(|item| item.total_amount.0)
                .sum();
            assert_eq!(line_total, invoice.total_amount.0);
            assert_eq!(
                invoice.total_amount.0,
                invoice.sub_total.0 + invoice.total_tax_amount.0
            );
            match invoice.status {
                InvoiceStatus::Paid => assert_eq!(invoice.amount_due.0, 0),
                InvoiceStatus::PartiallyPaid => {
                    assert!(
                        invoice.amount_due.0 > 0 && invoice.amount_due.0 < invoice.total_amount.0
                    )
                }
                InvoiceStatus::Submitted | InvoiceStatus::Draft => {
                    assert_eq!(invoice.amount_due, invoice.total_amount)
                }
                _ => {}
            }
            assert!(invoice.due_date.expect("due") > invoice.issue_date);
            assert!(index < data.invoice_count);
        }
        assert_eq!(seen_statuses.len(), 5, "a realistic mix of statuses");
    }

    #[test]
    fn pages_cover_every_record_once() {
        let data = dataset(1, 2500);
        let mut start = Some(0_u64);
        let mut fetched = 0;
        while let Some(at) = start {
            let page = data.invoices(at);
            fetched += page.records.len();
            start = page.next.map(|next| next.parse().expect("a number"));
        }
        assert_eq!(fetched, 2500);
        assert!(data.invoices(2500).records.is_empty());
    }
}
