//! Bodies held to the vendor's schema with `jsonschema`: the document
//! rewritten as JSON Schema (OpenAPI 3.0's and Swagger 2.0's nullable flags
//! as a `"null"` type, `oneOf` read as `anyOf`, string enums left out for
//! the unknown-enum body), an answer's validator, and its errors.

use jsonschema::{Draft, Validator};
use serde_json::{Value, json};

use super::document::Version;
use super::{Answer, Bodies, Document};

impl Document {
    /// The document as JSON Schema for `jsonschema`: OpenAPI 3.0's and
    /// Swagger 2.0's `nullable` written as a `"null"` type (3.1 is JSON
    /// Schema already), and, `without_enums`, no string enum.
    fn as_json_schema(&self, without_enums: bool) -> Value {
        let mut root = self.root.clone();
        rewrite(&mut root, self.version, without_enums);
        root
    }
}

/// Rewrites every schema under `value` as [`Document::as_json_schema`] says.
fn rewrite(value: &mut Value, version: Version, without_enums: bool) {
    match value {
        Value::Object(object) => {
            object
                .values_mut()
                .for_each(|v| rewrite(v, version, without_enums));
            // Vendors write `oneOf` of shapes that overlap (BigCommerce's
            // consignments: every object matches both); a body takes one.
            if let Some(alternatives) = object.remove("oneOf") {
                object.insert("anyOf".to_owned(), alternatives);
            }
            if without_enums
                && object
                    .get("enum")
                    .and_then(Value::as_array)
                    .is_some_and(|values| values.iter().any(Value::is_string))
            {
                object.remove("enum");
            }
            let flag = match version {
                Version::Swagger2 => "x-nullable",
                Version::OpenApi30 => "nullable",
                Version::OpenApi31 => return,
            };
            if object.get(flag) != Some(&json!(true)) {
                return;
            }
            object.remove(flag);
            match object.get("type").cloned() {
                Some(Value::String(kind)) if !object.contains_key("$ref") => {
                    object.insert("type".to_owned(), json!([kind, "null"]));
                    if let Some(Value::Array(values)) = object.get_mut("enum") {
                        values.push(Value::Null);
                    }
                }
                _ if object.contains_key("$ref")
                    || ["allOf", "anyOf", "oneOf"]
                        .iter()
                        .any(|k| object.contains_key(*k)) =>
                {
                    let rest = Value::Object(std::mem::take(object));
                    object.insert("anyOf".to_owned(), json!([{"type": "null"}, rest]));
                }
                _ => {}
            }
        }
        Value::Array(items) => items
            .iter_mut()
            .for_each(|v| rewrite(v, version, without_enums)),
        _ => {}
    }
}

impl Answer<'_> {
    /// Every generated body valid against the schema (the unknown-enum one
    /// but for its enums), or a panic naming the body and what is wrong.
    pub(super) fn check_generated(&self, bodies: &Bodies) {
        let checker = self.validator(false);
        let generated = [&bodies.full, &bodies.nulls, &bodies.enums]
            .into_iter()
            .flatten()
            .chain([&bodies.minimal, &bodies.sparse, &bodies.bare]);
        for body in generated {
            if let Err(errors) = errors(&checker, body) {
                panic!(
                    "{}: a generated body is not the vendor's:\n{errors}\n{body:#}",
                    self.what
                );
            }
        }
        if let Err(errors) = errors(&self.validator(true), &bodies.unknown) {
            panic!(
                "{}: the unknown-enum body breaks more than enums:\n{errors}",
                self.what
            );
        }
    }

    /// Whether `body` is valid against the answer's schema, or the
    /// validator's words.
    pub(crate) fn check(&self, body: &Value) -> Result<(), String> {
        errors(&self.validator(false), body)
    }

    /// The answer's schema as a validator (formats checked), its `$ref`s
    /// resolved in the whole document.
    pub(super) fn validator(&self, without_enums: bool) -> Validator {
        let mut root = self.document.as_json_schema(without_enums);
        let mut schema = self.schema.clone();
        rewrite(&mut schema, self.document.version, without_enums);
        let draft = match self.document.version {
            Version::OpenApi31 => Draft::Draft202012,
            Version::Swagger2 | Version::OpenApi30 => Draft::Draft4,
        };
        // The answer's schema at the root, the document beside it for its
        // `$ref`s (`#/components/...`, `#/definitions/...`).
        let object = root.as_object_mut().expect("a document is an object");
        object.retain(|key, _| key == "components" || key == "definitions");
        object.insert("allOf".to_owned(), json!([schema]));
        jsonschema::options()
            .with_draft(draft)
            .should_validate_formats(true)
            .build(&root)
            .unwrap_or_else(|error| panic!("{}: the schema does not compile: {error}", self.what))
    }
}

/// The validator's errors for `body`, one a line with where they are.
pub(super) fn errors(validator: &Validator, body: &Value) -> Result<(), String> {
    let errors: Vec<String> = validator
        .iter_errors(body)
        .map(|error| format!("{}: {error}", error.instance_path()))
        .collect();
    if errors.is_empty() {
        Ok(())
    } else {
        Err(errors.join("\n"))
    }
}
