//! Syncs: triggering, the engine, pull operations, and the invoices and
//! customers read API.

use std::collections::HashMap;
use std::num::NonZeroU32;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures::future::BoxFuture;
use sea_orm::{ActiveEnum, ActiveModelTrait, ConnectionTrait, EntityTrait, IntoActiveModel, Set};
use serde_json::{Value, json};
use uuid::Uuid;

use client::types::{PullOperation, PullStatus};
use tributary::data::DataType;
use tributary::data::invoices::InvoiceStatus;
use tributary::platforms::connector::{AnyConnector, ConnectorError, Connectors, Page};
use tributary::platforms::sandbox::connector::SandboxConnector;
use tributary::platforms::sandbox::dataset::Dataset;
use tributary::sync::engine::EngineConfig;

use crate::connections::{count_rows, new_company, new_connection};
use crate::helpers::{
    AppOptions, Backend, TestApp, backends, client_for, error_of, for_each_database, json, unpinned,
};

/// Authorizes a sandbox connection with `invoice_count` invoices from `seed`.
pub async fn sandbox_connection(
    app: &TestApp,
    company_id: Uuid,
    invoice_count: u64,
    seed: u64,
) -> Uuid {
    authorized_sandbox(
        app,
        company_id,
        json!({"organizationId": "sbx-sync", "accessToken": "tok", "invoiceCount": invoice_count, "seed": seed}),
    )
    .await
}

/// A new sandbox connection of the company, authorized (migrated) with
/// `authorization`, the sandbox's body.
pub async fn authorized_sandbox(app: &TestApp, company_id: Uuid, authorization: Value) -> Uuid {
    let connection_id = new_connection(app, company_id, "sandbox").await;
    reauthorize(app, company_id, connection_id, authorization).await;
    connection_id
}

/// Migrates tokens (`authorization`) onto the connection, answered 200: the
/// sandbox then serves the data the body describes, which the next sync
/// brings.
pub async fn reauthorize(
    app: &TestApp,
    company_id: Uuid,
    connection_id: Uuid,
    authorization: Value,
) {
    let response = app
        .raw()
        .put(app.url(&format!(
            "/companies/{company_id}/connections/{connection_id}/authorization"
        )))
        .header("authorization", app.authorization())
        .json(&authorization)
        .send()
        .await
        .expect("answered");
    assert_eq!(response.status(), 200);
}

/// Queues a sync of everything the company's connections hold
/// (`POST .../data/all`) and waits until it has ended.
pub async fn sync_and_settle(app: &TestApp, company_id: Uuid) {
    let queued = app
        .post_json(&format!("/companies/{company_id}/data/all"), &json!(null))
        .await;
    assert_eq!(queued.status(), 202);
    settled(&app.client, company_id).await;
}

