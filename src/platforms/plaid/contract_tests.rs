//! Plaid's answers as its OpenAPI document describes them
//! (`tests/contracts/plaid.json`, API version 2020-09-14), read as the
//! connector reads them, from the documented examples and the bodies
//! `kit::openapi_contract` makes from the schemas (`NOTES.md`, "Contract").

use serde_json::{Value, json};

use super::mapping::{AccountsPage, SyncPage};
use crate::data::bank_accounts::{BankAccount, BankAccountType};
use crate::data::bank_transactions::BankTransaction;
use crate::platforms::kit::openapi_contract::{Document, NEW_VALUE, hold, set};
use crate::platforms::kit::records::Read;

/// `POST /accounts/get`'s answer as `Syncs<BankAccounts>::page` reads it.
fn accounts(text: &str) -> Result<Read<BankAccount>, String> {
    let answer: AccountsPage = serde_json::from_str(text).map_err(|e| e.to_string())?;
    let item = answer.item;
    Ok(answer
        .accounts
        .read(|account| Ok(Some(account.into_record(&item)))))
}

/// A page of `POST /transactions/sync` as `PlaidConnector::transactions`
/// reads it: the added and modified transactions, each on its own.
fn transactions(text: &str) -> Result<Read<BankTransaction>, String> {
    let page: SyncPage = serde_json::from_str(text).map_err(|e| e.to_string())?;
    let mut read = Read::default();
    for entry in page.added.entries().chain(page.modified.entries()) {
        match entry {
            Ok((transaction, _)) => read.records.push(transaction.into_record()),
            Err(issue) => read.issues.push(issue),
        }
    }
    Ok(read)
}

#[test]
fn every_accounts_answer_plaids_document_allows_is_read() {
    let document = Document::load("plaid.json");
    let answer = document.answer("POST", "/accounts/get");
    hold(&answer, &answer.bodies(), accounts, &[]);
}

#[test]
fn every_transactions_sync_answer_plaids_document_allows_is_read() {
    let document = Document::load("plaid.json");
    let answer = document.answer("POST", "/transactions/sync");
    hold(&answer, &answer.bodies(), transactions, &[]);
}

#[test]
fn every_account_type_of_plaids_document_maps_and_a_new_word_is_other() {
    let document = Document::load("plaid.json");
    let bodies = document.answer("POST", "/accounts/get").bodies();
    let (at, values) = bodies.enum_at("accounts.0.type");
    let kind = |value: Value| {
        let mut body = bodies.full[0].clone();
        set(&mut body, &at, value);
        let mut read = accounts(&body.to_string()).expect("the page reads");
        assert!(read.issues.is_empty(), "{:?}", read.issues);
        read.records.remove(0).account_type
    };
    for value in values {
        // `other` is Plaid's own word for an account of no other type.
        if value != json!("other") {
            assert_ne!(kind(value.clone()), BankAccountType::Other, "{value}");
        }
    }
    // Our account types have no unknown one: Other is the fallback (NOTES.md).
    assert_eq!(kind(json!(NEW_VALUE)), BankAccountType::Other);
}
