//! `/syncSettings`: the client's choice of the data types
//! `POST /companies/{companyId}/data/all` queues.

use poem::web::Data;
use poem_openapi::payload::Json;
use poem_openapi::{ApiResponse, Object, OpenApi};

use crate::http::api::ApiTags;
use crate::http::error::{ErrorResponses, status};
use crate::http::json_body::JsonBody;
use crate::http::state::AppState;
use crate::http::types::{Nullable, Timestamp};
use crate::sync::settings::{self, SyncSettings as Settings};
use crate::tenant::Tenant;

/// Sync settings endpoints.
pub struct SyncSettingsApi;

/// Your sync settings: which data types `syncAllData` queues.
#[derive(Debug, Clone, Object)]
#[oai(rename_all = "camelCase")]
pub struct SyncSettings {
    /// The data types `POST /companies/{companyId}/data/all` (and a managed migration's first sync) queues for each `Linked` connection, of those its platform syncs; null: every data type the platform syncs. `queueDataType` syncs any data type whatever this says.
    pub data_types: Nullable<Vec<String>>,
    /// When they were last set; null: never (these are the defaults).
    pub updated: Nullable<Timestamp>,
}

impl From<Settings> for SyncSettings {
    fn from(settings: Settings) -> Self {
        Self {
            data_types: settings
                .data_types
                .map(|chosen| chosen.iter().map(|dt| dt.name().to_owned()).collect())
                .into(),
            updated: settings.updated.map(Timestamp::from).into(),
        }
    }
}

/// New sync settings (they replace the old ones whole).
#[derive(Debug, Clone, Object)]
#[oai(rename_all = "camelCase", deny_unknown_fields)]
pub struct SyncSettingsInput {
    /// The data types `syncAllData` queues (`invoices`, `customers`, ...; each once, at least one; those a platform lacks are skipped for its connections); null or absent: every data type the platform syncs.
    #[oai(default)]
    pub data_types: Nullable<Vec<String>>,
}

/// Answer of `getSyncSettings` and `setSyncSettings`.
#[derive(ApiResponse)]
pub enum SyncSettingsFound {
    /// The settings.
    #[oai(status = 200)]
    Ok(Json<SyncSettings>),
}

type GetErrors = ErrorResponses<{ status::AUTHENTICATED }>;
type SetErrors = ErrorResponses<{ status::AUTHENTICATED | status::JSON_BODY }>;

#[OpenApi(tag = "ApiTags::Data")]
impl SyncSettingsApi {
    /// Get your sync settings
    ///
    /// Which data types `syncAllData` queues (every data type each platform
    /// syncs until you choose).
    #[oai(
        path = "/syncSettings",
        method = "get",
        operation_id = "getSyncSettings"
    )]
    async fn get_sync_settings(
        &self,
        tenant: Tenant,
        state: Data<&AppState>,
    ) -> Result<SyncSettingsFound, GetErrors> {
        let found = settings::get(&state.db, tenant.client_id).await?;
        Ok(SyncSettingsFound::Ok(Json(found.into())))
    }

    /// Set your sync settings
    ///
    /// Replaces your sync settings whole; every problem is listed at once.
    /// Each data type a platform syncs costs calls to it (and to its daily
    /// quota): choose the ones your product reads. Operations already
    /// queued are not affected.
    #[oai(
        path = "/syncSettings",
        method = "put",
        operation_id = "setSyncSettings"
    )]
    async fn set_sync_settings(
        &self,
        tenant: Tenant,
        state: Data<&AppState>,
        body: JsonBody<SyncSettingsInput>,
    ) -> Result<SyncSettingsFound, SetErrors> {
        let stored = settings::put(&state.db, tenant, body.0.data_types.0).await?;
        Ok(SyncSettingsFound::Ok(Json(stored.into())))
    }
}
