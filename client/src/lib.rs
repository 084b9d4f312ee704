//! A Rust client for tributary, generated at build time by progenitor from
//! the checked-in `openapi.yaml`: one method per operation (`list_companies`,
//! `create_company`, ...), typed request and response bodies in [`types`].
//!
//! Authenticate by giving [`Client::new_with_client`] a `reqwest::Client`
//! whose default headers carry `Authorization: Basic <base64(API key)>`.

// Generated code is not ours to lint: these allowances keep it out of `-D warnings`.
#![allow(missing_docs, dead_code, clippy::all, clippy::unwrap_used)]

include!(concat!(env!("OUT_DIR"), "/codegen.rs"));
