//! FreshBooks' chart of accounts: the business's uuid from `/users/me`,
//! then one chart of accounts report with `use_ledger_entries=true`; every
//! account and sub-account once (a parent that takes postings, Cash and
//! Office Expenses here, repeats as its own "(general)" sub-account with
//! the same uuid), each `account_type`, inactive accounts archived; a 403
//! for the report fails accounts only and leaves the connection linked.
//!
//! The fixture (`fixtures/ledger/chart_of_accounts.json`) follows the
//! response of https://freshbooks.com/api/chart-of-accounts-report (its
//! Cash, "Cash (general)", Petty Cash and Accounts Receivable are that
//! example's, `currency_code` null as there) and the field list of
//! https://freshbooks.com/api/chart-of-accounts (`account_type` "asset,
//! liability, equity, income, expense", `state` "active, inactive"): tags
//! [B27] and [B41] of `src/platforms/freshbooks/NOTES.md`. The other
//! accounts, their `CAD`, and the sub-types other than "Cash & Bank" and
//! "Current Asset" are ours.

use std::sync::Arc;

use serde_json::Value;

use client::types::QueueDataTypeDataType;

use super::super::ledger_reads::{
    columns, records, refs_name_accounts, refused_but_linked, synced,
};
use super::super::options_for;
use super::{
    ACCESS, Answer, Call, Fake, REFRESH, Scheme, chart_path, connected, fake, fixture, router,
};
use crate::helpers::{TestApp, backends, json};

/// The uuid of Cash, which repeats as "Cash (general)".
const CASH: &str = "2a990740-40d6-4529-a604-be0d68cf9d90";

/// Every account once, by nominal code: the parents' "(general)" twins are
/// left out (the parent keeps its name), sub-accounts are accounts of their
/// own, inactive ones archived; the sub-type is the account type, "Cash &
/// Bank" a bank account; no balance (its sign is not confirmed), no
/// description. The report is asked once, for the connection's business,
/// with `use_ledger_entries=true`, after `/users/me`. No FreshBooks record
/// names an account (bills name expense categories), and none names one
/// that is not in the chart.
#[tokio::test]
async fn freshbooks_accounts_sync_from_the_chart_of_accounts_report() {
    for backend in backends() {
        let fake = fake().await;
        let app = TestApp::spawn_with(backend, options_for(&fake, None, 1)).await;
        let (company_id, _) = connected(&app, 43_200).await;
        let before = fake.calls().len();
        synced(&app, company_id, &[QueueDataTypeDataType::Accounts]).await;

        let accounts = records(&app, company_id, "accounts").await;
        assert_eq!(
            columns(
                &accounts,
                &[
                    "/nominalCode",
                    "/accountName",
                    "/classification",
                    "/accountType",
                    "/status",
                    "/currency",
                    "/isBankAccount",
                    "/currentBalance",
                    "/description",
                    "/sourceModifiedDate"
                ]
            ),
            [
                [
                    "1000",
                    "Cash",
                    "Asset",
                    "Cash & Bank",
                    "Active",
                    "-",
                    "true",
                    "-",
                    "-",
                    "-"
                ],
                [
                    "1000-1",
                    "Petty Cash",
                    "Asset",
                    "Cash & Bank",
                    "Active",
                    "-",
                    "true",
                    "-",
                    "-",
                    "-"
                ],
                [
                    "1200",
                    "Accounts Receivable",
                    "Asset",
                    "Current Asset",
                    "Active",
                    "-",
                    "false",
                    "-",
                    "-",
                    "-"
                ],
                [
                    "2000",
                    "Accounts Payable",
                    "Liability",
                    "Current Liability",
                    "Active",
                    "CAD",
                    "false",
                    "-",
                    "-",
                    "-"
                ],
                [
                    "2700",
                    "Shareholder Loan",
                    "Liability",
                    "Long Term Liability",
                    "Archived",
                    "CAD",
                    "false",
                    "-",
                    "-",
                    "-"
                ],
                [
                    "3000",
                    "Owner's Equity",
                    "Equity",
                    "Owner's Equity",
                    "Active",
                    "CAD",
                    "false",
                    "-",
                    "-",
                    "-"
                ],
                [
                    "4000", "Sales", "Income", "Income", "Active", "CAD", "false", "-", "-", "-"
                ],
                [
                    "6000",
                    "Office Expenses",
                    "Expense",
                    "Operating Expense",
                    "Active",
                    "CAD",
                    "false",
                    "-",
                    "-",
                    "-"
                ],
                [
                    "6000-1",
                    "Office Supplies",
                    "Expense",
                    "Operating Expense",
                    "Active",
                    "CAD",
                    "false",
                    "-",
                    "-",
                    "-"
                ],
                [
                    "6000-2",
                    "Postage",
                    "Expense",
                    "Operating Expense",
                    "Archived",
                    "CAD",
                    "false",
                    "-",
                    "-",
                    "-"
                ],
            ]
        );
        let cash: Vec<&Value> = accounts
            .iter()
            .filter(|account| account["accountId"] == CASH)
            .collect();
        assert_eq!(cash.len(), 1, "Cash and Cash (general) are one account");
        let expenses = json(
            app.get(&format!(
                "/companies/{company_id}/data/accounts?classification=Expense&pageSize=100"
            ))
            .await,
        )
        .await;
        assert_eq!(
            columns(
                expenses["results"].as_array().expect("results"),
                &["/nominalCode"]
            ),
            [["6000"], ["6000-1"], ["6000-2"]]
        );

        let calls: Vec<Call> = fake.calls().split_off(before);
        let paths: Vec<&str> = calls.iter().map(|call| call.path.as_str()).collect();
        assert_eq!(paths, ["/auth/api/v1/users/me", chart_path().as_str()]);
        assert_eq!(
            calls[1].query.get("use_ledger_entries").map(String::as_str),
            Some("true")
        );

        synced(
            &app,
            company_id,
            &[
                QueueDataTypeDataType::Invoices,
                QueueDataTypeDataType::Bills,
                QueueDataTypeDataType::Payments,
                QueueDataTypeDataType::BillPayments,
                QueueDataTypeDataType::Items,
            ],
        )
        .await;
        let mut referring = 0;
        for (data_type, lines) in [
            ("invoices", "lineItems"),
            ("bills", "lineItems"),
            ("payments", ""),
            ("billPayments", ""),
        ] {
            let documents = records(&app, company_id, data_type).await;
            assert!(!documents.is_empty(), "{data_type}");
            refs_name_accounts(&accounts, &documents, lines);
            referring += documents
                .iter()
                .flat_map(|document| match document[lines].as_array() {
                    Some(lines) if !lines.is_empty() => lines.clone(),
                    _ => vec![document.clone()],
                })
                .filter(|line| !line["accountRef"].is_null())
                .count();
        }
        let sides: Vec<Value> = records(&app, company_id, "items")
            .await
            .iter()
            .flat_map(|item| [item["sales"].clone(), item["purchases"].clone()])
            .filter(|side| !side.is_null())
            .collect();
        assert!(!sides.is_empty());
        refs_name_accounts(&accounts, &sides, "");
        referring += sides
            .iter()
            .filter(|side| !side["accountRef"].is_null())
            .count();
        assert_eq!(referring, 0, "FreshBooks names no account on its records");
    }
}

