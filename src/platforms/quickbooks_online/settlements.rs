//! QuickBooks Online's bills, payments received and bill payments, and how
//! they become ours: a bill's status follows from its balance; a payment's
//! lines each settle one linked transaction (a credit memo or vendor credit
//! counting against the cash).

use serde::Deserialize;

use super::mapping::{MetaData, Reference, SalesItemLineDetail, TaxDetail};
use crate::data::accounts::AccountRef;
use crate::data::bill_payments::{BillAllocationType, BillPayment, BillPaymentAllocation};
use crate::data::bills::{Bill, BillLineItem};
use crate::data::invoices::CustomerRef;
use crate::data::money::{Money, Quantity};
use crate::data::payments::{AllocationType, Payment, PaymentAllocation};
use crate::data::suppliers::SupplierRef;
use crate::platforms::kit::json::{self, Amount, money};
use crate::platforms::kit::records::{Each, Keyed, Unreadable};
use crate::platforms::kit::status::by_balance;

/// Bills a query found.
#[derive(Deserialize, Default)]
pub(super) struct BillList {
    #[serde(rename = "Bill", default)]
    pub(super) bill: Each<QboBill>,
}

/// Payments a query found.
#[derive(Deserialize, Default)]
pub(super) struct PaymentList {
    #[serde(rename = "Payment", default)]
    pub(super) payment: Each<QboPayment>,
}

/// Bill payments a query found.
#[derive(Deserialize, Default)]
pub(super) struct BillPaymentList {
    #[serde(rename = "BillPayment", default)]
    pub(super) bill_payment: Each<QboBillPayment>,
}

/// A bill as QuickBooks writes it (the `Bill` entity).
#[derive(Deserialize)]
#[serde(rename_all = "PascalCase")]
pub(super) struct QboBill {
    id: String,
    doc_number: Option<String>,
    txn_date: Option<String>,
    due_date: Option<String>,
    currency_ref: Option<Reference>,
    vendor_ref: Option<Reference>,
    total_amt: Option<Amount>,
    balance: Option<Amount>,
    txn_tax_detail: Option<TaxDetail>,
    #[serde(default)]
    line: Vec<QboExpenseLine>,
    private_note: Option<String>,
    meta_data: Option<MetaData>,
}

impl Keyed for QboBill {
    const ID: &'static str = "/Id";
}

/// A bill's line: an amount posted to an account
/// (`AccountBasedExpenseLineDetail`) or an item bought
/// (`ItemBasedExpenseLineDetail`, whose account is the item's).
#[derive(Deserialize)]
#[serde(rename_all = "PascalCase")]
struct QboExpenseLine {
    description: Option<String>,
    amount: Option<Amount>,
    detail_type: Option<String>,
    account_based_expense_line_detail: Option<AccountLineDetail>,
    item_based_expense_line_detail: Option<SalesItemLineDetail>,
}

#[derive(Deserialize)]
#[serde(rename_all = "PascalCase")]
struct AccountLineDetail {
    account_ref: Option<Reference>,
}

