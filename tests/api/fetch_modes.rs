//! Incremental fetches, as the engine runs them for any connector that can
//! ask its platform what changed: after a data type's first full sync, a
//! sync asks only for what changed since the watermark (the time the last
//! published fetch began, less the connector's overlap) and stores exactly
//! that, every other record keeping its copy; the watermark moves only when
//! a sync publishes; a full fetch (asked for with `?full=true`, or due a set
//! time after the last one) is what finds the records the platform deleted.
//! The platform is the sandbox, behind a stand-in that can answer changes.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use chrono::{DateTime, Utc};
use futures::future::BoxFuture;
use sea_orm::EntityTrait;
use serde_json::Value;
use uuid::Uuid;

use client::types::{FetchMode, PullOperation, PullStatus, QueueDataTypeDataType};
use tributary::data::DataType;
use tributary::data::Records;
use tributary::data::invoices::{Invoice, Invoices};
use tributary::platforms::connector::{
    AnyConnector, Changes, ConnectorError, Deletions, Page, Since,
};
use tributary::platforms::sandbox::SandboxAuthorization;
use tributary::platforms::sandbox::connector::SandboxConnector;
use tributary::platforms::sandbox::dataset::Dataset;
use tributary::sync::engine::EngineConfig;

use crate::connections::new_company;
use crate::helpers::{AppOptions, Backend, TestApp, backends, json};
use crate::platforms::latest;
use crate::sync::{sandbox_connection, settled};

pub(crate) const INVOICES: u64 = 300;
pub(crate) const SEED: u64 = 11;

/// What the platform holds besides the sandbox's invoices, and how it answers.
#[derive(Default)]
pub(crate) struct Platform {
    /// Invoices changed (or added) since the last sync: what a changes
    /// fetch answers, in one page.
    pub changed: Vec<Invoice>,
    /// The ids a changes fetch says were deleted (Plaid's `removed`).
    pub removed: Vec<String>,
    /// Invoices deleted at the platform (by index): no longer in the whole list.
    deleted: Vec<u64>,
    /// A changes fetch fails, as a platform that breaks off midway.
    failing: bool,
    /// The `since` of every changes fetch, in order.
    asked_since: Vec<DateTime<Utc>>,
    /// How many whole-list fetches began.
    full_fetches: usize,
}

/// The sandbox, as a platform that can say what changed.
#[derive(Clone)]
pub(crate) struct Changing {
    platform: Arc<Mutex<Platform>>,
    deletions: Deletions,
}

impl Changing {
    pub(crate) fn new(deletions: Deletions) -> Self {
        Self {
            platform: Arc::default(),
            deletions,
        }
    }

    pub(crate) fn with<T>(&self, change: impl FnOnce(&mut Platform) -> T) -> T {
        change(&mut self.platform.lock().expect("the platform"))
    }
}