/// The FreshBooks fake, but the chart of accounts report answers 403, as
/// for a consent without `user:account:read`.
async fn fake_without_the_account_scope() -> Fake {
    let whole = router();
    let fake = Fake::start(
        "freshbooks",
        Scheme::Bearer,
        ACCESS,
        REFRESH,
        fixture("freshbooks/fixtures/unauthorized.json"),
        Arc::new(move |call: &Call| {
            if call.path == chart_path() {
                Answer::json(
                    403,
                    r#"{"error":"insufficient_scope","error_description":"The access token does not have the user:account:read scope."}"#,
                )
            } else {
                whole(call)
            }
        }),
    )
    .await;
    fake.with(|inner| inner.client_in_body = true);
    fake
}

/// A token whose consent lacks `user:account:read` gets a 403 for the
/// chart of accounts report: accounts fail `PermissionsError`, the
/// connection stays linked, the token is not refreshed, and company info,
/// read from the same `/users/me`, still syncs.
#[tokio::test]
async fn a_missing_account_scope_fails_accounts_only() {
    for backend in backends() {
        let fake = fake_without_the_account_scope().await;
        let app = TestApp::spawn_with(backend, options_for(&fake, None, 1)).await;
        let (company_id, connection_id) = connected(&app, 43_200).await;
        refused_but_linked(
            &app,
            (company_id, connection_id),
            QueueDataTypeDataType::Accounts,
            "user:account:read",
        )
        .await;
        assert!(
            fake.calls().iter().any(|call| call.path == chart_path()),
            "the report was asked"
        );
        assert!(records(&app, company_id, "accounts").await.is_empty());
        synced(&app, company_id, &[QueueDataTypeDataType::CompanyInfo]).await;
        assert_eq!(fake.token_calls(), 0, "a 403 is not a reason to refresh");
    }
}
