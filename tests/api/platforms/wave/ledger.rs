//! Wave's chart and settings: accounts over two pages and an archived half
//! (every account type a classification, balances as Wave gives them),
//! vendors as suppliers over two pages, products as items (one price, the
//! sale price unless only bought; a default tax when there is one), sales
//! taxes as tax rates (fractions become percentages), the business as
//! company info; every `accountRef` names an account of the connection; a
//! resync asks for what changed (`modifiedAtAfter`); a scope the consent
//! lacks fails only its data type; what Wave lacks answers `NotSupported`.

use serde_json::{Value, json};

use client::types::{ConnectionStatus, FetchMode, PullStatus, QueueDataTypeDataType};

use super::super::ledger_reads::{columns, records, refs_name_accounts, synced};
use super::super::scenarios::changes::{Changed, PLATFORM_DATE, changes_scenario};
use super::super::{fake::Answer, latest, options_for, sync};
use super::{BUSINESS, CASE, connected, connection_status, fake, graphql};
use crate::helpers::{TestApp, backends};

/// The `(page, isArchived)` of each call of Wave's query `name`, in order,
/// from `calls` on.
fn asked(fake: &super::Fake, name: &str, from: usize) -> Vec<(u64, Value, Value)> {
    fake.calls()[from..]
        .iter()
        .map(graphql)
        .filter(|(query, _)| query.contains(&format!("query {name}(")))
        .map(|(_, variables)| {
            (
                variables["page"].as_u64().unwrap_or_default(),
                variables["isArchived"].clone(),
                variables["modifiedAtAfter"].clone(),
            )
        })
        .collect()
}

