//! The keys a published generation keeps of its data type's declared fields
//! (`store::keys`): they hold exactly what the records say, a query on
//! declared fields is answered from them, and a generation without them
//! (published before they existed) is queried from its records as before.

use sea_orm::{ColumnTrait, EntityTrait, QueryFilter, QueryOrder};
use serde_json::{Value, json};
use uuid::Uuid;

use entity::{data_generation, record_generation, record_key};
use tributary::data::DataType;

use crate::connections::new_company;
use crate::helpers::{TestApp, answer, for_each_database};
use crate::sync::{authorized_sandbox, sync_and_settle as sync};

/// A company with one sandbox connection of `invoice_count` invoices,
/// synced; its id and the invoices' published generation.
async fn synced_invoices(app: &TestApp, name: &str, invoice_count: u64) -> (Uuid, i64) {
    let company_id = new_company(app, name).await;
    let connection_id = authorized_sandbox(
        app,
        company_id,
        json!({
            "organizationId": "sbx-keys", "accessToken": "tok", "seed": 19,
            "invoiceCount": invoice_count, "orderCount": 0, "bankTransactionCount": 0,
        }),
    )
    .await;
    sync(app, company_id).await;
    let published = data_generation::Entity::find()
        .filter(data_generation::Column::ConnectionId.eq(connection_id))
        .filter(data_generation::Column::DataType.eq("invoices"))
        .one(&app.db)
        .await
        .expect("the generation")
        .expect("published");
    (company_id, published.generation)
}

/// Every invoice of the company, in the list's order (position = ordinal).
async fn listed(app: &TestApp, company_id: Uuid) -> Vec<Value> {
    let (status, page) = answer(
        app,
        &format!("/companies/{company_id}/data/invoices?pageSize=5000"),
    )
    .await;
    assert_eq!(status, 200, "{page}");
    page["results"].as_array().expect("results").clone()
}

/// The value of the dotted `field` of `record` as text, `None` when null.
fn value_of(record: &Value, field: &str) -> Option<String> {
    let found = field
        .split('.')
        .try_fold(record, |value, part| value.get(part))?;
    match found {
        Value::String(text) => Some(text.clone()),
        Value::Null => None,
        other => Some(other.to_string()),
    }
}

/// A key block's runs, read as `store::keys` packs them: each value (as
/// keyed) with the ordinals of the records holding it.
fn runs(entries: &[u8]) -> Vec<(String, Vec<usize>)> {
    let number = |at: usize, width: usize| {
        entries[at..at + width]
            .iter()
            .rev()
            .fold(0usize, |sum, byte| sum << 8 | usize::from(*byte))
    };
    let mut at = 4;
    let mut heads = Vec::new();
    for _ in 0..number(0, 4) {
        let length = number(at, 2);
        let value = String::from_utf8(entries[at + 2..at + 2 + length].to_vec()).expect("text");
        heads.push((value, number(at + 2 + length, 4)));
        at += 2 + length + 4;
    }
    let mut found = Vec::new();
    for (value, count) in heads {
        let ordinals = (0..count).map(|index| number(at + 4 * index, 4)).collect();
        at += 4 * count;
        found.push((value, ordinals));
    }
    assert_eq!(at, entries.len(), "every byte read");
    found
}

