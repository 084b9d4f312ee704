//! What each operation declares it can answer besides success: the status
//! flags, the table of error statuses with their descriptions and headers,
//! and [`ErrorResponses`], which renders an [`ApiError`] and declares those
//! statuses in the spec, all sharing the one [`ErrorBody`] schema.

use poem_openapi::ApiResponse;
use poem_openapi::registry::{MetaHeader, MetaMediaType, MetaResponse, MetaResponses, Registry};
use poem_openapi::types::Type;

use super::{ApiError, ErrorBody};
use crate::error::Error;

/// Bit flags naming the error statuses an operation declares; combine with `|`.
pub mod status {
    /// 400 Bad Request.
    pub const BAD_REQUEST: u32 = 1 << 0;
    /// 401 Unauthorized.
    pub const UNAUTHORIZED: u32 = 1 << 1;
    /// 404 Not Found.
    pub const NOT_FOUND: u32 = 1 << 2;
    /// 409 Conflict.
    pub const CONFLICT: u32 = 1 << 3;
    /// 413 Payload Too Large.
    pub const PAYLOAD_TOO_LARGE: u32 = 1 << 4;
    /// 415 Unsupported Media Type.
    pub const UNSUPPORTED_MEDIA_TYPE: u32 = 1 << 5;
    /// 503 Service Unavailable.
    pub const UNAVAILABLE: u32 = 1 << 6;
    /// 500 Internal Server Error.
    pub const INTERNAL: u32 = 1 << 7;
    /// 422 Unprocessable Entity.
    pub const UNPROCESSABLE: u32 = 1 << 8;
    /// 410 Gone.
    pub const GONE: u32 = 1 << 9;
    /// 429 Too Many Requests.
    pub const TOO_MANY_REQUESTS: u32 = 1 << 10;

    /// What every authenticated operation can answer.
    pub const AUTHENTICATED: u32 = UNAUTHORIZED | TOO_MANY_REQUESTS | UNAVAILABLE | INTERNAL;
    /// What an operation taking a JSON body can answer on top of that.
    pub const JSON_BODY: u32 = BAD_REQUEST | PAYLOAD_TOO_LARGE | UNSUPPORTED_MEDIA_TYPE;
}

/// The status table behind [`ErrorResponses`]: flag, code, and description.
const DECLARED_STATUSES: &[(u32, u16, &str)] = &[
    (
        status::BAD_REQUEST,
        400,
        "The request is invalid: a malformed parameter, path id or JSON body. `validation.errors` names each field at fault.",
    ),
    (
        status::UNAUTHORIZED,
        401,
        "Missing, malformed or unknown API key. Send `Authorization: Basic <base64(API key)>`.",
    ),
    (
        status::NOT_FOUND,
        404,
        "No such resource for this API key's client (ids of other clients answer the same).",
    ),
    (
        status::CONFLICT,
        409,
        "The request conflicts with the resource's current state.",
    ),
    (
        status::UNPROCESSABLE,
        422,
        "The request is valid but cannot be carried out for this resource; the error says why and what to do instead.",
    ),
    (
        status::GONE,
        410,
        "The snapshot the request's `snapshot` pinned is no longer kept; read the list again from page 1 without it.",
    ),
    (
        status::PAYLOAD_TOO_LARGE,
        413,
        "The request body is larger than 1 MiB.",
    ),
    (
        status::UNSUPPORTED_MEDIA_TYPE,
        415,
        "The request body is not `application/json`.",
    ),
    (
        status::TOO_MANY_REQUESTS,
        429,
        "Your client's request quota (`RateLimit-Policy`), or its concurrent requests for one company, are used up for now; `Retry-After` says when to try again.",
    ),
    (
        status::UNAVAILABLE,
        503,
        "A dependency (the database, or a platform being asked to verify tokens) is not answering; try again later.",
    ),
    (
        status::INTERNAL,
        500,
        "Unexpected failure on our side; the body carries a correlation id to quote.",
    ),
];

/// The error half of an operation's result: renders an [`ApiError`] and
/// declares in the spec exactly the statuses in the bit set `STATUSES`.
///
/// Example: `ErrorResponses<{ status::AUTHENTICATED | status::NOT_FOUND }>`.
#[derive(Debug)]
pub struct ErrorResponses<const STATUSES: u32>(pub ApiError);

impl<const STATUSES: u32> From<ApiError> for ErrorResponses<STATUSES> {
    fn from(error: ApiError) -> Self {
        Self(error)
    }
}

impl<const STATUSES: u32> From<Error> for ErrorResponses<STATUSES> {
    fn from(error: Error) -> Self {
        Self(error.into())
    }
}

impl<const STATUSES: u32> From<ErrorResponses<STATUSES>> for poem::Error {
    fn from(error: ErrorResponses<STATUSES>) -> Self {
        poem::Error::from(error.0)
    }
}

/// The headers an error status carries, for the spec.
fn declared_headers(code: u16) -> Vec<MetaHeader> {
    let header = |name: &str, description: &str, required: bool, schema| MetaHeader {
        name: name.to_owned(),
        description: Some(description.to_owned()),
        required,
        deprecated: false,
        schema,
    };
    match code {
        401 => vec![header(
            "WWW-Authenticate",
            "The challenge: `Basic realm=\"tributary\"`.",
            true,
            String::schema_ref(),
        )],
        409 => vec![header(
            "Retry-After",
            "Seconds to wait, present when `canBeRetried` is true: what was asked for is on its way (a first sync is queued or running).",
            false,
            u64::schema_ref(),
        )],
        429 | 503 => vec![header(
            "Retry-After",
            "Seconds to wait before trying again.",
            true,
            u64::schema_ref(),
        )],
        _ => Vec::new(),
    }
}

impl<const STATUSES: u32> ApiResponse for ErrorResponses<STATUSES> {
    fn meta() -> MetaResponses {
        let responses = DECLARED_STATUSES
            .iter()
            .filter(|(flag, _, _)| STATUSES & flag != 0)
            .map(|&(_, code, description)| MetaResponse {
                description,
                status: Some(code),
                status_range: None,
                content: vec![MetaMediaType {
                    content_type: "application/json; charset=utf-8",
                    schema: ErrorBody::schema_ref(),
                }],
                headers: declared_headers(code),
            })
            .collect();
        MetaResponses { responses }
    }

    fn register(registry: &mut Registry) {
        ErrorBody::register(registry);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_status_flag_is_declared_once() {
        let mut seen = 0;
        for (flag, _, _) in DECLARED_STATUSES {
            assert_eq!(seen & flag, 0, "flag {flag} declared twice");
            seen |= flag;
        }
        assert_eq!(seen, (1 << 11) - 1);
    }
}
