//! Amazon's answers as its Selling Partner API models describe them
//! (`tests/contracts/amazon_seller_central.json`, ordersV0;
//! `amazon_seller_central.sellers.json`, sellers v1; Swagger 2.0), read as
//! the connector reads them, from the documented examples (the models' own
//! and their sandbox answers) and the bodies `kit::openapi_contract` makes
//! from the schemas (`NOTES.md`, "Contract").

use serde_json::{Value, json};

use super::mapping::{ItemsAnswer, OrdersAnswer, ParticipationsAnswer};
use crate::data::orders::{Order, OrderLineItem, OrderStatus};
use crate::platforms::kit::openapi_contract::{
    Answer, Bodies, Document, NEW_VALUE, hold, set, whole,
};
use crate::platforms::kit::records::Read;

/// A page of orders as `Syncs<Orders>::page` reads it, each order without
/// items (they are another call: `every_order_items_answer_...`) and with
/// its marketplace's currency unknown.
fn orders(text: &str) -> Result<Read<Order>, String> {
    let answer: OrdersAnswer = serde_json::from_str(text).map_err(|e| e.to_string())?;
    Ok(answer
        .payload
        .orders
        .read(|order| order.into_record(&[], None).map(Some)))
}

/// A page of an order's items as `AmazonSellerCentralConnector::items`
/// reads it, each item a line.
fn items(text: &str) -> Result<Read<OrderLineItem>, String> {
    let answer: ItemsAnswer = serde_json::from_str(text).map_err(|e| e.to_string())?;
    Ok(answer
        .payload
        .order_items
        .read(|item| Ok(Some(item.to_line()))))
}

/// Why a success answer without `payload` fails the page rather than read as
/// no orders: the models make `payload` optional beside `errors`, and an
/// answer that carries only errors holds no page.
const PAYLOAD: &str = "a success answer without payload carries only errors: the connector fails \
                       the page (the previous data is kept) rather than take it for no records";

/// The bodies of `answer`, its times and amounts as Amazon's words describe
/// them: the models type `PurchaseDate`, `LastUpdateDate` and a money's
/// `Amount` as plain strings ("ISO 8601", "The currency amount.").
fn amazon_bodies(answer: &Answer<'_>) -> Bodies {
    let mut bodies = answer.bodies();
    for key in ["PurchaseDate", "LastUpdateDate"] {
        bodies.set_every(key, &json!("2026-10-01T12:00:00Z"));
    }
    bodies.set_every("Amount", &json!("12.50"));
    bodies
}

#[test]
fn every_orders_answer_amazons_model_allows_is_read() {
    let document = Document::load("amazon_seller_central.json");
    let answer = document
        .answer("GET", "/orders/v0/orders")
        .requiring(&["payload"], PAYLOAD);
    // The model requires what the connector needs of an order (AmazonOrderId,
    // PurchaseDate): no minimal body lacks it.
    hold(&answer, &amazon_bodies(&answer), orders, &[]);
}

#[test]
fn every_order_items_answer_amazons_model_allows_is_read() {
    let document = Document::load("amazon_seller_central.json");
    let answer = document
        .answer("GET", "/orders/v0/orders/{orderId}/orderItems")
        .requiring(&["payload"], PAYLOAD);
    hold(&answer, &amazon_bodies(&answer), items, &[]);
}

#[test]
fn every_marketplace_participations_answer_amazons_model_allows_is_read() {
    let document = Document::load("amazon_seller_central.sellers.json");
    let answer = document.answer("GET", "/sellers/v1/marketplaceParticipations");
    hold(
        &answer,
        &answer.bodies(),
        whole::<ParticipationsAnswer>,
        &[],
    );
}

#[test]
fn every_order_status_of_amazons_model_maps_and_a_new_word_is_unknown() {
    let document = Document::load("amazon_seller_central.json");
    let answer = document
        .answer("GET", "/orders/v0/orders")
        .requiring(&["payload"], PAYLOAD);
    let bodies = amazon_bodies(&answer);
    let (at, values) = bodies.enum_at("payload.Orders.0.OrderStatus");
    let status = |value: Value| {
        let mut body = bodies.full[0].clone();
        set(&mut body, &at, value);
        let mut read = orders(&body.to_string()).expect("the page reads");
        assert!(read.issues.is_empty(), "{:?}", read.issues);
        read.records.remove(0).status
    };
    for value in values {
        assert_ne!(status(value.clone()), OrderStatus::Unknown, "{value}");
    }
    assert_eq!(status(json!(NEW_VALUE)), OrderStatus::Unknown);
}
