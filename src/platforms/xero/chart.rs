//! Xero's chart of accounts (`GET /Accounts`, account classes) and tax
//! rates (`GET /TaxRates`, each known by its `TaxType`), and how they become
//! our records; each list is one answer, whole every time.

use serde::Deserialize;

use super::mapping::updated;
use crate::data::accounts::{Account, AccountClassification, AccountStatus};
use crate::data::tax_rates::{TaxRate, TaxRateComponent, TaxRateStatus};
use crate::platforms::kit::json::{self, Amount, quantity};
use crate::platforms::kit::records::{Each, Keyed};

/// `GET /api.xro/2.0/Accounts`: the whole chart in one answer (no paging).
#[derive(Deserialize)]
#[serde(rename_all = "PascalCase")]
pub(super) struct AccountsAnswer {
    pub(super) accounts: Each<XeroAccount>,
}

/// An account as Xero writes it (`Account` in Xero's OpenAPI document).
#[derive(Deserialize)]
#[serde(rename_all = "PascalCase")]
pub(super) struct XeroAccount {
    #[serde(rename = "AccountID")]
    account_id: String,
    code: Option<String>,
    name: Option<String>,
    #[serde(rename = "Type")]
    account_type: Option<String>,
    status: Option<String>,
    description: Option<String>,
    currency_code: Option<String>,
    class: Option<String>,
    #[serde(rename = "UpdatedDateUTC")]
    updated_date_utc: Option<String>,
}

impl Keyed for XeroAccount {
    const ID: &'static str = "/AccountID";
}

/// Our classification of Xero's account class (`ASSET`, `EQUITY`,
/// `EXPENSE`, `LIABILITY`, `REVENUE`: the document's enum).
pub(super) fn classification(class: Option<&str>) -> AccountClassification {
    match class {
        Some("ASSET") => AccountClassification::Asset,
        Some("LIABILITY") => AccountClassification::Liability,
        Some("EQUITY") => AccountClassification::Equity,
        Some("REVENUE") => AccountClassification::Income,
        Some("EXPENSE") => AccountClassification::Expense,
        _ => AccountClassification::Unknown,
    }
}

impl XeroAccount {
    /// Our account; `None` for a `DELETED` one (Xero keeps its id, the
    /// chart no longer has it: a whole-chart fetch leaves it out, so it is
    /// flagged `isDeleted`).
    pub(super) fn into_record(self) -> Option<Account> {
        let status = match self.status.as_deref() {
            Some("DELETED") => return None,
            Some("ARCHIVED") => AccountStatus::Archived,
            _ => AccountStatus::Active,
        };
        Some(Account {
            nominal_code: json::non_empty(self.code),
            account_name: json::non_empty(self.name).unwrap_or_else(|| self.account_id.clone()),
            description: json::non_empty(self.description),
            classification: classification(self.class.as_deref()),
            is_bank_account: self.account_type.as_deref() == Some("BANK"),
            account_type: json::non_empty(self.account_type),
            status,
            currency: json::non_empty(self.currency_code),
            // The Accounts endpoint carries no balance (the Trial Balance report does: NOTES.md).
            current_balance: None,
            source_modified_date: updated(self.updated_date_utc.as_deref()),
            account_id: self.account_id,
        })
    }
}

/// `GET /api.xro/2.0/TaxRates`: every tax rate in one answer (no paging).
#[derive(Deserialize)]
#[serde(rename_all = "PascalCase")]
pub(super) struct TaxRatesAnswer {
    pub(super) tax_rates: Each<XeroTaxRate>,
}

/// A tax rate as Xero writes it (`TaxRate` in Xero's OpenAPI document).
/// Xero gives it no id: its `TaxType` (`OUTPUT2`, `TAX001`) is unique in
/// the organisation and is what lines name.
#[derive(Deserialize)]
#[serde(rename_all = "PascalCase")]
pub(super) struct XeroTaxRate {
    tax_type: String,
    name: Option<String>,
    status: Option<String>,
    effective_rate: Option<Amount>,
    #[serde(default)]
    tax_components: Vec<XeroTaxComponent>,
}

#[derive(Deserialize)]
#[serde(rename_all = "PascalCase")]
struct XeroTaxComponent {
    name: Option<String>,
    rate: Option<Amount>,
    is_compound: Option<bool>,
}

impl Keyed for XeroTaxRate {
    const ID: &'static str = "/TaxType";
}

impl XeroTaxRate {
    /// Our tax rate; `None` for a `DELETED` one (a whole fetch then flags
    /// the stored copy). `PENDING` (not yet in force) counts as active.
    pub(super) fn into_record(self) -> Option<TaxRate> {
        let status = match self.status.as_deref() {
            Some("DELETED") => return None,
            Some("ARCHIVED") => TaxRateStatus::Archived,
            _ => TaxRateStatus::Active,
        };
        Some(TaxRate {
            name: json::non_empty(self.name).unwrap_or_else(|| self.tax_type.clone()),
            code: Some(self.tax_type.clone()),
            effective_tax_rate: quantity(self.effective_rate),
            components: self
                .tax_components
                .into_iter()
                .map(|component| TaxRateComponent {
                    name: json::non_empty(component.name).unwrap_or_default(),
                    rate: quantity(component.rate),
                    is_compound: component.is_compound == Some(true),
                })
                .collect(),
            status,
            // Xero's TaxRate has no modified time.
            source_modified_date: None,
            tax_rate_id: self.tax_type,
        })
    }
}
