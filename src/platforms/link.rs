//! Linking a platform through tributary's hosted flow (the OAuth 2.0
//! authorization code grant, RFC 6749 §4.1, with PKCE where the platform
//! takes it): what a connector declares ([`LinkSpec`]: where to send the end
//! customer, which scopes, what to ask first), what the code exchange
//! yields ([`Grant`]), and the organizations a grant reaches
//! ([`Organization`]). The flow itself (sessions, `state`, the callback)
//! lives in `crate::links`; each platform's discovery of its organization
//! is in its own connector, documented in its `NOTES.md`.

use std::collections::BTreeMap;

use hmac::{Hmac, Mac};
use serde::{Deserialize, Serialize};
use sha2::Sha256;

use super::kit::oauth::ClientAuth;

/// How a platform's authorization step is reached and its code exchanged.
#[derive(Debug, Clone)]
pub struct LinkSpec {
    /// The authorize endpoint; `{shop}` stands for the shop domain the end
    /// customer gave ([`Ask::ShopDomain`]), `{host}` for the host of the
    /// region they chose ([`Ask::Region`]).
    pub authorize_url: String,
    /// The token endpoint of the code exchange; `{shop}` and `{host}` as
    /// above. A connector whose callback names where to exchange the code
    /// (Zoho's data centre, NetSuite's account) says so in
    /// `Connector::code_token_url`.
    pub token_url: String,
    /// How the client authenticates there.
    pub client_auth: ClientAuth,
    /// The scopes asked for: the read scopes of what the connector syncs,
    /// and what a refresh token needs. Empty where the platform takes no
    /// `scope` (Exact Online's come from the app's registration): none is sent.
    pub scopes: &'static [&'static str],
    /// How the platform separates scopes (a space, or Shopify's comma).
    pub scope_separator: &'static str,
    /// Whether the authorize step carries a PKCE S256 challenge.
    pub pkce: bool,
    /// Other parameters the authorize step needs (`access_type=offline`).
    pub authorize_parameters: &'static [(&'static str, &'static str)],
    /// What the hosted page asks the end customer before the authorize step.
    pub ask: Option<Ask>,
    /// How the callback proves it came from the platform, beyond `state`.
    pub callback_check: CallbackCheck,
    /// Whether the code exchange is done by tributary itself (the sandbox,
    /// whose consent page tributary serves): no token endpoint is called.
    pub in_process: bool,
}

impl LinkSpec {
    /// The authorization code flow: the authorize step at `authorize_url`,
    /// the code exchanged at `token_url` with `client_auth`, `scopes` asked
    /// for (space-separated); no PKCE, nothing asked first, no callback
    /// signature. The methods below say what a platform does otherwise.
    pub fn code_flow(
        authorize_url: impl Into<String>,
        token_url: impl Into<String>,
        client_auth: ClientAuth,
        scopes: &'static [&'static str],
    ) -> Self {
        Self {
            authorize_url: authorize_url.into(),
            token_url: token_url.into(),
            client_auth,
            scopes,
            scope_separator: " ",
            pkce: false,
            authorize_parameters: &[],
            ask: None,
            callback_check: CallbackCheck::None,
            in_process: false,
        }
    }

    /// The authorize step carries a PKCE S256 challenge.
    pub fn with_pkce(mut self) -> Self {
        self.pkce = true;
        self
    }

    /// The authorize step carries these parameters too.
    pub fn with_parameters(mut self, parameters: &'static [(&'static str, &'static str)]) -> Self {
        self.authorize_parameters = parameters;
        self
    }

    /// Scopes are joined by `separator` (Shopify's comma).
    pub fn scopes_separated_by(mut self, separator: &'static str) -> Self {
        self.scope_separator = separator;
        self
    }

    /// The hosted page asks `ask` first.
    pub fn asking(mut self, ask: Ask) -> Self {
        self.ask = Some(ask);
        self
    }

    /// The callback's own signature is checked.
    pub fn checked_by(mut self, check: CallbackCheck) -> Self {
        self.callback_check = check;
        self
    }

    /// tributary plays the authorization server itself (the sandbox).
    pub fn in_process(mut self) -> Self {
        self.in_process = true;
        self
    }
}

/// What the hosted page asks before sending the end customer on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ask {
    /// The shop's `{shop}.myshopify.com` domain (Shopify's authorize URL is per shop).
    ShopDomain,
    /// The region whose site holds the customer's data (Exact Online's
    /// country): one of these, chosen from a list; its `host` fills `{host}`.
    Region(&'static [Region]),
}