/// The chart over its two unarchived pages and its archived one, in
/// nominal-code order (an account without a code last): each of Wave's
/// five account types its classification, the subtype as the account's
/// type, bank and card subtypes bank accounts, the balance in the
/// account's currency; vendors over two pages; products with their sides;
/// sales taxes as percentages; the business. Every `accountRef` of items
/// and invoice lines names an account, every `taxRateRef` a tax rate.
#[tokio::test]
async fn the_chart_vendors_products_sales_taxes_and_business_sync() {
    for backend in backends() {
        let fake = fake().await;
        let app = TestApp::spawn_with(backend, options_for(&fake, None, 1)).await;
        let (company_id, _) = connected(&app, 1800).await;
        synced(
            &app,
            company_id,
            &[
                QueueDataTypeDataType::Accounts,
                QueueDataTypeDataType::Suppliers,
                QueueDataTypeDataType::TaxRates,
                QueueDataTypeDataType::Items,
                QueueDataTypeDataType::CompanyInfo,
                QueueDataTypeDataType::Invoices,
            ],
        )
        .await;

        let accounts = records(&app, company_id, "accounts").await;
        assert_eq!(
            columns(
                &accounts,
                &[
                    "/nominalCode",
                    "/accountName",
                    "/classification",
                    "/accountType",
                    "/isBankAccount",
                    "/status",
                    "/currency",
                    "/currentBalance",
                ]
            ),
            [
                [
                    "1000",
                    "Chequing Account",
                    "Asset",
                    "CASH_AND_BANK",
                    "true",
                    "Active",
                    "CAD",
                    "5230.75"
                ],
                [
                    "1010",
                    "US Dollar Account",
                    "Asset",
                    "CASH_AND_BANK",
                    "true",
                    "Active",
                    "USD",
                    "900.00"
                ],
                [
                    "1200",
                    "Accounts Receivable",
                    "Asset",
                    "RECEIVABLE_INVOICES",
                    "false",
                    "Active",
                    "CAD",
                    "1434.55"
                ],
                [
                    "2000",
                    "Accounts Payable",
                    "Liability",
                    "PAYABLE_BILLS",
                    "false",
                    "Active",
                    "CAD",
                    "310.00"
                ],
                [
                    "2100",
                    "Visa Business",
                    "Liability",
                    "CREDIT_CARD",
                    "true",
                    "Active",
                    "CAD",
                    "845.20"
                ],
                [
                    "2200",
                    "HST Payable",
                    "Liability",
                    "SALES_TAX",
                    "false",
                    "Active",
                    "CAD",
                    "142.03"
                ],
                [
                    "3000",
                    "Owner Investment / Drawings",
                    "Equity",
                    "NON_RETAINED_EARNINGS",
                    "false",
                    "Active",
                    "CAD",
                    "10000.00"
                ],
                [
                    "4000", "Sales", "Income", "INCOME", "false", "Active", "CAD", "12500.00"
                ],
                [
                    "5000",
                    "Cost of Goods Sold",
                    "Expense",
                    "COST_OF_GOODS_SOLD",
                    "false",
                    "Active",
                    "CAD",
                    "2300.40"
                ],
                [
                    "5100",
                    "Office Supplies",
                    "Expense",
                    "EXPENSE",
                    "false",
                    "Active",
                    "CAD",
                    "415.60"
                ],
                [
                    "5900",
                    "Old Advertising",
                    "Expense",
                    "EXPENSE",
                    "false",
                    "Archived",
                    "CAD",
                    "0.00"
                ],
                [
                    "-",
                    "Uncategorized Income",
                    "Income",
                    "UNCATEGORIZED_INCOME",
                    "false",
                    "Active",
                    "CAD",
                    "-"
                ],
            ]
        );
        assert_eq!(accounts[0]["description"], "Main operating account");
        assert_eq!(
            accounts[0]["sourceModifiedDate"],
            Value::Null,
            "Wave gives none"
        );
        assert_eq!(
            asked(&fake, "WaveAccounts", 0),
            [
                (1, json!(false), Value::Null),
                (2, json!(false), Value::Null),
                (1, json!(true), Value::Null)
            ],
            "the unarchived pages, then the archived"
        );

        let suppliers = records(&app, company_id, "suppliers").await;
        assert_eq!(
            columns(
                &suppliers,
                &[
                    "/supplierName",
                    "/emailAddress",
                    "/phone",
                    "/defaultCurrency",
                    "/status"
                ]
            ),
            [
                ["Atlantic Courier", "-", "+1 902 555 0199", "-", "Active"],
                [
                    "Maritime Paper Co.",
                    "orders@maritimepaper.example",
                    "+1 902 555 0142",
                    "CAD",
                    "Active"
                ],
                [
                    "Old Print Shop",
                    "hello@oldprint.example",
                    "-",
                    "USD",
                    "Archived"
                ],
            ]
        );
        assert_eq!(
            suppliers[1]["sourceModifiedDate"],
            "2026-06-01T09:00:00.000000Z"
        );
        assert_eq!(
            asked(&fake, "WaveVendors", 0),
            [(1, Value::Null, Value::Null), (2, Value::Null, Value::Null)]
        );

        let rates = records(&app, company_id, "taxRates").await;
        assert_eq!(
            columns(
                &rates,
                &[
                    "/name",
                    "/code",
                    "/effectiveTaxRate",
                    "/components/0/rate",
                    "/components/0/isCompound",
                    "/status"
                ]
            ),
            [
                ["Eco fee", "ECO", "0.5", "0.5", "true", "Active"],
                ["GST (before 2025)", "GST", "5", "5", "false", "Archived"],
                ["HST", "HST", "13", "13", "false", "Active"],
                [
                    "Quebec Sales Tax",
                    "QST",
                    "9.975",
                    "9.975",
                    "false",
                    "Active"
                ],
            ]
        );

        let items = records(&app, company_id, "items").await;
        assert_eq!(
            columns(
                &items,
                &[
                    "/name",
                    "/code",
                    "/type",
                    "/status",
                    "/sales/unitPrice",
                    "/sales/accountRef/name",
                    "/sales/taxRateRef/name",
                    "/purchases/unitPrice",
                    "/purchases/accountRef/name",
                    "/quantityOnHand"
                ]
            ),
            [
                [
                    "Branded mug",
                    "-",
                    "Unknown",
                    "Archived",
                    "12.00",
                    "Sales",
                    "-",
                    "-",
                    "-",
                    "-"
                ],
                [
                    "Consulting",
                    "-",
                    "Unknown",
                    "Active",
                    "125.00",
                    "Sales",
                    "HST",
                    "-",
                    "-",
                    "-"
                ],
                [
                    "Gift basket",
                    "-",
                    "Unknown",
                    "Active",
                    "45.00",
                    "Sales",
                    "-",
                    "-",
                    "-",
                    "-"
                ],
                [
                    "Printer paper",
                    "-",
                    "Unknown",
                    "Active",
                    "-",
                    "-",
                    "-",
                    "8.49",
                    "Office Supplies",
                    "-"
                ],
                [
                    "Widgets",
                    "-",
                    "Unknown",
                    "Active",
                    "2.0625",
                    "Sales",
                    "HST",
                    "-",
                    "Cost of Goods Sold",
                    "-"
                ],
            ]
        );
        assert_eq!(items[1]["sales"]["description"], "Consulting, by the hour");
        assert_eq!(
            asked(&fake, "WaveProducts", 0),
            [
                (1, json!(false), Value::Null),
                (1, json!(true), Value::Null)
            ]
        );
        assert_eq!(
            asked(&fake, "WaveSalesTaxes", 0),
            [
                (1, json!(false), Value::Null),
                (1, json!(true), Value::Null)
            ]
        );

        for side in ["/sales", "/purchases"] {
            let sides: Vec<Value> = items
                .iter()
                .filter_map(|item| item.pointer(side).cloned())
                .filter(|side| !side.is_null())
                .collect();
            assert!(
                sides.iter().all(|side| !side["accountRef"].is_null()),
                "{sides:?}"
            );
            refs_name_accounts(&accounts, &sides, "");
            for side in &sides {
                let rate = &side["taxRateRef"];
                assert!(
                    rate.is_null() || rates.iter().any(|r| r["taxRateId"] == rate["id"]),
                    "{side}"
                );
            }
        }
        let invoices = records(&app, company_id, "invoices").await;
        refs_name_accounts(&accounts, &invoices, "lineItems");
        let posted = invoices
            .iter()
            .flat_map(|invoice| invoice["lineItems"].as_array().cloned().unwrap_or_default())
            .filter(|line| line["accountRef"]["name"] == "Sales")
            .count();
        assert_eq!(posted, 2, "each line names the account it posts to");

        let company = records(&app, company_id, "companyInfo").await;
        assert_eq!(company.len(), 1);
        let company = &company[0];
        assert_eq!(company["companyInfoId"], BUSINESS);
        assert_eq!(company["companyName"], "Maritime Supplies");
        assert_eq!(company["baseCurrency"], "CAD");
        assert_eq!(
            company["phone"], "+1 902 555 0110",
            "the mobile, without a phone"
        );
        assert_eq!(company["website"], "https://maritimesupplies.example");
        assert_eq!(company["createdDate"], "2019-04-02T14:00:00.000000Z");
        for missing in [
            "legalName",
            "registrationNumber",
            "taxNumber",
            "financialYearStart",
        ] {
            assert_eq!(company[missing], Value::Null, "Wave has no {missing}");
        }
        assert_eq!(
            company["addresses"],
            json!([{
                "type": "Street",
                "line1": "1 Water Street",
                "line2": "Suite 200",
                "city": "Halifax",
                "region": "Nova Scotia",
                "postalCode": "B3J 1A1",
                "country": "Canada"
            }])
        );
    }
}

