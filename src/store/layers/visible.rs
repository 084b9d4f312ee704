//! How a read finds the rows of a visible generation that may be layered:
//! which stored generation and ordinal each of its positions is
//! ([`ListRead`], [`Part`]), and the SQL conditions that name its rows
//! (the delta's, and the base's the layer does not hide) for the reads that
//! select by condition rather than by position (a query's JSON walk, a
//! count, a record by id, the first rows of each connection of a merged
//! list).
//!
//! A full generation reads as before: its own rows, its ordinals the
//! positions. A layered one's list filtered by a value its change did not
//! touch is its base's list of that value, unchanged.

use sea_orm::sea_query::Expr;
use sea_orm::{ColumnTrait, Condition, DbBackend};

use entity::record;

use super::{LayerMap, Source};
use crate::store::generations::Visible;

/// How one visible generation's list (whole, or of one filter value) is
/// read by position.
#[derive(Debug, Clone, Copy)]
pub enum ListRead<'a> {
    /// A full generation's rows, stored under this generation: its
    /// ordinals (filter ordinals) are the positions.
    Whole(i64),
    /// A layered generation: positions through `map`, base rows under
    /// `base`, delta rows under `delta`.
    Layered {
        /// The full generation its unchanged rows are stored under.
        base: i64,
        /// The layered generation, which stores the delta.
        delta: i64,
        /// The list's map (the whole list's or the value's).
        map: &'a LayerMap,
    },
}

/// The rows of one stored generation that a visible list reads, and how
/// their stored ordinals become the list's positions.
#[derive(Debug, Clone, Copy)]
pub struct Part<'a> {
    /// The stored generation.
    pub generation: i64,
    /// Which side of a layer the rows are, with its map; `None` for a full
    /// generation's rows, whose ordinals are the positions.
    layered: Option<(Source, &'a LayerMap)>,
}

impl Part<'_> {
    /// The condition naming this part's rows (with the list's filter
    /// value's own condition, the caller's): its generation's, less the
    /// base rows the layer hides (`column`, the position column, holds the
    /// ordinals `map` counts).
    pub fn rows(&self, backend: DbBackend, column: record::Column) -> Condition {
        let rows = Condition::all().add(record::Column::Generation.eq(self.generation));
        match self.layered {
            Some((Source::Base, map)) => {
                match not_hidden(backend, column_name(column), map.hidden()) {
                    Some(shown) => rows.add(shown),
                    None => rows,
                }
            }
            _ => rows,
        }
    }

    /// The list position of this part's row at the stored `ordinal` (the
    /// position column's); `None` when the layer hides that row.
    pub fn position(&self, ordinal: i64) -> Option<i64> {
        let Some((source, map)) = self.layered else {
            return Some(ordinal);
        };
        let ordinal = u32::try_from(ordinal).ok()?;
        let position = match source {
            Source::Base => map.base_position(ordinal),
            Source::Delta => map.delta_position(ordinal),
        };
        position.map(i64::from)
    }
}

impl<'a> ListRead<'a> {
    /// The stored generations the list's rows are in, each with how its
    /// ordinals map to positions: one for a full generation, the base and
    /// the delta for a layered one.
    pub fn parts(&self) -> Vec<Part<'a>> {
        match *self {
            ListRead::Whole(generation) => vec![Part {
                generation,
                layered: None,
            }],
            ListRead::Layered { base, delta, map } => vec![
                Part {
                    generation: base,
                    layered: Some((Source::Base, map)),
                },
                Part {
                    generation: delta,
                    layered: Some((Source::Delta, map)),
                },
            ],
        }
    }

    /// Each part with the last of its stored ordinals at a position up to
    /// `position` (0 for none): a walk that passed `position` continues
    /// past those ordinals, and the first `position` rows are those up to
    /// them (the hidden left out).
    pub fn parts_through(&self, position: i64) -> Vec<(Part<'a>, i64)> {
        let ListRead::Layered { map, .. } = *self else {
            return self
                .parts()
                .into_iter()
                .map(|part| (part, position))
                .collect();
        };
        let through = u32::try_from(position.max(0)).unwrap_or(u32::MAX);
        let runs = map.runs(0, through);
        self.parts()
            .into_iter()
            .map(|part| {
                let last = runs
                    .iter()
                    .filter(|run| part.layered.is_some_and(|(source, _)| source == run.source))
                    .map(|run| i64::from(run.start + run.length - 1))
                    .max()
                    .unwrap_or(0);
                (part, last)
            })
            .collect()
    }

    /// The stored generation and ordinal of the row at `position`; `None`
    /// beyond the list's end (unknown for a full generation, whose rows the
    /// caller's lookup then does not find).
    pub fn at(&self, position: i64) -> Option<(i64, i64)> {
        match *self {
            ListRead::Whole(generation) => Some((generation, position)),
            ListRead::Layered { base, delta, map } => {
                let (source, ordinal) = map.at(u32::try_from(position).ok()?)?;
                let generation = match source {
                    Source::Base => base,
                    Source::Delta => delta,
                };
                Some((generation, i64::from(ordinal)))
            }
        }
    }
}

