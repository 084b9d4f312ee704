//! MYOB's money in and out, and how it becomes ours: customer payments
//! (`GET /Sale/CustomerPayment`) and refunds of sales credits
//! (`/Sale/CreditRefund`) are payments; supplier payments
//! (`/Purchase/SupplierPayment`) and refunds of supplier debits
//! (`/Purchase/DebitRefund`) are bill payments. Refunds are negative, as
//! are their allocations to the credit they pay out. Sources: `NOTES.md`,
//! "Accounting model".

use serde::Deserialize;

use super::chart::AccountLink;
use super::mapping::CardLink;
use crate::data::bill_payments::{BillAllocationType, BillPayment, BillPaymentAllocation};
use crate::data::invoices::CustomerRef;
use crate::data::money::Money;
use crate::data::payments::{AllocationType, Payment, PaymentAllocation};
use crate::data::suppliers::SupplierRef;
use crate::platforms::kit::json::{self, Rounded, rounded};
use crate::platforms::kit::records::{Keyed, Unreadable};

impl Keyed for CustomerPayment {
    const ID: &'static str = "/UID";
}

impl Keyed for SupplierPayment {
    const ID: &'static str = "/UID";
}

impl Keyed for Refund {
    const ID: &'static str = "/UID";
}

/// The account a payment went through, when MYOB names one: money left in
/// undeposited funds (`DepositTo`) or paid electronically (`PayFrom`) has
/// no bank account yet.
fn through(
    route: Option<&str>,
    account: Option<AccountLink>,
) -> Option<crate::data::accounts::AccountRef> {
    match route {
        None | Some("Account") => account.and_then(AccountLink::into_ref),
        Some(_) => None,
    }
}

/// A line of a customer payment (`CustomerPaymentLine`): an invoice (or an
/// order's deposit) and what was applied to it.
#[derive(Deserialize)]
#[serde(rename_all = "PascalCase")]
struct CustomerPaymentLine {
    #[serde(rename = "UID")]
    uid: Option<String>,
    #[serde(rename = "Type")]
    line_type: Option<String>,
    amount_applied: Option<Rounded>,
}

/// A customer payment as `GET /Sale/CustomerPayment` writes it.
#[derive(Deserialize)]
#[serde(rename_all = "PascalCase")]
pub(super) struct CustomerPayment {
    #[serde(rename = "UID")]
    uid: String,
    deposit_to: Option<String>,
    account: Option<AccountLink>,
    customer: Option<CardLink>,
    receipt_number: Option<String>,
    date: Option<String>,
    amount_received: Option<Rounded>,
    memo: Option<String>,
    #[serde(default)]
    invoices: Vec<CustomerPaymentLine>,
    last_modified: Option<String>,
}

impl CustomerPayment {
    /// Our payment in `currency`: each invoice line an `Invoice`
    /// allocation; a line against an order (a deposit) or a purged invoice
    /// is `Other`.
    pub(super) fn into_record(self, currency: &str) -> Result<Payment, Unreadable> {
        let date = json::required_date(self.date.as_deref(), "Date")?;
        let allocations = self
            .invoices
            .into_iter()
            .filter_map(|line| {
                let kind = match line.line_type.as_deref() {
                    Some("Invoice") => AllocationType::Invoice,
                    _ => AllocationType::Other,
                };
                Some(PaymentAllocation {
                    allocation_type: kind,
                    id: json::non_empty(line.uid)?,
                    amount: rounded(line.amount_applied),
                })
            })
            .collect();
        Ok(Payment {
            reference: json::non_empty(self.receipt_number),
            customer_ref: self
                .customer
                .and_then(|customer| CustomerRef::to(customer.uid, customer.name)),
            account_ref: through(self.deposit_to.as_deref(), self.account),
            date,
            currency: currency.to_owned(),
            total_amount: rounded(self.amount_received),
            allocations,
            note: json::non_empty(self.memo),
            source_modified_date: json::timestamp(self.last_modified.as_deref()),
            payment_id: self.uid,
        })
    }
}

/// A line of a supplier payment (`SupplierPaymentLine`).
#[derive(Deserialize)]
#[serde(rename_all = "PascalCase")]
struct SupplierPaymentLine {
    #[serde(rename = "Type")]
    line_type: Option<String>,
    purchase: Option<CardLink>,
    amount_applied: Option<Rounded>,
}

