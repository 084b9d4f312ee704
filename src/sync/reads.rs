//! Reading a company's synced data: the tenant check, the "not synced yet"
//! answer, and the page.
//!
//! Each read sees one snapshot, so a sync publishing and deleting
//! generations meanwhile cannot yield an empty or mixed page: a company
//! whose records of a data type come from one connection, at its current
//! generation, is read by one SQL statement (its own snapshot); every other
//! read (several connections, a retained generation, a query) runs in a read-only
//! transaction (REPEATABLE READ on PostgreSQL; a read transaction on SQLite,
//! whose WAL gives it a snapshot) in which the generations, the count and
//! the page are read.
//!
//! A read either sees the newest data ([`Seen::Newest`]) or the generations
//! a client's links pinned ([`Seen::Pinned`]), while they are retained.

use std::sync::Arc;

use sea_orm::{
    AccessMode, DatabaseConnection, DatabaseTransaction, DbBackend, IsolationLevel,
    TransactionTrait,
};
use uuid::Uuid;

use crate::data::DataType;
use crate::data::query::{OrderBy, Query};
use crate::error::{Error, Problem, Remedy};
use crate::paging::{Cursor, PageRequest, Snapshot};
use crate::store::ordered::Place;
use crate::store::{self, Visible, pages};
use crate::sync::list_orders::ListOrders;
use crate::tenant::Tenant;

pub use crate::store::pages::Page;

mod visible;
mod walk;

use visible::{generations, same_list, seen_generations};
use walk::{dense_total, remember_in_background, walk};

/// How long a reader waiting for a first sync is asked to wait before
/// reading again (a small sync completes within it; a large one is polled).
pub const FIRST_SYNC_RETRY_AFTER: std::time::Duration = std::time::Duration::from_secs(2);

/// Which data a read sees.
#[derive(Debug, Clone, Copy)]
pub enum Seen<'a> {
    /// The generations published last.
    Newest,
    /// The generations a client's links pinned, while retained.
    Pinned {
        /// What the links carried.
        snapshot: &'a Snapshot,
        /// How long a replaced generation is retained.
        retention: std::time::Duration,
    },
}

/// One page of the company's records of `data_type`, of one filter value
/// when `filter` is given, and the total after the filter, from the
/// generations `seen` names. A list merged from several connections is read
/// by merging the first rows of each while the page is near the start, and
/// deeper by its whole order, read once per snapshot (`orders`).
#[allow(clippy::too_many_arguments)]
pub async fn page(
    db: &DatabaseConnection,
    orders: &ListOrders,
    tenant: Tenant,
    company_id: Uuid,
    data_type: DataType,
    filter: Option<&str>,
    seen: Seen<'_>,
    page: PageRequest,
) -> Result<Page, Error> {
    // One statement when one connection's list is read: the newest, or the
    // generation a snapshot pins while it is still the current one (a walk
    // that no sync interrupted).
    let one_statement = match seen {
        Seen::Newest => Some(None),
        // (Another list's snapshot is refused on the way below, after the
        // company is found: an unknown company is a 404 first.)
        Seen::Pinned { snapshot, .. } => match snapshot.generations.as_slice() {
            [pinned] if same_list(snapshot, company_id, data_type).is_ok() => Some(Some(*pinned)),
            _ => None,
        },
    };
    if let Some(pinned) = one_statement
        && let Some(found) = pages::page_of_one(
            db,
            tenant.client_id,
            company_id,
            data_type,
            filter,
            pinned,
            page,
        )
        .await?
    {
        return Ok(found);
    }
    let txn = snapshot(db).await?;
    let visible = seen_generations(&txn, tenant, company_id, data_type, seen).await?;
    let found = match visible.as_slice() {
        [one] => pages::page_of_generation(&txn, one, data_type, filter, page).await?,
        several => {
            let selection = store::query::Selection {
                visible: several,
                data_type,
                filter,
                query: None,
            };
            let near_start = page.page == 1 || page.offset() + page.limit() <= MERGED_PREFIX_ROWS;
            let places = if near_start {
                None
            } else {
                orders
                    .places(&txn, selection, None, None, most_records(several))
                    .await?
            };
            match places {
                Some(places) => page_of_places(&txn, selection, &places, page).await?,
                None => pages::page_of_several(&txn, several, data_type, filter, page).await?,
            }
        }
    };
    txn.commit().await?;
    Ok(found)
}

