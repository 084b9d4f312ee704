//! A customer written by a running sync, not yet published: the sync numbers
//! and moves its rows into `customer` when it completes.

use sea_orm::entity::prelude::*;

/// A row of `customer_staging`.
#[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
#[sea_orm(table_name = "customer_staging")]
pub struct Model {
    /// The connection it came from.
    #[sea_orm(primary_key, auto_increment = false)]
    pub connection_id: Uuid,
    /// The data generation it belongs to.
    #[sea_orm(primary_key, auto_increment = false)]
    pub generation: i64,
    /// The platform's id of the customer.
    #[sea_orm(primary_key, auto_increment = false)]
    pub customer_id: String,
    /// The company (denormalized for reads).
    pub company_id: Uuid,
    /// The customer's (company) name.
    pub customer_name: String,
    /// Contact e-mail.
    pub email_address: Option<String>,
    /// Contact phone.
    pub phone: Option<String>,
    /// ISO 4217 code of the currency it is invoiced in.
    pub default_currency: Option<String>,
    /// `Active` or `Archived`.
    pub status: String,
    /// When our copy changed.
    pub modified_date: DateTimeUtc,
    /// When the platform's record changed.
    pub source_modified_date: Option<DateTimeUtc>,
}

/// Tables a customer refers to.
#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {
    /// The connection it came from. The table has no foreign key (checking
    /// one per staged row slowed syncs); deletes clean staging explicitly.
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
