//! Syncs of a list readers see as a layer: the previous list they compare
//! with is the layer, not its base. So an incremental fetch is possible
//! over a layer, and the records it does not bring keep the layer's copies
//! (a record the layer changed or added, with the `modifiedDate` the layer
//! stamped); a record the layer added that the platform then deletes is
//! flagged, whether its changes say so or a full fetch finds it missing;
//! and a sync that changed nothing over a layer keeps the layer, whether it
//! fetched changes (an overlap's record again) or the whole list. The
//! platform is the sandbox behind the stand-in that answers changes
//! (`fetch_modes.rs`), with layering on from 100 rows. Walking a layer for
//! what a sync did not bring back reads each record once, by key.

use serde_json::Value;
use uuid::Uuid;

use client::types::{FetchMode, PullOperation, PullStatus};
use tributary::data::DataType;
use tributary::platforms::connector::Deletions;
use tributary::store::Visible;
use tributary::sync::engine::{EngineConfig, Layering};

use super::invoices_only;
use crate::connections::new_company;
use crate::fetch_modes::{
    Changing, INVOICES, SEED, added, behind, by_id, changed, dataset, invoices, sync_invoices,
};
use crate::helpers::{AppOptions, TestApp, backends, for_each_database_with};
use crate::plans::{Plan, assert_walk_read_at_most, plan_of};
use crate::sync::{authorized_sandbox, reauthorize, sandbox_connection};

/// The list readers see now.
async fn current(app: &TestApp, connection_id: Uuid) -> Visible {
    tributary::store::current(&app.db, connection_id, DataType::INVOICES)
        .await
        .expect("read")
        .expect("published")
}

/// A sync that completed, fetching as `mode` and `fetched` records.
fn assert_synced(operation: &PullOperation, mode: FetchMode, fetched: i64, what: &str) {
    assert_eq!(
        operation.status,
        PullStatus::Complete,
        "{what}: {operation:?}"
    );
    assert_eq!(operation.fetch_mode, Some(mode), "{what}");
    assert_eq!(operation.records_fetched, fetched, "{what}");
}

/// Every invoice of `after` but those of `except` is as in `before`,
/// `modifiedDate` and all, and `after` lists `before`'s and `joined` more.
fn assert_kept(before: &[Value], after: &[Value], except: &[&str], joined: usize, what: &str) {
    assert_eq!(after.len(), before.len() + joined, "{what}");
    for was in before {
        let id = was["invoiceId"].as_str().expect("an id");
        if !except.contains(&id) {
            assert_eq!(by_id(after, id), was, "{what}: {id} kept as it was");
        }
    }
}

/// `options` with resyncs of lists of `at_rows` rows or more layered.
fn layering(at_rows: u64, options: AppOptions) -> AppOptions {
    AppOptions {
        engine: EngineConfig {
            layering: Some(Layering { at_rows }),
            ..options.engine
        },
        ..options
    }
}

