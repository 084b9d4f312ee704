//! One record never fails a page: a list's records are read one by one
//! ([`Each`]), so that a record the connector cannot read (a type it did
//! not expect, a value out of range) costs that record alone. It is reported
//! as a [`RecordIssue`]: its id where the id itself can be read, the field,
//! and why, in words that never repeat what the record holds.

use std::fmt;
use std::marker::PhantomData;

use serde::Deserialize;
use serde::de::{self, DeserializeOwned, Deserializer, SeqAccess, Visitor};
use serde_json::Value;
use serde_json::value::RawValue;

use crate::platforms::connector::RecordIssue;

/// A platform's record type that says where its id is, so that a record
/// that cannot be read is still named.
pub trait Keyed {
    /// The JSON pointer of the id in the record as the platform sends it
    /// (`/InvoiceID`, `/node/id`).
    const ID: &'static str;

    /// The record's id as tributary keeps it, from the text at [`Keyed::ID`]
    /// (the same text, unless the platform's id is, say, a URL ending in it).
    fn kept_id(platform_id: &str) -> Option<String> {
        Some(platform_id.to_owned())
    }
}

/// Why a record that was read cannot become ours (an amount out of range,
/// a date that is no date): the field, where one field is to blame, and a
/// reason that names no value of the record.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Unreadable {
    /// The platform's field, as a path (`LineItems[0].UnitAmount`).
    pub field: Option<String>,
    /// Why, without the field's value.
    pub reason: String,
}

impl Unreadable {
    /// `field` cannot be read, for `reason`.
    pub fn field(field: impl Into<String>, reason: impl Into<String>) -> Self {
        Self {
            field: Some(field.into()),
            reason: reason.into(),
        }
    }

    /// The record cannot be read, for `reason` (no one field is to blame).
    pub fn record(reason: impl Into<String>) -> Self {
        Self {
            field: None,
            reason: reason.into(),
        }
    }
}

impl fmt::Display for Unreadable {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.field {
            Some(field) => write!(f, "{field}: {}", self.reason),
            None => f.write_str(&self.reason),
        }
    }
}

/// One record of a list: as sent, and as read (or why not).
struct Entry<T> {
    raw: Box<RawValue>,
    read: Result<T, Unreadable>,
}

/// The records of a list, each read on its own. A list sent as `null` reads
/// as empty. It must be read from the answer's text (as
/// [`super::http::PlatformHttp::json`] does), not from a `serde_json::Value`.
pub struct Each<T> {
    entries: Vec<Entry<T>>,
}

impl<T> Default for Each<T> {
    fn default() -> Self {
        Self {
            entries: Vec::new(),
        }
    }
}

impl<T> fmt::Debug for Each<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Each")
            .field("records", &self.entries.len())
            .finish()
    }
}

/// What a page's records became: ours, and the issues of those that could
/// not be read.
#[derive(Debug)]
pub struct Read<R> {
    /// The records read.
    pub records: Vec<R>,
    /// The records that could not be read.
    pub issues: Vec<RecordIssue>,
}

impl<R> Default for Read<R> {
    fn default() -> Self {
        Self {
            records: Vec::new(),
            issues: Vec::new(),
        }
    }
}

impl<T: Keyed> Each<T> {
    /// How many records the platform sent.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// Whether the platform sent none.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// The last record that could be read (a cursor is often its id).
    pub fn last_read(&self) -> Option<&T> {
        self.entries
            .iter()
            .rev()
            .find_map(|entry| entry.read.as_ref().ok())
    }

    /// The id of the last record sent, readable or not (a cursor is often
    /// the last id).
    pub fn last_id(&self) -> Option<String> {
        self.entries
            .last()
            .and_then(|entry| record_id::<T>(&entry.raw))
    }

