//! `GET /companies/{companyId}/data/{dataType}/{recordId}`: one synced
//! record by its platform id, exactly as its list shows it, for every data
//! type; and the answers for what is not there.

use serde_json::json;
use uuid::Uuid;

use crate::connections::new_company;
use crate::helpers::{TestApp, answer, basic, for_each_database, json};
use crate::sync::{authorized_sandbox, sync_and_settle as sync};

/// The lists whose records can be fetched one by one, and their id fields.
const LISTS: [(&str, &str); 15] = [
    ("invoices", "invoiceId"),
    ("customers", "customerId"),
    ("orders", "orderId"),
    ("bankAccounts", "accountId"),
    ("bankTransactions", "transactionId"),
    ("accounts", "accountId"),
    ("suppliers", "supplierId"),
    ("taxRates", "taxRateId"),
    ("bills", "billId"),
    ("payments", "paymentId"),
    ("billPayments", "billPaymentId"),
    ("creditNotes", "creditNoteId"),
    ("items", "itemId"),
    ("companyInfo", "companyInfoId"),
    ("journalEntries", "journalEntryId"),
];

/// A sandbox connection of the company with a little of every data type,
/// authorized with `seed` (the same seed gives the same record ids).
async fn sandbox_of_everything(app: &TestApp, company_id: Uuid, seed: u64) -> Uuid {
    authorized_sandbox(
        app,
        company_id,
        json!({
            "organizationId": format!("sbx-{seed}"), "accessToken": "tok",
            "invoiceCount": 40, "orderCount": 30, "bankTransactionCount": 25, "seed": seed,
        }),
    )
    .await
}

#[tokio::test]
async fn every_record_of_every_list_is_readable_alone_exactly_as_listed() {
    for_each_database(async |app| {
        let company_id = new_company(app, "One By One Ltd").await;
        sandbox_of_everything(app, company_id, 21).await;
        sync(app, company_id).await;
        for (list, id_field) in LISTS {
            let (status, page) = answer(
                app,
                &format!("/companies/{company_id}/data/{list}?pageSize=5000"),
            )
            .await;
            assert_eq!(status, 200, "{list}: {page}");
            let records = page["results"].as_array().expect("results");
            assert!(!records.is_empty(), "{list}");
            for record in records {
                let id = record[id_field].as_str().expect("an id");
                let encoded: String = url::form_urlencoded::byte_serialize(id.as_bytes()).collect();
                let (status, alone) = answer(
                    app,
                    &format!("/companies/{company_id}/data/{list}/{encoded}"),
                )
                .await;
                assert_eq!(status, 200, "{list}/{id}: {alone}");
                assert_eq!(&alone, record, "{list}/{id}");
            }
        }
    })
    .await;
}

#[tokio::test]
async fn an_unknown_id_is_404_and_bad_ids_are_400_with_the_usual_body() {
    for_each_database(async |app| {
        let company_id = new_company(app, "Missing Things Ltd").await;
        sandbox_of_everything(app, company_id, 22).await;
        sync(app, company_id).await;
        let base = format!("/companies/{company_id}/data/invoices");

        // An id with a slash and a space, percent-encoded: one segment.
        let (status, body) = answer(app, &format!("{base}/no%2Fsuch%20invoice")).await;
        assert_eq!(status, 404, "{body}");
        let message = body["error"].as_str().expect("a message");
        assert!(
            message.contains("has the id `no/such invoice`"),
            "{message}"
        );
        assert!(body["correlationId"].is_string(), "{body}");

        let long = "x".repeat(257);
        let (status, body) = answer(app, &format!("{base}/{long}")).await;
        assert_eq!(status, 400, "{body}");
        assert_eq!(
            body["validation"]["errors"][0]["itemId"], "invoiceId",
            "{body}"
        );

        let (status, body) = answer(app, &format!("{base}/a%00b")).await;
        assert_eq!(status, 400, "{body}");
        assert_eq!(
            body["validation"]["errors"][0]["itemId"], "invoiceId",
            "{body}"
        );

        let (status, body) = answer(app, &format!("{base}/x?connectionId=nope")).await;
        assert_eq!(status, 400, "{body}");
        assert_eq!(
            body["validation"]["errors"][0]["itemId"], "connectionId",
            "{body}"
        );

        let (status, body) = answer(app, "/companies/not-a-uuid/data/invoices/x").await;
        assert_eq!(status, 400, "{body}");
        assert_eq!(
            body["validation"]["errors"][0]["itemId"], "companyId",
            "{body}"
        );

        // A known id of another list is not an invoice.
        let (_, accounts) =
            answer(app, &format!("/companies/{company_id}/data/bankAccounts")).await;
        let account_id = accounts["results"][0]["accountId"].as_str().expect("an id");
        let (status, body) = answer(app, &format!("{base}/{account_id}")).await;
        assert_eq!(status, 404, "{body}");

        let unknown = Uuid::now_v7();
        let (status, body) = answer(app, &format!("/companies/{unknown}/data/invoices/x")).await;
        assert_eq!(status, 404, "{body}");
    })
    .await;
}

