//! A migration row's steps, each one transaction fenced by its claim:
//! the import (company, connection and tokens, under a lock on the row's
//! reference), the verification with the platform, and the first sync
//! (queued here, recorded when its request completes).

use std::collections::BTreeMap;

use chrono::Utc;
use sea_orm::sea_query::{Expr, OnConflict};
use sea_orm::{
    ActiveEnum, ColumnTrait, ConnectionTrait, EntityTrait, QueryFilter, Set, Statement,
    TransactionTrait,
};
use serde_json::Value;
use uuid::Uuid;

use entity::pull_operation::PullStatus;
use entity::{connection, migration_batch, migration_reference, migration_row};

use super::runner::{Claim, Runner, Step};
use super::{RowState, remedy_json, sealed_of};
use crate::companies::{self, CompanyFields};
use crate::connections::{self, credentials};
use crate::error::{Error, Problem, Remedy};
use crate::platforms::authorization::AcceptedAuthorization;
use crate::platforms::connector::ConnectorError;
use crate::platforms::kit::oauth;
use crate::sync::operations::{self, requests};
use crate::sync::refresh::{self, Need, RefreshFailure};
use crate::tenant::Tenant;
use crate::vault::{self, Owner};

/// The most finished first syncs recorded per batch and round.
const SYNCS_PER_ROUND: u64 = 500;

impl Runner {
    /// Step: the row's company (named, the one its reference was imported
    /// into before, or created), its connection (the reference's, one of
    /// the company's to the platform for the same organization, or
    /// created), its tokens stored on the connection and dropped from the
    /// row: one transaction, holding the reference's lock.
    pub(super) async fn import(&self, claim: &Claim<'_>) -> anyhow::Result<Step> {
        let row = claim.row;
        let tenant = Tenant {
            client_id: row.client_id,
        };
        let Some(sealed) = sealed_of(row) else {
            return self
                .fail(
                    &self.db,
                    claim,
                    Problem::new("The row's tokens are no longer held (its batch was cancelled).")
                        .with_remedy(Remedy::ResendRow),
                )
                .await;
        };
        let body: Value = vault::open_json(&self.keyring, Owner::MigrationRow(row.id), &sealed)?;
        let accepted = AcceptedAuthorization {
            organization_id: row.organization_id.clone(),
            access_token_expires_at: oauth::expires_at(&body),
            sealed_body: body,
        };
        let now = Utc::now();
        let txn = self.db.begin().await?;
        // Written first: the fence, and SQLite's write lock before any read.
        if self.fenced(claim).exec(&txn).await?.rows_affected == 0 {
            txn.rollback().await?;
            return Ok(Step::Stop);
        }
        let reference = lock_reference(&txn, row).await?;
        let company_id = match self.company_of(&txn, tenant, row, &reference).await {
            Ok(company_id) => company_id,
            Err(Error::NotFound(problem)) => {
                self.fail(&txn, claim, problem).await?;
                txn.commit().await?;
                return Ok(Step::Stop);
            }
            Err(error) => return Err(anyhow::Error::new(error)),
        };
        let connection = match connection_of(&txn, row, company_id, &reference).await? {
            Some(connection) => connection,
            None => connections::insert(&txn, tenant, company_id, &row.platform_key).await?,
        };
        let connection = connections::authorization::link(
            &txn,
            &self.keyring,
            tenant,
            connection,
            &accepted,
            now,
        )
        .await?;
        migration_reference::Entity::update_many()
            .col_expr(
                migration_reference::Column::CompanyId,
                Expr::value(company_id),
            )
            .col_expr(
                migration_reference::Column::ConnectionId,
                Expr::value(connection.id),
            )
            .filter(migration_reference::Column::ClientId.eq(row.client_id))
            .filter(migration_reference::Column::PlatformKey.eq(row.platform_key.as_str()))
            .filter(
                migration_reference::Column::ExternalReference.eq(row.external_reference.as_str()),
            )
            .exec(&txn)
            .await?;
        migration_row::Entity::update_many()
            .col_expr(
                migration_row::Column::State,
                Expr::value(RowState::Imported),
            )
            .col_expr(migration_row::Column::CompanyId, Expr::value(company_id))
            .col_expr(
                migration_row::Column::ConnectionId,
                Expr::value(connection.id),
            )
            .col_expr(migration_row::Column::KeyId, Expr::value(None::<String>))
            .col_expr(migration_row::Column::Nonce, Expr::value(None::<Vec<u8>>))
            .col_expr(
                migration_row::Column::Ciphertext,
                Expr::value(None::<Vec<u8>>),
            )
            .col_expr(migration_row::Column::Imported, Expr::value(now))
            .col_expr(migration_row::Column::Attempts, Expr::value(0))
            .filter(migration_row::Column::Id.eq(row.id))
            .exec(&txn)
            .await?;
        txn.commit().await?;
        Ok(Step::Advanced)
    }