    /// Every record, when all could be read: the parts of one record of
    /// ours (an invoice's lines) stand or fall together. Otherwise the first
    /// problem, its field under `path` (`lines.data`): `lines.data[2].amount`.
    pub fn all(self, path: &str) -> Result<Vec<T>, Unreadable> {
        self.entries
            .into_iter()
            .enumerate()
            .map(|(index, entry)| {
                entry.read.map_err(|problem| Unreadable {
                    field: Some(match problem.field {
                        Some(field) => format!("{path}[{index}].{field}"),
                        None => format!("{path}[{index}]"),
                    }),
                    reason: problem.reason,
                })
            })
            .collect()
    }

    /// Whether any record satisfies `test` (an unreadable one never does).
    pub fn any(&self, test: impl Fn(&T) -> bool) -> bool {
        self.entries
            .iter()
            .any(|entry| entry.read.as_ref().is_ok_and(&test))
    }

    /// Every readable record turned into ours by `into` (which may find it
    /// unreadable too, or leave it out with `Ok(None)`); the others as issues.
    pub fn read<R>(self, mut into: impl FnMut(T) -> Result<Option<R>, Unreadable>) -> Read<R> {
        let mut read = Read::default();
        for entry in self.entries {
            let outcome = entry.read.and_then(&mut into);
            match outcome {
                Ok(Some(record)) => read.records.push(record),
                Ok(None) => {}
                Err(problem) => read.issues.push(issue::<T>(&entry.raw, problem)),
            }
        }
        read
    }

    /// Every record, read or not, for work per record that cannot be done
    /// in [`Each::read`] (a call for its lines): a readable one with its
    /// [`Named`] handle to report it unreadable later.
    pub fn entries(self) -> impl Iterator<Item = Result<(T, Named), RecordIssue>> {
        self.entries.into_iter().map(|entry| match entry.read {
            Ok(record) => Ok((
                record,
                Named {
                    id: record_id::<T>(&entry.raw),
                },
            )),
            Err(problem) => Err(issue::<T>(&entry.raw, problem)),
        })
    }
}

/// One record fetched on its own (`GET .../invoices/{id}`), read as `T`:
/// with its [`Named`] handle, or the issue that it cannot be read. Fetch
/// it as `Box<RawValue>` (an answer that is not JSON still fails the sync).
pub fn single<T: DeserializeOwned + Keyed>(raw: &RawValue) -> Result<(T, Named), RecordIssue> {
    match read_one::<T>(raw) {
        Ok(record) => Ok((
            record,
            Named {
                id: record_id::<T>(raw),
            },
        )),
        Err(problem) => Err(issue::<T>(raw, problem)),
    }
}

/// A record's id, kept to report it unreadable after it was read.
#[derive(Debug, Clone)]
pub struct Named {
    id: Option<String>,
}

impl Named {
    /// The issue of this record, unreadable for `problem`.
    pub fn issue(&self, problem: Unreadable) -> RecordIssue {
        RecordIssue {
            record_id: self.id.clone(),
            field: problem.field,
            reason: problem.reason,
        }
    }
}

fn issue<T: Keyed>(raw: &RawValue, problem: Unreadable) -> RecordIssue {
    RecordIssue {
        record_id: record_id::<T>(raw),
        field: problem.field,
        reason: problem.reason,
    }
}

/// The id of a record as sent (the string or number at [`Keyed::ID`]), as
/// tributary keeps it.
fn record_id<T: Keyed>(raw: &RawValue) -> Option<String> {
    let value: Value = serde_json::from_str(raw.get()).ok()?;
    match value.pointer(T::ID)? {
        Value::String(id) => T::kept_id(id),
        Value::Number(id) => T::kept_id(&id.to_string()),
        _ => None,
    }
}

/// One record read as `T`, or why not: the path of the field at fault (a
/// missing field's own, not its object's) and serde's reason without the
/// value it quotes.
fn read_one<T: DeserializeOwned>(raw: &RawValue) -> Result<T, Unreadable> {
    let mut deserializer = serde_json::Deserializer::from_str(raw.get());
    serde_path_to_error::deserialize(&mut deserializer).map_err(|error| {
        let path = error.path().to_string();
        let reason = without_values(&error.into_inner().to_string());
        let missing = reason
            .strip_prefix("missing field `")
            .and_then(|rest| rest.strip_suffix('`'));
        let field = match (path.as_str(), missing) {
            (".", Some(name)) => Some(name.to_owned()),
            (_, Some(name)) => Some(format!("{path}.{name}")),
            (".", None) => None,
            (_, None) => Some(path),
        };
        Unreadable { field, reason }
    })
}

