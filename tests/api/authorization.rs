//! `PUT .../authorization`: self-service token migration, its validation,
//! and what happens to the tokens afterwards (sealed at rest, never shown,
//! never logged, rotatable, tamper-evident).

use client::types::{
    AuthorizeConnectionBody, ConnectionStatus, SandboxAuthorization, XeroAuthorization,
};
use sea_orm::{ConnectionTrait, Statement};
use serde_json::json;
use uuid::Uuid;

use crate::connections::{count_rows, new_company, new_connection};
use crate::helpers::{TestApp, captured_logs, for_each_database, json};
use tributary::connections::credentials::rotate as rotate_credentials;
use tributary::connections::open_credential;

/// A typed sandbox body, as a partner's generated client builds it.
pub fn sandbox_body(access_token: &str) -> AuthorizeConnectionBody {
    AuthorizeConnectionBody::SandboxAuthorization(SandboxAuthorization {
        organization_id: "sbx-org-1".parse().expect("valid"),
        access_token: access_token.parse().expect("valid"),
        refresh_token: None,
        expires_in: None,
        invoice_count: Default::default(),
        order_count: Default::default(),
        bank_transaction_count: Default::default(),
        seed: Default::default(),
        changed_invoice_count: Default::default(),
    })
}

pub async fn authorize_sandbox(
    app: &TestApp,
    company_id: Uuid,
    connection_id: Uuid,
    access_token: &str,
) {
    let linked = app
        .client
        .authorize_connection(
            &company_id,
            &connection_id,
            None,
            &sandbox_body(access_token),
        )
        .await
        .expect("authorized")
        .into_inner();
    assert_eq!(linked.status, ConnectionStatus::Linked);
}

async fn put_authorization(
    app: &TestApp,
    company_id: Uuid,
    connection_id: Uuid,
    body: &serde_json::Value,
) -> reqwest::Response {
    app.raw()
        .put(app.url(&format!(
            "/companies/{company_id}/connections/{connection_id}/authorization"
        )))
        .header("authorization", app.authorization())
        .json(body)
        .send()
        .await
        .expect("answered")
}

fn item_ids(error: &serde_json::Value) -> Vec<String> {
    let mut ids: Vec<String> = error["validation"]["errors"]
        .as_array()
        .expect("validation errors")
        .iter()
        .map(|item| item["itemId"].as_str().expect("an itemId").to_owned())
        .collect();
    ids.sort();
    ids
}

const TENANT: &str = "4f3c9b8e-1d2a-4c5b-9e8f-7a6b5c4d3e2f";

#[tokio::test]
async fn the_seed_flow_links_a_connection_and_never_shows_its_tokens() {
    for_each_database(async |app| {
        let company_id = new_company(app, "Acme").await;
        let connection_id = new_connection(app, company_id, "xero").await;
        let schema = app
            .client
            .get_integration("xero")
            .await
            .expect("found")
            .into_inner();
        assert_eq!(
            schema.authorization_schema_name.as_deref(),
            Some("XeroAuthorization")
        );

        // A typed body through the client generated from openapi.yaml.
        let body = AuthorizeConnectionBody::XeroAuthorization(XeroAuthorization {
            tenant_id: TENANT.parse().expect("uuid"),
            access_token: "xero-access-SEEDFLOW".parse().expect("valid"),
            refresh_token: "xero-refresh-SEEDFLOW".parse().expect("valid"),
            expires_in: Some(client::types::XeroAuthorizationExpiresIn::Integer(1800)),
            expires_at: None,
        });
        let before = chrono::Utc::now();
        let linked = app
            .client
            .authorize_connection(&company_id, &connection_id, None, &body)
            .await
            .expect("authorized")
            .into_inner();
        assert_eq!(linked.status, ConnectionStatus::Linked);
        let facts = linked.authorization.expect("authorization facts");
        assert_eq!(facts.organization_id, TENANT);
        let expires = facts.access_token_expires_at.expect("expires");
        assert!(
            (expires - before).num_seconds() >= 1799 && (expires - before).num_seconds() <= 1805,
            "{expires}"
        );

        let read_back = app
            .get(&format!(
                "/companies/{company_id}/connections/{connection_id}"
            ))
            .await;
        let text = read_back.text().await.expect("text");
        assert!(text.contains("\"status\":\"Linked\""), "{text}");
        assert!(!text.contains("SEEDFLOW"), "a token was returned: {text}");
        let listed = app
            .get(&format!("/companies/{company_id}/connections"))
            .await
            .text()
            .await
            .expect("text");
        assert!(!listed.contains("SEEDFLOW"));

        // The sealed body holds what was sent, with an absolute expiry.
        let sealed = open_credential(&app.db, &app.keyring, connection_id)
            .await
            .expect("opens")
            .expect("stored");
        assert_eq!(sealed["refreshToken"], "xero-refresh-SEEDFLOW");
        assert!(sealed.get("expiresIn").is_none() && sealed.get("expiresAt").is_some());
    })
    .await;
}