/// Waits until none of the company's pull operations is queued or running.
pub async fn settled(client: &client::Client, company_id: Uuid) -> Vec<PullOperation> {
    // Generous: the suite runs tests in parallel on two cores, and a hang
    // is what this catches, not slowness.
    for _ in 0..1200 {
        let page = client
            .list_pull_operations(&company_id, None, None, NonZeroU32::new(5000), None)
            .await
            .expect("history")
            .into_inner();
        let busy = page
            .results
            .iter()
            .any(|op| matches!(op.status, PullStatus::Queued | PullStatus::Fetching));
        if !busy && !page.results.is_empty() {
            return page.results;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    panic!("pull operations did not settle in 120 s");
}

fn paid_count(seed: u64, invoice_count: u64) -> usize {
    let dataset = Dataset::invoices_only(seed, invoice_count);
    (0..invoice_count)
        .filter(|index| dataset.invoice(*index).status == InvoiceStatus::Paid)
        .count()
}

/// How many payments the sandbox has: one per invoice with something paid.
fn payment_count(seed: u64, invoice_count: u64) -> i64 {
    let dataset = Dataset::invoices_only(seed, invoice_count);
    (0..invoice_count)
        .filter(|index| dataset.payment(*index).is_some())
        .count() as i64
}

/// How many journal entries the sandbox has.
fn journal_entry_count(seed: u64, invoice_count: u64) -> i64 {
    let dataset = Dataset::invoices_only(seed, invoice_count);
    let mut count = 0;
    let mut start = Some(0);
    while let Some(from) = start {
        let page = dataset.journal_entries(from);
        count += page.records.len() as i64;
        start = page.next.and_then(|next| next.parse().ok());
    }
    count
}

/// How many credit notes the sandbox has.
fn credit_note_count(seed: u64, invoice_count: u64) -> i64 {
    let dataset = Dataset::invoices_only(seed, invoice_count);
    (0..invoice_count)
        .filter(|index| dataset.credit_note(*index).is_some())
        .count() as i64
}

/// How many bill payments the sandbox has: one per bill with something paid.
fn bill_payment_count(seed: u64, invoice_count: u64) -> i64 {
    let dataset = Dataset::invoices_only(seed, invoice_count);
    (0..dataset.bill_count())
        .filter(|index| dataset.bill_payment(*index).is_some())
        .count() as i64
}

#[tokio::test]
async fn the_seed_flow_syncs_on_request_and_pages_invoices_by_status() {
    for_each_database(async |app| {
        let company_id = new_company(app, "Acme").await;
        let connection_id = sandbox_connection(app, company_id, 600, 42).await;

        // Authorizing started nothing.
        tokio::time::sleep(Duration::from_millis(300)).await;
        let history = app
            .client
            .list_pull_operations(&company_id, None, None, None, None)
            .await
            .expect("history");
        assert_eq!(history.into_inner().total_results, 0);
        let (status, error) = error_of(
            app.client
                .list_invoices(&company_id, None, None, None, None, None, None, None)
                .await,
        );
        assert_eq!(status, 409);
        assert!(error.error.contains("POST /companies/"), "{}", error.error);

        let queued = app.client.sync_all_data(&company_id, None).await.expect("queued");
        assert_eq!(queued.status(), 202);
        let queued = queued.into_inner();
        // The sandbox has every data type: one operation each.
        assert_eq!(queued.len(), DataType::all().len());
        assert!(queued.iter().all(|op| op.connection_id == connection_id));

        let done = settled(&app.client, company_id).await;
        assert!(
            done.iter()
                .all(|op| op.status == PullStatus::Complete && op.progress == 100),
            "{done:?}"
        );

        let all = app
            .client
            .list_invoices(&company_id, None, None, None, None, None, None, None)
            .await
            .expect("invoices")
            .into_inner();
        assert_eq!(all.total_results, 600);
        let expected_paid = paid_count(42, 600);
        let paid = app
            .client
            .list_invoices(
                &company_id, None,
                None,
                None,
                NonZeroU32::new(50),
                None, None,
                Some(&"paid".parse().expect("a status")),
)
            .await
            .expect("paid invoices")
            .into_inner();
        assert_eq!(paid.total_results as usize, expected_paid);
        assert_eq!(
            paid.links.next.as_ref().map(|link| unpinned(&link.href)),
            Some(format!(
                "/companies/{company_id}/data/invoices?page=2&pageSize=50&status=Paid"
            ))
        );
        // Following `next` visits every paid invoice once, newest first.
        let mut seen = Vec::new();
        let mut next = Some(paid.links.current.href.clone());
        while let Some(path) = next {
            let body = json(app.get(&path).await).await;
            for invoice in body["results"].as_array().expect("results") {
                assert_eq!(invoice["status"], "Paid");
                assert_eq!(invoice["amountDue"], "0.00");
                seen.push((
                    invoice["issueDate"].as_str().expect("date").to_owned(),
                    invoice["invoiceId"].clone(),
                ));
            }
            if let Some(previous) = body["_links"]["previous"]["href"].as_str() {
                assert!(unpinned(previous).ends_with("&status=Paid"), "{previous}");
            }
            next = body["_links"]["next"]["href"].as_str().map(str::to_owned);
        }
        assert_eq!(seen.len(), expected_paid);
        assert!(
            seen.windows(2).all(|pair| pair[0].0 >= pair[1].0),
            "newest issue date first"
        );

        let customers = app
            .client
            .list_customers(&company_id, None, None, None, None, None, None)
            .await
            .expect("customers")
            .into_inner();
        assert_eq!(customers.total_results, 60);

        let status = json(
            app.get(&format!("/companies/{company_id}/dataStatus"))
                .await,
        )
        .await;
        assert_eq!(status["invoices"]["currentStatus"], "Complete");
        assert!(status["invoices"]["lastSuccessfulSync"].is_string());
        let company = app
            .client
            .get_company(&company_id)
            .await
            .expect("company")
            .into_inner();
        assert!(company.last_sync.is_some());
        let connection = app
            .client
            .get_connection(&company_id, &connection_id)
            .await
            .expect("found")
            .into_inner();
        assert!(connection.last_sync.is_some());

        // One operation by id; another client cannot see it.
        let one = app
            .client
            .get_pull_operation(&company_id, &queued[0].pull_operation_id)
            .await
            .expect("found")
            .into_inner();
        assert_eq!(one.status, PullStatus::Complete);
        let expected_records = match one.data_type {
            client::types::DataType::Invoices => 600,
            client::types::DataType::Customers => 60,
            client::types::DataType::Orders | client::types::DataType::BankTransactions => 250,
            client::types::DataType::BankAccounts => 3,
            client::types::DataType::Accounts => 21,
            client::types::DataType::Suppliers => 12,
            client::types::DataType::TaxRates => 7,
            client::types::DataType::Bills => 300,
            client::types::DataType::Payments => payment_count(42, 600),
            client::types::DataType::BillPayments => bill_payment_count(42, 600),
            client::types::DataType::CreditNotes => credit_note_count(42, 600),
            client::types::DataType::Items => 9,
            client::types::DataType::CompanyInfo => 1,
            client::types::DataType::JournalEntries => journal_entry_count(42, 600),
        };
        assert_eq!(one.records_fetched, expected_records);
        let (_, other) = app.other_tenant("other-client").await;
        let hidden = other.get_pull_operation(&company_id, &queued[0].pull_operation_id).await;
        assert_eq!(error_of(hidden).0, 404);

        // The platform now has fewer invoices.
        let path = format!("/companies/{company_id}/connections/{connection_id}/authorization");
        let fewer_body = json!({"organizationId": "sbx-sync", "accessToken": "tok", "invoiceCount": 250, "seed": 42});
        let response = app
            .raw()
            .put(app.url(&path))
            .header("authorization", app.authorization())
            .json(&fewer_body)
            .send()
            .await
            .expect("answered");
        assert_eq!(response.status(), 200);
        queue_invoices(app, company_id).await;
        settled(&app.client, company_id).await;
        // Records that disappeared from the platform stay, flagged deleted.
        let all_of_them = json(
            app.get(&format!(
                "/companies/{company_id}/data/invoices?pageSize=5000"
            ))
            .await,
        )
        .await;
        assert_eq!(all_of_them["totalResults"], 600);
        let flagged = all_of_them["results"]
            .as_array()
            .expect("results")
            .iter()
            .filter(|invoice| invoice["isDeleted"] == true)
            .count();
        assert_eq!(flagged, 350);
        let live = json(
            app.get(&format!(
                "/companies/{company_id}/data/invoices?query=isDeleted%21%3Dtrue"
            ))
            .await,
        )
        .await;
        assert_eq!(live["totalResults"], 250);
    })
    .await;
}

#[tokio::test]
async fn triggers_are_idempotent_while_an_operation_is_pending() {
    for backend in backends() {
        // No workers: operations stay queued.
        let options = AppOptions::idle();
        let app = TestApp::spawn_with(backend, options).await;
        let company_id = new_company(&app, "Acme").await;
        sandbox_connection(&app, company_id, 10, 1).await;

        let first: Vec<Uuid> = app
            .client
            .sync_all_data(&company_id, None)
            .await
            .expect("queued")
            .into_inner()
            .iter()
            .map(|op| op.pull_operation_id)
            .collect();
        let second: Vec<Uuid> = app
            .client
            .sync_all_data(&company_id, None)
            .await
            .expect("queued")
            .into_inner()
            .iter()
            .map(|op| op.pull_operation_id)
            .collect();
        assert_eq!(first, second);
        let one = app
            .client
            .queue_data_type(
                &company_id,
                client::types::QueueDataTypeDataType::Invoices,
                None,
            )
            .await
            .expect("queued")
            .into_inner();
        assert_eq!(one.len(), 1);
        assert!(first.contains(&one[0].pull_operation_id));
        let history = app
            .client
            .list_pull_operations(&company_id, None, None, None, None)
            .await
            .expect("history")
            .into_inner();
        assert_eq!(history.total_results as usize, DataType::all().len());

        let unknown_type = app
            .raw()
            .post(app.url(&format!("/companies/{company_id}/data/queue/payslips")))
            .header("authorization", app.authorization())
            .send()
            .await
            .expect("answered");
        assert_eq!(unknown_type.status(), 400);
        assert_eq!(
            json(unknown_type).await["validation"]["errors"][0]["itemId"],
            "dataType"
        );
        let unknown = Uuid::now_v7();
        assert_eq!(
            error_of(app.client.sync_all_data(&unknown, None).await).0,
            404
        );
        let (_, other) = app.other_tenant("other-client").await;
        assert_eq!(
            error_of(other.sync_all_data(&company_id, None).await).0,
            404
        );
        assert_eq!(
            error_of(
                other
                    .list_invoices(&company_id, None, None, None, None, None, None, None)
                    .await
            )
            .0,
            404
        );
        let lonely = new_company(&app, "No connections").await;
        let (status, error) = error_of(app.client.sync_all_data(&lonely, None).await);
        assert_eq!(status, 409);
        assert!(
            error.error.contains("no Linked connection"),
            "{}",
            error.error
        );

        let filtered = app
            .client
            .list_pull_operations(
                &company_id,
                Some(client::types::ListPullOperationsDataType::Invoices),
                None,
                None,
                Some(&"queued".parse().expect("a status")),
            )
            .await
            .expect("history")
            .into_inner();
        assert_eq!(filtered.total_results, 1);
        assert!(
            filtered
                .links
                .current
                .href
                .ends_with("&dataType=invoices&status=Queued"),
            "{}",
            filtered.links.current.href
        );
        let bad = app
            .get(&format!(
                "/companies/{company_id}/data/invoices?status=settled"
            ))
            .await;
        assert_eq!(bad.status(), 400);
        let body = json(bad).await;
        assert!(
            body["validation"]["errors"][0]["message"]
                .as_str()
                .expect("text")
                .contains("PartiallyPaid")
        );
    }
}

/// The sandbox, failing on the second page of invoices when told to.
struct Flaky {
    fail: Arc<AtomicBool>,
    auth_error: bool,
}

impl AnyConnector for Flaky {
    fn fetch<'a>(
        &'a self,
        credentials: &'a Value,
        data_type: DataType,
        _since: Option<tributary::platforms::connector::Since>,
        cursor: Option<String>,
    ) -> BoxFuture<'a, Result<Page, ConnectorError>> {
        Box::pin(async move {
            if self.fail.load(Ordering::SeqCst)
                && data_type == DataType::INVOICES
                && cursor.is_some()
            {
                return Err(if self.auth_error {
                    ConnectorError::Auth(
                        "The platform answered 401: the token was revoked.".to_owned(),
                    )
                } else {
                    ConnectorError::Failed(
                        "The platform answered 503 three times in a row.".to_owned(),
                    )
                });
            }
            SandboxConnector
                .fetch(credentials, data_type, None, cursor)
                .await
        })
    }
}

