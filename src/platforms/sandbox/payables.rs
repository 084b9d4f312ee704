//! The sandbox's bills and bill payments: what its suppliers charge it and
//! what it paid them, each record a pure function of the seed and its index
//! like the rest of [`Dataset`]. Lines post to expense (or asset) accounts
//! of the chart and name the sandbox's tax rates; every bill with something
//! paid has one payment that settles exactly that, so a bill's amount due
//! is its total less its payments.

use chrono::{Days, NaiveTime};

use super::dataset::{Dataset, PAGE_SIZE, Random, epoch, weighted};
use crate::data::accounts::AccountRef;
use crate::data::bill_payments::{BillAllocationType, BillPayment, BillPaymentAllocation};
use crate::data::bills::{Bill, BillLineItem, BillStatus};
use crate::data::money::{Money, Quantity};
use crate::data::suppliers::SupplierRef;
use crate::data::tax_rates::TaxRateRef;
use crate::platforms::connector::Fetched;
use crate::timestamp::Timestamp;

impl Dataset {
    /// How many bills the organisation has: half as many as invoices, at
    /// least one.
    pub fn bill_count(&self) -> u64 {
        self.invoice_count.div_ceil(2).max(1)
    }

    /// The `index`-th bill.
    pub fn bill(&self, index: u64) -> Bill {
        let mut random = Random::new(self.seed, 10, index);
        let supplier_index = random.below(self.supplier_count());
        let supplier = self.supplier(supplier_index);
        // At least 60 days back, so every payment falls before the epoch.
        let issue_date = epoch() - Days::new(60 + random.below(730));
        let due_date = issue_date + Days::new([7, 14, 30][random.below(3) as usize]);
        let line_count = 1 + random.below(3);
        let mut line_items = Vec::with_capacity(line_count as usize);
        for _ in 0..line_count {
            let (code, account_name, what) = EXPENSES[random.below(EXPENSES.len() as u64) as usize];
            let (tax_code, tax_name, tax_percent) =
                PURCHASE_TAX[random.below(PURCHASE_TAX.len() as u64) as usize];
            let quantity = 1 + random.below(20) as i64;
            let unit_cents = 100 + random.below(20_000) as i64;
            let sub_total_cents = quantity * unit_cents;
            let tax_cents = (sub_total_cents * tax_percent + 50) / 100;
            line_items.push(BillLineItem {
                description: what.to_owned(),
                unit_amount: Money::from_cents(unit_cents),
                quantity: Quantity::units(quantity),
                discount_amount: Money(0),
                sub_total: Money::from_cents(sub_total_cents),
                tax_amount: Money::from_cents(tax_cents),
                total_amount: Money::from_cents(sub_total_cents + tax_cents),
                account_ref: Some(AccountRef {
                    id: format!("sbx-gl-{code}"),
                    name: Some(account_name.to_owned()),
                }),
                tax_rate_ref: Some(TaxRateRef {
                    id: format!("sbx-tax-{}", tax_code.to_lowercase()),
                    name: Some(tax_name.to_owned()),
                }),
            });
        }
        let sub_total = Money(line_items.iter().map(|item| item.sub_total.0).sum());
        let tax_amount = Money(line_items.iter().map(|item| item.tax_amount.0).sum());
        let total_amount = sub_total + tax_amount;
        let status = BILL_STATUSES[weighted(&mut random, &[5, 25, 10, 50, 10])];
        let amount_due = match status {
            BillStatus::Draft | BillStatus::Open | BillStatus::Unknown => total_amount,
            BillStatus::PartiallyPaid => {
                let owed_percent = 10 + random.below(80) as i64;
                Money::from_cents((total_amount.0 / 100 * owed_percent / 100).max(1))
            }
            BillStatus::Paid | BillStatus::Void => Money(0),
        };
        let paid_on_date =
            (status == BillStatus::Paid).then(|| issue_date + Days::new(1 + random.below(45)));
        let changed = paid_on_date.unwrap_or(issue_date);
        Bill {
            bill_id: format!("sbx-bill-{index:07}"),
            reference: Some(format!("SI-{:06}", 1 + random.below(1_000_000))),
            supplier_ref: Some(SupplierRef {
                id: supplier.supplier_id,
                supplier_name: Some(supplier.supplier_name),
            }),
            issue_date,
            due_date: Some(due_date),
            paid_on_date,
            currency: supplier
                .default_currency
                .unwrap_or_else(|| "GBP".to_owned()),
            sub_total,
            tax_amount,
            total_amount,
            amount_due,
            status,
            line_items,
            note: (random.below(4) == 0).then(|| "Goods received in full.".to_owned()),
            source_modified_date: Some(Timestamp(
                changed.and_time(NaiveTime::MIN).and_utc()
                    + chrono::Duration::minutes(random.below(600) as i64),
            )),
        }
    }

