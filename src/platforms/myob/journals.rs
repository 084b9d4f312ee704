//! MYOB's general ledger (`GET /GeneralLedger/JournalTransaction`: "a list
//! of journals for all transaction types", read-only) and how it becomes
//! our journal entries: each journal transaction one entry, its lines'
//! unsigned `Amount` signed by `IsCredit` (debit positive). Sources:
//! `NOTES.md`, "Accounting model".

use serde::Deserialize;

use super::chart::AccountLink;
use crate::data::journal_entries::{JournalEntry, JournalLine, JournalSource};
use crate::data::money::Money;
use crate::platforms::kit::json::{self, Rounded, rounded};
use crate::platforms::kit::records::{Keyed, Unreadable};

impl Keyed for JournalTransaction {
    const ID: &'static str = "/UID";
}

/// What posted a journal (`SourceTransaction`): its type (`Bill`,
/// `CustomerPayment`, `GeneralJournal`, …) and `UID`.
#[derive(Deserialize)]
#[serde(rename_all = "PascalCase")]
struct SourceTransaction {
    #[serde(rename = "UID")]
    uid: Option<String>,
    transaction_type: Option<String>,
}

/// A line of a journal transaction.
#[derive(Deserialize)]
#[serde(rename_all = "PascalCase")]
struct JournalTransactionLine {
    account: Option<AccountLink>,
    amount: Option<Rounded>,
    is_credit: Option<bool>,
    line_description: Option<String>,
}

/// A journal transaction as MYOB writes it.
#[derive(Deserialize)]
#[serde(rename_all = "PascalCase")]
pub(super) struct JournalTransaction {
    #[serde(rename = "UID")]
    uid: String,
    #[serde(rename = "DisplayID")]
    display_id: Option<String>,
    date_occurred: Option<String>,
    date_posted: Option<String>,
    description: Option<String>,
    source_transaction: Option<SourceTransaction>,
    #[serde(default)]
    lines: Vec<JournalTransactionLine>,
    last_modified: Option<String>,
}

impl JournalTransaction {
    /// Our journal entry, posted on the date the transaction occurred, in
    /// the file's `currency`; one whose lines do not balance cannot be read
    /// (MYOB's ledger is double entry: it would mean a misread sign).
    pub(super) fn into_record(self, currency: &str) -> Result<Option<JournalEntry>, Unreadable> {
        let posted_on = json::required_date(self.date_occurred.as_deref(), "DateOccurred")?;
        let journal_lines: Vec<JournalLine> = self
            .lines
            .into_iter()
            .map(|line| {
                let amount = rounded(line.amount);
                JournalLine {
                    account_ref: line.account.and_then(AccountLink::into_ref),
                    description: json::non_empty(line.line_description),
                    net_amount: if line.is_credit == Some(true) {
                        -amount
                    } else {
                        amount
                    },
                    currency: json::non_empty(Some(currency.to_owned())),
                }
            })
            .collect();
        let balance = journal_lines
            .iter()
            .fold(Money(0), |sum, line| sum + line.net_amount);
        if balance != Money(0) {
            return Err(Unreadable::field("Lines", "do not balance"));
        }
        Ok(Some(JournalEntry {
            journal_number: json::non_empty(self.display_id),
            posted_on,
            description: json::non_empty(self.description),
            source: self.source_transaction.and_then(|source| {
                Some(JournalSource {
                    source_type: json::non_empty(source.transaction_type)?,
                    id: json::non_empty(source.uid),
                })
            }),
            journal_lines,
            created_on: json::timestamp(self.date_posted.as_deref()),
            source_modified_date: json::timestamp(self.last_modified.as_deref()),
            journal_entry_id: self.uid,
        }))
    }
}