#[tokio::test]
async fn a_sync_that_fails_midway_leaves_the_previous_data_intact() {
    for backend in backends() {
        let fail = Arc::new(AtomicBool::new(false));
        let app = TestApp::spawn_with(
            backend,
            AppOptions::with_sandbox(Arc::new(Flaky {
                fail: fail.clone(),
                auth_error: false,
            })),
        )
        .await;
        let company_id = new_company(&app, "Acme").await;
        let connection_id = sandbox_connection(&app, company_id, 2500, 3).await;
        app.client
            .sync_all_data(&company_id, None)
            .await
            .expect("queued");
        settled(&app.client, company_id).await;
        let before = json(
            app.get(&format!(
                "/companies/{company_id}/data/invoices?pageSize=5000"
            ))
            .await,
        )
        .await;
        assert_eq!(before["totalResults"], 2500);

        fail.store(true, Ordering::SeqCst);
        queue_invoices(&app, company_id).await;
        let after_ops = settled(&app.client, company_id).await;
        let latest = &after_ops[0];
        assert_eq!(latest.status, PullStatus::Failed, "{latest:?}");
        assert!(
            latest
                .error_message
                .as_deref()
                .unwrap_or_default()
                .contains("503"),
            "{latest:?}"
        );

        let after = json(
            app.get(&format!(
                "/companies/{company_id}/data/invoices?pageSize=5000"
            ))
            .await,
        )
        .await;
        assert_eq!(
            after, before,
            "readers still see the previous complete data"
        );
        let staged = tributary::store::unreachable_rows(&app.db, connection_id, DataType::INVOICES)
            .await
            .expect("read");
        assert_eq!(staged, 0, "the failed sync's staged rows were discarded");
        let status = json(
            app.get(&format!("/companies/{company_id}/dataStatus"))
                .await,
        )
        .await;
        assert_eq!(status["invoices"]["currentStatus"], "Failed");
        assert!(status["invoices"]["latestSuccessfulSyncId"].is_string());
    }
}

