//! The keys of a published generation: for each field its data type
//! declares (`Spec::keys`: references, dates, amounts, currency, status,
//! `modifiedDate`), its values in value order with the ordinal of the record
//! holding each, in `record_key` blocks ([`blocks`]). A query made only of
//! comparisons on declared fields then finds its matches, in the list's
//! order and exactly counted, from the blocks whose first and last values
//! admit them (one or two blocks for `customerRef.id=…`, those of a value
//! range for `issueDate>…`; `&&`, `||` and `!=` as set operations) without
//! reading a record, where a query on other fields reads every record's
//! JSON once per snapshot. One comparison is also counted without listing
//! its matches ([`count`]: the blocks inside it by their sizes), which is
//! how a wide match's first page is answered by walking the list instead;
//! and an `orderBy` of a declared field is the field's keys read in value
//! order ([`ordered`]).
//!
//! Keys are built as the generation is published (its rows numbered, not
//! yet visible), from the stored JSON, in the transaction that publishes
//! it, and go with the generation's rows; a first sync on PostgreSQL builds
//! them from the values gathered as its rows were staged instead
//! ([`StagedKeys`]), and a resync on PostgreSQL with few changes carries
//! the previous generation's over, adding its changes ([`carry`]). A generation published before
//! keys existed, or a field added to a data type's keys since, is read as
//! before: `record_generation.keyed_fields` names what was built.

pub(crate) mod blocks;
mod carried;
mod gathered;
pub mod layered;
mod order;
mod sets;
mod staged;
mod values;

use futures_util::TryStreamExt;
use sea_orm::{
    ColumnTrait, ConnectionTrait, EntityTrait, QueryFilter, QuerySelect, Set, StreamTrait,
};

use entity::{record, record_generation, record_key};

use crate::data::DataType;
use crate::data::fields::{self, Field};
use crate::data::query::{Comparison, Operand, Operator, Query};
pub use carried::carry;
use gathered::Gathered;
pub use order::ordered;
use sets::Ordinals;
pub use staged::{Gatherer, Lanes, Ranked, StagedKeys};

/// Key blocks written per statement (seven parameters each, about 5 kB).
const INSERT_BATCH: usize = 200;

/// The declared fields of `data_type` as its list's queryable fields.
fn declared(data_type: DataType) -> Vec<&'static Field> {
    data_type
        .spec()
        .keys
        .iter()
        .filter_map(|name| fields::named(data_type, name))
        .collect()
}

/// Builds the keys of `generation` (a list of `data_type`, numbered) and
/// records which fields have them. A field with a value no key can hold
/// (a number that is not a decimal, say) gets none, and its queries read
/// the records as before. Returns how many key blocks were written.
pub async fn build<C>(db: &C, data_type: DataType, generation: i64) -> Result<u64, sea_orm::DbErr>
where
    C: ConnectionTrait + StreamTrait,
{
    let fields = declared(data_type);
    let mut gathered: Vec<Gathered> = fields
        .iter()
        .map(|field| Gathered::new(&field.kind))
        .collect();
    let mut rows = record::Entity::find()
        .select_only()
        .column(record::Column::Ordinal)
        .column(record::Column::Body)
        .filter(record::Column::Generation.eq(generation))
        .into_tuple::<(i64, String)>()
        .stream(db)
        .await?;
    while let Some((ordinal, body)) = rows.try_next().await? {
        let (Ok(ordinal), Ok(found)) = (u32::try_from(ordinal), values::extract(&body, &fields))
        else {
            // Beyond what a key holds, or not the record's shape: the list
            // is read as before.
            gathered.iter_mut().for_each(Gathered::refuse);
            continue;
        };
        for (field, value) in gathered.iter_mut().zip(found) {
            if let Some(value) = value {
                field.add(ordinal, &value);
            }
        }
    }
    drop(rows);
    write(db, generation, fields.into_iter().zip(gathered).collect()).await
}

