//! Stripe: invoices (with lines beyond the embedded ones) and customers over
//! several `starting_after` pages, every invoice status, minor units of
//! two-, zero- and three-decimal currencies, a token that is never refreshed
//! before use, refresh on a 401 only with a refresh token (the platform key
//! in the form body, the rotated refresh token stored), `invalid_grant`,
//! 429, 5xx, garbage, the data types Stripe lacks, and verification through
//! `GET /v1/account`. Fixtures follow the objects of
//! https://docs.stripe.com/api/invoices/object,
//! https://docs.stripe.com/api/customers/object and
//! https://docs.stripe.com/api/accounts/retrieve (see `src/platforms/stripe/NOTES.md`).
//!
//! The scenarios every platform shares (`super::scenarios`) run from its
//! `CASE`; the tests here are its own.

use std::sync::Arc;

use serde_json::{Value, json};
use uuid::Uuid;

use client::types::{FetchMode, PullStatus, QueueDataTypeDataType};

use super::fake::{Answer, Call, Fake, Scheme, fixture};
use super::scenarios::unfiltered::{Unfiltered, unfiltered_scenario};
use super::scenarios::{
    Another, Case, Cut, Errors, Pages, Refresh, Refused, Synced, Unrefreshable, Verification,
    platform_scenarios, records,
};
use super::{authorize, latest, options_for, sync};
use crate::connections::{new_company, new_connection};
use crate::helpers::{TestApp, backends};

pub(crate) const ACCOUNT: &str = "acct_1Nv0FGQ9RKHgCVdK";
const ACCESS: &str = "sk_test_stripe-connect-access-0001";
const REFRESH: &str = "rt_stripe-connect-refresh-0001";
/// Records per page in these tests (Stripe's own maximum is 100).
const PAGE: u64 = 3;

/// The page of `resource` after `starting_after` (the fixtures hold three
/// pages of invoices and two of customers, `PAGE` records each).
fn page(resource: &str, call: &Call) -> Answer {
    let number = match (
        resource,
        call.query.get("starting_after").map(String::as_str),
    ) {
        (_, None) => 1,
        ("invoices", Some("in_3Part"))
        | ("customers", Some("cus_3"))
        | ("charges", Some("ch_4Fail")) => 2,
        ("invoices", Some("in_6Void")) => 3,
        _ => return Answer::json(400, fixture("stripe/fixtures/not-found.json")),
    };
    Answer::json(
        200,
        fixture(&format!("stripe/fixtures/{resource}-{number}.json")),
    )
}

/// Serves the Stripe fixtures.
fn router() -> super::fake::Router {
    Arc::new(|call: &Call| match call.path.as_str() {
        "/v1/account" => Answer::json(200, fixture("stripe/fixtures/account.json")),
        "/v1/invoices" => page("invoices", call),
        "/v1/customers" => page("customers", call),
        "/v1/charges" => page("charges", call),
        "/v1/refunds" => page("refunds", call),
        "/v1/invoices/in_4Paid/lines"
            if call.query.get("starting_after").map(String::as_str) == Some("il_4a") =>
        {
            Answer::json(200, fixture("stripe/fixtures/in_4Paid-lines.json"))
        }
        _ => Answer::json(404, fixture("stripe/fixtures/not-found.json")),
    })
}

pub(crate) async fn fake() -> Fake {
    let fake = Fake::start(
        "stripe",
        Scheme::Bearer,
        ACCESS,
        REFRESH,
        fixture("stripe/fixtures/unauthorized.json"),
        router(),
    )
    .await;
    // Stripe takes the platform's secret key as the `client_secret` form field.
    fake.with(|inner| inner.client_in_body = true);
    fake
}

/// A Connect body: the account, its access token and, when given, its
/// refresh token. Connect tokens carry no expiry.
fn body(account: &str, refresh: Option<&str>) -> Value {
    let mut body = json!({"stripeUserId": account, "accessToken": ACCESS});
    if let Some(refresh) = refresh {
        body["refreshToken"] = json!(refresh);
    }
    body
}