    /// The bills from record `start`, a page of them.
    pub fn bills(&self, start: u64) -> Fetched<Bill> {
        self.slice(start, self.bill_count(), |index| self.bill(index))
    }

    /// The payment of the `index`-th bill; `None` when nothing of it was
    /// paid. Paid from the current account, or one in four by card.
    pub fn bill_payment(&self, index: u64) -> Option<BillPayment> {
        let bill = self.bill(index);
        if !matches!(bill.status, BillStatus::PartiallyPaid | BillStatus::Paid) {
            return None;
        }
        let mut random = Random::new(self.seed, 12, index);
        let paid = bill.total_amount - bill.amount_due;
        let date = bill
            .paid_on_date
            .unwrap_or_else(|| bill.issue_date + Days::new(1 + random.below(45)));
        let (account_id, account_name) = if random.below(4) == 0 {
            ("sbx-gl-2200", "Business Credit Card")
        } else {
            ("sbx-gl-1000", "Business Current Account")
        };
        Some(BillPayment {
            bill_payment_id: format!("sbx-bpay-{index:07}"),
            reference: bill
                .reference
                .as_ref()
                .map(|reference| format!("Remittance {reference}")),
            supplier_ref: bill.supplier_ref,
            account_ref: Some(AccountRef {
                id: account_id.to_owned(),
                name: Some(account_name.to_owned()),
            }),
            date,
            currency: bill.currency,
            total_amount: paid,
            allocations: vec![BillPaymentAllocation {
                allocation_type: BillAllocationType::Bill,
                id: bill.bill_id,
                amount: paid,
            }],
            note: None,
            source_modified_date: Some(Timestamp(
                date.and_time(NaiveTime::MIN).and_utc()
                    + chrono::Duration::minutes(random.below(600) as i64),
            )),
        })
    }

    /// The payments of the bills from bill `start`: a page of bills, fewer
    /// payments (no total is given: counting them means reading every bill).
    pub fn bill_payments(&self, start: u64) -> Fetched<BillPayment> {
        let count = self.bill_count();
        let end = start.saturating_add(PAGE_SIZE).min(count);
        Fetched::all(
            (start.min(end)..end)
                .filter_map(|index| self.bill_payment(index))
                .collect(),
            (end < count).then(|| end.to_string()),
        )
    }
}

const BILL_STATUSES: [BillStatus; 5] = [
    BillStatus::Draft,
    BillStatus::Open,
    BillStatus::PartiallyPaid,
    BillStatus::Paid,
    BillStatus::Void,
];

/// What the sandbox buys: the chart's account code and name it posts to,
/// and the line's description.
const EXPENSES: [(&str, &str, &str); 6] = [
    ("5000", "Cost of Goods Sold", "Stock for resale"),
    ("6000", "Rent", "Office rent"),
    ("6200", "Software Subscriptions", "Software seats"),
    ("6300", "Travel", "Rail tickets"),
    ("6900", "Bank Fees", "Payment processing"),
    ("1500", "Office Equipment", "Laptops"),
];

