//! A layer over a long list (`store::layers`), as far as it is built: the
//! fences written from a published generation and read back, the anchors
//! they find (exactly how many of the list's rows come before each place
//! searched, in the order the database numbered them, ascending and
//! descending lists alike), and a layer planned from a resync's changes,
//! whose positions are exactly the list the resync's full publish numbered.

use std::cmp::Ordering;
use std::collections::{HashMap, HashSet};

use sea_orm::{
    ColumnTrait, ConnectionTrait, EntityTrait, QueryFilter, QueryOrder, QuerySelect, Statement,
};
use serde_json::json;

use entity::record;
use tributary::data::DataType;
use tributary::store::Visible;
use tributary::store::layers::fences::{self, FENCE_EVERY, Fences, ListKey};
use tributary::store::layers::planned::{self, Planned};
use tributary::store::layers::{self, Refused, Source};

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

/// A generation's rows' bodies, by id.
async fn bodies_of(app: &TestApp, generation: i64) -> HashMap<String, String> {
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
/// `ordinal`: `row`'s place with `body`, the rest of its columns from the
/// base's first row (the connection, company, data type).
async fn store_delta_row(
    app: &TestApp,
    (base, delta): (i64, i64),
    ordinal: i64,
    row: &ListKey,
    body: &str,
) {
    app.db
        .execute_raw(Statement::from_sql_and_values(
            app.db.get_database_backend(),
            "INSERT INTO record (connection_id, data_type, generation, record_id, company_id, \
               sort_key, filter_value, body, ordinal, filter_ordinal) \
             SELECT connection_id, data_type, $1, $2, company_id, $3, filter_value, $4, $5, NULL \
             FROM record WHERE generation = $6 AND ordinal = 1",
            [
                delta.into(),
                row.record_id.as_str().into(),
                row.sort_key.as_str().into(),
                body.into(),
                ordinal.into(),
                base.into(),
            ],
        ))
        .await
        .expect("a delta row");
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
            Some((Source::Delta, ordinal)) => &planned.delta[ordinal as usize - 1],
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
        let authorization = |count: u64, changed: u64| {
            json!({
                "organizationId": "sbx-layers", "accessToken": "tok", "seed": 5,
                "invoiceCount": count, "changedInvoiceCount": changed,
                "orderCount": 0, "bankTransactionCount": 0,
            })
        };
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

        let planned = planned::plan(&app.db, base.generation, &fenced, changed, &[])
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
        for (ordinal, row) in (1i64..).zip(&planned.delta) {
            let body = &bodies[&row.record_id];
            store_delta_row(app, (base.generation, delta), ordinal, row, body).await;
        }
        let bodies_in_order: Vec<&String> =
            numbered.iter().map(|row| &bodies[&row.record_id]).collect();
        let generations = (base.generation, delta);
        for (after, limit) in [(0, 100), (130, 100), (1_234, 57), (2_950, 100), (3_000, 10)] {
            let page = layers::pages::bodies(&app.db, generations, &planned.map, after, limit)
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
        // Read by the ordinal index, the page's rows and nothing else, with
        // no statistics gathered on the delta.
        let runs = planned.map.runs(1_500, 1_600);
        assert!(runs.len() > 1, "{runs:?}");
        let wanted: u32 = runs.iter().map(|run| run.length).sum();
        let statement = layers::pages::statement(app.db.get_database_backend(), generations, &runs);
        match plan_of(&app.db, statement).await {
            Plan::Executed(plan) => {
                let reads = reads_of(&plan, "record");
                assert!(
                    reads.kept == f64::from(wanted) && reads.discarded == 0.0,
                    "{reads:?} of record: {plan}"
                );
                assert!(!reads.scanned_whole, "{plan}");
            }
            Plan::Steps(steps) => assert!(
                steps
                    .iter()
                    .any(|step| step.contains("USING INDEX record_ordinal ")),
                "{steps:?}"
            ),
        }
    })
    .await;
}

