//! Test support: a GraphQL connector's queries held to its vendor's schema
//! (`tests/contracts/graphql/`, `SOURCES.md` there). With `apollo-compiler`:
//! the schema read and validated, a query validated against it (fields,
//! arguments, variables' types) and its variables coerced as the vendor
//! would; then, walking the query's selections through the schema, an
//! answer of every field the query selects ([`Sample`]), where each field
//! the schema lets be `null` is, and each enum field the query reads is, so
//! a test can set one at a time and read the answer with the connector's
//! own types.

use std::path::Path;

use apollo_compiler::executable::{Selection, SelectionSet};
use apollo_compiler::response::JsonMap;
use apollo_compiler::schema::ExtendedType;
use apollo_compiler::validation::Valid;
use apollo_compiler::{ExecutableDocument, Schema};
use serde_json::{Value, json};

/// The vendored schema `file` (under `tests/contracts/graphql/`), validated.
pub(crate) fn schema(file: &str) -> Valid<Schema> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/contracts/graphql")
        .join(file);
    let text = std::fs::read_to_string(&path)
        .unwrap_or_else(|error| panic!("{}: {error}", path.display()));
    Schema::parse_and_validate(text, &path)
        .unwrap_or_else(|invalid| panic!("{} is not a valid schema:\n{}", file, invalid.errors))
}

/// `query` validated against `schema`, or the validator's words.
pub(crate) fn validate(
    schema: &Valid<Schema>,
    query: &str,
    name: &str,
) -> Result<Valid<ExecutableDocument>, String> {
    ExecutableDocument::parse_and_validate(schema, query, name)
        .map_err(|invalid| invalid.errors.to_string())
}

/// `variables` coerced to the types `query`'s one operation declares, as
/// the vendor's server would before running it; the error's words if not.
pub(crate) fn coerce_variables(
    schema: &Valid<Schema>,
    query: &Valid<ExecutableDocument>,
    variables: &Value,
) -> Result<(), String> {
    let operation = query
        .operations
        .get(None)
        .map_err(|error| error.message().to_string())?;
    let values: JsonMap = match apollo_compiler::response::JsonValue::from(variables.clone()) {
        apollo_compiler::response::JsonValue::Object(map) => map,
        other => return Err(format!("variables must be an object, not {other}")),
    };
    apollo_compiler::request::coerce_variable_values(schema, operation, &values)
        .map(|_| ())
        .map_err(|error| error.message().to_string())
}

/// One step into an answer: an object's key or a list's index.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Step {
    Key(String),
    Index(usize),
}

/// A place in an answer, written `orders.nodes.0.closedAt`.
pub(crate) type Place = Vec<Step>;

/// `place` as `a.b.0.c`.
pub(crate) fn dotted(place: &[Step]) -> String {
    place
        .iter()
        .map(|step| match step {
            Step::Key(key) => key.clone(),
            Step::Index(index) => index.to_string(),
        })
        .collect::<Vec<_>>()
        .join(".")
}

/// An answer's `data` for a query, from the schema: every selected field
/// present (one item in each list, the first value of each enum), with the
/// places the schema lets be `null` and the enum fields the query reads.
pub(crate) struct Sample {
    pub(crate) data: Value,
    /// Each field (or list item) whose type is nullable.
    pub(crate) nullable: Vec<Place>,
    /// Each enum field, with every value the schema gives its enum.
    pub(crate) enums: Vec<(Place, Vec<String>)>,
    /// Each scalar field, with its scalar's name.
    pub(crate) scalars: Vec<(Place, String)>,
}

impl Sample {
    /// The answer of `query`'s one operation.
    pub(crate) fn of(schema: &Valid<Schema>, query: &Valid<ExecutableDocument>) -> Sample {
        let operation = query.operations.get(None).expect("one operation");
        let mut sample = Sample {
            data: Value::Null,
            nullable: Vec::new(),
            enums: Vec::new(),
            scalars: Vec::new(),
        };
        sample.data = sample.selections(schema, &operation.selection_set, &mut Vec::new());
        sample
    }