/// Builds the keys of `generation` from the values gathered as its rows
/// were staged ([`StagedKeys::ranked`]), as [`build`] does from the stored
/// JSON, without reading it back.
pub async fn build_ranked<C>(db: &C, generation: i64, ranked: Ranked) -> Result<u64, sea_orm::DbErr>
where
    C: ConnectionTrait,
{
    write(db, generation, ranked.fields).await
}

/// Writes each field's keys in blocks and records which fields have them;
/// how many blocks.
async fn write<C>(
    db: &C,
    generation: i64,
    fields: Vec<(&'static Field, Gathered)>,
) -> Result<u64, sea_orm::DbErr>
where
    C: ConnectionTrait,
{
    let mut keyed: Vec<&str> = Vec::new();
    let mut written = 0;
    for (field, gathered) in fields {
        let Some(cut) = gathered
            .sorted()
            .and_then(|sorted| blocks::cut(sorted.runs()))
        else {
            continue;
        };
        written += write_field(db, generation, field, cut).await?;
        keyed.push(&field.name);
    }
    record_keyed(db, generation, &keyed).await?;
    Ok(written)
}

/// Writes one field's blocks of `generation`'s keys; how many.
async fn write_field<C>(
    db: &C,
    generation: i64,
    field: &Field,
    cut: Vec<blocks::Block>,
) -> Result<u64, sea_orm::DbErr>
where
    C: ConnectionTrait,
{
    let mut written = 0;
    let mut batch = Vec::with_capacity(INSERT_BATCH.min(cut.len()));
    for (number, block) in cut.into_iter().enumerate() {
        batch.push(record_key::ActiveModel {
            generation: Set(generation),
            field: Set(field.name.clone()),
            block: Set(i32::try_from(number).unwrap_or(i32::MAX)),
            first_value: Set(block.first_value),
            last_value: Set(block.last_value),
            size: Set(i32::try_from(block.size).unwrap_or(i32::MAX)),
            entries: Set(block.entries),
        });
        if batch.len() == INSERT_BATCH {
            written += insert(db, std::mem::take(&mut batch)).await?;
        }
    }
    written += insert(db, batch).await?;
    Ok(written)
}

/// Records that `generation`'s keys are those of the fields `keyed`.
async fn record_keyed<C>(db: &C, generation: i64, keyed: &[&str]) -> Result<(), sea_orm::DbErr>
where
    C: ConnectionTrait,
{
    record_generation::Entity::update_many()
        .col_expr(
            record_generation::Column::KeyedFields,
            sea_orm::sea_query::Expr::value(keyed.join(",")),
        )
        .filter(record_generation::Column::Generation.eq(generation))
        .exec(db)
        .await?;
    Ok(())
}

/// Writes `rows` in one statement; how many.
async fn insert(
    db: &impl ConnectionTrait,
    rows: Vec<record_key::ActiveModel>,
) -> Result<u64, sea_orm::DbErr> {
    let count = rows.len() as u64;
    if count > 0 {
        record_key::Entity::insert_many(rows).exec(db).await?;
    }
    Ok(count)
}

/// The ordinals of the records of `generation` (a list of `data_type` of
/// `count` records) that `query` matches, ascending, read from its keys;
/// `None` when the query compares a field without keys in that generation
/// (or with `~`), which is then read from the records.
pub async fn matching(
    db: &impl ConnectionTrait,
    data_type: DataType,
    generation: i64,
    count: i64,
    query: &Query,
) -> Result<Option<Vec<i64>>, sea_orm::DbErr> {
    let mut leaves = Vec::new();
    collect(query, &mut leaves);
    let names: Vec<&str> = leaves.iter().map(|leaf| leaf.field.name.as_str()).collect();
    let Some(count) = keyed(db, data_type, generation, count, &names).await? else {
        return Ok(None);
    };
    let mut sets = Vec::with_capacity(leaves.len());
    for comparison in &leaves {
        let Some(compared) = Compared::new(comparison) else {
            return Ok(None);
        };
        sets.push(compared.ordinals(db, generation, count).await?);
    }
    let mut sets = sets.into_iter();
    let matched = combine(query, &mut sets);
    Ok(Some(matched.into_iter().map(i64::from).collect()))
}

/// How many records of `generation` (a list of `data_type` of `count`
/// records) `query` matches, counted from its keys without listing them,
/// when `query` is one comparison on a field with keys: the blocks wholly
/// inside the comparison by their stored sizes, and only the one or two
/// blocks at its edges read. `None` otherwise (the matches are then listed,
/// [`matching`], or read from the records).
pub async fn count(
    db: &impl ConnectionTrait,
    data_type: DataType,
    generation: i64,
    count: i64,
    query: &Query,
) -> Result<Option<u64>, sea_orm::DbErr> {
    let Query::Compare(comparison) = query else {
        return Ok(None);
    };
    // What cannot be counted from keys is known before the generation's
    // keyed fields are read.
    let Some(compared) = Compared::new(comparison) else {
        return Ok(None);
    };
    let field = [comparison.field.name.as_str()];
    let Some(count) = keyed(db, data_type, generation, count, &field).await? else {
        return Ok(None);
    };
    let blocks: Vec<(i32, String, String, i32)> = compared
        .blocks(generation)
        .column(record_key::Column::Block)
        .column(record_key::Column::FirstValue)
        .column(record_key::Column::LastValue)
        .column(record_key::Column::Size)
        .into_tuple()
        .all(db)
        .await?;
    let mut counted: u64 = 0;
    let mut edges = Vec::new();
    for (block, first_value, last_value, size) in blocks {
        // Every comparison admits a contiguous run of values: a block
        // whose first and last values it admits holds nothing else.
        if compared.admits(&first_value) && compared.admits(&last_value) {
            counted += u64::try_from(size).unwrap_or(0);
        } else {
            edges.push(block);
        }
    }
    if !edges.is_empty() {
        let packed: Vec<Vec<u8>> = compared
            .blocks(generation)
            .column(record_key::Column::Entries)
            .filter(record_key::Column::Block.is_in(edges))
            .into_tuple()
            .all(db)
            .await?;
        for entries in &packed {
            counted += unpacked(entries)?
                .holding(|value| compared.admits(value))
                .count() as u64;
        }
    }
    Ok(Some(match comparison.operator {
        // A record without the field matches `!=`, as on the records.
        Operator::NotEqual => u64::from(count).saturating_sub(counted),
        _ => counted,
    }))
}

/// `count` as a key's ordinal bound, when every field of `names` is declared
/// by `data_type` and has keys in `generation`; `None` when the records must
/// be read instead.
async fn keyed(
    db: &impl ConnectionTrait,
    data_type: DataType,
    generation: i64,
    count: i64,
    names: &[&str],
) -> Result<Option<u32>, sea_orm::DbErr> {
    let spec = data_type.spec();
    if names.iter().any(|name| !spec.keys.contains(name)) {
        return Ok(None);
    }
    let Ok(count) = u32::try_from(count) else {
        return Ok(None);
    };
    let keyed: Option<Option<String>> = record_generation::Entity::find_by_id(generation)
        .select_only()
        .column(record_generation::Column::KeyedFields)
        .into_tuple()
        .one(db)
        .await?;
    let Some(Some(keyed)) = keyed else {
        return Ok(None);
    };
    let keyed: Vec<&str> = keyed.split(',').collect();
    Ok(names
        .iter()
        .all(|name| keyed.contains(name))
        .then_some(count))
}

/// `query`'s comparisons, depth first.
fn collect<'q>(query: &'q Query, into: &mut Vec<&'q Comparison>) {
    match query {
        Query::All(parts) | Query::Any(parts) => {
            for part in parts {
                collect(part, into);
            }
        }
        Query::Compare(comparison) => into.push(comparison),
    }
}

