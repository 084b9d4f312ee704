//! `tributary migration import`: a JSON Lines file of rows stored as one
//! managed migration batch, validated whole, for support engineers.

use clap::Subcommand;
use sea_orm::DatabaseConnection;

use crate::api_keys;
use crate::crypto::Keyring;
use crate::managed_migrations::{self, BatchInput, Created, RowInput};
use crate::platforms::connector::Connectors;

#[derive(Subcommand)]
pub(super) enum MigrationCommand {
    /// Validate a JSON Lines file of rows (one `{"externalReference", "companyName" or "companyId",
    /// "authorization"}` object per line) and store it as a Draft batch; a running server imports it
    /// once its checklist is done and it is started (`POST /migrations/{id}/start`).
    Import {
        /// The JSON Lines file.
        file: std::path::PathBuf,
        /// The client (tenant) the companies belong to.
        #[arg(long)]
        client: String,
        /// The platform the tokens are from (`xero`).
        #[arg(long)]
        platform: String,
        /// Your reference for the batch: importing it again finds the stored batch.
        #[arg(long)]
        reference: Option<String>,
        /// Prove each row's tokens with the platform.
        #[arg(long, default_value_t = true, action = clap::ArgAction::Set)]
        verify: bool,
        /// Sync each row after its import.
        #[arg(long, default_value_t = false, action = clap::ArgAction::Set)]
        sync: bool,
        /// The external reference of the canary row (default: the first row).
        #[arg(long)]
        canary: Option<String>,
        /// Validate only; store nothing.
        #[arg(long)]
        dry_run: bool,
    },
}

impl MigrationCommand {
    /// Runs the command against `db` (`database` names it in messages),
    /// sealing with `keyring`.
    pub(super) async fn run(
        self,
        db: &DatabaseConnection,
        database: &str,
        keyring: &Keyring,
        connectors: &Connectors,
    ) -> anyhow::Result<()> {
        let MigrationCommand::Import {
            file,
            client,
            platform,
            reference,
            verify,
            sync,
            canary,
            dry_run,
        } = self;
        let read = read_rows(&file)?;
        let tenant = api_keys::tenant_named(db, &client).await?.ok_or_else(|| {
            anyhow::anyhow!(
                "no client named '{client}' in {database} (create one with `tributary api-key create --client \
                 {client}`, or name the database the server uses with --database-url)"
            )
        })?;
        let input = BatchInput {
            platform_key: platform,
            reference,
            verify,
            sync,
            canary_reference: canary,
            rows: read.rows,
        };
        // With lines that are not rows, the rows there are still checked
        // (storing nothing), so that every problem of the file shows at once.
        let store_nothing = dry_run || !read.problems.is_empty();
        let checked = if input.rows.is_empty() {
            Err(None)
        } else {
            managed_migrations::create(db, keyring, connectors, tenant, input, store_nothing)
                .await
                .map_err(Some)
        };
        let mut problems = read.problems;
        if let Err(Some(error)) = &checked {
            problems.extend(row_problems(error, &read.lines));
        }
        anyhow::ensure!(
            problems.is_empty(),
            "{} is not a valid batch ({}):\n{}",
            file.display(),
            counted(problems.len(), "problem"),
            problems.join("\n")
        );
        let Ok(created) = checked else {
            anyhow::bail!("{} holds no rows", file.display());
        };
        print_created(&created);
        Ok(())
    }
}

/// A JSON Lines file read: its rows, the line of each, and the lines that
/// are not rows.
struct ReadRows {
    rows: Vec<RowInput>,
    /// The file's line (from 1) of each row.
    lines: Vec<usize>,
    problems: Vec<String>,
}

/// The fields of a row.
const ROW_FIELDS: [&str; 4] = [
    "externalReference",
    "companyName",
    "companyId",
    "authorization",
];

