//! Realistic error bodies on every error response of the document, so the
//! docs show what a client receives.

use serde_json::{Value, json};

use crate::data::DataType;

/// The correlation id every example error carries.
const CORRELATION_ID: &str = "0192f0c1-9b6e-7c53-a5c8-2f0e4b5d6a71";

/// A realistic body for each error status, so the docs (Swagger UI shows
/// an example built from the schema otherwise: `statusCode: 0`) show what a
/// client receives.
fn error_example(status: u16, path: &str, has_page: bool) -> Option<Value> {
    let company = "0192f0c1-9b6e-7c53-a5c8-2f0e4b5d6a72";
    let data_type = synced_data_type(path);
    let (error, can_be_retried) = match status {
        400 => return Some(invalid_parameter(path, has_page)),
        401 => (crate::http::auth::MISSING_CREDENTIALS.to_owned(), false),
        // The thing the path names last is the one missing.
        404 => (
            match path.rsplit('{').next().unwrap_or_default() {
                parameter if parameter.starts_with("connectionId") => {
                    "No connection with id 0192f0c1-9b6e-7c53-a5c8-2f0e4b5d6a73 in this company."
                        .to_owned()
                }
                parameter if parameter.starts_with("pullOperationId") => {
                    "No pull operation with id 0192f0c1-9b6e-7c53-a5c8-2f0e4b5d6a74 in this company."
                        .to_owned()
                }
                parameter if parameter.starts_with("platformKey") => {
                    "No integration with platformKey `xeroo`; GET /integrations lists them.".to_owned()
                }
                _ => format!("No company with id {company}."),
            },
            false,
        ),
        409 => (
            format!(
                "The {data_type} of company {company} are not synced yet. Call POST \
                 /companies/{company}/data/all (or /data/queue/{data_type}) and wait for the pull \
                 operation to complete."
            ),
            false,
        ),
        410 => (
            format!(
                "The snapshot these links pinned is no longer kept: a newer sync replaced its \
                 {data_type} more than 30 minutes ago (or two newer syncs completed since), or one \
                 of its connections was deleted. Read GET /companies/{company}/data/{data_type} \
                 again from page 1 without `snapshot`: its links then pin the newest data."
            ),
            false,
        ),
        413 => (
            "The request body is larger than the limit of 1048576 bytes (1 MiB).".to_owned(),
            false,
        ),
        415 => (
            "the `Content-Type` requested by the client is not supported: text/plain; send the body as \
             `application/json`."
                .to_owned(),
            false,
        ),
        422 => (
            "Xero rejected the tokens: the access token is invalid or expired. Nothing was stored."
                .to_owned(),
            false,
        ),
        503 => (crate::error::DATABASE_UNAVAILABLE.to_owned(), true),
        500 => (
            "Something went wrong on our side. Quote the correlation id if you contact support."
                .to_owned(),
            true,
        ),
        _ => return None,
    };
    Some(json!({
        "statusCode": status,
        "error": error,
        "correlationId": CORRELATION_ID,
        "canBeRetried": can_be_retried
    }))
}

/// A 400 for one field at fault, worded as the server words it
/// (`ApiError::validation` with one problem).
pub(super) fn invalid_body(field: &str, message: &str) -> Value {
    json!({
        "statusCode": 400,
        "error": format!("Invalid `{field}`: {message}"),
        "correlationId": CORRELATION_ID,
        "validation": {"errors": [{"itemId": field, "message": message}]},
        "canBeRetried": false
    })
}

/// The 400 an operation without a body typically answers, in the server's
/// words: a list's paging parameter, or else its last path parameter (a
/// malformed id, an unknown data type, a name whose encoding is broken).
fn invalid_parameter(path: &str, has_page: bool) -> Value {
    let last = path
        .rsplit('{')
        .next()
        .and_then(|last| last.split_once('}'))
        .map(|(name, _)| name);
    match last {
        _ if has_page => invalid_body("pageSize", "must be an integer from 1 to 5000"),
        Some(id) if id.ends_with("Id") => invalid_body(id, crate::http::error::UUID_RULE),
        Some("dataType") => invalid_body("dataType", &DataType::rule()),
        Some(name) => invalid_body(name, crate::http::error::PATH_NOT_UTF8),
        None => invalid_body("body", crate::http::error::BODY_NOT_READ),
    }
}

/// The data type a synced-data path reads (`/companies/{companyId}/data/customers`
/// and its single records), so that each list's examples name its own;
/// invoices for every other path.
fn synced_data_type(path: &str) -> &'static str {
    path.split_once("/data/")
        .and_then(|(_, rest)| DataType::named(rest.split('/').next().unwrap_or_default()))
        .unwrap_or(DataType::INVOICES)
        .name()
}

/// Puts [`error_example`] on every error response.
pub(super) fn show(document: &mut Value) {
    let Some(paths) = document.get_mut("paths").and_then(Value::as_object_mut) else {
        return;
    };
    for (path, operation) in paths
        .iter_mut()
        .filter_map(|(path, item)| Some((path.clone(), item.as_object_mut()?)))
        .flat_map(|(path, item)| {
            item.values_mut()
                .map(move |operation| (path.clone(), operation))
        })
    {
        let has_page = operation
            .get("parameters")
            .and_then(Value::as_array)
            .is_some_and(|parameters| {
                parameters
                    .iter()
                    .any(|parameter| parameter["name"] == "page")
            });
        let Some(responses) = operation
            .get_mut("responses")
            .and_then(Value::as_object_mut)
        else {
            continue;
        };
        for (code, response) in responses.iter_mut() {
            let Some(example) = code
                .parse()
                .ok()
                .and_then(|status| error_example(status, &path, has_page))
            else {
                continue;
            };
            if let Some(media) = response.pointer_mut("/content/application~1json")
                && media.pointer("/schema/$ref").and_then(Value::as_str)
                    == Some("#/components/schemas/ErrorBody")
                && let Some(media) = media.as_object_mut()
            {
                media.insert("example".to_owned(), example);
            }
        }
    }
}
