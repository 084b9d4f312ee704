//! Incremental reads: `modifiedDate` is when tributary's copy of a record
//! changed, so it stays put across a sync that brings the record unchanged;
//! a record the platform deleted stays listed, flagged `isDeleted`, and
//! `query=modifiedDate>…` returns exactly what changed, deletions included.
//! Played by the Xero fake, whose answers the test edits between syncs.

use client::types::{PullStatus, QueueDataTypeDataType};
use serde_json::Value;
use uuid::Uuid;

use crate::helpers::{TestApp, answer, backends};
use crate::platforms::fake::{Answer, fixture};
use crate::platforms::xero::{connected, fake};
use crate::platforms::{latest, options_for};

const CHANGED: &str = "9b2c7a10-0000-4000-8000-000000000001";
const DELETED: &str = "9b2c7a10-0000-4000-8000-000000000002";
const UNCHANGED: &str = "9b2c7a10-0000-4000-8000-000000000003";

fn encoded(text: &str) -> String {
    url::form_urlencoded::byte_serialize(text.as_bytes()).collect()
}

/// The company's invoices selected by `query` (all of them when `None`),
/// by id, and the stated total.
async fn invoices(app: &TestApp, company_id: Uuid, query: Option<&str>) -> (Vec<Value>, u64) {
    let query = query.map_or(String::new(), |query| format!("&query={}", encoded(query)));
    let (status, page) = answer(
        app,
        &format!("/companies/{company_id}/data/invoices?pageSize=100{query}"),
    )
    .await;
    assert_eq!(status, 200, "{page}");
    let mut results = page["results"].as_array().expect("results").clone();
    results.sort_by(|a, b| a["invoiceId"].as_str().cmp(&b["invoiceId"].as_str()));
    (results, page["totalResults"].as_u64().expect("a total"))
}

fn by_id<'a>(invoices: &'a [Value], id: &str) -> &'a Value {
    invoices
        .iter()
        .find(|invoice| invoice["invoiceId"] == id)
        .unwrap_or_else(|| panic!("{id} listed"))
}

fn ids(invoices: &[Value]) -> Vec<&str> {
    invoices
        .iter()
        .map(|invoice| invoice["invoiceId"].as_str().expect("an id"))
        .collect()
}

/// Xero's first page of invoices with the first invoice's number changed and
/// the second gone.
fn first_page_changed() -> String {
    let mut page: Value =
        serde_json::from_str(&fixture("xero/fixtures/invoices-1.json")).expect("JSON");
    let invoices = page["Invoices"].as_array_mut().expect("invoices");
    invoices.retain(|invoice| invoice["InvoiceID"] != DELETED);
    invoices[0]["InvoiceNumber"] = Value::from("INV-0001-R1");
    page.to_string()
}

/// A full fetch of the invoices (`?full=true`): only a full fetch tells a
/// record Xero deleted (`fetch_modes` and the Xero module test what a
/// resync asking for changes stores).
async fn sync_invoices(app: &TestApp, company_id: Uuid) {
    app.client
        .queue_data_type(&company_id, QueueDataTypeDataType::Invoices, Some(true))
        .await
        .expect("queued");
    let operations = crate::sync::settled(&app.client, company_id).await;
    assert_eq!(latest(&operations, "invoices").status, PullStatus::Complete);
}

