//! FreshBooks' payments (`GET …/payments/payments`) and how they become
//! ours: each settles the one invoice it names. A payment made from a
//! client's credit (`from_credit`) is not money received and is left out,
//! as are deleted payments; such a row is instead the allocation of the
//! credit it names (`creditid`) to its invoice ([`super::credits`]).
//! `updated` is US/Eastern. Sources: `NOTES.md`, "Accounting model".

use serde::Deserialize;

use super::mapping::{DELETED, FbId, FbMoney, amount, eastern};
use crate::data::credit_notes::{CreditNoteAllocation, InvoiceRef};
use crate::data::invoices::CustomerRef;
use crate::data::payments::{AllocationType, Payment, PaymentAllocation};
use crate::platforms::kit::json;
use crate::platforms::kit::records::{Each, Keyed, Unreadable};

impl Keyed for FreshBooksPayment {
    const ID: &'static str = "/id";
}

/// A page of `GET …/payments/payments`.
#[derive(Deserialize)]
pub(super) struct PaymentsPage {
    /// The payments.
    #[serde(default)]
    pub(super) payments: Each<FreshBooksPayment>,
    /// How many pages the list has (its `total` counts the deleted
    /// payments left out, so it is not read).
    pub(super) pages: Option<u64>,
}

/// A payment as FreshBooks writes it.
#[derive(Deserialize)]
pub(super) struct FreshBooksPayment {
    id: FbId,
    invoiceid: Option<FbId>,
    clientid: Option<FbId>,
    amount: Option<FbMoney>,
    date: Option<String>,
    #[serde(rename = "type")]
    payment_type: Option<String>,
    transactionid: Option<String>,
    from_credit: Option<bool>,
    creditid: Option<FbId>,
    note: Option<String>,
    vis_state: Option<i64>,
    updated: Option<String>,
}

impl FreshBooksPayment {
    /// Our payment: the whole amount allocated to the invoice it names, in
    /// the amount's currency, its reference the gateway's transaction id;
    /// `None` when deleted or made from a credit. FreshBooks does not say
    /// which account the money went into.
    pub(super) fn into_record(self) -> Result<Option<Payment>, Unreadable> {
        if self.vis_state == Some(DELETED) || self.from_credit == Some(true) {
            return Ok(None);
        }
        let payment_id = self
            .id
            .named()
            .ok_or_else(|| Unreadable::field("id", "is missing"))?;
        let date = json::required_date(self.date.as_deref(), "date")?;
        let currency = self
            .amount
            .as_ref()
            .and_then(|money| json::non_empty(money.code.clone()))
            .unwrap_or_default();
        let total = amount(self.amount);
        let allocations = self
            .invoiceid
            .and_then(FbId::named)
            .map(|id| PaymentAllocation {
                allocation_type: AllocationType::Invoice,
                id,
                amount: total,
            });
        let note = match (
            json::non_empty(self.note),
            json::non_empty(self.payment_type),
        ) {
            (Some(note), _) => Some(note),
            (None, kind) => kind,
        };
        Ok(Some(Payment {
            reference: json::non_empty(self.transactionid),
            customer_ref: CustomerRef::to(self.clientid.and_then(FbId::named), None),
            account_ref: None,
            date,
            currency,
            total_amount: total,
            allocations: allocations.into_iter().collect(),
            note,
            source_modified_date: self.updated.as_deref().and_then(eastern),
            payment_id,
        }))
    }
}

impl FreshBooksPayment {
    /// The credit this row applies to an invoice, when it is such a row (a
    /// live one, `vis_state` 0 or none, made `from_credit`, naming the
    /// credit and the invoice): the credit's id, and the allocation of the
    /// row's `amount` to that invoice on the row's `date`.
    pub(super) fn credit_applied(self) -> Option<(String, CreditNoteAllocation)> {
        let live = self.vis_state.unwrap_or(0) == 0;
        if !live || self.from_credit != Some(true) {
            return None;
        }
        let credit_id = self.creditid.and_then(FbId::named)?;
        let invoice_id = self.invoiceid.and_then(FbId::named)?;
        Some((
            credit_id,
            CreditNoteAllocation {
                invoice_ref: InvoiceRef {
                    id: invoice_id,
                    invoice_number: None,
                },
                amount: amount(self.amount),
                allocated_on_date: self.date.as_deref().and_then(json::date),
            },
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::data::money::Money;

    fn payment(extra: &str) -> FreshBooksPayment {
        serde_json::from_str(&format!(
            r#"{{"id": 9001, "invoiceid": "500007", "clientid": 301, "date": "2026-10-20",
                "amount": {{"amount": "200.00", "code": "CAD"}}, "type": "Check", "vis_state": 0,
                "updated": "2026-10-20 09:00:00"{extra}}}"#
        ))
        .expect("a payment")
    }

    #[test]
    fn a_payment_settles_the_invoice_it_names_with_its_whole_amount() {
        let read = payment("").into_record().expect("read").expect("kept");
        assert_eq!(read.payment_id, "9001");
        assert_eq!(read.currency, "CAD");
        assert_eq!(
            read.customer_ref.map(|customer| customer.id).as_deref(),
            Some("301")
        );
        assert_eq!(read.allocations.len(), 1);
        assert_eq!(read.allocations[0].id, "500007");
        assert_eq!(read.allocations[0].amount, Money::from_cents(20_000));
        assert_eq!(read.note.as_deref(), Some("Check"));
    }

    #[test]
    fn only_a_live_row_made_from_a_credit_applies_that_credit() {
        let (credit, allocation) = payment(r#", "from_credit": true, "creditid": 6001"#)
            .credit_applied()
            .expect("a credit applied");
        assert_eq!(credit, "6001");
        assert_eq!(allocation.invoice_ref.id, "500007");
        assert_eq!(allocation.amount, Money::from_cents(20_000));
        assert_eq!(
            allocation
                .allocated_on_date
                .map(|day| day.to_string())
                .as_deref(),
            Some("2026-10-20")
        );
        assert!(payment("").credit_applied().is_none(), "money received");
        assert!(
            payment(r#", "from_credit": true, "creditid": null"#)
                .credit_applied()
                .is_none(),
            "no credit named"
        );
        let deleted: FreshBooksPayment = serde_json::from_str(
            r#"{"id": 1, "invoiceid": 2, "creditid": 6001, "from_credit": true, "date": "2026-10-20", "amount": {"amount": "1.00", "code": "CAD"}, "vis_state": 1}"#,
        )
        .expect("a payment");
        assert!(deleted.credit_applied().is_none(), "deleted");
    }

    #[test]
    fn deleted_payments_and_credits_applied_are_left_out() {
        let from_credit = payment(r#", "from_credit": true"#);
        assert!(from_credit.into_record().expect("read").is_none());
        let deleted: FreshBooksPayment = serde_json::from_str(
            r#"{"id": 1, "invoiceid": 2, "date": "2026-10-20", "amount": {"amount": "1.00", "code": "CAD"}, "vis_state": 1}"#,
        )
        .expect("a payment");
        assert!(deleted.into_record().expect("read").is_none());
    }
}
