//! Sage's manual journals (`GET /journals`) and how they become our
//! journal entries: each line a debit or a credit of one ledger account.
//! Sources: `NOTES.md`, "Accounting model".

use serde::Deserialize;

use super::mapping::Link;
use crate::data::journal_entries::{JournalEntry, JournalLine};
use crate::platforms::kit::json::{self, Amount, money};
use crate::platforms::kit::records::{Keyed, Unreadable};

impl Keyed for SageJournal {
    const ID: &'static str = "/id";
}

/// A journal as `GET /journals?attributes=all` gives it.
#[derive(Deserialize)]
pub(super) struct SageJournal {
    id: String,
    date: Option<String>,
    reference: Option<String>,
    description: Option<String>,
    #[serde(default, deserialize_with = "json::list_or_null")]
    journal_lines: Vec<SageJournalLine>,
    deleted_at: Option<String>,
    created_at: Option<String>,
    updated_at: Option<String>,
}

/// One line: a debit, a credit (one of them zero) and its account.
#[derive(Deserialize)]
struct SageJournalLine {
    ledger_account: Option<Link>,
    details: Option<String>,
    debit: Option<Amount>,
    credit: Option<Amount>,
}

impl SageJournal {
    /// Our journal entry, `None` for one Sage deleted: each line's debit
    /// less its credit, in the base currency; its reference is the number.
    pub(super) fn into_record(self) -> Result<Option<JournalEntry>, Unreadable> {
        if json::non_empty(self.deleted_at).is_some() {
            return Ok(None);
        }
        let posted_on = json::required_date(self.date.as_deref(), "date")?;
        Ok(Some(JournalEntry {
            journal_number: json::non_empty(self.reference),
            posted_on,
            description: json::non_empty(self.description),
            source: None,
            journal_lines: self
                .journal_lines
                .into_iter()
                .map(|line| JournalLine {
                    account_ref: Link::account(line.ledger_account),
                    description: json::non_empty(line.details),
                    net_amount: money(line.debit) - money(line.credit),
                    currency: None,
                })
                .collect(),
            created_on: json::timestamp(self.created_at.as_deref()),
            source_modified_date: json::timestamp(self.updated_at.as_deref()),
            journal_entry_id: self.id,
        }))
    }
}
