//! The calls report (issue 33): with [`CALLS_REPORT_VAR`] naming a file,
//! the incremental and whole-fetch scenarios append one JSON line each per
//! platform and data type, with the platform calls its syncs made and the
//! connector's declared limits; `tributary-calls-report` (`bench/`) merges
//! them into `BENCHMARKS.md`'s table.

use std::io::Write as _;
use std::sync::Mutex;
use std::time::Duration;

use serde_json::Value;

use tributary::platforms::connector::{Connectors, Limits};

use crate::helpers::Backend;

/// The file the scenarios append their counts to, when set.
pub const CALLS_REPORT_VAR: &str = "TRIBUTARY_CALLS_REPORT";

/// Appends `line` for `platform` to the report, once per scenario: on the
/// SQLite pass, since the calls a platform gets do not depend on the
/// database.
pub fn report(backend: Backend, platform: &str, mut line: Value) {
    let Some(path) = std::env::var_os(CALLS_REPORT_VAR) else {
        return;
    };
    if backend != Backend::Sqlite {
        return;
    }
    line["platform"] = platform.into();
    line["limits"] = limits_of(platform).into();
    // The scenarios run on parallel threads: one line at a time.
    static WRITING: Mutex<()> = Mutex::new(());
    let _writing = WRITING.lock().expect("the report's lock");
    let mut file = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(&path)
        .expect("the calls report can be opened");
    writeln!(file, "{line}").expect("the calls report can be written");
}

/// The connector's declared limits in words (`60/min, 5,000/day, 5 at once`).
fn limits_of(platform: &str) -> String {
    let Some(connector) = Connectors::standard().get(platform) else {
        return "no connector".to_owned();
    };
    let Limits {
        rate,
        daily,
        concurrent,
        ..
    } = connector.limits();
    let parts: Vec<String> = [
        rate.map(|rate| format!("{}/{}", grouped(rate.calls), per(rate.window))),
        daily.map(|calls| format!("{}/day", grouped(calls))),
        concurrent.map(|calls| format!("{calls} at once")),
    ]
    .into_iter()
    .flatten()
    .collect();
    if parts.is_empty() {
        "none declared".to_owned()
    } else {
        parts.join(", ")
    }
}

/// A rate's window in words (`s`, `min`, `10 s`).
fn per(window: Duration) -> String {
    match window.as_secs() {
        1 => "s".to_owned(),
        60 => "min".to_owned(),
        3_600 => "h".to_owned(),
        86_400 => "day".to_owned(),
        _ if window.subsec_millis() > 0 => format!("{} ms", window.as_millis()),
        seconds => format!("{seconds} s"),
    }
}

/// `calls` with its thousands grouped (`1,000,000`).
fn grouped(calls: u32) -> String {
    let digits = calls.to_string();
    let mut text = String::new();
    for (position, digit) in digits.chars().enumerate() {
        if position > 0 && (digits.len() - position).is_multiple_of(3) {
            text.push(',');
        }
        text.push(digit);
    }
    text
}
