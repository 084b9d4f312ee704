//! Faults a client must get a clear answer to (issue 17): NUL characters
//! in any text, reading while a first sync is on its way, and a database
//! that stops answering and comes back.

use std::time::Duration;

use reqwest::Method;
use serde_json::{Value, json};
use uuid::Uuid;

use crate::connections::{count_rows, new_company, new_connection};
use crate::helpers::{AppOptions, TestApp, backends, for_each_database, json};
use crate::sync::{sandbox_connection, settled};

const NUL_RULE: &str = "must not contain the NUL character (U+0000), which no text accepts";

/// Sends `body` with `method` to `path` and returns the status and JSON body.
async fn send(app: &TestApp, method: Method, path: &str, body: &Value) -> (u16, Value) {
    let response = app
        .raw()
        .request(method, app.url(path))
        .header("authorization", app.authorization())
        .json(body)
        .send()
        .await
        .expect("answered");
    let status = response.status().as_u16();
    (status, json(response).await)
}

/// Asserts a 400 whose one validation item is `item_id` with the NUL rule.
fn assert_refused_nul(status: u16, body: &Value, item_id: &str) {
    assert_eq!(status, 400, "{body}");
    assert_eq!(body["canBeRetried"], false, "{body}");
    assert_eq!(body["validation"]["errors"][0]["itemId"], item_id, "{body}");
    assert_eq!(
        body["validation"]["errors"][0]["message"], NUL_RULE,
        "{body}"
    );
}

#[tokio::test]
async fn a_nul_character_in_any_text_answers_400_naming_the_field_on_both_databases() {
    for_each_database(async |app| {
        // Creating: the name, the description.
        let (status, body) = send(
            app,
            Method::POST,
            "/companies",
            &json!({"name": "Ac\u{0}me"}),
        )
        .await;
        assert_refused_nul(status, &body, "name");
        let (status, body) = send(
            app,
            Method::POST,
            "/companies",
            &json!({"name": "Acme", "description": "\u{0}"}),
        )
        .await;
        assert_refused_nul(status, &body, "description");
        assert_eq!(count_rows(app, "company").await, 0);

        // Updating keeps the stored values.
        let company_id = new_company(app, "Acme").await;
        let (status, body) = send(
            app,
            Method::PUT,
            &format!("/companies/{company_id}"),
            &json!({"name": "Acme\u{0}"}),
        )
        .await;
        assert_refused_nul(status, &body, "name");
        let stored = json(app.get(&format!("/companies/{company_id}")).await).await;
        assert_eq!(stored["name"], "Acme");

        // An OAuth client's id.
        let (status, body) = send(
            app,
            Method::PUT,
            "/integrations/xero/oauth-client",
            &json!({"clientId": "id\u{0}", "clientSecret": "secret"}),
        )
        .await;
        assert_refused_nul(status, &body, "clientId");
        assert_eq!(count_rows(app, "oauth_client").await, 0);

        // A token inside an authorization body: named, never echoed.
        let connection_id = new_connection(app, company_id, "sandbox").await;
        let (status, body) = send(
            app,
            Method::PUT,
            &format!("/companies/{company_id}/connections/{connection_id}/authorization"),
            &json!({"organizationId": "sbx", "accessToken": "secret-token\u{0}"}),
        )
        .await;
        assert_refused_nul(status, &body, "accessToken");
        assert!(!body.to_string().contains("secret-token"), "{body}");
        assert_eq!(count_rows(app, "connection_credential").await, 0);

        // A query parameter, whatever it filters.
        let response = app
            .get(&format!(
                "/companies/{company_id}/data/bankTransactions?accountId=acc%00"
            ))
            .await;
        let status = response.status().as_u16();
        assert_refused_nul(status, &json(response).await, "accountId");
    })
    .await;
}

