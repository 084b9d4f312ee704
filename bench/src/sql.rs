//! PostgreSQL from the outside: a fresh database per run (psql), and the
//! SQL floor of each page case timed by pgbench with a custom script.

use std::path::Path;
use std::process::Command;
use std::time::Duration;

use anyhow::{Context, bail};

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
/// and returns its URL, without TLS: the benchmark runs over loopback, where
/// TLS protects nothing, and sqlx's rustls path costs a large sync twice
/// its time (server and pgbench alike use this URL).
pub fn fresh_database(admin_url: &str, name: &str) -> anyhow::Result<String> {
    psql(
        admin_url,
        &format!("DROP DATABASE IF EXISTS \"{name}\" WITH (FORCE)"),
    )?;
    psql(admin_url, &format!("CREATE DATABASE \"{name}\""))?;
    let mut url = reqwest::Url::parse(admin_url).context("the PostgreSQL URL")?;
    url.set_path(name);
    url.query_pairs_mut().append_pair("sslmode", "disable");
    Ok(url.to_string())
}

/// Drops database `name`.
pub fn drop_database(admin_url: &str, name: &str) -> anyhow::Result<()> {
    psql(
        admin_url,
        &format!("DROP DATABASE IF EXISTS \"{name}\" WITH (FORCE)"),
    )
    .map(drop)
}

/// Where a connection's visible invoices are.
#[derive(Debug, Clone)]
pub struct Visible {
    /// The connection.
    pub connection_id: String,
    /// Its published generation.
    pub generation: i64,
}

/// The one synced invoice generation in the database.
pub fn visible_invoices(url: &str) -> anyhow::Result<Visible> {
    let row = psql(
        url,
        "SELECT connection_id, generation FROM data_generation WHERE data_type = 'invoices'",
    )?;
    let (connection_id, generation) = row
        .split_once('|')
        .with_context(|| format!("one synced generation, found {row:?}"))?;
    Ok(Visible {
        connection_id: connection_id.to_owned(),
        generation: generation.parse()?,
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
