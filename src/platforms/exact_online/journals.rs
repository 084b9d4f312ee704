//! Exact's general ledger as our journal entries: the transaction lines of
//! `sync/Financial/TransactionLines` (1,000 a page, in row-version order)
//! grouped by `EntryID` into one entry each, `AmountDC` signed as Exact
//! writes it (debit positive, credit negative), in the division's currency.
//! A page is asked for by `Timestamp` rather than by `__next`, so that the
//! entry the page ends in is held back whole for the next page; an entry
//! whose lines do not add up to zero is a record issue, not stored.
//! Budget lines (`Type` 3000) are not postings and are left out. Sources:
//! `NOTES.md`, "Accounting model".

use std::collections::BTreeMap;

use serde::Deserialize;

use super::chart::{account_ref, modified};
use super::sync_api::Counter;
use crate::data::journal_entries::{JournalEntry, JournalLine, JournalSource};
use crate::data::money::Money;
use crate::platforms::connector::RecordIssue;
use crate::platforms::kit::json::{self, Rounded, rounded};
use crate::platforms::kit::paging::LedgerWalk;
use crate::platforms::kit::records::Keyed;

/// The transaction line fields read.
pub(super) const TRANSACTION_LINE_FIELDS: &str = "Timestamp,ID,EntryID,EntryNumber,Date,\
LineNumber,GLAccount,GLAccountDescription,AmountDC,Description,JournalCode,Type,Created,Modified";

/// Exact's transaction type of budget lines: not postings.
const BUDGET: i64 = 3000;

/// A transaction line as Exact writes it.
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub(super) struct TransactionLine {
    timestamp: Counter,
    #[serde(rename = "EntryID")]
    entry_id: Option<String>,
    entry_number: Option<i64>,
    date: Option<String>,
    line_number: Option<i64>,
    #[serde(rename = "GLAccount")]
    gl_account: Option<String>,
    #[serde(rename = "GLAccountDescription")]
    gl_account_description: Option<String>,
    #[serde(rename = "AmountDC")]
    amount_dc: Option<Rounded>,
    description: Option<String>,
    journal_code: Option<String>,
    #[serde(rename = "Type")]
    kind: Option<i64>,
    created: Option<String>,
    modified: Option<String>,
}

impl Keyed for TransactionLine {
    const ID: &'static str = "/ID";
}

/// A page of the ledger made ours.
#[derive(Debug, Default)]
pub(super) struct LedgerPage {
    pub(super) entries: Vec<JournalEntry>,
    pub(super) issues: Vec<RecordIssue>,
    pub(super) next: Option<String>,
}

/// A page's lines (`lines`, readable; `more` when Exact has another page)
/// grouped into entries. With more to come, the lines from the first line
/// of the page's last entry on are held back: the next page starts after
/// the last line kept. A page that is one entry alone is reported and
/// passed (its later lines skipped).
pub(super) fn entries_of(
    walk: &LedgerWalk,
    mut lines: Vec<TransactionLine>,
    more: bool,
) -> LedgerPage {
    lines.sort_by_key(|line| line.timestamp);
    // Read before budget lines go: a page of nothing else still moves on.
    let highest = lines.last().map_or(walk.after, |line| line.timestamp.0);
    lines.retain(|line| line.kind != Some(BUDGET));
    let mut skip = walk.skip.clone();
    let mut issues = Vec::new();
    if more {
        let last_entry = lines.last().and_then(|line| line.entry_id.clone());
        let cut = lines
            .iter()
            .position(|line| line.entry_id == last_entry)
            .unwrap_or(lines.len());
        if cut == 0 {
            // One entry fills the page: it cannot be read whole this way.
            if let Some(entry) = last_entry.filter(|entry| skip.as_ref() != Some(entry)) {
                issues.push(RecordIssue {
                    record_id: Some(entry.clone()),
                    field: None,
                    reason: "the entry has more lines than a page of Exact's sync API".to_owned(),
                });
                skip = Some(entry);
            }
            let next = LedgerWalk {
                after: highest,
                skip,
            };
            return LedgerPage {
                entries: Vec::new(),
                issues,
                next: Some(next.cursor()),
            };
        }
        lines.truncate(cut);
    }
    let after = lines.last().map_or(walk.after, |line| line.timestamp.0);
    let mut groups: BTreeMap<String, Vec<TransactionLine>> = BTreeMap::new();
    for line in lines {
        match line.entry_id.clone() {
            Some(entry) if skip.as_ref() == Some(&entry) => {}
            Some(entry) => groups.entry(entry).or_default().push(line),
            None => issues.push(RecordIssue {
                record_id: None,
                field: Some("EntryID".to_owned()),
                reason: "a transaction line names no entry".to_owned(),
            }),
        }
    }
    let mut entries = Vec::new();
    for (entry_id, lines) in groups {
        match entry(entry_id.clone(), lines) {
            Ok(entry) => entries.push(entry),
            Err(reason) => issues.push(RecordIssue {
                record_id: Some(entry_id),
                field: Some("AmountDC".to_owned()),
                reason,
            }),
        }
    }
    let next = more.then(|| LedgerWalk { after, skip }.cursor());
    LedgerPage {
        entries,
        issues,
        next,
    }
}

