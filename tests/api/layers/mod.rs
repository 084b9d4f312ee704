//! A layer over a long list (`store::layers`), as far as it is built: the
//! fences written from a published generation and read back, the anchors
//! they find (exactly how many of the list's rows come before each place
//! searched, in the order the database numbered them, ascending and
//! descending lists alike), and a layer planned from a resync's changes,
//! whose positions, pages and keys are exactly those of the list the
//! resync's full publish numbered. `changes.rs`: made-up changes and filter
//! values; `written.rs`: a layer written from staged rows; `published.rs`:
//! the engine publishing layers; `read.rs`: the API reading them;
//! `synced.rs`: syncs over a layer.

mod changes;
mod published;
mod read;
mod synced;
mod written;

use std::cmp::Ordering;
use std::collections::HashMap;

use sea_orm::{
    ColumnTrait, ConnectionTrait, EntityTrait, QueryFilter, QueryOrder, QuerySelect, Statement,
};
use serde_json::json;

use entity::record;
use tributary::data::DataType;
use tributary::store::Visible;
use tributary::store::keys::layered as layered_keys;
use tributary::store::layers::fences::{self, FENCE_EVERY, Fences, ListKey};
use tributary::store::layers::planned::{self, Changed, Planned};
use tributary::store::layers::{self, Source};

use crate::connections::new_company;
use crate::helpers::{TestApp, for_each_database};
use crate::plans::{Plan, plan_of, reads_of};
use crate::sync::{
    authorized_sandbox, reauthorize, sandbox_connection, sync_and_settle, sync_invoices,
};

/// A generation's rows' places, by ordinal (1 first).
async fn places_of(app: &TestApp, generation: i64) -> Vec<ListKey> {
    let rows: Vec<(i64, String, String)> = record::Entity::find()
        .select_only()
        .column(record::Column::Ordinal)
        .column(record::Column::SortKey)
        .column(record::Column::RecordId)
        .filter(record::Column::Generation.eq(generation))
        .order_by_asc(record::Column::Ordinal)
        .into_tuple()
        .all(&app.db)
        .await
        .expect("rows");
    let ordinals: Vec<i64> = rows.iter().map(|(ordinal, _, _)| *ordinal).collect();
    assert_eq!(ordinals, (1..=rows.len() as i64).collect::<Vec<_>>());
    rows.into_iter()
        .map(|(_, sort_key, record_id)| ListKey {
            sort_key,
            record_id,
        })
        .collect()
}

/// Places to search in a list of `rows`: every third row's own, a new id
/// at either end of each seventh row's sort key, a sort key between two
/// rows', and places before and after every row.
fn searched(rows: &[ListKey]) -> Vec<ListKey> {
    let place = |sort_key: &str, record_id: &str| ListKey {
        sort_key: sort_key.to_owned(),
        record_id: record_id.to_owned(),
    };
    let mut searched: Vec<ListKey> = rows.iter().step_by(3).cloned().collect();
    for row in rows.iter().step_by(7) {
        searched.push(place(&row.sort_key, ""));
        searched.push(place(&row.sort_key, "~~~~"));
        searched.push(place(&format!("{}0", row.sort_key), "new"));
    }
    searched.extend([place("", ""), place("~~~~", "~~~~")]);
    searched
}

