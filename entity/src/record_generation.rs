//! Every generation that may hold rows in `record` or `record_staging`,
//! numbered once across every list: a sync takes the next number before it
//! stages anything, and the number's row goes only after its rows have.
//! It is how a list's or a connection's generations are found (the record
//! tables are keyed by generation, not by connection). No foreign key: a
//! deleted connection's numbers must outlive it until its rows are gone.

use sea_orm::entity::prelude::*;

/// A row of `record_generation`.
#[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
#[sea_orm(table_name = "record_generation")]
pub struct Model {
    /// The generation's number, greater than every number taken before it.
    #[sea_orm(primary_key)]
    pub generation: i64,
    /// The connection whose data it holds.
    pub connection_id: Uuid,
    /// The data type's name (`invoices`).
    pub data_type: String,
    /// The fields whose keys (`record_key`) were built when it was
    /// published, comma-separated; `None` for a generation published
    /// before keys existed or not yet published.
    pub keyed_fields: Option<String>,
    /// The generation a resync numbered this one from by carrying its
    /// places over (`store::keys::carry`); `None` otherwise.
    pub renumbered_from: Option<i64>,
    /// Where that generation's rows went in this one, packed
    /// (`store::layers::LayerMap::packed`): set with `renumbered_from`.
    pub renumbering: Option<Vec<u8>>,
    /// For a layered generation, the full generation it reads its
    /// unchanged rows from; `None` for a full generation.
    pub base: Option<i64>,
    /// For a layered generation, how its positions map to the base's rows
    /// and its own, packed (`store::layers::written::Layer::packed`): set
    /// with `base`.
    pub layer: Option<Vec<u8>>,
}

/// A generation refers to nothing (see the module's note).
#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {}

impl ActiveModelBehavior for ActiveModel {}
