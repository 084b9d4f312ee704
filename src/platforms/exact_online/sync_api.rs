//! Exact's sync APIs (`/api/v1/{division}/sync/…`): 1,000 records a page,
//! each with a row-version `Timestamp` (an ever-growing counter); a whole
//! list is `$filter=Timestamp gt 1L`, what changed since is
//! `Timestamp gt <highest seen>L`, and deletions are read from
//! `sync/Deleted` by entity type, since a sync list never shows them.
//! Where a walk stands travels in the cursor; where the next sync resumes
//! is the engine's `resume`. Sources: `NOTES.md`, "Accounting model".

use serde::Deserialize;
use serde::de::{self, DeserializeOwned, Deserializer};
use serde_json::value::RawValue;

use super::ExactOnlineAuthorization;
use super::connector::ExactOnlineConnector;
use crate::platforms::connector::{ConnectorError, Fetched, Since};
use crate::platforms::kit::paging::NextLink;
use crate::platforms::kit::records::{Keyed, Unreadable};

/// The first `Timestamp` of a whole list: the sync APIs answer
/// `Timestamp gt 1` with every record.
const START: u64 = 1;

/// A row version (`Timestamp`, an `Int64`): OData v2 writes 64-bit integers
/// as strings, so both a string and a number are read.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, PartialOrd, Ord)]
pub(super) struct Counter(pub(super) u64);

impl<'de> Deserialize<'de> for Counter {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let raw: &RawValue = Deserialize::deserialize(deserializer)?;
        let text = raw.get().trim();
        let digits = text
            .strip_prefix('"')
            .and_then(|inner| inner.strip_suffix('"'))
            .unwrap_or(text);
        digits
            .parse()
            .map(Counter)
            .map_err(|_| de::Error::custom("a Timestamp is not a whole number"))
    }
}

/// A record of a sync list: its row version.
pub(super) trait Stamped {
    /// The record's `Timestamp`.
    fn timestamp(&self) -> Counter;
}

/// One sync list: its path, the fields read, and its `EntityType` in
/// `sync/Deleted`.
pub(super) struct SyncList {
    /// The path under the division (`sync/Financial/GLAccounts`).
    pub(super) resource: &'static str,
    /// The `$select` (with `Timestamp`).
    pub(super) select: &'static str,
    /// Its entity type in `sync/Deleted` (7 GL accounts, 2 accounts, 9 items).
    pub(super) deleted_type: u8,
    /// What a page is, for messages.
    pub(super) what: &'static str,
}

/// What a sync record becomes.
pub(super) enum Kept<R> {
    /// One of ours.
    Record(R),
    /// Not (or no longer) one of ours: flagged deleted if it was stored
    /// (an account that stopped being a supplier).
    Gone(String),
}

/// A deletion (`sync/Deleted`): the deleted record's key and type.
#[derive(Deserialize)]
#[serde(rename_all = "PascalCase")]
struct Deleted {
    timestamp: Counter,
    entity_key: Option<String>,
}

impl Keyed for Deleted {
    const ID: &'static str = "/EntityKey";
}

/// Where a walk over a sync list stands: reading the list (`deletions`
/// false) or its deletions, the highest row versions seen of each, and
/// Exact's `__next` in the current one. As a cursor:
/// `<list|deleted> <highest> <deleted> [link]`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Walk {
    pub(super) deletions: bool,
    pub(super) highest: u64,
    pub(super) deleted: u64,
    pub(super) link: NextLink,
}

impl Walk {
    /// Where a page starts: the cursor's position, else the start of what
    /// changed since the resume point the last sync kept, else (a whole
    /// list) from the first row version.
    pub(super) fn at(
        cursor: Option<String>,
        since: Option<&Since>,
    ) -> Result<Self, ConnectorError> {
        match cursor {
            Some(cursor) => Self::parse(&cursor),
            None => {
                let (highest, deleted) = since
                    .and_then(|since| since.cursor.as_deref())
                    .and_then(resume_point)
                    .unwrap_or((START, START));
                Ok(Self {
                    deletions: false,
                    highest,
                    deleted,
                    link: NextLink::First,
                })
            }
        }
    }

    fn parse(cursor: &str) -> Result<Self, ConnectorError> {
        let invalid =
            || ConnectorError::Failed(format!("invalid Exact Online sync cursor {cursor:?}"));
        let mut parts = cursor.splitn(4, ' ');
        let deletions = match parts.next() {
            Some("list") => false,
            Some("deleted") => true,
            _ => return Err(invalid()),
        };
        let highest = parts
            .next()
            .and_then(|n| n.parse().ok())
            .ok_or_else(invalid)?;
        let deleted = parts
            .next()
            .and_then(|n| n.parse().ok())
            .ok_or_else(invalid)?;
        Ok(Self {
            deletions,
            highest,
            deleted,
            link: NextLink::from_cursor(parts.next().map(str::to_owned)),
        })
    }

    /// The cursor of the page after this one: Exact's next link in the same
    /// list; after the list's last page, the deletions (only when changes
    /// are asked for: a whole list finds its deletions itself); else none.
    fn after(&self, next: Option<String>, changes: bool) -> Option<String> {
        let stage = if self.deletions { "deleted" } else { "list" };
        match NextLink::next(next) {
            Some(link) => Some(format!("{stage} {} {} {link}", self.highest, self.deleted)),
            None if !self.deletions && changes => {
                Some(format!("deleted {} {}", self.highest, self.deleted))
            }
            None => None,
        }
    }

