//! MYOB's bills (`GET /Purchase/Bill/{Service,Item,Professional,
//! Miscellaneous}`, which carry lines, and the pre-conversion bills only the
//! untyped `/Purchase/Bill` lists) and sales credit notes (negative sales of
//! `/Sale/Invoice`, settled against invoices by `/Sale/CreditSettlement`),
//! and how they become ours. MYOB gives no tax per line: a line's tax is
//! worked out from its tax code's rate. Sources: `NOTES.md`, "Accounting
//! model".

use std::collections::HashMap;

use rust_decimal::Decimal;
use serde::Deserialize;

use super::chart::{AccountLink, TaxCodeLink};
use super::mapping::{CardLink, MyobInvoice, Terms};
use crate::data::bills::{Bill, BillLineItem, BillStatus};
use crate::data::credit_notes::{
    CreditNote, CreditNoteAllocation, InvoiceRef, status_by_remaining,
};
use crate::data::invoices::CustomerRef;
use crate::data::money::{Money, Quantity};
use crate::data::suppliers::SupplierRef;
use crate::platforms::kit::json::{self, Rounded, rounded};
use crate::platforms::kit::records::{Keyed, Unreadable};

impl Keyed for MyobBill {
    const ID: &'static str = "/UID";
}

impl Keyed for CreditSettlement {
    const ID: &'static str = "/UID";
}

/// The rates of the file's tax codes, by `UID`, as percentages.
pub(super) type TaxRates = HashMap<String, Quantity>;

/// A bill line (`ServiceBillLine`, `ItemBillLine`, `ProfessionalBillLine`,
/// `MiscellaneousBillLine`: the fields they share and the item and service
/// lines' units).
#[derive(Deserialize)]
#[serde(rename_all = "PascalCase")]
struct BillLine {
    #[serde(rename = "Type")]
    line_type: Option<String>,
    description: Option<String>,
    total: Option<Rounded>,
    account: Option<AccountLink>,
    tax_code: Option<TaxCodeLink>,
    unit_price: Option<Rounded>,
    bill_quantity: Option<Rounded>,
    unit_count: Option<Rounded>,
}

/// A bill as MYOB's bill lists write it.
#[derive(Deserialize)]
#[serde(rename_all = "PascalCase")]
pub(super) struct MyobBill {
    #[serde(rename = "UID")]
    uid: String,
    number: Option<String>,
    supplier_invoice_number: Option<String>,
    date: Option<String>,
    supplier: Option<CardLink>,
    terms: Option<Terms>,
    is_tax_inclusive: Option<bool>,
    total_tax: Option<Rounded>,
    total_amount: Option<Rounded>,
    balance_due_amount: Option<Rounded>,
    status: Option<String>,
    last_payment_date: Option<String>,
    bill_type: Option<String>,
    comment: Option<String>,
    journal_memo: Option<String>,
    #[serde(default)]
    lines: Vec<BillLine>,
    last_modified: Option<String>,
}

impl MyobBill {
    /// A bill only the untyped list has: one entered before the file's
    /// conversion date, which has no lines.
    pub(super) fn is_pre_conversion(&self) -> bool {
        self.bill_type.as_deref() == Some("PreConversion")
    }

    /// Whether a line of the bill names a tax code.
    pub(super) fn has_taxed_lines(&self) -> bool {
        self.lines.iter().any(|line| line.tax_code.is_some())
    }