#[tokio::test]
async fn a_generations_keys_hold_every_records_value_of_each_declared_field() {
    for_each_database(async |app: &TestApp| {
        let (company_id, generation) = synced_invoices(app, "Keys Held Ltd", 2500).await;
        let records = listed(app, company_id).await;
        let keyed = record_generation::Entity::find_by_id(generation)
            .one(&app.db)
            .await
            .expect("read")
            .expect("the generation")
            .keyed_fields
            .expect("keys built at publish");
        let declared = DataType::INVOICES.spec().keys;
        assert_eq!(keyed.split(',').collect::<Vec<_>>(), declared);
        for field in declared {
            let blocks = record_key::Entity::find()
                .filter(record_key::Column::Generation.eq(generation))
                .filter(record_key::Column::Field.eq(*field))
                .order_by_asc(record_key::Column::Block)
                .all(&app.db)
                .await
                .expect("keys");
            assert!(!blocks.is_empty(), "{field} has keys");
            let numeric = field.ends_with("Amount") || *field == "amountDue";
            let mut seen = vec![false; records.len()];
            let mut previous: Option<(String, Option<f64>)> = None;
            for block in &blocks {
                let runs = runs(&block.entries);
                assert_eq!(
                    block.size as usize,
                    runs.iter().map(|run| run.1.len()).sum::<usize>()
                );
                assert_eq!(
                    (&block.first_value, &block.last_value),
                    (&runs[0].0, &runs[runs.len() - 1].0),
                    "{field}: a block's bounds are its first and last values"
                );
                for (key, held) in runs {
                    assert!(
                        held.windows(2).all(|pair| pair[0] < pair[1]),
                        "{field}: ascending"
                    );
                    let value = value_of(&records[held[0] - 1], field).expect("a value");
                    let as_number = numeric.then(|| value.parse::<f64>().expect("a decimal"));
                    for ordinal in held {
                        assert!(!seen[ordinal - 1], "{field}: record {ordinal} held twice");
                        seen[ordinal - 1] = true;
                        let held_value = value_of(&records[ordinal - 1], field).expect("a value");
                        match as_number {
                            // Numbers are held by value (`12.5` and `12.50` alike).
                            Some(number) => {
                                assert_eq!(held_value.parse::<f64>().ok(), Some(number))
                            }
                            None => assert_eq!(held_value, key, "{field}"),
                        }
                    }
                    // Values come in order: text by byte, numbers by value.
                    if let Some((before, before_number)) = &previous {
                        assert!(*before <= key, "{field}: keys in order");
                        if let (Some(before), Some(number)) = (before_number, as_number) {
                            assert!(*before <= number, "{field}: {before} before {number}");
                        }
                    }
                    previous = Some((key, as_number));
                }
            }
            for (index, record) in records.iter().enumerate() {
                assert_eq!(
                    seen[index],
                    value_of(record, field).is_some(),
                    "{field}: record {} held exactly when it has a value",
                    index + 1
                );
            }
        }
    })
    .await;
}

#[tokio::test]
async fn a_query_on_declared_fields_is_read_from_the_keys_and_one_without_keys_from_the_records() {
    for_each_database(async |app: &TestApp| {
        let (company_id, generation) = synced_invoices(app, "Keys Read Ltd", 200).await;
        let records = listed(app, company_id).await;
        let customer = value_of(&records[0], "customerRef.id").expect("a customer");
        let holding = records
            .iter()
            .filter(|record| value_of(record, "customerRef.id").as_deref() == Some(&customer))
            .count();
        let total = |query: String| async move {
            let (status, page) = answer(
                app,
                &format!("/companies/{company_id}/data/invoices?query={query}"),
            )
            .await;
            assert_eq!(status, 200, "{page}");
            page["totalResults"].as_u64().expect("a total")
        };
        assert_eq!(
            total(format!("customerRef.id={customer}")).await,
            holding as u64
        );

        // Without that field's keys, the same generation's query finds
        // nothing: the keys are what was read.
        record_key::Entity::delete_many()
            .filter(record_key::Column::Generation.eq(generation))
            .filter(record_key::Column::Field.eq("customerRef.id"))
            .exec(&app.db)
            .await
            .expect("deleted");
        assert_eq!(
            total(format!("%7BcustomerRef.id={customer}%7D")).await,
            0,
            "read from the keys"
        );

        // A generation that names no keyed fields is read from its records.
        record_generation::Entity::update_many()
            .col_expr(
                record_generation::Column::KeyedFields,
                sea_orm::sea_query::Expr::value(Option::<String>::None),
            )
            .filter(record_generation::Column::Generation.eq(generation))
            .exec(&app.db)
            .await
            .expect("updated");
        assert_eq!(
            total(format!("%7B%7BcustomerRef.id={customer}%7D%7D")).await,
            holding as u64
        );
    })
    .await;
}
