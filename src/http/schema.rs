//! Domain types in the API. The domain describes its values with serde (the
//! JSON) and schemars (the schema), and knows nothing of poem-openapi;
//! [`Described<T>`] presents such a value to poem-openapi: serde writes and
//! reads it, and the schema poem-openapi registers for it is a placeholder
//! that the spec replaces with what schemars writes ([`components`]).

use std::borrow::Cow;

use poem_openapi::registry::{MetaSchema, MetaSchemaRef, Registry};
use poem_openapi::types::{ParseError, ParseFromJSON, ParseResult, ToJSON, Type};
use schemars::generate::SchemaSettings;
use schemars::{JsonSchema, SchemaGenerator};
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::{Map, Value};

use crate::connections::ConnectionStatus;
use crate::data::records::add_synced_schema;
use crate::data::{DataType, Definition, Visitor, visit_all};
use crate::managed_migrations::{BatchState, ChecklistStep, RowState};
use crate::platforms::{self, SourceType};
use crate::sync::operations::PullStatus;
use crate::webhooks::{DeliveryStatus, EventType};

/// The description of a placeholder component; [`super::spec`] replaces
/// every one with the schema schemars writes for it.
pub const PLACEHOLDER: &str = "placeholder for a schema written by schemars";

/// A domain value in the API: its JSON from serde, its schema from schemars.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Described<T>(pub T);

impl<T> From<T> for Described<T> {
    fn from(value: T) -> Self {
        Self(value)
    }
}

impl<T: JsonSchema + Send + Sync> Type for Described<T> {
    const IS_REQUIRED: bool = true;

    type RawValueType = T;
    type RawElementValueType = T;

    fn name() -> Cow<'static, str> {
        T::schema_name()
    }

    fn schema_ref() -> MetaSchemaRef {
        MetaSchemaRef::Reference(T::schema_name().into_owned())
    }

    fn register(registry: &mut Registry) {
        register_placeholder(registry, &T::schema_name());
    }

    fn as_raw_value(&self) -> Option<&Self::RawValueType> {
        Some(&self.0)
    }

    fn raw_element_iter<'a>(
        &'a self,
    ) -> Box<dyn Iterator<Item = &'a Self::RawElementValueType> + 'a> {
        Box::new(std::iter::once(&self.0))
    }
}

impl<T: JsonSchema + Serialize + Send + Sync> ToJSON for Described<T> {
    fn to_json(&self) -> Option<Value> {
        serde_json::to_value(&self.0).ok()
    }
}

impl<T: JsonSchema + DeserializeOwned + Send + Sync> ParseFromJSON for Described<T> {
    fn parse_from_json(value: Option<Value>) -> ParseResult<Self> {
        serde_json::from_value(value.unwrap_or_default())
            .map(Self)
            .map_err(|error| ParseError::custom(error.to_string()))
    }
}

impl<T: Serialize> Serialize for Described<T> {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        self.0.serialize(serializer)
    }
}

/// Registers `name` as a placeholder, unless something registered it already.
pub fn register_placeholder(registry: &mut Registry, name: &str) {
    registry
        .schemas
        .entry(name.to_owned())
        .or_insert(MetaSchema {
            description: Some(PLACEHOLDER),
            ..MetaSchema::new("object")
        });
}

/// The OpenAPI 3.0 schemas schemars writes for every domain type the API
/// shows, keyed by component name: the vocabularies (as plain string enums,
/// the way poem-openapi writes its own), the synced records (written as
/// poem-openapi writes response objects) and every platform's authorization
/// body (as schemars writes them).
pub fn components() -> Map<String, Value> {
    let mut generator = SchemaSettings::openapi3().into_generator();
    add_vocabularies(&mut generator);
    visit_all(&mut Records(&mut generator));
    let mut components = generator.take_definitions(true);
    for (name, schema) in components.iter_mut() {
        plain_string_enum(schema);
        nullable_alternatives(schema);
        response_object(name, schema);
    }

    let mut generator = SchemaSettings::openapi3().into_generator();
    for body in platforms::all()
        .iter()
        .filter_map(|platform| platform.authorization)
    {
        body.add_openapi_schema(&mut generator);
    }
    let mut bodies = generator.take_definitions(true);
    bodies.values_mut().for_each(nullable_alternatives);
    components.extend(bodies);
    components
}

/// The vocabularies the API shows through [`Described`].
fn add_vocabularies(generator: &mut SchemaGenerator) {
    generator.subschema_for::<ConnectionStatus>();
    generator.subschema_for::<PullStatus>();
    generator.subschema_for::<crate::sync::operations::FetchMode>();
    generator.subschema_for::<SourceType>();
    generator.subschema_for::<DataType>();
    generator.subschema_for::<EventType>();
    generator.subschema_for::<BatchState>();
    generator.subschema_for::<RowState>();
    generator.subschema_for::<ChecklistStep>();
    generator.subschema_for::<DeliveryStatus>();
    generator.subschema_for::<crate::links::sessions::LinkSessionStatus>();
}

/// Adds each data type's records.
struct Records<'a>(&'a mut SchemaGenerator);

