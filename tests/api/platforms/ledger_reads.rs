//! What the accounting platforms' tests share to read what a sync stored:
//! sync data types one by one, list a data type whole, compare records as a
//! table of fields, add up what payments settle, and check that references
//! name accounts of the chart.

use serde_json::Value;
use uuid::Uuid;

use client::types::{ConnectionStatus, PullStatus, QueueDataTypeDataType};
use tributary::data::money::Money;

use super::{latest, sync};
use crate::helpers::{TestApp, json};

/// Syncs each of `data_types` in turn; each must complete.
pub async fn synced(app: &TestApp, company_id: Uuid, data_types: &[QueueDataTypeDataType]) {
    for data_type in data_types {
        let operations = sync(app, company_id, *data_type).await;
        let operation = latest(&operations, &data_type.to_string());
        assert_eq!(operation.status, PullStatus::Complete, "{operation:?}");
    }
}

/// The company's records of `data_type` (one page of up to 100).
pub async fn records(app: &TestApp, company_id: Uuid, data_type: &str) -> Vec<Value> {
    json(
        app.get(&format!(
            "/companies/{company_id}/data/{data_type}?pageSize=100"
        ))
        .await,
    )
    .await["results"]
        .as_array()
        .cloned()
        .unwrap_or_default()
}

/// `records`' values at `pointers`, a row each, as text (`-` for null or
/// absent), to compare with a table.
pub fn columns(records: &[Value], pointers: &[&str]) -> Vec<Vec<String>> {
    records
        .iter()
        .map(|record| {
            pointers
                .iter()
                .map(|pointer| match record.pointer(pointer) {
                    Some(Value::String(text)) => text.clone(),
                    None | Some(Value::Null) => "-".to_owned(),
                    Some(other) => other.to_string(),
                })
                .collect()
        })
        .collect()
}

/// An amount of a record.
pub fn amount(value: &Value) -> Money {
    serde_json::from_value(value.clone()).expect("an amount")
}

/// What `payments`' allocations of `kind` to the record `id` add up to.
pub fn settled(payments: &[Value], kind: &str, id: &Value) -> Money {
    payments
        .iter()
        .flat_map(|payment| {
            payment["allocations"]
                .as_array()
                .cloned()
                .unwrap_or_default()
        })
        .filter(|allocation| allocation["type"] == kind && &allocation["id"] == id)
        .fold(Money(0), |sum, allocation| {
            sum + amount(&allocation["amount"])
        })
}

/// Every journal entry's lines add up to zero.
pub fn each_balances(journals: &[Value]) {
    for journal in journals {
        let balance = journal["journalLines"]
            .as_array()
            .expect("lines")
            .iter()
            .fold(Money(0), |sum, line| sum + amount(&line["netAmount"]));
        assert_eq!(balance, Money(0), "{journal}");
    }
}

/// Every `accountRef` in `documents`' `pointer` arrays (or the documents
/// themselves when `pointer` is empty) names one of `accounts`.
pub fn refs_name_accounts(accounts: &[Value], documents: &[Value], pointer: &str) {
    for document in documents {
        let lines = if pointer.is_empty() {
            vec![document.clone()]
        } else {
            document[pointer].as_array().cloned().unwrap_or_default()
        };
        for line in lines {
            let account = &line["accountRef"];
            assert!(
                account.is_null() || accounts.iter().any(|a| a["accountId"] == account["id"]),
                "{line}"
            );
        }
    }
}

/// Syncs `data_type`, which must fail `PermissionsError` saying `says`,
/// and leave the connection linked (a permission the consent lacks is not
/// a broken connection).
pub async fn refused_but_linked(
    app: &TestApp,
    (company_id, connection_id): (Uuid, Uuid),
    data_type: QueueDataTypeDataType,
    says: &str,
) {
    let operations = sync(app, company_id, data_type).await;
    let operation = latest(&operations, &data_type.to_string());
    assert_eq!(
        operation.status,
        PullStatus::PermissionsError,
        "{operation:?}"
    );
    let message = operation.error_message.clone().unwrap_or_default();
    assert!(message.contains(says), "{message}");
    let connection = app
        .client
        .get_connection(&company_id, &connection_id)
        .await
        .expect("found")
        .into_inner();
    assert_eq!(connection.status, ConnectionStatus::Linked);
}

/// The records the latest pull operation of `data_type` could not read,
/// as rows of their id and field.
pub async fn issues_of(app: &TestApp, company_id: Uuid, data_type: &str) -> Vec<Vec<String>> {
    let history = json(
        app.get(&format!(
            "/companies/{company_id}/data/history?pageSize=100"
        ))
        .await,
    )
    .await;
    let operation = history["results"]
        .as_array()
        .and_then(|all| all.iter().find(|op| op["dataType"] == data_type))
        .cloned()
        .unwrap_or_else(|| panic!("an operation of {data_type}"));
    columns(
        operation["issues"].as_array().expect("issues"),
        &["/recordId", "/field"],
    )
}
