//! Money FreeAgent saw move for invoices and bills: bank transaction
//! explanations that name a paid invoice (or a refunded credit note) become
//! payments, those that name a paid bill bill payments, each allocated
//! whole to the document it explains, from the bank account it was
//! explained in. FreeAgent lists explanations per bank account only, so a
//! sync walks the company's bank accounts ([`BankWalk`]). Sources:
//! `NOTES.md`, "Accounting model (issue 34): built".

use serde::Deserialize;

use super::chart::{BankAccount, bank_account_id};
use super::mapping::id_of;
use crate::data::accounts::AccountRef;
use crate::data::bill_payments::{BillAllocationType, BillPayment, BillPaymentAllocation};
use crate::data::money::Money;
use crate::data::payments::{AllocationType, Payment, PaymentAllocation};
use crate::platforms::connector::ConnectorError;
use crate::platforms::kit::json::{self, Amount, money};
use crate::platforms::kit::records::{Each, Keyed, Unreadable};

/// A bank account whose explanations a sync reads: its URL (the
/// explanations' `bank_account` filter) and currency (the explanations'
/// `gross_value` is in it).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Bank {
    pub(super) url: String,
    pub(super) currency: String,
}

impl Bank {
    /// The bank account as a sync walks it.
    pub(super) fn of(account: &BankAccount) -> Self {
        Self {
            url: account.url.clone(),
            currency: account.currency.clone().unwrap_or_default(),
        }
    }

    /// The account of the chart it is.
    fn account_ref(&self) -> Option<AccountRef> {
        AccountRef::to(bank_account_id(&self.url), None)
    }
}

/// Where a walk over the company's bank accounts stands: the bank accounts
/// (read once, on the first page), which one, and its page. As a cursor:
/// `index page url|currency url|currency …` (FreeAgent's URLs and currency
/// codes have no spaces or bars).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct BankWalk {
    pub(super) banks: Vec<Bank>,
    pub(super) index: usize,
    pub(super) page: u64,
}

impl BankWalk {
    /// The walk's start over `banks`.
    pub(super) fn start(banks: Vec<Bank>) -> Self {
        Self {
            banks,
            index: 0,
            page: 1,
        }
    }

    /// The position a cursor names.
    pub(super) fn parse(cursor: &str) -> Result<Self, ConnectorError> {
        let invalid = || ConnectorError::Failed(format!("invalid FreeAgent cursor {cursor:?}"));
        let mut parts = cursor.split(' ');
        let index = parts
            .next()
            .and_then(|index| index.parse().ok())
            .ok_or_else(invalid)?;
        let page = parts
            .next()
            .and_then(|page| page.parse().ok())
            .ok_or_else(invalid)?;
        let banks = parts
            .map(|bank| {
                let (url, currency) = bank.split_once('|').ok_or_else(invalid)?;
                Ok(Bank {
                    url: url.to_owned(),
                    currency: currency.to_owned(),
                })
            })
            .collect::<Result<Vec<_>, ConnectorError>>()?;
        Ok(Self { banks, index, page })
    }

    /// The bank account whose explanations come next; none past the last.
    pub(super) fn bank(&self) -> Option<&Bank> {
        self.banks.get(self.index)
    }

    /// The cursor after this page: `next_page` of the same bank account
    /// when FreeAgent's `Link` names one, else the next bank account's
    /// first page, else none.
    pub(super) fn after(&self, next_page: Option<u64>) -> Option<String> {
        let (index, page) = match next_page {
            Some(page) => (self.index, page),
            None if self.index + 1 < self.banks.len() => (self.index + 1, 1),
            None => return None,
        };
        let banks: Vec<String> = self
            .banks
            .iter()
            .map(|bank| format!("{}|{}", bank.url, bank.currency))
            .collect();
        Some(format!("{index} {page} {}", banks.join(" ")))
    }
}

/// A page of `GET /v2/bank_transaction_explanations`.
#[derive(Deserialize)]
pub(super) struct ExplanationsPage {
    #[serde(default)]
    pub(super) bank_transaction_explanations: Each<Explanation>,
}

/// One explanation of a bank transaction.
#[derive(Deserialize)]
pub(super) struct Explanation {
    url: String,
    dated_on: Option<String>,
    /// In the bank account's currency: positive money in, negative out.
    gross_value: Option<Amount>,
    description: Option<String>,
    cheque_number: Option<String>,
    /// The invoice paid, or the credit note refunded.
    paid_invoice: Option<String>,
    /// The bill paid or refunded.
    paid_bill: Option<String>,
    updated_at: Option<String>,
}

impl Keyed for Explanation {
    const ID: &'static str = "/url";

    fn kept_id(url: &str) -> Option<String> {
        id_of(url)
    }
}

/// Whether a FreeAgent URL names a credit note (`…/credit_notes/3`).
fn is_credit_note(url: &str) -> bool {
    url.contains("/credit_notes/")
}

impl Explanation {
    /// Its id and date, which every settlement needs.
    fn id_and_date(&self) -> Result<(String, chrono::NaiveDate), Unreadable> {
        let id = id_of(&self.url).ok_or_else(|| Unreadable::field("url", "ends in no id"))?;
        Ok((
            id,
            json::required_date(self.dated_on.as_deref(), "dated_on")?,
        ))
    }