#[tokio::test]
async fn rejected_tokens_end_in_auth_error_and_deauthorize_the_connection() {
    for backend in backends() {
        let app = TestApp::spawn_with(
            backend,
            AppOptions::with_sandbox(Arc::new(Flaky {
                fail: Arc::new(AtomicBool::new(true)),
                auth_error: true,
            })),
        )
        .await;
        let company_id = new_company(&app, "Acme").await;
        let connection_id = sandbox_connection(&app, company_id, 1500, 3).await;
        queue_invoices(&app, company_id).await;
        let ops = settled(&app.client, company_id).await;
        assert_eq!(ops[0].status, PullStatus::AuthError);
        assert!(
            ops[0]
                .error_message
                .as_deref()
                .unwrap_or_default()
                .contains("revoked")
        );
        let connection = app
            .client
            .get_connection(&company_id, &connection_id)
            .await
            .expect("found")
            .into_inner();
        assert_eq!(
            connection.status,
            client::types::ConnectionStatus::Deauthorized
        );
        assert_eq!(
            error_of(
                app.client
                    .list_invoices(&company_id, None, None, None, None, None, None, None)
                    .await
            )
            .0,
            409
        );
    }
}

/// The sandbox, counting how often each operation's first page is fetched.
struct Counting {
    starts: Arc<Mutex<HashMap<String, usize>>>,
}

impl AnyConnector for Counting {
    fn fetch<'a>(
        &'a self,
        credentials: &'a Value,
        data_type: DataType,
        _since: Option<tributary::platforms::connector::Since>,
        cursor: Option<String>,
    ) -> BoxFuture<'a, Result<Page, ConnectorError>> {
        Box::pin(async move {
            if cursor.is_none() {
                let key = format!(
                    "{}/{data_type:?}",
                    credentials["organizationId"].as_str().unwrap_or_default()
                );
                if let Ok(mut starts) = self.starts.lock() {
                    *starts.entry(key).or_default() += 1;
                }
                tokio::time::sleep(Duration::from_millis(20)).await;
            }
            SandboxConnector
                .fetch(credentials, data_type, None, cursor)
                .await
        })
    }
}

#[tokio::test]
async fn two_engines_on_one_database_never_run_the_same_operation_twice() {
    for backend in backends() {
        let starts = Arc::new(Mutex::new(HashMap::new()));
        let options = || AppOptions {
            connectors: Connectors::standard().with(
                "sandbox",
                Arc::new(Counting {
                    starts: starts.clone(),
                }),
            ),
            engine: EngineConfig {
                workers: 3,
                poll: Duration::from_millis(20),
                ..EngineConfig::default()
            },
            ..AppOptions::default()
        };
        let app = TestApp::spawn_with(backend, options()).await;
        let second = app.another_instance(options()).await;
        let second_client = client_for(second, &app.api_key);

        let mut companies = Vec::new();
        for index in 0..8 {
            let company_id = new_company(&app, &format!("Company {index}")).await;
            let connection_id = new_connection(&app, company_id, "sandbox").await;
            let body = json!({"organizationId": format!("sbx-c{index}"), "accessToken": "tok", "invoiceCount": 1200, "seed": index});
            let response = app
                .raw()
                .put(app.url(&format!(
                    "/companies/{company_id}/connections/{connection_id}/authorization"
                )))
                .header("authorization", app.authorization())
                .json(&body)
                .send()
                .await
                .expect("answered");
            assert_eq!(response.status(), 200);
            // Half the triggers go through each instance.
            let trigger = if index % 2 == 0 {
                &app.client
            } else {
                &second_client
            };
            trigger
                .sync_all_data(&company_id, None)
                .await
                .expect("queued");
            companies.push(company_id);
        }
        for company_id in &companies {
            let ops = settled(&app.client, *company_id).await;
            assert!(
                ops.iter().all(|op| op.status == PullStatus::Complete),
                "{ops:?}"
            );
        }
        let starts = starts.lock().expect("counts").clone();
        // Eight sandbox connections, every data type each.
        assert_eq!(starts.len(), 8 * DataType::all().len(), "{starts:?}");
        assert!(
            starts.values().all(|count| *count == 1),
            "an operation ran twice: {starts:?}"
        );
        let attempts: Vec<i32> = entity::pull_operation::Entity::find()
            .all(&app.db)
            .await
            .expect("read")
            .into_iter()
            .map(|op| op.attempts)
            .collect();
        assert!(
            attempts.iter().all(|attempts| *attempts == 1),
            "{attempts:?}"
        );
        if backend == Backend::Postgres {
            eprintln!("two engines shared the PostgreSQL queue without double claims");
        }
    }
}

