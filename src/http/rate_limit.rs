//! Rate limits in HTTP terms: [`admit`] runs once the API key names the
//! client (429 with `Retry-After` beyond the quota or the company's cap),
//! and [`add_headers`] puts the IETF `RateLimit-Policy` and `RateLimit`
//! fields (draft-ietf-httpapi-ratelimit-headers) on the response.

use std::sync::{Arc, Mutex};

use poem::http::HeaderValue;
use poem::{Request, Response};
use uuid::Uuid;

use super::error::ApiError;
use super::state::AppState;
use crate::rate_limits::{self, InFlight, Standing, Verdict, WINDOW};

/// The policy's name in both fields.
const POLICY: &str = "client";

/// What admission decided for one request: where its client stands, and
/// the company slot it holds until the response is sent.
#[derive(Debug, Default)]
struct Admission {
    standing: Option<Standing>,
    slot: Option<InFlight>,
}

/// A request's admission, shared between the middleware (which puts it in
/// the request and reads it back) and [`admit`].
#[derive(Debug, Clone, Default)]
pub struct AdmissionCell(Arc<Mutex<Admission>>);

impl AdmissionCell {
    fn with<R>(&self, change: impl FnOnce(&mut Admission) -> R) -> R {
        let mut admission = self
            .0
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        change(&mut admission)
    }
}

/// The company a path addresses (`/companies/{companyId}/...`), if any.
fn company_in_path(path: &str) -> Option<Uuid> {
    let mut segments = path.trim_start_matches('/').split('/');
    (segments.next() == Some("companies"))
        .then(|| segments.next())
        .flatten()
        .and_then(|id| Uuid::parse_str(id).ok())
}

/// Counts the request against `client_id`'s quota and, for a company's
/// path, takes one of the company's concurrent slots; 429 when either is
/// used up (a first refusal in a window announces `rateLimit.reached`).
pub fn admit(request: &Request, state: &AppState, client_id: Uuid) -> Result<(), ApiError> {
    let cell = request
        .extensions()
        .get::<AdmissionCell>()
        .cloned()
        .unwrap_or_default();
    match state.rate_limits.check(client_id) {
        Verdict::Unlimited => {}
        Verdict::Allowed(standing) => cell.with(|admission| admission.standing = Some(standing)),
        Verdict::Refused {
            standing,
            retry_after,
            first,
        } => {
            cell.with(|admission| admission.standing = Some(standing));
            state.metrics.rate_limited("requests_per_minute");
            if first {
                let db = state.db.clone();
                tokio::spawn(
                    async move { rate_limits::announce(&db, client_id, standing.quota).await },
                );
            }
            return Err(ApiError::TooManyRequests {
                message: format!(
                    "Your client has used its quota of {} requests a minute. Try again in {} s.",
                    standing.quota,
                    retry_after.as_secs()
                ),
                retry_after_seconds: retry_after.as_secs(),
            });
        }
    }
    if let Some(company_id) = company_in_path(request.uri().path()) {
        match state.rate_limits.enter(client_id, company_id) {
            Ok(slot) => cell.with(|admission| admission.slot = slot),
            Err(cap) => {
                state.metrics.rate_limited("concurrent_per_company");
                return Err(ApiError::TooManyRequests {
                    message: format!(
                        "Company {company_id} already has {cap} of your requests in progress, the most at once. \
                         Try again in a second."
                    ),
                    retry_after_seconds: 1,
                });
            }
        }
    }
    Ok(())
}

/// Adds `RateLimit-Policy` (when a quota is configured) and `RateLimit`
/// (when the request was counted) to `response`.
pub fn add_headers(response: &mut Response, cell: &AdmissionCell, quota: Option<u32>) {
    let Some(quota) = quota else { return };
    let policy = format!("\"{POLICY}\";q={quota};w={}", WINDOW.as_secs());
    if let Ok(value) = HeaderValue::from_str(&policy) {
        response.headers_mut().insert("ratelimit-policy", value);
    }
    if let Some(standing) = cell.with(|admission| admission.standing) {
        let current = format!(
            "\"{POLICY}\";r={};t={}",
            standing.remaining, standing.reset_seconds
        );
        if let Ok(value) = HeaderValue::from_str(&current) {
            response.headers_mut().insert("ratelimit", value);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_company_paths_name_a_company() {
        let id = Uuid::from_u128(7);
        assert_eq!(
            company_in_path(&format!("/companies/{id}/data/invoices")),
            Some(id)
        );
        assert_eq!(company_in_path(&format!("/companies/{id}")), Some(id));
        assert_eq!(company_in_path("/companies"), None);
        assert_eq!(company_in_path("/companies/not-a-uuid"), None);
        assert_eq!(company_in_path(&format!("/apiKeys/{id}")), None);
    }
}
