//! The incremental-fetch scenario every platform with a modified-since
//! filter runs: a first sync fetches whole; the next one asks only for what
//! changed since the platform's own time when the first began (its `Date`,
//! [`PLATFORM_DATE`]), less the connector's overlap, in the platform's
//! format, and stores exactly what the platform answers: the changed and new
//! records, every other one kept byte for byte. What differs per platform is
//! a [`Changed`] beside its `CASE`: its fake answering the filter, where the
//! filter travels and the value it must have, and its answer when nothing
//! changed. A second scenario resyncs with nothing changed: the platform's
//! minimum of calls (one per data type, unless its [`Changed::quiet_calls`]
//! says why more), every record kept byte for byte. Both report their calls
//! (`report`).

use std::sync::Arc;

use futures::future::BoxFuture;
use serde_json::{Value, json};
use uuid::Uuid;

use client::types::FetchMode;

use super::report::report;
use super::{Case, assert_complete, connected, records, spawn, sync};
use crate::helpers::{Backend, TestApp, backends};
use crate::platforms::fake::{Answer, Call, Fake};

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
    /// Calls of the resync that carry the filter (pages of changes, and of
    /// deletions where the platform lists them apart: Sage).
    pub calls: usize,
    /// Records the changes change.
    pub changed: usize,
    /// Records the changes add.
    pub added: usize,
    /// The platform's answer to a filtered call when nothing changed since
    /// (its documented empty page, or what it answers instead).
    pub quiet: fn(&Call) -> Answer,
    /// Calls a resync makes when nothing changed, the case's prelude (what a
    /// sync asks before the list) included: one per data type, the
    /// platform's minimum, unless the platform's value says why more.
    pub quiet_calls: usize,
}

/// Generates the scenarios' `#[tokio::test]`s for the platform's `$case`
/// and `$changed`, in a module `changes`.
macro_rules! changes_scenario {
    ($case:ident, $changed:ident) => {
        /// The shared incremental-fetch scenarios (`platforms::scenarios::changes`).
        mod changes {
            $crate::platforms::scenarios::scenario_tests_with!(
                $case,
                $changed,
                changes,
                a_resync_asks_only_for_what_changed_since_the_first_fetch_and_stores_exactly_that
                    => a_resync_asks_only_for_what_changed,
                an_unchanged_resync_makes_the_platforms_minimum_of_calls_and_keeps_every_record
                    => an_unchanged_resync_makes_the_minimum_of_calls,
            );
        }
    };
}
pub(crate) use changes_scenario;

/// An app whose platform is the fake of `changed`, after a first sync of its
/// data type (a whole fetch).
struct FirstSync {
    app: TestApp,
    fake: Fake,
    company_id: Uuid,
    /// The records it stored.
    records: Vec<Value>,
    /// The platform calls it made.
    calls: usize,
}

impl FirstSync {
    async fn run(case: &Case, changed: &Changed, backend: Backend) -> Self {
        let fake = (changed.fake)().await;
        fake.with(|inner| inner.date = Some(PLATFORM_DATE.to_owned()));
        let app = spawn(case, backend, &fake, 1).await;
        let (company_id, _) = connected(&app, case, &(case.authorization)(case.lasting)).await;
        let before = fake.calls().len();
        let first = sync(&app, company_id, changed.data_type).await;
        assert_complete(case, &first);
        assert_eq!(first.fetch_mode, Some(FetchMode::Full), "{}", case.key);
        assert!(
            fake.calls()
                .iter()
                .all(|call| (changed.filter)(call).is_none()),
            "{}: a first sync fetches whole",
            case.key
        );
        let records = records(&app, company_id, changed.data_type).await;
        assert!(!records.is_empty(), "{}", case.key);
        let calls = fake.calls().len() - before;
        Self {
            app,
            fake,
            company_id,
            records,
            calls,
        }
    }

    /// Resyncs incrementally; the calls it made.
    async fn resync(&self, case: &Case, changed: &Changed) -> Vec<Call> {
        let before = self.fake.calls().len();
        let second = sync(&self.app, self.company_id, changed.data_type).await;
        assert_complete(case, &second);
        assert_eq!(
            second.fetch_mode,
            Some(FetchMode::Incremental),
            "{}",
            case.key
        );
        self.fake.calls()[before..].to_vec()
    }

