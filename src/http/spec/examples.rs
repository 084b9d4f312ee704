//! Realistic request and answer examples on every operation, from
//! `examples.yaml` (by operationId), so Swagger UI and generated docs show
//! what a partner sends and receives rather than values made from the
//! schema (`"pageNumber": 0`, money as `"string"`). `spec-tests/examples.py`
//! holds them to the schemas and to a live server.

use anyhow::{Context, bail};
use serde_json::{Map, Value, json};

use crate::data::DataType;

/// The examples, as written (YAML anchors let operations share objects).
const EXAMPLES: &str = include_str!("examples.yaml");

/// The page size a list's example shows when its `total` is more than its
/// results: the page is as long as its results, so its links stay true.
const DEFAULT_PAGE_SIZE: usize = 100;

/// The `snapshot` parameter of a synced data type's page links, as the
/// server writes it (an opaque token).
const SNAPSHOT: &str =
    "&snapshot=czF8ZWI0OWFjOWM2MTIyYzU2M3wwMWEyMWE3MS04NTAxLTc1M2QtODg5YS02ZDk3MGFjYjdkMmI6Mg";

/// What `examples.yaml` says of one operation.
struct OperationExamples<'a> {
    operation_id: &'a str,
    entry: &'a Map<String, Value>,
}

impl OperationExamples<'_> {
    fn field(&self, name: &str) -> Option<&Value> {
        self.entry.get(name)
    }
}

/// Puts each operation's examples on the document. Fails when an operation
/// has no entry, when an operation with a JSON request body or a JSON
/// success answer has no example of it, or when an entry names an operation
/// or a field that does not exist, so a new operation cannot ship without
/// examples and a typo cannot drop one silently.
pub(super) fn show(document: &mut Value) -> anyhow::Result<()> {
    let examples = parsed()?;
    let ids = examples
        .get("ids")
        .and_then(Value::as_object)
        .context("examples.yaml has no `ids`")?;
    let operations = examples
        .get("operations")
        .and_then(Value::as_object)
        .context("examples.yaml has no `operations`")?;
    let mut seen = Vec::new();
    let paths = document
        .get_mut("paths")
        .and_then(Value::as_object_mut)
        .context("the document has no paths")?;
    for (path, item) in paths.iter_mut() {
        let Some(item) = item.as_object_mut() else {
            continue;
        };
        for operation in item.values_mut() {
            let operation_id = operation
                .get("operationId")
                .and_then(Value::as_str)
                .with_context(|| format!("an operation of {path} has no operationId"))?
                .to_owned();
            let entry = operations
                .get(&operation_id)
                .and_then(Value::as_object)
                .with_context(|| {
                    format!("examples.yaml has no entry for operation {operation_id}")
                })?;
            let examples = OperationExamples {
                operation_id: &operation_id,
                entry,
            };
            check_fields(&examples)?;
            show_request(operation, &examples)?;
            show_answer(operation, &examples, &fill_ids(path, ids))?;
            show_invalid(operation, &examples);
            seen.push(operation_id);
        }
    }
    if let Some(unknown) = operations.keys().find(|name| !seen.contains(name)) {
        bail!("examples.yaml has an entry for {unknown}, which is not an operation");
    }
    Ok(())
}

/// `examples.yaml` as JSON, its YAML merge keys (`<<: *object`) applied.
fn parsed() -> anyhow::Result<Value> {
    let mut yaml: serde_yaml::Value =
        serde_yaml::from_str(EXAMPLES).context("reading src/http/spec/examples.yaml")?;
    yaml.apply_merge()
        .context("applying examples.yaml's merge keys")?;
    serde_json::to_value(yaml).context("examples.yaml as JSON")
}

fn check_fields(examples: &OperationExamples) -> anyhow::Result<()> {
    const FIELDS: [&str; 6] = [
        "request", "requests", "answer", "results", "total", "invalid",
    ];
    if let Some(unknown) = examples
        .entry
        .keys()
        .find(|field| !FIELDS.contains(&field.as_str()))
    {
        bail!(
            "examples.yaml: {} has `{unknown}`; an entry has {}",
            examples.operation_id,
            FIELDS.join(", ")
        );
    }
    Ok(())
}