/// After a first sync, products and sales taxes are asked for what changed
/// since Wave's own time less five minutes, in both halves: the changed
/// product's new price is stored, every other record kept.
#[tokio::test]
async fn a_resync_asks_for_products_and_sales_taxes_modified_after_the_first() {
    for backend in backends() {
        let fake = fake().await;
        fake.with(|inner| inner.date = Some(PLATFORM_DATE.to_owned()));
        let app = TestApp::spawn_with(backend, options_for(&fake, None, 1)).await;
        let (company_id, _) = connected(&app, 1800).await;
        for (data_type, name, query) in [
            (QueueDataTypeDataType::Items, "items", "WaveProducts"),
            (
                QueueDataTypeDataType::TaxRates,
                "taxRates",
                "WaveSalesTaxes",
            ),
        ] {
            let first = latest(&sync(&app, company_id, data_type).await, name);
            assert_eq!(first.status, PullStatus::Complete, "{first:?}");
            assert_eq!(first.fetch_mode, Some(FetchMode::Full));
            let before = records(&app, company_id, name).await;
            let from = fake.calls().len();
            let second = latest(&sync(&app, company_id, data_type).await, name);
            assert_eq!(second.status, PullStatus::Complete, "{second:?}");
            assert_eq!(second.fetch_mode, Some(FetchMode::Incremental), "{name}");
            let since = json!("2026-11-27T08:55:00Z");
            assert_eq!(
                asked(&fake, query, from),
                [(1, json!(false), since.clone()), (1, json!(true), since)],
                "{name}"
            );
            let after = records(&app, company_id, name).await;
            assert_eq!(after.len(), before.len(), "{name}");
            let changed: Vec<&Value> = after
                .iter()
                .filter(|record| !before.contains(record))
                .collect();
            if name == "items" {
                assert_eq!(changed.len(), 1, "{changed:?}");
                assert_eq!(changed[0]["name"], "Widgets");
                assert_eq!(changed[0]["sales"]["unitPrice"], "2.25");
            } else {
                assert!(changed.is_empty(), "{changed:?}");
            }
        }
    }
}

