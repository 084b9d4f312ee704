//! The one table: every case's figures, the ratios, the machine, and each
//! target of issue 6 with whether this run met it.

use std::fmt::Write as _;
use std::time::Duration;

use crate::api::Synced;
use crate::load::Latency;
use crate::{Config, LoadGenerator, SqlTimer};

/// One page case.
#[derive(Debug, Clone)]
pub struct CaseResult {
    /// The case's name.
    pub name: &'static str,
    /// `pageSize`.
    pub page_size: u64,
    /// The `status` filter, if any.
    pub status: Option<&'static str>,
    /// `page`.
    pub page: u64,
    /// `totalResults` of the list.
    pub total: u64,
    /// The request path.
    pub path: String,
    /// The case's first request, alone, before the load (what a reader
    /// straight after the sync waits).
    pub first: Duration,
    /// The API, one client.
    pub api: Latency,
    /// The same SQL through the SQL timer (PostgreSQL only).
    pub sql: Option<Duration>,
    /// The naive build's API.
    pub naive_api: Option<Latency>,
    /// The naive build's SQL.
    pub naive_sql: Option<Duration>,
}

/// The memory case.
#[derive(Debug, Clone)]
pub struct MemoryResult {
    /// Concurrent clients.
    pub clients: u32,
    /// How long they fetched.
    pub duration: Duration,
    /// The server's peak resident memory meanwhile, in bytes.
    pub peak_rss: u64,
    /// What the load generator measured.
    pub load: Latency,
}

/// Everything measured on one database.
#[derive(Debug, Clone)]
pub struct BackendReport {
    /// `PostgreSQL` or `SQLite`.
    pub backend: &'static str,
    /// Invoices synced.
    pub invoices: u64,
    /// The sync.
    pub sync: Synced,
    /// The page cases.
    pub cases: Vec<CaseResult>,
    /// The query cases (API only).
    pub queries: Vec<CaseResult>,
    /// The memory case.
    pub memory: MemoryResult,
    /// The orders company: its sync and its page cases.
    pub orders: CompanyCases,
    /// The company of three connections: its sync and its page cases.
    pub several: CompanyCases,
}

/// Another company's sync and the cases read on it.
#[derive(Debug, Clone)]
pub struct CompanyCases {
    /// The company's sync.
    pub sync: Synced,
    /// Its page cases (API only).
    pub cases: Vec<CaseResult>,
}

/// The whole run.
#[derive(Debug, Clone)]
pub struct Report {
    /// The machine and the run's settings.
    pub header: String,
    /// Per database.
    pub backends: Vec<BackendReport>,
}

/// One target and whether the run met it.
#[derive(Debug, Clone)]
pub struct Check {
    /// What is measured, with its limit.
    pub target: String,
    /// The figure.
    pub figure: String,
    /// Whether the figure meets the limit.
    pub met: bool,
}

/// A table of cases measured through the API only, and a blank line.
fn api_table(out: &mut String, cases: &[CaseResult]) {
    let _ = writeln!(
        out,
        "| case | pageSize | page | totalResults | first request ms | API median ms | req/s |\n\
         |---|---:|---:|---:|---:|---:|---:|"
    );
    for case in cases {
        let _ = writeln!(
            out,
            "| {} | {} | {} | {} | {} | {} | {:.0} |",
            case.name,
            case.page_size,
            case.page,
            case.total,
            ms(case.first),
            ms(case.api.median),
            case.api.throughput
        );
    }
    let _ = writeln!(out);
}

fn ms(duration: Duration) -> String {
    format!("{:.2}", duration.as_secs_f64() * 1e3)
}

/// A sync's phases as the report writes them after its wall time, if the
/// server logged them.
fn phases(sync: &Synced) -> String {
    match sync.phases {
        Some(phases) => format!(
            " (staging {:.1} s of which fetching {:.1} s, publish {:.1} s{})",
            phases.staging.as_secs_f64(),
            phases.fetch.as_secs_f64(),
            phases.publish.as_secs_f64(),
            phases.keys.map_or(String::new(), |keys| format!(
                " of which keys {:.1} s",
                keys.as_secs_f64()
            ))
        ),
        None => String::new(),
    }
}