#[tokio::test]
async fn a_layer_planned_with_moves_and_drops_lists_the_changed_list_in_order() {
    // Records whose sort key moves, new ones and dropped ones, over an
    // ascending and a descending list: the layer's positions are the base
    // less the dropped and replaced rows, with the changed ones sorted in.
    for_each_database(async |app: &TestApp| {
        let company_id = new_company(app, "Moved").await;
        let connection_id = sandbox_connection(app, company_id, 3_000, 17).await;
        sync_and_settle(app, company_id).await;
        for data_type in [DataType::INVOICES, DataType::CUSTOMERS] {
            let name = data_type.name();
            let direction = data_type.spec().order;
            let (base, rows, fenced) = fenced_list(app, connection_id, data_type).await;
            // Every 13th row moves next to a row far from it, every 29th
            // is dropped, and some records are new.
            let moved: Vec<ListKey> = rows
                .iter()
                .enumerate()
                .filter(|(at, _)| at % 13 == 4)
                .map(|(at, row)| ListKey {
                    sort_key: format!("{}5", rows[(at * 7 + 100) % rows.len()].sort_key),
                    record_id: row.record_id.clone(),
                })
                .collect();
            let moved_ids: HashSet<&str> = moved.iter().map(|row| row.record_id.as_str()).collect();
            let dropped: Vec<String> = rows
                .iter()
                .enumerate()
                .filter(|(at, row)| at % 29 == 0 && !moved_ids.contains(row.record_id.as_str()))
                .map(|(_, row)| row.record_id.clone())
                .collect();
            let new = (0..12).map(|at| ListKey {
                sort_key: rows[(at * 37) % rows.len()].sort_key.clone(),
                record_id: format!("new-{at}"),
            });
            let changed: Vec<ListKey> = moved.iter().cloned().chain(new).collect();
            let mut expected: Vec<ListKey> = rows
                .iter()
                .filter(|row| {
                    !moved_ids.contains(row.record_id.as_str()) && !dropped.contains(&row.record_id)
                })
                .cloned()
                .chain(changed.iter().cloned())
                .collect();
            expected.sort_by(|a, b| a.cmp_in(b, direction));

            // An id the base never held is dropped already: nothing hides.
            let with_unknown: Vec<String> = dropped
                .iter()
                .cloned()
                .chain(["never-synced".to_owned()])
                .collect();
            let planned = planned::plan(
                &app.db,
                base.generation,
                &fenced,
                changed.clone(),
                &with_unknown,
            )
            .await
            .expect("planned")
            .expect("a layer");
            assert_positions(&planned, &rows, &expected, name);
            assert_eq!(
                planned.map.hidden().len(),
                moved.len() + dropped.len(),
                "{name}: hidden"
            );

            // The delta stored (a moved record's body as it was, a new
            // one's made up): every page read through the layer is the
            // changed list's page.
            let delta = tributary::store::take_generation(&app.db, connection_id, data_type)
                .await
                .expect("a generation");
            let base_bodies = bodies_of(app, base.generation).await;
            let mut bodies = HashMap::new();
            for (ordinal, row) in (1i64..).zip(&planned.delta) {
                let body = base_bodies
                    .get(&row.record_id)
                    .cloned()
                    .unwrap_or_else(|| json!({ "made up": row.record_id }).to_string());
                store_delta_row(app, (base.generation, delta), ordinal, row, &body).await;
                bodies.insert(row.record_id.clone(), body);
            }
            let in_order: Vec<&String> = expected
                .iter()
                .map(|row| {
                    bodies
                        .get(&row.record_id)
                        .or_else(|| base_bodies.get(&row.record_id))
                        .expect("a body")
                })
                .collect();
            for after in (0..expected.len() as u32 + 50).step_by(250) {
                let page = layers::pages::bodies(
                    &app.db,
                    (base.generation, delta),
                    &planned.map,
                    after,
                    250,
                )
                .await
                .expect("a page");
                let end = (after as usize + 250).min(in_order.len());
                let wanted = in_order.get(after as usize..end).unwrap_or_default();
                assert_eq!(page.len(), wanted.len(), "{name}: page after {after}");
                assert!(
                    page.iter()
                        .zip(wanted)
                        .all(|(found, wanted)| found == *wanted),
                    "{name}: page after {after}"
                );
            }

            // A record both changed and dropped, or changed twice, is refused.
            let twice = vec![moved[0].record_id.clone()];
            let refused = planned::plan(&app.db, base.generation, &fenced, changed.clone(), &twice)
                .await
                .expect("planned");
            assert_eq!(refused, Err(Refused::Repeated), "{name}");
            let mut repeated = changed;
            repeated.push(ListKey {
                sort_key: "elsewhere".to_owned(),
                record_id: moved[1].record_id.clone(),
            });
            let refused = planned::plan(&app.db, base.generation, &fenced, repeated, &[])
                .await
                .expect("planned");
            assert_eq!(refused, Err(Refused::Repeated), "{name}");
        }
    })
    .await;
}
