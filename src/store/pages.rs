//! Reading a page of a company's list of one data type: the rows' JSON and
//! the total after the filter, by stored ordinals, so neither depends on
//! how deep the page is.

use futures_util::TryStreamExt;
use sea_orm::{
    ColumnTrait, Condition, ConnectionTrait, DbBackend, EntityTrait, QueryFilter, QueryOrder,
    QuerySelect, Select, Statement, StreamTrait,
};
use uuid::Uuid;

use entity::record;

use super::generations::Visible;
use super::layers::{self, visible::ListRead};
use crate::data::{DataType, Direction};
use crate::paging::PageRequest;

/// One page of a list.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Page {
    /// The records on the page, as the API shows them (JSON), in list order.
    pub bodies: Vec<String>,
    /// How many records the whole list holds, after the filter.
    pub total: u64,
    /// The generations it was read from (connection and generation), in
    /// the order the read took them (connection order, or a pinned
    /// snapshot's): the snapshot its links pin.
    pub generations: Vec<(Uuid, i64)>,
}

/// The ordinals `(after, through]` that make up `page` of one list.
fn ordinal_range(page: PageRequest) -> (u64, u64) {
    let after = page.offset();
    (after, after.saturating_add(page.limit()))
}

/// A page of a company's list whose records come from one connection, in
/// one statement (a statement reads one snapshot, so no transaction is
/// needed): the visible generation, the total and the page's rows together.
/// `None` when the company has no visible records of the data type or
/// several connections' worth; the caller then takes [`page_of_several`].
/// With `pinned` (a connection and a generation a client's links carry),
/// only that connection's list is read, and only while that generation is
/// still the current one (`None` otherwise).
pub async fn page_of_one<C>(
    db: &C,
    client_id: Uuid,
    company_id: Uuid,
    data_type: DataType,
    filter: Option<&str>,
    pinned: Option<(Uuid, i64)>,
    page: PageRequest,
) -> Result<Option<Page>, sea_orm::DbErr>
where
    C: ConnectionTrait + StreamTrait,
{
    let statement = page_of_one_statement(
        ConnectionTrait::get_database_backend(db),
        client_id,
        company_id,
        data_type,
        filter,
        pinned,
        page,
    );
    // Row by row: a page of 5,000 records is 5 MB of JSON, which would
    // otherwise be held twice (the rows as received, then their bodies).
    let mut rows = std::pin::pin!(db.stream_raw(statement).await?);
    let Some(first) = rows.try_next().await? else {
        return Ok(None);
    };
    let connections: i64 = first.try_get("", "visible_connections")?;
    if connections != 1 {
        return Ok(None);
    }
    // A layered generation is read through its layer, in a transaction
    // (`page_of_generation`): its own rows are only its delta.
    if first.try_get::<bool>("", "layered")? {
        return Ok(None);
    }
    let total: Option<i64> = first.try_get("", "visible_total")?;
    let generations = vec![(
        first.try_get("", "connection_id")?,
        first.try_get("", "generation")?,
    )];
    let mut bodies = Vec::with_capacity(usize::try_from(page.limit()).unwrap_or(0));
    // The one row of an empty page carries the visible generation only.
    if let Some(body) = first.try_get::<Option<String>>("", "body")? {
        bodies.push(body);
    }
    drop(first);
    while let Some(row) = rows.try_next().await? {
        if let Some(body) = row.try_get::<Option<String>>("", "body")? {
            bodies.push(body);
        }
    }
    Ok(Some(Page {
        bodies,
        total: total.unwrap_or(0) as u64,
        generations,
    }))
}

