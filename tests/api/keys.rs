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
    let (generation, _) = crate::keys_built::published_invoices(app, connection_id).await;
    (company_id, generation)
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

        // An order by a declared field is read from its keys too: without
        // them, every record is one without a value, in the list's order.
        let first_ids = |parameters: &'static str| async move {
            let (status, page) = answer(
                app,
                &format!("/companies/{company_id}/data/invoices?pageSize=20&{parameters}"),
            )
            .await;
            assert_eq!(status, 200, "{page}");
            ids(&page)
        };
        let list_order: Vec<String> = records[..20]
            .iter()
            .map(|record| record["invoiceId"].as_str().expect("an id").to_owned())
            .collect();
        assert_ne!(first_ids("orderBy=-amountDue").await, list_order);
        record_key::Entity::delete_many()
            .filter(record_key::Column::Generation.eq(generation))
            .filter(record_key::Column::Field.eq("amountDue"))
            .exec(&app.db)
            .await
            .expect("deleted");
        assert_eq!(
            first_ids("query=currency!=XYZ&orderBy=-amountDue").await,
            list_order,
            "ordered by the keys"
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

#[tokio::test]
async fn the_status_filter_with_a_query_on_declared_fields_is_read_from_the_keys() {
    for_each_database(async |app: &TestApp| {
        let (company_id, generation) = synced_invoices(app, "Keyed Status Ltd", 200).await;
        let records = listed(app, company_id).await;
        let status = value_of(&records[0], "status").expect("a status");
        let currency = value_of(&records[0], "currency").expect("a currency");
        let expected: Vec<String> = records
            .iter()
            .filter(|record| {
                value_of(record, "status").as_deref() == Some(&status)
                    && value_of(record, "currency").as_deref() == Some(&currency)
            })
            .map(|record| record["invoiceId"].as_str().expect("an id").to_owned())
            .collect();
        assert!(
            !expected.is_empty() && expected.len() < records.len(),
            "a selection, not every record"
        );
        // The parameter with a query, and the same in the query alone: the
        // records of both, in the list's order, with an exact total.
        let read = |parameters: String| async move {
            let (code, page) = answer(
                app,
                &format!("/companies/{company_id}/data/invoices?pageSize=5000&{parameters}"),
            )
            .await;
            assert_eq!(code, 200, "{page}");
            assert_eq!(page["totalResults"].as_u64(), Some(ids(&page).len() as u64));
            ids(&page)
        };
        let lower = status.to_lowercase();
        assert_eq!(
            read(format!("status={lower}&query=currency={currency}")).await,
            expected
        );
        assert_eq!(
            read(format!("query=currency={currency}%26%26status={lower}")).await,
            expected
        );
        // Another status's parameter with the same query is another
        // selection, not an answer remembered for the first.
        let other = records
            .iter()
            .filter_map(|record| value_of(record, "status"))
            .find(|other| *other != status)
            .expect("a second status");
        let others = read(format!("status={other}&query=currency={currency}")).await;
        assert!(others.iter().all(|id| !expected.contains(id)));

        // Without the status field's keys, both find nothing: the keys are
        // what was read, not the records of that status (the filter's
        // stored ordinals would still have found them).
        record_key::Entity::delete_many()
            .filter(record_key::Column::Generation.eq(generation))
            .filter(record_key::Column::Field.eq("status"))
            .exec(&app.db)
            .await
            .expect("deleted");
        assert_eq!(
            read(format!("status={status}&query=%7Bcurrency={currency}%7D")).await,
            Vec::<String>::new(),
            "read from the keys"
        );
        // The status alone is still the filter, read by its ordinals.
        let filtered = read(format!("query=status={status}")).await;
        assert!(expected.iter().all(|id| filtered.contains(id)));
    })
    .await;
}

#[tokio::test]
async fn this_suppliers_bills_and_bills_since_a_day_are_read_from_the_bills_keys() {
    for_each_database(async |app: &TestApp| {
        let (company_id, _) = synced_invoices(app, "Keyed Bills Ltd", 200).await;
        let generation = data_generation::Entity::find()
            .filter(data_generation::Column::DataType.eq("bills"))
            .one(&app.db)
            .await
            .expect("the generation")
            .expect("bills published")
            .generation;
        let path = format!("/companies/{company_id}/data/bills");
        let (code, page) = answer(app, &format!("{path}?pageSize=5000")).await;
        assert_eq!(code, 200, "{page}");
        let bills = page["results"].as_array().expect("results").clone();
        let supplier = value_of(&bills[0], "supplierRef.id").expect("a supplier");
        let day = value_of(&bills[bills.len() / 2], "issueDate").expect("a date");
        let theirs = bills
            .iter()
            .filter(|bill| value_of(bill, "supplierRef.id").as_deref() == Some(&supplier))
            .count() as u64;
        let since = bills
            .iter()
            .filter(|bill| value_of(bill, "issueDate").is_some_and(|date| date >= day))
            .count() as u64;
        assert!(theirs > 0 && theirs < bills.len() as u64);
        let path = &path;
        let total = |query: String| async move {
            let (code, page) = answer(app, &format!("{path}?query={query}")).await;
            assert_eq!(code, 200, "{page}");
            page["totalResults"].as_u64().expect("a total")
        };
        assert_eq!(total(format!("supplierRef.id={supplier}")).await, theirs);
        assert_eq!(total(format!("issueDate>={day}")).await, since);

        // Without those fields' keys the same generation finds nothing:
        // the keys are what was read.
        record_key::Entity::delete_many()
            .filter(record_key::Column::Generation.eq(generation))
            .filter(record_key::Column::Field.is_in(["supplierRef.id", "issueDate"]))
            .exec(&app.db)
            .await
            .expect("deleted");
        assert_eq!(total(format!("%7BsupplierRef.id={supplier}%7D")).await, 0);
        assert_eq!(total(format!("%7BissueDate>={day}%7D")).await, 0);
    })
    .await;
}

/// Whether a record matches a query, as the test computes it.
type Matches = Box<dyn Fn(&Value) -> bool>;

/// The ids of `page`'s results.
fn ids(page: &Value) -> Vec<String> {
    page["results"]
        .as_array()
        .expect("results")
        .iter()
        .map(|record| record["invoiceId"].as_str().expect("an id").to_owned())
        .collect()
}

#[tokio::test]
async fn a_wide_match_of_one_declared_field_is_counted_from_the_keys_and_walked_by_its_links() {
    for_each_database(async |app: &TestApp| {
        let (company_id, generation) = synced_invoices(app, "Keys Walked Ltd", 2500).await;
        let records = listed(app, company_id).await;
        // Bounds that most invoices pass: a match wide enough that its
        // pages are walked rather than listed (at pages of 10).
        let mut dates: Vec<String> = records
            .iter()
            .filter_map(|record| value_of(record, "issueDate"))
            .collect();
        dates.sort();
        let early = dates[dates.len() / 10].clone();
        // The list runs newest first, so the oldest two thirds are its end:
        // a dense match bunched far from where a walk starts.
        let old = dates[dates.len() * 64 / 100].clone();
        let mut amounts: Vec<f64> = records
            .iter()
            .filter_map(|record| value_of(record, "amountDue")?.parse().ok())
            .collect();
        amounts.sort_by(f64::total_cmp);
        let low = amounts[amounts.len() / 7];
        let rarest = ["USD", "EUR", "GBP", "AUD", "CAD"]
            .into_iter()
            .filter(|currency| {
                records
                    .iter()
                    .any(|record| value_of(record, "currency").as_deref() == Some(currency))
            })
            .min_by_key(|currency| {
                records
                    .iter()
                    .filter(|record| value_of(record, "currency").as_deref() == Some(currency))
                    .count()
            })
            .expect("a currency");
        let cases: Vec<(String, Matches)> = vec![
            (format!("issueDate>={early}"), {
                let early = early.clone();
                Box::new(move |record| value_of(record, "issueDate").is_some_and(|d| d >= early))
            }),
            (
                format!("amountDue>={low}"),
                Box::new(move |record| {
                    value_of(record, "amountDue")
                        .and_then(|amount| amount.parse::<f64>().ok())
                        .is_some_and(|amount| amount >= low)
                }),
            ),
            (format!("issueDate<={old}"), {
                let old = old.clone();
                Box::new(move |record| value_of(record, "issueDate").is_some_and(|d| d <= old))
            }),
            (
                format!("currency!={rarest}"),
                Box::new(move |record| value_of(record, "currency").as_deref() != Some(rarest)),
            ),
        ];
        for (query, matches) in &cases {
            let expected: Vec<String> = records
                .iter()
                .filter(|record| matches(record))
                .map(|record| record["invoiceId"].as_str().expect("an id").to_owned())
                .collect();
            assert!(expected.len() > 1_500, "{query}: a wide match");
            let (status, mut page) = answer(
                app,
                &format!("/companies/{company_id}/data/invoices?query={query}&pageSize=10"),
            )
            .await;
            assert_eq!(status, 200, "{page}");
            assert_eq!(page["totalResults"], json!(expected.len()), "{query}");
            let mut walked = ids(&page);
            let mut number = 1;
            while let Some(next) = page["_links"]["next"]["href"].as_str() {
                number += 1;
                let (status, found) = answer(app, next).await;
                assert_eq!(status, 200, "{found}");
                assert_eq!(found["pageNumber"], json!(number), "{query}");
                assert_eq!(found["totalResults"], json!(expected.len()), "{query}");
                walked.extend(ids(&found));
                page = found;
            }
            assert_eq!(walked, expected, "{query}: every match once, in order");

            // A page by number alone lists the same order.
            let (status, deep) = answer(
                app,
                &format!("/companies/{company_id}/data/invoices?query={query}&pageSize=10&page=37"),
            )
            .await;
            assert_eq!(status, 200, "{deep}");
            assert_eq!(ids(&deep), expected[360..370], "{query}: page 37");
        }

        // The total is the keys' count, not the records': a block wholly
        // inside the bound is counted by its stored size.
        let inside = record_key::Entity::find()
            .filter(record_key::Column::Generation.eq(generation))
            .filter(record_key::Column::Field.eq("issueDate"))
            .filter(record_key::Column::FirstValue.gte(early.as_str()))
            .one(&app.db)
            .await
            .expect("read")
            .expect("a block inside the bound");
        record_key::Entity::update_many()
            .col_expr(
                record_key::Column::Size,
                sea_orm::sea_query::Expr::value(inside.size + 7),
            )
            .filter(record_key::Column::Generation.eq(generation))
            .filter(record_key::Column::Field.eq("issueDate"))
            .filter(record_key::Column::Block.eq(inside.block))
            .exec(&app.db)
            .await
            .expect("updated");
        let expected = records.iter().filter(|record| (cases[0].1)(record)).count();
        let (status, page) = answer(
            app,
            &format!(
                "/companies/{company_id}/data/invoices?query=%7BissueDate>={early}%7D&pageSize=10"
            ),
        )
        .await;
        assert_eq!(status, 200, "{page}");
        assert_eq!(
            page["totalResults"],
            json!(expected + 7),
            "counted from the sizes"
        );
    })
    .await;
}
