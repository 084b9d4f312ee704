//! QuickBooks Online's general ledger through its `JournalReport`: the fake
//! answers each date window with the fixture's transactions dated in it
//! (shaped from Intuit's documented answer, NOTES.md "8j"), cuts a window of
//! more than two transactions short with QuickBooks' notice, as its size
//! cap does, and refuses a call without both dates.

use chrono::NaiveDate;
use serde_json::{Value, json};

use client::types::QueueDataTypeDataType;

use super::super::fake::{Answer, Call, fixture};
use super::super::ledger_reads::{each_balances, records, refs_name_accounts, synced};
use super::super::{authorize, options_for};
use super::{ACCESS, body, fake};
use crate::connections::{new_company, new_connection};
use crate::helpers::{TestApp, backends};

/// How many transactions a window may hold before the fake cuts it short.
const CAP: usize = 2;

/// The fixture's transactions: each run of rows from a first row (its type
/// written) to the one before the next, with the first row's date.
fn transactions(report: &Value) -> Vec<(NaiveDate, Vec<Value>)> {
    let mut found: Vec<(NaiveDate, Vec<Value>)> = Vec::new();
    for row in report["Rows"]["Row"].as_array().expect("rows") {
        if row["Summary"]["ColData"][0]["value"] == "TOTAL" {
            break;
        }
        let kind = row["ColData"][1]["value"].as_str().unwrap_or_default();
        if row["type"] == "Data" && !kind.is_empty() {
            let date = row["ColData"][0]["value"].as_str().expect("a date");
            let date = NaiveDate::parse_from_str(date, "%Y-%m-%d").expect("a date");
            found.push((date, Vec::new()));
        }
        if let Some((_, rows)) = found.last_mut() {
            rows.push(row.clone());
        }
    }
    found
}

/// The fake's answer to `GET .../reports/JournalReport`.
pub(super) fn answer(call: &Call) -> Answer {
    let day = |name: &str| {
        call.query
            .get(name)
            .and_then(|text| NaiveDate::parse_from_str(text, "%Y-%m-%d").ok())
    };
    let (Some(start), Some(end)) = (day("start_date"), day("end_date")) else {
        return Answer::json(
            400,
            r#"{"Fault":{"Error":[{"Message":"Invalid Date","Detail":"both dates are needed here","code":"2040"}],"type":"ValidationFault"}}"#,
        );
    };
    let whole: Value =
        serde_json::from_str(&fixture("quickbooks_online/fixtures/journalreport.json"))
            .expect("fixture JSON");
    let within: Vec<Vec<Value>> = transactions(&whole)
        .into_iter()
        .filter(|(date, _)| (start..=end).contains(date))
        .map(|(_, rows)| rows)
        .collect();
    let mut report = whole.clone();
    report["Header"]["StartPeriod"] = json!(start.to_string());
    report["Header"]["EndPeriod"] = json!(end.to_string());
    if within.is_empty() {
        report["Header"]["Option"] = json!([{"Name": "NoReportData", "Value": "true"}]);
        report["Rows"] = json!({});
        return Answer::json(200, report.to_string());
    }
    let mut rows: Vec<Value> = within.iter().take(CAP).flatten().cloned().collect();
    let mut closing = vec![json!({"value": ""}); 7];
    if within.len() > CAP {
        rows.push(json!({"type": "Data", "ColData": [
            {"value": "Unable to display more data. Please reduce the date range."},
            {"value": ""}, {"value": ""}, {"value": ""}, {"value": ""}, {"value": ""}, {"value": ""}
        ]}));
    } else {
        closing[0] = json!({"value": "TOTAL"});
        rows.push(json!({"type": "Section", "Summary": {"ColData": closing}}));
    }
    report["Rows"] = json!({"Row": rows});
    Answer::json(200, report.to_string())
}

