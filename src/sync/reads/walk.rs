//! Walking a dense queried list in its own order: a match of one comparison
//! on a declared field, counted from the keys, read window by window from
//! where the walk stands, and its order listed in the background for later
//! pages.

use std::sync::Arc;

use sea_orm::{DatabaseConnection, DatabaseTransaction};

use super::most_records;
use crate::data::DataType;
use crate::data::query::Query;
use crate::error::Error;
use crate::paging::PageRequest;
use crate::store::query::Windows;
use crate::store::{self, Visible};
use crate::sync::list_orders::ListOrders;

/// A walked record costs about as much as this many matches listed from
/// the keys (reading its row and its JSON against the query, where a
/// listed match is four bytes of a key block); see [`dense_total`].
const WALKED_RECORD_COST: u128 = 64;

/// How many windows' worth of positions a walk of a dense match reads
/// before it gives up and the matches are listed instead: matches bunched
/// far from where the walk starts (a range on a date the list is ordered
/// by) are not the even spread the density promised.
const WINDOWS_BEFORE_LISTING: i64 = 16;

/// A match the keys counted, dense enough to walk.
pub(super) struct Dense {
    /// Its exact total.
    pub(super) total: u64,
    /// How each connection's walk reads, aligned with the selection's
    /// generations.
    pub(super) windows: Vec<Windows>,
}

/// The exact total of `selection` (a query, one comparison on a declared
/// field, in the list's own order) counted from the keys, and how to walk
/// it, when walking the list's order to `page` reads fewer records
/// (weighed by [`WALKED_RECORD_COST`]) than listing every match would: at
/// 1,000,000 records and pages of 100, a match of more than about 80,000.
/// `None` otherwise, and then the matches are listed.
pub(super) async fn dense_total(
    db: &DatabaseTransaction,
    selection: store::query::Selection<'_>,
    page: PageRequest,
) -> Result<Option<Dense>, Error> {
    let (Some(query), None) = (selection.query, selection.filter) else {
        return Ok(None);
    };
    let mut total = 0;
    let mut windows = Vec::with_capacity(selection.visible.len());
    for one in selection.visible {
        let counted = match &one.layer {
            Some(layer) => {
                let generations = (layer.base, one.generation);
                let data_type = selection.data_type;
                store::keys::layered::count(db, data_type, generations, &layer.map, query).await?
            }
            None => {
                let (generation, count) = (one.generation, one.record_count);
                store::keys::count(db, selection.data_type, generation, count, query).await?
            }
        };
        let Some(matched) = counted else {
            return Ok(None);
        };
        // Each connection's walk reads about a page's worth of its matches:
        // `limit × records / matched` records.
        let records = u128::from(one.record_count.max(0) as u64);
        let walked = u128::from(page.limit()) * records;
        if walked * WALKED_RECORD_COST > u128::from(matched) * u128::from(matched) {
            return Ok(None);
        }
        // A window of about two pages' worth of matches, evenly spread.
        let width = i64::try_from(2 * walked / u128::from(matched.max(1)))
            .unwrap_or(i64::MAX)
            .max(i64::try_from(page.limit()).unwrap_or(i64::MAX));
        windows.push(Windows {
            width,
            budget: width.saturating_mul(WINDOWS_BEFORE_LISTING),
        });
        total += matched;
    }
    Ok(Some(Dense { total, windows }))
}

/// Lists the order of a walked query (one connection's list or several,
/// without the list's filter) after its first page was answered, so that
/// its later pages, by number or by link, are slices of it as for any
/// other query. Its generations are published and never change, so it is
/// read outside the request's snapshot; a failure only means the walk goes
/// on.
pub(super) fn remember_in_background(
    db: &DatabaseConnection,
    orders: &Arc<ListOrders>,
    visible: &[Visible],
    data_type: DataType,
    query: &Query,
    query_text: &str,
) {
    let (db, orders, visible) = (db.clone(), Arc::clone(orders), visible.to_vec());
    let (query, query_text) = (query.clone(), query_text.to_owned());
    tokio::spawn(async move {
        let selection = store::query::Selection {
            visible: &visible,
            data_type,
            filter: None,
            query: Some(&query),
        };
        let at_most = most_records(&visible);
        if let Err(error) = orders
            .places(&db, selection, Some(&query_text), None, at_most)
            .await
        {
            tracing::warn!(%error, data_type = data_type.name(), "listing a walked query's order failed");
        }
    });
}

/// `page` of `selection` (of `total` records) in the list's own order,
/// walked from `from` (per connection, the position of the last record
/// passed; with `windows`, read window by window), and where the walk
/// stands after it when a page follows; `None` when the windows' budget
/// ran out first.
pub(super) async fn walk(
    db: &DatabaseTransaction,
    selection: store::query::Selection<'_>,
    mut from: Vec<i64>,
    page: PageRequest,
    total: u64,
    windows: Option<&[Windows]>,
) -> Result<Option<(Vec<String>, Option<Vec<i64>>)>, Error> {
    if page.offset() >= total {
        return Ok(Some((Vec::new(), None)));
    }
    let Some(placed) =
        store::query::page_after(db, selection, &from, page.limit(), windows).await?
    else {
        return Ok(None);
    };
    for one in &placed {
        if let Some(index) = selection
            .visible
            .iter()
            .position(|seen| seen.connection_id == one.connection_id)
        {
            from[index] = from[index].max(one.ordinal);
        }
    }
    let next = (page.offset() + page.limit() < total).then_some(from);
    Ok(Some((
        placed.into_iter().map(|one| one.body).collect(),
        next,
    )))
}
