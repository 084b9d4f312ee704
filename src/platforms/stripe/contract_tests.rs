//! Stripe's answers as its OpenAPI document describes them
//! (`tests/contracts/stripe.json`, API version 2023-08-16: we pin
//! 2024-06-20, `NOTES.md`, "Contract"), read as the connector reads them,
//! from the bodies `kit::openapi_contract` makes from the schemas.

use serde_json::{Value, json};

use super::mapping::{Account, List, StripeCustomer, StripeInvoice, StripeLine};
use super::money_in::{StripeAccount, StripeCharge, StripeRefund};
use crate::data::company_info::CompanyInfo;
use crate::data::customers::Customer;
use crate::data::invoices::{Invoice, InvoiceStatus, LineItem};
use crate::data::payments::Payment;
use crate::platforms::kit::openapi_contract::{Document, NEW_VALUE, Needed, hold, set, whole};
use crate::platforms::kit::records::Read;

/// A page of invoices as `Syncs<Invoices>::page` reads it, each invoice
/// with its embedded lines (the connector fetches more only when Stripe
/// says `has_more`, which `every_lines_answer_...` covers).
fn invoices(text: &str) -> Result<Read<Invoice>, String> {
    let page: List<StripeInvoice> = serde_json::from_str(text).map_err(|e| e.to_string())?;
    let mut read = Read::default();
    for entry in page.data.entries() {
        let (mut invoice, named) = match entry {
            Ok(readable) => readable,
            Err(issue) => {
                read.issues.push(issue);
                continue;
            }
        };
        let lines = match invoice.lines.take() {
            Some(lines) => lines.data.all("lines.data"),
            None => Ok(Vec::new()),
        };
        match lines.and_then(|lines| invoice.into_record(lines)) {
            Ok(record) => read.records.push(record),
            Err(problem) => read.issues.push(named.issue(problem)),
        }
    }
    Ok(read)
}

/// A page of an invoice's lines, each line as `into_record` reads it.
fn lines(text: &str) -> Result<Read<LineItem>, String> {
    let page: List<StripeLine> = serde_json::from_str(text).map_err(|e| e.to_string())?;
    Ok(page.data.read(|line| line.into_line("usd").map(Some)))
}

/// A page of customers as `Syncs<Customers>::page` reads it.
fn customers(text: &str) -> Result<Read<Customer>, String> {
    let page: List<StripeCustomer> = serde_json::from_str(text).map_err(|e| e.to_string())?;
    Ok(page.data.read(|customer| Ok(Some(customer.into_record()))))
}

const INVOICE_ID: Needed = Needed {
    place: "data.0.id",
    field: "id",
    why: "an invoice is kept under its id; Stripe leaves `id` out of `required` because an \
          upcoming (preview) invoice has none, and no list returns one",
};

#[test]
fn every_invoices_answer_stripes_document_allows_is_read() {
    let document = Document::load("stripe.json");
    let answer = document.answer("GET", "/v1/invoices");
    hold(&answer, &answer.bodies(), invoices, &[INVOICE_ID]);
}

#[test]
fn every_lines_answer_stripes_document_allows_is_read() {
    let document = Document::load("stripe.json");
    let answer = document.answer("GET", "/v1/invoices/{invoice}/lines");
    hold(&answer, &answer.bodies(), lines, &[]);
}

#[test]
fn every_customers_answer_stripes_document_allows_is_read() {
    let document = Document::load("stripe.json");
    let answer = document.answer("GET", "/v1/customers");
    hold(&answer, &answer.bodies(), customers, &[]);
}

#[test]
fn every_account_answer_stripes_document_allows_is_read() {
    let document = Document::load("stripe.json");
    let answer = document.answer("GET", "/v1/account");
    let needed = [Needed {
        place: "id",
        field: "id",
        why: "verify compares the account's id with stripeUserId",
    }];
    hold(&answer, &answer.bodies(), whole::<Account>, &needed);
}

#[test]
fn every_invoice_status_of_stripes_document_maps_and_a_new_word_is_unknown() {
    let document = Document::load("stripe.json");
    let bodies = document.answer("GET", "/v1/invoices").bodies();
    let (at, values) = bodies.enum_at("data.0.status");
    let status = |value: Value| {
        let mut body = bodies.full[0].clone();
        set(&mut body, &at, value);
        let mut read = invoices(&body.to_string()).expect("the page reads");
        assert!(read.issues.is_empty(), "{:?}", read.issues);
        read.records.remove(0).status
    };
    for value in values {
        assert_ne!(status(value.clone()), InvoiceStatus::Unknown, "{value}");
    }
    assert_eq!(status(json!(NEW_VALUE)), InvoiceStatus::Unknown);
}

/// A page of charges as `Syncs<Payments>::page` reads it.
fn charges(text: &str) -> Result<Read<Payment>, String> {
    let page: List<StripeCharge> = serde_json::from_str(text).map_err(|e| e.to_string())?;
    Ok(page.data.read(|charge| {
        if charge.is_money_in() {
            charge.into_record().map(Some)
        } else {
            Ok(None)
        }
    }))
}

/// A page of refunds as `Syncs<Payments>::page` reads it.
fn refunds(text: &str) -> Result<Read<Payment>, String> {
    let page: List<StripeRefund> = serde_json::from_str(text).map_err(|e| e.to_string())?;
    Ok(page.data.read(|refund| {
        if refund.is_money_out() {
            refund.into_record().map(Some)
        } else {
            Ok(None)
        }
    }))
}

#[test]
fn every_charges_answer_stripes_document_allows_is_read() {
    let document = Document::load("stripe.json");
    let answer = document.answer("GET", "/v1/charges");
    let mut bodies = answer.bodies();
    // Only succeeded, captured charges are payments (the statuses are the
    // next test's): the rest are left out before they are read.
    bodies.pin("data.0.status", json!("succeeded"));
    bodies.pin("data.0.captured", json!(true));
    hold(&answer, &bodies, charges, &[]);
}

#[test]
fn a_charge_is_a_payment_only_once_it_succeeded() {
    let document = Document::load("stripe.json");
    let bodies = document.answer("GET", "/v1/charges").bodies();
    let (at, values) = bodies.enum_at("data.0.status");
    for value in values {
        let mut body = bodies.full[0].clone();
        set(&mut body, &at, value.clone());
        let read = charges(&body.to_string()).expect("the page reads");
        assert!(read.issues.is_empty(), "{:?}", read.issues);
        assert_eq!(
            read.records.len(),
            usize::from(value == json!("succeeded")),
            "{value}"
        );
    }
}

#[test]
fn every_refunds_answer_stripes_document_allows_is_read() {
    let document = Document::load("stripe.json");
    let answer = document.answer("GET", "/v1/refunds");
    let mut bodies = answer.bodies();
    // Only succeeded refunds moved money (the others are left out first).
    bodies.pin("data.0.status", json!("succeeded"));
    hold(&answer, &bodies, refunds, &[]);
}

#[test]
fn every_account_answer_stripes_document_allows_is_read_as_company_info() {
    let document = Document::load("stripe.json");
    let answer = document.answer("GET", "/v1/account");
    let needed = [Needed {
        place: "id",
        field: "id",
        why: "company info is kept under the account's id",
    }];
    let company = |text: &str| -> Result<Read<CompanyInfo>, String> {
        let read = whole::<StripeAccount>(text)?;
        Ok(Read {
            records: read
                .records
                .into_iter()
                .map(StripeAccount::into_record)
                .collect(),
            issues: read.issues,
        })
    };
    hold(&answer, &answer.bodies(), company, &needed);
}
