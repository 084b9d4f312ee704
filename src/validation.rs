//! JSON Schema validation of request bodies, reported as one
//! [`FieldError`] per problem.
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

/// Compiles `schema` (JSON Schema draft 7, formats checked).
pub fn compile(schema: &Value) -> anyhow::Result<Validator> {
    jsonschema::options()
        .with_draft(Draft::Draft7)
        .should_validate_formats(true)
        .build(schema)
        .map_err(|error| anyhow::anyhow!("invalid JSON Schema: {error}"))
}

/// The validator cached under `name`, compiled from `schema()` on first use.
pub fn cached(
    name: &str,
    schema: impl FnOnce() -> anyhow::Result<Value>,
) -> anyhow::Result<Arc<Validator>> {
    static VALIDATORS: OnceLock<RwLock<HashMap<String, Arc<Validator>>>> = OnceLock::new();
    let validators = VALIDATORS.get_or_init(Default::default);
    if let Some(found) = validators
        .read()
        .ok()
        .and_then(|map| map.get(name).cloned())
    {
        return Ok(found);
    }
    let compiled = Arc::new(compile(&schema()?)?);
    if let Ok(mut map) = validators.write() {
        map.insert(name.to_owned(), compiled.clone());
    }
    Ok(compiled)
}

/// The problems `instance` has against `validator`: one item per field at
/// fault (its first problem), every field reported.
pub fn field_errors(validator: &Validator, instance: &Value) -> Vec<FieldError> {
    let mut errors: Vec<FieldError> = Vec::new();
    for error in validator.iter_errors(instance) {
        let at = field_path(error.instance_path().as_str());
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
            kind => errors.push(FieldError::new(
                if at.is_empty() { "body".to_owned() } else { at },
                describe(kind),
            )),
        }
    }
    let mut reported: Vec<String> = Vec::new();
    errors.retain(|error| {
        let first = !reported.contains(&error.item_id);
        reported.push(error.item_id.clone());
        first
    });
    errors
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
        let validator = compile(&schema).expect("schema compiles");
        field_errors(&validator, &instance)
            .into_iter()
            .map(|error| (error.item_id, error.message))
            .collect()
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
