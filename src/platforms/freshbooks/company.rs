//! FreshBooks' business as our company info: the membership of `GET
//! /auth/api/v1/users/me` whose business has the connection's account id
//! gives the name, address and phone. FreshBooks says nothing there of
//! registration or tax numbers, the currency of the books or the financial
//! year, so those are null. Sources: `NOTES.md`, "Accounting model".

use super::mapping::{Business, BusinessAddress};
use crate::data::company_info::{Address, AddressType, CompanyInfo};
use crate::platforms::kit::json;

impl BusinessAddress {
    /// Our address, when FreshBooks gives any part of one; its type is not
    /// said. The country is FreshBooks' name for it.
    fn into_address(self) -> Option<Address> {
        let address = Address {
            address_type: AddressType::Unknown,
            line1: json::non_empty(self.street),
            line2: None,
            city: json::non_empty(self.city),
            region: json::non_empty(self.province),
            postal_code: json::non_empty(self.postal_code),
            country: json::non_empty(self.country),
        };
        let given = [
            &address.line1,
            &address.city,
            &address.region,
            &address.postal_code,
            &address.country,
        ]
        .iter()
        .any(|part| part.is_some());
        given.then_some(address)
    }
}

impl Business {
    /// Our company info for the business of `account_id`, named by its
    /// business name (else the account id).
    pub(super) fn into_company(self, account_id: &str) -> CompanyInfo {
        CompanyInfo {
            company_info_id: account_id.to_owned(),
            company_name: json::non_empty(self.name).unwrap_or_else(|| account_id.to_owned()),
            legal_name: None,
            registration_number: None,
            tax_number: None,
            base_currency: None,
            financial_year_start: None,
            addresses: self
                .address
                .and_then(BusinessAddress::into_address)
                .into_iter()
                .collect(),
            phone: self
                .phone_number
                .and_then(|phone| json::non_empty(phone.phone_number)),
            website: None,
            created_date: None,
            source_modified_date: None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_empty_address_is_no_address() {
        let business: Business = serde_json::from_str(
            r#"{"account_id": "zDmNq", "name": "", "address": {"street": "", "city": null},
                "phone_number": {"phone_number": null}}"#,
        )
        .expect("a business");
        let company = business.into_company("zDmNq");
        assert_eq!(company.company_name, "zDmNq");
        assert!(company.addresses.is_empty());
        assert_eq!(company.phone, None);
    }
}