    /// The row's company: the one it names, else the one its reference was
    /// imported into (if it still exists), else a new one.
    async fn company_of(
        &self,
        db: &impl ConnectionTrait,
        tenant: Tenant,
        row: &migration_row::Model,
        reference: &migration_reference::Model,
    ) -> Result<Uuid, Error> {
        if let Some(company_id) = row.company_id {
            companies::find(db, tenant, company_id).await.map_err(|_| {
                Error::NotFound(
                    Problem::new(format!(
                        "Company {company_id}, named by this row, no longer exists."
                    ))
                    .with_remedy(Remedy::ResendRow),
                )
            })?;
            return Ok(company_id);
        }
        if let Some(company_id) = reference.company_id
            && companies::find(db, tenant, company_id).await.is_ok()
        {
            return Ok(company_id);
        }
        let name = row
            .company_name
            .clone()
            .unwrap_or_else(|| row.external_reference.clone());
        let company = companies::insert(db, tenant, CompanyFields::parse(&name, None)?).await?;
        Ok(company.id)
    }

    /// Step: proves the stored tokens with the platform, refreshing them
    /// first (with the tenant's OAuth client) when they expire soon.
    pub(super) async fn verify(
        &self,
        batch: &migration_batch::Model,
        claim: &Claim<'_>,
    ) -> anyhow::Result<Step> {
        let row = claim.row;
        let Some(connection_id) = row.connection_id else {
            return self
                .fail(&self.db, claim, Problem::new("The row has no connection."))
                .await;
        };
        let Some(connector) = self.connectors.get(&row.platform_key) else {
            return self
                .fail(
                    &self.db,
                    claim,
                    Problem::new("tributary has no connector for this platform to verify with."),
                )
                .await;
        };
        let Some(opened) = credentials::read(&self.db, &self.keyring, connection_id).await? else {
            return self
                .fail(
                    &self.db,
                    claim,
                    Problem::new(format!(
                        "Connection {connection_id} no longer holds the imported tokens (it was deleted or \
                         unlinked)."
                    ))
                    .with_remedy(Remedy::ResendRow),
                )
                .await;
        };
        let mut body = opened.body;
        let mut refreshed = false;
        if let Some(endpoint) = connector.token_endpoint(&body) {
            let subject = refresh::Subject {
                connection_id,
                tenant_client_id: row.client_id,
                platform_key: &row.platform_key,
            };
            match refresh::fresh_credentials(
                &self.db,
                &self.keyring,
                subject,
                &endpoint,
                Need::IfExpiring,
            )
            .await
            {
                Ok(fresh) => {
                    refreshed = fresh != body;
                    body = fresh;
                }
                Err(RefreshFailure::Platform(error)) => {
                    return self
                        .platform_failed(batch, claim, connection_id, error, true)
                        .await;
                }
                Err(RefreshFailure::NoOAuthClient(problem)) => {
                    return self.fail(&self.db, claim, problem).await;
                }
                Err(RefreshFailure::Internal(cause)) => anyhow::bail!(cause),
            }
        }
        let outcome = match connector.verify(&body) {
            Some(check) => check.await,
            None => Ok(()),
        };
        if let Err(error) = outcome {
            return self
                .platform_failed(batch, claim, connection_id, error, refreshed)
                .await;
        }
        self.fenced(claim)
            .col_expr(
                migration_row::Column::State,
                Expr::value(RowState::Verified),
            )
            .col_expr(migration_row::Column::Verified, Expr::value(Utc::now()))
            .col_expr(migration_row::Column::Refreshed, Expr::value(refreshed))
            .col_expr(migration_row::Column::Attempts, Expr::value(0))
            .exec(&self.db)
            .await?;
        Ok(Step::Advanced)
    }

    /// The platform refused or could not be reached while verifying.
    async fn platform_failed(
        &self,
        batch: &migration_batch::Model,
        claim: &Claim<'_>,
        connection_id: Uuid,
        error: ConnectorError,
        refreshing: bool,
    ) -> anyhow::Result<Step> {
        let platform = crate::platforms::find(&batch.platform_key)
            .map(|platform| platform.name)
            .unwrap_or("The platform");
        match error {
            ConnectorError::Unavailable(message) | ConnectorError::RateLimited(message) => {
                self.unavailable(claim, message).await
            }
            ConnectorError::Auth(message)
            | ConnectorError::Expired(message)
            | ConnectorError::Permissions(message) => {
                let hint = if refreshing {
                    " An `invalid_grant` on refresh usually means another application refreshed these tokens \
                     first: check that syncing is disabled in the old application (checklist step 4)."
                } else {
                    ""
                };
                let txn = self.db.begin().await?;
                let problem =
                    Problem::new(format!("{platform} rejected the tokens: {message}.{hint}"))
                        .with_remedy(Remedy::ResendRow);
                // Only the claim that still holds the row deauthorizes its
                // connection (a lapsed one must not undo a newer import).
                if self.record_failure(&txn, claim, problem).await? {
                    connections::deauthorize(&txn, connection_id).await?;
                }
                txn.commit().await?;
                Ok(Step::Stop)
            }
            ConnectorError::Failed(message) => {
                self.fail(
                    &self.db,
                    claim,
                    Problem::new(format!(
                        "{platform} could not verify the tokens: {message}."
                    ))
                    .with_remedy(Remedy::RetryFailedRows {
                        migration_id: claim.row.batch_id,
                    }),
                )
                .await
            }
        }
    }

