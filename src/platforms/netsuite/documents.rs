//! NetSuite's bills (`transaction` of type `VendBill`) and credit memos
//! (`CustCred`), with their lines (`transactionline`), and how they become
//! our bills and credit notes. NetSuite stores a line with the sign of its
//! accounting entry, which is not documented per type; a document's lines
//! are therefore turned to the sign of its total. Sources: `NOTES.md`,
//! "Accounting model".

use std::collections::HashMap;

use chrono::NaiveDate;
use serde::Deserialize;

use super::chart::account_ref;
use super::settlements::NsLink;
use crate::data::bills::{Bill, BillLineItem, BillStatus};
use crate::data::credit_notes::{CreditNote, CreditNoteAllocation, CreditNoteStatus, InvoiceRef};
use crate::data::invoices::{CustomerRef, LineItem};
use crate::data::money::{Money, Quantity};
use crate::data::suppliers::SupplierRef;
use crate::platforms::kit::json::{self, Amount, money};
use crate::platforms::kit::records::{Keyed, Unreadable};
use crate::platforms::kit::status::find;

impl Keyed for NsDocument {
    const ID: &'static str = "/id";
}

/// A line is named by its document: an unreadable line makes the document
/// unreadable.
impl Keyed for NsDocumentLine {
    const ID: &'static str = "/transaction";
}

/// A row of the document query: a bill's or credit memo's header, amounts
/// in its own currency.
#[derive(Deserialize)]
pub(super) struct NsDocument {
    pub(super) id: String,
    tranid: Option<String>,
    entity: Option<String>,
    entityname: Option<String>,
    trandate: Option<String>,
    duedate: Option<String>,
    currency: Option<String>,
    foreigntotal: Option<Amount>,
    foreignamountunpaid: Option<Amount>,
    foreignpaymentamountunused: Option<Amount>,
    status: Option<String>,
    statusname: Option<String>,
    memo: Option<String>,
    lastmodifieddate: Option<String>,
}

/// A row of the document line query (not the main line), with the account
/// an expense line posts to.
#[derive(Deserialize)]
pub(super) struct NsDocumentLine {
    pub(super) transaction: String,
    memo: Option<String>,
    itemname: Option<String>,
    quantity: Option<Amount>,
    rate: Option<Amount>,
    foreignamount: Option<Amount>,
    taxline: Option<String>,
    account: Option<String>,
    accountname: Option<String>,
}

/// One line of a document, in the document's sign.
struct DocumentLine {
    description: String,
    unit_amount: Money,
    quantity: Quantity,
    amount: Money,
    account: Option<(Option<String>, Option<String>)>,
}

/// A document's lines and the tax its tax lines add up to, in the sign of
/// its total.
#[derive(Default)]
pub(super) struct DocumentLines {
    lines: Vec<DocumentLine>,
    tax: Money,
}

/// The absolute value of an amount.
fn magnitude(amount: Money) -> Money {
    Money(amount.0.abs())
}

/// The line rows of a page, by document id, each document's lines turned to
/// the sign of its total: positive when the stored lines add up negative.
pub(super) fn lines_by_document(rows: Vec<NsDocumentLine>) -> HashMap<String, DocumentLines> {
    let mut rows_by_document: HashMap<String, Vec<NsDocumentLine>> = HashMap::new();
    for row in rows {
        rows_by_document
            .entry(row.transaction.clone())
            .or_default()
            .push(row);
    }
    rows_by_document
        .into_iter()
        .map(|(document, rows)| {
            let stored: i64 = rows.iter().map(|row| money(row.foreignamount).0).sum();
            let sign = if stored < 0 { -1 } else { 1 };
            let mut lines = DocumentLines::default();
            for row in rows {
                let amount = Money(money(row.foreignamount).0 * sign);
                if row.taxline.as_deref() == Some("T") {
                    lines.tax = lines.tax + amount;
                    continue;
                }
                lines.lines.push(DocumentLine {
                    description: json::non_empty(row.memo)
                        .or_else(|| json::non_empty(row.itemname))
                        .unwrap_or_default(),
                    unit_amount: magnitude(money(row.rate)),
                    quantity: Quantity(json::quantity(row.quantity).0.abs()),
                    amount,
                    account: row
                        .account
                        .is_some()
                        .then_some((row.account, row.accountname)),
                });
            }
            (document, lines)
        })
        .collect()
}

