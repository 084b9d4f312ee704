//! Sage's general ledger and how it becomes our journal entries: the
//! ledger entries (`GET /ledger_entries`) of a date window grouped by their
//! transaction, with the transactions' headers (`GET /transactions`).
//! Each line a debit or a credit of one ledger account. Sources:
//! `NOTES.md`, "Accounting model", and S20's `LedgerEntry`, `Transaction`.

use std::collections::{BTreeMap, HashMap};

use serde::Deserialize;

use super::mapping::Link;
use crate::data::journal_entries::{JournalEntry, JournalLine, JournalSource};
use crate::data::money::Money;
use crate::platforms::connector::RecordIssue;
use crate::platforms::kit::json::{self, Amount, money};
use crate::platforms::kit::records::Keyed;
use crate::timestamp::Timestamp;

impl Keyed for SageLedgerEntry {
    const ID: &'static str = "/id";
}

impl Keyed for SageTransaction {
    const ID: &'static str = "/id";
}

/// A ledger entry as `GET /ledger_entries?attributes=all` gives it (S20
/// `LedgerEntry`).
#[derive(Deserialize)]
pub(super) struct SageLedgerEntry {
    date: Option<String>,
    debit: Option<Amount>,
    credit: Option<Amount>,
    ledger_account: Option<Link>,
    transaction: Option<Link>,
    description: Option<String>,
    deleted: Option<bool>,
}

/// A transaction as `GET /transactions?attributes=all` gives it (S20
/// `Transaction`): the header of its ledger entries.
#[derive(Deserialize)]
pub(super) struct SageTransaction {
    id: String,
    date: Option<String>,
    reference: Option<String>,
    transaction_type: Option<Link>,
    origin: Option<Link>,
    deleted: Option<bool>,
    created_at: Option<String>,
    updated_at: Option<String>,
}

/// The lists whose records a transaction's `origin.$path` may name as the
/// journal entry's source.
const SOURCES: [&str; 5] = [
    "sales_invoices",
    "purchase_invoices",
    "sales_credit_notes",
    "contact_payments",
    "journals",
];

/// The id `$path` names when it is one of a source list's records
/// (`/sales_invoices/{id}`), else `None`.
pub(super) fn origin_id(path: Option<&str>) -> Option<String> {
    let rest = path?.trim_start_matches('/');
    let (list, id) = rest.split_once('/')?;
    (SOURCES.contains(&list) && !id.is_empty() && !id.contains('/')).then(|| id.to_owned())
}

/// A window's journal entries and the transactions that cannot be.
#[derive(Default)]
pub(super) struct Grouped {
    /// One per transaction that balances.
    pub(super) entries: Vec<JournalEntry>,
    /// Transactions left out, and why.
    pub(super) issues: Vec<RecordIssue>,
}

/// A window's ledger entries grouped by transaction, each with its header
/// from `transactions` when listed: deleted entries and transactions are
/// left out; a transaction whose entries do not balance is an issue.
pub(super) fn group(entries: Vec<SageLedgerEntry>, transactions: Vec<SageTransaction>) -> Grouped {
    let mut headers: HashMap<String, SageTransaction> = transactions
        .into_iter()
        .map(|transaction| (transaction.id.clone(), transaction))
        .collect();
    let mut grouped = Grouped::default();
    let mut by_transaction: BTreeMap<String, Vec<SageLedgerEntry>> = BTreeMap::new();
    for entry in entries
        .into_iter()
        .filter(|entry| entry.deleted != Some(true))
    {
        match json::non_empty(entry.transaction.as_ref().and_then(|link| link.id.clone())) {
            Some(id) => by_transaction.entry(id).or_default().push(entry),
            None => grouped.issues.push(RecordIssue {
                record_id: None,
                field: Some("transaction".to_owned()),
                reason: "a ledger entry names no transaction".to_owned(),
            }),
        }
    }
    for (id, lines) in by_transaction {
        let header = headers.remove(&id);
        if header
            .as_ref()
            .is_some_and(|header| header.deleted == Some(true))
        {
            continue;
        }
        match entry(id.clone(), header, lines) {
            Ok(entry) => grouped.entries.push(entry),
            Err((field, reason)) => grouped.issues.push(RecordIssue {
                record_id: Some(id),
                field: Some(field.to_owned()),
                reason,
            }),
        }
    }
    grouped
}