#[tokio::test]
async fn a_sync_over_a_layer_compares_with_the_layer_and_fetches_only_what_changed() {
    for backend in backends() {
        let platform = Changing::new(Deletions::InChanges);
        let options = layering(100, behind(&platform));
        let app = TestApp::spawn_with(backend, options).await;
        let company_id = new_company(&app, "Layered Ltd").await;
        let connection_id = sandbox_connection(&app, company_id, INVOICES, SEED).await;
        let first = sync_invoices(&app, company_id, None).await;
        assert_synced(&first, FetchMode::Full, INVOICES as i64, "first");
        let base = current(&app, connection_id).await;
        assert!(base.layer.is_none(), "a first sync publishes whole");
        let id = |index: u64| dataset().invoice(index).invoice_id;
        let (five, seven) = (id(5), id(7));

        // A change and two new invoices: a layer over the first sync.
        platform.with(|platform| {
            platform.changed = vec![changed(5, "first"), added(6, "new-1"), added(8, "new-2")];
        });
        let layered = sync_invoices(&app, company_id, None).await;
        assert_synced(&layered, FetchMode::Incremental, 3, "layered");
        let layer = current(&app, connection_id).await;
        assert_eq!(
            layer.layer.as_ref().map(|layer| layer.base),
            Some(base.generation),
            "the resync published a layer"
        );
        let after_layer = invoices(&app, company_id).await;
        assert_eq!(by_id(&after_layer, &five)["note"], "first");

        // Over the layer, only the next change is fetched; what the layer
        // changed or added keeps its copy there, stamp and all.
        platform.with(|platform| platform.changed = vec![changed(7, "second")]);
        let over = sync_invoices(&app, company_id, None).await;
        assert_synced(&over, FetchMode::Incremental, 1, "over the layer");
        let second_layer = current(&app, connection_id).await;
        assert_eq!(
            second_layer.layer.as_ref().map(|layer| layer.base),
            Some(base.generation),
            "a layer on the same base"
        );
        let after_second = invoices(&app, company_id).await;
        assert_kept(&after_layer, &after_second, &[&seven], 0, "over the layer");
        assert_eq!(by_id(&after_second, &seven)["note"], "second");
        assert!(
            by_id(&after_second, &seven)["modifiedDate"].as_str()
                > by_id(&after_layer, &five)["modifiedDate"].as_str(),
            "the change stamped after the layer's"
        );

        // The platform says it deleted an invoice the layer added: its copy
        // in the layer is flagged.
        platform.with(|platform| {
            platform.changed.clear();
            platform.removed = vec!["new-2".to_owned()];
        });
        let removed = sync_invoices(&app, company_id, None).await;
        assert_synced(&removed, FetchMode::Incremental, 0, "removed");
        let after_removed = invoices(&app, company_id).await;
        assert_kept(&after_second, &after_removed, &["new-2"], 0, "removed");
        let new_2 = by_id(&after_removed, "new-2");
        assert_eq!(new_2["isDeleted"], true, "{new_2}");
        assert_eq!(
            new_2["invoiceNumber"], "NEW-new-2",
            "flagged from the layer's copy"
        );

        // A full fetch no longer finds the other invoice the layer added:
        // flagged too, and nothing else changes.
        platform.with(|platform| {
            platform.removed.clear();
            platform.changed = vec![changed(5, "first"), changed(7, "second")];
        });
        let full = sync_invoices(&app, company_id, Some(true)).await;
        assert_synced(&full, FetchMode::Full, INVOICES as i64, "full");
        let after_full = invoices(&app, company_id).await;
        assert_kept(&after_removed, &after_full, &["new-1"], 0, "full");
        assert_eq!(by_id(&after_full, "new-1")["isDeleted"], true);
        assert_eq!(
            by_id(&after_full, "new-2"),
            new_2,
            "still flagged as it was"
        );
        let published = current(&app, connection_id).await;
        assert!(published.layer.is_some(), "still a layer");

        // Nothing changed: the whole list again, then an overlap's record
        // again, each keep the layer readers see.
        let unchanged_full = sync_invoices(&app, company_id, Some(true)).await;
        assert_synced(
            &unchanged_full,
            FetchMode::Full,
            INVOICES as i64,
            "same list",
        );
        assert_eq!(
            current(&app, connection_id).await.generation,
            published.generation,
            "the whole list as it was keeps the layer"
        );
        platform.with(|platform| platform.changed = vec![changed(5, "first")]);
        let overlap = sync_invoices(&app, company_id, None).await;
        assert_synced(&overlap, FetchMode::Incremental, 1, "overlap");
        assert_eq!(
            current(&app, connection_id).await.generation,
            published.generation,
            "a change the layer holds already keeps the layer"
        );
        assert_eq!(invoices(&app, company_id).await, after_full);
    }
}

