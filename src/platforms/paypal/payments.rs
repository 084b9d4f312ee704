//! PayPal's invoice payments and refunds, and how they become our payments:
//! each of an invoice's `payments.transactions` is a payment settling that
//! invoice, each of its `refunds.transactions` a negative payment
//! unsettling it (the invoicing API has no list of payments of its own: they
//! are read from the invoices' details). Sources: `NOTES.md`, "Accounting
//! model".

use serde::Deserialize;

use super::mapping::{PayPalInvoice, PayPalMoney, customer_of, money};
use crate::data::invoices::CustomerRef;
use crate::data::money::Money;
use crate::data::payments::{AllocationType, Payment, PaymentAllocation};
use crate::platforms::kit::json;
use crate::platforms::kit::records::Unreadable;

/// The payments recorded against an invoice (`payments`).
#[derive(Deserialize)]
pub(super) struct Payments {
    #[serde(default)]
    pub(super) transactions: Vec<Transaction>,
}

/// One payment of an invoice (`payment_detail`).
#[derive(Deserialize)]
pub(super) struct Transaction {
    payment_id: Option<String>,
    pub(super) payment_date: Option<String>,
    amount: Option<PayPalMoney>,
    note: Option<String>,
}

/// The refunds recorded against an invoice (`refunds`).
#[derive(Deserialize)]
pub(super) struct Refunds {
    #[serde(default)]
    transactions: Vec<RefundTransaction>,
}

/// One refund of an invoice (`refund_detail`).
#[derive(Deserialize)]
struct RefundTransaction {
    refund_id: Option<String>,
    refund_date: Option<String>,
    amount: Option<PayPalMoney>,
}

/// Which of an invoice's lists a transaction is in.
#[derive(Clone, Copy)]
enum Kind {
    /// `payments.transactions`: money received.
    Payment,
    /// `refunds.transactions`: money paid back.
    Refund,
}

impl Kind {
    /// The list's name, the transaction's date field, and the sign its
    /// amount takes.
    fn parts(self) -> (&'static str, &'static str, i64) {
        match self {
            Kind::Payment => ("payment", "payment_date", 1),
            Kind::Refund => ("refund", "refund_date", -1),
        }
    }
}

/// A payment or a refund, as both lists record it.
struct Recorded {
    id: Option<String>,
    date: Option<String>,
    amount: Option<PayPalMoney>,
    note: Option<String>,
}

/// What every payment of one invoice shares: the invoice it settles, its
/// customer and its currency.
struct Settled {
    invoice_id: String,
    customer_ref: Option<CustomerRef>,
    currency: Option<String>,
}

impl Settled {
    /// The `index`-th transaction of the `kind` list as a payment, allocated
    /// whole to the invoice: its amount signed by its kind, its id PayPal's
    /// (which is also its reference) or else its place in the invoice
    /// (`<invoice id>-payment-1`).
    fn payment(&self, kind: Kind, index: usize, recorded: Recorded) -> Result<Payment, Unreadable> {
        let (list, date_key, sign) = kind.parts();
        let at = format!("{list}s.transactions[{index}]");
        let date = json::required_date(recorded.date.as_deref(), &format!("{at}.{date_key}"))?;
        let sent = recorded
            .amount
            .filter(|money| money.value.is_some())
            .ok_or_else(|| Unreadable::field(format!("{at}.amount"), "is missing"))?;
        let amount = Money(money(Some(&sent)).0 * sign);
        let currency = json::non_empty(sent.currency_code)
            .or_else(|| self.currency.clone())
            .unwrap_or_default()
            .to_ascii_uppercase();
        let given = json::non_empty(recorded.id);
        let payment_id = given
            .clone()
            .unwrap_or_else(|| format!("{}-{list}-{}", self.invoice_id, index + 1));
        Ok(Payment {
            reference: given,
            customer_ref: self.customer_ref.clone(),
            account_ref: None,
            date,
            currency,
            total_amount: amount,
            allocations: vec![PaymentAllocation {
                allocation_type: AllocationType::Invoice,
                id: self.invoice_id.clone(),
                amount,
            }],
            note: json::non_empty(recorded.note),
            source_modified_date: None,
            payment_id,
        })
    }
}

