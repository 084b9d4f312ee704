//! What a pull operation could not read: the records its connector
//! reported unreadable (`platforms::kit::records`). A run collects them in
//! [`Issues`]: the first [`SHOWN`] to name on the operation, how many in
//! all, and the ids whose previous copies the sync keeps. Past a threshold
//! the sync fails instead ([`Issues::add_page`], [`Issues::check`]): a
//! platform whose answers changed shape must not flag every record deleted.

use sea_orm::{ColumnTrait, ConnectionTrait, EntityTrait, QueryFilter};
use uuid::Uuid;

use entity::pull_operation::{self, PullStatus};

use crate::error::Problem;
use crate::platforms::connector::RecordIssue;

/// How many issues a pull operation names; the rest are counted.
pub const SHOWN: usize = 20;

/// The records of a run that could not be read.
#[derive(Debug, Default, Clone)]
pub struct Issues {
    shown: Vec<RecordIssue>,
    count: u64,
    /// The ids of the unreadable records, to keep their previous copies.
    ids: Vec<String>,
    /// How many unreadable records had no id that could be read.
    unnamed: u64,
}

impl Issues {
    /// Adds the issues of a page of which `read` records were read. A page
    /// of two or more records none of which could be read fails the sync:
    /// the platform's answers have likely changed shape.
    pub fn add_page(&mut self, read: usize, issues: Vec<RecordIssue>) -> Result<(), Problem> {
        let unreadable = issues.len();
        for issue in issues {
            self.count += 1;
            match &issue.record_id {
                Some(id) => self.ids.push(id.clone()),
                None => self.unnamed += 1,
            }
            if self.shown.len() < SHOWN {
                self.shown.push(issue);
            }
        }
        if read == 0 && unreadable >= 2 {
            return Err(self.failure(format!(
                "None of the {unreadable} records of a page could be read"
            )));
        }
        Ok(())
    }

    /// After the last page, of which `read` records were read in all: more
    /// than one unreadable record and more than 1% of the records fails the
    /// sync (one record alone never does).
    pub fn check(&self, read: u64) -> Result<(), Problem> {
        let sent = read + self.count;
        if self.count > 1 && self.count * 100 > sent {
            return Err(self.failure(format!(
                "{} of the {sent} records could not be read, more than 1%",
                self.count
            )));
        }
        Ok(())
    }

    fn failure(&self, what: String) -> Problem {
        let first = self
            .shown
            .first()
            .map(|issue| format!(" (the first: {})", describe(issue)))
            .unwrap_or_default();
        Problem::new(format!(
            "{what}{first}; the platform's answers may have changed shape, so the sync stopped \
             and the previous data is kept."
        ))
    }

    /// How many records could not be read.
    pub fn count(&self) -> u64 {
        self.count
    }

    /// The first [`SHOWN`] issues.
    pub fn shown(&self) -> &[RecordIssue] {
        &self.shown
    }

    /// The ids of the records that could not be read.
    pub fn ids(&self) -> &[String] {
        &self.ids
    }

    /// Whether every unreadable record was named by its id: only then can
    /// a record missing from a whole list be told from one that was there
    /// but unreadable, and flagged deleted.
    pub fn all_named(&self) -> bool {
        self.unnamed == 0
    }
}

/// An issue in words: `record INV-9, Total: invalid type: string, expected a number`.
pub fn describe(issue: &RecordIssue) -> String {
    let record = match &issue.record_id {
        Some(id) => format!("record {id}"),
        None => "a record without a readable id".to_owned(),
    };
    match &issue.field {
        Some(field) => format!("{record}, {field}: {}", issue.reason),
        None => format!("{record}: {}", issue.reason),
    }
}

/// Records `issues` on operation `id` while `worker` holds it: in the
/// transaction that ends the run.
pub async fn record(
    db: &impl ConnectionTrait,
    id: Uuid,
    worker: &str,
    issues: &Issues,
) -> Result<(), sea_orm::DbErr> {
    let shown = if issues.shown.is_empty() {
        None
    } else {
        serde_json::to_string(&issues.shown).ok()
    };
    pull_operation::Entity::update_many()
        .col_expr(pull_operation::Column::RecordIssues, shown.into())
        .col_expr(
            pull_operation::Column::RecordIssueCount,
            (issues.count as i64).into(),
        )
        .filter(pull_operation::Column::Id.eq(id))
        .filter(pull_operation::Column::LeaseOwner.eq(worker))
        .filter(pull_operation::Column::Status.eq(PullStatus::Fetching))
        .exec(db)
        .await?;
    Ok(())
}

/// The issues stored on an operation, and how many more there were.
pub fn stored(operation: &pull_operation::Model) -> (Vec<RecordIssue>, u64) {
    let shown: Vec<RecordIssue> = operation
        .record_issues
        .as_deref()
        .and_then(|text| serde_json::from_str(text).ok())
        .unwrap_or_default();
    let count = operation.record_issue_count.max(0) as u64;
    let more = count.saturating_sub(shown.len() as u64);
    (shown, more)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn issue(id: Option<&str>) -> RecordIssue {
        RecordIssue {
            record_id: id.map(str::to_owned),
            field: Some("Total".to_owned()),
            reason: "invalid type: string, expected a number".to_owned(),
        }
    }

    #[test]
    fn one_unreadable_record_never_fails_a_sync_however_short() {
        let mut issues = Issues::default();
        issues
            .add_page(0, vec![issue(Some("a"))])
            .expect("a page of one");
        assert!(issues.check(0).is_ok());
        assert_eq!(issues.ids(), ["a"]);
        assert!(issues.all_named());
    }

    #[test]
    fn a_whole_page_unreadable_fails_at_once_naming_the_first() {
        let mut issues = Issues::default();
        let failed = issues
            .add_page(0, vec![issue(Some("a")), issue(None)])
            .expect_err("a whole page");
        assert!(
            failed.message.starts_with(
                "None of the 2 records of a page could be read (the first: record a, Total: invalid type"
            ),
            "{}",
            failed.message
        );
        assert!(!issues.all_named());
    }

    #[test]
    fn more_than_one_percent_fails_and_one_percent_does_not() {
        let mut issues = Issues::default();
        issues
            .add_page(98, vec![issue(Some("a")), issue(Some("b"))])
            .expect("most of the page read");
        assert!(issues.check(198).is_ok(), "2 of 200 is 1%");
        let failed = issues.check(197).expect_err("2 of 199 is more");
        assert!(
            failed
                .message
                .starts_with("2 of the 199 records could not be read, more than 1%"),
            "{}",
            failed.message
        );
    }

    #[test]
    fn only_the_first_are_shown_and_the_rest_counted() {
        let mut issues = Issues::default();
        let many = (0..SHOWN + 5)
            .map(|n| issue(Some(&n.to_string())))
            .collect();
        issues.add_page(10_000, many).expect("a few of many");
        assert_eq!(issues.shown().len(), SHOWN);
        assert_eq!(issues.count(), (SHOWN + 5) as u64);
    }
}
