//! TrueLayer's Data API v1 answers and how they become our bank accounts
//! and transactions: account types from `account_type`, the balance from
//! the account's `/balance`, account numbers masked to their last four
//! characters, and transaction amounts signed by `transaction_type`
//! (`DEBIT` out, `CREDIT` in), `Posted` from `/transactions` and `Pending`
//! from `/transactions/pending`.

use serde::Deserialize;

use crate::data::bank_accounts::{BankAccount, BankAccountType};
use crate::data::bank_transactions::{BankTransaction, BankTransactionStatus};
use crate::data::money::Money;
use crate::platforms::kit::json::{self, Amount};
use crate::platforms::kit::records::{Keyed, Unreadable};
use crate::platforms::kit::status::find;

/// TrueLayer `account_type`s and ours; any other is `Other`.
const ACCOUNT_TYPES: &[(&str, BankAccountType)] = &[
    ("TRANSACTION", BankAccountType::Current),
    ("BUSINESS_TRANSACTION", BankAccountType::Current),
    ("SAVINGS", BankAccountType::Savings),
    ("BUSINESS_SAVINGS", BankAccountType::Savings),
];

/// Our type for a TrueLayer `account_type`.
pub(super) fn account_type(word: &str) -> BankAccountType {
    find(ACCOUNT_TYPES, word).unwrap_or(BankAccountType::Other)
}

/// How `transaction_type` signs an amount: money out is negative.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Direction {
    /// Money into the account: positive.
    In,
    /// Money out of the account: negative.
    Out,
}

/// TrueLayer `transaction_type`s; any other keeps the amount's own sign.
const TRANSACTION_TYPES: &[(&str, Direction)] =
    &[("CREDIT", Direction::In), ("DEBIT", Direction::Out)];

/// `amount` signed as `transaction_type` says: `DEBIT` negative, `CREDIT`
/// positive, whatever sign the bank wrote; as written for any other word.
pub(super) fn signed(amount: Money, transaction_type: Option<&str>) -> Money {
    let magnitude = Money(amount.0.abs());
    match transaction_type.and_then(|word| find(TRANSACTION_TYPES, word)) {
        Some(Direction::In) => magnitude,
        Some(Direction::Out) => Money(0) - magnitude,
        None => amount,
    }
}

/// The Data API's envelope: `{"results": [...]}` (`L`: records read one by
/// one, or a `Vec` of what is not a record: the connection, a balance).
#[derive(Deserialize)]
#[serde(bound = "L: serde::de::DeserializeOwned + Default")]
pub(super) struct Results<L> {
    #[serde(default)]
    pub(super) results: L,
}

impl Keyed for TrueLayerAccount {
    const ID: &'static str = "/account_id";
}

impl Keyed for TrueLayerTransaction {
    const ID: &'static str = "/transaction_id";
}

/// `GET /data/v1/me`'s connection metadata.
#[derive(Deserialize)]
pub(super) struct Me {
    pub(super) credentials_id: Option<String>,
    /// The bank the credentials are for.
    pub(super) provider: Option<Provider>,
}

/// An account (`GET /data/v1/accounts`).
#[derive(Deserialize)]
pub(super) struct TrueLayerAccount {
    pub(super) account_id: String,
    account_type: Option<String>,
    display_name: Option<String>,
    currency: Option<String>,
    account_number: Option<AccountNumber>,
    provider: Option<Provider>,
    update_timestamp: Option<String>,
}

/// An account's numbers (returned in full: only the last four are kept).
#[derive(Deserialize)]
struct AccountNumber {
    iban: Option<String>,
    number: Option<String>,
}

/// The bank behind an account, or behind the credentials (`GET /data/v1/me`).
#[derive(Deserialize)]
pub(super) struct Provider {
    pub(super) display_name: Option<String>,
    pub(super) provider_id: Option<String>,
}

/// An account's balance (`GET /data/v1/accounts/{id}/balance`).
#[derive(Deserialize)]
pub(super) struct Balance {
    current: Option<Amount>,
    available: Option<Amount>,
    currency: Option<String>,
    update_timestamp: Option<String>,
}

/// `••••` and the last four characters of `number`.
fn masked(number: &str) -> Option<String> {
    let characters: Vec<char> = number.chars().filter(|c| !c.is_whitespace()).collect();
    if characters.is_empty() {
        return None;
    }
    let tail: String = characters[characters.len().saturating_sub(4)..]
        .iter()
        .collect();
    Some(format!("••••{tail}"))
}

