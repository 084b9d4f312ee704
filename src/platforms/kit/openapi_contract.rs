//! Test support: a REST connector's answers generated from its vendor's
//! OpenAPI document (`tests/contracts/`, `SOURCES.md` there), as
//! `graphql_contract` does for GraphQL. For one operation's success answer
//! ([`Document::answer`]) it gives ([`Answer::bodies`]) the vendor's
//! documented examples and bodies made from the schema: every property
//! present (the vendor's `example` values where it gives them), every
//! nullable one `null`, only the required ones (minimal, sparse and bare:
//! [`Bodies`]), every enum value in turn, and every string enum a word the
//! vendor does not list. Each generated body is checked against the schema
//! with `jsonschema`, so a fault of the generator cannot pass for an answer
//! the vendor may send. [`hold`] reads them all with a connector's own
//! types and mapping.
//!
//! The documents are OpenAPI 3.0 (`nullable: true`), OpenAPI 3.1 (`"null"`
//! in `type`) and Swagger 2.0 (`definitions`, `x-nullable: true`). Only
//! local `$ref`s are followed; `allOf` is merged; of a `oneOf`/`anyOf` an
//! expanded object is preferred to a bare id (Stripe's expandable fields),
//! and each full body takes the next alternative. The check reads `oneOf`
//! as `anyOf`: vendors write `oneOf` of shapes that overlap, and a body
//! takes one of them.

use std::path::Path;

use jsonschema::{Draft, Validator};
use serde_json::{Map, Value, json};

use super::graphql_contract::{Place, Step, dotted, place};
use super::records::Read;
use crate::platforms::connector::RecordIssue;

/// How deep (in named schemas) a body grows before it keeps to what is
/// required and to bare ids.
const DEPTH: usize = 6;

/// How deep (in named schemas) a `oneOf`/`anyOf` still takes an expanded
/// object rather than a bare id: the record's own fields, not their fields'.
const EXPAND: usize = 2;

/// Past this depth a schema is taken to be infinite: a generator fault.
const LIMIT: usize = 40;

/// The word put in every string enum for the body of values the vendor
/// does not list (yet).
pub(crate) const NEW_VALUE: &str = "TRIBUTARY_NEW_VALUE";

/// Which OpenAPI a document is written in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Version {
    Swagger2,
    OpenApi30,
    OpenApi31,
}

/// A vendored OpenAPI document.
pub(crate) struct Document {
    file: String,
    root: Value,
    version: Version,
}

impl Document {
    /// The vendored document `file` (under `tests/contracts/`).
    pub(crate) fn load(file: &str) -> Document {
        let path = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/contracts")
            .join(file);
        let text = std::fs::read_to_string(&path)
            .unwrap_or_else(|error| panic!("{}: {error}", path.display()));
        let root: Value = serde_json::from_str(&text)
            .unwrap_or_else(|error| panic!("{}: {error}", path.display()));
        let version = match (root["swagger"].as_str(), root["openapi"].as_str()) {
            (Some("2.0"), _) => Version::Swagger2,
            (_, Some(version)) if version.starts_with("3.0") => Version::OpenApi30,
            (_, Some(version)) if version.starts_with("3.1") => Version::OpenApi31,
            other => panic!("{file}: not an OpenAPI document I know ({other:?})"),
        };
        Document {
            file: file.to_owned(),
            root,
            version,
        }
    }