/// A region the customer can choose ([`Ask::Region`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Region {
    /// Its value, as the authorization body names it (`nl`, `uk`).
    pub value: &'static str,
    /// Its name on the page.
    pub label: &'static str,
    /// Its site, where the authorize step and the code exchange go.
    pub host: &'static str,
}

/// A check of the callback's own signature.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CallbackCheck {
    /// Nothing beyond `state`.
    None,
    /// Shopify: `hmac` is the hex HMAC-SHA256 of the other query parameters,
    /// sorted and joined as `k=v&k=v`, keyed with the client secret; `shop`
    /// must be a `*.myshopify.com` domain.
    ShopifyHmac,
}

/// What the code exchange and the callback yielded. Its `Debug` never shows
/// the tokens.
#[derive(Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Grant {
    /// The access token.
    pub access_token: String,
    /// The refresh token, when the platform issued one.
    pub refresh_token: Option<String>,
    /// Seconds the access token lasts, when the platform says.
    pub expires_in: Option<u64>,
    /// The token answer's other fields (`merchant_id`, `stripe_user_id`,
    /// `api_domain`, ...), tokens removed.
    pub token_fields: serde_json::Map<String, serde_json::Value>,
    /// The callback's query parameters other than `code` and `state`
    /// (`realmId`, `shop`, ...).
    pub callback: BTreeMap<String, String>,
    /// What the end customer gave on the hosted page (the shop domain,
    /// the region).
    pub inputs: BTreeMap<String, String>,
    /// The tenant's OAuth client id the grant was issued to (MYOB wants it
    /// on every API call as `x-myobapi-key`).
    #[serde(default)]
    pub client_id: String,
}

impl std::fmt::Debug for Grant {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Grant")
            .field("access_token", &"[redacted]")
            .field(
                "refresh_token",
                &self.refresh_token.as_ref().map(|_| "[redacted]"),
            )
            .field("expires_in", &self.expires_in)
            .field(
                "token_fields",
                &self.token_fields.keys().collect::<Vec<_>>(),
            )
            .field("callback", &self.callback.keys().collect::<Vec<_>>())
            .field("client_id", &self.client_id)
            .finish_non_exhaustive()
    }
}

impl Grant {
    /// A callback parameter, or what the end customer gave under `name`.
    pub fn given(&self, name: &str) -> Option<&str> {
        self.callback
            .get(name)
            .or_else(|| self.inputs.get(name))
            .map(String::as_str)
    }

    /// A string field of the token answer.
    pub fn token_field(&self, name: &str) -> Option<&str> {
        self.token_fields.get(name).and_then(|value| value.as_str())
    }

    /// A string claim of the token answer's OpenID Connect `id_token`
    /// (Microsoft's `tid`), read from the token endpoint's own TLS answer
    /// as OpenID Connect Core §3.1.3.7 allows; the token itself is not kept.
    pub fn id_token_claim(&self, name: &str) -> Option<&str> {
        self.token_fields
            .get(ID_TOKEN_CLAIMS)
            .and_then(|claims| claims.get(name))
            .and_then(|value| value.as_str())
    }

    /// The token fields of an authorization body: `accessToken`,
    /// `refreshToken` and `expiresIn` where the grant has them.
    pub fn token_body(&self) -> serde_json::Map<String, serde_json::Value> {
        let mut body = serde_json::Map::new();
        body.insert("accessToken".to_owned(), self.access_token.clone().into());
        if let Some(refresh_token) = &self.refresh_token {
            body.insert("refreshToken".to_owned(), refresh_token.clone().into());
        }
        if let Some(expires_in) = self.expires_in {
            body.insert("expiresIn".to_owned(), expires_in.into());
        }
        body
    }
}

/// The token field under which the `id_token`'s claims are kept.
pub const ID_TOKEN_CLAIMS: &str = "id_token_claims";

/// The claims of a JWT's payload (not its signature: see
/// [`Grant::id_token_claim`]); `None` when `token` is not a JWT.
pub fn jwt_claims(token: &str) -> Option<serde_json::Map<String, serde_json::Value>> {
    use base64::Engine as _;
    let payload = token.split('.').nth(1)?;
    let bytes = base64::engine::general_purpose::URL_SAFE_NO_PAD
        .decode(payload.trim_end_matches('='))
        .ok()?;
    match serde_json::from_slice(&bytes).ok()? {
        serde_json::Value::Object(claims) => Some(claims),
        _ => None,
    }
}

