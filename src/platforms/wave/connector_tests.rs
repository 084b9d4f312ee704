//! The queries held to Wave's public schema as its API Reference prints
//! it (`tests/contracts/graphql/wave-public.graphql`), and the answers it
//! allows read.

use apollo_compiler::validation::Valid;
use apollo_compiler::{ExecutableDocument, Schema};
use serde::Serialize;
use serde_json::Value;

use super::*;
use crate::data::accounts::AccountClassification;
use crate::data::invoices::InvoiceStatus;
use crate::platforms::kit::graphql_contract::{self as contract, Sample, dotted, with};
use crate::platforms::kit::records::Read;
use crate::platforms::wave::chart::{
    BANK_SUBTYPES, BusinessAccounts, BusinessProducts, BusinessSalesTaxes, WaveBusiness,
};
use crate::platforms::wave::ledger::{
    ACCOUNTS_QUERY, COMPANY_QUERY, PRODUCTS_QUERY, SALES_TAXES_QUERY, VENDORS_QUERY,
};
use crate::platforms::wave::mapping::{BusinessVendors, WaveContact};

const BUSINESS_ID: &str = "QnVzaW5lc3M6NzE1MjQ3NjEtZjYxMS00ODk0LWE3NDgtNzg3MmYwODgyNWIw";

fn schema() -> Valid<Schema> {
    contract::schema("wave-public.graphql")
}

fn valid(schema: &Valid<Schema>, name: &str, query: &str) -> Valid<ExecutableDocument> {
    contract::validate(schema, query, name).unwrap_or_else(|errors| panic!("{errors}"))
}

/// An answer of `query` with every field, `Money.value` a decimal as
/// Wave's documentation says (its schema says only `String`).
fn sample(schema: &Valid<Schema>, name: &str, query: &str) -> Sample {
    let mut sample = Sample::of(schema, &valid(schema, name, query));
    sample.set("value", "String", serde_json::json!("12.50"));
    sample
}

/// `data` as Wave's answer, read as the connector reads it.
fn data<T: DeserializeOwned>(data: &Value) -> Result<T, String> {
    // As text: amounts are read from the number's own text.
    let answer: Answer<T> = serde_json::from_str(&json!({ "data": data }).to_string())
        .map_err(|error| format!("does not read: {error}"))?;
    answer
        .data("a test", "token")
        .map_err(|error| error.to_string())
}

fn page<T: DeserializeOwned, L>(
    answer: &Value,
    pick: impl FnOnce(T) -> Option<Connection<L>>,
) -> Result<Connection<L>, String> {
    let business = data::<BusinessData<T>>(answer)?.business;
    read_page(business, BUSINESS_ID, "a page", PageNumber(1), pick)
        .map(|(connection, _, _)| connection)
        .map_err(|error| error.to_string())
}

/// The records read, as the API writes them; a record that could not be
/// read costs itself, in words (`Wave's record ...`), as a failed page
/// does.
fn every<R: Serialize>(read: Read<R>) -> Result<Vec<Value>, String> {
    match read.issues.first() {
        None => Ok(read
            .records
            .iter()
            .map(|record| serde_json::to_value(record).expect("a record serializes"))
            .collect()),
        Some(issue) => Err(format!("Wave's record could not be read: {issue:?}")),
    }
}

fn invoices(answer: &Value) -> Result<Vec<Value>, String> {
    every(
        page(answer, |business: BusinessInvoices| business.invoices)?
            .read(WaveInvoice::into_record),
    )
}

fn customers(answer: &Value) -> Result<Vec<Value>, String> {
    let customers = page(answer, |business: BusinessCustomers| business.customers)?;
    every(customers.read(|customer: WaveContact| Ok(customer.into_record())))
}

fn accounts(answer: &Value) -> Result<Vec<Value>, String> {
    let accounts = page(answer, |business: BusinessAccounts| business.accounts)?;
    every(accounts.read(|account| Ok(account.into_record())))
}

fn vendors(answer: &Value) -> Result<Vec<Value>, String> {
    let vendors = page(answer, |business: BusinessVendors| business.vendors)?;
    every(vendors.read(|vendor| Ok(vendor.into_supplier())))
}

fn products(answer: &Value) -> Result<Vec<Value>, String> {
    let products = page(answer, |business: BusinessProducts| business.products)?;
    every(products.read(|product| Ok(product.into_record())))
}

fn sales_taxes(answer: &Value) -> Result<Vec<Value>, String> {
    let taxes = page(answer, |business: BusinessSalesTaxes| business.sales_taxes)?;
    every(taxes.read(|tax| Ok(tax.into_record())))
}

fn company(answer: &Value) -> Result<Vec<Value>, String> {
    let business = data::<BusinessData<WaveBusiness>>(answer)?
        .business
        .ok_or_else(|| unreachable_business(BUSINESS_ID).to_string())?;
    Ok(vec![
        serde_json::to_value(business.into_record()).expect("a record serializes"),
    ])
}