#[tokio::test]
async fn a_resync_changes_the_modified_date_of_changed_and_deleted_records_only() {
    for backend in backends() {
        let fake = fake().await;
        let app = TestApp::spawn_with(backend, options_for(&fake, None, 1)).await;
        let (company_id, _) = connected(&app, 1800).await;
        sync_invoices(&app, company_id).await;
        let (first, total) = invoices(&app, company_id, None).await;
        assert_eq!(total, 7, "Xero's receivable invoices");
        let first_synced = first[0]["modifiedDate"].clone();
        for invoice in &first {
            assert_eq!(invoice["isDeleted"], false, "{invoice}");
            assert_eq!(invoice["modifiedDate"], first_synced, "one sync, one stamp");
        }
        let (status, connection) = answer(
            &app,
            &format!(
                "/companies/{company_id}/connections/{}",
                first[0]["connectionId"].as_str().expect("a connection")
            ),
        )
        .await;
        assert_eq!(status, 200);
        assert_eq!(
            connection["lastSync"], first_synced,
            "a sync's records carry its completion"
        );

        // The platform changes one invoice and deletes another.
        let second_answers = || {
            fake.with(|inner| {
                inner
                    .scripted
                    .push_back(Answer::json(200, first_page_changed()));
                inner
                    .scripted
                    .push_back(Answer::json(200, fixture("xero/fixtures/invoices-2.json")));
            })
        };
        second_answers();
        sync_invoices(&app, company_id).await;
        let (second, total) = invoices(&app, company_id, None).await;
        assert_eq!(total, 7, "the deleted invoice is still listed");
        let changed = by_id(&second, CHANGED);
        assert_eq!(changed["invoiceNumber"], "INV-0001-R1");
        let second_synced = changed["modifiedDate"].clone();
        assert!(
            second_synced.as_str() > first_synced.as_str(),
            "{second_synced} after {first_synced}"
        );
        let deleted = by_id(&second, DELETED);
        assert_eq!(deleted["isDeleted"], true);
        assert_eq!(deleted["modifiedDate"], second_synced);
        assert_eq!(
            deleted["invoiceNumber"],
            by_id(&first, DELETED)["invoiceNumber"],
            "kept as last seen"
        );
        assert_eq!(
            by_id(&second, UNCHANGED),
            by_id(&first, UNCHANGED),
            "unchanged, modifiedDate included"
        );
        let unchanged_count = second
            .iter()
            .filter(|invoice| invoice["modifiedDate"] == first_synced)
            .count();
        assert_eq!(unchanged_count, 5);

        // An incremental read returns exactly the change and the deletion.
        let since_first = format!(
            "modifiedDate>{}",
            first_synced.as_str().expect("a date-time")
        );
        let (since, total) = invoices(&app, company_id, Some(&since_first)).await;
        assert_eq!(ids(&since), [CHANGED, DELETED]);
        assert_eq!(total, 2);
        let (live, total) = invoices(&app, company_id, Some("isDeleted!=true")).await;
        assert_eq!(total, 6);
        assert!(!ids(&live).contains(&DELETED));
        let (gone, _) = invoices(&app, company_id, Some("isDeleted=true")).await;
        assert_eq!(ids(&gone), [DELETED]);
        let (status, alone) = answer(
            &app,
            &format!("/companies/{company_id}/data/invoices/{DELETED}"),
        )
        .await;
        assert_eq!(status, 200, "{alone}");
        assert_eq!(&alone, deleted);

        // The same answers again: nothing changed, so nothing is newer.
        second_answers();
        sync_invoices(&app, company_id).await;
        let (third, total) = invoices(&app, company_id, None).await;
        assert_eq!(total, 7);
        assert_eq!(third, second, "a sync bringing nothing new changes nothing");
        let since_second = format!(
            "modifiedDate>{}",
            second_synced.as_str().expect("a date-time")
        );
        let (since, total) = invoices(&app, company_id, Some(&since_second)).await;
        assert_eq!((since.len(), total), (0, 0));

        // The invoice comes back: changed again, no longer flagged.
        sync_invoices(&app, company_id).await;
        let (fourth, _) = invoices(&app, company_id, None).await;
        let restored = by_id(&fourth, DELETED);
        assert_eq!(restored["isDeleted"], false);
        assert!(restored["modifiedDate"].as_str() > second_synced.as_str());
        assert_eq!(by_id(&fourth, CHANGED)["invoiceNumber"], "INV-0001");
    }
}

#[tokio::test]
async fn a_platform_deleting_thousands_of_records_has_every_one_flagged() {
    use crate::connections::new_company;
    use crate::helpers::for_each_database;
    use crate::sync::{authorized_sandbox, reauthorize, sync_and_settle};
    use serde_json::json;

    let sandbox = |invoice_count: u64| {
        json!({
            "organizationId": "sbx-gone", "accessToken": "tok", "invoiceCount": invoice_count,
            "orderCount": 0, "bankTransactionCount": 0, "seed": 5,
        })
    };
    for_each_database(async |app| {
        let company_id = new_company(app, "Shrinking Ltd").await;
        let connection_id = authorized_sandbox(app, company_id, sandbox(2300)).await;
        sync_and_settle(app, company_id).await;
        // More than two batches of missing records (1,000 a batch).
        reauthorize(app, company_id, connection_id, sandbox(200)).await;
        sync_and_settle(app, company_id).await;
        let (_, total) = invoices(app, company_id, None).await;
        assert_eq!(total, 2300);
        let (_, deleted) = invoices(app, company_id, Some("isDeleted=true")).await;
        assert_eq!(deleted, 2100);
        let (kept, live) = invoices(app, company_id, Some("isDeleted=false")).await;
        assert_eq!(live, 200);
        assert!(kept.iter().all(|invoice| invoice["isDeleted"] == false));
    })
    .await;
}

