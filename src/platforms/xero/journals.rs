//! Xero's general ledger (`GET /api.xro/2.0/Journals`) and how it becomes
//! our journal entries. Xero posts a journal for every document (and a new,
//! reversing one when a document is voided or changed: journals are never
//! changed or deleted), numbered in order; lines carry signed net amounts
//! in the base currency, debits positive, that balance. Sources: `NOTES.md`.

use serde::Deserialize;

use super::mapping::updated;
use crate::data::accounts::AccountRef;
use crate::data::journal_entries::{JournalEntry, JournalLine, JournalSource};
use crate::platforms::kit::json::{self, Amount, money};
use crate::platforms::kit::records::{Each, Keyed, Unreadable};

/// Journals Xero returns per call (its document: "up to 100").
pub(super) const JOURNALS_PER_CALL: usize = 100;

/// `GET /api.xro/2.0/Journals?offset=N`: the journals numbered above `N`.
#[derive(Deserialize)]
#[serde(rename_all = "PascalCase")]
pub(super) struct JournalsAnswer {
    pub(super) journals: Each<XeroJournal>,
}

/// A journal as Xero writes it (`Journal` in Xero's OpenAPI document).
#[derive(Deserialize)]
#[serde(rename_all = "PascalCase")]
pub(super) struct XeroJournal {
    #[serde(rename = "JournalID")]
    journal_id: String,
    journal_date: Option<String>,
    pub(super) journal_number: Option<u64>,
    #[serde(rename = "CreatedDateUTC")]
    created_date_utc: Option<String>,
    reference: Option<String>,
    #[serde(rename = "SourceID")]
    source_id: Option<String>,
    source_type: Option<String>,
    #[serde(default, deserialize_with = "json::list_or_null")]
    journal_lines: Vec<XeroJournalLine>,
}

impl Keyed for XeroJournal {
    const ID: &'static str = "/JournalID";
}

#[derive(Deserialize)]
#[serde(rename_all = "PascalCase")]
struct XeroJournalLine {
    #[serde(rename = "AccountID")]
    account_id: Option<String>,
    account_name: Option<String>,
    description: Option<String>,
    net_amount: Option<Amount>,
}

impl XeroJournal {
    /// Our journal entry; one without a readable `JournalDate` cannot be
    /// read. Xero's `SourceType` (`ACCREC`, `ACCPAYPAYMENT`, `MANJOURNAL`)
    /// and `SourceID` name the document that posted it.
    pub(super) fn into_record(self) -> Result<JournalEntry, Unreadable> {
        let posted_on = self
            .journal_date
            .as_deref()
            .and_then(json::xero_date)
            .ok_or_else(|| Unreadable::field("JournalDate", "is missing or not a date"))?;
        let created = updated(self.created_date_utc.as_deref());
        Ok(JournalEntry {
            journal_number: self.journal_number.map(|number| number.to_string()),
            posted_on,
            description: json::non_empty(self.reference),
            source: json::non_empty(self.source_type).map(|source_type| JournalSource {
                source_type,
                id: json::non_empty(self.source_id),
            }),
            journal_lines: self
                .journal_lines
                .into_iter()
                .map(|line| JournalLine {
                    account_ref: AccountRef::to(
                        json::non_empty(line.account_id),
                        json::non_empty(line.account_name),
                    ),
                    description: json::non_empty(line.description),
                    net_amount: money(line.net_amount),
                    // Journal amounts are in the organisation's base currency.
                    currency: None,
                })
                .collect(),
            created_on: created,
            // A journal never changes after it is posted.
            source_modified_date: created,
            journal_entry_id: self.journal_id,
        })
    }
}
