//! The committed `openapi.yaml` is what the code generates, and it passes
//! the lint: the ordinary test run fails on drift.

#[test]
fn the_committed_spec_matches_the_code() -> anyhow::Result<()> {
    let committed = std::fs::read_to_string(codegen::spec_path())?;
    if let Some(diff) = codegen::drift(&committed, &codegen::render()?) {
        panic!("openapi.yaml is out of date; run `cargo run -p codegen` and commit it:\n{diff}");
    }
    Ok(())
}

#[test]
fn the_spec_passes_the_lint() -> anyhow::Result<()> {
    let problems = codegen::lint(&codegen::document()?);
    assert!(
        problems.is_empty(),
        "spec lint problems:\n{}",
        problems.join("\n")
    );
    Ok(())
}
