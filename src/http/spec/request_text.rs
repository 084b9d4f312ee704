//! NUL-free patterns on every free-text string a request carries, so the
//! contract says what the server enforces.

use serde_json::{Value, json};

use super::SCHEMA_REF_PREFIX;

/// What every free-text value a request carries must match: no NUL
/// character, which the server refuses (`validation::storable`).
pub const NO_NUL_PATTERN: &str = "^[^\\u0000]*$";

/// [`NO_NUL_PATTERN`] for a text that must also hold something other than
/// spaces (what `\S` alone says, which lets NUL through).
pub const NO_NUL_NOT_BLANK_PATTERN: &str = "^[^\\u0000]*[^\\s\\u0000][^\\u0000]*$";

/// Every string a request can carry (query parameters, and the body schemas with
/// everything they refer to) that no enum, pattern or format constrains
/// already gets [`NO_NUL_PATTERN`], so the contract says what the server
/// enforces and generators (schemathesis) do not send what it refuses.
pub(super) fn forbid_nul(document: &mut Value) {
    let mut pending: Vec<String> = Vec::new();
    if let Some(paths) = document.get_mut("paths").and_then(Value::as_object_mut) {
        for operation in paths
            .values_mut()
            .filter_map(Value::as_object_mut)
            .flat_map(|item| item.values_mut())
        {
            if let Some(parameters) = operation
                .get_mut("parameters")
                .and_then(Value::as_array_mut)
            {
                // A path parameter holding NUL names nothing: it answers 404.
                for parameter in parameters
                    .iter_mut()
                    .filter(|parameter| parameter["in"] == "query")
                {
                    if let Some(schema) = parameter.get_mut("schema") {
                        constrain_text(schema, &mut pending);
                    }
                }
            }
            if let Some(contents) = operation
                .pointer_mut("/requestBody/content")
                .and_then(Value::as_object_mut)
            {
                for schema in contents
                    .values_mut()
                    .filter_map(|content| content.get_mut("schema"))
                {
                    constrain_text(schema, &mut pending);
                }
            }
        }
    }
    let mut done: Vec<String> = Vec::new();
    while let Some(name) = pending.pop() {
        if done.contains(&name) {
            continue;
        }
        done.push(name.clone());
        if let Some(schema) = document.pointer_mut(&format!("/components/schemas/{name}")) {
            constrain_text(schema, &mut pending);
        }
    }
}

/// Adds [`NO_NUL_PATTERN`] to the unconstrained strings of `schema` and
/// below, and collects the component names it refers to.
fn constrain_text(schema: &mut Value, refers_to: &mut Vec<String>) {
    match schema {
        Value::Object(fields) => {
            if let Some(name) = fields
                .get("$ref")
                .and_then(Value::as_str)
                .and_then(|reference| reference.strip_prefix(SCHEMA_REF_PREFIX))
            {
                refers_to.push(name.to_owned());
            }
            let is_string = match fields.get("type") {
                Some(Value::String(kind)) => kind == "string",
                Some(Value::Array(kinds)) => kinds.iter().any(|kind| kind == "string"),
                _ => false,
            };
            let constrained = ["enum", "format", "const"]
                .iter()
                .any(|key| fields.contains_key(*key));
            if is_string && !constrained {
                match fields.get("pattern").and_then(Value::as_str) {
                    None => {
                        fields.insert("pattern".to_owned(), json!(NO_NUL_PATTERN));
                    }
                    Some("\\S") => {
                        fields.insert("pattern".to_owned(), json!(NO_NUL_NOT_BLANK_PATTERN));
                    }
                    // Every other pattern is anchored over a class without NUL.
                    Some(_) => {}
                }
            }
            for (key, value) in fields.iter_mut() {
                // Examples and defaults are values, not schemas.
                if !matches!(
                    key.as_str(),
                    "example" | "examples" | "default" | "enum" | "const"
                ) {
                    constrain_text(value, refers_to);
                }
            }
        }
        Value::Array(items) => {
            for item in items {
                constrain_text(item, refers_to);
            }
        }
        _ => {}
    }
}
