//! QuickBooks Online's journal entries (the `JournalEntry` entity: the
//! journals entered by hand, the only ledger its API lists) and how they
//! become ours, signed by `PostingType`.

use serde::Deserialize;

use super::mapping::Reference;
use crate::data::accounts::AccountRef;
use crate::data::journal_entries::{JournalEntry, JournalLine};
use crate::platforms::kit::json::{self, Amount, money};
use crate::platforms::kit::records::{Each, Keyed, Unreadable};

/// Journal entries a query found.
#[derive(Deserialize, Default)]
pub(super) struct JournalEntryList {
    #[serde(rename = "JournalEntry", default)]
    pub(super) journal_entry: Each<QboJournalEntry>,
}

/// A journal entry as QuickBooks writes it (the `JournalEntry` entity: the
/// journals entered by hand; the ledger behind other documents is only in
/// reports).
#[derive(Deserialize)]
#[serde(rename_all = "PascalCase")]
pub(super) struct QboJournalEntry {
    id: String,
    doc_number: Option<String>,
    txn_date: Option<String>,
    currency_ref: Option<Reference>,
    #[serde(default)]
    line: Vec<QboJournalLine>,
    private_note: Option<String>,
    meta_data: Option<CreatedAndUpdated>,
}

impl Keyed for QboJournalEntry {
    const ID: &'static str = "/Id";
}

#[derive(Deserialize)]
#[serde(rename_all = "PascalCase")]
struct CreatedAndUpdated {
    create_time: Option<String>,
    last_updated_time: Option<String>,
}

#[derive(Deserialize)]
#[serde(rename_all = "PascalCase")]
struct QboJournalLine {
    description: Option<String>,
    amount: Option<Amount>,
    journal_entry_line_detail: Option<JournalLineDetail>,
}

#[derive(Deserialize)]
#[serde(rename_all = "PascalCase")]
struct JournalLineDetail {
    posting_type: Option<String>,
    account_ref: Option<Reference>,
}

impl QboJournalEntry {
    /// Our journal entry; one without a readable `TxnDate`, or with a line
    /// posted neither `Debit` nor `Credit`, cannot be read (its sign would
    /// be a guess). `Amount` is unsigned: a debit is positive, a credit
    /// negative.
    pub(super) fn into_record(self) -> Result<JournalEntry, Unreadable> {
        let posted_on = self
            .txn_date
            .as_deref()
            .and_then(json::date)
            .ok_or_else(|| Unreadable::field("TxnDate", "is missing or not a date"))?;
        let currency = self.currency_ref.and_then(|currency| currency.value);
        let journal_lines = self
            .line
            .into_iter()
            .enumerate()
            .filter_map(|(at, line)| {
                let detail = line.journal_entry_line_detail?;
                Some((at, line.description, line.amount, detail))
            })
            .map(|(at, description, amount, detail)| {
                let amount = money(amount);
                let net_amount = match detail.posting_type.as_deref() {
                    Some("Debit") => amount,
                    Some("Credit") => -amount,
                    _ => {
                        return Err(Unreadable::field(
                            format!("Line[{at}].JournalEntryLineDetail.PostingType"),
                            "is neither Debit nor Credit",
                        ));
                    }
                };
                Ok(JournalLine {
                    account_ref: detail
                        .account_ref
                        .and_then(|account| AccountRef::to(account.value, account.name)),
                    description: json::non_empty(description),
                    net_amount,
                    currency: currency.clone(),
                })
            })
            .collect::<Result<Vec<_>, _>>()?;
        let (created, updated) = self.meta_data.map_or((None, None), |meta| {
            (meta.create_time, meta.last_updated_time)
        });
        Ok(JournalEntry {
            journal_number: json::non_empty(self.doc_number),
            posted_on,
            description: json::non_empty(self.private_note),
            source: None,
            journal_lines,
            created_on: json::timestamp(created.as_deref()),
            source_modified_date: json::timestamp(updated.as_deref()),
            journal_entry_id: self.id,
        })
    }
}