impl Visible {
    /// The full generation this one's rows are read from: its own, or its
    /// layer's base.
    pub fn full_generation(&self) -> i64 {
        self.layer
            .as_ref()
            .map_or(self.generation, |layer| layer.base)
    }

    /// How this generation's list, filtered by `filter` when given, is read
    /// by position.
    pub fn list_read(&self, filter: Option<&str>) -> ListRead<'_> {
        let Some(layer) = &self.layer else {
            return ListRead::Whole(self.generation);
        };
        let map = match filter {
            None => &layer.map,
            Some(value) => match layer.of_value(value) {
                Some(map) => map,
                // A value the change did not touch: the base's list of it.
                None => return ListRead::Whole(layer.base),
            },
        };
        ListRead::Layered {
            base: layer.base,
            delta: self.generation,
            map,
        }
    }

    /// The condition naming this generation's rows (of any filter value):
    /// its own; for a layered one, the delta and the base rows the layer
    /// does not hide.
    pub fn rows(&self, backend: DbBackend) -> Condition {
        let column = record::Column::Ordinal;
        let parts = self
            .list_read(None)
            .parts()
            .iter()
            .fold(Condition::any(), |any, part| {
                any.add(part.rows(backend, column))
            });
        Condition::all()
            .add(record::Column::ConnectionId.eq(self.connection_id))
            .add(parts)
    }

    /// The condition naming the rows at positions `1..=through` of this
    /// generation's list (filtered by `filter` when given; the caller adds
    /// the value's own condition): an ordinal range, or for a layered list
    /// one range of the base's ordinals, less the hidden, and one of the
    /// delta's.
    pub fn first_rows(&self, backend: DbBackend, filter: Option<&str>, through: u64) -> Condition {
        let column = position_column(filter);
        let through = i64::try_from(through).unwrap_or(i64::MAX);
        let parts = self
            .list_read(filter)
            .parts_through(through)
            .into_iter()
            .fold(Condition::any(), |any, (part, last)| {
                any.add(part.rows(backend, column).add(column.lte(last)))
            });
        Condition::all()
            .add(record::Column::ConnectionId.eq(self.connection_id))
            .add(parts)
    }

    /// This generation's rows as raw SQL, one condition on the `record`
    /// alias `alias` per stored part: its own generation's, or a layer's
    /// base less the rows it hides and its delta. Their parameters are
    /// pushed onto `values`, numbered after those already there. A row's
    /// record id is in one part at most: a record the delta holds, its base
    /// copy is hidden.
    pub fn stored_parts(
        &self,
        backend: DbBackend,
        alias: &str,
        values: &mut Vec<sea_orm::Value>,
    ) -> Vec<String> {
        let Some(layer) = &self.layer else {
            values.push(self.generation.into());
            return vec![format!("{alias}.generation = ${}", values.len())];
        };
        values.push(layer.base.into());
        let mut base = format!("{alias}.generation = ${}", values.len());
        let hidden = layer.map.hidden();
        if !hidden.is_empty() {
            values.push(
                serde_json::to_string(hidden)
                    .unwrap_or_else(|_| "[]".to_owned())
                    .into(),
            );
            let listed = ordinals_listed(backend, &format!("${}", values.len()));
            base.push_str(&format!(" AND {alias}.ordinal NOT IN ({listed})"));
        }
        values.push(self.generation.into());
        vec![base, format!("{alias}.generation = ${}", values.len())]
    }
}

/// The column a list's positions are stored in: the filter ordinal when
/// the list's filter is given (its index holds only that value's rows),
/// else the ordinal.
pub fn position_column(filter: Option<&str>) -> record::Column {
    match filter {
        Some(_) => record::Column::FilterOrdinal,
        None => record::Column::Ordinal,
    }
}

/// A position column's name in SQL.
fn column_name(column: record::Column) -> &'static str {
    match column {
        record::Column::FilterOrdinal => "filter_ordinal",
        _ => "ordinal",
    }
}

/// `column` (an ordinal column of `record`) is none of `hidden`: one bound
/// parameter (a JSON array) whatever their number, looked up as a hashed
/// set; `None` when nothing is hidden.
fn not_hidden(backend: DbBackend, column: &str, hidden: &[u32]) -> Option<Expr> {
    if hidden.is_empty() {
        return None;
    }
    let listed = serde_json::to_string(hidden).unwrap_or_else(|_| "[]".to_owned());
    // sea-query's placeholder: numbered on PostgreSQL, `?` on SQLite.
    let parameter = if backend == DbBackend::Postgres {
        "$1"
    } else {
        "?"
    };
    let sql = format!("{column} NOT IN ({})", ordinals_listed(backend, parameter));
    Some(Expr::cust_with_values(sql, [listed]))
}

/// A subquery of the ordinals in the JSON array bound at `parameter`: how
/// a layer's hidden ordinals, however many, go into a statement as one
/// parameter.
pub(crate) fn ordinals_listed(backend: DbBackend, parameter: &str) -> String {
    match backend {
        DbBackend::Postgres => format!(
            "SELECT hidden.value::bigint FROM json_array_elements_text({parameter}::json) AS hidden"
        ),
        _ => format!("SELECT hidden.value FROM json_each({parameter}) AS hidden"),
    }
}
