//! Generates the client from the checked-in `openapi.yaml` with progenitor,
//! so the contract handed to partners is the one the tests exercise.

use std::path::Path;

fn main() {
    // Read at run time: a value baked in at compile time would follow a
    // reused build-script binary to another checkout's spec.
    let manifest_dir = std::env::var("CARGO_MANIFEST_DIR").expect("cargo sets CARGO_MANIFEST_DIR");
    let spec_path = Path::new(&manifest_dir).join("../openapi.yaml");
    println!("cargo:rerun-if-changed={}", spec_path.display());
    let text = std::fs::read_to_string(&spec_path).expect("openapi.yaml is readable");
    let mut document: serde_yaml::Value =
        serde_yaml::from_str(&text).expect("openapi.yaml is YAML");
    request_bodies_any_of_as_one_of(&mut document);
    let spec: openapiv3::OpenAPI =
        serde_yaml::from_value(document).expect("openapi.yaml is OpenAPI 3.0");
    let mut generator = progenitor::Generator::default();
    let tokens = generator
        .generate_tokens(&spec)
        .expect("progenitor can generate a client from openapi.yaml");
    let syntax = syn::parse2(tokens).expect("progenitor emits valid Rust");
    let code = prettyplease::unparse(&syntax);
    let out = Path::new(&std::env::var("OUT_DIR").expect("cargo sets OUT_DIR")).join("codegen.rs");
    std::fs::write(out, code).expect("the generated client can be written");
}

/// A request body listed as `anyOf` alternatives (the authorization body:
/// one per platform, some of the same shape) is sent as exactly one of them,
/// which progenitor models best as `oneOf`: an enum with a variant per
/// platform. (For `anyOf` it would make a struct of optional parts.)
fn request_bodies_any_of_as_one_of(document: &mut serde_yaml::Value) {
    let Some(paths) = document.get_mut("paths").and_then(|p| p.as_mapping_mut()) else {
        return;
    };
    for (_, item) in paths.iter_mut() {
        let Some(item) = item.as_mapping_mut() else {
            continue;
        };
        for (_, operation) in item.iter_mut() {
            let schema = operation
                .get_mut("requestBody")
                .and_then(|body| body.get_mut("content"))
                .and_then(|content| content.get_mut("application/json"))
                .and_then(|media| media.get_mut("schema"))
                .and_then(|schema| schema.as_mapping_mut());
            if let Some(schema) = schema
                && let Some(alternatives) = schema.remove("anyOf")
            {
                schema.insert("oneOf".into(), alternatives);
            }
        }
    }
}
