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
//! it, and go with the generation's rows. A generation published before
//! keys existed, or a field added to a data type's keys since, is read as
//! before: `record_generation.keyed_fields` names what was built.

mod blocks;
mod gathered;
mod sets;
mod values;

use futures_util::TryStreamExt;
use sea_orm::{
    ColumnTrait, ConnectionTrait, EntityTrait, QueryFilter, QueryOrder, QuerySelect, Set,
    StreamTrait,
};

use entity::{record, record_generation, record_key};

use crate::data::DataType;
use crate::data::Direction;
use crate::data::fields::{self, Field};
use crate::data::query::{Comparison, Operand, Operator, OrderBy, Query};
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
    let (Some(count), Some(compared)) = (
        keyed(
            db,
            data_type,
            generation,
            count,
            &[comparison.field.name.as_str()],
        )
        .await?,
        Compared::new(comparison),
    ) else {
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

/// The ordinals of the records of `generation` (a list of `data_type` of
/// `count` records) that `query` matches (every record without one), in
/// `order_by`'s order read from its field's keys: by value (numbers by
/// value, text by character code), records of one value in the list's own
/// order, records without the field last, as the records' `ORDER BY` says.
/// `None` when the field or the query's fields have no keys here.
pub async fn ordered(
    db: &impl ConnectionTrait,
    data_type: DataType,
    generation: i64,
    count: i64,
    order_by: &OrderBy,
    query: Option<&Query>,
) -> Result<Option<Vec<i64>>, sea_orm::DbErr> {
    let name = order_by.field.name.as_str();
    let Some(count) = keyed(db, data_type, generation, count, &[name]).await? else {
        return Ok(None);
    };
    let wanted = match query {
        Some(query) => match matching(db, data_type, generation, i64::from(count), query).await? {
            Some(matched) => Some(Present::of(matched.into_iter(), count)),
            None => return Ok(None),
        },
        None => None,
    };
    // A range on the ordered field needs only its own blocks.
    let rows = match query {
        Some(Query::Compare(comparison))
            if comparison.field.name == order_by.field.name
                && comparison.operator != Operator::NotEqual =>
        {
            match Compared::new(comparison) {
                Some(compared) => compared.blocks(generation),
                None => return Ok(None),
            }
        }
        _ => record_key::Entity::find()
            .select_only()
            .filter(record_key::Column::Generation.eq(generation))
            .filter(record_key::Column::Field.eq(name)),
    };
    let packed: Vec<Vec<u8>> = rows
        .column(record_key::Column::Entries)
        .order_by_asc(record_key::Column::Block)
        .into_tuple()
        .all(db)
        .await?;
    let read = packed
        .iter()
        .map(|entries| unpacked(entries))
        .collect::<Result<Vec<_>, _>>()?;
    let descending = order_by.direction == Direction::Descending;
    Ok(Some(arrange(&read, descending, count, wanted.as_ref())))
}

/// The ordinals of a list of `count` records that `wanted` holds (every
/// one when `None`) in the order of the field whose blocks are `read` (in
/// block order): by value, ascending or `descending`; records of one value
/// ascending (the list's own order), even where its run goes on over
/// several blocks; the records without a value last, ascending.
fn arrange(
    read: &[blocks::Unpacked<'_>],
    descending: bool,
    count: u32,
    wanted: Option<&Present>,
) -> Vec<i64> {
    let mut runs: Vec<(&str, Vec<&[u32]>)> = Vec::new();
    for (value, ordinals) in read.iter().flat_map(|block| block.runs()) {
        match runs.last_mut() {
            Some((last, parts)) if *last == value => parts.push(ordinals),
            _ => runs.push((value, vec![ordinals])),
        }
    }
    if descending {
        runs.reverse();
    }
    let admitted = |ordinal: u32| wanted.is_none_or(|wanted| wanted.holds(ordinal));
    let mut valued = Present::none(count);
    let mut found = Vec::with_capacity(wanted.map_or(count as usize, Present::len));
    for ordinal in runs
        .iter()
        .flat_map(|(_, parts)| parts.iter().copied().flatten())
    {
        valued.add(*ordinal);
        if admitted(*ordinal) {
            found.push(i64::from(*ordinal));
        }
    }
    found.extend(
        (1..=count)
            .filter(|ordinal| !valued.holds(*ordinal) && admitted(*ordinal))
            .map(i64::from),
    );
    found
}

/// A set of a list's ordinals (1 to a count) as one bit each.
struct Present {
    words: Vec<u64>,
    len: usize,
}

impl Present {
    /// No ordinal of a list of `count`.
    fn none(count: u32) -> Self {
        Self {
            words: vec![0; count as usize / 64 + 1],
            len: 0,
        }
    }

    /// `ordinals` of a list of `count`.
    fn of(ordinals: impl Iterator<Item = i64>, count: u32) -> Self {
        let mut present = Self::none(count);
        for ordinal in ordinals {
            if let Ok(ordinal) = u32::try_from(ordinal) {
                present.add(ordinal);
            }
        }
        present
    }

    fn add(&mut self, ordinal: u32) {
        if let Some(word) = self.words.get_mut(ordinal as usize / 64) {
            let bit = 1 << (ordinal % 64);
            if *word & bit == 0 {
                *word |= bit;
                self.len += 1;
            }
        }
    }

    fn holds(&self, ordinal: u32) -> bool {
        self.words
            .get(ordinal as usize / 64)
            .is_some_and(|word| word & (1 << (ordinal % 64)) != 0)
    }

    fn len(&self) -> usize {
        self.len
    }
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
    fn an_order_from_keys_is_by_value_ties_in_list_order_and_records_without_a_value_last() {
        // Ordinals 1..=3000: "b" held by 2..=1500 (a run over two blocks),
        // "a" by 1501..=2000, "c" by 2001..=2999; 1 and 3000 hold none.
        let values: Vec<(&str, Vec<u32>)> = vec![
            ("a", (1501..=2000).collect()),
            ("b", (2..=1500).collect()),
            ("c", (2001..=2999).collect()),
        ];
        let cut = blocks::cut(
            values
                .iter()
                .map(|(value, ordinals)| (*value, ordinals.as_slice())),
        )
        .expect("short values");
        assert!(cut.len() > 2, "the runs go on over blocks");
        let read: Vec<blocks::Unpacked> = cut
            .iter()
            .map(|block| blocks::Unpacked::read(&block.entries).expect("packed"))
            .collect();
        let run = |from: i64, to: i64| (from..=to).collect::<Vec<i64>>();
        let ascending = [
            run(1501, 2000),
            run(2, 1500),
            run(2001, 2999),
            vec![1, 3000],
        ]
        .concat();
        assert_eq!(arrange(&read, false, 3000, None), ascending);
        let descending = [
            run(2001, 2999),
            run(2, 1500),
            run(1501, 2000),
            vec![1, 3000],
        ]
        .concat();
        assert_eq!(arrange(&read, true, 3000, None), descending);
        let wanted = Present::of([1, 7, 1600, 2500, 3000].into_iter(), 3000);
        assert_eq!(
            arrange(&read, true, 3000, Some(&wanted)),
            vec![2500, 7, 1600, 1, 3000]
        );
    }

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
