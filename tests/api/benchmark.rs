//! The benchmark harness (`bench/`, issue 6) on a small dataset, so it
//! keeps working between real runs: the real server binary, a sync
//! through the API, HTTP load and (on PostgreSQL) the SQL timer, both the
//! builtin ones written in Rust so nothing but the toolchain is needed (no
//! wrk, psql or pgbench), the naive server, and the table. Figures from a
//! debug build on a tiny dataset mean nothing; what is checked is that every
//! case ran and reported exact totals.

use std::path::PathBuf;
use std::time::Duration;

use tributary::data::invoices::InvoiceStatus;
use tributary::data::money::Money;
use tributary::data::orders::OrderStatus;
use tributary::platforms::sandbox::dataset::Dataset;

use crate::helpers::POSTGRES_URL_VAR;

/// The sandbox seed the harness authorizes with.
const BENCH_SEED: u64 = 2026;
const INVOICES: u64 = 600;

#[tokio::test]
async fn the_benchmark_runs_every_case_and_reports_exact_totals() {
    let workdir = tempfile::tempdir().expect("a scratch directory");
    let config = bench::Config {
        binary: PathBuf::from(env!("CARGO_BIN_EXE_tributary")),
        postgres_admin_url: std::env::var(POSTGRES_URL_VAR).ok(),
        sqlite: true,
        postgres_invoices: INVOICES,
        sqlite_invoices: INVOICES,
        case_duration: Duration::from_secs(1),
        memory_duration: Duration::from_secs(1),
        memory_clients: 8,
        naive: true,
        workdir: workdir.path().to_path_buf(),
        load: bench::LoadGenerator::Builtin,
        sql_timer: bench::SqlTimer::Builtin,
        postgres_tls: true,
    };
    let report = bench::run(&config).await.expect("the benchmark runs");

    let dataset = Dataset::invoices_only(BENCH_SEED, INVOICES);
    let paid = (0..INVOICES)
        .filter(|index| dataset.invoice(*index).status == InvoiceStatus::Paid)
        .count() as u64;
    let gbp = (0..INVOICES)
        .filter(|index| dataset.invoice(*index).currency == "GBP")
        .count() as u64;
    let over_1000 = (0..INVOICES)
        .filter(|index| dataset.invoice(*index).amount_due > Money(1000 * 10_000))
        .count() as u64;
    let orders = Dataset {
        order_count: INVOICES,
        ..Dataset::invoices_only(BENCH_SEED, 0)
    };
    let completed_orders = (0..INVOICES)
        .filter(|index| orders.order(*index).status == OrderStatus::Completed)
        .count() as u64;
    let expected_backends = if config.postgres_admin_url.is_some() {
        2
    } else {
        1
    };
    assert_eq!(report.backends.len(), expected_backends);
    for backend in &report.backends {
        assert_eq!(backend.invoices, INVOICES, "{}", backend.backend);
        assert_eq!(backend.cases.len(), 8);
        for case in &backend.cases {
            let expected = if case.name.contains("status=paid") {
                paid
            } else {
                INVOICES
            };
            assert_eq!(case.total, expected, "{} {}", backend.backend, case.name);
            assert!(case.api.requests > 0, "{}", case.name);
            assert!(
                case.naive_api.is_some_and(|naive| naive.requests > 0),
                "{}",
                case.name
            );
            let on_postgres = backend.backend == "PostgreSQL";
            assert_eq!(case.sql.is_some(), on_postgres, "{}", case.name);
            assert_eq!(case.naive_sql.is_some(), on_postgres, "{}", case.name);
        }
        let last = backend
            .cases
            .iter()
            .find(|case| case.name == "last page")
            .expect("the last page case");
        assert_eq!(last.page, INVOICES.div_ceil(100));
        assert!(backend.sync.peak_rss > 0 && backend.memory.peak_rss > 0);
        assert!(
            backend.sync.phases.is_some() && backend.orders.sync.phases.is_some(),
            "{}: the server logged both syncs' phases",
            backend.backend
        );
        assert!(!backend.checks().is_empty());

        assert_eq!(backend.queries.len(), 10, "{}", backend.backend);
        for case in &backend.queries {
            let expected = match case.name {
                "query currency=GBP: page 1" => Some(gbp),
                "query status=paid: page 1" => Some(paid),
                name if name.starts_with("query amountDue>1000") => Some(over_1000),
                _ => None,
            };
            if let Some(expected) = expected {
                assert_eq!(case.total, expected, "{} {}", backend.backend, case.name);
            }
            assert!(case.api.requests > 0, "{}", case.name);
        }
        let hop_to_end = backend
            .queries
            .iter()
            .find(|case| case.name.ends_with("next link to the last full page"))
            .expect("the walk's last hop");
        assert_eq!(
            hop_to_end.page,
            (over_1000 / hop_to_end.page_size).max(2),
            "the walk reached the last full page"
        );
        assert!(hop_to_end.path.contains("cursor="), "{}", hop_to_end.path);

        let orders = &backend.orders;
        assert_eq!(orders.sync.records, INVOICES, "{}", backend.backend);
        assert_eq!(orders.cases.len(), 5);
        for case in &orders.cases {
            let expected = if case.name.contains("status=Completed") {
                completed_orders
            } else {
                INVOICES
            };
            assert_eq!(case.total, expected, "{} {}", backend.backend, case.name);
            assert!(case.api.requests > 0, "{}", case.name);
        }
    }
    // The third company: the same number of invoices from three
    // connections, seeded one after the other.
    let paid_of_three: u64 = (0..3)
        .map(|index| {
            let dataset = Dataset::invoices_only(BENCH_SEED + index, INVOICES / 3);
            (0..INVOICES / 3)
                .filter(|at| dataset.invoice(*at).status == InvoiceStatus::Paid)
                .count() as u64
        })
        .sum();
    for backend in &report.backends {
        let several = &backend.several;
        assert_eq!(several.sync.records, INVOICES, "{}", backend.backend);
        assert_eq!(several.cases.len(), 4);
        for case in &several.cases {
            let expected = if case.name.contains("status=paid") {
                paid_of_three
            } else {
                INVOICES
            };
            assert_eq!(case.total, expected, "{} {}", backend.backend, case.name);
            assert!(case.api.requests > 0, "{}", case.name);
        }
    }
    let table = report.markdown();
    assert!(table.contains("### SQLite — 600 invoices"), "{table}");
    assert!(table.contains("| last page, status=paid |"), "{table}");
    assert!(
        table.contains("| orders: last page, status=Completed |"),
        "{table}"
    );
    assert!(
        table.contains("| three connections: last page |"),
        "{table}"
    );
}