#[tokio::test]
async fn numbers_sent_as_strings_are_accepted() {
    for_each_database(async |app| {
        let company_id = new_company(app, "Acme").await;
        let connection_id = new_connection(app, company_id, "xero").await;
        let response = put_authorization(
            app,
            company_id,
            connection_id,
            &json!({
                "tenantId": TENANT, "accessToken": "a", "refreshToken": "r", "expiresIn": "1800"
            }),
        )
        .await;
        assert_eq!(response.status(), 200);
        let body = json(response).await;
        assert!(body["authorization"]["accessTokenExpiresAt"].is_string());
    })
    .await;
}

#[tokio::test]
async fn every_invalid_field_is_reported_and_nothing_is_stored_or_echoed() {
    for_each_database(async |app| {
        let company_id = new_company(app, "Acme").await;
        let connection_id = new_connection(app, company_id, "quickbooks-online").await;
        let huge = "h".repeat(16 * 1024 + 1);
        let cases = [
            (json!({"realmId": "123", "refreshToken": "LEAK-r1", "expiresIn": 3600}), vec!["accessToken"]),
            (json!({"realmId": 123, "accessToken": "LEAK-a2", "refreshToken": "LEAK-r2", "expiresIn": 3600}), vec!["realmId"]),
            (json!({"realmId": "123", "accessToken": "", "refreshToken": "LEAK-r3", "expiresIn": 3600}), vec!["accessToken"]),
            (json!({"realmId": "123", "accessToken": huge, "refreshToken": "LEAK-r4", "expiresIn": 3600}), vec!["accessToken"]),
            (json!({"realmId": "123", "acessToken": "LEAK-a5", "refreshToken": "LEAK-r5", "expiresIn": 3600}), vec!["accessToken", "acessToken"]),
            (json!({"realmId": "123", "accessToken": "LEAK-a6", "refreshToken": "LEAK-r6"}), vec!["expiresIn"]),
            (json!({"realmId": "123", "accessToken": "LEAK-a7", "refreshToken": "LEAK-r7", "expiresIn": "soon"}), vec!["expiresIn"]),
            (json!({"realmId": "abc", "accessToken": 42, "refreshToken": ["LEAK-r8"], "environment": "staging"}), vec!["accessToken", "environment", "realmId", "refreshToken"]),
            (json!({"realmId": "123", "accessToken": "LEAK-a9", "refreshToken": "LEAK-r9", "expiresIn": 1, "expiresAt": "2030-01-01T00:00:00Z"}), vec!["expiresAt"]),
            (json!("LEAK-a10"), vec!["body"]),
            (json!({"realmId": "123", "accessToken": "LEAK-a11", "refreshToken": "LEAK-r11", "expiresIn": "999999999"}), vec!["expiresIn"]),
            (json!({"realmId": "123", "accessToken": "   ", "refreshToken": "LEAK-r12", "expiresIn": 60}), vec!["accessToken"]),
            (json!({"realmId": "123", "accessToken": "é".repeat(9000), "refreshToken": "LEAK-r13", "expiresIn": 60}), vec!["accessToken"]),
        ];
        for (body, expected) in cases {
            let response = put_authorization(app, company_id, connection_id, &body).await;
            assert_eq!(response.status(), 400, "{body}");
            let text = response.text().await.expect("text");
            let error: serde_json::Value = serde_json::from_str(&text).expect("JSON");
            assert_eq!(item_ids(&error), expected, "{body}: {text}");
            assert!(!text.contains("LEAK") && !text.contains("hhhh"), "a value was echoed: {text}");
        }
        let connection = app.client.get_connection(&company_id, &connection_id).await.expect("found").into_inner();
        assert_eq!(connection.status, ConnectionStatus::PendingAuth);
        assert!(connection.authorization.is_none());
        assert_eq!(count_rows(app, "connection_credential").await, 0);
    })
    .await;
}

