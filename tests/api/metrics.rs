//! `/metrics` on its own address: requests by operation and status with
//! latency histograms, pull operations by platform, data type and outcome,
//! the queue, webhook attempts; no API key needed, and no secret or id in
//! any label.

use serde_json::json;
use uuid::Uuid;

use crate::helpers::{AppOptions, TestApp, backends, http_client, json};
use crate::sync::{sandbox_connection, sync_and_settle};
use crate::webhooks::receiver::Receiver;

/// The value of the counter `name` whose labels include every one of
/// `labels`, by the app's `/metrics`; 0 when it was never counted.
pub async fn counter(app: &TestApp, name: &str, labels: &[(&str, &str)]) -> u64 {
    let metrics = scrape(app).await;
    metrics
        .lines()
        .find(|line| {
            line.strip_prefix(name)
                .is_some_and(|rest| rest.starts_with('{'))
                && labels
                    .iter()
                    .all(|(label, value)| line.contains(&format!("{label}=\"{value}\"")))
        })
        .and_then(|line| line.rsplit(' ').next()?.parse().ok())
        .unwrap_or(0)
}

/// The app's `/metrics`, checked to be served without an API key in
/// Prometheus' text format.
pub async fn scrape(app: &TestApp) -> String {
    let address = app.metrics_address.expect("metrics served");
    let response = http_client()
        .get(format!("http://{address}/metrics"))
        .send()
        .await
        .expect("the metrics listener answers");
    assert_eq!(response.status(), 200, "no API key needed");
    let content_type = response.headers()["content-type"]
        .to_str()
        .expect("ASCII")
        .to_owned();
    assert!(
        content_type.starts_with("text/plain; version=0.0.4"),
        "{content_type}"
    );
    response.text().await.expect("text")
}

/// The value of the sample `line_start` (a metric name with its labels).
fn sample(text: &str, line_start: &str) -> Option<f64> {
    text.lines()
        .find(|line| line.starts_with(line_start) && line[line_start.len()..].starts_with(' '))
        .and_then(|line| line.rsplit(' ').next())
        .and_then(|value| value.parse().ok())
}