    /// The success answer (200, else 201, else the first 2xx) of `method`
    /// `path`, as the document names them (`GET`, `/Invoices`).
    pub(crate) fn answer(&self, method: &str, path: &str) -> Answer<'_> {
        let what = format!("{}: {method} {path}", self.file);
        let operation = &self.root["paths"][path][method.to_ascii_lowercase()];
        let responses = operation["responses"]
            .as_object()
            .unwrap_or_else(|| panic!("{what} is not in the document"));
        let code = ["200", "201"]
            .into_iter()
            .find(|code| responses.contains_key(*code))
            .or_else(|| {
                responses
                    .keys()
                    .map(String::as_str)
                    .find(|code| code.starts_with('2'))
            })
            .unwrap_or_else(|| panic!("{what} has no success answer"));
        let response = self.resolve(&responses[code]).1;
        let mut examples = Vec::new();
        let schema = if self.version == Version::Swagger2 {
            if let Some(documented) = response["examples"].as_object() {
                if documented.keys().any(|key| key.contains('/')) {
                    for (media, body) in documented {
                        examples.push((format!("examples.{media}"), body.clone()));
                    }
                } else {
                    // Keyed by the body's own fields, not by a media type
                    // (Amazon's Sellers model): the whole object is the body.
                    examples.push(("examples".to_owned(), response["examples"].clone()));
                }
            }
            response["schema"].clone()
        } else {
            let content = response["content"]
                .as_object()
                .unwrap_or_else(|| panic!("{what} {code} has no content"));
            let media = content
                .get("application/json")
                .or_else(|| {
                    content
                        .iter()
                        .find(|(name, _)| name.ends_with("json"))
                        .map(|(_, media)| media)
                })
                .unwrap_or_else(|| panic!("{what} {code} has no JSON content"));
            if !media["example"].is_null() {
                examples.push(("example".to_owned(), media["example"].clone()));
            }
            for (name, example) in media["examples"].as_object().into_iter().flatten() {
                let example = self.resolve(example).1;
                examples.push((format!("examples.{name}"), example["value"].clone()));
            }
            media["schema"].clone()
        };
        // Amazon documents its sandbox's answers beside the response.
        for (kind, cases) in response["x-amzn-api-sandbox"]
            .as_object()
            .into_iter()
            .flatten()
        {
            for (index, case) in cases.as_array().into_iter().flatten().enumerate() {
                examples.push((format!("sandbox.{kind}[{index}]"), case["response"].clone()));
            }
        }
        let (_, own) = self.resolve(&schema);
        if own["example"].is_object() {
            examples.push(("example of the schema".to_owned(), own["example"].clone()));
        }
        assert!(schema.is_object(), "{what} {code} has no schema");
        Answer {
            document: self,
            what,
            schema,
            examples,
        }
    }

    /// `schema` with its `$ref` followed (to the end of a chain), and the
    /// name of the schema it refers to.
    fn resolve<'a>(&'a self, mut schema: &'a Value) -> (Option<&'a str>, &'a Value) {
        let mut name = None;
        while let Some(reference) = schema["$ref"].as_str() {
            let pointer = reference
                .strip_prefix('#')
                .unwrap_or_else(|| panic!("{}: {reference} is not local", self.file));
            schema = self
                .root
                .pointer(pointer)
                .unwrap_or_else(|| panic!("{}: {reference} is not in the document", self.file));
            name = Some(reference);
        }
        (name, schema)
    }

    /// Whether `schema` lets the value be `null`, in the document's dialect.
    fn nullable(&self, schema: &Value) -> bool {
        match self.version {
            Version::Swagger2 => schema["x-nullable"] == json!(true),
            Version::OpenApi30 => schema["nullable"] == json!(true),
            // An enum that does not list `null` keeps it out, whatever the type says.
            Version::OpenApi31
                if schema["enum"]
                    .as_array()
                    .is_some_and(|v| !v.contains(&Value::Null)) =>
            {
                false
            }
            Version::OpenApi31 => {
                let null = json!("null");
                schema["type"] == null
                    || schema["type"].as_array().is_some_and(|t| t.contains(&null))
                    || ["anyOf", "oneOf"].iter().any(|key| {
                        schema[*key]
                            .as_array()
                            .is_some_and(|all| all.iter().any(|one| one["type"] == null))
                    })
            }
        }
    }

    /// The document as JSON Schema for `jsonschema`: OpenAPI 3.0's and
    /// Swagger 2.0's `nullable` written as a `"null"` type (3.1 is JSON
    /// Schema already), and, `without_enums`, no string enum.
    fn as_json_schema(&self, without_enums: bool) -> Value {
        let mut root = self.root.clone();
        rewrite(&mut root, self.version, without_enums);
        root
    }
}

