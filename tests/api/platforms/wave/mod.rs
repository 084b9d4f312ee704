//! Wave: GraphQL POSTs on one business, invoices and customers over several
//! pages (`pageInfo.currentPage < totalPages`), every status, exact `Money`
//! strings and line items; refresh on a 401 and on an `UNAUTHENTICATED`
//! error in a 200 answer, with the rotated refresh token stored before use;
//! `invalid_grant`, 429, 5xx, garbage, an unknown business, and verification
//! at migration. Fixtures follow the documented query shapes (NOTES.md §6, §8);
//! the fake refuses a query Wave's schema does not validate, as Wave does.
//! The chart, vendors, products, sales taxes and the business: [`ledger`].
//!
//! The scenarios every platform shares (`super::scenarios`) run from its
//! `CASE`; the tests here are its own.

mod ledger;

use std::sync::{Arc, OnceLock};

use apollo_compiler::request::coerce_variable_values;
use apollo_compiler::response::JsonValue;
use apollo_compiler::validation::Valid;
use apollo_compiler::{ExecutableDocument, Schema};
use serde_json::{Value, json};
use uuid::Uuid;

use client::types::{ConnectionStatus, FetchMode, PullStatus, QueueDataTypeDataType};

use super::fake::{Answer, Call, Fake, Scheme, fixture};
use super::scenarios::changes::{Changed, PLATFORM_DATE, changes_scenario};
use super::scenarios::{
    Another, Case, Cut, Errors, Pages, Refresh, Refused, Synced, Verification,
    connected as connected_as, platform_scenarios, records as list,
};
use super::{authorize, latest, options_for, set_oauth_client, stored, sync};
use crate::connections::{count_rows, new_company, new_connection};
use crate::helpers::{TestApp, backends};

pub const BUSINESS: &str = "QnVzaW5lc3M6NzE1MjQ3NjEtZjYxMS00ODk0LWE3NDgtNzg3MmYwODgyNWIw";
pub const OTHER_BUSINESS: &str = "QnVzaW5lc3M6MDAwMDAwMDAtMDAwMC00MDAwLTgwMDAtMDAwMDAwMDBmYTRl";
const ACCESS: &str = "wave-access-token-0001";
const REFRESH: &str = "wave-refresh-token-0001";

/// The GraphQL request of a call: its query text and variables.
fn graphql(call: &Call) -> (String, Value) {
    let body: Value = serde_json::from_str(&call.body).unwrap_or(Value::Null);
    (
        body["query"].as_str().unwrap_or_default().to_owned(),
        body["variables"].clone(),
    )
}

/// Wave's public schema as the contract file prints it
/// (`tests/contracts/graphql/wave-public.graphql`), read once.
fn schema() -> &'static Valid<Schema> {
    static SCHEMA: OnceLock<Valid<Schema>> = OnceLock::new();
    SCHEMA.get_or_init(|| {
        let path = format!(
            "{}/tests/contracts/graphql/wave-public.graphql",
            env!("CARGO_MANIFEST_DIR")
        );
        let text = std::fs::read_to_string(&path).unwrap_or_else(|error| panic!("{path}: {error}"));
        Schema::parse_and_validate(text, &path)
            .unwrap_or_else(|invalid| panic!("{path}: {}", invalid.errors))
    })
}

/// Why Wave refuses `query` with `variables`, as it validates a request
/// against its schema before running it: a field or argument it lacks, or
/// a variable of the wrong type.
fn refusal(query: &str, variables: &Value) -> Option<String> {
    let schema = schema();
    let document = match ExecutableDocument::parse_and_validate(schema, query, "query.graphql") {
        Ok(document) => document,
        Err(invalid) => return Some(invalid.errors.to_string()),
    };
    let operation = match document.operations.get(None) {
        Ok(operation) => operation,
        Err(error) => return Some(error.message().to_string()),
    };
    let JsonValue::Object(values) = JsonValue::from(variables.clone()) else {
        return Some("variables must be an object".to_owned());
    };
    coerce_variable_values(schema, operation, &values)
        .err()
        .map(|error| error.message().to_string())
}

