//! Payments: money received from customers (accounts receivable), with the
//! invoices and credit notes each one settles; newest first, filterable by
//! customer.

use std::borrow::Cow;

use chrono::NaiveDate;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::accounts::AccountRef;
use super::invoices::CustomerRef;
use super::money::Money;
use super::{Definition, Direction, Filter, FilterValues, Spec, vocabulary};
use crate::timestamp::Timestamp;

/// The payments data type.
pub struct Payments;

impl Definition for Payments {
    type Record = Payment;

    const SPEC: &'static Spec = &Spec {
        name: "payments",
        noun: "payments",
        id_field: "paymentId",
        order: Direction::Descending,
        order_description: "newest payment date first (ties broken by connection, then payment id)",
        filter: Some(Filter {
            parameter: "customerId",
            description: "Only payments from this customer (its `customerId`)",
            values: FilterValues::Id {
                example: "sbx-cus-000001",
            },
        }),
        keys: &[
            "customerRef.id",
            "accountRef.id",
            "date",
            "currency",
            "totalAmount",
            "modifiedDate",
        ],
    };

    fn id(record: &Payment) -> &str {
        &record.payment_id
    }

    fn sort_key(record: &Payment) -> String {
        record.date.format("%Y-%m-%d").to_string()
    }

    fn filter_value(record: &Payment) -> Option<Cow<'static, str>> {
        record
            .customer_ref
            .as_ref()
            .map(|customer| Cow::Owned(customer.id.clone()))
    }
}

vocabulary! {
    /// What an allocation settles.
    pub enum AllocationType {
        /// A sales invoice (`id` is its `invoiceId`).
        Invoice,
        /// A sales credit note (`id` is its `creditNoteId`).
        CreditNote,
        /// Something the data model does not have (a journal, a deposit); `id` is the platform's.
        Other,
    }
}

/// A payment received from a customer, or a refund paid to one. Amounts are
/// exact decimals, as strings, in the payment's currency, signed by their
/// effect on the cash: `totalAmount` is positive for money received and
/// negative for a refund; an allocation to an invoice is positive (it pays
/// the invoice), one to a credit note negative (its credit is used instead
/// of cash, or refunded). The allocations add up to at most the total (with
/// its sign): what is left is unallocated (an overpayment or prepayment).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Payment {
    /// The platform's id of the payment.
    pub payment_id: String,
    /// The payer's or the platform's reference; null when the platform gives none.
    pub reference: Option<String>,
    /// The customer who paid (or was refunded); null when the platform gives none.
    pub customer_ref: Option<CustomerRef>,
    /// The account the money went into (or out of, for a refund): a bank account of the chart; null when the platform gives none.
    pub account_ref: Option<AccountRef>,
    /// The day it was paid.
    pub date: NaiveDate,
    /// ISO 4217 currency code.
    pub currency: String,
    /// The amount: positive received, negative refunded.
    pub total_amount: Money,
    /// What it settles; empty when it is all unallocated.
    pub allocations: Vec<PaymentAllocation>,
    /// A note on the payment; null if none.
    pub note: Option<String>,
    /// When the platform's record last changed; null when the platform does not say.
    pub source_modified_date: Option<Timestamp>,
}

/// What part of a payment settles one document.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct PaymentAllocation {
    /// What kind of document it settles.
    #[serde(rename = "type")]
    pub allocation_type: AllocationType,
    /// The document's id: an `invoiceId` or `creditNoteId` of the same connection.
    pub id: String,
    /// How much of the payment goes to it, in the payment's currency: positive for an invoice, negative for a credit note.
    pub amount: Money,
}

impl Payment {
    /// What the allocations add up to.
    pub fn allocated(&self) -> Money {
        Money(
            self.allocations
                .iter()
                .map(|allocation| allocation.amount.0)
                .sum(),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn allocations_add_up_with_their_signs() {
        let allocation = |allocation_type, amount| PaymentAllocation {
            allocation_type,
            id: "x".to_owned(),
            amount: Money::from_cents(amount),
        };
        let payment = Payment {
            payment_id: "p".to_owned(),
            reference: None,
            customer_ref: None,
            account_ref: None,
            date: NaiveDate::from_ymd_opt(2026, 1, 1).expect("a date"),
            currency: "GBP".to_owned(),
            total_amount: Money::from_cents(9_000),
            allocations: vec![
                allocation(AllocationType::Invoice, 10_000),
                allocation(AllocationType::CreditNote, -2_500),
            ],
            note: None,
            source_modified_date: None,
        };
        assert_eq!(payment.allocated(), Money::from_cents(7_500));
        let json = serde_json::to_value(&payment.allocations[1]).expect("json");
        assert_eq!(json["type"], "CreditNote");
        assert_eq!(json["amount"], "-25.00");
    }
}
