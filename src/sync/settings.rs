//! A tenant's sync settings (`sync_settings`): the data types
//! `POST .../data/all` (and a managed migration's first sync) queues for
//! each `Linked` connection, of those its platform syncs. Fifteen data types
//! can triple a platform's calls; a partner that reads three asks for three.

use chrono::{DateTime, Utc};
use sea_orm::sea_query::OnConflict;
use sea_orm::{ConnectionTrait, EntityTrait, Set};

use entity::sync_settings;

use crate::data::DataType;
use crate::error::{Error, FieldError};
use crate::tenant::Tenant;
use crate::timestamp::Timestamp;

/// A client's sync settings.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SyncSettings {
    /// The data types `data/all` queues; `None`: every one the platform syncs.
    pub data_types: Option<Vec<DataType>>,
    /// When they were last set; `None`: never (the defaults).
    pub updated: Option<DateTime<Utc>>,
}

impl SyncSettings {
    /// Of `offered` (what a platform syncs), what `data/all` queues, in the
    /// platform's order.
    pub fn chosen_of(&self, offered: &[DataType]) -> Vec<DataType> {
        DataType::chosen_of(self.data_types.as_deref(), offered)
    }
}

impl From<sync_settings::Model> for SyncSettings {
    fn from(row: sync_settings::Model) -> Self {
        Self {
            data_types: row.data_types.as_deref().map(DataType::from_stored_list),
            updated: Some(row.updated),
        }
    }
}

/// The client's sync settings (the defaults when never set).
pub async fn get(db: &impl ConnectionTrait, client_id: uuid::Uuid) -> Result<SyncSettings, Error> {
    Ok(sync_settings::Entity::find_by_id(client_id)
        .one(db)
        .await?
        .map(SyncSettings::from)
        .unwrap_or_default())
}

/// Replaces the client's sync settings: `data_types` by name (each once,
/// at least one), or `None` for every data type a platform syncs. Every
/// name that is not a data type is listed in one 400.
pub async fn put(
    db: &impl ConnectionTrait,
    tenant: Tenant,
    data_types: Option<Vec<String>>,
) -> Result<SyncSettings, Error> {
    let chosen = data_types.map(|names| chosen_by_name(&names)).transpose()?;
    let names = chosen.as_deref().map(DataType::stored_list);
    let row = sync_settings::ActiveModel {
        client_id: Set(tenant.client_id),
        data_types: Set(names),
        updated: Set(Timestamp::now()),
    };
    sync_settings::Entity::insert(row)
        .on_conflict(
            OnConflict::column(sync_settings::Column::ClientId)
                .update_columns([
                    sync_settings::Column::DataTypes,
                    sync_settings::Column::Updated,
                ])
                .to_owned(),
        )
        .exec(db)
        .await?;
    get(db, tenant.client_id).await
}

/// The data types `names` name, each once, in the order given.
fn chosen_by_name(names: &[String]) -> Result<Vec<DataType>, Error> {
    let mut chosen = Vec::with_capacity(names.len());
    let mut problems = Vec::new();
    if names.is_empty() {
        problems.push(FieldError::new(
            "dataTypes",
            "must name at least one data type (null: every data type the platform syncs)",
        ));
    }
    for (index, name) in names.iter().enumerate() {
        match DataType::named(name) {
            Some(data_type) if chosen.contains(&data_type) => problems.push(FieldError::new(
                format!("dataTypes[{index}]"),
                format!("`{name}` is listed twice"),
            )),
            Some(data_type) => chosen.push(data_type),
            None => problems.push(FieldError::new(
                format!("dataTypes[{index}]"),
                format!(
                    "`{name}` is not a data type; use one of {}",
                    DataType::names()
                ),
            )),
        }
    }
    if problems.is_empty() {
        Ok(chosen)
    } else {
        Err(Error::Invalid(problems))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_choice_keeps_the_platforms_order_and_only_what_it_syncs() {
        let offered = [DataType::INVOICES, DataType::CUSTOMERS];
        let every = SyncSettings::default();
        assert_eq!(every.chosen_of(&offered).len(), 2);
        let chosen = SyncSettings {
            data_types: Some(vec![DataType::BANK_ACCOUNTS, DataType::CUSTOMERS]),
            updated: None,
        };
        assert_eq!(
            chosen
                .chosen_of(&offered)
                .iter()
                .map(|data_type| data_type.name())
                .collect::<Vec<_>>(),
            ["customers"]
        );
    }

    #[test]
    fn names_are_checked_each_once_and_at_least_one() {
        let names = |list: &[&str]| {
            list.iter()
                .map(|name| (*name).to_owned())
                .collect::<Vec<_>>()
        };
        assert!(chosen_by_name(&names(&["customers", "invoices"])).is_ok());
        for (bad, field) in [
            (names(&[]), "dataTypes"),
            (names(&["invoices", "invoices"]), "dataTypes[1]"),
            (names(&["invoices", "Invoices"]), "dataTypes[1]"),
        ] {
            match chosen_by_name(&bad) {
                Err(Error::Invalid(problems)) => {
                    assert_eq!(problems.len(), 1, "{bad:?}");
                    assert_eq!(problems[0].item_id, field, "{bad:?}");
                }
                other => panic!("{bad:?} refused, not {other:?}"),
            }
        }
    }
}
