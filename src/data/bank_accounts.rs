//! Bank accounts: the accounts a banking connection can see, by name.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::money::Money;
use super::{Definition, Direction, Spec, vocabulary};
use crate::timestamp::Timestamp;

/// The bank accounts data type.
pub struct BankAccounts;

impl Definition for BankAccounts {
    type Record = BankAccount;

    const SPEC: &'static Spec = &Spec {
        name: "bankAccounts",
        noun: "bank accounts",
        id_field: "accountId",
        order: Direction::Ascending,
        order_description: "by name (ties broken by connection, then account id)",
        filter: None,
        keys: &["currency", "modifiedDate"],
    };

    fn id(record: &BankAccount) -> &str {
        &record.account_id
    }

    fn sort_key(record: &BankAccount) -> String {
        record.account_name.clone()
    }
}

vocabulary! {
    /// What kind of account it is.
    pub enum BankAccountType {
        /// A current (checking, transaction) account.
        Current,
        /// A savings account.
        Savings,
        /// A credit card.
        CreditCard,
        /// A loan or mortgage.
        Loan,
        /// An investment or brokerage account.
        Investment,
        /// Any other kind, or one the platform does not say.
        Other,
    }
}

/// A bank account synced from a banking platform. Balances are exact
/// decimals, as strings: positive is money held, negative money owed, as
/// the bank reports it (each platform's `NOTES.md` says how its signs map).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct BankAccount {
    /// The platform's id of the account (what `bankTransactions` refer to as `accountId`).
    pub account_id: String,
    /// The account's name, as the bank or its holder calls it.
    pub account_name: String,
    /// What kind of account it is.
    pub account_type: BankAccountType,
    /// ISO 4217 currency code.
    pub currency: String,
    /// The balance including pending transactions; null when the bank does not say.
    pub current_balance: Option<Money>,
    /// What can be spent now; null when the bank does not say.
    pub available_balance: Option<Money>,
    /// The bank or institution holding it; null when the platform does not say.
    pub institution: Option<String>,
    /// The account number with all but its last digits hidden (`••••1234`); null when the platform gives none.
    pub masked_account_number: Option<String>,
    /// When the platform's record last changed; null when the platform does not say.
    pub source_modified_date: Option<Timestamp>,
}
