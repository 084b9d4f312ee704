//! Zoho Books' journals (`GET /journals`, each read whole with `GET
//! /journals/{id}`) and how they become our journal entries: Zoho's API
//! lists manual journals only (its ledger is per account), each line a
//! debit or a credit of one account. Sources: `NOTES.md`, "Accounting model".

use serde::Deserialize;
use serde_json::value::RawValue;

use super::mapping::PageContext;
use crate::data::accounts::AccountRef;
use crate::data::journal_entries::{JournalEntry, JournalLine};
use crate::platforms::kit::json::{self, Amount, money};
use crate::platforms::kit::records::{Each, Keyed, Unreadable};

/// A page of `GET /journals`: the journals' ids.
#[derive(Deserialize)]
pub(super) struct JournalsPage {
    pub(super) code: Option<i64>,
    pub(super) message: Option<String>,
    #[serde(default)]
    pub(super) journals: Each<JournalId>,
    pub(super) page_context: Option<PageContext>,
}

/// What tributary reads of a journal in a list: its id.
#[derive(Deserialize)]
pub(super) struct JournalId {
    pub(super) journal_id: String,
}

impl Keyed for JournalId {
    const ID: &'static str = "/journal_id";
}

/// `GET /journals/{journal_id}`'s answer.
#[derive(Deserialize)]
pub(super) struct JournalAnswer {
    pub(super) code: Option<i64>,
    pub(super) message: Option<String>,
    pub(super) journal: Option<Box<RawValue>>,
}

impl Keyed for ZohoJournal {
    const ID: &'static str = "/journal_id";
}

/// A journal as Zoho writes it on its own.
#[derive(Deserialize)]
pub(super) struct ZohoJournal {
    journal_id: String,
    entry_number: Option<String>,
    reference_number: Option<String>,
    notes: Option<String>,
    journal_date: Option<String>,
    currency_code: Option<String>,
    #[serde(default, deserialize_with = "json::list_or_null")]
    line_items: Vec<ZohoJournalLine>,
    created_time: Option<String>,
    last_modified_time: Option<String>,
}

/// One line of a journal.
#[derive(Deserialize)]
struct ZohoJournalLine {
    account_id: Option<String>,
    account_name: Option<String>,
    description: Option<String>,
    debit_or_credit: Option<String>,
    amount: Option<Amount>,
}

impl ZohoJournal {
    /// Our journal entry: a `debit` line positive, a `credit` line
    /// negative, in the journal's currency; the notes, else the reference,
    /// describe it. A line that is neither cannot be signed, so the
    /// journal cannot be read.
    pub(super) fn into_record(self) -> Result<JournalEntry, Unreadable> {
        let posted_on = json::required_date(self.journal_date.as_deref(), "journal_date")?;
        let currency = json::non_empty(self.currency_code);
        let journal_lines = self
            .line_items
            .into_iter()
            .enumerate()
            .map(|(at, line)| {
                let amount = money(line.amount);
                let net_amount = match line.debit_or_credit.as_deref() {
                    Some("debit") => amount,
                    Some("credit") => -amount,
                    _ => {
                        return Err(Unreadable::field(
                            format!("line_items[{at}].debit_or_credit"),
                            "is neither debit nor credit",
                        ));
                    }
                };
                Ok(JournalLine {
                    account_ref: AccountRef::to(
                        json::non_empty(line.account_id),
                        json::non_empty(line.account_name),
                    ),
                    description: json::non_empty(line.description),
                    net_amount,
                    currency: currency.clone(),
                })
            })
            .collect::<Result<Vec<_>, _>>()?;
        Ok(JournalEntry {
            journal_number: json::non_empty(self.entry_number),
            posted_on,
            description: json::non_empty(self.notes)
                .or_else(|| json::non_empty(self.reference_number)),
            source: None,
            journal_lines,
            created_on: json::timestamp(self.created_time.as_deref()),
            source_modified_date: json::timestamp(self.last_modified_time.as_deref()),
            journal_entry_id: self.journal_id,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn debits_are_positive_credits_negative_and_an_unsigned_line_is_unreadable() {
        let journal: ZohoJournal = serde_json::from_str(
            r#"{"journal_id": "1", "journal_date": "2026-11-04", "currency_code": "EUR",
                "line_items": [
                  {"account_id": "10", "debit_or_credit": "debit", "amount": 5000},
                  {"account_id": "20", "debit_or_credit": "credit", "amount": 5000.00}]}"#,
        )
        .expect("a journal");
        let entry = journal.into_record().expect("readable");
        let amounts: Vec<serde_json::Value> = entry
            .journal_lines
            .iter()
            .map(|line| serde_json::json!(line.net_amount))
            .collect();
        assert_eq!(
            amounts,
            [serde_json::json!("5000.00"), serde_json::json!("-5000.00")]
        );
        assert_eq!(entry.balance(), crate::data::money::Money(0));

        let unsigned: ZohoJournal = serde_json::from_str(
            r#"{"journal_id": "2", "journal_date": "2026-11-04",
                "line_items": [{"account_id": "10", "amount": 1}]}"#,
        )
        .expect("a journal");
        let problem = unsigned.into_record().expect_err("unsigned");
        assert_eq!(
            problem.field.as_deref(),
            Some("line_items[0].debit_or_credit")
        );
    }
}
