//! The OAuth 2.0 refresh-token grant (RFC 6749 §6) through the `oauth2`
//! crate, sent with the connectors' reqwest client; what a stored
//! authorization body holds (`accessToken`, `refreshToken`, `expiresAt`);
//! and how a refreshed token response updates it.

use std::sync::{Arc, Mutex};

use chrono::{DateTime, Utc};
use oauth2::basic::{BasicClient, BasicErrorResponseType};
use oauth2::{
    AuthType, ClientId, ClientSecret, HttpRequest, HttpResponse, RefreshToken, RequestTokenError,
    Scope, TokenResponse, TokenUrl,
};
use serde_json::Value;

use super::http::{PlatformHttp, scrub};
use crate::platforms::connector::ConnectorError;

/// How the OAuth client authenticates at the token endpoint.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ClientAuth {
    /// HTTP Basic with the client id and secret (Xero, Intuit).
    Basic,
    /// `client_id` and `client_secret` in the form body (Zoho).
    RequestBody,
    /// `client_id`, `client_secret` and the grant as one JSON object
    /// (`Content-Type: application/json`), as Square's `ObtainToken` takes them.
    JsonBody,
}

/// Where and how a platform refreshes tokens.
#[derive(Debug, Clone)]
pub struct TokenEndpoint {
    /// The platform's name, for messages.
    pub platform: &'static str,
    /// The token URL.
    pub url: String,
    /// How the client authenticates.
    pub client_auth: ClientAuth,
    /// The HTTP client (timeouts, retry policy).
    pub http: PlatformHttp,
    /// The `scope` a refresh asks for (space-separated), where the platform
    /// requires one (the Microsoft identity platform); `None` sends none.
    pub scope: Option<String>,
}

impl TokenEndpoint {
    /// `platform`'s token endpoint at `url`, its client authenticating as `client_auth`.
    pub fn new(
        platform: &'static str,
        url: &str,
        client_auth: ClientAuth,
        http: &PlatformHttp,
    ) -> Self {
        Self {
            platform,
            url: url.to_owned(),
            client_auth,
            http: http.clone(),
            scope: None,
        }
    }

    /// The same endpoint, asking for `scope` (space-separated) on every refresh.
    pub fn with_scope(mut self, scope: &str) -> Self {
        self.scope = Some(scope.to_owned());
        self
    }
}

/// A tenant's OAuth application for a platform.
#[derive(Clone)]
pub struct OAuthClient {
    /// The application's client id.
    pub client_id: String,
    /// Its client secret.
    pub client_secret: String,
}

impl std::fmt::Debug for OAuthClient {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OAuthClient")
            .field("client_id", &self.client_id)
            .field("client_secret", &"[redacted]")
            .finish()
    }
}

/// A successful refresh.
#[derive(Clone)]
pub struct Refreshed {
    /// The new access token.
    pub access_token: String,
    /// The new refresh token, when the platform rotated it.
    pub refresh_token: Option<String>,
    /// Seconds until the new access token expires.
    pub expires_in: Option<u64>,
    /// Zoho's `api_domain`: where this organisation's API lives.
    pub api_domain: Option<String>,
}

/// Why a refresh failed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RefreshError {
    /// The platform refused the refresh token (`invalid_grant`): the
    /// connection needs new tokens.
    Rejected(String),
    /// The platform refused the request for another reason (the OAuth
    /// client, the request) or answered nonsense.
    Failed(String),
    /// The token endpoint could not be reached or kept failing.
    Unavailable(String),
}

impl RefreshError {
    /// The connector error a sync reports.
    pub fn into_connector_error(self) -> ConnectorError {
        match self {
            Self::Rejected(message) => ConnectorError::Auth(message),
            Self::Failed(message) => ConnectorError::Failed(message),
            Self::Unavailable(message) => ConnectorError::Unavailable(message),
        }
    }
}

/// A transport failure or a transient answer (429, 5xx) of the token endpoint.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
struct Transient(String);

/// Exchanges `refresh_token` for new tokens, retrying transient failures
/// as the endpoint's retry policy says.
pub fn refresh<'a>(
    endpoint: &'a TokenEndpoint,
    client: &'a OAuthClient,
    refresh_token: &'a str,
) -> futures_util::future::BoxFuture<'a, Result<Refreshed, RefreshError>> {
    Box::pin(refresh_inner(endpoint, client, refresh_token))
}