impl<'de, T: DeserializeOwned> Deserialize<'de> for Each<T> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_option(EachVisitor(PhantomData))
    }
}

struct EachVisitor<T>(PhantomData<T>);

impl<'de, T: DeserializeOwned> Visitor<'de> for EachVisitor<T> {
    type Value = Each<T>;

    fn expecting(&self, formatter: &mut fmt::Formatter) -> fmt::Result {
        formatter.write_str("a list of records, or null")
    }

    fn visit_none<E: de::Error>(self) -> Result<Each<T>, E> {
        Ok(Each::default())
    }

    fn visit_unit<E: de::Error>(self) -> Result<Each<T>, E> {
        Ok(Each::default())
    }

    fn visit_some<D: Deserializer<'de>>(self, deserializer: D) -> Result<Each<T>, D::Error> {
        deserializer.deserialize_seq(self)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Each<T>, A::Error> {
        let mut entries = Vec::with_capacity(seq.size_hint().unwrap_or(0));
        while let Some(raw) = seq.next_element::<Box<RawValue>>()? {
            let read = read_one(&raw);
            entries.push(Entry { raw, read });
        }
        Ok(Each { entries })
    }
}

/// serde's message without the values it quotes: `invalid type: string
/// "ACME", expected i64 at line 1 column 9` becomes `invalid type: string,
/// expected i64`. Field and variant names it quotes from the types stay;
/// the value a record held does not, whatever the message.
pub fn without_values(message: &str) -> String {
    let message = match message.rfind(" at line ") {
        Some(at) if message[at..].contains(" column ") => &message[..at],
        _ => message,
    };
    for prefix in ["invalid type: ", "invalid value: "] {
        if let Some(rest) = message.strip_prefix(prefix) {
            let Some((unexpected, expected)) = split_expected(rest) else {
                return format!("{}a value it cannot read", prefix.trim_end_matches(": "));
            };
            return format!("{prefix}{}, expected {expected}", kind_of(unexpected));
        }
    }
    if let Some(rest) = message.strip_prefix("unknown variant ")
        && let Some((_, expected)) = split_expected(rest)
    {
        return format!("unknown variant, expected {expected}");
    }
    let known = ["missing field `", "duplicate field `", "invalid length "];
    if known.iter().any(|prefix| message.starts_with(prefix)) && !message.contains('"') {
        return message.to_owned();
    }
    // A message of our own (an amount, a date), which names no value.
    if !message.contains('"') && !message.contains('`') {
        return message.to_owned();
    }
    "a value tributary cannot read".to_owned()
}

/// `<unexpected>, expected <expected>`, split at the `, expected ` that
/// follows the quoted value (which may itself hold that text).
fn split_expected(rest: &str) -> Option<(&str, &str)> {
    let value_end = match rest.find(['"', '`']) {
        Some(open) => {
            let quote = rest[open..].chars().next()?;
            let close = closing_quote(&rest[open + 1..], quote)?;
            open + 1 + close + 1
        }
        None => 0,
    };
    let at = rest[value_end..].find(", expected ")? + value_end;
    Some((&rest[..at], &rest[at + ", expected ".len()..]))
}

/// Where `quote` closes in `text` (after its opening), skipping escaped ones.
fn closing_quote(text: &str, quote: char) -> Option<usize> {
    let mut escaped = false;
    for (at, character) in text.char_indices() {
        match character {
            '\\' if quote == '"' && !escaped => escaped = true,
            found if found == quote && !escaped => return Some(at),
            _ => escaped = false,
        }
    }
    None
}

