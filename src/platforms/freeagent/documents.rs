//! FreeAgent's bills and sales credit notes as ours: a bill's amounts take
//! the sign of its total (FreeAgent writes a bill's net and tax negative
//! beside a positive total; a negative total is a bill refund), its items
//! give totals with and without tax and post to a category; a credit
//! note's amounts are the credit's magnitudes, its allocations the credit
//! note reconciliations that name it. Sources: `NOTES.md`, "Accounting
//! model (issue 34): built".

use std::collections::HashMap;

use serde::Deserialize;

use super::mapping::{FreeAgentItem, category_ref, id_of};
use crate::data::bills::{Bill, BillLineItem, BillStatus};
use crate::data::credit_notes::{
    CreditNote, CreditNoteAllocation, CreditNoteStatus, InvoiceRef, status_by_remaining,
};
use crate::data::invoices::CustomerRef;
use crate::data::money::{Money, Quantity};
use crate::data::suppliers::SupplierRef;
use crate::platforms::kit::json::{self, Amount, money, per_unit};
use crate::platforms::kit::records::{Each, Keyed, Unreadable};

/// `amount`'s magnitude with the sign of `sign_of`.
fn signed_as(amount: Money, sign_of: Money) -> Money {
    let magnitude = Money(amount.0.abs());
    if sign_of.0 < 0 { -magnitude } else { magnitude }
}

/// The magnitude of an amount FreeAgent may write with either sign.
fn magnitude(amount: Option<Amount>) -> Money {
    Money(money(amount).0.abs())
}

/// A page of `GET /v2/bills`.
#[derive(Deserialize)]
pub(super) struct BillsPage {
    #[serde(default)]
    pub(super) bills: Each<FreeAgentBill>,
}

/// A bill as FreeAgent writes it (with `nested_bill_items=true`).
#[derive(Deserialize)]
pub(super) struct FreeAgentBill {
    url: String,
    contact: Option<String>,
    contact_name: Option<String>,
    reference: Option<String>,
    dated_on: Option<String>,
    due_on: Option<String>,
    paid_on: Option<String>,
    currency: Option<String>,
    total_value: Option<Amount>,
    net_value: Option<Amount>,
    sales_tax_value: Option<Amount>,
    second_sales_tax_value: Option<Amount>,
    due_value: Option<Amount>,
    status: Option<String>,
    comments: Option<String>,
    updated_at: Option<String>,
    #[serde(default, deserialize_with = "json::list_or_null")]
    bill_items: Vec<BillItem>,
}

impl Keyed for FreeAgentBill {
    const ID: &'static str = "/url";

    fn kept_id(url: &str) -> Option<String> {
        id_of(url)
    }
}

/// One bill item: FreeAgent gives its totals, not a unit price.
#[derive(Deserialize)]
struct BillItem {
    description: Option<String>,
    stock_item_description: Option<String>,
    category: Option<String>,
    quantity: Option<Amount>,
    total_value: Option<Amount>,
    total_value_ex_tax: Option<Amount>,
    sales_tax_value: Option<Amount>,
    second_sales_tax_value: Option<Amount>,
}

impl BillItem {
    /// Our line: the item's totals signed as its total, one unit when
    /// FreeAgent gives no quantity, the unit price worked out from them.
    fn into_line(self) -> BillLineItem {
        let total = money(self.total_value);
        let taxes = [self.sales_tax_value, self.second_sales_tax_value];
        let given_tax = taxes.iter().any(Option::is_some).then(|| {
            signed_as(
                magnitude(self.sales_tax_value) + magnitude(self.second_sales_tax_value),
                total,
            )
        });
        let (sub_total, tax_amount) = match (self.total_value_ex_tax, given_tax) {
            (Some(net), _) => {
                let net = signed_as(net.money(), total);
                (net, total - net)
            }
            (None, Some(tax)) => (total - tax, tax),
            (None, None) => (total, Money(0)),
        };
        let quantity = match self.quantity.map(Amount::quantity) {
            Some(quantity) if quantity.0 != 0 => quantity,
            _ => Quantity::units(1),
        };
        BillLineItem {
            description: json::non_empty(self.description)
                .or_else(|| json::non_empty(self.stock_item_description))
                .unwrap_or_default(),
            unit_amount: per_unit(sub_total, quantity),
            quantity,
            discount_amount: Money(0),
            sub_total,
            tax_amount,
            total_amount: total,
            account_ref: category_ref(self.category.as_deref()),
            tax_rate_ref: None,
        }
    }
}