async fn refresh_inner(
    endpoint: &TokenEndpoint,
    client: &OAuthClient,
    refresh_token: &str,
) -> Result<Refreshed, RefreshError> {
    let platform = endpoint.platform;
    let token_url = TokenUrl::new(endpoint.url.clone()).map_err(|_| {
        RefreshError::Failed(format!("the {platform} token URL is not a valid URL"))
    })?;
    let oauth = BasicClient::new(ClientId::new(client.client_id.clone()))
        .set_client_secret(ClientSecret::new(client.client_secret.clone()))
        .set_auth_type(match endpoint.client_auth {
            ClientAuth::Basic => AuthType::BasicAuth,
            ClientAuth::RequestBody | ClientAuth::JsonBody => AuthType::RequestBody,
        })
        .set_token_uri(token_url);
    let secrets = [refresh_token, client.client_secret.as_str()];
    let as_json = endpoint.client_auth == ClientAuth::JsonBody;
    let mut retry = 0;
    loop {
        let raw_body: Arc<Mutex<Option<Vec<u8>>>> = Arc::new(Mutex::new(None));
        let http = endpoint.http.client().clone();
        let captured = raw_body.clone();
        let send = move |request: HttpRequest| {
            let request = if as_json {
                form_as_json(request)
            } else {
                request
            };
            send_token_request(http.clone(), request, captured.clone(), platform)
        };
        let token = RefreshToken::new(refresh_token.to_owned());
        let scopes = endpoint
            .scope
            .iter()
            .flat_map(|scope| scope.split_whitespace())
            .map(|scope| Scope::new(scope.to_owned()));
        let outcome = oauth
            .exchange_refresh_token(&token)
            .add_scopes(scopes)
            .request_async(&send)
            .await;
        let failure = match outcome {
            Ok(response) => {
                let api_domain = raw_body
                    .lock()
                    .ok()
                    .and_then(|body| body.as_ref().and_then(|body| api_domain(body)));
                return Ok(Refreshed {
                    access_token: response.access_token().secret().clone(),
                    refresh_token: response.refresh_token().map(|token| token.secret().clone()),
                    expires_in: response.expires_in().map(|duration| duration.as_secs()),
                    api_domain,
                });
            }
            Err(RequestTokenError::ServerResponse(error)) => {
                let description = error
                    .error_description()
                    .map(|text| format!(": {}", scrub(text, &secrets)))
                    .unwrap_or_default();
                let message = format!(
                    "{platform} refused to refresh the tokens ({}){description}",
                    error.error()
                );
                return Err(match error.error() {
                    BasicErrorResponseType::InvalidGrant => RefreshError::Rejected(message),
                    // Zoho's word for an invalid or revoked refresh token.
                    BasicErrorResponseType::Extension(code) if code == "invalid_code" => {
                        RefreshError::Rejected(message)
                    }
                    _ => RefreshError::Failed(message),
                });
            }
            Err(RequestTokenError::Request(Transient(message))) => message,
            // The body may hold tokens: never quoted.
            Err(RequestTokenError::Parse(_, _)) => {
                return Err(RefreshError::Failed(format!(
                    "{platform}'s token endpoint answered something that is not a token response"
                )));
            }
            Err(RequestTokenError::Other(message)) => {
                return Err(RefreshError::Failed(format!(
                    "{platform}'s token endpoint failed: {}",
                    scrub(&message, &secrets)
                )));
            }
        };
        if retry >= endpoint.http.retry.retries {
            return Err(RefreshError::Unavailable(format!(
                "{failure} (gave up after {} attempts)",
                retry + 1
            )));
        }
        tokio::time::sleep(endpoint.http.retry.backoff(retry)).await;
        retry += 1;
    }
}

/// Sends one token request; 429, 5xx and transport failures are
/// [`Transient`]. Zoho answers some errors with 200 and an `error` field;
/// those are passed on as the 400 they are, so `oauth2` reads the error.
async fn send_token_request(
    http: reqwest::Client,
    request: HttpRequest,
    captured: Arc<Mutex<Option<Vec<u8>>>>,
    platform: &'static str,
) -> Result<HttpResponse, Transient> {
    let request = reqwest::Request::try_from(request)
        .map_err(|_| Transient(format!("the {platform} token request could not be built")))?;
    let response = http.execute(request).await.map_err(|error| {
        Transient(if error.is_timeout() {
            format!("{platform}'s token endpoint did not answer in time")
        } else {
            format!("{platform}'s token endpoint could not be reached")
        })
    })?;
    let mut status = response.status();
    if status == reqwest::StatusCode::TOO_MANY_REQUESTS || status.is_server_error() {
        return Err(Transient(format!(
            "{platform}'s token endpoint answered {status}"
        )));
    }
    let body = response
        .bytes()
        .await
        .map_err(|_| Transient(format!("{platform}'s token endpoint broke off the answer")))?
        .to_vec();
    let mut body = body;
    if status.is_success() {
        let is_error = serde_json::from_slice::<Value>(&body)
            .ok()
            .is_some_and(|value| {
                value.get("error").is_some() && value.get("access_token").is_none()
            });
        if is_error {
            status = reqwest::StatusCode::BAD_REQUEST;
        } else if let Some(numeric) = expires_in_as_number(&body) {
            body = numeric;
        } else if let Some(relative) = expires_at_as_expires_in(&body, Utc::now()) {
            body = relative;
        }
    }
    if let Ok(mut slot) = captured.lock() {
        *slot = Some(body.clone());
    }
    ::http::Response::builder()
        .status(status.as_u16())
        .header(::http::header::CONTENT_TYPE, "application/json")
        .body(body)
        .map_err(|_| Transient(format!("{platform}'s token answer could not be read")))
}