#[tokio::test]
async fn metrics_count_requests_syncs_and_webhooks_without_secrets() {
    for backend in backends() {
        let options = AppOptions {
            metrics: true,
            ..AppOptions::working(1)
        };
        let app = TestApp::spawn_with(backend, options).await;
        let receiver = Receiver::start().await;
        let endpoint = app
            .post_json(
                "/webhooks/endpoints",
                &json!({"url": receiver.url("/m"), "eventTypes": ["company.created"]}),
            )
            .await;
        assert_eq!(endpoint.status(), 201);
        let company = json(
            app.post_json("/companies", &json!({"name": "Metered"}))
                .await,
        )
        .await;
        let company_id: Uuid = company["companyId"]
            .as_str()
            .expect("an id")
            .parse()
            .expect("a UUID");
        sandbox_connection(&app, company_id, 25, 3).await;
        sync_and_settle(&app, company_id).await;
        for _ in 0..2 {
            assert_eq!(app.get("/companies").await.status(), 200);
        }
        assert_eq!(
            app.get(&format!("/companies/{}", Uuid::now_v7()))
                .await
                .status(),
            404
        );
        assert_eq!(app.get("/no/such/route").await.status(), 404);
        receiver.wait_for(1).await;

        let text = scrape(&app).await;
        assert_eq!(
            sample(
                &text,
                r#"tributary_http_requests_total{operation="listCompanies",status="200"}"#
            ),
            Some(2.0),
            "{text}"
        );
        assert_eq!(
            sample(
                &text,
                r#"tributary_http_requests_total{operation="getCompany",status="404"}"#
            ),
            Some(1.0)
        );
        assert_eq!(
            sample(
                &text,
                r#"tributary_http_requests_total{operation="unmatched",status="404"}"#
            ),
            Some(1.0)
        );
        assert!(
            text.contains(r#"tributary_http_request_duration_seconds_bucket{operation="listCompanies",le="0.005"}"#),
            "latency histograms per operation: {text}"
        );
        assert_eq!(
            sample(
                &text,
                r#"tributary_pull_operations_total{platform="sandbox",data_type="invoices",outcome="Complete"}"#
            ),
            Some(1.0),
            "{text}"
        );
        assert!(
            text.contains("tributary_pull_operation_duration_seconds_bucket{platform=\"sandbox\"")
        );
        assert_eq!(sample(&text, "tributary_sync_queue_depth"), Some(0.0));
        assert_eq!(
            sample(&text, "tributary_sync_queue_oldest_age_seconds"),
            Some(0.0)
        );
        for _ in 0..100 {
            if sample(
                &scrape(&app).await,
                r#"tributary_webhook_attempts_total{outcome="Succeeded"}"#,
            )
            .is_some()
            {
                break;
            }
            tokio::time::sleep(std::time::Duration::from_millis(50)).await;
        }
        let text = scrape(&app).await;
        assert_eq!(
            sample(
                &text,
                r#"tributary_webhook_attempts_total{outcome="Succeeded"}"#
            ),
            Some(1.0),
            "{text}"
        );
        for secret in [app.api_key.as_str(), "tok", &company_id.to_string()] {
            assert!(!text.contains(secret), "{secret} appears in the metrics");
        }
        assert_eq!(
            app.get("/metrics").await.status(),
            404,
            "not on the API's address"
        );
    }
}

#[tokio::test]
async fn the_queue_shows_waiting_operations_and_their_age() {
    for backend in backends() {
        let options = AppOptions {
            metrics: true,
            ..AppOptions::idle()
        };
        let app = TestApp::spawn_with(backend, options).await;
        let company = json(
            app.post_json("/companies", &json!({"name": "Waiting"}))
                .await,
        )
        .await;
        let company_id: Uuid = company["companyId"]
            .as_str()
            .expect("an id")
            .parse()
            .expect("a UUID");
        sandbox_connection(&app, company_id, 5, 1).await;
        let queued = json(
            app.post_json(&format!("/companies/{company_id}/data/all"), &json!(null))
                .await,
        )
        .await;
        let waiting = queued.as_array().expect("operations").len() as f64;
        tokio::time::sleep(std::time::Duration::from_millis(1100)).await;
        let text = scrape(&app).await;
        assert_eq!(
            sample(&text, "tributary_sync_queue_depth"),
            Some(waiting),
            "{text}"
        );
        let age = sample(&text, "tributary_sync_queue_oldest_age_seconds").expect("an age");
        assert!((1.0..60.0).contains(&age), "{age}");
    }
}

#[tokio::test]
async fn every_call_to_a_platform_and_every_wait_before_one_is_counted_by_platform() {
    use crate::platforms::fake::Answer;
    use crate::platforms::{options_for, xero};
    use client::types::QueueDataTypeDataType;

    for backend in backends() {
        let fake = xero::fake().await;
        let options = AppOptions {
            metrics: true,
            ..options_for(&fake, None, 1)
        };
        let app = TestApp::spawn_with(backend, options).await;
        let (company_id, _) = xero::connected(&app, 1800).await;
        // Xero's minute limit once: one second's wait, then the call again.
        let mut limited = Answer::json(429, "{\"Message\":\"Rate limit exceeded\"}");
        limited
            .headers
            .push(("retry-after".to_owned(), "1".to_owned()));
        fake.with(|inner| inner.scripted.push_back(limited));
        crate::platforms::sync(&app, company_id, QueueDataTypeDataType::Invoices).await;

        let text = scrape(&app).await;
        let answered = fake.calls().len() as f64;
        assert_eq!(
            sample(
                &text,
                "tributary_platform_calls_total{platform=\"xero\",status=\"2xx\"}"
            ),
            Some(answered - 1.0),
            "{text}"
        );
        assert_eq!(
            sample(
                &text,
                "tributary_platform_calls_total{platform=\"xero\",status=\"429\"}"
            ),
            Some(1.0)
        );
        assert_eq!(
            sample(
                &text,
                "tributary_platform_call_wait_seconds_sum{platform=\"xero\"}"
            ),
            Some(1.0)
        );
        assert_eq!(
            sample(
                &text,
                "tributary_platform_call_wait_seconds_count{platform=\"xero\"}"
            ),
            Some(1.0)
        );
        assert!(
            !text.contains("xero-access-token"),
            "no token in the metrics"
        );
    }
}
