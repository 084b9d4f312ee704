//! The platform connectors end to end: tributary syncing from, refreshing
//! at and verifying with fake platforms on loopback that answer from
//! fixtures shaped like the platforms' documented responses. One folder per
//! platform, as in `src/platforms/`: its test module and its `fixtures/`.

mod amazon_seller_central;
mod bigcommerce;
pub mod dynamics_365_business_central;
mod ebay;
pub mod exact_online;
pub mod fake;
pub mod freeagent;
pub mod freshbooks;
pub mod ledger_reads;
pub mod mollie;
pub mod myob;
pub mod netsuite;
pub mod paypal;
mod plaid;
pub mod quickbooks_online;
pub mod sage_business_cloud;
pub mod scenarios;
pub mod shopify;
pub mod square;
pub mod stripe;
pub mod truelayer;
pub mod wave;
pub mod xero;
pub mod zettle;
pub mod zoho_books;

use std::time::Duration;

use serde_json::Value;
use uuid::Uuid;

use client::types::{PullOperation, QueueDataTypeDataType};
use tributary::platforms::config::{PlatformConfig, PlatformsConfig};
use tributary::platforms::connector::Connectors;
use tributary::platforms::kit::http::RetryPolicy;
use tributary::sync::engine::EngineConfig;

use crate::helpers::{AppOptions, TestApp};

/// Fast retries, so failure scenarios take milliseconds.
pub fn fast_retries() -> RetryPolicy {
    RetryPolicy {
        retries: 3,
        base_backoff: Duration::from_millis(10),
        max_backoff: Duration::from_millis(40),
        max_retry_after: Duration::from_secs(3),
    }
}

/// Every platform pointed at `fake` (only one is used per test).
pub fn options_for(fake: &fake::Fake, page_size: Option<u64>, workers: usize) -> AppOptions {
    let urls = PlatformConfig {
        api_base: Some(fake.url()),
        token_url: Some(fake.token_url()),
        authorize_url: Some(fake.authorize_url()),
        page_size,
    };
    let config = PlatformsConfig {
        timeout: Duration::from_secs(5),
        retry: fast_retries(),
        ..PlatformsConfig::default()
    }
    .every_platform(&urls);
    AppOptions {
        connectors: Connectors::for_platforms(&config).expect("the HTTP client builds"),
        engine: EngineConfig {
            workers,
            poll: Duration::from_millis(20),
            ..EngineConfig::default()
        },
        ..AppOptions::default()
    }
}

/// Stores the fake's OAuth client for `platform_key` through the API.
pub async fn set_oauth_client(app: &TestApp, platform_key: &str) {
    let response = app
        .raw()
        .put(app.url(&format!("/integrations/{platform_key}/oauth-client")))
        .header("authorization", app.authorization())
        .json(
            &serde_json::json!({"clientId": fake::CLIENT_ID, "clientSecret": fake::CLIENT_SECRET}),
        )
        .send()
        .await
        .expect("answered");
    assert_eq!(response.status(), 200);
}

/// `PUT .../authorization` (with `?verify=true` when asked).
pub async fn authorize(
    app: &TestApp,
    company_id: Uuid,
    connection_id: Uuid,
    body: &Value,
    verify: bool,
) -> reqwest::Response {
    let query = if verify { "?verify=true" } else { "" };
    app.raw()
        .put(app.url(&format!(
            "/companies/{company_id}/connections/{connection_id}/authorization{query}"
        )))
        .header("authorization", app.authorization())
        .json(body)
        .send()
        .await
        .expect("answered")
}

/// The connection's stored authorization body, decrypted with the library.
pub async fn stored(app: &TestApp, connection_id: Uuid) -> Value {
    tributary::connections::open_credential(&app.db, &app.keyring, connection_id)
        .await
        .expect("readable")
        .expect("stored")
}

/// Queues `data_type` and waits until the company's operations settle.
pub async fn sync(
    app: &TestApp,
    company_id: Uuid,
    data_type: QueueDataTypeDataType,
) -> Vec<PullOperation> {
    app.client
        .queue_data_type(&company_id, data_type, None)
        .await
        .expect("queued");
    crate::sync::settled(&app.client, company_id).await
}

/// The newest operation of `data_type`.
pub fn latest(operations: &[PullOperation], data_type: &str) -> PullOperation {
    operations
        .iter()
        .filter(|operation| operation.data_type.to_string() == data_type)
        .max_by_key(|operation| operation.requested)
        .cloned()
        .expect("an operation of that type")
}

/// A hook for the fake: the refresh token stored for `connection_id` now.
pub fn stored_refresh_token(app: &TestApp, connection_id: Uuid) -> fake::Hook {
    let db = app.db.clone();
    let keyring = app.keyring.clone();
    std::sync::Arc::new(move || {
        let db = db.clone();
        let keyring = keyring.clone();
        Box::pin(async move {
            tributary::connections::open_credential(&db, &keyring, connection_id)
                .await
                .ok()
                .flatten()
                .and_then(|body| body["refreshToken"].as_str().map(str::to_owned))
        })
    })
}

#[tokio::test]
async fn verify_is_refused_where_there_is_no_connector_and_trivial_for_the_sandbox() {
    for backend in crate::helpers::backends() {
        // An app without Mollie's connector.
        let options = AppOptions {
            connectors: Connectors::default(),
            ..AppOptions::default()
        };
        let app = &TestApp::spawn_with(backend, options).await;
        let company_id = crate::connections::new_company(app, "Acme").await;
        let connection_id = crate::connections::new_connection(app, company_id, "mollie").await;
        let body = serde_json::json!({
            "organizationId": "org_acme1", "accessToken": "mollie-access", "refreshToken": "mollie-refresh", "expiresIn": 3600
        });
        let response = authorize(app, company_id, connection_id, &body, true).await;
        assert_eq!(response.status(), 422);
        let message = crate::helpers::json(response).await["error"]
            .as_str()
            .unwrap_or_default()
            .to_owned();
        assert!(message.contains("cannot verify Mollie tokens"), "{message}");
        assert_eq!(
            crate::connections::count_rows(app, "connection_credential").await,
            0
        );
        // Without verify the same tokens are accepted, as before.
        assert_eq!(
            authorize(app, company_id, connection_id, &body, false)
                .await
                .status(),
            200
        );
    }

    crate::helpers::for_each_database(async |app| {
        let company_id = crate::connections::new_company(app, "Acme").await;
        let sandbox = crate::connections::new_connection(app, company_id, "sandbox").await;
        let body = serde_json::json!({"organizationId": "sbx-verify", "accessToken": "tok"});
        assert_eq!(
            authorize(app, company_id, sandbox, &body, true)
                .await
                .status(),
            200
        );
        // The sandbox never refreshes: an expired sandbox token verifies too
        // (found by schemathesis: it answered 422 "cannot refresh").
        let expired = serde_json::json!({
            "organizationId": "sbx-verify", "accessToken": "tok", "refreshToken": "r", "expiresIn": 0
        });
        assert_eq!(
            authorize(app, company_id, sandbox, &expired, true)
                .await
                .status(),
            200
        );
    })
    .await;
}