/// A supplier payment as `GET /Purchase/SupplierPayment` writes it.
#[derive(Deserialize)]
#[serde(rename_all = "PascalCase")]
pub(super) struct SupplierPayment {
    #[serde(rename = "UID")]
    uid: String,
    pay_from: Option<String>,
    account: Option<AccountLink>,
    supplier: Option<CardLink>,
    payment_number: Option<String>,
    date: Option<String>,
    amount_paid: Option<Rounded>,
    memo: Option<String>,
    #[serde(default)]
    lines: Vec<SupplierPaymentLine>,
    last_modified: Option<String>,
}

impl SupplierPayment {
    /// Our bill payment in `currency`: each bill line a `Bill` allocation,
    /// an order's or a purged bill's `Other`.
    pub(super) fn into_record(self, currency: &str) -> Result<BillPayment, Unreadable> {
        let date = json::required_date(self.date.as_deref(), "Date")?;
        let allocations = self
            .lines
            .into_iter()
            .filter_map(|line| {
                let kind = match line.line_type.as_deref() {
                    Some("Bill") => BillAllocationType::Bill,
                    _ => BillAllocationType::Other,
                };
                Some(BillPaymentAllocation {
                    allocation_type: kind,
                    id: json::non_empty(line.purchase?.uid)?,
                    amount: rounded(line.amount_applied),
                })
            })
            .collect();
        Ok(BillPayment {
            reference: json::non_empty(self.payment_number),
            supplier_ref: self
                .supplier
                .and_then(|supplier| SupplierRef::to(supplier.uid, supplier.name)),
            account_ref: through(self.pay_from.as_deref(), self.account),
            date,
            currency: currency.to_owned(),
            total_amount: rounded(self.amount_paid),
            allocations,
            note: json::non_empty(self.memo),
            source_modified_date: json::timestamp(self.last_modified.as_deref()),
            bill_payment_id: self.uid,
        })
    }
}

/// A refund: of a sales credit to a customer (`GET /Sale/CreditRefund`,
/// naming the credit's `Invoice`) or of a supplier debit to the business
/// (`GET /Purchase/DebitRefund`, naming its `Bill`).
#[derive(Deserialize)]
#[serde(rename_all = "PascalCase")]
pub(super) struct Refund {
    #[serde(rename = "UID")]
    uid: String,
    deposit_to: Option<String>,
    account: Option<AccountLink>,
    #[serde(alias = "Bill")]
    invoice: Option<CardLink>,
    #[serde(alias = "Supplier")]
    customer: Option<CardLink>,
    number: Option<String>,
    date: Option<String>,
    amount: Option<Rounded>,
    memo: Option<String>,
    last_modified: Option<String>,
}

impl Refund {
    /// The refund's amount, negative: money that settles a credit by
    /// paying it out.
    fn negative(&self) -> Money {
        -rounded(self.amount)
    }

    /// A refund of a sales credit as our (negative) payment.
    pub(super) fn into_payment(self, currency: &str) -> Result<Payment, Unreadable> {
        let date = json::required_date(self.date.as_deref(), "Date")?;
        let amount = self.negative();
        let allocations = self
            .invoice
            .and_then(|credit| json::non_empty(credit.uid))
            .map(|id| PaymentAllocation {
                allocation_type: AllocationType::CreditNote,
                id,
                amount,
            });
        Ok(Payment {
            reference: json::non_empty(self.number),
            customer_ref: self
                .customer
                .and_then(|customer| CustomerRef::to(customer.uid, customer.name)),
            account_ref: through(self.deposit_to.as_deref(), self.account),
            date,
            currency: currency.to_owned(),
            total_amount: amount,
            allocations: allocations.into_iter().collect(),
            note: json::non_empty(self.memo),
            source_modified_date: json::timestamp(self.last_modified.as_deref()),
            payment_id: self.uid,
        })
    }

    /// A refund of a supplier debit as our (negative) bill payment.
    pub(super) fn into_bill_payment(self, currency: &str) -> Result<BillPayment, Unreadable> {
        let date = json::required_date(self.date.as_deref(), "Date")?;
        let amount = self.negative();
        let allocations = self
            .invoice
            .and_then(|debit| json::non_empty(debit.uid))
            .map(|id| BillPaymentAllocation {
                allocation_type: BillAllocationType::SupplierCredit,
                id,
                amount,
            });
        Ok(BillPayment {
            reference: json::non_empty(self.number),
            supplier_ref: self
                .customer
                .and_then(|supplier| SupplierRef::to(supplier.uid, supplier.name)),
            account_ref: through(self.deposit_to.as_deref(), self.account),
            date,
            currency: currency.to_owned(),
            total_amount: amount,
            allocations: allocations.into_iter().collect(),
            note: json::non_empty(self.memo),
            source_modified_date: json::timestamp(self.last_modified.as_deref()),
            bill_payment_id: self.uid,
        })
    }
}