/// The status letters of a bill (`VendBill:A`) as ours; `A` (open) is told
/// apart by what is unpaid.
const BILL_LETTERS: &[(&str, BillStatus)] = &[
    ("B", BillStatus::Paid),
    ("C", BillStatus::Void),
    ("D", BillStatus::Draft),
    ("E", BillStatus::Void),
    ("F", BillStatus::Paid),
];

/// Display texts of bill statuses, for a letter not in [`BILL_LETTERS`].
const BILL_TEXTS: &[(&str, BillStatus)] = &[
    ("Pending Approval", BillStatus::Draft),
    ("Cancelled", BillStatus::Void),
    ("Rejected", BillStatus::Void),
    ("Voided", BillStatus::Void),
    ("Paid In Full", BillStatus::Paid),
    ("Payment In Transit", BillStatus::Paid),
];

/// Our status of a bill: its letter, else its display text; open bills by
/// what is unpaid.
fn bill_status(status: &str, text: &str, total: Money, unpaid: Money) -> BillStatus {
    let letter = status.rsplit(':').next().unwrap_or(status);
    if letter == "A" || text.ends_with("Open") {
        return if unpaid.0 <= 0 {
            BillStatus::Paid
        } else if unpaid < total {
            BillStatus::PartiallyPaid
        } else {
            BillStatus::Open
        };
    }
    find(BILL_LETTERS, letter)
        .or_else(|| {
            BILL_TEXTS
                .iter()
                .find(|(words, _)| text.contains(words))
                .map(|(_, ours)| *ours)
        })
        .unwrap_or(BillStatus::Unknown)
}

/// The status letter of a NetSuite status column (`CustCred:B` → `B`).
fn letter(status: Option<&str>) -> &str {
    let status = status.unwrap_or("");
    status.rsplit(':').next().unwrap_or(status)
}

impl NsDocument {
    /// The issue date and total every document has (the total as a
    /// magnitude: its stored sign is the accounting entry's).
    fn issued_and_total(&self) -> Result<(NaiveDate, Money), Unreadable> {
        let issue_date = json::required_date(self.trandate.as_deref(), "trandate")?;
        Ok((issue_date, magnitude(money(self.foreigntotal))))
    }

    /// Our bill, with its lines. What is due is NetSuite's unpaid amount, or
    /// nothing for a paid bill and the total for another when it gives none.
    pub(super) fn into_bill(self, lines: Option<DocumentLines>) -> Result<Bill, Unreadable> {
        let lines = lines.unwrap_or_default();
        let (issue_date, total) = self.issued_and_total()?;
        let text = self.statusname.clone().unwrap_or_default();
        let unpaid = self
            .foreignamountunpaid
            .map(|unpaid| magnitude(unpaid.money()));
        let status = bill_status(
            self.status.as_deref().unwrap_or(""),
            &text,
            total,
            unpaid.unwrap_or(total),
        );
        let amount_due = match (unpaid, status) {
            (Some(unpaid), _) => unpaid,
            (None, BillStatus::Paid | BillStatus::Void) => Money(0),
            (None, _) => total,
        };
        Ok(Bill {
            reference: json::non_empty(self.tranid),
            supplier_ref: json::non_empty(self.entity).map(|id| SupplierRef {
                id,
                supplier_name: json::non_empty(self.entityname),
            }),
            issue_date,
            due_date: self.duedate.as_deref().and_then(json::date),
            paid_on_date: None,
            currency: json::non_empty(self.currency).unwrap_or_default(),
            sub_total: total - lines.tax,
            tax_amount: lines.tax,
            total_amount: total,
            amount_due,
            status,
            line_items: lines
                .lines
                .into_iter()
                .map(|line| BillLineItem {
                    description: line.description,
                    unit_amount: line.unit_amount,
                    quantity: line.quantity,
                    discount_amount: Money(0),
                    sub_total: line.amount,
                    tax_amount: Money(0),
                    total_amount: line.amount,
                    account_ref: line.account.and_then(|(id, name)| account_ref(id, name)),
                    tax_rate_ref: None,
                })
                .collect(),
            note: json::non_empty(self.memo),
            source_modified_date: json::timestamp(self.lastmodifieddate.as_deref()),
            bill_id: self.id,
        })
    }