/// The tax rates purchases are charged at: the code of a sandbox tax rate,
/// its name and percentage.
const PURCHASE_TAX: [(&str, &str, i64); 3] = [
    ("S", "Standard Rate", 20),
    ("R", "Reduced Rate", 5),
    ("Z", "Zero Rated", 0),
];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bills_add_up_and_refer_to_the_sandboxs_own_records() {
        let dataset = Dataset::invoices_only(5, 400);
        let accounts: Vec<String> = dataset
            .accounts(0)
            .records
            .into_iter()
            .map(|a| a.account_id)
            .collect();
        let rates: Vec<_> = dataset.tax_rates(0).records;
        let suppliers = dataset.supplier_count();
        let bills = dataset.bills(0).records;
        assert_eq!(bills.len() as u64, dataset.bill_count());
        for bill in &bills {
            let lines = |amount: fn(&BillLineItem) -> Money| {
                Money(bill.line_items.iter().map(|line| amount(line).0).sum())
            };
            assert_eq!(
                lines(|line| line.sub_total),
                bill.sub_total,
                "{}",
                bill.bill_id
            );
            assert_eq!(lines(|line| line.tax_amount), bill.tax_amount);
            assert_eq!(bill.sub_total + bill.tax_amount, bill.total_amount);
            assert!(bill.amount_due >= Money(0) && bill.amount_due <= bill.total_amount);
            match bill.status {
                BillStatus::Paid | BillStatus::Void => assert_eq!(bill.amount_due, Money(0)),
                BillStatus::PartiallyPaid => {
                    assert!(bill.amount_due > Money(0) && bill.amount_due < bill.total_amount)
                }
                _ => assert_eq!(bill.amount_due, bill.total_amount),
            }
            for line in &bill.line_items {
                let account = &line.account_ref.as_ref().expect("an account").id;
                assert!(accounts.contains(account), "{account} is in the chart");
                let rate_id = &line.tax_rate_ref.as_ref().expect("a tax rate").id;
                let rate = rates
                    .iter()
                    .find(|rate| &rate.tax_rate_id == rate_id)
                    .expect("a rate");
                let percent = rate.effective_tax_rate.0 / Quantity::units(1).0;
                assert_eq!(
                    line.tax_amount.0,
                    (line.sub_total.0 / 100 * percent + 50) / 100 * 100
                );
            }
            let supplier = bill.supplier_ref.as_ref().expect("a supplier");
            let index: u64 = supplier
                .id
                .trim_start_matches("sbx-sup-")
                .parse()
                .expect("an index");
            assert!(index < suppliers);
            assert_eq!(
                Some(dataset.supplier(index).supplier_name),
                supplier.supplier_name
            );
        }
        for status in BILL_STATUSES {
            assert!(
                bills.iter().any(|bill| bill.status == status),
                "{status:?} is used"
            );
        }
        assert_eq!(dataset.bill(7), bills[7], "pure");
    }

    #[test]
    fn each_bill_owes_its_total_less_its_payments() {
        let dataset = Dataset::invoices_only(6, 2_400);
        let mut payments = Vec::new();
        let mut start = Some("0".to_owned());
        while let Some(from) = start {
            let page = dataset.bill_payments(from.parse().expect("an offset"));
            payments.extend(page.records);
            start = page.next;
        }
        assert!(!payments.is_empty());
        let mut paid_per_bill = std::collections::HashMap::new();
        for payment in &payments {
            assert_eq!(payment.allocated(), payment.total_amount);
            for allocation in &payment.allocations {
                assert_eq!(allocation.allocation_type, BillAllocationType::Bill);
                let paid = paid_per_bill
                    .entry(allocation.id.clone())
                    .or_insert(Money(0));
                *paid = *paid + allocation.amount;
            }
        }
        for index in 0..dataset.bill_count() {
            let bill = dataset.bill(index);
            let paid = paid_per_bill
                .get(&bill.bill_id)
                .copied()
                .unwrap_or(Money(0));
            if bill.status != BillStatus::Void {
                assert_eq!(
                    bill.amount_due,
                    bill.total_amount - paid,
                    "{}",
                    bill.bill_id
                );
            }
        }
    }
}
