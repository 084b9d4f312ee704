//! `/syncSettings`: a client chooses the data types `data/all` queues
//! (every one a platform syncs until it does); `queueDataType` is not bound
//! by the choice; bad settings are refused whole, naming each problem, and
//! one client's choice is not another's.

use serde_json::{Value, json};
use uuid::Uuid;

use crate::connections::{new_company, new_connection};
use crate::helpers::{AppOptions, TestApp, for_each_database_with, json};
use crate::platforms::authorize;
use crate::sync::sandbox_connection;

/// Sets the client's sync settings; the status and the answer.
async fn put_settings(app: &TestApp, key: Option<&str>, body: Value) -> (u16, Value) {
    let authorization = key.map_or_else(|| app.authorization(), crate::helpers::basic);
    let response = app
        .raw()
        .put(app.url("/syncSettings"))
        .header("authorization", authorization)
        .json(&body)
        .send()
        .await
        .expect("answered");
    let status = response.status().as_u16();
    (status, response.json().await.expect("JSON"))
}

/// Queues `data/all`; the status and the data types of the operations it answers with.
async fn sync_all(app: &TestApp, company_id: Uuid) -> (u16, Value) {
    let response = app
        .post_json(&format!("/companies/{company_id}/data/all"), &json!({}))
        .await;
    let status = response.status().as_u16();
    (status, response.json().await.expect("JSON"))
}

fn data_types_of(operations: &Value) -> Vec<String> {
    let mut names: Vec<String> = operations
        .as_array()
        .expect("a list of operations")
        .iter()
        .map(|operation| {
            operation["dataType"]
                .as_str()
                .expect("a data type")
                .to_owned()
        })
        .collect();
    names.sort();
    names.dedup();
    names
}

#[tokio::test]
async fn data_all_queues_the_chosen_data_types_and_queue_data_type_any() {
    for_each_database_with(AppOptions::idle, async |app| {
        let defaults = json(app.get("/syncSettings").await).await;
        assert_eq!(defaults, json!({"dataTypes": null, "updated": null}));

        let company_id = new_company(app, "Chooser").await;
        sandbox_connection(app, company_id, 10, 1).await;
        let offered: Vec<String> = json(app.get("/integrations/sandbox").await).await["dataTypes"]
            .as_array()
            .expect("data types")
            .iter()
            .map(|name| name.as_str().expect("a name").to_owned())
            .collect();
        let (status, queued) = sync_all(app, company_id).await;
        assert_eq!(status, 202);
        let mut every = offered.clone();
        every.sort();
        assert_eq!(data_types_of(&queued), every, "the default: every one");
        assert!(
            offered.len() > 2,
            "the sandbox syncs more than two: {offered:?}"
        );

        // Operations still queued stay; let them end before choosing.
        clear_queue(app).await;
        let (status, stored) =
            put_settings(app, None, json!({"dataTypes": ["customers", "invoices"]})).await;
        assert_eq!(status, 200, "{stored}");
        assert_eq!(stored["dataTypes"], json!(["customers", "invoices"]));
        assert!(stored["updated"].is_string(), "{stored}");
        assert_eq!(json(app.get("/syncSettings").await).await, stored);

        let (status, queued) = sync_all(app, company_id).await;
        assert_eq!(status, 202);
        assert_eq!(data_types_of(&queued), ["customers", "invoices"]);

        // queueDataType syncs what the settings leave out.
        let response = app
            .post_json(
                &format!("/companies/{company_id}/data/queue/bankAccounts"),
                &json!({}),
            )
            .await;
        assert_eq!(response.status(), 202);
        assert_eq!(data_types_of(&json(response).await), ["bankAccounts"]);

        // null: every data type again.
        clear_queue(app).await;
        let (status, stored) = put_settings(app, None, json!({"dataTypes": null})).await;
        assert_eq!(status, 200);
        assert_eq!(stored["dataTypes"], Value::Null);
        let (_, queued) = sync_all(app, company_id).await;
        assert_eq!(data_types_of(&queued), every);
    })
    .await;
}

