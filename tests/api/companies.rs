//! `/companies`: create, read, replace, delete, and the validation of each.

use client::types::CompanyInput;

use crate::helpers::{TestApp, company_input, error_of, for_each_database, json};

fn input(name: &str, description: Option<&str>) -> CompanyInput {
    company_input(name, description)
}

async fn total(app: &TestApp) -> i64 {
    app.companies_first_page().await.total_results
}

#[tokio::test]
async fn creating_a_company_answers_201_with_its_location_and_trimmed_name() {
    for_each_database(async |app| {
        let response = app
            .post_json(
                "/companies",
                &serde_json::json!({"name": "  Acme Trading Ltd \t", "description": "Wholesale"}),
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
                "/companies/{}",
                created["companyId"].as_str().expect("an id")
            )
        );
        assert_eq!(created["name"], "Acme Trading Ltd");
        assert_eq!(created["description"], "Wholesale");
        assert_eq!(created["lastSync"], serde_json::Value::Null);
        let stamp = created["created"].as_str().expect("a timestamp");
        assert!(
            stamp.ends_with('Z') && chrono::DateTime::parse_from_rfc3339(stamp).is_ok(),
            "{stamp}"
        );

        // Reading it back gives exactly what creation returned.
        let fetched = json(app.get(&location).await).await;
        assert_eq!(fetched, created);
    })
    .await;
}

#[tokio::test]
async fn a_company_without_description_shows_null() {
    for_each_database(async |app| {
        let created = app
            .client
            .create_company(&input("Solo", None))
            .await
            .expect("created")
            .into_inner();
        let raw = json(app.get(&format!("/companies/{}", created.company_id)).await).await;
        assert_eq!(raw["description"], serde_json::Value::Null);
        assert!(
            raw.as_object()
                .expect("an object")
                .contains_key("description")
        );
    })
    .await;
}

#[tokio::test]
async fn invalid_company_fields_answer_400_per_field_and_store_nothing() {
    for_each_database(async |app| {
        let long_name = "n".repeat(201);
        let long_description = "d".repeat(2001);
        let cases = [
            (serde_json::json!({"name": ""}), vec!["name"]),
            (serde_json::json!({"name": "   "}), vec!["name"]),
            (serde_json::json!({"name": long_name}), vec!["name"]),
            (
                serde_json::json!({"name": "ok", "description": long_description}),
                vec!["description"],
            ),
            (
                serde_json::json!({"name": "", "description": long_description}),
                vec!["name", "description"],
            ),
            (serde_json::json!({}), vec!["name"]),
            (serde_json::json!({"name": 42}), vec!["name"]),
            (
                serde_json::json!({"nmae": "Typo Ltd"}),
                vec!["name", "nmae"],
            ),
            (serde_json::json!(["not", "an", "object"]), vec!["body"]),
        ];
        for (body, expected) in cases {
            let response = app.post_json("/companies", &body).await;
            assert_eq!(response.status(), 400, "{body}");
            let error = json(response).await;
            let mut fields: Vec<&str> = error["validation"]["errors"]
                .as_array()
                .expect("validation errors")
                .iter()
                .map(|item| item["itemId"].as_str().expect("an itemId"))
                .collect();
            fields.sort_unstable();
            let mut expected = expected.clone();
            expected.sort_unstable();
            assert_eq!(fields, expected, "{body}: {error}");
        }
        assert_eq!(total(app).await, 0);
    })
    .await;
}

#[tokio::test]
async fn exactly_200_name_characters_and_2000_description_characters_are_accepted() {
    for_each_database(async |app| {
        let name = "é".repeat(200);
        let description = "d".repeat(2000);
        let created = app
            .client
            .create_company(&input(&name, Some(&description)))
            .await
            .expect("created")
            .into_inner();
        assert_eq!(created.name, name);
        assert_eq!(created.description.as_deref(), Some(description.as_str()));
    })
    .await;
}

#[tokio::test]
async fn replacing_a_company_sets_both_fields_and_clears_an_omitted_description() {
    for_each_database(async |app| {
        let created = app
            .client
            .create_company(&input("Before", Some("old")))
            .await
            .expect("created")
            .into_inner();
        let replaced = app
            .client
            .replace_company(&created.company_id, &input(" After ", None))
            .await
            .expect("replaced")
            .into_inner();
        assert_eq!(
            (replaced.name.as_str(), replaced.description),
            ("After", None)
        );
        assert_eq!(
            (replaced.company_id, replaced.created),
            (created.company_id, created.created)
        );

        // The generated client refuses an empty name itself; send it raw.
        let response = app
            .raw()
            .put(app.url(&format!("/companies/{}", created.company_id)))
            .header("authorization", app.authorization())
            .json(&serde_json::json!({"name": ""}))
            .send()
            .await
            .expect("answered");
        assert_eq!(response.status(), 400);
        assert_eq!(
            json(response).await["validation"]["errors"][0]["itemId"],
            "name"
        );
        let unchanged = app
            .client
            .get_company(&created.company_id)
            .await
            .expect("found")
            .into_inner();
        assert_eq!(unchanged.name, "After");
    })
    .await;
}

#[tokio::test]
async fn deleting_a_company_answers_204_then_it_is_gone() {
    for_each_database(async |app| {
        let created = app
            .client
            .create_company(&input("Doomed", None))
            .await
            .expect("created")
            .into_inner();
        let keep = app
            .client
            .create_company(&input("Kept", None))
            .await
            .expect("created")
            .into_inner();
        let deleted = app
            .client
            .delete_company(&created.company_id)
            .await
            .expect("deleted");
        assert_eq!(deleted.status(), 204);
        assert_eq!(
            error_of(app.client.get_company(&created.company_id).await).0,
            404
        );
        assert_eq!(
            error_of(app.client.delete_company(&created.company_id).await).0,
            404
        );
        let listed = app.companies_first_page().await;
        assert_eq!(
            listed
                .results
                .iter()
                .map(|c| c.company_id)
                .collect::<Vec<_>>(),
            [keep.company_id]
        );
    })
    .await;
}

#[tokio::test]
async fn unknown_and_malformed_company_ids_answer_404_and_400() {
    for_each_database(async |app| {
        let unknown = uuid::Uuid::now_v7();
        let (status, error) = error_of(app.client.get_company(&unknown).await);
        assert_eq!((status, error.status_code), (404, 404));
        assert_eq!(error.error, format!("No company with id {unknown}."));

        for method in [reqwest::Method::GET, reqwest::Method::DELETE] {
            let response = app
                .raw()
                .request(method.clone(), app.url("/companies/not-a-uuid"))
                .header("authorization", app.authorization())
                .send()
                .await
                .expect("the server answers");
            assert_eq!(response.status(), 400, "{method}");
            let body = json(response).await;
            assert_eq!(
                body["validation"]["errors"][0]["itemId"], "companyId",
                "{method}: {body}"
            );
        }
    })
    .await;
}
