//! Pull operations: queuing syncs (idempotently), their history, and the
//! per-data-type status of a company; [`lease`] is how the engine's workers
//! claim and end them, [`requests`] which operations each sync request
//! waits for, [`issues`] the records a run could not read. Only this module
//! writes `pull_operation`.

pub mod issues;
pub mod lease;
pub mod requests;

use sea_orm::Iterable;
use sea_orm::sea_query::Expr;
use sea_orm::{
    ActiveEnum, ActiveModelTrait, ColumnTrait, ConnectionTrait, DatabaseConnection, EntityTrait,
    PaginatorTrait, QueryFilter, QueryOrder, QuerySelect, QueryTrait, Set,
};
use uuid::Uuid;

use entity::{connection, pull_operation};

use crate::companies;
use crate::connections::ConnectionStatus;
use crate::data::DataType;
use crate::error::{Error, FieldError, Problem, Remedy};
use crate::paging::PageRequest;
use crate::platforms;
use crate::sync::settings::{self, SyncSettings};
use crate::tenant::Tenant;
use crate::timestamp::Timestamp;

pub use entity::pull_operation::{FetchMode, PullStatus};

/// Every pull status's name, in documentation order.
pub fn pull_status_names() -> Vec<String> {
    PullStatus::iter().map(|status| status.to_value()).collect()
}

/// A pull status's name (`Complete`).
pub fn pull_status_name(status: PullStatus) -> String {
    status.to_value()
}

/// The pull status named `text`, ignoring case (`complete`, `COMPLETE`).
pub fn pull_status_named(text: &str) -> Option<PullStatus> {
    PullStatus::iter().find(|status| status.to_value().eq_ignore_ascii_case(text))
}

/// Reads a requested data type; 400 naming `item_id` otherwise.
pub fn requested_data_type(item_id: &str, text: &str) -> Result<DataType, Error> {
    DataType::named(text)
        .ok_or_else(|| Error::Invalid(vec![FieldError::new(item_id, DataType::rule())]))
}

/// Queues the data types of the client's sync settings (by default every
/// one) of every `Linked` connection of the company, as one sync request.
pub async fn queue_all(
    db: &DatabaseConnection,
    tenant: Tenant,
    company_id: Uuid,
    fetch: Fetch,
) -> Result<Vec<pull_operation::Model>, Error> {
    let chosen = settings::get(db, tenant.client_id).await?;
    let operations = queue(db, tenant, company_id, Asked::Chosen(&chosen), None, fetch).await?;
    requests::record(db, tenant, company_id, &operations).await?;
    Ok(operations)
}

/// Queues one data type for every `Linked` connection that supports it, as
/// one sync request.
pub async fn queue_one(
    db: &DatabaseConnection,
    tenant: Tenant,
    company_id: Uuid,
    data_type: DataType,
    fetch: Fetch,
) -> Result<Vec<pull_operation::Model>, Error> {
    let operations = queue(db, tenant, company_id, Asked::One(data_type), None, fetch).await?;
    requests::record(db, tenant, company_id, &operations).await?;
    Ok(operations)
}

/// Queues the data types of the client's sync settings of one `Linked`
/// connection of the company (a managed migration's first sync of the
/// connection it imported), as one sync request; returns the request's id,
/// or `None` when the settings choose nothing the connection's platform
/// syncs (there is nothing to sync, which is not a failure).
pub async fn queue_connection(
    db: &DatabaseConnection,
    tenant: Tenant,
    company_id: Uuid,
    connection_id: Uuid,
) -> Result<Option<Uuid>, Error> {
    let chosen = settings::get(db, tenant.client_id).await?;
    let platform = connection::Entity::find_by_id(connection_id)
        .filter(connection::Column::CompanyId.eq(company_id))
        .one(db)
        .await?
        .and_then(|connection| platforms::find(&connection.platform_key));
    if platform.is_some_and(|platform| chosen.chosen_of(platform.data_types).is_empty()) {
        return Ok(None);
    }
    let operations = queue(
        db,
        tenant,
        company_id,
        Asked::Chosen(&chosen),
        Some(connection_id),
        Fetch::Due,
    )
    .await?;
    requests::record(db, tenant, company_id, &operations)
        .await
        .map(Some)
}