impl AnyConnector for Changing {
    fn fetch<'a>(
        &'a self,
        credentials: &'a Value,
        data_type: DataType,
        since: Option<Since>,
        cursor: Option<String>,
    ) -> BoxFuture<'a, Result<Page, ConnectorError>> {
        Box::pin(async move {
            if data_type != DataType::INVOICES {
                return SandboxConnector
                    .fetch(credentials, data_type, None, cursor)
                    .await;
            }
            if let Some(since) = since {
                let answer = self.with(|platform| {
                    platform.asked_since.push(since.time);
                    (!platform.failing)
                        .then(|| (platform.changed.clone(), platform.removed.clone()))
                });
                let (changed, removed) = answer.ok_or_else(|| {
                    ConnectorError::Unavailable("the platform broke off the answer".to_owned())
                })?;
                return Ok(Page {
                    records: Records::of::<Invoices>(changed),
                    next: None,
                    total: None,
                    whole_list: false,
                    issues: Vec::new(),
                    resume: None,
                    removed,
                });
            }
            let authorization: SandboxAuthorization =
                serde_json::from_value(credentials.clone()).expect("a sandbox body");
            let dataset = Dataset::of(&authorization);
            let start = cursor
                .as_deref()
                .map_or(0, |at| at.parse().expect("a start"));
            let (deleted, changed) = self.with(|platform| {
                if start == 0 {
                    platform.full_fetches += 1;
                }
                let deleted: Vec<String> = platform
                    .deleted
                    .iter()
                    .map(|index| dataset.invoice(*index).invoice_id)
                    .collect();
                (deleted, platform.changed.clone())
            });
            let page = dataset.invoices(start);
            // The whole list holds the changed records as they are now.
            let mut records: Vec<Invoice> = page
                .records
                .into_iter()
                .filter(|invoice| !deleted.contains(&invoice.invoice_id))
                .map(|invoice| {
                    changed
                        .iter()
                        .find(|changed| changed.invoice_id == invoice.invoice_id)
                        .cloned()
                        .unwrap_or(invoice)
                })
                .collect();
            if page.next.is_none() {
                let listed: Vec<String> = records.iter().map(|r| r.invoice_id.clone()).collect();
                records.extend(
                    changed
                        .into_iter()
                        .filter(|invoice| !listed.contains(&invoice.invoice_id)),
                );
            }
            Ok(Page {
                records: Records::of::<Invoices>(records),
                next: page.next,
                total: page.total,
                whole_list: true,
                issues: Vec::new(),
                resume: None,
                removed: Vec::new(),
            })
        })
    }

    fn changes(&self, data_type: DataType) -> Option<Changes> {
        (data_type == DataType::INVOICES).then_some(Changes::with(self.deletions))
    }
}

async fn spawn(backend: Backend, platform: &Changing, full_fetch_every: Duration) -> TestApp {
    let options = AppOptions {
        engine: EngineConfig {
            full_fetch_every,
            ..AppOptions::default().engine
        },
        ..behind(platform)
    };
    TestApp::spawn_with(backend, options).await
}

/// Options of an app whose sandbox is `platform`.
pub(crate) fn behind(platform: &Changing) -> AppOptions {
    AppOptions::with_sandbox(Arc::new(platform.clone()))
}

/// A company of a new app whose sandbox connection, behind a [`Changing`]
/// platform whose changes carry `deletions`, has had its first (full) sync
/// of invoices; reconciliations due every `full_fetch_every`.
async fn synced_once(
    backend: Backend,
    deletions: Deletions,
    full_fetch_every: Duration,
) -> (Changing, TestApp, Uuid) {
    let platform = Changing::new(deletions);
    let app = spawn(backend, &platform, full_fetch_every).await;
    let company_id = new_company(&app, "Acme").await;
    sandbox_connection(&app, company_id, INVOICES, SEED).await;
    let first = sync_invoices(&app, company_id, None).await;
    assert_eq!(first.status, PullStatus::Complete, "{first:?}");
    assert_eq!(
        first.fetch_mode,
        Some(FetchMode::Full),
        "a first sync fetches whole"
    );
    (platform, app, company_id)
}

/// `POST path`, whose `full` is neither `true` nor `false`, is refused 400
/// naming the rule.
async fn assert_full_refused(app: &TestApp, path: &str) {
    let malformed = app.post_json(path, &serde_json::json!(null)).await;
    assert_eq!(malformed.status(), 400, "{path}");
    let body = json(malformed).await;
    assert_eq!(
        body["validation"]["errors"][0],
        serde_json::json!({"itemId": "full", "message": "must be `true` or `false`"}),
        "{body}"
    );
}

/// Queues the company's invoices (`full`: `?full=true`) and waits for the
/// operation to end; returns it.
pub(crate) async fn sync_invoices(
    app: &TestApp,
    company_id: Uuid,
    full: Option<bool>,
) -> PullOperation {
    let queued = app
        .client
        .queue_data_type(&company_id, QueueDataTypeDataType::Invoices, full)
        .await
        .expect("queued")
        .into_inner();
    let id = queued[0].pull_operation_id;
    settled(&app.client, company_id)
        .await
        .into_iter()
        .find(|operation| operation.pull_operation_id == id)
        .expect("the queued operation")
}