#[tokio::test]
async fn platforms_without_self_service_migration_answer_422_saying_what_to_do() {
    for_each_database(async |app| {
        let company_id = new_company(app, "Acme").await;
        for (platform, expected) in [
            ("quickbooks-desktop", "takes no migrated tokens"),
            ("gocardless-bank-account-data", "takes no migrated tokens"),
        ] {
            let connection_id = new_connection(app, company_id, platform).await;
            let response = put_authorization(
                app,
                company_id,
                connection_id,
                &json!({"accessToken": "LEAK-422"}),
            )
            .await;
            assert_eq!(response.status(), 422, "{platform}");
            let text = response.text().await.expect("text");
            assert!(text.contains(expected), "{platform}: {text}");
            assert!(!text.contains("LEAK"));
        }
        assert_eq!(count_rows(app, "connection_credential").await, 0);
    })
    .await;
}

#[tokio::test]
async fn new_tokens_replace_old_ones_and_relink_from_any_status() {
    for_each_database(async |app| {
        let company_id = new_company(app, "Acme").await;
        let connection_id = new_connection(app, company_id, "sandbox").await;
        authorize_sandbox(app, company_id, connection_id, "tok-first").await;
        // The same body again gives the same result.
        authorize_sandbox(app, company_id, connection_id, "tok-first").await;

        let unlink = client::types::ConnectionUpdate {
            status: client::types::StatusChange::Unlinked,
        };
        app.client
            .update_connection(&company_id, &connection_id, &unlink)
            .await
            .expect("unlinked");
        authorize_sandbox(app, company_id, connection_id, "tok-second").await;

        // The platform revoking access is simulated in the database.
        use sea_orm::{ActiveModelTrait, EntityTrait, IntoActiveModel, Set};
        let row = entity::connection::Entity::find_by_id(connection_id)
            .one(&app.db)
            .await
            .expect("read")
            .expect("row");
        let mut active = row.into_active_model();
        active.status = Set(entity::connection::ConnectionStatus::Deauthorized);
        active.update(&app.db).await.expect("deauthorized");
        assert_eq!(
            app.client
                .get_connection(&company_id, &connection_id)
                .await
                .expect("found")
                .into_inner()
                .status,
            ConnectionStatus::Deauthorized
        );
        authorize_sandbox(app, company_id, connection_id, "tok-third").await;

        let sealed = open_credential(&app.db, &app.keyring, connection_id)
            .await
            .expect("opens")
            .expect("stored");
        assert_eq!(sealed["accessToken"], "tok-third");
        assert_eq!(count_rows(app, "connection_credential").await, 1);
    })
    .await;
}

/// Every stored byte, as text: the SQLite files, or every PostgreSQL row.
async fn raw_database_text(app: &TestApp) -> String {
    let backend = app.db.get_database_backend();
    let tables = [
        "client",
        "api_key",
        "company",
        "connection",
        "connection_credential",
    ];
    let mut text = String::new();
    if backend == sea_orm::DatabaseBackend::Postgres {
        for table in tables {
            let sql = format!("SELECT CAST(t AS TEXT) AS row FROM {table} t");
            let rows = app
                .db
                .query_all_raw(Statement::from_string(backend, sql))
                .await
                .expect("readable");
            for row in rows {
                text.push_str(&row.try_get::<String>("", "row").expect("text"));
            }
        }
    } else {
        let path = app
            .db
            .query_one_raw(Statement::from_string(
                backend,
                "SELECT file FROM pragma_database_list WHERE name = 'main'",
            ))
            .await
            .expect("listed")
            .expect("a row")
            .try_get::<String>("", "file")
            .expect("a path");
        for suffix in ["", "-wal", "-shm"] {
            if let Ok(bytes) = std::fs::read(format!("{path}{suffix}")) {
                text.push_str(&String::from_utf8_lossy(&bytes));
            }
        }
    }
    text
}

