//! Records of any data type on their way to the store. A connector's page
//! keeps its records typed ([`Records::of`]); the store turns each into a
//! [`Row`]: its id, its sort key and filter value, and the JSON the API
//! shows, written once, when the record is staged.

use std::borrow::Cow;
use std::collections::HashMap;

use schemars::{JsonSchema, SchemaGenerator};
use serde::Serialize;
use serde_json::{Map, Value};
use uuid::Uuid;

use super::{DataType, Definition};
use crate::timestamp::Timestamp;

/// A page of records of one data type.
pub struct Records {
    data_type: DataType,
    batch: Box<dyn Batch>,
}

impl Records {
    /// Records of the data type `D` defines.
    pub fn of<D: Definition>(records: Vec<D::Record>) -> Self {
        Self {
            data_type: DataType::of::<D>(),
            batch: Box::new(Typed::<D>(records)),
        }
    }

    /// Their data type.
    pub fn data_type(&self) -> DataType {
        self.data_type
    }

    /// How many records there are.
    pub fn len(&self) -> usize {
        self.batch.len()
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The rows to store, written with `stamp`. A record the platform sent
    /// twice (page-numbered paging over data that changes during a sync) is
    /// kept once, as last sent, in the place it was first seen (one insert
    /// statement may not touch a row twice).
    pub fn rows(&self, stamp: &Stamp) -> Result<Vec<Row>, serde_json::Error> {
        self.batch.rows(stamp)
    }
}

impl std::fmt::Debug for Records {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} {}", self.len(), self.data_type)
    }
}

/// What every stored record is given beside its platform's fields.
#[derive(Debug, Clone, Copy)]
pub struct Stamp {
    /// The connection it was synced from (`connectionId`).
    pub connection_id: Uuid,
    /// When tributary's copy changed (`modifiedDate`).
    pub modified: Timestamp,
}

/// A record as stored.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Row {
    /// The platform's id of the record.
    pub id: String,
    /// What its list is ordered by.
    pub sort_key: String,
    /// Its value of the list's filter.
    pub filter_value: Option<Cow<'static, str>>,
    /// The record as the API shows it, as JSON text.
    pub body: String,
}

trait Batch: Send + Sync {
    fn len(&self) -> usize;
    fn rows(&self, stamp: &Stamp) -> Result<Vec<Row>, serde_json::Error>;
}

struct Typed<D: Definition>(Vec<D::Record>);

/// A record with what the store adds, as the API writes it. `modifiedDate`
/// comes last, in a fixed width ([`MODIFIED_DATE_SUFFIX_CHARS`]): the swap
/// compares a record with its previous copy without it, and stamps the
/// changed ones with the time it publishes them.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Synced<'a, R> {
    connection_id: Uuid,
    #[serde(flatten)]
    record: &'a R,
    is_deleted: bool,
    modified_date: Timestamp,
}

/// How long a record the platform deleted stays in its list, flagged
/// `isDeleted` (from the sync that found it gone): partners reading
/// incrementally less often than this would miss deletions.
pub const DELETED_RETENTION_DAYS: i64 = 30;

/// The characters a stored record's JSON ends with from its `modifiedDate`
/// on: `"modifiedDate":"` (16), the timestamp (27, `Timestamp`'s fixed
/// width until the year 9999), `"}` (2).
pub const MODIFIED_DATE_SUFFIX_CHARS: usize = 45;

/// The end of a stored record's JSON that says it changed at `at`: what
/// replaces its last [`MODIFIED_DATE_SUFFIX_CHARS`] characters.
pub fn modified_date_suffix(at: Timestamp) -> String {
    format!("\"modifiedDate\":\"{}\"}}", at.to_rfc3339())
}

/// A record's JSON as staged: without its last [`MODIFIED_DATE_SUFFIX_CHARS`]
/// characters (its `modifiedDate` and closing brace), which the swap adds:
/// the previous copy's when the rest is the same, its own time otherwise.
/// `body` ends with its `modifiedDate` (as every row and flagged record
/// written here does); the suffix is ASCII, so the cut is a byte count.
pub fn without_modified_date(mut body: String) -> String {
    body.truncate(body.len().saturating_sub(MODIFIED_DATE_SUFFIX_CHARS));
    body
}