/// A token answer whose `expires_in` is a string of digits (MYOB's
/// `"1200"`, Exact Online's `"600"`), rewritten with it as the number RFC
/// 6749 says it is; `None` when it already is one (or is absent).
fn expires_in_as_number(body: &[u8]) -> Option<Vec<u8>> {
    let mut value: Value = serde_json::from_slice(body).ok()?;
    let seconds: u64 = value.get("expires_in")?.as_str()?.trim().parse().ok()?;
    value["expires_in"] = Value::from(seconds);
    serde_json::to_vec(&value).ok()
}

/// A token answer that gives the expiry as a moment (`expires_at`, RFC
/// 3339, Square's `ObtainToken`) and no `expires_in`, rewritten with the
/// seconds left from `now` as `expires_in` (0 when already past); `None`
/// otherwise.
fn expires_at_as_expires_in(body: &[u8], now: DateTime<Utc>) -> Option<Vec<u8>> {
    let mut value: Value = serde_json::from_slice(body).ok()?;
    if value.get("expires_in").is_some() {
        return None;
    }
    let at = DateTime::parse_from_rfc3339(value.get("expires_at")?.as_str()?.trim()).ok()?;
    let seconds = (at.with_timezone(&Utc) - now).num_seconds().max(0);
    value["expires_in"] = Value::from(seconds);
    serde_json::to_vec(&value).ok()
}

/// The refresh grant `oauth2` wrote as a form, rewritten as one JSON object
/// of the same fields (`ClientAuth::JsonBody`).
fn form_as_json(request: HttpRequest) -> HttpRequest {
    let (mut parts, body) = request.into_parts();
    let fields: serde_json::Map<String, Value> = url::form_urlencoded::parse(&body)
        .map(|(name, value)| (name.into_owned(), Value::String(value.into_owned())))
        .collect();
    let json = serde_json::to_vec(&Value::Object(fields)).unwrap_or_default();
    parts.headers.insert(
        ::http::header::CONTENT_TYPE,
        ::http::HeaderValue::from_static("application/json"),
    );
    parts.headers.remove(::http::header::CONTENT_LENGTH);
    HttpRequest::from_parts(parts, json)
}

/// `api_domain` of a token response, when it is an https URL (or a
/// loopback one, for local test servers).
fn api_domain(body: &[u8]) -> Option<String> {
    let value: Value = serde_json::from_slice(body).ok()?;
    let domain = value.get("api_domain")?.as_str()?.trim_end_matches('/');
    let url = url::Url::parse(domain).ok()?;
    let loopback = url.host_str() == Some("127.0.0.1") || url.host_str() == Some("localhost");
    (url.scheme() == "https" || (url.scheme() == "http" && loopback)).then(|| domain.to_owned())
}

/// The access token of a stored authorization body.
pub fn access_token(credentials: &Value) -> Result<&str, ConnectorError> {
    credentials
        .get("accessToken")
        .and_then(Value::as_str)
        .ok_or_else(|| {
            ConnectorError::Failed("the stored authorization has no access token".to_owned())
        })
}

/// The refresh token of a stored authorization body.
pub fn refresh_token(credentials: &Value) -> Option<&str> {
    credentials.get("refreshToken").and_then(Value::as_str)
}

/// When the stored access token expires, if it does.
pub fn expires_at(credentials: &Value) -> Option<DateTime<Utc>> {
    credentials
        .get("expiresAt")
        .and_then(Value::as_str)
        .and_then(|text| DateTime::parse_from_rfc3339(text).ok())
        .map(|at| at.with_timezone(&Utc))
}

