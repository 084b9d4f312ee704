//! [`JsonBody`]: a JSON request body checked against its schema in the
//! published spec before it is parsed.
//!
//! poem-openapi's own `Json<T>` stops at the first problem and does not name
//! the field at fault. `JsonBody<T>` documents the body exactly like
//! `Json<T>` (same schema, same content type), then validates the raw JSON
//! against that schema as it appears in `openapi.yaml`, so a client gets
//! every problem at once, each with its field, and the server can never
//! accept what the contract forbids.

use poem::{FromRequest, Request, RequestBody};
use poem_openapi::impl_apirequest_for_payload;
use poem_openapi::payload::{Json, ParsePayload, Payload};
use poem_openapi::registry::{MetaSchema, MetaSchemaRef, Registry};
use poem_openapi::types::{ParseFromJSON, Type};
use serde_json::Value;

use crate::error::FieldError;
use crate::http::error::ApiError;
use crate::http::spec;
use crate::validation;

/// A JSON request body of type `T`, validated against its published schema.
#[derive(Debug, Clone)]
pub struct JsonBody<T>(pub T);

impl<T: Type> Payload for JsonBody<T> {
    const CONTENT_TYPE: &'static str = <Json<T> as Payload>::CONTENT_TYPE;

    fn check_content_type(content_type: &str) -> bool {
        <Json<T> as Payload>::check_content_type(content_type)
    }

    fn schema_ref() -> MetaSchemaRef {
        T::schema_ref()
    }

    fn register(registry: &mut Registry) {
        T::register(registry);
    }
}

impl<T: ParseFromJSON> ParsePayload for JsonBody<T> {
    const IS_REQUIRED: bool = true;

    async fn from_request(request: &Request, body: &mut RequestBody) -> poem::Result<Self> {
        let bytes = Vec::<u8>::from_request(request, body).await?;
        Ok(Self(parse::<T>(&bytes)?))
    }
}

impl_apirequest_for_payload!(JsonBody<T>, T: ParseFromJSON);

/// Reads a body as JSON; syntax errors name a position, never the content.
fn json_value(bytes: &[u8]) -> Result<Value, ApiError> {
    if bytes.iter().all(u8::is_ascii_whitespace) {
        return Err(ApiError::validation(vec![FieldError::new(
            "body",
            "is required: send a JSON object",
        )]));
    }
    serde_json::from_slice(bytes).map_err(|error| {
        ApiError::validation(vec![FieldError::new(
            "body",
            format!("is not valid JSON: {error}"),
        )])
    })
}

fn parse<T: ParseFromJSON>(bytes: &[u8]) -> Result<T, ApiError> {
    let value = json_value(bytes)?;
    let name = match T::schema_ref() {
        MetaSchemaRef::Reference(name) => name,
        MetaSchemaRef::Inline(_) => T::name().into_owned(),
    };
    let checker = validation::cached(&format!("component/{name}"), || {
        spec::json_schema_for(spec::shared_document()?, &name)
    })
    .map_err(ApiError::internal)?;
    let errors = checker.field_errors(&value);
    if !errors.is_empty() {
        return Err(ApiError::validation(errors));
    }
    // The schema accepted the value, so parsing fails only if the schema and
    // the type disagree: a bug on our side, not the caller's.
    T::parse_from_json(Some(value)).map_err(|error| {
        ApiError::internal(anyhow::anyhow!(
            "schema {name} accepted a body its type rejects: {}",
            error.into_message()
        ))
    })
}

/// The body of `authorizeConnection`: JSON whose schema depends on the
/// connection's platform, so the domain validates it once the connection
/// is known. The spec documents it as one of the platforms' bodies.
#[derive(Debug, Clone)]
pub struct AuthorizationPayload(pub Value);

impl Payload for AuthorizationPayload {
    const CONTENT_TYPE: &'static str = <Json<Value> as Payload>::CONTENT_TYPE;

    fn check_content_type(content_type: &str) -> bool {
        <Json<Value> as Payload>::check_content_type(content_type)
    }

    fn schema_ref() -> MetaSchemaRef {
        MetaSchemaRef::Inline(Box::new(MetaSchema {
            description: Some(
                "The authorization body of the connection's platform: the schema named by the \
                 integration's `authorizationSchemaName`. Listed with `anyOf`, not `oneOf`: some \
                 platforms' bodies have the same shape (a FreshBooks body is also a valid NetSuite \
                 one), and the connection's platform, not the body, decides which applies.",
            ),
            // `oneOf` would reject every body valid for two platforms.
            any_of: crate::platforms::authorization::authorization_schema_names()
                .into_iter()
                .map(MetaSchemaRef::Reference)
                .collect(),
            ..MetaSchema::ANY
        }))
    }

    /// poem-openapi prunes and checks references against its registry, so
    /// each platform schema is registered as a placeholder here; `spec`
    /// replaces the placeholders with the schemas schemars generates.
    fn register(registry: &mut Registry) {
        for name in crate::platforms::authorization::authorization_schema_names() {
            super::schema::register_placeholder(registry, &name);
        }
    }
}

impl ParsePayload for AuthorizationPayload {
    const IS_REQUIRED: bool = true;

    async fn from_request(request: &Request, body: &mut RequestBody) -> poem::Result<Self> {
        let bytes = Vec::<u8>::from_request(request, body).await?;
        Ok(Self(json_value(&bytes)?))
    }
}

impl_apirequest_for_payload!(AuthorizationPayload);
