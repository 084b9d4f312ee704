//! `tributary-ledger-bench`: the accounting model's cost (see
//! `BENCHMARKS.md`). Runs the release server on a fresh PostgreSQL database
//! (TLS as the server offers it, the product's defaults, autovacuum as the
//! server has it) and, per size, syncs each data type of a sandbox
//! connection alone and reads its first and last page.

use std::path::PathBuf;

use anyhow::Context;
use bench::process::PerSize;
use clap::Parser;

/// The accounting model's cost benchmark.
#[derive(Parser)]
#[command(version, about)]
struct Options {
    /// PostgreSQL URL of a user who may create databases (the run uses a fresh one per size and drops it).
    #[arg(long, default_value = "postgres://postgres@127.0.0.1:5432/test")]
    postgres: String,
    /// The invoice counts, comma-separated (the sandbox makes the other data types from them).
    #[arg(long, value_delimiter = ',', default_values_t = [100_000u64])]
    invoices: Vec<u64>,
    /// Only these data types, comma-separated (by default every one; invoices
    /// should be among them, as every rate is against theirs).
    #[arg(long, value_delimiter = ',')]
    data_types: Vec<String>,
    /// The tributary binary (by default `target/release/tributary`; build it with `cargo build --release --bin tributary`).
    #[arg(long)]
    binary: Option<PathBuf>,
    /// Also write the tables to this file.
    #[arg(long)]
    output: Option<PathBuf>,
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let options = Options::parse();
    bench::ensure_crypto_provider();
    let per_size = PerSize {
        postgres: &options.postgres,
        binary: options.binary,
        name: "ledger",
        layering_at_rows: None,
    };
    let tables = per_size
        .run(&options.invoices, async |server, invoices| {
            let measured = bench::ledger::measure(server, invoices, &options.data_types).await?;
            Ok(bench::ledger::markdown(invoices, &measured))
        })
        .await?;
    let tables = tables.join("\n");
    println!("{tables}");
    if let Some(path) = options.output {
        std::fs::write(&path, &tables).with_context(|| format!("writing {}", path.display()))?;
    }
    Ok(())
}
