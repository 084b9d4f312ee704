//! Plaid's answers and how they become our bank accounts and transactions:
//! account types from Plaid's `type` and `subtype`, balances of credit and
//! loan accounts negated (Plaid writes what is owed as positive), and
//! transaction amounts negated (Plaid writes money out as positive; ours is
//! money in), `pending` as `Pending` or `Posted`.

use chrono::NaiveDate;
use serde::Deserialize;

use crate::data::bank_accounts::{BankAccount, BankAccountType};
use crate::data::bank_transactions::{BankTransaction, BankTransactionStatus};
use crate::data::money::Money;
use crate::platforms::kit::json::{self, Amount};
use crate::platforms::kit::records::{Each, Keyed};
use crate::platforms::kit::status::find;

/// Plaid account `type`s and ours; `depository` depends on its subtype
/// ([`account_type`]).
const ACCOUNT_TYPES: &[(&str, BankAccountType)] = &[
    ("credit", BankAccountType::CreditCard),
    ("loan", BankAccountType::Loan),
    ("investment", BankAccountType::Investment),
    // An older name of `investment`.
    ("brokerage", BankAccountType::Investment),
    ("other", BankAccountType::Other),
];

/// `depository` subtypes that hold savings; every other depository account
/// (`checking`, `prepaid`, `paypal`, `cash management`, `ebt`) is current.
const SAVINGS_SUBTYPES: &[(&str, BankAccountType)] = &[
    ("savings", BankAccountType::Savings),
    ("money market", BankAccountType::Savings),
    ("cd", BankAccountType::Savings),
    ("hsa", BankAccountType::Savings),
];

/// Our type for a Plaid account's `type` and `subtype`.
pub(super) fn account_type(kind: &str, subtype: Option<&str>) -> BankAccountType {
    if kind == "depository" {
        return subtype
            .and_then(|subtype| find(SAVINGS_SUBTYPES, subtype))
            .unwrap_or(BankAccountType::Current);
    }
    find(ACCOUNT_TYPES, kind).unwrap_or(BankAccountType::Other)
}

/// Our status for a Plaid transaction's `pending` flag.
pub(super) fn transaction_status(pending: bool) -> BankTransactionStatus {
    if pending {
        BankTransactionStatus::Pending
    } else {
        BankTransactionStatus::Posted
    }
}

/// The negation of an amount.
fn negated(amount: Money) -> Money {
    Money(0) - amount
}

/// `POST /accounts/get`'s answer (`AccountsGetResponse`).
#[derive(Deserialize)]
pub(super) struct AccountsPage {
    #[serde(default)]
    pub(super) accounts: Each<PlaidAccount>,
    pub(super) item: PlaidItem,
}

/// The Item an answer is about.
#[derive(Deserialize)]
pub(super) struct PlaidItem {
    pub(super) item_id: String,
    pub(super) institution_id: Option<String>,
    pub(super) institution_name: Option<String>,
}

impl PlaidItem {
    /// The institution's name, else its id.
    fn institution(&self) -> Option<String> {
        self.institution_name
            .clone()
            .or_else(|| self.institution_id.clone())
    }
}

/// An account (`AccountBase`).
#[derive(Deserialize)]
pub(super) struct PlaidAccount {
    account_id: String,
    name: String,
    official_name: Option<String>,
    #[serde(rename = "type")]
    kind: String,
    subtype: Option<String>,
    mask: Option<String>,
    balances: Balances,
}

/// An account's balances, in major units.
#[derive(Deserialize)]
struct Balances {
    current: Option<Amount>,
    available: Option<Amount>,
    iso_currency_code: Option<String>,
    unofficial_currency_code: Option<String>,
    last_updated_datetime: Option<String>,
}

impl PlaidAccount {
    /// Our bank account, at the institution of `item`.
    pub(super) fn into_record(self, item: &PlaidItem) -> BankAccount {
        let account_type = account_type(&self.kind, self.subtype.as_deref());
        // Plaid writes a credit or loan account's debt as a positive
        // current balance; ours is negative. Available credit stays positive
        // (it is what can be spent).
        let owed = matches!(
            account_type,
            BankAccountType::CreditCard | BankAccountType::Loan
        );
        let current = self.balances.current.map(Amount::money);
        let current_balance = if owed { current.map(negated) } else { current };
        let name = if self.name.trim().is_empty() {
            self.official_name.unwrap_or_default()
        } else {
            self.name
        };
        BankAccount {
            account_id: self.account_id,
            account_name: name,
            account_type,
            currency: self
                .balances
                .iso_currency_code
                .or(self.balances.unofficial_currency_code)
                .unwrap_or_default(),
            current_balance,
            available_balance: self.balances.available.map(Amount::money),
            institution: item.institution(),
            masked_account_number: self
                .mask
                .filter(|mask| !mask.is_empty())
                .map(|mask| format!("••••{mask}")),
            source_modified_date: json::timestamp(self.balances.last_updated_datetime.as_deref()),
        }
    }
}

