//! `/companies/{companyId}/connections`: lifecycle, unlink rules, deletes
//! and tenant isolation at every path level.

use client::types::{ConnectionInput, ConnectionStatus, ConnectionUpdate, StatusChange};
use sea_orm::{ConnectionTrait, Statement};
use uuid::Uuid;

use crate::authorization::authorize_sandbox;
use crate::helpers::{TestApp, company_input, error_of, for_each_database, json};

pub async fn new_company(app: &TestApp, name: &str) -> Uuid {
    let body = company_input(name, None);
    app.client
        .create_company(&body)
        .await
        .expect("company created")
        .into_inner()
        .company_id
}

pub async fn new_connection(app: &TestApp, company_id: Uuid, platform_key: &str) -> Uuid {
    let body = ConnectionInput {
        platform_key: platform_key.parse().expect("a valid key"),
    };
    app.client
        .create_connection(&company_id, &body)
        .await
        .expect("connection created")
        .into_inner()
        .connection_id
}

pub async fn count_rows(app: &TestApp, table: &str) -> i64 {
    let row = app
        .db
        .query_one_raw(Statement::from_string(
            app.db.get_database_backend(),
            format!("SELECT COUNT(*) AS n FROM {table}"),
        ))
        .await
        .expect("countable")
        .expect("a row");
    row.try_get::<i64>("", "n").expect("a count")
}

#[tokio::test]
async fn creating_a_connection_answers_201_pending_with_no_authorization() {
    for_each_database(async |app| {
        let company_id = new_company(app, "Acme").await;
        let response = app
            .post_json(
                &format!("/companies/{company_id}/connections"),
                &serde_json::json!({"platformKey": "xero"}),
            )
            .await;
        assert_eq!(response.status(), 201);
        let location = response.headers()["location"]
            .to_str()
            .expect("ASCII")
            .to_owned();
        let created = json(response).await;
        assert_eq!(
            location,
            format!(
                "/companies/{company_id}/connections/{}",
                created["connectionId"].as_str().expect("id")
            )
        );
        assert_eq!(created["status"], "PendingAuth");
        assert_eq!(created["platformKey"], "xero");
        assert_eq!(created["platformName"], "Xero");
        assert_eq!(created["sourceType"], "Accounting");
        assert_eq!(created["companyId"], company_id.to_string());
        assert_eq!(created["authorization"], serde_json::Value::Null);
        assert_eq!(created["lastSync"], serde_json::Value::Null);
        assert_eq!(json(app.get(&location).await).await, created);

        let listed = app
            .client
            .list_connections(&company_id, None, None)
            .await
            .expect("a page")
            .into_inner();
        assert_eq!(listed.total_results, 1);
        assert_eq!(
            listed.links.self_.href,
            format!("/companies/{company_id}/connections")
        );
    })
    .await;
}

#[tokio::test]
async fn an_unknown_platform_key_answers_400_pointing_at_the_catalogue() {
    for_each_database(async |app| {
        let company_id = new_company(app, "Acme").await;
        // The generated client refuses an unknown key itself; send it raw.
        let response = app
            .post_json(
                &format!("/companies/{company_id}/connections"),
                &serde_json::json!({"platformKey": "xeroo"}),
            )
            .await;
        assert_eq!(response.status(), 400);
        let error = json(response).await;
        let item = &error["validation"]["errors"][0];
        assert_eq!(item["itemId"], "platformKey");
        let message = item["message"].as_str().expect("a message");
        assert!(message.contains("GET /integrations"), "{message}");
        assert_eq!(count_rows(app, "connection").await, 0);
    })
    .await;
}

#[tokio::test]
async fn only_a_linked_connection_can_be_unlinked() {
    for_each_database(async |app| {
        let company_id = new_company(app, "Acme").await;
        let connection_id = new_connection(app, company_id, "sandbox").await;
        let unlink = ConnectionUpdate {
            status: StatusChange::Unlinked,
        };

        let (status, error) = error_of(
            app.client
                .update_connection(&company_id, &connection_id, &unlink)
                .await,
        );
        assert_eq!(status, 409);
        assert!(error.error.contains("PendingAuth"), "{}", error.error);

        authorize_sandbox(app, company_id, connection_id, "tok-unlink").await;
        let unlinked = app
            .client
            .update_connection(&company_id, &connection_id, &unlink)
            .await
            .expect("unlinked");
        assert_eq!(unlinked.into_inner().status, ConnectionStatus::Unlinked);

        let (status, _) = error_of(
            app.client
                .update_connection(&company_id, &connection_id, &unlink)
                .await,
        );
        assert_eq!(status, 409);

        let bad = app
            .raw()
            .patch(app.url(&format!(
                "/companies/{company_id}/connections/{connection_id}"
            )))
            .header("authorization", app.authorization())
            .json(&serde_json::json!({"status": "Linked"}))
            .send()
            .await
            .expect("answered");
        assert_eq!(bad.status(), 400);
        assert_eq!(
            json(bad).await["validation"]["errors"][0]["itemId"],
            "status"
        );
    })
    .await;
}

