//! Which generations of a company's data type a read sees (the newest, or
//! those a snapshot pinned), and when there are none, the answer that says
//! why: an unknown company, a first sync underway, no sync yet, a snapshot
//! no longer kept or written for another list.

use sea_orm::ConnectionTrait;
use uuid::Uuid;

use super::FIRST_SYNC_RETRY_AFTER;
use super::Seen;
use crate::companies;
use crate::data::DataType;
use crate::error::{Error, Problem, Remedy};
use crate::paging::Snapshot;
use crate::store::{self, Visible};
use crate::sync::operations;
use crate::tenant::Tenant;
use crate::timestamp::Timestamp;

/// The generations a read sees: the newest, or those a snapshot pinned.
pub(super) async fn seen_generations(
    db: &impl ConnectionTrait,
    tenant: Tenant,
    company_id: Uuid,
    data_type: DataType,
    seen: Seen<'_>,
) -> Result<Vec<Visible>, Error> {
    let Seen::Pinned {
        snapshot,
        retention,
    } = seen
    else {
        return generations(db, tenant, company_id, data_type).await;
    };
    companies::find(db, tenant, company_id).await?;
    same_list(snapshot, company_id, data_type)?;
    let kept_since = Timestamp::now() - chrono::Duration::from_std(retention).unwrap_or_default();
    let pinned = store::pinned_generations(
        db,
        tenant.client_id,
        company_id,
        data_type,
        &snapshot.generations,
        kept_since,
    )
    .await?;
    pinned.ok_or_else(|| {
        Error::Gone(
            Problem::new(format!(
                "The snapshot these links pinned is no longer kept: a newer sync replaced its {} \
                 more than {} ago (or two newer syncs completed since), or one of its connections \
                 was deleted.",
                data_type.spec().noun,
                in_words(retention)
            ))
            .with_remedy(Remedy::ReadListAgain {
                company_id,
                data_type: data_type.name().to_owned(),
            }),
        )
    })
}

/// A retention in words: minutes, or seconds under a minute.
fn in_words(retention: std::time::Duration) -> String {
    match retention.as_secs() {
        seconds if seconds < 60 => format!("{seconds} seconds"),
        seconds => format!("{} minutes", seconds.div_ceil(60)),
    }
}

/// Refuses a snapshot written for another list (company and data type).
pub(super) fn same_list(
    snapshot: &Snapshot,
    company_id: Uuid,
    data_type: DataType,
) -> Result<(), Error> {
    if snapshot.list == Snapshot::list_digest(company_id, data_type.name()) {
        return Ok(());
    }
    Err(Error::invalid(
        "snapshot",
        format!(
            "was written for another list: it pins only the list (company and data type) whose \
             links carried it, not the {} of company {company_id}",
            data_type.spec().noun
        ),
    ))
}

/// The newest generations of a company's data type; none answers why:
/// an unknown company (404), a first sync underway (409 with `Retry-After`)
/// or no sync yet (409 saying what to do).
pub(super) async fn generations(
    db: &impl ConnectionTrait,
    tenant: Tenant,
    company_id: Uuid,
    data_type: DataType,
) -> Result<Vec<Visible>, Error> {
    let visible = store::visible_generations(db, tenant.client_id, company_id, data_type).await?;
    if !visible.is_empty() {
        return Ok(visible);
    }
    // Nothing visible: an unknown (or another client's) company, a first
    // sync on its way, or no sync yet.
    companies::find(db, tenant, company_id).await?;
    if let Some(operation) = operations::underway(db, company_id, data_type).await? {
        return Err(Error::Pending {
            problem: Problem::new(format!(
                "The {} of company {company_id} are not synced yet: pull operation {} is {} \
                 (requested {}).",
                data_type.spec().noun,
                operation.id,
                operations::pull_status_name(operation.status),
                Timestamp(operation.requested).to_rfc3339(),
            ))
            .with_remedy(Remedy::WatchOperation {
                company_id,
                operation_id: operation.id,
            }),
            retry_after: FIRST_SYNC_RETRY_AFTER,
        });
    }
    let noun = data_type.spec().noun;
    let problem = if crate::connections::has_linked(db, company_id).await? {
        Problem::new(format!(
            "The {noun} of company {company_id} are not synced yet."
        ))
        .with_remedy(Remedy::QueueSync {
            company_id,
            data_type: data_type.name().to_owned(),
        })
    } else {
        Problem::new(format!(
            "The {noun} of company {company_id} are not synced yet, and it has no Linked \
             connection to sync them from."
        ))
        .with_remedy(Remedy::AuthorizeConnection { company_id })
    };
    Err(Error::Conflict(problem))
}