    /// Our bill in `currency`, its lines' tax worked out with `rates`
    /// (MYOB's `Subtotal` holds the tax on a tax-inclusive bill, so ours is
    /// the total less the tax);
    /// `None` for a supplier debit (status `Debit`, a negative bill), which
    /// is a credit from the supplier, not a bill. An `Open` bill is part
    /// paid when MYOB shows some of it applied; `Closed` is paid.
    pub(super) fn into_record(
        self,
        currency: &str,
        rates: &TaxRates,
    ) -> Result<Option<Bill>, Unreadable> {
        let total = rounded(self.total_amount);
        if self.status.as_deref() == Some("Debit") || total < Money(0) {
            return Ok(None);
        }
        let issue_date = json::required_date(self.date.as_deref(), "Date")?;
        let tax = rounded(self.total_tax);
        let amount_due = rounded(self.balance_due_amount);
        let status = match self.status.as_deref() {
            Some("Open") if amount_due <= Money(0) => BillStatus::Paid,
            Some("Open") if amount_due < total => BillStatus::PartiallyPaid,
            Some("Open") => BillStatus::Open,
            Some("Closed") => BillStatus::Paid,
            _ => BillStatus::Unknown,
        };
        let inclusive = self.is_tax_inclusive == Some(true);
        let line_items = self
            .lines
            .into_iter()
            .filter(|line| {
                line.line_type
                    .as_deref()
                    .is_none_or(|kind| kind == "Transaction")
            })
            .map(|line| line.into_record(inclusive, currency, rates))
            .collect();
        Ok(Some(Bill {
            reference: json::non_empty(self.supplier_invoice_number)
                .or_else(|| json::non_empty(self.number)),
            supplier_ref: self.supplier.and_then(|supplier| {
                SupplierRef::to(
                    json::non_empty(supplier.uid),
                    json::non_empty(supplier.name),
                )
            }),
            issue_date,
            due_date: self
                .terms
                .and_then(|terms| terms.due_date)
                .as_deref()
                .and_then(json::date),
            paid_on_date: if status == BillStatus::Paid {
                self.last_payment_date.as_deref().and_then(json::date)
            } else {
                None
            },
            currency: currency.to_owned(),
            sub_total: total - tax,
            tax_amount: tax,
            total_amount: total,
            amount_due,
            status,
            line_items,
            note: json::non_empty(self.comment).or_else(|| json::non_empty(self.journal_memo)),
            source_modified_date: json::timestamp(self.last_modified.as_deref()),
            bill_id: self.uid,
        }))
    }
}

impl BillLine {
    /// Our line: `Total` is with tax on a tax-inclusive bill and without it
    /// otherwise, and the tax is the code's rate of it, rounded to the
    /// currency's minor unit. Lines without units are one unit.
    fn into_record(self, inclusive: bool, currency: &str, rates: &TaxRates) -> BillLineItem {
        let amount = rounded(self.total);
        let rate = self
            .tax_code
            .as_ref()
            .and_then(|code| code.uid.as_ref())
            .and_then(|uid| rates.get(uid))
            .copied()
            .unwrap_or_default();
        let tax = line_tax(amount, rate, inclusive, currency);
        let (sub_total, total) = if inclusive {
            (amount - tax, amount)
        } else {
            (amount, amount + tax)
        };
        let quantity = self
            .bill_quantity
            .or(self.unit_count)
            .map_or(Quantity::units(1), Rounded::quantity);
        let listed = self.unit_price.filter(|_| !inclusive).map(Rounded::money);
        let unit_amount = listed.unwrap_or_else(|| json::per_unit(sub_total, quantity));
        let gross = Money::from_decimal(unit_amount.to_decimal() * quantity.to_decimal())
            .unwrap_or(sub_total);
        BillLineItem {
            description: json::non_empty(self.description).unwrap_or_default(),
            unit_amount,
            quantity,
            discount_amount: if gross > sub_total {
                gross - sub_total
            } else {
                Money(0)
            },
            sub_total,
            tax_amount: tax,
            total_amount: total,
            account_ref: self.account.and_then(AccountLink::into_ref),
            tax_rate_ref: self.tax_code.as_ref().and_then(TaxCodeLink::to_ref),
        }
    }
}

/// The tax at `rate` percent on `amount` (which holds the tax when
/// `inclusive`), to the currency's minor unit, half away from zero.
fn line_tax(amount: Money, rate: Quantity, inclusive: bool, currency: &str) -> Money {
    let rate = rate.to_decimal();
    let hundred = Decimal::ONE_HUNDRED;
    let tax = if inclusive {
        amount.to_decimal() * rate / (hundred + rate)
    } else {
        amount.to_decimal() * rate / hundred
    };
    let rounded = tax.round_dp_with_strategy(
        json::minor_digits(currency),
        rust_decimal::RoundingStrategy::MidpointAwayFromZero,
    );
    Money::from_decimal(rounded).unwrap_or_default()
}