/// Rewrites every schema under `value` as [`Document::as_json_schema`] says.
fn rewrite(value: &mut Value, version: Version, without_enums: bool) {
    match value {
        Value::Object(object) => {
            object
                .values_mut()
                .for_each(|v| rewrite(v, version, without_enums));
            // Vendors write `oneOf` of shapes that overlap (BigCommerce's
            // consignments: every object matches both); a body takes one.
            if let Some(alternatives) = object.remove("oneOf") {
                object.insert("anyOf".to_owned(), alternatives);
            }
            if without_enums
                && object
                    .get("enum")
                    .and_then(Value::as_array)
                    .is_some_and(|values| values.iter().any(Value::is_string))
            {
                object.remove("enum");
            }
            let flag = match version {
                Version::Swagger2 => "x-nullable",
                Version::OpenApi30 => "nullable",
                Version::OpenApi31 => return,
            };
            if object.get(flag) != Some(&json!(true)) {
                return;
            }
            object.remove(flag);
            match object.get("type").cloned() {
                Some(Value::String(kind)) if !object.contains_key("$ref") => {
                    object.insert("type".to_owned(), json!([kind, "null"]));
                    if let Some(Value::Array(values)) = object.get_mut("enum") {
                        values.push(Value::Null);
                    }
                }
                _ if object.contains_key("$ref")
                    || ["allOf", "anyOf", "oneOf"]
                        .iter()
                        .any(|k| object.contains_key(*k)) =>
                {
                    let rest = Value::Object(std::mem::take(object));
                    object.insert("anyOf".to_owned(), json!([{"type": "null"}, rest]));
                }
                _ => {}
            }
        }
        Value::Array(items) => items
            .iter_mut()
            .for_each(|v| rewrite(v, version, without_enums)),
        _ => {}
    }
}

/// One operation's success answer.
pub(crate) struct Answer<'a> {
    document: &'a Document,
    what: String,
    schema: Value,
    examples: Vec<(String, Value)>,
}

/// What kind of body a generator run makes.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Mode {
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

/// The bodies of an answer, each named by its kind (`full 1`, `enums 3`).
pub(crate) struct Bodies {
    /// The vendor's documented answers.
    pub(crate) examples: Vec<(String, Value)>,
    /// Every property present: one body per alternative of the widest
    /// `oneOf`/`anyOf` (the expanded object first).
    pub(crate) full: Vec<Value>,
    /// Each full body with every nullable property `null`.
    pub(crate) nulls: Vec<Value>,
    /// Only the required properties, recursively, but for optional lists
    /// of objects (the records of a page, an invoice's lines), kept with one
    /// item.
    pub(crate) minimal: Value,
    /// Only the required properties, recursively, but for optional objects
    /// and lists of objects, each kept with only what it requires (an amount
    /// object without its optional fields).
    pub(crate) sparse: Value,
    /// Only the required properties, recursively (a page's optional list of
    /// records absent).
    pub(crate) bare: Value,
    /// The first full body with each enum at its n-th value (cycling), as
    /// many bodies as the longest enum has values.
    pub(crate) enums: Vec<Value>,
    /// The first full body with every string enum [`NEW_VALUE`].
    pub(crate) unknown: Value,
    /// Where the first full body has an enum, with every value the vendor
    /// lists for it.
    pub(crate) enum_places: Vec<(Place, Vec<Value>)>,
    /// The examples the vendor's schema refuses, and why that is fine.
    invalid_examples: Vec<(String, &'static str)>,
    /// Whether a test changed the generated bodies since they were checked.
    changed: bool,
}

impl Bodies {
    /// The examples and every body with all its properties (all but the
    /// minimal, sparse and bare ones), named.
    pub(crate) fn complete(&self) -> Vec<(String, &Value)> {
        let examples = self
            .examples
            .iter()
            .map(|(name, body)| (name.clone(), body));
        examples
            .chain(named("full", &self.full))
            .chain(named("nulls", &self.nulls))
            .chain(named("enums", &self.enums))
            .chain([("unknown enums".to_owned(), &self.unknown)])
            .collect()
    }

    /// How many bodies of each kind, for a test's report.
    pub(crate) fn counts(&self) -> String {
        format!(
            "{} examples, {} full, {} nulls, 1 minimal, 1 sparse, 1 bare, {} enums, 1 unknown enums \
             ({} enum places)",
            self.examples.len(),
            self.full.len(),
            self.nulls.len(),
            self.enums.len(),
            self.enum_places.len()
        )
    }

    /// `value` at `place` (`Invoices.0.Type`) in every body that has that
    /// place's parent: what the request fixes (Xero's invoices are asked for
    /// with `Type=="ACCREC"`), so no answer holds another value.
    pub(crate) fn pin(&mut self, at: &str, value: Value) {
        let at = place(at);
        for body in self.generated_mut() {
            set(body, &at, value.clone());
        }
    }

