//! Linking Xero through the hosted flow: the authorization code grant at
//! Xero's identity server (PKCE S256, the read scopes of invoices and
//! contacts, `offline_access` for a refresh token); the tenants the consent
//! reached, from `GET /connections` filtered by the access token's
//! `authentication_event_id` (several organisations may be chosen on one
//! consent); and the unchosen ones disconnected with
//! `DELETE /connections/{id}`, so the tokens serve one connection. Sources:
//! `NOTES.md`, "Linking".

use serde::Deserialize;
use serde_json::Value;

use crate::platforms::connector::ConnectorError;
use crate::platforms::kit::http::{Auth, Call, PlatformHttp};
use crate::platforms::kit::oauth::ClientAuth;
use crate::platforms::link::{CallbackCheck, Grant, LinkSpec, Organization, jwt_claims};

const PLATFORM: &str = "Xero";

/// The read scopes of what the connector syncs and `offline_access`: the
/// granular scopes required of apps created from 2 March 2026
/// (`accounting.invoices.read`: invoices, bills, credit notes;
/// `accounting.payments.read`: payments and bill payments), and
/// `accounting.settings.read` (the chart, tax rates, items, the
/// organisation) and `accounting.journals.read` (the general ledger), as
/// Xero's document has them (NOTES.md, "Linking").
pub const SCOPES: &[&str] = &[
    "offline_access",
    "accounting.invoices.read",
    "accounting.payments.read",
    "accounting.contacts.read",
    "accounting.settings.read",
    "accounting.journals.read",
];

/// Xero's authorize step and code exchange.
pub fn spec(authorize_url: &str, token_url: &str) -> LinkSpec {
    LinkSpec {
        authorize_url: authorize_url.to_owned(),
        token_url: token_url.to_owned(),
        client_auth: ClientAuth::Basic,
        scopes: SCOPES,
        scope_separator: " ",
        pkce: true,
        authorize_parameters: &[],
        ask: None,
        callback_check: CallbackCheck::None,
        in_process: false,
    }
}

/// One row of `GET /connections`.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct TenantConnection {
    id: String,
    tenant_id: String,
    tenant_type: Option<String>,
    tenant_name: Option<String>,
}

/// The `authentication_event_id` claim of Xero's access token (a JWT),
/// which names the consent that issued it.
pub fn authentication_event(access_token: &str) -> Option<String> {
    jwt_claims(access_token)?
        .get("authentication_event_id")?
        .as_str()
        .map(str::to_owned)
}

/// Every tenant this consent connected: `GET /connections?authEventId=`.
async fn consented(
    http: &PlatformHttp,
    api_base: &str,
    grant: &Grant,
) -> Result<Vec<TenantConnection>, ConnectorError> {
    let url = format!("{api_base}/connections");
    let mut call = Call::get(
        PLATFORM,
        "the connections of the consent",
        url,
        Auth::Bearer(&grant.access_token),
    );
    if let Some(event) = authentication_event(&grant.access_token) {
        call = call.query("authEventId", event);
    }
    http.json(&call).await
}

/// The organisations this consent connected (practices are not offered).
pub async fn organizations(
    http: &PlatformHttp,
    api_base: &str,
    grant: &Grant,
) -> Result<Vec<Organization>, ConnectorError> {
    Ok(consented(http, api_base, grant)
        .await?
        .into_iter()
        .filter(|connection| {
            connection
                .tenant_type
                .as_deref()
                .is_none_or(|kind| kind.eq_ignore_ascii_case("ORGANISATION"))
        })
        .map(|connection| Organization {
            name: connection
                .tenant_name
                .unwrap_or_else(|| connection.tenant_id.clone()),
            id: connection.tenant_id,
            handle: Some(connection.id),
        })
        .collect())
}

/// Disconnects every tenant of the consent but `keep` (practices included).
pub async fn release(
    http: &PlatformHttp,
    api_base: &str,
    grant: &Grant,
    keep: Option<&Organization>,
) -> Result<(), ConnectorError> {
    for connection in consented(http, api_base, grant).await? {
        if keep.is_some_and(|kept| kept.id.eq_ignore_ascii_case(&connection.tenant_id)) {
            continue;
        }
        let url = format!("{api_base}/connections/{}", connection.id);
        let call = Call::delete(
            PLATFORM,
            "a disconnection",
            url,
            Auth::Bearer(&grant.access_token),
        );
        http.json_or_default::<Value>(&call).await?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use base64::Engine as _;
    use base64::engine::general_purpose::URL_SAFE_NO_PAD;

    #[test]
    fn the_consent_is_read_from_the_access_token() {
        let claims = URL_SAFE_NO_PAD.encode(br#"{"authentication_event_id":"ev-1","sub":"x"}"#);
        assert_eq!(
            authentication_event(&format!("header.{claims}.signature")).as_deref(),
            Some("ev-1")
        );
        assert_eq!(authentication_event("opaque-token"), None);
    }
}
