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
    /// Runs the command against `db`, sealing with `keyring`.
    pub(super) async fn run(
        self,
        db: &DatabaseConnection,
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
        let rows = read_rows(&file)?;
        let tenant = api_keys::tenant_named(db, &client)
            .await?
            .ok_or_else(|| anyhow::anyhow!("no client named '{client}' (create one with `tributary api-key create --client {client}`)"))?;
        let input = BatchInput {
            platform_key: platform,
            reference,
            verify,
            sync,
            canary_reference: canary,
            rows,
        };
        let created = managed_migrations::create(db, keyring, connectors, tenant, input, dry_run)
            .await
            .map_err(|error| anyhow::anyhow!(invalid_rows(&error)))?;
        print_created(&created);
        Ok(())
    }
}

/// The rows of a JSON Lines file; blank lines are skipped, and a line that
/// is not a row is an error naming the line (never its content: it holds
/// tokens).
fn read_rows(file: &std::path::Path) -> anyhow::Result<Vec<RowInput>> {
    let text = std::fs::read_to_string(file)
        .map_err(|error| anyhow::anyhow!("cannot read {}: {error}", file.display()))?;
    let mut rows = Vec::new();
    let mut problems = Vec::new();
    for (index, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        match serde_json::from_str::<RowInput>(line) {
            Ok(row) => rows.push(row),
            Err(error) => problems.push(format!(
                "line {}: not a row ({:?} at column {})",
                index + 1,
                error.classify(),
                error.column()
            )),
        }
    }
    anyhow::ensure!(
        problems.is_empty(),
        "{} has lines that are not rows:\n{}",
        file.display(),
        problems.join("\n")
    );
    Ok(rows)
}

/// An import's refusal: one line per field at fault (`rows[3] is line 4`).
fn invalid_rows(error: &crate::error::Error) -> String {
    match error {
        crate::error::Error::Invalid(errors) => {
            let lines: Vec<String> = errors
                .iter()
                .map(|error| format!("  {}: {}", error.item_id, error.message))
                .collect();
            format!(
                "the batch is not valid ({} problems; rows[N] is the file's row N, counting non-blank lines from 0):\n{}",
                errors.len(),
                lines.join("\n")
            )
        }
        other => other.to_string(),
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
