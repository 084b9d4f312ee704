//! A layered generation written from a resync's staged rows
//! (`docs/store-next.md` §2b, steps 1-6): what changed since the previous
//! generation ([`changes`]), the changed and new records' rows under the new
//! generation in delta order ([`write_delta`]), and the layer's maps kept
//! with it ([`keep`], read back by [`read`]); the engine's layered publish
//! calls them (`sync::engine::run`, behind `EngineConfig::layering`).

use std::collections::BTreeMap;

use sea_orm::sea_query::Expr;
use sea_orm::{
    ColumnTrait, ConnectionTrait, DbBackend, EntityTrait, QueryFilter, QuerySelect, Statement,
    TransactionSession, TransactionTrait,
};

use entity::record_generation;

use super::LayerMap;
use super::fences::ListKey;
use super::planned::{Changed, Planned};
use crate::data::DataType;
use crate::data::records::modified_date_suffix;
use crate::store::deletions::PLAN_FIXED;
use crate::store::lookups::values_row;
use crate::store::publish::{Publishing, same_but_for_its_date};
use crate::store::staging::Staging;

/// The first word of a [`Layer::packed`] layer.
const PACKED_VERSION: u32 = 1;

/// Delta rows one statement inserts (three parameters each).
const ROWS_PER_INSERT: usize = 1_000;

/// A layered generation's maps: the whole list's, and one per filter
/// value its change touched.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Layer {
    /// The full generation its unchanged rows are read from.
    pub base: i64,
    /// The whole list's positions.
    pub map: LayerMap,
    /// Each touched value's list ([`Planned::filtered`]); a value not here
    /// lists its base rows as they are.
    pub filtered: BTreeMap<String, LayerMap>,
}

impl Layer {
    /// The layer as bytes: the format's version, the whole list's map's
    /// length and bytes ([`LayerMap::packed`]), then for each value its
    /// length and bytes and its map's length and bytes; lengths are 4-byte
    /// little-endian integers.
    pub fn packed(&self) -> Vec<u8> {
        let mut bytes = PACKED_VERSION.to_le_bytes().to_vec();
        let mut part = |part: &[u8]| {
            bytes.extend_from_slice(&(part.len() as u32).to_le_bytes());
            bytes.extend_from_slice(part);
        };
        part(&self.map.packed());
        for (value, map) in &self.filtered {
            part(value.as_bytes());
            part(&map.packed());
        }
        bytes
    }

    /// A layer over `base` that [`Layer::packed`] wrote; `None` when
    /// `bytes` are not one.
    pub fn unpacked(base: i64, bytes: &[u8]) -> Option<Self> {
        let version = u32::from_le_bytes(bytes.get(..4)?.try_into().ok()?);
        if version != PACKED_VERSION {
            return None;
        }
        let mut at = 4;
        let mut parts = Vec::new();
        while at < bytes.len() {
            let length = u32::from_le_bytes(bytes.get(at..at + 4)?.try_into().ok()?) as usize;
            let part = bytes.get(at + 4..(at + 4).checked_add(length)?)?;
            at += 4 + length;
            parts.push(part);
        }
        let (whole, values) = parts.split_first()?;
        if !values.len().is_multiple_of(2) {
            return None;
        }
        let mut filtered = BTreeMap::new();
        for pair in values.chunks_exact(2) {
            let value = std::str::from_utf8(pair[0]).ok()?.to_owned();
            filtered.insert(value, LayerMap::unpacked(pair[1])?);
        }
        Some(Self {
            base,
            map: LayerMap::unpacked(whole)?,
            filtered,
        })
    }

    /// The map of the list filtered by `value`, when the change touched it.
    pub fn of_value(&self, value: &str) -> Option<&LayerMap> {
        self.filtered.get(value)
    }
}

/// Keeps `layer` with `generation`: it is layered over `layer.base`. An
/// error when `generation` has no number's row to keep it in.
pub async fn keep(
    db: &impl ConnectionTrait,
    generation: i64,
    layer: &Layer,
) -> Result<(), sea_orm::DbErr> {
    let kept = record_generation::Entity::update_many()
        .col_expr(record_generation::Column::Base, Expr::value(layer.base))
        .col_expr(
            record_generation::Column::Layer,
            Expr::value(layer.packed()),
        )
        .filter(record_generation::Column::Generation.eq(generation))
        .exec(db)
        .await?;
    // Published without its layer, the delta would read as a whole list.
    if kept.rows_affected != 1 {
        return Err(sea_orm::DbErr::RecordNotFound(format!(
            "generation {generation} is not numbered: its layer cannot be kept"
        )));
    }
    Ok(())
}

