//! Xero's payments (`GET /api.xro/2.0/Payments`) and how they become our
//! payments: Xero keeps money received and paid in one list, each payment
//! on one document; the receivable kinds are ours (a payment on a sales
//! invoice, a refund of a credit note, an overpayment or a prepayment),
//! the payable kinds are bill payments. Sources: `NOTES.md`.

use serde::Deserialize;

use super::mapping::{Pagination, updated};
use crate::data::accounts::AccountRef;
use crate::data::invoices::CustomerRef;
use crate::data::payments::{AllocationType, Payment, PaymentAllocation};
use crate::platforms::kit::json::{self, Amount, money};
use crate::platforms::kit::records::{Each, Keyed, Unreadable};

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

/// The document a payment is on, as the payment embeds it: an invoice, a
/// credit note, a prepayment or an overpayment (each with its own id field).
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

/// What a receivable payment is, by Xero's `PaymentType`: which document
/// it is on and the sign of the cash (a refund is money paid out).
struct Receivable {
    settles: AllocationType,
    sign: i64,
}

/// Xero's receivable payment types (its document's enum); the others
/// (`ACCPAYPAYMENT`, `APCREDITPAYMENT`, `APOVERPAYMENTPAYMENT`,
/// `APPREPAYMENTPAYMENT`) are payments to suppliers.
fn receivable(payment_type: &str) -> Option<Receivable> {
    let (settles, sign) = match payment_type {
        "ACCRECPAYMENT" => (AllocationType::Invoice, 1),
        "ARCREDITPAYMENT" => (AllocationType::CreditNote, -1),
        "AROVERPAYMENTPAYMENT" | "ARPREPAYMENTPAYMENT" => (AllocationType::Other, -1),
        _ => return None,
    };
    Some(Receivable { settles, sign })
}

/// What reading one of Xero's payments found.
pub(super) enum Read {
    /// One of ours.
    Payment(Box<Payment>),
    /// A receivable payment Xero deleted: its id, to flag the stored copy.
    Deleted(String),
    /// A payment to a supplier: not ours.
    NotOurs,
}

impl XeroPayment {
    /// Our payment, when it is a receivable one that is not deleted.
    pub(super) fn read(self) -> Result<Read, Unreadable> {
        let Some(kind) = self.payment_type.as_deref().and_then(receivable) else {
            return Ok(Read::NotOurs);
        };
        if self.status.as_deref() == Some("DELETED") {
            return Ok(Read::Deleted(self.payment_id));
        }
        let date = self
            .date
            .as_deref()
            .and_then(json::xero_date)
            .ok_or_else(|| Unreadable::field("Date", "is missing or not a date"))?;
        let settled = match kind.settles {
            AllocationType::Invoice => self.invoice,
            AllocationType::CreditNote => self.credit_note,
            AllocationType::Other => self.overpayment.or(self.prepayment),
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
        let cash = if kind.sign < 0 { -amount } else { amount };
        let (customer, currency) = settled.map_or((None, None), |document| {
            (document.contact, document.currency_code)
        });
        Ok(Read::Payment(Box::new(Payment {
            reference: json::non_empty(self.reference),
            customer_ref: customer.and_then(|contact| CustomerRef::to(contact.contact_id, contact.name)),
            account_ref: self
                .account
                .and_then(|account| AccountRef::to(account.account_id, account.name)),
            date,
            currency: currency.unwrap_or_default(),
            total_amount: cash,
            allocations: document_id
                .map(|id| PaymentAllocation {
                    allocation_type: kind.settles,
                    id,
                    amount: cash,
                })
                .into_iter()
                .collect(),
            note: None,
            source_modified_date: updated(self.updated_date_utc.as_deref()),
            payment_id: self.payment_id,
        })))
    }
}
