//! How a published generation's keys were built (`store::keys`): gathered
//! while a first sync staged its rows, carried over from the previous
//! generation by a resync, or read back from the stored records; whichever
//! way, block for block what a read-back of the records builds.

use sea_orm::{
    ActiveModelTrait, ColumnTrait, ConnectionTrait, EntityTrait, QueryFilter, QueryOrder, Set,
};
use serde_json::json;
use uuid::Uuid;

use entity::{data_generation, record, record_generation, record_key};
use tributary::data::DataType;
use tributary::data::records::{MODIFIED_DATE_SUFFIX_CHARS, modified_date_suffix};

use crate::connections::new_company;
use crate::helpers::{AppOptions, TestApp, for_each_database_with};
use crate::sync::{authorized_sandbox, reauthorize, sync_and_settle as sync};

/// Asserts that `generation`'s keys (a list of `data_type`), however they
/// were built, are block for block those read back from its stored records
/// (which they are then replaced with).
async fn assert_keys_as_read_back(app: &TestApp, data_type: DataType, generation: i64) {
    let name = data_type.name();
    let (keyed, built) = stored_keys(app, generation).await;
    assert!(!built.is_empty(), "{name}: keys");
    record_key::Entity::delete_many()
        .filter(record_key::Column::Generation.eq(generation))
        .exec(&app.db)
        .await
        .expect("deleted");
    tributary::store::keys::build(&app.db, data_type, generation)
        .await
        .expect("read back");
    let (keyed_again, read_back) = stored_keys(app, generation).await;
    assert_eq!(keyed, keyed_again, "{name}: keyed fields");
    assert_eq!(built.len(), read_back.len(), "{name}");
    for (built, read_back) in built.iter().zip(&read_back) {
        assert!(
            built == read_back,
            "{name}: {} block {} is not as read back",
            built.field,
            built.block
        );
    }
}

/// A generation's keys as stored, block by block, and the fields it names.
async fn stored_keys(app: &TestApp, generation: i64) -> (Option<String>, Vec<record_key::Model>) {
    let keyed = record_generation::Entity::find_by_id(generation)
        .one(&app.db)
        .await
        .expect("read")
        .expect("the generation")
        .keyed_fields;
    let blocks = record_key::Entity::find()
        .filter(record_key::Column::Generation.eq(generation))
        .order_by_asc(record_key::Column::Field)
        .order_by_asc(record_key::Column::Block)
        .all(&app.db)
        .await
        .expect("keys");
    (keyed, blocks)
}

#[tokio::test]
async fn a_first_syncs_keys_are_those_its_stored_records_hold() {
    // On PostgreSQL a first sync gathers its keys as it stages its rows
    // (`store::keys::StagedKeys`) instead of reading every stored record
    // back (the metric says which way each list's keys were built): the keys
    // must be, block for block, those read back from what was stored. Lists
    // in both directions, with and without a filter, long enough to move in
    // halves (invoices) or not.
    for_each_database_with(with_metrics, async |app: &TestApp| {
        let company_id = new_company(app, "Keys Gathered Ltd").await;
        let invoices = tributary::store::publish::PARALLEL_AT_ROWS + 500;
        authorized_sandbox(
            app,
            company_id,
            json!({
                "organizationId": "sbx-keys", "accessToken": "tok", "seed": 23,
                "invoiceCount": invoices, "orderCount": 1500, "bankTransactionCount": 700,
            }),
        )
        .await;
        sync(app, company_id).await;
        let gathered = if app.db.get_database_backend() == sea_orm::DbBackend::Postgres {
            "while_staging"
        } else {
            "read_back"
        };
        for data_type in ["invoices", "orders", "customers"] {
            assert_eq!(
                keys_built(app, data_type, gathered).await,
                1,
                "{data_type}'s keys built {gathered}"
            );
        }
        let generations = record_generation::Entity::find()
            .all(&app.db)
            .await
            .expect("generations");
        let mut compared = Vec::new();
        for generation in generations {
            let data_type = DataType::named(&generation.data_type).expect("a data type");
            if data_type.spec().keys.is_empty() {
                continue;
            }
            assert_keys_as_read_back(app, data_type, generation.generation).await;
            compared.push(generation.data_type);
        }
        for expected in [
            "invoices",
            "orders",
            "payments",
            "customers",
            "bankTransactions",
        ] {
            assert!(
                compared.iter().any(|name| name == expected),
                "{expected} compared: {compared:?}"
            );
        }
    })
    .await;
}

