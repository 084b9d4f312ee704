//! The sandbox's general ledger: a journal entry for every document that
//! posts (an invoice, a payment, a credit note, a bill, a bill payment that
//! is neither draft nor void), each a pure function of the seed and the
//! document's index, in double entry: the lines balance to zero.
//!
//! | document | debit | credit |
//! |---|---|---|
//! | invoice | `1100` Accounts Receivable, total | `4000` Sales, subtotal; `2100` VAT Control, tax |
//! | payment | `1000` the bank, total | `1100` Accounts Receivable, total |
//! | credit note | `4000` Sales, total | `1100` Accounts Receivable, total |
//! | bill | each line's account, its subtotal; `2100` VAT Control, tax | `2000` Accounts Payable, total |
//! | bill payment | `2000` Accounts Payable, total | the bank or card account, total |

use chrono::NaiveDate;

use super::dataset::{Dataset, PAGE_SIZE};
use super::ledger::account_ref;
use crate::data::accounts::AccountRef;
use crate::data::bills::BillStatus;
use crate::data::credit_notes::CreditNoteStatus;
use crate::data::invoices::InvoiceStatus;
use crate::data::journal_entries::{JournalEntry, JournalLine, JournalSource};
use crate::data::money::Money;
use crate::platforms::connector::Fetched;
use crate::timestamp::Timestamp;

/// The documents journals are posted for, in the order their indexes run.
#[derive(Clone, Copy)]
enum Posted {
    Invoice(u64),
    Payment(u64),
    CreditNote(u64),
    Bill(u64),
    BillPayment(u64),
}

impl Dataset {
    /// How many documents could post a journal: five ranges, one per kind.
    fn journal_positions(&self) -> u64 {
        3 * self.invoice_count + 2 * self.bill_count()
    }

    fn posted(&self, index: u64) -> Option<Posted> {
        let (invoices, bills) = (self.invoice_count, self.bill_count());
        Some(match index {
            i if i < invoices => Posted::Invoice(i),
            i if i < 2 * invoices => Posted::Payment(i - invoices),
            i if i < 3 * invoices => Posted::CreditNote(i - 2 * invoices),
            i if i < 3 * invoices + bills => Posted::Bill(i - 3 * invoices),
            i if i < 3 * invoices + 2 * bills => Posted::BillPayment(i - 3 * invoices - bills),
            _ => return None,
        })
    }

