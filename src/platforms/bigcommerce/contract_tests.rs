//! BigCommerce's answers as its OpenAPI documents describe them
//! (`tests/contracts/bigcommerce.json` for orders v2,
//! `bigcommerce.customers.json` for customers v3, `bigcommerce.catalog.json`
//! for catalogue products v3), read as the connector
//! reads them, from the documented examples and the bodies
//! `kit::openapi_contract` makes from the schemas (`NOTES.md`, "Contract").

use serde_json::json;

use super::catalog::ProductsPage;
use super::mapping::{BigCommerceOrder, CustomersPage, OrderProduct};
use crate::data::customers::Customer;
use crate::data::items::Item;
use crate::data::orders::{Order, OrderLineItem};
use crate::platforms::kit::graphql_contract::place;
use crate::platforms::kit::openapi_contract::{Answer, Bodies, Document, Needed, get, hold, set};
use crate::platforms::kit::records::{Each, Read};

/// A page of orders as `Syncs<Orders>::page` reads it (each order's
/// products are another call: `every_products_answer_...`).
fn orders(text: &str) -> Result<Read<Order>, String> {
    let orders: Each<BigCommerceOrder> = serde_json::from_str(text).map_err(|e| e.to_string())?;
    Ok(orders.read(|order| order.into_record(Vec::new()).map(Some)))
}

/// An order's products as `Syncs<Orders>::page` reads them, each a line.
fn products(text: &str) -> Result<Read<OrderLineItem>, String> {
    let products: Each<OrderProduct> = serde_json::from_str(text).map_err(|e| e.to_string())?;
    Ok(products.read(|product| Ok(Some(product.into_line()))))
}

/// A page of customers as `Syncs<Customers>::page` reads it.
fn customers(text: &str) -> Result<Read<Customer>, String> {
    let page: CustomersPage = serde_json::from_str(text).map_err(|e| e.to_string())?;
    Ok(page.data.read(|customer| Ok(Some(customer.into_record()))))
}

/// The bodies of `GET /orders` as BigCommerce's words describe them: its
/// schema types `date_created` and `date_modified` as plain strings
/// "formatted in the RFC-2822 standard" (`Tue, 20 Nov 2012 00:00:00 +0000`),
/// and `customer_id` as a `number` where its example (20) and the customer
/// it names (v3 `id`, `integer`) are whole numbers.
fn order_bodies(answer: &Answer<'_>) -> Bodies {
    let mut bodies = answer.bodies();
    for key in ["date_created", "date_modified"] {
        bodies.set_every(key, &json!("Tue, 20 Nov 2012 00:00:00 +0000"));
    }
    bodies.pin("0.customer_id", json!(20));
    bodies
}

#[test]
fn every_orders_answer_bigcommerces_document_allows_is_read() {
    let document = Document::load("bigcommerce.json");
    let answer = document.answer("GET", "/orders");
    let needed = [
        Needed {
            place: "0.id",
            field: "id",
            why: "an order is kept under its id (read-only in the document, not required)",
        },
        Needed {
            place: "0.date_created",
            field: "date_created",
            why: "our order has a creation time, which BigCommerce sets on every order",
        },
    ];
    hold(&answer, &order_bodies(&answer), orders, &needed);
}

#[test]
fn every_products_answer_bigcommerces_document_allows_is_read() {
    let document = Document::load("bigcommerce.json");
    let answer = document.answer("GET", "/orders/{order_id}/products");
    hold(&answer, &answer.bodies(), products, &[]);
}

#[test]
fn every_customers_answer_bigcommerces_document_allows_is_read() {
    let document = Document::load("bigcommerce.customers.json");
    let answer = document.answer("GET", "/customers");
    let mut bodies = answer.bodies();
    // The documented example's customer has no `id` (nor `date_created`:
    // it has the shape of a create request); every listed customer has one.
    let (_, example) = &mut bodies.examples[0];
    assert!(get(example, &place("data.0.id")).is_none());
    assert!(set(example, &place("data.0.id"), json!(1)));
    let needed = [Needed {
        place: "data.0.id",
        field: "id",
        why: "a customer is kept under its id",
    }];
    hold(&answer, &bodies, customers, &needed);
}

/// A page of catalogue products as `Syncs<Items>::page` reads it.
fn items(text: &str) -> Result<Read<Item>, String> {
    let page: ProductsPage = serde_json::from_str(text).map_err(|e| e.to_string())?;
    Ok(page.data.read(|product| Ok(Some(product.into_record()))))
}

#[test]
fn every_catalogue_products_answer_bigcommerces_document_allows_is_read_as_items() {
    let document = Document::load("bigcommerce.catalog.json");
    let answer = document.answer("GET", "/catalog/products");
    let needed = [Needed {
        place: "data.0.id",
        field: "id",
        why: "an item is kept under its product's id (read-only in the document, not required)",
    }];
    hold(&answer, &answer.bodies(), items, &needed);
}