/// What kind of value serde found (`string`, `floating point`), without
/// the value it quotes.
fn kind_of(unexpected: &str) -> &str {
    match unexpected.find(['"', '`']) {
        Some(at) => unexpected[..at].trim_end(),
        None => unexpected,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, Deserialize, PartialEq)]
    struct Thing {
        #[serde(rename = "ID")]
        id: String,
        count: i64,
        kind: Option<Kind>,
    }

    #[derive(Debug, Deserialize, PartialEq)]
    enum Kind {
        Small,
        Large,
    }

    impl Keyed for Thing {
        const ID: &'static str = "/ID";
    }

    #[derive(Deserialize)]
    struct Page {
        things: Each<Thing>,
    }

    fn page(text: &str) -> Page {
        serde_json::from_str(text).expect("the page reads")
    }

    #[test]
    fn an_unreadable_record_is_named_and_the_others_are_read() {
        let things = page(
            r#"{"things": [{"ID": "a", "count": 1}, {"ID": "b", "count": "SECRET-VALUE"},
                          {"ID": 7, "count": 3, "kind": "Huge"}, {"count": 4}]}"#,
        )
        .things;
        assert_eq!(things.len(), 4);
        let read = things.read(|thing| Ok(Some(thing.count)));
        assert_eq!(read.records, [1]);
        assert_eq!(
            read.issues,
            [
                RecordIssue {
                    record_id: Some("b".to_owned()),
                    field: Some("count".to_owned()),
                    reason: "invalid type: string, expected i64".to_owned(),
                },
                RecordIssue {
                    record_id: Some("7".to_owned()),
                    field: Some("ID".to_owned()),
                    reason: "invalid type: integer, expected a string".to_owned(),
                },
                RecordIssue {
                    record_id: None,
                    field: Some("ID".to_owned()),
                    reason: "missing field `ID`".to_owned(),
                },
            ]
        );
    }

    #[test]
    fn an_unknown_variant_is_reported_without_its_value() {
        let read = page(r#"{"things": [{"ID": "c", "count": 1, "kind": "Huge"}]}"#)
            .things
            .read(|thing| Ok(Some(thing)));
        assert_eq!(
            read.issues[0].reason,
            "unknown variant, expected `Small` or `Large`"
        );
        assert_eq!(read.issues[0].field.as_deref(), Some("kind"));
    }

    #[test]
    fn a_record_its_mapping_refuses_is_an_issue_too_and_null_is_an_empty_list() {
        let read = page(r#"{"things": [{"ID": "a", "count": 1}, {"ID": "b", "count": 2}]}"#)
            .things
            .read(|thing| match thing.count {
                2 => Err(Unreadable::field("count", "is out of range")),
                count => Ok(Some(count)),
            });
        assert_eq!(read.records, [1]);
        assert_eq!(read.issues[0].record_id.as_deref(), Some("b"));
        assert_eq!(read.issues[0].reason, "is out of range");
        assert!(page(r#"{"things": null}"#).things.is_empty());
    }

    #[test]
    fn no_quoted_value_survives_in_a_reason() {
        for message in [
            r#"invalid type: string "a \" , expected x", expected i64 at line 1 column 30"#,
            "invalid value: integer `-5`, expected u32",
            "invalid type: boolean `true`, expected a string at line 3 column 2",
            "unknown variant `HUGE`, expected one of `A`, `B`",
            r#"something "secret" happened"#,
            "floating point `1.5` is odd",
            "invalid type: floating point `2.5`, expected u64",
        ] {
            let reason = without_values(message);
            for secret in ["secret", "HUGE", "-5", "true", "1.5", "a \\\""] {
                assert!(!reason.contains(secret), "{message} gave {reason}");
            }
            assert!(!reason.contains(" at line "), "{reason}");
        }
        assert_eq!(
            without_values("invalid value: integer `-5`, expected u32"),
            "invalid value: integer, expected u32"
        );
        assert_eq!(
            without_values("invalid type: floating point `2.5`, expected u64"),
            "invalid type: floating point, expected u64"
        );
        assert_eq!(
            without_values("an amount is not a decimal number"),
            "an amount is not a decimal number"
        );
    }
}
