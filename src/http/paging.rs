//! The one paged envelope every list returns, and the rules for its
//! `_links` hrefs (seed section 2).
//!
//! Links are relative: `self` is the resource path; `current`, `next` and
//! `previous` append `?page=N&pageSize=M`, then the list's filters in the
//! order the endpoint passes them, URL-encoded.

use poem_openapi::Object;
use poem_openapi::types::{ParseFromJSON, ToJSON};
use serde::Serialize;

use crate::paging::PageRequest;

/// A page of results with navigation links.
#[derive(Debug, Clone, Object, Serialize)]
#[oai(rename_all = "camelCase")]
#[serde(rename_all = "camelCase")]
pub struct Paged<T: ParseFromJSON + ToJSON> {
    /// The items on this page, in the list's documented order.
    pub results: Vec<T>,
    /// The page returned (the request's `page`, default 1).
    pub page_number: i32,
    /// The page size used (the request's `pageSize`, default 100).
    pub page_size: i32,
    /// Number of records in the whole result set, after filters.
    pub total_results: i64,
    /// Relative links to this resource and to neighbouring pages.
    #[oai(rename = "_links")]
    #[serde(rename = "_links")]
    pub links: PageLinks,
}

/// Navigation links of a page; hrefs are relative and start with the resource path.
#[derive(Debug, Clone, Object, Serialize)]
pub struct PageLinks {
    /// The resource the request was sent to, without query parameters.
    #[oai(rename = "self")]
    #[serde(rename = "self")]
    pub self_: Link,
    /// This page, with its query parameters.
    pub current: Link,
    /// The next page; absent on the last page and beyond.
    #[oai(skip_serializing_if_is_none)]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub next: Option<Link>,
    /// The previous page (from beyond the end: the last page with results); absent on page 1.
    #[oai(skip_serializing_if_is_none)]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub previous: Option<Link>,
}

/// A link.
#[derive(Debug, Clone, PartialEq, Eq, Object, Serialize)]
pub struct Link {
    /// A path relative to the API root, with its query string.
    pub href: String,
}

/// Where a list lives and which filters it was called with, so links can be built.
#[derive(Debug, Clone)]
pub struct ListLocation {
    path: String,
    filters: Vec<(&'static str, String)>,
    /// The `cursor` the request continued from, carried into `current`.
    current_cursor: Option<String>,
    /// The `cursor` of the next page, carried into `next`.
    next_cursor: Option<String>,
}

impl ListLocation {
    /// A list at `path` (as requested, without query), with no filters.
    pub fn new(path: impl Into<String>) -> Self {
        Self {
            path: path.into(),
            filters: Vec::new(),
            current_cursor: None,
            next_cursor: None,
        }
    }

    /// The cursor the request came with (kept in `current`) and the one
    /// that continues the walk (put in `next`); `previous` carries none.
    pub fn cursors(mut self, current: Option<&str>, next: Option<String>) -> Self {
        self.current_cursor = current.map(str::to_owned);
        self.next_cursor = next;
        self
    }

    /// Adds a filter carried into `current`, `next` and `previous`, when set.
    pub fn filter(mut self, name: &'static str, value: Option<impl ToString>) -> Self {
        if let Some(value) = value {
            self.filters.push((name, value.to_string()));
        }
        self
    }

    fn page_link(&self, page: u64, page_size: i32, cursor: Option<&str>) -> Link {
        let mut href = format!("{}?page={page}&pageSize={page_size}", self.path);
        let cursor = cursor.map(|cursor| ("cursor", cursor));
        for (name, value) in self
            .filters
            .iter()
            .map(|(name, value)| (*name, value.as_str()))
            .chain(cursor)
        {
            href.push('&');
            href.push_str(name);
            href.push('=');
            href.extend(url::form_urlencoded::byte_serialize(value.as_bytes()));
        }
        Link { href }
    }
}

impl<T: ParseFromJSON + ToJSON> Paged<T> {
    /// Wraps one page of `results` out of `total` matching records.
    pub fn new(results: Vec<T>, total: u64, request: PageRequest, location: &ListLocation) -> Self {
        let page = request.page as u64;
        let last_page = request.page_count(total);
        let next = (page < last_page).then(|| {
            location.page_link(page + 1, request.page_size, location.next_cursor.as_deref())
        });
        let previous = match page {
            1 => None,
            // Past the end, point back at the last page that has results.
            _ if page > last_page => {
                (last_page >= 1).then(|| location.page_link(last_page, request.page_size, None))
            }
            _ => Some(location.page_link(page - 1, request.page_size, None)),
        };
        Self {
            results,
            page_number: request.page,
            page_size: request.page_size,
            total_results: i64::try_from(total).unwrap_or(i64::MAX),
            links: PageLinks {
                self_: Link {
                    href: location.path.clone(),
                },
                current: location.page_link(
                    page,
                    request.page_size,
                    location.current_cursor.as_deref(),
                ),
                next,
                previous,
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn links(page: i32, page_size: i32, total: u64) -> PageLinks {
        let request = PageRequest::new(page, page_size).expect("valid request");
        let location =
            ListLocation::new("/companies/x/data/invoices").filter("status", Some("Paid & due"));
        Paged::<i32>::new(Vec::new(), total, request, &location).links
    }

    #[test]
    fn filters_follow_the_paging_parameters_url_encoded() {
        let links = links(2, 10, 35);
        assert_eq!(links.self_.href, "/companies/x/data/invoices");
        assert_eq!(
            links.current.href,
            "/companies/x/data/invoices?page=2&pageSize=10&status=Paid+%26+due"
        );
        assert_eq!(
            links.next.map(|l| l.href).as_deref(),
            Some("/companies/x/data/invoices?page=3&pageSize=10&status=Paid+%26+due")
        );
        assert_eq!(
            links.previous.map(|l| l.href).as_deref(),
            Some("/companies/x/data/invoices?page=1&pageSize=10&status=Paid+%26+due")
        );
    }

    #[test]
    fn beyond_the_last_page_previous_points_at_the_last_page_with_results() {
        let links = links(9, 10, 35);
        assert!(links.next.is_none());
        assert_eq!(
            links.previous.map(|l| l.href).as_deref(),
            Some("/companies/x/data/invoices?page=4&pageSize=10&status=Paid+%26+due")
        );
    }

    #[test]
    fn an_empty_result_set_past_page_one_has_no_previous() {
        let links = links(3, 10, 0);
        assert!(links.next.is_none());
        assert!(links.previous.is_none());
    }
}
