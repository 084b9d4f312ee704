//! `/companies/{companyId}/data/{orders,bankAccounts,bankTransactions,accounts}`:
//! the commerce and banking data types and the chart of accounts, synced
//! from the sandbox and read through the same envelope as invoices; and a
//! platform asked for a data type it does not have.

use std::collections::HashSet;

use serde_json::{Value, json};
use uuid::Uuid;

use tributary::data::bank_transactions::BankTransactionStatus;
use tributary::data::money::{Money, Quantity};
use tributary::data::orders::OrderStatus;
use tributary::platforms::sandbox::dataset::Dataset;

use crate::connections::{new_company, new_connection};
use crate::helpers::{TestApp, for_each_database, json, unpinned};
use crate::sync::{authorized_sandbox, settled};

const ORDERS: u64 = 730;
const TRANSACTIONS: u64 = 410;
const SEED: u64 = 5;

fn dataset() -> Dataset {
    Dataset {
        order_count: ORDERS,
        bank_transaction_count: TRANSACTIONS,
        ..Dataset::invoices_only(SEED, 20)
    }
}

/// A company with one sandbox connection of [`dataset`], synced.
async fn synced_company(app: &TestApp) -> (Uuid, Uuid) {
    let company_id = new_company(app, "Commerce and Banking Ltd").await;
    let connection_id = authorized_sandbox(
        app,
        company_id,
        json!({
            "organizationId": "sbx-shop",
            "accessToken": "tok",
            "invoiceCount": 20,
            "orderCount": ORDERS,
            "bankTransactionCount": TRANSACTIONS,
            "seed": SEED,
        }),
    )
    .await;
    let queued = json(
        app.post_json(&format!("/companies/{company_id}/data/all"), &json!(null))
            .await,
    )
    .await;
    let kinds: HashSet<&str> = queued
        .as_array()
        .expect("operations")
        .iter()
        .filter_map(|op| op["dataType"].as_str())
        .collect();
    assert_eq!(
        kinds,
        HashSet::from([
            "invoices",
            "customers",
            "orders",
            "bankAccounts",
            "bankTransactions",
            "accounts",
            "suppliers",
            "taxRates",
            "bills",
            "payments",
            "billPayments",
            "creditNotes",
            "items",
            "companyInfo",
            "journalEntries"
        ])
    );
    let done = settled(&app.client, company_id).await;
    assert!(
        done.iter()
            .all(|op| op.status == client::types::PullStatus::Complete),
        "{done:?}"
    );
    (company_id, connection_id)
}

/// Every record of a list, following `_links.next` from `path`.
pub(crate) async fn walk(app: &TestApp, path: &str) -> Vec<Value> {
    let mut records = Vec::new();
    let mut next = Some(path.to_owned());
    while let Some(path) = next {
        let body = json(app.get(&path).await).await;
        records.extend(body["results"].as_array().expect("results").iter().cloned());
        next = body["_links"]["next"]["href"].as_str().map(str::to_owned);
    }
    records
}