#[tokio::test]
async fn fences_find_each_places_anchor_among_the_rows_as_numbered() {
    for_each_database(async |app: &TestApp| {
        let company_id = new_company(app, "Fenced").await;
        let connection_id = sandbox_connection(app, company_id, 3_000, 11).await;
        sync_and_settle(app, company_id).await;
        for data_type in [DataType::INVOICES, DataType::CUSTOMERS] {
            let name = data_type.name();
            let direction = data_type.spec().order;
            let visible = tributary::store::current(&app.db, connection_id, data_type)
                .await
                .expect("read")
                .expect("synced");
            let generation = visible.generation;
            let rows = places_of(app, generation).await;
            assert_eq!(rows.len() as i64, visible.record_count, "{name}");
            // The database numbered the rows in the order places compare in.
            assert!(
                rows.windows(2)
                    .all(|pair| pair[0].cmp_in(&pair[1], direction) == Ordering::Less),
                "{name}: numbered out of the places' order"
            );
            let count = rows.len() as u32;
            let read = Fences::read(&app.db, generation, count, direction).await;
            assert_eq!(
                read.expect("read"),
                None,
                "{name}: no fences before written"
            );

            let written = fences::write(&app.db, generation, count)
                .await
                .expect("written");
            assert_eq!(written, 1, "{name}: one block");
            let fenced = Fences::read(&app.db, generation, count, direction)
                .await
                .expect("read")
                .expect("fences");
            let places = searched(&rows);
            let anchors = fences::anchors(&app.db, generation, &fenced, &places)
                .await
                .expect("anchors");
            assert_eq!(anchors.len(), places.len(), "{name}");
            for (place, anchor) in places.iter().zip(&anchors) {
                let before = rows
                    .iter()
                    .filter(|row| row.cmp_in(place, direction) == Ordering::Less)
                    .count();
                assert_eq!(*anchor as usize, before, "{name}: {place:?}");
            }
            // Most anchors lie between fences: counted, not only found.
            let counted = places
                .iter()
                .zip(&anchors)
                .filter(|(place, anchor)| fenced.after(place) != **anchor)
                .count();
            assert!(counted > places.len() / 2, "{name}: {counted} counted");
        }
    })
    .await;
}

#[tokio::test]
async fn fences_that_do_not_read_are_absent_and_a_list_not_numbered_densely_gets_none() {
    for_each_database(async |app: &TestApp| {
        let company_id = new_company(app, "Unfenced").await;
        let connection_id = sandbox_connection(app, company_id, 200, 3).await;
        sync_and_settle(app, company_id).await;
        let data_type = DataType::INVOICES;
        let direction = data_type.spec().order;
        let visible = tributary::store::current(&app.db, connection_id, data_type)
            .await
            .expect("read")
            .expect("synced");
        let generation = visible.generation;
        let count = visible.record_count as u32;
        // Asked for more rows than the generation holds: refused, none written.
        let refused = fences::write(&app.db, generation, count + FENCE_EVERY).await;
        assert!(refused.is_err(), "{refused:?}");
        let read = Fences::read(&app.db, generation, count, direction).await;
        assert_eq!(read.expect("read"), None);
        fences::write(&app.db, generation, count)
            .await
            .expect("written");
        // The other direction's order: the fences do not read as its.
        let reversed = match direction {
            tributary::data::Direction::Ascending => tributary::data::Direction::Descending,
            tributary::data::Direction::Descending => tributary::data::Direction::Ascending,
        };
        let read = Fences::read(&app.db, generation, count, reversed).await;
        assert_eq!(read.expect("read"), None);
        let read = Fences::read(&app.db, generation, count, direction).await;
        assert!(read.expect("read").is_some());
    })
    .await;
}

/// The connection's current generation of `data_type`, its rows' places
/// by ordinal, and its fences, written and read back.
async fn fenced_list(
    app: &TestApp,
    connection_id: uuid::Uuid,
    data_type: DataType,
) -> (Visible, Vec<ListKey>, Fences) {
    let base = tributary::store::current(&app.db, connection_id, data_type)
        .await
        .expect("read")
        .expect("synced");
    let rows = places_of(app, base.generation).await;
    let count = u32::try_from(rows.len()).expect("short");
    fences::write(&app.db, base.generation, count)
        .await
        .expect("written");
    let fenced = Fences::read(&app.db, base.generation, count, data_type.spec().order)
        .await
        .expect("read")
        .expect("fences");
    (base, rows, fenced)
}

