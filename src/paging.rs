//! Which page of a list is asked for: the rules for `page` and `pageSize`
//! (seed section 4.6) and the arithmetic of offsets and page counts, and
//! the [`Cursor`] a queried list's `_links.next` carries and the
//! [`Snapshot`] every list's `_links` pin. The envelope a page is answered
//! in is the HTTP layer's (`http::paging`).

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use sha2::{Digest, Sha256};
use uuid::Uuid;

use crate::error::{Error, FieldError};

/// `page` when the request gives none.
pub const DEFAULT_PAGE: i32 = 1;
/// `pageSize` when the request gives none; the seed recommends it for response time.
pub const DEFAULT_PAGE_SIZE: i32 = 100;
/// The largest `pageSize` accepted.
pub const MAX_PAGE_SIZE: i32 = 5000;

/// `page` when the request gives none (poem-openapi `default` function).
pub fn default_page() -> i32 {
    DEFAULT_PAGE
}

/// `pageSize` when the request gives none (poem-openapi `default` function).
pub fn default_page_size() -> i32 {
    DEFAULT_PAGE_SIZE
}

const PAGE_RULE: &str = "must be an integer from 1 to 2147483647";
const PAGE_SIZE_RULE: &str = "must be an integer from 1 to 5000";

/// The allowed range of a paging parameter, for error messages; `None` for
/// any other parameter.
pub fn parameter_rule(name: &str) -> Option<&'static str> {
    match name {
        "page" => Some(PAGE_RULE),
        "pageSize" => Some(PAGE_SIZE_RULE),
        _ => None,
    }
}

/// A validated page request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PageRequest {
    /// 1-based page number.
    pub page: i32,
    /// Results per page, 1 to [`MAX_PAGE_SIZE`].
    pub page_size: i32,
}

impl PageRequest {
    /// Checks ranges. The spec declares the same ranges, so poem-openapi
    /// normally rejects bad values before this runs; this keeps the rule true
    /// for every caller.
    pub fn new(page: i32, page_size: i32) -> Result<Self, Error> {
        let mut errors = Vec::new();
        if page < 1 {
            errors.push(FieldError::new("page", PAGE_RULE));
        }
        if !(1..=MAX_PAGE_SIZE).contains(&page_size) {
            errors.push(FieldError::new("pageSize", PAGE_SIZE_RULE));
        }
        if errors.is_empty() {
            Ok(Self { page, page_size })
        } else {
            Err(Error::Invalid(errors))
        }
    }

    /// Rows to skip before this page.
    pub fn offset(&self) -> u64 {
        (self.page as u64 - 1) * self.page_size as u64
    }

    /// Rows on a full page.
    pub fn limit(&self) -> u64 {
        self.page_size as u64
    }

    /// This page of an in-memory list.
    pub fn slice<'a, T>(&self, items: &'a [T]) -> &'a [T] {
        let start = usize::try_from(self.offset())
            .unwrap_or(usize::MAX)
            .min(items.len());
        let end = start
            .saturating_add(self.page_size as usize)
            .min(items.len());
        &items[start..end]
    }

    /// Number of pages holding `total` results: ceil(total / pageSize).
    pub fn page_count(&self, total: u64) -> u64 {
        total.div_ceil(self.page_size as u64)
    }
}

/// Where a walk through a queried list stopped: written into `_links.next`,
/// so the next page continues from there, at the same cost at any depth,
/// instead of skipping every record before it. Opaque to clients.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Cursor {
    /// The page it leads to.
    pub page: i32,
    /// A digest of what the list was narrowed by, so a cursor only
    /// continues the walk it came from.
    pub selection: u64,
    /// Per connection read: its generation and the position (ordinal, or
    /// filter ordinal under the list's filter) of the last of its records
    /// the walk has passed (0: none yet).
    pub positions: Vec<(Uuid, i64, i64)>,
}

/// The longest `cursor` accepted, in characters.
pub const MAX_CURSOR_LENGTH: usize = 8192;

const CURSOR_RULE: &str = "must be at most 8192 letters, digits, `-` and `_`, as tributary writes it into \
     `_links.next`";

