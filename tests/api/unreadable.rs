//! One record never fails a page: a record the connector cannot read is
//! reported on the pull operation (id, field, reason; never its contents),
//! counted in `/metrics` and in `read.completed`, keeps its previous copy and
//! is not flagged deleted (nor is anything, when such a record has no
//! readable id); a whole page, or more than 1% of the records,
//! unreadable fails the sync and keeps the previous data. The platform is the
//! sandbox, with chosen invoices made unreadable or deleted.

use std::collections::BTreeSet;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures::future::BoxFuture;
use serde_json::{Value, json};
use uuid::Uuid;

use client::types::{PullStatus, QueueDataTypeDataType};
use tributary::data::invoices::Invoices;
use tributary::data::{DataType, Records};
use tributary::platforms::connector::{AnyConnector, ConnectorError, Page, RecordIssue};
use tributary::platforms::sandbox::SandboxAuthorization;
use tributary::platforms::sandbox::connector::SandboxConnector;
use tributary::platforms::sandbox::dataset::Dataset;
use tributary::webhooks::deliverer::WebhookConfig;

use crate::connections::new_company;
use crate::helpers::{AppOptions, TestApp, backends, json};
use crate::platforms::{latest, sync};
use crate::sync::sandbox_connection;
use crate::webhooks::receiver::Receiver;

/// What the platform does to chosen invoices (by index) on the next sync.
#[derive(Default)]
struct Changes {
    /// Sent, but unreadable: reported with the id when `true`.
    unreadable: Vec<(u64, bool)>,
    /// Deleted at the platform: not sent at all.
    deleted: Vec<u64>,
}

/// The sandbox, whose invoices the test can make unreadable or delete.
#[derive(Clone, Default)]
struct Garbling {
    changes: Arc<Mutex<Changes>>,
}

impl Garbling {
    fn set(&self, changes: Changes) {
        *self.changes.lock().expect("changes") = changes;
    }
}

impl AnyConnector for Garbling {
    fn fetch<'a>(
        &'a self,
        credentials: &'a Value,
        data_type: DataType,
        _since: Option<tributary::platforms::connector::Since>,
        cursor: Option<String>,
    ) -> BoxFuture<'a, Result<Page, ConnectorError>> {
        Box::pin(async move {
            if data_type != DataType::INVOICES {
                return SandboxConnector
                    .fetch(credentials, data_type, None, cursor)
                    .await;
            }
            let authorization: SandboxAuthorization =
                serde_json::from_value(credentials.clone()).expect("a sandbox body");
            let dataset = Dataset::of(&authorization);
            let start = cursor
                .as_deref()
                .map_or(0, |at| at.parse().expect("a start"));
            let page = dataset.invoices(start);
            let changes = self.changes.lock().expect("changes");
            let id_of = |index: u64| dataset.invoice(index).invoice_id;
            let deleted: BTreeSet<String> = changes.deleted.iter().map(|i| id_of(*i)).collect();
            let mut issues = Vec::new();
            let mut records = Vec::new();
            for invoice in page.records {
                if deleted.contains(&invoice.invoice_id) {
                    continue;
                }
                let unreadable = changes
                    .unreadable
                    .iter()
                    .find(|(index, _)| id_of(*index) == invoice.invoice_id);
                match unreadable {
                    Some((_, named)) => issues.push(RecordIssue {
                        record_id: named.then(|| invoice.invoice_id.clone()),
                        field: Some("Total".to_owned()),
                        reason: "invalid type: string, expected a decimal number".to_owned(),
                    }),
                    None => records.push(invoice),
                }
            }
            Ok(Page {
                records: Records::of::<Invoices>(records),
                next: page.next,
                total: page.total,
                whole_list: true,
                issues,
                resume: None,
                removed: Vec::new(),
            })
        })
    }
}

async fn spawn(backend: crate::helpers::Backend, garbling: &Garbling) -> TestApp {
    let options = AppOptions {
        metrics: true,
        webhooks: WebhookConfig {
            poll: Duration::from_millis(50),
            allow_private_addresses: true,
            ..WebhookConfig::default()
        },
        ..AppOptions::with_sandbox(Arc::new(garbling.clone()))
    };
    TestApp::spawn_with(backend, options).await
}

/// Every invoice of the company, by id.
async fn invoices(app: &TestApp, company_id: Uuid) -> Vec<Value> {
    let page = json(
        app.get(&format!(
            "/companies/{company_id}/data/invoices?pageSize=5000"
        ))
        .await,
    )
    .await;
    let mut all = page["results"].as_array().cloned().unwrap_or_default();
    all.sort_by(|a, b| a["invoiceId"].as_str().cmp(&b["invoiceId"].as_str()));
    all
}

