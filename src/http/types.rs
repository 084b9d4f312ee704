//! Value types of the API's JSON as poem-openapi sees them: [`Nullable`],
//! [`Change`] (a field of a partial update) and the domain's [`Timestamp`].
//!
//! [`Nullable`] is a field that is always present and may be `null`.
//! poem-openapi documents `Option<T>` as an optional property, but our JSON
//! writes absent values as `null` (`"lastSync": null`), which a strict
//! validator rejects against a plain `type: string`. `Nullable<T>` declares
//! the property as required and `nullable: true`, which is what we send.

use std::borrow::Cow;

use chrono::{DateTime, Utc};

use poem_openapi::registry::{MetaSchema, MetaSchemaRef, Registry};
use poem_openapi::types::{ParseError, ParseFromJSON, ParseResult, ToJSON, Type};
use serde_json::Value;

pub use crate::timestamp::Timestamp;

/// A value that is always serialized, as `null` when absent.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Nullable<T>(pub Option<T>);

impl<T> From<Option<T>> for Nullable<T> {
    fn from(value: Option<T>) -> Self {
        Self(value)
    }
}

impl<T: Type> Type for Nullable<T> {
    const IS_REQUIRED: bool = true;

    type RawValueType = T::RawValueType;
    type RawElementValueType = T::RawElementValueType;

    fn name() -> Cow<'static, str> {
        format!("nullable_{}", T::name()).into()
    }

    fn schema_ref() -> MetaSchemaRef {
        match T::schema_ref() {
            MetaSchemaRef::Inline(schema) => MetaSchemaRef::Inline(Box::new(MetaSchema {
                nullable: true,
                ..*schema
            })),
            reference @ MetaSchemaRef::Reference(_) => {
                MetaSchemaRef::Inline(Box::new(MetaSchema {
                    all_of: vec![reference],
                    nullable: true,
                    ..MetaSchema::ANY
                }))
            }
        }
    }

    fn register(registry: &mut Registry) {
        T::register(registry);
    }

    fn as_raw_value(&self) -> Option<&Self::RawValueType> {
        self.0.as_ref().and_then(Type::as_raw_value)
    }

    fn raw_element_iter<'a>(
        &'a self,
    ) -> Box<dyn Iterator<Item = &'a Self::RawElementValueType> + 'a> {
        match &self.0 {
            Some(value) => value.raw_element_iter(),
            None => Box::new(std::iter::empty()),
        }
    }
}

impl<T: ParseFromJSON> ParseFromJSON for Nullable<T> {
    fn parse_from_json(value: Option<Value>) -> ParseResult<Self> {
        match value.unwrap_or_default() {
            Value::Null => Ok(Self(None)),
            value => T::parse_from_json(Some(value))
                .map(|parsed| Self(Some(parsed)))
                .map_err(ParseError::propagate),
        }
    }
}

impl<T: serde::Serialize> serde::Serialize for Nullable<T> {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        self.0.serialize(serializer)
    }
}

impl<T: ToJSON> ToJSON for Nullable<T> {
    fn to_json(&self) -> Option<Value> {
        match &self.0 {
            Some(value) => value.to_json(),
            None => Some(Value::Null),
        }
    }
}

impl Type for Timestamp {
    const IS_REQUIRED: bool = true;

    type RawValueType = Self;
    type RawElementValueType = Self;

    fn name() -> Cow<'static, str> {
        "string_date-time".into()
    }

    fn schema_ref() -> MetaSchemaRef {
        MetaSchemaRef::Inline(Box::new(MetaSchema::new_with_format("string", "date-time")))
    }

    fn as_raw_value(&self) -> Option<&Self::RawValueType> {
        Some(self)
    }

    fn raw_element_iter<'a>(
        &'a self,
    ) -> Box<dyn Iterator<Item = &'a Self::RawElementValueType> + 'a> {
        Box::new(self.as_raw_value().into_iter())
    }
}

impl ToJSON for Timestamp {
    fn to_json(&self) -> Option<Value> {
        Some(Value::String(self.to_rfc3339()))
    }
}

impl ParseFromJSON for Timestamp {
    fn parse_from_json(value: Option<Value>) -> ParseResult<Self> {
        match value {
            Some(Value::String(text)) => DateTime::parse_from_rfc3339(&text)
                .map(|parsed| Self(parsed.with_timezone(&Utc)))
                .map_err(|error| ParseError::custom(format!("not an RFC 3339 date-time: {error}"))),
            other => Err(ParseError::expected_type(other.unwrap_or_default())),
        }
    }
}

/// A field of a partial update (`PATCH`): left out keeps the value, `null`
/// clears it, a value replaces it. Documented as optional and nullable
/// (poem-openapi's `MaybeUndefined` is documented as not nullable, so the
/// spec, and the body check against it, would refuse the `null`).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum Change<T> {
    /// Left out: keep the value.
    #[default]
    Keep,
    /// `null`: clear it.
    Clear,
    /// A new value.
    Set(T),
}

impl<T> Change<T> {
    /// `None` to keep, `Some(None)` to clear, `Some(Some(value))` to set.
    pub fn into_option(self) -> Option<Option<T>> {
        match self {
            Self::Keep => None,
            Self::Clear => Some(None),
            Self::Set(value) => Some(Some(value)),
        }
    }
}

impl<T: Type> Type for Change<T> {
    const IS_REQUIRED: bool = false;

    type RawValueType = T::RawValueType;
    type RawElementValueType = T::RawElementValueType;

    fn name() -> Cow<'static, str> {
        format!("change_{}", T::name()).into()
    }

    fn schema_ref() -> MetaSchemaRef {
        Nullable::<T>::schema_ref()
    }

    fn register(registry: &mut Registry) {
        T::register(registry);
    }

    fn as_raw_value(&self) -> Option<&Self::RawValueType> {
        match self {
            Self::Set(value) => value.as_raw_value(),
            _ => None,
        }
    }

    fn raw_element_iter<'a>(
        &'a self,
    ) -> Box<dyn Iterator<Item = &'a Self::RawElementValueType> + 'a> {
        match self {
            Self::Set(value) => value.raw_element_iter(),
            _ => Box::new(std::iter::empty()),
        }
    }

    fn is_none(&self) -> bool {
        matches!(self, Self::Keep)
    }
}

impl<T: ParseFromJSON> ParseFromJSON for Change<T> {
    fn parse_from_json(value: Option<Value>) -> ParseResult<Self> {
        match value {
            None => Ok(Self::Keep),
            Some(Value::Null) => Ok(Self::Clear),
            Some(value) => T::parse_from_json(Some(value))
                .map(Self::Set)
                .map_err(ParseError::propagate),
        }
    }
}

impl<T: ToJSON> ToJSON for Change<T> {
    fn to_json(&self) -> Option<Value> {
        match self {
            Self::Keep => None,
            Self::Clear => Some(Value::Null),
            Self::Set(value) => value.to_json(),
        }
    }
}
