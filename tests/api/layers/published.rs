//! A resync published as a layer by the engine, with layering on
//! (`EngineConfig::layering`): the first sync's full publish writes its
//! fences, the resync writes only what changed with its maps, the base
//! outlives the clean-up, and the layer lists every record of the resynced
//! list in its order, whole and by status, each changed one stamped anew
//! and each other as it was; the full resync after it keeps every record as
//! the layer had it. A resync that changed nothing keeps the layer; one
//! whose changes since the base are few publishes a layer on the same base.
//! (`read.rs` reads layers through the API.)

use std::collections::{HashMap, HashSet};

use serde_json::Value;

use sea_orm::{ColumnTrait, EntityTrait, QueryFilter, QueryOrder, QuerySelect};

use entity::record;
use tributary::data::DataType;
use tributary::store::layers::fences::Fences;
use tributary::store::layers::filtered::FilterFences;
use tributary::store::layers::{self, written};
use tributary::sync::engine::{EngineConfig, Layering};

use super::{bodies_of, invoices_only};
use crate::connections::new_company;
use crate::helpers::{AppOptions, TestApp, for_each_database_with};
use crate::sync::{authorized_sandbox, reauthorize, sync_invoices};

/// An app whose resyncs layer lists of 1,000 rows or more.
fn layering() -> AppOptions {
    AppOptions {
        engine: EngineConfig {
            layering: Some(Layering { at_rows: 1_000 }),
            ..AppOptions::default().engine
        },
        ..AppOptions::default()
    }
}

/// The bodies of `generation`'s list filtered by `value`, by filter ordinal.
async fn filtered_list(app: &TestApp, generation: i64, value: &str) -> Vec<String> {
    record::Entity::find()
        .select_only()
        .column(record::Column::Body)
        .filter(record::Column::Generation.eq(generation))
        .filter(record::Column::FilterValue.eq(value))
        .order_by_asc(record::Column::FilterOrdinal)
        .into_tuple()
        .all(&app.db)
        .await
        .expect("a filtered list")
}

/// A record's JSON without its `modifiedDate`.
fn undated(body: &str) -> Value {
    let mut value: Value = serde_json::from_str(body).expect("JSON");
    if let Some(object) = value.as_object_mut() {
        object.remove("modifiedDate");
    }
    value
}

/// A record's `modifiedDate`.
fn stamp(body: &str) -> String {
    let value: Value = serde_json::from_str(body).expect("JSON");
    value["modifiedDate"]
        .as_str()
        .unwrap_or_default()
        .to_owned()
}

/// A field of a record's JSON.
fn field<'a>(body: &'a Value, name: &str) -> &'a str {
    body[name].as_str().unwrap_or_default()
}

