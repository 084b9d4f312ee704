//! GoCardless Bank Account Data: its catalogue entry (no self-service migration). Notes, with
//! sources: `NOTES.md`.

use crate::platforms::{NONE_YET, Platform, SourceType};

/// GoCardless Bank Account Data in the catalogue.
pub static PLATFORM: Platform = Platform {
    platform_key: "gocardless-bank-account-data",
    name: "GoCardless Bank Account Data",
    source_type: SourceType::Banking,
    data_types: NONE_YET,
    authorization: None,
    connector: None,
};
