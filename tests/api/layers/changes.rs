//! A layer planned from changes made up over a real list: records moved,
//! changed in place, given another filter value, dropped and new, over an
//! ascending and a descending list; its positions, and its pages read
//! whole and by filter value, are the changed list sorted here.

use std::collections::{HashMap, HashSet};

use sea_orm::{ColumnTrait, EntityTrait, QueryFilter, QueryOrder, QuerySelect};
use serde_json::json;

use entity::record;
use tributary::data::DataType;
use tributary::store::layers::filtered::{self, FilterFences};
use tributary::store::layers::planned::{self, Changed};
use tributary::store::layers::{self, LayerMap, Refused};

use super::{assert_positions, assert_read_by_index, fenced_list, store_delta};
use crate::connections::new_company;
use crate::helpers::{TestApp, for_each_database};
use crate::sync::{sandbox_connection, sync_and_settle};
use tributary::store::layers::fences::ListKey;

/// A base row: its place, filter value, filter ordinal and body.
#[derive(Debug, Clone)]
pub(super) struct BaseRow {
    pub(super) place: ListKey,
    pub(super) filter_value: Option<String>,
    pub(super) filter_ordinal: Option<i64>,
    pub(super) body: String,
}

/// A generation's rows by ordinal, with their filter values and bodies.
pub(super) async fn base_rows_of(app: &TestApp, generation: i64) -> Vec<BaseRow> {
    type Read = (String, String, Option<String>, Option<i64>, String);
    let rows: Vec<Read> = record::Entity::find()
        .select_only()
        .column(record::Column::SortKey)
        .column(record::Column::RecordId)
        .column(record::Column::FilterValue)
        .column(record::Column::FilterOrdinal)
        .column(record::Column::Body)
        .filter(record::Column::Generation.eq(generation))
        .order_by_asc(record::Column::Ordinal)
        .into_tuple()
        .all(&app.db)
        .await
        .expect("rows");
    rows.into_iter()
        .map(
            |(sort_key, record_id, filter_value, filter_ordinal, body)| BaseRow {
                place: ListKey {
                    sort_key,
                    record_id,
                },
                filter_value,
                filter_ordinal,
                body,
            },
        )
        .collect()
}

/// Asserts that every page of `list` (each record's body, in order) read
/// through `map` is its slice.
pub(super) async fn assert_pages(
    app: &TestApp,
    generations: (i64, i64),
    (filter, map): (Option<&str>, &LayerMap),
    list: &[&String],
    what: &str,
) {
    let step = (list.len() as u32 / 7).max(1);
    for after in (0..list.len() as u32 + step).step_by(step as usize) {
        let page = layers::pages::bodies(&app.db, generations, filter, map, after, step)
            .await
            .expect("a page");
        let end = (after + step).min(list.len() as u32) as usize;
        let wanted = list.get(after as usize..end).unwrap_or_default();
        assert_eq!(page.len(), wanted.len(), "{what}: page after {after}");
        assert!(
            page.iter().zip(wanted).all(|(found, want)| found == *want),
            "{what}: page after {after}"
        );
    }
}