/// Fetch on first link: queues `data_types` (those the platform syncs) of
/// one newly linked connection as one sync request, whose end announces
/// `read.completed`. Nothing when none is left.
pub async fn queue_first_link(
    db: &DatabaseConnection,
    tenant: Tenant,
    company_id: Uuid,
    connection_id: Uuid,
    data_types: &[DataType],
) -> Result<Option<Uuid>, Error> {
    let mut operations = Vec::with_capacity(data_types.len());
    for data_type in data_types {
        operations.extend(
            queue(
                db,
                tenant,
                company_id,
                Asked::One(*data_type),
                Some(connection_id),
                Fetch::Due,
            )
            .await?,
        );
    }
    if operations.is_empty() {
        return Ok(None);
    }
    requests::record(db, tenant, company_id, &operations)
        .await
        .map(Some)
}

/// What a sync request asks for.
#[derive(Clone, Copy)]
enum Asked<'a> {
    /// The data types the client's sync settings choose, of those each
    /// platform syncs.
    Chosen(&'a SyncSettings),
    /// One data type (a platform without it gets a `NotSupported` operation).
    One(DataType),
}

async fn queue(
    db: &impl ConnectionTrait,
    tenant: Tenant,
    company_id: Uuid,
    asked: Asked<'_>,
    connection_id: Option<Uuid>,
    fetch: Fetch,
) -> Result<Vec<pull_operation::Model>, Error> {
    companies::find(db, tenant, company_id).await?;
    let linked = connection::Entity::find()
        .filter(connection::Column::CompanyId.eq(company_id))
        .apply_if(connection_id, |query, id| {
            query.filter(connection::Column::Id.eq(id))
        })
        .filter(connection::Column::Status.eq(ConnectionStatus::Linked))
        .order_by_asc(connection::Column::Created)
        .order_by_asc(connection::Column::Id)
        .all(db)
        .await?;
    let mut targets = Vec::new();
    let mut unsupported = Vec::new();
    for connection in &linked {
        let platform = platforms::find(&connection.platform_key).ok_or_else(|| {
            Error::internal(anyhow::anyhow!(
                "stored platform key {:?} is not in the catalogue",
                connection.platform_key
            ))
        })?;
        match asked {
            Asked::Chosen(settings) => targets.extend(
                settings
                    .chosen_of(platform.data_types)
                    .into_iter()
                    .map(|data_type| (connection.id, data_type)),
            ),
            Asked::One(wanted) if platform.data_types.contains(&wanted) => {
                targets.push((connection.id, wanted))
            }
            Asked::One(wanted) => unsupported.push((connection.id, wanted, platform)),
        }
    }
    if targets.is_empty() && unsupported.is_empty() {
        let problem = if linked.is_empty() {
            Problem::new(format!(
                "Company {company_id} has no Linked connection to sync."
            ))
            .with_remedy(Remedy::AuthorizeConnection { company_id })
        } else if let Asked::Chosen(SyncSettings {
            data_types: Some(chosen),
            ..
        }) = asked
        {
            let names: Vec<&str> = chosen.iter().map(|data_type| data_type.name()).collect();
            Problem::new(format!(
                "No Linked connection of company {company_id} syncs a data type your sync settings choose \
                 ({}): GET /integrations/{{platformKey}} lists what each platform syncs, and PUT /syncSettings \
                 changes the choice.",
                names.join(", ")
            ))
        } else {
            Problem::new(format!(
                "No Linked connection of company {company_id} syncs any data type."
            ))
        };
        return Err(Error::Conflict(problem));
    }
    let mut operations = Vec::with_capacity(targets.len() + unsupported.len());
    for (connection_id, data_type) in targets {
        operations.push(queue_target(db, company_id, connection_id, data_type, fetch).await?);
    }
    for (connection_id, data_type, platform) in unsupported {
        operations.push(not_supported(db, company_id, connection_id, data_type, platform).await?);
    }
    Ok(operations)
}

