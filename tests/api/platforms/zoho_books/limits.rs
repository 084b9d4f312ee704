//! Zoho Books' two quotas answer the same 429 without `Retry-After`: a
//! minute's wait is kept after one, and a call refused again right after
//! that wait ends the sync `RateLimitError` (the day is spent), with the
//! hour after which tributary asks again, and the data kept.

use std::time::{Duration, Instant};

use chrono::{DateTime, Utc};
use client::types::{PullStatus, QueueDataTypeDataType};

use super::{ORGANIZATION, body, fake};
use crate::connections::{new_company, new_connection};
use crate::helpers::{Backend, TestApp, backends, json};
use crate::platforms::fake::Answer;
use crate::platforms::{authorize, latest, options_for, set_oauth_client, sync};

/// Zoho's 429 body (the scenarios' `CASE` has the same), with no headers.
const TOO_MANY: &str =
    r#"{"code":44,"message":"You have made too many requests. Please try after some time."}"#;

#[tokio::test]
async fn a_429_again_after_zohos_minute_was_waited_out_ends_the_sync_rate_limited_and_keeps_the_data()
 {
    // Each backend waits out Zoho's minute once: run them side by side.
    futures::future::join_all(backends().into_iter().map(spent_day)).await;
}

async fn spent_day(backend: Backend) {
    let fake = fake().await;
    let mut options = options_for(&fake, None, 1);
    // The production retry policy: a 60 s wait is within what a sync waits.
    let mut platforms = tributary::platforms::config::PlatformsConfig {
        timeout: Duration::from_secs(5),
        ..Default::default()
    };
    platforms = platforms.every_platform(&tributary::platforms::config::PlatformConfig {
        api_base: Some(fake.url()),
        token_url: Some(fake.token_url()),
        authorize_url: Some(fake.authorize_url()),
        page_size: None,
    });
    options.connectors =
        tributary::platforms::connector::Connectors::for_platforms(&platforms).expect("connectors");
    let app = TestApp::spawn_with(backend, options).await;
    set_oauth_client(&app, "zoho-books").await;
    let company_id = new_company(&app, "Bowman and Co").await;
    let connection_id = new_connection(&app, company_id, "zoho-books").await;
    let lasting = body(super::ACCESS, ORGANIZATION, None);
    assert_eq!(
        authorize(&app, company_id, connection_id, &lasting, false)
            .await
            .status(),
        200
    );
    let first = sync(&app, company_id, QueueDataTypeDataType::Invoices).await;
    assert_eq!(latest(&first, "invoices").status, PullStatus::Complete);
    let path = format!("/companies/{company_id}/data/invoices?pageSize=100");
    let before = json(app.get(&path).await).await;

    // The day's quota is spent: every call answers the bare 429.
    let calls = fake.calls().len();
    fake.with(|inner| {
        for _ in 0..4 {
            inner.scripted.push_back(Answer::json(429, TOO_MANY));
        }
    });
    let started = Instant::now();
    let operation = latest(
        &sync(&app, company_id, QueueDataTypeDataType::Invoices).await,
        "invoices",
    );
    let waited = started.elapsed();
    assert_eq!(
        operation.status,
        PullStatus::RateLimitError,
        "{operation:?}"
    );
    assert_eq!(
        fake.calls().len(),
        calls + 2,
        "one call, and one more once Zoho's minute was waited out"
    );
    assert!(
        waited >= Duration::from_secs(55),
        "the minute was waited out first: {waited:?}"
    );
    let message = operation.error_message.clone().unwrap_or_default();
    assert!(message.contains("the sync can continue after"), "{message}");
    let continue_at = message
        .split("continue after ")
        .nth(1)
        .and_then(|rest| rest.split(';').next())
        .and_then(|at| at.parse::<DateTime<Utc>>().ok())
        .expect("a time to continue at");
    let ahead = continue_at - Utc::now();
    assert!(
        ahead > chrono::Duration::minutes(55) && ahead <= chrono::Duration::minutes(60),
        "an hour from the refusal: {message}"
    );
    assert!(!message.contains(super::ACCESS), "no token in messages");
    assert_eq!(
        json(app.get(&path).await).await,
        before,
        "the first sync's data is kept"
    );

    // Every process holds off: the next sync asks nothing of Zoho.
    let next = latest(
        &sync(&app, company_id, QueueDataTypeDataType::Invoices).await,
        "invoices",
    );
    assert_eq!(next.status, PullStatus::RateLimitError, "{next:?}");
    assert_eq!(fake.calls().len(), calls + 2, "Zoho was not called again");
}