/// How deep (rows per connection) a page of a list merged from several
/// connections is read by merging each connection's first rows (page 1
/// always is); deeper, the list's whole order is read once per snapshot and
/// remembered.
pub const MERGED_PREFIX_ROWS: u64 = 1_000;

/// How many records the generations `visible` hold: what a list of them,
/// narrowed or not, holds at most.
fn most_records(visible: &[Visible]) -> u64 {
    visible
        .iter()
        .map(|one| u64::try_from(one.record_count).unwrap_or(0))
        .sum()
}

/// `page` of the list whose whole order is `places` (in `selection`): a
/// slice of the order and one lookup by position.
async fn page_of_places(
    db: &DatabaseTransaction,
    selection: store::query::Selection<'_>,
    places: &[Place],
    page: PageRequest,
) -> Result<Page, Error> {
    let bodies = store::ordered::bodies_at(db, selection, page.slice(places)).await?;
    Ok(Page {
        bodies,
        total: places.len() as u64,
        generations: pages::generations_of(selection.visible),
    })
}

/// Per connection of `visible`, the position of the last of its records
/// among `passed` (0 for none): where a cursor continues from.
fn reached(visible: &[Visible], passed: &[Place]) -> Vec<i64> {
    let mut positions = vec![0; visible.len()];
    let mut missing = visible.len();
    for place in passed.iter().rev() {
        if missing == 0 {
            break;
        }
        if let Some(slot) = positions.get_mut(place.connection())
            && *slot == 0
        {
            *slot = place.position();
            missing -= 1;
        }
    }
    positions
}

/// The totals of queried lists, remembered per snapshot and query: the
/// generations a total was counted in never change once published, so a
/// client following `_links` through a query's pages pays for its count
/// once. Bounded; what falls out is counted again.
pub struct QueryTotals(quick_cache::sync::Cache<TotalKey, u64>);

/// What a queried total depends on: the data type, the generations seen
/// (connection and generation), the list's filter and the query's text.
type TotalKey = (&'static str, Vec<(Uuid, i64)>, Option<String>, String);

/// How many queried totals are remembered.
pub const QUERY_TOTALS_CAPACITY: usize = 10_000;

impl Default for QueryTotals {
    fn default() -> Self {
        Self(quick_cache::sync::Cache::new(QUERY_TOTALS_CAPACITY))
    }
}

/// A list narrowed by a query or ordered by an `orderBy`.
#[derive(Debug, Clone, Copy)]
pub struct Queried<'a> {
    /// The parsed query and its text (the text keys the remembered total).
    pub query: Option<(&'a Query, &'a str)>,
    /// The order asked for, ahead of the list's own.
    pub order_by: Option<&'a OrderBy>,
    /// Where the walk this request continues stopped (`_links.next`).
    pub cursor: Option<&'a Cursor>,
}

/// A page of a queried list, and where the page after it starts.
#[derive(Debug)]
pub struct QueriedPage {
    /// The page.
    pub page: Page,
    /// The cursor of the next page, when there is one and the list's own
    /// order allows continuing by position.
    pub next: Option<Cursor>,
}