/// A settlement of a sales credit against invoices (`GET
/// /Sale/CreditSettlement`).
#[derive(Deserialize)]
#[serde(rename_all = "PascalCase")]
pub(super) struct CreditSettlement {
    credit_from_invoice: Option<CardLink>,
    date: Option<String>,
    #[serde(default)]
    lines: Vec<SettlementLine>,
}

#[derive(Deserialize)]
#[serde(rename_all = "PascalCase")]
struct SettlementLine {
    #[serde(rename = "Type")]
    line_type: Option<String>,
    sale: Option<SaleLink>,
    amount_applied: Option<Rounded>,
}

#[derive(Deserialize)]
#[serde(rename_all = "PascalCase")]
struct SaleLink {
    #[serde(rename = "UID")]
    uid: Option<String>,
    number: Option<String>,
}

/// The allocations of the file's credit settlements, by the credit note
/// (the negative sale) each settles from.
#[derive(Default)]
pub(super) struct Settlements(HashMap<String, Vec<CreditNoteAllocation>>);

impl Settlements {
    /// Every invoice line of `settlements`, by credit note.
    pub(super) fn of(settlements: Vec<CreditSettlement>) -> Self {
        let mut by_note: HashMap<String, Vec<CreditNoteAllocation>> = HashMap::new();
        for settlement in settlements {
            let Some(note) = settlement.credit_from_invoice.and_then(|link| link.uid) else {
                continue;
            };
            let date = settlement.date.as_deref().and_then(json::date);
            for line in settlement.lines {
                let invoice = line.sale.and_then(|sale| Some((sale.uid?, sale.number)));
                if let (Some("Invoice"), Some((id, number))) = (line.line_type.as_deref(), invoice)
                {
                    by_note
                        .entry(note.clone())
                        .or_default()
                        .push(CreditNoteAllocation {
                            invoice_ref: InvoiceRef {
                                id,
                                invoice_number: json::non_empty(number),
                            },
                            amount: rounded(line.amount_applied),
                            allocated_on_date: date,
                        });
                }
            }
        }
        Self(by_note)
    }
}

impl MyobInvoice {
    /// Our credit note from a negative sale, its amounts made positive, in
    /// `currency`; its allocations are the settlements from it. What is left
    /// of its credit is its negative balance due.
    pub(super) fn into_credit_note(
        self,
        currency: &str,
        settlements: &Settlements,
    ) -> Result<CreditNote, Unreadable> {
        let issue_date = json::required_date(self.date.as_deref(), "Date")?;
        let total = -rounded(self.total_amount);
        let tax = -rounded(self.total_tax);
        let remaining = -rounded(self.balance_due_amount);
        let remaining = if remaining < Money(0) {
            Money(0)
        } else {
            remaining
        };
        let (customer_id, customer_name) = self
            .customer
            .map_or((None, None), |customer| (customer.uid, customer.name));
        Ok(CreditNote {
            credit_note_number: json::non_empty(self.number),
            customer_ref: CustomerRef::to(customer_id, customer_name),
            issue_date,
            currency: currency.to_owned(),
            sub_total: total - tax,
            total_tax_amount: tax,
            total_amount: total,
            remaining_credit: remaining,
            status: status_by_remaining(total, remaining),
            line_items: Vec::new(),
            allocations: settlements.0.get(&self.uid).cloned().unwrap_or_default(),
            note: json::non_empty(self.comment).or_else(|| json::non_empty(self.journal_memo)),
            source_modified_date: json::timestamp(self.last_modified.as_deref()),
            credit_note_id: self.uid,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_lines_tax_is_its_codes_rate_of_the_net_or_the_taxed_part_of_the_gross() {
        let ten = Quantity::units(10);
        assert_eq!(
            line_tax(Money::from_cents(10_000), ten, false, "AUD"),
            Money::from_cents(1_000)
        );
        assert_eq!(
            line_tax(Money::from_cents(11_000), ten, true, "AUD"),
            Money::from_cents(1_000)
        );
        assert_eq!(
            line_tax(Money::from_cents(1_005), ten, true, "AUD"),
            Money::from_cents(91)
        );
        assert_eq!(
            line_tax(Money::from_cents(-5_000), ten, false, "AUD"),
            Money::from_cents(-500)
        );
    }
}