/// The request body's example, or its named examples.
fn show_request(operation: &mut Value, examples: &OperationExamples) -> anyhow::Result<()> {
    let media = operation.pointer_mut("/requestBody/content/application~1json");
    let (single, named) = (examples.field("request"), examples.field("requests"));
    let Some(media) = media.and_then(Value::as_object_mut) else {
        if single.is_some() || named.is_some() {
            bail!(
                "examples.yaml: {} takes no JSON body, yet has a request example",
                examples.operation_id
            );
        }
        return Ok(());
    };
    match (single, named) {
        (Some(example), None) => {
            media.insert("example".to_owned(), example.clone());
        }
        (None, Some(named)) => {
            media.insert("examples".to_owned(), named.clone());
        }
        _ => bail!(
            "examples.yaml: {} takes a JSON body: give it one `request` or named `requests`",
            examples.operation_id
        ),
    }
    Ok(())
}

/// The success answer's example, on each 2xx status with a JSON body
/// (`createMigration` answers 201 for a new batch, 200 for one sent again):
/// `answer` as written, or a page built around `results`.
fn show_answer(
    operation: &mut Value,
    examples: &OperationExamples,
    path: &str,
) -> anyhow::Result<()> {
    let Some(responses) = operation
        .get_mut("responses")
        .and_then(Value::as_object_mut)
    else {
        return Ok(());
    };
    let medias: Vec<&mut Map<String, Value>> = responses
        .iter_mut()
        .filter(|(status, _)| status.starts_with('2'))
        .filter_map(|(_, response)| response.pointer_mut("/content/application~1json"))
        .filter_map(Value::as_object_mut)
        .collect();
    let example = match (examples.field("answer"), examples.field("results")) {
        (Some(answer), None) => answer.clone(),
        (None, Some(results)) => page(results, examples.field("total"), path)?,
        (None, None) if medias.is_empty() => return Ok(()),
        _ => bail!(
            "examples.yaml: {} answers JSON: give it one `answer`, or `results` for a list",
            examples.operation_id
        ),
    };
    if medias.is_empty() {
        bail!(
            "examples.yaml: {} answers no JSON, yet has an answer example",
            examples.operation_id
        );
    }
    for media in medias {
        media.insert("example".to_owned(), example.clone());
    }
    Ok(())
}

/// The paged envelope around `results`, as the first page of a list at `path`.
fn page(results: &Value, total: Option<&Value>, path: &str) -> anyhow::Result<Value> {
    let count = results
        .as_array()
        .context("`results` is a list of records")?
        .len();
    let total = match total {
        Some(total) => total
            .as_u64()
            .and_then(|total| usize::try_from(total).ok())
            .context("`total` is a whole number")?,
        None => count,
    };
    let page_size = if total > count {
        count
    } else {
        DEFAULT_PAGE_SIZE
    };
    // A synced data type's links pin the snapshot the first page was read from.
    let synced_data = path
        .rsplit_once("/data/")
        .is_some_and(|(_, data_type)| DataType::named(data_type).is_some());
    let pinned = if synced_data { SNAPSHOT } else { "" };
    let link =
        |page: usize| json!({"href": format!("{path}?page={page}&pageSize={page_size}{pinned}")});
    let mut links = json!({"self": {"href": path}, "current": link(1)});
    if total > page_size {
        links["next"] = link(2);
    }
    Ok(json!({
        "results": results,
        "pageNumber": 1,
        "pageSize": page_size,
        "totalResults": total,
        "_links": links,
    }))
}

/// The 400 example of an operation whose typical mistake is in its body.
fn show_invalid(operation: &mut Value, examples: &OperationExamples) {
    let Some(invalid) = examples.field("invalid") else {
        return;
    };
    let field = invalid["field"].as_str().unwrap_or_default();
    let message = invalid["message"].as_str().unwrap_or_default();
    if let Some(media) = operation
        .pointer_mut("/responses/400/content/application~1json")
        .and_then(Value::as_object_mut)
    {
        media.insert(
            "example".to_owned(),
            super::error_examples::invalid_body(field, message),
        );
    }
}

/// `path` with each `{name}` replaced by the example id of that name.
fn fill_ids(path: &str, ids: &Map<String, Value>) -> String {
    ids.iter().fold(path.to_owned(), |path, (name, id)| {
        path.replace(&format!("{{{name}}}"), id.as_str().unwrap_or_default())
    })
}
