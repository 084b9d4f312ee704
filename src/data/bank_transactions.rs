//! Bank transactions: money in and out of bank accounts, newest first,
//! filterable by account.

use std::borrow::Cow;

use chrono::NaiveDate;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::money::Money;
use super::{Definition, Direction, Filter, FilterValues, Spec, vocabulary};
use crate::timestamp::Timestamp;

/// The bank transactions data type.
pub struct BankTransactions;

impl Definition for BankTransactions {
    type Record = BankTransaction;

    const SPEC: &'static Spec = &Spec {
        name: "bankTransactions",
        noun: "bank transactions",
        id_field: "transactionId",
        order: Direction::Descending,
        order_description: "newest date first (ties broken by connection, then transaction id)",
        filter: Some(Filter {
            parameter: "accountId",
            description: "Only transactions of this account",
            values: FilterValues::Id { example: "acc-1" },
        }),
        keys: &[
            "accountId",
            "date",
            "amount",
            "currency",
            "status",
            "modifiedDate",
        ],
    };

    fn id(record: &BankTransaction) -> &str {
        &record.transaction_id
    }

    fn sort_key(record: &BankTransaction) -> String {
        record.date.format("%Y-%m-%d").to_string()
    }

    fn filter_value(record: &BankTransaction) -> Option<Cow<'static, str>> {
        Some(Cow::Owned(record.account_id.clone()))
    }
}

vocabulary! {
    /// Whether the bank has settled a transaction.
    pub enum BankTransactionStatus {
        /// Authorized but not yet settled: it may still change or disappear.
        Pending,
        /// Settled on the account.
        Posted,
    }
}

/// A transaction on a bank account. The amount is signed: positive is
/// money into the account, negative money out of it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct BankTransaction {
    /// The platform's id of the transaction.
    pub transaction_id: String,
    /// The `accountId` of the bank account it is on.
    pub account_id: String,
    /// The day it happened (posted, or authorized while pending).
    pub date: NaiveDate,
    /// What the bank's statement says.
    pub description: String,
    /// Signed exact amount: positive into the account, negative out of it.
    pub amount: Money,
    /// ISO 4217 currency code.
    pub currency: String,
    /// Pending or posted.
    pub status: BankTransactionStatus,
    /// The merchant or counterparty, when the platform names one.
    pub merchant_name: Option<String>,
    /// The platform's category of the transaction, when it gives one.
    pub category: Option<String>,
    /// When the platform's record last changed; null when the platform does not say.
    pub source_modified_date: Option<Timestamp>,
}