/// An app whose `/metrics` answers (the keys' metric says how they were
/// built).
pub fn with_metrics() -> AppOptions {
    AppOptions {
        metrics: true,
        ..AppOptions::default()
    }
}

/// How many lists of `data_type` had their keys built `gathered` (the
/// metric's label), by the app's `/metrics`.
async fn keys_built(app: &TestApp, data_type: &str, gathered: &str) -> u64 {
    let labels = [("data_type", data_type), ("gathered", gathered)];
    crate::metrics::counter(app, "tributary_record_keys_built_total", &labels).await
}

/// The invoices' published generation on `connection_id` and its count.
pub async fn published_invoices(app: &TestApp, connection_id: Uuid) -> (i64, i64) {
    let published = data_generation::Entity::find()
        .filter(data_generation::Column::ConnectionId.eq(connection_id))
        .filter(data_generation::Column::DataType.eq("invoices"))
        .one(&app.db)
        .await
        .expect("the generation")
        .expect("published");
    (published.generation, published.record_count)
}

#[tokio::test]
async fn a_resyncs_keys_are_carried_over_when_every_record_stayed_and_read_back_otherwise() {
    // A resync on PostgreSQL carries the previous generation's keys over,
    // adding what its swap stamped, instead of reading every stored record
    // back (a list long enough to move in halves, on PostgreSQL): through
    // changes, records the
    // platform deleted (flagged) and new ones, the keys must be block for
    // block those read back. When the previous generation's keys cannot be
    // carried (here: one field's missing), they are read back.
    for_each_database_with(with_metrics, async |app: &TestApp| {
        let postgres = app.db.get_database_backend() == sea_orm::DbBackend::Postgres;
        let company_id = new_company(app, "Keys Carried Ltd").await;
        let invoices = tributary::store::publish::PARALLEL_AT_ROWS + 500;
        let authorization = |count: u64, changed: u64| {
            json!({
                "organizationId": "sbx-carried", "accessToken": "tok", "seed": 29,
                "invoiceCount": count, "changedInvoiceCount": changed,
                "orderCount": 0, "bankTransactionCount": 0,
            })
        };
        let connection_id = authorized_sandbox(app, company_id, authorization(invoices, 0)).await;
        crate::sync::sync_invoices(app, company_id).await;
        let (first, _) = published_invoices(app, connection_id).await;
        // The sandbox changed to hold `count` invoices, `changed` of them
        // amended, and the invoices synced again.
        let resync = async |count: u64, changed: u64| {
            reauthorize(
                app,
                company_id,
                connection_id,
                authorization(count, changed),
            )
            .await;
            crate::sync::sync_invoices(app, company_id).await;
        };

        // Ten amended and five deleted at the platform (flagged), then
        // twenty new (and the ten back as they were).
        for (round, (count, changed)) in [(invoices - 5, 10), (invoices + 20, 0)]
            .into_iter()
            .enumerate()
        {
            resync(count, changed).await;
            let (generation, total) = published_invoices(app, connection_id).await;
            assert!(generation > first, "round {round}: a new generation");
            assert_eq!(total as u64, invoices.max(count), "round {round}");
            let carried = if postgres { round as u64 + 1 } else { 0 };
            assert_eq!(
                keys_built(app, "invoices", "carried").await,
                carried,
                "round {round}"
            );
            assert_keys_as_read_back(app, DataType::INVOICES, generation).await;
        }

        // Five deleted at the platform again (flagged, their keys carried),
        // then flagged for longer than deleted records are kept: the next
        // resync drops them, so not every record of the previous generation
        // stayed in the list, and the keys are read back.
        resync(invoices + 15, 0).await;
        let carried = keys_built(app, "invoices", "carried").await;
        assert_eq!(carried, if postgres { 3 } else { 0 }, "flagged: carried");
        let (holding_flags, total) = published_invoices(app, connection_id).await;
        assert_eq!(total as u64, invoices + 20, "the flagged are kept");
        assert_eq!(flagged_long_ago(app, holding_flags).await, 5);
        let read_back = keys_built(app, "invoices", "read_back").await;
        crate::sync::sync_invoices(app, company_id).await;
        let (generation, total) = published_invoices(app, connection_id).await;
        assert_eq!(total as u64, invoices + 15, "the flagged are dropped");
        assert_eq!(keys_built(app, "invoices", "carried").await, carried);
        assert_eq!(
            keys_built(app, "invoices", "read_back").await,
            read_back + 1,
            "a record left the list: read back"
        );
        assert_keys_as_read_back(app, DataType::INVOICES, generation).await;

        // The previous generation without one field's keys: read back.
        let (previous, _) = published_invoices(app, connection_id).await;
        let declared = DataType::INVOICES.spec().keys;
        record_generation::ActiveModel {
            generation: Set(previous),
            keyed_fields: Set(Some(declared[1..].join(","))),
            ..Default::default()
        }
        .update(&app.db)
        .await
        .expect("keyed fields narrowed");
        let read_back = keys_built(app, "invoices", "read_back").await;
        resync(invoices + 20, 3).await;
        assert_eq!(
            keys_built(app, "invoices", "read_back").await,
            read_back + 1
        );
        let (generation, _) = published_invoices(app, connection_id).await;
        let (keyed, _) = stored_keys(app, generation).await;
        assert_eq!(keyed, Some(declared.join(",")), "every field keyed again");
        assert_keys_as_read_back(app, DataType::INVOICES, generation).await;

        // The previous generation numbered in another order (reversed), as
        // if a release had sorted the list differently since: every kept
        // record's ordinal moved, which the counts do not show. Read back.
        let (previous, total) = published_invoices(app, connection_id).await;
        for reorder in ["ordinal = -ordinal", "ordinal = $2 + 1 + ordinal"] {
            app.db
                .execute_raw(sea_orm::Statement::from_sql_and_values(
                    app.db.get_database_backend(),
                    format!("UPDATE record SET {reorder} WHERE generation = $1"),
                    [previous.into(), total.into()],
                ))
                .await
                .expect("reordered");
        }
        let (carried, read_back) = (
            keys_built(app, "invoices", "carried").await,
            keys_built(app, "invoices", "read_back").await,
        );
        resync(invoices + 20, 7).await;
        assert_eq!(keys_built(app, "invoices", "carried").await, carried);
        assert_eq!(
            keys_built(app, "invoices", "read_back").await,
            read_back + 1,
            "kept records out of place: read back"
        );
        let (generation, _) = published_invoices(app, connection_id).await;
        assert_keys_as_read_back(app, DataType::INVOICES, generation).await;
    })
    .await;
}

