//! Which page of a list is asked for: the rules for `page` and `pageSize`
//! (seed section 4.6) and the arithmetic of offsets and page counts. The
//! envelope a page is answered in is the HTTP layer's (`http::paging`).

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

#[cfg(test)]
mod tests {
    use super::*;

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