/// The one statement [`page_of_one`] runs (public so that tests can read
/// the database's plan for it).
pub fn page_of_one_statement(
    backend: DbBackend,
    client_id: Uuid,
    company_id: Uuid,
    data_type: DataType,
    filter: Option<&str>,
    pinned: Option<(Uuid, i64)>,
    page: PageRequest,
) -> Statement {
    let (after, through) = ordinal_range(page);
    // (the total, which rows of the generation, their order); the total is
    // computed once per visible connection, in `v`, not once per row.
    let (total, join, order) = match filter {
        None => (
            "dg.record_count",
            "r.ordinal > $4 AND r.ordinal <= $5",
            "r.ordinal",
        ),
        // `ORDER BY … DESC LIMIT 1` rather than `max()`: the planner turns
        // `max()` into this index descent only when its statistics are
        // fresh, and right after a sync's bulk insert they are not.
        Some(_) => (
            "(SELECT x.filter_ordinal FROM record x WHERE x.connection_id = dg.connection_id \
              AND x.data_type = $3 AND x.generation = dg.generation AND x.filter_value = $6 \
              ORDER BY x.filter_ordinal DESC LIMIT 1)",
            "r.filter_value = $6 AND r.filter_ordinal > $4 AND r.filter_ordinal <= $5",
            "r.filter_ordinal",
        ),
    };
    let rows = format!(
        "(SELECT count(*) FROM v) = 1 AND NOT v.layered AND r.connection_id = v.connection_id \
         AND r.data_type = $3 AND r.generation = v.generation AND {join}"
    );
    // On PostgreSQL the page's rows are a subquery ordered by the ordinal:
    // only the index that ends in that ordinal yields them in order without
    // a sort, so the planner takes it even when its statistics predate the
    // sync and it believes the list empty (as a plain join, it then judged
    // every index on the connection alike and could scan a million rows to
    // keep a hundred). SQLite has no LATERAL, and no statistics it does not
    // gather itself; it matches the most constrained index.
    let (joined, position) = match backend {
        DbBackend::Postgres => (
            format!(
                "LEFT JOIN LATERAL (SELECT r.body, {order} AS position FROM record r \
                                    WHERE {rows} ORDER BY {order}) r ON true"
            ),
            "r.position",
        ),
        _ => (format!("LEFT JOIN record r ON {rows}"), order),
    };
    let mut values: Vec<sea_orm::Value> = vec![
        company_id.into(),
        client_id.into(),
        data_type.name().into(),
        (after as i64).into(),
        (through as i64).into(),
    ];
    if let Some(filter) = filter {
        values.push(filter.into());
    }
    let pinned_only = match pinned {
        None => String::new(),
        Some((connection_id, generation)) => {
            values.push(connection_id.into());
            values.push(generation.into());
            format!(
                " AND dg.connection_id = ${} AND dg.generation = ${}",
                values.len() - 1,
                values.len()
            )
        }
    };
    let sql = format!(
        "WITH v AS (SELECT dg.connection_id, dg.generation, {total} AS visible_total, \
                           EXISTS (SELECT 1 FROM record_generation rg \
                                   WHERE rg.generation = dg.generation \
                                     AND rg.base IS NOT NULL) AS layered \
                    FROM data_generation dg \
                    JOIN connection c ON c.id = dg.connection_id \
                    JOIN company co ON co.id = c.company_id \
                    WHERE c.company_id = $1 AND co.client_id = $2 AND dg.data_type = $3{pinned_only}) \
         SELECT (SELECT count(*) FROM v) AS visible_connections, v.visible_total, \
                v.layered, v.connection_id, v.generation, r.body \
         FROM v {joined} \
         ORDER BY v.connection_id, {position}"
    );
    Statement::from_sql_and_values(backend, sql, values)
}

/// A page of a company's list merged from several connections, inside the
/// caller's snapshot. The total is each generation's count (or, filtered,
/// its highest filter ordinal). Connections are merged by their common
/// order: the first `offset + limit` rows of the merge come from the first
/// `offset + limit` of each connection, so each contributes a prefix,
/// bounded by the depth.
pub async fn page_of_several(
    db: &impl ConnectionTrait,
    visible: &[Visible],
    data_type: DataType,
    filter: Option<&str>,
    page: PageRequest,
) -> Result<Page, sea_orm::DbErr> {
    let mut total = 0;
    for one in visible {
        total += match filter {
            None => one.record_count as u64,
            Some(value) => filtered_count(db, one, data_type, value).await?,
        };
    }
    let (_, through) = ordinal_range(page);
    let backend = db.get_database_backend();
    let prefixes = visible.iter().fold(Condition::any(), |any, one| {
        any.add(one.first_rows(backend, filter, through))
    });
    let query = in_list_order(of(data_type, filter).filter(prefixes), data_type);
    let bodies = bodies(db, query, page).await?;
    Ok(Page {
        bodies,
        total,
        generations: generations_of(visible),
    })
}