/// A company with an authorized Stripe connection.
async fn connected(app: &TestApp, refresh: Option<&str>) -> (Uuid, Uuid) {
    let company_id = new_company(app, "Acme Supplies").await;
    let connection_id = new_connection(app, company_id, "stripe").await;
    let response = authorize(
        app,
        company_id,
        connection_id,
        &body(ACCOUNT, refresh),
        false,
    )
    .await;
    assert_eq!(response.status(), 200);
    (company_id, connection_id)
}

fn by_id<'a>(records: &'a [Value], field: &str, id: &str) -> &'a Value {
    records
        .iter()
        .find(|record| record[field] == id)
        .unwrap_or_else(|| panic!("{id} synced"))
}

/// Stripe in the shared scenarios: Connect tokens carry no expiry, so they
/// are refreshed only after a 401, and only with a refresh token.
static CASE: Case = Case {
    key: "stripe",
    name: "Stripe",
    fake: || Box::pin(fake()),
    page_size: Some(PAGE),
    authorization: |_| body(ACCOUNT, Some(REFRESH)),
    access: ACCESS,
    refresh: REFRESH,
    lasting: 3600,
    kept: &["stripeUserId"],
    sync: Synced {
        data_type: "customers",
        records: 4,
        calls: 2,
    },
    syncs: &["invoices", "customers", "payments", "companyInfo"],
    errors: Errors {
        rate_limited: r#"{"error":{"code":"rate_limit","message":"Too many requests hit the API too quickly.","type":"invalid_request_error"}}"#,
        rate_limit_headers: &[],
        rate_limited_says: "",
        server_error: r#"{"error":{"message":"An unknown error occurred","type":"api_error"}}"#,
        unavailable: (
            503,
            r#"{"error":{"message":"Stripe is temporarily unavailable","type":"api_error"}}"#,
        ),
        unavailable_says: "Stripe answered 503 Service Unavailable: Stripe is temporarily unavailable",
        refused: Refused::Scope {
            status: 403,
            body: r#"{"error":{"message":"The provided key does not have the required permissions for this endpoint on this account.","type":"invalid_request_error"}}"#,
            says: "Stripe answered 403 Forbidden: The provided key does not have the required permissions",
        },
    },
    pages: Pages {
        prelude: |_| Vec::new(),
        first: |_| Answer::json(200, fixture("stripe/fixtures/customers-1.json")),
        cut: Cut::SecondPage,
        truncated: r#"{"object": "list", "data": [{"id": "cus_9", "email": "x"#,
        truncated_says: "",
        records_at: "/data",
        id_at: "/id",
        field: "/email",
    },
    refresh_with: Some(Refresh {
        before_expiry: false,
        invalid_grant_says: &["Stripe"],
        ..Refresh::ROTATING
    }),
    // A revoked token without a refresh token.
    unrefreshable: Some(Unrefreshable {
        authorization: || body(ACCOUNT, None),
        says: &["Stripe answered 401", "Invalid API Key"],
    }),
    verification: Verification {
        rejected_says: &["Invalid API Key provided"],
        // A working token, but for another connected account.
        another_account: Some(Another {
            authorization: || body("acct_someoneElse42", None),
            says: &["acct_someoneElse42", ACCOUNT],
        }),
        verified_by: |calls| {
            calls
                .last()
                .is_some_and(|call| call.path == "/v1/account" && call.token == ACCESS)
        },
    },
    unknown_account: None,
};

platform_scenarios!(CASE, refreshes, unrefreshable);

/// Stripe resynced, in the shared scenario of the platforms without a
/// modified-since filter (`scenarios::unfiltered`).
static UNFILTERED: Unfiltered = Unfiltered {
    why: "lists filter only on `created` (finds new records, never changed ones); Events need a permission not confirmed for `read_only` tokens",
    mode: FetchMode::Full,
    resync_calls: 2,
    quiet: None,
};

unfiltered_scenario!(CASE, UNFILTERED);

