//! Unit tests of Shopify's connector.

//! The queries held to Shopify's Admin API schema for [`API_VERSION`]
//! (`tests/contracts/graphql/`), and the answers it allows read.

use apollo_compiler::validation::Valid;
use apollo_compiler::{ExecutableDocument, Schema};

use super::*;
use crate::data::orders::OrderStatus;
use crate::platforms::kit::graphql_contract::{
    self as contract, Sample, all_null, dotted, place, with,
};
use crate::platforms::kit::records::Read;

/// The schema of the API version the connector asks for.
fn schema() -> Valid<Schema> {
    contract::schema(&format!("shopify-admin-{API_VERSION}.graphql"))
}

fn valid(schema: &Valid<Schema>, name: &str, query: &str) -> Valid<ExecutableDocument> {
    contract::validate(schema, query, name).unwrap_or_else(|errors| panic!("{errors}"))
}

/// `data` as Shopify's answer, read as the connector reads it.
fn data<T: DeserializeOwned>(data: &Value) -> Result<T, String> {
    // As text: amounts are read from the number's own text.
    let answer: Answer<T> = serde_json::from_str(&json!({ "data": data }).to_string())
        .map_err(|error| format!("does not read: {error}"))?;
    match answer.outcome("a test", "token") {
        Ok(Outcome::Data(data)) => Ok(data),
        Ok(Outcome::Throttled(..)) => Err("throttled".to_owned()),
        Err(error) => Err(error.to_string()),
    }
}

/// The records read, or the first that could not be read.
fn every<R>(read: Read<R>) -> Result<Vec<R>, String> {
    match read.issues.first() {
        None => Ok(read.records),
        Some(issue) => Err(format!("does not read: {issue:?}")),
    }
}

fn orders(answer: &Value) -> Result<Vec<Order>, String> {
    every(
        data::<OrdersData>(answer)?
            .orders
            .nodes
            .read(|order| order.into_record().map(Some)),
    )
}

fn customers(answer: &Value) -> Result<Vec<Customer>, String> {
    let data = data::<CustomersData>(answer)?;
    every(data.customers.nodes.read(|c| Ok(Some(c.into_record()))))
}

fn shop(answer: &Value) -> Result<Option<String>, String> {
    Ok(data::<ShopData>(answer)?
        .shop
        .and_then(|shop| shop.myshopify_domain))
}

#[test]
fn every_query_is_valid_against_shopifys_schema_with_the_variables_it_is_sent() {
    let schema = schema();
    let orders = json!({"lines": LINES_PER_ORDER});
    let orders_changed = orders.clone();
    let since = DateTime::parse_from_rfc3339("2026-11-27T08:55:00Z")
        .map(|since| since.with_timezone(&Utc))
        .unwrap_or_else(|error| panic!("{error}"));
    for (name, query, variables) in [
        ("SHOP_QUERY", SHOP_QUERY, json!({})),
        (
            "ORDERS_QUERY",
            ORDERS_QUERY,
            page_variables(PAGE_SIZE, None, orders.clone()),
        ),
        (
            "ORDERS_QUERY",
            ORDERS_QUERY,
            page_variables(PAGE_SIZE, Some("eyJsYXN0X2lkIjo0fQ==".into()), orders),
        ),
        (
            "CUSTOMERS_QUERY",
            CUSTOMERS_QUERY,
            page_variables(1, None, json!({})),
        ),
        (
            "ORDERS_QUERY",
            ORDERS_QUERY,
            page_variables(
                PAGE_SIZE,
                None,
                changed_variables(Some(since), orders_changed),
            ),
        ),
        (
            "CUSTOMERS_QUERY",
            CUSTOMERS_QUERY,
            page_variables(1, None, changed_variables(Some(since), json!({}))),
        ),
    ] {
        let document = valid(&schema, name, query);
        contract::coerce_variables(&schema, &document, &variables)
            .unwrap_or_else(|error| panic!("{name} with {variables}: {error}"));
    }
}

#[test]
fn changes_are_searched_by_updated_at_in_utc_and_sorted_the_same_way() {
    let since = DateTime::parse_from_rfc3339("2026-11-27T09:55:00+01:00")
        .map(|since| since.with_timezone(&Utc))
        .unwrap_or_else(|error| panic!("{error}"));
    let variables = changed_variables(Some(since), json!({"lines": 1}));
    assert_eq!(variables["query"], "updated_at:>'2026-11-27T08:55:00Z'");
    assert_eq!(variables["sortKey"], "UPDATED_AT");
    assert_eq!(
        changed_variables(None, json!({})),
        json!({}),
        "a full fetch: neither"
    );
}