/// `query` evaluated over its comparisons' sets, taken in [`collect`]'s order.
fn combine(query: &Query, leaves: &mut impl Iterator<Item = Ordinals>) -> Ordinals {
    match query {
        Query::All(parts) => {
            sets::intersect(parts.iter().map(|part| combine(part, leaves)).collect())
        }
        Query::Any(parts) => sets::unite(parts.iter().map(|part| combine(part, leaves)).collect()),
        Query::Compare(_) => leaves.next().unwrap_or_default(),
    }
}

/// One comparison on a field with keys, its value written as keys are.
struct Compared<'c> {
    comparison: &'c Comparison,
    key: String,
}

impl<'c> Compared<'c> {
    /// `None` when the value has no key (a number beyond what a key
    /// writes) or the comparison is `~`.
    fn new(comparison: &'c Comparison) -> Option<Self> {
        if comparison.operator == Operator::Contains {
            return None;
        }
        let key = match &comparison.value {
            Operand::Text(text) | Operand::Number(text) => {
                values::encode(&comparison.field.kind, text.clone())?
            }
            Operand::Boolean(flag) => flag.to_string(),
        };
        Some(Self { comparison, key })
    }

    /// Whether a record holding `value` (as keys write it) is compared
    /// true; `!=` is answered as the complement of `=`, so it admits what
    /// `=` does.
    fn admits(&self, value: &str) -> bool {
        let key = self.key.as_str();
        match self.comparison.operator {
            Operator::Equal | Operator::NotEqual => value == key,
            Operator::Greater => value > key,
            Operator::GreaterOrEqual => value >= key,
            Operator::Less => value < key,
            Operator::LessOrEqual => value <= key,
            Operator::Contains => false,
        }
    }

