//! Sage's contact payments (`GET /contact_payments`), and how they become
//! our payments (customer receipts and refunds) and bill payments (vendor
//! payments and refunds): each with the documents it was allocated to,
//! told apart by the artefact's path, and the ledger account of the bank
//! account it moved through (`GET /bank_accounts`). Sources: `NOTES.md`,
//! "Accounting model".

use std::collections::HashMap;

use serde::Deserialize;

use super::mapping::{Link, currency_code};
use crate::data::accounts::AccountRef;
use crate::data::bill_payments::{BillAllocationType, BillPayment, BillPaymentAllocation};
use crate::data::invoices::CustomerRef;
use crate::data::money::Money;
use crate::data::payments::{AllocationType, Payment, PaymentAllocation};
use crate::data::suppliers::SupplierRef;
use crate::platforms::kit::json::{self, Amount, money};
use crate::platforms::kit::records::{Keyed, Unreadable};

impl Keyed for SageContactPayment {
    const ID: &'static str = "/id";
}

impl Keyed for SageBankAccount {
    const ID: &'static str = "/id";
}

/// A bank account (`GET /bank_accounts`): the ledger account behind it.
#[derive(Deserialize)]
pub(super) struct SageBankAccount {
    id: String,
    ledger_account: Option<Link>,
}

/// Bank account ids to the ledger accounts behind them.
#[derive(Debug, Default)]
pub(super) struct BankLedgers(HashMap<String, AccountRef>);

impl BankLedgers {
    /// From the business's bank accounts.
    pub(super) fn of(accounts: Vec<SageBankAccount>) -> Self {
        Self(
            accounts
                .into_iter()
                .filter_map(|account| Some((account.id, Link::account(account.ledger_account)?)))
                .collect(),
        )
    }

    /// The ledger account of the bank account `link` names; none when the
    /// bank account is not one of the business's.
    fn account(&self, link: Option<Link>) -> Option<AccountRef> {
        link.and_then(|link| link.id)
            .and_then(|id| self.0.get(&id).cloned())
    }
}

/// A contact payment as `GET /contact_payments?attributes=all` gives it.
#[derive(Deserialize)]
pub(super) struct SageContactPayment {
    id: String,
    transaction_type: Option<Link>,
    contact: Option<Link>,
    bank_account: Option<Link>,
    date: Option<String>,
    reference: Option<String>,
    total_amount: Option<Amount>,
    currency: Option<Link>,
    #[serde(default, deserialize_with = "json::list_or_null")]
    allocated_artefacts: Vec<SageAllocation>,
    deleted_at: Option<String>,
    updated_at: Option<String>,
}

/// What a payment was allocated to: an artefact (its kind only in its
/// `$path`) and an amount.
#[derive(Deserialize)]
struct SageAllocation {
    artefact: Option<Link>,
    amount: Option<Amount>,
}

/// Which side of the ledger a contact payment is on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Side {
    /// Customer receipts and refunds: our payments.
    Customer,
    /// Vendor payments and refunds: our bill payments.
    Vendor,
}

impl SageAllocation {
    /// The artefact's kind (the first segment of its `$path`) and id.
    fn artefact(self) -> (String, String, Money) {
        let amount = money(self.amount);
        let (id, path) = self
            .artefact
            .map_or((None, None), |artefact| (artefact.id, artefact.path));
        let kind = path
            .as_deref()
            .and_then(|path| path.trim_start_matches('/').split('/').next())
            .unwrap_or_default()
            .to_owned();
        (kind, id.unwrap_or_default(), amount)
    }
}

impl SageContactPayment {
    /// Which side it is on, by `transaction_type`; `None` for another kind
    /// (or one Sage deleted).
    pub(super) fn side(&self) -> Option<(Side, bool)> {
        if json::non_empty(self.deleted_at.clone()).is_some() {
            return None;
        }
        match self.transaction_type.as_ref()?.id.as_deref()? {
            "CUSTOMER_RECEIPT" => Some((Side::Customer, false)),
            "CUSTOMER_REFUND" => Some((Side::Customer, true)),
            "VENDOR_PAYMENT" => Some((Side::Vendor, false)),
            "VENDOR_REFUND" => Some((Side::Vendor, true)),
            _ => None,
        }
    }