#[test]
fn a_misspelt_field_or_a_variable_of_the_wrong_type_is_refused() {
    let schema = schema();
    let misspelt = ORDERS_QUERY.replace("displayFinancialStatus", "displayFinancialState");
    let errors = contract::validate(&schema, &misspelt, "misspelt").expect_err("refused");
    assert!(errors.contains("displayFinancialState"), "{errors}");
    let wrong = CUSTOMERS_QUERY.replace("$first: Int!", "$first: String!");
    assert!(contract::validate(&schema, &wrong, "wrong").is_err());
    let document = valid(&schema, "CUSTOMERS_QUERY", CUSTOMERS_QUERY);
    let sent = json!({"first": "250", "after": null});
    assert!(contract::coerce_variables(&schema, &document, &sent).is_err());
}

#[test]
fn every_field_shopify_may_leave_null_reads() {
    let schema = schema();
    type Reader = fn(&Value) -> Result<usize, String>;
    let read: [(&str, &str, Reader); 3] = [
        ("SHOP_QUERY", SHOP_QUERY, |answer| shop(answer).map(|_| 1)),
        ("ORDERS_QUERY", ORDERS_QUERY, |answer| {
            orders(answer).map(|o| o.len())
        }),
        ("CUSTOMERS_QUERY", CUSTOMERS_QUERY, |answer| {
            customers(answer).map(|c| c.len())
        }),
    ];
    for (name, query, read) in read {
        let sample = Sample::of(&schema, &valid(&schema, name, query));
        read(&sample.data).unwrap_or_else(|error| panic!("{name}, every field: {error}"));
        for place in &sample.nullable {
            read(&with(&sample.data, place, Value::Null))
                .unwrap_or_else(|error| panic!("{name}, {} null: {error}", dotted(place)));
        }
        read(&all_null(&sample.data, &sample.nullable))
            .unwrap_or_else(|error| panic!("{name}, every nullable field null: {error}"));
    }
    // The places the schema lets be null include those the mapping decides on.
    let sample = Sample::of(&schema, &valid(&schema, "ORDERS_QUERY", ORDERS_QUERY));
    let nullable: Vec<String> = sample.nullable.iter().map(|p| dotted(p)).collect();
    for field in [
        "closedAt",
        "cancelledAt",
        "displayFinancialStatus",
        "customer",
    ] {
        assert!(
            nullable.contains(&format!("orders.nodes.0.{field}")),
            "{nullable:?}"
        );
    }
}

#[test]
fn every_status_word_of_shopifys_schema_maps_and_a_new_word_is_unknown() {
    let schema = schema();
    let sample = Sample::of(&schema, &valid(&schema, "ORDERS_QUERY", ORDERS_QUERY));
    // Neither cancelled nor closed: the status words decide.
    let open = ["cancelledAt", "closedAt"]
        .iter()
        .fold(sample.data.clone(), |data, field| {
            with(
                &data,
                &place(&format!("orders.nodes.0.{field}")),
                Value::Null,
            )
        });
    let read = |answer: &Value| {
        let mut orders = orders(answer).unwrap_or_else(|error| panic!("{error}"));
        orders.remove(0)
    };
    let mut statuses = 0;
    for (at, values) in &sample.enums {
        let field = dotted(at);
        let new_word = with(&open, at, json!("A_WORD_SHOPIFY_ADDS_LATER"));
        match field.as_str() {
            "orders.nodes.0.displayFinancialStatus" | "orders.nodes.0.displayFulfillmentStatus" => {
                statuses += 1;
                for value in values {
                    let status = read(&with(&open, at, json!(value))).status;
                    assert_ne!(status, OrderStatus::Unknown, "{field} = {value}");
                }
                assert_eq!(read(&new_word).status, OrderStatus::Unknown, "{field}");
            }
            // Currency codes are words passed on as they are.
            _ if field.ends_with("currencyCode") => {
                for value in values.iter().map(String::as_str).chain(["XYZ"]) {
                    let order = read(&with(&open, at, json!(value)));
                    if field == "orders.nodes.0.totalPriceSet.shopMoney.currencyCode" {
                        assert_eq!(order.currency, value);
                    }
                }
                read(&new_word);
            }
            _ => panic!("{field} is an enum the connector reads: map each of its values"),
        }
    }
    assert_eq!(
        statuses,
        2,
        "{:?}",
        sample
            .enums
            .iter()
            .map(|(p, _)| dotted(p))
            .collect::<Vec<_>>()
    );
}