#[tokio::test]
async fn reading_while_the_first_sync_is_queued_says_so_and_asks_to_retry() {
    for backend in backends() {
        // No worker: the operation stays queued for as long as the test looks.
        let app = TestApp::spawn_with(backend, AppOptions::idle()).await;
        let company_id = new_company(&app, "Acme").await;
        sandbox_connection(&app, company_id, 20, 7).await;

        // Nothing requested yet: the present answer, not retryable.
        let never = app
            .get(&format!("/companies/{company_id}/data/invoices"))
            .await;
        assert_eq!(never.status(), 409);
        assert!(never.headers().get("retry-after").is_none());
        let body = json(never).await;
        assert_eq!(body["canBeRetried"], false, "{body}");
        assert!(
            body["error"]
                .as_str()
                .is_some_and(|error| error.contains("POST /companies/")),
            "{body}"
        );

        let queued = app
            .post_json(&format!("/companies/{company_id}/data/all"), &json!({}))
            .await;
        assert_eq!(queued.status(), 202);
        let queued = json(queued).await;
        let operation = queued
            .as_array()
            .and_then(|operations| {
                operations
                    .iter()
                    .find(|operation| operation["dataType"] == "invoices")
            })
            .cloned()
            .expect("an invoices operation");
        assert_eq!(operation["leaseExpiresAt"], Value::Null, "{operation}");

        let waiting = app
            .get(&format!("/companies/{company_id}/data/invoices"))
            .await;
        assert_eq!(waiting.status(), 409);
        assert_eq!(
            waiting
                .headers()
                .get("retry-after")
                .and_then(|value| value.to_str().ok()),
            Some("2")
        );
        let body = json(waiting).await;
        assert_eq!(body["canBeRetried"], true, "{body}");
        let error = body["error"].as_str().expect("a sentence");
        let operation_id = operation["pullOperationId"].as_str().expect("an id");
        assert!(error.contains(operation_id), "{error}");
        assert!(error.contains("is Queued"), "{error}");
        assert!(
            error.contains(&format!(
                "GET /companies/{company_id}/data/history/{operation_id}"
            )),
            "{error}"
        );

        // Another client's reader learns nothing of it.
        let (_, other) = app.other_tenant("other-client").await;
        let (status, _) = crate::helpers::error_of(
            other
                .list_invoices(&company_id, None, None, None, None, None, None, None)
                .await,
        );
        assert_eq!(status, 404);
    }
}

#[tokio::test]
async fn once_the_first_sync_completes_the_same_read_succeeds() {
    for_each_database(async |app| {
        let company_id = new_company(app, "Acme").await;
        sandbox_connection(app, company_id, 20, 7).await;
        let queued = app
            .post_json(&format!("/companies/{company_id}/data/all"), &json!({}))
            .await;
        assert_eq!(queued.status(), 202);
        // Whatever the read says while it runs, it is retryable, and after
        // the sync the same read answers the data.
        let early = app
            .get(&format!("/companies/{company_id}/data/invoices"))
            .await;
        if early.status() == 409 {
            assert_eq!(json(early).await["canBeRetried"], true);
        } else {
            assert_eq!(early.status(), 200);
        }
        settled(&app.client, company_id).await;
        let page = json(
            app.get(&format!("/companies/{company_id}/data/invoices"))
                .await,
        )
        .await;
        assert_eq!(page["totalResults"], 20, "{page}");
    })
    .await;
}

/// Makes the test's own PostgreSQL database refuse connections (and closes
/// the ones it has), or accept them again.
async fn set_database_reachable(admin: &sea_orm::DatabaseConnection, name: &str, reachable: bool) {
    use sea_orm::ConnectionTrait;
    admin
        .execute_unprepared(&format!(
            "ALTER DATABASE \"{name}\" WITH ALLOW_CONNECTIONS {reachable}"
        ))
        .await
        .expect("the database's setting changes");
    if !reachable {
        admin
            .execute_unprepared(&format!(
                "SELECT pg_terminate_backend(pid) FROM pg_stat_activity \
                 WHERE datname = '{name}' AND pid <> pg_backend_pid()"
            ))
            .await
            .expect("its connections are closed");
    }
}

#[tokio::test]
async fn a_database_outage_answers_503_with_retry_after_and_recovers_without_a_restart() {
    let Some(own) = TestApp::spawn_in_own_postgres_database().await else {
        eprintln!("PostgreSQL only: TRIBUTARY_TEST_POSTGRES_URL is not set");
        return;
    };
    let (app, admin, name) = (&own.app, &own.admin, own.name.as_str());
    let company_id: Uuid = new_company(app, "Before the outage").await;

    set_database_reachable(admin, name, false).await;
    for path in [
        "/companies".to_owned(),
        format!("/companies/{company_id}"),
        format!("/companies/{company_id}/data/invoices"),
    ] {
        let response = app.get(&path).await;
        assert_eq!(response.status(), 503, "{path}");
        assert_eq!(
            response
                .headers()
                .get("retry-after")
                .and_then(|value| value.to_str().ok()),
            Some("5"),
            "{path}"
        );
        let body = json(response).await;
        assert_eq!(body["statusCode"], 503, "{body}");
        assert_eq!(body["canBeRetried"], true, "{body}");
        assert_eq!(
            body["error"],
            "The database is not answering at the moment. Try again in a few seconds."
        );
    }
    let (status, body) = send(app, Method::POST, "/companies", &json!({"name": "During"})).await;
    assert_eq!(
        (status, body["canBeRetried"].clone()),
        (503, json!(true)),
        "{body}"
    );

    set_database_reachable(admin, name, true).await;
    // The pool opens new connections on its own: no restart.
    let mut recovered = None;
    for _ in 0..50 {
        let response = app.get("/companies").await;
        if response.status() == 200 {
            recovered = Some(json(response).await);
            break;
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    let page = recovered.expect("the service recovers once the database answers");
    assert_eq!(page["totalResults"], 1, "{page}");
    assert_eq!(page["results"][0]["name"], "Before the outage");
}
