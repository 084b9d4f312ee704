//! The API's error type, its JSON body, and the single place where every
//! failure (the domain's or the framework's) becomes an HTTP response.
//!
//! Domain code returns [`crate::error::Error`]; [`From<Error> for
//! ApiError`](ApiError#impl-From<Error>-for-ApiError) decides its status and words its
//! remedy (the operation to call) with a method and path. Errors raised by
//! poem and poem-openapi before a handler runs (a malformed parameter, a
//! wrong content type, an unknown route) reach [`ApiError::from_poem`] in the
//! outermost middleware, so every error response has the same body and
//! headers.
//!
//! On the spec side, [`ErrorResponses`] declares on each operation exactly
//! the statuses it can return, all sharing the one [`ErrorBody`] schema.

use poem::http::{HeaderValue, Method, StatusCode, header};
use poem::{IntoResponse, Response};
use poem_openapi::Object;
use poem_openapi::error::{
    AuthorizationError, ContentTypeError, ParseParamError, ParsePathError, ParseRequestPayloadError,
};

use crate::error::{Error, FieldError, Problem, Remedy};
use crate::http::routes::RouteTable;
use crate::paging;

mod responses;

pub use responses::{ErrorResponses, status};

/// What a path id must look like.
pub const UUID_RULE: &str = "must be a UUID such as 0192f0c1-9b6e-7c53-a5c8-2f0e4b5d6a71";

/// What a boolean query parameter (`full`, `verify`) must be.
pub const BOOLEAN_RULE: &str = "must be `true` or `false`";

/// What a body poem could not read is told (every body is read by
/// `json_body` first, which names its fields; this is the fallback).
pub const BODY_NOT_READ: &str = "could not be read as the expected JSON";

/// What a path parameter whose percent-encoding does not decode is told.
pub const PATH_NOT_UTF8: &str = "is not valid percent-encoded UTF-8";

/// What went wrong, in terms the API answers with.
///
/// Each variant documents the status it maps to; the mapping itself is in
/// [`ApiError::status`].
#[derive(Debug, thiserror::Error)]
pub enum ApiError {
    /// 400: input failed validation; one item per problem.
    #[error("{message}")]
    Validation {
        /// The sentence shown to the caller.
        message: String,
        /// One entry per field or parameter at fault.
        errors: Vec<FieldError>,
    },
    /// 401: missing, malformed or unknown credentials.
    #[error("{0}")]
    Unauthorized(&'static str),
    /// 404: the addressed resource does not exist or belongs to another client.
    #[error("{0}")]
    NotFound(String),
    /// 405: the path exists, the method does not; carries the `Allow` list.
    #[error("method not allowed")]
    MethodNotAllowed(Vec<Method>),
    /// 409: the request conflicts with the resource's current state.
    #[error("{0}")]
    Conflict(String),
    /// 409 with `canBeRetried` and `Retry-After`: what was asked for is on
    /// its way (a first sync is queued or running).
    #[error("{message}")]
    Pending {
        /// The sentence shown to the caller.
        message: String,
        /// Seconds until asking again is worth it.
        retry_after_seconds: u64,
    },
    /// 429 with `Retry-After`: the client's request quota, or the company's
    /// concurrent requests, are used up for now.
    #[error("{message}")]
    TooManyRequests {
        /// The sentence shown to the caller.
        message: String,
        /// Seconds until asking again is worth it.
        retry_after_seconds: u64,
    },
    /// 422: the request is well-formed but cannot be carried out for this resource.
    #[error("{0}")]
    Unprocessable(String),
    /// 410: what the request addressed is no longer kept (an expired snapshot).
    #[error("{0}")]
    Gone(String),
    /// 413: the request body is larger than the limit.
    #[error("The request body is larger than the limit of {limit} bytes ({} MiB).", limit / (1024 * 1024))]
    PayloadTooLarge {
        /// The limit in bytes.
        limit: usize,
    },
    /// 415: the body is not `application/json`.
    #[error("{0}")]
    UnsupportedMediaType(String),
    /// 503 with `Retry-After`: a dependency (the database, a platform) is not answering.
    #[error("{0}")]
    Unavailable(String),
    /// 500: a bug or an unexpected failure; the cause is logged, never sent.
    #[error("internal error: {0:#}")]
    Internal(anyhow::Error),
}

impl ApiError {
    /// A 400 for a list of field problems (at least one); remedies are
    /// worded into their messages.
    pub fn validation(errors: Vec<FieldError>) -> Self {
        let errors: Vec<FieldError> = errors
            .into_iter()
            .map(|error| match &error.remedy {
                Some(remedy) => FieldError::new(
                    error.item_id,
                    format!("{}. {}", error.message, sentence(remedy)),
                ),
                None => error,
            })
            .collect();
        let message = match errors.as_slice() {
            [only] => format!("Invalid `{}`: {}", only.item_id, only.message),
            _ => "The request has invalid fields; see `validation.errors`.".to_owned(),
        };
        Self::Validation { message, errors }
    }