#[tokio::test]
async fn stripe_invoices_and_customers_sync_over_every_page_with_every_status_and_exact_minor_units()
 {
    for backend in backends() {
        let fake = fake().await;
        let app = TestApp::spawn_with(backend, options_for(&fake, Some(PAGE), 2)).await;
        let (company_id, _) = connected(&app, None).await;
        let operations = sync(&app, company_id, QueueDataTypeDataType::Invoices).await;
        let operation = latest(&operations, "invoices");
        assert_eq!(operation.status, PullStatus::Complete, "{operation:?}");
        let operations = sync(&app, company_id, QueueDataTypeDataType::Customers).await;
        assert_eq!(
            latest(&operations, "customers").status,
            PullStatus::Complete
        );

        let invoices = records(&app, company_id, "invoices").await;
        assert_eq!(invoices.len(), 7, "{invoices:#?}");
        let invoice = |id| by_id(&invoices, "invoiceId", id);
        // Every status Stripe has.
        for (id, status) in [
            ("in_1Draft", "Draft"),
            ("in_2Open", "Submitted"),
            ("in_3Part", "PartiallyPaid"),
            ("in_4Paid", "Paid"),
            ("in_5Uncl", "Submitted"),
            ("in_6Void", "Void"),
            ("in_7Kwd", "Paid"),
        ] {
            assert_eq!(invoice(id)["status"], status, "{id}");
        }
        // Newest issue date first.
        assert_eq!(invoices[0]["invoiceId"], "in_1Draft");
        let draft = invoice("in_1Draft");
        assert_eq!(draft["invoiceNumber"], Value::Null);
        assert_eq!(draft["issueDate"], "2026-10-20");

        let open = invoice("in_2Open");
        assert_eq!(open["invoiceNumber"], "ACME-0002");
        assert_eq!(open["currency"], "USD");
        assert_eq!(open["subTotal"], "939.84");
        assert_eq!(open["totalTaxAmount"], "187.97");
        assert_eq!(open["totalAmount"], "1127.81");
        assert_eq!(open["amountDue"], "1127.81");
        assert_eq!(open["issueDate"], "2026-10-03");
        assert_eq!(open["dueDate"], "2026-11-02");
        assert_eq!(open["paidOnDate"], Value::Null);
        assert_eq!(open["note"], "Thank you for your business.");
        assert_eq!(open["sourceModifiedDate"], Value::Null);
        assert_eq!(open["customerRef"]["id"], "cus_1");
        assert_eq!(open["customerRef"]["companyName"], "Acme Trading Ltd");
        let line = &open["lineItems"][0];
        assert_eq!(line["description"], "Design work");
        assert_eq!(line["unitAmount"], "93.984");
        assert_eq!(line["quantity"], "10");
        assert_eq!(line["subTotal"], "939.84");
        assert_eq!(line["taxAmount"], "187.97");
        assert_eq!(line["totalAmount"], "1127.81");

        let part_paid = invoice("in_3Part");
        assert_eq!(part_paid["currency"], "EUR");
        assert_eq!(part_paid["totalAmount"], "1234.56");
        assert_eq!(part_paid["amountDue"], "1000.00");

        // Yen have no minor unit: 5500 is ¥5,500. Its third line came from
        // the invoice's own lines list.
        let yen = invoice("in_4Paid");
        assert_eq!(yen["currency"], "JPY");
        assert_eq!(yen["totalAmount"], "5500.00");
        assert_eq!(yen["subTotal"], "5000.00");
        assert_eq!(yen["totalTaxAmount"], "500.00");
        assert_eq!(yen["amountDue"], "0.00");
        assert_eq!(yen["paidOnDate"], "2026-08-20");
        assert_eq!(yen["customerRef"]["id"], "cus_2");
        assert_eq!(yen["customerRef"]["companyName"], Value::Null);
        let lines = yen["lineItems"].as_array().expect("lines");
        let descriptions: Vec<&str> = lines
            .iter()
            .filter_map(|line| line["description"].as_str())
            .collect();
        assert_eq!(descriptions, ["Green tea", "Matcha", "Tea cups"]);
        assert_eq!(lines[0]["unitAmount"], "1000.00");
        assert_eq!(lines[0]["quantity"], "2");
        assert_eq!(lines[0]["taxAmount"], "500.00");
        assert_eq!(lines[0]["totalAmount"], "2500.00");
        assert_eq!(lines[2]["discountAmount"], "100.00");

        // No `tax` field (as in newer API versions): total less total excluding tax.
        let uncollectible = invoice("in_5Uncl");
        assert_eq!(uncollectible["totalTaxAmount"], "10.00");
        assert_eq!(uncollectible["subTotal"], "40.00");
        assert_eq!(uncollectible["amountDue"], "50.00");
        assert_eq!(invoice("in_6Void")["lineItems"], json!([]));
        // Dinars have three decimals: 5120 is 5.120 KWD.
        let dinar = invoice("in_7Kwd");
        assert_eq!(dinar["totalAmount"], "5.12");
        assert_eq!(dinar["paidOnDate"], "2026-04-02");
        assert_eq!(dinar["issueDate"], "2026-04-01");

        let customers = records(&app, company_id, "customers").await;
        assert_eq!(customers.len(), 4, "{customers:#?}");
        let customer = |id| by_id(&customers, "customerId", id);
        let acme = customer("cus_1");
        assert_eq!(acme["customerName"], "Acme Trading Ltd");
        assert_eq!(acme["emailAddress"], "accounts@acme.example");
        assert_eq!(acme["phone"], "+1 555 0100");
        assert_eq!(acme["defaultCurrency"], "USD");
        assert_eq!(acme["status"], "Active");
        // Unnamed customers go by their email, else their id.
        assert_eq!(customer("cus_2")["customerName"], "jane@doe.example");
        assert_eq!(customer("cus_2")["defaultCurrency"], "JPY");
        assert_eq!(customer("cus_3")["customerName"], "cus_3");
        assert_eq!(customer("cus_3")["emailAddress"], Value::Null);
        assert_eq!(customer("cus_4")["customerName"], "Zeta GmbH");

        let calls = fake.calls();
        assert!(calls.iter().all(|call| call.token == ACCESS));
        assert!(calls.iter().all(|call| {
            call.headers.get("stripe-version").map(String::as_str) == Some("2024-06-20")
                && !call.headers.contains_key("stripe-account")
        }));
        let cursors = |path: &str| -> Vec<(String, Option<String>)> {
            calls
                .iter()
                .filter(|call| call.path == path)
                .map(|call| {
                    (
                        call.query.get("limit").cloned().unwrap_or_default(),
                        call.query.get("starting_after").cloned(),
                    )
                })
                .collect()
        };
        assert_eq!(
            cursors("/v1/invoices"),
            [
                ("3".to_owned(), None),
                ("3".to_owned(), Some("in_3Part".to_owned())),
                ("3".to_owned(), Some("in_6Void".to_owned())),
            ]
        );
        assert_eq!(
            cursors("/v1/invoices/in_4Paid/lines"),
            [("3".to_owned(), Some("il_4a".to_owned()))]
        );
        assert_eq!(
            cursors("/v1/customers"),
            [
                ("3".to_owned(), None),
                ("3".to_owned(), Some("cus_3".to_owned())),
            ]
        );
        assert_eq!(
            fake.token_calls(),
            0,
            "a Connect token is never refreshed before use"
        );
    }
}

