//! `tributary-resync-bench`: the resync benchmark (see `BENCHMARKS.md`).
//! Runs the release server on a fresh PostgreSQL database (TLS as the
//! server offers it, the product's defaults, autovacuum as the server has
//! it) and, per list size, syncs a sandbox connection, then resyncs it with
//! every record changed and with half of them deleted.

use std::path::PathBuf;

use anyhow::Context;
use bench::SqlTimer;
use bench::process::{Server, ServerSpec};
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
    /// Also write the table to this file.
    #[arg(long)]
    output: Option<PathBuf>,
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let options = Options::parse();
    bench::ensure_crypto_provider();
    let workspace = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..");
    let binary = options
        .binary
        .unwrap_or_else(|| workspace.join("target/release/tributary"));
    anyhow::ensure!(
        binary.exists(),
        "{} does not exist: run `cargo build --release --bin tributary` first",
        binary.display()
    );
    let workdir = tempfile::Builder::new()
        .prefix("tributary-resync-bench-")
        .tempdir()?;
    let keys = std::process::Command::new(&binary)
        .args(["encryption-key", "generate"])
        .output()
        .context("tributary encryption-key generate")?;
    let keys = String::from_utf8(keys.stdout)?.trim().to_owned();
    let mut runs = Vec::new();
    for invoices in options.invoices {
        let name = format!("tributary_resync_bench_{}_{invoices}", std::process::id());
        let url =
            bench::sql::fresh_database(SqlTimer::Builtin, &options.postgres, &name, true).await?;
        let spec = ServerSpec {
            binary: binary.clone(),
            database_url: url,
            encryption_keys: Some(keys.clone()),
            sync_workers: 2,
            naive_paging: false,
        };
        let log = workdir.path().join(format!("server-{invoices}.log"));
        let mut server = Server::start(&spec, &log).await?;
        let measured = bench::resync::measure(&server, invoices).await;
        server.stop();
        bench::sql::drop_database(SqlTimer::Builtin, &options.postgres, &name).await?;
        runs.push(measured?);
    }
    let table = bench::resync::markdown(&runs);
    println!("{table}");
    if let Some(path) = options.output {
        std::fs::write(&path, &table).with_context(|| format!("writing {}", path.display()))?;
    }
    Ok(())
}
