//! PayPal's answers as its Invoicing v2 OpenAPI document describes them
//! (`tests/contracts/paypal.json`), read as the connector reads them, from
//! the bodies `kit::openapi_contract` makes from the schemas (`NOTES.md`,
//! "Contract").

use serde_json::{Value, json};

use super::mapping::{InvoicesPage, PayPalInvoice};
use crate::data::invoices::{Invoice, InvoiceStatus};
use crate::data::payments::Payment;
use crate::platforms::kit::openapi_contract::{
    Answer, Bodies, Document, NEW_VALUE, Needed, hold, set,
};
use crate::platforms::kit::records::{self, Read};

/// A page of the invoice list as `Syncs<Invoices>::page` reads it: the
/// summaries, each only for its id.
fn summaries(text: &str) -> Result<Read<String>, String> {
    let page: InvoicesPage = serde_json::from_str(text).map_err(|e| e.to_string())?;
    Ok(page.items.read(|summary| Ok(Some(summary.id))))
}

/// One invoice (`GET /v2/invoicing/invoices/{id}`) as `Syncs<Invoices>::page`
/// reads it: `records::single`, then `into_record`.
fn invoice(text: &str) -> Result<Read<Invoice>, String> {
    let answer: Box<serde_json::value::RawValue> =
        serde_json::from_str(text).map_err(|e| e.to_string())?;
    let mut read = Read::default();
    match records::single::<PayPalInvoice>(&answer) {
        Ok((invoice, named)) => match invoice.into_record() {
            Ok(record) => read.records.push(record),
            Err(problem) => read.issues.push(named.issue(problem)),
        },
        Err(issue) => read.issues.push(issue),
    }
    Ok(read)
}

/// The bodies of `answer`, an item's `quantity` as PayPal's description
/// says it is: its schema types it as any `string` up to 14 characters, "from
/// `-1000000` to `1000000`. Supports up to five decimal places."
fn paypal_bodies(answer: &Answer<'_>) -> Bodies {
    let mut bodies = answer.bodies();
    bodies.set_every("quantity", &json!("1.5"));
    bodies
}

#[test]
fn every_invoice_list_answer_paypals_document_allows_is_read() {
    let document = Document::load("paypal.json");
    let answer = document.answer("GET", "/v2/invoicing/invoices");
    let needed = [Needed {
        place: "items.0.id",
        field: "id",
        why: "each invoice is fetched by its id (PayPal marks it read-only, not required)",
    }];
    hold(&answer, &answer.bodies(), summaries, &needed);
}

#[test]
fn every_invoice_answer_paypals_document_allows_is_read() {
    let document = Document::load("paypal.json");
    let answer = document.answer("GET", "/v2/invoicing/invoices/{invoice_id}");
    let needed = [
        Needed {
            place: "id",
            field: "id",
            why: "an invoice is kept under its id (PayPal marks it read-only, not required)",
        },
        Needed {
            place: "detail.invoice_date",
            field: "detail.invoice_date",
            why: "our invoice has an issue date: detail.invoice_date, else the date of \
                  detail.metadata.create_time; PayPal marks neither required (the invoice date \
                  defaults to the day it is created, and the metadata is read-only)",
        },
    ];
    hold(&answer, &paypal_bodies(&answer), invoice, &needed);
}

#[test]
fn every_invoice_status_of_paypals_document_maps_and_a_new_word_is_unknown() {
    let document = Document::load("paypal.json");
    let bodies = paypal_bodies(&document.answer("GET", "/v2/invoicing/invoices/{invoice_id}"));
    let (at, values) = bodies.enum_at("status");
    let status = |value: Value| {
        let mut body = bodies.full[0].clone();
        set(&mut body, &at, value);
        let mut read = invoice(&body.to_string()).expect("the answer reads");
        assert!(read.issues.is_empty(), "{:?}", read.issues);
        read.records.remove(0).status
    };
    for value in values {
        assert_ne!(status(value.clone()), InvoiceStatus::Unknown, "{value}");
    }
    assert_eq!(status(json!(NEW_VALUE)), InvoiceStatus::Unknown);
}

/// One invoice as `Syncs<Payments>::page` reads it: its payments and
/// refunds, or the invoice's issue.
fn payments(text: &str) -> Result<Read<Payment>, String> {
    let answer: Box<serde_json::value::RawValue> =
        serde_json::from_str(text).map_err(|e| e.to_string())?;
    let mut read = Read::default();
    match records::single::<PayPalInvoice>(&answer) {
        Ok((invoice, named)) => match invoice.into_payments() {
            Ok(found) => read.records.extend(found),
            Err(problem) => read.issues.push(named.issue(problem)),
        },
        Err(issue) => read.issues.push(issue),
    }
    Ok(read)
}

/// Every invoice the document allows reads as payments with no issue (one
/// invoice gives many payments or none, so `hold`'s one-record bodies do
/// not fit): a full body has its payment and its refund, each allocated
/// to the invoice; a body without transactions has none.
#[test]
fn every_invoice_answer_paypals_document_allows_is_read_as_its_payments() {
    let document = Document::load("paypal.json");
    let answer = document.answer("GET", "/v2/invoicing/invoices/{invoice_id}");
    let bodies = paypal_bodies(&answer);
    for (name, body) in bodies.complete() {
        let read = payments(&body.to_string()).unwrap_or_else(|error| panic!("{name}: {error}"));
        assert!(
            read.issues.is_empty(),
            "{name}: {:?}\n{body:#}",
            read.issues
        );
        let transactions = ["payments", "refunds"]
            .iter()
            .map(|list| body[list]["transactions"].as_array().map_or(0, Vec::len))
            .sum::<usize>();
        assert_eq!(read.records.len(), transactions, "{name}");
        for payment in &read.records {
            assert_eq!(payment.allocations.len(), 1, "{name}");
            assert_eq!(
                Some(&payment.allocations[0].id),
                body["id"].as_str().map(str::to_owned).as_ref()
            );
            assert_eq!(payment.allocated(), payment.total_amount, "{name}");
        }
    }
    assert!(
        bodies.full.iter().all(|body| payments(&body.to_string())
            .is_ok_and(|read| read.records.iter().any(|p| p.total_amount.0 < 0))),
        "a full body has a refund"
    );
    // Without its `id` (read-only, not required) an invoice is an issue,
    // as for invoices; nothing else is.
    for (name, body) in [("minimal", &bodies.minimal), ("bare", &bodies.bare)] {
        let read = payments(&body.to_string()).unwrap_or_else(|error| panic!("{name}: {error}"));
        let fields: Vec<Option<&str>> = read.issues.iter().map(|i| i.field.as_deref()).collect();
        assert!(
            fields.iter().all(|field| *field == Some("id")),
            "{name}: {:?}",
            read.issues
        );
    }
}
