//! What a platform's answer says of its quota: a 429's wait (its
//! `Retry-After`, or the wait the platform documents after a bare one) and
//! the remaining-quota headers its `Limits` name.

use std::time::Duration;

use reqwest::StatusCode;
use reqwest::header::{HeaderMap, RETRY_AFTER};

use crate::platforms::kit::limits::{Limits, Quota};

/// What an answer says of the platform's quota.
#[derive(Debug, Default, PartialEq, Eq)]
pub(super) struct Said {
    /// How long every process holds off: a 429's `Retry-After`, or the
    /// wait the platform documents after a bare 429.
    pub(super) retry_after: Option<Duration>,
    /// A 429 without `Retry-After`.
    pub(super) bare_429: bool,
    /// What the platform says is left of its rolling window.
    pub(super) rate_left: Option<u32>,
    /// What the platform says is left of its day.
    pub(super) day_left: Option<u32>,
}

impl Said {
    /// Read from an answer's status and headers, by what `limits` name.
    pub(super) fn read(limits: &Limits, status: u16, headers: &HeaderMap) -> Self {
        let number = |name: &str| {
            headers
                .get(name)
                .and_then(|value| value.to_str().ok())
                .and_then(|value| value.trim().parse::<u64>().ok())
        };
        let throttled = status == StatusCode::TOO_MANY_REQUESTS.as_u16();
        let asked = number(RETRY_AFTER.as_str()).map(Duration::from_secs);
        let mut said = Self {
            retry_after: throttled.then(|| asked.or(limits.throttled_wait)).flatten(),
            bare_429: throttled && asked.is_none(),
            ..Self::default()
        };
        for remaining in limits.remaining {
            // A 429's `Retry-After` says when the window frees; what is
            // left of it (none) would only hold calls a whole window.
            if said.retry_after.is_some() && remaining.quota == Quota::Rate {
                continue;
            }
            let left = number(remaining.header).map(|left| u32::try_from(left).unwrap_or(u32::MAX));
            match remaining.quota {
                Quota::Rate => said.rate_left = left.or(said.rate_left),
                Quota::Daily => said.day_left = left.or(said.day_left),
            }
        }
        said
    }

    pub(super) fn is_empty(&self) -> bool {
        *self == Self::default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use reqwest::header::HeaderValue;

    use crate::platforms::connector::Connector;
    use crate::platforms::quickbooks_online::connector::QuickBooksConnector;
    use crate::platforms::xero::connector::XeroConnector;

    const XERO: Limits = XeroConnector::LIMITS;

    #[test]
    fn an_answer_says_what_is_left_and_how_long_to_wait() {
        let mut headers = HeaderMap::new();
        headers.insert("x-minlimit-remaining", HeaderValue::from_static("3"));
        headers.insert("x-daylimit-remaining", HeaderValue::from_static(" 120 "));
        headers.insert(RETRY_AFTER, HeaderValue::from_static("7"));
        assert_eq!(
            Said::read(&XERO, 200, &headers),
            Said {
                retry_after: None,
                bare_429: false,
                rate_left: Some(3),
                day_left: Some(120),
            }
        );
        assert_eq!(
            Said::read(&XERO, 429, &headers).retry_after,
            Some(Duration::from_secs(7))
        );
        // On a 429 the wait it asks for governs the window, not what is left.
        assert_eq!(
            Said::read(&XERO, 429, &headers).rate_left,
            None,
            "with a Retry-After"
        );
        // `Retry-After` only counts on a 429; other headers are not read.
        let said = Said::read(&Limits::per_second(5), 200, &headers);
        assert!(said.is_empty());
    }

    #[test]
    fn a_429_without_retry_after_holds_off_as_long_as_the_platform_documents() {
        let quickbooks = QuickBooksConnector::LIMITS;
        let bare = HeaderMap::new();
        assert_eq!(
            Said::read(&quickbooks, 429, &bare).retry_after,
            Some(Duration::from_secs(60)),
            "Intuit: wait 60 seconds"
        );
        let mut asked = HeaderMap::new();
        asked.insert(RETRY_AFTER, HeaderValue::from_static("5"));
        assert_eq!(
            Said::read(&quickbooks, 429, &asked).retry_after,
            Some(Duration::from_secs(5)),
            "a Retry-After it sends wins"
        );
        assert_eq!(Said::read(&quickbooks, 200, &bare).retry_after, None);
        assert_eq!(
            Said::read(&XERO, 429, &bare).retry_after,
            None,
            "nothing documented"
        );
    }
}