    /// `value` in every field named `field` of scalar type `scalar`: where
    /// a vendor's schema types a field more loosely than its documentation
    /// (Wave's `Money.value` is a `String` holding a decimal).
    pub(crate) fn set(&mut self, field: &str, scalar: &str, value: Value) {
        for (place, name) in &self.scalars {
            if name == scalar && place.last() == Some(&Step::Key(field.to_owned())) {
                self.data = with(&self.data, place, value.clone());
            }
        }
    }

    fn selections(&mut self, schema: &Schema, set: &SelectionSet, place: &mut Place) -> Value {
        let mut object = serde_json::Map::new();
        for selection in &set.selections {
            let Selection::Field(field) = selection else {
                panic!("fragments are not sampled: {}", dotted(place));
            };
            let key = field.response_key().to_string();
            place.push(Step::Key(key.clone()));
            let value = self.value(schema, &field.definition.ty, &field.selection_set, place);
            object.insert(key, value);
            place.pop();
        }
        Value::Object(object)
    }

    fn value(
        &mut self,
        schema: &Schema,
        ty: &apollo_compiler::ast::Type,
        set: &SelectionSet,
        place: &mut Place,
    ) -> Value {
        if !ty.is_non_null() {
            self.nullable.push(place.clone());
        }
        if ty.is_list() {
            place.push(Step::Index(0));
            let item = self.value(schema, ty.item_type(), set, place);
            place.pop();
            return json!([item]);
        }
        let name = ty.inner_named_type();
        match schema.types.get(name) {
            Some(ExtendedType::Enum(definition)) => {
                let values: Vec<String> = definition
                    .values
                    .keys()
                    .map(|value| value.to_string())
                    .collect();
                self.enums.push((place.clone(), values.clone()));
                json!(values.first().expect("an enum has values"))
            }
            Some(ExtendedType::Object(_) | ExtendedType::Interface(_)) => {
                self.selections(schema, set, place)
            }
            Some(ExtendedType::Scalar(_)) => {
                self.scalars.push((place.clone(), name.to_string()));
                scalar(name.as_str())
            }
            other => panic!("{}: {name} is not sampled ({other:?})", dotted(place)),
        }
    }
}

/// A value of a scalar: the built-in ones, and the vendors' date, time,
/// decimal and URL scalars in the forms their schemas describe; any other
/// scalar as a string.
fn scalar(name: &str) -> Value {
    match name {
        "Int" => json!(2),
        "Float" => json!(2.5),
        "Boolean" => json!(true),
        "ID" => json!("gid://vendor/Thing/1"),
        "Date" => json!("2026-10-01"),
        "DateTime" => json!("2026-10-01T12:00:00Z"),
        // Shopify's `Money`: "A monetary value string without a currency
        // symbol or code" (`"100.57"`).
        "Decimal" | "Money" => json!("12.50"),
        "URL" => json!("https://example.com/"),
        _ => json!("text"),
    }
}

/// `data` with `replacement` at `place`.
pub(crate) fn with(data: &Value, place: &[Step], replacement: Value) -> Value {
    let mut data = data.clone();
    let mut at = &mut data;
    for step in place {
        at = match step {
            Step::Key(key) => &mut at[key.as_str()],
            Step::Index(index) => &mut at[*index],
        };
    }
    *at = replacement;
    data
}

/// A place written `a.b.0.c`: numbers are list indexes.
pub(crate) fn place(dotted: &str) -> Place {
    dotted
        .split('.')
        .map(|step| match step.parse() {
            Ok(index) => Step::Index(index),
            Err(_) => Step::Key(step.to_owned()),
        })
        .collect()
}

/// `data` with every place of `places` null: the least answer the schema allows.
pub(crate) fn all_null(data: &Value, places: &[Place]) -> Value {
    let mut deepest_first: Vec<&Place> = places.iter().collect();
    deepest_first.sort_by_key(|place| std::cmp::Reverse(place.len()));
    deepest_first
        .into_iter()
        .fold(data.clone(), |data, place| with(&data, place, Value::Null))
}