/// One transaction's journal entry, or the field at fault and why.
fn entry(
    id: String,
    header: Option<SageTransaction>,
    lines: Vec<SageLedgerEntry>,
) -> Result<JournalEntry, (&'static str, String)> {
    let entry_date = lines.iter().find_map(|line| line.date.clone());
    let journal_lines: Vec<JournalLine> = lines
        .into_iter()
        .map(|line| JournalLine {
            account_ref: Link::account(line.ledger_account),
            description: json::non_empty(line.description),
            net_amount: money(line.debit) - money(line.credit),
            currency: None,
        })
        .collect();
    let balance = journal_lines
        .iter()
        .fold(Money(0), |sum, line| sum + line.net_amount);
    if balance != Money(0) {
        return Err((
            "debit",
            format!(
                "the transaction's ledger entries do not balance within the window read (debits exceed credits by {})",
                balance.to_decimal()
            ),
        ));
    }
    let date = header
        .as_ref()
        .and_then(|header| header.date.as_deref())
        .or(entry_date.as_deref());
    let posted_on = json::required_date(date, "date").map_err(|_| {
        (
            "date",
            "the transaction has no date that can be read".to_owned(),
        )
    })?;
    let first = journal_lines
        .first()
        .and_then(|line| line.description.clone());
    let description = first.filter(|first| {
        journal_lines
            .iter()
            .all(|line| line.description.as_ref() == Some(first))
    });
    let header = header.map_or_else(Header::default, Header::of);
    Ok(JournalEntry {
        journal_entry_id: id,
        journal_number: header.reference,
        posted_on,
        description,
        source: header.source,
        journal_lines,
        created_on: header.created_on,
        source_modified_date: header.updated_on,
    })
}

/// What a transaction's header gives its journal entry.
#[derive(Default)]
struct Header {
    reference: Option<String>,
    source: Option<JournalSource>,
    created_on: Option<Timestamp>,
    updated_on: Option<Timestamp>,
}