    /// Wraps an unexpected failure as a 500.
    pub fn internal(cause: impl Into<anyhow::Error>) -> Self {
        Self::Internal(cause.into())
    }

    /// The HTTP status of this error.
    pub fn status(&self) -> StatusCode {
        match self {
            Self::Validation { .. } => StatusCode::BAD_REQUEST,
            Self::Unauthorized(_) => StatusCode::UNAUTHORIZED,
            Self::NotFound(_) => StatusCode::NOT_FOUND,
            Self::MethodNotAllowed(_) => StatusCode::METHOD_NOT_ALLOWED,
            Self::Conflict(_) | Self::Pending { .. } => StatusCode::CONFLICT,
            Self::Unprocessable(_) => StatusCode::UNPROCESSABLE_ENTITY,
            Self::Gone(_) => StatusCode::GONE,
            Self::TooManyRequests { .. } => StatusCode::TOO_MANY_REQUESTS,
            Self::PayloadTooLarge { .. } => StatusCode::PAYLOAD_TOO_LARGE,
            Self::UnsupportedMediaType(_) => StatusCode::UNSUPPORTED_MEDIA_TYPE,
            Self::Unavailable(_) => StatusCode::SERVICE_UNAVAILABLE,
            Self::Internal(_) => StatusCode::INTERNAL_SERVER_ERROR,
        }
    }

    /// Maps any error that reached the outermost middleware for `path` to
    /// an `ApiError`; `routes` names path parameters and the methods a path
    /// takes.
    pub fn from_poem(error: poem::Error, routes: &RouteTable, path: &str) -> Self {
        let error = match error.downcast::<ApiError>() {
            Ok(ours) => return ours,
            Err(other) => other,
        };
        let parameter = error
            .downcast_ref::<ParseParamError>()
            .map(|param| (param.name, param.reason.as_str()))
            .or_else(|| {
                error
                    .downcast_ref::<ParsePathError>()
                    .map(|param| (param.name, param.reason.as_str()))
            });
        if let Some((internal_name, reason)) = parameter {
            let name = routes
                .parameter_name(path, internal_name)
                .unwrap_or_else(|| internal_name.to_owned());
            let message = match paging::parameter_rule(&name) {
                Some(rule) => rule.to_owned(),
                None if name.ends_with("Id") => UUID_RULE.to_owned(),
                None if reason.contains("\"boolean\"") => BOOLEAN_RULE.to_owned(),
                None => reason.to_owned(),
            };
            return Self::validation(vec![FieldError::new(name, message)]);
        }
        // Every body is read by `json_body`, which names its fields; this is
        // a fallback, and poem's reason may quote the input, so it is not shown.
        if error.is::<ParseRequestPayloadError>() {
            return Self::validation(vec![FieldError::new("body", BODY_NOT_READ)]);
        }
        if let Some(content_type) = error.downcast_ref::<ContentTypeError>() {
            return Self::UnsupportedMediaType(match content_type {
                ContentTypeError::ExpectContentType => "This operation takes a JSON body, and none \
                     came (no `Content-Type`): send one with `Content-Type: application/json` (the \
                     operation's schema in /openapi.yaml says which fields it needs; `{}` where none \
                     is required)."
                    .to_owned(),
                other => format!("{other}; send the body as `application/json`."),
            });
        }
        if error.is::<AuthorizationError>() {
            return Self::Unauthorized(super::auth::MISSING_CREDENTIALS);
        }
        if error.is::<poem::error::NotFoundError>() {
            return Self::NotFound(
                "No such route. The API's operations are listed at /openapi.yaml and /docs."
                    .to_owned(),
            );
        }
        if error.is::<poem::error::ParsePathError>() {
            // The path's percent-encoding did not decode (`/companies/%FF`).
            let name = routes
                .path_parameters(path)
                .into_iter()
                .next()
                .unwrap_or_else(|| "path".to_owned());
            return Self::validation(vec![FieldError::new(name, PATH_NOT_UTF8)]);
        }
        if error.is::<poem::error::MethodNotAllowedError>() {
            return Self::MethodNotAllowed(routes.methods(path));
        }
        let status = error.status();
        if status.is_server_error() {
            let message = error.to_string();
            return Self::Internal(anyhow::Error::from(error).context(message));
        }
        // Poem's remaining client errors are all request-shape problems; they
        // answer 400 so the body stays the documented one.
        Self::Validation {
            message: format!("The request could not be processed: {error}"),
            errors: Vec::new(),
        }
    }

