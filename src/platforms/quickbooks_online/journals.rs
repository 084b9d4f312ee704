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

/// What a report cut at QuickBooks' cap says in one of its cells (lower
/// case: compared in any case).
const CUT_SHORT: &str = "unable to display more data";

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

    /// It, ending at most `days` days after its start (a width a window cut
    /// short narrowed to, kept for the rest of its year).
    pub(super) fn at_most(self, days: Option<i64>) -> Self {
        match days {
            Some(days) if days > 0 => Self {
                start: self.start,
                end: self.end.min(self.start + chrono::Duration::days(days - 1)),
            },
            _ => self,
        }
    }

    /// How many days it covers.
    pub(super) fn days(self) -> i64 {
        (self.end - self.start).num_days() + 1
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

/// What [`JournalReport::cut`] finds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Cut {
    /// A whole report.
    Whole,
    /// QuickBooks says it cut the report at its size cap.
    Noticed,
    /// The report ends as a cut one would (inside a transaction, or without
    /// its `TOTAL`) though nothing says so.
    Unfinished,
}

/// Whether a `Summary` is the report's `TOTAL`.
fn is_total(cells: &[Cell]) -> bool {
    first(cells).value.trim().eq_ignore_ascii_case("TOTAL")
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
    /// Whether QuickBooks cut the report short at its size cap:
    /// [`Cut::Noticed`] when its notice is in any cell but a memo (a memo
    /// is the user's text), in any letter case, or in the header;
    /// [`Cut::Unfinished`] when the report ends inside a transaction (a
    /// posting no `Summary` closed) or without its `TOTAL`, as a report cut
    /// with no notice would.
    pub(super) fn cut(&self) -> Cut {
        let says_cut = |text: &str| text.to_ascii_lowercase().contains(CUT_SHORT);
        if self
            .header
            .option
            .iter()
            .filter_map(|option| option.value.as_deref())
            .any(says_cut)
        {
            return Cut::Noticed;
        }
        if self.no_data() {
            return Cut::Whole;
        }
        let keys = self.keys();
        let memo = keys.iter().position(|key| key == "memo");
        let amounts = [
            keys.iter().position(|key| key == "debt_amt"),
            keys.iter().position(|key| key == "credit_amt"),
        ];
        let mut rows = Vec::new();
        flatten_borrowed(&self.rows.row, &mut rows);
        let mut open = false;
        for row in rows {
            let (cells, summary) = match row {
                FlatRef::Data(cells) => (cells, false),
                FlatRef::Summary(cells) => (cells, true),
            };
            let noticed = cells
                .iter()
                .enumerate()
                .any(|(index, cell)| Some(index) != memo && says_cut(&cell.value));
            if noticed {
                return Cut::Noticed;
            }
            if summary {
                if is_total(cells) {
                    return if open { Cut::Unfinished } else { Cut::Whole };
                }
                open = false;
            } else if amounts.iter().any(|at| {
                at.and_then(|at| cells.get(at))
                    .is_some_and(|cell| !cell.value.trim().is_empty())
            }) {
                // A posting no `Summary` has closed yet (a transaction that
                // posted nothing may have none).
                open = true;
            }
        }
        Cut::Unfinished
    }

    /// Whether the header says the window holds nothing.
    fn no_data(&self) -> bool {
        self.header.option.iter().any(|option| {
            option.name.as_deref() == Some("NoReportData")
                && option.value.as_deref() == Some("true")
        })
    }

    /// Each column's key: `MetaData` `ColKey`, else `ColType`.
    fn keys(&self) -> Vec<String> {
        self.columns
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
            .collect()
    }

    /// The report's journal entries, each transaction that posted anything
    /// one entry; a transaction that cannot be read is an issue of its own.
    pub(super) fn entries(self) -> Result<Read<JournalEntry>, Unreadable> {
        if self.no_data() {
            return Ok(Read::default());
        }
        let keys = self.keys();
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
        let mut transactions: Vec<Transaction> = Vec::new();
        let mut strays = 0_usize;
        let mut rows = Vec::new();
        flatten(self.rows.row, &mut rows);
        for row in rows {
            match row {
                Flat::Summary(cells) => {
                    if is_total(&cells) {
                        break;
                    }
                    // Only the open transaction's own `Summary` closes it;
                    // another (a group's subtotal) changes nothing.
                    if let Some(open) = transactions.last_mut().filter(|last| last.totals.is_none())
                    {
                        close(open, &cells, &at);
                    }
                }
                Flat::Data(cells) => {
                    if !read_data(&cells, &at, &mut transactions) {
                        strays += 1;
                    }
                }
            }
        }
        let currency = json::non_empty(self.header.currency);
        let mut read = Read::default();
        if strays > 0 {
            read.issues.push(RecordIssue {
                record_id: None,
                field: Some("txn_type".to_owned()),
                reason: format!(
                    "{strays} report row(s) continue no transaction open before them; their postings are not read"
                ),
            });
        }
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

/// A report row, sections opened, borrowed.
enum FlatRef<'a> {
    Data(&'a [Cell]),
    Summary(&'a [Cell]),
}

fn flatten_borrowed<'a>(rows: &'a [Row], into: &mut Vec<FlatRef<'a>>) {
    for row in rows {
        if row.row_type.as_deref() != Some("Section") {
            into.push(FlatRef::Data(&row.col_data));
            continue;
        }
        if let Some(inner) = &row.rows {
            flatten_borrowed(&inner.row, into);
        }
        if let Some(summary) = &row.summary {
            into.push(FlatRef::Summary(&summary.col_data));
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
/// written), or a row continuing the open one (not yet closed by its
/// `Summary`, and of the same transaction id when the row gives one).
/// `false` for a row with an amount that continues no open transaction:
/// its posting cannot be placed.
fn read_data(
    cells: &[Cell],
    at: &HashMap<&str, usize>,
    transactions: &mut Vec<Transaction>,
) -> bool {
    if cells.iter().all(|cell| cell.value.trim().is_empty()) {
        return true;
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
    let posts = ["debt_amt", "credit_amt"]
        .iter()
        .any(|key| !cell(cells, at, key).value.trim().is_empty());
    let Some(open) = transactions.last_mut().filter(|last| last.totals.is_none()) else {
        return !posts;
    };
    let continued = kind.id.as_deref().filter(|id| !id.is_empty());
    if !starts && continued.is_some_and(|id| Some(id) != open.id.as_deref()) {
        return !posts;
    }
    let (debit, credit) = match (
        amount(&cell(cells, at, "debt_amt").value),
        amount(&cell(cells, at, "credit_amt").value),
    ) {
        (Ok(debit), Ok(credit)) => (debit, credit),
        (Err(()), _) => {
            open.problem
                .get_or_insert(Unreadable::field("debt_amt", "is not an amount"));
            return true;
        }
        (_, Err(())) => {
            open.problem
                .get_or_insert(Unreadable::field("credit_amt", "is not an amount"));
            return true;
        }
    };
    if debit.is_none() && credit.is_none() {
        return true;
    }
    open.lines.push(Posting {
        account: cell(cells, at, "account_name"),
        memo: cell(cells, at, "memo").value,
        debit: debit.unwrap_or(Money(0)),
        credit: credit.unwrap_or(Money(0)),
    });
    true
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
    if transaction
        .lines
        .iter()
        .all(|line| line.debit == line.credit)
    {
        return Ok(None);
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
        assert_eq!(report.cut(), Cut::Whole);
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

    /// A report of the sample's columns holding `rows`, then its `TOTAL`.
    fn of_rows(rows: &str) -> JournalReport {
        let columns = SAMPLE
            .split_once(r#""Columns":"#)
            .and_then(|(_, columns)| columns.trim_end().strip_suffix('}'))
            .expect("the sample's columns");
        report(&format!(
            r#"{{"Header":{{"Currency":"GBP"}},"Columns":{columns},"Rows":{{"Row":[{rows},
              {{"type":"Section","Summary":{{"ColData":[{{"value":"TOTAL"}}]}}}}]}}}}"#
        ))
    }

    /// A transaction's rows: a first row, continuations and its `Summary`.
    fn transaction(
        kind: &str,
        id: &str,
        lines: &[(&str, &str, &str)],
        totals: (&str, &str),
    ) -> String {
        let row = |date: &str, kind: &str, (account, debit, credit): (&str, &str, &str)| {
            format!(
                r#"{{"type":"Data","ColData":[{{"value":"{date}"}},{{"id":"{id}","value":"{kind}"}},{{"value":""}},
                  {{"value":""}},{{"value":"a memo"}},{{"id":"{account}","value":"Account {account}"}},
                  {{"value":"{debit}"}},{{"value":"{credit}"}}]}}"#
            )
        };
        let mut rows: Vec<String> = lines
            .iter()
            .enumerate()
            .map(|(at, line)| match at {
                0 => row("2026-10-01", kind, *line),
                _ => row("0-00-00", "", *line),
            })
            .collect();
        rows.push(format!(
            r#"{{"type":"Section","Summary":{{"ColData":[{{"value":""}},{{"value":""}},{{"value":""}},{{"value":""}},
              {{"value":""}},{{"value":""}},{{"value":"{}"}},{{"value":"{}"}}]}}}}"#,
            totals.0, totals.1
        ));
        rows.join(",")
    }

    #[test]
    fn a_transaction_whose_lines_do_not_make_its_totals_is_an_issue_of_its_own() {
        // Balanced lines, totals that say otherwise; then a sound one.
        let rows = [
            transaction(
                "Deposit",
                "7",
                &[("1", "10.00", ""), ("2", "", "10.00")],
                ("12.00", "12.00"),
            ),
            transaction(
                "Deposit",
                "8",
                &[("1", "-.5", ""), ("2", "", "-.5")],
                ("-.5", "-.5"),
            ),
        ]
        .join(",");
        let report = of_rows(&rows);
        assert_eq!(report.cut(), Cut::Whole);
        let read = report.entries().expect("read");
        assert_eq!(read.issues.len(), 1, "{:?}", read.issues);
        assert_eq!(read.issues[0].record_id.as_deref(), Some("Deposit-7"));
        assert_eq!(read.issues[0].field.as_deref(), Some("Summary"));
        let sound: Vec<Money> = read.records[0]
            .journal_lines
            .iter()
            .map(|line| line.net_amount)
            .collect();
        assert_eq!(read.records[0].journal_entry_id, "Deposit-8");
        assert_eq!(
            sound,
            [Money::from_cents(-50), Money::from_cents(50)],
            "-.5 reads"
        );
        assert_eq!(
            read.records[0].journal_lines[0].currency.as_deref(),
            Some("GBP")
        );
    }

    #[test]
    fn rows_that_continue_no_open_transaction_are_an_issue_and_a_subtotal_closes_nothing() {
        let stray = r#"{"type":"Data","ColData":[{"value":"0-00-00"},{"id":"9","value":""},{"value":""},{"value":""},
            {"value":""},{"id":"1","value":"Account 1"},{"value":"3.00"},{"value":""}]}"#;
        let subtotal = r#"{"type":"Section","Summary":{"ColData":[{"value":""},{"value":""},{"value":""},
            {"value":""},{"value":""},{"value":""},{"value":"99.00"},{"value":"99.00"}]}}"#;
        let rows = [
            stray.to_owned(),
            transaction(
                "Deposit",
                "7",
                &[("1", "10.00", ""), ("2", "", "10.00")],
                ("10.00", "10.00"),
            ),
            subtotal.to_owned(),
            stray.to_owned(),
        ]
        .join(",");
        let report = of_rows(&rows);
        assert_eq!(
            report.cut(),
            Cut::Unfinished,
            "a posting after the last Summary ends the report as a cut would"
        );
        let read = report.entries().expect("read");
        assert_eq!(
            read.records.len(),
            1,
            "the closed transaction kept its totals"
        );
        assert_eq!(read.records[0].balance(), Money(0));
        assert_eq!(read.issues.len(), 1, "{:?}", read.issues);
        assert_eq!(read.issues[0].record_id, None);
        assert!(
            read.issues[0].reason.starts_with("2 report row(s)"),
            "{:?}",
            read.issues
        );
    }

    #[test]
    fn a_report_cut_at_the_cap_says_so_and_no_data_reads_as_none() {
        let cut = SAMPLE.replacen(
            r#"{"value":"TOTAL"}"#,
            r#"{"value":"Unable to display more data. Please reduce the date range."}"#,
            1,
        );
        assert_eq!(report(&cut).cut(), Cut::Noticed, "the notice in a cell");
        let shouted = SAMPLE.replacen(
            r#"{"Name":"NoReportData","Value":"false"}"#,
            r#"{"Name":"NoReportData","Value":"false"},{"Name":"Notice","Value":"UNABLE TO DISPLAY MORE DATA"}"#,
            1,
        );
        assert_eq!(
            report(&shouted).cut(),
            Cut::Noticed,
            "the notice in the header, any case"
        );
        let open = transaction(
            "Deposit",
            "7",
            &[("1", "10.00", ""), ("2", "", "10.00")],
            ("10.00", "10.00"),
        );
        let unclosed = open
            .rsplit_once(r#",{"type":"Section""#)
            .expect("a summary")
            .0;
        assert_eq!(
            of_rows(unclosed).cut(),
            Cut::Unfinished,
            "a last transaction no Summary closed"
        );
        assert_eq!(of_rows(&open).cut(), Cut::Whole);
        let lowered = format!(
            r#"{open},{{"type":"Section","Summary":{{"ColData":[{{"value":" Total "}}]}}}}"#
        );
        assert_eq!(of_rows(&lowered).cut(), Cut::Whole, "TOTAL in any case");
        let untotalled = SAMPLE.replacen(r#"{"value":"TOTAL"}"#, r#"{"value":""}"#, 1);
        assert_eq!(report(&untotalled).cut(), Cut::Unfinished, "no TOTAL");
        let memo = SAMPLE.replacen(
            r#"{"value":"Opening inventory"}"#,
            r#"{"value":"unable to display more data, said the old system"}"#,
            1,
        );
        assert_eq!(report(&memo).cut(), Cut::Whole, "a memo is the user's text");
        let empty = r#"{"Header":{"Option":[{"Name":"NoReportData","Value":"true"}]},"Columns":{"Column":[]},"Rows":{}}"#;
        let empty = report(empty);
        assert_eq!(empty.cut(), Cut::Whole);
        let read = empty.entries().expect("read");
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
        assert_eq!(half.days(), 183);
        let narrower = Window::from(date(2026, 7, 3), today).at_most(Some(30));
        assert_eq!(
            narrower.end,
            date(2026, 8, 1),
            "30 days, the start included"
        );
        let wide = Window::from(date(2026, 7, 3), today).at_most(Some(400));
        assert_eq!(wide.end, date(2026, 12, 31), "never past its year");
        let day = Window {
            start: date(2026, 1, 1),
            end: date(2026, 1, 1),
        };
        assert_eq!(day.first_half(), None);
    }
}