#[tokio::test]
async fn an_operation_whose_worker_died_is_taken_over_or_failed_after_its_lease() {
    for backend in backends() {
        let idle = AppOptions::idle();
        let app = TestApp::spawn_with(backend, idle).await;
        let company_id = new_company(&app, "Acme").await;
        sandbox_connection(&app, company_id, 300, 9).await;
        let queued = app
            .client
            .sync_all_data(&company_id, None)
            .await
            .expect("queued")
            .into_inner();
        // Simulate a crash: both operations were claimed by a worker that died.
        let expired = chrono::Utc::now() - chrono::Duration::minutes(5);
        for (op, attempts) in queued.iter().zip([1, 3]) {
            let row = entity::pull_operation::Entity::find_by_id(op.pull_operation_id)
                .one(&app.db)
                .await
                .expect("read")
                .expect("row");
            let mut active = row.into_active_model();
            active.status = Set(entity::pull_operation::PullStatus::Fetching);
            active.lease_owner = Set(Some("dead-process/0".to_owned()));
            active.lease_expires_at = Set(Some(expired));
            active.started = Set(Some(expired));
            active.attempts = Set(attempts);
            active.update(&app.db).await.expect("crashed");
        }

        // A restarted server takes both over.
        let restarted = AppOptions::working(2);
        app.another_instance(restarted).await;
        let ops = settled(&app.client, company_id).await;
        let by_id: HashMap<Uuid, &PullOperation> =
            ops.iter().map(|op| (op.pull_operation_id, op)).collect();
        let resumed = by_id[&queued[0].pull_operation_id];
        assert_eq!(resumed.status, PullStatus::Complete, "{resumed:?}");
        let abandoned = by_id[&queued[1].pull_operation_id];
        assert_eq!(abandoned.status, PullStatus::Failed, "{abandoned:?}");
        assert!(
            abandoned
                .error_message
                .as_deref()
                .unwrap_or_default()
                .contains("Abandoned after 3 attempts")
        );
        let row = entity::pull_operation::Entity::find_by_id(resumed.pull_operation_id)
            .one(&app.db)
            .await
            .expect("read")
            .expect("row");
        assert_eq!(row.attempts, 2);
        assert_eq!(row.lease_owner, None);
    }
}

/// A renewal that had to wait for the operation's row (a publish holds it
/// shared while it moves a long list, which can outlast the lease) still
/// leaves a lease that runs from when it was written, not from when it was
/// sent: otherwise it writes an end already past, and another worker's
/// claim takes the operation before the swap. Another worker's renewal
/// changes nothing.
#[tokio::test]
async fn a_renewal_that_waited_for_the_row_leases_from_when_it_was_written() {
    use sea_orm::TransactionTrait;
    use tributary::sync::operations::lease;

    for backend in backends() {
        let app = TestApp::spawn_with(backend, AppOptions::idle()).await;
        let company_id = new_company(&app, "Acme").await;
        sandbox_connection(&app, company_id, 10, 3).await;
        let queued = app
            .client
            .sync_all_data(&company_id, None)
            .await
            .expect("queued")
            .into_inner();
        let id = queued[0].pull_operation_id;
        let row = entity::pull_operation::Entity::find_by_id(id)
            .one(&app.db)
            .await
            .expect("read")
            .expect("row");
        let mut running = row.into_active_model();
        running.status = Set(entity::pull_operation::PullStatus::Fetching);
        running.lease_owner = Set(Some("publisher/0".to_owned()));
        running.lease_expires_at = Set(Some(chrono::Utc::now() + chrono::Duration::seconds(1)));
        running.update(&app.db).await.expect("running");
        let lease = chrono::Duration::seconds(2);
        assert!(
            !lease::renew(&app.db, id, "other/0", lease)
                .await
                .expect("renewed"),
            "only the owner renews"
        );

        let waited = if backend == Backend::Postgres {
            // The publish's hold: the row shared for longer than the lease.
            let hold = app.db.begin().await.expect("a transaction");
            assert!(
                lease::hold_shared(&hold, id, "publisher/0")
                    .await
                    .expect("held")
            );
            let db = app.db.clone();
            let renewal =
                tokio::spawn(async move { lease::renew(&db, id, "publisher/0", lease).await });
            tokio::time::sleep(Duration::from_secs(3)).await;
            assert!(!renewal.is_finished(), "the renewal waits for the hold");
            hold.commit().await.expect("released");
            renewal.await.expect("ran").expect("renewed")
        } else {
            lease::renew(&app.db, id, "publisher/0", lease)
                .await
                .expect("renewed")
        };
        assert!(waited, "the owner renews");
        let written = chrono::Utc::now();
        let row = entity::pull_operation::Entity::find_by_id(id)
            .one(&app.db)
            .await
            .expect("read")
            .expect("row");
        let until = row.lease_expires_at.expect("a lease");
        assert!(
            until > written + chrono::Duration::seconds(1),
            "the lease runs from the write: {until} against {written}"
        );
        assert_eq!(row.lease_owner.as_deref(), Some("publisher/0"));
    }
}

