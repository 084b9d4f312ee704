//! FreshBooks' chart of accounts, from the chart of accounts report (`GET
//! {biz}/reports/chart_of_accounts?use_ledger_entries=true`), and how it
//! becomes our accounts: every account and every one of its
//! `sub_accounts[]` is one account, kept once per `account_uuid` (a parent
//! that takes postings comes back as its own "(general)" sub-account with
//! the same uuid). The report's `balance` is not published: its sign is
//! not confirmed. Sources: `NOTES.md`, "Accounting model".

use std::collections::HashSet;

use serde::Deserialize;

use crate::data::accounts::{Account, AccountClassification, AccountStatus};
use crate::platforms::kit::json;
use crate::platforms::kit::records::{Each, Keyed, Read, Unreadable};
use crate::platforms::kit::status::find;

/// FreshBooks' `account_type`s ("asset, liability, equity, income,
/// expense"), one for each of our classifications; any other is `Unknown`.
const CLASSIFICATIONS: &[(&str, AccountClassification)] = &[
    ("asset", AccountClassification::Asset),
    ("liability", AccountClassification::Liability),
    ("equity", AccountClassification::Equity),
    ("income", AccountClassification::Income),
    ("expense", AccountClassification::Expense),
];

/// The `account_sub_type` of the accounts money is paid from and into.
const BANK_SUB_TYPE: &str = "Cash & Bank";

/// The `result` of the chart of accounts report.
#[derive(Deserialize)]
pub(super) struct ChartReport {
    /// The chart's top-level accounts, each with its sub-accounts.
    #[serde(default)]
    pub(super) journal_entry_accounts: Each<FreshBooksAccount>,
}

impl Keyed for FreshBooksAccount {
    const ID: &'static str = "/account_uuid";
}

/// An account (or sub-account) as the chart of accounts report writes it.
#[derive(Deserialize)]
pub(super) struct FreshBooksAccount {
    account_uuid: Option<String>,
    account_number: Option<String>,
    account_name: Option<String>,
    account_type: Option<String>,
    account_sub_type: Option<String>,
    state: Option<String>,
    currency_code: Option<String>,
    /// Its sub-accounts (none on a sub-account).
    #[serde(default)]
    sub_accounts: Each<FreshBooksAccount>,
}

impl ChartReport {
    /// Our accounts: each account, then its sub-accounts, in the report's
    /// order; an account whose uuid was already read (the "(general)"
    /// sub-account of a parent that takes postings) is left out, so the
    /// parent keeps its own name. What cannot be read is an issue.
    pub(super) fn into_accounts(self) -> Read<Account> {
        let mut read = Read::default();
        let mut seen = HashSet::new();
        flatten(self.journal_entry_accounts, &mut seen, &mut read);
        read
    }
}

/// `accounts` and their sub-accounts into `read`, each uuid once.
fn flatten(
    accounts: Each<FreshBooksAccount>,
    seen: &mut HashSet<String>,
    read: &mut Read<Account>,
) {
    let mut subs = Vec::new();
    // Every account of this level is read before any sub-account, so a
    // parent is the one kept, not its "(general)" twin.
    let level = accounts.read(|mut account| {
        subs.push(std::mem::take(&mut account.sub_accounts));
        let record = account.into_record()?;
        Ok(seen.insert(record.account_id.clone()).then_some(record))
    });
    read.records.extend(level.records);
    read.issues.extend(level.issues);
    for sub_accounts in subs {
        flatten(sub_accounts, seen, read);
    }
}

