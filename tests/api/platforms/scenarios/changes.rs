//! The incremental-fetch scenario every platform with a modified-since
//! filter runs: a first sync fetches whole; the next one asks only for what
//! changed since the platform's own time when the first began (its `Date`,
//! [`PLATFORM_DATE`]), less the connector's overlap, in the platform's
//! format, and stores exactly what the platform answers: the changed and new
//! records, every other one kept byte for byte. What differs per platform is
//! a [`Changed`] beside its `CASE`: its fake answering the filter, where the
//! filter travels and the value it must have.

use futures::future::BoxFuture;

use client::types::FetchMode;

use super::{Case, assert_complete, connected, records, spawn, sync};
use crate::helpers::backends;
use crate::platforms::fake::{Call, Fake};

/// The `Date` the scenario has every answer of a [`Changed::fake`] carry:
/// the platform's clock, hours behind the test's, so that a watermark taken
/// from tributary's clock would show.
pub const PLATFORM_DATE: &str = "Fri, 27 Nov 2026 09:00:00 GMT";

/// How a platform is asked for what changed, for the shared scenario.
pub struct Changed {
    /// The data type asked (`invoices`, `orders`).
    pub data_type: &'static str,
    /// The platform's fake: its whole lists as the case's, and a request
    /// carrying the filter answered with a page of changes (the scenario
    /// dates every answer [`PLATFORM_DATE`]).
    pub fake: fn() -> BoxFuture<'static, Fake>,
    /// The filter a call carries, as sent (a header's or parameter's value,
    /// or the part of a query or body that holds it); `None` without one.
    pub filter: fn(&Call) -> Option<String>,
    /// What it must be: [`PLATFORM_DATE`] less the platform's overlap, in the
    /// platform's format.
    pub since: &'static str,
    /// Calls of the resync that carry the filter (pages of changes).
    pub calls: usize,
    /// Records the changes change.
    pub changed: usize,
    /// Records the changes add.
    pub added: usize,
}

/// Generates the scenario's `#[tokio::test]` for the platform's `$case`
/// and `$changed`, in a module `changes`.
macro_rules! changes_scenario {
    ($case:ident, $changed:ident) => {
        /// The shared incremental-fetch scenario (`platforms::scenarios::changes`).
        mod changes {
            #[tokio::test]
            async fn a_resync_asks_only_for_what_changed_since_the_first_fetch_and_stores_exactly_that() {
                $crate::platforms::scenarios::changes::a_resync_asks_only_for_what_changed(
                    &super::$case,
                    &super::$changed,
                )
                .await;
            }
        }
    };
}
pub(crate) use changes_scenario;

/// The scenario: a full sync, then one asking for what changed.
pub async fn a_resync_asks_only_for_what_changed(case: &Case, changed: &Changed) {
    let data_type = changed.data_type;
    for backend in backends() {
        let fake = (changed.fake)().await;
        fake.with(|inner| inner.date = Some(PLATFORM_DATE.to_owned()));
        let app = spawn(case, backend, &fake, 1).await;
        let (company_id, _) = connected(&app, case, &(case.authorization)(case.lasting)).await;
        let first = sync(&app, company_id, data_type).await;
        assert_complete(case, &first);
        assert_eq!(first.fetch_mode, Some(FetchMode::Full), "{}", case.key);
        assert!(
            fake.calls()
                .iter()
                .all(|call| (changed.filter)(call).is_none()),
            "{}: a first sync fetches whole",
            case.key
        );
        let before = records(&app, company_id, data_type).await;
        assert!(!before.is_empty(), "{}", case.key);
        let first_stamp = before[0]["modifiedDate"].as_str().map(str::to_owned);
        let calls_before = fake.calls().len();

        let second = sync(&app, company_id, data_type).await;
        assert_complete(case, &second);
        assert_eq!(
            second.fetch_mode,
            Some(FetchMode::Incremental),
            "{}",
            case.key
        );
        let asked: Vec<String> = fake.calls()[calls_before..]
            .iter()
            .filter_map(changed.filter)
            .collect();
        assert_eq!(asked.len(), changed.calls, "{}: {asked:?}", case.key);
        assert!(
            asked.iter().all(|since| since == changed.since),
            "{}: the platform's own time when the first fetch began, less the overlap, in its format: {asked:?}",
            case.key
        );

        let after = records(&app, company_id, data_type).await;
        assert_eq!(
            after.len(),
            before.len() + changed.added,
            "{}: the new records joined, none left",
            case.key
        );
        let kept = after
            .iter()
            .filter(|record| before.contains(record))
            .count();
        assert_eq!(
            kept,
            before.len() - changed.changed,
            "{}: every record the platform did not change is kept byte for byte",
            case.key
        );
        for record in after.iter().filter(|record| !before.contains(record)) {
            assert!(
                record["modifiedDate"].as_str().map(str::to_owned) > first_stamp,
                "{}: a changed or new record is newer: {record}",
                case.key
            );
        }
    }
}
