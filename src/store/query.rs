//! Pages of a list narrowed by a `query` or ordered by an `orderBy`: the
//! parsed query becomes a condition on the stored JSON (`json` paths on
//! PostgreSQL, `json_extract` on SQLite), with every value bound, never
//! spliced into the SQL; text equality and `~` first search the stored text
//! for the value, so most rows are ruled out without parsing their JSON.
//!
//! Unlike [`pages`](super::pages), these read with `OFFSET` and count the
//! matching rows: a query can select any subset, so there are no stored
//! ordinals to range over. The caller counts once per snapshot and query
//! (published generations never change) and keeps the total.

use sea_orm::sea_query::{Expr, ExprTrait, NullOrdering, Order};
use sea_orm::{
    ColumnTrait, Condition, ConnectionTrait, DbBackend, PaginatorTrait, QueryFilter, QueryOrder,
    QuerySelect, Select,
};

use uuid::Uuid;

use entity::record;

use super::generations::Visible;
use super::layers::visible::{ListRead, Part, position_column};
use super::pages::{bodies, in_generations, in_list_order, of};
use crate::data::fields::{Field, Kind};
use crate::data::query::{Comparison, Operand, Operator, OrderBy, Query};
use crate::data::{DataType, Direction};
use crate::paging::PageRequest;

/// What a queried read selects: the visible generations, the list's
/// filter value and the query.
#[derive(Debug, Clone, Copy)]
pub struct Selection<'a> {
    /// The generations readers see, one per connection.
    pub visible: &'a [Visible],
    /// The data type listed.
    pub data_type: DataType,
    /// The list's own filter (`status`), if given.
    pub filter: Option<&'a str>,
    /// The query, if given.
    pub query: Option<&'a Query>,
}

/// How many records `selection` holds.
pub async fn count(
    db: &impl ConnectionTrait,
    selection: Selection<'_>,
) -> Result<u64, sea_orm::DbErr> {
    selected(db.get_database_backend(), selection)
        .count(db)
        .await
}

/// The JSON of the records on `page` of `selection`, ordered by `order_by`
/// (nulls last), then in the list's own order.
pub async fn page(
    db: &impl ConnectionTrait,
    selection: Selection<'_>,
    order_by: Option<&OrderBy>,
    page: PageRequest,
) -> Result<Vec<String>, sea_orm::DbErr> {
    let query = ordered_by(db.get_database_backend(), selection, order_by);
    bodies(db, query, page).await
}

/// The rows `selection` names ordered by `order_by` (nulls last), then in
/// the list's own order.
pub(super) fn ordered_by(
    backend: DbBackend,
    selection: Selection<'_>,
    order_by: Option<&OrderBy>,
) -> Select<record::Entity> {
    let mut query = selected(backend, selection);
    if let Some(order_by) = order_by {
        let order = match order_by.direction {
            Direction::Ascending => Order::Asc,
            Direction::Descending => Order::Desc,
        };
        query = query.order_by_with_nulls(
            Expr::cust(typed(backend, order_by.field)),
            order,
            NullOrdering::Last,
        );
    }
    match selection.visible {
        // One full generation's ordinals are the list's order.
        [one] if one.layer.is_none() => query.order_by_asc(record::Column::Ordinal),
        _ => in_list_order(query, selection.data_type),
    }
}

/// A record of a queried page, and where it sits in its connection's list.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Placed {
    /// The connection it came from.
    pub connection_id: Uuid,
    /// Its place in that connection's list (with the list's filter, among
    /// the records of the filter value).
    pub ordinal: i64,
    /// Its JSON, as the API shows it.
    pub body: String,
}

/// How a walk reads each connection's positions when its matches are known
/// to be dense: in windows of `width` positions (so the database reads one
/// bounded index range at a time, whatever its planner guesses of the
/// query's selectivity), giving up after `budget` positions.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Windows {
    /// Positions read per statement.
    pub width: i64,
    /// Positions read at most before the walk gives up.
    pub budget: i64,
}

/// The first `limit` records of `selection` in the list's own order after
/// `after` (aligned with `selection.visible`: per connection, the position
/// of the last of its records already passed, 0 for none; the position is
/// the ordinal, or with the list's filter the filter ordinal, through the
/// layer's map in a layered generation, whose parts are each walked). Each
/// connection yields its next `limit` matches by position, one index range
/// each (or, with `windows`, aligned like `after`, window by window), and
/// they are merged in the list's order; so the cost depends on the page
/// size and on how many records the query passes over, not on the depth.
/// `None` when a connection's windows reached their budget first.
pub async fn page_after(
    db: &impl ConnectionTrait,
    selection: Selection<'_>,
    after: &[i64],
    limit: u64,
    windows: Option<&[Windows]>,
) -> Result<Option<Vec<Placed>>, sea_orm::DbErr> {
    let mut candidates: Vec<Candidate> = Vec::new();
    for (index, (one, after)) in selection.visible.iter().zip(after).enumerate() {
        let read = one.list_read(selection.filter);
        // A layered list's parts are each walked whole from where the walk
        // stands (a dense match's windows are a full generation's).
        let window = match read {
            ListRead::Whole(_) => windows.and_then(|windows| windows.get(index)),
            ListRead::Layered { .. } => None,
        };
        for (part, part_after) in read.parts_through(*after) {
            let found = part_after_from(
                db,
                selection,
                one,
                part,
                (part_after, *after),
                limit,
                window,
            )
            .await?;
            let Some(found) = found else {
                return Ok(None);
            };
            candidates.extend(found);
        }
    }
    // The list's order: the sort key (byte order, as stored), then the
    // connection, then the record id.
    let descending = selection.data_type.spec().order == Direction::Descending;
    candidates.sort_by(|a, b| {
        let by_key = if descending {
            b.0.cmp(&a.0)
        } else {
            a.0.cmp(&b.0)
        };
        by_key
            .then_with(|| a.1.cmp(&b.1))
            .then_with(|| a.2.cmp(&b.2))
    });
    Ok(Some(
        candidates
            .into_iter()
            .take(usize::try_from(limit).unwrap_or(usize::MAX))
            .map(|(_, _, _, placed)| placed)
            .collect(),
    ))
}