/// The stored body with the refreshed tokens in place; a refresh token the
/// platform did not rotate is kept.
pub fn apply(credentials: &Value, refreshed: &Refreshed, now: DateTime<Utc>) -> Value {
    let mut updated = credentials.clone();
    if let Some(fields) = updated.as_object_mut() {
        fields.insert(
            "accessToken".to_owned(),
            Value::String(refreshed.access_token.clone()),
        );
        if let Some(refresh_token) = &refreshed.refresh_token {
            fields.insert(
                "refreshToken".to_owned(),
                Value::String(refresh_token.clone()),
            );
        }
        match refreshed.expires_in {
            Some(seconds) => {
                let seconds = i64::try_from(seconds)
                    .unwrap_or(i64::MAX)
                    .min(10 * 365 * 86_400);
                let at = now + chrono::Duration::seconds(seconds);
                fields.insert("expiresAt".to_owned(), Value::String(at.to_rfc3339()));
            }
            None => {
                fields.remove("expiresAt");
            }
        }
        if let Some(domain) = &refreshed.api_domain {
            fields.insert("apiDomain".to_owned(), Value::String(domain.clone()));
        }
    }
    updated
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_refresh_replaces_the_tokens_and_keeps_an_unrotated_refresh_token() {
        let stored = serde_json::json!({
            "tenantId": "t", "accessToken": "a1", "refreshToken": "r1", "expiresAt": "2026-01-01T00:00:00Z"
        });
        let now = Utc::now();
        let refreshed = Refreshed {
            access_token: "a2".to_owned(),
            refresh_token: None,
            expires_in: Some(1800),
            api_domain: None,
        };
        let updated = apply(&stored, &refreshed, now);
        assert_eq!(updated["accessToken"], "a2");
        assert_eq!(updated["refreshToken"], "r1");
        assert_eq!(updated["tenantId"], "t");
        let at = expires_at(&updated).expect("an expiry");
        assert!((at - now).num_seconds() >= 1799);
    }

    #[test]
    fn an_expires_in_given_as_a_string_becomes_a_number() {
        let body = br#"{"access_token":"a","token_type":"bearer","expires_in":"1200","refresh_token":"r"}"#;
        let fixed: Value =
            serde_json::from_slice(&expires_in_as_number(body).expect("rewritten")).expect("JSON");
        assert_eq!(fixed["expires_in"], 1200);
        assert_eq!(fixed["refresh_token"], "r");
        assert_eq!(expires_in_as_number(br#"{"expires_in":1800}"#), None);
    }

    #[test]
    fn an_expiry_given_as_a_moment_becomes_the_seconds_left() {
        let now = DateTime::parse_from_rfc3339("2026-11-24T12:00:00Z")
            .expect("a moment")
            .with_timezone(&Utc);
        let body = br#"{"access_token":"a","token_type":"bearer","expires_at":"2026-12-24T12:00:00Z","refresh_token":"r"}"#;
        let fixed: Value =
            serde_json::from_slice(&expires_at_as_expires_in(body, now).expect("rewritten"))
                .expect("JSON");
        assert_eq!(fixed["expires_in"], 30 * 86_400);
        assert_eq!(fixed["refresh_token"], "r");
        let past = br#"{"access_token":"a","expires_at":"2026-11-01T00:00:00Z"}"#;
        let fixed: Value =
            serde_json::from_slice(&expires_at_as_expires_in(past, now).expect("rewritten"))
                .expect("JSON");
        assert_eq!(fixed["expires_in"], 0);
        assert_eq!(
            expires_at_as_expires_in(
                br#"{"expires_in":60,"expires_at":"2026-12-24T12:00:00Z"}"#,
                now
            ),
            None
        );
        assert_eq!(
            expires_at_as_expires_in(br#"{"expires_at":"soon"}"#, now),
            None
        );
    }

    #[test]
    fn a_json_body_grant_carries_the_form_fields_as_one_object() {
        let request = ::http::Request::builder()
            .method("POST")
            .uri("https://connect.squareup.com/oauth2/token")
            .header(::http::header::CONTENT_TYPE, "application/x-www-form-urlencoded")
            .header(::http::header::CONTENT_LENGTH, "80")
            .body(b"grant_type=refresh_token&refresh_token=EQAA%2Bx&client_id=sq0idp-1&client_secret=s%26t".to_vec())
            .expect("a request");
        let request = form_as_json(request);
        assert_eq!(
            request
                .headers()
                .get(::http::header::CONTENT_TYPE)
                .map(|value| value.as_bytes()),
            Some(&b"application/json"[..])
        );
        assert!(
            request
                .headers()
                .get(::http::header::CONTENT_LENGTH)
                .is_none()
        );
        let body: Value = serde_json::from_slice(request.body()).expect("JSON");
        assert_eq!(
            body,
            serde_json::json!({
                "grant_type": "refresh_token", "refresh_token": "EQAA+x",
                "client_id": "sq0idp-1", "client_secret": "s&t"
            })
        );
    }

    #[test]
    fn only_https_or_loopback_api_domains_are_trusted() {
        assert_eq!(
            api_domain(br#"{"api_domain":"https://www.zohoapis.eu"}"#).as_deref(),
            Some("https://www.zohoapis.eu")
        );
        assert_eq!(
            api_domain(br#"{"api_domain":"http://127.0.0.1:8080/"}"#).as_deref(),
            Some("http://127.0.0.1:8080")
        );
        assert_eq!(api_domain(br#"{"api_domain":"http://evil.example"}"#), None);
    }
}
