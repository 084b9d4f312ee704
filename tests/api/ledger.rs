//! `/companies/{companyId}/data/{bills,payments,billPayments,creditNotes}` from the sandbox, held to
//! the consistency a ledger owes across data types: every reference names a
//! record of the same connection (a bill line's account and tax rate, a
//! bill's supplier, a payment's account, customer and invoice), a bill's
//! amount due is its total less what was paid, a payment's or a credit
//! note's allocations never exceed it, and what an invoice shows paid is
//! what its payments and credit notes settle.

use std::collections::{HashMap, HashSet};

use serde_json::{Value, json};
use uuid::Uuid;

use tributary::data::money::Money;

use crate::connections::new_company;
use crate::data_types::walk;
use crate::helpers::{TestApp, for_each_database, json};
use crate::sync::{authorized_sandbox, settled};

const INVOICES: u64 = 300;
const SEED: u64 = 11;

/// A company with one sandbox connection of 300 invoices (150 bills), synced.
async fn synced_company(app: &TestApp) -> Uuid {
    let company_id = new_company(app, "Ledger Ltd").await;
    authorized_sandbox(
        app,
        company_id,
        json!({"organizationId": "sbx-ledger", "accessToken": "tok", "invoiceCount": INVOICES, "seed": SEED}),
    )
    .await;
    app.post_json(&format!("/companies/{company_id}/data/all"), &json!(null))
        .await;
    let done = settled(&app.client, company_id).await;
    assert!(
        done.iter()
            .all(|op| op.status == client::types::PullStatus::Complete),
        "{done:?}"
    );
    company_id
}

fn money(value: &Value) -> Money {
    serde_json::from_value(value.clone()).unwrap_or_else(|_| panic!("an amount: {value}"))
}

fn ids<'a>(records: &'a [Value], field: &str) -> HashSet<&'a str> {
    records
        .iter()
        .map(|record| record[field].as_str().expect("an id"))
        .collect()
}

/// Every record of `data_type`, 50 a page.
async fn every(app: &TestApp, company_id: Uuid, data_type: &str) -> Vec<Value> {
    walk(
        app,
        &format!("/companies/{company_id}/data/{data_type}?pageSize=50"),
    )
    .await
}