#[tokio::test]
async fn another_tenants_record_is_404_and_nothing_synced_yet_is_409() {
    for_each_database(async |app| {
        let company_id = new_company(app, "Private Books Ltd").await;
        sandbox_of_everything(app, company_id, 23).await;

        // Before any sync: the list's answer, with its remedy.
        let (status, body) = answer(
            app,
            &format!("/companies/{company_id}/data/invoices/whatever"),
        )
        .await;
        assert_eq!(status, 409, "{body}");
        assert!(
            body["error"]
                .as_str()
                .is_some_and(|message| message.contains("POST /companies/")),
            "{body}"
        );

        sync(app, company_id).await;
        let (_, page) = answer(app, &format!("/companies/{company_id}/data/invoices")).await;
        let id = page["results"][0]["invoiceId"]
            .as_str()
            .expect("an id")
            .to_owned();
        let path = format!("/companies/{company_id}/data/invoices/{id}");
        assert_eq!(answer(app, &path).await.0, 200);

        let (other_key, _) = app.other_tenant("someone-else").await;
        let response = app
            .raw()
            .get(app.url(&path))
            .header("authorization", basic(&other_key))
            .send()
            .await
            .expect("answered");
        assert_eq!(response.status(), 404);
        let body = json(response).await;
        assert!(
            !body
                .to_string()
                .contains(&format!("\"invoiceId\":\"{id}\"")),
            "{body}"
        );

        let response = app
            .raw()
            .get(app.url(&path))
            .send()
            .await
            .expect("answered");
        assert_eq!(response.status(), 401);
    })
    .await;
}

#[tokio::test]
async fn an_id_held_by_two_connections_is_409_naming_them_until_connection_id_picks_one() {
    for_each_database(async |app| {
        let company_id = new_company(app, "Twice Synced Ltd").await;
        // The same seed: both connections hold the same ids.
        let first = sandbox_of_everything(app, company_id, 24).await;
        let second = sandbox_of_everything(app, company_id, 24).await;
        sync(app, company_id).await;
        let (_, page) = answer(app, &format!("/companies/{company_id}/data/orders")).await;
        let id = page["results"][0]["orderId"]
            .as_str()
            .expect("an id")
            .to_owned();
        let path = format!("/companies/{company_id}/data/orders/{id}");

        let (status, body) = answer(app, &path).await;
        assert_eq!(status, 409, "{body}");
        let message = body["error"].as_str().expect("a message");
        assert!(
            message.contains(&first.to_string()) && message.contains(&second.to_string()),
            "{message}"
        );
        assert!(message.contains("connectionId"), "{message}");

        for connection_id in [first, second] {
            let (status, body) = answer(app, &format!("{path}?connectionId={connection_id}")).await;
            assert_eq!(status, 200, "{body}");
            assert_eq!(body["orderId"], id.as_str());
            assert_eq!(body["connectionId"], connection_id.to_string());
        }

        let stranger = Uuid::now_v7();
        let (status, body) = answer(app, &format!("{path}?connectionId={stranger}")).await;
        assert_eq!(status, 404, "{body}");
    })
    .await;
}