    /// Step: queues the connection's first sync (the data types of the
    /// client's sync settings); the row is `Syncing` until
    /// [`Runner::finish_syncs`] sees the request end, or `Synced` at once
    /// when the settings choose nothing the platform syncs.
    pub(super) async fn queue_sync(&self, claim: &Claim<'_>) -> anyhow::Result<Step> {
        let row = claim.row;
        let (Some(company_id), Some(connection_id)) = (row.company_id, row.connection_id) else {
            return self
                .fail(&self.db, claim, Problem::new("The row has no connection."))
                .await;
        };
        let tenant = Tenant {
            client_id: row.client_id,
        };
        let request_id =
            match operations::queue_connection(&self.db, tenant, company_id, connection_id).await {
                Ok(Some(request_id)) => request_id,
                Ok(None) => {
                    // The client's sync settings choose nothing this platform syncs.
                    self.fenced(claim)
                        .col_expr(migration_row::Column::State, Expr::value(RowState::Synced))
                        .col_expr(migration_row::Column::Records, Expr::value("{}"))
                        .col_expr(migration_row::Column::Synced, Expr::value(Utc::now()))
                        .exec(&self.db)
                        .await?;
                    return Ok(Step::Advanced);
                }
                Err(Error::Conflict(problem) | Error::NotFound(problem)) => {
                    return self
                        .fail(
                            &self.db,
                            claim,
                            Problem::new(format!(
                                "Its first sync could not be queued: {}",
                                problem.message
                            ))
                            .with_remedy(Remedy::ResendRow),
                        )
                        .await;
                }
                Err(error) => return Err(anyhow::Error::new(error)),
            };
        self.sync_wake.notify_waiters();
        self.fenced(claim)
            .col_expr(migration_row::Column::State, Expr::value(RowState::Syncing))
            .col_expr(
                migration_row::Column::SyncRequestId,
                Expr::value(request_id),
            )
            .exec(&self.db)
            .await?;
        Ok(Step::Stop)
    }

    /// Records the first syncs of the batch's `Syncing` rows whose request
    /// has completed (`Synced` with the records per data type, or `Failed`
    /// with the operations' reasons) or is gone (`Failed`): one query finds
    /// them, however many rows are syncing.
    pub(super) async fn finish_syncs(&self, batch: &migration_batch::Model) -> anyhow::Result<()> {
        let backend = self.db.get_database_backend();
        let sql = format!(
            "SELECT r.id AS id FROM migration_row r LEFT JOIN sync_request s ON s.id = r.sync_request_id \
             WHERE r.batch_id = $1 AND r.state = 'Syncing' AND (s.id IS NULL OR s.completed IS NOT NULL \
               OR NOT EXISTS (SELECT 1 FROM sync_request_operation o WHERE o.request_id = s.id)) \
             LIMIT {SYNCS_PER_ROUND}"
        );
        let ended: Vec<Uuid> = self
            .db
            .query_all_raw(Statement::from_sql_and_values(
                backend,
                sql,
                [batch.id.into()],
            ))
            .await?
            .iter()
            .map(|row| row.try_get("", "id"))
            .collect::<Result<_, _>>()?;
        for row_id in ended {
            let Some(row) = migration_row::Entity::find_by_id(row_id)
                .one(&self.db)
                .await?
            else {
                continue;
            };
            let outcome = match row.sync_request_id {
                Some(request_id) => requests::outcome(&self.db, request_id).await?,
                None => requests::Outcome::Gone,
            };
            self.record_sync(&row, outcome).await?;
        }
        Ok(())
    }