/// A bill's status: FreeAgent's words (`Zero Value`, `Open`, `Overdue`,
/// `Paid`, `Refunded`: a bill refund fully paid) with what is due telling
/// a part payment apart.
pub(super) fn bill_status(word: &str, total: Money, due: Money) -> BillStatus {
    let (total, due) = (total.0.abs(), due.0.abs());
    match word.trim().to_ascii_lowercase().as_str() {
        "zero value" | "paid" | "refunded" => BillStatus::Paid,
        "open" | "overdue" if due == 0 => BillStatus::Paid,
        "open" | "overdue" if due < total => BillStatus::PartiallyPaid,
        "open" | "overdue" => BillStatus::Open,
        _ => BillStatus::Unknown,
    }
}

impl FreeAgentBill {
    /// Our bill; one without an id or a date cannot be read.
    pub(super) fn into_record(self) -> Result<Bill, Unreadable> {
        let bill_id = id_of(&self.url).ok_or_else(|| Unreadable::field("url", "ends in no id"))?;
        let issue_date = json::required_date(self.dated_on.as_deref(), "dated_on")?;
        let total = money(self.total_value);
        let tax = signed_as(
            magnitude(self.sales_tax_value) + magnitude(self.second_sales_tax_value),
            total,
        );
        let due = signed_as(money(self.due_value), total);
        let status = bill_status(self.status.as_deref().unwrap_or(""), total, due);
        Ok(Bill {
            reference: json::non_empty(self.reference),
            supplier_ref: SupplierRef::to(
                self.contact.as_deref().and_then(id_of),
                json::non_empty(self.contact_name),
            ),
            issue_date,
            due_date: self.due_on.as_deref().and_then(json::date),
            paid_on_date: if status == BillStatus::Paid {
                self.paid_on.as_deref().and_then(json::date)
            } else {
                None
            },
            currency: self.currency.unwrap_or_default(),
            sub_total: self
                .net_value
                .map_or(total - tax, |net| signed_as(net.money(), total)),
            tax_amount: tax,
            total_amount: total,
            amount_due: due,
            status,
            line_items: self
                .bill_items
                .into_iter()
                .map(BillItem::into_line)
                .collect(),
            note: json::non_empty(self.comments),
            source_modified_date: json::timestamp(self.updated_at.as_deref()),
            bill_id,
        })
    }
}

/// A page of `GET /v2/credit_notes`.
#[derive(Deserialize)]
pub(super) struct CreditNotesPage {
    #[serde(default)]
    pub(super) credit_notes: Each<FreeAgentCreditNote>,
}

/// A credit note as FreeAgent writes it (with `nested_credit_note_items=true`).
#[derive(Deserialize)]
pub(super) struct FreeAgentCreditNote {
    url: String,
    contact: Option<String>,
    contact_name: Option<String>,
    reference: Option<String>,
    dated_on: Option<String>,
    currency: Option<String>,
    net_value: Option<Amount>,
    sales_tax_value: Option<Amount>,
    second_sales_tax_value: Option<Amount>,
    total_value: Option<Amount>,
    refunded_value: Option<Amount>,
    due_value: Option<Amount>,
    status: Option<String>,
    comments: Option<String>,
    updated_at: Option<String>,
    #[serde(default, deserialize_with = "json::list_or_null")]
    credit_note_items: Vec<FreeAgentItem>,
}