/// The name of a query's operation (`WaveInvoices` of `query WaveInvoices(…)`).
fn operation(query: &str) -> &str {
    query
        .trim_start()
        .strip_prefix("query ")
        .and_then(|rest| rest.split(|c: char| c == '(' || c.is_whitespace()).next())
        .unwrap_or_default()
}

/// An empty page of the business's list `list`.
fn empty(list: &str) -> String {
    json!({"data": {"business": {"id": BUSINESS, list: {
        "pageInfo": {"currentPage": 1, "totalPages": 1, "totalCount": 0},
        "edges": []
    }}}})
    .to_string()
}

/// Serves the Wave fixtures, each query checked against Wave's schema
/// first: two pages each of invoices, customers and vendors; accounts over
/// two pages and an archived one; products and sales taxes, each with an
/// archived one; the business. Invoices, customers, vendors and products
/// modified after `modifiedAtAfter` are a changed one and, but for
/// products, a new one; no sales tax changed. Another business is not found.
fn router() -> super::fake::Router {
    Arc::new(|call: &Call| {
        if call.method != "POST" || call.path != "/graphql/public" {
            return Answer::json(404, "{\"errors\":[{\"message\":\"Not found\"}]}");
        }
        let (query, variables) = graphql(call);
        if let Some(refusal) = refusal(&query, &variables) {
            let body = json!({"errors": [{"message": refusal, "extensions": {"code": "GRAPHQL_VALIDATION_FAILED"}}]});
            return Answer::json(400, body.to_string());
        }
        let name = operation(&query);
        if name == "WaveBusinesses" {
            return Answer::json(200, fixture("wave/fixtures/businesses.json"));
        }
        if variables["businessId"] != BUSINESS {
            return Answer::json(200, fixture("wave/fixtures/business-not-found.json"));
        }
        let page = variables["page"].as_u64().unwrap_or(1);
        let archived = variables["isArchived"] == true;
        let changed = variables["modifiedAtAfter"].is_string();
        let file = |name: String| Answer::json(200, fixture(&format!("wave/fixtures/{name}.json")));
        match (name, changed, archived) {
            ("WaveBusiness", _, _) => file("business".to_owned()),
            ("WaveCompanyInfo", _, _) => file("company".to_owned()),
            ("WaveInvoices", true, _) => file("invoices-changed".to_owned()),
            ("WaveInvoices", false, _) => file(format!("invoices-{page}")),
            ("WaveCustomers", true, _) => file("customers-changed".to_owned()),
            ("WaveCustomers", false, _) => file(format!("customers-{page}")),
            ("WaveAccounts", _, true) => file("accounts-archived".to_owned()),
            ("WaveAccounts", _, false) => file(format!("accounts-{page}")),
            ("WaveVendors", true, _) => file("vendors-changed".to_owned()),
            ("WaveVendors", false, _) => file(format!("vendors-{page}")),
            ("WaveProducts", true, false) => file("products-changed".to_owned()),
            ("WaveProducts", true, true) => Answer::json(200, empty("products")),
            ("WaveProducts", false, true) => file("products-archived".to_owned()),
            ("WaveProducts", false, false) => file(format!("products-{page}")),
            ("WaveSalesTaxes", true, _) => Answer::json(200, empty("salesTaxes")),
            ("WaveSalesTaxes", false, true) => file("sales-taxes-archived".to_owned()),
            ("WaveSalesTaxes", false, false) => file("sales-taxes".to_owned()),
            _ => Answer::json(
                200,
                "{\"errors\":[{\"message\":\"Cannot query field\",\"extensions\":{\"code\":\"GRAPHQL_VALIDATION_FAILED\"}}]}",
            ),
        }
    })
}

pub async fn fake() -> Fake {
    let fake = Fake::start(
        "wave",
        Scheme::Bearer,
        ACCESS,
        REFRESH,
        fixture("wave/fixtures/unauthenticated.json"),
        router(),
    )
    .await;
    // Wave takes the client credentials in the form body.
    fake.with(|inner| inner.client_in_body = true);
    fake
}

fn body(business: &str, expires_in: i64) -> Value {
    json!({"businessId": business, "accessToken": ACCESS, "refreshToken": REFRESH, "expiresIn": expires_in})
}

/// A company with an authorized Wave connection.
async fn connected(app: &TestApp, expires_in: i64) -> (Uuid, Uuid) {
    connected_as(app, &CASE, &(CASE.authorization)(expires_in)).await
}