/// [`page`] of a list narrowed by `queried.query` and ordered by
/// `queried.order_by`, in one snapshot (of the generations `seen` names).
/// The list's whole order is read once per snapshot, query and `orderBy`
/// (see [`ListOrders`]), and every page is then a slice of it, by number or
/// by cursor, at the same cost at any depth. A list that may hold more than
/// `orders` keeps is read as before: its total counted once per snapshot
/// and query ([`QueryTotals`]); in the list's own order, page 1 and every
/// page reached by a cursor by position (yielding the next page's cursor);
/// a page asked for by number alone, a cursor of another snapshot or
/// selection, and an `orderBy` by `OFFSET`. A wide match of one comparison
/// on a declared field is not listed for page 1 and the pages its links
/// reach: its total is counted from the keys and the page walked in the
/// list's own order ([`dense_total`]).
#[allow(clippy::too_many_arguments)]
pub async fn queried_page(
    db: &DatabaseConnection,
    totals: &QueryTotals,
    orders: &Arc<ListOrders>,
    tenant: Tenant,
    company_id: Uuid,
    data_type: DataType,
    filter: Option<&str>,
    queried: Queried<'_>,
    seen: Seen<'_>,
    page: PageRequest,
) -> Result<QueriedPage, Error> {
    let txn = snapshot(db).await?;
    let visible = seen_generations(&txn, tenant, company_id, data_type, seen).await?;
    let query_text = queried.query.map(|(_, text)| text);
    let selection = store::query::Selection {
        visible: &visible,
        data_type,
        filter,
        query: queried.query.map(|(query, _)| query),
    };
    // A cursor continues one walk: the same company's list of the same
    // data type, with the same filter, query and page size.
    let (company, page_size) = (company_id.to_string(), page.page_size.to_string());
    let digest = Cursor::digest(&[
        Some(&company),
        Some(data_type.name()),
        filter,
        query_text,
        Some(&page_size),
    ]);
    let cursor_at = |positions: Vec<i64>| Cursor {
        page: page.page.saturating_add(1),
        selection: digest,
        positions: visible
            .iter()
            .zip(positions)
            .map(|(one, ordinal)| (one.connection_id, one.generation, ordinal))
            .collect(),
    };
    // Where a walk in the list's own order continues (page 1, or a page a
    // cursor of this walk reached); `None` for a page by number alone.
    let walk_from: Option<Vec<i64>> = match (queried.order_by, queried.cursor) {
        (Some(_), _) => None,
        (None, Some(cursor)) => continued(cursor, page, digest, &visible),
        (None, None) => (page.page == 1).then(|| vec![0; visible.len()]),
    };
    let key: TotalKey = (
        data_type.name(),
        visible
            .iter()
            .map(|one| (one.connection_id, one.generation))
            .collect(),
        filter.map(str::to_owned),
        query_text.unwrap_or_default().to_owned(),
    );
    // A match too wide to list cheaply, counted by the keys: walked.
    if let Some(from) = &walk_from
        && !orders.remembers(selection, query_text, None)
        && let Some(dense) = dense_total(&txn, selection, page).await?
        && let Some((bodies, next)) = walk(
            &txn,
            selection,
            from.clone(),
            page,
            dense.total,
            Some(&dense.windows),
        )
        .await?
    {
        let total = dense.total;
        totals.0.insert(key.clone(), total);
        txn.commit().await?;
        if let (Some((query, text)), Some(from)) = (queried.query, walk_from.as_ref())
            && from.iter().all(|position| *position == 0)
        {
            remember_in_background(db, orders, &visible, data_type, query, text);
        }
        return Ok(QueriedPage {
            page: Page {
                bodies,
                total,
                generations: pages::generations_of(&visible),
            },
            next: next.map(cursor_at),
        });
    }
    if let Some(places) = orders
        .places(
            &txn,
            selection,
            query_text,
            queried.order_by,
            most_records(&visible),
        )
        .await?
    {
        let found = page_of_places(&txn, selection, &places, page).await?;
        txn.commit().await?;
        // The same cursor as a walk read page by page writes (page 1 and
        // pages reached by a cursor, in the list's own order), so that a
        // walk continues either way (after this order falls out, say).
        let through = page.offset().saturating_add(page.limit());
        let walking = match queried.cursor {
            Some(cursor) => continued(cursor, page, digest, &visible).is_some(),
            None => page.page == 1,
        };
        let next = (walking && queried.order_by.is_none() && through < found.total).then(|| {
            let passed = &places[..usize::try_from(through).unwrap_or(places.len())];
            cursor_at(reached(&visible, passed))
        });
        return Ok(QueriedPage { page: found, next });
    }
    let total = match totals.0.get(&key) {
        Some(total) => total,
        None => {
            let total = match (queried.query, filter) {
                // Without a query or a filter, the total is the stored count.
                (None, None) => visible.iter().map(|one| one.record_count as u64).sum(),
                _ => store::query::count(&txn, selection).await?,
            };
            totals.0.insert(key, total);
            total
        }
    };
    let walked = match walk_from {
        Some(from) => walk(&txn, selection, from, page, total, None).await?,
        None => None,
    };
    let (bodies, next) = match walked {
        Some(walked) => walked,
        None if page.offset() >= total => (Vec::new(), None),
        None => (
            store::query::page(&txn, selection, queried.order_by, page).await?,
            None,
        ),
    };
    txn.commit().await?;
    Ok(QueriedPage {
        page: Page {
            bodies,
            total,
            generations: pages::generations_of(&visible),
        },
        next: next.map(cursor_at),
    })
}

