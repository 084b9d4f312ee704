//! A Rust client for tributary, generated at build time by progenitor from
//! the checked-in `openapi.yaml`: one method per operation (`list_companies`,
//! `create_company`, ...), typed request and response bodies in [`types`].
//!
//! Authenticate by giving [`Client::new_with_client`] a `reqwest::Client`
//! whose default headers carry `Authorization: Basic <base64(API key)>`.

#![allow(missing_docs, clippy::unwrap_used)]

include!(concat!(env!("OUT_DIR"), "/codegen.rs"));
