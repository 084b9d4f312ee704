//! The fields a data type's list can be queried and ordered by, read from
//! the schema of its records as the API shows them (the same schema the
//! spec publishes), so a new data type's fields follow from its record type.
//!
//! A field is a scalar property, or one inside a nested object written with
//! dots (`customerRef.id`). Fields inside arrays (`lineItems`) are not
//! queryable, as in the reference product.

use std::collections::HashMap;
use std::sync::OnceLock;

use schemars::SchemaGenerator;
use serde_json::{Map, Value};

use super::records::add_synced_schema;
use super::{DataType, Definition, Visitor, visit_all};

/// What a field holds, which decides the operators and values it takes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Kind {
    /// Free text (names, ids, currency codes): `=`, `!=`, `~`.
    Text,
    /// One of a vocabulary (`status`), in any letter case: `=`, `!=`.
    Vocabulary(Vec<String>),
    /// An exact decimal, written as a string (`amountDue`), or a JSON
    /// number: every comparison, by numeric value.
    Number,
    /// A calendar date, `YYYY-MM-DD`: every comparison.
    Date,
    /// A point in time, RFC 3339 UTC (`modifiedDate`): every comparison; a
    /// value may be a date (its midnight, UTC) or an RFC 3339 date-time.
    DateTime,
    /// `true` or `false`: `=`, `!=`.
    Boolean,
}

impl Kind {
    /// The kind in words, for messages and the documentation.
    pub fn describe(&self) -> &'static str {
        match self {
            Kind::Text => "text",
            Kind::Vocabulary(_) => "one of a vocabulary",
            Kind::Number => "a number",
            Kind::Date => "a date",
            Kind::DateTime => "a date-time",
            Kind::Boolean => "a boolean",
        }
    }
}

/// One queryable field.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Field {
    /// Its name as queries write it: the JSON property, with dots into nested
    /// objects (`customerRef.id`).
    pub name: String,
    /// Its path of JSON properties (`["customerRef", "id"]`).
    pub path: Vec<String>,
    /// What it holds.
    pub kind: Kind,
}

/// The queryable fields of `data_type`'s list, in the order of its schema.
pub fn of(data_type: DataType) -> &'static [Field] {
    static ALL: OnceLock<HashMap<&'static str, Vec<Field>>> = OnceLock::new();
    ALL.get_or_init(|| {
        let mut collected = Collect(HashMap::new());
        visit_all(&mut collected);
        collected.0
    })
    .get(data_type.name())
    .map_or(&[], Vec::as_slice)
}

/// The field `name` of `data_type`'s list, exactly as written.
pub fn named(data_type: DataType, name: &str) -> Option<&'static Field> {
    of(data_type).iter().find(|field| field.name == name)
}

