//! A resync that changes nothing keeps the generation readers see (issue
//! 33): no row is published again, so every record stays byte for byte,
//! the links a client pinned before it keep reading even with no retention
//! at all, and no copy of the list is left behind; the sync still completes
//! and moves the connection's `lastSync`. A resync with a change publishes
//! as before. Played by the sandbox (a whole fetch) and the Xero fake (a
//! fetch of what changed since, answered with records it already had).

use std::time::Duration;

use client::types::{PullStatus, QueueDataTypeDataType};
use serde_json::{Value, json};
use uuid::Uuid;

use tributary::sync::engine::EngineConfig;

use crate::connections::{count_rows, new_company};
use crate::helpers::{AppOptions, TestApp, answer, backends};
use crate::platforms::fake::{Answer, fixture};
use crate::platforms::{latest, options_for, xero};
use crate::sync::{authorized_sandbox, reauthorize, settled};

/// Pinned links of a replaced generation expire at once: one that still
/// reads after a resync shows the resync kept its generation.
fn without_retention(options: AppOptions) -> AppOptions {
    AppOptions {
        engine: EngineConfig {
            snapshot_retention: Duration::ZERO,
            ..options.engine
        },
        ..options
    }
}

/// A sandbox of `invoices` invoices only, `changed` of them amended. Under
/// one seed, 31 to 40 invoices share their customers, so the first ones stay
/// byte for byte as the count moves within that range.
fn sandbox_of(organization: &str, invoices: u64, changed: u64) -> Value {
    json!({
        "organizationId": organization, "accessToken": "tok", "invoiceCount": invoices,
        "orderCount": 0, "bankTransactionCount": 0, "seed": 9, "changedInvoiceCount": changed,
    })
}

/// Queues the company's invoices (whole when `full`) and waits for the
/// sync; returns how it fetched.
async fn sync_invoices(app: &TestApp, company_id: Uuid, full: bool) -> String {
    app.client
        .queue_data_type(&company_id, QueueDataTypeDataType::Invoices, Some(full))
        .await
        .expect("queued");
    let operations = settled(&app.client, company_id).await;
    let operation = latest(&operations, "invoices");
    assert_eq!(operation.status, PullStatus::Complete, "{operation:?}");
    format!("{:?}", operation.fetch_mode.expect("a fetch mode"))
}

/// What a client holds: every invoice as listed, the link to page 2 of a
/// walk (`pageSize=2`) and that page, and the connection's `lastSync`.
struct Seen {
    invoices: Vec<Value>,
    next: String,
    second_page: Value,
    last_sync: Value,
}

async fn seen(app: &TestApp, company_id: Uuid, connection_id: Uuid) -> Seen {
    let list = format!("/companies/{company_id}/data/invoices");
    let (status, every) = answer(app, &format!("{list}?pageSize=1000")).await;
    assert_eq!(status, 200, "{every}");
    let (status, first) = answer(app, &format!("{list}?pageSize=2")).await;
    assert_eq!(status, 200, "{first}");
    let next = first["_links"]["next"]["href"]
        .as_str()
        .expect("a second page")
        .to_owned();
    let (status, second_page) = answer(app, &next).await;
    assert_eq!(status, 200, "{second_page}");
    let (status, connection) = answer(
        app,
        &format!("/companies/{company_id}/connections/{connection_id}"),
    )
    .await;
    assert_eq!(status, 200, "{connection}");
    Seen {
        invoices: every["results"].as_array().expect("results").clone(),
        next,
        second_page,
        last_sync: connection["lastSync"].clone(),
    }
}

