//! The windows of days the `JournalReport` is read in: everything before
//! 2000 in one, then a calendar year each up to the year after this one,
//! then everything to 2099 (post-dated transactions); a window cut short
//! halves, and a narrowed width is carried within its year.

use chrono::{Datelike, NaiveDate};

/// The first day the first window covers: transactions dated before 2000
/// are read in one window, the years after one window each.
const EARLIEST: (i32, u32, u32) = (1900, 1, 1);

/// The last day the last window covers (post-dated transactions).
const LATEST: (i32, u32, u32) = (2099, 12, 31);

/// The days one report call covers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(in crate::platforms::quickbooks_online) struct Window {
    /// The first day.
    pub(in crate::platforms::quickbooks_online) start: NaiveDate,
    /// The last day.
    pub(in crate::platforms::quickbooks_online) end: NaiveDate,
}

impl Window {
    /// The window that starts on `start`: to the end of 1999 before 2000,
    /// then to the end of its year up to the year after `today`'s, then to
    /// [`LATEST`].
    pub(in crate::platforms::quickbooks_online) fn from(
        start: NaiveDate,
        today: NaiveDate,
    ) -> Self {
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
    pub(in crate::platforms::quickbooks_online) fn first(today: NaiveDate) -> Self {
        Self::from(date(EARLIEST.0, EARLIEST.1, EARLIEST.2), today)
    }

    /// Its first half (the start to the middle day), when it is longer than
    /// a day.
    pub(in crate::platforms::quickbooks_online) fn first_half(self) -> Option<Self> {
        let days = (self.end - self.start).num_days();
        (days > 0).then(|| Self {
            start: self.start,
            end: self.start + chrono::Duration::days(days / 2),
        })
    }

    /// It, ending at most `days` days after its start (a width a window cut
    /// short narrowed to, kept for the rest of its year).
    pub(in crate::platforms::quickbooks_online) fn at_most(self, days: Option<i64>) -> Self {
        match days {
            Some(days) if days > 0 => Self {
                start: self.start,
                end: self.end.min(self.start + chrono::Duration::days(days - 1)),
            },
            _ => self,
        }
    }

    /// How many days it covers.
    pub(in crate::platforms::quickbooks_online) fn days(self) -> i64 {
        (self.end - self.start).num_days() + 1
    }

    /// The day after it, where the next window starts; `None` after the
    /// last.
    pub(in crate::platforms::quickbooks_online) fn next_start(self) -> Option<NaiveDate> {
        (self.end < latest()).then(|| self.end + chrono::Duration::days(1))
    }
}

pub(super) fn date(year: i32, month: u32, day: u32) -> NaiveDate {
    NaiveDate::from_ymd_opt(year, month, day).unwrap_or_default()
}

pub(super) fn latest() -> NaiveDate {
    date(LATEST.0, LATEST.1, LATEST.2)
}
