//! Accounts: the chart of accounts of an accounting platform (the nominal
//! ledger's accounts every bill, invoice line and journal line posts to),
//! ordered by nominal code, filterable by classification.

use std::borrow::Cow;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::money::Money;
use super::{Definition, Direction, Filter, FilterValues, Spec, vocabulary};
use crate::timestamp::Timestamp;

/// The accounts data type.
pub struct Accounts;

impl Definition for Accounts {
    type Record = Account;

    const SPEC: &'static Spec = &Spec {
        name: "accounts",
        noun: "accounts",
        id_field: "accountId",
        order: Direction::Ascending,
        order_description: "by nominal code, then name (accounts without a code last; ties broken by connection, then account id)",
        filter: Some(Filter {
            parameter: "classification",
            description: "Only accounts of this classification",
            values: FilterValues::Vocabulary(AccountClassification::NAMES),
        }),
        keys: &["classification", "status", "currency", "modifiedDate"],
    };

    fn id(record: &Account) -> &str {
        &record.account_id
    }

    /// The code, then the name: codes sort as text (`SALES` exists beside
    /// `4000`); an account without a code sorts after every one with a
    /// code (the leading `0` or `1`), and `\u{1}` ends the code.
    fn sort_key(record: &Account) -> String {
        match &record.nominal_code {
            Some(code) => format!("0{code}\u{1}{}", record.account_name),
            None => format!("1\u{1}{}", record.account_name),
        }
    }

    fn filter_value(record: &Account) -> Option<Cow<'static, str>> {
        Some(Cow::Borrowed(record.classification.as_str()))
    }
}

vocabulary! {
    /// Where an account sits in the financial statements: the balance sheet
    /// (assets, liabilities, equity) or the profit and loss (income, expenses).
    pub enum AccountClassification {
        /// What the business owns or is owed (bank, receivables, stock, fixed assets). Debit balance.
        Asset,
        /// What the business owes (payables, tax owed, loans). Credit balance.
        Liability,
        /// The owners' stake (capital, retained earnings). Credit balance.
        Equity,
        /// Revenue and other income. Credit balance.
        Income,
        /// Costs of sales and overheads. Debit balance.
        Expense,
        /// The platform does not say.
        Unknown,
    }
}

vocabulary! {
    /// Whether an account can be posted to.
    pub enum AccountStatus {
        /// In use.
        Active,
        /// Archived (hidden, kept for history) on the platform.
        Archived,
    }
}

/// An account of the chart of accounts synced from an accounting platform.
/// A balance is exact, in the account's natural sign: positive is a debit
/// balance for assets and expenses and a credit balance for liabilities,
/// equity and income, as the platforms report them (each platform's
/// `NOTES.md` says what it gives).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Account {
    /// The platform's id of the account (what other records' `accountRef.id` names).
    pub account_id: String,
    /// The code people post with (`200`, `4000`, `SALES`); null when the platform gives none.
    pub nominal_code: Option<String>,
    /// The account's name.
    pub account_name: String,
    /// What it is for; null when the platform gives no description.
    pub description: Option<String>,
    /// Where it sits in the financial statements.
    pub classification: AccountClassification,
    /// The platform's own type of the account, as it writes it (Xero `BANK`, QuickBooks `Accounts Receivable`); null when it gives none.
    pub account_type: Option<String>,
    /// Whether it is a bank (or card) account that payments go through.
    pub is_bank_account: bool,
    /// Whether it can be posted to.
    pub status: AccountStatus,
    /// ISO 4217 code of the account's currency; null when the platform gives none (the company's base currency).
    pub currency: Option<String>,
    /// The balance now, in the account's natural sign; null when the platform does not give balances with the account.
    pub current_balance: Option<Money>,
    /// When the platform's record last changed; null when the platform does not say.
    pub source_modified_date: Option<Timestamp>,
}

/// A reference to an account of the same connection's chart: follow it with
/// `GET .../data/accounts/{accountId}`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct AccountRef {
    /// The account's `accountId`.
    pub id: String,
    /// The account's name, as the referring record gives it; null when it gives none.
    pub name: Option<String>,
}

impl AccountRef {
    /// The reference to account `id`, when the platform names one.
    pub fn to(id: Option<String>, name: Option<String>) -> Option<Self> {
        id.map(|id| Self { id, name })
    }
}