/// The chart of accounts: in code order, every classification, one
/// archived account, a classification filter with exact totals, single
/// records (another client's company is a 404), and the consistency a
/// ledger owes: the debit-natured balances (assets, expenses) total the
/// credit-natured ones (liabilities, equity, income).
#[tokio::test]
async fn the_chart_of_accounts_syncs_in_code_order_and_its_trial_balance_balances() {
    for_each_database(async |app| {
        let (company_id, connection_id) = synced_company(app).await;
        let path = format!("/companies/{company_id}/data/accounts");
        let page = json(app.get(&path).await).await;
        let accounts = page["results"].as_array().expect("results").clone();
        assert_eq!(page["totalResults"], accounts.len());
        assert_eq!(accounts.len(), 21);
        let codes: Vec<&str> = accounts
            .iter()
            .map(|account| account["nominalCode"].as_str().expect("a code"))
            .collect();
        let mut sorted = codes.clone();
        sorted.sort();
        assert_eq!(codes, sorted, "in code order");
        assert_eq!(codes[0], "1000");

        let (mut debits, mut credits) = (Money(0), Money(0));
        for account in &accounts {
            let balance: Money =
                serde_json::from_value(account["currentBalance"].clone()).expect("a balance");
            match account["classification"]
                .as_str()
                .expect("a classification")
            {
                "Asset" | "Expense" => debits = debits + balance,
                "Liability" | "Equity" | "Income" => credits = credits + balance,
                other => panic!("unexpected classification {other}"),
            }
            assert_eq!(account["connectionId"], connection_id.to_string());
        }
        assert_eq!(debits, credits, "the trial balance balances");

        let archived: Vec<&Value> = accounts
            .iter()
            .filter(|account| account["status"] == "Archived")
            .collect();
        assert_eq!(archived.len(), 1);
        assert_eq!(archived[0]["currentBalance"], "0.00");
        let banks = accounts
            .iter()
            .filter(|account| account["isBankAccount"] == true)
            .count();
        assert_eq!(banks, 3);

        for (classification, count) in [
            ("asset", 5),
            ("LIABILITY", 4),
            ("Equity", 2),
            ("income", 3),
            ("expense", 7),
            ("unknown", 0),
        ] {
            let filtered = json(
                app.get(&format!("{path}?classification={classification}"))
                    .await,
            )
            .await;
            assert_eq!(
                filtered["totalResults"], count,
                "{classification}: {filtered}"
            );
        }
        let refused = app.get(&format!("{path}?classification=revenue")).await;
        assert_eq!(refused.status(), 400);
        let problem = json(refused).await;
        assert!(
            problem["error"].to_string().contains("classification")
                || problem["validation"].to_string().contains("classification"),
            "{problem}"
        );

        let one = json(app.get(&format!("{path}/sbx-gl-4000")).await).await;
        assert_eq!(one["accountName"], "Sales");
        assert_eq!(one["classification"], "Income");
        assert_eq!(app.get(&format!("{path}/sbx-gl-0000")).await.status(), 404);
        let (other_key, _) = app.other_tenant("Elsewhere").await;
        let theirs = app
            .raw()
            .get(app.url(&format!("{path}/sbx-gl-4000")))
            .header("authorization", crate::helpers::basic(&other_key))
            .send()
            .await
            .expect("answered");
        assert_eq!(theirs.status(), 404, "another client's company");
    })
    .await;
}

/// Tax rates from the sandbox: each effective rate the sum of its
/// components, exact, by name.
#[tokio::test]
async fn tax_rates_sync_with_exact_rates_that_sum_their_components() {
    for_each_database(async |app| {
        let (company_id, _) = synced_company(app).await;
        let page = json(
            app.get(&format!("/companies/{company_id}/data/taxRates"))
                .await,
        )
        .await;
        let rates = page["results"].as_array().expect("results");
        assert_eq!(rates.len(), 7);
        for rate in rates {
            let effective: Quantity =
                serde_json::from_value(rate["effectiveTaxRate"].clone()).expect("a rate");
            let sum: i64 = rate["components"]
                .as_array()
                .expect("components")
                .iter()
                .map(|component| {
                    serde_json::from_value::<Quantity>(component["rate"].clone())
                        .expect("a rate")
                        .0
                })
                .sum();
            assert_eq!(effective.0, sum, "{rate}");
        }
        let combined = rates
            .iter()
            .find(|rate| rate["code"] == "GSTQST")
            .expect("the two-component rate");
        assert_eq!(combined["effectiveTaxRate"], "14.975");
        let archived: Vec<&Value> = rates
            .iter()
            .filter(|rate| rate["status"] == "Archived")
            .collect();
        assert_eq!(archived.len(), 1);
    })
    .await;
}

/// Suppliers from the sandbox: every one the platform has, field by field,
/// by name.
#[tokio::test]
async fn suppliers_sync_by_name_as_the_platform_has_them() {
    for_each_database(async |app| {
        let (company_id, connection_id) = synced_company(app).await;
        let expected = dataset();
        let page = json(
            app.get(&format!("/companies/{company_id}/data/suppliers"))
                .await,
        )
        .await;
        assert_eq!(page["totalResults"], expected.supplier_count());
        let results = page["results"].as_array().expect("results");
        let names: Vec<&str> = results
            .iter()
            .map(|supplier| supplier["supplierName"].as_str().expect("a name"))
            .collect();
        let mut sorted = names.clone();
        sorted.sort();
        assert_eq!(names, sorted, "by name");
        let source = expected.supplier(0);
        let first = results
            .iter()
            .find(|supplier| supplier["supplierId"] == source.supplier_id.as_str())
            .expect("supplier 0");
        assert_eq!(first["supplierName"], source.supplier_name);
        assert_eq!(first["emailAddress"], json!(source.email_address));
        assert_eq!(first["defaultCurrency"], json!(source.default_currency));
        assert_eq!(first["status"], source.status.as_str());
        assert_eq!(first["connectionId"], connection_id.to_string());
    })
    .await;
}

