//! PostgreSQL from Rust, for machines without psql and pgbench (the smoke
//! test, `--sql-timer builtin`): sqlx, the version sea-orm already builds.
//! The harness's own statements run here, and the builtin SQL timer runs a
//! page case's statements the way pgbench runs its script with one client:
//! each statement sent on its own with the simple query protocol, all of
//! them one transaction of the log, one connection, over and over for the
//! duration; the median of those transactions is the figure.

use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::{Context, bail};
use sqlx::{AssertSqlSafe, Connection, PgConnection, Row, SqlSafeStr as _, SqlStr};

async fn connect(url: &str) -> anyhow::Result<PgConnection> {
    PgConnection::connect(url)
        .await
        .context("connecting to PostgreSQL (sqlx)")
}

/// Runs `sql` (one or more statements, no results wanted) on a connection
/// of its own.
pub async fn execute(url: &str, sql: &str) -> anyhow::Result<()> {
    let mut connection = connect(url).await?;
    sqlx::raw_sql(AssertSqlSafe(sql.to_owned()))
        .execute(&mut connection)
        .await
        .with_context(|| format!("running {sql:?}"))?;
    connection.close().await?;
    Ok(())
}

/// Runs `sql`, which must answer exactly one row of a text and a `bigint`.
pub async fn one_text_and_integer(url: &str, sql: &str) -> anyhow::Result<(String, i64)> {
    let mut connection = connect(url).await?;
    let rows = sqlx::query(AssertSqlSafe(sql.to_owned()))
        .fetch_all(&mut connection)
        .await
        .with_context(|| format!("running {sql:?}"))?;
    connection.close().await?;
    let [row] = rows.as_slice() else {
        bail!("{sql:?} answered {} rows, not one", rows.len());
    };
    Ok((row.try_get(0)?, row.try_get(1)?))
}

/// The median latency of `script` (its statements, one after another, as
/// one transaction of pgbench's log) run on one connection for `duration`.
pub async fn time_script(url: &str, script: &str, duration: Duration) -> anyhow::Result<Duration> {
    let statements: Vec<SqlStr> = statements(script)
        .into_iter()
        .map(|statement| AssertSqlSafe(Arc::<str>::from(statement)).into_sql_str())
        .collect();
    if statements.is_empty() {
        bail!("no statement to time in {script:?}");
    }
    let mut connection = connect(url).await?;
    let started = Instant::now();
    let mut latencies = Vec::new();
    // As pgbench -T: transactions start until the duration is over, and at
    // least one runs.
    while latencies.is_empty() || started.elapsed() < duration {
        let began = Instant::now();
        for statement in &statements {
            sqlx::raw_sql(statement.clone())
                .execute(&mut connection)
                .await
                .with_context(|| format!("running {:?}", statement.as_str()))?;
        }
        latencies.push(began.elapsed());
    }
    connection.close().await?;
    latencies.sort_unstable();
    Ok(latencies[latencies.len() / 2])
}

/// Splits a script into its statements at each `;` outside quotes and
/// comments (`'…'`, `"…"`, `-- …`), as pgbench reads a custom script; blank
/// statements are dropped, each statement keeps no trailing `;`.
pub fn statements(script: &str) -> Vec<String> {
    #[derive(Clone, Copy, PartialEq)]
    enum In {
        Code,
        Single,
        Double,
        Comment,
    }
    let mut statements = Vec::new();
    let mut current = String::new();
    let mut state = In::Code;
    let mut chars = script.chars().peekable();
    while let Some(c) = chars.next() {
        match (state, c) {
            (In::Code, ';') => {
                let statement = current.trim();
                if !statement.is_empty() {
                    statements.push(statement.to_owned());
                }
                current.clear();
                continue;
            }
            (In::Code, '\'') => state = In::Single,
            (In::Code, '"') => state = In::Double,
            (In::Code, '-') if chars.peek() == Some(&'-') => state = In::Comment,
            // A doubled quote inside a literal is the quote itself: leaving
            // and re-entering the literal reads it the same.
            (In::Single, '\'') | (In::Double, '"') | (In::Comment, '\n') => state = In::Code,
            _ => {}
        }
        current.push(c);
    }
    let statement = current.trim();
    if !statement.is_empty() {
        statements.push(statement.to_owned());
    }
    statements
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sql::{Visible, page_script};

    #[test]
    fn splits_the_page_scripts_into_their_statements() {
        let visible = Visible {
            connection_id: "c".to_owned(),
            generation: 2,
        };
        for naive in [false, true] {
            for status in [None, Some("Paid")] {
                let script = page_script(&visible, 3, 100, status, naive);
                let statements = statements(&script);
                assert_eq!(statements.len(), 2, "{script}");
                assert_eq!(
                    statements.join(";\n") + ";\n",
                    script,
                    "the statements are the script's, unchanged"
                );
            }
        }
    }

    #[test]
    fn semicolons_in_quotes_and_comments_do_not_split() {
        let script = "SELECT 'a;b', \"c;d\" -- e;f\nFROM t;\n\nSELECT 'it''s; fine';";
        assert_eq!(
            statements(script),
            vec![
                "SELECT 'a;b', \"c;d\" -- e;f\nFROM t".to_owned(),
                "SELECT 'it''s; fine'".to_owned(),
            ]
        );
        assert!(statements(" ;\n; ").is_empty());
    }
}