/// A sandbox authorization of `count` invoices (`changed` of them amended)
/// and nothing else the sandbox derives orders or bank data from.
pub(super) fn invoices_only(
    organization: &str,
    seed: u64,
    count: u64,
    changed: u64,
) -> serde_json::Value {
    json!({
        "organizationId": organization, "accessToken": "tok", "seed": seed,
        "invoiceCount": count, "changedInvoiceCount": changed,
        "orderCount": 0, "bankTransactionCount": 0,
    })
}

/// A generation's rows' bodies, by id.
pub(super) async fn bodies_of(app: &TestApp, generation: i64) -> HashMap<String, String> {
    record::Entity::find()
        .select_only()
        .column(record::Column::RecordId)
        .column(record::Column::Body)
        .filter(record::Column::Generation.eq(generation))
        .into_tuple()
        .all(&app.db)
        .await
        .expect("bodies")
        .into_iter()
        .collect()
}

/// Stores a delta row of the layer over `base` under `delta`, at
/// `ordinal` (and `filter_ordinal` within its value): `row`'s place and
/// filter value with `body`, the rest of its columns from the base's
/// first row (the connection, company, data type).
async fn store_delta_row(
    app: &TestApp,
    (base, delta): (i64, i64),
    (ordinal, filter_ordinal): (i64, Option<u32>),
    row: &Changed,
    body: &str,
) {
    app.db
        .execute_raw(Statement::from_sql_and_values(
            app.db.get_database_backend(),
            "INSERT INTO record (connection_id, data_type, generation, record_id, company_id, \
               sort_key, filter_value, body, ordinal, filter_ordinal) \
             SELECT connection_id, data_type, $1, $2, company_id, $3, $7, $4, $5, $8 \
             FROM record WHERE generation = $6 AND ordinal = 1",
            [
                delta.into(),
                row.place.record_id.as_str().into(),
                row.place.sort_key.as_str().into(),
                body.into(),
                ordinal.into(),
                base.into(),
                row.filter_value.clone().into(),
                filter_ordinal.map(i64::from).into(),
            ],
        ))
        .await
        .expect("a delta row");
}

/// Stores `planned`'s delta rows under `delta`, each with its body from
/// `body_of`.
async fn store_delta(
    app: &TestApp,
    generations: (i64, i64),
    planned: &Planned,
    body_of: impl Fn(&Changed) -> String,
) {
    let filter_ordinals = planned.delta_filter_ordinals();
    for ((ordinal, row), filter_ordinal) in (1i64..).zip(&planned.delta).zip(filter_ordinals) {
        let body = body_of(row);
        store_delta_row(app, generations, (ordinal, filter_ordinal), row, &body).await;
    }
}

/// Changed records without filter values, from their places.
fn unfiltered(places: Vec<ListKey>) -> Vec<Changed> {
    places
        .into_iter()
        .map(|place| Changed {
            place,
            filter_value: None,
        })
        .collect()
}

/// Asserts that `planned`'s positions, over `base` (its rows in order), are
/// exactly `expected`: each position's source row is the record expected
/// there.
fn assert_positions(planned: &Planned, base: &[ListKey], expected: &[ListKey], what: &str) {
    assert_eq!(
        planned.map.count() as usize,
        expected.len(),
        "{what}: count"
    );
    for (position, wanted) in (1..).zip(expected) {
        let found = match planned.map.at(position) {
            Some((Source::Base, ordinal)) => &base[ordinal as usize - 1],
            Some((Source::Delta, ordinal)) => &planned.delta[ordinal as usize - 1].place,
            None => panic!("{what}: position {position} maps nowhere"),
        };
        assert_eq!(found, wanted, "{what}: position {position}");
    }
}