#[tokio::test]
async fn orders_sync_and_page_newest_first_with_exact_totals_and_a_status_filter() {
    for_each_database(async |app| {
        let (company_id, connection_id) = synced_company(app).await;
        let expected = dataset();
        let path = format!("/companies/{company_id}/data/orders");

        let first = json(app.get(&path).await).await;
        assert_eq!(first["totalResults"], ORDERS);
        assert_eq!(first["pageNumber"], 1);
        assert_eq!(first["pageSize"], 100);
        assert_eq!(
            unpinned(first["_links"]["next"]["href"].as_str().expect("next")),
            format!("{path}?page=2&pageSize=100")
        );

        let all = walk(app, &format!("{path}?pageSize=64")).await;
        assert_eq!(all.len() as u64, ORDERS);
        let created: Vec<&str> = all
            .iter()
            .map(|order| order["createdDate"].as_str().expect("createdDate"))
            .collect();
        assert!(
            created.windows(2).all(|pair| pair[0] >= pair[1]),
            "newest first"
        );
        // One order, field by field, exactly as the platform had it.
        let order = all
            .iter()
            .find(|order| order["orderId"] == "sbx-ord-0000007")
            .expect("order 7");
        let source = expected.order(7);
        assert_eq!(order["connectionId"], connection_id.to_string());
        assert_eq!(order["orderNumber"], "#1008");
        assert_eq!(order["status"], source.status.as_str());
        assert_eq!(order["totalAmount"], json!(source.total_amount));
        assert_eq!(order["totalRefunded"], json!(source.total_refunded));
        assert_eq!(order["totalDiscount"], json!(source.total_discount));
        assert_eq!(
            order["lineItems"].as_array().expect("lines").len(),
            source.line_items.len()
        );
        assert!(order["modifiedDate"].is_string());

        for status in OrderStatus::ALL {
            let count = (0..ORDERS)
                .filter(|index| expected.order(*index).status == *status)
                .count();
            let lower = status.as_str().to_lowercase();
            let filtered = walk(app, &format!("{path}?status={lower}&pageSize=50")).await;
            assert_eq!(filtered.len(), count, "{status:?}");
            assert!(
                filtered
                    .iter()
                    .all(|order| order["status"] == status.as_str()),
                "{status:?}"
            );
            let page = json(app.get(&format!("{path}?status={lower}&pageSize=1")).await).await;
            assert_eq!(page["totalResults"], count, "{status:?}");
        }

        let bad = app.get(&format!("{path}?status=shipped")).await;
        assert_eq!(bad.status(), 400);
        let bad = json(bad).await;
        assert_eq!(bad["validation"]["errors"][0]["itemId"], "status", "{bad}");
    })
    .await;
}

#[tokio::test]
async fn bank_accounts_and_transactions_sync_with_signed_amounts_and_an_account_filter() {
    for_each_database(async |app| {
        let (company_id, _) = synced_company(app).await;
        let expected = dataset();

        let accounts = json(
            app.get(&format!("/companies/{company_id}/data/bankAccounts"))
                .await,
        )
        .await;
        assert_eq!(accounts["totalResults"], 3);
        let names: Vec<&str> = accounts["results"]
            .as_array()
            .expect("results")
            .iter()
            .map(|account| account["accountName"].as_str().expect("name"))
            .collect();
        assert_eq!(
            names,
            [
                "Business Card 3",
                "Business Current 1",
                "Business Savings 2"
            ]
        );
        let card = &accounts["results"][0];
        assert_eq!(card["accountType"], "CreditCard");
        assert_eq!(
            card["currentBalance"],
            json!(expected.bank_account(2).current_balance)
        );

        let path = format!("/companies/{company_id}/data/bankTransactions");
        let all = walk(app, &format!("{path}?pageSize=100")).await;
        assert_eq!(all.len() as u64, TRANSACTIONS);
        let dates: Vec<&str> = all
            .iter()
            .map(|t| t["date"].as_str().expect("date"))
            .collect();
        assert!(dates.windows(2).all(|pair| pair[0] >= pair[1]));
        let outgoing = all
            .iter()
            .find(|t| t["amount"].as_str().is_some_and(|a| a.starts_with('-')))
            .expect("money out is negative");
        let id = outgoing["transactionId"].as_str().expect("id");
        let index: u64 = id.trim_start_matches("sbx-txn-").parse().expect("index");
        let source = expected.bank_transaction(index);
        assert!(source.amount < Money(0));
        assert_eq!(outgoing["amount"], json!(source.amount));
        let pending = all
            .iter()
            .filter(|t| t["status"] == BankTransactionStatus::Pending.as_str())
            .count();
        assert_eq!(
            pending,
            (0..TRANSACTIONS)
                .filter(|i| expected.bank_transaction(*i).status == BankTransactionStatus::Pending)
                .count()
        );

        for account in 0..3 {
            let account_id = format!("sbx-acc-{account}");
            let count = (0..TRANSACTIONS)
                .filter(|i| expected.bank_transaction(*i).account_id == account_id)
                .count();
            let first = json(
                app.get(&format!("{path}?accountId={account_id}&pageSize=25"))
                    .await,
            )
            .await;
            assert_eq!(first["totalResults"], count, "{account_id}");
            if count > 25 {
                assert_eq!(
                    unpinned(first["_links"]["next"]["href"].as_str().expect("next")),
                    format!("{path}?page=2&pageSize=25&accountId={account_id}")
                );
            }
            let filtered = walk(app, &format!("{path}?accountId={account_id}&pageSize=25")).await;
            assert_eq!(filtered.len(), count);
            assert!(filtered.iter().all(|t| t["accountId"] == account_id));
        }
        // An id no transaction has: an empty list, not an error; ids match exactly.
        let none = json(app.get(&format!("{path}?accountId=SBX-ACC-0")).await).await;
        assert_eq!(none["totalResults"], 0);
        assert_eq!(none["results"], json!([]));
        let empty = app.get(&format!("{path}?accountId=")).await;
        assert_eq!(empty.status(), 400);
        let long = app
            .get(&format!("{path}?accountId={}", "a".repeat(256)))
            .await;
        assert_eq!(long.status(), 400);
        let long = json(long).await;
        assert_eq!(long["validation"]["errors"][0]["itemId"], "accountId");
    })
    .await;
}

