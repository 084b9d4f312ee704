//! QuickBooks Desktop: its catalogue entry (no self-service migration). Notes, with
//! sources: `NOTES.md`.

use crate::platforms::{NONE_YET, Platform, SourceType};

/// QuickBooks Desktop in the catalogue.
pub static PLATFORM: Platform = Platform {
    platform_key: "quickbooks-desktop",
    name: "QuickBooks Desktop",
    source_type: SourceType::Accounting,
    data_types: NONE_YET,
    authorization: None,
    connector: None,
};
