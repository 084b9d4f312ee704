//! The handover report of a batch: per row what was imported, verified and
//! synced, with record counts, failures and what to do about each; as data
//! (the API's JSON) and as CSV for spreadsheets. No token is in either.

use std::collections::BTreeMap;

use sea_orm::{ColumnTrait, ConnectionTrait, EntityTrait, QueryFilter, QueryOrder};
use uuid::Uuid;

use entity::{migration_batch, migration_row};

use super::{counts, find_batch, row_problem, row_records};
use crate::error::{Error, Problem};
use crate::tenant::Tenant;

/// A batch's report: the batch, its counts, and every row in batch order.
#[derive(Debug, Clone)]
pub struct Report {
    /// The batch.
    pub batch: migration_batch::Model,
    /// The platform's name.
    pub platform_name: &'static str,
    /// Rows per state.
    pub counts: BTreeMap<String, u64>,
    /// Every row.
    pub rows: Vec<migration_row::Model>,
}

/// The tenant's batch `migration_id`, reported.
pub async fn report(
    db: &impl ConnectionTrait,
    tenant: Tenant,
    migration_id: Uuid,
) -> Result<Report, Error> {
    let batch = find_batch(db, tenant, migration_id).await?;
    let counts = counts(db, batch.id).await?;
    let rows = migration_row::Entity::find()
        .filter(migration_row::Column::BatchId.eq(batch.id))
        .order_by_asc(migration_row::Column::Position)
        .all(db)
        .await?;
    let platform_name = crate::platforms::find(&batch.platform_key)
        .map(|platform| platform.name)
        .unwrap_or("unknown platform");
    Ok(Report {
        batch,
        platform_name,
        counts,
        rows,
    })
}

/// The CSV header.
pub const CSV_COLUMNS: [&str; 15] = [
    "position",
    "externalReference",
    "platformKey",
    "companyName",
    "companyId",
    "connectionId",
    "organizationId",
    "state",
    "imported",
    "verified",
    "synced",
    "refreshed",
    "records",
    "failure",
    "whatToDo",
];

/// A cell a spreadsheet would read as a formula (`=`, `+`, `-`, `@`, tab,
/// carriage return first) gets a leading apostrophe, so partner-supplied
/// names cannot run in whoever opens the report.
fn cell(text: &str) -> String {
    match text.chars().next() {
        Some('=' | '+' | '-' | '@' | '\t' | '\r') => format!("'{text}"),
        _ => text.to_owned(),
    }
}

fn time(at: Option<chrono::DateTime<chrono::Utc>>) -> String {
    at.map(|at| at.to_rfc3339_opts(chrono::SecondsFormat::Secs, true))
        .unwrap_or_default()
}

/// The report as CSV, one line per row, `word` turning a failure and its
/// remedy into the `failure` and `whatToDo` cells.
pub fn to_csv(
    report: &Report,
    word: impl Fn(&Problem) -> (String, String),
) -> anyhow::Result<String> {
    let mut writer = csv::Writer::from_writer(Vec::new());
    writer.write_record(CSV_COLUMNS)?;
    for row in &report.rows {
        let records = row_records(row)
            .into_iter()
            .map(|(data_type, count)| format!("{data_type}={count}"))
            .collect::<Vec<_>>()
            .join(";");
        let (failure, what_to_do) = row_problem(row)
            .map(|problem| word(&problem))
            .unwrap_or_default();
        writer.write_record([
            row.position.to_string(),
            cell(&row.external_reference),
            report.batch.platform_key.clone(),
            cell(row.company_name.as_deref().unwrap_or_default()),
            row.company_id.map(|id| id.to_string()).unwrap_or_default(),
            row.connection_id
                .map(|id| id.to_string())
                .unwrap_or_default(),
            cell(&row.organization_id),
            super::row_state_name(row.state),
            time(row.imported),
            time(row.verified),
            time(row.synced),
            row.refreshed.to_string(),
            records,
            cell(&failure),
            cell(&what_to_do),
        ])?;
    }
    Ok(String::from_utf8(writer.into_inner()?)?)
}

#[cfg(test)]
mod tests {
    use super::cell;

    #[test]
    fn cells_a_spreadsheet_would_run_are_defused() {
        assert_eq!(cell("=HYPERLINK(\"x\")"), "'=HYPERLINK(\"x\")");
        assert_eq!(cell("-1"), "'-1");
        assert_eq!(cell("Acme Ltd"), "Acme Ltd");
    }
}