#[tokio::test]
async fn a_platform_without_the_data_type_answers_not_supported_and_keeps_the_others_status() {
    for_each_database(async |app| {
        let (company_id, _) = synced_company(app).await;
        // A Xero connection in the same company: it has invoices, no orders.
        let xero = new_connection(app, company_id, "xero").await;
        let response = app
            .raw()
            .put(app.url(&format!(
                "/companies/{company_id}/connections/{xero}/authorization"
            )))
            .header("authorization", app.authorization())
            .json(&json!({
                "tenantId": "6f1b6a8e-1b2c-4d5e-8f90-123456789abc",
                "accessToken": "xero-access",
                "refreshToken": "xero-refresh",
                "expiresIn": 1800
            }))
            .send()
            .await
            .expect("answered");
        assert_eq!(response.status(), 200);

        let queued = app
            .post_json(
                &format!("/companies/{company_id}/data/queue/orders"),
                &json!(null),
            )
            .await;
        assert_eq!(queued.status(), 202);
        let queued = json(queued).await;
        let operations = queued.as_array().expect("operations");
        assert_eq!(operations.len(), 2, "{queued}");
        let unsupported = operations
            .iter()
            .find(|op| op["connectionId"] == xero.to_string())
            .expect("the Xero operation");
        assert_eq!(unsupported["status"], "NotSupported");
        assert_eq!(unsupported["dataType"], "orders");
        assert!(unsupported["completed"].is_string());
        let message = unsupported["errorMessage"].as_str().expect("a reason");
        assert!(
            message.contains("Xero has no orders") && message.contains("invoices, customers"),
            "{message}"
        );
        settled(&app.client, company_id).await;

        // The sandbox's orders still read, and their status is not the Xero one's.
        let status = json(
            app.get(&format!("/companies/{company_id}/dataStatus"))
                .await,
        )
        .await;
        assert_eq!(status["orders"]["currentStatus"], "Complete", "{status}");
        let history = json(
            app.get(&format!(
                "/companies/{company_id}/data/history?status=notsupported"
            ))
            .await,
        )
        .await;
        assert_eq!(history["totalResults"], 1);

        // The catalogue says what each platform syncs.
        let xero_entry = json(app.get("/integrations/xero").await).await;
        assert_eq!(
            xero_entry["dataTypes"],
            json!([
                "invoices",
                "customers",
                "accounts",
                "suppliers",
                "taxRates",
                "bills",
                "payments",
                "billPayments",
                "creditNotes",
                "items",
                "companyInfo",
                "journalEntries"
            ])
        );
        let sandbox_entry = json(app.get("/integrations/sandbox").await).await;
        assert_eq!(
            sandbox_entry["dataTypes"],
            json!([
                "invoices",
                "customers",
                "orders",
                "bankAccounts",
                "bankTransactions",
                "accounts",
                "suppliers",
                "taxRates",
                "bills",
                "payments",
                "billPayments",
                "creditNotes",
                "items",
                "companyInfo",
                "journalEntries"
            ])
        );
    })
    .await;
}
