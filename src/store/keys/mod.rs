//! The keys of a published generation: for each field its data type
//! declares (`Spec::keys`: references, dates, amounts, currency, status,
//! `modifiedDate`), its values in value order with the ordinal of the record
//! holding each, in `record_key` blocks ([`blocks`]). A query made only of
//! comparisons on declared fields then finds its matches, in the list's
//! order and exactly counted, from the blocks whose first and last values
//! admit them (one or two blocks for `customerRef.id=…`, those of a value
//! range for `issueDate>…`; `&&`, `||` and `!=` as set operations) without
//! reading a record, where a query on other fields reads every record's
//! JSON once per snapshot.
//!
//! Keys are built as the generation is published (its rows numbered, not
//! yet visible), from the stored JSON, in the transaction that publishes
//! it, and go with the generation's rows. A generation published before
//! keys existed, or a field added to a data type's keys since, is read as
//! before: `record_generation.keyed_fields` names what was built.

mod blocks;
mod gathered;
mod sets;
mod values;

use futures_util::TryStreamExt;
use sea_orm::{
    ColumnTrait, ConnectionTrait, EntityTrait, QueryFilter, QuerySelect, Set, StreamTrait,
};

use entity::{record, record_generation, record_key};

use crate::data::DataType;
use crate::data::fields::{self, Field};
use crate::data::query::{Comparison, Operand, Operator, Query};
use gathered::Gathered;
use sets::Ordinals;

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
    let mut keyed: Vec<&str> = Vec::new();
    let mut written = 0;
    for (field, gathered) in fields.iter().zip(gathered) {
        let Some(cut) = gathered
            .sorted()
            .and_then(|sorted| blocks::cut(sorted.runs()))
        else {
            continue;
        };
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
        keyed.push(&field.name);
    }
    record_generation::Entity::update_many()
        .col_expr(
            record_generation::Column::KeyedFields,
            sea_orm::sea_query::Expr::value(keyed.join(",")),
        )
        .filter(record_generation::Column::Generation.eq(generation))
        .exec(db)
        .await?;
    Ok(written)
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
    let spec = data_type.spec();
    if leaves.iter().any(|comparison| {
        comparison.operator == Operator::Contains
            || !spec.keys.contains(&comparison.field.name.as_str())
    }) {
        return Ok(None);
    }
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
    let Ok(count) = u32::try_from(count) else {
        return Ok(None);
    };
    if leaves
        .iter()
        .any(|comparison| !keyed.contains(&comparison.field.name.as_str()))
    {
        return Ok(None);
    }
    let mut sets = Vec::with_capacity(leaves.len());
    for comparison in &leaves {
        match leaf(db, generation, count, comparison).await? {
            Some(set) => sets.push(set),
            None => return Ok(None),
        }
    }
    let mut sets = sets.into_iter();
    let matched = combine(query, &mut sets);
    Ok(Some(matched.into_iter().map(i64::from).collect()))
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

/// The records one comparison matches; `None` when its value has no key
/// (a number beyond what a key writes).
async fn leaf(
    db: &impl ConnectionTrait,
    generation: i64,
    count: u32,
    comparison: &Comparison,
) -> Result<Option<Ordinals>, sea_orm::DbErr> {
    let written = match &comparison.value {
        Operand::Text(text) | Operand::Number(text) => {
            values::encode(&comparison.field.kind, text.clone())
        }
        Operand::Boolean(flag) => Some(flag.to_string()),
    };
    let Some(key) = written else {
        return Ok(None);
    };
    // The blocks whose values may be compared true: their first and last
    // values bound every value between.
    let (first, last) = (
        record_key::Column::FirstValue,
        record_key::Column::LastValue,
    );
    let rows = record_key::Entity::find()
        .select_only()
        .column(record_key::Column::Entries)
        .filter(record_key::Column::Generation.eq(generation))
        .filter(record_key::Column::Field.eq(comparison.field.name.as_str()));
    let rows = match comparison.operator {
        Operator::Equal | Operator::NotEqual => rows
            .filter(first.lte(key.as_str()))
            .filter(last.gte(key.as_str())),
        Operator::Greater => rows.filter(last.gt(key.as_str())),
        Operator::GreaterOrEqual => rows.filter(last.gte(key.as_str())),
        Operator::Less => rows.filter(first.lt(key.as_str())),
        Operator::LessOrEqual => rows.filter(first.lte(key.as_str())),
        Operator::Contains => return Ok(None),
    };
    let packed: Vec<Vec<u8>> = rows.into_tuple().all(db).await?;
    let key = key.as_str();
    let admits = |value: &str| match comparison.operator {
        Operator::Equal | Operator::NotEqual => value == key,
        Operator::Greater => value > key,
        Operator::GreaterOrEqual => value >= key,
        Operator::Less => value < key,
        Operator::LessOrEqual => value <= key,
        Operator::Contains => false,
    };
    let mut parts = Vec::with_capacity(packed.len());
    for entries in &packed {
        let block = blocks::Unpacked::read(entries).ok_or_else(|| {
            sea_orm::DbErr::Custom("a key block is not packed as keys are".to_owned())
        })?;
        parts.push(block.holding(admits).collect());
    }
    let found = sets::gather(parts);
    Ok(Some(match comparison.operator {
        // A record without the field matches `!=`, as on the records.
        Operator::NotEqual => sets::complement(&found, count),
        _ => found,
    }))
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
