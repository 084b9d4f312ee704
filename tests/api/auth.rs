//! `Authorization: Basic <base64(API key)>`, key storage, and tenant
//! isolation on every companies operation.

use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use sea_orm::{ConnectionTrait, Statement};

use crate::helpers::{TestApp, basic, company_input, error_of, for_each_database, json};

async fn status_and_body(
    app: &TestApp,
    authorization: Option<&str>,
) -> (u16, serde_json::Value, Option<String>) {
    let mut request = app.raw().get(app.url("/companies"));
    if let Some(value) = authorization {
        request = request.header("authorization", value);
    }
    let response = request.send().await.expect("the server answers");
    let status = response.status().as_u16();
    let challenge = response
        .headers()
        .get("www-authenticate")
        .map(|value| value.to_str().expect("ASCII").to_owned());
    (status, json(response).await, challenge)
}

#[tokio::test]
async fn missing_malformed_and_unknown_credentials_answer_401_with_a_challenge() {
    for_each_database(async |app| {
        let wrong_scheme = format!("Bearer {}", app.api_key);
        let key_as_password = basic(&format!(":{}", app.api_key));
        let user_and_password = basic(&format!("{}:secret", app.api_key));
        let unknown = basic("trb_not-a-key");
        let cases: [(&str, Option<&str>, &str); 7] = [
            ("no header", None, "Missing credentials"),
            (
                "wrong scheme",
                Some(&wrong_scheme),
                "Unsupported authorization scheme",
            ),
            (
                "bad base64",
                Some("Basic %%%not-base64%%%"),
                "Malformed credentials",
            ),
            ("empty credential", Some("Basic "), "Malformed credentials"),
            (
                "key as password",
                Some(&key_as_password),
                "Malformed credentials",
            ),
            (
                "user and password",
                Some(&user_and_password),
                "Malformed credentials",
            ),
            ("unknown key", Some(&unknown), "Unknown API key"),
        ];
        for (case, header, message) in cases {
            let (status, body, challenge) = status_and_body(app, header).await;
            assert_eq!(status, 401, "{case}");
            assert_eq!(
                challenge.as_deref(),
                Some("Basic realm=\"tributary\""),
                "{case}"
            );
            assert_eq!(body["statusCode"], 401, "{case}");
            assert!(
                body["error"]
                    .as_str()
                    .expect("a sentence")
                    .contains(message),
                "{case}: {body}"
            );
            assert!(
                !body.to_string().contains(&app.api_key),
                "{case}: the key is echoed"
            );
        }
    })
    .await;
}

#[tokio::test]
async fn the_key_alone_and_the_key_with_an_empty_password_are_both_accepted() {
    for_each_database(async |app| {
        let bare = format!("Basic {}", STANDARD.encode(&app.api_key));
        let with_colon = format!("Basic {}", STANDARD.encode(format!("{}:", app.api_key)));
        for header in [bare, with_colon] {
            let (status, body, _) = status_and_body(app, Some(&header)).await;
            assert_eq!(status, 200, "{header}: {body}");
        }
    })
    .await;
}

#[tokio::test]
async fn keys_are_stored_only_as_digests() {
    for_each_database(async |app| {
        let rows = app
            .db
            .query_all_raw(Statement::from_string(
                app.db.get_database_backend(),
                "SELECT key_hash FROM api_key",
            ))
            .await
            .expect("api keys readable");
        assert_eq!(rows.len(), 1);
        let stored: String = rows[0].try_get("", "key_hash").expect("a digest");
        assert_eq!(stored.len(), 64);
        assert!(!stored.contains(&app.api_key) && !app.api_key.contains(&stored));
    })
    .await;
}

#[tokio::test]
async fn the_bootstrap_key_is_ensured_once_and_authenticates() {
    for_each_database(async |app| {
        for _ in 0..2 {
            tributary::api_keys::ensure_bootstrap(&app.db, "bootstrap-key-for-tests")
                .await
                .expect("bootstrap key ensured");
        }
        let count = app
            .db
            .query_one_raw(Statement::from_string(
                app.db.get_database_backend(),
                "SELECT COUNT(*) AS n FROM api_key",
            ))
            .await
            .expect("countable")
            .expect("a row");
        assert_eq!(count.try_get::<i64>("", "n").expect("a count"), 2);
        let (status, _, _) = status_and_body(app, Some(&basic("bootstrap-key-for-tests"))).await;
        assert_eq!(status, 200);
    })
    .await;
}

#[tokio::test]
async fn another_clients_companies_are_invisible_and_untouchable() {
    for_each_database(async |app| {
        let body = company_input("Owned by default", Some("kept"));
        let owned = app
            .client
            .create_company(&body)
            .await
            .expect("created")
            .into_inner();
        let (_, other) = app.other_tenant("other-client").await;
        let missing = uuid::Uuid::now_v7();

        let listed = other
            .list_companies(None, None)
            .await
            .expect("a page")
            .into_inner();
        assert_eq!(listed.total_results, 0);
        assert!(listed.results.is_empty());

        let replacement = company_input("Hijacked", None);
        // Each operation answers exactly as it does for an id that does not exist.
        for id in [owned.company_id, missing] {
            let (status, got) = error_of(other.get_company(&id).await);
            assert_eq!(
                (status, got.error.as_str()),
                (404, format!("No company with id {id}.").as_str())
            );
            let (status, _) = error_of(other.replace_company(&id, &replacement).await);
            assert_eq!(status, 404);
            let (status, _) = error_of(other.delete_company(&id).await);
            assert_eq!(status, 404);
        }

        let unchanged = app
            .client
            .get_company(&owned.company_id)
            .await
            .expect("still there")
            .into_inner();
        assert_eq!(unchanged.name, "Owned by default");
        assert_eq!(unchanged.description.as_deref(), Some("kept"));

        // And the other client's own companies stay out of the first's list.
        other.create_company(&replacement).await.expect("created");
        let mine = app.companies_first_page().await;
        assert_eq!(
            mine.results
                .iter()
                .map(|c| c.company_id)
                .collect::<Vec<_>>(),
            [owned.company_id]
        );
    })
    .await;
}
