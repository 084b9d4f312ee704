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
        flatten(&self.rows.row, &mut rows);
        let mut open = false;
        for row in rows {
            let (cells, summary) = match row {
                Flat::Data(cells) => (cells, false),
                Flat::Summary(cells) => (cells, true),
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
        flatten(&self.rows.row, &mut rows);
        for row in rows {
            match row {
                Flat::Summary(cells) => {
                    if is_total(cells) {
                        break;
                    }
                    // Only the open transaction's own `Summary` closes it;
                    // another (a group's subtotal) changes nothing.
                    if let Some(open) = transactions.last_mut().filter(|last| last.totals.is_none())
                    {
                        close(open, cells, &at);
                    }
                }
                Flat::Data(cells) => {
                    if !read_data(cells, &at, &mut transactions) {
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

/// A report row, sections opened, as borrowed from the report.
enum Flat<'a> {
    Data(&'a [Cell]),
    Summary(&'a [Cell]),
}

fn flatten<'a>(rows: &'a [Row], into: &mut Vec<Flat<'a>>) {
    for row in rows {
        if row.row_type.as_deref() != Some("Section") {
            into.push(Flat::Data(&row.col_data));
            continue;
        }
        if let Some(inner) = &row.rows {
            flatten(&inner.row, into);
        }
        if let Some(summary) = &row.summary {
            into.push(Flat::Summary(&summary.col_data));
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
mod tests;
mod windows;

pub(super) use windows::Window;
