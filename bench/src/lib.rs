//! The paging and sync benchmark of tributary (issue 6): a real server per
//! database, a large sandbox synced through the API and the engine, HTTP
//! load from wrk (or the builtin generator), the same SQL timed by pgbench
//! (or the builtin timer), the naive `OFFSET` + `COUNT(*)` server measured
//! against the same data, and one table.
//!
//! `src/main.rs` is the command; the end-to-end suite runs [`run`] on a
//! small dataset, with the builtin load generator and SQL timer, so the
//! harness keeps working on a machine with nothing but Rust.

pub mod api;
pub mod calls;
pub mod changes;
pub mod ledger;
pub mod load;
pub mod migration;
pub mod phases;
pub mod process;
pub mod queries;
pub mod report;
pub mod resync;
pub mod rust_load;
pub mod rust_sql;
pub mod sql;

pub use load::LoadGenerator;
pub use sql::SqlTimer;

use std::path::PathBuf;
use std::process::Command;
use std::time::Duration;

use anyhow::{Context, bail};

use crate::load::Requests;
use crate::process::{PeakMemory, Server, ServerSpec};
use crate::report::{BackendReport, CaseResult, CompanyCases, MemoryResult, Report};

/// What to measure.
#[derive(Debug, Clone)]
pub struct Config {
    /// The `tributary` binary (a release build for real figures).
    pub binary: PathBuf,
    /// A PostgreSQL URL whose user may create databases; `None` skips PostgreSQL.
    pub postgres_admin_url: Option<String>,
    /// Whether to run on SQLite.
    pub sqlite: bool,
    /// Invoices synced on PostgreSQL.
    pub postgres_invoices: u64,
    /// Invoices synced on SQLite.
    pub sqlite_invoices: u64,
    /// How long the load generator, then the SQL timer, run each page case.
    pub case_duration: Duration,
    /// How long the eight clients fetch `pageSize=5000` pages.
    pub memory_duration: Duration,
    /// Concurrent clients of the memory case.
    pub memory_clients: u32,
    /// Also measure the naive build (`OFFSET` + `COUNT(*)` per request).
    pub naive: bool,
    /// Scratch space: SQLite files, server logs, pgbench logs.
    pub workdir: PathBuf,
    /// What drives the HTTP load: wrk (the full benchmark) or the builtin
    /// generator (the smoke test; no tool to install).
    pub load: LoadGenerator,
    /// What runs the SQL on PostgreSQL: psql and pgbench (the full
    /// benchmark) or the builtin client and timer (the smoke test).
    pub sql_timer: SqlTimer,
    /// Connect to PostgreSQL as the URL says, which by default means TLS
    /// when the server offers it (what users get); `false` adds
    /// `sslmode=disable` (the figures before issue 14, for comparison).
    pub postgres_tls: bool,
}