/// Asserts the resync just settled kept what `before` saw: the same
/// records, its pinned link reading the same page, one generation of
/// `records` invoice rows and nothing staged; and a later `lastSync`.
async fn assert_kept(
    app: &TestApp,
    before: &Seen,
    company_id: Uuid,
    connection_id: Uuid,
    records: i64,
) {
    let after = seen(app, company_id, connection_id).await;
    assert_eq!(
        after.invoices, before.invoices,
        "every record byte for byte"
    );
    let (status, again) = answer(app, &before.next).await;
    assert_eq!(
        status, 200,
        "the pinned generation is still the one readers see: {again}"
    );
    assert_eq!(again, before.second_page);
    assert_eq!(
        count_rows(app, "record WHERE data_type = 'invoices'").await,
        records,
        "no copy of the list was published"
    );
    // The run's clean-up follows its commit.
    let mut staged = i64::MAX;
    for _ in 0..100 {
        staged = count_rows(app, "record_staging").await;
        if staged == 0 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert_eq!(staged, 0, "nothing left staged");
    assert!(
        after.last_sync.as_str() > before.last_sync.as_str(),
        "the sync is recorded: {} after {}",
        after.last_sync,
        before.last_sync
    );
}

#[tokio::test]
async fn an_unchanged_whole_list_keeps_its_generation_and_a_changed_one_is_published() {
    let sandbox = |changed: u64| sandbox_of("sbx-kept", 40, changed);
    for backend in backends() {
        let app = &TestApp::spawn_with(backend, without_retention(AppOptions::default())).await;
        let company_id = new_company(app, "Kept As It Was Ltd").await;
        let connection_id = authorized_sandbox(app, company_id, sandbox(0)).await;
        assert_eq!(sync_invoices(app, company_id, false).await, "Full");
        let before = seen(app, company_id, connection_id).await;
        assert_eq!(before.invoices.len(), 40);

        for _ in 0..2 {
            tokio::time::sleep(Duration::from_millis(5)).await;
            assert_eq!(sync_invoices(app, company_id, false).await, "Full");
            assert_kept(app, &before, company_id, connection_id, 40).await;
        }

        // Two invoices amended: a new generation, the pinned link expired
        // (no retention), exactly those two newer.
        reauthorize(app, company_id, connection_id, sandbox(2)).await;
        sync_invoices(app, company_id, false).await;
        let (status, gone) = answer(app, &before.next).await;
        assert_eq!(status, 410, "{gone}");
        let after = seen(app, company_id, connection_id).await;
        let changed = after
            .invoices
            .iter()
            .filter(|invoice| !before.invoices.contains(invoice))
            .count();
        assert_eq!(changed, 2);
    }
}

/// A record the platform deleted changes the list once: flagged deleted,
/// published. A resync that finds it still gone finds nothing new (the walk
/// for missing records flags it again exactly as it was) and keeps the
/// generation.
#[tokio::test]
async fn a_deleted_record_is_published_flagged_once_and_a_resync_still_without_it_keeps_the_generation()
 {
    let sandbox = |invoices: u64| sandbox_of("sbx-gone", invoices, 0);
    for backend in backends() {
        let app = &TestApp::spawn_with(backend, without_retention(AppOptions::default())).await;
        let company_id = new_company(app, "Gone Missing Ltd").await;
        let connection_id = authorized_sandbox(app, company_id, sandbox(40)).await;
        sync_invoices(app, company_id, false).await;
        let before = seen(app, company_id, connection_id).await;
        assert_eq!(before.invoices.len(), 40);

        // The platform's list loses its last invoice: a change.
        reauthorize(app, company_id, connection_id, sandbox(39)).await;
        assert_eq!(sync_invoices(app, company_id, false).await, "Full");
        let (status, gone) = answer(app, &before.next).await;
        assert_eq!(status, 410, "a new generation was published: {gone}");
        let flagged = seen(app, company_id, connection_id).await;
        assert_eq!(flagged.invoices.len(), 40);
        let deleted: Vec<&Value> = flagged
            .invoices
            .iter()
            .filter(|invoice| invoice["isDeleted"] == Value::Bool(true))
            .collect();
        assert_eq!(deleted.len(), 1, "{deleted:?}");
        let untouched = flagged
            .invoices
            .iter()
            .filter(|invoice| before.invoices.contains(invoice))
            .count();
        assert_eq!(untouched, 39, "the others as they were");

        // Still gone: nothing changed since.
        tokio::time::sleep(Duration::from_millis(5)).await;
        assert_eq!(sync_invoices(app, company_id, false).await, "Full");
        assert_kept(app, &flagged, company_id, connection_id, 40).await;
    }
}

/// A whole list that gained a record and changed nothing else is a change:
/// every previous record is staged as it was, and only the count tells.
#[tokio::test]
async fn a_whole_list_that_only_gained_a_record_is_published() {
    let sandbox = |invoices: u64| sandbox_of("sbx-grown", invoices, 0);
    for backend in backends() {
        let app = &TestApp::spawn_with(backend, without_retention(AppOptions::default())).await;
        let company_id = new_company(app, "Grown Ltd").await;
        let connection_id = authorized_sandbox(app, company_id, sandbox(39)).await;
        sync_invoices(app, company_id, false).await;
        let before = seen(app, company_id, connection_id).await;
        assert_eq!(before.invoices.len(), 39);

        reauthorize(app, company_id, connection_id, sandbox(40)).await;
        assert_eq!(sync_invoices(app, company_id, false).await, "Full");
        let (status, gone) = answer(app, &before.next).await;
        assert_eq!(status, 410, "a new generation was published: {gone}");
        let after = seen(app, company_id, connection_id).await;
        assert_eq!(after.invoices.len(), 40);
        let kept = after
            .invoices
            .iter()
            .filter(|invoice| before.invoices.contains(invoice))
            .count();
        assert_eq!(kept, 39, "the others as they were");
    }
}

#[tokio::test]
async fn changes_that_change_nothing_keep_the_generation_and_a_real_change_is_published() {
    for backend in backends() {
        let fake = xero::fake().await;
        let options = without_retention(options_for(&fake, None, 1));
        let app = &TestApp::spawn_with(backend, options).await;
        let (company_id, connection_id) = xero::connected(app, 1800).await;
        assert_eq!(sync_invoices(app, company_id, false).await, "Full");
        let before = seen(app, company_id, connection_id).await;
        let records = before.invoices.len() as i64;
        assert!(records > 0);

        // Asked for what changed since, Xero answers records tributary
        // already holds as they are (the overlap).
        tokio::time::sleep(Duration::from_millis(5)).await;
        let calls = fake.calls().len();
        assert_eq!(sync_invoices(app, company_id, false).await, "Incremental");
        assert!(
            fake.calls()[calls..]
                .iter()
                .all(|call| call.headers.contains_key("if-modified-since")),
            "the resync asked for what changed"
        );
        assert_kept(app, &before, company_id, connection_id, records).await;

        // One invoice renumbered: published, the pinned link expired.
        let mut page: Value =
            serde_json::from_str(&fixture("xero/fixtures/invoices-1.json")).expect("JSON");
        page["Invoices"][0]["InvoiceNumber"] = Value::from("INV-KEPT-R1");
        fake.with(|inner| {
            inner
                .scripted
                .push_back(Answer::json(200, page.to_string()));
            inner
                .scripted
                .push_back(Answer::json(200, fixture("xero/fixtures/invoices-2.json")));
        });
        assert_eq!(sync_invoices(app, company_id, false).await, "Incremental");
        let (status, gone) = answer(app, &before.next).await;
        assert_eq!(status, 410, "{gone}");
        let after = seen(app, company_id, connection_id).await;
        let renumbered: Vec<&Value> = after
            .invoices
            .iter()
            .filter(|invoice| !before.invoices.contains(invoice))
            .collect();
        assert_eq!(renumbered.len(), 1, "{renumbered:?}");
        assert_eq!(renumbered[0]["invoiceNumber"], "INV-KEPT-R1");
    }
}