    /// `value` for every string of every property named `key`, in every
    /// generated body: where a vendor's schema types a field more loosely
    /// than its own words (Square's `created_at` is a `string` "in RFC 3339
    /// format"), as `graphql_contract::Sample::set` does.
    pub(crate) fn set_every(&mut self, key: &str, value: &Value) {
        for body in self.generated_mut() {
            set_strings(body, key, value);
        }
    }

    /// Every generated body (all but the examples), to change: [`hold`]
    /// checks them against the schema again.
    fn generated_mut(&mut self) -> impl Iterator<Item = &mut Value> {
        self.changed = true;
        let lists = [&mut self.full, &mut self.nulls, &mut self.enums];
        let single = [
            &mut self.minimal,
            &mut self.sparse,
            &mut self.bare,
            &mut self.unknown,
        ];
        lists.into_iter().flatten().chain(single)
    }

    /// The enum at `at` in the first full body (`Invoices.0.Status`), with
    /// every value the vendor lists for it.
    pub(crate) fn enum_at(&self, at: &str) -> (Place, Vec<Value>) {
        self.enum_places
            .iter()
            .find(|(place, _)| dotted(place) == at)
            .cloned()
            .unwrap_or_else(|| panic!("no enum at {at}"))
    }

    /// Marks the documented example `name` as one the vendor's own schema
    /// refuses, for `why`: [`hold`] reads it all the same, and fails once
    /// the schema takes it.
    pub(crate) fn invalid_example(&mut self, name: &str, why: &'static str) {
        assert!(
            self.examples.iter().any(|(example, _)| example == name),
            "no example {name}"
        );
        self.invalid_examples.push((name.to_owned(), why));
    }
}

impl Answer<'_> {
    /// The answer with `keys` of its top level required, for `why`: where
    /// the connector rightly fails a page without them (Amazon's `payload`,
    /// which a success answer always carries), so that the bodies that lack
    /// them are not generated.
    pub(crate) fn requiring(mut self, keys: &[&str], why: &str) -> Self {
        assert!(!why.is_empty(), "say why");
        self.schema = json!({"allOf": [self.schema, {"required": keys}]});
        self
    }

    /// The documented examples and the generated bodies, every generated
    /// one checked against the schema (the unknown-enum one with the enums
    /// left out). [`hold`] checks the documented examples, which a test may
    /// excuse ([`Bodies::invalid_example`]) where the vendor's own do not
    /// hold.
    pub(crate) fn bodies(&self) -> Bodies {
        let mut first = Generator::new(self.document, Mode::Full, 0);
        let full0 = first.body(&self.schema);
        let widest = first.widest.max(1);
        let enum_places = first.enums.clone();
        let mut full = vec![full0];
        let mut nulls = Vec::new();
        for choice in 0..widest {
            if choice > 0 {
                full.push(Generator::new(self.document, Mode::Full, choice).body(&self.schema));
            }
            nulls.push(Generator::new(self.document, Mode::Nulls, choice).body(&self.schema));
        }
        let longest = enum_places.iter().map(|(_, values)| values.len()).max();
        let enums = (0..longest.unwrap_or(0))
            .map(|n| {
                let mut generator = Generator::new(self.document, Mode::Full, 0);
                generator.enum_value = EnumValue::Nth(n);
                generator.body(&self.schema)
            })
            .collect();
        let mut unknown = Generator::new(self.document, Mode::Full, 0);
        unknown.enum_value = EnumValue::New;
        let bodies = Bodies {
            examples: self.examples.clone(),
            full,
            nulls,
            minimal: Generator::new(self.document, Mode::Minimal, 0).body(&self.schema),
            sparse: Generator::new(self.document, Mode::Sparse, 0).body(&self.schema),
            bare: Generator::new(self.document, Mode::Bare, 0).body(&self.schema),
            enums,
            unknown: unknown.body(&self.schema),
            enum_places,
            invalid_examples: Vec::new(),
            changed: false,
        };
        self.check_generated(&bodies);
        bodies
    }

    /// Every generated body valid against the schema (the unknown-enum one
    /// but for its enums), or a panic naming the body and what is wrong.
    fn check_generated(&self, bodies: &Bodies) {
        let checker = self.validator(false);
        let generated = [&bodies.full, &bodies.nulls, &bodies.enums]
            .into_iter()
            .flatten()
            .chain([&bodies.minimal, &bodies.sparse, &bodies.bare]);
        for body in generated {
            if let Err(errors) = errors(&checker, body) {
                panic!(
                    "{}: a generated body is not the vendor's:\n{errors}\n{body:#}",
                    self.what
                );
            }
        }
        if let Err(errors) = errors(&self.validator(true), &bodies.unknown) {
            panic!(
                "{}: the unknown-enum body breaks more than enums:\n{errors}",
                self.what
            );
        }
    }

