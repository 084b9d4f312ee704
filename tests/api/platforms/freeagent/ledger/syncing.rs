//! How FreeAgent's ledger syncs beyond the records: a 403 below a data
//! type's access level fails that data type alone, journal entries are
//! refused without a call, and resyncs of bills and payments ask only for
//! what changed (`updated_since`).

use serde_json::json;

use client::types::QueueDataTypeDataType;

use super::super::super::fake::{Answer, Call, Fake, Scheme, fixture};
use super::super::super::ledger_reads::{records, refused_but_linked, synced};
use super::super::super::options_for;
use super::super::super::scenarios::changes::{Changed, PLATFORM_DATE, changes_scenario};
use super::super::{ACCESS, CASE, REFRESH, connected, fake, router};
use crate::helpers::{TestApp, backends, json};

/// A user whose access level does not reach bills gets a 403 for them:
/// bills fail `PermissionsError` with FreeAgent's words, the connection
/// stays linked, and the other data types still sync.
#[tokio::test]
async fn a_forbidden_data_type_fails_alone_and_the_connection_stays_linked() {
    for backend in backends() {
        let fake = fake().await;
        let app = TestApp::spawn_with(backend, options_for(&fake, None, 1)).await;
        let (company_id, connection_id) = connected(&app, 3600).await;
        fake.with(|inner| {
            inner.scripted.push_back(Answer::json(
                403,
                r#"{"errors":{"error":{"message":"Access to this resource is forbidden for this user's permission level"}}}"#,
            ));
        });
        refused_but_linked(
            &app,
            (company_id, connection_id),
            QueueDataTypeDataType::Bills,
            "permission level",
        )
        .await;
        synced(
            &app,
            company_id,
            &[
                QueueDataTypeDataType::Suppliers,
                QueueDataTypeDataType::Bills,
            ],
        )
        .await;
        assert_eq!(fake.token_calls(), 0, "a 403 is not a reason to refresh");
    }
}

/// FreeAgent's integration names what it syncs, and which of those ask
/// only for what changed; journal entries are not among them (`NOTES.md`
/// says why): queued, they answer `NotSupported` without a call.
#[tokio::test]
async fn freeagent_names_what_it_syncs_and_refuses_journal_entries_without_a_call() {
    for backend in backends() {
        let fake = fake().await;
        let app = TestApp::spawn_with(backend, options_for(&fake, None, 1)).await;
        let (company_id, _) = connected(&app, 3600).await;
        let before = fake.calls().len();
        let queued = json(
            app.post_json(
                &format!("/companies/{company_id}/data/queue/journalEntries"),
                &json!(null),
            )
            .await,
        )
        .await;
        assert_eq!(queued[0]["status"], "NotSupported", "{queued}");
        assert_eq!(fake.calls().len(), before, "refused without a call");

        let integration = json(app.get("/integrations/freeagent").await).await;
        assert_eq!(
            integration["incrementalDataTypes"],
            json!([
                "invoices",
                "customers",
                "suppliers",
                "bills",
                "payments",
                "billPayments",
                "creditNotes"
            ])
        );
        let data_types = integration["dataTypes"]
            .as_array()
            .cloned()
            .unwrap_or_default();
        assert_eq!(data_types.len(), 11, "{integration}");
        assert!(!data_types.contains(&json!("journalEntries")));
    }
}

/// A resync of payments asks each bank account's explanations only for
/// what changed since FreeAgent's time when the first sync began, less the
/// five minutes' overlap.
#[tokio::test]
async fn a_payments_resync_asks_every_bank_account_for_what_changed() {
    for backend in backends() {
        let fake = fake().await;
        fake.with(|inner| inner.date = Some(PLATFORM_DATE.to_owned()));
        let app = TestApp::spawn_with(backend, options_for(&fake, None, 1)).await;
        let (company_id, _) = connected(&app, 3600).await;
        synced(&app, company_id, &[QueueDataTypeDataType::Payments]).await;
        let first = fake.calls().len();
        synced(&app, company_id, &[QueueDataTypeDataType::Payments]).await;
        let resync: Vec<Call> = fake.calls().into_iter().skip(first).collect();
        let explained: Vec<&Call> = resync
            .iter()
            .filter(|call| call.path == "/v2/bank_transaction_explanations")
            .collect();
        assert_eq!(explained.len(), 3, "{resync:#?}");
        assert!(explained.iter().all(|call| {
            call.query.get("updated_since").map(String::as_str) == Some("2026-11-27T08:55:00.000Z")
        }));
        assert!(
            resync
                .iter()
                .filter(|call| call.path == "/v2/bank_accounts")
                .all(|call| !call.query.contains_key("updated_since"))
        );
        assert_eq!(records(&app, company_id, "payments").await.len(), 6);
    }
}

/// FreeAgent as it answers `updated_since` for bills: one bill part paid
/// since the first sync and one new, on one page.
async fn fake_with_bill_changes() -> Fake {
    let whole = router();
    Fake::start(
        "freeagent",
        Scheme::Bearer,
        ACCESS,
        REFRESH,
        fixture("freeagent/fixtures/unauthorized.json"),
        std::sync::Arc::new(move |call: &Call| {
            if call.path == "/v2/bills" && call.query.contains_key("updated_since") {
                Answer::json(200, fixture("freeagent/fixtures/ledger/bills-changed.json"))
            } else {
                whole(call)
            }
        }),
    )
    .await
}

/// Bills asked for what changed, in the shared scenario (`scenarios::changes`).
static BILL_CHANGES: Changed = Changed {
    data_type: "bills",
    fake: || Box::pin(fake_with_bill_changes()),
    filter: |call| call.query.get("updated_since").cloned(),
    since: "2026-11-27T08:55:00.000Z",
    calls: 1,
    changed: 1,
    added: 1,
    quiet: |_| Answer::json(200, r#"{"bills":[]}"#),
    quiet_calls: 1,
};

changes_scenario!(CASE, BILL_CHANGES);
