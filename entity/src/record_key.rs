//! A block of the keys of one field a data type declares, in one published
//! generation: about a thousand of its values in value order, each with the
//! ordinal of the record holding it. A query on declared fields reads these
//! rows instead of the records (`store::keys`).

use sea_orm::entity::prelude::*;

/// A row of `record_key`.
#[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
#[sea_orm(table_name = "record_key")]
pub struct Model {
    /// The generation whose records hold the values.
    #[sea_orm(primary_key, auto_increment = false)]
    pub generation: i64,
    /// The field, as queries name it (`customerRef.id`).
    #[sea_orm(primary_key, auto_increment = false)]
    pub field: String,
    /// The block's place among the field's blocks, from 0, in value order.
    #[sea_orm(primary_key, auto_increment = false)]
    pub block: i32,
    /// Its least value, encoded so that byte order is the field's order
    /// (`store::keys`).
    pub first_value: String,
    /// Its greatest value, encoded alike.
    pub last_value: String,
    /// How many values (records) it holds.
    pub size: i32,
    /// Its values and their records' ordinals, packed (`store::keys`).
    pub entries: Vec<u8>,
}

/// A key refers to nothing: its rows go with their generation's.
#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {}

impl ActiveModelBehavior for ActiveModel {}