/// Stripe's schema makes a line's `discount_amounts` and `tax_amounts`
/// nullable: `null` reads as none, and the rest of the page and the sync
/// are stored (it used to fail the whole invoices sync, keeping old data).
#[tokio::test]
async fn stripe_lines_whose_amount_lists_are_null_read_as_none() {
    for backend in backends() {
        let fake = fake().await;
        let app = TestApp::spawn_with(backend, options_for(&fake, Some(PAGE), 1)).await;
        let (company_id, _) = connected(&app, None).await;
        let mut first: Value =
            serde_json::from_str(&fixture("stripe/fixtures/invoices-1.json")).expect("JSON");
        first["data"][0]["lines"]["data"][0]["tax_amounts"] = Value::Null;
        first["data"][1]["lines"]["data"][0]["discount_amounts"] = Value::Null;
        fake.with(|inner| {
            inner
                .scripted
                .push_back(Answer::json(200, first.to_string()))
        });
        let operations = sync(&app, company_id, QueueDataTypeDataType::Invoices).await;
        let operation = latest(&operations, "invoices");
        assert_eq!(operation.status, PullStatus::Complete, "{operation:?}");
        let invoices = records(&app, company_id, "invoices").await;
        assert_eq!(invoices.len(), 7);
        let draft = &by_id(&invoices, "invoiceId", "in_1Draft")["lineItems"][0];
        assert_eq!(draft["taxAmount"], "0.00");
        let open = &by_id(&invoices, "invoiceId", "in_2Open")["lineItems"][0];
        assert_eq!(open["discountAmount"], "0.00");
        assert_eq!(open["taxAmount"], "187.97");
    }
}

