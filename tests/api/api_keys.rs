//! `/apiKeys`: a client's keys over the API: created once-shown, listed
//! without secrets, limited to ten, deleted (never the last), and scoped to
//! their client.

use reqwest::header::AUTHORIZATION;
use serde_json::{Value, json};

use crate::helpers::{TestApp, basic, for_each_database, json};

/// `POST /apiKeys` with `body`, authenticated with `key`.
async fn create_with(app: &TestApp, key: &str, body: &Value) -> reqwest::Response {
    app.raw()
        .post(app.url("/apiKeys"))
        .header(AUTHORIZATION, basic(key))
        .json(body)
        .send()
        .await
        .expect("the server answers")
}

/// A raw request of `method` on `path`, authenticated with `key`.
async fn call_with(
    app: &TestApp,
    method: reqwest::Method,
    path: &str,
    key: &str,
) -> reqwest::Response {
    app.raw()
        .request(method, app.url(path))
        .header(AUTHORIZATION, basic(key))
        .send()
        .await
        .expect("the server answers")
}

/// Every key the app's own key sees, from the first page.
async fn listed(app: &TestApp) -> Vec<Value> {
    let page = json(app.get("/apiKeys?pageSize=50").await).await;
    page["results"].as_array().expect("results").clone()
}

#[tokio::test]
async fn a_created_key_is_shown_once_and_works_for_the_same_client() {
    for_each_database(async |app| {
        let company = json(app.post_json("/companies", &json!({"name": "Acme"})).await).await;

        let response = app
            .post_json("/apiKeys", &json!({"name": "  billing sync \t"}))
            .await;
        assert_eq!(response.status(), 201);
        let location = response.headers()["location"]
            .to_str()
            .expect("ASCII")
            .to_owned();
        let created = json(response).await;
        let id = created["id"].as_str().expect("an id").to_owned();
        assert_eq!(location, format!("/apiKeys/{id}"));
        assert_eq!(created["name"], "billing sync", "trimmed");
        let key = created["key"]
            .as_str()
            .expect("the key, this once")
            .to_owned();
        assert!(key.starts_with("trb_") && key.len() == 47, "{key}");

        // The new key sees the company the first key created.
        let companies = json(call_with(app, reqwest::Method::GET, "/companies", &key).await).await;
        assert_eq!(companies["results"][0]["companyId"], company["companyId"]);

        // Listed and read back without the key; its use is recorded.
        let keys = listed(app).await;
        assert_eq!(keys.len(), 2, "the app's own key and the new one: {keys:?}");
        let entry = keys
            .iter()
            .find(|entry| entry["id"] == id.as_str())
            .expect("listed");
        assert_eq!(
            entry
                .as_object()
                .expect("an object")
                .keys()
                .collect::<Vec<_>>(),
            ["id", "name", "created", "lastUsed"],
            "never the key or its digest"
        );
        assert!(entry["lastUsed"].is_string(), "used once: {entry}");
        let read = json(app.get(&location).await).await;
        assert_eq!(&read, entry);
        let body = serde_json::to_string(&keys).expect("JSON");
        assert!(
            !body.contains(&key) && !body.contains(&key[4..]),
            "no key in a list"
        );
    })
    .await;
}

#[tokio::test]
async fn a_bad_key_body_answers_400_and_creates_nothing() {
    for_each_database(async |app| {
        let cases = [
            (json!({"name": ""}), "name"),
            (json!({"name": "   "}), "name"),
            (json!({"name": "n".repeat(201)}), "name"),
            (json!({"name": 7}), "name"),
            (json!({"name": "ok", "key": "trb_mine"}), "key"),
        ];
        for (body, field) in cases {
            let response = app.post_json("/apiKeys", &body).await;
            assert_eq!(response.status(), 400, "{body}");
            let error = json(response).await;
            assert_eq!(error["statusCode"], 400);
            let items: Vec<&str> = error["validation"]["errors"]
                .as_array()
                .expect("validation errors")
                .iter()
                .filter_map(|item| item["itemId"].as_str())
                .collect();
            assert!(items.contains(&field), "{body} → {error}");
        }
        assert_eq!(listed(app).await.len(), 1, "nothing was created");
    })
    .await;
}

/// `name` is optional, as on the command line; a request without any body
/// answers 415 saying to send one (and what), and creates nothing.
#[tokio::test]
async fn a_key_without_a_name_gets_the_default_one_and_a_missing_body_says_what_to_send() {
    for_each_database(async |app| {
        let created = app.post_json("/apiKeys", &json!({})).await;
        assert_eq!(created.status(), 201);
        assert_eq!(json(created).await["name"], "created through the API");
        let bodiless = app
            .raw()
            .post(app.url("/apiKeys"))
            .header("authorization", app.authorization())
            .send()
            .await
            .expect("answered");
        assert_eq!(bodiless.status(), 415);
        let error = json(bodiless).await;
        let said = error["error"].as_str().unwrap_or_default();
        assert!(
            said.contains("Content-Type: application/json") && said.contains("`{}`"),
            "{error}"
        );
        assert_eq!(
            listed(app).await.len(),
            2,
            "the first key and the unnamed one"
        );
    })
    .await;
}

