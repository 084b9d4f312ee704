//! Each platform's limits kept before the platform complains: two
//! instances sharing a database pace one organization's calls together
//! under QuickBooks Online's declared rate, and a Xero organization whose
//! daily quota is spent (its `X-DayLimit-Remaining`) ends the sync
//! `RateLimitError`, keeps the data and the connection, and the next sync
//! makes no call at all.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::json;

use client::types::{ConnectionStatus, PullStatus, QueueDataTypeDataType};

use crate::connections::{new_company, new_connection};
use crate::helpers::{TestApp, backends};
use crate::platforms::fake::{Call, Fake, Scheme, fixture};
use crate::platforms::scenarios::records;
use crate::platforms::{authorize, latest, options_for, quickbooks_online, sync, xero};
use crate::sync::settled;

/// QuickBooks Online's declared rate: 8 calls a second per company and
/// application (`src/platforms/quickbooks_online/connector.rs`).
const QUICKBOOKS_PER_SECOND: usize = 8;

/// Queues every data type of each of `companies` at once, and waits until
/// their invoices and customers completed.
async fn sync_all_completely(app: &TestApp, companies: &[uuid::Uuid]) {
    for company_id in companies {
        app.client
            .sync_all_data(company_id, None)
            .await
            .expect("queued");
    }
    for company_id in companies {
        let operations = settled(&app.client, *company_id).await;
        for data_type in ["invoices", "customers"] {
            let operation = latest(&operations, data_type);
            assert_eq!(operation.status, PullStatus::Complete, "{operation:?}");
        }
    }
}

/// The most of `times` within any `window` after one of them.
fn busiest(times: &[Instant], window: Duration) -> usize {
    times
        .iter()
        .map(|start| {
            times
                .iter()
                .filter(|at| **at >= *start && **at < *start + window)
                .count()
        })
        .max()
        .unwrap_or(0)
}

#[tokio::test]
async fn two_instances_syncing_one_organization_keep_its_rate_together() {
    for backend in backends() {
        let arrivals = Arc::new(Mutex::new(Vec::new()));
        let recorded = Arc::clone(&arrivals);
        let whole = quickbooks_online::router();
        let fake = Fake::start(
            "quickbooks-online",
            Scheme::Bearer,
            "qbo-access-token-0001",
            "qbo-refresh-token-0001",
            fixture("quickbooks_online/fixtures/unauthorized.json"),
            Arc::new(move |call: &Call| {
                recorded
                    .lock()
                    .expect("the arrivals' lock")
                    .push(Instant::now());
                whole(call)
            }),
        )
        .await;
        // A record a page: many calls, from both instances' two workers.
        let app = TestApp::spawn_with(backend, options_for(&fake, Some(1), 2)).await;
        let _second = app.another_instance(options_for(&fake, Some(1), 2)).await;
        let mut companies = Vec::new();
        for name in ["Books one", "Books two"] {
            let company_id = new_company(&app, name).await;
            let connection_id = new_connection(&app, company_id, "quickbooks-online").await;
            let body = json!({
                "realmId": quickbooks_online::REALM,
                "accessToken": "qbo-access-token-0001",
                "refreshToken": "qbo-refresh-token-0001",
                "expiresIn": 3600
            });
            let response = authorize(&app, company_id, connection_id, &body, false).await;
            assert_eq!(response.status(), 200);
            companies.push(company_id);
        }
        let started = Instant::now();
        sync_all_completely(&app, &companies).await;
        let elapsed = started.elapsed();
        let times = arrivals.lock().expect("the arrivals' lock").clone();
        assert!(
            times.len() > 2 * QUICKBOOKS_PER_SECOND,
            "enough calls to need pacing: {}",
            times.len()
        );
        // The calls go in bursts of 8 a second apart, each burst at one
        // instant; a busy machine may deliver a burst late, closer to the
        // next, so the window checked is half a second: two bursts fall in
        // one only when one is half a second late.
        let busiest = busiest(&times, Duration::from_millis(500));
        assert!(
            busiest <= QUICKBOOKS_PER_SECOND,
            "{busiest} calls within 500 ms, {} in all over {elapsed:?} ({backend:?})",
            times.len()
        );
        assert!(
            elapsed >= Duration::from_secs(((times.len() - 1) / QUICKBOOKS_PER_SECOND) as u64),
            "{} calls at 8 a second take their time: {elapsed:?}",
            times.len()
        );
    }
}