#[tokio::test]
async fn a_layer_planned_from_a_resyncs_changes_lists_what_its_full_publish_numbered() {
    // The resync's full publish is the truth: a layer planned over the
    // previous generation from the records whose bodies changed or that
    // are new (amended invoices keep their date, new ones fall anywhere)
    // must give every position the record the publish numbered there.
    for_each_database(async |app: &TestApp| {
        let company_id = new_company(app, "Layered").await;
        let authorization = |count, changed| invoices_only("sbx-layers", 5, count, changed);
        let connection_id = authorized_sandbox(app, company_id, authorization(2_991, 0)).await;
        sync_invoices(app, company_id).await;
        let data_type = DataType::INVOICES;
        let (base, base_rows, fenced) = fenced_list(app, connection_id, data_type).await;
        let base_bodies = bodies_of(app, base.generation).await;

        // 45 amended and 9 new (the sandbox's customers, a tenth of its
        // invoices rounded up, stay 300: more would change every invoice).
        reauthorize(app, company_id, connection_id, authorization(3_000, 45)).await;
        sync_invoices(app, company_id).await;
        let resynced = tributary::store::current(&app.db, connection_id, data_type)
            .await
            .expect("read")
            .expect("resynced");
        assert_ne!(resynced.generation, base.generation);
        let numbered = places_of(app, resynced.generation).await;
        let bodies = bodies_of(app, resynced.generation).await;
        let changed: Vec<ListKey> = numbered
            .iter()
            .filter(|row| base_bodies.get(&row.record_id) != bodies.get(&row.record_id))
            .cloned()
            .collect();
        let new = changed
            .iter()
            .filter(|row| !base_bodies.contains_key(&row.record_id))
            .count();
        assert_eq!((changed.len() - new, new), (45, 9), "amended, new");

        let planned = planned::plan(
            &app.db,
            base.generation,
            (&fenced, None),
            unfiltered(changed),
            &[],
        )
        .await
        .expect("planned")
        .expect("a layer");
        assert_positions(&planned, &base_rows, &numbered, "resync");
        assert_eq!(
            planned.map.hidden().len(),
            45,
            "the amended base rows hidden"
        );

        // The delta's rows stored under a generation of their own, numbered
        // in delta order: every page read through the layer is the page of
        // the full publish, at any depth.
        let delta = tributary::store::take_generation(&app.db, connection_id, data_type)
            .await
            .expect("a generation");
        store_delta(app, (base.generation, delta), &planned, |row| {
            bodies[&row.place.record_id].clone()
        })
        .await;
        let bodies_in_order: Vec<&String> =
            numbered.iter().map(|row| &bodies[&row.record_id]).collect();
        let generations = (base.generation, delta);
        for (after, limit) in [(0, 100), (130, 100), (1_234, 57), (2_950, 100), (3_000, 10)] {
            let page =
                layers::pages::bodies(&app.db, generations, None, &planned.map, after, limit)
                    .await
                    .expect("a page");
            let end = (after + limit).min(numbered.len() as u32) as usize;
            let expected = &bodies_in_order[after as usize..end];
            assert_eq!(page.len(), expected.len(), "page after {after}");
            assert!(
                page.iter()
                    .zip(expected)
                    .all(|(found, wanted)| found == *wanted),
                "page after {after}"
            );
        }
        // The layer's keys: the delta's own, built from its rows, with the
        // base's read as they are, answer every query as the full
        // publish's keys do, match for match and count for count.
        tributary::store::keys::build(&app.db, data_type, delta)
            .await
            .expect("the delta's keys");
        let amended = bodies
            .iter()
            .find(|(id, body)| base_bodies.get(*id).is_some_and(|was| was != *body))
            .map(|(_, body)| serde_json::from_str::<serde_json::Value>(body).expect("JSON"))
            .expect("an amended invoice");
        let customer = amended["customerRef"]["id"].as_str().expect("a customer");
        let amount = amended["totalAmount"].as_str().expect("an amount");
        let texts = [
            "status=Paid".to_owned(),
            "status!=Paid".to_owned(),
            format!("customerRef.id={customer}"),
            format!("totalAmount>{amount}"),
            format!("totalAmount<={amount}"),
            "amountDue=0".to_owned(),
            "dueDate>=2024-06-01".to_owned(),
            format!("{{status=Paid||customerRef.id={customer}}}&&currency!=XYZ"),
        ];
        for text in texts {
            let query = tributary::data::query::parse(data_type, &text).expect("a query");
            let full = tributary::store::keys::matching(
                &app.db,
                data_type,
                resynced.generation,
                resynced.record_count,
                &query,
            )
            .await
            .expect("matched")
            .expect("keyed");
            let layered =
                layered_keys::matching(&app.db, data_type, generations, &planned.map, &query)
                    .await
                    .expect("matched")
                    .expect("keyed");
            assert_eq!(layered, full, "{text}");
            let full_count = tributary::store::keys::count(
                &app.db,
                data_type,
                resynced.generation,
                resynced.record_count,
                &query,
            )
            .await
            .expect("counted");
            let layered_count =
                layered_keys::count(&app.db, data_type, generations, &planned.map, &query)
                    .await
                    .expect("counted");
            assert_eq!(layered_count, full_count, "{text}");
            // Keys count one comparison; the rest is listed.
            let one_comparison = matches!(query, tributary::data::query::Query::Compare(_));
            assert_eq!(full_count.is_some(), one_comparison, "{text}");
            if one_comparison {
                assert_eq!(layered_count, Some(full.len() as u64), "{text}");
            }
        }
        // And every `orderBy` on a declared field, with and without a query.
        let status_paid = tributary::data::query::parse(data_type, "status=Paid").expect("a query");
        for text in ["totalAmount", "-dueDate", "status", "-customerRef.id"] {
            let order_by =
                tributary::data::query::parse_order_by(data_type, text).expect("an orderBy");
            for query in [None, Some(&status_paid)] {
                let full = tributary::store::keys::ordered(
                    &app.db,
                    data_type,
                    resynced.generation,
                    resynced.record_count,
                    &order_by,
                    query,
                )
                .await
                .expect("ordered")
                .expect("keyed");
                let layered = layered_keys::ordered(
                    &app.db,
                    data_type,
                    generations,
                    &planned.map,
                    &order_by,
                    query,
                )
                .await
                .expect("ordered")
                .expect("keyed");
                assert_eq!(layered, full, "orderBy={text} with {query:?}");
            }
        }

        // Read by the ordinal index, the page's rows and nothing else, with
        // no statistics gathered on the delta.
        let runs = planned.map.runs(1_500, 1_600);
        assert!(runs.len() > 1, "{runs:?}");
        let wanted: u32 = runs.iter().map(|run| run.length).sum();
        let backend = app.db.get_database_backend();
        let statement = layers::pages::statement(backend, generations, None, &runs);
        assert_read_by_index(app, statement, wanted, "record_ordinal").await;
    })
    .await;
}

/// Asserts that `statement` reads its `wanted` rows of `record` by `index`,
/// throwing none away (PostgreSQL's executed plan; PostgreSQL 15 rounds a
/// loop's rows, so their sum over loops is only near `wanted`), or that
/// SQLite reads them by `index`.
async fn assert_read_by_index(app: &TestApp, statement: Statement, wanted: u32, index: &str) {
    match plan_of(&app.db, statement).await {
        Plan::Executed(plan) => {
            let reads = reads_of(&plan, "record");
            assert_eq!(plan["Actual Rows"], wanted, "{plan}");
            assert!(
                reads.kept <= f64::from(wanted) * 1.1 && reads.discarded == 0.0,
                "{reads:?} of record: {plan}"
            );
            assert!(!reads.scanned_whole, "{plan}");
            assert!(
                plan.to_string()
                    .contains(&format!("\"Index Name\":\"{index}\"")),
                "{plan}"
            );
        }
        Plan::Steps(steps) => assert!(
            steps
                .iter()
                .any(|step| step.contains(&format!("USING INDEX {index} "))),
            "{steps:?}"
        ),
    }
}