#[tokio::test]
async fn bills_refer_to_the_connections_accounts_tax_rates_and_suppliers_and_owe_what_their_payments_leave()
 {
    for_each_database(async |app| {
        let company_id = synced_company(app).await;
        let accounts = every(app, company_id, "accounts").await;
        let tax_rates = every(app, company_id, "taxRates").await;
        let suppliers = every(app, company_id, "suppliers").await;
        let bills = every(app, company_id, "bills").await;
        assert_eq!(bills.len(), 150, "half as many bills as invoices");
        let (account_ids, rate_ids, supplier_ids) = (
            ids(&accounts, "accountId"),
            ids(&tax_rates, "taxRateId"),
            ids(&suppliers, "supplierId"),
        );

        let dates: Vec<&str> = bills
            .iter()
            .map(|bill| bill["issueDate"].as_str().expect("a date"))
            .collect();
        let mut newest_first = dates.clone();
        newest_first.sort_by(|a, b| b.cmp(a));
        assert_eq!(dates, newest_first, "newest issue date first");

        let mut statuses: HashMap<String, usize> = HashMap::new();
        for bill in &bills {
            let (total, due) = (money(&bill["totalAmount"]), money(&bill["amountDue"]));
            assert_eq!(
                money(&bill["subTotal"]) + money(&bill["taxAmount"]),
                total,
                "{bill}"
            );
            let status = bill["status"].as_str().expect("a status");
            match status {
                "Paid" | "Void" => assert_eq!(due, Money(0), "{bill}"),
                "PartiallyPaid" => assert!(due > Money(0) && due < total, "{bill}"),
                "Draft" | "Open" => assert_eq!(due, total, "{bill}"),
                other => panic!("unexpected status {other}"),
            }
            *statuses.entry(status.to_lowercase()).or_default() += 1;
            let supplier = bill["supplierRef"]["id"].as_str().expect("a supplier");
            assert!(
                supplier_ids.contains(supplier),
                "{supplier} is a supplier of the connection"
            );
            let lines = bill["lineItems"].as_array().expect("lines");
            assert!(!lines.is_empty());
            let mut line_total = Money(0);
            for line in lines {
                let account = line["accountRef"]["id"].as_str().expect("an account");
                assert!(
                    account_ids.contains(account),
                    "{account} is an account of the connection"
                );
                let rate = line["taxRateRef"]["id"].as_str().expect("a tax rate");
                assert!(
                    rate_ids.contains(rate),
                    "{rate} is a tax rate of the connection"
                );
                line_total = line_total + money(&line["totalAmount"]);
            }
            assert_eq!(line_total, total, "the lines add up to the bill");
        }
        assert_eq!(statuses.len(), 5, "every status is used: {statuses:?}");

        // What each bill owes is its total less what its bill payments
        // settle, as the API serves both lists; no payment allocates more
        // than it paid, and each pays its own supplier's bills.
        let bill_payments = every(app, company_id, "billPayments").await;
        assert!(!bill_payments.is_empty());
        let bills_by_id: HashMap<&str, &Value> = bills
            .iter()
            .map(|bill| (bill["billId"].as_str().expect("an id"), bill))
            .collect();
        let mut paid_per_bill: HashMap<&str, Money> = HashMap::new();
        for payment in &bill_payments {
            let mut allocated = Money(0);
            for allocation in payment["allocations"].as_array().expect("allocations") {
                assert_eq!(allocation["type"], "Bill", "{payment}");
                let bill_id = allocation["id"].as_str().expect("a bill id");
                let bill = bills_by_id
                    .get(bill_id)
                    .unwrap_or_else(|| panic!("{bill_id} is a bill of the connection"));
                assert_eq!(bill["supplierRef"]["id"], payment["supplierRef"]["id"]);
                assert_eq!(bill["currency"], payment["currency"]);
                let amount = money(&allocation["amount"]);
                allocated = allocated + amount;
                let paid = paid_per_bill.entry(bill_id).or_insert(Money(0));
                *paid = *paid + amount;
            }
            assert!(
                allocated > Money(0) && allocated <= money(&payment["totalAmount"]),
                "allocations within the amount: {payment}"
            );
            let account = payment["accountRef"]["id"].as_str().expect("an account");
            assert!(account_ids.contains(account), "{account} is an account");
        }
        for bill in &bills {
            let id = bill["billId"].as_str().expect("an id");
            let paid = paid_per_bill.get(id).copied().unwrap_or(Money(0));
            if bill["status"] == "Void" {
                assert_eq!(paid, Money(0), "nothing pays a void bill: {bill}");
            } else {
                assert_eq!(
                    money(&bill["amountDue"]),
                    money(&bill["totalAmount"]) - paid,
                    "{bill}"
                );
            }
        }

        // The status filter keeps exact totals, in any case.
        let path = format!("/companies/{company_id}/data/bills");
        for (status, count) in &statuses {
            let filtered = json(app.get(&format!("{path}?status={status}&pageSize=1")).await).await;
            assert_eq!(filtered["totalResults"], *count, "{status}");
        }
        let refused = app.get(&format!("{path}?status=overdue")).await;
        assert_eq!(refused.status(), 400);

        // A bill's references are followed with the single-record operations.
        let first = &bills[0];
        let one = json(
            app.get(&format!(
                "{path}/{}",
                first["billId"].as_str().expect("an id")
            ))
            .await,
        )
        .await;
        assert_eq!(&one, first);
        let account = first["lineItems"][0]["accountRef"]["id"]
            .as_str()
            .expect("an account");
        let followed = app
            .get(&format!("/companies/{company_id}/data/accounts/{account}"))
            .await;
        assert_eq!(followed.status(), 200);
        assert_eq!(
            app.get(&format!("{path}/sbx-bill-9999999")).await.status(),
            404
        );
    })
    .await;
}