/// Moves the `modifiedDate` of every record `generation` holds flagged
/// deleted to longer ago than deleted records are kept, as if flagged then
/// (the JSON's last field, rewritten in the same width).
/// Returns how many.
async fn flagged_long_ago(app: &TestApp, generation: i64) -> usize {
    let flagged: Vec<record::Model> = record::Entity::find()
        .filter(record::Column::Generation.eq(generation))
        .filter(record::Column::Body.contains("\"isDeleted\":true"))
        .all(&app.db)
        .await
        .expect("flagged records");
    let long_ago = tributary::timestamp::Timestamp(
        chrono::Utc::now()
            - chrono::Duration::days(tributary::data::records::DELETED_RETENTION_DAYS + 1),
    );
    let suffix = modified_date_suffix(long_ago);
    assert_eq!(suffix.len(), MODIFIED_DATE_SUFFIX_CHARS, "one width");
    for row in &flagged {
        let kept = row.body.len() - MODIFIED_DATE_SUFFIX_CHARS;
        assert!(row.body[kept..].starts_with("\"modifiedDate\":"));
        let moved = format!("{}{suffix}", &row.body[..kept]);
        record::Entity::update_many()
            .col_expr(record::Column::Body, sea_orm::sea_query::Expr::value(moved))
            .filter(record::Column::Generation.eq(generation))
            .filter(record::Column::RecordId.eq(row.record_id.clone()))
            .exec(&app.db)
            .await
            .expect("moved");
    }
    flagged.len()
}