impl FreshBooksAccount {
    /// Our account: id = `account_uuid`; nominal code = `account_number`;
    /// classified by `account_type`, whose `account_sub_type` ("Cash &
    /// Bank", "Current Asset") is the platform's type, "Cash & Bank" being
    /// a bank account; `inactive` is archived; the currency as given (null
    /// when the report gives none). The report gives no description and no
    /// modification time, and its `balance`, whose sign is not confirmed,
    /// is left out.
    fn into_record(self) -> Result<Account, Unreadable> {
        let account_id = json::non_empty(self.account_uuid)
            .ok_or_else(|| Unreadable::field("account_uuid", "is missing"))?;
        let account_type = json::non_empty(self.account_sub_type);
        Ok(Account {
            nominal_code: json::non_empty(self.account_number),
            account_name: json::non_empty(self.account_name).unwrap_or_else(|| account_id.clone()),
            description: None,
            classification: self
                .account_type
                .as_deref()
                .and_then(|kind| find(CLASSIFICATIONS, kind))
                .unwrap_or(AccountClassification::Unknown),
            is_bank_account: account_type.as_deref() == Some(BANK_SUB_TYPE),
            account_type,
            status: match self.state.as_deref() {
                Some("inactive") => AccountStatus::Archived,
                _ => AccountStatus::Active,
            },
            currency: json::non_empty(self.currency_code),
            current_balance: None,
            source_modified_date: None,
            account_id,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The report's own example (https://freshbooks.com/api/chart-of-accounts-report):
    /// Cash takes postings, so it repeats as "Cash (general)" with its uuid.
    #[test]
    fn a_parent_and_its_general_twin_are_one_account() {
        let report: ChartReport = serde_json::from_str(
            r#"{"journal_entry_accounts": [
                {"account_name": "Cash", "account_number": "1000", "account_type": "asset",
                 "balance": "925.000", "currency_code": null,
                 "account_uuid": "2a990740-40d6-4529-a604-be0d68cf9d90",
                 "account_sub_type": "Cash & Bank", "state": "active",
                 "sub_accounts": [
                    {"account_name": "Cash (general)", "account_number": "1000", "account_type": "asset",
                     "account_uuid": "2a990740-40d6-4529-a604-be0d68cf9d90",
                     "parent_account_uuid": "2a990740-40d6-4529-a604-be0d68cf9d90",
                     "account_sub_type": "Cash & Bank", "state": "active"},
                    {"account_name": "Petty Cash", "account_number": "1000-1", "account_type": "asset",
                     "account_uuid": "95026d52-14ac-4008-9f81-c0e4ac77c3ce",
                     "account_sub_type": "Cash & Bank", "state": "inactive"}]},
                {"account_name": "Accounts Receivable", "account_number": "1200", "account_type": "asset",
                 "sub_accounts": [], "account_uuid": "734750cd-4b8b-42cd-ab54-38f53aac38ad",
                 "account_sub_type": "Current Asset", "state": "active"}]}"#,
        )
        .expect("a report");
        let read = report.into_accounts();
        assert!(read.issues.is_empty());
        let rows: Vec<(&str, &str, Option<&str>, bool, AccountStatus)> = read
            .records
            .iter()
            .map(|account| {
                (
                    account.account_id.as_str(),
                    account.account_name.as_str(),
                    account.nominal_code.as_deref(),
                    account.is_bank_account,
                    account.status,
                )
            })
            .collect();
        assert_eq!(
            rows,
            [
                (
                    "2a990740-40d6-4529-a604-be0d68cf9d90",
                    "Cash",
                    Some("1000"),
                    true,
                    AccountStatus::Active
                ),
                (
                    "734750cd-4b8b-42cd-ab54-38f53aac38ad",
                    "Accounts Receivable",
                    Some("1200"),
                    false,
                    AccountStatus::Active
                ),
                (
                    "95026d52-14ac-4008-9f81-c0e4ac77c3ce",
                    "Petty Cash",
                    Some("1000-1"),
                    true,
                    AccountStatus::Archived
                ),
            ]
        );
        assert!(read.records.iter().all(|account| account.currency.is_none()
            && account.current_balance.is_none()
            && account.classification == AccountClassification::Asset));
    }

    /// A sub-account that cannot be read costs itself: its parent and
    /// siblings are kept; a type FreshBooks adds later is `Unknown`.
    #[test]
    fn an_unreadable_sub_account_costs_itself_alone() {
        let report: ChartReport = serde_json::from_str(
            r#"{"journal_entry_accounts": [
                {"account_name": "Sales", "account_number": "4000", "account_type": "income",
                 "account_uuid": "a1", "sub_accounts": [
                    {"account_name": ["not", "a", "name"], "account_uuid": "a2"},
                    {"account_name": "Other", "account_type": "cogs", "account_uuid": "a3",
                     "currency_code": "CAD"},
                    {"account_name": "No id", "account_type": "income"}]}]}"#,
        )
        .expect("a report");
        let read = report.into_accounts();
        let kept: Vec<(&str, AccountClassification, Option<&str>)> = read
            .records
            .iter()
            .map(|account| {
                (
                    account.account_id.as_str(),
                    account.classification,
                    account.currency.as_deref(),
                )
            })
            .collect();
        assert_eq!(
            kept,
            [
                ("a1", AccountClassification::Income, None),
                ("a3", AccountClassification::Unknown, Some("CAD")),
            ]
        );
        let issues: Vec<(Option<&str>, Option<&str>)> = read
            .issues
            .iter()
            .map(|issue| (issue.record_id.as_deref(), issue.field.as_deref()))
            .collect();
        assert_eq!(
            issues,
            [
                (Some("a2"), Some("account_name")),
                (None, Some("account_uuid"))
            ]
        );
    }
}