/// Every invoice of the company, by id.
pub(crate) async fn invoices(app: &TestApp, company_id: Uuid) -> Vec<Value> {
    let page = json(
        app.get(&format!(
            "/companies/{company_id}/data/invoices?pageSize=5000"
        ))
        .await,
    )
    .await;
    let mut all = page["results"].as_array().cloned().unwrap_or_default();
    all.sort_by(|a, b| a["invoiceId"].as_str().cmp(&b["invoiceId"].as_str()));
    all
}

pub(crate) fn by_id<'a>(invoices: &'a [Value], id: &str) -> &'a Value {
    invoices
        .iter()
        .find(|invoice| invoice["invoiceId"] == id)
        .unwrap_or_else(|| panic!("invoice {id} listed"))
}

pub(crate) fn dataset() -> Dataset {
    Dataset::invoices_only(SEED, INVOICES)
}

/// Invoice `index` as changed at the platform: a new note.
pub(crate) fn changed(index: u64, note: &str) -> Invoice {
    Invoice {
        note: Some(note.to_owned()),
        ..dataset().invoice(index)
    }
}

/// A new invoice at the platform, shaped like invoice `like`.
pub(crate) fn added(like: u64, id: &str) -> Invoice {
    Invoice {
        invoice_id: id.to_owned(),
        invoice_number: Some(format!("NEW-{id}")),
        ..dataset().invoice(like)
    }
}

/// Five minutes: the overlap the stand-in declares (`Changes::OVERLAP`).
fn overlap() -> chrono::Duration {
    chrono::Duration::from_std(Changes::OVERLAP).expect("an overlap")
}

#[tokio::test]
async fn a_resync_asks_only_for_what_changed_since_the_last_fetch_began_and_stores_exactly_that() {
    for backend in backends() {
        let platform = Changing::new(Deletions::OnlyByFullFetch);
        let app = spawn(backend, &platform, EngineConfig::default().full_fetch_every).await;
        let company_id = new_company(&app, "Acme").await;
        sandbox_connection(&app, company_id, INVOICES, SEED).await;

        let before_first = Utc::now();
        let first = sync_invoices(&app, company_id, None).await;
        let after_first = Utc::now();
        assert_eq!(first.status, PullStatus::Complete, "{first:?}");
        assert_eq!(
            first.fetch_mode,
            Some(FetchMode::Full),
            "a first sync fetches whole"
        );
        let before = invoices(&app, company_id).await;
        assert_eq!(before.len(), INVOICES as usize);

        // One invoice changes at the platform, one is added.
        let changed_id = dataset().invoice(5).invoice_id;
        platform.with(|platform| {
            platform.changed = vec![changed(5, "changed at the platform"), added(6, "new-1")];
        });
        let before_second = Utc::now();
        let second = sync_invoices(&app, company_id, None).await;
        let after_second = Utc::now();
        assert_eq!(second.status, PullStatus::Complete, "{second:?}");
        assert_eq!(second.fetch_mode, Some(FetchMode::Incremental));
        assert_eq!(second.records_fetched, 2, "only the changes were fetched");
        let asked = platform.with(|platform| platform.asked_since.clone());
        assert_eq!(asked.len(), 1);
        // The sandbox sends no `Date`: the watermark is tributary's clock
        // when the first fetch began, less the overlap.
        assert!(
            asked[0] >= before_first - overlap() && asked[0] <= after_first - overlap(),
            "asked since {} for a fetch that began between {before_first} and {after_first}",
            asked[0]
        );

        let after = invoices(&app, company_id).await;
        assert_eq!(after.len(), INVOICES as usize + 1, "the new invoice joined");
        let now_changed = by_id(&after, &changed_id);
        assert_eq!(now_changed["note"], "changed at the platform");
        assert!(
            now_changed["modifiedDate"].as_str()
                > by_id(&before, &changed_id)["modifiedDate"].as_str(),
            "a changed record is newer"
        );
        assert_eq!(by_id(&after, "new-1")["invoiceNumber"], "NEW-new-1");
        for was in &before {
            let id = was["invoiceId"].as_str().expect("an id");
            if id != changed_id {
                assert_eq!(
                    by_id(&after, id),
                    was,
                    "kept as it was, modifiedDate and all"
                );
            }
        }
        assert!(after.iter().all(|invoice| invoice["isDeleted"] == false));

        // Nothing changed since: the next sync asks from the second's start.
        platform.with(|platform| platform.changed.clear());
        let third = sync_invoices(&app, company_id, None).await;
        assert_eq!(third.fetch_mode, Some(FetchMode::Incremental));
        assert_eq!(third.records_fetched, 0);
        let asked = platform.with(|platform| platform.asked_since.clone());
        assert!(
            asked[1] >= before_second - overlap() && asked[1] <= after_second - overlap(),
            "the watermark moved to the second fetch"
        );
        assert_eq!(
            invoices(&app, company_id).await,
            after,
            "nothing changed, nothing moved"
        );
        assert_eq!(platform.with(|platform| platform.full_fetches), 1);
    }
}