#[tokio::test]
async fn tokens_are_nowhere_in_the_raw_database_nor_the_logs() {
    for_each_database(async |app| {
        let company_id = new_company(app, "Acme").await;
        let connection_id = new_connection(app, company_id, "xero").await;
        let response = put_authorization(app, company_id, connection_id, &json!({
            "tenantId": TENANT, "accessToken": "RAWSCAN-access-7f3a", "refreshToken": "RAWSCAN-refresh-9c1d", "expiresIn": 1800
        }))
        .await;
        assert_eq!(response.status(), 200);
        // A rejected body must not leak into the logs either.
        let rejected = put_authorization(app, company_id, connection_id, &json!({
            "tenantId": TENANT, "accessToken": "RAWSCAN-rejected-2b8e", "refreshToken": 5, "expiresIn": 1800
        }))
        .await;
        assert_eq!(rejected.status(), 400);

        let stored = raw_database_text(app).await;
        // The scan does see stored text: the non-secret tenant id is there.
        assert!(stored.contains(TENANT), "the scan missed the stored tenant id");
        assert!(!stored.contains("RAWSCAN"), "a token is stored in plain text");
        // PostgreSQL shows bytea as hex: look for the hex form too.
        let hex: String = "RAWSCAN".bytes().map(|byte| format!("{byte:02x}")).collect();
        assert!(!stored.to_lowercase().contains(&hex), "a token is stored in plain text (hex)");
        let logs = captured_logs();
        assert!(logs.contains("/authorization"), "the requests were logged");
        assert!(!logs.contains("RAWSCAN"), "a token reached the logs");
    })
    .await;
}

#[tokio::test]
async fn rotation_re_encrypts_under_the_new_key_and_can_run_again() {
    for_each_database(async |app| {
        let company_id = new_company(app, "Acme").await;
        let first = new_connection(app, company_id, "sandbox").await;
        let second = new_connection(app, company_id, "sandbox").await;
        authorize_sandbox(app, company_id, first, "tok-rotate-1").await;
        authorize_sandbox(app, company_id, second, "tok-rotate-2").await;

        let new_key = tributary::crypto::generate_key_entry();
        let both = tributary::crypto::Keyring::parse(&format!("{new_key},{}", app.key_entry))
            .expect("keys");
        let new_only = tributary::crypto::Keyring::parse(&new_key).expect("key");

        // An interrupted earlier run: one credential already moved.
        let partial = rotate_one(app, &both, first).await;
        assert!(partial);
        let rotation = rotate_credentials(&app.db, &both).await.expect("rotated");
        assert_eq!((rotation.rotated, rotation.current), (1, 1));
        let again = rotate_credentials(&app.db, &both).await.expect("rotated");
        assert_eq!((again.rotated, again.current), (0, 2));

        for (connection_id, token) in [(first, "tok-rotate-1"), (second, "tok-rotate-2")] {
            let opened = open_credential(&app.db, &new_only, connection_id)
                .await
                .expect("opens")
                .expect("stored");
            assert_eq!(opened["accessToken"], token);
            assert!(
                open_credential(&app.db, &app.keyring, connection_id)
                    .await
                    .is_err(),
                "the old key alone still opens it"
            );
        }
    })
    .await;
}

/// Re-encrypts one credential, as an interrupted rotation would have.
async fn rotate_one(
    app: &TestApp,
    keyring: &tributary::crypto::Keyring,
    connection_id: Uuid,
) -> bool {
    use sea_orm::{ActiveModelTrait, EntityTrait, IntoActiveModel, Set};
    let body = open_credential(&app.db, keyring, connection_id)
        .await
        .expect("opens")
        .expect("stored");
    let sealed = tributary::vault::seal_json(
        keyring,
        tributary::vault::Owner::Connection(connection_id),
        &body,
    )
    .expect("sealed");
    let row = entity::connection_credential::Entity::find_by_id(connection_id)
        .one(&app.db)
        .await
        .expect("read")
        .expect("row");
    let mut active = row.into_active_model();
    active.key_id = Set(sealed.key_id);
    active.nonce = Set(sealed.nonce);
    active.ciphertext = Set(sealed.ciphertext);
    active.update(&app.db).await.is_ok()
}