fn by_number<'a>(invoices: &'a [Value], number: &str) -> &'a Value {
    invoices
        .iter()
        .find(|invoice| invoice["invoiceNumber"] == number)
        .unwrap_or_else(|| panic!("invoice {number} synced"))
}

async fn connection_status(
    app: &TestApp,
    company_id: Uuid,
    connection_id: Uuid,
) -> ConnectionStatus {
    app.client
        .get_connection(&company_id, &connection_id)
        .await
        .expect("found")
        .into_inner()
        .status
}

/// Wave in the shared scenarios.
static CASE: Case = Case {
    key: "wave",
    name: "Wave",
    fake: || Box::pin(fake()),
    page_size: None,
    authorization: |expires_in| body(BUSINESS, expires_in),
    access: ACCESS,
    refresh: REFRESH,
    lasting: 1800,
    kept: &["businessId"],
    sync: Synced {
        data_type: "invoices",
        records: 10,
        calls: 2,
    },
    syncs: &[
        "invoices",
        "customers",
        "accounts",
        "suppliers",
        "taxRates",
        "items",
        "companyInfo",
    ],
    errors: Errors {
        rate_limited: r#"{"errors":[{"message":"Too many requests"}]}"#,
        rate_limit_headers: &[],
        rate_limited_says: "",
        server_error: r#"{"errors":[{"message":"Internal server error"}]}"#,
        unavailable: (
            503,
            r#"{"errors":[{"message":"Wave is down for maintenance"}]}"#,
        ),
        unavailable_says: "Wave answered 503 Service Unavailable: Wave is down for maintenance",
        refused: Refused::Scope {
            status: 200,
            body: r#"{"data":null,"errors":[{"message":"You do not have permission to view invoices of this business.","extensions":{"code":"FORBIDDEN","id":"e7"}}]}"#,
            says: "You do not have permission to view invoices of this business. (FORBIDDEN, error id e7)",
        },
    },
    pages: Pages {
        prelude: |_| Vec::new(),
        first: |_| Answer::json(200, fixture("wave/fixtures/invoices-1.json")),
        cut: Cut::SecondPage,
        truncated: r#"{"data": {"business": {"invoices": {"edges": [{"node": {"id": "x""#,
        truncated_says: "",
        records_at: "/data/business/invoices/edges",
        id_at: "/node/id",
        field: "/node/invoiceDate",
    },
    refresh_with: Some(Refresh {
        invalid_grant_says: &["already used"],
        ..Refresh::ROTATING
    }),
    unrefreshable: None,
    verification: Verification {
        rejected_says: &["Wave answered 401 Unauthorized: The access token is invalid"],
        // A token that works, but not for this business.
        another_account: Some(Another {
            authorization: || body(OTHER_BUSINESS, 1800),
            says: &["Business not found."],
        }),
        // One business(id:) query.
        verified_by: |calls| {
            calls
                .last()
                .is_some_and(|call| graphql(call).0.contains("query WaveBusiness"))
        },
    },
    unknown_account: Some(Another {
        authorization: || body(OTHER_BUSINESS, 1800),
        says: &["Wave answered a page of invoices with errors: Business not found. (NOT_FOUND"],
    }),
};

platform_scenarios!(CASE, refreshes, refreshes_before_expiry, unknown_account);

