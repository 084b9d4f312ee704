//! NetSuite's general ledger as journal entries: every posting transaction
//! (`transaction` with `posting = 'T'`, of any type) is one entry, its lines
//! the transaction's accounting lines (`transactionaccountingline`) in the
//! primary accounting book, each signed debit less credit, in the base
//! currency. Sources: `NOTES.md`, "Accounting model".

use std::collections::HashMap;

use serde::Deserialize;

use super::chart::account_ref;
use crate::data::journal_entries::{JournalEntry, JournalLine, JournalSource};
use crate::data::money::Money;
use crate::platforms::kit::json::{self, Amount, money};
use crate::platforms::kit::records::{Keyed, Unreadable};

impl Keyed for NsPosting {
    const ID: &'static str = "/id";
}

/// An accounting line is named by its transaction: an unreadable line makes
/// the entry unreadable.
impl Keyed for NsAccountingLine {
    const ID: &'static str = "/transaction";
}

/// A row of the posting query: a transaction that posts to the ledger.
#[derive(Deserialize)]
pub(super) struct NsPosting {
    pub(super) id: String,
    tranid: Option<String>,
    #[serde(rename = "type")]
    transaction_type: Option<String>,
    trandate: Option<String>,
    memo: Option<String>,
    createddate: Option<String>,
    lastmodifieddate: Option<String>,
}

/// A row of the accounting line query, in the primary book (it carries no
/// text of its own: a line's memo is on `transactionline`, not joined).
#[derive(Deserialize)]
pub(super) struct NsAccountingLine {
    pub(super) transaction: String,
    account: Option<String>,
    accountname: Option<String>,
    debit: Option<Amount>,
    credit: Option<Amount>,
}

/// The accounting lines of a page, by transaction id.
pub(super) fn lines_by_posting(
    rows: Vec<NsAccountingLine>,
) -> HashMap<String, Vec<NsAccountingLine>> {
    let mut by_posting: HashMap<String, Vec<NsAccountingLine>> = HashMap::new();
    for row in rows {
        by_posting
            .entry(row.transaction.clone())
            .or_default()
            .push(row);
    }
    by_posting
}

impl NsPosting {
    /// Our journal entry in the base `currency`, the transaction itself its
    /// source (NetSuite's type, `CustInvc` or `Journal`). Lines of zero are
    /// left out; an entry whose lines do not add up to zero cannot be read,
    /// and one without lines (a transaction that posted nothing to the
    /// primary book) is left out.
    pub(super) fn into_record(
        self,
        lines: Option<Vec<NsAccountingLine>>,
        currency: Option<&str>,
    ) -> Result<Option<JournalEntry>, Unreadable> {
        let posted_on = json::required_date(self.trandate.as_deref(), "trandate")?;
        let journal_lines: Vec<JournalLine> = lines
            .unwrap_or_default()
            .into_iter()
            .map(|line| JournalLine {
                net_amount: money(line.debit) - money(line.credit),
                account_ref: account_ref(line.account, line.accountname),
                description: None,
                currency: currency.map(str::to_owned),
            })
            .filter(|line| line.net_amount.0 != 0)
            .collect();
        if journal_lines.is_empty() {
            return Ok(None);
        }
        let imbalance = journal_lines
            .iter()
            .fold(Money(0), |sum, line| sum + line.net_amount);
        if imbalance.0 != 0 {
            return Err(Unreadable::field("journalLines", "do not balance"));
        }
        Ok(Some(JournalEntry {
            journal_number: json::non_empty(self.tranid),
            posted_on,
            description: json::non_empty(self.memo),
            source: json::non_empty(self.transaction_type).map(|source_type| JournalSource {
                source_type,
                id: Some(self.id.clone()),
            }),
            journal_lines,
            created_on: json::timestamp(self.createddate.as_deref()),
            source_modified_date: json::timestamp(self.lastmodifieddate.as_deref()),
            journal_entry_id: self.id,
        }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn posting() -> NsPosting {
        serde_json::from_str(r#"{"id":"7","type":"Journal","trandate":"2026-03-01"}"#)
            .expect("a posting")
    }

    fn line(account: &str, debit: &str, credit: &str) -> NsAccountingLine {
        serde_json::from_str(&format!(
            r#"{{"transaction":"7","account":"{account}","debit":"{debit}","credit":"{credit}"}}"#
        ))
        .expect("a line")
    }

    #[test]
    fn debits_are_positive_credits_negative_and_zero_lines_are_left_out() {
        let entry = posting()
            .into_record(
                Some(vec![
                    line("1", "100.00", "0"),
                    line("2", "0", "100.00"),
                    line("3", "0", "0"),
                ]),
                Some("USD"),
            )
            .expect("readable")
            .expect("an entry");
        let amounts: Vec<Money> = entry.journal_lines.iter().map(|l| l.net_amount).collect();
        assert_eq!(
            amounts,
            vec![Money::from_cents(10_000), Money::from_cents(-10_000)]
        );
        assert_eq!(
            entry.source.map(|source| source.source_type).as_deref(),
            Some("Journal")
        );
    }

    #[test]
    fn an_entry_that_does_not_balance_is_unreadable() {
        let lines = vec![line("1", "100.00", "0"), line("2", "0", "99.99")];
        assert!(posting().into_record(Some(lines), Some("USD")).is_err());
    }
}
