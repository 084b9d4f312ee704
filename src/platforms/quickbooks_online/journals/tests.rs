//! The journal report read from Intuit's sample and from reports built
//! row by row: transactions, totals, stray rows, cuts and windows.

use super::windows::{date, latest};
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
fn transaction(kind: &str, id: &str, lines: &[(&str, &str, &str)], totals: (&str, &str)) -> String {
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
    let lowered =
        format!(r#"{open},{{"type":"Section","Summary":{{"ColData":[{{"value":" Total "}}]}}}}"#);
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