#[tokio::test]
async fn a_spent_daily_quota_ends_the_sync_rate_limited_and_the_next_one_calls_nothing() {
    for backend in backends() {
        let spent = Arc::new(AtomicBool::new(false));
        let router_spent = Arc::clone(&spent);
        let whole = xero::router();
        let fake = Fake::start(
            "xero",
            Scheme::Bearer,
            "xero-access-token-0001",
            "xero-refresh-token-0001",
            fixture("xero/fixtures/unauthorized.json"),
            Arc::new(move |call: &Call| {
                let mut answer = whole(call);
                if call.path == "/api.xro/2.0/Invoices" {
                    // Xero counts every application's calls against the
                    // organization's day: other applications spent it.
                    let left = if router_spent.load(Ordering::SeqCst) {
                        "0"
                    } else {
                        "4990"
                    };
                    answer
                        .headers
                        .push(("X-DayLimit-Remaining".to_owned(), left.to_owned()));
                    answer
                        .headers
                        .push(("X-MinLimit-Remaining".to_owned(), "59".to_owned()));
                }
                answer
            }),
        )
        .await;
        let app = TestApp::spawn_with(backend, options_for(&fake, None, 1)).await;
        let (company_id, connection_id) = xero::connected(&app, 1800).await;
        let first = latest(
            &sync(&app, company_id, QueueDataTypeDataType::Invoices).await,
            "invoices",
        );
        assert_eq!(first.status, PullStatus::Complete, "{first:?}");
        let before = records(&app, company_id, "invoices").await;
        assert_eq!(before.len(), 7);

        // The first page says the day is spent: its second page is not asked.
        spent.store(true, Ordering::SeqCst);
        let calls = fake.calls().len();
        let limited = latest(
            &sync(&app, company_id, QueueDataTypeDataType::Invoices).await,
            "invoices",
        );
        assert_eq!(limited.status, PullStatus::RateLimitError, "{limited:?}");
        let tomorrow = chrono::Utc::now().date_naive() + chrono::Days::new(1);
        let message = limited
            .error_message
            .clone()
            .expect("a rate-limited operation says why");
        assert!(
            message.contains("Xero's daily limit of 5000 calls for this organization is spent")
                && message.contains(&format!("the sync can continue after {tomorrow}T00:00:00Z")),
            "{message}"
        );
        assert!(!message.contains("xero-access-token"), "{message}");
        assert_eq!(fake.calls().len(), calls + 1, "page 2 was not asked");
        assert_eq!(
            records(&app, company_id, "invoices").await,
            before,
            "the previous data, whole"
        );
        let connection = app
            .client
            .get_connection(&company_id, &connection_id)
            .await
            .expect("the connection")
            .into_inner();
        assert_eq!(connection.status, ConnectionStatus::Linked);

        // Until the day turns, a sync does not call Xero at all.
        let again = latest(
            &sync(&app, company_id, QueueDataTypeDataType::Invoices).await,
            "invoices",
        );
        assert_eq!(again.status, PullStatus::RateLimitError, "{again:?}");
        assert_eq!(fake.calls().len(), calls + 1, "Xero was not called");
    }
}

/// Xero's calls in progress at once per organization and application
/// (`src/platforms/xero/connector.rs`).
const XERO_AT_ONCE: usize = 5;

#[tokio::test]
async fn two_instances_never_have_more_calls_in_progress_than_the_organization_allows() {
    for backend in backends() {
        let fake = xero::fake().await;
        // Slow answers, so that calls overlap.
        fake.with(|inner| inner.answer_delay = Duration::from_millis(300));
        // Eight runs at once across the two instances, all for one tenant.
        let app = TestApp::spawn_with(backend, options_for(&fake, None, 4)).await;
        let _second = app.another_instance(options_for(&fake, None, 4)).await;
        let mut companies = Vec::new();
        for _ in 0..4 {
            let (company_id, _) = xero::connected(&app, 1800).await;
            companies.push(company_id);
        }
        sync_all_completely(&app, &companies).await;
        let most = fake.with(|inner| inner.most_in_flight);
        assert!(
            (2..=XERO_AT_ONCE).contains(&most),
            "{most} calls in progress at once ({backend:?})"
        );
    }
}

/// Thirty-two callers of one organization asking for their turns at once,
/// as four processes' workers might, are each paced: none goes unpaced
/// because the pace's row kept moving under it (a lost race is retried
/// after a short random pause), and exactly the rate's ten go in the first
/// window.
#[tokio::test]
async fn many_callers_asking_at_once_are_each_paced() {
    use tributary::platforms::kit::limits::Limits;
    use tributary::sync::pacing::{self, Subject};

    for backend in backends() {
        let app = TestApp::spawn(backend).await;
        let limits = Limits::per_minute(10);
        let mut callers = tokio::task::JoinSet::new();
        for _ in 0..32 {
            let db = app.db.clone();
            callers.spawn(async move {
                let subject = Subject {
                    platform_key: "xero",
                    platform: "Xero",
                    application: "crowded-application",
                    organization: "crowded-organization",
                };
                pacing::gate(&db, subject, limits).admit().await
            });
        }
        let mut turns = Vec::new();
        while let Some(turn) = callers.join_next().await {
            turns.push(turn.expect("a caller").expect("a turn"));
        }
        let unpaced = turns.iter().filter(|turn| turn.slot.is_none()).count();
        assert_eq!(unpaced, 0, "every turn was reserved ({backend:?})");
        let first_window = turns
            .iter()
            .filter(|turn| turn.wait < Duration::from_secs(30))
            .count();
        assert_eq!(
            first_window, 10,
            "the rate's ten go at once, the rest a window later or more ({backend:?})"
        );
    }
}
