//! JSON Schema validation of request bodies, reported as one
//! [`FieldError`] per field at fault.
//!
//! Messages are built from the kind of failure and the schema's limits,
//! never from the submitted value: bodies carry OAuth tokens, and an error
//! body or log line must not repeat them.

use std::collections::HashMap;
use std::sync::{Arc, OnceLock, RwLock};

use jsonschema::error::{TypeKind, ValidationErrorKind};
use jsonschema::{Draft, Validator};
use serde_json::Value;

use crate::error::FieldError;

/// Longest accepted string value in a request body, in bytes.
pub const MAX_STRING_BYTES: usize = 16 * 1024;

/// The annotation a schema carries to say, in words, what it accepts; used
/// when a value matches none of a `oneOf`/`anyOf`.
pub const ACCEPTS: &str = "x-accepts";

const UUID_PATTERN: &str =
    "^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$";

/// A compiled schema, kept beside its source for error messages.
pub struct Checker {
    validator: Validator,
    schema: Value,
}

/// Compiles `schema` (JSON Schema draft 7, formats checked; `uuid`, which
/// draft 7 does not know, is enforced by a pattern).
pub fn compile(mut schema: Value) -> anyhow::Result<Checker> {
    add_uuid_patterns(&mut schema);
    let validator = jsonschema::options()
        .with_draft(Draft::Draft7)
        .should_validate_formats(true)
        .build(&schema)
        .map_err(|error| anyhow::anyhow!("invalid JSON Schema: {error}"))?;
    Ok(Checker { validator, schema })
}

fn add_uuid_patterns(value: &mut Value) {
    match value {
        Value::Object(object) => {
            if object.get("format").and_then(Value::as_str) == Some("uuid") {
                object
                    .entry("pattern")
                    .or_insert(Value::String(UUID_PATTERN.to_owned()));
            }
            object.values_mut().for_each(add_uuid_patterns);
        }
        Value::Array(items) => items.iter_mut().for_each(add_uuid_patterns),
        _ => {}
    }
}

/// The checker cached under `name`, compiled from `schema()` on first use.
pub fn cached(
    name: &str,
    schema: impl FnOnce() -> anyhow::Result<Value>,
) -> anyhow::Result<Arc<Checker>> {
    static CHECKERS: OnceLock<RwLock<HashMap<String, Arc<Checker>>>> = OnceLock::new();
    let checkers = CHECKERS.get_or_init(Default::default);
    if let Some(found) = checkers.read().ok().and_then(|map| map.get(name).cloned()) {
        return Ok(found);
    }
    let compiled = Arc::new(compile(schema()?)?);
    if let Ok(mut map) = checkers.write() {
        map.insert(name.to_owned(), compiled.clone());
    }
    Ok(compiled)
}

impl Checker {
    /// The problems `instance` has: one item per field at fault (its first
    /// problem), every field reported.
    pub fn field_errors(&self, instance: &Value) -> Vec<FieldError> {
        let mut errors = Vec::new();
        unstorable_strings(instance, "", &mut errors);
        errors.extend(self.schema_errors(instance));
        let mut reported: Vec<String> = Vec::new();
        errors.retain(|error| {
            let first = !reported.contains(&error.item_id);
            reported.push(error.item_id.clone());
            first
        });
        errors
    }

    fn schema_errors(&self, instance: &Value) -> Vec<FieldError> {
        let mut errors = Vec::new();
        for error in self.validator.iter_errors(instance) {
            let at = field_path(error.instance_path().as_str());
            let item = |at: String| if at.is_empty() { "body".to_owned() } else { at };
            match error.kind() {
                ValidationErrorKind::Required { property } => {
                    let name = property
                        .as_str()
                        .map_or_else(|| property.to_string(), str::to_owned);
                    errors.push(FieldError::new(join(&at, &name), "is required"));
                }
                ValidationErrorKind::AdditionalProperties { unexpected } => {
                    for name in unexpected {
                        errors.push(FieldError::new(
                            join(&at, name),
                            "is not a field of this body (check the spelling against the schema)",
                        ));
                    }
                }
                // A schema that says in words what it accepts is quoted.
                kind => {
                    let message = self
                        .accepts(error.schema_path().as_str())
                        .map(|accepts| format!("must be {accepts}"))
                        .unwrap_or_else(|| describe(kind));
                    errors.push(FieldError::new(item(at), message));
                }
            }
        }
        errors
    }