/// Ends every queued operation, so the next `data/all` queues afresh.
async fn clear_queue(app: &TestApp) {
    use sea_orm::ConnectionTrait;
    app.db
        .execute_unprepared(
            "UPDATE pull_operation SET status = 'Cancelled' WHERE status = 'Queued'",
        )
        .await
        .expect("cleared");
}

#[tokio::test]
async fn a_choice_no_linked_connection_syncs_is_a_conflict_that_says_so() {
    for_each_database_with(AppOptions::idle, async |app| {
        let company_id = new_company(app, "Ledger only").await;
        let connection_id = new_connection(app, company_id, "xero").await;
        let body = (crate::platforms::xero::CASE.authorization)(1800);
        let response = authorize(app, company_id, connection_id, &body, false).await;
        assert_eq!(response.status(), 200);
        let (status, _) = put_settings(app, None, json!({"dataTypes": ["bankTransactions"]})).await;
        assert_eq!(status, 200);

        let (status, problem) = sync_all(app, company_id).await;
        assert_eq!(status, 409, "{problem}");
        let message = problem["error"].as_str().expect("a message");
        assert!(
            message.contains("a data type your sync settings choose (bankTransactions)")
                && message.contains("PUT /syncSettings"),
            "{message}"
        );
        let history = json(
            app.get(&format!("/companies/{company_id}/data/history"))
                .await,
        )
        .await;
        assert_eq!(history["totalResults"], 0, "nothing was queued: {history}");
    })
    .await;
}

#[tokio::test]
async fn bad_settings_are_refused_whole_and_each_client_has_its_own() {
    for_each_database_with(AppOptions::idle, async |app| {
        let (status, stored) = put_settings(app, None, json!({"dataTypes": ["orders"]})).await;
        assert_eq!(status, 200);

        let (status, problem) = put_settings(
            app,
            None,
            json!({"dataTypes": ["invoices", "ledgers", "invoices", "Customers"]}),
        )
        .await;
        assert_eq!(status, 400, "{problem}");
        let items: Vec<&str> = problem["validation"]["errors"]
            .as_array()
            .expect("errors")
            .iter()
            .map(|error| error["itemId"].as_str().unwrap_or_default())
            .collect();
        // The list is checked against the schema first: each item at fault, and the repeat on the list.
        assert_eq!(items, ["dataTypes", "dataTypes[1]", "dataTypes[3]"]);
        let messages = problem["validation"]["errors"].to_string();
        assert!(
            messages.contains("must not list an item twice"),
            "{messages}"
        );
        assert!(
            messages.contains(r#"must be one of [\"invoices\",\"customers\""#),
            "{messages}"
        );

        for (body, what) in [
            (json!({"dataTypes": []}), "an empty choice"),
            (json!({"dataTypes": "invoices"}), "a string, not a list"),
            (
                json!({"dataTypes": ["invoices"], "extra": 1}),
                "an unknown field",
            ),
            (json!([]), "not an object"),
        ] {
            let (status, problem) = put_settings(app, None, body).await;
            assert_eq!(status, 400, "{what}: {problem}");
            assert_eq!(problem["statusCode"], 400, "{what}: a JSON error");
            assert!(problem["error"].is_string(), "{what}: {problem}");
        }
        let kept = json(app.get("/syncSettings").await).await;
        assert_eq!(kept, stored, "nothing was stored");

        let (other_key, _) = app.other_tenant("Elsewhere").await;
        let theirs = app
            .raw()
            .get(app.url("/syncSettings"))
            .header("authorization", crate::helpers::basic(&other_key))
            .send()
            .await
            .expect("answered");
        assert_eq!(
            json(theirs).await,
            json!({"dataTypes": null, "updated": null}),
            "another client keeps its defaults"
        );
        let (status, _) =
            put_settings(app, Some(&other_key), json!({"dataTypes": ["customers"]})).await;
        assert_eq!(status, 200);
        assert_eq!(
            json(app.get("/syncSettings").await).await,
            stored,
            "ours unchanged"
        );

        let anonymous = app
            .raw()
            .get(app.url("/syncSettings"))
            .send()
            .await
            .expect("answered");
        assert_eq!(anonymous.status(), 401);
    })
    .await;
}
