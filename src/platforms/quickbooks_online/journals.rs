//! QuickBooks Online's general ledger: the `JournalReport` (every posted
//! transaction's lines, invoices, bills, payments and manual journal
//! entries alike), read in date windows and regrouped into journal entries
//! signed debit positive, credit negative (NOTES.md, "8j").
//!
//! The report is flat: a transaction is a run of `Data` rows (the first
//! with its date, type and number; the rest continuing it under the same
//! transaction id), closed by a `Section` whose `Summary` holds its debit
//! and credit totals. Columns are read by their key (`MetaData` `ColKey`,
//! else `ColType`), never by their localized title. A report over
//! QuickBooks' size cap still answers 200, cut short with a notice: the
//! caller then asks for a shorter window.

use std::collections::HashMap;

use chrono::{Datelike, NaiveDate};
use serde::Deserialize;

use crate::data::accounts::AccountRef;
use crate::data::journal_entries::{JournalEntry, JournalLine, JournalSource};
use crate::data::money::Money;
use crate::platforms::connector::RecordIssue;
use crate::platforms::kit::json::{self, parse_amount};
use crate::platforms::kit::records::{Read, Unreadable};

/// The columns the connector asks the report for (D1's defaults that it
/// maps; the rest are left out).
pub(super) const COLUMNS: &str = "tx_date,txn_type,doc_num,memo,account_name,debt_amt,credit_amt";

/// What a report cut at QuickBooks' cap says in one of its cells.
const CUT_SHORT: &str = "Unable to display more data";

/// The type QuickBooks gives a manual journal entry in the report: posted
/// for no other document.
const MANUAL: &str = "Journal Entry";

/// The first day the first window covers: transactions dated before 2000
/// are read in one window, the years after one window each.
const EARLIEST: (i32, u32, u32) = (1900, 1, 1);

/// The last day the last window covers (post-dated transactions).
const LATEST: (i32, u32, u32) = (2099, 12, 31);

/// A `JournalReport` answer.
#[derive(Deserialize)]
#[serde(rename_all = "PascalCase")]
pub(super) struct JournalReport {
    #[serde(default)]
    header: ReportHeader,
    #[serde(default)]
    columns: Columns,
    #[serde(default)]
    rows: Rows,
}

#[derive(Deserialize, Default)]
#[serde(rename_all = "PascalCase")]
struct ReportHeader {
    currency: Option<String>,
    #[serde(default)]
    option: Vec<NameValue>,
}

#[derive(Deserialize)]
#[serde(rename_all = "PascalCase")]
struct NameValue {
    name: Option<String>,
    value: Option<String>,
}

#[derive(Deserialize, Default)]
#[serde(rename_all = "PascalCase")]
struct Columns {
    #[serde(default)]
    column: Vec<Column>,
}

#[derive(Deserialize)]
#[serde(rename_all = "PascalCase")]
struct Column {
    col_type: Option<String>,
    #[serde(default)]
    meta_data: Vec<NameValue>,
}

#[derive(Deserialize, Default)]
#[serde(rename_all = "PascalCase")]
struct Rows {
    #[serde(default)]
    row: Vec<Row>,
}

#[derive(Deserialize)]
struct Row {
    #[serde(rename = "type")]
    row_type: Option<String>,
    #[serde(rename = "ColData", default)]
    col_data: Vec<Cell>,
    #[serde(rename = "Rows", default)]
    rows: Option<Rows>,
    #[serde(rename = "Summary", default)]
    summary: Option<Cells>,
}

#[derive(Deserialize, Default)]
struct Cells {
    #[serde(rename = "ColData", default)]
    col_data: Vec<Cell>,
}

#[derive(Deserialize, Default, Clone)]
struct Cell {
    #[serde(default)]
    value: String,
    id: Option<String>,
}

/// The days one report call covers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Window {
    /// The first day.
    pub(super) start: NaiveDate,
    /// The last day.
    pub(super) end: NaiveDate,
}

impl Window {
    /// The window that starts on `start`: to the end of 1999 before 2000,
    /// then to the end of its year up to the year after `today`'s, then to
    /// [`LATEST`].
    pub(super) fn from(start: NaiveDate, today: NaiveDate) -> Self {
        let end = if start.year() < 2000 {
            date(1999, 12, 31)
        } else if start.year() <= today.year() + 1 {
            date(start.year(), 12, 31)
        } else {
            latest()
        };
        Self {
            start,
            end: end.max(start),
        }
    }

