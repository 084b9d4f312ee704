//! Points in time as the API writes them: RFC 3339 in UTC with a `Z` and
//! microseconds (`2026-11-21T23:21:37.650363Z`), the precision both
//! databases keep, so a value reads back exactly as it was first returned.

use std::borrow::Cow;

use chrono::{DateTime, SecondsFormat, SubsecRound, Utc};
use schemars::{JsonSchema, Schema, SchemaGenerator, json_schema};

/// A point in time, written as RFC 3339 UTC with microseconds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub struct Timestamp(pub DateTime<Utc>);

impl Timestamp {
    /// The current time, at the stored precision.
    pub fn now() -> DateTime<Utc> {
        Utc::now().trunc_subsecs(6)
    }

    /// The written form.
    pub fn to_rfc3339(&self) -> String {
        self.0.to_rfc3339_opts(SecondsFormat::Micros, true)
    }
}

impl From<DateTime<Utc>> for Timestamp {
    fn from(value: DateTime<Utc>) -> Self {
        Self(value)
    }
}

impl serde::Serialize for Timestamp {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(&self.to_rfc3339())
    }
}

impl<'de> serde::Deserialize<'de> for Timestamp {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let text = Cow::<str>::deserialize(deserializer)?;
        DateTime::parse_from_rfc3339(&text)
            .map(|parsed| Self(parsed.with_timezone(&Utc)))
            .map_err(|error| {
                serde::de::Error::custom(format!("not an RFC 3339 date-time: {error}"))
            })
    }
}

impl JsonSchema for Timestamp {
    fn schema_name() -> Cow<'static, str> {
        "Timestamp".into()
    }

    fn inline_schema() -> bool {
        true
    }

    fn json_schema(_: &mut SchemaGenerator) -> Schema {
        json_schema!({ "type": "string", "format": "date-time" })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn timestamps_are_utc_with_z_and_microseconds() {
        let parsed =
            DateTime::parse_from_rfc3339("2026-11-21T23:21:37.650363509+01:00").expect("valid");
        let written = serde_json::to_value(Timestamp(parsed.with_timezone(&Utc).trunc_subsecs(6)))
            .expect("serializes");
        assert_eq!(written, serde_json::json!("2026-11-21T22:21:37.650363Z"));
        let read: Timestamp = serde_json::from_value(written).expect("reads back");
        assert_eq!(read.0, parsed.with_timezone(&Utc).trunc_subsecs(6));
    }
}