/// What becomes of a record of the previous generation that a sync did not
/// bring back (the platform deleted it), given the sync's time `at`:
/// flagged deleted (and so changed), kept as it is while already flagged
/// for less than [`DELETED_RETENTION_DAYS`], then dropped (`None`).
pub fn deleted(body: &str, at: Timestamp) -> Result<Option<String>, serde_json::Error> {
    let mut record: Map<String, Value> = serde_json::from_str(body)?;
    if record.get("isDeleted") == Some(&Value::Bool(true)) {
        let flagged = record
            .get("modifiedDate")
            .cloned()
            .map(serde_json::from_value::<Timestamp>)
            .transpose()?;
        let kept = flagged.is_some_and(|flagged| {
            at.0 - flagged.0 < chrono::Duration::days(DELETED_RETENTION_DAYS)
        });
        return Ok(kept.then(|| body.to_owned()));
    }
    // Written by a build before `isDeleted`: the flag goes before the date.
    record.shift_remove("isDeleted");
    record.shift_remove("modifiedDate");
    record.insert("isDeleted".to_owned(), Value::Bool(true));
    record.insert("modifiedDate".to_owned(), serde_json::to_value(at)?);
    serde_json::to_string(&record).map(Some)
}

impl<D: Definition> Batch for Typed<D> {
    fn len(&self) -> usize {
        self.0.len()
    }

    fn rows(&self, stamp: &Stamp) -> Result<Vec<Row>, serde_json::Error> {
        let mut place: HashMap<&str, usize> = HashMap::with_capacity(self.0.len());
        let mut kept: Vec<&D::Record> = Vec::with_capacity(self.0.len());
        for record in &self.0 {
            match place.get(D::id(record)) {
                Some(&index) => kept[index] = record,
                None => {
                    place.insert(D::id(record), kept.len());
                    kept.push(record);
                }
            }
        }
        kept.into_iter()
            .map(|record| {
                let body = serde_json::to_string(&Synced {
                    connection_id: stamp.connection_id,
                    record,
                    is_deleted: false,
                    modified_date: stamp.modified,
                })?;
                Ok(Row {
                    id: D::id(record).to_owned(),
                    sort_key: D::sort_key(record),
                    filter_value: D::filter_value(record),
                    body,
                })
            })
            .collect()
    }
}

/// Adds the schema of `D`'s records as the API shows them to `generator`,
/// under the record's schema name: its fields, with `connectionId` after the
/// id, and `isDeleted` and `modifiedDate` before `sourceModifiedDate` (or
/// last).
pub fn add_synced_schema<D: Definition>(generator: &mut SchemaGenerator) {
    generator.subschema_for::<D::Record>();
    let connection_id = property(
        generator.subschema_for::<Uuid>().to_value(),
        "The connection it was synced from.",
    );
    let is_deleted = property(
        generator.subschema_for::<bool>().to_value(),
        &format!(
            "Whether the platform deleted the record. A sync that no longer finds a record keeps \
             it in the list, flagged, with `modifiedDate` the time of that sync, for \
             {DELETED_RETENTION_DAYS} days; the first sync after that drops it. \
             `query=isDeleted!=true` leaves deleted records out."
        ),
    );
    let modified_date = property(
        generator.subschema_for::<Timestamp>().to_value(),
        "When tributary's copy last changed: the time the sync that brought the change (or \
         found the record deleted) published it. A sync that brings the record unchanged \
         leaves it as it was, so `query=modifiedDate>…` reads only what changed. To read \
         incrementally, remember the latest `modifiedDate` you read from each connection \
         (`connectionId`): a connection's syncs publish one after another, each later than the \
         last, while several connections publish independently.",
    );
    let name = D::Record::schema_name();
    let Some(Value::Object(schema)) = generator.definitions_mut().get_mut(name.as_ref()) else {
        return;
    };
    let Some(Value::Object(properties)) = schema.get_mut("properties") else {
        return;
    };
    let mut with_ours = Map::new();
    let before_modified = properties.contains_key("sourceModifiedDate");
    for (index, (key, value)) in std::mem::take(properties).into_iter().enumerate() {
        if key == "sourceModifiedDate" {
            with_ours.insert("isDeleted".to_owned(), is_deleted.clone());
            with_ours.insert("modifiedDate".to_owned(), modified_date.clone());
        }
        with_ours.insert(key, value);
        if index == 0 {
            with_ours.insert("connectionId".to_owned(), connection_id.clone());
        }
    }
    if !before_modified {
        with_ours.insert("isDeleted".to_owned(), is_deleted);
        with_ours.insert("modifiedDate".to_owned(), modified_date);
    }
    *properties = with_ours;
}

