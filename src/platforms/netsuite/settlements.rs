//! NetSuite's customer payments (`CustPymt`) and vendor payments
//! (`VendPymt`), and what each applies to: the `nexttransactionlinelink`
//! rows of type `Payment` whose next document is the payment and whose
//! previous one is what it settles (an invoice or credit memo, a bill or
//! vendor credit). A credit memo applied straight to an invoice is a link
//! between the two, read from either side. Link amounts are in the
//! transaction's currency. Sources: `NOTES.md`, "Accounting model".

use std::collections::HashMap;

use serde::Deserialize;

use super::chart::account_ref;
use crate::data::bill_payments::{BillAllocationType, BillPayment, BillPaymentAllocation};
use crate::data::invoices::CustomerRef;
use crate::data::money::Money;
use crate::data::payments::{AllocationType, Payment, PaymentAllocation};
use crate::data::suppliers::SupplierRef;
use crate::platforms::kit::json::{self, Amount, money};
use crate::platforms::kit::records::{Keyed, Unreadable};

impl Keyed for NsPayment {
    const ID: &'static str = "/id";
}

/// A link is named by the document after it (a payment): an unreadable
/// link makes that payment unreadable.
impl Keyed for NsLink {
    const ID: &'static str = "/nextdoc";
}

/// A row of the payment query: a customer or vendor payment's header, its
/// bank account with its display text.
#[derive(Deserialize)]
pub(super) struct NsPayment {
    pub(super) id: String,
    tranid: Option<String>,
    entity: Option<String>,
    entityname: Option<String>,
    trandate: Option<String>,
    currency: Option<String>,
    foreigntotal: Option<Amount>,
    account: Option<String>,
    accountname: Option<String>,
    status: Option<String>,
    statusname: Option<String>,
    memo: Option<String>,
    lastmodifieddate: Option<String>,
}

/// A row of the link query: one application of a document to another.
#[derive(Deserialize)]
pub(super) struct NsLink {
    pub(super) previousdoc: String,
    previoustype: Option<String>,
    pub(super) nextdoc: String,
    nexttype: Option<String>,
    foreignamount: Option<Amount>,
}

/// The absolute value of an amount.
fn magnitude(amount: Money) -> Money {
    Money(amount.0.abs())
}

impl NsLink {
    /// The invoice this link applies the credit memo `memo` to, and how
    /// much, when it pairs the two (whichever side the memo is on).
    pub(super) fn invoice_credited_by(&self, memo: &str) -> Option<(String, Money)> {
        let amount = magnitude(money(self.foreignamount));
        if self.previousdoc == memo && self.nexttype.as_deref() == Some("CustInvc") {
            return Some((self.nextdoc.clone(), amount));
        }
        if self.nextdoc == memo && self.previoustype.as_deref() == Some("CustInvc") {
            return Some((self.previousdoc.clone(), amount));
        }
        None
    }
}

/// The links of a page, by the payment they lead to, each application's
/// amount added up (a document settled over several lines has a link per
/// line).
pub(super) fn links_by_payment(links: Vec<NsLink>) -> HashMap<String, Vec<NsLink>> {
    let mut by_payment: HashMap<String, Vec<NsLink>> = HashMap::new();
    for link in links {
        by_payment
            .entry(link.nextdoc.clone())
            .or_default()
            .push(link);
    }
    by_payment
}

/// `links`' amounts added up per previous document, in the order first seen.
fn per_document(links: &[NsLink]) -> Vec<(String, Option<String>, Money)> {
    let mut settled: Vec<(String, Option<String>, Money)> = Vec::new();
    for link in links {
        let amount = magnitude(money(link.foreignamount));
        match settled
            .iter_mut()
            .find(|(id, _, _)| *id == link.previousdoc)
        {
            Some((_, _, sum)) => *sum = *sum + amount,
            None => settled.push((link.previousdoc.clone(), link.previoustype.clone(), amount)),
        }
    }
    settled
}

impl NsPayment {
    /// Whether NetSuite voided the payment (status `V`): it then keeps no
    /// amount and settles nothing.
    fn voided(&self) -> bool {
        let letter = self.status.as_deref().unwrap_or("");
        letter.rsplit(':').next() == Some("V")
            || self
                .statusname
                .as_deref()
                .is_some_and(|text| text.contains("Voided"))
    }