    /// The first window of a whole fetch.
    pub(super) fn first(today: NaiveDate) -> Self {
        Self::from(date(EARLIEST.0, EARLIEST.1, EARLIEST.2), today)
    }

    /// Its first half (the start to the middle day), when it is longer than
    /// a day.
    pub(super) fn first_half(self) -> Option<Self> {
        let days = (self.end - self.start).num_days();
        (days > 0).then(|| Self {
            start: self.start,
            end: self.start + chrono::Duration::days(days / 2),
        })
    }

    /// The day after it, where the next window starts; `None` after the
    /// last.
    pub(super) fn next_start(self) -> Option<NaiveDate> {
        (self.end < latest()).then(|| self.end + chrono::Duration::days(1))
    }
}

fn date(year: i32, month: u32, day: u32) -> NaiveDate {
    NaiveDate::from_ymd_opt(year, month, day).unwrap_or_default()
}

fn latest() -> NaiveDate {
    date(LATEST.0, LATEST.1, LATEST.2)
}

/// One transaction's rows, as read.
struct Transaction {
    kind: String,
    id: Option<String>,
    posted_on: Option<String>,
    number: String,
    memo: String,
    lines: Vec<Posting>,
    /// The debit and credit totals its closing `Summary` gives.
    totals: Option<(Money, Money)>,
    /// A cell that could not be read, and why.
    problem: Option<Unreadable>,
}

/// One row's posting.
struct Posting {
    account: Cell,
    memo: String,
    debit: Money,
    credit: Money,
}

impl JournalReport {
    /// Whether QuickBooks cut the report short at its size cap.
    pub(super) fn cut_short(&self) -> bool {
        fn any_cut(rows: &Rows) -> bool {
            rows.row.iter().any(|row| {
                row.col_data
                    .iter()
                    .any(|cell| cell.value.contains(CUT_SHORT))
                    || row.summary.as_ref().is_some_and(|summary| {
                        summary
                            .col_data
                            .iter()
                            .any(|cell| cell.value.contains(CUT_SHORT))
                    })
                    || row.rows.as_ref().is_some_and(any_cut)
            })
        }
        any_cut(&self.rows)
    }

    /// The report's journal entries, each transaction that posted anything
    /// one entry; a transaction that cannot be read is an issue of its own.
    pub(super) fn entries(self) -> Result<Read<JournalEntry>, Unreadable> {
        let no_data = self.header.option.iter().any(|option| {
            option.name.as_deref() == Some("NoReportData")
                && option.value.as_deref() == Some("true")
        });
        if no_data {
            return Ok(Read::default());
        }
        let keys: Vec<String> = self
            .columns
            .column
            .iter()
            .map(|column| {
                column
                    .meta_data
                    .iter()
                    .find(|meta| meta.name.as_deref() == Some("ColKey"))
                    .and_then(|meta| meta.value.clone())
                    .or_else(|| column.col_type.clone())
                    .unwrap_or_default()
            })
            .collect();
        let at: HashMap<&str, usize> = keys
            .iter()
            .enumerate()
            .map(|(index, key)| (key.as_str(), index))
            .collect();
        for needed in [
            "tx_date",
            "txn_type",
            "account_name",
            "debt_amt",
            "credit_amt",
        ] {
            if !at.contains_key(needed) {
                return Err(Unreadable::field(
                    format!("Columns.{needed}"),
                    "is not among the report's columns",
                ));
            }
        }
        let mut transactions = Vec::new();
        let mut rows = Vec::new();
        flatten(self.rows.row, &mut rows);
        for row in rows {
            match row {
                Flat::Summary(cells) => {
                    if first(&cells).value == "TOTAL" {
                        break;
                    }
                    if let Some(open) = transactions.last_mut() {
                        close(open, &cells, &at);
                    }
                }
                Flat::Data(cells) => read_data(&cells, &at, &mut transactions),
            }
        }
        let currency = json::non_empty(self.header.currency);
        let mut read = Read::default();
        for transaction in transactions {
            let id = transaction
                .id
                .as_ref()
                .map(|id| entry_id(&transaction.kind, id));
            match into_entry(transaction, currency.as_deref()) {
                Ok(Some(entry)) => read.records.push(entry),
                Ok(None) => {}
                Err(problem) => read.issues.push(RecordIssue {
                    record_id: id,
                    field: problem.field,
                    reason: problem.reason,
                }),
            }
        }
        Ok(read)
    }
}