    /// A payment, when it explains money for an invoice (received, or
    /// refunded when negative) or a credit note's refund (money out: a
    /// negative payment allocated to the credit note).
    pub(super) fn into_payment(self, bank: &Bank) -> Result<Option<Payment>, Unreadable> {
        let Some(document) = self.paid_invoice.as_deref() else {
            return Ok(None);
        };
        let (payment_id, date) = self.id_and_date()?;
        let document_id =
            id_of(document).ok_or_else(|| Unreadable::field("paid_invoice", "ends in no id"))?;
        let amount = money(self.gross_value);
        let allocation_type = if is_credit_note(document) {
            AllocationType::CreditNote
        } else {
            AllocationType::Invoice
        };
        Ok(Some(Payment {
            payment_id,
            reference: json::non_empty(self.cheque_number),
            customer_ref: None,
            account_ref: bank.account_ref(),
            date,
            currency: bank.currency.clone(),
            total_amount: amount,
            allocations: vec![PaymentAllocation {
                allocation_type,
                id: document_id,
                amount,
            }],
            note: json::non_empty(self.description),
            source_modified_date: json::timestamp(self.updated_at.as_deref()),
        }))
    }

    /// A bill payment, when it explains money for a bill: paid out
    /// (positive, as FreeAgent's money out is negative), or a bill
    /// refund's money back (negative).
    pub(super) fn into_bill_payment(self, bank: &Bank) -> Result<Option<BillPayment>, Unreadable> {
        let Some(bill) = self.paid_bill.as_deref() else {
            return Ok(None);
        };
        let (bill_payment_id, date) = self.id_and_date()?;
        let bill_id = id_of(bill).ok_or_else(|| Unreadable::field("paid_bill", "ends in no id"))?;
        let amount: Money = -money(self.gross_value);
        Ok(Some(BillPayment {
            bill_payment_id,
            reference: json::non_empty(self.cheque_number),
            supplier_ref: None,
            account_ref: bank.account_ref(),
            date,
            currency: bank.currency.clone(),
            total_amount: amount,
            allocations: vec![BillPaymentAllocation {
                allocation_type: BillAllocationType::Bill,
                id: bill_id,
                amount,
            }],
            note: json::non_empty(self.description),
            source_modified_date: json::timestamp(self.updated_at.as_deref()),
        }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bank(id: u32) -> Bank {
        Bank {
            url: format!("https://api.freeagent.com/v2/bank_accounts/{id}"),
            currency: "GBP".to_owned(),
        }
    }

    #[test]
    fn a_walk_moves_through_the_bank_accounts_and_their_pages() {
        let walk = BankWalk::start(vec![bank(1), bank(2)]);
        let next = walk.after(Some(2)).expect("a next page");
        let second = BankWalk::parse(&next).expect("a cursor");
        assert_eq!((second.index, second.page), (0, 2));
        assert_eq!(second.banks, walk.banks);
        let next = second.after(None).expect("the next bank account");
        let third = BankWalk::parse(&next).expect("a cursor");
        assert_eq!((third.index, third.page), (1, 1));
        assert_eq!(third.bank(), Some(&bank(2)));
        assert_eq!(third.after(None), None);
        assert!(BankWalk::parse("x 1").is_err());
        assert!(BankWalk::parse("0 1 no-bar").is_err());
    }

    #[test]
    fn explanations_settle_what_they_name_with_the_sign_of_the_money() {
        let read =
            |text: &str| -> Explanation { serde_json::from_str(text).expect("an explanation") };
        let received = read(
            r#"{"url":"https://api.freeagent.com/v2/bank_transaction_explanations/5","dated_on":"2026-10-01",
                "gross_value":"100.0","paid_invoice":"https://api.freeagent.com/v2/invoices/4"}"#,
        );
        let payment = received
            .into_payment(&bank(1))
            .expect("readable")
            .expect("a payment");
        assert_eq!(payment.total_amount, payment.allocated());
        assert_eq!(
            payment.allocations[0].allocation_type,
            AllocationType::Invoice
        );
        assert_eq!(
            payment.account_ref.map(|account| account.id).as_deref(),
            Some("bank-account-1")
        );
        let refund = read(
            r#"{"url":"https://api.freeagent.com/v2/bank_transaction_explanations/6","dated_on":"2026-10-02",
                "gross_value":"-20.0","paid_invoice":"https://api.freeagent.com/v2/credit_notes/2"}"#,
        );
        let refund = refund
            .into_payment(&bank(1))
            .expect("readable")
            .expect("a payment");
        assert_eq!(refund.total_amount, Money::from_cents(-2_000));
        assert_eq!(
            refund.allocations[0].allocation_type,
            AllocationType::CreditNote
        );
        let paid = read(
            r#"{"url":"https://api.freeagent.com/v2/bank_transaction_explanations/7","dated_on":"2026-10-03",
                "gross_value":"-200.0","paid_bill":"https://api.freeagent.com/v2/bills/1"}"#,
        );
        let charges = read(
            r#"{"url":"https://api.freeagent.com/v2/bank_transaction_explanations/8","dated_on":"2026-10-03",
                "gross_value":"-5.0","description":"Bank charges"}"#,
        );
        assert_eq!(charges.into_bill_payment(&bank(1)).expect("readable"), None);
        let paid = paid
            .into_bill_payment(&bank(1))
            .expect("readable")
            .expect("a bill payment");
        assert_eq!(paid.total_amount, Money::from_cents(20_000));
        assert_eq!(paid.allocated(), paid.total_amount);
    }
}
