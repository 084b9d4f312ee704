//! Wave: its catalogue entry (no self-service migration). Notes, with
//! sources: `NOTES.md`.

use crate::platforms::{Platform, SourceType, SALES};

/// Wave in the catalogue.
pub static PLATFORM: Platform = Platform {
    platform_key: "wave",
    name: "Wave",
    source_type: SourceType::Accounting,
    managed_migration: true,
    data_types: SALES,
    authorization: None,
    connector: None,
};
