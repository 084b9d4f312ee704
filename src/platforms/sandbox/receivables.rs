//! The sandbox's payments: what its customers paid against its invoices.
//! Every invoice with something paid (`PartiallyPaid`, `Paid`) has one
//! payment, a pure function of the seed and the invoice's index, that
//! settles exactly what was paid; one in ten is rounded up to a whole
//! hundred, the rest left unallocated (an overpayment).

use chrono::{Days, NaiveTime};

use super::dataset::{Dataset, PAGE_SIZE, Random};
use crate::data::accounts::AccountRef;
use crate::data::invoices::InvoiceStatus;
use crate::data::money::Money;
use crate::data::payments::{AllocationType, Payment, PaymentAllocation};
use crate::platforms::connector::Fetched;
use crate::timestamp::Timestamp;

/// The account customers pay into: the chart's current account.
const PAID_INTO: (&str, &str) = ("sbx-gl-1000", "Business Current Account");

impl Dataset {
    /// The payment of the `index`-th invoice; `None` when nothing of it was paid.
    pub fn payment(&self, index: u64) -> Option<Payment> {
        let invoice = self.invoice(index);
        if !matches!(
            invoice.status,
            InvoiceStatus::PartiallyPaid | InvoiceStatus::Paid
        ) {
            return None;
        }
        let mut random = Random::new(self.seed, 11, index);
        let paid = invoice.total_amount - invoice.amount_due;
        let date = invoice
            .paid_on_date
            .unwrap_or_else(|| invoice.issue_date + Days::new(1 + random.below(60)));
        let hundred = Money::from_cents(10_000).0;
        let total_amount = if random.below(10) == 0 {
            Money((paid.0 / hundred + 1) * hundred)
        } else {
            paid
        };
        Some(Payment {
            payment_id: format!("sbx-pay-{index:07}"),
            reference: Some(format!("PAY-{:06}", index + 1)),
            customer_ref: invoice.customer_ref,
            account_ref: Some(AccountRef {
                id: PAID_INTO.0.to_owned(),
                name: Some(PAID_INTO.1.to_owned()),
            }),
            date,
            currency: invoice.currency,
            total_amount,
            allocations: vec![PaymentAllocation {
                allocation_type: AllocationType::Invoice,
                id: invoice.invoice_id,
                amount: paid,
            }],
            note: (total_amount != paid).then(|| "Overpaid: the rest is held on account.".to_owned()),
            source_modified_date: Some(Timestamp(
                date.and_time(NaiveTime::MIN).and_utc()
                    + chrono::Duration::minutes(random.below(600) as i64),
            )),
        })
    }

    /// The payments of the invoices from invoice `start`: a page of
    /// invoices, fewer payments (the platform does not say how many there
    /// are in all).
    pub fn payments(&self, start: u64) -> Fetched<Payment> {
        let end = start.saturating_add(PAGE_SIZE).min(self.invoice_count);
        Fetched::all(
            (start.min(end)..end)
                .filter_map(|index| self.payment(index))
                .collect(),
            (end < self.invoice_count).then(|| end.to_string()),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_payment_settles_what_its_invoice_shows_paid() {
        let dataset = Dataset::invoices_only(9, 2_500);
        let mut payments = Vec::new();
        let mut start = Some("0".to_owned());
        while let Some(from) = start {
            let page = dataset.payments(from.parse().expect("an offset"));
            payments.extend(page.records);
            start = page.next;
        }
        let paid_invoices = (0..2_500)
            .map(|index| dataset.invoice(index))
            .filter(|invoice| invoice.amount_due < invoice.total_amount && invoice.status != InvoiceStatus::Void)
            .count();
        assert_eq!(payments.len(), paid_invoices, "one payment per invoice with something paid");
        let mut overpaid = 0;
        for payment in &payments {
            let [allocation] = payment.allocations.as_slice() else {
                panic!("one allocation");
            };
            let index: u64 = allocation.id.trim_start_matches("sbx-inv-").parse().expect("an index");
            let invoice = dataset.invoice(index);
            assert_eq!(allocation.allocation_type, AllocationType::Invoice);
            assert_eq!(allocation.amount, invoice.total_amount - invoice.amount_due);
            assert!(payment.allocated() <= payment.total_amount, "{}", payment.payment_id);
            assert!(payment.allocated() > Money(0));
            assert_eq!(payment.customer_ref, invoice.customer_ref);
            assert_eq!(payment.currency, invoice.currency);
            assert!(payment.date > invoice.issue_date);
            overpaid += usize::from(payment.allocated() < payment.total_amount);
        }
        assert!(overpaid > 0, "some payments leave something unallocated");
    }
}
