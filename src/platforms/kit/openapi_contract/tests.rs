//! The module's own tests: the bodies of small OpenAPI 3.0, OpenAPI 3.1
//! and Swagger 2.0 documents, and [`hold`] passing a reader that takes what
//! the document allows and failing one that does not.

use super::document::Version;
use super::*;

fn document(version: Version, root: Value) -> Document {
    Document {
        file: "inline".to_owned(),
        root,
        version,
    }
}

fn openapi30() -> Document {
    document(
        Version::OpenApi30,
        json!({
            "openapi": "3.0.0",
            "paths": {"/things": {"get": {"responses": {"200": {"content": {"application/json": {
                "example": {"things": []},
                "schema": {"type": "object", "properties": {
                    "things": {"type": "array", "items": {"$ref": "#/components/schemas/Thing"}}
                }}
            }}}}}}},
            "components": {"schemas": {
                "Thing": {"type": "object", "required": ["id"], "properties": {
                    "id": {"type": "string", "example": "th_1"},
                    "when": {"type": "string", "format": "date-time", "nullable": true},
                    "status": {"type": "string", "enum": ["open", "paid", "void"]},
                    "owner": {"nullable": true, "anyOf": [
                        {"type": "string"}, {"$ref": "#/components/schemas/Owner"}
                    ]},
                    "parent": {"$ref": "#/components/schemas/Thing"}
                }},
                "Owner": {"type": "object", "required": ["name"], "properties": {
                    "name": {"type": "string"}
                }}
            }}
        }),
    )
}

#[test]
fn full_nulls_minimal_and_enum_bodies_of_an_openapi_30_answer() {
    let document = openapi30();
    let answer = document.answer("GET", "/things");
    let bodies = answer.bodies();
    assert_eq!(
        bodies.examples,
        [("example".to_owned(), json!({"things": []}))]
    );
    // The expanded owner first, then the bare id; the recursive parent left out.
    let thing = &bodies.full[0]["things"][0];
    assert_eq!(thing["id"], "th_1");
    assert_eq!(thing["when"], "2026-10-01T12:00:00Z");
    assert_eq!(thing["owner"], json!({"name": "text"}));
    assert!(thing.get("parent").is_none());
    assert_eq!(bodies.full[1]["things"][0]["owner"], "text");
    let nulled = &bodies.nulls[0]["things"][0];
    assert_eq!(
        (&nulled["when"], &nulled["owner"]),
        (&Value::Null, &Value::Null)
    );
    assert_eq!(bodies.minimal, json!({"things": [{"id": "th_1"}]}));
    let owner = &bodies.sparse["things"][0]["owner"];
    assert_eq!(owner, &json!({"name": "text"}));
    assert_eq!(bodies.bare, json!({}));
    let statuses: Vec<&Value> = bodies
        .enums
        .iter()
        .map(|b| &b["things"][0]["status"])
        .collect();
    assert_eq!(statuses, [&json!("open"), &json!("paid"), &json!("void")]);
    assert_eq!(bodies.unknown["things"][0]["status"], NEW_VALUE);
    assert_eq!(bodies.enum_at("things.0.status").1.len(), 3);
    // The validator holds the vendor's types: a nullable field null is
    // fine, a required one missing or a number for a string is not.
    assert!(
        answer
            .check(&json!({"things": [{"id": "a", "when": null}]}))
            .is_ok()
    );
    assert!(answer.check(&json!({"things": [{"when": null}]})).is_err());
    assert!(answer.check(&json!({"things": [{"id": 5}]})).is_err());
    assert!(
        answer
            .check(&json!({"things": [{"id": "a", "status": "new"}]}))
            .is_err()
    );
}

use super::super::records::{Each, Keyed};

/// A thing as a connector that takes what the document allows reads it.
#[derive(serde::Deserialize)]
#[allow(dead_code, reason = "read only to be deserialized")]
struct Thing {
    id: String,
    when: Option<String>,
    status: Option<String>,
}

/// A thing read with `when` required, which the document lets be null.
#[derive(serde::Deserialize)]
#[allow(dead_code, reason = "read only to be deserialized")]
struct Strict {
    id: String,
    when: String,
}

/// A thing read with `status` a closed Rust enum.
#[derive(serde::Deserialize)]
#[allow(dead_code, reason = "read only to be deserialized")]
struct Closed {
    id: String,
    status: Option<Status>,
}

#[derive(serde::Deserialize)]
#[serde(rename_all = "lowercase")]
enum Status {
    Open,
    Paid,
    Void,
}

impl Keyed for Thing {
    const ID: &'static str = "/id";
}

impl Keyed for Strict {
    const ID: &'static str = "/id";
}

impl Keyed for Closed {
    const ID: &'static str = "/id";
}

/// A page of things read as `T`.
fn things<T: serde::de::DeserializeOwned + Keyed>(text: &str) -> Result<Read<T>, String> {
    #[derive(serde::Deserialize)]
    #[serde(bound = "T: serde::de::DeserializeOwned")]
    struct Page<T> {
        #[serde(default = "Each::default")]
        things: Each<T>,
    }
    let page: Page<T> = serde_json::from_str(text).map_err(|e| e.to_string())?;
    Ok(page.things.read(|thing| Ok(Some(thing))))
}

const ID: Needed = Needed {
    place: "things.0.id",
    field: "id",
    why: "a thing is kept under its id",
};

#[test]
fn hold_passes_a_reader_that_takes_what_the_document_allows() {
    let document = openapi30();
    let answer = document.answer("GET", "/things");
    hold(&answer, &answer.bodies(), things::<Thing>, &[ID]);
}

#[test]
#[should_panic(expected = "nulls 0")]
fn hold_fails_a_reader_that_requires_what_the_document_lets_be_null() {
    let document = openapi30();
    let answer = document.answer("GET", "/things");
    hold(&answer, &answer.bodies(), things::<Strict>, &[ID]);
}

#[test]
#[should_panic(expected = "unknown enums")]
fn hold_fails_a_reader_whose_enum_refuses_a_new_value() {
    let document = openapi30();
    let answer = document.answer("GET", "/things");
    hold(&answer, &answer.bodies(), things::<Closed>, &[ID]);
}

#[test]
fn swagger_20_and_openapi_31_say_null_their_own_way() {
    let swagger = document(
        Version::Swagger2,
        json!({
            "swagger": "2.0",
            "paths": {"/t": {"get": {"responses": {"200": {
                "schema": {"$ref": "#/definitions/T"},
                "examples": {"application/json": {"a": "x"}}
            }}}}},
            "definitions": {"T": {"type": "object", "properties": {
                "a": {"type": "string", "x-nullable": true}
            }}}
        }),
    );
    let answer = swagger.answer("GET", "/t");
    let bodies = answer.bodies();
    assert_eq!(bodies.examples[0].1, json!({"a": "x"}));
    assert_eq!(bodies.nulls[0], json!({"a": null}));
    let modern = document(
        Version::OpenApi31,
        json!({
            "openapi": "3.1.0",
            "paths": {"/t": {"get": {"responses": {"200": {"content": {"application/hal+json": {
                "schema": {"type": "object", "properties": {
                    "a": {"type": ["string", "null"], "examples": ["vendor's"]}
                }}
            }}}}}}}
        }),
    );
    let bodies = modern.answer("GET", "/t").bodies();
    assert_eq!(bodies.full[0], json!({"a": "vendor's"}));
    assert_eq!(bodies.nulls[0], json!({"a": null}));
}