/// A page of one connection's generation (pinned by a client's links, so
/// not necessarily the current one), by its ordinals, inside the caller's
/// snapshot: the same rows and cost as [`page_of_one`].
pub async fn page_of_generation(
    db: &impl ConnectionTrait,
    one: &Visible,
    data_type: DataType,
    filter: Option<&str>,
    page: PageRequest,
) -> Result<Page, sea_orm::DbErr> {
    let (after, through) = ordinal_range(page);
    let total = match filter {
        None => one.record_count as u64,
        Some(value) => filtered_count(db, one, data_type, value).await?,
    };
    let generation = match one.list_read(filter) {
        ListRead::Whole(generation) => generation,
        ListRead::Layered { base, delta, map } => {
            let bodies = layers::pages::bodies(
                db,
                (base, delta),
                filter,
                map,
                u32::try_from(after).unwrap_or(u32::MAX),
                u32::try_from(page.limit()).unwrap_or(u32::MAX),
            )
            .await?;
            return Ok(Page {
                bodies,
                total,
                generations: generations_of(std::slice::from_ref(one)),
            });
        }
    };
    let ordinal = match filter {
        None => record::Column::Ordinal,
        Some(_) => record::Column::FilterOrdinal,
    };
    let bodies = of(data_type, filter)
        .filter(record::Column::ConnectionId.eq(one.connection_id))
        .filter(record::Column::Generation.eq(generation))
        .filter(ordinal.gt(after as i64))
        .filter(ordinal.lte(through as i64))
        .order_by_asc(ordinal)
        .select_only()
        .column(record::Column::Body)
        .into_tuple()
        .all(db)
        .await?;
    Ok(Page {
        bodies,
        total,
        generations: generations_of(std::slice::from_ref(one)),
    })
}

/// The (connection, generation) pairs of `visible`.
pub fn generations_of(visible: &[Visible]) -> Vec<(Uuid, i64)> {
    visible
        .iter()
        .map(|one| (one.connection_id, one.generation))
        .collect()
}

/// The rows of the `visible` generations (one per connection; a layered
/// one's through its layer, [`Visible::rows`]).
pub(super) fn in_generations(backend: DbBackend, visible: &[Visible]) -> Condition {
    visible
        .iter()
        .fold(Condition::any(), |any, one| any.add(one.rows(backend)))
}

/// `query` in the list's order across connections: the sort key in the data
/// type's direction, then the connection, then the record id.
pub(super) fn in_list_order(
    query: Select<record::Entity>,
    data_type: DataType,
) -> Select<record::Entity> {
    let query = match data_type.spec().order {
        Direction::Ascending => query.order_by_asc(record::Column::SortKey),
        Direction::Descending => query.order_by_desc(record::Column::SortKey),
    };
    query
        .order_by_asc(record::Column::ConnectionId)
        .order_by_asc(record::Column::RecordId)
}

/// The JSON of the rows on `page` of `query`, by `OFFSET`.
pub(super) async fn bodies(
    db: &impl ConnectionTrait,
    query: Select<record::Entity>,
    page: PageRequest,
) -> Result<Vec<String>, sea_orm::DbErr> {
    query
        .offset(page.offset())
        .limit(page.limit())
        .select_only()
        .column(record::Column::Body)
        .into_tuple()
        .all(db)
        .await
}

/// The records of `data_type`, of one filter value when given.
pub(super) fn of(data_type: DataType, filter: Option<&str>) -> Select<record::Entity> {
    let query = record::Entity::find().filter(record::Column::DataType.eq(data_type.name()));
    match filter {
        Some(value) => query.filter(record::Column::FilterValue.eq(value)),
        None => query,
    }
}

/// How many of one connection's visible records have the filter value: the
/// highest filter ordinal, one index lookup (a layered list's map's count
/// when its change touched the value).
async fn filtered_count(
    db: &impl ConnectionTrait,
    one: &Visible,
    data_type: DataType,
    value: &str,
) -> Result<u64, sea_orm::DbErr> {
    let generation = match one.list_read(Some(value)) {
        ListRead::Whole(generation) => generation,
        ListRead::Layered { map, .. } => return Ok(u64::from(map.count())),
    };
    let highest: Option<Option<i64>> = of(data_type, Some(value))
        .select_only()
        .column(record::Column::FilterOrdinal)
        .filter(record::Column::ConnectionId.eq(one.connection_id))
        .filter(record::Column::Generation.eq(generation))
        .order_by_desc(record::Column::FilterOrdinal)
        .limit(1)
        .into_tuple()
        .one(db)
        .await?;
    Ok(highest.flatten().unwrap_or(0) as u64)
}