fn businesses(answer: &Value) -> Result<Vec<Value>, String> {
    let businesses = data::<BusinessesData>(answer)?
        .businesses
        .ok_or_else(|| without("the businesses", "businesses").to_string())?;
    let found = businesses
        .nodes("the businesses")
        .map_err(|error| error.to_string())?;
    Ok(found
        .into_iter()
        .map(|business| json!(business.id))
        .collect())
}

fn business(answer: &Value) -> Result<Vec<Value>, String> {
    let business = data::<BusinessData<Business>>(answer)?.business;
    business
        .map(|business| vec![json!(business.id)])
        .ok_or_else(|| unreachable_business(BUSINESS_ID).to_string())
}

/// How the connector reads an answer: the records, as the API writes them.
type Reader = fn(&Value) -> Result<Vec<Value>, String>;

/// Each query, the variables the connector sends it, how the connector
/// reads its answer, and the places whose `null` fails the page (or the
/// verification), or costs the record (a null node), in the connector's
/// own words.
fn queries() -> Vec<(
    &'static str,
    &'static str,
    Value,
    Reader,
    &'static [&'static str],
)> {
    let page = |page, filters: Value| {
        let mut variables = page_variables(PageNumber(page), PAGE_SIZE);
        variables["businessId"] = json!(BUSINESS_ID);
        if let Value::Object(filters) = filters {
            for (name, value) in filters {
                variables[name] = value;
            }
        }
        variables
    };
    let since = json!({"modifiedAtAfter": "2026-11-27T08:55:00Z"});
    let archived_since = json!({"isArchived": true, "modifiedAtAfter": "2026-11-27T08:55:00Z"});
    vec![
        (
            "BUSINESS_QUERY",
            BUSINESS_QUERY,
            json!({"businessId": BUSINESS_ID}),
            business as Reader,
            &["business"],
        ),
        (
            "BUSINESSES_QUERY",
            BUSINESSES_QUERY,
            json!({"page": 1, "pageSize": 50}),
            businesses as Reader,
            &["businesses", "businesses.edges.0.node"],
        ),
        (
            "INVOICES_QUERY",
            INVOICES_QUERY,
            page(2, since.clone()),
            invoices as Reader,
            &["business", "business.invoices"],
        ),
        (
            "CUSTOMERS_QUERY",
            CUSTOMERS_QUERY,
            page(1, since.clone()),
            customers as Reader,
            &[
                "business",
                "business.customers",
                "business.customers.edges.0.node",
            ],
        ),
        (
            "ACCOUNTS_QUERY",
            ACCOUNTS_QUERY,
            page(1, json!({"isArchived": false})),
            accounts as Reader,
            &[
                "business",
                "business.accounts",
                "business.accounts.edges.0.node",
            ],
        ),
        (
            "VENDORS_QUERY",
            VENDORS_QUERY,
            page(1, since),
            vendors as Reader,
            &["business", "business.vendors"],
        ),
        (
            "PRODUCTS_QUERY",
            PRODUCTS_QUERY,
            page(1, archived_since.clone()),
            products as Reader,
            &["business", "business.products"],
        ),
        (
            "SALES_TAXES_QUERY",
            SALES_TAXES_QUERY,
            page(2, archived_since),
            sales_taxes as Reader,
            &[
                "business",
                "business.salesTaxes",
                "business.salesTaxes.edges.0.node",
            ],
        ),
        (
            "COMPANY_QUERY",
            COMPANY_QUERY,
            json!({"businessId": BUSINESS_ID}),
            company as Reader,
            &["business"],
        ),
    ]
}

#[test]
fn every_query_is_valid_against_waves_schema_with_the_variables_it_is_sent() {
    let schema = schema();
    for (name, query, variables, _, _) in queries() {
        let document = valid(&schema, name, query);
        contract::coerce_variables(&schema, &document, &variables)
            .unwrap_or_else(|error| panic!("{name} with {variables}: {error}"));
        // A whole list is asked for without `modifiedAtAfter`.
        if let Some(whole) = variables
            .as_object()
            .filter(|all| all.contains_key("modifiedAtAfter"))
        {
            let mut whole = whole.clone();
            whole.remove("modifiedAtAfter");
            contract::coerce_variables(&schema, &document, &Value::Object(whole))
                .unwrap_or_else(|error| panic!("{name}, a whole list: {error}"));
        }
    }
}