/// The layer `generation` was written with; `None` for a full generation.
/// An error when a layer is kept but does not read, or only half of it is.
pub async fn read(
    db: &impl ConnectionTrait,
    generation: i64,
) -> Result<Option<Layer>, sea_orm::DbErr> {
    let kept: Option<(Option<i64>, Option<Vec<u8>>)> =
        record_generation::Entity::find_by_id(generation)
            .select_only()
            .column(record_generation::Column::Base)
            .column(record_generation::Column::Layer)
            .into_tuple()
            .one(db)
            .await?;
    let unread =
        || sea_orm::DbErr::Custom(format!("generation {generation}'s layer does not read"));
    match kept {
        Some((Some(base), Some(bytes))) => {
            Layer::unpacked(base, &bytes).map(Some).ok_or_else(unread)
        }
        // A base without its maps, or maps without their base.
        Some((Some(_), None) | (None, Some(_))) => Err(unread()),
        _ => Ok(None),
    }
}

/// What a resync changed since the previous generation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Changes {
    /// The records staged that are not their previous copy but for its
    /// `modifiedDate` (or moved, or took another filter value), or are
    /// new, by id.
    pub changed: Vec<Changed>,
    /// The records of the previous generation the run did not stage, by id.
    pub dropped: Vec<String>,
}

/// What `staging` changed since `previous` (a full generation of the same
/// list), when it is at most `at_most` records changed or dropped; `None`
/// when more (the caller then publishes in full). Two walks of the staged
/// rows and the previous generation, each row looked up by its key in the
/// other (on PostgreSQL with the plan fixed as [`PLAN_FIXED`] says), each
/// stopping after `at_most + 1` finds: linear in the list, until the
/// staging walk collects them as it compares (`docs/store-next.md` §2c).
pub async fn changes(
    db: &impl TransactionTrait,
    staging: Staging,
    data_type: DataType,
    previous: i64,
    at_most: usize,
) -> Result<Option<Changes>, sea_orm::DbErr> {
    let txn = db.begin().await?;
    let backend = txn.get_database_backend();
    let fence = if backend == DbBackend::Postgres {
        txn.execute_unprepared(PLAN_FIXED).await?;
        " OFFSET 0"
    } else {
        ""
    };
    let limit = at_most + 1;
    let same = same_but_for_its_date(backend);
    // Its place and filter value too: both come from the body today, but a
    // record moved without a change to its JSON must move in the layer.
    let same_value = match backend {
        DbBackend::Postgres => "p.filter_value IS NOT DISTINCT FROM s.filter_value",
        _ => "p.filter_value IS s.filter_value",
    };
    let changed_sql = format!(
        "SELECT s.record_id, s.sort_key, s.filter_value FROM record_staging s \
         WHERE s.connection_id = $1 AND s.data_type = $2 AND s.generation = $3 \
           AND NOT EXISTS (SELECT 1 FROM record p WHERE p.generation = $4 \
                           AND p.record_id = s.record_id AND {same} \
                           AND p.sort_key = s.sort_key AND {same_value}{fence}) \
         ORDER BY s.record_id LIMIT {limit}"
    );
    let values: Vec<sea_orm::Value> = vec![
        staging.connection_id.into(),
        data_type.name().into(),
        staging.generation.into(),
        previous.into(),
    ];
    let rows = txn
        .query_all_raw(Statement::from_sql_and_values(
            backend,
            changed_sql,
            values.clone(),
        ))
        .await?;
    let mut changed = Vec::with_capacity(rows.len());
    for row in rows {
        changed.push(Changed {
            place: ListKey {
                record_id: row.try_get("", "record_id")?,
                sort_key: row.try_get("", "sort_key")?,
            },
            filter_value: row.try_get("", "filter_value")?,
        });
    }
    if changed.len() > at_most {
        txn.commit().await?;
        return Ok(None);
    }
    let dropped_sql = format!(
        "SELECT p.record_id FROM record p \
         WHERE p.connection_id = $1 AND p.data_type = $2 AND p.generation = $4 \
           AND NOT EXISTS (SELECT 1 FROM record_staging s WHERE s.generation = $3 \
                           AND s.record_id = p.record_id{fence}) \
         ORDER BY p.record_id LIMIT {}",
        limit - changed.len()
    );
    let rows = txn
        .query_all_raw(Statement::from_sql_and_values(backend, dropped_sql, values))
        .await?;
    txn.commit().await?;
    let dropped = rows
        .iter()
        .map(|row| row.try_get("", "record_id"))
        .collect::<Result<Vec<String>, _>>()?;
    Ok((changed.len() + dropped.len() <= at_most).then_some(Changes { changed, dropped }))
}