#[tokio::test]
async fn altered_or_moved_ciphertexts_fail_loudly() {
    for_each_database(async |app| {
        use sea_orm::{ActiveModelTrait, EntityTrait, IntoActiveModel, Set};
        let company_id = new_company(app, "Acme").await;
        let tampered = new_connection(app, company_id, "sandbox").await;
        let source = new_connection(app, company_id, "sandbox").await;
        let target = new_connection(app, company_id, "sandbox").await;
        for connection_id in [tampered, source, target] {
            authorize_sandbox(app, company_id, connection_id, "tok-tamper").await;
        }

        let row = entity::connection_credential::Entity::find_by_id(tampered)
            .one(&app.db)
            .await
            .expect("read")
            .expect("row");
        let mut ciphertext = row.ciphertext.clone();
        ciphertext[0] ^= 0x01;
        let mut active = row.into_active_model();
        active.ciphertext = Set(ciphertext);
        active.update(&app.db).await.expect("altered");
        let error = open_credential(&app.db, &app.keyring, tampered)
            .await
            .expect_err("tampering is detected");
        assert!(
            error.to_string().contains("failed authentication"),
            "{error}"
        );
        assert!(error.to_string().contains(&tampered.to_string()));

        // A ciphertext copied to another connection's row does not open there.
        let copied = entity::connection_credential::Entity::find_by_id(source)
            .one(&app.db)
            .await
            .expect("read")
            .expect("row");
        let row = entity::connection_credential::Entity::find_by_id(target)
            .one(&app.db)
            .await
            .expect("read")
            .expect("row");
        let mut active = row.into_active_model();
        active.nonce = Set(copied.nonce);
        active.ciphertext = Set(copied.ciphertext);
        active.update(&app.db).await.expect("copied");
        assert!(
            open_credential(&app.db, &app.keyring, target)
                .await
                .is_err()
        );

        let rotated_keyring = tributary::crypto::Keyring::parse(&format!(
            "{},{}",
            tributary::crypto::generate_key_entry(),
            app.key_entry
        ))
        .expect("keys");
        let rotation = rotate_credentials(&app.db, &rotated_keyring).await;
        let error = rotation.expect_err("rotation stops at the tampered row");
        assert!(
            error.to_string().contains("failed authentication"),
            "{error}"
        );
    })
    .await;
}

#[tokio::test]
async fn authorizing_and_deleting_at_once_never_answers_500() {
    for_each_database(async |app| {
        let company_id = new_company(app, "Racy").await;
        for _ in 0..15 {
            let connection_id = new_connection(app, company_id, "sandbox").await;
            let body = json!({"organizationId": "sbx-race", "accessToken": "tok-race"});
            let path = format!("/companies/{company_id}/connections/{connection_id}");
            let authorize = put_authorization(app, company_id, connection_id, &body);
            let delete = app
                .raw()
                .delete(app.url(&path))
                .header("authorization", app.authorization())
                .send();
            let (authorized, deleted) = tokio::join!(authorize, delete);
            let deleted = deleted.expect("answered");
            let put_status = authorized.status().as_u16();
            let put_body = authorized.text().await.expect("text");
            assert!(
                [200, 404].contains(&put_status),
                "PUT {put_status} {put_body}: {}",
                captured_logs()
                    .lines()
                    .rfind(|line| line.contains("internal error"))
                    .unwrap_or_default()
            );
            assert!(
                [204, 404].contains(&deleted.status().as_u16()),
                "DELETE {}",
                deleted.status()
            );
        }
        assert_eq!(count_rows(app, "connection_credential").await, 0);
    })
    .await;
}

#[tokio::test]
async fn a_body_of_two_other_platforms_answers_409_naming_them_both() {
    // FreshBooks and NetSuite bodies share a shape, so this one is either.
    for_each_database(async |app| {
        let company_id = new_company(app, "Acme").await;
        let connection_id = new_connection(app, company_id, "sandbox").await;
        let either = json!({"accountId": "abc123", "accessToken": "LEAK-a", "refreshToken": "LEAK-r", "expiresIn": 60});
        let response = put_authorization(app, company_id, connection_id, &either).await;
        assert_eq!(response.status(), 409);
        let text = response.text().await.expect("text");
        assert!(text.contains("FreshBooks or Oracle NetSuite authorization"), "{text}");
        assert!(!text.contains("LEAK"));
        assert_eq!(count_rows(app, "connection_credential").await, 0);
    })
    .await;
}

#[tokio::test]
async fn another_platforms_body_answers_409_naming_both_platforms() {
    for_each_database(async |app| {
        let company_id = new_company(app, "Acme").await;
        let connection_id = new_connection(app, company_id, "quickbooks-online").await;
        let xero_body = json!({
            "tenantId": TENANT, "accessToken": "LEAK-409", "refreshToken": "LEAK-409r", "expiresIn": 1800
        });
        let response = put_authorization(app, company_id, connection_id, &xero_body).await;
        assert_eq!(response.status(), 409);
        let text = response.text().await.expect("text");
        assert!(text.contains("Xero authorization") && text.contains("QuickBooks Online"), "{text}");
        assert!(!text.contains("LEAK"));
        assert_eq!(count_rows(app, "connection_credential").await, 0);
    })
    .await;
}