impl Visitor for Records<'_> {
    fn visit<D: Definition>(&mut self) {
        add_synced_schema::<D>(self.0);
    }
}

/// Writes a response object the way poem-openapi writes its own, so every
/// object of the spec reads alike: `type`, `title`, `description`,
/// `required` (every property: the JSON always carries each, `null` when
/// absent), `properties`; a property referring to another schema is a plain
/// `$ref`, or `allOf: [$ref]` beside `nullable` when it may be null.
fn response_object(name: &str, schema: &mut Value) {
    let Some(object) = schema.as_object_mut() else {
        return;
    };
    if object.get("type").and_then(Value::as_str) != Some("object") {
        return;
    }
    let Some(Value::Object(properties)) = object.remove("properties") else {
        return;
    };
    let mut written = Map::new();
    written.insert("type".to_owned(), Value::String("object".to_owned()));
    written.insert("title".to_owned(), Value::String(name.to_owned()));
    if let Some(description) = object.remove("description") {
        written.insert("description".to_owned(), description);
    }
    let required: Vec<Value> = properties.keys().cloned().map(Value::String).collect();
    written.insert("required".to_owned(), Value::Array(required));
    let properties = properties
        .into_iter()
        .map(|(key, property)| (key, response_property(property)))
        .collect();
    written.insert("properties".to_owned(), Value::Object(properties));
    *object = written;
}

fn response_property(property: Value) -> Value {
    let Value::Object(mut property) = property else {
        return property;
    };
    let Some(reference) = property.remove("$ref") else {
        // poem-openapi's order: type, format, description, nullable, the rest.
        let mut written = Map::new();
        for key in ["type", "format", "description", "nullable"] {
            if let Some(value) = property.remove(key) {
                written.insert(key.to_owned(), value);
            }
        }
        written.extend(property);
        return Value::Object(written);
    };
    if property.get("nullable") != Some(&Value::Bool(true)) {
        return serde_json::json!({ "$ref": reference });
    }
    let mut written = Map::new();
    if let Some(description) = property.remove("description") {
        written.insert("description".to_owned(), description);
    }
    written.insert("nullable".to_owned(), Value::Bool(true));
    written.insert(
        "allOf".to_owned(),
        serde_json::json!([{ "$ref": reference }]),
    );
    Value::Object(written)
}

/// schemars writes an enum whose values are documented as `oneOf` one
/// single-value schema per value (to keep each value's description).
/// Response vocabularies are written as poem-openapi writes its enums:
/// `type: string`, the enum's description, `enum: [...]`.
fn plain_string_enum(schema: &mut Value) {
    let Some(object) = schema.as_object_mut() else {
        return;
    };
    let values: Option<Vec<Value>> = object
        .get("oneOf")
        .and_then(Value::as_array)
        .map(|alternatives| {
            alternatives
                .iter()
                .map(|alternative| match alternative.get("enum") {
                    Some(Value::Array(single)) if single.len() == 1 => single.first().cloned(),
                    _ => alternative.get("const").cloned(),
                })
                .collect::<Option<Vec<Value>>>()
        })
        .unwrap_or(None);
    let Some(values) = values else {
        return;
    };
    let description = object.get("description").cloned();
    let mut plain = Map::new();
    plain.insert("type".to_owned(), Value::String("string".to_owned()));
    if let Some(description) = description {
        plain.insert("description".to_owned(), description);
    }
    plain.insert("enum".to_owned(), Value::Array(values));
    *object = plain;
}

/// schemars writes an optional field whose schema has no `type` as
/// `anyOf: [schema, {nullable: true, enum: [null]}]`. The body's validation
/// (the draft-7 schema) accepts null there, as for every optional field, so
/// the spec says so the plain OpenAPI 3.0 way: `schema` with
/// `nullable: true`, as schemars already writes fields that have a `type`.
fn nullable_alternatives(value: &mut Value) {
    match value {
        Value::Object(object) => {
            let is_null_alternative =
                |alternative: &Value| alternative.get("enum") == Some(&serde_json::json!([null]));
            let replacement = match object.get("anyOf").and_then(Value::as_array) {
                Some(alternatives)
                    if alternatives.len() == 2 && is_null_alternative(&alternatives[1]) =>
                {
                    alternatives[0].as_object().cloned()
                }
                _ => None,
            };
            if let Some(inner) = replacement {
                object.remove("anyOf");
                for (key, inner_value) in inner {
                    object.entry(key).or_insert(inner_value);
                }
                object.insert("nullable".to_owned(), Value::Bool(true));
            }
            object.values_mut().for_each(nullable_alternatives);
        }
        Value::Array(items) => items.iter_mut().for_each(nullable_alternatives),
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn documented_vocabularies_are_plain_string_enums() {
        let components = components();
        assert_eq!(
            components["ConnectionStatus"],
            serde_json::json!({
                "type": "string",
                "description": "Where a connection stands.",
                "enum": ["PendingAuth", "Linked", "Unlinked", "Deauthorized"]
            })
        );
    }

    #[test]
    fn every_body_has_a_schema_component() {
        let components = components();
        for name in crate::platforms::authorization::authorization_schema_names() {
            assert!(components.contains_key(&name), "{name} missing");
        }
    }
}
