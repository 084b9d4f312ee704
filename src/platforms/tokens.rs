//! The token parts shared by authorization bodies: secret strings, expiry
//! (`expiresIn` seconds or `expiresAt` RFC 3339, numbers also as strings),
//! and the rule that an expiring token must say when it expires.

use std::borrow::Cow;
use std::fmt;

use chrono::{DateTime, Duration, Utc};
use schemars::{JsonSchema, Schema, SchemaGenerator, json_schema};
use serde::Deserialize;

use super::numbers::{MAX_EXPIRES_IN, Seconds};

use crate::error::FieldError;

/// Longest accepted string value: 16 KiB.
pub const MAX_VALUE_CHARS: u64 = 16 * 1024;

/// A secret string (an access or refresh token). Its `Debug` never shows it.
#[derive(Clone, PartialEq, Eq, Deserialize)]
#[serde(transparent)]
pub struct Secret(String);

impl Secret {
    /// The secret itself, for sending to the platform.
    pub fn expose(&self) -> &str {
        &self.0
    }
}

impl fmt::Debug for Secret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Secret([redacted])")
    }
}

impl JsonSchema for Secret {
    fn schema_name() -> Cow<'static, str> {
        "Secret".into()
    }

    fn inline_schema() -> bool {
        true
    }

    fn json_schema(_: &mut SchemaGenerator) -> Schema {
        // Not blank; at most 16 KiB, counted in bytes by the validator too.
        json_schema!({ "type": "string", "minLength": 1, "maxLength": MAX_VALUE_CHARS, "pattern": "\\S" })
    }
}

/// Access and refresh tokens whose access token expires: the expiry is
/// required, or the connection could never be refreshed.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ExpiringTokens {
    /// The OAuth access token your application holds for this connection.
    pub access_token: Secret,
    /// The OAuth refresh token. Send the latest one: stop refreshing in your own application first, since many platforms rotate refresh tokens.
    pub refresh_token: Secret,
    /// Seconds until the access token expires, counted from this request (the token response's `expires_in`). Give this or `expiresAt`.
    pub expires_in: Option<Seconds>,
    /// When the access token expires (RFC 3339). Give this or `expiresIn`.
    pub expires_at: Option<DateTime<Utc>>,
}

/// A token that does not expire (the platform issues no expiry).
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct LongLivedToken {
    /// The OAuth access token your application holds for this connection; it does not expire, but can be revoked.
    pub access_token: Secret,
}

/// When an access token expires, as given in a body.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Expiry {
    /// The token does not expire.
    Never,
    /// Absolute expiry.
    At(DateTime<Utc>),
}

/// Reads `expiresIn`/`expiresAt`: exactly one is required when `required`,
/// at most one otherwise.
pub fn expiry(
    expires_in: Option<Seconds>,
    expires_at: Option<DateTime<Utc>>,
    required: bool,
    now: DateTime<Utc>,
) -> Result<Expiry, FieldError> {
    match (expires_in, expires_at) {
        (Some(_), Some(_)) => Err(FieldError::new(
            "expiresAt",
            "give either `expiresIn` or `expiresAt`, not both",
        )),
        (Some(seconds), None) => {
            let seconds = seconds.get();
            let seconds = i64::try_from(seconds.min(MAX_EXPIRES_IN)).unwrap_or(i64::MAX);
            Ok(Expiry::At(now + Duration::seconds(seconds)))
        }
        (None, Some(at)) => Ok(Expiry::At(at)),
        (None, None) if required => Err(FieldError::new(
            "expiresIn",
            "is required (or `expiresAt`): this platform's access tokens expire, and a connection \
             imported without its expiry can never be refreshed",
        )),
        (None, None) => Ok(Expiry::Never),
    }
}

impl ExpiringTokens {
    /// The access token's expiry; required for these tokens.
    pub fn expiry(&self, now: DateTime<Utc>) -> Result<Expiry, FieldError> {
        expiry(self.expires_in, self.expires_at, true, now)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_expiring_token_needs_exactly_one_expiry() {
        let now = Utc::now();
        assert_eq!(
            expiry(Some(Seconds::new(60)), None, true, now),
            Ok(Expiry::At(now + Duration::seconds(60)))
        );
        assert_eq!(expiry(None, Some(now), true, now), Ok(Expiry::At(now)));
        assert_eq!(expiry(None, None, false, now), Ok(Expiry::Never));
        assert_eq!(
            expiry(None, None, true, now).map_err(|e| e.item_id),
            Err("expiresIn".to_owned())
        );
        assert!(expiry(Some(Seconds::new(1)), Some(now), false, now).is_err());
    }

    #[test]
    fn secrets_never_show_in_debug_output() {
        let secret: Secret = serde_json::from_str("\"tok-123\"").expect("a string");
        assert_eq!(format!("{secret:?}"), "Secret([redacted])");
        assert_eq!(secret.expose(), "tok-123");
    }
}
