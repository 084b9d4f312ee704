//! A link session: one end customer's way through the hosted pages to a
//! linked connection of one company, reached through a token stored only as
//! its digest.

use sea_orm::entity::prelude::*;

/// A row of `link_session`.
#[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
#[sea_orm(table_name = "link_session")]
pub struct Model {
    /// The session's id.
    #[sea_orm(primary_key, auto_increment = false)]
    pub id: Uuid,
    /// The tenant that created it.
    pub client_id: Uuid,
    /// The company it links a connection of.
    pub company_id: Uuid,
    /// The connection it links again (reauthorization), when given.
    pub connection_id: Option<Uuid>,
    /// The platform it is limited to, when given.
    pub platform_key: Option<String>,
    /// Where the end customer is sent at the end.
    pub redirect_url: Option<String>,
    /// SHA-256 (hex) of the link token.
    #[sea_orm(unique)]
    pub token_digest: String,
    /// SHA-256 (hex) of the browser secret of the browser that opened it.
    pub browser_digest: Option<String>,
    /// `Created`, `Opened`, `Completed`, `Failed` (`Expired` is read from `expires_at`).
    pub status: String,
    /// Why it failed.
    pub failure: Option<String>,
    /// The status code the redirect carries at the end.
    pub status_code: Option<i32>,
    /// The connection it linked or failed to link.
    pub result_connection_id: Option<Uuid>,
    /// The platform the customer chose.
    pub chosen_platform_key: Option<String>,
    /// Organizations offered after consent (JSON: ids and names, no secrets).
    pub organizations: Option<String>,
    /// The id of the key that sealed the pending grant.
    pub grant_key_id: Option<String>,
    /// The pending grant's AES-GCM nonce.
    pub grant_nonce: Option<Vec<u8>>,
    /// The pending grant (tokens), sealed, until an organization is chosen.
    pub grant_ciphertext: Option<Vec<u8>>,
    /// When it was created.
    pub created: DateTimeUtc,
    /// When it stops working.
    pub expires_at: DateTimeUtc,
    /// When it completed or failed.
    pub ended: Option<DateTimeUtc>,
}

/// Tables a link session refers to.
#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {
    /// The company.
    #[sea_orm(
        belongs_to = "super::company::Entity",
        from = "Column::CompanyId",
        to = "super::company::Column::Id",
        on_delete = "Cascade"
    )]
    Company,
}

impl ActiveModelBehavior for ActiveModel {}