/// The walk for what a sync did not bring back, over a layer of 6,000
/// invoices (40 changed), range by range of the base's ids: with nothing
/// staged it finds every record once; with every record staged as it was
/// (by `keep_missing`, which stages the layer as readers see it) it finds
/// nothing, one read a range, reading each record of either part in the
/// range once and looking each up in the staged rows by key, though the
/// statistics say the staging table is empty.
#[tokio::test]
async fn walking_a_layer_reads_each_record_once_by_key() {
    use sea_orm::{ConnectionTrait, DbBackend, TransactionTrait};
    use tributary::store::Staging;
    use tributary::store::deletions::{self, Looking, MISSING_BATCH, MISSING_RANGE, PLAN_FIXED};

    const INVOICES: u64 = 6_000;
    let options = || layering(1_000, AppOptions::default());
    for_each_database_with(options, async |app: &TestApp| {
        let backend = app.db.get_database_backend();
        let company_id = new_company(app, "Walked Ltd").await;
        let authorization = |changed| invoices_only("sbx-walked", 5, INVOICES, changed);
        let connection_id = authorized_sandbox(app, company_id, authorization(0)).await;
        crate::sync::sync_invoices(app, company_id).await;
        reauthorize(app, company_id, connection_id, authorization(40)).await;
        crate::sync::sync_invoices(app, company_id).await;
        let compared = current(app, connection_id).await;
        let delta = compared.layer.as_ref().expect("a layer").map.delta_count();
        assert_eq!(delta, 40);
        if backend == DbBackend::Postgres {
            app.db
                .execute_unprepared("ANALYZE record_staging")
                .await
                .expect("analysed");
        }

        let txn = app.db.begin().await.expect("a transaction");
        // A write first, as a run's fence is: the engine's clean-up after
        // the sync may still be writing, and a SQLite transaction that read
        // before another's write committed cannot write after it.
        txn.execute_unprepared("DELETE FROM record_staging WHERE generation = -1")
            .await
            .expect("the write lock");
        let staged = |generation| Staging {
            connection_id,
            company_id,
            generation,
            previous: None,
            modified: chrono::Utc::now(),
        };
        let as_it_was = staged(compared.generation + 1_000_000);
        let mut after = None;
        while let Some(end) = deletions::keep_missing(
            &txn,
            as_it_was,
            DataType::INVOICES,
            &compared,
            after.as_deref(),
        )
        .await
        .expect("kept")
        {
            after = Some(end);
        }
        let rows = tributary::store::unchanged::staged_rows(&txn, as_it_was, DataType::INVOICES)
            .await
            .expect("counted");
        assert_eq!(rows, INVOICES, "the layer's list staged once");
        let changed =
            tributary::store::unchanged::any_change(&txn, as_it_was, DataType::INVOICES, &compared)
                .await
                .expect("compared");
        assert!(!changed, "every record staged as the layer has it");

        // The whole walk, nothing staged: every record of the layer's list
        // found missing once, batch after batch and range after range.
        let nothing = compared.generation + 2_000_000;
        let mut found = std::collections::HashSet::new();
        let mut after: Option<String> = None;
        let mut batches = 0;
        loop {
            let walked = deletions::missing(
                &txn,
                &compared,
                DataType::INVOICES,
                nothing,
                after.as_deref(),
                Looking::ForMissing,
            )
            .await
            .expect("walked");
            let Some(last) = walked.last else { break };
            batches += 1;
            for row in walked.missing {
                assert!(found.insert(row.id.clone()), "{} found twice", row.id);
            }
            after = Some(last);
        }
        assert_eq!(
            found.len() as u64,
            INVOICES,
            "every record found missing once"
        );
        assert!(batches >= INVOICES / MISSING_BATCH, "{batches} batches");
        // Staged as it was: nothing missing and nothing changed, range by
        // range.
        let mut after: Option<String> = None;
        let mut ranges = 0;
        loop {
            let walked = deletions::missing(
                &txn,
                &compared,
                DataType::INVOICES,
                as_it_was.generation,
                after.as_deref(),
                Looking::AlsoForChanges,
            )
            .await
            .expect("walked");
            ranges += 1;
            assert!(walked.missing.is_empty() && !walked.changed, "{after:?}");
            let Some(last) = walked.last else { break };
            after = Some(last);
        }
        assert_eq!(ranges, INVOICES.div_ceil(MISSING_RANGE), "one read a range");

        // A first range's read, planned: each record of either part in the
        // range read once (the base's hidden rows too, read and left out),
        // each staged row looked up once by key; nothing staged, a batch
        // fills before the range ends.
        let until = deletions::nth_record_id(&txn, compared.full_generation(), None, MISSING_RANGE)
            .await
            .expect("read")
            .expect("a range's end");
        let hidden_and_delta = 2.0 * f64::from(delta);
        let cases = [
            (
                as_it_was.generation,
                0,
                MISSING_RANGE as f64 + hidden_and_delta,
            ),
            (
                nothing,
                MISSING_BATCH,
                MISSING_BATCH as f64 + hidden_and_delta,
            ),
        ];
        for ((generation, returned, bound), looking) in cases
            .into_iter()
            .flat_map(|case| [(case, Looking::ForMissing), (case, Looking::AlsoForChanges)])
        {
            let what = format!("staged {generation}, {looking:?}");
            let statement = deletions::missing_statement(
                backend,
                &compared,
                DataType::INVOICES,
                generation,
                (None, Some(&until)),
                looking,
            );
            if backend == DbBackend::Postgres {
                txn.execute_unprepared(PLAN_FIXED).await.expect("set");
            }
            match plan_of(&txn, statement).await {
                Plan::Executed(plan) => {
                    assert_walk_read_at_most(&plan, &what, returned, bound);
                }
                Plan::Steps(steps) => {
                    // Each part searched by its key's range, each staged
                    // row looked up by its key.
                    let searched = steps
                        .iter()
                        .filter(|step| {
                            step.starts_with("SEARCH p USING")
                                && step.contains("(generation=? AND record_id<?)")
                        })
                        .count();
                    assert_eq!(searched, 2, "{what}: {steps:?}");
                    assert!(
                        steps.iter().any(|step| step.starts_with("SEARCH s USING")
                            && step.contains("(generation=? AND record_id=?)")),
                        "{what}: {steps:?}"
                    );
                    assert!(
                        !steps.iter().any(|step| step.starts_with("SCAN s")
                            || step == "SCAN p"
                            || step.starts_with("SCAN p USING")),
                        "{what}: {steps:?}"
                    );
                }
            }
        }
        txn.rollback().await.expect("rolled back");
    })
    .await;
}