impl PayPalInvoice {
    /// The invoice's payments, then its refunds, as ours (ids: PayPal's
    /// `payment_id` and `refund_id`, which the document requires only of
    /// `PAYPAL` transactions, else the place in the invoice). A transaction
    /// without a date or an amount makes the invoice's payments unreadable.
    pub(super) fn into_payments(self) -> Result<Vec<Payment>, Unreadable> {
        let settled = Settled {
            customer_ref: customer_of(self.primary_recipients),
            currency: self.detail.and_then(|detail| detail.currency_code),
            invoice_id: self.id,
        };
        let paid = self.payments.map(|p| p.transactions).unwrap_or_default();
        let refunded = self.refunds.map(|r| r.transactions).unwrap_or_default();
        let paid = paid.into_iter().enumerate().map(|(index, paid)| {
            let recorded = Recorded {
                id: paid.payment_id,
                date: paid.payment_date,
                amount: paid.amount,
                note: paid.note,
            };
            settled.payment(Kind::Payment, index, recorded)
        });
        let refunded = refunded.into_iter().enumerate().map(|(index, refund)| {
            let recorded = Recorded {
                id: refund.refund_id,
                date: refund.refund_date,
                amount: refund.amount,
                note: None,
            };
            settled.payment(Kind::Refund, index, recorded)
        });
        paid.chain(refunded).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn payments(text: &str) -> Result<Vec<Payment>, Unreadable> {
        let invoice: PayPalInvoice = serde_json::from_str(text).expect("an invoice");
        invoice.into_payments()
    }

    #[test]
    fn each_payment_settles_its_invoice_and_each_refund_unsettles_it() {
        let read = payments(
            r#"{"id": "INV2-1", "detail": {"currency_code": "USD"},
                "primary_recipients": [{"billing_info": {"email_address": "Bill@Example.com", "business_name": "Meyers"}}],
                "payments": {"transactions": [
                    {"payment_id": "6MS29142GE370413C", "type": "PAYPAL", "method": "PAYPAL", "payment_date": "2026-10-19",
                     "amount": {"currency_code": "USD", "value": "20.00"}},
                    {"type": "EXTERNAL", "method": "CASH", "payment_date": "2026-10-21",
                     "amount": {"currency_code": "USD", "value": "54.21"}, "note": "Cash at the door"}]},
                "refunds": {"transactions": [
                    {"type": "EXTERNAL", "method": "BANK_TRANSFER", "refund_date": "2026-10-25",
                     "amount": {"currency_code": "USD", "value": "5.00"}}]}}"#,
        )
        .expect("payments");
        let rows: Vec<(&str, String, String, &str)> = read
            .iter()
            .map(|payment| {
                (
                    payment.payment_id.as_str(),
                    payment.date.to_string(),
                    payment.total_amount.to_decimal().to_string(),
                    payment.allocations[0].id.as_str(),
                )
            })
            .collect();
        assert_eq!(
            rows,
            [
                (
                    "6MS29142GE370413C",
                    "2026-10-19".into(),
                    "20.00".into(),
                    "INV2-1"
                ),
                (
                    "INV2-1-payment-2",
                    "2026-10-21".into(),
                    "54.21".into(),
                    "INV2-1"
                ),
                (
                    "INV2-1-refund-1",
                    "2026-10-25".into(),
                    "-5.00".into(),
                    "INV2-1"
                ),
            ]
        );
        for payment in &read {
            assert_eq!(payment.allocated(), payment.total_amount);
            assert_eq!(
                payment.allocations[0].allocation_type,
                AllocationType::Invoice
            );
            assert_eq!(payment.currency, "USD");
            let customer = payment.customer_ref.as_ref().expect("a customer");
            assert_eq!(customer.id, "bill@example.com");
        }
        assert_eq!(read[1].note.as_deref(), Some("Cash at the door"));
        // PayPal's id is the reference; a derived one is not.
        assert_eq!(read[0].reference.as_deref(), Some("6MS29142GE370413C"));
        assert_eq!(read[1].reference, None);
    }

    #[test]
    fn a_transaction_without_its_date_or_amount_is_named() {
        let undated = payments(
            r#"{"id": "INV2-2", "payments": {"transactions": [
                {"method": "CASH", "amount": {"currency_code": "USD", "value": "1.00"}}]}}"#,
        );
        let issue = undated.expect_err("unreadable");
        assert_eq!(
            issue.field.as_deref(),
            Some("payments.transactions[0].payment_date")
        );
        let unpriced = payments(
            r#"{"id": "INV2-3", "refunds": {"transactions": [{"method": "CASH", "refund_date": "2026-10-01"}]}}"#,
        );
        let issue = unpriced.expect_err("unreadable");
        assert_eq!(
            issue.field.as_deref(),
            Some("refunds.transactions[0].amount")
        );
        assert!(payments(r#"{"id": "INV2-4"}"#).expect("none").is_empty());
    }
}
