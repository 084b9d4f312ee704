//! PostgreSQL from the outside: a fresh database per run, the visible
//! generation, and the SQL floor of each page case timed
//! with the page's own statements ([`page_script`], the one place their text
//! lives). Two clients do it, chosen by [`SqlTimer`]: psql and pgbench (the
//! full benchmark's default), or sqlx from Rust ([`crate::rust_sql`]), which
//! needs no PostgreSQL client tools.

use std::path::Path;
use std::process::Command;
use std::time::Duration;

use anyhow::{Context, bail};

use crate::rust_sql;

/// Which client runs the harness's SQL on PostgreSQL and times the page
/// statements.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum SqlTimer {
    /// psql for the harness's statements, pgbench (one client, its
    /// per-transaction log) for the timing: the full benchmark's default.
    Pgbench,
    /// sqlx from Rust for both: the same statements, one after another on one
    /// connection for the duration; nothing to install.
    Builtin,
}

impl SqlTimer {
    /// How the report names it.
    pub fn describe(self) -> &'static str {
        match self {
            SqlTimer::Pgbench => "pgbench",
            SqlTimer::Builtin => "the builtin SQL timer (Rust, sqlx)",
        }
    }
}

/// Checks psql and pgbench are installed (for [`SqlTimer::Pgbench`]).
pub fn ensure_client_tools() -> anyhow::Result<()> {
    for tool in ["psql", "pgbench"] {
        if Command::new(tool).arg("--version").output().is_err() {
            bail!(
                "{tool} is not installed: install PostgreSQL's client tools, or run with `--sql-timer builtin`"
            );
        }
    }
    Ok(())
}

/// Runs one statement (`CREATE DATABASE` and the like) with `timer`'s client.
pub async fn execute(timer: SqlTimer, url: &str, sql: &str) -> anyhow::Result<()> {
    match timer {
        SqlTimer::Pgbench => psql(url, sql).map(drop),
        SqlTimer::Builtin => rust_sql::execute(url, sql).await,
    }
}

/// Runs one statement with psql and returns its unaligned output.
pub fn psql(url: &str, sql: &str) -> anyhow::Result<String> {
    let output = Command::new("psql")
        .args(["-X", "-At", "-v", "ON_ERROR_STOP=1", url, "-c", sql])
        .output()
        .context("running psql (PostgreSQL's client)")?;
    if !output.status.success() {
        bail!(
            "psql failed on {sql:?}: {}",
            String::from_utf8_lossy(&output.stderr)
        );
    }
    Ok(String::from_utf8_lossy(&output.stdout).trim().to_owned())
}

/// Creates (or re-creates) database `name` on the server of `admin_url`
/// and returns its URL (server and SQL timer alike use it): as given, so
/// with TLS when the server offers it, unless `tls` is `false`.
pub async fn fresh_database(
    timer: SqlTimer,
    admin_url: &str,
    name: &str,
    tls: bool,
) -> anyhow::Result<String> {
    execute(timer, admin_url, &drop_database_sql(name)).await?;
    execute(timer, admin_url, &format!("CREATE DATABASE \"{name}\"")).await?;
    let mut url = reqwest::Url::parse(admin_url).context("the PostgreSQL URL")?;
    url.set_path(name);
    if !tls {
        url.query_pairs_mut().append_pair("sslmode", "disable");
    }
    Ok(url.to_string())
}

/// Drops database `name`.
pub async fn drop_database(timer: SqlTimer, admin_url: &str, name: &str) -> anyhow::Result<()> {
    execute(timer, admin_url, &drop_database_sql(name)).await
}

fn drop_database_sql(name: &str) -> String {
    format!("DROP DATABASE IF EXISTS \"{name}\" WITH (FORCE)")
}

/// Where a connection's visible invoices are.
#[derive(Debug, Clone)]
pub struct Visible {
    /// The connection.
    pub connection_id: String,
    /// Its published generation.
    pub generation: i64,
}

/// The query of [`visible_invoices`], for both clients: the connection (as
/// text) and the generation of the one synced invoice list.
pub const VISIBLE_INVOICES_SQL: &str =
    "SELECT connection_id::text, generation FROM data_generation WHERE data_type = 'invoices'";

/// The one synced invoice generation in the database.
pub async fn visible_invoices(timer: SqlTimer, url: &str) -> anyhow::Result<Visible> {
    let (connection_id, generation) = match timer {
        SqlTimer::Pgbench => {
            let row = psql(url, VISIBLE_INVOICES_SQL)?;
            let (connection_id, generation) = row
                .split_once('|')
                .filter(|(_, generation)| !generation.contains('\n'))
                .with_context(|| format!("one synced generation, found {row:?}"))?;
            (connection_id.to_owned(), generation.parse()?)
        }
        SqlTimer::Builtin => rust_sql::one_text_and_integer(url, VISIBLE_INVOICES_SQL)
            .await
            .context("one synced generation")?,
    };
    Ok(Visible {
        connection_id,
        generation,
    })
}