impl Keyed for FreeAgentCreditNote {
    const ID: &'static str = "/url";

    fn kept_id(url: &str) -> Option<String> {
        id_of(url)
    }
}

impl FreeAgentCreditNote {
    /// Whether it was issued (a draft has no credit to allocate).
    pub(super) fn is_issued(&self) -> bool {
        !self
            .status
            .as_deref()
            .is_some_and(|status| status.trim().eq_ignore_ascii_case("draft"))
    }

    /// Our credit note, with the reconciliations that allocate its credit.
    /// What remains is what FreeAgent says is yet to be refunded, but never
    /// more than the total less what was refunded and allocated.
    pub(super) fn into_record(
        self,
        reconciliations: &Reconciliations,
    ) -> Result<CreditNote, Unreadable> {
        let credit_note_id =
            id_of(&self.url).ok_or_else(|| Unreadable::field("url", "ends in no id"))?;
        let issue_date = json::required_date(self.dated_on.as_deref(), "dated_on")?;
        let total = magnitude(self.total_value);
        let tax = magnitude(self.sales_tax_value) + magnitude(self.second_sales_tax_value);
        let allocations = reconciliations.of(&credit_note_id);
        let allocated = allocations
            .iter()
            .fold(Money(0), |sum, allocation| sum + allocation.amount);
        let unused = Money(
            (total - magnitude(self.refunded_value) - allocated)
                .0
                .max(0),
        );
        let remaining = magnitude(self.due_value).min(unused);
        let status = match self
            .status
            .as_deref()
            .map(|word| word.trim().to_ascii_lowercase())
            .as_deref()
        {
            Some("draft") => CreditNoteStatus::Draft,
            Some("written-off") => CreditNoteStatus::Void,
            Some("refunded") => CreditNoteStatus::Paid,
            Some("open" | "overdue") => status_by_remaining(total, remaining),
            _ => CreditNoteStatus::Unknown,
        };
        Ok(CreditNote {
            credit_note_number: json::non_empty(self.reference),
            customer_ref: CustomerRef::to(
                self.contact.as_deref().and_then(id_of),
                json::non_empty(self.contact_name),
            ),
            issue_date,
            currency: self.currency.unwrap_or_default(),
            sub_total: self
                .net_value
                .map_or(total - tax, |net| Money(net.money().0.abs())),
            total_tax_amount: tax,
            total_amount: total,
            remaining_credit: if status == CreditNoteStatus::Paid {
                Money(0)
            } else {
                remaining
            },
            status,
            line_items: self
                .credit_note_items
                .into_iter()
                .map(FreeAgentItem::into_credit_line)
                .collect(),
            allocations,
            note: json::non_empty(self.comments),
            source_modified_date: json::timestamp(self.updated_at.as_deref()),
            credit_note_id,
        })
    }
}

/// A page of `GET /v2/credit_note_reconciliations`.
#[derive(Deserialize)]
pub(super) struct ReconciliationsPage {
    #[serde(default)]
    pub(super) credit_note_reconciliations: Each<Reconciliation>,
}

/// Credit of a credit note set against an invoice.
#[derive(Deserialize)]
pub(super) struct Reconciliation {
    gross_value: Option<Amount>,
    dated_on: Option<String>,
    invoice: Option<String>,
    credit_note: Option<String>,
}

impl Keyed for Reconciliation {
    const ID: &'static str = "/url";

    fn kept_id(url: &str) -> Option<String> {
        id_of(url)
    }
}

/// The company's credit note reconciliations, by credit note id.
#[derive(Default)]
pub(super) struct Reconciliations(HashMap<String, Vec<CreditNoteAllocation>>);

