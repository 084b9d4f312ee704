//! Request plumbing around every route: correlation ids, the access log and
//! request metrics, the rate-limit fields, the body size limit, and
//! rendering of every error as the one JSON body.

use std::panic::AssertUnwindSafe;
use std::sync::Arc;
use std::time::Instant;

use futures_util::FutureExt;
use poem::http::HeaderValue;
use poem::{Body, Endpoint, IntoResponse, Request, Response};

use super::error::ApiError;
use super::rate_limit::{self, AdmissionCell};
use super::routes::{Operation, RouteTable};
use crate::error::FieldError;
use crate::metrics::Metrics;
use crate::rate_limits::RateLimits;

/// The `operation` label of requests no route matches (never their path,
/// which could hold anything).
const UNMATCHED: &str = "unmatched";

/// The header that carries a request's correlation id, both ways.
pub const CORRELATION_HEADER: &str = "x-correlation-id";
/// The largest request body accepted.
pub const MAX_BODY_BYTES: usize = 1024 * 1024;
/// The largest body of `createMigration`: a batch of up to 10,000 rows,
/// each with its authorization body.
pub const MAX_MIGRATION_BODY_BYTES: usize = 32 * 1024 * 1024;

/// The largest body `operation` accepts.
fn body_limit(operation: &Operation) -> usize {
    match operation.name.as_str() {
        "createMigration" => MAX_MIGRATION_BODY_BYTES,
        _ => MAX_BODY_BYTES,
    }
}

/// A documented query parameter given more than once (which value counts
/// would be a guess) or holding NUL (no text accepts it) is refused.
fn repeated_query_parameter(operation: &Operation, query: Option<&str>) -> Result<(), ApiError> {
    let Some(query) = query else { return Ok(()) };
    let mut seen: Vec<String> = Vec::new();
    for (name, value) in url::form_urlencoded::parse(query.as_bytes()) {
        if !operation
            .query_parameters
            .iter()
            .any(|known| *known == name)
        {
            continue;
        }
        if !crate::validation::storable(&value) {
            return Err(ApiError::validation(vec![FieldError::new(
                name.into_owned(),
                crate::validation::NUL_RULE,
            )]));
        }
        if seen.iter().any(|earlier| *earlier == name) {
            return Err(ApiError::validation(vec![FieldError::new(
                name.into_owned(),
                "is given more than once; give it once",
            )]));
        }
        seen.push(name.into_owned());
    }
    Ok(())
}

/// Accepts a caller's correlation id only if it is short and plain, so it
/// is safe to log and echo; otherwise a new one is made.
fn correlation_id(request: &Request) -> String {
    request
        .headers()
        .get(CORRELATION_HEADER)
        .and_then(|value| value.to_str().ok())
        .filter(|value| {
            (1..=128).contains(&value.len())
                && value
                    .bytes()
                    .all(|byte| byte.is_ascii_alphanumeric() || b"-_.:".contains(&byte))
        })
        .map(str::to_owned)
        .unwrap_or_else(|| uuid::Uuid::new_v4().to_string())
}

/// Prepares the request for its operation: a documented query parameter
/// may appear once; an operation that takes a body gets it buffered up to
/// [`MAX_BODY_BYTES`] whatever the transfer encoding; any other request's
/// body is dropped unread, so it cannot cause an undeclared 413 or 400.
async fn prepare(mut request: Request, operation: Option<&Operation>) -> Result<Request, ApiError> {
    if let Some(operation) = operation {
        repeated_query_parameter(operation, request.uri().query())?;
    }
    let Some(operation) = operation.filter(|operation| operation.takes_body) else {
        request.set_body(Body::empty());
        return Ok(request);
    };
    limit_body(request, body_limit(operation)).await
}

/// Reads a request body up to `limit` bytes.
async fn limit_body(mut request: Request, limit: usize) -> Result<Request, ApiError> {
    let declared = request
        .headers()
        .get(poem::http::header::CONTENT_LENGTH)
        .and_then(|value| value.to_str().ok())
        .and_then(|value| value.parse::<u64>().ok());
    if declared.is_some_and(|length| length > limit as u64) {
        return Err(ApiError::PayloadTooLarge { limit });
    }
    let body = request.take_body();
    let bytes = body
        .into_bytes_limit(limit)
        .await
        .map_err(|error| match error {
            poem::error::ReadBodyError::PayloadTooLarge => ApiError::PayloadTooLarge { limit },
            other => ApiError::validation(vec![FieldError::new(
                "body",
                format!("the request body could not be read: {other}"),
            )]),
        })?;
    request.set_body(Body::from_bytes(bytes));
    Ok(request)
}

/// The outermost middleware: assigns the correlation id, bounds the body,
/// renders any error as the JSON body, and logs one line per request.
pub async fn around_every_request<E: Endpoint>(
    next: Arc<E>,
    request: Request,
    routes: Arc<RouteTable>,
    metrics: Arc<Metrics>,
    rate_limits: Arc<RateLimits>,
) -> poem::Result<Response> {
    let started = Instant::now();
    let mut request = request;
    let admission = AdmissionCell::default();
    request.extensions_mut().insert(admission.clone());
    let correlation_id = correlation_id(&request);
    let method = request.method().clone();
    let path = request.uri().path().to_owned();
    let operation = routes.operation(&path, &method);
    let operation_name = operation.map_or(UNMATCHED, |operation| operation.name.as_str());

    let outcome = match prepare(request, operation).await {
        // A panicking handler still gets the JSON 500, the header and the log line.
        Ok(request) => match AssertUnwindSafe(next.call(request)).catch_unwind().await {
            Ok(result) => result.map(IntoResponse::into_response),
            Err(panic) => Err(ApiError::internal(anyhow::anyhow!(
                "request handler panicked: {}",
                panic_message(panic.as_ref())
            ))
            .into()),
        },
        Err(error) => Err(error.into()),
    };
    let mut response = match outcome {
        Ok(response) => response,
        Err(error) => ApiError::from_poem(error, &routes, &path).into_response(&correlation_id),
    };
    if let Ok(value) = HeaderValue::from_str(&correlation_id) {
        response.headers_mut().insert(CORRELATION_HEADER, value);
    }
    rate_limit::add_headers(&mut response, &admission, rate_limits.quota());
    let elapsed = started.elapsed().as_secs_f64();
    metrics.request(operation_name, response.status().as_u16(), elapsed);
    tracing::info!(
        target: "tributary::access",
        method = %method,
        path = %path,
        status = response.status().as_u16(),
        duration_ms = elapsed * 1000.0,
        correlation_id = %correlation_id,
        "request"
    );
    Ok(response)
}

fn panic_message(panic: &(dyn std::any::Any + Send)) -> &str {
    panic
        .downcast_ref::<&str>()
        .copied()
        .or_else(|| panic.downcast_ref::<String>().map(String::as_str))
        .unwrap_or("a non-text panic payload")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unsafe_correlation_ids_are_replaced() {
        let request = Request::builder()
            .header(CORRELATION_HEADER, "abc-123")
            .finish();
        assert_eq!(correlation_id(&request), "abc-123");
        let request = Request::builder()
            .header(CORRELATION_HEADER, "a b\"c")
            .finish();
        assert_ne!(correlation_id(&request), "a b\"c");
    }
}
