//! Mollie's answers as its OpenAPI document describes them
//! (`tests/contracts/mollie.json`, OpenAPI 3.1; it has no orders operation:
//! `NOTES.md`, "Contract"), read as the connector reads them, from the
//! documented examples and the bodies `kit::openapi_contract` makes from
//! the schemas.

use super::mapping::{EmbeddedCustomers, EmbeddedProfiles, ListPage, Organization};
use crate::data::customers::Customer;
use crate::platforms::kit::openapi_contract::{Document, Needed, hold, whole};
use crate::platforms::kit::records::Read;

/// A page of customers as `Syncs<Customers>::page` reads it.
fn customers(text: &str) -> Result<Read<Customer>, String> {
    let page: ListPage<EmbeddedCustomers> =
        serde_json::from_str(text).map_err(|e| e.to_string())?;
    let customers = page
        .embedded
        .map(|embedded| embedded.customers)
        .unwrap_or_default();
    Ok(customers.read(|customer| Ok(Some(customer.into_record()))))
}

#[test]
fn every_customers_answer_mollies_document_allows_is_read() {
    let document = Document::load("mollie.json");
    let answer = document.answer("GET", "/v2/customers");
    let needed = [Needed {
        place: "_embedded.customers.0.id",
        field: "id",
        why: "a customer is kept under its id",
    }];
    hold(&answer, &answer.bodies(), customers, &needed);
}

#[test]
fn every_organization_answer_mollies_document_allows_is_read() {
    let document = Document::load("mollie.json");
    let answer = document.answer("GET", "/v2/organizations/me");
    hold(&answer, &answer.bodies(), whole::<Organization>, &[]);
}

/// A page of profiles as `MollieConnector::profiles` reads it.
fn profiles(text: &str) -> Result<Read<String>, String> {
    let page: ListPage<EmbeddedProfiles> = serde_json::from_str(text).map_err(|e| e.to_string())?;
    let profiles = page
        .embedded
        .map(|embedded| embedded.profiles)
        .unwrap_or_default();
    Ok(profiles.read(|profile| Ok(Some(profile.id))))
}

#[test]
fn every_profiles_answer_mollies_document_allows_is_read() {
    let document = Document::load("mollie.json");
    let answer = document.answer("GET", "/v2/profiles");
    hold(&answer, &answer.bodies(), profiles, &[]);
}
