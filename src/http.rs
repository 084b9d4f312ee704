//! Request plumbing around every route: correlation ids, the access log,
//! the body size limit, and rendering of every error as the one JSON body.

use std::sync::Arc;
use std::time::Instant;

use poem::http::{HeaderValue, Method};
use poem::{Body, Endpoint, IntoResponse, Request, Response};
use poem_openapi::registry::MetaApi;

use crate::error::ApiError;

/// The header that carries a request's correlation id, both ways.
pub const CORRELATION_HEADER: &str = "x-correlation-id";
/// The largest request body accepted.
pub const MAX_BODY_BYTES: usize = 1024 * 1024;

/// The documented routes: which methods each path takes (for `Allow` on a
/// 405) and what its path parameters are called (poem-openapi reports them
/// as `param0`, `param1`, ...).
#[derive(Debug, Default)]
pub struct RouteTable {
    routes: Vec<(Vec<String>, Vec<Method>)>,
}

impl RouteTable {
    /// Reads the route table from poem-openapi's operation metadata.
    pub fn from_meta(apis: Vec<MetaApi>) -> Self {
        let mut routes: Vec<(Vec<String>, Vec<Method>)> = Vec::new();
        for path in apis.into_iter().flat_map(|api| api.paths) {
            // poem-openapi keeps the `:name` form written in `#[oai(path)]`.
            let segments = segments(&path.path)
                .map(|segment| match segment.strip_prefix(':') {
                    Some(name) => format!("{{{name}}}"),
                    None => segment.to_owned(),
                })
                .collect::<Vec<_>>();
            let mut methods = path
                .operations
                .into_iter()
                .map(|op| op.method)
                .collect::<Vec<_>>();
            if methods.contains(&Method::GET) {
                methods.push(Method::HEAD);
            }
            match routes.iter_mut().find(|(known, _)| *known == segments) {
                Some((_, known_methods)) => known_methods.extend(methods),
                None => routes.push((segments, methods)),
            }
        }
        Self { routes }
    }

    fn matching(&self, path: &str) -> Option<&(Vec<String>, Vec<Method>)> {
        let requested = segments(path).collect::<Vec<_>>();
        self.routes.iter().find(|(template, _)| {
            template.len() == requested.len()
                && template
                    .iter()
                    .zip(&requested)
                    .all(|(expected, actual)| expected.starts_with('{') || expected == actual)
        })
    }

    /// The methods `path` takes; empty when no documented route matches.
    pub fn methods(&self, path: &str) -> Vec<Method> {
        self.matching(path)
            .map(|(_, methods)| methods.clone())
            .unwrap_or_default()
    }

    /// The documented name of the parameter poem-openapi calls `internal`
    /// (`param0` is the first `{...}` segment of the route `path` matches).
    pub fn parameter_name(&self, path: &str, internal: &str) -> Option<String> {
        let index: usize = internal.strip_prefix("param")?.parse().ok()?;
        let (template, _) = self.matching(path)?;
        template
            .iter()
            .filter_map(|segment| segment.strip_prefix('{')?.strip_suffix('}'))
            .nth(index)
            .map(str::to_owned)
    }
}

fn segments(path: &str) -> impl Iterator<Item = &str> {
    path.split('/').filter(|segment| !segment.is_empty())
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

/// Reads a request body up to [`MAX_BODY_BYTES`], so every later reader sees
/// a bounded, fully buffered body whatever the transfer encoding.
async fn limit_body(mut request: Request) -> Result<Request, ApiError> {
    let declared = request
        .headers()
        .get(poem::http::header::CONTENT_LENGTH)
        .and_then(|value| value.to_str().ok())
        .and_then(|value| value.parse::<u64>().ok());
    if declared.is_some_and(|length| length > MAX_BODY_BYTES as u64) {
        return Err(ApiError::PayloadTooLarge {
            limit: MAX_BODY_BYTES,
        });
    }
    let body = request.take_body();
    let bytes = body
        .into_bytes_limit(MAX_BODY_BYTES)
        .await
        .map_err(|error| match error {
            poem::error::ReadBodyError::PayloadTooLarge => ApiError::PayloadTooLarge {
                limit: MAX_BODY_BYTES,
            },
            other => ApiError::validation(vec![crate::error::FieldError::new(
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
) -> poem::Result<Response> {
    let started = Instant::now();
    let correlation_id = correlation_id(&request);
    let method = request.method().clone();
    let path = request.uri().path().to_owned();

    let outcome = match limit_body(request).await {
        Ok(request) => next.call(request).await.map(IntoResponse::into_response),
        Err(error) => Err(error.into()),
    };
    let mut response = match outcome {
        Ok(response) => response,
        Err(error) => ApiError::from_poem(error, &routes, &path).into_response(&correlation_id),
    };
    if let Ok(value) = HeaderValue::from_str(&correlation_id) {
        response.headers_mut().insert(CORRELATION_HEADER, value);
    }
    tracing::info!(
        target: "tributary::access",
        method = %method,
        path = %path,
        status = response.status().as_u16(),
        duration_ms = started.elapsed().as_secs_f64() * 1000.0,
        correlation_id = %correlation_id,
        "request"
    );
    Ok(response)
}

#[cfg(test)]
mod tests {
    use super::*;
    use poem_openapi::registry::{MetaOperation, MetaPath, MetaResponses};

    fn operation(method: Method) -> MetaOperation {
        MetaOperation {
            method,
            tags: Vec::new(),
            summary: None,
            description: None,
            external_docs: None,
            params: Vec::new(),
            request: None,
            responses: MetaResponses {
                responses: Vec::new(),
            },
            deprecated: false,
            security: Vec::new(),
            operation_id: None,
            code_samples: Vec::new(),
        }
    }

    #[test]
    fn allowed_methods_match_path_templates() {
        let allowed = RouteTable::from_meta(vec![MetaApi {
            paths: vec![MetaPath {
                path: "/companies/:companyId".to_owned(),
                operations: vec![operation(Method::GET), operation(Method::DELETE)],
            }],
        }]);
        assert_eq!(
            allowed.methods("/companies/42"),
            [Method::GET, Method::DELETE, Method::HEAD]
        );
        assert!(allowed.methods("/companies/42/extra").is_empty());
        assert_eq!(
            allowed.parameter_name("/companies/42", "param0").as_deref(),
            Some("companyId")
        );
        assert_eq!(allowed.parameter_name("/companies/42", "param1"), None);
    }

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