impl Reconciliations {
    /// Every reconciliation that names a credit note and an invoice.
    pub(super) fn of_all(all: Vec<Reconciliation>) -> Self {
        let mut by_credit_note: HashMap<String, Vec<CreditNoteAllocation>> = HashMap::new();
        for reconciliation in all {
            let credit_note = reconciliation.credit_note.as_deref().and_then(id_of);
            let invoice = reconciliation.invoice.as_deref().and_then(id_of);
            let (Some(credit_note), Some(invoice)) = (credit_note, invoice) else {
                continue;
            };
            by_credit_note
                .entry(credit_note)
                .or_default()
                .push(CreditNoteAllocation {
                    invoice_ref: InvoiceRef {
                        id: invoice,
                        invoice_number: None,
                    },
                    amount: magnitude(reconciliation.gross_value),
                    allocated_on_date: reconciliation.dated_on.as_deref().and_then(json::date),
                });
        }
        Self(by_credit_note)
    }

    /// The allocations of credit note `id`.
    fn of(&self, id: &str) -> Vec<CreditNoteAllocation> {
        self.0.get(id).cloned().unwrap_or_default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bill_statuses_map_with_what_is_due() {
        let total = Money::from_cents(21_300);
        for (word, due, ours) in [
            ("Open", total, BillStatus::Open),
            ("Overdue", total, BillStatus::Open),
            ("Open", Money::from_cents(1_300), BillStatus::PartiallyPaid),
            ("Paid", Money(0), BillStatus::Paid),
            ("Zero Value", Money(0), BillStatus::Paid),
            ("Refunded", Money(0), BillStatus::Paid),
            ("Something new", total, BillStatus::Unknown),
        ] {
            assert_eq!(bill_status(word, total, due), ours, "{word}");
        }
        // A bill refund part received: by magnitudes.
        assert_eq!(
            bill_status("Open", -total, Money::from_cents(-100)),
            BillStatus::PartiallyPaid
        );
    }

    #[test]
    fn a_bills_net_and_tax_take_the_sign_of_its_total() {
        let bill: FreeAgentBill = serde_json::from_str(
            r#"{"url":"https://api.freeagent.com/v2/bills/1","contact":"https://api.freeagent.com/v2/contacts/1",
                "dated_on":"2020-07-28","total_value":"213.0","net_value":"-177.5","sales_tax_value":"-35.5",
                "due_value":"13.0","status":"Open","bill_items":[{"category":"https://api.freeagent.com/v2/categories/609-1",
                "quantity":"1.0","total_value":"213.0","total_value_ex_tax":"177.5","sales_tax_value":"-35.5"}]}"#,
        )
        .expect("a bill");
        let bill = bill.into_record().expect("readable");
        assert_eq!(bill.sub_total, Money::from_cents(17_750));
        assert_eq!(bill.tax_amount, Money::from_cents(3_550));
        assert_eq!(bill.status, BillStatus::PartiallyPaid);
        let line = &bill.line_items[0];
        assert_eq!(
            (line.sub_total, line.tax_amount),
            (Money::from_cents(17_750), Money::from_cents(3_550))
        );
        assert_eq!(
            line.account_ref.as_ref().map(|account| account.id.as_str()),
            Some("609-1")
        );
    }

    #[test]
    fn reconciliations_without_both_ends_are_left_out() {
        let read: Vec<Reconciliation> = serde_json::from_str(
            r#"[{"url":"https://api.freeagent.com/v2/credit_note_reconciliations/1","gross_value":"100.0",
                 "invoice":"https://api.freeagent.com/v2/invoices/1","credit_note":"https://api.freeagent.com/v2/credit_notes/1"},
                {"url":"https://api.freeagent.com/v2/credit_note_reconciliations/2","gross_value":"5.0"}]"#,
        )
        .expect("reconciliations");
        let all = Reconciliations::of_all(read);
        assert_eq!(all.of("1").len(), 1);
        assert_eq!(all.of("1")[0].amount, Money::from_cents(10_000));
    }
}
