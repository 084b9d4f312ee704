//! A record a running sync has fetched but not yet published. No foreign
//! key (checking one per staged row was a third of a large sync's time):
//! deleting a connection or company deletes its staged rows explicitly.

use sea_orm::entity::prelude::*;

/// A row of `record_staging`.
#[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
#[sea_orm(table_name = "record_staging")]
pub struct Model {
    /// The connection being synced.
    pub connection_id: Uuid,
    /// Its data type's name (`invoices`).
    pub data_type: String,
    /// The generation being written: numbered once across every list, so
    /// with the id it names the row.
    #[sea_orm(primary_key, auto_increment = false)]
    pub generation: i64,
    /// The platform's id of the record.
    #[sea_orm(primary_key, auto_increment = false)]
    pub record_id: String,
    /// The company.
    pub company_id: Uuid,
    /// What its list is ordered by.
    pub sort_key: String,
    /// Its value of its list's filter, if the list has one.
    pub filter_value: Option<String>,
    /// The record as the API shows it, JSON.
    pub body: String,
}

/// A staged record refers to nothing (see the module's note).
#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {}

impl ActiveModelBehavior for ActiveModel {}