    /// What the schema at `schema_path` (or below it) says it accepts.
    fn accepts(&self, schema_path: &str) -> Option<String> {
        let parent = schema_path
            .rsplit_once('/')
            .map_or("", |(parent, _)| parent);
        find_accepts(self.schema.pointer(parent)?)
    }
}

/// The note on `schema` itself, or on one of its direct alternatives (an
/// optional field wraps its schema in `anyOf: [schema, null]`); never from
/// deeper down, where it would describe another field.
fn find_accepts(schema: &Value) -> Option<String> {
    let own = |schema: &Value| {
        schema
            .get(ACCEPTS)
            .and_then(Value::as_str)
            .map(str::to_owned)
    };
    own(schema).or_else(|| {
        ["oneOf", "anyOf", "allOf"]
            .iter()
            .filter_map(|keyword| schema.get(keyword).and_then(Value::as_array))
            .flatten()
            .find_map(own)
    })
}

/// Why a text containing NUL is refused, wherever it comes from (a body's
/// field, a query parameter).
pub const NUL_RULE: &str = "must not contain the NUL character (U+0000), which no text accepts";

/// Whether `text` may be stored: PostgreSQL's text cannot hold NUL (SQLite
/// can), so both databases refuse it alike, before it reaches either.
pub fn storable(text: &str) -> bool {
    !text.contains('\0')
}

/// Strings over [`MAX_STRING_BYTES`] or holding NUL, wherever they are in
/// `instance`.
fn unstorable_strings(instance: &Value, at: &str, into: &mut Vec<FieldError>) {
    let item = || if at.is_empty() { "body" } else { at };
    match instance {
        Value::String(text) if text.len() > MAX_STRING_BYTES => into.push(FieldError::new(
            item(),
            format!("must be at most {MAX_STRING_BYTES} bytes"),
        )),
        Value::String(text) if !storable(text) => into.push(FieldError::new(item(), NUL_RULE)),
        Value::Object(fields) => {
            for (name, value) in fields {
                unstorable_strings(value, &join(at, name), into);
            }
        }
        Value::Array(items) => {
            for (index, value) in items.iter().enumerate() {
                unstorable_strings(value, &format!("{at}[{index}]"), into);
            }
        }
        _ => {}
    }
}

/// `/a/0/b` becomes `a[0].b`; the root is the empty string.
fn field_path(pointer: &str) -> String {
    let mut path = String::new();
    for segment in pointer.split('/').filter(|segment| !segment.is_empty()) {
        let segment = segment.replace("~1", "/").replace("~0", "~");
        if segment.bytes().all(|byte| byte.is_ascii_digit()) {
            path.push_str(&format!("[{segment}]"));
        } else {
            if !path.is_empty() {
                path.push('.');
            }
            path.push_str(&segment);
        }
    }
    path
}

fn join(parent: &str, field: &str) -> String {
    if parent.is_empty() {
        field.to_owned()
    } else {
        format!("{parent}.{field}")
    }
}