/// The latest invoices operation, as the history answers it.
async fn latest_invoices_operation(app: &TestApp, company_id: Uuid) -> Value {
    let history = json(
        app.get(&format!(
            "/companies/{company_id}/data/history?pageSize=5000"
        ))
        .await,
    )
    .await;
    history["results"]
        .as_array()
        .and_then(|all| all.iter().find(|op| op["dataType"] == "invoices"))
        .cloned()
        .expect("an invoices operation")
}

async fn resync(app: &TestApp, company_id: Uuid) -> client::types::PullOperation {
    latest(
        &sync(app, company_id, QueueDataTypeDataType::Invoices).await,
        "invoices",
    )
}

fn sample(text: &str, line_start: &str) -> Option<f64> {
    text.lines()
        .find(|line| line.starts_with(line_start) && line[line_start.len()..].starts_with(' '))
        .and_then(|line| line.rsplit(' ').next())
        .and_then(|value| value.parse().ok())
}

#[tokio::test]
async fn an_unreadable_record_costs_that_record_keeps_its_copy_and_is_reported_everywhere() {
    for backend in backends() {
        let garbling = Garbling::default();
        let app = spawn(backend, &garbling).await;
        let receiver = Receiver::start().await;
        let endpoint = app
            .post_json(
                "/webhooks/endpoints",
                &json!({"url": receiver.url("/hooks"), "eventTypes": ["read.completed"]}),
            )
            .await;
        assert_eq!(endpoint.status(), 201);
        let company_id = new_company(&app, "Acme").await;
        sandbox_connection(&app, company_id, 1500, 5).await;
        assert_eq!(resync(&app, company_id).await.status, PullStatus::Complete);
        let before = invoices(&app, company_id).await;
        assert_eq!(before.len(), 1500);

        // Invoice 7 arrives unreadable (on the first of two pages); 1,200 is deleted.
        garbling.set(Changes {
            unreadable: vec![(7, true)],
            deleted: vec![1200],
        });
        let operation = resync(&app, company_id).await;
        assert_eq!(operation.status, PullStatus::Complete, "{operation:?}");
        let reported = latest_invoices_operation(&app, company_id).await;
        let unreadable_id = Dataset::invoices_only(5, 1500).invoice(7).invoice_id;
        assert_eq!(
            reported["issues"],
            json!([{"recordId": unreadable_id, "field": "Total", "reason": "invalid type: string, expected a decimal number"}])
        );
        assert_eq!(reported["issuesNotShown"], 0);
        assert_eq!(reported["recordsFetched"], 1498);

        let after = invoices(&app, company_id).await;
        assert_eq!(after.len(), 1500, "nothing left the list");
        let kept = after
            .iter()
            .find(|invoice| invoice["invoiceId"] == unreadable_id.as_str())
            .expect("the unreadable invoice is still listed");
        let was = before
            .iter()
            .find(|invoice| invoice["invoiceId"] == unreadable_id.as_str())
            .expect("it was listed before");
        assert_eq!(kept, was, "its previous copy, modifiedDate and all");
        assert_eq!(kept["isDeleted"], false);
        let deleted_id = Dataset::invoices_only(5, 1500).invoice(1200).invoice_id;
        let deleted = after
            .iter()
            .find(|invoice| invoice["invoiceId"] == deleted_id.as_str())
            .expect("a deleted invoice stays, flagged");
        assert_eq!(deleted["isDeleted"], true);

        let metrics = crate::helpers::http_client()
            .get(format!(
                "http://{}/metrics",
                app.metrics_address.expect("metrics served")
            ))
            .send()
            .await
            .expect("metrics")
            .text()
            .await
            .expect("text");
        assert_eq!(
            sample(
                &metrics,
                "tributary_unreadable_records_total{platform=\"sandbox\",data_type=\"invoices\"}"
            ),
            Some(1.0),
            "{metrics}"
        );
        let events = receiver.wait_for(2).await;
        let counts: Vec<Value> = events
            .iter()
            .map(|event| event.envelope()["data"]["dataTypes"][0]["issuesCount"].clone())
            .collect();
        assert_eq!(counts, [json!(0), json!(1)]);
        assert!(
            !events[1].envelope().to_string().contains("decimal number"),
            "the event counts issues; the operation names them"
        );
    }
}