/// A report row, sections opened.
enum Flat {
    Data(Vec<Cell>),
    Summary(Vec<Cell>),
}

fn flatten(rows: Vec<Row>, into: &mut Vec<Flat>) {
    for row in rows {
        if row.row_type.as_deref() != Some("Section") {
            into.push(Flat::Data(row.col_data));
            continue;
        }
        if let Some(inner) = row.rows {
            flatten(inner.row, into);
        }
        if let Some(summary) = row.summary {
            into.push(Flat::Summary(summary.col_data));
        }
    }
}

fn first(cells: &[Cell]) -> Cell {
    cells.first().cloned().unwrap_or_default()
}

fn cell(cells: &[Cell], at: &HashMap<&str, usize>, key: &str) -> Cell {
    at.get(key)
        .and_then(|index| cells.get(*index))
        .cloned()
        .unwrap_or_default()
}

/// An amount cell: blank is nothing; QuickBooks writes `.44` without its
/// leading zero.
fn amount(text: &str) -> Result<Option<Money>, ()> {
    let text = text.trim();
    if text.is_empty() {
        return Ok(None);
    }
    let written = match text.strip_prefix('-') {
        Some(rest) if rest.starts_with('.') => format!("-0{rest}"),
        _ if text.starts_with('.') => format!("0{text}"),
        _ => text.to_owned(),
    };
    parse_amount(&written).map(Some).map_err(|_| ())
}

/// A `Data` row: a blank separator, a transaction's first row (its type
/// written), or a row continuing the open one.
fn read_data(cells: &[Cell], at: &HashMap<&str, usize>, transactions: &mut Vec<Transaction>) {
    if cells.iter().all(|cell| cell.value.trim().is_empty()) {
        return;
    }
    let kind = cell(cells, at, "txn_type");
    let starts = !kind.value.trim().is_empty();
    if starts {
        transactions.push(Transaction {
            kind: kind.value.trim().to_owned(),
            id: kind.id.clone().filter(|id| !id.is_empty()),
            posted_on: Some(cell(cells, at, "tx_date").value),
            number: cell(cells, at, "doc_num").value,
            memo: cell(cells, at, "memo").value,
            lines: Vec::new(),
            totals: None,
            problem: None,
        });
    }
    let Some(open) = transactions.last_mut() else {
        return;
    };
    if !starts && kind.id.as_deref().is_some_and(|id| !id.is_empty()) && kind.id != open.id {
        open.problem.get_or_insert(Unreadable::field(
            "txn_type",
            "a row continues another transaction than the one it follows",
        ));
        return;
    }
    let (debit, credit) = (
        amount(&cell(cells, at, "debt_amt").value),
        amount(&cell(cells, at, "credit_amt").value),
    );
    let (Ok(debit), Ok(credit)) = (debit, credit) else {
        open.problem
            .get_or_insert(Unreadable::field("debt_amt", "is not an amount"));
        return;
    };
    if debit.is_none() && credit.is_none() {
        return;
    }
    open.lines.push(Posting {
        account: cell(cells, at, "account_name"),
        memo: cell(cells, at, "memo").value,
        debit: debit.unwrap_or(Money(0)),
        credit: credit.unwrap_or(Money(0)),
    });
}

/// The closing `Summary` of the open transaction: its totals.
fn close(open: &mut Transaction, cells: &[Cell], at: &HashMap<&str, usize>) {
    let totals = (
        amount(&cell(cells, at, "debt_amt").value),
        amount(&cell(cells, at, "credit_amt").value),
    );
    match totals {
        (Ok(debit), Ok(credit)) => {
            open.totals = Some((debit.unwrap_or(Money(0)), credit.unwrap_or(Money(0))));
        }
        _ => {
            open.problem
                .get_or_insert(Unreadable::field("Summary", "its totals are not amounts"));
        }
    }
}

/// Our id of a report transaction: QuickBooks' ids are unique within one
/// type only, so the type (its letters and digits) comes first.
fn entry_id(kind: &str, id: &str) -> String {
    let kind: String = kind.chars().filter(char::is_ascii_alphanumeric).collect();
    format!("{kind}-{id}")
}