/// A record of a walk, with what orders it in the list: its sort key, its
/// connection and its id.
type Candidate = (String, Uuid, String, Placed);

/// The first `limit` records of `selection` in one part of the generation
/// `one` past its stored ordinal `from` (the walk's position `after`), by
/// stored ordinal (with `window`, window by window): [`page_after`]'s read
/// of one connection. `None` when the windows' budget ran out first.
async fn part_after_from(
    db: &impl ConnectionTrait,
    selection: Selection<'_>,
    one: &Visible,
    part: Part<'_>,
    (mut from, after): (i64, i64),
    limit: u64,
    window: Option<&Windows>,
) -> Result<Option<Vec<Candidate>>, sea_orm::DbErr> {
    let backend = db.get_database_backend();
    let position = position_column(selection.filter);
    let mut candidates = Vec::new();
    let mut wanted = limit;
    loop {
        let mut rows = of(selection.data_type, selection.filter)
            .filter(record::Column::ConnectionId.eq(one.connection_id))
            .filter(part.rows(backend, position))
            .filter(position.gt(from));
        if let Some(window) = window {
            rows = rows.filter(position.lte(from.saturating_add(window.width)));
        }
        if let Some(query) = selection.query {
            rows = rows.filter(condition(backend, query));
        }
        let found: Vec<(i64, String, String, String)> = rows
            .order_by_asc(position)
            .limit(wanted)
            .select_only()
            .column(position)
            .column(record::Column::SortKey)
            .column(record::Column::RecordId)
            .column(record::Column::Body)
            .into_tuple()
            .all(db)
            .await?;
        wanted = wanted.saturating_sub(found.len() as u64);
        for (ordinal, sort_key, record_id, body) in found {
            // Hidden rows are not read, so every row has its position.
            let Some(at) = part.position(ordinal) else {
                continue;
            };
            let placed = Placed {
                connection_id: one.connection_id,
                ordinal: at,
                body,
            };
            candidates.push((sort_key, one.connection_id, record_id, placed));
        }
        let Some(window) = window else { break };
        from = from.saturating_add(window.width);
        if wanted == 0 || from >= one.record_count {
            break;
        }
        if from - after > window.budget {
            return Ok(None);
        }
    }
    Ok(Some(candidates))
}

/// The rows `selection` names.
fn selected(backend: DbBackend, selection: Selection<'_>) -> Select<record::Entity> {
    let rows = of(selection.data_type, selection.filter)
        .filter(in_generations(backend, selection.visible));
    match selection.query {
        Some(query) => rows.filter(condition(backend, query)),
        None => rows,
    }
}

/// `query` as a condition on the stored JSON.
pub(super) fn condition(backend: DbBackend, query: &Query) -> Condition {
    match query {
        Query::All(parts) => parts.iter().fold(Condition::all(), |all, part| {
            all.add(condition(backend, part))
        }),
        Query::Any(parts) => parts.iter().fold(Condition::any(), |any, part| {
            any.add(condition(backend, part))
        }),
        Query::Compare(comparison) => Condition::all().add(compare(backend, comparison)),
    }
}

