//! A vendored OpenAPI document read in its dialect (Swagger 2.0, OpenAPI 3.0
//! or 3.1): an operation's success answer and its documented examples,
//! `$ref`s followed, and whether a schema lets a value be `null`.

use std::path::Path;

use serde_json::{Value, json};

use super::Answer;

/// Which OpenAPI a document is written in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Version {
    Swagger2,
    OpenApi30,
    OpenApi31,
}

/// A vendored OpenAPI document.
pub(crate) struct Document {
    pub(super) file: String,
    pub(super) root: Value,
    pub(super) version: Version,
}

impl Document {
    /// The vendored document `file` (under `tests/contracts/`).
    pub(crate) fn load(file: &str) -> Document {
        let path = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/contracts")
            .join(file);
        let text = std::fs::read_to_string(&path)
            .unwrap_or_else(|error| panic!("{}: {error}", path.display()));
        let root: Value = serde_json::from_str(&text)
            .unwrap_or_else(|error| panic!("{}: {error}", path.display()));
        let version = match (root["swagger"].as_str(), root["openapi"].as_str()) {
            (Some("2.0"), _) => Version::Swagger2,
            (_, Some(version)) if version.starts_with("3.0") => Version::OpenApi30,
            (_, Some(version)) if version.starts_with("3.1") => Version::OpenApi31,
            other => panic!("{file}: not an OpenAPI document I know ({other:?})"),
        };
        Document {
            file: file.to_owned(),
            root,
            version,
        }
    }

    /// The success answer (200, else 201, else the first 2xx) of `method`
    /// `path`, as the document names them (`GET`, `/Invoices`).
    pub(crate) fn answer(&self, method: &str, path: &str) -> Answer<'_> {
        let what = format!("{}: {method} {path}", self.file);
        let operation = &self.root["paths"][path][method.to_ascii_lowercase()];
        let responses = operation["responses"]
            .as_object()
            .unwrap_or_else(|| panic!("{what} is not in the document"));
        let code = ["200", "201"]
            .into_iter()
            .find(|code| responses.contains_key(*code))
            .or_else(|| {
                responses
                    .keys()
                    .map(String::as_str)
                    .find(|code| code.starts_with('2'))
            })
            .unwrap_or_else(|| panic!("{what} has no success answer"));
        let response = self.resolve(&responses[code]).1;
        let mut examples = Vec::new();
        let schema = if self.version == Version::Swagger2 {
            if let Some(documented) = response["examples"].as_object() {
                if documented.keys().any(|key| key.contains('/')) {
                    for (media, body) in documented {
                        examples.push((format!("examples.{media}"), body.clone()));
                    }
                } else {
                    // Keyed by the body's own fields, not by a media type
                    // (Amazon's Sellers model): the whole object is the body.
                    examples.push(("examples".to_owned(), response["examples"].clone()));
                }
            }
            response["schema"].clone()
        } else {
            let content = response["content"]
                .as_object()
                .unwrap_or_else(|| panic!("{what} {code} has no content"));
            let media = content
                .get("application/json")
                .or_else(|| {
                    content
                        .iter()
                        .find(|(name, _)| name.ends_with("json"))
                        .map(|(_, media)| media)
                })
                .unwrap_or_else(|| panic!("{what} {code} has no JSON content"));
            if !media["example"].is_null() {
                examples.push(("example".to_owned(), media["example"].clone()));
            }
            for (name, example) in media["examples"].as_object().into_iter().flatten() {
                let example = self.resolve(example).1;
                examples.push((format!("examples.{name}"), example["value"].clone()));
            }
            media["schema"].clone()
        };
        // Amazon documents its sandbox's answers beside the response.
        for (kind, cases) in response["x-amzn-api-sandbox"]
            .as_object()
            .into_iter()
            .flatten()
        {
            for (index, case) in cases.as_array().into_iter().flatten().enumerate() {
                examples.push((format!("sandbox.{kind}[{index}]"), case["response"].clone()));
            }
        }
        let (_, own) = self.resolve(&schema);
        if own["example"].is_object() {
            examples.push(("example of the schema".to_owned(), own["example"].clone()));
        }
        assert!(schema.is_object(), "{what} {code} has no schema");
        Answer {
            document: self,
            what,
            schema,
            examples,
        }
    }

    /// `schema` with its `$ref` followed (to the end of a chain), and the
    /// name of the schema it refers to.
    pub(super) fn resolve<'a>(&'a self, mut schema: &'a Value) -> (Option<&'a str>, &'a Value) {
        let mut name = None;
        while let Some(reference) = schema["$ref"].as_str() {
            let pointer = reference
                .strip_prefix('#')
                .unwrap_or_else(|| panic!("{}: {reference} is not local", self.file));
            schema = self
                .root
                .pointer(pointer)
                .unwrap_or_else(|| panic!("{}: {reference} is not in the document", self.file));
            name = Some(reference);
        }
        (name, schema)
    }

    /// Whether `schema` lets the value be `null`, in the document's dialect.
    pub(super) fn nullable(&self, schema: &Value) -> bool {
        match self.version {
            Version::Swagger2 => schema["x-nullable"] == json!(true),
            Version::OpenApi30 => schema["nullable"] == json!(true),
            // An enum that does not list `null` keeps it out, whatever the type says.
            Version::OpenApi31
                if schema["enum"]
                    .as_array()
                    .is_some_and(|v| !v.contains(&Value::Null)) =>
            {
                false
            }
            Version::OpenApi31 => {
                let null = json!("null");
                schema["type"] == null
                    || schema["type"].as_array().is_some_and(|t| t.contains(&null))
                    || ["anyOf", "oneOf"].iter().any(|key| {
                        schema[*key]
                            .as_array()
                            .is_some_and(|all| all.iter().any(|one| one["type"] == null))
                    })
            }
        }
    }
}