impl QboBill {
    /// Our bill; one without a readable `TxnDate` cannot be read. Its
    /// status follows from `Balance` against `TotalAmt` (QuickBooks has no
    /// draft or void bill: a deleted bill leaves the list). Tax is only
    /// given for the whole bill (`TxnTaxDetail.TotalTax`), so lines carry
    /// none.
    pub(super) fn into_record(self) -> Result<Bill, Unreadable> {
        let issue_date = self
            .txn_date
            .as_deref()
            .and_then(json::date)
            .ok_or_else(|| Unreadable::field("TxnDate", "is missing or not a date"))?;
        let total = money(self.total_amt);
        let balance = money(self.balance);
        let tax = money(self.txn_tax_detail.and_then(|detail| detail.total_tax));
        let line_items = self
            .line
            .into_iter()
            .filter_map(|line| {
                let line_amount = money(line.amount);
                let (unit_amount, quantity, account_ref) = match line.detail_type.as_deref() {
                    Some("AccountBasedExpenseLineDetail") => (
                        line_amount,
                        Quantity::units(1),
                        line.account_based_expense_line_detail
                            .and_then(|detail| detail.account_ref)
                            .and_then(|account| AccountRef::to(account.value, account.name)),
                    ),
                    Some("ItemBasedExpenseLineDetail") => {
                        let detail = line.item_based_expense_line_detail;
                        let (unit_price, qty) =
                            detail.map_or((None, None), |detail| (detail.unit_price, detail.qty));
                        (
                            unit_price.map_or(line_amount, Amount::money),
                            qty.map_or(Quantity::units(1), Amount::quantity),
                            None,
                        )
                    }
                    _ => return None,
                };
                Some(BillLineItem {
                    description: line.description.unwrap_or_default(),
                    unit_amount,
                    quantity,
                    discount_amount: Money(0),
                    sub_total: line_amount,
                    tax_amount: Money(0),
                    total_amount: line_amount,
                    account_ref,
                    tax_rate_ref: None,
                })
            })
            .collect();
        let (vendor_id, vendor_name) = self
            .vendor_ref
            .map_or((None, None), |vendor| (vendor.value, vendor.name));
        Ok(Bill {
            reference: json::non_empty(self.doc_number),
            supplier_ref: SupplierRef::to(vendor_id, vendor_name),
            issue_date,
            due_date: self.due_date.as_deref().and_then(json::date),
            paid_on_date: None,
            currency: self
                .currency_ref
                .and_then(|currency| currency.value)
                .unwrap_or_default(),
            sub_total: total - tax,
            tax_amount: tax,
            total_amount: total,
            amount_due: balance,
            status: by_balance(total, balance).into(),
            line_items,
            note: json::non_empty(self.private_note),
            source_modified_date: json::timestamp(
                self.meta_data
                    .and_then(|meta| meta.last_updated_time)
                    .as_deref(),
            ),
            bill_id: self.id,
        })
    }
}

/// A payment received as QuickBooks writes it (the `Payment` entity).
#[derive(Deserialize)]
#[serde(rename_all = "PascalCase")]
pub(super) struct QboPayment {
    id: String,
    txn_date: Option<String>,
    currency_ref: Option<Reference>,
    customer_ref: Option<Reference>,
    deposit_to_account_ref: Option<Reference>,
    total_amt: Option<Amount>,
    payment_ref_num: Option<String>,
    #[serde(default)]
    line: Vec<QboPaymentLine>,
    private_note: Option<String>,
    meta_data: Option<MetaData>,
}

impl Keyed for QboPayment {
    const ID: &'static str = "/Id";
}

#[derive(Deserialize)]
#[serde(rename_all = "PascalCase")]
struct QboPaymentLine {
    amount: Option<Amount>,
    #[serde(default)]
    linked_txn: Vec<LinkedTxn>,
}

#[derive(Deserialize)]
#[serde(rename_all = "PascalCase")]
struct LinkedTxn {
    txn_id: Option<String>,
    txn_type: Option<String>,
}

/// What each line of a payment settles: the type and id of the
/// transaction it links (its first, as QuickBooks links one per line) and
/// the line's unsigned amount. A line linking nothing is left out.
fn linked(lines: Vec<QboPaymentLine>) -> impl Iterator<Item = (Option<String>, String, Money)> {
    lines.into_iter().filter_map(|line| {
        let amount = money(line.amount);
        let linked = line.linked_txn.into_iter().next()?;
        Some((linked.txn_type, json::non_empty(linked.txn_id)?, amount))
    })
}