    async fn record_sync(
        &self,
        row: &migration_row::Model,
        outcome: requests::Outcome,
    ) -> anyhow::Result<()> {
        let mut records: BTreeMap<String, i64> = BTreeMap::new();
        let mut failures = Vec::new();
        let mut rejected = false;
        match outcome {
            requests::Outcome::Running => return Ok(()),
            requests::Outcome::Gone => failures
                .push("its company or connection was deleted before the sync ended".to_owned()),
            requests::Outcome::Completed(operations) => {
                for operation in operations {
                    match operation.status {
                        PullStatus::Complete => {
                            *records.entry(operation.data_type).or_default() +=
                                operation.records_fetched;
                        }
                        // A data type the consent does not cover fails alone
                        // (its pull operation and `dataType.syncFailed` say so):
                        // the tokens work, so the row is not failed for it.
                        PullStatus::NotSupported | PullStatus::PermissionsError => {}
                        status => {
                            rejected |= status == PullStatus::AuthError;
                            let reason =
                                operation.error_message.unwrap_or_else(|| status.to_value());
                            failures.push(format!("{}: {reason}", operation.data_type));
                        }
                    }
                }
            }
        }
        let mut update = migration_row::Entity::update_many()
            .col_expr(
                migration_row::Column::Records,
                Expr::value(serde_json::to_string(&records)?),
            )
            .col_expr(migration_row::Column::Updated, Expr::value(Utc::now()))
            .filter(migration_row::Column::Id.eq(row.id))
            .filter(migration_row::Column::State.eq(RowState::Syncing));
        if failures.is_empty() {
            update = update
                .col_expr(migration_row::Column::State, Expr::value(RowState::Synced))
                .col_expr(migration_row::Column::Synced, Expr::value(Utc::now()));
        } else {
            let remedy = if rejected {
                Remedy::ResendRow
            } else {
                Remedy::RetryFailedRows {
                    migration_id: row.batch_id,
                }
            };
            update = update
                .col_expr(migration_row::Column::State, Expr::value(RowState::Failed))
                .col_expr(
                    migration_row::Column::Failure,
                    Expr::value(format!("Its first sync failed: {}", failures.join("; "))),
                )
                .col_expr(
                    migration_row::Column::Remedy,
                    Expr::value(remedy_json(&remedy)),
                );
        }
        update.exec(&self.db).await?;
        Ok(())
    }
}

/// Takes the lock on the row's reference (creating its record the first
/// time) and reads it: a second import of the same reference, from any
/// batch or process, waits here until this transaction ends, then sees the
/// company and connection this one recorded.
async fn lock_reference(
    db: &impl ConnectionTrait,
    row: &migration_row::Model,
) -> Result<migration_reference::Model, Error> {
    migration_reference::Entity::insert(migration_reference::ActiveModel {
        client_id: Set(row.client_id),
        platform_key: Set(row.platform_key.clone()),
        external_reference: Set(row.external_reference.clone()),
        company_id: Set(None),
        connection_id: Set(None),
    })
    .on_conflict(
        OnConflict::columns([
            migration_reference::Column::ClientId,
            migration_reference::Column::PlatformKey,
            migration_reference::Column::ExternalReference,
        ])
        .do_nothing()
        .to_owned(),
    )
    .exec_without_returning(db)
    .await?;
    let by_reference = |query: sea_orm::UpdateMany<migration_reference::Entity>| {
        query
            .filter(migration_reference::Column::ClientId.eq(row.client_id))
            .filter(migration_reference::Column::PlatformKey.eq(row.platform_key.as_str()))
            .filter(
                migration_reference::Column::ExternalReference.eq(row.external_reference.as_str()),
            )
    };
    // A write that changes nothing: the row lock, held to the commit.
    by_reference(migration_reference::Entity::update_many().col_expr(
        migration_reference::Column::CompanyId,
        Expr::col(migration_reference::Column::CompanyId),
    ))
    .exec(db)
    .await?;
    migration_reference::Entity::find()
        .filter(migration_reference::Column::ClientId.eq(row.client_id))
        .filter(migration_reference::Column::PlatformKey.eq(row.platform_key.as_str()))
        .filter(migration_reference::Column::ExternalReference.eq(row.external_reference.as_str()))
        .one(db)
        .await?
        .ok_or_else(|| Error::internal(anyhow::anyhow!("a migration reference vanished")))
}

/// The connection of company `company_id` the row's tokens go to: the one
/// its reference was imported into, else one of the company's connections
/// to the platform that holds the same organization's tokens (or none
/// yet); `None` if there is none (a new one is made). Another
/// organization's connection is never overwritten.
async fn connection_of(
    db: &impl ConnectionTrait,
    row: &migration_row::Model,
    company_id: Uuid,
    reference: &migration_reference::Model,
) -> Result<Option<connection::Model>, Error> {
    let existing = connections::of_platform(db, company_id, &row.platform_key).await?;
    if let Some(known) = reference
        .connection_id
        .and_then(|id| existing.iter().find(|connection| connection.id == id))
    {
        return Ok(Some(known.clone()));
    }
    for candidate in existing {
        match credentials::organization_of(db, candidate.id).await? {
            Some(organization) if organization != row.organization_id => {}
            _ => return Ok(Some(candidate)),
        }
    }
    Ok(None)
}