/// Exact's kind of entry (`Type`), as our journal source's type.
fn source_type(kind: i64) -> String {
    match kind {
        10 => "OpeningBalance".to_owned(),
        20 => "SalesEntry".to_owned(),
        21 => "SalesCreditNote".to_owned(),
        30 => "PurchaseEntry".to_owned(),
        31 => "PurchaseCreditNote".to_owned(),
        40 => "CashFlow".to_owned(),
        50 => "VATReturn".to_owned(),
        90 => "Other".to_owned(),
        other => format!("Type{other}"),
    }
}

/// One entry of its lines, in line-number order; why not, when they do not
/// balance or carry no date.
fn entry(entry_id: String, mut lines: Vec<TransactionLine>) -> Result<JournalEntry, String> {
    lines.sort_by_key(|line| line.line_number);
    let journal_lines: Vec<JournalLine> = lines
        .iter()
        .map(|line| JournalLine {
            account_ref: account_ref(line.gl_account.clone(), line.gl_account_description.clone()),
            description: json::non_empty(line.description.clone()),
            net_amount: rounded(line.amount_dc),
            currency: None,
        })
        .collect();
    let balance = journal_lines
        .iter()
        .fold(Money(0), |sum, line| sum + line.net_amount);
    if balance != Money(0) {
        return Err("the entry's lines do not add up to zero".to_owned());
    }
    let first = lines.first().ok_or("the entry has no lines")?;
    let posted_on = first
        .date
        .as_deref()
        .and_then(json::xero_date)
        .ok_or("the entry's Date is missing or not a date")?;
    let modified_at = lines
        .iter()
        .filter_map(|line| modified(line.modified.as_deref()))
        .max();
    Ok(JournalEntry {
        journal_number: first.entry_number.map(|number| number.to_string()),
        posted_on,
        description: lines
            .iter()
            .find_map(|line| json::non_empty(line.description.clone()))
            .or_else(|| json::non_empty(first.journal_code.clone())),
        source: first.kind.map(|kind| JournalSource {
            source_type: source_type(kind),
            id: Some(entry_id.clone()),
        }),
        journal_lines,
        created_on: modified(first.created.as_deref()),
        source_modified_date: modified_at,
        journal_entry_id: entry_id,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A line as Exact writes it (read from text: amounts are read from
    /// the number's own digits).
    fn line(timestamp: u64, entry: &str, amount: &str) -> TransactionLine {
        let text = format!(
            r#"{{"Timestamp": "{timestamp}", "EntryID": "{entry}", "Date": "/Date(1790985600000)/",
                "LineNumber": {timestamp}, "GLAccount": "g", "AmountDC": {amount}, "Type": 90}}"#
        );
        serde_json::from_str(&text).expect("a line")
    }

    #[test]
    fn the_entry_a_page_ends_in_is_held_back_for_the_next_page() {
        let walk = LedgerWalk::at(None, 1, "Exact Online").expect("a walk");
        let lines = vec![
            line(2, "a", "100.5"),
            line(3, "a", "-100.5"),
            line(4, "b", "10"),
        ];
        let page = entries_of(&walk, lines, true);
        assert_eq!(page.entries.len(), 1);
        assert_eq!(page.entries[0].balance(), Money(0));
        assert_eq!(page.next.as_deref(), Some("3"));
        assert!(page.issues.is_empty());
    }

    #[test]
    fn an_entry_that_does_not_balance_is_an_issue_and_the_last_page_ends() {
        let walk = LedgerWalk::at(Some("3"), 1, "Exact Online").expect("a walk");
        let lines = vec![
            line(4, "b", "10"),
            line(5, "b", "-9.99"),
            line(6, "c", "1"),
            line(7, "c", "-1"),
        ];
        let page = entries_of(&walk, lines, false);
        assert_eq!(page.entries.len(), 1);
        assert_eq!(page.issues.len(), 1);
        assert_eq!(page.issues[0].record_id.as_deref(), Some("b"));
        assert_eq!(page.next, None);
    }

    #[test]
    fn a_page_of_budget_lines_alone_still_moves_on() {
        let walk = LedgerWalk::at(None, 1, "Exact Online").expect("a walk");
        let mut budget = line(9, "z", "5");
        budget.kind = Some(BUDGET);
        let page = entries_of(&walk, vec![budget], true);
        assert!(page.entries.is_empty() && page.issues.is_empty());
        assert_eq!(page.next.as_deref(), Some("9"));
    }

    #[test]
    fn an_entry_longer_than_a_page_is_reported_once_and_passed() {
        let walk = LedgerWalk::at(None, 1, "Exact Online").expect("a walk");
        let page = entries_of(&walk, vec![line(2, "x", "1"), line(3, "x", "2")], true);
        assert_eq!(page.issues.len(), 1);
        assert_eq!(page.next.as_deref(), Some("3 x"));
        let walk = LedgerWalk::at(page.next.as_deref(), 1, "Exact Online").expect("a walk");
        let page = entries_of(
            &walk,
            vec![line(4, "x", "-3"), line(5, "y", "1"), line(6, "y", "-1")],
            false,
        );
        assert!(page.issues.is_empty());
        assert_eq!(page.entries.len(), 1);
    }
}
