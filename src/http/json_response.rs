//! [`SerdeJson<T>`]: a JSON response written straight from `serde`, for the
//! synced-data lists.
//!
//! poem-openapi's `Json<T>` first builds a `serde_json::Value` tree of the
//! whole response and then prints it. For a 5000-invoice page that tree is
//! most of the request's time (allocations) and, with a few such requests at
//! once, most of the server's memory. `SerdeJson<T>` documents exactly the
//! schema `Json<T>` would (it is `T`'s), and prints `T`'s `serde`
//! serialization; the tests in this module pin that both give the same JSON.

use std::marker::PhantomData;

use poem::{IntoResponse, Response};
use poem_openapi::payload::Payload;
use poem_openapi::registry::{MetaSchemaRef, Registry};
use poem_openapi::types::Type;
use serde::Serialize;

use crate::http::error::ApiError;

/// A response body: `T`'s schema, `T`'s serde JSON (printed when made, so
/// a failure is an [`ApiError`] of the handler).
#[derive(Debug, Clone)]
pub struct SerdeJson<T> {
    body: Vec<u8>,
    of: PhantomData<fn() -> T>,
}

impl<T: Serialize> SerdeJson<T> {
    /// Prints `value`.
    pub fn new(value: &T) -> Result<Self, ApiError> {
        Ok(Self {
            body: serde_json::to_vec(value).map_err(ApiError::internal)?,
            of: PhantomData,
        })
    }
}

impl<T: Type + Serialize> Payload for SerdeJson<T> {
    const CONTENT_TYPE: &'static str = "application/json; charset=utf-8";

    fn schema_ref() -> MetaSchemaRef {
        T::schema_ref()
    }

    fn register(registry: &mut Registry) {
        T::register(registry);
    }
}

impl<T: Type + Serialize> IntoResponse for SerdeJson<T> {
    fn into_response(self) -> Response {
        Response::builder()
            .content_type(<Self as Payload>::CONTENT_TYPE)
            .body(self.body)
    }
}

#[cfg(test)]
mod tests {
    use chrono::{NaiveDate, TimeZone, Utc};
    use poem_openapi::types::ToJSON;
    use rust_decimal::Decimal;
    use uuid::Uuid;

    use crate::http::api::data::{Customer, CustomerRef, Invoice, InvoiceLineItem};
    use crate::http::paging::{ListLocation, Paged};
    use crate::http::types::{Amount, Nullable, Timestamp};
    use crate::paging::PageRequest;
    use crate::sync::records::{CustomerStatus, InvoiceStatus};

    fn invoice(status: InvoiceStatus, optional: bool) -> Invoice {
        let some = |text: &str| -> Nullable<String> { optional.then(|| text.to_owned()).into() };
        Invoice {
            invoice_id: "inv-\"1\"\u{e9}".to_owned(),
            connection_id: Uuid::from_u128(7),
            invoice_number: some("INV-1"),
            customer_ref: optional
                .then(|| CustomerRef {
                    id: "c-1".to_owned(),
                    company_name: Nullable(None),
                })
                .into(),
            issue_date: NaiveDate::from_ymd_opt(2026, 5, 1).expect("a date"),
            due_date: optional
                .then(|| NaiveDate::from_ymd_opt(2026, 6, 30).expect("a date"))
                .into(),
            paid_on_date: Nullable(None),
            currency: "GBP".to_owned(),
            sub_total: Amount(Decimal::new(112_781, 2)),
            total_tax_amount: Amount(Decimal::new(0, 2)),
            total_amount: Amount(Decimal::new(-5, 4)),
            amount_due: Amount(Decimal::new(100, 0)),
            status,
            line_items: vec![InvoiceLineItem {
                description: "Widget\n#1".to_owned(),
                unit_amount: Amount(Decimal::new(1999, 2)),
                quantity: Amount(Decimal::new(3, 0)),
                discount_amount: Amount(Decimal::new(0, 2)),
                sub_total: Amount(Decimal::new(5997, 2)),
                tax_amount: Amount(Decimal::new(1199, 2)),
                total_amount: Amount(Decimal::new(7196, 2)),
            }],
            note: some("Thanks"),
            modified_date: Timestamp(
                Utc.timestamp_opt(1_790_000_000, 123_456_000)
                    .single()
                    .expect("a time"),
            ),
            source_modified_date: optional
                .then(|| {
                    Timestamp(
                        Utc.timestamp_opt(1_780_000_000, 0)
                            .single()
                            .expect("a time"),
                    )
                })
                .into(),
        }
    }

    fn same_json<T: ToJSON + serde::Serialize>(value: &T) {
        let by_poem = value.to_json().expect("poem-openapi writes it");
        let by_serde = serde_json::to_value(value).expect("serde writes it");
        assert_eq!(by_serde, by_poem);
    }

    #[test]
    fn invoice_pages_print_as_poem_openapi_would() {
        let invoices: Vec<Invoice> = InvoiceStatus::ALL
            .iter()
            .flat_map(|status| [invoice(*status, true), invoice(*status, false)])
            .collect();
        let location =
            ListLocation::new("/companies/x/data/invoices").filter("status", Some("Paid"));
        for (page, total) in [(1, 0), (1, 250), (2, 250), (3, 250), (9, 250)] {
            let request = PageRequest::new(page, 100).expect("valid");
            same_json(&Paged::new(invoices.clone(), total, request, &location));
        }
    }

    #[test]
    fn customer_pages_print_as_poem_openapi_would() {
        let customers: Vec<Customer> = [CustomerStatus::Active, CustomerStatus::Archived]
            .into_iter()
            .map(|status| Customer {
                customer_id: "c-1".to_owned(),
                connection_id: Uuid::from_u128(9),
                customer_name: "Atlas & Co \u{2603}".to_owned(),
                email_address: Nullable(Some("a@example.com".to_owned())),
                phone: Nullable(None),
                default_currency: Nullable(Some("EUR".to_owned())),
                status,
                modified_date: Timestamp(
                    Utc.timestamp_opt(1_790_000_000, 5_000)
                        .single()
                        .expect("a time"),
                ),
                source_modified_date: Nullable(None),
            })
            .collect();
        let request = PageRequest::new(2, 1).expect("valid");
        same_json(&Paged::new(customers, 3, request, &ListLocation::new("/c")));
    }
}
