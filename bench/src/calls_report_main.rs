//! `tributary-calls-report`: the platform calls table of `BENCHMARKS.md`
//! (issue 33), rendered from the JSON lines the API suite's platform
//! scenarios append to the file `TRIBUTARY_CALLS_REPORT` names.

use std::path::PathBuf;

use anyhow::Context;
use clap::Parser;

/// Renders the platform calls report as a markdown table.
#[derive(Parser)]
#[command(version, about)]
struct Options {
    /// The report file (`TRIBUTARY_CALLS_REPORT=FILE cargo test -p tributary --test api platforms::`).
    file: PathBuf,
}

fn main() -> anyhow::Result<()> {
    let options = Options::parse();
    let lines = std::fs::read_to_string(&options.file)
        .with_context(|| format!("reading {}", options.file.display()))?;
    print!("{}", bench::calls::render(&lines)?);
    Ok(())
}
