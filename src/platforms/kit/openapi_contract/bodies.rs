//! The bodies of an answer: the kinds there are, each made by a walk of the
//! [`Generator`] and checked against the schema, and the changes a test
//! makes to them (what the request fixes, what the vendor types loosely).

use serde_json::Value;

use super::generator::{EnumValue, Generator, Mode};
use super::*;
use crate::platforms::kit::graphql_contract::{Place, dotted, place};

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
    pub(super) invalid_examples: Vec<(String, &'static str)>,
    /// Whether a test changed the generated bodies since they were checked.
    pub(super) changed: bool,
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

/// `bodies` named `kind 0`, `kind 1`...
fn named<'b>(kind: &str, bodies: &'b [Value]) -> Vec<(String, &'b Value)> {
    let numbered = bodies.iter().enumerate();
    numbered
        .map(|(n, body)| (format!("{kind} {n}"), body))
        .collect()
}