    /// The payment's date, amount (positive), currency and bank account.
    fn parts(&self) -> Result<Parts, Unreadable> {
        let date = json::required_date(self.trandate.as_deref(), "trandate")?;
        let voided = self.voided();
        Ok(Parts {
            date,
            voided,
            total: if voided {
                Money(0)
            } else {
                magnitude(money(self.foreigntotal))
            },
            currency: json::non_empty(self.currency.clone()).unwrap_or_default(),
        })
    }

    /// Our payment: what it settles from its links, an invoice positive, a
    /// credit memo negative, anything else `Other`.
    pub(super) fn into_payment(self, links: Option<Vec<NsLink>>) -> Result<Payment, Unreadable> {
        let parts = self.parts()?;
        let allocations = if parts.voided {
            Vec::new()
        } else {
            per_document(&links.unwrap_or_default())
                .into_iter()
                .map(|(id, kind, amount)| match kind.as_deref() {
                    Some("CustInvc") => PaymentAllocation {
                        allocation_type: AllocationType::Invoice,
                        id,
                        amount,
                    },
                    Some("CustCred") => PaymentAllocation {
                        allocation_type: AllocationType::CreditNote,
                        id,
                        amount: Money(0) - amount,
                    },
                    _ => PaymentAllocation {
                        allocation_type: AllocationType::Other,
                        id,
                        amount,
                    },
                })
                .collect()
        };
        Ok(Payment {
            reference: json::non_empty(self.tranid),
            customer_ref: CustomerRef::to(
                json::non_empty(self.entity),
                json::non_empty(self.entityname),
            ),
            account_ref: account_ref(self.account, self.accountname),
            date: parts.date,
            currency: parts.currency,
            total_amount: parts.total,
            allocations,
            note: json::non_empty(self.memo),
            source_modified_date: json::timestamp(self.lastmodifieddate.as_deref()),
            payment_id: self.id,
        })
    }

    /// Our bill payment: a bill it settles positive, a vendor credit
    /// negative, anything else `Other`.
    pub(super) fn into_bill_payment(
        self,
        links: Option<Vec<NsLink>>,
    ) -> Result<BillPayment, Unreadable> {
        let parts = self.parts()?;
        let allocations = if parts.voided {
            Vec::new()
        } else {
            per_document(&links.unwrap_or_default())
                .into_iter()
                .map(|(id, kind, amount)| match kind.as_deref() {
                    Some("VendBill") => BillPaymentAllocation {
                        allocation_type: BillAllocationType::Bill,
                        id,
                        amount,
                    },
                    Some("VendCred") => BillPaymentAllocation {
                        allocation_type: BillAllocationType::SupplierCredit,
                        id,
                        amount: Money(0) - amount,
                    },
                    _ => BillPaymentAllocation {
                        allocation_type: BillAllocationType::Other,
                        id,
                        amount,
                    },
                })
                .collect()
        };
        Ok(BillPayment {
            reference: json::non_empty(self.tranid),
            supplier_ref: json::non_empty(self.entity).map(|id| SupplierRef {
                id,
                supplier_name: json::non_empty(self.entityname),
            }),
            account_ref: account_ref(self.account, self.accountname),
            date: parts.date,
            currency: parts.currency,
            total_amount: parts.total,
            allocations,
            note: json::non_empty(self.memo),
            source_modified_date: json::timestamp(self.lastmodifieddate.as_deref()),
            bill_payment_id: self.id,
        })
    }
}

/// What a payment and a bill payment both read from the header.
struct Parts {
    date: chrono::NaiveDate,
    voided: bool,
    total: Money,
    currency: String,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn link(previous: &str, kind: &str, next: &str, amount: &str) -> NsLink {
        serde_json::from_str(&format!(
            r#"{{"previousdoc":"{previous}","previoustype":"{kind}","nextdoc":"{next}","nexttype":"CustPymt","foreignamount":"{amount}"}}"#
        ))
        .expect("a link")
    }

    #[test]
    fn a_documents_links_add_up_and_keep_their_kind() {
        let settled = per_document(&[
            link("10", "CustInvc", "90", "-30.00"),
            link("10", "CustInvc", "90", "20.00"),
            link("11", "CustCred", "90", "5.00"),
        ]);
        assert_eq!(
            settled,
            vec![
                (
                    "10".to_owned(),
                    Some("CustInvc".to_owned()),
                    Money::from_cents(5_000)
                ),
                (
                    "11".to_owned(),
                    Some("CustCred".to_owned()),
                    Money::from_cents(500)
                ),
            ]
        );
    }
}
