//! A layered generation written from rows staged as a resync stages them
//! (`store::layers::written`): what changed since the base is found in the
//! staging table, the changed and new records are written under the new
//! generation in delta order, stamped, and the layer kept with it reads
//! back; its pages, whole and by filter value, are the resynced list.

use std::collections::HashSet;

use serde_json::json;

use tributary::data::DataType;
use tributary::data::records::{Row, modified_date_suffix, without_modified_date};
use tributary::store::layers::fences::ListKey;
use tributary::store::layers::filtered::{self, FilterFences};
use tributary::store::layers::planned;
use tributary::store::layers::written::{self, Layer};
use tributary::store::{Publishing, Staging};
use tributary::timestamp::Timestamp;

use super::changes::{assert_pages, base_rows_of};
use super::fenced_list;
use crate::connections::new_company;
use crate::helpers::{TestApp, for_each_database};
use crate::sync::{sandbox_connection, sync_and_settle};

#[tokio::test]
async fn a_layer_written_from_staged_rows_lists_the_resynced_list() {
    for_each_database(async |app: &TestApp| {
        let company_id = new_company(app, "Written").await;
        let connection_id = sandbox_connection(app, company_id, 3_000, 23).await;
        sync_and_settle(app, company_id).await;
        let data_type = DataType::INVOICES;
        let direction = data_type.spec().order;
        let (base, _, fenced) = fenced_list(app, connection_id, data_type).await;
        filtered::write(&app.db, base.generation)
            .await
            .expect("filter fences");
        let filter_fences = FilterFences::read(&app.db, base.generation)
            .await
            .expect("read")
            .expect("filter fences");
        let base_rows = base_rows_of(app, base.generation).await;

        // A resync staged: every record as it was (without its
        // `modifiedDate`, which the publish adds), but every 13th amended
        // in place, every 31st moved, every 17th given the next row's
        // status, every 29th gone, and ten new.
        let generation = tributary::store::take_generation(&app.db, connection_id, data_type)
            .await
            .expect("a generation");
        let staging = Staging {
            connection_id,
            company_id,
            generation,
            previous: Some(base.generation),
            modified: Timestamp::now(),
        };
        let amended = |body: &str| body.replacen('{', "{\"amended\":true,", 1);
        let mut staged = Vec::new();
        let mut changed_ids = HashSet::new();
        let mut dropped = Vec::new();
        for (at, row) in base_rows.iter().enumerate() {
            let mut staged_row = Row {
                id: row.place.record_id.clone(),
                sort_key: row.place.sort_key.clone(),
                filter_value: row.filter_value.clone().map(Into::into),
                body: without_modified_date(row.body.clone()),
            };
            if at % 29 == 0 {
                dropped.push(row.place.record_id.clone());
                continue;
            }
            if at % 13 == 0 || at % 31 == 0 || at % 17 == 0 {
                staged_row.body = amended(&staged_row.body);
                changed_ids.insert(row.place.record_id.clone());
            }
            if at % 31 == 0 {
                staged_row.sort_key = base_rows[(at * 5 + 77) % base_rows.len()]
                    .place
                    .sort_key
                    .clone();
            }
            if at % 17 == 0 {
                let next = &base_rows[(at + 1) % base_rows.len()];
                staged_row.filter_value = next.filter_value.clone().map(Into::into);
            }
            staged.push(staged_row);
        }
        for at in 0..10 {
            let like = &base_rows[at * 301];
            let id = format!("new-{at}");
            changed_ids.insert(id.clone());
            staged.push(Row {
                id: id.clone(),
                sort_key: like.place.sort_key.clone(),
                filter_value: like.filter_value.clone().map(Into::into),
                body: without_modified_date(json!({ "new": id, "modifiedDate": "x" }).to_string()),
            });
        }
        tributary::store::stage(&app.db, staging, data_type, &staged)
            .await
            .expect("staged");

        // What changed, found in the staging table.
        let changes = written::changes(&app.db, staging, data_type, base.generation, 1_000)
            .await
            .expect("compared")
            .expect("few enough");
        let found: HashSet<String> = changes
            .changed
            .iter()
            .map(|record| record.place.record_id.clone())
            .collect();
        assert_eq!(found, changed_ids);
        dropped.sort_unstable();
        assert_eq!(changes.dropped, dropped, "by id");
        let every = changes.changed.len() + changes.dropped.len();
        let over = written::changes(&app.db, staging, data_type, base.generation, every - 1)
            .await
            .expect("compared");
        assert_eq!(over, None, "more than asked for: publish in full");

        // The delta written from the staged rows, stamped, and the layer
        // kept with the generation.
        let planned = planned::plan(
            &app.db,
            base.generation,
            (&fenced, Some(&filter_fences)),
            changes.changed,
            &changes.dropped,
        )
        .await
        .expect("planned")
        .expect("a layer");
        let published = Timestamp(Timestamp::now());
        let list = Publishing {
            previous_layer: None,
            connection_id,
            data_type,
            generation,
            previous: Some(base.generation),
            published,
        };
        let written_rows = written::write_delta(&app.db, list, &planned)
            .await
            .expect("written");
        assert_eq!(written_rows, changed_ids.len() as u64);
        let layer = Layer {
            base: base.generation,
            map: planned.map.clone(),
            filtered: planned.filtered.clone(),
        };
        written::keep(&app.db, generation, &layer)
            .await
            .expect("kept");
        let read = written::read(&app.db, generation).await.expect("read");
        assert_eq!(read.as_ref(), Some(&layer));
        let full = written::read(&app.db, base.generation).await.expect("read");
        assert_eq!(full, None, "a full generation has no layer");
        let unnumbered = written::keep(&app.db, generation + 1_000, &layer).await;
        assert!(unnumbered.is_err(), "no generation to keep it with");

        // Every page, whole and by status, is the resynced list's.
        let suffix = modified_date_suffix(published);
        let mut expected: Vec<(ListKey, Option<String>, String)> = staged
            .iter()
            .map(|row| {
                let place = ListKey {
                    sort_key: row.sort_key.clone(),
                    record_id: row.id.clone(),
                };
                let body = if changed_ids.contains(&row.id) {
                    format!("{}{suffix}", row.body)
                } else {
                    base_rows
                        .iter()
                        .find(|base_row| base_row.place.record_id == row.id)
                        .map(|base_row| base_row.body.clone())
                        .expect("a base row")
                };
                (place, row.filter_value.clone().map(String::from), body)
            })
            .collect();
        expected.sort_by(|a, b| a.0.cmp_in(&b.0, direction));
        let generations = (base.generation, generation);
        let in_order: Vec<&String> = expected.iter().map(|row| &row.2).collect();
        assert_pages(app, generations, (None, &layer.map), &in_order, "whole").await;
        for (value, map) in &layer.filtered {
            let list: Vec<&String> = expected
                .iter()
                .filter(|row| row.1.as_deref() == Some(value))
                .map(|row| &row.2)
                .collect();
            assert_pages(app, generations, (Some(value), map), &list, value).await;
        }
        assert!(layer.filtered.len() > 1, "{:?}", layer.filtered.keys());
    })
    .await;
}