/// The statements the endpoint runs for the page's rows and its total, as
/// one pgbench transaction.
pub fn page_script(
    visible: &Visible,
    page: u64,
    page_size: u64,
    status: Option<&str>,
    naive: bool,
) -> String {
    let Visible {
        connection_id,
        generation,
    } = visible;
    let scope = format!(
        "connection_id = '{connection_id}' AND data_type = 'invoices' AND generation = {generation}"
    );
    let (filter, ordinal) = match status {
        Some(status) => (format!(" AND filter_value = '{status}'"), "filter_ordinal"),
        None => (String::new(), "ordinal"),
    };
    let offset = (page - 1) * page_size;
    if naive {
        format!(
            "SELECT count(*) FROM record WHERE {scope}{filter};\n\
             SELECT body FROM record WHERE {scope}{filter} ORDER BY {ordinal} LIMIT {page_size} OFFSET {offset};\n"
        )
    } else {
        let total = match status {
            Some(_) => format!(
                "SELECT filter_ordinal FROM record WHERE {scope}{filter} ORDER BY filter_ordinal DESC LIMIT 1;"
            ),
            None => format!(
                "SELECT record_count FROM data_generation WHERE connection_id = '{connection_id}' AND data_type = 'invoices';"
            ),
        };
        format!(
            "{total}\n\
             SELECT body FROM record WHERE {scope}{filter} AND {ordinal} > {offset} AND {ordinal} <= {} ORDER BY {ordinal};\n",
            offset + page_size
        )
    }
}

/// The median latency of a page case's `script` (from [`page_script`]) run
/// over and over by `timer` on one connection for `duration`.
pub async fn time_page(
    timer: SqlTimer,
    url: &str,
    script: &str,
    duration: Duration,
    workdir: &Path,
) -> anyhow::Result<Duration> {
    match timer {
        SqlTimer::Pgbench => pgbench(url, script, duration, workdir),
        SqlTimer::Builtin => rust_sql::time_script(url, script, duration).await,
    }
}

/// The median latency of `script` run by pgbench (one client) for `duration`.
pub fn pgbench(
    url: &str,
    script: &str,
    duration: Duration,
    workdir: &Path,
) -> anyhow::Result<Duration> {
    let run = tempfile::tempdir_in(workdir)?;
    let script_path = run.path().join("case.sql");
    std::fs::write(&script_path, script)?;
    let output = Command::new("pgbench")
        .current_dir(run.path())
        .args(["-n", "-c", "1", "-T"])
        .arg(duration.as_secs().max(1).to_string())
        .arg("-f")
        .arg(&script_path)
        .args(["-l", "--log-prefix=case"])
        .arg(url)
        .output()
        .context("running pgbench")?;
    if !output.status.success() {
        bail!(
            "pgbench failed: {}{}",
            String::from_utf8_lossy(&output.stdout),
            String::from_utf8_lossy(&output.stderr)
        );
    }
    let mut latencies_us = Vec::new();
    for entry in std::fs::read_dir(run.path())? {
        let path = entry?.path();
        let is_log = path
            .file_name()
            .and_then(|name| name.to_str())
            .is_some_and(|name| name.starts_with("case."));
        if !is_log {
            continue;
        }
        // client_id transaction_no latency_us script_no epoch epoch_us
        for line in std::fs::read_to_string(&path)?.lines() {
            if let Some(latency) = line
                .split_whitespace()
                .nth(2)
                .and_then(|v| v.parse::<u64>().ok())
            {
                latencies_us.push(latency);
            }
        }
    }
    if latencies_us.is_empty() {
        bail!("pgbench logged no transactions");
    }
    latencies_us.sort_unstable();
    Ok(Duration::from_micros(latencies_us[latencies_us.len() / 2]))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scripts_read_the_same_rows_as_the_endpoint() {
        let visible = Visible {
            connection_id: "c".to_owned(),
            generation: 2,
        };
        let dense = page_script(&visible, 3, 100, Some("Paid"), false);
        assert!(
            dense.contains(
                "filter_value = 'Paid' AND filter_ordinal > 200 AND filter_ordinal <= 300"
            ),
            "{dense}"
        );
        let naive = page_script(&visible, 3, 100, None, true);
        assert!(
            naive.contains("ORDER BY ordinal LIMIT 100 OFFSET 200"),
            "{naive}"
        );
        assert!(naive.contains("SELECT count(*)"), "{naive}");
    }
}