/// One comparison, its value bound as the one parameter.
fn compare(backend: DbBackend, comparison: &Comparison) -> Expr {
    let postgres = backend == DbBackend::Postgres;
    let field = typed(backend, comparison.field);
    // sea-query's placeholder: numbered on PostgreSQL, `?` on SQLite.
    let parameter = if postgres { "$1" } else { "?" };
    let value = match (&comparison.value, postgres) {
        (Operand::Number(_), true) => format!("CAST({parameter} AS numeric)"),
        (Operand::Number(_), false) => format!("CAST({parameter} AS REAL)"),
        _ => parameter.to_owned(),
    };
    let sql = match (comparison.operator, postgres) {
        (Operator::Equal, _) => format!("{field} = {value}"),
        (Operator::NotEqual, true) => format!("{field} IS DISTINCT FROM {value}"),
        (Operator::NotEqual, false) => format!("{field} IS NOT {value}"),
        (Operator::Contains, true) => format!("strpos({field}, {value}) > 0"),
        (Operator::Contains, false) => format!("instr({field}, {value}) > 0"),
        (Operator::Greater, _) => format!("{field} > {value}"),
        (Operator::Less, _) => format!("{field} < {value}"),
        (Operator::GreaterOrEqual, _) => format!("{field} >= {value}"),
        (Operator::LessOrEqual, _) => format!("{field} <= {value}"),
    };
    let bound: sea_orm::Value = match &comparison.value {
        Operand::Text(text) | Operand::Number(text) => text.clone().into(),
        // PostgreSQL's `#>>` writes a JSON boolean as text; SQLite's
        // `json_extract` as 1 or 0.
        Operand::Boolean(flag) if postgres => flag.to_string().into(),
        Operand::Boolean(flag) => i32::from(*flag).into(),
    };
    let exact = Expr::cust_with_values(sql, [bound]);
    match written(comparison) {
        // The stored text must contain the value as JSON writes it: a
        // search of the text, far cheaper than parsing the JSON, rules out
        // most rows first (`AND` evaluates left to right).
        Some(needle) => {
            let search = if postgres {
                "strpos(body, $1) > 0"
            } else {
                "instr(body, ?) > 0"
            };
            Expr::cust_with_values(search, [needle]).and(exact)
        }
        None => exact,
    }
}

/// What the stored JSON text of a record matching `comparison` must
/// contain, when there is such a thing: for `=` on text the value as a
/// JSON string (quotes included), for `~` the value's escaped characters.
/// Bodies are written by serde_json, so the value is escaped the same way.
fn written(comparison: &Comparison) -> Option<String> {
    let Operand::Text(text) = &comparison.value else {
        return None;
    };
    let quoted = serde_json::to_string(text).ok()?;
    match comparison.operator {
        Operator::Equal => Some(quoted),
        Operator::Contains => Some(quoted[1..quoted.len() - 1].to_owned()),
        _ => None,
    }
}

/// The field's value in a row, as SQL of its kind: numbers as numbers,
/// everything else as the text JSON holds, by character code (dates and
/// date-times, written in one fixed format, order as text). Field names come from the schema
/// (letters and digits), never from the client's text.
fn typed(backend: DbBackend, field: &Field) -> String {
    let postgres = backend == DbBackend::Postgres;
    let extracted = if postgres {
        // `json`, not `jsonb`: only the path is wanted, and validating the
        // text costs a third less than building a `jsonb` of it.
        format!("(body::json #>> '{{{}}}')", field.path.join(","))
    } else {
        format!("json_extract(body, '$.{}')", field.path.join("."))
    };
    match (&field.kind, postgres) {
        (Kind::Number, true) => format!("CAST({extracted} AS numeric)"),
        (Kind::Number, false) => format!("CAST({extracted} AS REAL)"),
        // Text compares and orders by character code, as SQLite's does and
        // as the lists' own order does, not by the database's locale.
        (_, true) => format!("({extracted} COLLATE \"C\")"),
        (_, false) => extracted,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use sea_orm::{EntityTrait, QueryTrait};

    /// The SQL `text` becomes, with its bound values.
    fn sql(backend: DbBackend, text: &str) -> (String, Vec<sea_orm::Value>) {
        let query = crate::data::query::parse(DataType::INVOICES, text).expect("a valid query");
        let statement = record::Entity::find()
            .select_only()
            .column(record::Column::Body)
            .filter(condition(backend, &query))
            .build(backend);
        let values = statement.values.map_or(Vec::new(), |values| values.0);
        (statement.sql, values)
    }

    #[test]
    fn values_are_bound_and_fields_read_from_the_json() {
        assert_eq!(
            sql(
                DbBackend::Postgres,
                r#"amountDue>0&&{customerRef.id=6"1||note~a\b}"#
            ),
            (
                "SELECT \"record\".\"body\" FROM \"record\" WHERE \
                 (CAST((body::json #>> '{amountDue}') AS numeric) > CAST($1 AS numeric)) AND \
                 (((strpos(body, $2) > 0) AND \
                 (((body::json #>> '{customerRef,id}') COLLATE \"C\") = $3)) OR \
                 ((strpos(body, $4) > 0) AND \
                 (strpos(((body::json #>> '{note}') COLLATE \"C\"), $5) > 0)))"
                    .to_owned(),
                vec![
                    "0".into(),
                    // The stored text holds the value as JSON writes it.
                    r#""6\"1""#.into(),
                    r#"6"1"#.into(),
                    r"a\\b".into(),
                    r"a\b".into(),
                ]
            )
        );
        assert_eq!(
            sql(DbBackend::Sqlite, "status!=paid&&amountDue<=1.5"),
            (
                "SELECT \"record\".\"body\" FROM \"record\" WHERE \
                 (json_extract(body, '$.status') IS NOT ?) AND \
                 (CAST(json_extract(body, '$.amountDue') AS REAL) <= CAST(? AS REAL))"
                    .to_owned(),
                vec!["Paid".into(), "1.5".into()]
            )
        );
    }
}