/// Records that `platform` does not have `data_type`: an operation that
/// ended `NotSupported` the moment it was asked for, saying what it has.
async fn not_supported(
    db: &impl ConnectionTrait,
    company_id: Uuid,
    connection_id: Uuid,
    data_type: DataType,
    platform: &platforms::Platform,
) -> Result<pull_operation::Model, Error> {
    let has: Vec<&str> = platform.data_types.iter().map(|dt| dt.name()).collect();
    let message = if has.is_empty() {
        format!(
            "{} has no {}: tributary syncs no data type from it yet.",
            platform.name,
            data_type.spec().noun
        )
    } else {
        format!(
            "{} has no {}; it syncs {}.",
            platform.name,
            data_type.spec().noun,
            has.join(", ")
        )
    };
    let now = Timestamp::now();
    Ok(pull_operation::ActiveModel {
        id: Set(Uuid::now_v7()),
        company_id: Set(company_id),
        connection_id: Set(connection_id),
        data_type: Set(data_type.name().to_owned()),
        status: Set(PullStatus::NotSupported),
        requested: Set(now),
        started: Set(None),
        completed: Set(Some(now)),
        progress: Set(0),
        records_fetched: Set(0),
        error_message: Set(Some(message)),
        error_remedy: Set(None),
        lease_owner: Set(None),
        lease_expires_at: Set(None),
        attempts: Set(0),
        record_issues: Set(None),
        record_issue_count: Set(0),
        fetch_mode: Set(None),
        full_requested: Set(false),
    }
    .insert(db)
    .await?)
}

async fn active_operation(
    db: &impl ConnectionTrait,
    connection_id: Uuid,
    data_type: DataType,
) -> Result<Option<pull_operation::Model>, sea_orm::DbErr> {
    pull_operation::Entity::find()
        .filter(pull_operation::Column::ConnectionId.eq(connection_id))
        .filter(pull_operation::Column::DataType.eq(data_type.name()))
        .filter(pull_operation::Column::Status.is_in([PullStatus::Queued, PullStatus::Fetching]))
        .one(db)
        .await
}

/// The company's oldest queued or running operation of `data_type`, if
/// any: what a reader of data not synced yet is waiting for.
pub async fn underway(
    db: &impl ConnectionTrait,
    company_id: Uuid,
    data_type: DataType,
) -> Result<Option<pull_operation::Model>, sea_orm::DbErr> {
    pull_operation::Entity::find()
        .filter(pull_operation::Column::CompanyId.eq(company_id))
        .filter(pull_operation::Column::DataType.eq(data_type.name()))
        .filter(pull_operation::Column::Status.is_in([PullStatus::Queued, PullStatus::Fetching]))
        .order_by_asc(pull_operation::Column::Requested)
        .order_by_asc(pull_operation::Column::Id)
        .one(db)
        .await
}