impl Header {
    /// The header's reference, source (its type, and the record its
    /// origin names) and timestamps.
    fn of(transaction: SageTransaction) -> Self {
        let kind = json::non_empty(transaction.transaction_type.and_then(|kind| kind.id));
        let origin = transaction.origin.and_then(|origin| origin.path);
        Self {
            reference: json::non_empty(transaction.reference),
            source: kind.map(|source_type| JournalSource {
                source_type,
                id: origin_id(origin.as_deref()),
            }),
            created_on: json::timestamp(transaction.created_at.as_deref()),
            updated_on: json::timestamp(transaction.updated_at.as_deref()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::platforms::sage_business_cloud::general_ledger::{Window, month_end};
    use chrono::NaiveDate;
    use serde_json::json;

    fn date(text: &str) -> NaiveDate {
        NaiveDate::parse_from_str(text, "%Y-%m-%d").expect("a date")
    }

    fn entry(transaction: &str, account: &str, debit: &str, credit: &str) -> SageLedgerEntry {
        serde_json::from_str(
            &json!({
                "date": "2026-10-03", "debit": debit, "credit": credit,
                "ledger_account": {"id": account, "displayed_as": account},
                "transaction": {"id": transaction, "$path": format!("/transactions/{transaction}")},
                "description": "SI-2", "deleted": false
            })
            .to_string(),
        )
        .expect("an entry")
    }

    fn transaction(id: &str, kind: &str, origin: &str, deleted: bool) -> SageTransaction {
        serde_json::from_str(
            &json!({
                "id": id, "date": "2026-10-03", "reference": format!("ref-{id}"),
                "transaction_type": {"id": kind}, "origin": {"id": "o", "$path": origin},
                "deleted": deleted, "created_at": "2026-10-03T10:00:00Z",
                "updated_at": "2026-10-04T10:00:00Z"
            })
            .to_string(),
        )
        .expect("a transaction")
    }

    #[test]
    fn windows_run_from_the_open_one_by_calendar_month_to_an_open_current_one() {
        let start = Some(date("2026-04-15"));
        let first = Window::first(start);
        assert_eq!(
            first,
            Window {
                from: None,
                to: Some(date("2026-04-14"))
            }
        );
        let today = date("2026-06-10");
        let mut cursor = Window::after_first(start);
        let mut windows = Vec::new();
        while let Some(at) = cursor {
            let window = Window::at(&at, today).expect("a window");
            cursor = window.next();
            windows.push(window);
        }
        assert_eq!(
            windows,
            [
                Window {
                    from: Some(date("2026-04-15")),
                    to: Some(date("2026-04-30"))
                },
                Window {
                    from: Some(date("2026-05-01")),
                    to: Some(date("2026-05-31"))
                },
                Window {
                    from: Some(date("2026-06-01")),
                    to: None
                },
            ]
        );
        assert_eq!(
            Window::first(None),
            Window {
                from: None,
                to: None
            }
        );
        assert_eq!(Window::after_first(None), None);
        assert!(Window::at("2026-13-01", today).is_err());
    }

    #[test]
    fn a_month_ends_on_its_last_day() {
        assert_eq!(month_end(date("2024-02-10")), Some(date("2024-02-29")));
        assert_eq!(month_end(date("2026-12-01")), Some(date("2026-12-31")));
    }

    #[test]
    fn entries_group_by_transaction_and_one_that_does_not_balance_is_an_issue() {
        let entries = vec![
            entry("t1", "1100", "120.00", "0"),
            entry("t2", "1200", "10.00", "0"),
            entry("t1", "4000", "0", "100.00"),
            entry("t1", "2200", "0", "20.00"),
            entry("t2", "2100", "0", "9.99"),
        ];
        let grouped = group(
            entries,
            vec![transaction(
                "t1",
                "SALES_INVOICE",
                "/sales_invoices/si1",
                false,
            )],
        );
        assert_eq!(grouped.entries.len(), 1);
        let t1 = &grouped.entries[0];
        assert_eq!(t1.journal_entry_id, "t1");
        assert_eq!(t1.journal_number.as_deref(), Some("ref-t1"));
        assert_eq!(t1.posted_on, date("2026-10-03"));
        assert_eq!(t1.description.as_deref(), Some("SI-2"));
        let source = t1.source.as_ref().expect("a source");
        assert_eq!(source.source_type, "SALES_INVOICE");
        assert_eq!(source.id.as_deref(), Some("si1"));
        let amounts: Vec<Money> = t1
            .journal_lines
            .iter()
            .map(|line| line.net_amount)
            .collect();
        assert_eq!(
            amounts,
            [
                Money::from_cents(12000),
                Money::from_cents(-10000),
                Money::from_cents(-2000)
            ]
        );
        assert!(t1.created_on.is_some() && t1.source_modified_date.is_some());
        assert_eq!(grouped.issues.len(), 1);
        assert_eq!(grouped.issues[0].record_id.as_deref(), Some("t2"));
        assert!(
            grouped.issues[0].reason.contains("0.01"),
            "{}",
            grouped.issues[0].reason
        );
    }

    #[test]
    fn deleted_transactions_and_entries_are_left_out() {
        let mut gone = entry("t3", "1100", "5", "0");
        gone.deleted = Some(true);
        let grouped = group(
            vec![
                entry("t1", "1100", "1", "0"),
                entry("t1", "4000", "0", "1"),
                gone,
                entry("t3", "1100", "0", "0"),
            ],
            vec![transaction("t1", "JOURNAL", "/journals/j1", true)],
        );
        assert_eq!(grouped.issues.len(), 0);
        let ids: Vec<&str> = grouped
            .entries
            .iter()
            .map(|e| e.journal_entry_id.as_str())
            .collect();
        assert_eq!(ids, ["t3"], "t1 is deleted; t3's deleted entry is not read");
        assert!(grouped.entries[0].source.is_none(), "t3 has no header");
    }

    #[test]
    fn an_origin_names_a_source_only_in_the_lists_we_know() {
        assert_eq!(
            origin_id(Some("/sales_invoices/abc")).as_deref(),
            Some("abc")
        );
        assert_eq!(
            origin_id(Some("/purchase_invoices/p")).as_deref(),
            Some("p")
        );
        assert_eq!(
            origin_id(Some("/sales_credit_notes/c")).as_deref(),
            Some("c")
        );
        assert_eq!(
            origin_id(Some("/contact_payments/cp")).as_deref(),
            Some("cp")
        );
        assert_eq!(origin_id(Some("/journals/j")).as_deref(), Some("j"));
        assert_eq!(origin_id(Some("/bank_transfers/b")), None);
        assert_eq!(origin_id(Some("/sales_invoices/")), None);
        assert_eq!(origin_id(None), None);
    }
}