impl QboPayment {
    /// Our payment; one without a readable `TxnDate` cannot be read. Each
    /// line settles the transaction it links: an `Invoice` (positive), a
    /// `CreditMemo` whose credit pays part of the invoices (negative: the
    /// total is the invoices less the credits, plus `UnappliedAmt`), or
    /// anything else (a journal entry's opening balance: `Other`).
    pub(super) fn into_record(self) -> Result<Payment, Unreadable> {
        let date = self
            .txn_date
            .as_deref()
            .and_then(json::date)
            .ok_or_else(|| Unreadable::field("TxnDate", "is missing or not a date"))?;
        let allocations = linked(self.line)
            .map(|(txn_type, id, amount)| {
                let (allocation_type, amount) = match txn_type.as_deref() {
                    Some("Invoice") => (AllocationType::Invoice, amount),
                    Some("CreditMemo") => (AllocationType::CreditNote, -amount),
                    _ => (AllocationType::Other, amount),
                };
                PaymentAllocation {
                    allocation_type,
                    id,
                    amount,
                }
            })
            .collect();
        let (customer_id, customer_name) = self
            .customer_ref
            .map_or((None, None), |customer| (customer.value, customer.name));
        Ok(Payment {
            reference: json::non_empty(self.payment_ref_num),
            customer_ref: CustomerRef::to(customer_id, customer_name),
            account_ref: self
                .deposit_to_account_ref
                .and_then(|account| AccountRef::to(account.value, account.name)),
            date,
            currency: self
                .currency_ref
                .and_then(|currency| currency.value)
                .unwrap_or_default(),
            total_amount: money(self.total_amt),
            allocations,
            note: json::non_empty(self.private_note),
            source_modified_date: json::timestamp(
                self.meta_data
                    .and_then(|meta| meta.last_updated_time)
                    .as_deref(),
            ),
            payment_id: self.id,
        })
    }
}

/// A payment to a vendor as QuickBooks writes it (the `BillPayment` entity):
/// by cheque from a bank account or by credit card.
#[derive(Deserialize)]
#[serde(rename_all = "PascalCase")]
pub(super) struct QboBillPayment {
    id: String,
    txn_date: Option<String>,
    doc_number: Option<String>,
    currency_ref: Option<Reference>,
    vendor_ref: Option<Reference>,
    check_payment: Option<CheckPayment>,
    credit_card_payment: Option<CreditCardPayment>,
    total_amt: Option<Amount>,
    #[serde(default)]
    line: Vec<QboPaymentLine>,
    private_note: Option<String>,
    meta_data: Option<MetaData>,
}

impl Keyed for QboBillPayment {
    const ID: &'static str = "/Id";
}

#[derive(Deserialize)]
#[serde(rename_all = "PascalCase")]
struct CheckPayment {
    bank_account_ref: Option<Reference>,
}

#[derive(Deserialize)]
#[serde(rename_all = "PascalCase")]
struct CreditCardPayment {
    #[serde(rename = "CCAccountRef")]
    cc_account_ref: Option<Reference>,
}

impl QboBillPayment {
    /// Our bill payment; one without a readable `TxnDate` cannot be read.
    /// Each line settles the transaction it links: a `Bill` (positive), a
    /// `VendorCredit` whose credit pays part of the bills (negative), or
    /// anything else (`Other`). The account is the cheque's bank account
    /// or the card's.
    pub(super) fn into_record(self) -> Result<BillPayment, Unreadable> {
        let date = self
            .txn_date
            .as_deref()
            .and_then(json::date)
            .ok_or_else(|| Unreadable::field("TxnDate", "is missing or not a date"))?;
        let allocations = linked(self.line)
            .map(|(txn_type, id, amount)| {
                let (allocation_type, amount) = match txn_type.as_deref() {
                    Some("Bill") => (BillAllocationType::Bill, amount),
                    Some("VendorCredit") => (BillAllocationType::SupplierCredit, -amount),
                    _ => (BillAllocationType::Other, amount),
                };
                BillPaymentAllocation {
                    allocation_type,
                    id,
                    amount,
                }
            })
            .collect();
        let account = self
            .check_payment
            .and_then(|cheque| cheque.bank_account_ref)
            .or_else(|| {
                self.credit_card_payment
                    .and_then(|card| card.cc_account_ref)
            });
        let (vendor_id, vendor_name) = self
            .vendor_ref
            .map_or((None, None), |vendor| (vendor.value, vendor.name));
        Ok(BillPayment {
            reference: json::non_empty(self.doc_number),
            supplier_ref: SupplierRef::to(vendor_id, vendor_name),
            account_ref: account.and_then(|account| AccountRef::to(account.value, account.name)),
            date,
            currency: self
                .currency_ref
                .and_then(|currency| currency.value)
                .unwrap_or_default(),
            total_amount: money(self.total_amt),
            allocations,
            note: json::non_empty(self.private_note),
            source_modified_date: json::timestamp(
                self.meta_data
                    .and_then(|meta| meta.last_updated_time)
                    .as_deref(),
            ),
            bill_payment_id: self.id,
        })
    }
}
