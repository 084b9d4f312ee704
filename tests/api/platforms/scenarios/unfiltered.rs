//! The resync scenario of the platforms with a fake but no modified-since
//! filter (their NOTES.md say why): a first sync, then a resync of the same
//! data, which fetches whole again, or resumes from the platform's own
//! cursor (Plaid, Zettle); every record is kept byte for byte, and the calls
//! of both are exact and reported (`report`), so the calls table lists every
//! platform with a fake.

use std::sync::Arc;

use client::types::FetchMode;
use serde_json::json;

use super::report::report;
use super::{Case, assert_complete, connected, records, spawn, sync};
use crate::helpers::backends;
use crate::platforms::fake::{Answer, Call};

/// How a platform without a modified-since filter resyncs.
pub struct Unfiltered {
    /// Why it has no filter, briefly, as its NOTES.md says.
    pub why: &'static str,
    /// How a resync fetches: `Full`, or `Incremental` from the platform's
    /// own cursor.
    pub mode: FetchMode,
    /// Calls a resync of unchanged data makes.
    pub resync_calls: usize,
    /// Where the case's fake answers a resync with changes (Plaid's update
    /// from the history's last cursor): its answer when nothing changed.
    pub quiet: Option<fn(&Call) -> Option<Answer>>,
}

/// Generates the scenario's `#[tokio::test]` for the platform's `$case`
/// and `$unfiltered`, in a module `unfiltered`.
macro_rules! unfiltered_scenario {
    ($case:ident, $unfiltered:ident) => {
        /// The shared scenario of a resync without a filter (`platforms::scenarios::unfiltered`).
        mod unfiltered {
            $crate::platforms::scenarios::scenario_tests_with!(
                $case,
                $unfiltered,
                unfiltered,
                a_resync_without_a_modified_since_filter_makes_its_calls_again_and_keeps_every_record
                    => a_resync_without_a_filter,
            );
        }
    };
}
pub(crate) use unfiltered_scenario;

/// The scenario: a full sync, then a resync of the same data.
pub async fn a_resync_without_a_filter(case: &Case, unfiltered: &Unfiltered) {
    let data_type = case.sync.data_type;
    for backend in backends() {
        let fake = (case.fake)().await;
        let app = spawn(case, backend, &fake, 1).await;
        let (company_id, _) = connected(&app, case, &(case.authorization)(case.lasting)).await;
        let start = fake.calls().len();
        let first = sync(&app, company_id, data_type).await;
        assert_complete(case, &first);
        assert_eq!(first.fetch_mode, Some(FetchMode::Full), "{}", case.key);
        let first_calls = fake.calls().len() - start;
        assert_eq!(first_calls, case.sync.calls, "{}: a first sync", case.key);
        let before = records(&app, company_id, data_type).await;
        assert_eq!(before.len(), case.sync.records, "{}", case.key);

        if let Some(quiet) = unfiltered.quiet {
            fake.with(|inner| inner.overriding = Some(Arc::new(quiet)));
        }
        let second = sync(&app, company_id, data_type).await;
        assert_complete(case, &second);
        assert_eq!(
            second.fetch_mode.as_ref(),
            Some(&unfiltered.mode),
            "{}",
            case.key
        );
        let resync_calls = fake.calls().len() - start - first_calls;
        assert_eq!(
            resync_calls, unfiltered.resync_calls,
            "{}: a resync of the same data",
            case.key
        );
        assert_eq!(
            records(&app, company_id, data_type).await,
            before,
            "{}: every record kept byte for byte",
            case.key
        );
        report(
            backend,
            case.key,
            json!({
                "scenario": "unfiltered",
                "dataType": data_type,
                "records": before.len(),
                "firstCalls": first_calls,
                "resyncCalls": resync_calls,
                "mode": format!("{:?}", unfiltered.mode),
                "why": unfiltered.why,
            }),
        );
    }
}
