//! Rows of one generation looked up by a unique column, many at once, each
//! lookup its own index probe whatever the planner's statistics say; and
//! the rows of a `VALUES` list such statements send.

use sea_orm::{DbBackend, Statement};

/// `columns` of the rows of `generation` whose `key` (a column completing
/// a unique key with the generation: `record_id`, `ordinal`) is each of
/// `wanted`. On PostgreSQL one lookup each: `OFFSET 0` keeps every lookup
/// its own, by both columns, whatever the planner's statistics say
/// (`ANALYZE` leaves the record id's out, and a list of a thousand ids was
/// read as a scan of the table: 1 s), and a value wanted twice finds its
/// row twice. SQLite looks an `IN` list up by the key's index (each row
/// once). `wanted` must not be empty.
pub fn each_looked_up(
    backend: DbBackend,
    generation: i64,
    key: &str,
    columns: &str,
    wanted: impl ExactSizeIterator<Item = sea_orm::Value>,
) -> Statement {
    debug_assert!(wanted.len() > 0, "nothing to look up");
    let parameters: Vec<String> = (0..wanted.len()).map(|at| format!("${}", at + 2)).collect();
    let values = std::iter::once(generation.into())
        .chain(wanted)
        .collect::<Vec<_>>();
    let sql = match backend {
        DbBackend::Postgres => format!(
            "SELECT r.* FROM (VALUES ({})) AS w(wanted), \
             LATERAL (SELECT {columns} FROM record \
                      WHERE generation = $1 AND {key} = w.wanted OFFSET 0) r",
            parameters.join("), (")
        ),
        _ => format!(
            "SELECT {columns} FROM record WHERE generation = $1 AND {key} IN ({})",
            parameters.join(", ")
        ),
    };
    Statement::from_sql_and_values(backend, sql, values)
}

/// Adds `row`'s values to a statement's `values` and returns the `VALUES`
/// row naming them (`($4, $5, $6)`).
pub fn values_row(
    values: &mut Vec<sea_orm::Value>,
    row: impl IntoIterator<Item = sea_orm::Value>,
) -> String {
    let mut parameters = Vec::new();
    for value in row {
        values.push(value);
        parameters.push(format!("${}", values.len()));
    }
    format!("({})", parameters.join(", "))
}