impl TrueLayerAccount {
    /// Our bank account, with its balance when TrueLayer gave one.
    pub(super) fn into_record(self, balance: Option<Balance>) -> BankAccount {
        let masked_account_number = self.account_number.and_then(|numbers| {
            json::non_empty(numbers.number)
                .or(json::non_empty(numbers.iban))
                .and_then(|number| masked(&number))
        });
        let balance_timestamp = balance
            .as_ref()
            .and_then(|balance| json::timestamp(balance.update_timestamp.as_deref()));
        let currency = self
            .currency
            .or_else(|| {
                balance
                    .as_ref()
                    .and_then(|balance| balance.currency.clone())
            })
            .unwrap_or_default();
        BankAccount {
            account_name: self.display_name.unwrap_or_else(|| self.account_id.clone()),
            account_id: self.account_id,
            account_type: account_type(self.account_type.as_deref().unwrap_or_default()),
            currency,
            current_balance: balance
                .as_ref()
                .and_then(|balance| balance.current.map(Amount::money)),
            available_balance: balance
                .as_ref()
                .and_then(|balance| balance.available.map(Amount::money)),
            institution: self
                .provider
                .and_then(|provider| provider.display_name.or(provider.provider_id)),
            masked_account_number,
            source_modified_date: balance_timestamp
                .or_else(|| json::timestamp(self.update_timestamp.as_deref())),
        }
    }
}

/// A transaction (`GET /data/v1/accounts/{id}/transactions` and `/pending`).
#[derive(Deserialize)]
pub(super) struct TrueLayerTransaction {
    transaction_id: String,
    timestamp: String,
    description: Option<String>,
    amount: Amount,
    currency: Option<String>,
    transaction_type: Option<String>,
    transaction_category: Option<String>,
    #[serde(default)]
    transaction_classification: Vec<String>,
    merchant_name: Option<String>,
}

impl TrueLayerTransaction {
    /// Our transaction on `account_id`, `status` by the endpoint it came from.
    pub(super) fn into_record(
        self,
        account_id: &str,
        status: BankTransactionStatus,
    ) -> Result<BankTransaction, Unreadable> {
        let date = json::date(&self.timestamp)
            .ok_or_else(|| Unreadable::field("timestamp", "is not a date-time"))?;
        let category = if self.transaction_classification.is_empty() {
            json::non_empty(self.transaction_category)
        } else {
            Some(self.transaction_classification.join(" > "))
        };
        Ok(BankTransaction {
            transaction_id: self.transaction_id,
            account_id: account_id.to_owned(),
            date,
            description: self.description.unwrap_or_default(),
            amount: signed(self.amount.money(), self.transaction_type.as_deref()),
            currency: self.currency.unwrap_or_default(),
            status,
            merchant_name: json::non_empty(self.merchant_name),
            category,
            source_modified_date: None,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_truelayer_account_type_has_ours() {
        for (word, ours) in [
            ("TRANSACTION", BankAccountType::Current),
            ("BUSINESS_TRANSACTION", BankAccountType::Current),
            ("SAVINGS", BankAccountType::Savings),
            ("BUSINESS_SAVINGS", BankAccountType::Savings),
            ("PENSION", BankAccountType::Other),
            ("", BankAccountType::Other),
        ] {
            assert_eq!(account_type(word), ours, "{word}");
        }
    }

    #[test]
    fn transaction_types_decide_the_sign() {
        assert_eq!(signed(Money(12_3400), Some("DEBIT")), Money(-12_3400));
        assert_eq!(signed(Money(-12_3400), Some("DEBIT")), Money(-12_3400));
        assert_eq!(signed(Money(-5_0000), Some("CREDIT")), Money(5_0000));
        assert_eq!(signed(Money(-5_0000), Some("OTHER")), Money(-5_0000));
        assert_eq!(signed(Money(5_0000), None), Money(5_0000));
    }

    #[test]
    fn account_numbers_keep_their_last_four() {
        assert_eq!(
            masked("GB35LOYD30963112345678").as_deref(),
            Some("••••5678")
        );
        assert_eq!(masked("123").as_deref(), Some("••••123"));
        assert_eq!(masked(" "), None);
    }
}