fn mib(bytes: u64) -> String {
    format!("{:.0} MiB", bytes as f64 / (1024.0 * 1024.0))
}

fn ratio(over: Duration, under: Duration) -> f64 {
    over.as_secs_f64() / under.as_secs_f64().max(1e-9)
}

fn machine() -> String {
    let cores = std::thread::available_parallelism().map_or(0, |cores| cores.get());
    let memory = std::fs::read_to_string("/proc/meminfo")
        .ok()
        .and_then(|info| {
            info.lines()
                .find(|line| line.starts_with("MemTotal:"))
                .and_then(|line| line.split_whitespace().nth(1))
                .and_then(|kib| kib.parse::<u64>().ok())
        })
        .map_or("unknown memory".to_owned(), |kib| {
            format!("{:.1} GiB", kib as f64 / (1024.0 * 1024.0))
        });
    let cpu = std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|info| {
            info.lines()
                .find(|line| line.starts_with("model name"))
                .and_then(|line| line.split(':').nth(1))
                .map(|name| name.trim().to_owned())
        })
        .unwrap_or_else(|| "unknown CPU".to_owned());
    format!("{cores} cores ({cpu}), {memory}")
}

impl Report {
    /// An empty report of a run with `config`.
    pub fn new(config: &Config) -> Self {
        let date = std::process::Command::new("date")
            .args(["-u", "+%Y-%m-%d %H:%M UTC"])
            .output()
            .map(|output| String::from_utf8_lossy(&output.stdout).trim().to_owned())
            .unwrap_or_default();
        let seconds = config.case_duration.as_secs();
        let load = match config.load {
            LoadGenerator::Wrk => format!("wrk with 1 connection for {seconds} s per case"),
            LoadGenerator::Builtin => {
                format!("builtin load generator (Rust) with 1 connection for {seconds} s per case")
            }
        };
        let timer = match config.sql_timer {
            SqlTimer::Pgbench => format!("pgbench 1 client for {seconds} s per case"),
            SqlTimer::Builtin => {
                format!("builtin SQL timer (Rust, sqlx) 1 connection for {seconds} s per case")
            }
        };
        let tls = if config.postgres_tls {
            "PostgreSQL URL as given (TLS when the server offers it)"
        } else {
            "PostgreSQL with sslmode=disable"
        };
        Self {
            header: format!(
                "Run {date} on {}; binary {}; {load}; {timer}; {tls}.",
                machine(),
                config.binary.display(),
            ),
            backends: Vec::new(),
        }
    }

