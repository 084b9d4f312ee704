//! `tributary-resync-bench`: the resync benchmark (see `BENCHMARKS.md`).
//! Runs the release server on a fresh PostgreSQL database (TLS as the
//! server offers it, the product's defaults, autovacuum as the server has
//! it) and, per list size, syncs a sandbox connection, then resyncs it with
//! every record changed and with half of them deleted; or, with `--changes`,
//! resyncs it with exactly that many invoices amended, one count at a time.

use std::path::PathBuf;

use anyhow::Context;
use bench::process::PerSize;
use clap::Parser;

/// The resync benchmark.
#[derive(Parser)]
#[command(version, about)]
struct Options {
    /// PostgreSQL URL of a user who may create databases (the run uses a fresh one per size and drops it).
    #[arg(long, default_value = "postgres://postgres@127.0.0.1:5432/test")]
    postgres: String,
    /// The list sizes, comma-separated.
    #[arg(long, value_delimiter = ',', default_values_t = [100_000u64, 1_000_000])]
    invoices: Vec<u64>,
    /// The tributary binary (by default `target/release/tributary`; build it with `cargo build --release --bin tributary`).
    #[arg(long)]
    binary: Option<PathBuf>,
    /// Instead of the every-changed and half-deleted cases, resync with exactly this many invoices amended,
    /// one count after another, comma-separated (issue 33: `0,1000,100000`).
    #[arg(long, value_delimiter = ',')]
    changes: Vec<u64>,
    /// Publish each resync of a list this long as a layer (the server built with
    /// `--features layering`).
    #[arg(long)]
    layering_at_rows: Option<u64>,
    /// Also write the table to this file.
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
        name: "resync",
        layering_at_rows: options.layering_at_rows,
    };
    let table = if options.changes.is_empty() {
        let runs = per_size
            .run(&options.invoices, async |server, invoices| {
                bench::resync::measure(server, invoices).await
            })
            .await?;
        bench::resync::markdown(&runs)
    } else {
        let runs = per_size
            .run(&options.invoices, async |server, invoices| {
                let layered = options.layering_at_rows.is_some();
                bench::changes::measure(server, invoices, &options.changes, layered).await
            })
            .await?;
        bench::changes::markdown(&runs)
    };
    println!("{table}");
    if let Some(path) = options.output {
        std::fs::write(&path, &table).with_context(|| format!("writing {}", path.display()))?;
    }
    Ok(())
}