#[tokio::test]
async fn a_sync_that_fails_midway_leaves_the_watermark_where_the_last_published_one_put_it() {
    for backend in backends() {
        let (platform, app, company_id) = synced_once(
            backend,
            Deletions::OnlyByFullFetch,
            EngineConfig::default().full_fetch_every,
        )
        .await;
        let before = invoices(&app, company_id).await;

        platform.with(|platform| {
            platform.changed = vec![changed(9, "lost?")];
            platform.failing = true;
        });
        let failed = sync_invoices(&app, company_id, None).await;
        assert_eq!(failed.status, PullStatus::Failed, "{failed:?}");
        assert_eq!(failed.fetch_mode, Some(FetchMode::Incremental));
        assert_eq!(
            invoices(&app, company_id).await,
            before,
            "the previous data is whole"
        );

        platform.with(|platform| platform.failing = false);
        let retried = sync_invoices(&app, company_id, None).await;
        assert_eq!(retried.status, PullStatus::Complete, "{retried:?}");
        let asked = platform.with(|platform| platform.asked_since.clone());
        assert!(asked.len() >= 2, "{asked:?}");
        assert!(
            asked.iter().all(|since| *since == asked[0]),
            "every attempt after the failure asked from the same watermark: {asked:?}"
        );
        let after = invoices(&app, company_id).await;
        assert_eq!(
            by_id(&after, &dataset().invoice(9).invoice_id)["note"],
            "lost?",
            "no change lost"
        );
    }
}

