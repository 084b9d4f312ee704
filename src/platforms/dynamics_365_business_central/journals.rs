//! Business Central's general ledger as our journal entries: the G/L
//! entries of `generalLedgerEntries` (page 30018, in `Entry No.` order),
//! asked for by `entryNumber gt {cursor}` rather than by `@odata.nextLink`
//! so that the entry a page ends in is held back whole for the next page.
//! The page has no transaction number, so consecutive G/L entries with the
//! same posting date, document type and document number make one entry
//! (how a journal balances when its template forces document balance, the
//! default); a group whose debits and credits differ is a record issue, not
//! stored. Amounts are in the company's currency. Sources: `NOTES.md`,
//! "Accounting model", B32–B34.

use chrono::{DateTime, NaiveDate, Utc};
use serde::Deserialize;

use super::BusinessCentralAuthorization;
use super::connector::BusinessCentralConnector;
use super::mapping::{EMPTY_GUID, member};
use crate::data::accounts::AccountRef;
use crate::data::journal_entries::{JournalEntries, JournalEntry, JournalLine, JournalSource};
use crate::data::money::Money;
use crate::platforms::connector::{Connector, ConnectorError, Fetched, RecordIssue, whole_syncs};
use crate::platforms::kit::json::{self, Amount, money};
use crate::platforms::kit::paging::{LedgerWalk, NextLink};
use crate::platforms::kit::records::{Each, Keyed};
use crate::timestamp::Timestamp;

/// The G/L entry fields read.
const FIELDS: &str = "entryNumber,postingDate,documentNumber,documentType,accountId,\
description,debitAmount,creditAmount,lastModifiedDateTime";

/// A G/L entry as Business Central writes it (B32).
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(super) struct GlEntry {
    entry_number: u64,
    posting_date: Option<NaiveDate>,
    document_number: Option<String>,
    /// `NAV.genJournalDocumentType`'s member name (`Credit_x0020_Memo`,
    /// `_x0020_` for none).
    document_type: Option<String>,
    account_id: Option<String>,
    description: Option<String>,
    debit_amount: Option<Amount>,
    credit_amount: Option<Amount>,
    last_modified_date_time: Option<DateTime<Utc>>,
}

impl Keyed for GlEntry {
    const ID: &'static str = "/entryNumber";
}

impl GlEntry {
    /// What makes consecutive entries one journal entry: the posting
    /// date, the document type and the document number.
    fn group(&self) -> String {
        format!(
            "{}|{}|{}",
            self.posting_date
                .map(|date| date.to_string())
                .unwrap_or_default(),
            self.document_type
                .as_deref()
                .map(member)
                .unwrap_or_default(),
            self.document_number.as_deref().unwrap_or_default()
        )
    }

    /// The line: a debit positive, a credit negative.
    fn line(&self) -> JournalLine {
        let account_id = json::non_empty(self.account_id.clone()).filter(|id| id != EMPTY_GUID);
        JournalLine {
            account_ref: AccountRef::to(account_id, None),
            description: json::non_empty(self.description.clone()),
            net_amount: money(self.debit_amount) - money(self.credit_amount),
            currency: None,
        }
    }
}

/// The G/L entries' collection page.
#[derive(Debug, Deserialize)]
struct GlPage {
    value: Each<GlEntry>,
    #[serde(rename = "@odata.nextLink")]
    next_link: Option<String>,
}

/// A page of the ledger made ours.
#[derive(Debug, Default)]
pub(super) struct LedgerPage {
    pub(super) entries: Vec<JournalEntry>,
    pub(super) issues: Vec<RecordIssue>,
    pub(super) next: Option<String>,
}

