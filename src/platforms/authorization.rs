//! Authorization bodies: what every platform's body tells us, how a body
//! type is described (JSON Schema), validated and reduced to the facts and
//! sealed payload we store, and the parts several bodies share.

use chrono::{DateTime, Utc};
use schemars::generate::SchemaSettings;
use schemars::{JsonSchema, SchemaGenerator};
use serde::Deserialize;
use serde_json::Value;

use super::tokens::Expiry;
use super::{Platform, all};
use crate::error::{Error, FieldError};
use crate::validation;

/// What every authorization body tells us beyond its tokens.
pub trait AuthorizationBody: serde::de::DeserializeOwned + JsonSchema {
    /// The platform's organization identifier, shown on the connection.
    fn organization_id(&self) -> String;
    /// When the access token expires; an error names the field at fault.
    fn expiry(&self, now: DateTime<Utc>) -> Result<Expiry, FieldError>;
}

/// Which of a platform's environments the tokens belong to.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Environment {
    /// Live data (the default).
    #[default]
    Production,
    /// The platform's developer sandbox.
    Sandbox,
}

/// An authorization body made of an organization identifier and
/// [`ExpiringTokens`](super::tokens::ExpiringTokens).
macro_rules! expiring_token_body {
    ($body:ty => $organization:ident) => {
        impl $crate::platforms::authorization::AuthorizationBody for $body {
            fn organization_id(&self) -> String {
                self.$organization.to_string()
            }
            fn expiry(
                &self,
                now: chrono::DateTime<chrono::Utc>,
            ) -> Result<$crate::platforms::tokens::Expiry, $crate::error::FieldError> {
                self.tokens.expiry(now)
            }
        }
    };
}
pub(crate) use expiring_token_body;

/// An authorization body made of an organization identifier and a
/// [`LongLivedToken`](super::tokens::LongLivedToken).
macro_rules! long_lived_token_body {
    ($body:ty => $organization:ident) => {
        impl $crate::platforms::authorization::AuthorizationBody for $body {
            fn organization_id(&self) -> String {
                self.$organization.to_string()
            }
            fn expiry(
                &self,
                _now: chrono::DateTime<chrono::Utc>,
            ) -> Result<$crate::platforms::tokens::Expiry, $crate::error::FieldError> {
                Ok($crate::platforms::tokens::Expiry::Never)
            }
        }
    };
}
pub(crate) use long_lived_token_body;

/// A platform's authorization body type, as plain functions so the
/// catalogue can be a static table.
#[derive(Clone, Copy)]
pub struct BodyKind {
    schema_name: fn() -> String,
    json_schema: fn() -> Value,
    add_openapi_schema: fn(&mut SchemaGenerator),
    accept: fn(Value, DateTime<Utc>) -> Result<AcceptedAuthorization, Error>,
    matches: fn(&Value) -> bool,
}

impl std::fmt::Debug for BodyKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&(self.schema_name)())
    }
}

impl BodyKind {
    /// The body type `T`.
    pub const fn of<T: AuthorizationBody>() -> Self {
        Self {
            schema_name: schema_name_of::<T>,
            json_schema: json_schema_of::<T>,
            add_openapi_schema: add_openapi_schema_of::<T>,
            accept: accept::<T>,
            matches: matches::<T>,
        }
    }

    /// The component name in `openapi.yaml` (`XeroAuthorization`).
    pub fn schema_name(&self) -> String {
        (self.schema_name)()
    }

    /// Adds the body's OpenAPI 3.0 schema to `generator` (for the spec).
    pub fn add_openapi_schema(&self, generator: &mut SchemaGenerator) {
        (self.add_openapi_schema)(generator)
    }

    /// A standalone JSON Schema (draft 7) of the body.
    pub fn json_schema(&self) -> Value {
        (self.json_schema)()
    }

    /// Whether `body` is valid against this schema.
    pub fn matches(&self, body: &Value) -> bool {
        (self.matches)(body)
    }

    /// Validates `body` and reduces it to what is stored.
    pub fn accept(&self, body: Value, now: DateTime<Utc>) -> Result<AcceptedAuthorization, Error> {
        (self.accept)(body, now)
    }
}

/// A validated authorization: non-secret facts, and the body to seal.
pub struct AcceptedAuthorization {
    /// The platform's organization identifier.
    pub organization_id: String,
    /// When the access token expires, if it does.
    pub access_token_expires_at: Option<DateTime<Utc>>,
    /// The body as stored (sealed): `expiresIn` turned into an absolute `expiresAt`.
    pub sealed_body: Value,
}

// The body holds the tokens: `Debug` shows only what may be shown.
impl std::fmt::Debug for AcceptedAuthorization {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AcceptedAuthorization")
            .field("organization_id", &self.organization_id)
            .field("access_token_expires_at", &self.access_token_expires_at)
            .field("sealed_body", &"<redacted>")
            .finish()
    }
}

fn schema_name_of<T: JsonSchema>() -> String {
    T::schema_name().into_owned()
}

fn json_schema_of<T: JsonSchema>() -> Value {
    SchemaSettings::draft07()
        .into_generator()
        .into_root_schema_for::<T>()
        .to_value()
}

fn add_openapi_schema_of<T: JsonSchema>(generator: &mut SchemaGenerator) {
    generator.subschema_for::<T>();
}

fn checker_of<T: JsonSchema>() -> Result<std::sync::Arc<validation::Checker>, Error> {
    let name = schema_name_of::<T>();
    validation::cached(&format!("authorization/{name}"), || {
        Ok(json_schema_of::<T>())
    })
    .map_err(Error::internal)
}