#[test]
fn a_misspelt_field_a_missing_sort_or_a_variable_of_the_wrong_type_is_refused() {
    let schema = schema();
    let misspelt = INVOICES_QUERY.replace("invoiceNumber", "invoiceNo");
    let errors = contract::validate(&schema, &misspelt, "misspelt").expect_err("refused");
    assert!(errors.contains("invoiceNo"), "{errors}");
    // What the customers query was before: `sort` is a required argument.
    let unsorted = CUSTOMERS_QUERY.replace(", sort: [CREATED_AT_ASC]", "");
    let errors = contract::validate(&schema, &unsorted, "unsorted").expect_err("refused");
    assert!(errors.contains("sort"), "{errors}");
    let unsorted = PRODUCTS_QUERY.replace(", sort: [CREATED_AT_ASC]", "");
    let errors = contract::validate(&schema, &unsorted, "unsorted").expect_err("refused");
    assert!(errors.contains("sort"), "{errors}");
    // Accounts have no `modifiedAt` to ask by.
    let filtered = ACCOUNTS_QUERY.replace(
        "isArchived: $isArchived)",
        "isArchived: $isArchived, modifiedAtAfter: \"2026-01-01T00:00:00Z\")",
    );
    let errors = contract::validate(&schema, &filtered, "filtered").expect_err("refused");
    assert!(errors.contains("modifiedAtAfter"), "{errors}");
    let document = valid(&schema, "BUSINESSES_QUERY", BUSINESSES_QUERY);
    let sent = json!({"page": "1", "pageSize": 50});
    assert!(contract::coerce_variables(&schema, &document, &sent).is_err());
    let document = valid(&schema, "ACCOUNTS_QUERY", ACCOUNTS_QUERY);
    let unhalved = json!({"businessId": BUSINESS_ID, "page": 1, "pageSize": 50});
    assert!(contract::coerce_variables(&schema, &document, &unhalved).is_err());
}

#[test]
fn every_field_wave_may_leave_null_reads_or_fails_the_page_in_words() {
    let schema = schema();
    for (name, query, _, read, failing) in queries() {
        let sample = sample(&schema, name, query);
        read(&sample.data).unwrap_or_else(|error| panic!("{name}, every field: {error}"));
        let mut least = sample.data.clone();
        let mut deepest_first = sample.nullable.clone();
        deepest_first.sort_by_key(|place| std::cmp::Reverse(place.len()));
        for place in &deepest_first {
            let at = dotted(place);
            let answer = with(&sample.data, place, Value::Null);
            if failing.contains(&at.as_str()) {
                let error = read(&answer)
                    .err()
                    .unwrap_or_else(|| panic!("{name}, {at} null"));
                assert!(error.starts_with("Wave"), "{name}, {at} null: {error}");
            } else {
                read(&answer).unwrap_or_else(|error| panic!("{name}, {at} null: {error}"));
                least = with(&least, place, Value::Null);
            }
        }
        read(&least).unwrap_or_else(|error| panic!("{name}, every nullable field null: {error}"));
        let nullable: Vec<String> = sample.nullable.iter().map(|p| dotted(p)).collect();
        for place in failing {
            assert!(
                nullable.contains(&place.to_string()),
                "{name}: {place} in {nullable:?}"
            );
        }
    }
}

/// The one record `read` gives for `answer`.
fn one(read: Reader, answer: &Value) -> Value {
    read(answer).expect("reads").remove(0)
}

#[test]
fn every_enum_value_of_waves_schema_the_connector_reads_maps_and_a_new_word_does_not_fail() {
    let schema = schema();
    for (name, query, _, read, _) in queries() {
        let sample = sample(&schema, name, query);
        for (at, values) in &sample.enums {
            let field = dotted(at);
            let new_word = with(&sample.data, at, json!("A_WORD_WAVE_ADDS_LATER"));
            let each = |value: &str| one(read, &with(&sample.data, at, json!(value)));
            match field.as_str() {
                "business.invoices.edges.0.node.status" => {
                    for value in values {
                        let status: InvoiceStatus =
                            serde_json::from_value(each(value)["status"].clone())
                                .expect("a status");
                        assert_ne!(status, InvoiceStatus::Unknown, "{value}");
                    }
                    assert_eq!(one(read, &new_word)["status"], "Unknown");
                }
                // Every account type is a classification.
                "business.accounts.edges.0.node.type.value" => {
                    for value in values {
                        let classification: AccountClassification =
                            serde_json::from_value(each(value)["classification"].clone())
                                .expect("a classification");
                        assert_ne!(classification, AccountClassification::Unknown, "{value}");
                    }
                    assert_eq!(one(read, &new_word)["classification"], "Unknown");
                }
                // A subtype is the account's type as Wave writes it;
                // bank and card subtypes are bank accounts.
                "business.accounts.edges.0.node.subtype.value" => {
                    for value in values
                        .iter()
                        .map(String::as_str)
                        .chain(["A_WORD_WAVE_ADDS_LATER"])
                    {
                        let account = each(value);
                        assert_eq!(account["accountType"], value);
                        assert_eq!(
                            account["isBankAccount"],
                            BANK_SUBTYPES.contains(&value),
                            "{value}"
                        );
                    }
                }
                // Currency codes are words passed on as they are.
                _ if field.ends_with("currency.code") => {
                    for value in values.iter().map(String::as_str).chain(["XYZ"]) {
                        let record = each(value).to_string();
                        assert!(
                            record.contains(&format!("\"{value}\"")),
                            "{name} {value}: {record}"
                        );
                    }
                }
                _ => {
                    panic!("{name}: {field} is an enum the connector reads: map each of its values")
                }
            }
        }
    }
}