#[tokio::test]
async fn deleting_a_connection_destroys_its_tokens() {
    for_each_database(async |app| {
        let company_id = new_company(app, "Acme").await;
        let doomed = new_connection(app, company_id, "sandbox").await;
        let kept = new_connection(app, company_id, "sandbox").await;
        authorize_sandbox(app, company_id, doomed, "tok-doomed").await;
        authorize_sandbox(app, company_id, kept, "tok-kept").await;

        let deleted = app
            .client
            .delete_connection(&company_id, &doomed)
            .await
            .expect("deleted");
        assert_eq!(deleted.status(), 204);
        assert_eq!(
            error_of(app.client.get_connection(&company_id, &doomed).await).0,
            404
        );
        assert_eq!(
            error_of(app.client.delete_connection(&company_id, &doomed).await).0,
            404
        );
        assert_eq!(count_rows(app, "connection_credential").await, 1);
        let remaining = tributary::connections::open_credential(&app.db, &app.keyring, kept)
            .await
            .expect("opens");
        assert_eq!(remaining.expect("kept")["accessToken"], "tok-kept");
    })
    .await;
}

#[tokio::test]
async fn deleting_a_company_deletes_its_connections_and_their_tokens() {
    for_each_database(async |app| {
        let company_id = new_company(app, "Doomed").await;
        let other_company = new_company(app, "Kept").await;
        for _ in 0..2 {
            let connection_id = new_connection(app, company_id, "sandbox").await;
            authorize_sandbox(app, company_id, connection_id, "tok-company").await;
        }
        new_connection(app, other_company, "xero").await;
        app.client
            .delete_company(&company_id)
            .await
            .expect("deleted");
        assert_eq!(count_rows(app, "connection").await, 1);
        assert_eq!(count_rows(app, "connection_credential").await, 0);
    })
    .await;
}

#[tokio::test]
async fn connections_of_other_companies_and_other_clients_answer_404_at_every_level() {
    for_each_database(async |app| {
        let company_id = new_company(app, "Mine").await;
        let sibling_company = new_company(app, "Sibling").await;
        let connection_id = new_connection(app, company_id, "sandbox").await;
        let (_, other) = app.other_tenant("other-client").await;
        let their_company = other
            .create_company(&company_input("Theirs", None))
            .await
            .expect("created")
            .into_inner()
            .company_id;

        // My connection under my other company: 404.
        assert_eq!(
            error_of(
                app.client
                    .get_connection(&sibling_company, &connection_id)
                    .await
            )
            .0,
            404
        );
        // Another client: my company and my connection do not exist for them.
        assert_eq!(
            error_of(other.list_connections(&company_id, None, None).await).0,
            404
        );
        assert_eq!(
            error_of(other.get_connection(&company_id, &connection_id).await).0,
            404
        );
        assert_eq!(
            error_of(other.get_connection(&their_company, &connection_id).await).0,
            404
        );
        assert_eq!(
            error_of(other.delete_connection(&company_id, &connection_id).await).0,
            404
        );
        let unlink = ConnectionUpdate {
            status: StatusChange::Unlinked,
        };
        assert_eq!(
            error_of(
                other
                    .update_connection(&company_id, &connection_id, &unlink)
                    .await
            )
            .0,
            404
        );
        let create = ConnectionInput {
            platform_key: "xero".parse().expect("well-formed"),
        };
        assert_eq!(
            error_of(other.create_connection(&company_id, &create).await).0,
            404
        );
        let body = crate::authorization::sandbox_body("tok-theirs");
        assert_eq!(
            error_of(
                other
                    .authorize_connection(&company_id, &connection_id, None, &body)
                    .await
            )
            .0,
            404
        );
        assert_eq!(
            error_of(
                other
                    .authorize_connection(&their_company, &connection_id, None, &body)
                    .await
            )
            .0,
            404
        );
        // Unknown ids answer the same.
        let unknown = Uuid::now_v7();
        assert_eq!(
            error_of(app.client.get_connection(&company_id, &unknown).await).0,
            404
        );
        assert_eq!(
            error_of(app.client.get_connection(&unknown, &connection_id).await).0,
            404
        );

        let mine = app
            .client
            .get_connection(&company_id, &connection_id)
            .await
            .expect("still mine")
            .into_inner();
        assert_eq!(mine.status, ConnectionStatus::PendingAuth);
        assert_eq!(count_rows(app, "connection_credential").await, 0);
    })
    .await;
}