/// The queued or running operation of (connection, data type), or a new one.
/// The partial unique index settles a race between two triggers.
async fn queue_target(
    db: &impl ConnectionTrait,
    company_id: Uuid,
    connection_id: Uuid,
    data_type: DataType,
    fetch: Fetch,
) -> Result<pull_operation::Model, Error> {
    if let Some(existing) = active_operation(db, connection_id, data_type).await? {
        return ask_full(db, existing, fetch).await;
    }
    let inserted = pull_operation::ActiveModel {
        id: Set(Uuid::now_v7()),
        company_id: Set(company_id),
        connection_id: Set(connection_id),
        data_type: Set(data_type.name().to_owned()),
        status: Set(PullStatus::Queued),
        requested: Set(Timestamp::now()),
        started: Set(None),
        completed: Set(None),
        progress: Set(0),
        records_fetched: Set(0),
        error_message: Set(None),
        error_remedy: Set(None),
        lease_owner: Set(None),
        lease_expires_at: Set(None),
        attempts: Set(0),
        record_issues: Set(None),
        record_issue_count: Set(0),
        fetch_mode: Set(None),
        full_requested: Set(fetch == Fetch::Full),
    }
    .insert(db)
    .await;
    match inserted {
        Ok(operation) => Ok(operation),
        Err(error)
            if matches!(
                error.sql_err(),
                Some(sea_orm::SqlErr::UniqueConstraintViolation(_))
            ) =>
        {
            let existing = active_operation(db, connection_id, data_type)
                .await?
                .ok_or_else(|| Error::internal(error))?;
            ask_full(db, existing, fetch).await
        }
        Err(error) => Err(error.into()),
    }
}

/// What a queued sync fetches.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fetch {
    /// What the engine decides: what changed since the last published fetch
    /// where the connector can ask for it, else the whole list.
    Due,
    /// The platform's whole list (`?full=true`): a reconciliation.
    Full,
}

/// An operation already queued or running, which a request for a full fetch
/// joins: still queued, it will fetch whole; already running, it fetches
/// as it decided when it started (the operation's `fetchMode` says).
async fn ask_full(
    db: &impl ConnectionTrait,
    existing: pull_operation::Model,
    fetch: Fetch,
) -> Result<pull_operation::Model, Error> {
    if fetch != Fetch::Full || existing.full_requested || existing.status != PullStatus::Queued {
        return Ok(existing);
    }
    pull_operation::Entity::update_many()
        .col_expr(pull_operation::Column::FullRequested, Expr::value(true))
        .filter(pull_operation::Column::Id.eq(existing.id))
        .filter(pull_operation::Column::Status.eq(PullStatus::Queued))
        .exec(db)
        .await?;
    Ok(pull_operation::Entity::find_by_id(existing.id)
        .one(db)
        .await?
        .unwrap_or(existing))
}

/// The sync queue as the metrics show it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct QueueStats {
    /// Operations waiting for a worker.
    pub depth: u64,
    /// How long the oldest of them has waited, in seconds (0 when none waits).
    pub oldest_age_seconds: f64,
}

/// How many operations wait for a worker, and for how long the oldest has.
pub async fn queue_stats(db: &impl ConnectionTrait) -> Result<QueueStats, sea_orm::DbErr> {
    let queued = pull_operation::Entity::find()
        .filter(pull_operation::Column::Status.eq(PullStatus::Queued));
    let depth = queued.clone().count(db).await?;
    let oldest = queued
        .order_by_asc(pull_operation::Column::Requested)
        .one(db)
        .await?
        .map(|operation| operation.requested);
    let oldest_age_seconds = oldest
        .map(|requested| (chrono::Utc::now() - requested).num_milliseconds().max(0) as f64 / 1000.0)
        .unwrap_or(0.0);
    Ok(QueueStats {
        depth,
        oldest_age_seconds,
    })
}

/// Filters of the history list.
#[derive(Debug, Clone, Copy, Default)]
pub struct HistoryFilter {
    /// Only this data type.
    pub data_type: Option<DataType>,
    /// Only this status.
    pub status: Option<PullStatus>,
}