/// A page's G/L entries (`more` when Business Central has another page)
/// grouped into journal entries. With more to come, the page's last group
/// is held back: the next page starts after the entry before it. A page
/// that is one group alone is reported and passed (its later entries
/// skipped).
pub(super) fn entries_of(walk: &LedgerWalk, mut lines: Vec<GlEntry>, more: bool) -> LedgerPage {
    lines.sort_by_key(|line| line.entry_number);
    let highest = lines.last().map_or(walk.after, |line| line.entry_number);
    let mut skip = walk.skip.clone();
    let mut issues = Vec::new();
    if more {
        let last_group = lines.last().map(GlEntry::group);
        let cut = lines
            .iter()
            .rposition(|line| Some(line.group()) != last_group)
            .map_or(0, |before| before + 1);
        if cut == 0 {
            // One group fills the page: it cannot be read whole this way.
            if let Some(group) = last_group.filter(|group| skip.as_ref() != Some(group)) {
                issues.push(RecordIssue {
                    record_id: lines.first().map(|line| line.entry_number.to_string()),
                    field: None,
                    reason: "the entry has more G/L entries than a page of Business Central's API"
                        .to_owned(),
                });
                skip = Some(group);
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
    let after = lines.last().map_or(walk.after, |line| line.entry_number);
    lines.retain(|line| skip.as_ref() != Some(&line.group()));
    let mut entries = Vec::new();
    for group in lines.chunk_by(|one, next| one.group() == next.group()) {
        match entry(group) {
            Ok(entry) => entries.push(entry),
            Err(reason) => issues.push(RecordIssue {
                record_id: group.first().map(|line| line.entry_number.to_string()),
                field: Some("debitAmount".to_owned()),
                reason,
            }),
        }
    }
    // Past the skipped group, nothing of it can come again.
    let skip = skip.filter(|_| after == walk.after);
    let next = more.then(|| LedgerWalk { after, skip }.cursor());
    LedgerPage {
        entries,
        issues,
        next,
    }
}

/// Business Central's document type as our journal source's type: its
/// caption, `Other` for the blank member.
fn source_type(document_type: Option<&str>) -> String {
    let caption = document_type.map(member).unwrap_or_default();
    match caption.trim() {
        "" => "Other".to_owned(),
        caption => caption.to_owned(),
    }
}

/// One journal entry of a group of G/L entries, in entry-number order;
/// why not, when they do not balance or carry no posting date.
fn entry(lines: &[GlEntry]) -> Result<JournalEntry, String> {
    let first = lines.first().ok_or("the entry has no G/L entries")?;
    let journal_lines: Vec<JournalLine> = lines.iter().map(GlEntry::line).collect();
    let balance = journal_lines
        .iter()
        .fold(Money(0), |sum, line| sum + line.net_amount);
    if balance != Money(0) {
        return Err("the entry's G/L entries' debits and credits differ".to_owned());
    }
    let posted_on = first
        .posting_date
        .ok_or("the G/L entry's postingDate is missing")?;
    Ok(JournalEntry {
        journal_entry_id: first.entry_number.to_string(),
        journal_number: json::non_empty(first.document_number.clone()),
        posted_on,
        description: lines
            .iter()
            .find_map(|line| json::non_empty(line.description.clone())),
        source: Some(JournalSource {
            source_type: source_type(first.document_type.as_deref()),
            // The page does not say whether an invoice is a sales or a purchase document.
            id: None,
        }),
        journal_lines,
        created_on: None,
        source_modified_date: lines
            .iter()
            .filter_map(|line| line.last_modified_date_time)
            .max()
            .map(Timestamp),
    })
}

impl BusinessCentralConnector {
    /// A page of the general ledger as journal entries, whole each sync:
    /// whether posted entries are ever changed in place is not documented
    /// (`NOTES.md`), so the daily full fetch is not traded for a cursor.
    async fn ledger(
        &self,
        credentials: &BusinessCentralAuthorization,
        cursor: Option<String>,
    ) -> Result<Fetched<JournalEntry>, ConnectorError> {
        let walk = LedgerWalk::at(cursor.as_deref(), 0, Self::PLATFORM)?;
        let call = self
            .list(
                credentials,
                "generalLedgerEntries",
                None,
                "a page of G/L entries",
                NextLink::First,
                None,
            )?
            .query("$filter", format!("entryNumber gt {}", walk.after))
            .query("$select", FIELDS);
        let body: GlPage = self.http.json(&call).await?;
        let read = body.value.read(|line| Ok(Some(line)));
        let page = entries_of(&walk, read.records, body.next_link.is_some());
        let mut fetched = Fetched::all(page.entries, page.next);
        fetched.issues = read.issues.into_iter().chain(page.issues).collect();
        Ok(fetched)
    }
}

whole_syncs!(BusinessCentralConnector; JournalEntries => ledger);

#[cfg(test)]
mod tests {
    use super::*;

    /// A G/L entry as Business Central writes it (read from text: amounts
    /// are read from the number's own digits).
    fn line(number: u64, document: &str, debit: &str, credit: &str) -> GlEntry {
        let text = format!(
            r#"{{"entryNumber": {number}, "postingDate": "2026-03-31", "documentNumber": "{document}",
                "documentType": "Invoice", "accountId": "a-{number}", "debitAmount": {debit},
                "creditAmount": {credit}, "lastModifiedDateTime": "2026-04-01T08:00:00Z"}}"#
        );
        serde_json::from_str(&text).expect("a G/L entry")
    }

    #[test]
    fn the_group_a_page_ends_in_is_held_back_for_the_next_page() {
        let walk = LedgerWalk::at(None, 0, "Business Central").expect("a walk");
        let lines = vec![
            line(1, "A", "100.50", "0"),
            line(2, "A", "0", "100.50"),
            line(3, "B", "10", "0"),
        ];
        let page = entries_of(&walk, lines, true);
        assert_eq!(page.entries.len(), 1);
        assert_eq!(page.entries[0].balance(), Money(0));
        assert_eq!(
            page.entries[0].journal_lines[0].net_amount,
            Money(1_005_000),
            "in ten-thousandths"
        );
        assert_eq!(
            page.entries[0].journal_lines[1].net_amount,
            Money(-1_005_000)
        );
        assert_eq!(page.next.as_deref(), Some("2"));
        assert!(page.issues.is_empty());
    }

    #[test]
    fn a_group_that_does_not_balance_is_an_issue_and_the_last_page_ends() {
        let walk = LedgerWalk::at(Some("2"), 0, "Business Central").expect("a walk");
        let lines = vec![
            line(3, "B", "10", "0"),
            line(4, "B", "0", "9.99"),
            line(5, "C", "1", "0"),
            line(6, "C", "0", "1"),
        ];
        let page = entries_of(&walk, lines, false);
        assert_eq!(page.entries.len(), 1);
        assert_eq!(page.entries[0].journal_entry_id, "5");
        assert_eq!(page.issues.len(), 1);
        assert_eq!(page.issues[0].record_id.as_deref(), Some("3"));
        assert_eq!(page.next, None);
    }

    #[test]
    fn a_group_longer_than_a_page_is_reported_once_and_passed() {
        let walk = LedgerWalk::at(None, 0, "Business Central").expect("a walk");
        let page = entries_of(
            &walk,
            vec![line(1, "X", "1", "0"), line(2, "X", "2", "0")],
            true,
        );
        assert_eq!(page.issues.len(), 1);
        let next = page.next.expect("more");
        assert_eq!(next, "2 2026-03-31|Invoice|X");
        let walk = LedgerWalk::at(Some(&next), 0, "Business Central").expect("a walk");
        let page = entries_of(&walk, vec![line(3, "X", "0", "2")], true);
        assert!(page.issues.is_empty(), "reported once");
        assert_eq!(page.next.as_deref(), Some("3 2026-03-31|Invoice|X"));
        let walk = LedgerWalk::at(page.next.as_deref(), 0, "Business Central").expect("a walk");
        let page = entries_of(
            &walk,
            vec![
                line(4, "X", "0", "1"),
                line(5, "Y", "1", "0"),
                line(6, "Y", "0", "1"),
            ],
            false,
        );
        assert!(page.issues.is_empty());
        assert_eq!(page.entries.len(), 1);
        assert_eq!(page.entries[0].journal_entry_id, "5");
    }

    #[test]
    fn the_blank_document_type_is_other() {
        assert_eq!(source_type(Some("_x0020_")), "Other");
        assert_eq!(source_type(Some("Credit_x0020_Memo")), "Credit Memo");
        assert_eq!(source_type(None), "Other");
    }
}