#[tokio::test]
async fn deleting_a_connection_or_company_deletes_its_synced_data() {
    for_each_database(async |app| {
        // Another company's synced data, which no delete may touch (the
        // record tables have no foreign key: the deletes name their rows).
        let other_id = new_company(app, "Other").await;
        sandbox_connection(app, other_id, 300, 9).await;
        app.client
            .sync_all_data(&other_id, None)
            .await
            .expect("queued");
        settled(&app.client, other_id).await;
        // The run clears its staging after its operation completes: wait for
        // it, so that the counts below are the other company's for good.
        let cleared = tokio::time::Instant::now() + Duration::from_secs(30);
        while count_rows(app, "record_staging").await > 0 {
            assert!(
                tokio::time::Instant::now() < cleared,
                "staging never cleared"
            );
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        let tables = [
            "record",
            "record_staging",
            "record_generation",
            "data_generation",
            "pull_operation",
        ];
        let mut others = Vec::new();
        for table in tables {
            others.push(count_rows(app, table).await);
        }
        assert!(others[0] > 300, "the other company's records: {others:?}");

        let company_id = new_company(app, "Acme").await;
        let connection_id = sandbox_connection(app, company_id, 1200, 5).await;
        app.client
            .sync_all_data(&company_id, None)
            .await
            .expect("queued");
        settled(&app.client, company_id).await;
        assert_eq!(
            count_rows(app, "record WHERE data_type = 'invoices'").await,
            1200 + 300
        );

        app.client
            .delete_connection(&company_id, &connection_id)
            .await
            .expect("deleted");
        for (table, other) in tables.iter().zip(&others) {
            assert_eq!(count_rows(app, table).await, *other, "{table}");
        }
        assert_eq!(
            error_of(
                app.client
                    .list_invoices(&company_id, None, None, None, None, None, None, None)
                    .await
            )
            .0,
            409
        );

        sandbox_connection(app, company_id, 100, 5).await;
        sandbox_connection(app, company_id, 50, 6).await;
        app.client
            .sync_all_data(&company_id, None)
            .await
            .expect("queued");
        settled(&app.client, company_id).await;
        app.client
            .delete_company(&company_id)
            .await
            .expect("deleted");
        for (table, other) in tables.iter().zip(&others) {
            assert_eq!(count_rows(app, table).await, *other, "{table}");
        }
        let listed = app
            .client
            .list_invoices(&other_id, None, None, None, None, None, None, None)
            .await
            .expect("the other company's invoices")
            .into_inner();
        assert_eq!(listed.total_results, 300);
    })
    .await;
}

/// The staging table's file on PostgreSQL: a new one after `TRUNCATE`, the
/// same after rows are deleted and vacuumed. Read from the catalog, without
/// locking the table (a lock held when the run truncates would make it
/// delete instead).
async fn staging_file(app: &TestApp) -> i64 {
    let row = app
        .db
        .query_one_raw(sea_orm::Statement::from_string(
            sea_orm::DbBackend::Postgres,
            "SELECT pg_relation_filenode('record_staging')::bigint AS file",
        ))
        .await
        .expect("read")
        .expect("a row");
    row.try_get::<i64>("", "file").expect("a file")
}

/// Waits until `staged` (a `record_staging` filter) counts no row: the run
/// clears its staging after its operation completes.
async fn staging_cleared(app: &TestApp, staged: &str) {
    let cleared = tokio::time::Instant::now() + Duration::from_secs(30);
    while count_rows(app, &format!("record_staging WHERE {staged}")).await > 0 {
        assert!(
            tokio::time::Instant::now() < cleared,
            "staging never cleared"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// The generation readers see of the (one company's) invoices.
async fn invoices_generation(app: &TestApp) -> i64 {
    let row = app
        .db
        .query_one_raw(sea_orm::Statement::from_string(
            app.db.get_database_backend(),
            "SELECT max(generation) AS generation FROM data_generation WHERE data_type = 'invoices'",
        ))
        .await
        .expect("read")
        .expect("a row");
    row.try_get::<i64>("", "generation").expect("a generation")
}

/// Queues a sync of the company's invoices alone.
async fn queue_invoices(app: &TestApp, company_id: Uuid) {
    app.client
        .queue_data_type(
            &company_id,
            client::types::QueueDataTypeDataType::Invoices,
            None,
        )
        .await
        .expect("queued");
}

/// Syncs the company's invoices alone, to completion.
pub async fn sync_invoices(app: &TestApp, company_id: Uuid) {
    queue_invoices(app, company_id).await;
    let operations = settled(&app.client, company_id).await;
    assert!(
        operations
            .iter()
            .all(|operation| operation.status == PullStatus::Complete),
        "{operations:?}"
    );
}

/// Syncs the company's invoices alone, with no other run's rows staged:
/// on PostgreSQL the staging table is emptied whole (a new file), on SQLite
/// its rows are deleted.
async fn synced_alone(app: &TestApp, company_id: Uuid) {
    if app.db.get_database_backend() != sea_orm::DbBackend::Postgres {
        sync_invoices(app, company_id).await;
        staging_cleared(app, "true").await;
        return;
    }
    let file = staging_file(app).await;
    sync_invoices(app, company_id).await;
    let emptied = tokio::time::Instant::now() + Duration::from_secs(30);
    while staging_file(app).await == file {
        assert!(
            tokio::time::Instant::now() < emptied,
            "the staging table was not emptied by TRUNCATE"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert_eq!(count_rows(app, "record_staging").await, 0);
}

#[tokio::test]
async fn a_long_lists_staging_goes_whole_when_alone_and_never_takes_another_runs_rows() {
    for_each_database(async |app| {
        let postgres = app.db.get_database_backend() == sea_orm::DbBackend::Postgres;
        let company_id = new_company(app, "Long").await;
        let long = tributary::store::publish::ANALYZE_AT_ROWS + 500;
        let connection_id = sandbox_connection(app, company_id, long, 3).await;
        // The invoices readers see (a superseded generation is deleted
        // after the staging).
        let invoices = "record WHERE data_type = 'invoices' AND generation = \
             (SELECT max(generation) FROM data_generation WHERE data_type = 'invoices')";

        // Alone: a first sync's published rows, then a resync's unchanged
        // ones (discarded), each emptied whole.
        synced_alone(app, company_id).await;
        assert_eq!(count_rows(app, invoices).await, long as i64);
        synced_alone(app, company_id).await;
        assert_eq!(count_rows(app, invoices).await, long as i64);

        // Another run, between two of its pages, with a generation below
        // this list's, then one above: its staged row stays through this
        // list's resync, unchanged (discarded) and then changed (published).
        let path = format!("/companies/{company_id}/connections/{connection_id}/authorization");
        for (other_run, changed) in [(-1_i64, 0), (1_i64 << 40, 10)] {
            entity::record_staging::ActiveModel {
                connection_id: Set(Uuid::new_v4()),
                data_type: Set("invoices".to_owned()),
                generation: Set(other_run),
                record_id: Set("staged-by-another-run".to_owned()),
                company_id: Set(Uuid::new_v4()),
                sort_key: Set("2026-01-01".to_owned()),
                filter_value: Set(None),
                body: Set("{}".to_owned()),
            }
            .insert(&app.db)
            .await
            .expect("staged");
            let response = app
                .raw()
                .put(app.url(&path))
                .header("authorization", app.authorization())
                .json(&json!({
                    "organizationId": "sbx-sync", "accessToken": "tok", "invoiceCount": long,
                    "seed": 3, "changedInvoiceCount": changed,
                }))
                .send()
                .await
                .expect("answered");
            assert_eq!(response.status(), 200);
            let file = if postgres { staging_file(app).await } else { 0 };
            let before = invoices_generation(app).await;
            sync_invoices(app, company_id).await;
            staging_cleared(app, &format!("generation <> {other_run}")).await;
            assert_eq!(
                count_rows(
                    app,
                    &format!("record_staging WHERE generation = {other_run}")
                )
                .await,
                1,
                "the other run's row ({other_run})"
            );
            if postgres {
                assert_eq!(staging_file(app).await, file, "deleted row by row");
            }
            assert_eq!(count_rows(app, invoices).await, long as i64);
            let published = invoices_generation(app).await;
            assert_eq!(
                published > before,
                changed > 0,
                "a resync publishes only what changed: {before} then {published}"
            );
            app.db
                .execute_unprepared(&format!(
                    "DELETE FROM record_staging WHERE generation = {other_run}"
                ))
                .await
                .expect("the other run's row goes");
        }
    })
    .await;
}

#[tokio::test]
async fn readers_never_see_half_a_sync() {
    for_each_database(async |app| {
        let company_id = new_company(app, "Acme").await;
        sandbox_connection(app, company_id, 3000, 11).await;
        app.client
            .sync_all_data(&company_id, None)
            .await
            .expect("queued");
        settled(&app.client, company_id).await;

        let stop = Arc::new(AtomicBool::new(false));
        let reader = {
            let stop = stop.clone();
            let (client, address, authorization) = (app.raw(), app.url(""), app.authorization());
            let path =
                format!("{address}/companies/{company_id}/data/invoices?page=30&pageSize=10");
            tokio::spawn(async move {
                let mut reads = 0;
                while !stop.load(Ordering::SeqCst) {
                    let body: Value = client
                        .get(&path)
                        .header("authorization", &authorization)
                        .send()
                        .await
                        .expect("answered")
                        .json()
                        .await
                        .expect("JSON");
                    assert_eq!(body["totalResults"], 3000, "{body}");
                    assert_eq!(
                        body["results"].as_array().map(Vec::len),
                        Some(10),
                        "a partial page: {body}"
                    );
                    reads += 1;
                }
                reads
            })
        };
        for _ in 0..5 {
            queue_invoices(app, company_id).await;
            settled(&app.client, company_id).await;
        }
        stop.store(true, Ordering::SeqCst);
        let reads = reader.await.expect("the reader saw only whole pages");
        assert!(reads > 0);
    })
    .await;
}

/// The sandbox, slowly: each page takes a while.
struct Slow;

impl AnyConnector for Slow {
    fn fetch<'a>(
        &'a self,
        credentials: &'a Value,
        data_type: DataType,
        _since: Option<tributary::platforms::connector::Since>,
        cursor: Option<String>,
    ) -> BoxFuture<'a, Result<Page, ConnectorError>> {
        Box::pin(async move {
            tokio::time::sleep(Duration::from_millis(150)).await;
            SandboxConnector
                .fetch(credentials, data_type, None, cursor)
                .await
        })
    }
}

#[tokio::test]
async fn shutting_down_puts_a_running_sync_back_in_the_queue() {
    for backend in backends() {
        let idle = AppOptions::idle();
        let app = TestApp::spawn_with(backend, idle).await;
        let company_id = new_company(&app, "Acme").await;
        let connection_id = sandbox_connection(&app, company_id, 8000, 2).await;
        let queued = app
            .client
            .queue_data_type(
                &company_id,
                client::types::QueueDataTypeDataType::Invoices,
                None,
            )
            .await
            .expect("queued")
            .into_inner();
        let id = queued[0].pull_operation_id;

        let engine = tributary::sync::engine::Engine::new(
            app.db.clone(),
            app.keyring.clone(),
            Connectors::standard().with("sandbox", Arc::new(Slow)),
            EngineConfig {
                workers: 1,
                poll: Duration::from_millis(20),
                ..EngineConfig::default()
            },
            Arc::new(tokio::sync::Notify::new()),
            tributary::metrics::Metrics::new(),
        );
        let workers = engine.start();
        for _ in 0..100 {
            let op = app
                .client
                .get_pull_operation(&company_id, &id)
                .await
                .expect("found")
                .into_inner();
            if op.records_fetched > 0 {
                break;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        engine.stop(workers, Duration::from_secs(10)).await;

        let row = entity::pull_operation::Entity::find_by_id(id)
            .one(&app.db)
            .await
            .expect("read")
            .expect("row");
        assert_eq!(
            (
                row.status.to_value().as_str(),
                row.attempts,
                row.lease_owner.as_deref()
            ),
            ("Queued", 0, None)
        );
        let staged = tributary::store::unreachable_rows(&app.db, connection_id, DataType::INVOICES)
            .await
            .expect("read");
        assert_eq!(
            staged, 0,
            "the interrupted run's staged rows were discarded"
        );
    }
}

#[tokio::test]
async fn a_sync_queued_before_its_connection_was_unlinked_is_cancelled() {
    for backend in backends() {
        let idle = AppOptions::idle();
        let app = TestApp::spawn_with(backend, idle).await;
        let company_id = new_company(&app, "Acme").await;
        let connection_id = sandbox_connection(&app, company_id, 50, 2).await;
        // Concurrent triggers still queue one operation per data type.
        let triggers = (0..8).map(|_| app.client.sync_all_data(&company_id, None));
        let answers = futures::future::join_all(triggers).await;
        assert!(
            answers
                .iter()
                .all(|answer| answer.as_ref().is_ok_and(|queued| queued.status() == 202))
        );
        let history = app
            .client
            .list_pull_operations(&company_id, None, None, None, None)
            .await
            .expect("history")
            .into_inner();
        assert_eq!(history.total_results as usize, DataType::all().len());

        let unlink = client::types::ConnectionUpdate {
            status: client::types::StatusChange::Unlinked,
        };
        app.client
            .update_connection(&company_id, &connection_id, &unlink)
            .await
            .expect("unlinked");
        let working = AppOptions::working(1);
        app.another_instance(working).await;
        let ops = settled(&app.client, company_id).await;
        for op in ops {
            assert_eq!(op.status, PullStatus::Cancelled, "{op:?}");
            assert!(
                op.error_message
                    .as_deref()
                    .unwrap_or_default()
                    .contains("Unlinked"),
                "{op:?}"
            );
        }
    }
}

/// Reading a company's data before it is synced says what to do next: with
/// no `Linked` connection, create and link one (a sync would answer 409);
/// with one, queue a sync.
#[tokio::test]
async fn an_unsynced_read_says_to_link_a_connection_before_asking_for_a_sync() {
    for_each_database(async |app| {
        let company_id = new_company(app, "Nothing Linked Ltd").await;
        new_connection(app, company_id, "sandbox").await;
        let unlinked = app
            .get(&format!("/companies/{company_id}/data/invoices"))
            .await;
        assert_eq!(unlinked.status(), 409);
        let said = json(unlinked).await["error"]
            .as_str()
            .unwrap_or_default()
            .to_owned();
        assert!(
            said.contains("no Linked connection")
                && said.contains(&format!("POST /companies/{company_id}/connections"))
                && said.contains("/linkSessions")
                && !said.contains("/data/all"),
            "{said}"
        );
        let queued = app
            .post_json(&format!("/companies/{company_id}/data/all"), &json!(null))
            .await;
        assert_eq!(
            queued.status(),
            409,
            "the sync it would have suggested is refused"
        );

        sandbox_connection(app, company_id, 5, 1).await;
        let linked = app
            .get(&format!("/companies/{company_id}/data/invoices"))
            .await;
        assert_eq!(linked.status(), 409);
        let said = json(linked).await["error"]
            .as_str()
            .unwrap_or_default()
            .to_owned();
        assert!(
            said.contains(&format!("POST /companies/{company_id}/data/all")),
            "{said}"
        );
    })
    .await;
}