/// The journal entry of `transaction`; `None` when it posted nothing (every
/// amount blank or zero: a voided document).
fn into_entry(
    transaction: Transaction,
    currency: Option<&str>,
) -> Result<Option<JournalEntry>, Unreadable> {
    if let Some(problem) = transaction.problem {
        return Err(problem);
    }
    let Some(id) = transaction.id else {
        return Err(Unreadable::field("txn_type", "has no transaction id"));
    };
    let posted_on = json::required_date(transaction.posted_on.as_deref(), "tx_date")?;
    let (debits, credits) = transaction
        .lines
        .iter()
        .fold((Money(0), Money(0)), |(debits, credits), line| {
            (debits + line.debit, credits + line.credit)
        });
    if let Some(totals) = transaction.totals
        && totals != (debits, credits)
    {
        return Err(Unreadable::field(
            "Summary",
            "the transaction's totals are not what its lines add up to",
        ));
    }
    if debits != credits {
        return Err(Unreadable::record("its debits and credits do not balance"));
    }
    let journal_lines: Vec<JournalLine> = transaction
        .lines
        .into_iter()
        .map(|line| (line.debit - line.credit, line))
        .filter(|(net, _)| *net != Money(0))
        .map(|(net_amount, line)| JournalLine {
            account_ref: AccountRef::to(
                line.account.id.filter(|id| !id.is_empty()),
                json::non_empty(Some(line.account.value)),
            ),
            description: json::non_empty(Some(line.memo)),
            net_amount,
            currency: currency.map(str::to_owned),
        })
        .collect();
    if journal_lines.is_empty() {
        return Ok(None);
    }
    let source = (transaction.kind != MANUAL).then(|| JournalSource {
        source_type: transaction.kind.clone(),
        id: Some(id.clone()),
    });
    Ok(Some(JournalEntry {
        journal_entry_id: entry_id(&transaction.kind, &id),
        journal_number: json::non_empty(Some(transaction.number)),
        posted_on,
        description: json::non_empty(Some(transaction.memo)),
        source,
        journal_lines,
        created_on: None,
        source_modified_date: None,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Intuit's sample answer (D1 in NOTES.md), trimmed: column keys in
    /// `ColType`, an invoice of two lines, a zero inventory value, a
    /// payment with no amounts, the report's total.
    const SAMPLE: &str = r#"{"Header":{"ReportName":"JournalReport","Option":[{"Name":"NoReportData","Value":"false"}],
      "StartPeriod":"2019-05-01","Currency":"USD","EndPeriod":"2019-05-22"},
     "Rows":{"Row":[
      {"ColData":[{"value":"2019-05-07"},{"id":"65","value":"Invoice"},{"value":"1035"},{"id":"1","value":"Bill Braski"},
        {"value":""},{"id":"36","value":"Accounts Receivable (A/R)"},{"value":"15.00"},{"value":""}],"type":"Data"},
      {"ColData":[{"value":"0-00-00"},{"id":"65","value":""},{"value":""},{"id":"","value":""},
        {"value":""},{"id":"1","value":"Sales"},{"value":""},{"value":"15.00"}],"type":"Data"},
      {"type":"Section","Summary":{"ColData":[{"value":""},{"value":""},{"value":""},{"value":""},{"value":""},
        {"value":""},{"value":"15.00"},{"value":"15.00"}]}},
      {"ColData":[{"value":""},{"value":""},{"value":""},{"value":""},{"value":""},{"value":""},{"value":""},{"value":""}],
        "type":"Data"},
      {"ColData":[{"value":"2019-05-07"},{"id":"73","value":"Inventory Starting Value"},{"value":"START"},{"id":"","value":""},
        {"value":"Opening inventory"},{"id":"34","value":"Opening Balance Equity"},
        {"value":".00"},{"value":""}],"type":"Data"},
      {"type":"Section","Summary":{"ColData":[{"value":""},{"value":""},{"value":""},{"value":""},{"value":""},
        {"value":""},{"value":".00"},{"value":""}]}},
      {"ColData":[{"value":"2019-05-22"},{"id":"82","value":"Payment"},{"value":""},{"id":"5","value":"Open Balance (deleted)"},
        {"value":"Created by QB Online to link credits to charges."},{"id":"","value":""},{"value":""},{"value":""}],"type":"Data"},
      {"type":"Section","Summary":{"ColData":[{"value":"TOTAL"},{"value":""},{"value":""},{"value":""},{"value":""},
        {"value":""},{"value":"15.00"},{"value":"15.00"}]}}]},
     "Columns":{"Column":[{"ColType":"tx_date","ColTitle":"Date"},{"ColType":"txn_type","ColTitle":"Transaction Type"},
      {"ColType":"doc_num","ColTitle":"Num"},{"ColType":"name","ColTitle":"Name"},{"ColType":"memo","ColTitle":"Memo/Description"},
      {"ColType":"account_name","ColTitle":"Account"},{"ColType":"debt_amt","ColTitle":"Debit"},{"ColType":"credit_amt","ColTitle":"Credit"}]}}"#;

    fn report(text: &str) -> JournalReport {
        serde_json::from_str(text).expect("a report")
    }

    #[test]
    fn intuits_sample_is_one_balanced_invoice_entry_and_nothing_for_what_posted_nothing() {
        let report = report(SAMPLE);
        assert!(!report.cut_short());
        let read = report.entries().expect("read");
        assert!(read.issues.is_empty(), "{:?}", read.issues);
        assert_eq!(
            read.records.len(),
            1,
            "the zero value and the blank payment post nothing"
        );
        let entry = &read.records[0];
        assert_eq!(entry.journal_entry_id, "Invoice-65");
        assert_eq!(entry.journal_number.as_deref(), Some("1035"));
        assert_eq!(entry.posted_on, date(2019, 5, 7));
        assert_eq!(
            entry.source,
            Some(JournalSource {
                source_type: "Invoice".to_owned(),
                id: Some("65".to_owned())
            })
        );
        let lines: Vec<(Option<&str>, Money)> = entry
            .journal_lines
            .iter()
            .map(|line| {
                (
                    line.account_ref.as_ref().map(|account| account.id.as_str()),
                    line.net_amount,
                )
            })
            .collect();
        assert_eq!(
            lines,
            [
                (Some("36"), Money::from_cents(1500)),
                (Some("1"), Money::from_cents(-1500))
            ]
        );
        assert_eq!(entry.balance(), Money(0));
        assert_eq!(entry.journal_lines[0].currency.as_deref(), Some("USD"));
    }

    #[test]
    fn a_transaction_whose_lines_do_not_make_its_totals_is_an_issue_of_its_own() {
        let broken = SAMPLE.replacen(
            r#"{"value":""},{"value":"15.00"}],"type":"Data"}"#,
            r#"{"value":""},{"value":"14.00"}],"type":"Data"}"#,
            1,
        );
        let read = report(&broken).entries().expect("read");
        assert!(read.records.is_empty());
        assert_eq!(read.issues.len(), 1);
        assert_eq!(read.issues[0].record_id.as_deref(), Some("Invoice-65"));
    }

    #[test]
    fn a_report_cut_at_the_cap_says_so_and_no_data_reads_as_none() {
        let cut = SAMPLE.replacen(
            r#"{"value":"TOTAL"}"#,
            r#"{"value":"Unable to display more data. Please reduce the date range."}"#,
            1,
        );
        assert!(report(&cut).cut_short());
        let empty = r#"{"Header":{"Option":[{"Name":"NoReportData","Value":"true"}]},"Columns":{"Column":[]},"Rows":{}}"#;
        let read = report(empty).entries().expect("read");
        assert!(read.records.is_empty() && read.issues.is_empty());
    }

    #[test]
    fn windows_cover_every_day_once_and_halve() {
        let today = date(2026, 11, 30);
        let mut window = Window::first(today);
        assert_eq!(window.end, date(1999, 12, 31));
        let mut covered = vec![window];
        while let Some(start) = window.next_start() {
            window = Window::from(start, today);
            covered.push(window);
        }
        assert_eq!(
            covered.len(),
            1 + 28 + 1,
            "before 2000, 2000 to 2027, after"
        );
        assert_eq!(
            covered[1],
            Window {
                start: date(2000, 1, 1),
                end: date(2000, 12, 31)
            }
        );
        assert_eq!(covered[29].start, date(2028, 1, 1));
        assert_eq!(covered[29].end, latest());
        for pair in covered.windows(2) {
            assert_eq!(pair[0].next_start(), Some(pair[1].start));
        }
        let half = covered[27].first_half().expect("a half");
        assert_eq!(
            half,
            Window {
                start: date(2026, 1, 1),
                end: date(2026, 7, 2)
            }
        );
        let day = Window {
            start: date(2026, 1, 1),
            end: date(2026, 1, 1),
        };
        assert_eq!(day.first_half(), None);
    }
}