/// One page of a company's pull operations, newest first, and the total.
pub async fn history(
    db: &impl ConnectionTrait,
    tenant: Tenant,
    company_id: Uuid,
    filter: HistoryFilter,
    page: PageRequest,
) -> Result<(Vec<pull_operation::Model>, u64), Error> {
    companies::find(db, tenant, company_id).await?;
    let mut query =
        pull_operation::Entity::find().filter(pull_operation::Column::CompanyId.eq(company_id));
    if let Some(data_type) = filter.data_type {
        query = query.filter(pull_operation::Column::DataType.eq(data_type.name()));
    }
    if let Some(status) = filter.status {
        query = query.filter(pull_operation::Column::Status.eq(status));
    }
    let total = query.clone().count(db).await?;
    let rows = query
        .order_by_desc(pull_operation::Column::Requested)
        .order_by_desc(pull_operation::Column::Id)
        .offset(page.offset())
        .limit(page.limit())
        .all(db)
        .await?;
    Ok((rows, total))
}

/// One pull operation of the tenant's company.
pub async fn find(
    db: &impl ConnectionTrait,
    tenant: Tenant,
    company_id: Uuid,
    pull_operation_id: Uuid,
) -> Result<pull_operation::Model, Error> {
    companies::find(db, tenant, company_id).await?;
    pull_operation::Entity::find_by_id(pull_operation_id)
        .filter(pull_operation::Column::CompanyId.eq(company_id))
        .one(db)
        .await?
        .ok_or_else(|| {
            Error::not_found(format!(
                "No pull operation with id {pull_operation_id} in this company."
            ))
        })
}

/// Where one data type of a company stands.
#[derive(Debug, Clone)]
pub struct DataTypeStatus {
    /// The data type.
    pub data_type: DataType,
    /// The status of its latest operation.
    pub current_status: PullStatus,
    /// When its data last completed a sync.
    pub last_successful_sync: Option<chrono::DateTime<chrono::Utc>>,
    /// Its latest operation.
    pub latest_sync_id: Uuid,
    /// Its latest completed operation.
    pub latest_successful_sync_id: Option<Uuid>,
}

/// The status of every data type the company has ever queued.
pub async fn data_status(
    db: &impl ConnectionTrait,
    tenant: Tenant,
    company_id: Uuid,
) -> Result<Vec<DataTypeStatus>, Error> {
    companies::find(db, tenant, company_id).await?;
    let mut statuses = Vec::new();
    for &data_type in DataType::all() {
        let of_type = pull_operation::Entity::find()
            .filter(pull_operation::Column::CompanyId.eq(company_id))
            .filter(pull_operation::Column::DataType.eq(data_type.name()));
        // An operation that found the data type unsupported by one
        // connection says nothing of the connections that sync it: it is the
        // latest only when nothing else was ever queued.
        let newest = |query: sea_orm::Select<pull_operation::Entity>| {
            query
                .order_by_desc(pull_operation::Column::Requested)
                .order_by_desc(pull_operation::Column::Id)
                .one(db)
        };
        let supported = of_type
            .clone()
            .filter(pull_operation::Column::Status.ne(PullStatus::NotSupported));
        let latest = match newest(supported).await? {
            Some(latest) => latest,
            None => match newest(of_type.clone()).await? {
                Some(latest) => latest,
                None => continue,
            },
        };
        let latest_successful = of_type
            .filter(pull_operation::Column::Status.eq(PullStatus::Complete))
            .order_by_desc(pull_operation::Column::Completed)
            .one(db)
            .await?;
        statuses.push(DataTypeStatus {
            data_type,
            current_status: latest.status,
            last_successful_sync: latest_successful.as_ref().and_then(|op| op.completed),
            latest_sync_id: latest.id,
            latest_successful_sync_id: latest_successful.map(|op| op.id),
        });
    }
    Ok(statuses)
}

/// The company's connections (all statuses: synced data of unlinked and
/// deauthorized connections stays readable).
pub async fn company_connection_ids(
    db: &impl ConnectionTrait,
    company_id: Uuid,
) -> Result<Vec<Uuid>, sea_orm::DbErr> {
    connection::Entity::find()
        .select_only()
        .column(connection::Column::Id)
        .filter(connection::Column::CompanyId.eq(company_id))
        .into_tuple()
        .all(db)
        .await
}
