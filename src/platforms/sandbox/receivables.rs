//! The sandbox's payments and credit notes: what its customers paid and
//! were credited against its invoices, each a pure function of the seed and
//! the invoice's index. One in five invoices with something settled
//! (`PartiallyPaid`, `Paid`) had part of it settled by a credit note
//! (sometimes with credit left over); every one has a payment of the rest,
//! so what an invoice shows paid is its payments and credits together. One
//! payment in ten is rounded up to a whole hundred, the rest left
//! unallocated (an overpayment). Some open, draft and void invoices have a
//! credit note of their own, unallocated.

use chrono::{Days, NaiveTime};

use super::dataset::{Dataset, PAGE_SIZE, Random};
use crate::data::accounts::AccountRef;
use crate::data::credit_notes::{
    CreditNote, CreditNoteAllocation, CreditNoteStatus, InvoiceRef, status_by_remaining,
};
use crate::data::invoices::{InvoiceStatus, LineItem};
use crate::data::money::Money;
use crate::data::money::Quantity;
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
        let credited = self
            .credit_note(index)
            .map_or(Money(0), |credit_note| credit_note.allocated());
        let paid = invoice.total_amount - invoice.amount_due - credited;
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
            note: (total_amount != paid)
                .then(|| "Overpaid: the rest is held on account.".to_owned()),
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
        self.per_invoice(start, |index| self.payment(index))
    }

    /// The credit note of the `index`-th invoice, if it has one: for one in
    /// five invoices with something settled, a credit allocated to it (less
    /// than what was settled; one in three with credit left over); for one
    /// in ten open invoices an issued, unused credit; for one in four draft
    /// or void invoices a draft or void one.
    pub fn credit_note(&self, index: u64) -> Option<CreditNote> {
        let invoice = self.invoice(index);
        let mut random = Random::new(self.seed, 13, index);
        let settled = invoice.total_amount - invoice.amount_due;
        let quarter = Money::from_cents((invoice.total_amount.0 / 100 / 4).max(1));
        let (status, allocated, remaining) = match invoice.status {
            InvoiceStatus::PartiallyPaid | InvoiceStatus::Paid if random.below(5) == 0 => {
                let percent = 10 + random.below(40) as i64;
                let allocated = Money::from_cents((settled.0 / 100 * percent / 100).max(1));
                let remaining = if random.below(3) == 0 {
                    Money::from_cents((allocated.0 / 100 / 2).max(1))
                } else {
                    Money(0)
                };
                let total = allocated + remaining;
                (status_by_remaining(total, remaining), allocated, remaining)
            }
            InvoiceStatus::Submitted if random.below(10) == 0 => {
                (CreditNoteStatus::Submitted, Money(0), quarter)
            }
            InvoiceStatus::Draft if random.below(4) == 0 => {
                (CreditNoteStatus::Draft, Money(0), quarter)
            }
            InvoiceStatus::Void if random.below(4) == 0 => {
                (CreditNoteStatus::Void, Money(0), Money(0))
            }
            _ => return None,
        };
        let total_amount = if status == CreditNoteStatus::Void {
            quarter
        } else {
            allocated + remaining
        };
        let issue_date = invoice.issue_date + Days::new(1 + random.below(30));
        let allocations = (allocated > Money(0))
            .then(|| CreditNoteAllocation {
                invoice_ref: InvoiceRef {
                    id: invoice.invoice_id.clone(),
                    invoice_number: invoice.invoice_number.clone(),
                },
                amount: allocated,
                allocated_on_date: Some(issue_date),
            })
            .into_iter()
            .collect();
        let number = invoice.invoice_number.unwrap_or_default();
        Some(CreditNote {
            credit_note_id: format!("sbx-cn-{index:07}"),
            credit_note_number: Some(format!("CN-{:06}", index + 1)),
            customer_ref: invoice.customer_ref,
            issue_date,
            currency: invoice.currency,
            sub_total: total_amount,
            total_tax_amount: Money(0),
            total_amount,
            remaining_credit: remaining,
            status,
            line_items: vec![LineItem {
                description: format!("Credit against {number}"),
                unit_amount: total_amount,
                quantity: Quantity::units(1),
                discount_amount: Money(0),
                sub_total: total_amount,
                tax_amount: Money(0),
                total_amount,
                account_ref: Some(super::ledger::account_ref("4000")),
            }],
            allocations,
            note: Some("Goodwill credit.".to_owned()),
            source_modified_date: Some(Timestamp(
                issue_date.and_time(NaiveTime::MIN).and_utc()
                    + chrono::Duration::minutes(random.below(600) as i64),
            )),
        })
    }

    /// The credit notes of the invoices from invoice `start`: a page of
    /// invoices, fewer credit notes (no total is given).
    pub fn credit_notes(&self, start: u64) -> Fetched<CreditNote> {
        self.per_invoice(start, |index| self.credit_note(index))
    }

    /// What `record` makes of each invoice of the page of invoices from
    /// `start`, where it makes something.
    fn per_invoice<R>(&self, start: u64, record: impl Fn(u64) -> Option<R>) -> Fetched<R> {
        let end = start.saturating_add(PAGE_SIZE).min(self.invoice_count);
        Fetched::all(
            (start.min(end)..end).filter_map(record).collect(),
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
            .filter(|invoice| {
                invoice.amount_due < invoice.total_amount && invoice.status != InvoiceStatus::Void
            })
            .count();
        assert_eq!(
            payments.len(),
            paid_invoices,
            "one payment per invoice with something paid"
        );
        let mut overpaid = 0;
        for payment in &payments {
            let [allocation] = payment.allocations.as_slice() else {
                panic!("one allocation");
            };
            let index: u64 = allocation
                .id
                .trim_start_matches("sbx-inv-")
                .parse()
                .expect("an index");
            let invoice = dataset.invoice(index);
            assert_eq!(allocation.allocation_type, AllocationType::Invoice);
            let credited = dataset
                .credit_note(index)
                .map_or(Money(0), |credit_note| credit_note.allocated());
            assert_eq!(
                allocation.amount + credited,
                invoice.total_amount - invoice.amount_due
            );
            assert!(
                payment.allocated() <= payment.total_amount,
                "{}",
                payment.payment_id
            );
            assert!(payment.allocated() > Money(0));
            assert_eq!(payment.customer_ref, invoice.customer_ref);
            assert_eq!(payment.currency, invoice.currency);
            assert!(payment.date > invoice.issue_date);
            overpaid += usize::from(payment.allocated() < payment.total_amount);
        }
        assert!(overpaid > 0, "some payments leave something unallocated");
    }

    #[test]
    fn credit_notes_allocate_less_than_their_invoice_shows_settled_and_keep_the_rest() {
        let dataset = Dataset::invoices_only(4, 3_000);
        let mut notes = Vec::new();
        let mut start = Some("0".to_owned());
        while let Some(from) = start {
            let page = dataset.credit_notes(from.parse().expect("an offset"));
            notes.extend(page.records);
            start = page.next;
        }
        let mut statuses = std::collections::HashSet::new();
        for note in &notes {
            statuses.insert(note.status);
            assert!(note.remaining_credit >= Money(0));
            assert!(
                note.allocated() + note.remaining_credit <= note.total_amount,
                "{note:?}"
            );
            if note.status != CreditNoteStatus::Void {
                assert_eq!(note.allocated() + note.remaining_credit, note.total_amount);
            }
            for allocation in &note.allocations {
                let index: u64 = allocation
                    .invoice_ref
                    .id
                    .trim_start_matches("sbx-inv-")
                    .parse()
                    .expect("an index");
                let invoice = dataset.invoice(index);
                assert!(allocation.amount < invoice.total_amount - invoice.amount_due);
                assert_eq!(note.customer_ref, invoice.customer_ref);
            }
        }
        assert_eq!(statuses.len(), 5, "every status but Unknown: {statuses:?}");
    }
}