#[tokio::test]
async fn an_unreadable_record_of_a_first_sync_is_reported_and_the_rest_are_stored() {
    for backend in backends() {
        let garbling = Garbling::default();
        garbling.set(Changes {
            unreadable: vec![(3, true)],
            deleted: Vec::new(),
        });
        let app = spawn(backend, &garbling).await;
        let company_id = new_company(&app, "Acme").await;
        sandbox_connection(&app, company_id, 40, 2).await;
        let operation = resync(&app, company_id).await;
        assert_eq!(operation.status, PullStatus::Complete, "{operation:?}");
        assert_eq!(operation.issues.len(), 1);
        assert_eq!(invoices(&app, company_id).await.len(), 39);
    }
}

#[tokio::test]
async fn a_whole_page_unreadable_fails_the_sync_and_keeps_the_previous_data() {
    for backend in backends() {
        let garbling = Garbling::default();
        let app = spawn(backend, &garbling).await;
        let company_id = new_company(&app, "Acme").await;
        sandbox_connection(&app, company_id, 1500, 5).await;
        resync(&app, company_id).await;
        let before = invoices(&app, company_id).await;

        // Every invoice of the second page (1,000 to 1,499).
        garbling.set(Changes {
            unreadable: (1000..1500).map(|index| (index, true)).collect(),
            deleted: Vec::new(),
        });
        let operation = resync(&app, company_id).await;
        assert_eq!(operation.status, PullStatus::Failed, "{operation:?}");
        let message = operation.error_message.clone().unwrap_or_default();
        assert!(
            message
                .starts_with("None of the 500 records of a page could be read (the first: record ")
                && message.contains(", Total: invalid type: string, expected a decimal number)")
                && message.ends_with("so the sync stopped and the previous data is kept."),
            "{message}"
        );
        assert_eq!(operation.issues.len(), 20, "the first 20 are named");
        assert_eq!(
            latest_invoices_operation(&app, company_id).await["issuesNotShown"],
            480
        );
        assert_eq!(invoices(&app, company_id).await, before);
    }
}

#[tokio::test]
async fn more_than_one_percent_unreadable_fails_and_flags_nothing_deleted() {
    for backend in backends() {
        let garbling = Garbling::default();
        let app = spawn(backend, &garbling).await;
        let company_id = new_company(&app, "Acme").await;
        sandbox_connection(&app, company_id, 200, 9).await;
        resync(&app, company_id).await;
        let before = invoices(&app, company_id).await;

        // Two of 200 is 1%: kept.
        garbling.set(Changes {
            unreadable: vec![(10, true), (150, true)],
            deleted: Vec::new(),
        });
        let operation = resync(&app, company_id).await;
        assert_eq!(operation.status, PullStatus::Complete, "{operation:?}");
        assert_eq!(invoices(&app, company_id).await, before);

        // Three is more.
        garbling.set(Changes {
            unreadable: vec![(10, true), (11, true), (150, true)],
            deleted: Vec::new(),
        });
        let operation = resync(&app, company_id).await;
        assert_eq!(operation.status, PullStatus::Failed, "{operation:?}");
        let message = operation.error_message.clone().unwrap_or_default();
        assert!(
            message.starts_with("3 of the 200 records could not be read, more than 1%"),
            "{message}"
        );
        assert_eq!(invoices(&app, company_id).await, before);
    }
}

#[tokio::test]
async fn an_unreadable_record_without_an_id_flags_nothing_deleted_that_sync() {
    for backend in backends() {
        let garbling = Garbling::default();
        let app = spawn(backend, &garbling).await;
        let company_id = new_company(&app, "Acme").await;
        sandbox_connection(&app, company_id, 300, 4).await;
        resync(&app, company_id).await;

        // Invoice 20 cannot be read nor named; 30 was deleted at the platform.
        garbling.set(Changes {
            unreadable: vec![(20, false)],
            deleted: vec![30],
        });
        let operation = resync(&app, company_id).await;
        assert_eq!(operation.status, PullStatus::Complete, "{operation:?}");
        assert_eq!(operation.issues[0].record_id, None);
        let after = invoices(&app, company_id).await;
        let flagged = after
            .iter()
            .filter(|invoice| invoice["isDeleted"] == true)
            .count();
        assert_eq!(flagged, 0, "the unnamed record may be the missing one");
        // Every missing record keeps its copy: the unnamed one is one of them.
        assert_eq!(after.len(), 300);

        // The next clean sync finds the deletion.
        garbling.set(Changes {
            unreadable: Vec::new(),
            deleted: vec![30],
        });
        assert_eq!(resync(&app, company_id).await.status, PullStatus::Complete);
        let flagged: Vec<Value> = invoices(&app, company_id)
            .await
            .into_iter()
            .filter(|invoice| invoice["isDeleted"] == true)
            .collect();
        assert_eq!(flagged.len(), 1);
    }
}
