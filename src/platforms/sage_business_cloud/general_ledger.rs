//! Sage's general ledger as our journal entries, read whole on every sync
//! one date window a page: the open window before the accounts' start, then
//! each calendar month to the current one. A window's ledger entries
//! (`GET /ledger_entries`) and transactions (`GET /transactions`) are read
//! over every page, then grouped ([`super::journals`]). Sources:
//! `NOTES.md`, "Accounting model".

use chrono::{Datelike, Days, NaiveDate, Utc};
use serde::de::DeserializeOwned;

use super::SageBusinessCloudAuthorization;
use super::connector::SageBusinessCloudConnector;
use super::journals::{SageLedgerEntry, SageTransaction, group};
use crate::data::journal_entries::{JournalEntries, JournalEntry};
use crate::platforms::connector::{Connector, ConnectorError, Fetched, RecordIssue, Syncs};
use crate::platforms::kit::paging::PageNumber;
use crate::platforms::kit::records::Keyed;

/// A span of posting dates read whole: `from` and `to` inclusive, each
/// open when absent. Its cursor is its first day (none for the first).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Window {
    /// The first day, open before the accounts' start.
    pub(super) from: Option<NaiveDate>,
    /// The last day, open for the current month (entries dated ahead).
    pub(super) to: Option<NaiveDate>,
}

impl Window {
    /// The first window: everything before the accounts' start (`start`,
    /// `accounts_start_date`), or everything when Sage gives no start.
    pub(super) fn first(start: Option<NaiveDate>) -> Self {
        Self {
            from: None,
            to: start.and_then(|start| start.pred_opt()),
        }
    }

    /// The window a cursor (its first day) names: up to the end of that
    /// day's month, open at the end from the month of `today` on.
    pub(super) fn at(cursor: &str, today: NaiveDate) -> Result<Self, ConnectorError> {
        let from = NaiveDate::parse_from_str(cursor, "%Y-%m-%d").map_err(|_| {
            ConnectorError::Failed(format!(
                "invalid Sage Business Cloud Accounting ledger cursor {cursor:?}"
            ))
        })?;
        let current = (from.year(), from.month()) >= (today.year(), today.month());
        Ok(Self {
            from: Some(from),
            to: if current { None } else { month_end(from) },
        })
    }

    /// The next window's cursor: the day after this one's end.
    pub(super) fn next(&self) -> Option<String> {
        self.to
            .and_then(|to| to.succ_opt())
            .map(|day| day.format("%Y-%m-%d").to_string())
    }

    /// The first window's next, when Sage gives the accounts' start.
    pub(super) fn after_first(start: Option<NaiveDate>) -> Option<String> {
        start.map(|start| start.format("%Y-%m-%d").to_string())
    }
}

/// The last day of `day`'s month.
pub(super) fn month_end(day: NaiveDate) -> Option<NaiveDate> {
    let first = day.with_day(1)?;
    first
        .checked_add_months(chrono::Months::new(1))?
        .checked_sub_days(Days::new(1))
}

impl SageBusinessCloudConnector {
    /// The journal entries of the window `cursor` names (the first without
    /// one, which asks for the accounts' start); the next window's cursor
    /// until the current month's.
    async fn general_ledger(
        &self,
        credentials: &SageBusinessCloudAuthorization,
        cursor: Option<String>,
    ) -> Result<Fetched<JournalEntry>, ConnectorError> {
        let (window, next) = match cursor {
            None => {
                let start = self.financial_settings(credentials).await?.accounts_start();
                (Window::first(start), Window::after_first(start))
            }
            Some(cursor) => {
                let window = Window::at(&cursor, Utc::now().date_naive())?;
                (window, window.next())
            }
        };
        let (entries, mut issues) = self
            .window::<SageLedgerEntry>(credentials, "ledger_entries", "ledger entries", window)
            .await?;
        let (transactions, more_issues) = self
            .window::<SageTransaction>(credentials, "transactions", "transactions", window)
            .await?;
        issues.extend(more_issues);
        let grouped = group(entries, transactions);
        issues.extend(grouped.issues);
        let mut fetched = Fetched::all(grouped.entries, next);
        fetched.issues = issues;
        Ok(fetched)
    }

    /// Every page of `path` dated within `window`, and the records that
    /// could not be read.
    async fn window<T: DeserializeOwned + Keyed>(
        &self,
        credentials: &SageBusinessCloudAuthorization,
        path: &str,
        what: &'static str,
        window: Window,
    ) -> Result<(Vec<T>, Vec<RecordIssue>), ConnectorError> {
        let mut records = Vec::new();
        let mut issues = Vec::new();
        let mut page = PageNumber(1);
        loop {
            let mut call = self.list(credentials, path, what, page, None);
            if let Some(from) = window.from {
                call = call.query("from_date", day(from));
            }
            if let Some(to) = window.to {
                call = call.query("to_date", day(to));
            }
            let (each, next, _) = self.fetch::<T>(&call, page).await?;
            let read = each.read(|record| Ok(Some(record)));
            records.extend(read.records);
            issues.extend(read.issues);
            match next {
                Some(next) => page = PageNumber::from_cursor(Self::PLATFORM, Some(next))?,
                None => return Ok((records, issues)),
            }
        }
    }
}

/// A date as Sage's filters take it (`2026-04-01`).
fn day(date: NaiveDate) -> String {
    date.format("%Y-%m-%d").to_string()
}

/// The ledger is read whole on every sync (a window a page), so a
/// transaction Sage deleted leaves the next generation.
impl Syncs<JournalEntries> for SageBusinessCloudConnector {
    async fn page(
        &self,
        credentials: &SageBusinessCloudAuthorization,
        cursor: Option<String>,
    ) -> Result<Fetched<JournalEntry>, ConnectorError> {
        self.general_ledger(credentials, cursor).await
    }
}
