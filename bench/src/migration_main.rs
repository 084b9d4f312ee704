//! `tributary-migration-bench`: the managed migration benchmark (see
//! `BENCHMARKS.md`). Runs the release server on a fresh PostgreSQL database
//! (TLS as the server offers it, the product's defaults) and imports a
//! batch of sandbox rows while reading a page.

use std::path::PathBuf;

use anyhow::Context;
use bench::SqlTimer;
use bench::process::{Server, ServerSpec};
use clap::Parser;

/// The managed migration benchmark.
#[derive(Parser)]
#[command(version, about)]
struct Options {
    /// PostgreSQL URL of a user who may create databases (the run uses a fresh one and drops it).
    #[arg(long, default_value = "postgres://postgres@127.0.0.1:5432/test")]
    postgres: String,
    /// Rows in the batch.
    #[arg(long, default_value_t = 10_000)]
    rows: usize,
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
        .prefix("tributary-migration-bench-")
        .tempdir()?;
    let name = format!("tributary_migration_bench_{}", std::process::id());
    let url = bench::sql::fresh_database(SqlTimer::Builtin, &options.postgres, &name, true).await?;
    let keys = std::process::Command::new(&binary)
        .args(["encryption-key", "generate"])
        .output()
        .context("tributary encryption-key generate")?;
    let spec = ServerSpec {
        binary,
        database_url: url,
        encryption_keys: Some(String::from_utf8(keys.stdout)?.trim().to_owned()),
        sync_workers: 2,
        naive_paging: false,
        layering_at_rows: None,
    };
    let mut server = Server::start(&spec, &workdir.path().join("server.log")).await?;
    let measured = bench::migration::measure(&server, options.rows).await;
    server.stop();
    bench::sql::drop_database(SqlTimer::Builtin, &options.postgres, &name).await?;
    let figures = measured?;
    let table = figures.markdown();
    println!("{table}");
    if let Some(path) = options.output {
        std::fs::write(&path, &table).with_context(|| format!("writing {}", path.display()))?;
    }
    Ok(())
}