#[tokio::test]
async fn a_layer_planned_with_moves_and_drops_lists_the_changed_list_in_order() {
    // Records whose sort key moves, records whose filter value changes
    // (in place or with a move), new ones and dropped ones, over an
    // ascending and a descending list: the layer's positions are the base
    // less the dropped and replaced rows, with the changed ones sorted in,
    // and so is each filter value's list.
    for_each_database(async |app: &TestApp| {
        let company_id = new_company(app, "Moved").await;
        let connection_id = sandbox_connection(app, company_id, 3_000, 17).await;
        sync_and_settle(app, company_id).await;
        for data_type in [DataType::INVOICES, DataType::CUSTOMERS] {
            let name = data_type.name();
            let direction = data_type.spec().order;
            let (base, rows, fenced) = fenced_list(app, connection_id, data_type).await;
            let base_rows = base_rows_of(app, base.generation).await;
            let values_written = filtered::write(&app.db, base.generation)
                .await
                .expect("filter fences");
            let filter_fences = FilterFences::read(&app.db, base.generation)
                .await
                .expect("read")
                .expect("filter fences");
            let mut base_lists: HashMap<&str, Vec<&BaseRow>> = HashMap::new();
            for row in &base_rows {
                if let Some(value) = &row.filter_value {
                    base_lists.entry(value).or_default().push(row);
                }
            }
            assert_eq!(values_written as usize, base_lists.len(), "{name}");
            for (value, list) in &base_lists {
                assert_eq!(filter_fences.count_of(value) as usize, list.len(), "{name}");
                // Numbered per value in the list's order.
                let numbered: Vec<Option<i64>> =
                    list.iter().map(|row| row.filter_ordinal).collect();
                assert_eq!(
                    numbered,
                    (1..=list.len() as i64).map(Some).collect::<Vec<_>>()
                );
            }
            let value_at = |at: usize| base_rows[at % base_rows.len()].filter_value.clone();

            // Every 13th row moves next to a row far from it, taking that
            // row's filter value; every 17th keeps its place and takes the
            // value of the row after it; every 29th is dropped; some
            // records are new.
            let mut changed: Vec<Changed> = Vec::new();
            for (at, row) in base_rows.iter().enumerate() {
                let far = (at * 7 + 100) % base_rows.len();
                if at % 13 == 4 {
                    changed.push(Changed {
                        place: ListKey {
                            sort_key: format!("{}5", base_rows[far].place.sort_key),
                            record_id: row.place.record_id.clone(),
                        },
                        filter_value: value_at(far),
                    });
                } else if at % 17 == 6 {
                    changed.push(Changed {
                        place: row.place.clone(),
                        filter_value: value_at(at + 1),
                    });
                }
            }
            let changed_ids: HashSet<String> = changed
                .iter()
                .map(|row| row.place.record_id.clone())
                .collect();
            let dropped: Vec<String> = base_rows
                .iter()
                .enumerate()
                .filter(|(at, row)| at % 29 == 0 && !changed_ids.contains(&row.place.record_id))
                .map(|(_, row)| row.place.record_id.clone())
                .collect();
            changed.extend((0..12).map(|at| Changed {
                place: ListKey {
                    sort_key: rows[(at * 37) % rows.len()].sort_key.clone(),
                    record_id: format!("new-{at}"),
                },
                filter_value: value_at(at * 53),
            }));
            // And new records just after rows that are their value's
            // fences, which the count after a fence must include.
            let after_fences: Vec<Changed> = base_rows
                .iter()
                .filter(|row| {
                    row.filter_ordinal.is_some_and(|at| at % 64 == 1)
                        && !changed_ids.contains(&row.place.record_id)
                        && !dropped.contains(&row.place.record_id)
                })
                .map(|row| Changed {
                    place: ListKey {
                        sort_key: row.place.sort_key.clone(),
                        record_id: format!("{}~", row.place.record_id),
                    },
                    filter_value: row.filter_value.clone(),
                })
                .collect();
            let new_records = 12 + after_fences.len();
            changed.extend(after_fences);
            let body_of = |row: &Changed| {
                json!({ "changed": row.place.record_id, "value": row.filter_value }).to_string()
            };
            // The changed list, sorted here: each record's place, filter
            // value and body.
            let mut expected: Vec<(ListKey, Option<String>, String)> = base_rows
                .iter()
                .filter(|row| {
                    !changed_ids.contains(&row.place.record_id)
                        && !dropped.contains(&row.place.record_id)
                })
                .map(|row| {
                    (
                        row.place.clone(),
                        row.filter_value.clone(),
                        row.body.clone(),
                    )
                })
                .chain(
                    changed
                        .iter()
                        .map(|row| (row.place.clone(), row.filter_value.clone(), body_of(row))),
                )
                .collect();
            expected.sort_by(|a, b| a.0.cmp_in(&b.0, direction));

            // An id the base never held is dropped already: nothing hides.
            let with_unknown: Vec<String> = dropped
                .iter()
                .cloned()
                .chain(["never-synced".to_owned()])
                .collect();
            let planned = planned::plan(
                &app.db,
                base.generation,
                (&fenced, Some(&filter_fences)),
                changed.clone(),
                &with_unknown,
            )
            .await
            .expect("planned")
            .expect("a layer");
            let places: Vec<ListKey> = expected.iter().map(|row| row.0.clone()).collect();
            assert_positions(&planned, &rows, &places, name);
            let moved_or_changed = changed.len() - new_records;
            assert_eq!(
                planned.map.hidden().len(),
                moved_or_changed + dropped.len(),
                "{name}: hidden"
            );

            // The delta stored: every page read through the layer is the
            // changed list's page, and so is every page of each value's.
            let delta = tributary::store::take_generation(&app.db, connection_id, data_type)
                .await
                .expect("a generation");
            let generations = (base.generation, delta);
            store_delta(app, generations, &planned, body_of).await;
            let in_order: Vec<&String> = expected.iter().map(|row| &row.2).collect();
            assert_pages(app, generations, (None, &planned.map), &in_order, name).await;
            // Records by position, in any order (as a remembered order
            // asks for them), and by id.
            let wanted: Vec<u32> = (1..=planned.map.count()).rev().step_by(7).collect();
            let read = layers::pages::bodies_at(&app.db, generations, None, &planned.map, &wanted)
                .await
                .expect("bodies");
            let expected_at: Vec<&String> = wanted
                .iter()
                .map(|&position| in_order[position as usize - 1])
                .collect();
            assert_eq!(read.iter().collect::<Vec<_>>(), expected_at, "{name}");
            let beyond = [planned.map.count() + 1];
            let refused =
                layers::pages::bodies_at(&app.db, generations, None, &planned.map, &beyond).await;
            assert!(refused.is_err(), "{name}: {refused:?}");
            for (place, _, body) in expected.iter().step_by(11) {
                let found =
                    layers::single::find(&app.db, generations, &planned.map, &place.record_id)
                        .await
                        .expect("found");
                assert_eq!(found.as_ref(), Some(body), "{name}: {}", place.record_id);
            }
            for id in dropped.iter().chain(["never-synced".to_owned()].iter()) {
                let found = layers::single::find(&app.db, generations, &planned.map, id)
                    .await
                    .expect("found");
                assert_eq!(found, None, "{name}: {id} left the list");
            }
            for row in changed.iter().take(30) {
                let found =
                    layers::single::find(&app.db, generations, &planned.map, &row.place.record_id)
                        .await
                        .expect("found");
                assert_eq!(found, Some(body_of(row)), "{name}: changed");
            }

            let mut values: Vec<&str> =
                expected.iter().filter_map(|row| row.1.as_deref()).collect();
            values.sort_unstable();
            values.dedup();
            assert_eq!(data_type == DataType::INVOICES, values.len() > 1, "{name}");
            for value in values {
                let list: Vec<&String> = expected
                    .iter()
                    .filter(|row| row.1.as_deref() == Some(value))
                    .map(|row| &row.2)
                    .collect();
                let what = format!("{name} {value}");
                match planned.filtered.get(value) {
                    Some(map) => {
                        assert_eq!(map.count() as usize, list.len(), "{what}: total");
                        assert_pages(app, generations, (Some(value), map), &list, &what).await;
                        let wanted: Vec<u32> = (1..=map.count()).rev().step_by(3).collect();
                        let read = layers::pages::bodies_at(
                            &app.db,
                            generations,
                            Some(value),
                            map,
                            &wanted,
                        )
                        .await
                        .expect("bodies");
                        let expected_at: Vec<&String> =
                            wanted.iter().map(|&at| list[at as usize - 1]).collect();
                        assert_eq!(read.iter().collect::<Vec<_>>(), expected_at, "{what}");
                    }
                    // Untouched: the base's own list.
                    None => {
                        let base_list: Vec<&String> =
                            base_lists[value].iter().map(|row| &row.body).collect();
                        assert_eq!(base_list, list, "{what}: untouched");
                    }
                }
            }
            if data_type == DataType::INVOICES {
                assert!(planned.filtered.len() > 1, "{:?}", planned.filtered.keys());
                // A value's page read by the filter ordinal index: its rows
                // and nothing else.
                let (value, map) = planned
                    .filtered
                    .iter()
                    .max_by_key(|(_, map)| map.count())
                    .expect("a value");
                let runs = map.runs(map.count() / 2, map.count() / 2 + 100);
                assert!(runs.len() > 1, "{value}: {runs:?}");
                let wanted: u32 = runs.iter().map(|run| run.length).sum();
                let backend = app.db.get_database_backend();
                let statement = layers::pages::statement(backend, generations, Some(value), &runs);
                assert_read_by_index(app, statement, wanted, "record_filter_ordinal").await;
            }

            // A record both changed and dropped, or changed twice, is refused.
            let first_changed = changed[0].place.record_id.clone();
            let refused = planned::plan(
                &app.db,
                base.generation,
                (&fenced, Some(&filter_fences)),
                changed.clone(),
                std::slice::from_ref(&first_changed),
            )
            .await
            .expect("planned");
            assert_eq!(refused, Err(Refused::Repeated), "{name}");
            let mut repeated = changed;
            repeated.push(Changed {
                place: ListKey {
                    sort_key: "elsewhere".to_owned(),
                    record_id: first_changed,
                },
                filter_value: None,
            });
            let refused = planned::plan(&app.db, base.generation, (&fenced, None), repeated, &[])
                .await
                .expect("planned");
            assert_eq!(refused, Err(Refused::Repeated), "{name}");
        }
    })
    .await;
}
