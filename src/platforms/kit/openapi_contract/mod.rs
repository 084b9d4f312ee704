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
//!
//! This module: an operation's [`Answer`], [`hold`] and what it holds a
//! reading to ([`Needed`]; [`whole`] for an answer that is one object), and
//! the edits a test makes to a body ([`get`], [`set`], [`remove`]).
//! [`document`]: the vendored document read in its dialect. [`bodies`]: the
//! kinds of body an answer gets, and a test's changes to them.
//! [`generator`]: one walk of a schema, making one body. [`check`]: the
//! document as JSON Schema, and bodies checked against it.

mod bodies;
mod check;
mod document;
mod generator;
#[cfg(test)]
mod tests;

pub(crate) use bodies::Bodies;
pub(crate) use document::Document;

use serde_json::{Value, json};

use self::check::errors;
use super::graphql_contract::{Step, place};
use super::records::Read;
use crate::platforms::connector::RecordIssue;

/// The word put in every string enum for the body of values the vendor
/// does not list (yet).
pub(crate) const NEW_VALUE: &str = "TRIBUTARY_NEW_VALUE";

/// One operation's success answer.
pub(crate) struct Answer<'a> {
    document: &'a Document,
    what: String,
    schema: Value,
    examples: Vec<(String, Value)>,
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
