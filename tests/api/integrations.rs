//! `/integrations`: the catalogue and each platform's body schema.

use std::num::NonZeroU32;

use sea_orm::EntityTrait;

use crate::helpers::{for_each_database, json};
use serde_json::json;

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
        // `managedMigration` says whether POST /migrations takes the
        // platform: every one that takes tokens and has a connector.
        let managed: Vec<&str> = everything
            .results
            .iter()
            .filter(|i| i.managed_migration)
            .map(|i| i.platform_key.as_str())
            .collect();
        assert!(
            managed.contains(&"sandbox") && managed.contains(&"xero"),
            "{managed:?}"
        );
        for integration in &everything.results {
            let key = integration.platform_key.as_str();
            let batch = json!({"platformKey": key, "rows": [{
                "companyName": "Flag check", "externalReference": "flag-1",
                "authorization": {"organizationId": "org", "accessToken": "t"}}]});
            let answer = app.post_json("/migrations?dryRun=true", &batch).await;
            let status = answer.status().as_u16();
            let body = json(answer).await;
            let refused_for_platform = status == 400
                && body["validation"]["errors"]
                    .as_array()
                    .is_some_and(|errors| errors.iter().any(|e| e["itemId"] == "platformKey"));
            assert_eq!(
                !refused_for_platform, integration.managed_migration,
                "{key}: managedMigration {} but POST /migrations answered {status} {body}",
                integration.managed_migration
            );
        }
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

#[tokio::test]
async fn an_oauth_client_is_stored_sealed_shown_without_its_secret_and_removed() {
    for_each_database(async |app| {
        let secret = "oauth-client-secret-do-not-show";
        let (status, _) = crate::helpers::error_of(app.client.get_oauth_client(xero()).await);
        assert_eq!(status, 404);

        let put = |client_id: &'static str| {
            app.raw()
                .put(app.url("/integrations/xero/oauth-client"))
                .header("authorization", app.authorization())
                .json(&serde_json::json!({"clientId": client_id, "clientSecret": secret}))
                .send()
        };
        let response = put("first-client").await.expect("answered");
        assert_eq!(response.status(), 200);
        let text = response.text().await.expect("a body");
        assert!(!text.contains(secret), "{text}");
        let shown = app
            .client
            .get_oauth_client(xero())
            .await
            .expect("stored")
            .into_inner();
        assert_eq!(shown.client_id, "first-client");
        assert_eq!(shown.platform_key, "xero");

        // Replacing keeps one row; the secret is sealed, not stored as text.
        assert_eq!(put("second-client").await.expect("answered").status(), 200);
        assert_eq!(crate::connections::count_rows(app, "oauth_client").await, 1);
        let client =
            tributary::oauth_clients::open(&app.db, &app.keyring, tenant_of(app).await, "xero")
                .await
                .expect("opens")
                .expect("stored");
        assert_eq!(client.client_id, "second-client");
        assert_eq!(client.client_secret, secret);
        let rows = entity::oauth_client::Entity::find()
            .all(&app.db)
            .await
            .expect("rows");
        assert!(
            !rows[0]
                .ciphertext
                .windows(secret.len())
                .any(|window| window == secret.as_bytes())
        );

        // Another tenant sees none of it.
        let (_, other) = app.other_tenant("other-client").await;
        assert_eq!(
            crate::helpers::error_of(other.get_oauth_client(xero()).await).0,
            404
        );

        // Unknown platforms, platforms without migration, unknown fields.
        assert_eq!(
            app.get("/integrations/nope/oauth-client").await.status(),
            404
        );
        assert_eq!(
            app.get("/integrations/quickbooks-desktop/oauth-client")
                .await
                .status(),
            404
        );
        let typo = app
            .raw()
            .put(app.url("/integrations/xero/oauth-client"))
            .header("authorization", app.authorization())
            .json(&serde_json::json!({"clientId": "x", "clientSecrte": secret}))
            .send()
            .await
            .expect("answered");
        assert_eq!(typo.status(), 400);
        assert!(!typo.text().await.expect("a body").contains(secret));

        app.client
            .delete_oauth_client(xero())
            .await
            .expect("deleted");
        assert_eq!(
            crate::helpers::error_of(app.client.get_oauth_client(xero()).await).0,
            404
        );
        assert_eq!(
            crate::helpers::error_of(app.client.delete_oauth_client(xero()).await).0,
            404
        );
        assert!(!crate::helpers::captured_logs().contains(secret));
    })
    .await;
}

/// The tenant (client) id of the app's own key.
async fn tenant_of(app: &crate::helpers::TestApp) -> uuid::Uuid {
    entity::client::Entity::find()
        .all(&app.db)
        .await
        .expect("clients")
        .into_iter()
        .find(|client| client.name == tributary::api_keys::DEFAULT_CLIENT)
        .expect("the default client")
        .id
}

/// Xero's key, as the generated client types the OAuth-client paths.
fn xero<T: std::str::FromStr>() -> T
where
    T::Err: std::fmt::Debug,
{
    "xero".parse().expect("xero takes OAuth clients")
}

#[tokio::test]
async fn an_integration_names_the_data_types_it_syncs_incrementally() {
    for_each_database(async |app| {
        for (platform_key, incremental) in [
            (
                "xero",
                json!([
                    "invoices",
                    "customers",
                    "suppliers",
                    "bills",
                    "payments",
                    "billPayments",
                    "creditNotes",
                    "journalEntries"
                ]),
            ),
            ("plaid", json!(["bankTransactions"])),
            ("freshbooks", json!(["payments", "items"])),
            ("zettle", json!(["orders"])),
            (
                "zoho-books",
                json!([
                    "invoices",
                    "bills",
                    "billPayments",
                    "creditNotes",
                    "journalEntries"
                ]),
            ),
            (
                "wave",
                json!(["invoices", "customers", "suppliers", "taxRates", "items"]),
            ),
            ("stripe", json!([])),
            ("sandbox", json!([])),
            ("gocardless-bank-account-data", json!([])),
        ] {
            let integration = json(app.get(&format!("/integrations/{platform_key}")).await).await;
            assert_eq!(
                integration["incrementalDataTypes"], incremental,
                "{platform_key}"
            );
            let data_types = integration["dataTypes"]
                .as_array()
                .cloned()
                .unwrap_or_default();
            for data_type in incremental.as_array().into_iter().flatten() {
                assert!(
                    data_types.contains(data_type),
                    "{platform_key}: {data_type}"
                );
            }
        }
    })
    .await;
}