/// The rows of a JSON Lines file; blank lines are skipped, and a line that
/// is not a row is a problem naming the line and what is wrong (a field
/// name, never a value: the line holds tokens).
fn read_rows(file: &std::path::Path) -> anyhow::Result<ReadRows> {
    let text = std::fs::read_to_string(file)
        .map_err(|error| anyhow::anyhow!("cannot read {}: {error}", file.display()))?;
    let mut read = ReadRows {
        rows: Vec::new(),
        lines: Vec::new(),
        problems: Vec::new(),
    };
    for (index, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let at = format!("line {}", index + 1);
        match row_of(line) {
            Ok(row) => {
                read.rows.push(row);
                read.lines.push(index + 1);
            }
            Err(problem) => read.problems.push(format!("  {at}: {problem}")),
        }
    }
    Ok(read)
}

/// One line as a row, or what keeps it from being one.
fn row_of(line: &str) -> Result<RowInput, String> {
    let value: serde_json::Value = serde_json::from_str(line).map_err(|error| {
        format!(
            "not JSON ({:?} error at column {})",
            error.classify(),
            error.column()
        )
    })?;
    let Some(fields) = value.as_object() else {
        return Err(
            "not a JSON object: each line is one row `{\"externalReference\", ...}`".to_owned(),
        );
    };
    let unknown: Vec<&str> = fields
        .keys()
        .map(String::as_str)
        .filter(|name| !ROW_FIELDS.contains(name))
        .collect();
    if !unknown.is_empty() {
        return Err(format!(
            "unknown field{} {}; a row has {}",
            if unknown.len() == 1 { "" } else { "s" },
            unknown
                .iter()
                .map(|name| format!("`{name}`"))
                .collect::<Vec<_>>()
                .join(", "),
            ROW_FIELDS
                .iter()
                .map(|name| format!("`{name}`"))
                .collect::<Vec<_>>()
                .join(", ")
        ));
    }
    // The fields left are known; serde names the one at fault (and quotes
    // no token: `authorization` takes any JSON here).
    serde_json::from_value(value).map_err(|error| error.to_string())
}

/// A batch's refusal as lines of the file: `rows[2].companyName` is
/// `line 3 (rows[2]).companyName`.
fn row_problems(error: &crate::error::Error, lines: &[usize]) -> Vec<String> {
    match error {
        crate::error::Error::Invalid(errors) => errors
            .iter()
            .map(|error| format!("  {}: {}", located(&error.item_id, lines), error.message))
            .collect(),
        other => vec![format!("  {other}")],
    }
}

/// `rows[N].field` as `line L (rows[N]).field`, L being row N's line.
fn located(item_id: &str, lines: &[usize]) -> String {
    let Some((number, field)) = item_id
        .strip_prefix("rows[")
        .and_then(|rest| rest.split_once(']'))
    else {
        return item_id.to_owned();
    };
    match number
        .parse::<usize>()
        .ok()
        .and_then(|index| lines.get(index))
    {
        Some(line) => format!("line {line} (rows[{number}]){field}"),
        None => item_id.to_owned(),
    }
}

/// `1 problem`, `2 problems`.
fn counted(count: usize, noun: &str) -> String {
    if count == 1 {
        format!("1 {noun}")
    } else {
        format!("{count} {noun}s")
    }
}

fn print_created(created: &Created) {
    match created {
        Created::DryRun(plan) => println!(
            "Valid: {} rows from {} ({} companies to create, {} named by id, {} imported before and reused); \
             canary: {}. Nothing was stored (dry run).",
            plan.rows,
            plan.platform.name,
            plan.companies_to_create,
            plan.companies_named,
            plan.references_imported_before,
            plan.canary_reference
        ),
        Created::New(_, summary) | Created::Existing(summary) => {
            let verb = if matches!(created, Created::New(..)) {
                "Stored"
            } else {
                "Found (stored before)"
            };
            println!(
                "{verb}: migration {} with {} rows ({:?}). Complete its checklist (GET /migrations/{}), then \
                 POST /migrations/{}/start.",
                summary.batch.id,
                summary.batch.row_count,
                summary.batch.state,
                summary.batch.id,
                summary.batch.id
            );
        }
    }
}
