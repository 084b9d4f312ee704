//! One walk of a schema, making one body: its properties as the body's kind
//! says, `allOf` merged, one alternative of each `oneOf`/`anyOf`, each enum
//! at the value asked for, and scalars from the vendor's examples, formats,
//! bounds and patterns.

use serde_json::{Map, Value, json};

use super::{Document, NEW_VALUE};
use crate::platforms::kit::graphql_contract::{Place, Step, dotted};

/// How deep (in named schemas) a body grows before it keeps to what is
/// required and to bare ids.
const DEPTH: usize = 6;

/// How deep (in named schemas) a `oneOf`/`anyOf` still takes an expanded
/// object rather than a bare id: the record's own fields, not their fields'.
const EXPAND: usize = 2;

/// Past this depth a schema is taken to be infinite: a generator fault.
const LIMIT: usize = 40;

/// What kind of body a generator run makes.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum Mode {
    /// Every property.
    Full,
    /// Every property, each nullable one `null`.
    Nulls,
    /// The required properties, and lists of objects (one item each, itself
    /// minimal) where optional, so that a list's records are read.
    Minimal,
    /// The required properties, and every object or list of objects
    /// (each itself sparse) where optional: what an optional object requires.
    Sparse,
    /// The required properties only.
    Bare,
}

/// Which value an enum gets.
#[derive(Clone, Copy)]
pub(super) enum EnumValue {
    /// The n-th the vendor lists (cycling).
    Nth(usize),
    /// [`NEW_VALUE`] where the enum is of strings.
    New,
}

/// One walk of a schema, making one body.
pub(super) struct Generator<'a> {
    document: &'a Document,
    mode: Mode,
    /// Which alternative of each `oneOf`/`anyOf` (cycling).
    choice: usize,
    pub(super) enum_value: EnumValue,
    /// The most alternatives one `oneOf`/`anyOf` offered.
    pub(super) widest: usize,
    /// Each enum met, with its values.
    pub(super) enums: Vec<(Place, Vec<Value>)>,
}

impl<'a> Generator<'a> {
    pub(super) fn new(document: &'a Document, mode: Mode, choice: usize) -> Self {
        Generator {
            document,
            mode,
            choice,
            enum_value: EnumValue::Nth(0),
            widest: 0,
            enums: Vec::new(),
        }
    }

    pub(super) fn body(&mut self, schema: &Value) -> Value {
        self.value(schema, &mut Vec::new(), &mut Vec::new())
    }

    /// A value of `schema` at `place`, `seen` the named schemas above it.
    fn value(&mut self, schema: &Value, place: &mut Place, seen: &mut Vec<String>) -> Value {
        assert!(seen.len() < LIMIT, "{}: endless schema", dotted(place));
        let (name, resolved) = self.document.resolve(schema);
        // A `$ref` with `x-nullable`/`nullable` beside it is nullable too.
        let nullable = self.document.nullable(schema) || self.document.nullable(resolved);
        if nullable && self.mode == Mode::Nulls {
            return Value::Null;
        }
        if let Some(name) = name {
            seen.push(name.to_owned());
        }
        let value = self.resolved(resolved, place, seen);
        if name.is_some() {
            seen.pop();
        }
        value
    }

    fn resolved(&mut self, schema: &Value, place: &mut Place, seen: &mut Vec<String>) -> Value {
        if let Some(parts) = schema["allOf"].as_array() {
            let merged = self.merged(schema, parts);
            return self.resolved(&merged, place, seen);
        }
        if let Some(alternatives) = schema["oneOf"].as_array().or(schema["anyOf"].as_array()) {
            let chosen = self.alternative(alternatives, seen);
            return self.value(chosen, place, seen);
        }
        if let Some(values) = schema["enum"].as_array() {
            let values: Vec<Value> = values.iter().filter(|v| !v.is_null()).cloned().collect();
            if !values.is_empty() {
                self.enums.push((place.clone(), values.clone()));
                return match self.enum_value {
                    EnumValue::New if values[0].is_string() => json!(NEW_VALUE),
                    EnumValue::New => values[0].clone(),
                    EnumValue::Nth(n) => values[n % values.len()].clone(),
                };
            }
        }
        let kind = type_of(schema);
        if kind == "object" {
            return self.object(schema, place, seen);
        }
        if kind == "array" {
            let least = schema["minItems"].as_u64().unwrap_or(1).max(1);
            let mut items = Vec::new();
            for index in 0..least {
                place.push(Step::Index(usize::try_from(index).expect("few items")));
                items.push(self.value(&schema["items"], place, seen));
                place.pop();
            }
            return Value::Array(items);
        }
        if let Some(example) = own_example(schema).filter(|example| fits(kind, example)) {
            return example;
        }
        scalar(kind, schema)
    }