#[tokio::test]
async fn a_sandbox_resync_with_some_invoices_amended_changes_exactly_those() {
    use crate::connections::new_company;
    use crate::helpers::for_each_database;
    use crate::sync::{authorized_sandbox, reauthorize, sync_and_settle};
    use serde_json::json;

    let sandbox = |changed: u64| {
        json!({
            "organizationId": "sbx-amended", "accessToken": "tok", "invoiceCount": 300,
            "orderCount": 0, "bankTransactionCount": 0, "seed": 8, "changedInvoiceCount": changed,
        })
    };
    for_each_database(async |app| {
        let company_id = new_company(app, "Amending Ltd").await;
        let connection_id = authorized_sandbox(app, company_id, sandbox(0)).await;
        sync_and_settle(app, company_id).await;
        let every = async || {
            let (status, page) = answer(
                app,
                &format!("/companies/{company_id}/data/invoices?pageSize=300"),
            )
            .await;
            assert_eq!(status, 200, "{page}");
            assert_eq!(page["totalResults"], 300, "amended, not added or deleted");
            page["results"].as_array().expect("results").clone()
        };
        let before = every().await;

        reauthorize(app, company_id, connection_id, sandbox(7)).await;
        sync_and_settle(app, company_id).await;
        let after = every().await;
        let changed: Vec<&Value> = after
            .iter()
            .filter(|invoice| !before.contains(invoice))
            .collect();
        assert_eq!(changed.len(), 7, "exactly the amended invoices changed");
        let stamp = |invoice: &Value| invoice["modifiedDate"].as_str().map(str::to_owned);
        for invoice in &changed {
            let id = invoice["invoiceId"].as_str().expect("an id");
            let earlier = by_id(&before, id);
            assert_eq!(invoice["note"], "Amended: delivery address corrected.");
            assert!(
                stamp(invoice) > stamp(earlier),
                "{id}: a newer modifiedDate"
            );
            assert_eq!(invoice["totalAmount"], earlier["totalAmount"], "{id}");
            assert_eq!(invoice["isDeleted"], false, "{id}");
        }
        // Spread over the list: the first and every 42nd of 300 (300 / 7).
        let mut amended: Vec<&str> = changed
            .iter()
            .filter_map(|invoice| invoice["invoiceId"].as_str())
            .collect();
        amended.sort_unstable();
        let expected: Vec<String> = (0..7).map(|n| format!("sbx-inv-{:07}", n * 42)).collect();
        assert_eq!(amended, expected);
    })
    .await;
}

