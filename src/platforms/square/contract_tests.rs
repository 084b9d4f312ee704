//! Square's answers as its OpenAPI document describes them
//! (`tests/contracts/square.json`, Square-Version 2025-08-20: we pin
//! 2024-01-18, `NOTES.md`, "Contract"), read as the connector reads them,
//! from the bodies `kit::openapi_contract` makes from the schemas.

use serde_json::{Value, json};

use super::catalog::{CatalogPage, items_of};
use super::commerce::{LocationDetails, MerchantAnswer, PaymentsPage, RefundsPage};
use super::mapping::{CustomersPage, InvoicesPage, LocationsAnswer, OrdersPage};
use crate::data::company_info::CompanyInfo;
use crate::data::customers::Customer;
use crate::data::invoices::{Invoice, InvoiceStatus};
use crate::data::items::Item;
use crate::data::orders::{Order, OrderStatus};
use crate::data::payments::Payment;
use crate::platforms::kit::openapi_contract::{
    Answer, Bodies, Document, NEW_VALUE, Needed, hold, set, whole,
};
use crate::platforms::kit::records::Read;

/// The bodies of `answer`, their times, dates and quantities as Square's
/// descriptions say they are: its schemas type them as plain `string`s, "in
/// RFC 3339 format", "in `YYYY-MM-DD` format", and a quantity "a decimal
/// with at most 5 digits after the decimal point".
fn square_bodies(answer: &Answer<'_>) -> Bodies {
    let mut bodies = answer.bodies();
    bodies.set_every("quantity", &json!("1.5"));
    for key in ["created_at", "updated_at", "scheduled_at", "closed_at"] {
        bodies.set_every(key, &json!("2026-10-01T12:00:00.000Z"));
    }
    bodies.set_every("due_date", &json!("2026-10-31"));
    bodies
}

/// A page of invoices as `Syncs<Invoices>::page` reads it.
fn invoices(text: &str) -> Result<Read<Invoice>, String> {
    let page: InvoicesPage = serde_json::from_str(text).map_err(|e| e.to_string())?;
    Ok(page
        .invoices
        .read(|invoice| invoice.into_record().map(Some)))
}

/// A page of customers as `Syncs<Customers>::page` reads it.
fn customers(text: &str) -> Result<Read<Customer>, String> {
    let page: CustomersPage = serde_json::from_str(text).map_err(|e| e.to_string())?;
    Ok(page
        .customers
        .read(|customer| Ok(Some(customer.into_record()))))
}

/// A page of orders as `Syncs<Orders>::page` reads it.
fn orders(text: &str) -> Result<Read<Order>, String> {
    let page: OrdersPage = serde_json::from_str(text).map_err(|e| e.to_string())?;
    Ok(page.orders.read(|order| order.into_record().map(Some)))
}

#[test]
fn every_locations_answer_squares_document_allows_is_read() {
    let document = Document::load("square.json");
    let answer = document.answer("GET", "/v2/locations");
    let needed = [Needed {
        place: "locations.0.id",
        field: "id",
        why: "invoices are listed per location id; the document marks it read-only, not required",
    }];
    hold(
        &answer,
        &square_bodies(&answer),
        whole::<LocationsAnswer>,
        &needed,
    );
}

#[test]
fn every_invoices_answer_squares_document_allows_is_read() {
    let document = Document::load("square.json");
    let answer = document.answer("GET", "/v2/invoices");
    let needed = [
        Needed {
            place: "invoices.0.id",
            field: "id",
            why: "an invoice is kept under its id (the document marks it read-only, not required)",
        },
        Needed {
            place: "invoices.0.created_at",
            field: "created_at",
            why: "our invoice has an issue date: scheduled_at, else created_at, which Square sets on \
                  every invoice it stores",
        },
    ];
    hold(&answer, &square_bodies(&answer), invoices, &needed);
}

#[test]
fn every_customers_answer_squares_document_allows_is_read() {
    let document = Document::load("square.json");
    let answer = document.answer("GET", "/v2/customers");
    let needed = [Needed {
        place: "customers.0.id",
        field: "id",
        why: "a customer is kept under its id",
    }];
    hold(&answer, &square_bodies(&answer), customers, &needed);
}

#[test]
fn every_orders_answer_squares_document_allows_is_read() {
    let document = Document::load("square.json");
    let answer = document.answer("POST", "/v2/orders/search");
    let needed = [
        Needed {
            place: "orders.0.id",
            field: "id",
            why: "an order is kept under its id",
        },
        Needed {
            place: "orders.0.created_at",
            field: "created_at",
            why: "our order has a creation time, which Square sets on every order",
        },
    ];
    hold(&answer, &square_bodies(&answer), orders, &needed);
}

/// `value` at `at` in the first full body, read by `read` as its one record.
fn one<R>(bodies: &Bodies, at: &str, value: Value, read: fn(&str) -> Result<Read<R>, String>) -> R {
    let (place, _) = bodies.enum_at(at);
    let mut body = bodies.full[0].clone();
    set(&mut body, &place, value);
    let mut page = read(&body.to_string()).expect("the page reads");
    assert!(page.issues.is_empty(), "{:?}", page.issues);
    page.records.remove(0)
}