    /// Where the next sync resumes: `<highest> <deleted>`.
    fn resume(&self) -> String {
        format!("{} {}", self.highest, self.deleted)
    }
}

/// The row versions a resume point names.
fn resume_point(text: &str) -> Option<(u64, u64)> {
    let (highest, deleted) = text.split_once(' ')?;
    Some((highest.parse().ok()?, deleted.parse().ok()?))
}

impl ExactOnlineConnector {
    /// A page of sync list `list` from where `cursor` (or `since`'s resume
    /// point) stands, each record made ours by `into`; after the list, when
    /// changes were asked for, the list's deletions. The last page says
    /// where the next sync resumes.
    pub(super) async fn sync_page<T, R>(
        &self,
        credentials: &ExactOnlineAuthorization,
        list: &SyncList,
        (since, cursor): (Option<Since>, Option<String>),
        mut into: impl FnMut(T) -> Result<Kept<R>, Unreadable>,
    ) -> Result<Fetched<R>, ConnectorError>
    where
        T: DeserializeOwned + Keyed + Stamped,
    {
        let changes = since.is_some();
        let mut walk = Walk::at(cursor, since.as_ref())?;
        if walk.deletions {
            let filter = format!(
                "Timestamp gt {}L and EntityType eq {}",
                walk.deleted, list.deleted_type
            );
            let query = [
                ("$select", "EntityKey,Timestamp"),
                ("$filter", filter.as_str()),
            ];
            let link = walk.link.clone();
            let (page, next) = self
                .list_page::<Deleted>(
                    credentials,
                    "a page of deletions",
                    &query,
                    "sync/Deleted",
                    cursor_of(link),
                )
                .await?;
            if let Some(last) = page.last_read() {
                walk.deleted = walk.deleted.max(last.timestamp.0);
            }
            let removed: Vec<String> = page.read(|deletion| Ok(deletion.entity_key)).records;
            let following = walk.after(next, changes);
            let fetched = Fetched::all(Vec::new(), following.clone()).removing(removed);
            return Ok(match following {
                Some(_) => fetched,
                None => fetched.resuming(Some(walk.resume())),
            });
        }
        let filter = format!("Timestamp gt {}L", walk.highest);
        let query = [("$select", list.select), ("$filter", filter.as_str())];
        let link = walk.link.clone();
        let (page, next) = self
            .list_page::<T>(
                credentials,
                list.what,
                &query,
                list.resource,
                cursor_of(link),
            )
            .await?;
        if let Some(last) = page.last_read() {
            walk.highest = walk.highest.max(last.timestamp().0);
        }
        let mut gone = Vec::new();
        let read = page.read(|record| {
            Ok(match into(record)? {
                Kept::Record(record) => Some(record),
                Kept::Gone(id) => {
                    gone.push(id);
                    None
                }
            })
        });
        let following = walk.after(next, changes);
        let fetched = Fetched::read(read, following.clone()).removing(gone);
        Ok(match following {
            Some(_) => fetched,
            None => fetched.resuming(Some(walk.resume())),
        })
    }
}

/// A walk's link as `list_page` takes it.
fn cursor_of(link: NextLink) -> Option<String> {
    match link {
        NextLink::First => None,
        NextLink::Given(url) => Some(url),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::Utc;

    #[test]
    fn a_walk_reads_the_list_then_its_deletions_and_resumes_from_both() {
        let since = Since {
            time: Utc::now(),
            cursor: Some("120 45".to_owned()),
        };
        let first = Walk::at(None, Some(&since)).expect("a walk");
        assert_eq!(
            (first.deletions, first.highest, first.deleted),
            (false, 120, 45)
        );
        let next = first.after(
            Some("https://x/api/v1/1/sync/A?$skiptoken=9".to_owned()),
            true,
        );
        assert_eq!(
            next.as_deref(),
            Some("list 120 45 https://x/api/v1/1/sync/A?$skiptoken=9")
        );
        let last = Walk {
            highest: 130,
            ..first.clone()
        };
        assert_eq!(last.after(None, true).as_deref(), Some("deleted 130 45"));
        assert_eq!(last.after(None, false), None);
        let deletions = Walk::at(Some("deleted 130 45".to_owned()), None).expect("a walk");
        assert!(deletions.deletions);
        assert_eq!(deletions.after(None, true), None);
        assert_eq!(deletions.resume(), "130 45");
        let whole = Walk::at(None, None).expect("a walk");
        assert_eq!((whole.highest, whole.deleted), (START, START));
        assert!(Walk::at(Some("sideways 1 2".to_owned()), None).is_err());
    }

    #[test]
    fn a_row_version_is_read_from_a_string_or_a_number() {
        let text: Counter = serde_json::from_str("\"9007199254740993\"").expect("a counter");
        assert_eq!(text, Counter(9_007_199_254_740_993));
        let number: Counter = serde_json::from_str("17").expect("a counter");
        assert_eq!(number, Counter(17));
        assert!(serde_json::from_str::<Counter>("\"x\"").is_err());
    }
}