    /// Our credit note, with its lines and what it was applied to (the
    /// `links` that pair it with an invoice, in either direction). What
    /// remains is NetSuite's unused amount; `B` is fully applied.
    pub(super) fn into_credit_note(
        self,
        lines: Option<DocumentLines>,
        links: &[NsLink],
    ) -> Result<CreditNote, Unreadable> {
        let lines = lines.unwrap_or_default();
        let (issue_date, total) = self.issued_and_total()?;
        let letter = letter(self.status.as_deref());
        let text = self.statusname.clone().unwrap_or_default();
        let remaining = match self.foreignpaymentamountunused {
            Some(unused) => magnitude(unused.money()),
            None if letter == "B" => Money(0),
            None => total,
        };
        let status = if letter == "V" || text.contains("Voided") {
            CreditNoteStatus::Void
        } else if remaining.0 == 0 {
            CreditNoteStatus::Paid
        } else if remaining < total {
            CreditNoteStatus::PartiallyPaid
        } else {
            CreditNoteStatus::Submitted
        };
        let allocations = links
            .iter()
            .filter_map(|link| link.invoice_credited_by(&self.id))
            .map(|(invoice, amount)| CreditNoteAllocation {
                invoice_ref: InvoiceRef {
                    id: invoice,
                    invoice_number: None,
                },
                amount,
                allocated_on_date: None,
            })
            .collect();
        Ok(CreditNote {
            credit_note_number: json::non_empty(self.tranid),
            customer_ref: CustomerRef::to(
                json::non_empty(self.entity),
                json::non_empty(self.entityname),
            ),
            issue_date,
            currency: json::non_empty(self.currency).unwrap_or_default(),
            sub_total: total - lines.tax,
            total_tax_amount: lines.tax,
            total_amount: total,
            remaining_credit: remaining,
            status,
            line_items: lines
                .lines
                .into_iter()
                .map(|line| LineItem {
                    description: line.description,
                    unit_amount: line.unit_amount,
                    quantity: line.quantity,
                    discount_amount: Money(0),
                    sub_total: line.amount,
                    tax_amount: Money(0),
                    total_amount: line.amount,
                    account_ref: line.account.and_then(|(id, name)| account_ref(id, name)),
                })
                .collect(),
            allocations,
            note: json::non_empty(self.memo),
            source_modified_date: json::timestamp(self.lastmodifieddate.as_deref()),
            credit_note_id: self.id,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bill_statuses_map_by_letter_then_text_and_open_ones_by_what_is_unpaid() {
        let total = Money::from_cents(10_000);
        let status = |letter, text, unpaid| bill_status(letter, text, total, unpaid);
        assert_eq!(status("VendBill:A", "Bill : Open", total), BillStatus::Open);
        assert_eq!(
            status("A", "", Money::from_cents(1)),
            BillStatus::PartiallyPaid
        );
        assert_eq!(
            status("B", "Bill : Paid In Full", Money(0)),
            BillStatus::Paid
        );
        assert_eq!(
            status("D", "Bill : Pending Approval", total),
            BillStatus::Draft
        );
        assert_eq!(status("E", "Bill : Rejected", total), BillStatus::Void);
        assert_eq!(status("Q", "Bill : Cancelled", total), BillStatus::Void);
        assert_eq!(status("Q", "", total), BillStatus::Unknown);
    }

    fn line(transaction: &str, amount: &str, tax: bool) -> NsDocumentLine {
        serde_json::from_str(&format!(
            r#"{{"transaction":"{transaction}","foreignamount":"{amount}","taxline":"{}"}}"#,
            if tax { "T" } else { "F" }
        ))
        .expect("a line")
    }

    #[test]
    fn a_documents_lines_take_the_sign_of_its_total_whichever_way_they_are_stored() {
        let lines = lines_by_document(vec![
            line("1", "-100.00", false),
            line("1", "10.00", false),
            line("1", "-9.00", true),
            line("2", "50.00", false),
            line("2", "5.00", true),
        ]);
        let first = &lines["1"];
        assert_eq!(first.lines[0].amount, Money::from_cents(10_000));
        assert_eq!(first.lines[1].amount, Money::from_cents(-1_000));
        assert_eq!(first.tax, Money::from_cents(900));
        assert_eq!(lines["2"].tax, Money::from_cents(500));
    }
}