    /// The table, in Markdown.
    pub fn markdown(&self) -> String {
        let mut out = String::new();
        let _ = writeln!(out, "{}\n", self.header);
        for backend in &self.backends {
            let _ = writeln!(
                out,
                "### {} — {} invoices\n\n\
                 | case | page | totalResults | first request ms | API median ms | req/s | SQL median ms | API / SQL | naive API ms | naive SQL ms | naive / API |\n\
                 |---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
                backend.backend, backend.invoices
            );
            for case in &backend.cases {
                let sql = case.sql.map_or("—".to_owned(), ms);
                let api_over_sql = case.sql.map_or("—".to_owned(), |sql| {
                    format!("{:.1}", ratio(case.api.median, sql))
                });
                let naive_api = case
                    .naive_api
                    .map_or("—".to_owned(), |naive| ms(naive.median));
                let naive_sql = case.naive_sql.map_or("—".to_owned(), ms);
                let gain = case.naive_api.map_or("—".to_owned(), |naive| {
                    format!("{:.1}×", ratio(naive.median, case.api.median))
                });
                let _ = writeln!(
                    out,
                    "| {} | {} | {} | {} | {} | {:.0} | {} | {} | {} | {} | {} |",
                    case.name,
                    case.page,
                    case.total,
                    ms(case.first),
                    ms(case.api.median),
                    case.api.throughput,
                    sql,
                    api_over_sql,
                    naive_api,
                    naive_sql,
                    gain
                );
            }
            let sync = &backend.sync;
            let _ = writeln!(
                out,
                "\n- **Sync**: {} invoices (and their customers) in {:.1} s wall{}, {:.0} invoices/s; server peak RSS {}.",
                sync.records,
                sync.wall.as_secs_f64(),
                phases(sync),
                sync.records as f64 / sync.wall.as_secs_f64().max(1e-9),
                mib(sync.peak_rss)
            );
            let memory = &backend.memory;
            let _ = writeln!(
                out,
                "- **Memory**: {} clients fetching random pageSize=5000 pages for {} s: server peak RSS {}, {:.0} pages/s, median {} ms.\n",
                memory.clients,
                memory.duration.as_secs(),
                mib(memory.peak_rss),
                memory.load.throughput,
                ms(memory.load.median)
            );
            let _ = writeln!(
                out,
                "- **Queries** on the same invoices, straight after the sync (the first request with a query \
                 and order reads where its matches sit, in order; the load after it reads with that order \
                 remembered):\n"
            );
            api_table(&mut out, &backend.queries);
            let orders = &backend.orders;
            let _ = writeln!(
                out,
                "- **Orders**: a second company of {} orders synced in {:.1} s wall{} (server peak RSS {}), \
                 then read at once (no `ANALYZE` by anyone):\n",
                orders.sync.records,
                orders.sync.wall.as_secs_f64(),
                phases(&orders.sync),
                mib(orders.sync.peak_rss)
            );
            api_table(&mut out, &orders.cases);
            let several = &backend.several;
            let _ = writeln!(
                out,
                "- **Three connections**: a third company of {} invoices from three connections synced at once in \
                 {:.1} s wall (server peak RSS {}), then read at once; its list merges the three (the first read of \
                 a deep page reads the merged order, which later pages reuse):\n",
                several.sync.records,
                several.sync.wall.as_secs_f64(),
                mib(several.sync.peak_rss)
            );
            api_table(&mut out, &several.cases);
            let _ = writeln!(out, "| target | figure | met |\n|---|---|---|");
            for check in backend.checks() {
                let _ = writeln!(
                    out,
                    "| {} | {} | {} |",
                    check.target,
                    check.figure,
                    if check.met { "yes" } else { "**no**" }
                );
            }
            let _ = writeln!(out);
        }
        out
    }
}

impl BackendReport {
    fn case(&self, name: &str) -> Option<&CaseResult> {
        self.cases.iter().find(|case| case.name == name)
    }