#[tokio::test]
async fn a_resync_with_layering_on_publishes_only_its_changes_as_a_layer() {
    for_each_database_with(layering, async |app: &TestApp| {
        let company_id = new_company(app, "Layered").await;
        let authorization = |count, changed| invoices_only("sbx-published", 9, count, changed);
        let connection_id = authorized_sandbox(app, company_id, authorization(2_991, 0)).await;
        sync_invoices(app, company_id).await;
        let data_type = DataType::INVOICES;
        let base = tributary::store::current(&app.db, connection_id, data_type)
            .await
            .expect("read")
            .expect("synced");
        let count = base.record_count as u32;
        let direction = data_type.spec().order;
        let fenced = Fences::read(&app.db, base.generation, count, direction).await;
        assert!(fenced.expect("read").is_some(), "the full publish's fences");
        let filter_fenced = FilterFences::read(&app.db, base.generation).await;
        assert!(
            filter_fenced.expect("read").is_some(),
            "and its filter fences"
        );
        let base_bodies = bodies_of(app, base.generation).await;

        // 45 amended, 9 new.
        reauthorize(app, company_id, connection_id, authorization(3_000, 45)).await;
        sync_invoices(app, company_id).await;
        let resynced = tributary::store::current(&app.db, connection_id, data_type)
            .await
            .expect("read")
            .expect("resynced");
        assert_eq!(resynced.record_count, 3_000, "the layered total");
        let layer = written::read(&app.db, resynced.generation)
            .await
            .expect("read")
            .expect("a layer");
        assert_eq!(layer.base, base.generation);
        assert_eq!(layer.map.delta_count(), 54, "only the changes written");
        let delta_rows = bodies_of(app, resynced.generation).await;
        assert_eq!(delta_rows.len(), 54);
        // The clean-up after the publish kept the base: the layer reads it;
        // and so does the sweep of expired snapshots, once the base's
        // retention ends, and nothing of it counts as unreachable.
        assert_eq!(bodies_of(app, base.generation).await, base_bodies);
        let later = chrono::Utc::now() + chrono::Duration::days(1);
        let swept = tributary::store::drop_expired(&app.db, later)
            .await
            .expect("swept");
        assert_eq!(swept, 1, "the base's retention ended");
        assert_eq!(bodies_of(app, base.generation).await, base_bodies);
        let unreachable = tributary::store::unreachable_rows(&app.db, connection_id, data_type)
            .await
            .expect("counted");
        assert_eq!(unreachable, 0);

        // The layer's list: every record once, in the list's order; the
        // changed ones stamped anew, the others their base copies.
        let generations = (base.generation, resynced.generation);
        let listed = layers::pages::bodies(&app.db, generations, None, &layer.map, 0, 5_000)
            .await
            .expect("the whole list");
        assert_eq!(listed.len(), 3_000);
        let id_field = data_type.spec().id_field;
        let parsed: Vec<Value> = listed
            .iter()
            .map(|body| serde_json::from_str(body).expect("JSON"))
            .collect();
        let ids: HashSet<&str> = parsed.iter().map(|body| field(body, id_field)).collect();
        assert_eq!(ids.len(), 3_000, "each record once");
        let in_order = parsed.windows(2).all(|pair| {
            let (a, b) = (&pair[0], &pair[1]);
            let a = (
                field(a, "issueDate").as_bytes(),
                field(a, id_field).as_bytes(),
            );
            let b = (
                field(b, "issueDate").as_bytes(),
                field(b, id_field).as_bytes(),
            );
            direction.compare(a, b) == std::cmp::Ordering::Less
        });
        assert!(in_order, "in the list's order");
        let mut stamped = 0;
        for (body, value) in listed.iter().zip(&parsed) {
            let id = field(value, id_field);
            match delta_rows.get(id) {
                Some(delta_body) => {
                    assert_eq!(body, delta_body);
                    if let Some(was) = base_bodies.get(id) {
                        let was: Value = serde_json::from_str(was).expect("JSON");
                        let (now, then) =
                            (field(value, "modifiedDate"), field(&was, "modifiedDate"));
                        assert!(now > then, "{id} stamped anew: {now} after {then}");
                    }
                    stamped += 1;
                }
                None => assert_eq!(base_bodies.get(id), Some(body), "{id} as it was"),
            }
        }
        assert_eq!(stamped, 54);

        // Each status's list is the whole list's records of that status.
        let mut by_status: HashMap<&str, Vec<&String>> = HashMap::new();
        for (body, value) in listed.iter().zip(&parsed) {
            by_status
                .entry(field(value, "status"))
                .or_default()
                .push(body);
        }
        assert!(by_status.len() > 1);
        for (status, expected) in by_status {
            let page = match layer.of_value(status) {
                Some(map) => {
                    assert_eq!(map.count() as usize, expected.len(), "{status}");
                    layers::pages::bodies(&app.db, generations, Some(status), map, 0, 5_000)
                        .await
                        .expect("a status's list")
                }
                // Untouched: the base's own list of the status.
                None => filtered_list(app, base.generation, status).await,
            };
            assert_eq!(page.iter().collect::<Vec<_>>(), expected, "{status}");
        }

        // The next resync (nothing changed at the platform) compares with
        // the layer readers see, record by record: nothing changed, so it
        // keeps that layer, every record as it had it.
        sync_invoices(app, company_id).await;
        let next = tributary::store::current(&app.db, connection_id, data_type)
            .await
            .expect("read")
            .expect("resynced");
        assert_eq!(next.generation, resynced.generation, "the layer kept");
        assert_eq!(bodies_of(app, next.generation).await, delta_rows);
        let next_listed = layers::pages::bodies(&app.db, generations, None, &layer.map, 0, 5_000)
            .await
            .expect("the whole list");
        assert_eq!(next_listed, listed, "every record as the layer had it");

        // The platform changes the 45 back: they are changes since the
        // layer, though their base copies are the same again; the next
        // layer on the base holds them stamped anew, and the 9 new as the
        // first layer had them.
        reauthorize(app, company_id, connection_id, authorization(3_000, 0)).await;
        sync_invoices(app, company_id).await;
        let reverted = tributary::store::current(&app.db, connection_id, data_type)
            .await
            .expect("read")
            .expect("resynced");
        let reverted_layer = reverted.layer.as_deref().expect("a layer again");
        assert_eq!(reverted_layer.base, base.generation, "on the same base");
        assert_eq!(
            reverted_layer.map.delta_count(),
            54,
            "the 45 changed back and the 9 new"
        );
        let reverted_delta = bodies_of(app, reverted.generation).await;
        let mut changed_back = 0;
        for (id, body) in &reverted_delta {
            match base_bodies.get(id) {
                Some(was) => {
                    assert_eq!(undated(body), undated(was), "{id} as in the base");
                    let (now, then) = (stamp(body), stamp(&delta_rows[id]));
                    assert!(now > then, "{id} stamped anew: {now} after {then}");
                    changed_back += 1;
                }
                None => assert_eq!(Some(body), delta_rows.get(id), "{id} new, kept"),
            }
        }
        assert_eq!(changed_back, 45);

        // A resync with more changes than one in fifty since the base (90
        // amended and the 9 new) publishes in full, and every record the
        // platform did not change again keeps its copy.
        reauthorize(app, company_id, connection_id, authorization(3_000, 90)).await;
        sync_invoices(app, company_id).await;
        let full = tributary::store::current(&app.db, connection_id, data_type)
            .await
            .expect("read")
            .expect("resynced");
        assert!(full.layer.is_none(), "published in full");
        let full_bodies = bodies_of(app, full.generation).await;
        assert_eq!(full_bodies.len(), 3_000);
        let kept = listed
            .iter()
            .zip(&parsed)
            .filter(|(body, value)| full_bodies.get(field(value, id_field)) == Some(*body))
            .count();
        assert_eq!(kept, 3_000 - 90, "all but the amended kept their copies");
        // The last layer is retained for pinned snapshots, and its base
        // with it; the layers before it go with the clean-up that follows
        // a publish (after the operation reads `Complete`: waited for).
        assert_eq!(bodies_of(app, base.generation).await, base_bodies);
        let mut waited = 0;
        while !bodies_of(app, resynced.generation).await.is_empty() {
            assert!(waited < 300, "the first layer left after the clean-up");
            tokio::time::sleep(std::time::Duration::from_millis(100)).await;
            waited += 1;
        }
        // Once the last layer's retention ends, it goes, and its base.
        let swept = tributary::store::drop_expired(&app.db, later)
            .await
            .expect("swept");
        assert_eq!(swept, 1, "the layer's retention ended");
        assert!(
            bodies_of(app, base.generation).await.is_empty(),
            "the base went"
        );
        assert!(
            bodies_of(app, reverted.generation).await.is_empty(),
            "the last layer went"
        );
        let unreachable = tributary::store::unreachable_rows(&app.db, connection_id, data_type)
            .await
            .expect("counted");
        assert_eq!(unreachable, 0);
    })
    .await;
}