impl Cursor {
    /// The digest of a selection described by `parts` (the filter, the query).
    pub fn digest(parts: &[Option<&str>]) -> u64 {
        let mut hasher = Sha256::new();
        for part in parts {
            match part {
                Some(text) => {
                    hasher.update([1]);
                    hasher.update((text.len() as u64).to_be_bytes());
                    hasher.update(text.as_bytes());
                }
                None => hasher.update([0]),
            }
        }
        let digest = hasher.finalize();
        let mut first = [0u8; 8];
        first.copy_from_slice(&digest[..8]);
        u64::from_be_bytes(first)
    }

    /// The cursor as a URL-safe token.
    pub fn encode(&self) -> String {
        let positions: Vec<String> = self
            .positions
            .iter()
            .map(|(connection, generation, ordinal)| format!("{connection}:{generation}:{ordinal}"))
            .collect();
        let text = format!(
            "1|{}|{:016x}|{}",
            self.page,
            self.selection,
            positions.join(",")
        );
        URL_SAFE_NO_PAD.encode(text)
    }

    /// The cursor `token` encodes: `Ok(None)` when it is not one tributary
    /// wrote, which the read then ignores (a page is whatever its number
    /// says; a cursor only makes reaching it cheaper); an error when it is
    /// not even shaped like one (too long, or characters a cursor never
    /// holds).
    pub fn parse(token: &str) -> Result<Option<Self>, Error> {
        if token.len() > MAX_CURSOR_LENGTH
            || !token
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
        {
            return Err(Error::invalid("cursor", CURSOR_RULE));
        }
        Ok(Self::decode(token))
    }

    /// The cursor `token` encodes, if it is one tributary wrote.
    fn decode(token: &str) -> Option<Self> {
        let bytes = URL_SAFE_NO_PAD.decode(token).ok()?;
        let text = String::from_utf8(bytes).ok()?;
        let mut parts = text.split('|');
        let (Some("1"), Some(page), Some(selection), Some(positions), None) = (
            parts.next(),
            parts.next(),
            parts.next(),
            parts.next(),
            parts.next(),
        ) else {
            return None;
        };
        let page: i32 = page.parse().ok().filter(|page| *page >= 1)?;
        let selection = u64::from_str_radix(selection, 16).ok()?;
        let positions = positions
            .split(',')
            .map(|position| {
                let mut fields = position.split(':');
                match (fields.next(), fields.next(), fields.next(), fields.next()) {
                    (Some(connection), Some(generation), Some(ordinal), None) => Some((
                        connection.parse().ok()?,
                        generation.parse().ok()?,
                        ordinal.parse().ok().filter(|ordinal: &i64| *ordinal >= 0)?,
                    )),
                    _ => None,
                }
            })
            .collect::<Option<Vec<_>>>()?;
        Some(Self {
            page,
            selection,
            positions,
        })
    }
}

/// The generations a page was read from, one per connection: written into
/// a list's `_links` (`current`, `next`, `previous`), so that a client
/// following them reads the snapshot its walk started on, even after a sync
/// has published newer data, for as long as those generations are retained.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Snapshot {
    /// A digest of the list (company and data type) it was read from.
    pub list: u64,
    /// Per connection, in the order reads list them: the generation read.
    pub generations: Vec<(Uuid, i64)>,
}

/// The longest `snapshot` accepted, in characters (about 250 connections).
pub const MAX_SNAPSHOT_LENGTH: usize = 16384;

const SNAPSHOT_RULE: &str = "is not a snapshot tributary wrote: follow `_links` as given, or leave \
     `snapshot` out to read the newest data";

impl Snapshot {
    /// The digest of the list of `data_type` of company `company_id`.
    pub fn list_digest(company_id: Uuid, data_type: &str) -> u64 {
        Cursor::digest(&[Some(&company_id.to_string()), Some(data_type)])
    }

    /// The snapshot as a URL-safe token.
    pub fn encode(&self) -> String {
        let generations: Vec<String> = self
            .generations
            .iter()
            .map(|(connection, generation)| format!("{connection}:{generation}"))
            .collect();
        let text = format!("s1|{:016x}|{}", self.list, generations.join(","));
        URL_SAFE_NO_PAD.encode(text)
    }

    /// The snapshot `token` encodes; a token that is not one tributary
    /// wrote is an error, as reading the newest data instead would break the
    /// walk's promise without saying so.
    pub fn parse(token: &str) -> Result<Self, Error> {
        if token.len() > MAX_SNAPSHOT_LENGTH {
            return Err(Error::invalid("snapshot", SNAPSHOT_RULE));
        }
        Self::decode(token).ok_or_else(|| Error::invalid("snapshot", SNAPSHOT_RULE))
    }