/// A consent without `vendor:read` (Wave's `FORBIDDEN` in a 200 answer)
/// fails the suppliers alone; the connection stays linked and syncs the
/// rest.
#[tokio::test]
async fn a_scope_the_consent_lacks_fails_only_its_data_type() {
    for backend in backends() {
        let fake = fake().await;
        let app = TestApp::spawn_with(backend, options_for(&fake, None, 1)).await;
        let (company_id, connection_id) = connected(&app, 1800).await;
        fake.with(|inner| {
            inner.scripted.push_back(Answer::json(
                200,
                r#"{"data":{"business":null},"errors":[{"message":"Missing scope vendor:read.","extensions":{"code":"FORBIDDEN","id":"e9"}}]}"#,
            ))
        });
        let operation = latest(
            &sync(&app, company_id, QueueDataTypeDataType::Suppliers).await,
            "suppliers",
        );
        assert_eq!(
            operation.status,
            PullStatus::PermissionsError,
            "{operation:?}"
        );
        let message = operation.error_message.unwrap_or_default();
        assert!(
            message.contains("Missing scope vendor:read. (FORBIDDEN, error id e9)"),
            "{message}"
        );
        assert_eq!(
            connection_status(&app, company_id, connection_id).await,
            ConnectionStatus::Linked
        );
        synced(&app, company_id, &[QueueDataTypeDataType::Accounts]).await;
    }
}

/// Wave's public API has no bills, payments, bill payments, credit notes or
/// journals: after a sync, each answers `NotSupported` without a call.
#[tokio::test]
async fn what_waves_api_lacks_answers_not_supported_without_a_call() {
    for backend in backends() {
        let fake = fake().await;
        let app = TestApp::spawn_with(backend, options_for(&fake, None, 1)).await;
        let (company_id, _) = connected(&app, 1800).await;
        synced(&app, company_id, &[QueueDataTypeDataType::Accounts]).await;
        let before = fake.calls().len();
        for data_type in [
            QueueDataTypeDataType::Bills,
            QueueDataTypeDataType::Payments,
            QueueDataTypeDataType::BillPayments,
            QueueDataTypeDataType::CreditNotes,
            QueueDataTypeDataType::JournalEntries,
        ] {
            let operations = sync(&app, company_id, data_type).await;
            let operation = latest(&operations, &data_type.to_string());
            assert_eq!(operation.status, PullStatus::NotSupported, "{data_type}");
        }
        assert_eq!(fake.calls().len(), before, "refused without a call");
    }
}

/// Wave asked for the vendors modified after the first sync began, in the
/// shared scenario (`scenarios::changes`): one changed, one new.
static CHANGES: Changed = Changed {
    data_type: "suppliers",
    fake: || Box::pin(fake()),
    filter: |call| {
        graphql(call).1["modifiedAtAfter"]
            .as_str()
            .map(str::to_owned)
    },
    since: "2026-11-27T08:55:00Z",
    calls: 1,
    changed: 1,
    added: 1,
    quiet: |_| {
        Answer::json(
            200,
            r#"{"data":{"business":{"id":"QnVzaW5lc3M6NzE1MjQ3NjEtZjYxMS00ODk0LWE3NDgtNzg3MmYwODgyNWIw","vendors":{"pageInfo":{"currentPage":1,"totalPages":0,"totalCount":0},"edges":[]}}}}"#,
        )
    },
    quiet_calls: 1,
};

changes_scenario!(CASE, CHANGES);