/// The positions `cursor` continues from, when it was written for this
/// page of this selection in this snapshot (the same generations).
fn continued(
    cursor: &Cursor,
    page: PageRequest,
    digest: u64,
    visible: &[Visible],
) -> Option<Vec<i64>> {
    let same_snapshot = cursor.positions.len() == visible.len()
        && cursor
            .positions
            .iter()
            .zip(visible)
            .all(|((connection, generation, _), one)| {
                *connection == one.connection_id && *generation == one.generation
            });
    (cursor.page == page.page && cursor.selection == digest && same_snapshot).then(|| {
        cursor
            .positions
            .iter()
            .map(|(_, _, ordinal)| *ordinal)
            .collect()
    })
}

/// The company's record of `data_type` whose platform id is `record_id`, as
/// the lists show it; from `connection_id` only when given, which is needed
/// when several of the company's connections hold a record of that id.
pub async fn record(
    db: &DatabaseConnection,
    tenant: Tenant,
    company_id: Uuid,
    data_type: DataType,
    record_id: &str,
    connection_id: Option<Uuid>,
) -> Result<String, Error> {
    let txn = snapshot(db).await?;
    let mut visible = generations(&txn, tenant, company_id, data_type).await?;
    if let Some(connection_id) = connection_id {
        visible.retain(|one| one.connection_id == connection_id);
    }
    let mut found = store::single::find(&txn, &visible, data_type, record_id).await?;
    txn.commit().await?;
    let noun = data_type.spec().noun;
    let from = connection_id.map_or(String::new(), |id| format!(" from connection {id}"));
    match found.len() {
        0 => Err(Error::NotFound(Problem::new(format!(
            "No record of the company {company_id}'s synced {noun}{from} has the id `{}`.",
            printable(record_id)
        )))),
        1 => Ok(found.remove(0).1),
        _ => Err(Error::Conflict(
            Problem::new(format!(
                "Several of company {company_id}'s connections hold {noun} with the id `{}`.",
                printable(record_id)
            ))
            .with_remedy(Remedy::NameConnection {
                connections: found.into_iter().map(|(id, _)| id).collect(),
            }),
        )),
    }
}

/// An id as an error message may quote it: at most 64 characters, control
/// characters shown as `?`.
fn printable(record_id: &str) -> String {
    let mut shown: String = record_id
        .chars()
        .take(64)
        .map(|c| if c.is_control() { '?' } else { c })
        .collect();
    if record_id.chars().count() > 64 {
        shown.push('…');
    }
    shown
}

/// [`page`] as the naive build reads it: `OFFSET` and `COUNT(*)` on every
/// request (the benchmark's comparison; cargo feature `naive-paging`).
#[cfg(feature = "naive-paging")]
pub async fn naive_page(
    db: &DatabaseConnection,
    tenant: Tenant,
    company_id: Uuid,
    data_type: DataType,
    filter: Option<&str>,
    page: PageRequest,
) -> Result<Page, Error> {
    let txn = snapshot(db).await?;
    let visible = generations(&txn, tenant, company_id, data_type).await?;
    let found = match visible.as_slice() {
        [one] if one.layer.is_none() => {
            store::naive::page_of_one(&txn, one, data_type, filter, page).await?
        }
        [one] => pages::page_of_generation(&txn, one, data_type, filter, page).await?,
        several => pages::page_of_several(&txn, several, data_type, filter, page).await?,
    };
    txn.commit().await?;
    Ok(found)
}

async fn snapshot(db: &DatabaseConnection) -> Result<DatabaseTransaction, Error> {
    Ok(match db.get_database_backend() {
        DbBackend::Postgres => {
            db.begin_with_config(
                Some(IsolationLevel::RepeatableRead),
                Some(AccessMode::ReadOnly),
            )
            .await?
        }
        _ => db.begin().await?,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn visible(count: usize) -> Vec<Visible> {
        (0..count)
            .map(|index| Visible {
                connection_id: Uuid::from_u128(index as u128 + 1),
                generation: 1,
                record_count: 10,
                layer: None,
            })
            .collect()
    }

    fn at(connection: usize, position: i64) -> Place {
        Place::new(connection, position).expect("fits")
    }

    #[test]
    fn a_cursor_continues_from_each_connections_last_record_passed() {
        let passed = [at(0, 1), at(1, 1), at(0, 2), at(0, 3), at(1, 2), at(0, 4)];
        assert_eq!(reached(&visible(2), &passed), vec![4, 2]);
        // A connection none of whose records was passed continues from 0.
        assert_eq!(reached(&visible(3), &passed[..4]), vec![3, 1, 0]);
        assert_eq!(reached(&visible(2), &[]), vec![0, 0]);
    }
}