#[tokio::test]
async fn only_a_full_fetch_finds_what_the_platform_deleted_when_asked_for_or_due() {
    for backend in backends() {
        let (platform, app, company_id) = synced_once(
            backend,
            Deletions::OnlyByFullFetch,
            EngineConfig::default().full_fetch_every,
        )
        .await;

        let deleted_id = dataset().invoice(10).invoice_id;
        platform.with(|platform| platform.deleted = vec![10]);
        let incremental = sync_invoices(&app, company_id, None).await;
        assert_eq!(incremental.fetch_mode, Some(FetchMode::Incremental));
        let after = invoices(&app, company_id).await;
        assert_eq!(
            by_id(&after, &deleted_id)["isDeleted"],
            false,
            "changes that do not carry deletions cannot tell one"
        );

        let full = sync_invoices(&app, company_id, Some(true)).await;
        assert_eq!(full.status, PullStatus::Complete, "{full:?}");
        assert_eq!(full.fetch_mode, Some(FetchMode::Full), "?full=true");
        assert_eq!(full.records_fetched, INVOICES as i64 - 1);
        let after = invoices(&app, company_id).await;
        assert_eq!(by_id(&after, &deleted_id)["isDeleted"], true);
        assert_eq!(after.len(), INVOICES as usize, "flagged, still listed");
        assert_eq!(platform.with(|platform| platform.full_fetches), 2);
    }

    // A reconciliation due at every sync (the interval set to zero).
    for backend in backends() {
        let (platform, app, company_id) =
            synced_once(backend, Deletions::OnlyByFullFetch, Duration::ZERO).await;
        platform.with(|platform| platform.deleted = vec![10]);
        let due = sync_invoices(&app, company_id, None).await;
        assert_eq!(
            due.fetch_mode,
            Some(FetchMode::Full),
            "a reconciliation was due"
        );
        let after = invoices(&app, company_id).await;
        assert_eq!(
            by_id(&after, &dataset().invoice(10).invoice_id)["isDeleted"],
            true
        );
    }

    // `data/all?full=true` asks every data type it queues for a full fetch;
    // without it the same sync is incremental, and a malformed `full` is refused.
    for backend in backends() {
        let (platform, app, company_id) = synced_once(
            backend,
            Deletions::OnlyByFullFetch,
            EngineConfig::default().full_fetch_every,
        )
        .await;
        platform.with(|platform| platform.deleted = vec![10]);
        assert_full_refused(&app, &format!("/companies/{company_id}/data/all?full=1")).await;
        app.client
            .sync_all_data(&company_id, None)
            .await
            .expect("queued");
        let operations = settled(&app.client, company_id).await;
        let incremental = latest(&operations, "invoices");
        assert_eq!(incremental.fetch_mode, Some(FetchMode::Incremental));
        app.client
            .sync_all_data(&company_id, Some(true))
            .await
            .expect("queued");
        let operations = settled(&app.client, company_id).await;
        let full = latest(&operations, "invoices");
        assert_eq!(full.status, PullStatus::Complete, "{full:?}");
        assert_eq!(full.fetch_mode, Some(FetchMode::Full), "data/all?full=true");
        assert_eq!(
            by_id(
                &invoices(&app, company_id).await,
                &dataset().invoice(10).invoice_id
            )["isDeleted"],
            true,
            "the full fetch found the deletion"
        );
        assert_eq!(platform.with(|platform| platform.full_fetches), 2);
    }

    // A platform whose changes carry its deletions is not reconciled by schedule.
    for backend in backends() {
        let (_platform, app, company_id) =
            synced_once(backend, Deletions::InChanges, Duration::ZERO).await;
        let next = sync_invoices(&app, company_id, None).await;
        assert_eq!(next.fetch_mode, Some(FetchMode::Incremental));
    }
}

#[tokio::test]
async fn a_full_fetch_asked_for_while_queued_is_kept_and_a_malformed_full_is_refused() {
    for backend in backends() {
        let app = TestApp::spawn_with(backend, AppOptions::idle()).await;
        let company_id = new_company(&app, "Acme").await;
        sandbox_connection(&app, company_id, INVOICES, SEED).await;
        let queued = app
            .client
            .queue_data_type(&company_id, QueueDataTypeDataType::Invoices, None)
            .await
            .expect("queued")
            .into_inner();
        assert_eq!(
            queued[0].fetch_mode, None,
            "decided when a worker starts it"
        );
        let joined = app
            .post_json(
                &format!("/companies/{company_id}/data/queue/invoices?full=true"),
                &serde_json::json!(null),
            )
            .await;
        assert_eq!(joined.status(), 202);
        let joined = json(joined).await;
        assert_eq!(
            joined[0]["pullOperationId"],
            queued[0].pull_operation_id.to_string(),
            "the queued operation, not a second one"
        );
        let stored = entity::pull_operation::Entity::find_by_id(queued[0].pull_operation_id)
            .one(&app.db)
            .await
            .expect("readable")
            .expect("stored");
        assert!(stored.full_requested, "it will fetch whole");

        assert_full_refused(
            &app,
            &format!("/companies/{company_id}/data/queue/invoices?full=yes"),
        )
        .await;
    }
}