    /// What a payment and a bill payment share, signed by the money's
    /// direction: the total negative for a refund, each allocation with
    /// the payment's sign, except a credit note set against it (a sales or
    /// a purchase one), which is always negative.
    fn settlement(self, banks: &BankLedgers, refund: bool) -> Result<Settlement, Unreadable> {
        let date = json::required_date(self.date.as_deref(), "date")?;
        let sign = if refund { -1 } else { 1 };
        Ok(Settlement {
            reference: json::non_empty(self.reference),
            contact: Link::parts(self.contact),
            account_ref: banks.account(self.bank_account),
            date,
            currency: currency_code(self.currency).unwrap_or_default(),
            total_amount: Money(sign * money(self.total_amount).0),
            allocations: self
                .allocated_artefacts
                .into_iter()
                .map(|allocation| {
                    let (kind, id, amount) = allocation.artefact();
                    let amount = if kind.ends_with("_credit_notes") {
                        Money(-amount.0.abs())
                    } else {
                        Money(sign * amount.0)
                    };
                    (kind, id, amount)
                })
                .collect(),
            source_modified_date: json::timestamp(self.updated_at.as_deref()),
            id: self.id,
        })
    }

    /// Our payment: allocations to sales invoices and sales credit notes.
    pub(super) fn into_payment(
        self,
        banks: &BankLedgers,
        refund: bool,
    ) -> Result<Payment, Unreadable> {
        let settlement = self.settlement(banks, refund)?;
        let (customer_id, customer_name) = settlement.contact;
        Ok(Payment {
            reference: settlement.reference,
            customer_ref: CustomerRef::to(customer_id, customer_name),
            account_ref: settlement.account_ref,
            date: settlement.date,
            currency: settlement.currency,
            total_amount: settlement.total_amount,
            allocations: settlement
                .allocations
                .into_iter()
                .map(|(kind, id, amount)| PaymentAllocation {
                    allocation_type: match kind.as_str() {
                        "sales_invoices" | "sales_corrective_invoices" => AllocationType::Invoice,
                        "sales_credit_notes" => AllocationType::CreditNote,
                        _ => AllocationType::Other,
                    },
                    id,
                    amount,
                })
                .collect(),
            note: None,
            source_modified_date: settlement.source_modified_date,
            payment_id: settlement.id,
        })
    }

    /// Our bill payment: allocations to purchase invoices and purchase
    /// credit notes (supplier credits).
    pub(super) fn into_bill_payment(
        self,
        banks: &BankLedgers,
        refund: bool,
    ) -> Result<BillPayment, Unreadable> {
        let settlement = self.settlement(banks, refund)?;
        let (supplier_id, supplier_name) = settlement.contact;
        Ok(BillPayment {
            reference: settlement.reference,
            supplier_ref: SupplierRef::to(supplier_id, supplier_name),
            account_ref: settlement.account_ref,
            date: settlement.date,
            currency: settlement.currency,
            total_amount: settlement.total_amount,
            allocations: settlement
                .allocations
                .into_iter()
                .map(|(kind, id, amount)| BillPaymentAllocation {
                    allocation_type: match kind.as_str() {
                        "purchase_invoices" | "purchase_corrective_invoices" => {
                            BillAllocationType::Bill
                        }
                        "purchase_credit_notes" => BillAllocationType::SupplierCredit,
                        _ => BillAllocationType::Other,
                    },
                    id,
                    amount,
                })
                .collect(),
            note: None,
            source_modified_date: settlement.source_modified_date,
            bill_payment_id: settlement.id,
        })
    }
}

/// A contact payment's parts, signed, before it is a payment or a bill
/// payment: allocations as the artefact's kind, its id and the amount.
struct Settlement {
    id: String,
    reference: Option<String>,
    contact: (Option<String>, Option<String>),
    account_ref: Option<AccountRef>,
    date: chrono::NaiveDate,
    currency: String,
    total_amount: Money,
    allocations: Vec<(String, String, Money)>,
    source_modified_date: Option<crate::timestamp::Timestamp>,
}
