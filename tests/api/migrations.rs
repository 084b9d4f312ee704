//! `/migrations`: managed migration batches. Validation of the whole batch
//! and the dry run, the checklist gate, the canary (passing and failing),
//! proceeding, per-row failures from a loopback platform (rejected tokens,
//! `invalid_grant`, 429s), idempotent re-sends, the rows and the report,
//! and that no token is ever shown. The kill -9 resume is in `cli.rs`.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use serde_json::{Value, json};
use uuid::Uuid;

use tributary::managed_migrations::MigrationConfig;

use crate::connections::{count_rows, new_company};
use crate::helpers::{AppOptions, TestApp, backends, captured_logs, for_each_database, json};
use crate::platforms::{fake, options_for, set_oauth_client};

/// A sandbox row: a company to create and a small synthetic organization.
fn sandbox_row(reference: &str, token: &str) -> Value {
    json!({
        "externalReference": reference,
        "companyName": format!("Company {reference}"),
        "authorization": {
            "organizationId": format!("sbx-{reference}"),
            "accessToken": token,
            "invoiceCount": 7,
            "orderCount": 3,
            "bankTransactionCount": 2,
        }
    })
}

async fn send(
    app: &TestApp,
    method: reqwest::Method,
    path: &str,
    body: Option<&Value>,
) -> (u16, Value) {
    let mut request = app
        .raw()
        .request(method, app.url(path))
        .header("authorization", app.authorization());
    if let Some(body) = body {
        request = request.json(body);
    }
    let response = request.send().await.expect("answered");
    let status = response.status().as_u16();
    let text = response.text().await.expect("a body");
    let value = if text.is_empty() {
        Value::Null
    } else {
        serde_json::from_str(&text).unwrap_or(Value::String(text))
    };
    (status, value)
}

async fn post(app: &TestApp, path: &str, body: &Value) -> (u16, Value) {
    send(app, reqwest::Method::POST, path, Some(body)).await
}

async fn get(app: &TestApp, path: &str) -> (u16, Value) {
    send(app, reqwest::Method::GET, path, None).await
}

/// Stores the sandbox OAuth client (step 1) and attests steps 2-4.
async fn complete_checklist(app: &TestApp, migration_id: &str, platform_key: &str) {
    set_oauth_client(app, platform_key).await;
    for step in [
        "migrationScheduled",
        "callbackUrlAdded",
        "oldApplicationSyncDisabled",
    ] {
        let (status, body) = send(
            app,
            reqwest::Method::PUT,
            &format!("/migrations/{migration_id}/checklist/{step}"),
            Some(&json!({"attestedBy": "Ada Support", "note": "done on the call"})),
        )
        .await;
        assert_eq!(status, 200, "{body}");
    }
}