struct Collect(HashMap<&'static str, Vec<Field>>);

impl Visitor for Collect {
    fn visit<D: Definition>(&mut self) {
        self.0.insert(D::SPEC.name, fields_of::<D>());
    }
}

/// `D`'s fields, from its synced schema.
fn fields_of<D: Definition>() -> Vec<Field> {
    let mut generator = SchemaGenerator::default();
    add_synced_schema::<D>(&mut generator);
    let definitions = generator.definitions().clone();
    let name = <D::Record as schemars::JsonSchema>::schema_name();
    let mut fields = Vec::new();
    if let Some(schema) = definitions.get(name.as_ref()) {
        collect(schema, &definitions, &mut Vec::new(), &mut fields);
    }
    fields
}

/// Adds the scalar properties of the object `schema` (and, with their
/// prefix, of the objects it nests) to `fields`.
fn collect(
    schema: &Value,
    definitions: &Map<String, Value>,
    prefix: &mut Vec<String>,
    fields: &mut Vec<Field>,
) {
    let Some(properties) = schema.get("properties").and_then(Value::as_object) else {
        return;
    };
    for (property, value) in properties {
        prefix.push(property.clone());
        let resolved = resolve(value, definitions);
        if resolved.get("properties").is_some() {
            // A nested object; guard against a type that contains itself.
            if prefix.len() < 4 {
                collect(resolved, definitions, prefix, fields);
            }
        } else if let Some(kind) = kind_of(resolved, definitions) {
            fields.push(Field {
                name: prefix.join("."),
                path: prefix.clone(),
                kind,
            });
        }
        prefix.pop();
    }
}

/// The schema `schema` stands for: through a `$ref`, and through an
/// `anyOf`/`oneOf` whose one alternative is not `null` (an `Option`).
fn resolve<'a>(schema: &'a Value, definitions: &'a Map<String, Value>) -> &'a Value {
    if let Some(reference) = schema.get("$ref").and_then(Value::as_str) {
        let name = reference.rsplit('/').next().unwrap_or(reference);
        return definitions
            .get(name)
            .map_or(schema, |found| resolve(found, definitions));
    }
    for key in ["anyOf", "oneOf"] {
        if let Some(alternatives) = schema.get(key).and_then(Value::as_array) {
            let not_null: Vec<&Value> = alternatives
                .iter()
                .filter(|alternative| alternative.get("type") != Some(&Value::from("null")))
                .collect();
            if let [only] = not_null.as_slice() {
                return resolve(only, definitions);
            }
        }
    }
    schema
}

/// The kind of a scalar schema; `None` for arrays and what is not scalar.
fn kind_of(schema: &Value, definitions: &Map<String, Value>) -> Option<Kind> {
    if let Some(values) = vocabulary(schema, definitions) {
        return Some(Kind::Vocabulary(values));
    }
    let types: Vec<&str> = match schema.get("type") {
        Some(Value::String(one)) => vec![one.as_str()],
        Some(Value::Array(several)) => several.iter().filter_map(Value::as_str).collect(),
        _ => Vec::new(),
    };
    let format = schema.get("format").and_then(Value::as_str);
    let scalar = types.iter().copied().find(|one| *one != "null")?;
    Some(match (scalar, format) {
        ("string", Some("date")) => Kind::Date,
        ("string", Some("date-time")) => Kind::DateTime,
        ("string", Some("decimal")) => Kind::Number,
        ("string", _) => Kind::Text,
        ("number" | "integer", _) => Kind::Number,
        ("boolean", _) => Kind::Boolean,
        _ => return None,
    })
}

/// The values of a string enumeration (`enum`, or `oneOf` of `const`s).
fn vocabulary(schema: &Value, definitions: &Map<String, Value>) -> Option<Vec<String>> {
    if let Some(values) = schema.get("enum").and_then(Value::as_array) {
        return values
            .iter()
            .filter(|value| !value.is_null())
            .map(|value| value.as_str().map(str::to_owned))
            .collect();
    }
    let alternatives = schema.get("oneOf").and_then(Value::as_array)?;
    let mut values = Vec::new();
    for alternative in alternatives {
        let alternative = resolve(alternative, definitions);
        if alternative.get("type") == Some(&Value::from("null")) {
            continue;
        }
        values.push(alternative.get("const")?.as_str()?.to_owned());
    }
    (!values.is_empty()).then_some(values)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn listed(data_type: DataType) -> Vec<(String, &'static str)> {
        of(data_type)
            .iter()
            .map(|field| (field.name.clone(), field.kind.describe()))
            .collect()
    }

    #[test]
    fn invoice_fields_are_the_scalars_of_its_schema_with_nested_ones_dotted() {
        let owned = |pairs: &[(&str, &'static str)]| -> Vec<(String, &'static str)> {
            pairs
                .iter()
                .map(|(name, kind)| ((*name).to_owned(), *kind))
                .collect()
        };
        assert_eq!(
            listed(DataType::INVOICES),
            owned(&[
                ("invoiceId", "text"),
                ("connectionId", "text"),
                ("invoiceNumber", "text"),
                ("customerRef.id", "text"),
                ("customerRef.companyName", "text"),
                ("issueDate", "a date"),
                ("dueDate", "a date"),
                ("paidOnDate", "a date"),
                ("currency", "text"),
                ("subTotal", "a number"),
                ("totalTaxAmount", "a number"),
                ("totalAmount", "a number"),
                ("amountDue", "a number"),
                ("status", "one of a vocabulary"),
                ("note", "text"),
                ("isDeleted", "a boolean"),
                ("modifiedDate", "a date-time"),
                ("sourceModifiedDate", "a date-time"),
            ])
        );
        let status = named(DataType::INVOICES, "status").expect("status is a field");
        assert_eq!(
            status.kind,
            Kind::Vocabulary(
                [
                    "Draft",
                    "Submitted",
                    "PartiallyPaid",
                    "Paid",
                    "Void",
                    "Unknown"
                ]
                .map(str::to_owned)
                .to_vec()
            )
        );
        assert_eq!(named(DataType::INVOICES, "lineItems"), None);
        assert_eq!(named(DataType::INVOICES, "lineItems.quantity"), None);
    }

    #[test]
    fn every_data_type_has_its_id_and_our_three_fields() {
        for data_type in DataType::all() {
            let spec = data_type.spec();
            for name in [spec.id_field, "connectionId", "isDeleted", "modifiedDate"] {
                assert!(
                    named(*data_type, name).is_some(),
                    "{data_type} lacks {name}: {:?}",
                    listed(*data_type)
                );
            }
        }
    }
}
