//! `/integrations`: the catalogue and each platform's body schema.

use std::num::NonZeroU32;

use crate::helpers::{for_each_database, json};

#[tokio::test]
async fn the_catalogue_pages_through_every_platform_in_key_order() {
    for_each_database(async |app| {
        let first = app
            .client
            .list_integrations(None, NonZeroU32::new(10))
            .await
            .expect("a page")
            .into_inner();
        assert!(first.total_results >= 25, "{}", first.total_results);
        assert_eq!(
            first.links.next.as_ref().map(|link| link.href.as_str()),
            Some("/integrations?page=2&pageSize=10")
        );

        let everything = app
            .client
            .list_integrations(None, NonZeroU32::new(5000))
            .await
            .expect("a page")
            .into_inner();
        let keys: Vec<&str> = everything
            .results
            .iter()
            .map(|i| i.platform_key.as_str())
            .collect();
        let mut sorted = keys.clone();
        sorted.sort_unstable();
        assert_eq!(keys, sorted);
        assert_eq!(keys.len() as i64, first.total_results);
        for expected in [
            "xero",
            "quickbooks-online",
            "shopify",
            "zoho-books",
            "plaid",
            "sandbox",
            "quickbooks-desktop",
        ] {
            assert!(keys.contains(&expected), "{expected} missing");
        }
        let self_service = everything
            .results
            .iter()
            .filter(|i| i.self_service_migration)
            .count();
        assert!(self_service >= 20, "{self_service}");
        let mut managed: Vec<&str> = everything
            .results
            .iter()
            .filter(|i| i.managed_migration)
            .map(|i| i.platform_key.as_str())
            .collect();
        managed.sort_unstable();
        assert_eq!(
            managed,
            [
                "freeagent",
                "freshbooks",
                "quickbooks-online",
                "shopify",
                "wave",
                "zoho-books"
            ]
        );
    })
    .await;
}

#[tokio::test]
async fn an_integration_carries_the_json_schema_its_published_component_describes() {
    for_each_database(async |app| {
        let xero = app.client.get_integration("xero").await.expect("found").into_inner();
        assert_eq!(xero.name, "Xero");
        assert_eq!(xero.authorization_schema_name.as_deref(), Some("XeroAuthorization"));
        // The spec types it as an object, so the client hands over a map.
        let schema = serde_json::Value::Object(xero.authorization_schema.expect("Xero takes self-service migration"));
        assert_eq!(schema["additionalProperties"], false);
        let required: Vec<&str> = schema["required"]
            .as_array()
            .expect("required fields")
            .iter()
            .filter_map(|field| field.as_str())
            .collect();
        assert_eq!(required, ["tenantId", "accessToken", "refreshToken"]);

        // The same body is a named component of the served spec.
        let spec = json(app.raw().get(app.url("/openapi.json")).send().await.expect("answered")).await;
        let component = &spec["components"]["schemas"]["XeroAuthorization"];
        assert_eq!(component["required"], schema["required"]);
        let body_refs = &spec["paths"]["/companies/{companyId}/connections/{connectionId}/authorization"]["put"]
            ["requestBody"]["content"]["application/json"]["schema"]["anyOf"];
        assert!(body_refs.as_array().expect("anyOf").iter().any(|r| r["$ref"] == "#/components/schemas/XeroAuthorization"));

        let desktop = app.client.get_integration("quickbooks-desktop").await.expect("found").into_inner();
        assert!(!desktop.self_service_migration && !desktop.managed_migration);
        assert!(desktop.authorization_schema.is_none() && desktop.authorization_schema_name.is_none());
    })
    .await;
}

#[tokio::test]
async fn an_unknown_platform_key_answers_404_and_the_catalogue_needs_a_key() {
    for_each_database(async |app| {
        let response = app.get("/integrations/xer0").await;
        assert_eq!(response.status(), 404);
        assert!(
            json(response).await["error"]
                .as_str()
                .expect("text")
                .contains("GET /integrations")
        );
        let anonymous = app
            .raw()
            .get(app.url("/integrations"))
            .send()
            .await
            .expect("answered");
        assert_eq!(anonymous.status(), 401);
    })
    .await;
}