/// The staged records a layer readers see over the same base changed or
/// dropped (its delta's ids, and its base's ids at the ordinals it
/// hides): what a new layer on that base must hold again, though the
/// comparison with the base alone finds some unchanged (a record changed
/// back, or dropped and added again), so that each is compared with the
/// layer's copy ([`write_delta`]) and stamped when it differs. One probe of
/// the staging table per id, at most a layer's worth.
pub async fn staged_since_layer(
    db: &impl ConnectionTrait,
    staging: Staging,
    layer_generation: i64,
    layer: &Layer,
) -> Result<Vec<Changed>, sea_orm::DbErr> {
    let backend = db.get_database_backend();
    let hidden = serde_json::to_string(layer.map.hidden())
        .map_err(|error| sea_orm::DbErr::Custom(error.to_string()))?;
    let listed = super::visible::ordinals_listed(backend, "$4");
    let ids = format!(
        "SELECT l.record_id FROM record l WHERE l.generation = $2 \
         UNION SELECT b.record_id FROM record b WHERE b.generation = $3 AND b.ordinal IN ({listed})"
    );
    let sql = match backend {
        // Each id its own probe of the staging table's key (`OFFSET 0`).
        DbBackend::Postgres => format!(
            "SELECT s.record_id, s.sort_key, s.filter_value FROM ({ids}) AS ids, \
             LATERAL (SELECT * FROM record_staging s WHERE s.generation = $1 \
                      AND s.record_id = ids.record_id OFFSET 0) s"
        ),
        _ => format!(
            "WITH ids(record_id) AS ({ids}) \
             SELECT s.record_id, s.sort_key, s.filter_value FROM ids \
             JOIN record_staging s ON s.generation = $1 AND s.record_id = ids.record_id"
        ),
    };
    let values: Vec<sea_orm::Value> = vec![
        staging.generation.into(),
        layer_generation.into(),
        layer.base.into(),
        hidden.into(),
    ];
    let rows = db
        .query_all_raw(Statement::from_sql_and_values(backend, sql, values))
        .await?;
    rows.iter()
        .map(|row| {
            Ok(Changed {
                place: ListKey {
                    record_id: row.try_get("", "record_id")?,
                    sort_key: row.try_get("", "sort_key")?,
                },
                filter_value: row.try_get("", "filter_value")?,
            })
        })
        .collect()
}

/// Writes `planned`'s delta under `list.generation`, from the rows it
/// staged: each record at its delta ordinal and filter ordinal, stamped
/// `list.published` (every delta record changed). Returns the rows
/// written; an error when a delta record was not staged.
pub async fn write_delta(
    db: &impl ConnectionTrait,
    list: Publishing,
    planned: &Planned,
) -> Result<u64, sea_orm::DbErr> {
    let backend = db.get_database_backend();
    let filter_ordinals = planned.delta_filter_ordinals();
    let numbered: Vec<(i64, &Changed, Option<u32>)> = (1i64..)
        .zip(&planned.delta)
        .zip(filter_ordinals)
        .map(|((ordinal, record), filter_ordinal)| (ordinal, record, filter_ordinal))
        .collect();
    // Over a layer on the same base, a record that layer changed and this
    // sync did not keeps that layer's copy (and its `modifiedDate`).
    let body = match list.previous_layer {
        Some(_) => format!(
            "COALESCE((SELECT p.body FROM record p WHERE p.generation = $5 \
                       AND p.record_id = s.record_id AND {}), s.body || $4)",
            same_but_for_its_date(backend)
        ),
        None => "s.body || $4".to_owned(),
    };
    let mut written = 0;
    for batch in numbered.chunks(ROWS_PER_INSERT) {
        let mut values: Vec<sea_orm::Value> = vec![
            list.connection_id.into(),
            list.data_type.name().into(),
            list.generation.into(),
            modified_date_suffix(list.published).into(),
        ];
        if let Some(layer) = list.previous_layer {
            values.push(layer.into());
        }
        let rows: Vec<String> = batch
            .iter()
            .map(|(ordinal, record, filter_ordinal)| {
                values_row(
                    &mut values,
                    [
                        record.place.record_id.as_str().into(),
                        (*ordinal).into(),
                        filter_ordinal.map(i64::from).into(),
                    ],
                )
            })
            .collect();
        let rows = rows.join(", ");
        let insert = format!(
            "INSERT INTO record (connection_id, data_type, generation, record_id, \
             company_id, sort_key, filter_value, body, ordinal, filter_ordinal) \
             SELECT s.connection_id, s.data_type, s.generation, s.record_id, s.company_id, \
                    s.sort_key, s.filter_value, {body}, w.ordinal, w.filter_ordinal"
        );
        let sql = match backend {
            // Each staged row its own probe of the staging table's key
            // (`OFFSET 0`), whatever its statistics say.
            DbBackend::Postgres => format!(
                "{insert} FROM (VALUES {rows}) AS w(record_id, ordinal, filter_ordinal), \
                 LATERAL (SELECT * FROM record_staging s WHERE s.generation = $3 \
                          AND s.record_id = w.record_id OFFSET 0) s \
                 WHERE s.connection_id = $1 AND s.data_type = $2"
            ),
            _ => format!(
                "WITH w(record_id, ordinal, filter_ordinal) AS (VALUES {rows}) \
                 {insert} FROM w JOIN record_staging s \
                   ON s.generation = $3 AND s.record_id = w.record_id \
                 WHERE s.connection_id = $1 AND s.data_type = $2"
            ),
        };
        let inserted = db
            .execute_raw(Statement::from_sql_and_values(backend, sql, values))
            .await?
            .rows_affected();
        if inserted != batch.len() as u64 {
            return Err(sea_orm::DbErr::Custom(format!(
                "generation {}: {inserted} of {} delta records were staged",
                list.generation,
                batch.len()
            )));
        }
        written += inserted;
    }
    Ok(written)
}