    /// The journal entry at `index`; `None` when that document does not
    /// exist or does not post (a draft or void one).
    pub fn journal_entry(&self, index: u64) -> Option<JournalEntry> {
        let line =
            |account: AccountRef, description: &str, amount: Money, currency: &str| JournalLine {
                account_ref: Some(account),
                description: Some(description.to_owned()),
                net_amount: amount,
                currency: Some(currency.to_owned()),
            };
        let (kind, id, posted_on, description, lines): (
            &str,
            String,
            NaiveDate,
            String,
            Vec<JournalLine>,
        ) = match self.posted(index)? {
            Posted::Invoice(i) => {
                let invoice = self.invoice(i);
                if matches!(invoice.status, InvoiceStatus::Draft | InvoiceStatus::Void) {
                    return None;
                }
                let currency = invoice.currency.as_str();
                let mut lines = vec![
                    line(
                        account_ref("1100"),
                        "Invoiced",
                        invoice.total_amount,
                        currency,
                    ),
                    line(account_ref("4000"), "Sales", -invoice.sub_total, currency),
                ];
                if invoice.total_tax_amount != Money(0) {
                    lines.push(line(
                        account_ref("2100"),
                        "VAT on sales",
                        -invoice.total_tax_amount,
                        currency,
                    ));
                }
                let number = invoice.invoice_number.clone().unwrap_or_default();
                (
                    "invoices",
                    invoice.invoice_id,
                    invoice.issue_date,
                    format!("Invoice {number}"),
                    lines,
                )
            }
            Posted::Payment(i) => {
                let payment = self.payment(i)?;
                let currency = payment.currency.as_str();
                let bank = payment
                    .account_ref
                    .clone()
                    .unwrap_or_else(|| account_ref("1000"));
                let lines = vec![
                    line(bank, "Received", payment.total_amount, currency),
                    line(
                        account_ref("1100"),
                        "Receivable settled",
                        -payment.total_amount,
                        currency,
                    ),
                ];
                let reference = payment.reference.clone().unwrap_or_default();
                (
                    "payments",
                    payment.payment_id,
                    payment.date,
                    format!("Payment {reference}"),
                    lines,
                )
            }
            Posted::CreditNote(i) => {
                let note = self.credit_note(i)?;
                if matches!(
                    note.status,
                    CreditNoteStatus::Draft | CreditNoteStatus::Void
                ) {
                    return None;
                }
                let currency = note.currency.as_str();
                let lines = vec![
                    line(
                        account_ref("4000"),
                        "Sales credited",
                        note.total_amount,
                        currency,
                    ),
                    line(
                        account_ref("1100"),
                        "Credit given",
                        -note.total_amount,
                        currency,
                    ),
                ];
                let number = note.credit_note_number.clone().unwrap_or_default();
                (
                    "creditNotes",
                    note.credit_note_id,
                    note.issue_date,
                    format!("Credit note {number}"),
                    lines,
                )
            }
            Posted::Bill(i) => {
                let bill = self.bill(i);
                if matches!(bill.status, BillStatus::Draft | BillStatus::Void) {
                    return None;
                }
                let currency = bill.currency.clone();
                let mut lines: Vec<JournalLine> = bill
                    .line_items
                    .iter()
                    .map(|item| JournalLine {
                        account_ref: item.account_ref.clone(),
                        description: Some(item.description.clone()),
                        net_amount: item.sub_total,
                        currency: Some(currency.clone()),
                    })
                    .collect();
                if bill.tax_amount != Money(0) {
                    lines.push(line(
                        account_ref("2100"),
                        "VAT on purchases",
                        bill.tax_amount,
                        &currency,
                    ));
                }
                lines.push(line(
                    account_ref("2000"),
                    "Billed",
                    -bill.total_amount,
                    &currency,
                ));
                let reference = bill.reference.clone().unwrap_or_default();
                (
                    "bills",
                    bill.bill_id,
                    bill.issue_date,
                    format!("Bill {reference}"),
                    lines,
                )
            }
            Posted::BillPayment(i) => {
                let payment = self.bill_payment(i)?;
                let currency = payment.currency.as_str();
                let bank = payment
                    .account_ref
                    .clone()
                    .unwrap_or_else(|| account_ref("1000"));
                let lines = vec![
                    line(
                        account_ref("2000"),
                        "Payable settled",
                        payment.total_amount,
                        currency,
                    ),
                    line(bank, "Paid", -payment.total_amount, currency),
                ];
                let reference = payment.reference.clone().unwrap_or_default();
                (
                    "billPayments",
                    payment.bill_payment_id,
                    payment.date,
                    reference,
                    lines,
                )
            }
        };
        Some(JournalEntry {
            journal_entry_id: format!("sbx-je-{index:08}"),
            journal_number: Some((index + 1).to_string()),
            posted_on,
            description: Some(description),
            source: Some(JournalSource {
                source_type: kind.to_owned(),
                id: Some(id),
            }),
            journal_lines: lines,
            created_on: Some(Timestamp(
                posted_on.and_time(chrono::NaiveTime::MIN).and_utc(),
            )),
            source_modified_date: Some(Timestamp(
                posted_on.and_time(chrono::NaiveTime::MIN).and_utc(),
            )),
        })
    }

    /// The journal entries of the documents from position `start`: a page
    /// of positions, fewer entries (no total is given).
    pub fn journal_entries(&self, start: u64) -> Fetched<JournalEntry> {
        let count = self.journal_positions();
        let end = start.saturating_add(PAGE_SIZE).min(count);
        Fetched::all(
            (start.min(end)..end)
                .filter_map(|index| self.journal_entry(index))
                .collect(),
            (end < count).then(|| end.to_string()),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_entry_balances_and_posts_to_the_chart() {
        let dataset = Dataset::invoices_only(8, 600);
        let chart: Vec<String> = dataset
            .accounts(0)
            .records
            .into_iter()
            .map(|a| a.account_id)
            .collect();
        let mut entries = Vec::new();
        let mut start = Some("0".to_owned());
        while let Some(from) = start {
            let page = dataset.journal_entries(from.parse().expect("an offset"));
            entries.extend(page.records);
            start = page.next;
        }
        let mut kinds = std::collections::HashSet::new();
        for entry in &entries {
            assert_eq!(entry.balance(), Money(0), "{entry:?}");
            assert!(entry.journal_lines.len() >= 2);
            for line in &entry.journal_lines {
                let account = &line.account_ref.as_ref().expect("an account").id;
                assert!(chart.contains(account), "{account}");
            }
            kinds.insert(entry.source.as_ref().expect("a source").source_type.clone());
        }
        assert_eq!(kinds.len(), 5, "{kinds:?}");
        let ids: std::collections::HashSet<&str> = entries
            .iter()
            .map(|entry| entry.journal_entry_id.as_str())
            .collect();
        assert_eq!(ids.len(), entries.len(), "ids are unique");
    }
}