#[tokio::test]
async fn wave_invoices_and_customers_sync_over_every_page_with_every_status() {
    for backend in backends() {
        let fake = fake().await;
        let app = TestApp::spawn_with(backend, options_for(&fake, None, 2)).await;
        let (company_id, _) = connected(&app, 1800).await;
        let operations = sync(&app, company_id, QueueDataTypeDataType::Invoices).await;
        assert_eq!(latest(&operations, "invoices").status, PullStatus::Complete);
        let operations = sync(&app, company_id, QueueDataTypeDataType::Customers).await;
        assert_eq!(
            latest(&operations, "customers").status,
            PullStatus::Complete
        );

        let invoices = list(&app, company_id, "invoices").await;
        assert_eq!(invoices.len(), 10, "{invoices:#?}");
        for (number, status) in [
            ("1001", "Draft"),
            ("1002", "Draft"),
            ("1003", "Submitted"),
            ("1004", "Submitted"),
            ("1005", "PartiallyPaid"),
            ("1006", "PartiallyPaid"),
            ("1007", "Paid"),
            ("1008", "Submitted"),
            ("1009", "Paid"),
            ("1010", "Submitted"),
        ] {
            assert_eq!(by_number(&invoices, number)["status"], status, "{number}");
        }
        let sent = by_number(&invoices, "1003");
        assert_eq!(sent["totalAmount"], "1234.56");
        assert_eq!(sent["subTotal"], "1092.53");
        assert_eq!(sent["totalTaxAmount"], "142.03");
        assert_eq!(sent["amountDue"], "1234.56");
        assert_eq!(sent["issueDate"], "2026-09-10");
        assert_eq!(sent["dueDate"], "2026-10-10");
        assert_eq!(sent["currency"], "CAD");
        assert_eq!(sent["note"], "Thank you for your business");
        assert_eq!(sent["sourceModifiedDate"], "2026-09-12T16:30:00.000000Z");
        assert_eq!(sent["customerRef"]["companyName"], "Lakeside Dental");
        let lines = sent["lineItems"].as_array().expect("line items");
        assert_eq!(lines.len(), 2);
        assert_eq!(lines[0]["description"], "September retainer");
        assert_eq!(lines[0]["totalAmount"], "1197.27");
        // A product's own name when the line has no description; a unit
        // price with four decimals survives exactly.
        assert_eq!(lines[1]["description"], "Widgets");
        assert_eq!(lines[1]["unitAmount"], "2.0625");
        assert_eq!(lines[1]["quantity"], "16");
        assert_eq!(lines[1]["subTotal"], "33.00");
        assert_eq!(lines[1]["taxAmount"], "4.29");
        let part_paid = by_number(&invoices, "1005");
        assert_eq!(part_paid["amountDue"], "100.00");
        assert_eq!(part_paid["currency"], "USD");
        let paid = by_number(&invoices, "1007");
        assert_eq!(paid["amountDue"], "0.00");
        assert_eq!(paid["totalAmount"], "99.99");
        assert_eq!(by_number(&invoices, "1001")["note"], Value::Null);
        // Overpaid: paid, more than in full; its `items` null (Wave's schema
        // allows it) reads as no lines.
        let overpaid = by_number(&invoices, "1009");
        assert_eq!(overpaid["amountDue"], "-5.00");
        assert_eq!(overpaid["lineItems"], json!([]));

        let customers = list(&app, company_id, "customers").await;
        let names: Vec<&str> = customers
            .iter()
            .filter_map(|customer| customer["customerName"].as_str())
            .collect();
        assert_eq!(
            names,
            ["Harbour Bakery", "Lakeside Dental", "Northwind Outfitters"]
        );
        let bakery = &customers[0];
        assert_eq!(bakery["emailAddress"], "accounts@harbourbakery.example");
        assert_eq!(bakery["phone"], "+1 902 555 0100");
        assert_eq!(bakery["defaultCurrency"], "CAD");
        assert_eq!(bakery["status"], "Active");
        assert_eq!(customers[2]["status"], "Archived");
        assert_eq!(
            customers[2]["sourceModifiedDate"],
            "2026-05-05T09:30:00.000000Z"
        );

        // Every call is a GraphQL POST for the connection's business, and
        // the second pages were asked for.
        let calls = fake.calls();
        assert!(calls.iter().all(|call| call.token == ACCESS
            && call.method == "POST"
            && graphql(call).1["businessId"] == BUSINESS));
        for operation in ["query WaveInvoices", "query WaveCustomers"] {
            assert!(calls.iter().any(|call| {
                let (query, variables) = graphql(call);
                query.contains(operation) && variables["page"] == 2
            }));
        }
        assert_eq!(
            fake.token_calls(),
            0,
            "a token valid for 30 minutes is not refreshed"
        );
    }
}