/// Journal entries are QuickBooks' whole general ledger, not only the
/// journals entered by hand: every transaction of the `JournalReport`
/// (invoices, payments, expenses, manual journals) one entry, its lines
/// signed (debit positive), balancing, on accounts of the same connection;
/// a transaction that posted nothing is none. The report is asked for in
/// date windows with both dates, each day once, and a window QuickBooks
/// cut short is asked for again in halves.
#[tokio::test]
async fn journal_entries_are_the_journal_reports_transactions_signed_and_balanced() {
    for backend in backends() {
        let fake = fake().await;
        let app = TestApp::spawn_with(backend, options_for(&fake, None, 1)).await;
        let company_id = new_company(&app, "Amy's Bird Sanctuary").await;
        let connection_id = new_connection(&app, company_id, "quickbooks-online").await;
        let authorized =
            authorize(&app, company_id, connection_id, &body(ACCESS, 3600), false).await;
        assert_eq!(authorized.status(), 200);
        synced(
            &app,
            company_id,
            &[
                QueueDataTypeDataType::JournalEntries,
                QueueDataTypeDataType::Accounts,
                QueueDataTypeDataType::Invoices,
            ],
        )
        .await;
        let entries = records(&app, company_id, "journalEntries").await;
        let accounts = records(&app, company_id, "accounts").await;
        let invoices = records(&app, company_id, "invoices").await;
        let summary: Vec<(&str, Vec<&str>)> = entries
            .iter()
            .map(|entry| {
                (
                    entry["journalEntryId"].as_str().expect("an id"),
                    entry["journalLines"]
                        .as_array()
                        .into_iter()
                        .flatten()
                        .map(|line| line["netAmount"].as_str().unwrap_or_default())
                        .collect(),
                )
            })
            .collect();
        assert_eq!(
            summary,
            [
                ("Expense-701", vec!["50.00", "0.50", "-50.50"]),
                ("JournalEntry-601", vec!["100.00", "-100.00"]),
                ("Payment-301", vec!["500.00", "-500.00"]),
                ("Invoice-101", vec!["1127.81", "-1127.81"]),
            ],
            "newest first, debits positive, the payment that posted nothing left out: {entries:#?}"
        );
        let manual = &entries[1];
        assert_eq!(manual["journalNumber"], "JE-1");
        assert_eq!(manual["description"], "Advertising paid from checking");
        assert_eq!(manual["source"], Value::Null, "a journal entered by hand");
        let invoice_entry = &entries[3];
        assert_eq!(
            invoice_entry["source"],
            json!({"type": "Invoice", "id": "101"})
        );
        assert!(
            invoices.iter().any(|invoice| invoice["invoiceId"] == "101"),
            "the source is an invoice of the connection"
        );
        each_balances(&entries);
        refs_name_accounts(&accounts, &entries, "journalLines");
        for line in entries.iter().flat_map(|entry| {
            entry["journalLines"]
                .as_array()
                .cloned()
                .unwrap_or_default()
        }) {
            assert_eq!(line["currency"], "USD", "the report's currency");
            assert!(
                !line["accountRef"].is_null(),
                "every line names its account: {line}"
            );
        }

        // Every report call names both dates; each starts where the one
        // before ended, or where it started when that one was cut short
        // (then ending sooner); from 1900 to 2099.
        let windows: Vec<(NaiveDate, NaiveDate)> = fake
            .calls()
            .iter()
            .filter(|call| call.path.ends_with("/reports/JournalReport"))
            .map(|call| {
                let day = |name: &str| {
                    NaiveDate::parse_from_str(&call.query[name], "%Y-%m-%d").expect("a date")
                };
                assert_eq!(
                    call.query.get("columns").map(String::as_str),
                    Some("tx_date,txn_type,doc_num,memo,account_name,debt_amt,credit_amt")
                );
                (day("start_date"), day("end_date"))
            })
            .collect();
        let first = windows.first().expect("a report call");
        assert_eq!(
            first.0,
            NaiveDate::from_ymd_opt(1900, 1, 1).expect("a date")
        );
        assert_eq!(
            windows.last().expect("a report call").1,
            NaiveDate::from_ymd_opt(2099, 12, 31).expect("a date")
        );
        let mut halved = 0;
        for pair in windows.windows(2) {
            let ((start, end), (next_start, next_end)) = (pair[0], pair[1]);
            if next_start == start {
                assert!(next_end < end, "a window asked again is shorter: {pair:?}");
                halved += 1;
            } else {
                assert_eq!(next_start, end.succ_opt().expect("a day"), "{pair:?}");
            }
        }
        assert!(
            halved > 0,
            "a window cut short was asked for in halves: {windows:?}"
        );
    }
}
