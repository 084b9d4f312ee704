//! Xero's payments (`GET /api.xro/2.0/Payments`) and how they become our
//! payments and bill payments: Xero keeps money received and paid in one
//! list, each payment on one document, typed by `PaymentType`. The
//! receivable kinds are our payments (on a sales invoice, a refund of a
//! credit note, an overpayment or a prepayment), the payable kinds our bill
//! payments (on a bill, a refund of a supplier's credit note, an
//! overpayment or a prepayment). Sources: `NOTES.md`.

use serde::Deserialize;

use super::mapping::{Pagination, updated};
use crate::data::accounts::AccountRef;
use crate::data::bill_payments::{BillAllocationType, BillPayment, BillPaymentAllocation};
use crate::data::invoices::CustomerRef;
use crate::data::money::Money;
use crate::data::payments::{AllocationType, Payment, PaymentAllocation};
use crate::data::suppliers::SupplierRef;
use crate::platforms::kit::json::{self, Amount, money};
use crate::platforms::kit::records::{Each, Keyed, Unreadable};
use crate::timestamp::Timestamp;

/// A page of `GET /api.xro/2.0/Payments`.
#[derive(Deserialize)]
#[serde(rename_all = "PascalCase")]
pub(super) struct PaymentsPage {
    pub(super) payments: Each<XeroPayment>,
    #[serde(rename = "pagination")]
    pub(super) pagination: Option<Pagination>,
}

/// A payment as Xero writes it (`Payment` in Xero's OpenAPI document).
#[derive(Deserialize)]
#[serde(rename_all = "PascalCase")]
pub(super) struct XeroPayment {
    #[serde(rename = "PaymentID")]
    payment_id: String,
    date: Option<String>,
    amount: Option<Amount>,
    reference: Option<String>,
    status: Option<String>,
    payment_type: Option<String>,
    account: Option<XeroAccountRef>,
    invoice: Option<Settled>,
    credit_note: Option<Settled>,
    prepayment: Option<Settled>,
    overpayment: Option<Settled>,
    #[serde(rename = "UpdatedDateUTC")]
    updated_date_utc: Option<String>,
}

impl Keyed for XeroPayment {
    const ID: &'static str = "/PaymentID";
}

#[derive(Deserialize)]
#[serde(rename_all = "PascalCase")]
struct XeroAccountRef {
    #[serde(rename = "AccountID")]
    account_id: Option<String>,
    name: Option<String>,
}

/// The document a payment is on, as the payment embeds it: an invoice (or
/// bill), a credit note, a prepayment or an overpayment, each with its own
/// id field.
#[derive(Deserialize)]
#[serde(rename_all = "PascalCase")]
struct Settled {
    #[serde(rename = "InvoiceID")]
    invoice_id: Option<String>,
    #[serde(rename = "CreditNoteID")]
    credit_note_id: Option<String>,
    #[serde(rename = "PrepaymentID")]
    prepayment_id: Option<String>,
    #[serde(rename = "OverpaymentID")]
    overpayment_id: Option<String>,
    contact: Option<SettledContact>,
    currency_code: Option<String>,
}

#[derive(Deserialize)]
#[serde(rename_all = "PascalCase")]
struct SettledContact {
    #[serde(rename = "ContactID")]
    contact_id: Option<String>,
    name: Option<String>,
}

/// Which side of the ledger a payment is on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Side {
    /// Money from customers: our payments.
    Receivable,
    /// Money to suppliers: our bill payments.
    Payable,
}

/// What a payment settles, by Xero's `PaymentType` (its document's enum).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Settles {
    /// An invoice or a bill: the usual direction of the money.
    Document,
    /// A credit note refunded: the money goes the other way.
    CreditNote,
    /// An overpayment or prepayment refunded: the other way too.
    Advance,
}

fn kind(payment_type: &str) -> Option<(Side, Settles)> {
    Some(match payment_type {
        "ACCRECPAYMENT" => (Side::Receivable, Settles::Document),
        "ARCREDITPAYMENT" => (Side::Receivable, Settles::CreditNote),
        "AROVERPAYMENTPAYMENT" | "ARPREPAYMENTPAYMENT" => (Side::Receivable, Settles::Advance),
        "ACCPAYPAYMENT" => (Side::Payable, Settles::Document),
        "APCREDITPAYMENT" => (Side::Payable, Settles::CreditNote),
        "APOVERPAYMENTPAYMENT" | "APPREPAYMENTPAYMENT" => (Side::Payable, Settles::Advance),
        _ => return None,
    })
}

/// What reading one of Xero's payments for one side found.
pub(super) enum Found<T> {
    /// One of ours.
    Record(Box<T>),
    /// One of ours that Xero deleted: its id, to flag the stored copy.
    Deleted(String),
    /// A payment of the other side (or of a type Xero added since): not ours.
    NotOurs,
}

