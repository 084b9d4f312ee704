//! A statement's plan, read back: what PostgreSQL executed (`EXPLAIN
//! (ANALYZE, FORMAT JSON)`, with the rows each node read) or what SQLite
//! would do (`EXPLAIN QUERY PLAN`, a line per step), for the tests that hold
//! a statement to reading only what it needs whatever the statistics say.

use sea_orm::{ConnectionTrait, DbBackend, Statement};
use serde_json::Value;

/// How a statement ran, or would run.
pub enum Plan {
    /// PostgreSQL's executed plan: the root node of `EXPLAIN (ANALYZE,
    /// FORMAT JSON)`.
    Executed(Value),
    /// SQLite's steps: each `detail` of `EXPLAIN QUERY PLAN`.
    Steps(Vec<String>),
}

/// `statement`'s plan on `db`'s backend; on PostgreSQL the statement runs
/// (inside the caller's transaction, if it is one).
pub async fn plan_of(db: &impl ConnectionTrait, statement: Statement) -> Plan {
    match db.get_database_backend() {
        DbBackend::Postgres => {
            let explained = Statement {
                sql: format!("EXPLAIN (ANALYZE, FORMAT JSON) {}", statement.sql),
                ..statement
            };
            let row = db
                .query_one_raw(explained)
                .await
                .expect("explained")
                .expect("a plan");
            let plan: Value = match row.try_get::<Value>("", "QUERY PLAN") {
                Ok(plan) => plan,
                Err(_) => {
                    serde_json::from_str(&row.try_get::<String>("", "QUERY PLAN").expect("a plan"))
                        .expect("JSON")
                }
            };
            Plan::Executed(plan[0]["Plan"].clone())
        }
        _ => {
            let explained = Statement {
                sql: format!("EXPLAIN QUERY PLAN {}", statement.sql),
                ..statement
            };
            let steps = db.query_all_raw(explained).await.expect("explained");
            Plan::Steps(
                steps
                    .iter()
                    .map(|step| step.try_get::<String>("", "detail").expect("a step"))
                    .collect(),
            )
        }
    }
}

/// What an executed plan's nodes did with one table.
#[derive(Debug, Default, Clone, Copy)]
pub struct TableReads {
    /// Rows they read from it and kept (over every loop).
    pub kept: f64,
    /// Rows they read from it and threw away (`Rows Removed by Filter`).
    pub discarded: f64,
    /// Whether any of them scanned it whole.
    pub scanned_whole: bool,
}

impl TableReads {
    /// Every row read, kept or not.
    pub fn read(self) -> f64 {
        self.kept + self.discarded
    }
}

/// What `plan` (an executed node) and its children read from `table`.
pub fn reads_of(plan: &Value, table: &str) -> TableReads {
    let mut reads = TableReads::default();
    add_reads(plan, table, &mut reads);
    reads
}

fn add_reads(plan: &Value, table: &str, reads: &mut TableReads) {
    if plan["Relation Name"] == table {
        let loops = plan["Actual Loops"].as_f64().unwrap_or(1.0);
        reads.kept += plan["Actual Rows"].as_f64().unwrap_or(0.0) * loops;
        reads.discarded += plan["Rows Removed by Filter"].as_f64().unwrap_or(0.0) * loops;
        reads.scanned_whole |= plan["Node Type"] == "Seq Scan";
    }
    for child in plan["Plans"].as_array().into_iter().flatten() {
        add_reads(child, table, reads);
    }
}

/// A walk of a previous list (`store::deletions::missing_statement`), as
/// executed: it returned `returned` rows, and read at most `bound` rows of
/// `record` and of `record_staging`, neither whole.
pub fn assert_walk_read_at_most(plan: &Value, what: &str, returned: u64, bound: f64) {
    assert_eq!(
        plan["Actual Rows"].as_f64(),
        Some(returned as f64),
        "{what}: {plan}"
    );
    for table in ["record_staging", "record"] {
        let reads = reads_of(plan, table);
        assert!(
            !reads.scanned_whole && reads.read() <= bound,
            "{what}: {reads:?} of {table}, at most {bound}: {plan}"
        );
    }
}