/// Finding what a resync no longer brings costs time linear in the list
/// whatever the statistics say: with `record_staging` analysed while it held
/// no rows (as after a publish empties it), a batch of the deletions read
/// looks each previous record up in the staged rows' key, instead of reading
/// every staged row once per record (a resync of 100,000 changed invoices
/// stalled for minutes that way). So does the walk that also compares each
/// record with its staged copy (a whole list's resync), when every lookup
/// misses and when every one finds an unchanged copy.
#[tokio::test]
async fn finding_deletions_reads_each_staged_row_by_key_though_the_statistics_say_none() {
    use sea_orm::{ConnectionTrait, DbBackend, Statement, TransactionTrait};
    use tributary::data::DataType;
    use tributary::data::records::MODIFIED_DATE_SUFFIX_CHARS;
    use tributary::store::deletions::{Looking, MISSING_BATCH, PLAN_FIXED, missing_statement};

    use crate::plans::{Plan, assert_walk_read_at_most, plan_of};

    use crate::connections::new_company;
    use crate::helpers::for_each_database;
    use crate::sync::{authorized_sandbox, sync_and_settle};
    use serde_json::json;

    const INVOICES: u64 = 4_000;
    for_each_database(async |app| {
        let backend = app.db.get_database_backend();
        let company_id = new_company(app, "Changed Ltd").await;
        let connection_id = authorized_sandbox(
            app,
            company_id,
            json!({
                "organizationId": "sbx-changed", "accessToken": "tok", "invoiceCount": INVOICES,
                "orderCount": 0, "bankTransactionCount": 0, "seed": 1,
            }),
        )
        .await;
        sync_and_settle(app, company_id).await;
        let published: i64 = app
            .db
            .query_one_raw(Statement::from_sql_and_values(
                backend,
                "SELECT generation FROM record WHERE connection_id = $1 AND data_type = 'invoices' LIMIT 1",
                [connection_id.into()],
            ))
            .await
            .expect("read")
            .expect("a published generation")
            .try_get("", "generation")
            .expect("a number");
        let compared = tributary::store::current(&app.db, connection_id, DataType::INVOICES)
            .await
            .expect("read")
            .expect("published");
        assert_eq!(compared.generation, published);
        if backend == DbBackend::Postgres {
            // Statistics taken with the staged rows gone (the publish deleted
            // them): the planner now believes the table holds none.
            app.db
                .execute_unprepared("ANALYZE record_staging")
                .await
                .expect("analysed");
        }
        // Two resyncs under way, each staging as many records as were
        // published: one in which every record is new (none has an id the
        // previous generation had: every lookup misses), one in which every
        // record came back as it was (every lookup finds its copy, and the
        // walk compares each with its previous copy).
        let txn = app.db.begin().await.expect("a transaction");
        // Each case's bound on the rows one statement reads from either
        // table: every previous record read once and its staged copy looked
        // up once, so a batch when every record is missing (the batch fills
        // at once), the whole list when none is (one statement walks to its
        // end); and the rows it returns.
        let cases = [
            (
                "every record new",
                published + 1_000_000,
                "record_id || '-new'",
                "body",
                MISSING_BATCH,
                MISSING_BATCH,
            ),
            (
                "every record as it was",
                published + 2_000_000,
                "record_id",
                "substr(body, 1, length(body) - $3)",
                INVOICES,
                0,
            ),
        ];
        for (_, staged, id, body, _, _) in cases {
            let mut values: Vec<sea_orm::Value> = vec![staged.into(), published.into()];
            if body != "body" {
                values.push((MODIFIED_DATE_SUFFIX_CHARS as i32).into());
            }
            txn.execute_raw(Statement::from_sql_and_values(
                backend,
                format!(
                    "INSERT INTO record_staging (connection_id, data_type, generation, record_id, \
                     company_id, sort_key, filter_value, body) \
                     SELECT connection_id, data_type, $1, {id}, company_id, sort_key, filter_value, \
                     {body} FROM record WHERE generation = $2"
                ),
                values,
            ))
            .await
            .expect("staged");
        }
        // Both walks: for the missing records alone, and for them and the
        // first changed record (a whole list's resync).
        for ((case, staged, _, _, bound, returned), looking) in cases
            .into_iter()
            .flat_map(|case| [(case, Looking::ForMissing), (case, Looking::AlsoForChanges)])
        {
            let statement =
                missing_statement(
                backend,
                &compared,
                DataType::INVOICES,
                staged,
                (None, None),
                looking,
            );
            if backend == DbBackend::Postgres {
                txn.execute_unprepared(PLAN_FIXED).await.expect("set");
            }
            match plan_of(&txn, statement).await {
                Plan::Executed(plan) => {
                    // What the case is: a full batch missing, or none
                    // missing and none changed (the walk went to the end).
                    let what = format!("{case}, {looking:?}");
                    assert_walk_read_at_most(&plan, &what, returned, bound as f64);
                }
                Plan::Steps(steps) => {
                    assert!(
                        steps.iter().any(|step| step.starts_with("SEARCH s USING")
                            && step.contains("(generation=? AND record_id=?)")),
                        "{case}, {looking:?}: {steps:?}"
                    );
                    assert!(
                        !steps.iter().any(|step| step.starts_with("SCAN s")),
                        "{case}, {looking:?}: {steps:?}"
                    );
                }
            }
        }
        txn.rollback().await.expect("rolled back");
    })
    .await;
}
