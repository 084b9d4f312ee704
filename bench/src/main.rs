//! `tributary-bench`: see `BENCHMARKS.md`. Builds the release server unless
//! given one, runs the benchmark, prints the table (and writes it with
//! `--output`).

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use anyhow::{Context, bail};
use bench::{LoadGenerator, SqlTimer};
use clap::Parser;

/// The paging and sync benchmark.
#[derive(Parser)]
#[command(version, about)]
struct Options {
    /// PostgreSQL URL of a user who may create databases (the run uses a fresh one and drops it).
    #[arg(long, default_value = "postgres://postgres@127.0.0.1:5432/test")]
    postgres: String,
    /// Skip PostgreSQL.
    #[arg(long)]
    no_postgres: bool,
    /// Skip SQLite.
    #[arg(long)]
    no_sqlite: bool,
    /// Invoices on PostgreSQL.
    #[arg(long, default_value_t = 1_000_000)]
    postgres_invoices: u64,
    /// Invoices on SQLite.
    #[arg(long, default_value_t = 100_000)]
    sqlite_invoices: u64,
    /// Seconds of load per page case (the load generator, then the SQL timer).
    #[arg(long, default_value_t = 5)]
    case_seconds: u64,
    /// Seconds of the eight-client memory case.
    #[arg(long, default_value_t = 20)]
    memory_seconds: u64,
    /// Skip the naive build (OFFSET + COUNT(*) per request).
    #[arg(long)]
    no_naive: bool,
    /// The HTTP load generator: wrk (the figures BENCHMARKS.md reports) or the builtin one written in Rust (nothing to install).
    #[arg(long, value_enum, default_value_t = LoadGenerator::Wrk)]
    load: LoadGenerator,
    /// What runs and times the SQL on PostgreSQL: psql and pgbench, or the builtin client (sqlx). Default: pgbench with `--load wrk`, builtin with `--load builtin`.
    #[arg(long, value_enum)]
    sql_timer: Option<SqlTimer>,
    /// The tributary binary, built with `--features naive-paging` unless `--no-naive`; by default `cargo build --release` builds it.
    #[arg(long)]
    binary: Option<PathBuf>,
    /// Connect to PostgreSQL with `sslmode=disable` (by default the URL is used as given: TLS when the server offers it, as users get).
    #[arg(long)]
    no_tls: bool,
    /// Keep the scratch directory (server logs with each sync's phase timings).
    #[arg(long)]
    keep_files: bool,
    /// Also write the table to this file.
    #[arg(long)]
    output: Option<PathBuf>,
}

fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .map_or_else(|| PathBuf::from("."), Path::to_path_buf)
}

fn release_binary() -> anyhow::Result<PathBuf> {
    let status = Command::new(std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_owned()))
        .current_dir(workspace())
        // The naive build's `--naive-paging` lives behind this feature.
        .args([
            "build",
            "--release",
            "--bin",
            "tributary",
            "--features",
            "naive-paging",
        ])
        .status()
        .context("cargo build --release")?;
    if !status.success() {
        bail!("building the release server failed");
    }
    let target = std::env::var_os("CARGO_TARGET_DIR")
        .map_or_else(|| workspace().join("target"), PathBuf::from);
    Ok(target.join("release").join("tributary"))
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let options = Options::parse();
    let binary = match options.binary {
        Some(binary) => binary,
        None => release_binary()?,
    };
    let workdir = tempfile::Builder::new()
        .prefix("tributary-bench-")
        .tempdir()?;
    eprintln!(
        "scratch files and server logs: {}",
        workdir.path().display()
    );
    let config = bench::Config {
        binary,
        postgres_admin_url: (!options.no_postgres).then_some(options.postgres),
        sqlite: !options.no_sqlite,
        postgres_invoices: options.postgres_invoices,
        sqlite_invoices: options.sqlite_invoices,
        case_duration: Duration::from_secs(options.case_seconds),
        memory_duration: Duration::from_secs(options.memory_seconds),
        memory_clients: 8,
        naive: !options.no_naive,
        postgres_tls: !options.no_tls,
        workdir: workdir.path().to_path_buf(),
        load: options.load,
        sql_timer: options.sql_timer.unwrap_or(match options.load {
            LoadGenerator::Wrk => SqlTimer::Pgbench,
            LoadGenerator::Builtin => SqlTimer::Builtin,
        }),
    };
    let report = bench::run(&config).await?;
    let table = report.markdown();
    println!("{table}");
    if options.keep_files {
        let kept = workdir.keep();
        eprintln!("kept {}", kept.display());
    }
    if let Some(path) = options.output {
        std::fs::write(&path, &table).with_context(|| format!("writing {}", path.display()))?;
    }
    Ok(())
}
