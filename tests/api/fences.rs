//! A long list's fences (`store::layers::fences`): written from a published
//! generation and read back, the anchors they find are exactly how many of
//! the list's rows come before each place searched, in the order the
//! database numbered them, ascending and descending lists alike.

use std::cmp::Ordering;

use sea_orm::{ColumnTrait, EntityTrait, QueryFilter, QueryOrder, QuerySelect};

use entity::record;
use tributary::data::DataType;
use tributary::store::layers::fences::{self, FENCE_EVERY, Fences, ListKey};

use crate::connections::new_company;
use crate::helpers::{TestApp, for_each_database};
use crate::sync::{sandbox_connection, sync_and_settle};

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
            let read = Fences::read(&app.db, generation, direction).await;
            assert_eq!(
                read.expect("read"),
                None,
                "{name}: no fences before written"
            );

            let written = fences::write(&app.db, generation, rows.len() as u64)
                .await
                .expect("written");
            assert_eq!(written, 1, "{name}: one block");
            let fenced = Fences::read(&app.db, generation, direction)
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
        let count = visible.record_count as u64;
        // Asked for more rows than the generation holds: refused, none written.
        let refused = fences::write(&app.db, generation, count + FENCE_EVERY as u64).await;
        assert!(refused.is_err(), "{refused:?}");
        let read = Fences::read(&app.db, generation, direction).await;
        assert_eq!(read.expect("read"), None);
        fences::write(&app.db, generation, count)
            .await
            .expect("written");
        // The other direction's order: the fences do not read as its.
        let reversed = match direction {
            tributary::data::Direction::Ascending => tributary::data::Direction::Descending,
            tributary::data::Direction::Descending => tributary::data::Direction::Ascending,
        };
        let read = Fences::read(&app.db, generation, reversed).await;
        assert_eq!(read.expect("read"), None);
        let read = Fences::read(&app.db, generation, direction).await;
        assert!(read.expect("read").is_some());
    })
    .await;
}
