//! The contract: the OpenAPI document served at `/openapi.yaml` and
//! `/openapi.json`, written to the repository's `openapi.yaml` by the
//! `codegen` crate, and used to validate request bodies. All of them come
//! from [`document`], so they cannot differ.
//!
//! On top of what poem-openapi produces, two rules are applied here:
//! - request bodies are closed objects (`additionalProperties: false`), so a
//!   typo in a field name is an error rather than a silently ignored field;
//! - media types are keyed `application/json` (poem-openapi writes
//!   `application/json; charset=utf-8`, which client generators such as
//!   progenitor do not recognise as JSON).

use std::collections::BTreeSet;
use std::sync::OnceLock;

use anyhow::Context;
use serde_json::{Map, Value, json};

use crate::api;

const SCHEMA_REF_PREFIX: &str = "#/components/schemas/";

/// The OpenAPI document as JSON.
pub fn document() -> anyhow::Result<Value> {
    let mut document: Value =
        serde_json::from_str(&api::service().spec()).context("reading poem-openapi's document")?;
    close_request_bodies(&mut document);
    normalize_media_types(&mut document);
    Ok(document)
}

/// The document, built once per process.
pub fn shared_document() -> anyhow::Result<&'static Value> {
    static DOCUMENT: OnceLock<Value> = OnceLock::new();
    if let Some(document) = DOCUMENT.get() {
        return Ok(document);
    }
    let built = document()?;
    Ok(DOCUMENT.get_or_init(|| built))
}

/// The document as YAML, exactly as committed in `openapi.yaml`.
pub fn yaml() -> anyhow::Result<String> {
    serde_yaml::to_string(&document()?).context("writing the OpenAPI document as YAML")
}

/// The document as pretty-printed JSON.
pub fn json() -> anyhow::Result<String> {
    serde_json::to_string_pretty(&document()?).context("writing the OpenAPI document as JSON")
}

/// A standalone JSON Schema (draft 7) for the component `name`, with the
/// OpenAPI 3.0 `nullable` keyword rewritten into JSON Schema terms.
pub fn json_schema_for(document: &Value, name: &str) -> anyhow::Result<Value> {
    let mut components = document
        .pointer("/components/schemas")
        .cloned()
        .context("the document has no schemas")?;
    anyhow::ensure!(components.get(name).is_some(), "no schema named {name}");
    rewrite_nullable(&mut components);
    Ok(json!({
        "$ref": format!("{SCHEMA_REF_PREFIX}{name}"),
        "components": { "schemas": components },
    }))
}

const JSON_MEDIA_TYPE: &str = "application/json";

/// Renames every `content` key whose essence is `application/json` to
/// exactly that.
fn normalize_media_types(value: &mut Value) {
    match value {
        Value::Object(object) => {
            if let Some(Value::Object(content)) = object.get_mut("content") {
                let renamed = std::mem::take(content)
                    .into_iter()
                    .map(|(media_type, schema)| {
                        let essence = media_type.split(';').next().unwrap_or("").trim();
                        if essence == JSON_MEDIA_TYPE {
                            (JSON_MEDIA_TYPE.to_owned(), schema)
                        } else {
                            (media_type, schema)
                        }
                    })
                    .collect();
                *content = renamed;
            }
            object.values_mut().for_each(normalize_media_types);
        }
        Value::Array(items) => items.iter_mut().for_each(normalize_media_types),
        _ => {}
    }
}

/// Marks every object schema reachable from a request body as closed.
fn close_request_bodies(document: &mut Value) {
    let mut pending: Vec<String> = Vec::new();
    if let Some(paths) = document.get("paths").and_then(Value::as_object) {
        for operation in paths
            .values()
            .filter_map(Value::as_object)
            .flat_map(Map::values)
        {
            if let Some(content) = operation
                .pointer("/requestBody/content")
                .and_then(Value::as_object)
            {
                for media in content.values() {
                    collect_refs(media, &mut pending);
                }
            }
        }
    }
    let mut closed = BTreeSet::new();
    while let Some(name) = pending.pop() {
        if !closed.insert(name.clone()) {
            continue;
        }
        let Some(schema) = document.pointer_mut(&format!("/components/schemas/{name}")) else {
            continue;
        };
        collect_refs(schema, &mut pending);
        if let Some(object) = schema.as_object_mut()
            && object.get("type").and_then(Value::as_str) == Some("object")
        {
            object
                .entry("additionalProperties")
                .or_insert(Value::Bool(false));
        }
    }
}

fn collect_refs(value: &Value, into: &mut Vec<String>) {
    match value {
        Value::Object(object) => {
            if let Some(name) = object
                .get("$ref")
                .and_then(Value::as_str)
                .and_then(|reference| reference.strip_prefix(SCHEMA_REF_PREFIX))
            {
                into.push(name.to_owned());
            }
            object.values().for_each(|child| collect_refs(child, into));
        }
        Value::Array(items) => items.iter().for_each(|child| collect_refs(child, into)),
        _ => {}
    }
}

/// `{"type": T, "nullable": true}` becomes `{"type": [T, "null"]}`; a
/// nullable schema without a type becomes `anyOf: [null, schema]`.
fn rewrite_nullable(value: &mut Value) {
    match value {
        Value::Object(object) => {
            object.values_mut().for_each(rewrite_nullable);
            if object.remove("nullable") == Some(Value::Bool(true)) {
                match object.get("type").cloned() {
                    Some(Value::String(ty)) => {
                        object.insert("type".to_owned(), json!([ty, "null"]));
                    }
                    _ => {
                        let inner = Value::Object(std::mem::take(object));
                        object.insert("anyOf".to_owned(), json!([{"type": "null"}, inner]));
                    }
                }
            }
        }
        Value::Array(items) => items.iter_mut().for_each(rewrite_nullable),
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nullable_becomes_a_null_type() {
        let mut schema = json!({"properties": {
            "a": {"type": "string", "nullable": true},
            "b": {"allOf": [{"$ref": "#/components/schemas/X"}], "nullable": true}
        }});
        rewrite_nullable(&mut schema);
        assert_eq!(
            schema["properties"]["a"],
            json!({"type": ["string", "null"]})
        );
        assert_eq!(
            schema["properties"]["b"],
            json!({"anyOf": [{"type": "null"}, {"allOf": [{"$ref": "#/components/schemas/X"}]}]})
        );
    }

    #[test]
    fn request_bodies_are_closed_and_responses_are_not() -> anyhow::Result<()> {
        let document = document()?;
        let schemas = &document["components"]["schemas"];
        assert_eq!(
            schemas["CompanyInput"]["additionalProperties"],
            json!(false)
        );
        assert!(schemas["Company"].get("additionalProperties").is_none());
        Ok(())
    }
}