    /// Whether `body` is valid against the answer's schema, or the
    /// validator's words.
    pub(crate) fn check(&self, body: &Value) -> Result<(), String> {
        errors(&self.validator(false), body)
    }

    /// The answer's schema as a validator (formats checked), its `$ref`s
    /// resolved in the whole document.
    fn validator(&self, without_enums: bool) -> Validator {
        let mut root = self.document.as_json_schema(without_enums);
        let mut schema = self.schema.clone();
        rewrite(&mut schema, self.document.version, without_enums);
        let draft = match self.document.version {
            Version::OpenApi31 => Draft::Draft202012,
            Version::Swagger2 | Version::OpenApi30 => Draft::Draft4,
        };
        // The answer's schema at the root, the document beside it for its
        // `$ref`s (`#/components/...`, `#/definitions/...`).
        let object = root.as_object_mut().expect("a document is an object");
        object.retain(|key, _| key == "components" || key == "definitions");
        object.insert("allOf".to_owned(), json!([schema]));
        jsonschema::options()
            .with_draft(draft)
            .should_validate_formats(true)
            .build(&root)
            .unwrap_or_else(|error| panic!("{}: the schema does not compile: {error}", self.what))
    }
}

/// The validator's errors for `body`, one a line with where they are.
fn errors(validator: &Validator, body: &Value) -> Result<(), String> {
    let errors: Vec<String> = validator
        .iter_errors(body)
        .map(|error| format!("{}: {error}", error.instance_path()))
        .collect();
    if errors.is_empty() {
        Ok(())
    } else {
        Err(errors.join("\n"))
    }
}

/// What a record of ours cannot exist without, although the vendor may
/// leave it out: where it is in a body (`Invoices.0.Date`), the issue's
/// field when it is missing (`Date`), and why.
pub(crate) struct Needed {
    pub(crate) place: &'static str,
    pub(crate) field: &'static str,
    pub(crate) why: &'static str,
}

/// Holds the connector's reading of an answer to its bodies. `read` reads a
/// page from its text (as `PlatformHttp::json` does) and its records
/// through the connector's own mapping. Every page reads; every documented
/// example is valid against the schema and, with every full, nulls, enums
/// and unknown-enums body, reads with no record an issue (full, nulls and
/// enums bodies with at least one record); the minimal and sparse bodies,
/// given back what is `needed`, read with no issue, and the minimal one
/// without each needed field has that field's issue alone; the bare body reads with no issue but those
/// of needed fields.
pub(crate) fn hold<R>(
    answer: &Answer<'_>,
    bodies: &Bodies,
    read: impl Fn(&str) -> Result<Read<R>, String>,
    needed: &[Needed],
) {
    let what = &answer.what;
    println!("{what}: {}", bodies.counts());
    if bodies.changed {
        answer.check_generated(bodies);
    }
    let read = |name: &str, body: &Value| {
        read(&body.to_string()).unwrap_or_else(|error| panic!("{what}, {name}: {error}"))
    };
    let checker = answer.validator(false);
    for (name, example) in &bodies.examples {
        let excused = bodies
            .invalid_examples
            .iter()
            .find(|(invalid, _)| invalid == name);
        match (errors(&checker, example), excused) {
            (Err(errors), None) => {
                panic!(
                    "{what}, {name}: the vendor's example is not valid against its schema:\n{errors}"
                )
            }
            (Ok(()), Some((_, why))) => panic!("{what}, {name} is valid now (it was not: {why})"),
            _ => {}
        }
    }
    for (name, body) in bodies.complete() {
        let page = read(&name, body);
        assert!(
            page.issues.is_empty(),
            "{what}, {name}: {:?}\n{body:#}",
            page.issues
        );
        let generated = !name.starts_with("example") && name != "unknown enums";
        let any = !page.records.is_empty();
        assert!(!generated || any, "{what}, {name}: no record read");
    }
    let given_back = |body: &Value| {
        let mut body = body.clone();
        for need in needed {
            let at = place(need.place);
            let value = get(&bodies.full[0], &at)
                .unwrap_or_else(|| panic!("{what}: {} is not in the full body", need.place));
            let parent = set(&mut body, &at, value.clone());
            assert!(parent, "{what}: {} has no parent", need.place);
        }
        body
    };
    let minimal = given_back(&bodies.minimal);
    for (name, body) in [
        ("minimal", &minimal),
        ("sparse", &given_back(&bodies.sparse)),
    ] {
        let page = read(name, body);
        assert!(
            page.issues.is_empty(),
            "{what}, {name}: {:?}\n{body:#}",
            page.issues
        );
        assert!(!page.records.is_empty(), "{what}, {name}: no record read");
    }
    for need in needed {
        let mut without = minimal.clone();
        remove(&mut without, &place(need.place));
        let page = read("minimal", &without);
        let fields: Vec<Option<&str>> = page.issues.iter().map(|i| i.field.as_deref()).collect();
        let expected = [Some(need.field)];
        assert_eq!(
            fields, expected,
            "{what}, without {} ({})",
            need.place, need.why
        );
    }
    let page = read("bare", &bodies.bare);
    for issue in &page.issues {
        let field = issue.field.as_deref();
        let known = needed.iter().any(|need| Some(need.field) == field);
        assert!(known, "{what}, bare: {issue:?}");
    }
}