    /// An object: its properties (the required ones only in a minimal
    /// body; none that would repeat a schema already above it, or go past
    /// [`DEPTH`], unless required).
    fn object(&mut self, schema: &Value, place: &mut Place, seen: &mut Vec<String>) -> Value {
        let required: Vec<&str> = schema["required"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(Value::as_str)
            .collect();
        let mut object = Map::new();
        let properties = schema["properties"].as_object();
        for (key, property) in properties.into_iter().flatten() {
            let needed = required.contains(&key.as_str());
            let (name, resolved) = self.document.resolve(property);
            let repeats = name.is_some_and(|name| seen.iter().any(|above| above == name));
            let left_out = match self.mode {
                Mode::Bare => true,
                Mode::Minimal => !is_list_of_objects(self.document, resolved),
                Mode::Sparse => {
                    let composed = ["allOf", "anyOf", "oneOf"]
                        .iter()
                        .any(|k| resolved[*k].is_array());
                    let object = type_of(resolved) == "object" || composed;
                    !object && !is_list_of_objects(self.document, resolved)
                }
                Mode::Full | Mode::Nulls => false,
            };
            let skip = resolved["writeOnly"] == json!(true)
                || (!needed && (left_out || repeats || seen.len() >= DEPTH));
            if skip {
                continue;
            }
            place.push(Step::Key(key.clone()));
            object.insert(key.clone(), self.value(property, place, seen));
            place.pop();
        }
        // A name the schema requires but does not define (Square's
        // `RiskEvaluation` requires a `status` it has no property for): any
        // value is the vendor's, so a string stands in, and every body can
        // be valid.
        for name in required {
            if !object.contains_key(name)
                && properties.is_none_or(|defined| !defined.contains_key(name))
            {
                object.insert(name.to_owned(), json!("undefined by the vendor"));
            }
        }
        let more = &schema["additionalProperties"];
        if object.is_empty() && more.is_object() && matches!(self.mode, Mode::Full | Mode::Nulls) {
            place.push(Step::Key("key".to_owned()));
            object.insert("key".to_owned(), self.value(more, place, seen));
            place.pop();
        }
        Value::Object(object)
    }

    /// The alternative of a `oneOf`/`anyOf` this body takes: by
    /// [`Generator::choice`], expanded objects first, never `null` nor one
    /// that repeats a schema above it; past [`EXPAND`] the first that is not
    /// an object (a bare id), so that bodies stay small.
    fn alternative<'s>(&mut self, alternatives: &'s [Value], seen: &[String]) -> &'s Value {
        let document = self.document;
        let mut usable: Vec<&'s Value> = alternatives
            .iter()
            .filter(|alternative| {
                let (name, resolved) = document.resolve(alternative);
                let repeats = name.is_some_and(|name| seen.iter().any(|above| above == name));
                resolved["type"] != json!("null") && !repeats
            })
            .collect();
        if usable.is_empty() {
            usable = alternatives
                .iter()
                .filter(|one| document.resolve(one).1["type"] != json!("null"))
                .collect();
        }
        let is_object = |alternative: &&Value| type_of(document.resolve(alternative).1) == "object";
        usable.sort_by_key(|alternative| !is_object(alternative));
        if seen.len() >= EXPAND
            && let Some(bare) = usable.iter().find(|alternative| !is_object(alternative))
        {
            return bare;
        }
        self.widest = self.widest.max(usable.len());
        usable
            .get(self.choice % usable.len().max(1))
            .copied()
            .unwrap_or_else(|| panic!("no usable alternative"))
    }

    /// The parts of an `allOf` (and the schema's own properties) as one
    /// object schema.
    fn merged(&self, schema: &Value, parts: &[Value]) -> Value {
        let mut merged = schema.as_object().cloned().unwrap_or_default();
        merged.remove("allOf");
        for part in parts {
            let part = self.document.resolve(part).1;
            let part = match part["allOf"].as_array() {
                Some(inner) => self.merged(part, inner),
                None => part.clone(),
            };
            for (key, value) in part.as_object().into_iter().flatten() {
                match (key.as_str(), merged.get_mut(key)) {
                    ("properties", Some(Value::Object(mine))) => {
                        for (name, property) in value.as_object().into_iter().flatten() {
                            mine.insert(name.clone(), property.clone());
                        }
                    }
                    ("required", Some(Value::Array(mine))) => {
                        mine.extend(value.as_array().into_iter().flatten().cloned());
                    }
                    (_, Some(_)) => {}
                    (_, None) => {
                        merged.insert(key.clone(), value.clone());
                    }
                }
            }
        }
        Value::Object(merged)
    }
}

/// Whether `schema` is a list of objects.
fn is_list_of_objects(document: &Document, schema: &Value) -> bool {
    type_of(schema) == "array" && {
        let items = document.resolve(&schema["items"]).1;
        type_of(items) == "object" || items["allOf"].is_array()
    }
}

