//! The spec tool: renders `openapi.yaml` from tributary's poem-openapi
//! code, compares it with the committed file, and lints it.
//!
//! `cargo run -p codegen` writes the file; `cargo run -p codegen -- --check`
//! fails with a unified diff when the file and the code disagree, or when
//! the lint finds a problem. The crate's tests run the same check, so the
//! ordinary test run fails on drift too.

use std::path::{Path, PathBuf};

use serde_json::Value;

mod lint;

pub use lint::lint;

/// Where the contract lives: `openapi.yaml` at the workspace root.
pub fn spec_path() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("..")
        .join("openapi.yaml")
}

/// The spec as the code describes it, exactly as it should be committed.
pub fn render() -> anyhow::Result<String> {
    tributary::http::spec::yaml()
}

/// The spec as a JSON value, for linting.
pub fn document() -> anyhow::Result<Value> {
    tributary::http::spec::document()
}

/// A unified diff from `committed` to `generated`; `None` when equal.
pub fn drift(committed: &str, generated: &str) -> Option<String> {
    if committed == generated {
        return None;
    }
    Some(
        similar::TextDiff::from_lines(committed, generated)
            .unified_diff()
            .context_radius(3)
            .header("openapi.yaml (committed)", "openapi.yaml (from the code)")
            .to_string(),
    )
}