    /// The field's blocks whose values may be admitted (their first and
    /// last values bound every value between), nothing selected yet.
    fn blocks(&self, generation: i64) -> sea_orm::Select<record_key::Entity> {
        let (first, last) = (
            record_key::Column::FirstValue,
            record_key::Column::LastValue,
        );
        let key = self.key.as_str();
        let rows = record_key::Entity::find()
            .select_only()
            .filter(record_key::Column::Generation.eq(generation))
            .filter(record_key::Column::Field.eq(self.comparison.field.name.as_str()));
        match self.comparison.operator {
            Operator::Equal | Operator::NotEqual | Operator::Contains => {
                rows.filter(first.lte(key)).filter(last.gte(key))
            }
            Operator::Greater => rows.filter(last.gt(key)),
            Operator::GreaterOrEqual => rows.filter(last.gte(key)),
            Operator::Less => rows.filter(first.lt(key)),
            Operator::LessOrEqual => rows.filter(first.lte(key)),
        }
    }

    /// The ordinals of the records the comparison matches, ascending.
    async fn ordinals(
        &self,
        db: &impl ConnectionTrait,
        generation: i64,
        count: u32,
    ) -> Result<Ordinals, sea_orm::DbErr> {
        let packed: Vec<Vec<u8>> = self
            .blocks(generation)
            .column(record_key::Column::Entries)
            .into_tuple()
            .all(db)
            .await?;
        let mut parts = Vec::with_capacity(packed.len());
        for entries in &packed {
            parts.push(
                unpacked(entries)?
                    .holding(|value| self.admits(value))
                    .collect(),
            );
        }
        let found = sets::gather(parts);
        Ok(match self.comparison.operator {
            // A record without the field matches `!=`, as on the records.
            Operator::NotEqual => sets::complement(&found, count),
            _ => found,
        })
    }
}

/// A stored block read back, or the error of one not packed as keys are.
fn unpacked(entries: &[u8]) -> Result<blocks::Unpacked<'_>, sea_orm::DbErr> {
    blocks::Unpacked::read(entries)
        .ok_or_else(|| sea_orm::DbErr::Custom("a key block is not packed as keys are".to_owned()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_declared_key_is_a_queryable_field_of_its_list() {
        for data_type in DataType::all() {
            for name in data_type.spec().keys {
                let field = fields::named(*data_type, name).unwrap_or_else(|| {
                    panic!("{}: declared key {name} is not a field", data_type.name())
                });
                assert!(
                    !name.contains(','),
                    "{name}: keyed fields are listed comma-separated"
                );
                assert_ne!(
                    field.kind,
                    fields::Kind::Boolean,
                    "{name}: two values are no key"
                );
            }
        }
    }
}