/// The page cases, in table order: (name, page size, status, which page).
const CASES: [(&str, u64, Option<&'static str>, Which); 8] = [
    ("page 1", 100, None, Which::First),
    ("middle page", 100, None, Which::Middle),
    ("last page", 100, None, Which::Last),
    ("page 1, status=paid", 100, Some("Paid"), Which::First),
    ("middle page, status=paid", 100, Some("Paid"), Which::Middle),
    ("last page, status=paid", 100, Some("Paid"), Which::Last),
    ("page 1, pageSize=5000", 5000, None, Which::First),
    ("last page, pageSize=5000", 5000, None, Which::Last),
];

/// The orders cases (issue 13): the same list shapes on a second company
/// of as many orders, read without anyone analysing the new rows first.
const ORDER_CASES: [(&str, u64, Option<&'static str>, Which); 5] = [
    ("orders: page 1", 100, None, Which::First),
    ("orders: middle page", 100, None, Which::Middle),
    ("orders: last page", 100, None, Which::Last),
    (
        "orders: page 1, status=Completed",
        100,
        Some("Completed"),
        Which::First,
    ),
    (
        "orders: last page, status=Completed",
        100,
        Some("Completed"),
        Which::Last,
    ),
];

/// The cases of a company whose invoices come from three connections
/// (issue 14): its merged list at depth, read straight after the sync.
const SEVERAL_CASES: [(&str, u64, Option<&'static str>, Which); 4] = [
    ("three connections: page 1", 100, None, Which::First),
    ("three connections: middle page", 100, None, Which::Middle),
    ("three connections: last page", 100, None, Which::Last),
    (
        "three connections: last page, status=paid",
        100,
        Some("Paid"),
        Which::Last,
    ),
];

#[derive(Debug, Clone, Copy)]
enum Which {
    First,
    Middle,
    Last,
}

impl Which {
    fn page(self, total: u64, page_size: u64) -> u64 {
        let last = total.div_ceil(page_size).max(1);
        match self {
            Which::First => 1,
            Which::Middle => last.div_ceil(2),
            Which::Last => last,
        }
    }
}

/// Installs ring as rustls' process-wide crypto provider unless one is
/// installed: where reqwest is built with tributary's `rustls-no-provider`
/// (the workspace's test build), creating a client panics without it.
pub fn ensure_crypto_provider() {
    // Installing twice is harmless: the first provider stays.
    let _ = rustls::crypto::ring::default_provider().install_default();
}

/// Runs every configured backend and returns the report.
pub async fn run(config: &Config) -> anyhow::Result<Report> {
    ensure_crypto_provider();
    if config.load == LoadGenerator::Wrk {
        load::ensure_wrk()?;
    }
    if config.postgres_admin_url.is_some() && config.sql_timer == SqlTimer::Pgbench {
        sql::ensure_client_tools()?;
    }
    std::fs::create_dir_all(&config.workdir)?;
    let mut report = Report::new(config);
    if let Some(admin_url) = &config.postgres_admin_url {
        let name = format!("tributary_bench_{}", std::process::id());
        let url =
            sql::fresh_database(config.sql_timer, admin_url, &name, config.postgres_tls).await?;
        let keys = generate_encryption_key(config)?;
        let measured = measure(
            config,
            "PostgreSQL",
            &url,
            Some(keys),
            config.postgres_invoices,
        )
        .await;
        sql::drop_database(config.sql_timer, admin_url, &name).await?;
        report.backends.push(measured?);
    }
    if config.sqlite {
        let directory = tempfile::tempdir_in(&config.workdir)?;
        let url = format!(
            "sqlite://{}?mode=rwc",
            directory.path().join("bench.db").display()
        );
        report
            .backends
            .push(measure(config, "SQLite", &url, None, config.sqlite_invoices).await?);
    }
    Ok(report)
}

fn generate_encryption_key(config: &Config) -> anyhow::Result<String> {
    let output = Command::new(&config.binary)
        .args(["encryption-key", "generate"])
        .output()
        .context("tributary encryption-key generate")?;
    if !output.status.success() {
        bail!("tributary encryption-key generate failed");
    }
    Ok(String::from_utf8(output.stdout)?.trim().to_owned())
}

async fn measure(
    config: &Config,
    backend: &'static str,
    database_url: &str,
    encryption_keys: Option<String>,
    invoice_count: u64,
) -> anyhow::Result<BackendReport> {
    let postgres = backend == "PostgreSQL";
    let spec = ServerSpec {
        binary: config.binary.clone(),
        database_url: database_url.to_owned(),
        encryption_keys,
        sync_workers: 2,
        naive_paging: false,
        layering_at_rows: None,
    };
    let log = config.workdir.join(format!("{backend}-server.log"));
    let mut server = Server::start(&spec, &log).await?;
    eprintln!("[{backend}] syncing {invoice_count} sandbox invoices…");
    let synced = api::create_and_sync(&server, "invoices", invoice_count).await?;
    eprintln!(
        "[{backend}] synced {} invoices in {:.1} s",
        synced.records,
        synced.wall.as_secs_f64()
    );
    // No `ANALYZE`: the cases read the table as a user would right after
    // the sync, with whatever statistics autovacuum has (or has not yet)
    // gathered.
    let visible = if postgres {
        Some(sql::visible_invoices(config.sql_timer, database_url).await?)
    } else {
        None
    };

    let invoices_path = format!("/companies/{}/data/invoices", synced.company_id);
    let mut cases = Vec::new();
    for (name, page_size, status, which) in CASES {
        let filter = status.map_or(String::new(), |status| format!("&status={status}"));
        let total =
            api::total_results(&server, &format!("{invoices_path}?pageSize=1{filter}")).await?;
        let page = which.page(total, page_size);
        let path = format!("{invoices_path}?page={page}&pageSize={page_size}{filter}");
        eprintln!("[{backend}] {name}: {path}");
        let first = api::first_request(&server, &path).await?;
        let api = load::run(
            config.load,
            &server.base_url,
            &Requests::Path(path.clone()),
            1,
            config.case_duration,
            &config.workdir,
        )?;
        let sql = match &visible {
            Some(visible) => Some(
                sql::time_page(
                    config.sql_timer,
                    database_url,
                    &sql::page_script(visible, page, page_size, status, false),
                    config.case_duration,
                    &config.workdir,
                )
                .await?,
            ),
            None => None,
        };
        cases.push(CaseResult {
            name,
            page_size,
            status,
            page,
            total,
            path,
            first,
            api,
            sql,
            naive_api: None,
            naive_sql: None,
        });
    }

    let last_big_page = cases
        .iter()
        .find(|case| case.page_size == 5000 && case.name.starts_with("last"))
        .map_or(1, |case| case.page);
    let queries = queries::measure(config, backend, &server, &invoices_path).await?;
    let memory = memory_under_load(config, &server, &invoices_path, last_big_page)?;
    eprintln!("[{backend}] syncing {invoice_count} sandbox orders…");
    let orders_sync = api::create_and_sync(&server, "orders", invoice_count).await?;
    let orders = measure_company(config, backend, &server, orders_sync, &ORDER_CASES).await?;
    eprintln!("[{backend}] syncing {invoice_count} sandbox invoices from three connections…");
    let several_sync = api::create_and_sync_in(&server, "invoices", invoice_count, 3).await?;
    let several = measure_company(config, backend, &server, several_sync, &SEVERAL_CASES).await?;
    server.stop();

    if config.naive {
        let naive_spec = ServerSpec {
            sync_workers: 0,
            naive_paging: true,
            layering_at_rows: None,
            ..spec
        };
        let log = config.workdir.join(format!("{backend}-naive-server.log"));
        let naive_server = Server::start(&naive_spec, &log).await?;
        for case in &mut cases {
            eprintln!("[{backend}] naive {}", case.name);
            case.naive_api = Some(load::run(
                config.load,
                &naive_server.base_url,
                &Requests::Path(case.path.clone()),
                1,
                config.case_duration,
                &config.workdir,
            )?);
            if let Some(visible) = &visible {
                case.naive_sql = Some(
                    sql::time_page(
                        config.sql_timer,
                        database_url,
                        &sql::page_script(visible, case.page, case.page_size, case.status, true),
                        config.case_duration,
                        &config.workdir,
                    )
                    .await?,
                );
            }
        }
    }
    Ok(BackendReport {
        backend,
        invoices: synced.records,
        sync: synced,
        cases,
        queries,
        memory,
        orders,
        several,
    })
}

/// Reads `cases` of the company `sync` synced through the API only,
/// straight after the sync.
async fn measure_company(
    config: &Config,
    backend: &'static str,
    server: &Server,
    sync: api::Synced,
    cases_to_read: &[(&'static str, u64, Option<&'static str>, Which)],
) -> anyhow::Result<CompanyCases> {
    eprintln!(
        "[{backend}] synced {} {} in {:.1} s",
        sync.records,
        sync.data_type,
        sync.wall.as_secs_f64()
    );
    let list_path = format!("/companies/{}/data/{}", sync.company_id, sync.data_type);
    let mut cases = Vec::new();
    for &(name, page_size, status, which) in cases_to_read {
        let filter = status.map_or(String::new(), |status| format!("&status={status}"));
        let total = api::total_results(server, &format!("{list_path}?pageSize=1{filter}")).await?;
        let page = which.page(total, page_size);
        let path = format!("{list_path}?page={page}&pageSize={page_size}{filter}");
        eprintln!("[{backend}] {name}: {path}");
        let first = api::first_request(server, &path).await?;
        let api = load::run(
            config.load,
            &server.base_url,
            &Requests::Path(path.clone()),
            1,
            config.case_duration,
            &config.workdir,
        )?;
        cases.push(CaseResult {
            name,
            page_size,
            status,
            page,
            total,
            path,
            first,
            api,
            sql: None,
            naive_api: None,
            naive_sql: None,
        });
    }
    Ok(CompanyCases { sync, cases })
}

/// Eight clients fetch random `pageSize=5000` pages while the server's
/// resident memory is sampled.
fn memory_under_load(
    config: &Config,
    server: &Server,
    invoices_path: &str,
    pages: u64,
) -> anyhow::Result<MemoryResult> {
    let requests = Requests::RandomPages {
        path: invoices_path.to_owned(),
        pages,
        page_size: 5000,
    };
    let memory = PeakMemory::watch(server.pid());
    let load = load::run(
        config.load,
        &server.base_url,
        &requests,
        config.memory_clients,
        config.memory_duration,
        &config.workdir,
    )?;
    let peak_rss = memory.finish();
    Ok(MemoryResult {
        clients: config.memory_clients,
        duration: config.memory_duration,
        peak_rss,
        load,
    })
}
