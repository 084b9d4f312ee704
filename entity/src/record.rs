//! A synced record of any data type, readable: numbered densely in its
//! list's order when its generation was published, so a page is a range of
//! ordinals. Its JSON is what the API shows. No foreign key (checking one
//! per inserted row cost a large sync seconds): deleting a connection or
//! company deletes its rows through the generations `record_generation`
//! lists.

use sea_orm::entity::prelude::*;

/// A row of `record`.
#[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
#[sea_orm(table_name = "record")]
pub struct Model {
    /// The connection it came from.
    pub connection_id: Uuid,
    /// Its data type's name (`invoices`).
    pub data_type: String,
    /// The data generation it belongs to: numbered once across every list,
    /// so with the id it names the row.
    #[sea_orm(primary_key, auto_increment = false)]
    pub generation: i64,
    /// The platform's id of the record.
    #[sea_orm(primary_key, auto_increment = false)]
    pub record_id: String,
    /// The company (denormalized, so a company's rows go with it).
    pub company_id: Uuid,
    /// What its list is ordered by (then connection, then id).
    pub sort_key: String,
    /// Its value of its list's filter (an invoice's status), if the list has one.
    pub filter_value: Option<String>,
    /// The record as the API shows it, JSON.
    pub body: String,
    /// Place in the connection's list, from 1, dense within the generation.
    pub ordinal: i64,
    /// Place among the connection's records with the same filter value.
    pub filter_ordinal: Option<i64>,
}

/// Tables a record refers to.
#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {
    /// The connection it came from.
    #[sea_orm(
        belongs_to = "super::connection::Entity",
        from = "Column::ConnectionId",
        to = "super::connection::Column::Id"
    )]
    Connection,
}

impl Related<super::connection::Entity> for Entity {
    fn to() -> RelationDef {
        Relation::Connection.def()
    }
}

impl ActiveModelBehavior for ActiveModel {}