/// A page of `POST /transactions/sync` (`TransactionsSyncResponse`).
#[derive(Deserialize)]
pub(super) struct SyncPage {
    #[serde(default)]
    pub(super) added: Each<PlaidTransaction>,
    #[serde(default)]
    pub(super) modified: Each<PlaidTransaction>,
    #[serde(default)]
    pub(super) removed: Vec<RemovedTransaction>,
    pub(super) next_cursor: String,
    pub(super) has_more: bool,
}

/// A transaction removed since the cursor (`RemovedTransaction`).
#[derive(Deserialize)]
pub(super) struct RemovedTransaction {
    pub(super) transaction_id: String,
}

impl Keyed for PlaidAccount {
    const ID: &'static str = "/account_id";
}

impl Keyed for PlaidTransaction {
    const ID: &'static str = "/transaction_id";
}

/// A transaction (`Transaction`).
#[derive(Deserialize)]
pub(super) struct PlaidTransaction {
    pub(super) transaction_id: String,
    account_id: String,
    amount: Amount,
    iso_currency_code: Option<String>,
    unofficial_currency_code: Option<String>,
    date: NaiveDate,
    name: Option<String>,
    original_description: Option<String>,
    merchant_name: Option<String>,
    pending: bool,
    personal_finance_category: Option<PersonalFinanceCategory>,
    #[serde(default)]
    category: Option<Vec<String>>,
}

/// Plaid's own category of a transaction.
#[derive(Deserialize)]
struct PersonalFinanceCategory {
    primary: Option<String>,
    detailed: Option<String>,
}

impl PlaidTransaction {
    /// Our bank transaction: Plaid's amount negated (Plaid's positive is
    /// money out of the account, ours is money in).
    pub(super) fn into_record(self) -> BankTransaction {
        let category = self
            .personal_finance_category
            .and_then(|category| category.detailed.or(category.primary))
            .or_else(|| {
                self.category
                    .filter(|names| !names.is_empty())
                    .map(|names| names.join(" > "))
            });
        BankTransaction {
            transaction_id: self.transaction_id,
            account_id: self.account_id,
            date: self.date,
            description: self
                .name
                .or(self.original_description)
                .or_else(|| self.merchant_name.clone())
                .unwrap_or_default(),
            amount: negated(self.amount.money()),
            currency: self
                .iso_currency_code
                .or(self.unofficial_currency_code)
                .unwrap_or_default(),
            status: transaction_status(self.pending),
            merchant_name: self.merchant_name,
            category,
            source_modified_date: None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_plaid_account_type_has_ours() {
        for (kind, subtype, ours) in [
            ("depository", Some("checking"), BankAccountType::Current),
            ("depository", Some("savings"), BankAccountType::Savings),
            ("depository", Some("money market"), BankAccountType::Savings),
            ("depository", Some("cd"), BankAccountType::Savings),
            ("depository", None, BankAccountType::Current),
            ("credit", Some("credit card"), BankAccountType::CreditCard),
            ("loan", Some("mortgage"), BankAccountType::Loan),
            ("investment", Some("401k"), BankAccountType::Investment),
            ("brokerage", None, BankAccountType::Investment),
            ("other", None, BankAccountType::Other),
            ("payroll", None, BankAccountType::Other),
        ] {
            assert_eq!(account_type(kind, subtype), ours, "{kind} {subtype:?}");
        }
    }

    #[test]
    fn money_out_is_negative_and_pending_is_kept() {
        let transaction: PlaidTransaction = serde_json::from_str(
            r#"{"transaction_id":"t","account_id":"a","amount":12.34,"iso_currency_code":"USD",
                "unofficial_currency_code":null,"date":"2026-11-02","name":"Coffee","merchant_name":null,
                "pending":true,"personal_finance_category":null,"category":["Food","Coffee"]}"#,
        )
        .expect("a transaction");
        let record = transaction.into_record();
        assert_eq!(record.amount, Money(-123_400));
        assert_eq!(record.status, BankTransactionStatus::Pending);
        assert_eq!(record.category.as_deref(), Some("Food > Coffee"));
    }
}