/// The value at `at` in `body`, if there is one.
pub(crate) fn get<'b>(body: &'b Value, at: &[Step]) -> Option<&'b Value> {
    at.iter().try_fold(body, |value, step| match step {
        Step::Key(key) => value.get(key),
        Step::Index(index) => value.get(index),
    })
}

/// `value` at `at` in `body`, where its parent is an object or a list long
/// enough; whether it was set.
pub(crate) fn set(body: &mut Value, at: &[Step], value: Value) -> bool {
    let Some((last, parent)) = at.split_last() else {
        *body = value;
        return true;
    };
    let parent = parent.iter().try_fold(body, |node, step| match step {
        Step::Key(key) => node.get_mut(key),
        Step::Index(index) => node.get_mut(index),
    });
    match (parent, last) {
        (Some(Value::Object(object)), Step::Key(key)) => {
            object.insert(key.clone(), value);
            true
        }
        (Some(Value::Array(items)), Step::Index(index)) if *index < items.len() => {
            items[*index] = value;
            true
        }
        _ => false,
    }
}

/// `value` for every string of a property named `key` under `node`.
fn set_strings(node: &mut Value, key: &str, value: &Value) {
    match node {
        Value::Object(object) => {
            for (name, child) in object.iter_mut() {
                if name == key && child.is_string() {
                    *child = value.clone();
                } else {
                    set_strings(child, key, value);
                }
            }
        }
        Value::Array(items) => items
            .iter_mut()
            .for_each(|item| set_strings(item, key, value)),
        _ => {}
    }
}

/// An answer that is one object, not a list of records (Xero's connections,
/// Square's locations, an account): read as `T`, a missing field failing it
/// whole, reported as that field's issue so that [`hold`] can hold it to
/// what is [`Needed`]; any other failure is the page's.
pub(crate) fn whole<T: serde::de::DeserializeOwned>(text: &str) -> Result<Read<T>, String> {
    match serde_json::from_str::<T>(text) {
        Ok(answer) => Ok(Read {
            records: vec![answer],
            issues: Vec::new(),
        }),
        Err(error) => {
            let message = error.to_string();
            let missing = message
                .strip_prefix("missing field `")
                .and_then(|rest| rest.split('`').next())
                .ok_or(message.clone())?;
            Ok(Read {
                records: Vec::new(),
                issues: vec![RecordIssue {
                    record_id: None,
                    field: Some(missing.to_owned()),
                    reason: message,
                }],
            })
        }
    }
}

/// `body` without the property at `at`.
pub(crate) fn remove(body: &mut Value, at: &[Step]) {
    if let Some((Step::Key(key), parent)) = at.split_last()
        && let Some(Value::Object(object)) = parent.iter().try_fold(body, |node, step| match step {
            Step::Key(key) => node.get_mut(key),
            Step::Index(index) => node.get_mut(index),
        })
    {
        object.remove(key);
    }
}