/// The schema's type: its `type` (the first that is not `"null"` of a
/// list), `object` where it has properties, else `any`.
fn type_of(schema: &Value) -> &str {
    match &schema["type"] {
        Value::String(kind) => kind,
        Value::Array(kinds) => kinds
            .iter()
            .filter_map(Value::as_str)
            .find(|kind| *kind != "null")
            .unwrap_or("null"),
        _ if schema["properties"].is_object() || schema["additionalProperties"].is_object() => {
            "object"
        }
        _ => "any",
    }
}

/// The vendor's example value in the schema itself (`example`, or the first
/// of 3.1's `examples`).
fn own_example(schema: &Value) -> Option<Value> {
    let example = match &schema["example"] {
        Value::Null => schema["examples"].as_array()?.first()?.clone(),
        example => example.clone(),
    };
    (!example.is_null()).then_some(example)
}

/// Whether `example` is of JSON type `kind` (an example of the wrong type
/// is the vendor's slip, not a value it sends).
fn fits(kind: &str, example: &Value) -> bool {
    match kind {
        "string" => example.is_string(),
        "integer" => example.is_i64() || example.is_u64(),
        "number" => example.is_number(),
        "boolean" => example.is_boolean(),
        _ => false,
    }
}

/// A value of a scalar `kind` from its format and bounds.
fn scalar(kind: &str, schema: &Value) -> Value {
    let format = schema["format"].as_str().unwrap_or("");
    match kind {
        "integer" if format == "unix-time" => json!(1_790_000_000),
        "integer" => json!(bounded(schema, 2.0) as i64),
        "number" => json!(bounded(schema, 2.5)),
        "boolean" => json!(true),
        "null" => Value::Null,
        "string" => json!(text(schema)),
        _ => json!("text"),
    }
}

/// A string for `schema`: of its format, else `text` as long as
/// `minLength` asks; where it
/// has a `pattern`, the pattern's literal start (Stripe's `^/v1/invoices`)
/// or the first of a few common forms that matches.
fn text(schema: &Value) -> String {
    // Xero marks its `/Date(ms)/` strings with extensions of its own.
    if schema["x-is-msdate"] == json!(true) {
        return "/Date(1790812800000+0000)/".to_owned();
    }
    if schema["x-is-msdate-time"] == json!(true) {
        return "/Date(1790856000000)/".to_owned();
    }
    let text = match schema["format"].as_str().unwrap_or("") {
        "date-time" => "2026-10-01T12:00:00Z".to_owned(),
        "date" => "2026-10-01".to_owned(),
        "uuid" => "3fa85f64-5717-4562-b3fc-2c963f66afa6".to_owned(),
        "email" => "someone@example.com".to_owned(),
        "uri" | "url" => "https://example.com/".to_owned(),
        _ => {
            let least = schema["minLength"].as_u64().unwrap_or(0);
            let most = schema["maxLength"].as_u64().unwrap_or(u64::MAX);
            let text = "text".repeat(usize::try_from(least.div_ceil(4)).unwrap_or(1).max(1));
            text[..usize::try_from(most).unwrap_or(usize::MAX).min(text.len())].to_owned()
        }
    };
    let Some(pattern) = schema["pattern"].as_str() else {
        return text;
    };
    // The candidate must also keep to the bounds: a pattern's empty start
    // matches `^[a-zA-Z0-9_-]*$` but not Square's `minLength: 1` beside it.
    let mut bounds = json!({ "pattern": pattern });
    for bound in ["minLength", "maxLength"] {
        if let Some(value) = schema.get(bound) {
            bounds[bound] = value.clone();
        }
    }
    let matcher = jsonschema::validator_for(&bounds)
        .unwrap_or_else(|error| panic!("pattern {pattern}: {error}"));
    let start: String = pattern
        .trim_start_matches('^')
        .chars()
        .take_while(|c| c.is_alphanumeric() || "/_-:".contains(*c))
        .collect();
    let forms = [
        "10.00",
        "US",
        "USD",
        "someone@example.com",
        "2026-10-01",
        "2026-10-01T12:00:00Z",
        "en-US",
        "A1",
        "1",
    ];
    [start, text]
        .into_iter()
        .chain(forms.map(str::to_owned))
        .find(|candidate| matcher.is_valid(&json!(candidate)))
        .unwrap_or_else(|| panic!("no string of mine matches {pattern}"))
}

/// `preferred` within the schema's `minimum`/`maximum`.
fn bounded(schema: &Value, preferred: f64) -> f64 {
    let least = schema["minimum"].as_f64().unwrap_or(f64::MIN);
    let most = schema["maximum"].as_f64().unwrap_or(f64::MAX);
    preferred.max(least).min(most)
}