    fn decode(token: &str) -> Option<Self> {
        let bytes = URL_SAFE_NO_PAD.decode(token).ok()?;
        let text = String::from_utf8(bytes).ok()?;
        let mut parts = text.split('|');
        let (Some("s1"), Some(list), Some(generations), None) =
            (parts.next(), parts.next(), parts.next(), parts.next())
        else {
            return None;
        };
        let list = u64::from_str_radix(list, 16).ok()?;
        let generations = generations
            .split(',')
            .map(|one| {
                let (connection, generation) = one.split_once(':')?;
                Some((
                    connection.parse().ok()?,
                    generation
                        .parse()
                        .ok()
                        .filter(|generation: &i64| *generation >= 1)?,
                ))
            })
            .collect::<Option<Vec<(Uuid, i64)>>>()?;
        // Each connection once (a repeat would count its records twice).
        let mut connections: Vec<Uuid> = generations.iter().map(|(id, _)| *id).collect();
        connections.sort_unstable();
        connections.dedup();
        if connections.len() != generations.len() {
            return None;
        }
        Some(Self { list, generations })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_snapshot_survives_its_token_and_anything_else_is_refused() {
        let snapshot = Snapshot {
            list: Snapshot::list_digest(Uuid::nil(), "invoices"),
            generations: vec![(Uuid::nil(), 3), (Uuid::max(), 12)],
        };
        let token = snapshot.encode();
        assert!(
            token
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
        );
        assert_eq!(Snapshot::parse(&token).expect("read back"), snapshot);
        assert_ne!(
            Snapshot::list_digest(Uuid::nil(), "invoices"),
            Snapshot::list_digest(Uuid::nil(), "orders")
        );
        let zero = URL_SAFE_NO_PAD.encode(format!("s1|00|{}:0", Uuid::nil()));
        let twice = URL_SAFE_NO_PAD.encode(format!("s1|00|{0}:1,{0}:2", Uuid::nil()));
        let cursor = Cursor {
            page: 2,
            selection: 0,
            positions: vec![(Uuid::nil(), 1, 1)],
        }
        .encode();
        for wrong in [
            "",
            "x",
            "a/b",
            &zero,
            &twice,
            &cursor,
            &"A".repeat(MAX_SNAPSHOT_LENGTH + 1),
        ] {
            assert!(Snapshot::parse(wrong).is_err(), "{wrong}");
        }
    }

    #[test]
    fn a_cursor_survives_its_token_a_forged_one_is_ignored_and_a_malformed_one_refused() {
        let cursor = Cursor {
            page: 7,
            selection: Cursor::digest(&[Some("Paid"), Some("currency=GBP")]),
            positions: vec![(Uuid::nil(), 3, 600), (Uuid::max(), 1, 0)],
        };
        let token = cursor.encode();
        assert!(
            token
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
        );
        assert_eq!(Cursor::parse(&token).expect("shaped"), Some(cursor));
        assert_ne!(
            Cursor::digest(&[None, Some("currency=GBP")]),
            Cursor::digest(&[Some("currency=GBP"), None])
        );
        // Shaped like a cursor but not one tributary wrote: ignored.
        for forged in ["", "x", "MXwxfA", "bm90LWEtY3Vyc29y"] {
            assert_eq!(Cursor::parse(forged).expect("shaped"), None, "{forged}");
        }
        let negative = URL_SAFE_NO_PAD.encode(format!("1|2|00|{}:1:-5", Uuid::nil()));
        assert_eq!(Cursor::parse(&negative).expect("shaped"), None);
        // Not even shaped like one: refused.
        for malformed in ["a/b", "a=", &"A".repeat(MAX_CURSOR_LENGTH + 1)] {
            assert!(Cursor::parse(malformed).is_err(), "{malformed}");
        }
    }

    #[test]
    fn out_of_range_values_are_rejected_not_clamped() {
        assert!(PageRequest::new(0, 100).is_err());
        assert!(PageRequest::new(1, 5001).is_err());
        assert!(PageRequest::new(1, 0).is_err());
        assert_eq!(
            PageRequest::new(default_page(), default_page_size()).expect("defaults are valid"),
            PageRequest {
                page: 1,
                page_size: 100
            }
        );
    }
}