/// `bodies` named `kind 0`, `kind 1`...
fn named<'b>(kind: &str, bodies: &'b [Value]) -> Vec<(String, &'b Value)> {
    let numbered = bodies.iter().enumerate();
    numbered
        .map(|(n, body)| (format!("{kind} {n}"), body))
        .collect()
}

/// Which value an enum gets.
#[derive(Clone, Copy)]
enum EnumValue {
    /// The n-th the vendor lists (cycling).
    Nth(usize),
    /// [`NEW_VALUE`] where the enum is of strings.
    New,
}

/// One walk of a schema, making one body.
struct Generator<'a> {
    document: &'a Document,
    mode: Mode,
    /// Which alternative of each `oneOf`/`anyOf` (cycling).
    choice: usize,
    enum_value: EnumValue,
    /// The most alternatives one `oneOf`/`anyOf` offered.
    widest: usize,
    /// Each enum met, with its values.
    enums: Vec<(Place, Vec<Value>)>,
}

impl<'a> Generator<'a> {
    fn new(document: &'a Document, mode: Mode, choice: usize) -> Self {
        Generator {
            document,
            mode,
            choice,
            enum_value: EnumValue::Nth(0),
            widest: 0,
            enums: Vec::new(),
        }
    }

    fn body(&mut self, schema: &Value) -> Value {
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
    let matcher = jsonschema::validator_for(&json!({ "pattern": pattern }))
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

#[cfg(test)]
mod tests {
    use super::*;

    fn document(version: Version, root: Value) -> Document {
        Document {
            file: "inline".to_owned(),
            root,
            version,
        }
    }

    fn openapi30() -> Document {
        document(
            Version::OpenApi30,
            json!({
                "openapi": "3.0.0",
                "paths": {"/things": {"get": {"responses": {"200": {"content": {"application/json": {
                    "example": {"things": []},
                    "schema": {"type": "object", "properties": {
                        "things": {"type": "array", "items": {"$ref": "#/components/schemas/Thing"}}
                    }}
                }}}}}}},
                "components": {"schemas": {
                    "Thing": {"type": "object", "required": ["id"], "properties": {
                        "id": {"type": "string", "example": "th_1"},
                        "when": {"type": "string", "format": "date-time", "nullable": true},
                        "status": {"type": "string", "enum": ["open", "paid", "void"]},
                        "owner": {"nullable": true, "anyOf": [
                            {"type": "string"}, {"$ref": "#/components/schemas/Owner"}
                        ]},
                        "parent": {"$ref": "#/components/schemas/Thing"}
                    }},
                    "Owner": {"type": "object", "required": ["name"], "properties": {
                        "name": {"type": "string"}
                    }}
                }}
            }),
        )
    }

    #[test]
    fn full_nulls_minimal_and_enum_bodies_of_an_openapi_30_answer() {
        let document = openapi30();
        let answer = document.answer("GET", "/things");
        let bodies = answer.bodies();
        assert_eq!(
            bodies.examples,
            [("example".to_owned(), json!({"things": []}))]
        );
        // The expanded owner first, then the bare id; the recursive parent left out.
        let thing = &bodies.full[0]["things"][0];
        assert_eq!(thing["id"], "th_1");
        assert_eq!(thing["when"], "2026-10-01T12:00:00Z");
        assert_eq!(thing["owner"], json!({"name": "text"}));
        assert!(thing.get("parent").is_none());
        assert_eq!(bodies.full[1]["things"][0]["owner"], "text");
        let nulled = &bodies.nulls[0]["things"][0];
        assert_eq!(
            (&nulled["when"], &nulled["owner"]),
            (&Value::Null, &Value::Null)
        );
        assert_eq!(bodies.minimal, json!({"things": [{"id": "th_1"}]}));
        let owner = &bodies.sparse["things"][0]["owner"];
        assert_eq!(owner, &json!({"name": "text"}));
        assert_eq!(bodies.bare, json!({}));
        let statuses: Vec<&Value> = bodies
            .enums
            .iter()
            .map(|b| &b["things"][0]["status"])
            .collect();
        assert_eq!(statuses, [&json!("open"), &json!("paid"), &json!("void")]);
        assert_eq!(bodies.unknown["things"][0]["status"], NEW_VALUE);
        assert_eq!(bodies.enum_at("things.0.status").1.len(), 3);
        // The validator holds the vendor's types: a nullable field null is
        // fine, a required one missing or a number for a string is not.
        assert!(
            answer
                .check(&json!({"things": [{"id": "a", "when": null}]}))
                .is_ok()
        );
        assert!(answer.check(&json!({"things": [{"when": null}]})).is_err());
        assert!(answer.check(&json!({"things": [{"id": 5}]})).is_err());
        assert!(
            answer
                .check(&json!({"things": [{"id": "a", "status": "new"}]}))
                .is_err()
        );
    }

    use super::super::records::{Each, Keyed};

    /// A thing as a connector that takes what the document allows reads it.
    #[derive(serde::Deserialize)]
    #[allow(dead_code, reason = "read only to be deserialized")]
    struct Thing {
        id: String,
        when: Option<String>,
        status: Option<String>,
    }

    /// A thing read with `when` required, which the document lets be null.
    #[derive(serde::Deserialize)]
    #[allow(dead_code, reason = "read only to be deserialized")]
    struct Strict {
        id: String,
        when: String,
    }

    /// A thing read with `status` a closed Rust enum.
    #[derive(serde::Deserialize)]
    #[allow(dead_code, reason = "read only to be deserialized")]
    struct Closed {
        id: String,
        status: Option<Status>,
    }

    #[derive(serde::Deserialize)]
    #[serde(rename_all = "lowercase")]
    enum Status {
        Open,
        Paid,
        Void,
    }

    impl Keyed for Thing {
        const ID: &'static str = "/id";
    }

    impl Keyed for Strict {
        const ID: &'static str = "/id";
    }

    impl Keyed for Closed {
        const ID: &'static str = "/id";
    }

    /// A page of things read as `T`.
    fn things<T: serde::de::DeserializeOwned + Keyed>(text: &str) -> Result<Read<T>, String> {
        #[derive(serde::Deserialize)]
        #[serde(bound = "T: serde::de::DeserializeOwned")]
        struct Page<T> {
            #[serde(default = "Each::default")]
            things: Each<T>,
        }
        let page: Page<T> = serde_json::from_str(text).map_err(|e| e.to_string())?;
        Ok(page.things.read(|thing| Ok(Some(thing))))
    }

    const ID: Needed = Needed {
        place: "things.0.id",
        field: "id",
        why: "a thing is kept under its id",
    };

    #[test]
    fn hold_passes_a_reader_that_takes_what_the_document_allows() {
        let document = openapi30();
        let answer = document.answer("GET", "/things");
        hold(&answer, &answer.bodies(), things::<Thing>, &[ID]);
    }

    #[test]
    #[should_panic(expected = "nulls 0")]
    fn hold_fails_a_reader_that_requires_what_the_document_lets_be_null() {
        let document = openapi30();
        let answer = document.answer("GET", "/things");
        hold(&answer, &answer.bodies(), things::<Strict>, &[ID]);
    }

    #[test]
    #[should_panic(expected = "unknown enums")]
    fn hold_fails_a_reader_whose_enum_refuses_a_new_value() {
        let document = openapi30();
        let answer = document.answer("GET", "/things");
        hold(&answer, &answer.bodies(), things::<Closed>, &[ID]);
    }

    #[test]
    fn swagger_20_and_openapi_31_say_null_their_own_way() {
        let swagger = document(
            Version::Swagger2,
            json!({
                "swagger": "2.0",
                "paths": {"/t": {"get": {"responses": {"200": {
                    "schema": {"$ref": "#/definitions/T"},
                    "examples": {"application/json": {"a": "x"}}
                }}}}},
                "definitions": {"T": {"type": "object", "properties": {
                    "a": {"type": "string", "x-nullable": true}
                }}}
            }),
        );
        let answer = swagger.answer("GET", "/t");
        let bodies = answer.bodies();
        assert_eq!(bodies.examples[0].1, json!({"a": "x"}));
        assert_eq!(bodies.nulls[0], json!({"a": null}));
        let modern = document(
            Version::OpenApi31,
            json!({
                "openapi": "3.1.0",
                "paths": {"/t": {"get": {"responses": {"200": {"content": {"application/hal+json": {
                    "schema": {"type": "object", "properties": {
                        "a": {"type": ["string", "null"], "examples": ["vendor's"]}
                    }}
                }}}}}}}
            }),
        );
        let bodies = modern.answer("GET", "/t").bodies();
        assert_eq!(bodies.full[0], json!({"a": "vendor's"}));
        assert_eq!(bodies.nulls[0], json!({"a": null}));
    }
}