fn matches<T: JsonSchema>(body: &Value) -> bool {
    checker_of::<T>().is_ok_and(|checker| checker.field_errors(body).is_empty())
}

/// The other platforms whose authorization body `body` is: usually one, but
/// some bodies have the same shape (FreshBooks and NetSuite).
pub fn platforms_of_body(body: &Value, except: &str) -> Vec<&'static Platform> {
    all()
        .iter()
        .copied()
        .filter(|platform| {
            platform.platform_key != except
                && platform
                    .authorization
                    .is_some_and(|kind| kind.matches(body))
        })
        .collect()
}

fn accept<T: AuthorizationBody>(
    body: Value,
    now: DateTime<Utc>,
) -> Result<AcceptedAuthorization, Error> {
    let checker = checker_of::<T>()?;
    let errors = checker.field_errors(&body);
    if !errors.is_empty() {
        return Err(Error::Invalid(errors));
    }
    // The schema describes every accepted value, so this fails only on a
    // value the schema misses. serde's own message can quote the input, so
    // it is never shown; the path names the field where serde can tell.
    let parsed: T = serde_path_to_error::deserialize(&body).map_err(|error| {
        let field = error.path().to_string();
        let field = match field.as_str() {
            "" | "." | "?" => "body".to_owned(),
            _ => field,
        };
        Error::Invalid(vec![FieldError::new(
            field,
            "has a value this platform does not accept",
        )])
    })?;
    let expiry = parsed
        .expiry(now)
        .map_err(|error| Error::Invalid(vec![error]))?;
    let access_token_expires_at = match expiry {
        Expiry::At(at) => Some(at),
        Expiry::Never => None,
    };
    let mut sealed_body = body;
    if let Some(fields) = sealed_body.as_object_mut() {
        fields.remove("expiresIn");
        if let Some(at) = access_token_expires_at {
            fields.insert("expiresAt".to_owned(), Value::String(at.to_rfc3339()));
        }
    }
    Ok(AcceptedAuthorization {
        organization_id: parsed.organization_id(),
        access_token_expires_at,
        sealed_body,
    })
}

/// The component names of every authorization body, in catalogue order.
pub fn authorization_schema_names() -> Vec<String> {
    all()
        .iter()
        .filter_map(|integration| integration.authorization)
        .map(|body| body.schema_name())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::platforms::find;
    use serde_json::json;

    fn accept_for(platform_key: &str, body: Value) -> Result<AcceptedAuthorization, Error> {
        let integration = find(platform_key).expect("in the catalogue");
        integration
            .authorization
            .expect("self-service")
            .accept(body, Utc::now())
    }

    fn fields_of(result: Result<AcceptedAuthorization, Error>) -> Vec<String> {
        match result {
            Err(Error::Invalid(errors)) => {
                let mut fields: Vec<String> =
                    errors.into_iter().map(|error| error.item_id).collect();
                fields.sort();
                fields
            }
            other => panic!("expected a validation error, got {other:?}"),
        }
    }

    #[test]
    fn a_xero_body_yields_its_tenant_and_an_absolute_expiry() {
        let accepted = accept_for(
            "xero",
            json!({
                "tenantId": "4f3c9b8e-1d2a-4c5b-9e8f-7a6b5c4d3e2f",
                "accessToken": "at", "refreshToken": "rt", "expiresIn": "1800"
            }),
        )
        .expect("accepted");
        assert_eq!(
            accepted.organization_id,
            "4f3c9b8e-1d2a-4c5b-9e8f-7a6b5c4d3e2f"
        );
        let expires = accepted.access_token_expires_at.expect("expires");
        assert!((expires - Utc::now()).num_seconds() > 1790);
        assert!(accepted.sealed_body.get("expiresIn").is_none());
        assert!(accepted.sealed_body.get("expiresAt").is_some());
    }

    #[test]
    fn every_problem_of_a_body_is_named() {
        let fields = fields_of(accept_for(
            "quickbooks-online",
            json!({"realmId": "abc", "acessToken": "x", "refreshToken": "", "expiresIn": -5}),
        ));
        assert_eq!(
            fields,
            [
                "accessToken",
                "acessToken",
                "expiresIn",
                "realmId",
                "refreshToken"
            ]
        );
    }

    #[test]
    fn expiry_is_required_where_tokens_expire_and_optional_where_they_do_not() {
        let fields = fields_of(accept_for(
            "xero",
            json!({
                "tenantId": "4f3c9b8e-1d2a-4c5b-9e8f-7a6b5c4d3e2f", "accessToken": "a", "refreshToken": "r"
            }),
        ));
        assert_eq!(fields, ["expiresIn"]);
        let stripe = accept_for(
            "stripe",
            json!({"stripeUserId": "acct_123", "accessToken": "sk"}),
        )
        .expect("accepted");
        assert_eq!(stripe.access_token_expires_at, None);
        let shopify = fields_of(accept_for(
            "shopify",
            json!({
                "shopDomain": "acme.myshopify.com", "accessToken": "a", "refreshToken": "r"
            }),
        ));
        assert_eq!(shopify, ["expiresIn"]);
    }

    #[test]
    fn digit_strings_beyond_a_bound_are_named_errors() {
        let fields = fields_of(accept_for(
            "sandbox",
            json!({"organizationId": "sbx-org", "accessToken": "a", "invoiceCount": "9999999"}),
        ));
        assert_eq!(fields, ["invoiceCount"]);
    }
}
