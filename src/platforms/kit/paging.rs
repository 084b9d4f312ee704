//! Paging styles, as the platforms page their lists. The engine carries a
//! page's cursor as opaque text; these read and write it.
//!
//! - [`PageNumber`]: `page=1, 2, …` (Xero, Zoho Books, FreeAgent, FreshBooks).
//! - [`Offset`]: a start position (QuickBooks' `STARTPOSITION`, OData's `$skip`,
//!   NetSuite's `offset`).
//! - [`NextLink`]: the platform gives the next page's URL or token (Sage's
//!   `$next`, OData's `@odata.nextLink`, Mollie's `_links.next`, cursors).
//! - [`link_header_next`]: the next page in the `Link` header (RFC 8288).
//! - [`LedgerWalk`]: after a position in a ledger asked for by a growing
//!   number (Exact's row version, Business Central's entry number), so that
//!   the entry a page ends in is read whole from the next page.

use reqwest::header::{HeaderMap, LINK};

use crate::platforms::connector::ConnectorError;

fn invalid(platform: &str, cursor: &str) -> ConnectorError {
    ConnectorError::Failed(format!("invalid {platform} cursor {cursor:?}"))
}

/// A page number, from 1.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PageNumber(pub u64);

impl PageNumber {
    /// The page a cursor names; page 1 without one.
    pub fn from_cursor(platform: &str, cursor: Option<String>) -> Result<Self, ConnectorError> {
        match cursor {
            None => Ok(Self(1)),
            Some(cursor) => cursor
                .parse()
                .map(Self)
                .map_err(|_| invalid(platform, &cursor)),
        }
    }

    /// The next page's cursor, when there is more.
    pub fn next(self, more: bool) -> Option<String> {
        more.then(|| (self.0 + 1).to_string())
    }
}

/// A start position: the cursor is the position of the next page's first record.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Offset(pub u64);

impl Offset {
    /// The position a cursor names; `first` without one (1 for QuickBooks, 0 for OData).
    pub fn from_cursor(
        platform: &str,
        cursor: Option<String>,
        first: u64,
    ) -> Result<Self, ConnectorError> {
        match cursor {
            None => Ok(Self(first)),
            Some(cursor) => cursor
                .parse()
                .map(Self)
                .map_err(|_| invalid(platform, &cursor)),
        }
    }

    /// The next page's cursor: a full page of `page_size` means there may be more.
    pub fn next(self, returned: usize, page_size: u64) -> Option<String> {
        (returned as u64 >= page_size).then(|| (self.0 + page_size).to_string())
    }
}

/// A next page the platform names (a URL or an opaque token): the cursor is
/// exactly what the platform gave.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum NextLink {
    /// The first page: the connector's own request.
    First,
    /// What the platform gave for the next page.
    Given(String),
}

impl NextLink {
    /// The page a cursor names.
    pub fn from_cursor(cursor: Option<String>) -> Self {
        match cursor {
            None => Self::First,
            Some(given) => Self::Given(given),
        }
    }

    /// The next page's cursor: what the platform gave, when it gave something.
    pub fn next(given: Option<String>) -> Option<String> {
        given.filter(|next| !next.trim().is_empty())
    }
}

/// The URL of the `rel="next"` link in a `Link` header (RFC 8288), if any:
/// `<https://api.example/v2/invoices?page=2>; rel="next", <…>; rel="last"`.
/// The relation may also be bare or single-quoted (`rel='next'`), as some
/// platforms write it.
pub fn link_header_next(headers: &HeaderMap) -> Option<String> {
    headers
        .get_all(LINK)
        .iter()
        .filter_map(|value| value.to_str().ok())
        .flat_map(|value| value.split(','))
        .find_map(|link| {
            let (target, parameters) = link.split_once(';')?;
            let is_next = parameters.split(';').any(|parameter| {
                let parameter = parameter.trim().replace(' ', "");
                parameter.eq_ignore_ascii_case("rel=\"next\"")
                    || parameter.eq_ignore_ascii_case("rel='next'")
                    || parameter.eq_ignore_ascii_case("rel=next")
            });
            let target = target.trim().strip_prefix('<')?.strip_suffix('>')?;
            is_next.then(|| target.to_owned())
        })
}

/// Where a walk over a ledger stands: after position `after`, with the
/// entry `skip` (one longer than a page, reported) left out. As a cursor:
/// `<after>[ <skip>]`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LedgerWalk {
    /// The last position read whole.
    pub after: u64,
    /// The entry a page could not hold, whose later lines are passed over.
    pub skip: Option<String>,
}

impl LedgerWalk {
    /// The position a cursor names; `start` without one. `platform` names
    /// the ledger in the error for a cursor that is not one.
    pub fn at(cursor: Option<&str>, start: u64, platform: &str) -> Result<Self, ConnectorError> {
        let Some(cursor) = cursor else {
            return Ok(Self {
                after: start,
                skip: None,
            });
        };
        let mut parts = cursor.splitn(2, ' ');
        let after = parts
            .next()
            .and_then(|after| after.parse().ok())
            .ok_or_else(|| {
                ConnectorError::Failed(format!("invalid {platform} ledger cursor {cursor:?}"))
            })?;
        Ok(Self {
            after,
            skip: parts.next().map(str::to_owned),
        })
    }

    /// As a cursor.
    pub fn cursor(&self) -> String {
        match &self.skip {
            Some(skip) => format!("{} {skip}", self.after),
            None => self.after.to_string(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use reqwest::header::HeaderValue;

    #[test]
    fn page_numbers_and_offsets_round_trip_through_cursors() {
        let first = PageNumber::from_cursor("X", None).expect("page 1");
        assert_eq!(first, PageNumber(1));
        assert_eq!(first.next(true).as_deref(), Some("2"));
        assert_eq!(first.next(false), None);
        assert!(PageNumber::from_cursor("X", Some("two".to_owned())).is_err());
        let start = Offset::from_cursor("Q", None, 1).expect("position 1");
        assert_eq!(start.next(100, 100).as_deref(), Some("101"));
        assert_eq!(start.next(99, 100), None);
    }

    #[test]
    fn the_next_link_is_read_from_a_link_header() {
        let mut headers = HeaderMap::new();
        headers.insert(
            LINK,
            HeaderValue::from_static(
                "<https://api.example/v2/invoices?page=1>; rel=\"prev\", \
                 <https://api.example/v2/invoices?page=3>; rel=\"next\", \
                 <https://api.example/v2/invoices?page=9>; rel=\"last\"",
            ),
        );
        assert_eq!(
            link_header_next(&headers).as_deref(),
            Some("https://api.example/v2/invoices?page=3")
        );
        assert_eq!(link_header_next(&HeaderMap::new()), None);
        headers.insert(
            LINK,
            HeaderValue::from_static("<https://api.example/v2/x?page=2>; rel='next'"),
        );
        assert_eq!(
            link_header_next(&headers).as_deref(),
            Some("https://api.example/v2/x?page=2")
        );
        assert_eq!(NextLink::next(Some(" ".to_owned())), None);
    }
}
