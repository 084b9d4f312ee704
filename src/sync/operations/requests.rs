//! Sync requests: which pull operations one `POST .../data/all` (or
//! `.../data/queue/{dataType}`) queued or joined, so that `read.completed`
//! is announced once per request, in the transaction that ends its last
//! operation. Only this module writes `sync_request` and
//! `sync_request_operation`.
//!
//! Exactly once, however operations end: the request's row is locked before
//! its operations' states are read, so of two operations ending at once the
//! second waits, then sees the first ended; a request whose operations all
//! ended before it was recorded (or not supported at all) completes as it
//! is recorded, having locked its operations first.

use sea_orm::sea_query::Expr;
use sea_orm::{
    ActiveEnum, ActiveModelTrait, ColumnTrait, ConnectionTrait, DatabaseConnection, DbBackend,
    EntityTrait, QueryFilter, QueryOrder, QuerySelect, Set, Statement, TransactionTrait,
};
use serde_json::json;
use uuid::Uuid;

use entity::pull_operation::{self, PullStatus};
use entity::{sync_request, sync_request_operation};

use crate::error::Error;
use crate::tenant::Tenant;
use crate::timestamp::Timestamp;
use crate::webhooks::{self, Event, EventType};

/// Whether an operation in `status` has ended.
fn ended(status: PullStatus) -> bool {
    !matches!(status, PullStatus::Queued | PullStatus::Fetching)
}

/// Locks rows of `table` with the ids `ids` (PostgreSQL; SQLite's single
/// writer already serializes the transaction).
async fn lock(db: &impl ConnectionTrait, table: &str, ids: &[Uuid]) -> Result<(), sea_orm::DbErr> {
    if db.get_database_backend() != DbBackend::Postgres || ids.is_empty() {
        return Ok(());
    }
    let placeholders: Vec<String> = (1..=ids.len()).map(|n| format!("${n}")).collect();
    let sql = format!(
        "SELECT id FROM {table} WHERE id IN ({}) ORDER BY id FOR UPDATE",
        placeholders.join(", ")
    );
    let values: Vec<sea_orm::Value> = ids.iter().map(|id| (*id).into()).collect();
    db.query_all_raw(Statement::from_sql_and_values(
        DbBackend::Postgres,
        sql,
        values,
    ))
    .await?;
    Ok(())
}

/// Records the request that queued (or joined) `operations` for the
/// tenant's company; completes it at once if they have all ended.
pub async fn record(
    db: &DatabaseConnection,
    tenant: Tenant,
    company_id: Uuid,
    operations: &[pull_operation::Model],
) -> Result<Uuid, Error> {
    let id = Uuid::now_v7();
    let mut operation_ids: Vec<Uuid> = operations.iter().map(|operation| operation.id).collect();
    operation_ids.sort();
    operation_ids.dedup();
    let txn = db.begin().await?;
    sync_request::ActiveModel {
        id: Set(id),
        company_id: Set(company_id),
        created: Set(Timestamp::now()),
        completed: Set(None),
    }
    .insert(&txn)
    .await?;
    // The operations are locked before the links are written: a link's
    // foreign key takes a share lock on its operation, and two requests
    // holding those while each waits to lock the operations would deadlock.
    lock(&txn, "pull_operation", &operation_ids).await?;
    for operation_id in &operation_ids {
        sync_request_operation::ActiveModel {
            request_id: Set(id),
            operation_id: Set(*operation_id),
        }
        .insert(&txn)
        .await?;
    }
    complete_if_ended(&txn, tenant.client_id, id).await?;
    txn.commit().await?;
    Ok(id)
}

/// Where a sync request stands, for whoever waits for it.
#[derive(Debug)]
pub enum Outcome {
    /// Some of its operations have not ended.
    Running,
    /// It is gone (its company was deleted), or every operation it waited
    /// for was (its connection was deleted): it will never complete.
    Gone,
    /// It completed: its operations, as they ended.
    Completed(Vec<pull_operation::Model>),
}

/// Where request `request_id` stands.
pub async fn outcome(
    db: &impl ConnectionTrait,
    request_id: Uuid,
) -> Result<Outcome, sea_orm::DbErr> {
    let Some(request) = sync_request::Entity::find_by_id(request_id).one(db).await? else {
        return Ok(Outcome::Gone);
    };
    let operations = pull_operation::Entity::find()
        .inner_join(sync_request_operation::Entity)
        .filter(sync_request_operation::Column::RequestId.eq(request_id))
        .order_by_asc(pull_operation::Column::Requested)
        .order_by_asc(pull_operation::Column::Id)
        .all(db)
        .await?;
    Ok(match request.completed {
        Some(_) => Outcome::Completed(operations),
        None if operations.is_empty() => Outcome::Gone,
        None => Outcome::Running,
    })
}

/// Inside the transaction that ended operation `operation_id`: completes
/// (and announces) every request of it whose operations have now all ended.
pub async fn operation_ended(
    db: &impl ConnectionTrait,
    client_id: Uuid,
    operation_id: Uuid,
) -> Result<(), sea_orm::DbErr> {
    let open: Vec<Uuid> = sync_request_operation::Entity::find()
        .select_only()
        .column(sync_request_operation::Column::RequestId)
        .inner_join(sync_request::Entity)
        .filter(sync_request_operation::Column::OperationId.eq(operation_id))
        .filter(sync_request::Column::Completed.is_null())
        .into_tuple()
        .all(db)
        .await?;
    lock(db, "sync_request", &open).await?;
    for request_id in open {
        complete_if_ended(db, client_id, request_id).await?;
    }
    Ok(())
}

/// Completes request `request_id` and records `read.completed`, if every
/// operation of it has ended and it was not completed already.
async fn complete_if_ended(
    db: &impl ConnectionTrait,
    client_id: Uuid,
    request_id: Uuid,
) -> Result<(), sea_orm::DbErr> {
    let operations: Vec<pull_operation::Model> = pull_operation::Entity::find()
        .inner_join(sync_request_operation::Entity)
        .filter(sync_request_operation::Column::RequestId.eq(request_id))
        .order_by_asc(pull_operation::Column::Requested)
        .order_by_asc(pull_operation::Column::Id)
        .all(db)
        .await?;
    if operations.iter().any(|operation| !ended(operation.status)) {
        return Ok(());
    }
    let completed = sync_request::Entity::update_many()
        .col_expr(
            sync_request::Column::Completed,
            Expr::value(Timestamp::now()),
        )
        .filter(sync_request::Column::Id.eq(request_id))
        .filter(sync_request::Column::Completed.is_null())
        .exec(db)
        .await?;
    if completed.rows_affected == 0 {
        return Ok(());
    }
    let Some(company_id) = operations.first().map(|operation| operation.company_id) else {
        return Ok(());
    };
    let data_types: Vec<serde_json::Value> = operations
        .iter()
        .map(|operation| {
            json!({
                "dataType": operation.data_type,
                "connectionId": operation.connection_id,
                "pullOperationId": operation.id,
                "status": operation.status.to_value(),
                "recordsCount": operation.records_fetched,
                "issuesCount": operation.record_issue_count,
                "errorMessage": operation.error_message,
            })
        })
        .collect();
    let data = json!({
        "companyId": company_id,
        "syncRequestId": request_id,
        "dataTypes": data_types,
    });
    webhooks::record(db, Event::new(EventType::ReadCompleted, client_id, data)).await
}
