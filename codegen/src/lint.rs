//! House rules for the spec, beyond what OpenAPI itself requires.

use serde_json::{Map, Value};

const METHODS: &[&str] = &[
    "get", "put", "post", "delete", "patch", "head", "options", "trace",
];

/// Every rule the spec breaks, one sentence each; empty when it is clean.
///
/// - every operation: a camelCase `operationId`, a summary, exactly one tag;
/// - every response and every schema property: a description (a property
///   that is only a `$ref` takes the referenced schema's, which must have one);
/// - paged lists: `page`/`pageSize` operations answer a `Paged_<T>` schema,
///   and every `Paged_<T>` has the one envelope;
/// - statuses: authenticated operations declare 401 and 500; operations with
///   a body declare 400, 413 and 415; with path parameters 400 and 404; with
///   query parameters 400.
pub fn lint(document: &Value) -> Vec<String> {
    let mut problems = Vec::new();
    let empty = Map::new();
    let paths = document
        .get("paths")
        .and_then(Value::as_object)
        .unwrap_or(&empty);
    for (path, item) in paths {
        let Some(item) = item.as_object() else {
            continue;
        };
        for (method, operation) in item.iter().filter(|(m, _)| METHODS.contains(&m.as_str())) {
            let at = format!("{} {path}", method.to_uppercase());
            lint_operation(&at, operation, &mut problems);
        }
    }
    let schemas = document
        .pointer("/components/schemas")
        .and_then(Value::as_object)
        .unwrap_or(&empty);
    for (name, schema) in schemas {
        lint_schema(name, schema, schemas, &mut problems);
    }
    problems
}

fn lint_operation(at: &str, operation: &Value, problems: &mut Vec<String>) {
    match operation.get("operationId").and_then(Value::as_str) {
        Some(id) if is_camel_case(id) => {}
        Some(id) => problems.push(format!("{at}: operationId `{id}` is not camelCase")),
        None => problems.push(format!("{at}: no operationId")),
    }
    if operation
        .get("summary")
        .and_then(Value::as_str)
        .is_none_or(str::is_empty)
    {
        problems.push(format!("{at}: no summary"));
    }
    let tags = operation
        .get("tags")
        .and_then(Value::as_array)
        .map_or(0, Vec::len);
    if tags != 1 {
        problems.push(format!("{at}: {tags} tags, expected exactly one"));
    }

    let responses = operation.get("responses").and_then(Value::as_object);
    let declared = |status: &str| responses.is_some_and(|r| r.contains_key(status));
    for (status, response) in responses.into_iter().flatten() {
        if response
            .get("description")
            .and_then(Value::as_str)
            .is_none_or(str::is_empty)
        {
            problems.push(format!("{at}: response {status} has no description"));
        }
    }

    let params = operation.get("parameters").and_then(Value::as_array);
    let params_in = |location: &'static str| {
        params
            .into_iter()
            .flatten()
            .filter(move |p| p.get("in").and_then(Value::as_str) == Some(location))
    };
    let mut require = |status: &str, why: &str| {
        if !declared(status) {
            problems.push(format!("{at}: does not declare {status} ({why})"));
        }
    };
    let authenticated = operation
        .get("security")
        .and_then(Value::as_array)
        .is_some_and(|s| !s.is_empty());
    if authenticated {
        require("401", "it needs an API key");
        require("500", "every operation can fail internally");
    }
    if operation.get("requestBody").is_some() {
        require("400", "it takes a JSON body");
        require("413", "it takes a JSON body");
        require("415", "it takes a JSON body");
    }
    if params_in("path").next().is_some() {
        require("400", "it has path parameters");
        require("404", "it has path parameters");
    }
    if params_in("query").next().is_some() {
        require("400", "it has query parameters");
    }

    let paged_params = params_in("query")
        .filter_map(|p| p.get("name").and_then(Value::as_str))
        .filter(|name| matches!(*name, "page" | "pageSize"))
        .count();
    if paged_params > 0 {
        let success = responses
            .and_then(|r| r.get("200"))
            .and_then(|r| r.pointer("/content/application~1json/schema/$ref"))
            .and_then(Value::as_str)
            .unwrap_or("");
        if paged_params != 2 || !success.starts_with("#/components/schemas/Paged_") {
            problems.push(format!(
                "{at}: a paged list must take page and pageSize and answer a Paged_<T> schema"
            ));
        }
    }
}