fn property(mut schema: Value, description: &str) -> Value {
    if let Some(object) = schema.as_object_mut() {
        object.insert(
            "description".to_owned(),
            Value::String(description.to_owned()),
        );
    }
    schema
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::data::customers::{Customer, CustomerStatus, Customers};

    fn customer(id: &str, name: &str) -> Customer {
        Customer {
            customer_id: id.to_owned(),
            customer_name: name.to_owned(),
            email_address: None,
            phone: Some("+44 20".to_owned()),
            default_currency: None,
            status: CustomerStatus::Active,
            source_modified_date: None,
        }
    }

    #[test]
    fn a_record_sent_twice_is_kept_once_as_last_sent_where_first_seen() {
        let records = Records::of::<Customers>(vec![
            customer("a", "First"),
            customer("b", "Second"),
            customer("a", "First, changed"),
        ]);
        let stamp = Stamp {
            connection_id: Uuid::from_u128(7),
            modified: Timestamp(chrono::DateTime::UNIX_EPOCH),
        };
        let rows = records.rows(&stamp).expect("written");
        let names: Vec<(&str, &str)> = rows
            .iter()
            .map(|row| (row.id.as_str(), row.sort_key.as_str()))
            .collect();
        assert_eq!(names, [("a", "First, changed"), ("b", "Second")]);
        let body: Value = serde_json::from_str(&rows[0].body).expect("JSON");
        assert_eq!(
            body,
            serde_json::json!({
                "connectionId": "00000000-0000-0000-0000-000000000007",
                "customerId": "a",
                "customerName": "First, changed",
                "emailAddress": null,
                "phone": "+44 20",
                "defaultCurrency": null,
                "status": "Active",
                "sourceModifiedDate": null,
                "isDeleted": false,
                "modifiedDate": "1970-01-01T00:00:00.000000Z"
            })
        );
        let suffix = modified_date_suffix(stamp.modified);
        assert_eq!(suffix.chars().count(), MODIFIED_DATE_SUFFIX_CHARS);
        assert!(rows[0].body.ends_with(&suffix), "{}", rows[0].body);
        assert!(
            rows[0]
                .body
                .ends_with(&format!(",\"isDeleted\":false,{suffix}"))
        );
    }

    fn at(text: &str) -> Timestamp {
        serde_json::from_value(Value::String(text.to_owned())).expect("a timestamp")
    }

    #[test]
    fn a_record_found_gone_is_flagged_then_kept_for_the_retention_then_dropped() {
        let body = r#"{"connectionId":"c","customerId":"a","isDeleted":false,"modifiedDate":"2026-01-01T00:00:00.000000Z"}"#;
        let flagged_at = at("2026-02-01T00:00:00.000000Z");
        let flagged = deleted(body, flagged_at).expect("JSON").expect("kept");
        assert_eq!(
            flagged,
            format!(
                r#"{{"connectionId":"c","customerId":"a","isDeleted":true,{}"#,
                modified_date_suffix(flagged_at)
            )
        );
        let day_before_expiry = at("2026-03-02T23:59:59.000000Z");
        assert_eq!(
            deleted(&flagged, day_before_expiry)
                .expect("JSON")
                .as_deref(),
            Some(flagged.as_str()),
            "unchanged while retained"
        );
        let expiry = at("2026-03-03T00:00:00.000000Z");
        assert_eq!(deleted(&flagged, expiry).expect("JSON"), None);

        let before_the_flag = r#"{"customerId":"a","modifiedDate":"2026-01-01T00:00:00.000000Z"}"#;
        assert_eq!(
            deleted(before_the_flag, flagged_at)
                .expect("JSON")
                .as_deref(),
            Some(
                r#"{"customerId":"a","isDeleted":true,"modifiedDate":"2026-02-01T00:00:00.000000Z"}"#
            )
        );
    }
}