/// Polls the batch until `done` holds (60 s at most).
async fn until(app: &TestApp, migration_id: &str, done: impl Fn(&Value) -> bool) -> Value {
    for _ in 0..600 {
        let (status, batch) = get(app, &format!("/migrations/{migration_id}")).await;
        assert_eq!(status, 200, "{batch}");
        if done(&batch) {
            return batch;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let (_, batch) = get(app, &format!("/migrations/{migration_id}")).await;
    let logs = captured_logs();
    let warnings: Vec<&str> = logs
        .lines()
        .filter(|line| line.contains("WARN") || line.contains("ERROR"))
        .collect();
    panic!(
        "the batch did not get there in 60 s: {batch:#}\nwarnings:\n{}",
        warnings.join("\n")
    );
}

fn in_state(state: &'static str) -> impl Fn(&Value) -> bool {
    move |batch: &Value| batch["state"] == state
}

#[tokio::test]
async fn a_batch_is_validated_whole_every_problem_by_row_and_field_and_a_dry_run_stores_nothing() {
    for_each_database(async |app| {
        let (_, other) = app.other_tenant("someone-else").await;
        let theirs = other
            .create_company(&crate::helpers::company_input("Not yours", None))
            .await
            .expect("created")
            .into_inner()
            .company_id;
        let mine = new_company(app, "Existing Ltd").await;
        let secret = "sbx-secret-token-never-echoed";
        let batch = json!({
            "platformKey": "sandbox",
            "canaryReference": "nope",
            "rows": [
                sandbox_row("a-1", secret),
                // No access token.
                {"externalReference": "a-2", "companyName": "Two", "authorization": {"organizationId": "sbx-2"}},
                // The same reference twice.
                sandbox_row("a-1", secret),
                // Both a name and an id.
                {"externalReference": "a-4", "companyName": "Four", "companyId": mine, "authorization": {"organizationId": "sbx-4", "accessToken": secret}},
                // Another tenant's company.
                {"externalReference": "a-5", "companyId": theirs, "authorization": {"organizationId": "sbx-5", "accessToken": secret}},
                // A Xero body in a sandbox batch.
                {"externalReference": "a-6", "companyName": "Six", "authorization": {"tenantId": "70784a63-d24b-46a9-a4db-0e70a274b056", "accessToken": secret, "refreshToken": secret, "expiresIn": 1800}},
            ]
        });
        let (status, error) = post(app, "/migrations", &batch).await;
        assert_eq!(status, 400, "{error}");
        let text = error.to_string();
        assert!(!text.contains(secret), "a token was echoed: {text}");
        let fields: Vec<String> = error["validation"]["errors"]
            .as_array()
            .expect("errors by field")
            .iter()
            .map(|item| item["itemId"].as_str().unwrap_or_default().to_owned())
            .collect();
        for expected in [
            "rows[1].authorization.accessToken",
            "rows[2].externalReference",
            "rows[3]",
            "rows[4].companyId",
            "rows[5].authorization",
            "canaryReference",
        ] {
            assert!(
                fields.iter().any(|field| field == expected),
                "{expected} missing from {fields:?}"
            );
        }
        assert!(!fields.iter().any(|field| field.starts_with("rows[0]")), "{fields:?}");

        // An unknown platform, and one that takes no tokens.
        let (status, error) = post(app, "/migrations", &json!({"platformKey": "nowhere", "rows": [sandbox_row("x", "t")]})).await;
        assert_eq!(status, 400, "{error}");
        let (status, error) = post(app, "/migrations", &json!({"platformKey": "quickbooks-desktop", "rows": [sandbox_row("x", "t")]})).await;
        assert_eq!(status, 400, "{error}");
        // No rows at all: the schema says 1 to 10,000.
        let (status, _) = post(app, "/migrations", &json!({"platformKey": "sandbox", "rows": []})).await;
        assert_eq!(status, 400);

        // A valid batch, validated only.
        let valid = json!({
            "platformKey": "sandbox",
            "canaryReference": "v-2",
            "rows": [
                sandbox_row("v-1", secret),
                sandbox_row("v-2", secret),
                {"externalReference": "v-3", "companyId": mine, "authorization": {"organizationId": "sbx-v3", "accessToken": secret}},
            ]
        });
        let (status, plan) = post(app, "/migrations?dryRun=true", &valid).await;
        assert_eq!(status, 200, "{plan}");
        assert_eq!(plan["plan"]["rows"], 3);
        assert_eq!(plan["plan"]["companiesToCreate"], 2);
        assert_eq!(plan["plan"]["companiesNamed"], 1);
        assert_eq!(plan["plan"]["referencesImportedBefore"], 0);
        assert_eq!(plan["plan"]["canaryReference"], "v-2");
        assert_eq!(count_rows(app, "migration_batch").await, 0);
        assert_eq!(count_rows(app, "migration_row").await, 0);
        assert_eq!(count_rows(app, "company").await, 2, "only the two made by hand");
    })
    .await;
}

#[tokio::test]
async fn the_checklist_gates_the_start_says_what_is_missing_and_records_who_attested() {
    for_each_database(async |app| {
        let (status, created) = post(
            app,
            "/migrations",
            &json!({"platformKey": "sandbox", "rows": [sandbox_row("c-1", "t1")]}),
        )
        .await;
        assert_eq!(status, 201, "{created}");
        let id = created["migration"]["id"]
            .as_str()
            .expect("an id")
            .to_owned();
        assert_eq!(created["migration"]["state"], "Draft");
        assert_eq!(
            created["migration"]["checklist"].as_array().map(Vec::len),
            Some(4)
        );

        let (status, refused) = post(app, &format!("/migrations/{id}/start"), &json!({})).await;
        assert_eq!(status, 409, "{refused}");
        let message = refused["error"].as_str().unwrap_or_default();
        for step in [
            "oauthClientRegistered",
            "migrationScheduled",
            "callbackUrlAdded",
            "oldApplicationSyncDisabled",
        ] {
            assert!(message.contains(step), "{message}");
        }
        assert!(
            message.contains("/integrations/sandbox/oauth-client"),
            "{message}"
        );

        // Step 1 is tributary's to check, not a person's to attest.
        let (status, error) = send(
            app,
            reqwest::Method::PUT,
            &format!("/migrations/{id}/checklist/oauthClientRegistered"),
            Some(&json!({"attestedBy": "Ada"})),
        )
        .await;
        assert_eq!(status, 400, "{error}");
        let (status, _) = send(
            app,
            reqwest::Method::PUT,
            &format!("/migrations/{id}/checklist/noSuchStep"),
            Some(&json!({"attestedBy": "Ada"})),
        )
        .await;
        assert_eq!(status, 400);
        let (status, _) = send(
            app,
            reqwest::Method::PUT,
            &format!("/migrations/{id}/checklist/callbackUrlAdded"),
            Some(&json!({"attestedBy": "   "})),
        )
        .await;
        assert_eq!(status, 400);

        set_oauth_client(app, "sandbox").await;
        let (status, batch) = send(
            app,
            reqwest::Method::PUT,
            &format!("/migrations/{id}/checklist/CALLBACKURLADDED"),
            Some(&json!({"attestedBy": "Ada Support", "note": "added to the production app"})),
        )
        .await;
        assert_eq!(status, 200, "{batch}");
        let checklist = batch["checklist"].as_array().expect("a checklist");
        let by_step = |name: &str| {
            checklist
                .iter()
                .find(|item| item["step"] == name)
                .cloned()
                .expect("listed")
        };
        assert_eq!(by_step("oauthClientRegistered")["done"], true);
        assert_eq!(by_step("oauthClientRegistered")["checkedByTributary"], true);
        assert_eq!(by_step("callbackUrlAdded")["attestedBy"], "Ada Support");
        assert_eq!(
            by_step("callbackUrlAdded")["note"],
            "added to the production app"
        );
        assert!(by_step("callbackUrlAdded")["at"].is_string());
        // The step names the URL to add: the platform's callback.
        assert_eq!(
            by_step("callbackUrlAdded")["callbackUrl"],
            app.url("/oauth/sandbox/callback")
        );
        assert_eq!(by_step("oauthClientRegistered")["callbackUrl"], Value::Null);
        assert_eq!(by_step("migrationScheduled")["done"], false);

        let (status, refused) = post(app, &format!("/migrations/{id}/start"), &json!({})).await;
        assert_eq!(status, 409);
        let message = refused["error"].as_str().unwrap_or_default();
        assert!(
            message.contains("migrationScheduled") && !message.contains("callbackUrlAdded"),
            "{message}"
        );
        // Nothing was imported while it waited.
        assert_eq!(count_rows(app, "company").await, 0);

        // Proceeding before the canary is a conflict too.
        let (status, _) = post(app, &format!("/migrations/{id}/proceed"), &json!({})).await;
        assert_eq!(status, 409);

        // Unknown and other tenants' batches are 404.
        let (status, _) = get(app, &format!("/migrations/{}", Uuid::now_v7())).await;
        assert_eq!(status, 404);
        let (other_key, _) = app.other_tenant("other-client").await;
        let response = app
            .raw()
            .get(app.url(&format!("/migrations/{id}")))
            .header("authorization", crate::helpers::basic(&other_key))
            .send()
            .await
            .expect("answered");
        assert_eq!(response.status(), 404);
    })
    .await;
}

#[tokio::test]
async fn a_sandbox_batch_runs_its_canary_alone_then_proceeds_reports_and_is_idempotent() {
    for_each_database(async |app| {
        let token = "sbx-token-0123456789";
        let rows: Vec<Value> = (1..=6).map(|n| sandbox_row(&format!("s-{n}"), token)).collect();
        let batch = json!({"platformKey": "sandbox", "reference": "wave-1", "sync": true, "canaryReference": "s-3", "rows": rows});
        let (status, created) = post(app, "/migrations", &batch).await;
        assert_eq!(status, 201, "{created}");
        let id = created["migration"]["id"].as_str().expect("an id").to_owned();
        assert_eq!(created["migration"]["canary"]["externalReference"], "s-3");
        assert_eq!(created["migration"]["counts"]["pending"], 6);

        complete_checklist(app, &id, "sandbox").await;
        let (status, started) = post(app, &format!("/migrations/{id}/start"), &json!({})).await;
        assert_eq!(status, 202, "{started}");
        let waiting = until(app, &id, in_state("AwaitingProceed")).await;
        let canary = &waiting["canary"];
        assert_eq!(canary["state"], "Synced", "{waiting:#}");
        assert_eq!(canary["records"]["invoices"], 7, "{canary}");
        assert_eq!(canary["records"]["orders"], 3, "{canary}");
        assert!(canary["companyId"].is_string() && canary["connectionId"].is_string());
        assert!(canary["verified"].is_string() && canary["synced"].is_string());
        assert_eq!(waiting["counts"]["pending"], 5);
        // Only the canary was imported.
        assert_eq!(count_rows(app, "company").await, 1);
        let invoices = json(app.get(&format!("/companies/{}/data/invoices", canary["companyId"].as_str().unwrap_or_default())).await).await;
        assert_eq!(invoices["totalResults"], 7);

        let (status, proceeding) = post(app, &format!("/migrations/{id}/proceed"), &json!({})).await;
        assert_eq!(status, 202, "{proceeding}");
        let done = until(app, &id, in_state("Completed")).await;
        assert_eq!(done["counts"]["synced"], 6, "{done:#}");
        assert!(done["completed"].is_string());
        assert_eq!(count_rows(app, "company").await, 6);
        assert_eq!(count_rows(app, "connection").await, 6);

        // The rows, filtered by state, each with its company and connection.
        let (status, page) = get(app, &format!("/migrations/{id}/rows?state=synced&pageSize=4")).await;
        assert_eq!(status, 200, "{page}");
        assert_eq!(page["totalResults"], 6);
        assert_eq!(page["results"].as_array().map(Vec::len), Some(4));
        assert!(page["_links"]["next"]["href"].as_str().unwrap_or_default().contains("state=Synced"), "{page}");
        let (status, _) = get(app, &format!("/migrations/{id}/rows?state=Sideways")).await;
        assert_eq!(status, 400);
        let (status, page) = get(app, &format!("/migrations/{id}/rows?state=Failed")).await;
        assert_eq!(status, 200);
        assert_eq!(page["totalResults"], 0);

        // The report, as JSON and as CSV, without a token.
        let (status, report) = get(app, &format!("/migrations/{id}/report")).await;
        assert_eq!(status, 200, "{report}");
        assert_eq!(report["platformName"], "tributary Sandbox");
        assert_eq!(report["rows"].as_array().map(Vec::len), Some(6));
        assert_eq!(report["rows"][0]["records"]["invoices"], 7);
        let response = app
            .raw()
            .get(app.url(&format!("/migrations/{id}/report.csv")))
            .header("authorization", app.authorization())
            .send()
            .await
            .expect("answered");
        assert_eq!(response.status(), 200);
        assert!(response.headers()["content-type"].to_str().unwrap_or_default().starts_with("text/csv"));
        let csv = response.text().await.expect("text");
        let lines: Vec<&str> = csv.lines().collect();
        assert_eq!(lines.len(), 7, "{csv}");
        assert!(lines[0].starts_with("position,externalReference,platformKey"), "{csv}");
        assert!(lines[1].contains("s-1") && lines[1].contains("Synced") && lines[1].contains("invoices=7"), "{csv}");
        for text in [report.to_string(), csv, done.to_string(), page.to_string(), captured_logs()] {
            assert!(!text.contains(token), "a token was shown");
        }

        // Re-sending the batch finds it; nothing is created twice.
        let response = app
            .raw()
            .post(app.url("/migrations"))
            .header("authorization", app.authorization())
            .json(&batch)
            .send()
            .await
            .expect("answered");
        assert_eq!(response.status(), 201);
        assert_eq!(response.headers()["idempotent-replayed"], "true");
        let again = response.json::<Value>().await.expect("json");
        assert_eq!(again["migration"]["id"].as_str(), Some(id.as_str()));
        assert_eq!(count_rows(app, "migration_batch").await, 1);
        // The same reference with other rows is refused.
        let mut other = batch.clone();
        other["rows"] = json!([sandbox_row("s-99", token)]);
        let (status, refused) = post(app, "/migrations", &other).await;
        assert_eq!(status, 409, "{refused}");

        // A new batch with the same companies' references reuses their
        // companies and connections.
        let rows: Vec<Value> = (1..=6).map(|n| sandbox_row(&format!("s-{n}"), "sbx-new-token")).collect();
        let (status, plan) = post(app, "/migrations?dryRun=true", &json!({"platformKey": "sandbox", "rows": rows.clone()})).await;
        assert_eq!(status, 200);
        assert_eq!(plan["plan"]["referencesImportedBefore"], 6);
        assert_eq!(plan["plan"]["companiesToCreate"], 0);
        let (status, second) = post(app, "/migrations", &json!({"platformKey": "sandbox", "verify": false, "rows": rows})).await;
        assert_eq!(status, 201, "{second}");
        let second_id = second["migration"]["id"].as_str().expect("an id").to_owned();
        let (status, _) = post(app, &format!("/migrations/{second_id}/start"), &json!({})).await;
        assert_eq!(status, 409, "its own checklist is not done");
        complete_checklist(app, &second_id, "sandbox").await;
        let (status, _) = post(app, &format!("/migrations/{second_id}/start"), &json!({})).await;
        assert_eq!(status, 202);
        until(app, &second_id, in_state("AwaitingProceed")).await;
        post(app, &format!("/migrations/{second_id}/proceed"), &json!({})).await;
        let done = until(app, &second_id, in_state("Completed")).await;
        assert_eq!(done["counts"]["imported"], 5, "{done:#}");
        assert_eq!(count_rows(app, "company").await, 6);
        assert_eq!(count_rows(app, "connection").await, 6);
        let (_, first_rows) = get(app, &format!("/migrations/{id}/rows")).await;
        let (_, second_rows) = get(app, &format!("/migrations/{second_id}/rows")).await;
        for n in 0..6 {
            assert_eq!(first_rows["results"][n]["companyId"], second_rows["results"][n]["companyId"]);
            assert_eq!(first_rows["results"][n]["connectionId"], second_rows["results"][n]["connectionId"]);
        }
        // The waiting tokens are gone from every imported row.
        let left: i64 = count_where(app, "migration_row", "ciphertext IS NOT NULL").await;
        assert_eq!(left, 0);

        let (status, listed) = get(app, "/migrations").await;
        assert_eq!(status, 200);
        assert_eq!(listed["totalResults"], 2);
        assert_eq!(listed["results"][0]["id"].as_str(), Some(second_id.as_str()), "newest first");
    })
    .await;
}

async fn count_where(app: &TestApp, table: &str, condition: &str) -> i64 {
    use sea_orm::{ConnectionTrait, Statement};
    let row = app
        .db
        .query_one_raw(Statement::from_string(
            app.db.get_database_backend(),
            format!("SELECT COUNT(*) AS n FROM {table} WHERE {condition}"),
        ))
        .await
        .expect("countable")
        .expect("a row");
    row.try_get::<i64>("", "n").expect("a count")
}

#[tokio::test]
async fn cancelling_drops_the_waiting_tokens_and_keeps_what_was_imported() {
    for_each_database(async |app| {
        let rows: Vec<Value> = (1..=3)
            .map(|n| sandbox_row(&format!("k-{n}"), "sbx-cancel"))
            .collect();
        let (_, created) = post(
            app,
            "/migrations",
            &json!({"platformKey": "sandbox", "rows": rows}),
        )
        .await;
        let id = created["migration"]["id"]
            .as_str()
            .expect("an id")
            .to_owned();
        let (status, cancelled) = post(app, &format!("/migrations/{id}/cancel"), &json!({})).await;
        assert_eq!(status, 200, "{cancelled}");
        assert_eq!(cancelled["state"], "Cancelled");
        assert_eq!(cancelled["counts"]["cancelled"], 3);
        assert_eq!(
            count_where(app, "migration_row", "ciphertext IS NOT NULL").await,
            0
        );
        let (status, _) = post(app, &format!("/migrations/{id}/cancel"), &json!({})).await;
        assert_eq!(status, 409);
        let (status, _) = post(app, &format!("/migrations/{id}/start"), &json!({})).await;
        assert_eq!(status, 409);
        // Its references are free for a new batch.
        let rows: Vec<Value> = (1..=3)
            .map(|n| sandbox_row(&format!("k-{n}"), "sbx-cancel"))
            .collect();
        let (status, _) = post(
            app,
            "/migrations?dryRun=true",
            &json!({"platformKey": "sandbox", "rows": rows}),
        )
        .await;
        assert_eq!(status, 200);
    })
    .await;
}

const XERO_TENANT: &str = "70784a63-d24b-46a9-a4db-0e70a274b056";

fn xero_row(reference: &str, access: &str, refresh: &str, expires_in: i64) -> Value {
    json!({
        "externalReference": reference,
        "companyName": format!("Xero {reference}"),
        "authorization": {"tenantId": XERO_TENANT, "accessToken": access, "refreshToken": refresh, "expiresIn": expires_in}
    })
}

fn xero_options(fake: &fake::Fake) -> AppOptions {
    AppOptions {
        migrations: MigrationConfig {
            concurrency_per_platform: 1,
            poll: Duration::from_millis(50),
            retry_delays: vec![Duration::from_millis(200), Duration::from_millis(200)],
            ..MigrationConfig::default()
        },
        ..options_for(fake, None, 2)
    }
}

/// Xero as a consent without `accounting.settings.read` answers the chart
/// of accounts (401 `AuthorizationUnsuccessful`), every other list as usual.
fn xero_without_the_accounts_scope() -> fake::Router {
    let xero = crate::platforms::xero::router();
    Arc::new(move |call: &fake::Call| {
        if call.path == "/api.xro/2.0/Accounts" {
            return fake::Answer::json(
                401,
                r#"{"Type":null,"Title":"Unauthorized","Status":401,"Detail":"AuthorizationUnsuccessful","Instance":"2f3c568c-8d99-40c3-af5e-ba06f76fb23d","Extensions":{}}"#,
            );
        }
        xero(call)
    })
}

/// A canary whose consent lacks one data type's scope still passes (the
/// tokens work: only that data type's pull fails, `PermissionsError`), and
/// a client whose sync settings choose nothing the platform syncs imports
/// its rows without a first sync.
#[tokio::test]
async fn a_missing_scope_or_nothing_chosen_to_sync_does_not_fail_a_row() {
    for backend in backends() {
        let fake = fake::Fake::start(
            "xero",
            fake::Scheme::Bearer,
            "xero-access-token-0001",
            "xero-refresh-token-0001",
            fake::fixture("xero/fixtures/unauthorized.json"),
            xero_without_the_accounts_scope(),
        )
        .await;
        let app = TestApp::spawn_with(backend, xero_options(&fake)).await;
        let good = "xero-access-token-0001";
        let refresh = "xero-refresh-token-0001";
        let (status, created) = post(
            &app,
            "/migrations",
            &json!({"platformKey": "xero", "rows": [xero_row("x-scope", good, refresh, 1800)]}),
        )
        .await;
        assert_eq!(status, 201, "{created}");
        let id = created["migration"]["id"]
            .as_str()
            .expect("an id")
            .to_owned();
        complete_checklist(&app, &id, "xero").await;
        post(&app, &format!("/migrations/{id}/start"), &json!({})).await;
        let waiting = until(&app, &id, |batch| {
            batch["state"] == "AwaitingProceed" || batch["state"] == "CanaryFailed"
        })
        .await;
        assert_eq!(waiting["state"], "AwaitingProceed", "{waiting:#}");
        assert_eq!(waiting["canary"]["records"]["invoices"], 7, "{waiting:#}");
        assert_eq!(waiting["canary"]["records"]["suppliers"], 2, "{waiting:#}");
        assert!(
            waiting["canary"]["records"].get("accounts").is_none(),
            "{waiting:#}"
        );
        let company = waiting["canary"]["companyId"]
            .as_str()
            .unwrap_or_default()
            .to_owned();
        let history = json(
            app.get(&format!(
                "/companies/{company}/data/history?dataType=accounts"
            ))
            .await,
        )
        .await;
        assert_eq!(
            history["results"][0]["status"], "PermissionsError",
            "{history}"
        );

        // Sync settings that choose nothing Xero syncs: imported, no sync queued.
        let settings = app
            .raw()
            .put(app.url("/syncSettings"))
            .header("authorization", app.authorization())
            .json(&json!({"dataTypes": ["bankTransactions"]}))
            .send()
            .await
            .expect("answered");
        assert_eq!(settings.status(), 200);
        let (status, created) = post(
            &app,
            "/migrations",
            &json!({"platformKey": "xero", "rows": [xero_row("x-nothing", good, refresh, 1800)]}),
        )
        .await;
        assert_eq!(status, 201, "{created}");
        let id = created["migration"]["id"]
            .as_str()
            .expect("an id")
            .to_owned();
        complete_checklist(&app, &id, "xero").await;
        post(&app, &format!("/migrations/{id}/start"), &json!({})).await;
        let waiting = until(&app, &id, |batch| {
            batch["state"] == "AwaitingProceed" || batch["state"] == "CanaryFailed"
        })
        .await;
        assert_eq!(waiting["state"], "AwaitingProceed", "{waiting:#}");
        assert_eq!(waiting["canary"]["records"], json!({}), "{waiting:#}");
        let company = waiting["canary"]["companyId"]
            .as_str()
            .unwrap_or_default()
            .to_owned();
        let history = json(app.get(&format!("/companies/{company}/data/history")).await).await;
        assert_eq!(history["totalResults"], 0, "nothing was queued: {history}");
    }
}

#[tokio::test]
async fn xero_rows_fail_one_by_one_for_rejected_tokens_and_invalid_grant_and_the_others_go_on() {
    for backend in backends() {
        let fake = crate::platforms::xero::fake().await;
        let app = TestApp::spawn_with(backend, xero_options(&fake)).await;
        let good = "xero-access-token-0001";
        let refresh = "xero-refresh-token-0001";
        let rows = vec![
            xero_row("x-canary", good, refresh, 1800),
            // An access token Xero does not know.
            xero_row(
                "x-rejected",
                "xero-access-unknown",
                "xero-refresh-unknown-1",
                1800,
            ),
            // Expiring now, with a refresh token Xero does not know: invalid_grant.
            xero_row("x-grant", "xero-access-old", "xero-refresh-unknown-2", 1),
            xero_row("x-fine", good, refresh, 1800),
        ];
        let (status, created) = post(
            &app,
            "/migrations",
            &json!({"platformKey": "xero", "rows": rows}),
        )
        .await;
        assert_eq!(status, 201, "{created}");
        let id = created["migration"]["id"]
            .as_str()
            .expect("an id")
            .to_owned();
        complete_checklist(&app, &id, "xero").await;
        post(&app, &format!("/migrations/{id}/start"), &json!({})).await;
        let waiting = until(&app, &id, in_state("AwaitingProceed")).await;
        assert_eq!(waiting["canary"]["records"]["invoices"], 7, "{waiting:#}");
        assert_eq!(
            waiting["canary"]["records"]["customers"]
                .as_i64()
                .map(|n| n > 0),
            Some(true),
            "{waiting:#}"
        );

        post(&app, &format!("/migrations/{id}/proceed"), &json!({})).await;
        let done = until(&app, &id, in_state("Completed")).await;
        let (_, rows) = get(&app, &format!("/migrations/{id}/rows")).await;
        let row = |reference: &str| {
            rows["results"]
                .as_array()
                .expect("rows")
                .iter()
                .find(|row| row["externalReference"] == reference)
                .cloned()
                .expect("a row")
        };
        assert_eq!(row("x-rejected")["state"], "Failed", "{rows:#}");
        assert!(
            row("x-rejected")["failure"]
                .as_str()
                .unwrap_or_default()
                .contains("rejected the tokens"),
            "{rows:#}"
        );
        assert!(
            row("x-rejected")["whatToDo"]
                .as_str()
                .unwrap_or_default()
                .contains("POST /migrations"),
            "{rows:#}"
        );
        assert_eq!(row("x-grant")["state"], "Failed", "{rows:#}");
        assert!(
            row("x-grant")["failure"]
                .as_str()
                .unwrap_or_default()
                .contains("step 4"),
            "{rows:#}"
        );
        assert_eq!(row("x-fine")["state"], "Verified", "{rows:#}");
        assert_eq!(done["counts"]["failed"], 2, "{done:#}");
        // A rejected row's connection no longer claims to be linked.
        let company = row("x-rejected")["companyId"]
            .as_str()
            .unwrap_or_default()
            .to_owned();
        let connection = row("x-rejected")["connectionId"]
            .as_str()
            .unwrap_or_default()
            .to_owned();
        let (_, found) = get(
            &app,
            &format!("/companies/{company}/connections/{connection}"),
        )
        .await;
        assert_eq!(found["status"], "Deauthorized", "{found}");
        assert!(
            !captured_logs().contains("xero-refresh-unknown"),
            "a token was logged"
        );
    }
}

#[tokio::test]
async fn a_platform_answering_429_makes_a_row_wait_and_fail_after_its_retries_while_later_rows_succeed()
 {
    for backend in backends() {
        // Xero, except that r-limited's token meets 429s while `busy`.
        let busy = Arc::new(AtomicBool::new(true));
        let limited = "xero-access-limited";
        let xero = crate::platforms::xero::router();
        let flag = busy.clone();
        let router: fake::Router = Arc::new(move |call: &fake::Call| {
            if call.token == limited && flag.load(Ordering::SeqCst) {
                return fake::Answer {
                    status: 429,
                    headers: vec![("Retry-After".to_owned(), "0".to_owned())],
                    body: "{\"Title\":\"Rate limit exceeded\"}".to_owned(),
                };
            }
            xero(call)
        });
        let good = "xero-access-token-0001";
        let refresh = "xero-refresh-token-0001";
        let fake = fake::Fake::start(
            "xero",
            fake::Scheme::Bearer,
            good,
            refresh,
            fake::fixture("xero/fixtures/unauthorized.json"),
            router,
        )
        .await;
        fake.with(|inner| inner.access_tokens.insert(limited.to_owned()));
        let app = TestApp::spawn_with(backend, xero_options(&fake)).await;
        let rows = vec![
            xero_row("r-canary", good, refresh, 1800),
            xero_row("r-limited", limited, refresh, 1800),
            xero_row("r-fine", good, refresh, 1800),
        ];
        let (_, created) = post(
            &app,
            "/migrations",
            &json!({"platformKey": "xero", "rows": rows}),
        )
        .await;
        let id = created["migration"]["id"]
            .as_str()
            .expect("an id")
            .to_owned();
        complete_checklist(&app, &id, "xero").await;
        post(&app, &format!("/migrations/{id}/start"), &json!({})).await;
        until(&app, &id, in_state("AwaitingProceed")).await;
        post(&app, &format!("/migrations/{id}/proceed"), &json!({})).await;
        let done = until(&app, &id, in_state("Completed")).await;
        let (_, rows) = get(&app, &format!("/migrations/{id}/rows")).await;
        let limited_row = &rows["results"][1];
        assert_eq!(limited_row["state"], "Failed", "{rows:#}");
        assert!(
            limited_row["failure"]
                .as_str()
                .unwrap_or_default()
                .contains("could not be reached in 3 attempts"),
            "{rows:#}"
        );
        assert!(
            limited_row["whatToDo"]
                .as_str()
                .unwrap_or_default()
                .contains("retryFailed"),
            "{rows:#}"
        );
        assert_eq!(rows["results"][2]["state"], "Verified", "{rows:#}");
        assert_eq!(done["counts"]["failed"], 1);
        // Three attempts, each with the connector's own three retries.
        let tries = fake
            .calls()
            .iter()
            .filter(|call| call.token == limited)
            .count();
        assert_eq!(tries, 12, "{tries} calls with the limited token");
        busy.store(false, Ordering::SeqCst);

        // Once the platform is back, the failed row is retried and passes.
        let (status, retried) =
            post(&app, &format!("/migrations/{id}/retryFailed"), &json!({})).await;
        assert_eq!(status, 202, "{retried}");
        let done = until(&app, &id, in_state("Completed")).await;
        assert_eq!(done["counts"]["failed"], 0, "{done:#}");
        assert_eq!(done["counts"]["verified"], 2, "{done:#}");
    }
}

#[tokio::test]
async fn a_canary_whose_tokens_are_rejected_stops_the_batch_before_anything_else_is_imported() {
    for backend in backends() {
        let fake = crate::platforms::xero::fake().await;
        let app = TestApp::spawn_with(backend, xero_options(&fake)).await;
        let rows = vec![
            xero_row(
                "f-canary",
                "xero-access-unknown",
                "xero-refresh-unknown",
                1800,
            ),
            xero_row(
                "f-other",
                "xero-access-token-0001",
                "xero-refresh-token-0001",
                1800,
            ),
        ];
        let (_, created) = post(
            &app,
            "/migrations",
            &json!({"platformKey": "xero", "rows": rows}),
        )
        .await;
        let id = created["migration"]["id"]
            .as_str()
            .expect("an id")
            .to_owned();
        complete_checklist(&app, &id, "xero").await;
        post(&app, &format!("/migrations/{id}/start"), &json!({})).await;
        let failed = until(&app, &id, in_state("CanaryFailed")).await;
        assert!(
            failed["failure"]
                .as_str()
                .unwrap_or_default()
                .contains("rejected the tokens"),
            "{failed:#}"
        );
        assert_eq!(failed["canary"]["state"], "Failed");
        assert_eq!(failed["counts"]["pending"], 1);
        assert_eq!(count_rows(&app, "company").await, 1, "only the canary's");
        let (status, refused) = post(&app, &format!("/migrations/{id}/proceed"), &json!({})).await;
        assert_eq!(status, 409, "{refused}");
        assert!(
            refused["error"]
                .as_str()
                .unwrap_or_default()
                .contains("canary failed"),
            "{refused}"
        );
        // Starting again runs the canary again: Xero is asked again (and
        // rejects the tokens again).
        let asked = |fake: &fake::Fake| {
            fake.calls()
                .iter()
                .filter(|call| call.path == "/connections")
                .count()
        };
        let before = asked(&fake);
        assert!(before >= 1);
        let (status, restarted) = post(&app, &format!("/migrations/{id}/start"), &json!({})).await;
        assert_eq!(status, 202, "{restarted}");
        assert_eq!(restarted["state"], "Canary");
        let again = until(&app, &id, in_state("CanaryFailed")).await;
        assert!(asked(&fake) > before, "the canary was verified again");
        assert_eq!(again["canary"]["state"], "Failed");
        assert_eq!(count_rows(&app, "company").await, 1);
        assert_eq!(
            count_rows(&app, "connection").await,
            1,
            "the same connection, re-verified"
        );
    }
}

#[tokio::test]
async fn two_processes_share_a_batch_and_import_each_row_once() {
    for_each_database(async |app| {
        const ROWS: usize = 400;
        // A second server and runner on the same database.
        app.another_instance(AppOptions::default()).await;
        let rows: Vec<Value> = (0..ROWS)
            .map(|n| sandbox_row(&format!("p-{n}"), "sbx-two-processes"))
            .collect();
        let (status, created) = post(
            app,
            "/migrations",
            &json!({"platformKey": "sandbox", "verify": false, "rows": rows}),
        )
        .await;
        assert_eq!(status, 201, "{created}");
        let id = created["migration"]["id"]
            .as_str()
            .expect("an id")
            .to_owned();
        complete_checklist(app, &id, "sandbox").await;
        post(app, &format!("/migrations/{id}/start"), &json!({})).await;
        until(app, &id, in_state("AwaitingProceed")).await;
        post(app, &format!("/migrations/{id}/proceed"), &json!({})).await;
        let done = until(app, &id, in_state("Completed")).await;
        assert_eq!(done["counts"]["imported"], ROWS as u64 - 1, "{done:#}");
        assert_eq!(count_rows(app, "company").await, ROWS as i64);
        assert_eq!(count_rows(app, "connection").await, ROWS as i64);
        assert_eq!(count_rows(app, "migration_reference").await, ROWS as i64);
        assert_eq!(
            count_where(app, "migration_row", "lease_owner IS NOT NULL").await,
            0
        );
    })
    .await;
}
