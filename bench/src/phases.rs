//! Where a sync's time went, as the server logs it (the `pull operation
//! complete` line with `fetch_ms`, `staging_ms` and `publish_ms`), so the
//! report shows the phases beside the wall time.

use std::path::Path;
use std::time::{Duration, Instant};

/// A completed sync's phases.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Phases {
    /// Fetching pages from the platform (overlapping the staging).
    pub fetch: Duration,
    /// Fetching and staging every page.
    pub staging: Duration,
    /// Moving the staged rows into the readable table and swapping.
    pub publish: Duration,
    /// Of the publish, building the declared fields' keys (`None` in the
    /// logs of builds before keys).
    pub keys: Option<Duration>,
}

/// The phases of the last completed sync of `data_type` with `records`
/// records in the server's log text.
pub fn from_log(log: &str, data_type: &str, records: u64) -> Option<Phases> {
    let quoted = format!("\"{data_type}\"");
    let records = records.to_string();
    let line = log.lines().rev().find(|line| {
        line.contains("pull operation complete")
            && field(line, "data_type") == Some(quoted.as_str())
            && field(line, "records") == Some(records.as_str())
    })?;
    let millis = |name: &str| -> Option<Duration> {
        Some(Duration::from_millis(field(line, name)?.parse().ok()?))
    };
    Some(Phases {
        fetch: millis("fetch_ms")?,
        staging: millis("staging_ms")?,
        publish: millis("publish_ms")?,
        keys: millis("keys_ms"),
    })
}

/// Waits up to `within` for the server to log the sync (it logs after its
/// cleanup, a moment after the operation reads `Complete`).
pub async fn logged(
    path: &Path,
    data_type: &str,
    records: u64,
    within: Duration,
) -> Option<Phases> {
    let deadline = Instant::now() + within;
    loop {
        let log = std::fs::read_to_string(path).unwrap_or_default();
        if let Some(phases) = from_log(&log, data_type, records) {
            return Some(phases);
        }
        if Instant::now() >= deadline {
            return None;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// The value of `name=value` in a log line.
fn field<'a>(line: &'a str, name: &str) -> Option<&'a str> {
    line.split_whitespace()
        .find_map(|token| token.strip_prefix(name)?.strip_prefix('='))
}

#[cfg(test)]
mod tests {
    use super::*;

    const LOG: &str = "\
2026-11-24T21:12:51.891502Z  INFO tributary::sync::engine::run: pull operation complete pull_operation_id=01a2 data_type=\"customers\" records=50000 fetch_ms=23 staging_ms=753 write_ms=746 publish_ms=1209 keys_ms=105 cleanup_ms=32
2026-11-24T21:12:51.891502Z  INFO tributary::sync::engine::run: pull operation complete pull_operation_id=01a3 data_type=\"invoices\" records=1000000 fetch_ms=924 staging_ms=14172 write_ms=13867 publish_ms=29036 cleanup_ms=1285
2026-11-24T21:15:26.111846Z  INFO tributary::sync::engine::run: pull operation complete pull_operation_id=01a4 data_type=\"invoices\" records=0 fetch_ms=0 staging_ms=1 write_ms=0 publish_ms=2 cleanup_ms=0
";

    #[test]
    fn the_phases_of_the_sync_with_that_many_records_are_read_from_the_log() {
        assert_eq!(
            from_log(LOG, "invoices", 1_000_000),
            Some(Phases {
                fetch: Duration::from_millis(924),
                staging: Duration::from_millis(14_172),
                publish: Duration::from_millis(29_036),
                keys: None,
            })
        );
        assert_eq!(
            from_log(LOG, "customers", 50_000).and_then(|phases| phases.keys),
            Some(Duration::from_millis(105))
        );
        assert_eq!(from_log(LOG, "orders", 1_000_000), None);
        assert_eq!(from_log(LOG, "invoices", 999), None);
    }
}