    /// The targets of issue 6 that apply to this database.
    pub fn checks(&self) -> Vec<Check> {
        let mut checks = Vec::new();
        let postgres = self.backend == "PostgreSQL";
        let pair = |over: &str, under: &str| -> Option<f64> {
            Some(ratio(
                self.case(over)?.api.median,
                self.case(under)?.api.median,
            ))
        };
        let mut at_most = |target: String, figure: Option<f64>, limit: f64| {
            if let Some(figure) = figure {
                checks.push(Check {
                    target,
                    figure: format!("{figure:.2}"),
                    met: figure <= limit,
                });
            }
        };
        at_most(
            "depth: last page / page 1 ≤ 1.5".to_owned(),
            pair("last page", "page 1"),
            1.5,
        );
        at_most(
            "depth: last page / page 1, status=paid ≤ 1.5".to_owned(),
            pair("last page, status=paid", "page 1, status=paid"),
            1.5,
        );
        at_most(
            "totals: status=paid page 1 / page 1 ≤ 1.5".to_owned(),
            pair("page 1, status=paid", "page 1"),
            1.5,
        );
        at_most(
            "totals: status=paid last page / last page ≤ 1.5".to_owned(),
            pair("last page, status=paid", "last page"),
            1.5,
        );
        let page_one = self.case("page 1").map(|case| case.api.median);
        // Every query case but the hops: page 1, a page by number, an order.
        for case in self
            .queries
            .iter()
            .filter(|case| !case.name.contains("next link"))
        {
            at_most(
                format!("{} / page 1 ≤ 3", case.name),
                page_one.map(|page_one| ratio(case.api.median, page_one)),
                3.0,
            );
        }
        // Issue 34: a query on declared fields answers its first request (the
        // first since the sync) within 3x of the list's page 1's first, and a
        // conjunction of them within 300 ms.
        let page_one_first = self.case("page 1").map(|case| case.first);
        for case in self.queries.iter().filter(|case| {
            crate::queries::KEYED_QUERIES
                .iter()
                .any(|query| case.name == format!("query {query}: page 1"))
        }) {
            if case.name.contains("&&") {
                at_most(
                    format!("first request: {} ≤ 300 ms", case.name),
                    Some(case.first.as_secs_f64() * 1e3),
                    300.0,
                );
            } else {
                at_most(
                    format!("first request: {} / page 1's first ≤ 3", case.name),
                    page_one_first.map(|page_one| ratio(case.first, page_one)),
                    3.0,
                );
            }
        }
        let hop = |end: bool| {
            self.queries
                .iter()
                .find(|case| case.name.contains("next link") && case.name.contains("last") == end)
                .map(|case| case.api.median)
        };
        let several = |name: &str| {
            self.several
                .cases
                .iter()
                .find(|case| case.name == name)
                .map(|case| case.api.median)
        };
        for deep in [
            "three connections: middle page",
            "three connections: last page",
        ] {
            at_most(
                format!("{deep} / page 1 ≤ 1.5"),
                several(deep)
                    .zip(several("three connections: page 1"))
                    .map(|(deep, first)| ratio(deep, first)),
                1.5,
            );
        }
        at_most(
            "query: next link to the last full page / next link from page 1 ≤ 1.5".to_owned(),
            hop(true)
                .zip(hop(false))
                .map(|(end, start)| ratio(end, start)),
            1.5,
        );
        if postgres {
            for name in ["page 1", "last page"] {
                let limit = if name == "page 1" { 5.0 } else { 10.0 };
                at_most(
                    format!("absolute: {name} (pageSize=100) median ≤ {limit} ms"),
                    self.case(name)
                        .map(|case| case.api.median.as_secs_f64() * 1e3),
                    limit,
                );
            }
            for case in self.cases.iter().filter(|case| case.page_size == 100) {
                at_most(
                    format!("API / SQL, {} ≤ 3", case.name),
                    case.sql.map(|sql| ratio(case.api.median, sql)),
                    3.0,
                );
            }
            checks.push(Check {
                target: "sync: ≤ 30 s".to_owned(),
                figure: format!("{:.1} s", self.sync.wall.as_secs_f64()),
                met: self.sync.wall <= Duration::from_secs(30),
            });
            checks.push(Check {
                target: "sync: peak RSS < 300 MB".to_owned(),
                figure: mib(self.sync.peak_rss),
                met: self.sync.peak_rss < 300_000_000,
            });
            checks.push(Check {
                target: "memory: RSS < 200 MB with 8 clients at pageSize=5000".to_owned(),
                figure: mib(self.memory.peak_rss),
                met: self.memory.peak_rss < 200_000_000,
            });
            // The issue sets this target at a million rows, on PostgreSQL.
            for name in ["last page", "last page, status=paid"] {
                if let Some(case) = self.case(name)
                    && let Some(naive) = case.naive_api
                {
                    let gain = ratio(naive.median, case.api.median);
                    checks.push(Check {
                        target: format!("versus naive: {name} ≥ 20× faster"),
                        figure: format!("{gain:.1}×"),
                        met: gain >= 20.0,
                    });
                }
            }
        }
        checks
    }
}
