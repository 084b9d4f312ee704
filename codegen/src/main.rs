//! `cargo run -p codegen` writes `openapi.yaml` from the code;
//! `cargo run -p codegen -- --check` verifies it instead (exit 1 on drift
//! or lint problems, with a unified diff).

use std::process::ExitCode;

fn main() -> anyhow::Result<ExitCode> {
    let check = match std::env::args().nth(1).as_deref() {
        None => false,
        Some("--check") => true,
        Some(other) => {
            eprintln!("unknown argument {other:?}; usage: codegen [--check]");
            return Ok(ExitCode::from(2));
        }
    };
    let path = codegen::spec_path();
    let generated = codegen::render()?;
    let problems = codegen::lint(&codegen::document()?);
    for problem in &problems {
        eprintln!("lint: {problem}");
    }
    if check {
        let committed = std::fs::read_to_string(&path).unwrap_or_default();
        if let Some(diff) = codegen::drift(&committed, &generated) {
            print!("{diff}");
            eprintln!(
                "{} is out of date: run `cargo run -p codegen` and commit it.",
                path.display()
            );
            return Ok(ExitCode::FAILURE);
        }
    } else {
        std::fs::write(&path, &generated)?;
        eprintln!("wrote {}", path.display());
    }
    Ok(if problems.is_empty() {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    })
}
