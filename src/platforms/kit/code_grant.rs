//! The OAuth 2.0 authorization-code grant (RFC 6749 §4.1.3) the link flow
//! completes: one exchange of a code, sent once and never retried, and how
//! long the token it answers lasts.

use chrono::{DateTime, Utc};
use serde_json::Value;

use super::http::{PlatformHttp, scrub};
use super::oauth::{ClientAuth, OAuthClient};

/// Why a code exchange failed; never quotes a token or the code.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ExchangeError {
    /// The platform refused the code (`invalid_grant`, `invalid_client`, ...).
    #[error("{0}")]
    Refused(String),
    /// The token endpoint could not be reached, failed, or answered nonsense.
    #[error("{0}")]
    Failed(String),
}

/// One authorization-code exchange (RFC 6749 §4.1.3): what is sent.
pub struct CodeExchange<'a> {
    /// The platform's name, for messages.
    pub platform: &'static str,
    /// The token endpoint.
    pub token_url: &'a str,
    /// How the client authenticates.
    pub client_auth: ClientAuth,
    /// The tenant's OAuth application.
    pub client: &'a OAuthClient,
    /// The code from the callback.
    pub code: &'a str,
    /// Exactly the `redirect_uri` the authorize step carried.
    pub redirect_uri: &'a str,
    /// The PKCE verifier, where the authorize step carried a challenge.
    pub code_verifier: Option<&'a str>,
}

/// Exchanges the code once, never retried (a code is single-use: a retry
/// after a lost answer could only be refused, or revoke the grant).
/// Returns the token answer's fields.
pub async fn exchange_code(
    http: &PlatformHttp,
    exchange: CodeExchange<'_>,
) -> Result<serde_json::Map<String, Value>, ExchangeError> {
    let platform = exchange.platform;
    let mut fields: Vec<(&str, &str)> = vec![
        ("grant_type", "authorization_code"),
        ("code", exchange.code),
        ("redirect_uri", exchange.redirect_uri),
    ];
    if let Some(verifier) = exchange.code_verifier {
        fields.push(("code_verifier", verifier));
    }
    let client = exchange.client;
    let mut request = http
        .client()
        .post(exchange.token_url)
        .header(::http::header::ACCEPT, "application/json");
    match exchange.client_auth {
        ClientAuth::Basic => {
            request = request
                .basic_auth(&client.client_id, Some(&client.client_secret))
                .form(&fields);
        }
        ClientAuth::RequestBody => {
            fields.push(("client_id", &client.client_id));
            fields.push(("client_secret", &client.client_secret));
            request = request.form(&fields);
        }
        ClientAuth::JsonBody => {
            fields.push(("client_id", &client.client_id));
            fields.push(("client_secret", &client.client_secret));
            let body: serde_json::Map<String, Value> = fields
                .iter()
                .map(|(name, value)| ((*name).to_owned(), Value::from(*value)))
                .collect();
            request = request.json(&body);
        }
    }
    let response = request.send().await.map_err(|error| {
        ExchangeError::Failed(if error.is_timeout() {
            format!("{platform}'s token endpoint did not answer in time")
        } else {
            format!("{platform}'s token endpoint could not be reached")
        })
    })?;
    let status = response.status();
    let body: Option<Value> = response.json().await.ok();
    let Some(Value::Object(answer)) = body else {
        return Err(ExchangeError::Failed(format!(
            "{platform}'s token endpoint answered {status} with something that is not a token response"
        )));
    };
    let secrets = [
        exchange.code,
        client.client_secret.as_str(),
        exchange.code_verifier.unwrap_or_default(),
    ];
    if let Some(error) = answer.get("error").and_then(Value::as_str) {
        let description = answer
            .get("error_description")
            .and_then(Value::as_str)
            .map(|text| format!(": {}", scrub(text, &secrets)))
            .unwrap_or_default();
        return Err(ExchangeError::Refused(format!(
            "{platform} refused the authorization code ({}){description}",
            scrub(error, &secrets)
        )));
    }
    if !status.is_success() {
        return Err(ExchangeError::Failed(format!(
            "{platform}'s token endpoint answered {status}"
        )));
    }
    if answer.get("access_token").and_then(Value::as_str).is_none() {
        return Err(ExchangeError::Failed(format!(
            "{platform}'s token answer has no access token"
        )));
    }
    Ok(answer)
}

/// Seconds an access token lasts, from a token answer: `expires_in` (a
/// number, or digits as a string), else `expires_at` (RFC 3339) from `now`.
pub fn lifetime(answer: &serde_json::Map<String, Value>, now: DateTime<Utc>) -> Option<u64> {
    match answer.get("expires_in") {
        Some(Value::Number(seconds)) => seconds.as_u64(),
        Some(Value::String(seconds)) => seconds.trim().parse().ok(),
        _ => {
            let at = DateTime::parse_from_rfc3339(answer.get("expires_at")?.as_str()?).ok()?;
            u64::try_from((at.with_timezone(&Utc) - now).num_seconds()).ok()
        }
    }
}
