//! An invoice written by a running sync, not yet published: the sync numbers
//! and moves its rows into `invoice` when it completes. Money as in `invoice`.

use sea_orm::entity::prelude::*;

/// A row of `invoice_staging`.
#[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
#[sea_orm(table_name = "invoice_staging")]
pub struct Model {
    /// The connection it came from.
    #[sea_orm(primary_key, auto_increment = false)]
    pub connection_id: Uuid,
    /// The data generation it belongs to.
    #[sea_orm(primary_key, auto_increment = false)]
    pub generation: i64,
    /// The platform's id of the invoice.
    #[sea_orm(primary_key, auto_increment = false)]
    pub invoice_id: String,
    /// The company (denormalized for reads).
    pub company_id: Uuid,
    /// The invoice number people see.
    pub invoice_number: Option<String>,
    /// The platform's id of the customer.
    pub customer_id: Option<String>,
    /// The customer's name.
    pub customer_name: Option<String>,
    /// Issue date.
    pub issue_date: Date,
    /// Due date.
    pub due_date: Option<Date>,
    /// When it was fully paid.
    pub paid_on_date: Option<Date>,
    /// ISO 4217 code.
    pub currency: String,
    /// Total before tax, in ten-thousandths.
    pub sub_total: i64,
    /// Tax, in ten-thousandths.
    pub total_tax_amount: i64,
    /// Total including tax, in ten-thousandths.
    pub total_amount: i64,
    /// Still owed, in ten-thousandths.
    pub amount_due: i64,
    /// `Draft`, `Submitted`, `PartiallyPaid`, `Paid`, `Void` or `Unknown`.
    pub status: String,
    /// The line items, as JSON.
    pub line_items: String,
    /// A note on the invoice.
    pub note: Option<String>,
    /// When our copy changed.
    pub modified_date: DateTimeUtc,
    /// When the platform's record changed.
    pub source_modified_date: Option<DateTimeUtc>,
}

/// Tables an invoice refers to.
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