    /// Renders the error as the documented JSON body.
    ///
    /// Internal causes are logged here, with the correlation id, and replaced
    /// by a generic sentence in the body.
    pub fn into_response(self, correlation_id: &str) -> Response {
        let status = self.status();
        let (message, validation) = match &self {
            Self::Validation { message, errors } => (
                message.clone(),
                Some(Validation {
                    errors: errors
                        .iter()
                        .map(|error| ValidationItem {
                            item_id: error.item_id.clone(),
                            message: error.message.clone(),
                        })
                        .collect(),
                }),
            ),
            Self::MethodNotAllowed(allow) => (
                format!(
                    "This path does not take that method; it takes {}.",
                    join_methods(allow, ", ")
                ),
                None,
            ),
            Self::Internal(cause) => {
                tracing::error!(
                    correlation_id,
                    error = format!("{cause:#}"),
                    "internal error"
                );
                (
                    "Something went wrong on our side. Quote the correlation id if you contact support."
                        .to_owned(),
                    None,
                )
            }
            other => (other.to_string(), None),
        };
        let body = ErrorBody {
            status_code: status.as_u16(),
            error: message,
            correlation_id: correlation_id.to_owned(),
            validation,
            can_be_retried: matches!(
                self,
                Self::Internal(_)
                    | Self::Unavailable(_)
                    | Self::Pending { .. }
                    | Self::TooManyRequests { .. }
            ),
        };
        let mut response = poem_openapi::payload::Json(body).into_response();
        response.set_status(status);
        match &self {
            Self::Unauthorized(_) => {
                response.headers_mut().insert(
                    header::WWW_AUTHENTICATE,
                    HeaderValue::from_static(super::auth::WWW_AUTHENTICATE),
                );
            }
            Self::MethodNotAllowed(allow) => {
                if let Ok(value) = HeaderValue::from_str(&join_methods(allow, ", ")) {
                    response.headers_mut().insert(header::ALLOW, value);
                }
            }
            Self::Pending {
                retry_after_seconds,
                ..
            }
            | Self::TooManyRequests {
                retry_after_seconds,
                ..
            } => {
                response
                    .headers_mut()
                    .insert(header::RETRY_AFTER, HeaderValue::from(*retry_after_seconds));
            }
            Self::Unavailable(_) => {
                response.headers_mut().insert(
                    header::RETRY_AFTER,
                    HeaderValue::from(UNAVAILABLE_RETRY_AFTER_SECONDS),
                );
            }
            _ => {}
        }
        response
    }
}

fn join_methods(methods: &[Method], separator: &str) -> String {
    methods
        .iter()
        .map(Method::as_str)
        .collect::<Vec<_>>()
        .join(separator)
}

impl poem::error::ResponseError for ApiError {
    fn status(&self) -> StatusCode {
        ApiError::status(self)
    }
}

/// The one mapping from the domain's errors to statuses and wording.
impl From<Error> for ApiError {
    fn from(error: Error) -> Self {
        match error {
            Error::Invalid(errors) => Self::validation(errors),
            Error::NotFound(problem) => Self::NotFound(worded(problem)),
            Error::Conflict(problem) => Self::Conflict(worded(problem)),
            Error::Unprocessable(problem) => Self::Unprocessable(worded(problem)),
            Error::Gone(problem) => Self::Gone(worded(problem)),
            Error::Unavailable(problem) => Self::Unavailable(worded(problem)),
            Error::Pending {
                problem,
                retry_after,
            } => Self::Pending {
                message: worded(problem),
                retry_after_seconds: retry_after.as_secs().max(1),
            },
            Error::Internal(cause) => match unreachable_database(&cause) {
                Some(outage) => outage,
                None => Self::Internal(cause),
            },
        }
    }
}

/// A 503 when an unexpected failure was, underneath, the database being
/// out of reach (a `DbErr` wrapped on its way up); `None` for a real bug.
fn unreachable_database(cause: &anyhow::Error) -> Option<ApiError> {
    cause
        .chain()
        .filter_map(|link| link.downcast_ref::<sea_orm::DbErr>())
        .find(|db_error| crate::db::is_unreachable(db_error))
        .map(|db_error| Error::database_unavailable(db_error).into())
}

impl From<sea_orm::DbErr> for ApiError {
    fn from(error: sea_orm::DbErr) -> Self {
        Error::from(error).into()
    }
}

/// Seconds a 503 asks the client to wait (`Retry-After`): the pool gives up
/// on a connection after 10 s, so an outage shorter than that is already
/// retried inside the request.
pub const UNAVAILABLE_RETRY_AFTER_SECONDS: u64 = 5;

/// A problem's sentences, followed by its remedy's.
pub fn worded(problem: Problem) -> String {
    match &problem.remedy {
        Some(remedy) => format!("{} {}", problem.message, sentence(remedy)),
        None => problem.message,
    }
}

/// A remedy as the client acts on it: the operation, with its method and path.
pub fn sentence(remedy: &Remedy) -> String {
    match remedy {
        Remedy::ListPlatforms => "GET /integrations lists the valid keys.".to_owned(),
        Remedy::AttestChecklistStep { migration_id, step } => format!(
            "Once it is done, record it with PUT /migrations/{migration_id}/checklist/{step} and your name in \
             `attestedBy`."
        ),
        Remedy::ResendRow => "Obtain the company's current tokens and send them in a new batch (POST /migrations) \
             with the same externalReference: its company and connection are reused, not created again."
            .to_owned(),
        Remedy::RetryFailedRows { migration_id } => format!(
            "Once the cause is fixed, POST /migrations/{migration_id}/retryFailed tries the failed rows again."
        ),
        Remedy::ReadAuthorizationSchema { platform_key } => {
            format!("GET /integrations/{platform_key} gives the body it takes.")
        }
        Remedy::SetOAuthClient { platform_key } => format!(
            "Store the OAuth application that issued the tokens with PUT /integrations/{platform_key}/oauth-client."
        ),
        Remedy::AuthorizeConnection { company_id } => format!(
            "Link a connection first: create one with POST /companies/{company_id}/connections if it has none, \
             then migrate its tokens with PUT /companies/{company_id}/connections/{{connectionId}}/authorization \
             or send your customer through a link session (POST /companies/{company_id}/linkSessions)."
        ),
        Remedy::WatchOperation {
            company_id,
            operation_id,
        } => format!(
            "GET /companies/{company_id}/data/history/{operation_id} shows its progress; read again once it is Complete."
        ),
        Remedy::QueueSync {
            company_id,
            data_type,
        } => format!(
            "Call POST /companies/{company_id}/data/all (or /data/queue/{data_type}) and wait for the pull \
             operation to complete."
        ),
        Remedy::ReadListAgain {
            company_id,
            data_type,
        } => format!(
            "Read GET /companies/{company_id}/data/{data_type} again from page 1 without `snapshot`: \
             its links then pin the newest data."
        ),
        Remedy::NameConnection { connections } => {
            let listed: Vec<String> = connections.iter().map(|id| id.to_string()).collect();
            format!(
                "Add ?connectionId= with one of {} to the request.",
                listed.join(", ")
            )
        }
    }
}

/// The body of every error response.
#[derive(Debug, Clone, Object)]
#[oai(rename_all = "camelCase")]
pub struct ErrorBody {
    /// The HTTP status code, repeated for clients that only keep the body.
    pub status_code: u16,
    /// What went wrong, as a sentence a person can act on.
    pub error: String,
    /// The request's correlation id (also in the `X-Correlation-Id` header); quote it to support.
    pub correlation_id: String,
    /// Present on 400 responses: one item per invalid field or parameter.
    #[oai(skip_serializing_if_is_none)]
    pub validation: Option<Validation>,
    /// Whether sending the same request again later may succeed.
    pub can_be_retried: bool,
}

/// Validation problems of a rejected request.
#[derive(Debug, Clone, Object)]
#[oai(rename_all = "camelCase")]
pub struct Validation {
    /// One item per invalid field or parameter.
    pub errors: Vec<ValidationItem>,
}

/// One invalid field or parameter.
#[derive(Debug, Clone, Object)]
#[oai(rename_all = "camelCase")]
pub struct ValidationItem {
    /// The field or parameter at fault, as named in the request.
    pub item_id: String,
    /// What is wrong and what is allowed.
    pub message: String,
}
