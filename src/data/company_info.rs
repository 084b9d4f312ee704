//! Company info: one record per connection describing the organization at
//! the platform (names, registration and tax numbers, base currency,
//! financial year, addresses); by company name.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::{Definition, Direction, Spec, vocabulary};
use crate::timestamp::Timestamp;

/// The company info data type.
pub struct CompanyInfos;

impl Definition for CompanyInfos {
    type Record = CompanyInfo;

    const SPEC: &'static Spec = &Spec {
        name: "companyInfo",
        noun: "company info",
        id_field: "companyInfoId",
        order: Direction::Ascending,
        order_description: "by company name (one record per connection; ties broken by connection)",
        filter: None,
        keys: &[],
    };

    fn id(record: &CompanyInfo) -> &str {
        &record.company_info_id
    }

    fn sort_key(record: &CompanyInfo) -> String {
        record.company_name.clone()
    }
}

vocabulary! {
    /// What an address is for.
    pub enum AddressType {
        /// Where the organization is registered.
        Registered,
        /// Where it trades (its street address).
        Street,
        /// Where its post goes.
        Postal,
        /// Where it is billed.
        Billing,
        /// The platform does not say.
        Unknown,
    }
}

/// An address of the organization.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Address {
    /// What the address is for.
    #[serde(rename = "type")]
    pub address_type: AddressType,
    /// The first line; null when the platform gives none.
    pub line1: Option<String>,
    /// The other lines, joined; null when there are none.
    pub line2: Option<String>,
    /// Town or city; null when the platform gives none.
    pub city: Option<String>,
    /// State, county or region; null when the platform gives none.
    pub region: Option<String>,
    /// Postal code; null when the platform gives none.
    pub postal_code: Option<String>,
    /// Country, as the platform writes it; null when it gives none.
    pub country: Option<String>,
}

/// The day a financial year starts, every year.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct YearStart {
    /// Month, 1 to 12.
    pub month: u32,
    /// Day of the month, 1 to 31.
    pub day: u32,
}

/// The organization a connection reaches, as its platform describes it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct CompanyInfo {
    /// The platform's id of the organization (Xero's organisation id, QuickBooks' realm id).
    pub company_info_id: String,
    /// The name it trades under.
    pub company_name: String,
    /// Its registered legal name; null when the platform gives none.
    pub legal_name: Option<String>,
    /// Its company registration number; null when the platform gives none.
    pub registration_number: Option<String>,
    /// Its tax (VAT, GST, EIN) number; null when the platform gives none.
    pub tax_number: Option<String>,
    /// ISO 4217 code of the currency its books are kept in; null when the platform does not say.
    pub base_currency: Option<String>,
    /// When its financial year starts; null when the platform does not say.
    pub financial_year_start: Option<YearStart>,
    /// Its addresses.
    pub addresses: Vec<Address>,
    /// Its main phone number; null if none.
    pub phone: Option<String>,
    /// Its website; null if none.
    pub website: Option<String>,
    /// When the organization was created at the platform; null when the platform does not say.
    pub created_date: Option<Timestamp>,
    /// When the platform's record last changed; null when the platform does not say.
    pub source_modified_date: Option<Timestamp>,
}

impl YearStart {
    /// The day after a financial year's last day (`end_month`/`end_day`):
    /// 31 March ends a year that starts on 1 April; the last day of
    /// February, one that starts on 1 March. `None` for a day no month has.
    pub fn after_year_end(end_month: u32, end_day: u32) -> Option<Self> {
        const DAYS: [u32; 12] = [31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];
        let days = *DAYS.get(end_month.checked_sub(1)? as usize)?;
        if end_day == 0 || end_day > days {
            return None;
        }
        let last_of_month = end_day == days || (end_month == 2 && end_day == 28);
        Some(if last_of_month {
            Self {
                month: end_month % 12 + 1,
                day: 1,
            }
        } else {
            Self {
                month: end_month,
                day: end_day + 1,
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_year_starts_the_day_after_the_last_one_ends() {
        let start = |month, day| Some(YearStart { month, day });
        assert_eq!(YearStart::after_year_end(3, 31), start(4, 1));
        assert_eq!(YearStart::after_year_end(12, 31), start(1, 1));
        assert_eq!(YearStart::after_year_end(2, 28), start(3, 1));
        assert_eq!(YearStart::after_year_end(2, 29), start(3, 1));
        assert_eq!(YearStart::after_year_end(4, 5), start(4, 6));
        assert_eq!(YearStart::after_year_end(4, 31), None);
        assert_eq!(YearStart::after_year_end(13, 1), None);
        assert_eq!(YearStart::after_year_end(0, 1), None);
    }
}