#[test]
fn every_invoice_status_and_order_state_of_squares_document_maps_and_a_new_word_is_unknown() {
    let document = Document::load("square.json");
    let bodies = square_bodies(&document.answer("GET", "/v2/invoices"));
    let at = "invoices.0.status";
    for value in bodies.enum_at(at).1 {
        let status = one(&bodies, at, value.clone(), invoices).status;
        assert_ne!(status, InvoiceStatus::Unknown, "{value}");
    }
    assert_eq!(
        one(&bodies, at, json!(NEW_VALUE), invoices).status,
        InvoiceStatus::Unknown
    );
    let bodies = square_bodies(&document.answer("POST", "/v2/orders/search"));
    let at = "orders.0.state";
    for value in bodies.enum_at(at).1 {
        assert_ne!(
            one(&bodies, at, value.clone(), orders).status,
            OrderStatus::Unknown,
            "{value}"
        );
    }
    assert_eq!(
        one(&bodies, at, json!(NEW_VALUE), orders).status,
        OrderStatus::Unknown
    );
}

/// A page of payments, each read as `Syncs<Payments>::page` reads a
/// completed one (the status is free text in Square's document, so every
/// payment it allows must read, whatever its status).
fn payments(text: &str) -> Result<Read<Payment>, String> {
    let page: PaymentsPage = serde_json::from_str(text).map_err(|e| e.to_string())?;
    Ok(page
        .payments
        .read(|payment| payment.into_record().map(Some)))
}

/// A page of refunds, each read as a completed one is.
fn refunds(text: &str) -> Result<Read<Payment>, String> {
    let page: RefundsPage = serde_json::from_str(text).map_err(|e| e.to_string())?;
    Ok(page.refunds.read(|refund| refund.into_record().map(Some)))
}

#[test]
fn every_payments_answer_squares_document_allows_is_read() {
    let document = Document::load("square.json");
    let answer = document.answer("GET", "/v2/payments");
    // Square's `RiskEvaluation` requires a `status` it does not define:
    // the generator stands a string in for it.
    let bodies = square_bodies(&answer);
    let needed = [
        Needed {
            place: "payments.0.total_money",
            field: "total_money",
            why: "a payment without its amount says nothing of the money; the document leaves it optional",
        },
        Needed {
            place: "payments.0.id",
            field: "id",
            why: "a payment is kept under its id; the document marks it read-only, not required",
        },
        Needed {
            place: "payments.0.created_at",
            field: "created_at",
            why: "a payment is dated by its creation; the document marks it read-only, not required",
        },
    ];
    hold(&answer, &bodies, payments, &needed);
}

#[test]
fn every_refunds_answer_squares_document_allows_is_read() {
    let document = Document::load("square.json");
    let answer = document.answer("GET", "/v2/refunds");
    let bodies = square_bodies(&answer);
    let needed = [
        Needed {
            place: "refunds.0.amount_money",
            field: "amount_money",
            why: "a refund without its amount says nothing of the money; the document leaves it optional",
        },
        Needed {
            place: "refunds.0.id",
            field: "id",
            why: "a refund is kept under its id; the document marks it read-only, not required",
        },
        Needed {
            place: "refunds.0.created_at",
            field: "created_at",
            why: "a refund is dated by its creation; the document marks it read-only, not required",
        },
    ];
    hold(&answer, &bodies, refunds, &needed);
}

#[test]
fn every_merchant_answer_squares_document_allows_is_read_as_company_info() {
    let document = Document::load("square.json");
    let answer = document.answer("GET", "/v2/merchants/{merchant_id}");
    let company = |text: &str| -> Result<Read<CompanyInfo>, String> {
        let read = whole::<MerchantAnswer>(text)?;
        Ok(Read {
            records: read
                .records
                .into_iter()
                .map(|answer| answer.merchant.into_record(None))
                .collect(),
            issues: read.issues,
        })
    };
    let needed = [Needed {
        place: "merchant",
        field: "merchant",
        why: "company info is the merchant; the document leaves it optional (an error answer has none)",
    }];
    hold(&answer, &square_bodies(&answer), company, &needed);
    let locations = document.answer("GET", "/v2/locations");
    let needed = [Needed {
        place: "locations.0.id",
        field: "id",
        why: "the main location is found by its id; the document marks it read-only, not required",
    }];
    hold(
        &locations,
        &square_bodies(&locations),
        whole::<LocationDetails>,
        &needed,
    );
}

/// A page of catalog items as `Syncs<Items>::page` reads it: each item's
/// variations.
fn items(text: &str) -> Result<Read<Item>, String> {
    let page: CatalogPage = serde_json::from_str(text).map_err(|e| e.to_string())?;
    Ok(items_of(page.objects))
}

/// Every catalog answer Square's document allows reads as items. Its
/// `CatalogModifierToggleOverrideType` is defined nowhere in the document;
/// the trimmed copy has a string standing in for it (`operations.json`,
/// `stand_ins`).
#[test]
fn every_catalog_search_answer_squares_document_allows_is_read_as_items() {
    let document = Document::load("square.json");
    let answer = document.answer("POST", "/v2/catalog/search");
    let mut bodies = square_bodies(&answer);
    // The search asks for `object_types: ["ITEM"]` only, and Square sets
    // `item_data` "for CatalogObjects of type `ITEM`" (nullable for the
    // other types).
    bodies.pin("objects.0.type", json!("ITEM"));
    let item = bodies.full[0]["objects"][0]["item_data"].clone();
    bodies.pin("objects.0.item_data", item);
    let needed = [
        Needed {
            place: "objects.0.id",
            field: "id",
            why: "a catalog object is named by its id (the document requires it)",
        },
        Needed {
            place: "objects.0.item_data",
            field: "item_data",
            why: "an item's variations are our items; an object without item_data gives none",
        },
    ];
    hold(&answer, &bodies, items, &needed);
}