/// An organization a grant reaches, as the platform names it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Organization {
    /// Its id: what the authorization body's organization field holds.
    pub id: String,
    /// Its name, for the organization picker.
    pub name: String,
    /// The platform's own handle of this consent to it, where letting go of
    /// it differs from its id (Xero's connection id), or what else its
    /// authorization body needs (Business Central's environment).
    pub handle: Option<String>,
}

/// Whether `shop` is a Shopify shop's permanent domain
/// (`{name}.myshopify.com`), the only host the authorize step and the token
/// exchange may be sent to.
pub fn is_shop_domain(shop: &str) -> bool {
    let Some(name) = shop.strip_suffix(".myshopify.com") else {
        return false;
    };
    let mut characters = name.chars();
    characters
        .next()
        .is_some_and(|first| first.is_ascii_lowercase() || first.is_ascii_digit())
        && name.len() <= 63
        && characters.all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-')
}

/// Checks Shopify's callback signature: `hmac` over the other parameters
/// (sorted, `k=v` joined by `&`), keyed with the client secret, compared in
/// constant time.
pub fn shopify_hmac_matches(parameters: &[(String, String)], client_secret: &str) -> bool {
    let Some(given) = parameters
        .iter()
        .find(|(name, _)| name == "hmac")
        .map(|(_, value)| value)
    else {
        return false;
    };
    let Ok(given) = decode_hex(given) else {
        return false;
    };
    let mut rest: Vec<&(String, String)> = parameters
        .iter()
        .filter(|(name, _)| name != "hmac" && name != "signature")
        .collect();
    rest.sort();
    let message = rest
        .iter()
        .map(|(name, value)| format!("{name}={value}"))
        .collect::<Vec<_>>()
        .join("&");
    let Ok(mut mac) = Hmac::<Sha256>::new_from_slice(client_secret.as_bytes()) else {
        return false;
    };
    mac.update(message.as_bytes());
    mac.verify_slice(&given).is_ok()
}

/// The hex HMAC-SHA256 Shopify would send for `parameters` (for fakes and tests).
pub fn shopify_hmac(parameters: &[(&str, &str)], client_secret: &str) -> String {
    let mut sorted = parameters.to_vec();
    sorted.sort();
    let message = sorted
        .iter()
        .map(|(name, value)| format!("{name}={value}"))
        .collect::<Vec<_>>()
        .join("&");
    let mut mac = match Hmac::<Sha256>::new_from_slice(client_secret.as_bytes()) {
        Ok(mac) => mac,
        Err(_) => return String::new(),
    };
    mac.update(message.as_bytes());
    mac.finalize()
        .into_bytes()
        .iter()
        .map(|byte| format!("{byte:02x}"))
        .collect()
}

fn decode_hex(text: &str) -> Result<Vec<u8>, ()> {
    if !text.len().is_multiple_of(2) {
        return Err(());
    }
    (0..text.len())
        .step_by(2)
        .map(|index| u8::from_str_radix(text.get(index..index + 2).ok_or(())?, 16).map_err(|_| ()))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_permanent_shop_domains_are_shops() {
        assert!(is_shop_domain("acme-store.myshopify.com"));
        assert!(is_shop_domain("7shop.myshopify.com"));
        for bad in [
            "myshopify.com",
            ".myshopify.com",
            "-acme.myshopify.com",
            "acme.myshopify.com.evil.example",
            "evil.example/acme.myshopify.com",
            "acme.example.com",
            "ACME.myshopify.com",
            "a_b.myshopify.com",
        ] {
            assert!(!is_shop_domain(bad), "{bad}");
        }
    }

    #[test]
    fn shopify_signatures_are_checked_over_the_sorted_parameters() {
        let secret = "hush";
        let signed = [
            ("code", "abc"),
            ("shop", "acme.myshopify.com"),
            ("state", "xyz"),
            ("timestamp", "1700000000"),
        ];
        let hmac = shopify_hmac(&signed, secret);
        let mut parameters: Vec<(String, String)> = signed
            .iter()
            .rev()
            .map(|(name, value)| ((*name).to_owned(), (*value).to_owned()))
            .collect();
        parameters.push(("hmac".to_owned(), hmac.clone()));
        assert!(shopify_hmac_matches(&parameters, secret));
        assert!(!shopify_hmac_matches(&parameters, "other secret"));
        parameters[0].1 = "1700000001".to_owned();
        assert!(!shopify_hmac_matches(&parameters, secret));
        assert!(!shopify_hmac_matches(&[], secret));
    }
}