#[tokio::test]
async fn an_unauthenticated_error_in_a_200_answer_is_refreshed_like_a_401() {
    for backend in backends() {
        let fake = fake().await;
        let app = TestApp::spawn_with(backend, options_for(&fake, None, 1)).await;
        set_oauth_client(&app, "wave").await;
        let (company_id, connection_id) = connected(&app, 1800).await;
        fake.with(|inner| {
            inner.scripted.push_back(Answer::json(
                200,
                fixture("wave/fixtures/unauthenticated.json"),
            ))
        });
        let operations = sync(&app, company_id, QueueDataTypeDataType::Customers).await;
        let operation = latest(&operations, "customers");
        assert_eq!(operation.status, PullStatus::Complete, "{operation:?}");
        assert_eq!(list(&app, company_id, "customers").await.len(), 3);
        assert_eq!(fake.token_calls(), 1);
        assert_eq!(
            stored(&app, connection_id).await["refreshToken"],
            "rt-rotated-1"
        );

        // Rejected again after the refresh: the connection needs new tokens.
        fake.with(|inner| {
            for _ in 0..2 {
                inner.scripted.push_back(Answer::json(
                    200,
                    fixture("wave/fixtures/unauthenticated.json"),
                ));
            }
        });
        let operations = sync(&app, company_id, QueueDataTypeDataType::Customers).await;
        let operation = latest(&operations, "customers");
        assert_eq!(operation.status, PullStatus::AuthError);
        let message = operation.error_message.unwrap_or_default();
        assert!(
            message.contains("The access token is invalid or has expired")
                && message.contains("UNAUTHENTICATED"),
            "{message}"
        );
        assert_eq!(
            connection_status(&app, company_id, connection_id).await,
            ConnectionStatus::Deauthorized
        );
        // The customers of the first sync are still served.
        assert_eq!(list(&app, company_id, "customers").await.len(), 3);
    }
}

/// A 200 whose `errors` say the query failed: Wave's words, with the id its
/// support asks for; the previous data stays and the connection stays linked.
#[tokio::test]
async fn graphql_errors_in_a_wave_200_answer_fail_the_sync_with_its_words() {
    for backend in backends() {
        let fake = fake().await;
        let app = TestApp::spawn_with(backend, options_for(&fake, None, 1)).await;
        let (company_id, connection_id) = connected(&app, 1800).await;
        let operations = sync(&app, company_id, QueueDataTypeDataType::Invoices).await;
        assert_eq!(latest(&operations, "invoices").status, PullStatus::Complete);
        let before = list(&app, company_id, "invoices").await;
        fake.with(|inner| {
            inner.scripted.push_back(Answer::json(
                200,
                "{\"data\": null, \"errors\": [{\"message\": \"Query complexity exceeds the limit\", \"extensions\": {\"code\": \"QUERY_COMPLEXITY\", \"id\": \"c0ffee00-1111-2222-3333-444455556666\"}}]}",
            ));
        });
        let operations = sync(&app, company_id, QueueDataTypeDataType::Invoices).await;
        let operation = latest(&operations, "invoices");
        assert_eq!(operation.status, PullStatus::Failed);
        let message = operation.error_message.unwrap_or_default();
        assert!(
            message.contains("Query complexity exceeds the limit")
                && message.contains("QUERY_COMPLEXITY")
                && message.contains("c0ffee00-1111-2222-3333-444455556666"),
            "{message}"
        );
        assert_eq!(list(&app, company_id, "invoices").await, before);
        assert_eq!(
            connection_status(&app, company_id, connection_id).await,
            ConnectionStatus::Linked
        );
    }
}

/// The body is Wave's own: unknown fields and a malformed business id are
/// refused before anything is asked of Wave.
#[tokio::test]
async fn a_wave_body_with_unknown_fields_or_a_malformed_business_id_is_refused() {
    for backend in backends() {
        let fake = fake().await;
        let app = TestApp::spawn_with(backend, options_for(&fake, None, 0)).await;
        let company_id = new_company(&app, "Maritime Supplies").await;
        let connection_id = new_connection(&app, company_id, "wave").await;
        let mut extra = body(BUSINESS, 1800);
        extra["scope"] = json!("business:read");
        assert_eq!(
            authorize(&app, company_id, connection_id, &extra, false)
                .await
                .status(),
            400
        );
        let malformed = body("not a business id!", 1800);
        assert_eq!(
            authorize(&app, company_id, connection_id, &malformed, false)
                .await
                .status(),
            400
        );
        assert_eq!(count_rows(&app, "connection_credential").await, 0);
        assert!(fake.calls().is_empty());
    }
}