#[tokio::test]
async fn a_client_holds_at_most_ten_keys_even_when_created_at_once() {
    for_each_database(async |app| {
        // Fifteen creations at once: the limit holds however they interleave.
        let attempts = (0..15).map(|index| {
            let body = json!({"name": format!("key {index}")});
            async move {
                create_with(app, &app.api_key, &body)
                    .await
                    .status()
                    .as_u16()
            }
        });
        let statuses = futures::future::join_all(attempts).await;
        assert_eq!(
            statuses.iter().filter(|status| **status == 201).count(),
            9,
            "{statuses:?}"
        );
        assert_eq!(
            statuses.iter().filter(|status| **status == 409).count(),
            6,
            "{statuses:?}"
        );
        assert_eq!(listed(app).await.len(), 10);

        let refused = app
            .post_json("/apiKeys", &json!({"name": "eleventh"}))
            .await;
        assert_eq!(refused.status(), 409);
        let error = json(refused).await;
        assert!(
            error["error"]
                .as_str()
                .expect("a message")
                .contains("Delete one"),
            "{error}"
        );
        assert_eq!(error["canBeRetried"], false);
        assert_eq!(listed(app).await.len(), 10);
    })
    .await;
}

#[tokio::test]
async fn a_deleted_key_stops_working_at_once_and_the_last_key_stays() {
    for_each_database(async |app| {
        let created = json(
            app.post_json("/apiKeys", &json!({"name": "temporary"}))
                .await,
        )
        .await;
        let (id, key) = (
            created["id"].as_str().expect("an id").to_owned(),
            created["key"].as_str().expect("a key").to_owned(),
        );
        // Used first, so the server remembers it as verified.
        assert_eq!(
            call_with(app, reqwest::Method::GET, "/companies", &key)
                .await
                .status(),
            200
        );

        let deleted = call_with(
            app,
            reqwest::Method::DELETE,
            &format!("/apiKeys/{id}"),
            &app.api_key,
        )
        .await;
        assert_eq!(deleted.status(), 204);
        let refused = call_with(app, reqwest::Method::GET, "/companies", &key).await;
        assert_eq!(
            refused.status(),
            401,
            "forgotten at once by the server that deleted it"
        );
        assert_eq!(app.get(&format!("/apiKeys/{id}")).await.status(), 404);
        let again = call_with(
            app,
            reqwest::Method::DELETE,
            &format!("/apiKeys/{id}"),
            &app.api_key,
        )
        .await;
        assert_eq!(again.status(), 404);

        // The app's own key is now its client's last: it cannot go.
        let own = listed(app).await;
        assert_eq!(own.len(), 1);
        let own_id = own[0]["id"].as_str().expect("an id");
        let last = call_with(
            app,
            reqwest::Method::DELETE,
            &format!("/apiKeys/{own_id}"),
            &app.api_key,
        )
        .await;
        assert_eq!(last.status(), 409);
        let error = json(last).await;
        assert!(
            error["error"]
                .as_str()
                .expect("a message")
                .contains("last API key"),
            "{error}"
        );
        assert_eq!(
            app.get("/companies").await.status(),
            200,
            "the last key still works"
        );
    })
    .await;
}

#[tokio::test]
async fn a_key_may_delete_itself_while_another_remains() {
    for_each_database(async |app| {
        let created = json(app.post_json("/apiKeys", &json!({"name": "leaving"})).await).await;
        let (id, key) = (
            created["id"].as_str().expect("an id"),
            created["key"].as_str().expect("a key"),
        );
        let deleted = call_with(app, reqwest::Method::DELETE, &format!("/apiKeys/{id}"), key).await;
        assert_eq!(deleted.status(), 204);
        assert_eq!(
            call_with(app, reqwest::Method::GET, "/apiKeys", key)
                .await
                .status(),
            401
        );
        assert_eq!(listed(app).await.len(), 1);
    })
    .await;
}

#[tokio::test]
async fn another_clients_keys_are_unknown_ids() {
    for_each_database(async |app| {
        let (other_key, _) = app.other_tenant("globex").await;
        let other_page =
            json(call_with(app, reqwest::Method::GET, "/apiKeys", &other_key).await).await;
        assert_eq!(
            other_page["totalResults"], 1,
            "each client sees only its own keys"
        );
        let other_id = other_page["results"][0]["id"]
            .as_str()
            .expect("an id")
            .to_owned();

        assert_eq!(app.get(&format!("/apiKeys/{other_id}")).await.status(), 404);
        let deleted = call_with(
            app,
            reqwest::Method::DELETE,
            &format!("/apiKeys/{other_id}"),
            &app.api_key,
        )
        .await;
        assert_eq!(deleted.status(), 404);
        let error = json(deleted).await;
        assert_eq!(error["error"], format!("No API key with id {other_id}."));
        assert_eq!(
            call_with(app, reqwest::Method::GET, "/companies", &other_key)
                .await
                .status(),
            200,
            "the other client's key still works"
        );
        assert_eq!(listed(app).await.len(), 1);
    })
    .await;
}

#[tokio::test]
async fn malformed_ids_and_paging_answer_400() {
    for_each_database(async |app| {
        for path in [
            "/apiKeys/not-a-uuid",
            "/apiKeys?page=0",
            "/apiKeys?pageSize=5001",
        ] {
            let response = app.get(path).await;
            assert_eq!(response.status(), 400, "{path}");
            assert_eq!(json(response).await["statusCode"], 400, "{path}");
        }
        let response = call_with(
            app,
            reqwest::Method::DELETE,
            "/apiKeys/not-a-uuid",
            &app.api_key,
        )
        .await;
        assert_eq!(response.status(), 400);
        assert_eq!(listed(app).await.len(), 1);
    })
    .await;
}
