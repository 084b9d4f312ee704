//! The naive build's reads, for the benchmark only (cargo feature
//! `naive-paging`): a page with `OFFSET` and the total with `COUNT(*)` on
//! every request, as most services do, over the same index and order, so
//! the benchmark measures what the stored ordinals save.

use sea_orm::{ColumnTrait, ConnectionTrait, PaginatorTrait, QueryFilter, QueryOrder};

use entity::record;

use super::generations::Visible;
use super::pages::{Page, bodies, of};
use crate::data::DataType;
use crate::paging::PageRequest;

/// A page of one connection's list, read with `OFFSET` and `COUNT(*)`.
pub async fn page_of_one(
    db: &impl ConnectionTrait,
    one: &Visible,
    data_type: DataType,
    filter: Option<&str>,
    page: PageRequest,
) -> Result<Page, sea_orm::DbErr> {
    let ordinal = match filter {
        Some(_) => record::Column::FilterOrdinal,
        None => record::Column::Ordinal,
    };
    let query = of(data_type, filter)
        .filter(record::Column::ConnectionId.eq(one.connection_id))
        .filter(record::Column::Generation.eq(one.generation));
    let total = query.clone().count(db).await?;
    let bodies = bodies(db, query.order_by_asc(ordinal), page).await?;
    Ok(Page {
        bodies,
        total,
        generations: super::pages::generations_of(std::slice::from_ref(one)),
    })
}
