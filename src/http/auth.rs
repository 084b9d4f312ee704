//! Authentication: `Authorization: Basic <base64(API key)>` resolves to the
//! [`Tenant`] whose data the request may see.
//!
//! poem-openapi's own Basic extractor insists on a `user:password` pair, but
//! the seed sends base64 of the bare key. [`Tenant`] is therefore a
//! hand-written extractor that registers the same `http`/`basic` security
//! scheme and accepts both `base64(KEY)` and `base64(KEY:)` (what Swagger UI
//! and HTTP clients send for user KEY with an empty password).

use base64::Engine;
use base64::alphabet;
use base64::engine::{DecodePaddingMode, GeneralPurpose, GeneralPurposeConfig};
use poem::http::header;
use poem::{Request, RequestBody};
use poem_openapi::registry::{MetaSecurityScheme, Registry};
use poem_openapi::{ApiExtractor, ApiExtractorType, ExtractParamOptions};

use super::error::ApiError;
use super::state::AppState;
use crate::tenant::Tenant;

/// The security scheme's name in the spec.
pub const SCHEME_NAME: &str = "apiKey";
/// The challenge sent with every 401.
pub const WWW_AUTHENTICATE: &str = "Basic realm=\"tributary\"";
/// The 401 message when no credential was sent.
pub const MISSING_CREDENTIALS: &str =
    "Missing credentials: send `Authorization: Basic <base64(API key)>`.";
const NOT_BASIC: &str =
    "Unsupported authorization scheme: send `Authorization: Basic <base64(API key)>`.";
const MALFORMED: &str =
    "Malformed credentials: the Basic credential must be the base64 encoding of the API key.";
const UNKNOWN_KEY: &str = "Unknown API key.";

/// Standard base64, with or without padding: both are sent in the wild.
const BASE64: GeneralPurpose = GeneralPurpose::new(
    &alphabet::STANDARD,
    GeneralPurposeConfig::new().with_decode_padding_mode(DecodePaddingMode::Indifferent),
);

/// Extracts the API key from an `Authorization` header value.
fn api_key_from_header(value: &str) -> Result<String, ApiError> {
    let value = value.trim();
    let (scheme, credential) = value.split_once(' ').unwrap_or((value, ""));
    if !scheme.eq_ignore_ascii_case("basic") {
        return Err(ApiError::Unauthorized(NOT_BASIC));
    }
    let decoded = BASE64
        .decode(credential.trim())
        .map_err(|_| ApiError::Unauthorized(MALFORMED))?;
    let decoded = String::from_utf8(decoded).map_err(|_| ApiError::Unauthorized(MALFORMED))?;
    // `KEY` or `KEY:` (user KEY, empty password); nothing else.
    let key = decoded.strip_suffix(':').unwrap_or(&decoded);
    if key.is_empty() || key.contains(':') || key.chars().any(char::is_control) {
        return Err(ApiError::Unauthorized(MALFORMED));
    }
    Ok(key.to_owned())
}

impl<'a> ApiExtractor<'a> for Tenant {
    const TYPES: &'static [ApiExtractorType] = &[ApiExtractorType::SecurityScheme];

    type ParamType = ();
    type ParamRawType = ();

    fn register(registry: &mut Registry) {
        registry.create_security_scheme(
            SCHEME_NAME,
            MetaSecurityScheme {
                ty: "http",
                description: Some(
                    "HTTP Basic with the API key as the whole credential: \
                     `Authorization: Basic <base64(API key)>`. base64 of `KEY:` \
                     (user KEY, empty password, as Swagger UI sends it) is accepted too.",
                ),
                name: None,
                key_in: None,
                scheme: Some("basic"),
                bearer_format: None,
                flows: None,
                openid_connect_url: None,
            },
        );
    }

    fn security_schemes() -> Vec<&'static str> {
        vec![SCHEME_NAME]
    }

    async fn from_request(
        request: &'a Request,
        _body: &mut RequestBody,
        _param_opts: ExtractParamOptions<Self::ParamType>,
    ) -> poem::Result<Self> {
        let header = request
            .headers()
            .get(header::AUTHORIZATION)
            .ok_or(ApiError::Unauthorized(MISSING_CREDENTIALS))?
            .to_str()
            .map_err(|_| ApiError::Unauthorized(MALFORMED))?;
        let key = api_key_from_header(header)?;
        let state = request
            .data::<AppState>()
            .ok_or_else(|| ApiError::internal(anyhow::anyhow!("AppState missing from request")))?;
        let client_id = state
            .key_cache
            .client_for_key(&state.db, &key)
            .await
            .map_err(ApiError::from)?
            .ok_or(ApiError::Unauthorized(UNKNOWN_KEY))?;
        super::rate_limit::admit(request, state, client_id)?;
        Ok(Tenant { client_id })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    use base64::engine::general_purpose::{STANDARD, STANDARD_NO_PAD};

    fn basic(raw: &str) -> String {
        format!("Basic {}", STANDARD.encode(raw))
    }

    #[test]
    fn unpadded_base64_is_accepted_too() {
        let unpadded = format!("Basic {}", STANDARD_NO_PAD.encode("trb_ab"));
        assert!(!unpadded.ends_with('='));
        assert_eq!(
            api_key_from_header(&unpadded).ok().as_deref(),
            Some("trb_ab")
        );
    }

    #[test]
    fn both_encodings_of_a_key_are_accepted() {
        assert_eq!(
            api_key_from_header(&basic("trb_abc")).ok().as_deref(),
            Some("trb_abc")
        );
        assert_eq!(
            api_key_from_header(&basic("trb_abc:")).ok().as_deref(),
            Some("trb_abc")
        );
        assert_eq!(
            api_key_from_header(&format!("basic {}", STANDARD.encode("k")))
                .ok()
                .as_deref(),
            Some("k")
        );
    }

    #[test]
    fn other_shapes_are_rejected() {
        for header in [
            "Bearer abc".to_owned(),
            "Basic".to_owned(),
            "Basic ".to_owned(),
            "Basic !!!not-base64".to_owned(),
            basic(""),
            basic(":"),
            basic("user:password"),
        ] {
            assert!(
                api_key_from_header(&header).is_err(),
                "{header} was accepted"
            );
        }
    }
}