#[tokio::test]
async fn payments_settle_what_the_invoices_show_paid_and_never_more_than_they_are() {
    for_each_database(async |app| {
        let company_id = synced_company(app).await;
        let invoices = every(app, company_id, "invoices").await;
        let customers = every(app, company_id, "customers").await;
        let accounts = every(app, company_id, "accounts").await;
        let payments = every(app, company_id, "payments").await;
        let credit_notes = every(app, company_id, "creditNotes").await;
        assert!(!payments.is_empty());
        assert!(!credit_notes.is_empty());
        let customer_ids = ids(&customers, "customerId");
        let bank_accounts: HashSet<&str> = accounts
            .iter()
            .filter(|account| account["isBankAccount"] == true)
            .map(|account| account["accountId"].as_str().expect("an id"))
            .collect();
        let by_id: HashMap<&str, &Value> = invoices
            .iter()
            .map(|invoice| (invoice["invoiceId"].as_str().expect("an id"), invoice))
            .collect();

        let mut settled_per_invoice: HashMap<&str, Money> = HashMap::new();
        let mut unallocated = 0;
        for payment in &payments {
            let total = money(&payment["totalAmount"]);
            let allocations = payment["allocations"].as_array().expect("allocations");
            let allocated = allocations.iter().fold(Money(0), |sum, allocation| {
                sum + money(&allocation["amount"])
            });
            assert!(
                allocated > Money(0) && allocated <= total,
                "allocations within the amount: {payment}"
            );
            unallocated += usize::from(allocated < total);
            for allocation in allocations {
                assert_eq!(allocation["type"], "Invoice");
                let invoice_id = allocation["id"].as_str().expect("an invoice id");
                let invoice = by_id
                    .get(invoice_id)
                    .unwrap_or_else(|| panic!("{invoice_id} is an invoice of the connection"));
                assert_eq!(invoice["customerRef"]["id"], payment["customerRef"]["id"]);
                assert_eq!(invoice["currency"], payment["currency"]);
                let sum = settled_per_invoice.entry(invoice_id).or_insert(Money(0));
                *sum = *sum + money(&allocation["amount"]);
            }
            let customer = payment["customerRef"]["id"].as_str().expect("a customer");
            assert!(customer_ids.contains(customer));
            let account = payment["accountRef"]["id"].as_str().expect("an account");
            assert!(
                bank_accounts.contains(account),
                "paid into a bank account of the chart"
            );
        }
        assert!(unallocated > 0, "some payments leave something unallocated");
        let mut statuses = HashSet::new();
        for note in &credit_notes {
            statuses.insert(note["status"].as_str().expect("a status"));
            let mut allocated = Money(0);
            for allocation in note["allocations"].as_array().expect("allocations") {
                let invoice_id = allocation["invoiceRef"]["id"]
                    .as_str()
                    .expect("an invoice id");
                let invoice = by_id
                    .get(invoice_id)
                    .unwrap_or_else(|| panic!("{invoice_id} is an invoice of the connection"));
                assert_eq!(invoice["customerRef"]["id"], note["customerRef"]["id"]);
                let sum = settled_per_invoice.entry(invoice_id).or_insert(Money(0));
                *sum = *sum + money(&allocation["amount"]);
                allocated = allocated + money(&allocation["amount"]);
            }
            let remaining = money(&note["remainingCredit"]);
            assert!(
                allocated + remaining <= money(&note["totalAmount"]),
                "{note}"
            );
        }
        // The unit test sees every status over more invoices; here, at
        // least those whose credit went to invoices.
        assert!(
            statuses.contains("Paid") && statuses.contains("PartiallyPaid"),
            "{statuses:?}"
        );
        // What each invoice shows paid is exactly what its payments and
        // credit notes settle.
        for invoice in &invoices {
            let paid = money(&invoice["totalAmount"]) - money(&invoice["amountDue"]);
            let expected = if invoice["status"] == "Void" {
                Money(0)
            } else {
                paid
            };
            let id = invoice["invoiceId"].as_str().expect("an id");
            assert_eq!(
                settled_per_invoice.get(id).copied().unwrap_or(Money(0)),
                expected,
                "{invoice}"
            );
        }

        let dates: Vec<&str> = payments
            .iter()
            .map(|payment| payment["date"].as_str().expect("a date"))
            .collect();
        let mut newest_first = dates.clone();
        newest_first.sort_by(|a, b| b.cmp(a));
        assert_eq!(dates, newest_first, "newest first");

        // "This customer's payments", with an exact total.
        let customer = payments[0]["customerRef"]["id"]
            .as_str()
            .expect("a customer");
        let theirs = payments
            .iter()
            .filter(|payment| payment["customerRef"]["id"] == customer)
            .count();
        let path = format!("/companies/{company_id}/data/payments");
        let filtered = json(app.get(&format!("{path}?customerId={customer}")).await).await;
        assert_eq!(filtered["totalResults"], theirs);
        let nobody = json(app.get(&format!("{path}?customerId=sbx-cus-nobody")).await).await;
        assert_eq!(nobody["totalResults"], 0);
        let one = json(
            app.get(&format!(
                "{path}/{}",
                payments[0]["paymentId"].as_str().expect("an id")
            ))
            .await,
        )
        .await;
        assert_eq!(one, payments[0]);
    })
    .await;
}