/// The fake holds every query to Wave's schema, as Wave does: a field Wave
/// lacks, or a variable of the wrong type, is refused with Wave's code.
#[tokio::test]
async fn the_fake_refuses_a_query_waves_schema_does_not_validate() {
    let fake = fake().await;
    let client = reqwest::Client::new();
    let misspelt = "query WaveVendors($businessId: ID!) { business(id: $businessId) { vendors(sort: [NAME_ASC]) { edges { node { id } } } } }";
    let mistyped = "query WaveBusinesses($page: Int!, $pageSize: Int!) { businesses(page: $page, pageSize: $pageSize) { edges { node { id } } } }";
    for (query, variables, says) in [
        (misspelt, json!({"businessId": BUSINESS}), "sort"),
        (mistyped, json!({"page": "1", "pageSize": 50}), "page"),
    ] {
        let answer = client
            .post(format!("{}/graphql/public", fake.url()))
            .bearer_auth(ACCESS)
            .json(&json!({"query": query, "variables": variables}))
            .send()
            .await
            .expect("the fake answers");
        assert_eq!(answer.status(), 400, "{query}");
        let body: Value = answer.json().await.expect("JSON");
        assert_eq!(
            body["errors"][0]["extensions"]["code"],
            "GRAPHQL_VALIDATION_FAILED"
        );
        let message = body["errors"][0]["message"].as_str().unwrap_or_default();
        assert!(message.contains(says), "{message}");
    }
}

/// Wave asked for the invoices modified after the first sync began, in the
/// shared scenario (`scenarios::changes`): one paid since, one new.
static CHANGES: Changed = Changed {
    data_type: "invoices",
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
            r#"{"data":{"business":{"id":"QnVzaW5lc3M6NzE1MjQ3NjEtZjYxMS00ODk0LWE3NDgtNzg3MmYwODgyNWIw","invoices":{"pageInfo":{"currentPage":1,"totalPages":0,"totalCount":0},"edges":[]}}}}"#,
        )
    },
    quiet_calls: 1,
};

changes_scenario!(CASE, CHANGES);

/// A resync of customers asks Wave for those modified after Wave's own time
/// when the first began, less five minutes: the changed customer's new
/// e-mail and the new customer are stored, the others kept as they were.
#[tokio::test]
async fn a_resync_asks_for_the_customers_modified_after_the_first() {
    for backend in backends() {
        let fake = fake().await;
        fake.with(|inner| inner.date = Some(PLATFORM_DATE.to_owned()));
        let app = TestApp::spawn_with(backend, options_for(&fake, None, 1)).await;
        let (company_id, _) = connected(&app, 1800).await;
        let first = latest(
            &sync(&app, company_id, QueueDataTypeDataType::Customers).await,
            "customers",
        );
        assert_eq!(first.fetch_mode, Some(FetchMode::Full));
        let before = list(&app, company_id, "customers").await;
        let from = fake.calls().len();
        let second = latest(
            &sync(&app, company_id, QueueDataTypeDataType::Customers).await,
            "customers",
        );
        assert_eq!(second.status, PullStatus::Complete, "{second:?}");
        assert_eq!(second.fetch_mode, Some(FetchMode::Incremental));
        let asked: Vec<Value> = fake.calls()[from..]
            .iter()
            .map(|call| graphql(call).1["modifiedAtAfter"].clone())
            .collect();
        assert_eq!(asked, [json!("2026-11-27T08:55:00Z")]);
        let after = list(&app, company_id, "customers").await;
        let names: Vec<&str> = after
            .iter()
            .filter_map(|customer| customer["customerName"].as_str())
            .collect();
        assert_eq!(
            names,
            [
                "Bedford Books",
                "Harbour Bakery",
                "Lakeside Dental",
                "Northwind Outfitters"
            ]
        );
        assert_eq!(after[1]["emailAddress"], "ap@harbourbakery.example");
        let kept = after
            .iter()
            .filter(|customer| before.contains(customer))
            .count();
        assert_eq!(
            kept, 2,
            "the customers Wave did not change are kept as they were"
        );
    }
}
