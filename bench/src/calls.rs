//! The platform calls table (issue 33): the JSON lines the API suite's
//! platform scenarios append with `TRIBUTARY_CALLS_REPORT` set (one per
//! scenario: `changes` and `unchanged` for a platform with a modified-since
//! filter, `unfiltered` for one without) merged per platform and data type
//! into one markdown table.

use std::collections::BTreeMap;

use anyhow::Context;
use serde_json::Value;

/// One platform's data type, as its scenarios measured it.
#[derive(Debug, Default)]
struct Row {
    records: Option<u64>,
    first: Option<u64>,
    unchanged: Option<u64>,
    /// Calls of the resync with changes, and the records it changed and added.
    changes: Option<(u64, u64, u64)>,
    filter: Option<String>,
    limits: Option<String>,
}

/// The table of `lines` (the report file's text), sorted by platform and
/// data type.
pub fn render(lines: &str) -> anyhow::Result<String> {
    let mut rows: BTreeMap<(String, String), Row> = BTreeMap::new();
    for (number, line) in lines.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let line: Value =
            serde_json::from_str(line).with_context(|| format!("line {}", number + 1))?;
        let text = |name: &str| line[name].as_str().map(str::to_owned);
        let count = |name: &str| line[name].as_u64();
        let key = (
            text("platform").context("a line without `platform`")?,
            text("dataType").context("a line without `dataType`")?,
        );
        let row = rows.entry(key).or_default();
        row.records = row.records.or(count("records"));
        row.first = row.first.or(count("firstCalls"));
        row.limits = row.limits.take().or(text("limits"));
        match line["scenario"].as_str() {
            Some("changes") => {
                row.changes = Some((
                    count("resyncCalls").unwrap_or_default(),
                    count("changed").unwrap_or_default(),
                    count("added").unwrap_or_default(),
                ));
                row.filter = Some(format!(
                    "{}: `{}`",
                    text("filter").unwrap_or_else(|| "?".to_owned()),
                    text("since").unwrap_or_default()
                ));
            }
            Some("unchanged") => row.unchanged = count("resyncCalls"),
            Some("unfiltered") => {
                row.unchanged = count("resyncCalls");
                let cursor = if text("mode").as_deref() == Some("Incremental") {
                    "its own cursor, "
                } else {
                    "whole, "
                };
                row.filter = Some(format!(
                    "none ({cursor}{})",
                    text("why").unwrap_or_default()
                ));
            }
            other => anyhow::bail!("line {}: unknown scenario {other:?}", number + 1),
        }
    }
    let shown = |value: Option<u64>| value.map_or("—".to_owned(), |value| value.to_string());
    let mut table = String::from(
        "| platform | data type | records | first sync | unchanged resync | resync with changes (changed + added) | filter | declared limits |\n\
         |---|---|--:|--:|--:|--:|---|---|\n",
    );
    for ((platform, data_type), row) in &rows {
        let changes = row
            .changes
            .map_or("—".to_owned(), |(calls, changed, added)| {
                format!("{calls} ({changed} + {added})")
            });
        table.push_str(&format!(
            "| {platform} | {data_type} | {} | {} | {} | {changes} | {} | {} |\n",
            shown(row.records),
            shown(row.first),
            shown(row.unchanged),
            cell(row.filter.as_deref()),
            cell(row.limits.as_deref()),
        ));
    }
    Ok(table)
}

/// A table cell's text: `—` for nothing, pipes escaped.
fn cell(text: Option<&str>) -> String {
    text.map_or("—".to_owned(), |text| text.replace('|', "\\|"))
}

#[cfg(test)]
mod tests {
    use super::render;

    #[test]
    fn a_platforms_two_scenarios_merge_into_one_row_and_rows_sort_by_platform() {
        let lines = r#"
{"scenario":"unfiltered","platform":"stripe","dataType":"customers","records":4,"firstCalls":2,"resyncCalls":2,"mode":"Full","why":"no filter","limits":"100/s"}
{"scenario":"changes","platform":"sage","dataType":"invoices","records":3,"firstCalls":1,"resyncCalls":2,"changed":1,"added":1,"filter":"query `since`","since":"a|b","limits":"none declared"}
{"scenario":"unchanged","platform":"sage","dataType":"invoices","records":3,"firstCalls":1,"resyncCalls":2,"limits":"none declared"}
"#;
        let table = render(lines).expect("a table");
        let rows: Vec<&str> = table.lines().skip(2).collect();
        assert_eq!(
            rows,
            [
                "| sage | invoices | 3 | 1 | 2 | 2 (1 + 1) | query `since`: `a\\|b` | none declared |",
                "| stripe | customers | 4 | 2 | 2 | — | none (whole, no filter) | 100/s |",
            ]
        );
    }

    #[test]
    fn an_unknown_scenario_is_refused() {
        let lines = r#"{"scenario":"other","platform":"x","dataType":"y"}"#;
        assert!(render(lines).is_err());
    }
}