#[tokio::test]
async fn items_refer_to_the_chart_and_company_info_is_one_record_per_connection() {
    for_each_database(async |app| {
        let company_id = synced_company(app).await;
        let accounts = every(app, company_id, "accounts").await;
        let tax_rates = every(app, company_id, "taxRates").await;
        let items = every(app, company_id, "items").await;
        assert_eq!(items.len(), 9);
        let (account_ids, rate_ids) = (ids(&accounts, "accountId"), ids(&tax_rates, "taxRateId"));
        let names: Vec<&str> = items
            .iter()
            .map(|item| item["name"].as_str().expect("a name"))
            .collect();
        let mut sorted = names.clone();
        sorted.sort();
        assert_eq!(names, sorted, "by name");
        for item in &items {
            for side in ["sales", "purchases"] {
                if item[side].is_null() {
                    continue;
                }
                let account = item[side]["accountRef"]["id"].as_str().expect("an account");
                assert!(account_ids.contains(account), "{item}");
                let rate = item[side]["taxRateRef"]["id"].as_str().expect("a tax rate");
                assert!(rate_ids.contains(rate), "{item}");
            }
            assert_eq!(
                item["quantityOnHand"].is_null(),
                item["type"] != "Inventory",
                "only inventory has stock: {item}"
            );
        }
        let path = format!("/companies/{company_id}/data/items");
        let services = json(app.get(&format!("{path}?type=service")).await).await;
        let expected = items
            .iter()
            .filter(|item| item["type"] == "Service")
            .count();
        assert_eq!(services["totalResults"], expected);
        assert_eq!(app.get(&format!("{path}?type=widget")).await.status(), 400);

        // One record per connection: a second connection adds a second.
        let page = json(
            app.get(&format!("/companies/{company_id}/data/companyInfo"))
                .await,
        )
        .await;
        assert_eq!(page["totalResults"], 1, "{page}");
        assert_eq!(page["results"][0]["companyInfoId"], "sbx-ledger");
        assert_eq!(page["results"][0]["baseCurrency"], "GBP");
        assert_eq!(
            page["results"][0]["financialYearStart"],
            json!({"month": 4, "day": 1})
        );
        authorized_sandbox(
            app,
            company_id,
            json!({"organizationId": "sbx-demo-books", "accessToken": "tok", "invoiceCount": 10}),
        )
        .await;
        app.post_json(&format!("/companies/{company_id}/data/all"), &json!(null))
            .await;
        settled(&app.client, company_id).await;
        let page = json(
            app.get(&format!("/companies/{company_id}/data/companyInfo"))
                .await,
        )
        .await;
        assert_eq!(page["totalResults"], 2, "{page}");
        let names: Vec<&str> = page["results"]
            .as_array()
            .expect("results")
            .iter()
            .map(|company| company["companyName"].as_str().expect("a name"))
            .collect();
        assert_eq!(
            names,
            ["Demo Books Ltd", "Sandbox Trading Ltd (sbx-ledger)"]
        );
    })
    .await;
}

/// Every journal entry balances to zero, and every `accountRef` in the
/// connection (bill lines, payments, bill payments, items, journal lines)
/// names one of its accounts.
#[tokio::test]
async fn journal_entries_balance_and_every_account_reference_names_an_account() {
    for_each_database(async |app| {
        let company_id = synced_company(app).await;
        let accounts = every(app, company_id, "accounts").await;
        let account_ids = ids(&accounts, "accountId");
        let entries = every(app, company_id, "journalEntries").await;
        assert!(!entries.is_empty());
        let mut sources = HashSet::new();
        let mut references: Vec<String> = Vec::new();
        for entry in &entries {
            let lines = entry["journalLines"].as_array().expect("lines");
            let balance = lines
                .iter()
                .fold(Money(0), |sum, line| sum + money(&line["netAmount"]));
            assert_eq!(balance, Money(0), "the entry balances: {entry}");
            sources.insert(
                entry["source"]["type"]
                    .as_str()
                    .expect("a source")
                    .to_owned(),
            );
            references.extend(
                lines
                    .iter()
                    .map(|line| line["accountRef"]["id"].to_string()),
            );
        }
        assert_eq!(sources.len(), 5, "{sources:?}");
        for data_type in ["bills", "invoices", "creditNotes"] {
            for document in every(app, company_id, data_type).await {
                for line in document["lineItems"].as_array().expect("lines") {
                    references.push(line["accountRef"]["id"].to_string());
                }
            }
        }
        for data_type in ["payments", "billPayments"] {
            for payment in every(app, company_id, data_type).await {
                references.push(payment["accountRef"]["id"].to_string());
            }
        }
        for item in every(app, company_id, "items").await {
            for side in ["sales", "purchases"] {
                if !item[side].is_null() {
                    references.push(item[side]["accountRef"]["id"].to_string());
                }
            }
        }
        assert!(references.len() > entries.len());
        for reference in &references {
            let id = reference.trim_matches('"');
            assert!(
                account_ids.contains(id),
                "{reference} names an account of the connection"
            );
        }
        let path = format!("/companies/{company_id}/data/journalEntries");
        let first = &entries[0];
        let one = json(
            app.get(&format!(
                "{path}/{}",
                first["journalEntryId"].as_str().expect("an id")
            ))
            .await,
        )
        .await;
        assert_eq!(&one, first);
    })
    .await;
}
