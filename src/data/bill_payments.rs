//! Bill payments: money paid to suppliers (accounts payable), with the
//! bills and supplier credit notes each one settles; newest first,
//! filterable by supplier.

use std::borrow::Cow;

use chrono::NaiveDate;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::accounts::AccountRef;
use super::money::Money;
use super::suppliers::SupplierRef;
use super::{Definition, Direction, Filter, FilterValues, Spec, vocabulary};
use crate::timestamp::Timestamp;

/// The bill payments data type.
pub struct BillPayments;

impl Definition for BillPayments {
    type Record = BillPayment;

    const SPEC: &'static Spec = &Spec {
        name: "billPayments",
        noun: "bill payments",
        id_field: "billPaymentId",
        order: Direction::Descending,
        order_description: "newest payment date first (ties broken by connection, then bill payment id)",
        filter: Some(Filter {
            parameter: "supplierId",
            description: "Only payments to this supplier (its `supplierId`)",
            values: FilterValues::Id {
                example: "sbx-sup-00001",
            },
        }),
        keys: &[
            "supplierRef.id",
            "accountRef.id",
            "date",
            "currency",
            "totalAmount",
            "modifiedDate",
        ],
    };

    fn id(record: &BillPayment) -> &str {
        &record.bill_payment_id
    }

    fn sort_key(record: &BillPayment) -> String {
        record.date.format("%Y-%m-%d").to_string()
    }

    fn filter_value(record: &BillPayment) -> Option<Cow<'static, str>> {
        record
            .supplier_ref
            .as_ref()
            .map(|supplier| Cow::Owned(supplier.id.clone()))
    }
}

vocabulary! {
    /// What a bill payment's allocation settles.
    pub enum BillAllocationType {
        /// A bill (`id` is its `billId`).
        Bill,
        /// A supplier's credit note (the platform's id).
        SupplierCredit,
        /// Something the data model does not have (a prepayment, a journal); `id` is the platform's.
        Other,
    }
}

/// A payment made to a supplier, or a refund received from one. Amounts
/// are exact decimals, as strings, in the payment's currency, signed by
/// their effect on what is owed: `totalAmount` is positive for money paid
/// out and negative for a refund received; an allocation to a bill is
/// positive (it pays the bill), one to a supplier credit negative (the
/// credit is used instead of cash, or refunded). The allocations add up to
/// at most the total (with its sign): what is left is unallocated.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct BillPayment {
    /// The platform's id of the payment.
    pub bill_payment_id: String,
    /// The payment's reference (a cheque number, a remittance note); null when the platform gives none.
    pub reference: Option<String>,
    /// The supplier paid (or refunding); null when the platform gives none.
    pub supplier_ref: Option<SupplierRef>,
    /// The account the money left (or came back to): a bank or card account of the chart; null when the platform gives none.
    pub account_ref: Option<AccountRef>,
    /// The day it was paid.
    pub date: NaiveDate,
    /// ISO 4217 currency code.
    pub currency: String,
    /// The amount: positive paid out, negative refunded.
    pub total_amount: Money,
    /// What it settles; empty when it is all unallocated.
    pub allocations: Vec<BillPaymentAllocation>,
    /// A note on the payment; null if none.
    pub note: Option<String>,
    /// When the platform's record last changed; null when the platform does not say.
    pub source_modified_date: Option<Timestamp>,
}

/// What part of a bill payment settles one document.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct BillPaymentAllocation {
    /// What kind of document it settles.
    #[serde(rename = "type")]
    pub allocation_type: BillAllocationType,
    /// The document's id: a `billId` of the same connection, or the platform's id of a supplier credit.
    pub id: String,
    /// How much of the payment goes to it, in the payment's currency: positive for a bill, negative for a supplier credit.
    pub amount: Money,
}

impl BillPayment {
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