/// Payments are the succeeded charges over every page (a pending and a
/// failed one left out), each allocated to the invoice it paid, in its
/// currency's minor unit, then the succeeded refunds as negative payments
/// allocated to their charge; what each invoice shows paid is what the
/// charges settle. Company info is the account: its public name, legal
/// name, registered and support addresses, no tax numbers (Stripe returns
/// none).
#[tokio::test]
async fn stripe_payments_are_its_charges_and_refunds_and_its_account_is_the_company() {
    use super::ledger_reads::{amount, columns, settled, synced};
    for backend in backends() {
        let fake = fake().await;
        let app = TestApp::spawn_with(backend, options_for(&fake, Some(PAGE), 2)).await;
        let (company_id, _) = connected(&app, None).await;
        synced(
            &app,
            company_id,
            &[
                QueueDataTypeDataType::Invoices,
                QueueDataTypeDataType::Payments,
                QueueDataTypeDataType::CompanyInfo,
            ],
        )
        .await;

        let payments = records(&app, company_id, "payments").await;
        assert_eq!(
            columns(
                &payments,
                &[
                    "/paymentId",
                    "/date",
                    "/currency",
                    "/totalAmount",
                    "/customerRef/id",
                    "/allocations/0/type",
                    "/allocations/0/id"
                ]
            ),
            [
                [
                    "re_1Jpy",
                    "2024-10-22",
                    "JPY",
                    "-500.00",
                    "-",
                    "Other",
                    "ch_2Jpy"
                ],
                ["ch_5Shop", "2024-10-20", "USD", "20.00", "-", "-", "-"],
                [
                    "ch_3Kwd",
                    "2024-10-17",
                    "KWD",
                    "5.12",
                    "cus_1",
                    "Invoice",
                    "in_7Kwd"
                ],
                [
                    "ch_2Jpy",
                    "2024-10-16",
                    "JPY",
                    "5500.00",
                    "cus_2",
                    "Invoice",
                    "in_4Paid"
                ],
                [
                    "ch_1Eur",
                    "2024-10-15",
                    "EUR",
                    "234.56",
                    "cus_4",
                    "Invoice",
                    "in_3Part"
                ],
            ]
        );
        assert_eq!(payments[1]["reference"], "1405-3322");
        let invoices = records(&app, company_id, "invoices").await;
        for invoice in invoices
            .iter()
            .filter(|invoice| invoice["status"] != "Void" && invoice["status"] != "Draft")
        {
            let paid = amount(&invoice["totalAmount"]) - amount(&invoice["amountDue"]);
            assert_eq!(
                settled(&payments, "Invoice", &invoice["invoiceId"]),
                paid,
                "{invoice}"
            );
        }
        let lists: Vec<(String, Option<String>)> = fake
            .calls()
            .iter()
            .filter(|call| call.path == "/v1/charges" || call.path == "/v1/refunds")
            .map(|call| (call.path.clone(), call.query.get("starting_after").cloned()))
            .collect();
        assert_eq!(
            lists,
            [
                ("/v1/charges".to_owned(), None),
                ("/v1/charges".to_owned(), Some("ch_4Fail".to_owned())),
                ("/v1/refunds".to_owned(), None),
            ]
        );

        let company = records(&app, company_id, "companyInfo").await;
        assert_eq!(
            columns(
                &company,
                &[
                    "/companyInfoId",
                    "/companyName",
                    "/legalName",
                    "/baseCurrency",
                    "/phone",
                    "/website",
                    "/taxNumber",
                    "/createdDate"
                ]
            ),
            [[
                ACCOUNT,
                "Acme Supplies Inc.",
                "Acme Supplies Incorporated",
                "USD",
                "+14155550199",
                "https://acme.example",
                "-",
                "2023-09-27T16:05:51.000000Z"
            ]]
        );
        assert_eq!(
            columns(
                company[0]["addresses"].as_array().expect("addresses"),
                &["/type", "/line1", "/city", "/region", "/country"]
            ),
            [
                ["Registered", "1 Market St", "San Francisco", "CA", "US"],
                ["Street", "500 Broadway", "Oakland", "CA", "US"],
            ]
        );
    }
}