fn lint_schema(
    name: &str,
    schema: &Value,
    schemas: &Map<String, Value>,
    problems: &mut Vec<String>,
) {
    let described = |definition: &Value| {
        definition
            .get("description")
            .and_then(Value::as_str)
            .is_some_and(|text| !text.is_empty())
    };
    let properties = schema.get("properties").and_then(Value::as_object);
    for (property, definition) in properties.into_iter().flatten() {
        // OpenAPI 3.0 ignores keywords beside `$ref`: a plain reference is
        // described by the schema it names.
        let definition = definition
            .get("$ref")
            .and_then(Value::as_str)
            .and_then(|reference| reference.strip_prefix("#/components/schemas/"))
            .and_then(|target| schemas.get(target))
            .unwrap_or(definition);
        if !described(definition) {
            problems.push(format!(
                "schema {name}: property `{property}` has no description"
            ));
        }
    }
    let is_envelope = properties.is_some_and(|p| p.contains_key("results"));
    if name.starts_with("Paged") || is_envelope {
        let expected = [
            "results",
            "pageNumber",
            "pageSize",
            "totalResults",
            "_links",
        ];
        let keys: Vec<&str> = properties
            .into_iter()
            .flatten()
            .map(|(k, _)| k.as_str())
            .collect();
        if !name.starts_with("Paged_") || keys != expected {
            problems.push(format!(
                "schema {name}: paged lists use the one Paged_<T> envelope {expected:?}, found {keys:?}"
            ));
        }
    }
}

fn is_camel_case(id: &str) -> bool {
    let mut chars = id.chars();
    chars.next().is_some_and(|first| first.is_ascii_lowercase())
        && chars.all(|c| c.is_ascii_alphanumeric())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_clean_operation_passes() {
        let document = json!({"paths": {"/things/{thingId}": {"get": {
            "operationId": "getThing", "summary": "Get a thing", "tags": ["Things"],
            "security": [{"apiKey": []}],
            "parameters": [{"name": "thingId", "in": "path"}],
            "responses": {
                "200": {"description": "ok"}, "400": {"description": "bad"},
                "401": {"description": "who"}, "404": {"description": "none"},
                "500": {"description": "oops"}
            }
        }}}});
        assert_eq!(lint(&document), Vec::<String>::new());
    }

    #[test]
    fn each_broken_rule_is_reported() {
        let document = json!({
            "paths": {"/things": {"post": {
                "operationId": "CreateThing", "tags": ["A", "B"],
                "security": [{"apiKey": []}],
                "requestBody": {},
                "parameters": [{"name": "page", "in": "query"}],
                "responses": {"201": {"description": ""}}
            }}},
            "components": {"schemas": {
                "Thing": {"properties": {"id": {"type": "string"}}},
                "ThingPage": {"properties": {"results": {"description": "r"}}}
            }}
        });
        let problems = lint(&document);
        for expected in [
            "operationId `CreateThing` is not camelCase",
            "no summary",
            "2 tags",
            "response 201 has no description",
            "does not declare 401",
            "does not declare 413",
            "does not declare 415",
            "does not declare 400",
            "a paged list must take page and pageSize",
            "property `id` has no description",
            "schema ThingPage: paged lists use the one Paged_<T> envelope",
        ] {
            assert!(
                problems.iter().any(|p| p.contains(expected)),
                "missing {expected:?} in {problems:#?}"
            );
        }
    }
}
