//! A tenant's link settings: what the hosted link pages show its end
//! customers and where they may send them back to.

use sea_orm::entity::prelude::*;

/// A row of `link_settings`.
#[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
#[sea_orm(table_name = "link_settings")]
pub struct Model {
    /// The tenant (client).
    #[sea_orm(primary_key, auto_increment = false)]
    pub client_id: Uuid,
    /// The name end customers see on the hosted pages.
    pub display_name: Option<String>,
    /// The redirect URLs sessions may use, as a JSON array of strings.
    pub allowed_redirect_urls: String,
    /// Origins allowed to frame the hosted pages, as a JSON array of strings.
    pub allowed_frame_origins: String,
    /// The data types queued on a first link, as a JSON array; null: every one the platform syncs.
    pub fetch_on_first_link: Option<String>,
    /// When they were last set.
    pub updated: DateTimeUtc,
}

/// Tables link settings refer to.
#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {
    /// The owning tenant.
    #[sea_orm(
        belongs_to = "super::client::Entity",
        from = "Column::ClientId",
        to = "super::client::Column::Id",
        on_delete = "Cascade"
    )]
    Client,
}

impl ActiveModelBehavior for ActiveModel {}