    /// Every stored record of the data type now.
    async fn records_now(&self, changed: &Changed) -> Vec<Value> {
        records(&self.app, self.company_id, changed.data_type).await
    }
}

/// The scenario: a full sync, then one asking for what changed.
pub async fn a_resync_asks_only_for_what_changed(case: &Case, changed: &Changed) {
    for backend in backends() {
        let first = FirstSync::run(case, changed, backend).await;
        let before = &first.records;
        let first_stamp = before[0]["modifiedDate"].as_str().map(str::to_owned);

        let calls = first.resync(case, changed).await;
        let asked: Vec<String> = calls.iter().filter_map(changed.filter).collect();
        assert_eq!(asked.len(), changed.calls, "{}: {asked:?}", case.key);
        assert!(
            asked.iter().all(|since| since == changed.since),
            "{}: the platform's own time when the first fetch began, less the overlap, in its format: {asked:?}",
            case.key
        );

        let after = first.records_now(changed).await;
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
        let carrier = calls
            .iter()
            .find(|call| (changed.filter)(call).is_some())
            .map(|call| carried_in(call, changed.since));
        report(
            backend,
            case.key,
            json!({
                "scenario": "changes",
                "dataType": changed.data_type,
                "records": before.len(),
                "firstCalls": first.calls,
                "resyncCalls": calls.len(),
                "changed": changed.changed,
                "added": changed.added,
                "filter": carrier,
                "since": changed.since,
            }),
        );
    }
}

/// The scenario: a full sync, then a resync the platform answers with its
/// empty answer to every filtered call: the platform's minimum of calls,
/// each asking since the first sync began, and every record as it was,
/// `modifiedDate` included.
pub async fn an_unchanged_resync_makes_the_minimum_of_calls(case: &Case, changed: &Changed) {
    for backend in backends() {
        let first = FirstSync::run(case, changed, backend).await;
        let (filter, quiet) = (changed.filter, changed.quiet);
        first.fake.with(|inner| {
            inner.overriding = Some(Arc::new(move |call: &Call| {
                filter(call).map(|_| quiet(call))
            }));
        });

        let calls = first.resync(case, changed).await;
        let asked: Vec<(&str, Option<String>)> = calls
            .iter()
            .map(|call| (call.path.as_str(), (changed.filter)(call)))
            .collect();
        assert_eq!(
            calls.len(),
            changed.quiet_calls,
            "{}: the platform's minimum: {asked:?}",
            case.key
        );
        // What a sync asks before the list (Square's locations) carries no
        // filter; every call of the list does.
        let prelude = (case.pages.prelude)(&first.fake).len();
        assert!(
            asked.iter().enumerate().all(|(number, (_, since))| {
                let expected = (number >= prelude).then_some(changed.since);
                since.as_deref() == expected
            }),
            "{}: every call of the list asks since the first sync began: {asked:?}",
            case.key
        );
        assert_eq!(
            first.records_now(changed).await,
            first.records,
            "{}: every record kept byte for byte",
            case.key
        );
        report(
            backend,
            case.key,
            json!({
                "scenario": "unchanged",
                "dataType": changed.data_type,
                "records": first.records.len(),
                "firstCalls": first.calls,
                "resyncCalls": calls.len(),
            }),
        );
    }
}

/// Where `call` carries the filter holding `since`, in words (``query
/// `updated_since` ``, ``header `if-modified-since` ``, `body`).
fn carried_in(call: &Call, since: &str) -> String {
    let named = |pairs: &std::collections::HashMap<String, String>| {
        pairs
            .iter()
            .find(|(_, value)| value.contains(since))
            .map(|(name, _)| name.clone())
    };
    if let Some(name) = named(&call.query) {
        format!("query `{name}`")
    } else if let Some(name) = named(&call.headers) {
        format!("header `{name}`")
    } else {
        "body".to_owned()
    }
}