fn describe(kind: &ValidationErrorKind) -> String {
    match kind {
        ValidationErrorKind::Type { kind } => match kind {
            TypeKind::Single(expected) => format!("must be of type {expected}"),
            TypeKind::Multiple(expected) => format!(
                "must be one of the types {}",
                expected
                    .iter()
                    .map(|t| t.to_string())
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        },
        ValidationErrorKind::MinLength { limit } if *limit == 1 => "must not be empty".to_owned(),
        ValidationErrorKind::MinLength { limit } => format!("must be at least {limit} characters"),
        ValidationErrorKind::MaxLength { limit } => format!("must be at most {limit} characters"),
        ValidationErrorKind::Minimum { limit } => format!("must be at least {limit}"),
        ValidationErrorKind::Maximum { limit } => format!("must be at most {limit}"),
        ValidationErrorKind::ExclusiveMinimum { limit } => format!("must be greater than {limit}"),
        ValidationErrorKind::ExclusiveMaximum { limit } => format!("must be less than {limit}"),
        ValidationErrorKind::Enum { options } => format!("must be one of {options}"),
        ValidationErrorKind::Format { format } => format!("must be a valid {format}"),
        // `\S` is how the spec says "not blank".
        ValidationErrorKind::Pattern { pattern } if pattern == r"\S" => {
            "must contain a character that is not a space".to_owned()
        }
        ValidationErrorKind::Pattern { pattern } => format!("must match the pattern {pattern}"),
        ValidationErrorKind::MinItems { limit } => format!("must have at least {limit} items"),
        ValidationErrorKind::MaxItems { limit } => format!("must have at most {limit} items"),
        ValidationErrorKind::UniqueItems => "must not list an item twice".to_owned(),
        ValidationErrorKind::AnyOf { .. } | ValidationErrorKind::OneOfNotValid { .. } => {
            "is not in an accepted form (see the schema)".to_owned()
        }
        other => format!("is invalid ({})", other.keyword()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn errors_of(schema: Value, instance: Value) -> Vec<(String, String)> {
        let checker = compile(schema).expect("schema compiles");
        checker
            .field_errors(&instance)
            .into_iter()
            .map(|error| (error.item_id, error.message))
            .collect()
    }

    #[test]
    fn uuids_long_strings_and_alternatives_get_precise_messages() {
        let schema = json!({"type": "object", "properties": {
            "id": {"type": "string", "format": "uuid"},
            "note": {"type": "string"},
            "count": {"x-accepts": "a whole number from 0 to 9", "oneOf": [{"type": "integer", "maximum": 9}, {"type": "string", "pattern": "^[0-9]$"}]}
        }});
        let errors = errors_of(
            schema,
            json!({"id": "zz", "note": "é".repeat(9000), "count": 10}),
        );
        assert_eq!(
            errors,
            [
                ("note".to_owned(), "must be at most 16384 bytes".to_owned()),
                ("id".to_owned(), "must match the pattern ^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$".to_owned()),
                ("count".to_owned(), "must be a whole number from 0 to 9".to_owned()),
            ]
        );
    }

    #[test]
    fn every_problem_is_reported_with_its_field() {
        let schema = json!({
            "type": "object",
            "additionalProperties": false,
            "required": ["accessToken", "realmId"],
            "properties": {
                "accessToken": {"type": "string", "minLength": 1},
                "realmId": {"type": "string"},
                "expiresIn": {"type": "integer", "minimum": 1}
            }
        });
        let mut errors = errors_of(
            schema,
            json!({"acessToken": "secret-token-value", "expiresIn": 0}),
        );
        errors.sort();
        assert_eq!(
            errors,
            [
                ("accessToken".to_owned(), "is required".to_owned()),
                (
                    "acessToken".to_owned(),
                    "is not a field of this body (check the spelling against the schema)"
                        .to_owned()
                ),
                ("expiresIn".to_owned(), "must be at least 1".to_owned()),
                ("realmId".to_owned(), "is required".to_owned()),
            ]
        );
    }

    #[test]
    fn messages_never_repeat_the_submitted_value() {
        let schema = json!({"type": "object", "properties": {"token": {"type": "integer"}, "code": {"enum": ["a"]}}});
        let errors = errors_of(
            schema,
            json!({"token": "s3cr3t-value", "code": "s3cr3t-value"}),
        );
        assert_eq!(errors.len(), 2);
        for (_, message) in errors {
            assert!(!message.contains("s3cr3t"), "{message}");
        }
    }

    #[test]
    fn nested_paths_read_like_field_access() {
        assert_eq!(
            field_path("/lineItems/0/unit~1price"),
            "lineItems[0].unit/price"
        );
        assert_eq!(field_path(""), "");
    }
}
