//! [`JsonBody`]: a JSON request body checked against its schema in the
//! published spec before it is parsed.
//!
//! poem-openapi's own `Json<T>` stops at the first problem and does not name
//! the field at fault. `JsonBody<T>` documents the body exactly like
//! `Json<T>` (same schema, same content type), then validates the raw JSON
//! against that schema as it appears in `openapi.yaml`, so a client gets
//! every problem at once, each with its field, and the server can never
//! accept what the contract forbids.

use std::collections::HashMap;
use std::sync::{Arc, OnceLock, RwLock};

use jsonschema::Validator;
use poem::{FromRequest, Request, RequestBody};
use poem_openapi::impl_apirequest_for_payload;
use poem_openapi::payload::{Json, ParsePayload, Payload};
use poem_openapi::registry::{MetaSchemaRef, Registry};
use poem_openapi::types::{ParseFromJSON, Type};
use serde_json::Value;

use crate::error::{ApiError, FieldError};
use crate::{spec, validation};

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

fn parse<T: ParseFromJSON>(bytes: &[u8]) -> Result<T, ApiError> {
    if bytes.iter().all(u8::is_ascii_whitespace) {
        return Err(ApiError::validation(vec![FieldError::new(
            "body",
            "is required: send a JSON object",
        )]));
    }
    let value: Value = serde_json::from_slice(bytes).map_err(|error| {
        // serde_json's syntax errors name a position, never the content.
        ApiError::validation(vec![FieldError::new(
            "body",
            format!("is not valid JSON: {error}"),
        )])
    })?;
    let name = match T::schema_ref() {
        MetaSchemaRef::Reference(name) => name,
        MetaSchemaRef::Inline(_) => T::name().into_owned(),
    };
    let validator = validator_for(&name).map_err(ApiError::internal)?;
    let errors = validation::field_errors(&validator, &value);
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

/// Compiled validators by component name, built on first use.
fn validator_for(name: &str) -> anyhow::Result<Arc<Validator>> {
    static VALIDATORS: OnceLock<RwLock<HashMap<String, Arc<Validator>>>> = OnceLock::new();
    let validators = VALIDATORS.get_or_init(Default::default);
    if let Some(found) = validators
        .read()
        .ok()
        .and_then(|map| map.get(name).cloned())
    {
        return Ok(found);
    }
    let schema = spec::json_schema_for(spec::shared_document()?, name)?;
    let compiled = Arc::new(validation::compile(&schema)?);
    if let Ok(mut map) = validators.write() {
        map.insert(name.to_owned(), compiled.clone());
    }
    Ok(compiled)
}