/// The parts of a payment both sides read alike.
struct Common {
    payment_id: String,
    reference: Option<String>,
    account_ref: Option<AccountRef>,
    date: chrono::NaiveDate,
    currency: String,
    /// The amount with the sign of its effect: refunds negative.
    cash: Money,
    settles: Settles,
    document_id: Option<String>,
    contact: Option<(String, Option<String>)>,
    source_modified_date: Option<Timestamp>,
}

impl XeroPayment {
    /// What the payment is for `side`: read, deleted, or not ours.
    fn common(self, side: Side) -> Result<Found<Common>, Unreadable> {
        let Some((of, settles)) = self.payment_type.as_deref().and_then(kind) else {
            return Ok(Found::NotOurs);
        };
        if of != side {
            return Ok(Found::NotOurs);
        }
        if self.status.as_deref() == Some("DELETED") {
            return Ok(Found::Deleted(self.payment_id));
        }
        let date = self
            .date
            .as_deref()
            .and_then(json::xero_date)
            .ok_or_else(|| Unreadable::field("Date", "is missing or not a date"))?;
        let settled = match settles {
            Settles::Document => self.invoice,
            Settles::CreditNote => self.credit_note,
            Settles::Advance => self.overpayment.or(self.prepayment),
        };
        let document_id = settled.as_ref().and_then(|document| {
            document
                .invoice_id
                .clone()
                .or_else(|| document.credit_note_id.clone())
                .or_else(|| document.overpayment_id.clone())
                .or_else(|| document.prepayment_id.clone())
        });
        let amount = money(self.amount);
        let (contact, currency) = settled.map_or((None, None), |document| {
            (document.contact, document.currency_code)
        });
        Ok(Found::Record(Box::new(Common {
            reference: json::non_empty(self.reference),
            account_ref: self
                .account
                .and_then(|account| AccountRef::to(account.account_id, account.name)),
            date,
            currency: currency.unwrap_or_default(),
            cash: if settles == Settles::Document {
                amount
            } else {
                -amount
            },
            settles,
            document_id,
            contact: contact.and_then(|contact| contact.contact_id.map(|id| (id, contact.name))),
            source_modified_date: updated(self.updated_date_utc.as_deref()),
            payment_id: self.payment_id,
        })))
    }

    /// Our payment, when it is a receivable one: on an invoice money in
    /// (allocation `Invoice`, positive); a credit note's or an advance's
    /// refund money out (negative, allocation `CreditNote` or `Other`).
    pub(super) fn into_payment(self) -> Result<Found<Payment>, Unreadable> {
        Ok(match self.common(Side::Receivable)? {
            Found::Record(common) => {
                let common = *common;
                let allocation_type = match common.settles {
                    Settles::Document => AllocationType::Invoice,
                    Settles::CreditNote => AllocationType::CreditNote,
                    Settles::Advance => AllocationType::Other,
                };
                Found::Record(Box::new(Payment {
                    reference: common.reference,
                    customer_ref: common
                        .contact
                        .and_then(|(id, name)| CustomerRef::to(Some(id), name)),
                    account_ref: common.account_ref,
                    date: common.date,
                    currency: common.currency,
                    total_amount: common.cash,
                    allocations: common
                        .document_id
                        .map(|id| PaymentAllocation {
                            allocation_type,
                            id,
                            amount: common.cash,
                        })
                        .into_iter()
                        .collect(),
                    note: None,
                    source_modified_date: common.source_modified_date,
                    payment_id: common.payment_id,
                }))
            }
            Found::Deleted(id) => Found::Deleted(id),
            Found::NotOurs => Found::NotOurs,
        })
    }

    /// Our bill payment, when it is a payable one: on a bill money out
    /// (allocation `Bill`, positive); a supplier credit note's or an
    /// advance's refund money back (negative, `SupplierCredit` or `Other`).
    pub(super) fn into_bill_payment(self) -> Result<Found<BillPayment>, Unreadable> {
        Ok(match self.common(Side::Payable)? {
            Found::Record(common) => {
                let common = *common;
                let allocation_type = match common.settles {
                    Settles::Document => BillAllocationType::Bill,
                    Settles::CreditNote => BillAllocationType::SupplierCredit,
                    Settles::Advance => BillAllocationType::Other,
                };
                Found::Record(Box::new(BillPayment {
                    reference: common.reference,
                    supplier_ref: common
                        .contact
                        .and_then(|(id, name)| SupplierRef::to(Some(id), name)),
                    account_ref: common.account_ref,
                    date: common.date,
                    currency: common.currency,
                    total_amount: common.cash,
                    allocations: common
                        .document_id
                        .map(|id| BillPaymentAllocation {
                            allocation_type,
                            id,
                            amount: common.cash,
                        })
                        .into_iter()
                        .collect(),
                    note: None,
                    source_modified_date: common.source_modified_date,
                    bill_payment_id: common.payment_id,
                }))
            }
            Found::Deleted(id) => Found::Deleted(id),
            Found::NotOurs => Found::NotOurs,
        })
    }
}
