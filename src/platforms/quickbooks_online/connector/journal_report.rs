//! QuickBooks Online's general ledger fetched: the `JournalReport` of one
//! window of days a page, asked again in halves when QuickBooks cuts it
//! short (`journals.rs` reads the report; NOTES.md, "8j").

use chrono::Utc;

use super::{MINOR_VERSION, QuickBooksConnector, company_refused};
use crate::data::journal_entries::JournalEntry;
use crate::platforms::connector::{Connector, ConnectorError, Fetched};
use crate::platforms::kit::http::{Auth, Call};
use crate::platforms::quickbooks_online::QuickBooksOnlineAuthorization;
use crate::platforms::quickbooks_online::journals::{
    COLUMNS as JOURNAL_COLUMNS, Cut, JournalReport, Window,
};

impl QuickBooksConnector {
    /// The journal entries of the general ledger's window starting at
    /// `cursor` (a date, and the width a window cut short narrowed to, as
    /// `2026-03-01+91`; the first window without one), from the
    /// `JournalReport`: a window QuickBooks cuts short at its size cap is
    /// asked for again in halves, down to a day, and the rest of its year
    /// is read in windows no wider. The next page's cursor is the day after
    /// the window read.
    pub(super) async fn journal_entries(
        &self,
        credentials: &QuickBooksOnlineAuthorization,
        cursor: Option<String>,
    ) -> Result<Fetched<JournalEntry>, ConnectorError> {
        let today = Utc::now().date_naive();
        let (mut window, mut narrowed) = match cursor {
            None => (Window::first(today), false),
            Some(cursor) => {
                let unreadable = || {
                    ConnectorError::Failed(format!(
                        "{}: the journal report's cursor is not a date",
                        Self::PLATFORM
                    ))
                };
                let (date, width) = match cursor.split_once('+') {
                    Some((date, width)) => {
                        (date, Some(width.parse::<i64>().map_err(|_| unreadable())?))
                    }
                    None => (cursor.as_str(), None),
                };
                let start = chrono::NaiveDate::parse_from_str(date, "%Y-%m-%d")
                    .map_err(|_| unreadable())?;
                (Window::from(start, today).at_most(width), width.is_some())
            }
        };
        loop {
            let call = Call::get(
                Self::PLATFORM,
                "the journal report",
                format!("{}/reports/JournalReport", self.company_url(credentials)),
                Auth::bearer(&credentials.tokens),
            )
            .query("start_date", window.start.format("%Y-%m-%d").to_string())
            .query("end_date", window.end.format("%Y-%m-%d").to_string())
            .query("columns", JOURNAL_COLUMNS)
            .query("minorversion", MINOR_VERSION);
            let report: JournalReport = self.http.json(&call).await.map_err(company_refused)?;
            match (report.cut(), window.first_half()) {
                (Cut::Whole, _) => {}
                (Cut::Noticed | Cut::Unfinished, Some(half)) => {
                    window = half;
                    narrowed = true;
                    continue;
                }
                (Cut::Noticed, None) => {
                    return Err(ConnectorError::Failed(format!(
                        "{}: the journal report of {} alone is over QuickBooks' size limit; the previous \
                         data is kept",
                        Self::PLATFORM,
                        window.start
                    )));
                }
                // A day whose report ends as a cut one would, though
                // QuickBooks says nothing: read as it is, its stray rows
                // an issue.
                (Cut::Unfinished, None) => {}
            }
            let read = report.entries().map_err(|problem| {
                ConnectorError::Failed(format!(
                    "{}: the journal report cannot be read: {problem}",
                    Self::PLATFORM
                ))
            })?;
            // A narrowed width holds for the rest of its year only, and only
            // in the windows of one year (not the decades before 2000 or
            // after next year).
            let next = window.next_start().map(|start| {
                let date = start.format("%Y-%m-%d").to_string();
                let same_year_window =
                    Window::from(start, today).end == Window::from(window.start, today).end;
                if narrowed && same_year_window && Window::from(start, today).days() <= 366 {
                    format!("{date}+{}", window.days())
                } else {
                    date
                }
            });
            return Ok(Fetched::read(read, next));
        }
    }
}
