//! Stripe's money in and its account, and how they become ours: a
//! succeeded, captured charge (`GET /v1/charges`) is a payment, allocated to
//! the invoice it paid; a succeeded refund (`GET /v1/refunds`) is a
//! negative payment, allocated to the charge it returns (`Other`: charges
//! are not records of ours); the connected account (`GET /v1/account`) is
//! the company info. Sources: `NOTES.md`, "Accounting model".

use serde::Deserialize;

use super::mapping::{date, minor, time};
use crate::data::company_info::{Address, AddressType, CompanyInfo};
use crate::data::invoices::CustomerRef;
use crate::data::payments::{AllocationType, Payment, PaymentAllocation};
use crate::platforms::kit::json;
use crate::platforms::kit::records::{Keyed, Unreadable};
use crate::timestamp::Timestamp;

impl Keyed for StripeCharge {
    const ID: &'static str = "/id";
}

impl Keyed for StripeRefund {
    const ID: &'static str = "/id";
}

/// An object Stripe gives as its id or, expanded, as the object (whose
/// document leaves `id` optional: a preview invoice has none).
#[derive(Deserialize)]
#[serde(untagged)]
enum Expandable {
    Id(String),
    Object { id: Option<String> },
}

impl Expandable {
    fn id(self) -> Option<String> {
        match self {
            Self::Id(id) => json::non_empty(Some(id)),
            Self::Object { id } => json::non_empty(id),
        }
    }
}

/// The upper-cased currency and the (UTC) date a charge or a refund cannot
/// be read without.
fn currency_and_date(
    currency: Option<&str>,
    created: Option<i64>,
) -> Result<(String, chrono::NaiveDate), Unreadable> {
    let currency = currency
        .and_then(|currency| json::non_empty(Some(currency.to_ascii_uppercase())))
        .ok_or_else(|| Unreadable::field("currency", "is missing"))?;
    let date =
        date(created).ok_or_else(|| Unreadable::field("created", "is missing or not a time"))?;
    Ok((currency, date))
}

/// A charge as `GET /v1/charges` writes it (API version 2024-06-20).
#[derive(Deserialize)]
pub(super) struct StripeCharge {
    id: String,
    amount_captured: Option<i64>,
    captured: Option<bool>,
    created: Option<i64>,
    currency: Option<String>,
    customer: Option<Expandable>,
    description: Option<String>,
    invoice: Option<Expandable>,
    receipt_number: Option<String>,
    status: Option<String>,
}

impl StripeCharge {
    /// Money that reached the account: a succeeded, captured charge (a
    /// failed or pending one moved nothing, an uncaptured one only holds).
    pub(super) fn is_money_in(&self) -> bool {
        self.status.as_deref() == Some("succeeded") && self.captured != Some(false)
    }

    /// Our payment: what was captured, allocated whole to the invoice the
    /// charge paid, if any (refunds are payments of their own).
    pub(super) fn into_record(self) -> Result<Payment, Unreadable> {
        let (currency, date) = currency_and_date(self.currency.as_deref(), self.created)?;
        let amount = minor(self.amount_captured.unwrap_or_default(), &currency)?;
        let allocations = self
            .invoice
            .and_then(Expandable::id)
            .map(|id| PaymentAllocation {
                allocation_type: AllocationType::Invoice,
                id,
                amount,
            })
            .into_iter()
            .collect();
        Ok(Payment {
            reference: json::non_empty(self.receipt_number),
            customer_ref: self
                .customer
                .and_then(|customer| CustomerRef::to(customer.id(), None)),
            account_ref: None,
            date,
            currency,
            total_amount: amount,
            allocations,
            note: json::non_empty(self.description),
            source_modified_date: None,
            payment_id: self.id,
        })
    }
}

/// A refund as `GET /v1/refunds` writes it.
#[derive(Deserialize)]
pub(super) struct StripeRefund {
    id: String,
    amount: Option<i64>,
    charge: Option<Expandable>,
    created: Option<i64>,
    currency: Option<String>,
    reason: Option<String>,
    status: Option<String>,
}

impl StripeRefund {
    /// Money that left the account: a succeeded refund (a pending one may
    /// still fail; a failed or canceled one moved nothing).
    pub(super) fn is_money_out(&self) -> bool {
        self.status.as_deref() == Some("succeeded")
    }

    /// Our negative payment, allocated to the charge it returns.
    pub(super) fn into_record(self) -> Result<Payment, Unreadable> {
        let (currency, date) = currency_and_date(self.currency.as_deref(), self.created)?;
        let amount = -minor(self.amount.unwrap_or_default(), &currency)?;
        let allocations = self
            .charge
            .and_then(Expandable::id)
            .map(|id| PaymentAllocation {
                allocation_type: AllocationType::Other,
                id,
                amount,
            })
            .into_iter()
            .collect();
        Ok(Payment {
            reference: None,
            customer_ref: None,
            account_ref: None,
            date,
            currency,
            total_amount: amount,
            allocations,
            note: json::non_empty(self.reason),
            source_modified_date: None,
            payment_id: self.id,
        })
    }
}

/// A postal address as Stripe writes it.
#[derive(Deserialize)]
struct StripeAddress {
    line1: Option<String>,
    line2: Option<String>,
    city: Option<String>,
    state: Option<String>,
    postal_code: Option<String>,
    country: Option<String>,
}

impl StripeAddress {
    fn into_address(self, address_type: AddressType) -> Address {
        Address {
            address_type,
            line1: json::non_empty(self.line1),
            line2: json::non_empty(self.line2),
            city: json::non_empty(self.city),
            region: json::non_empty(self.state),
            postal_code: json::non_empty(self.postal_code),
            country: json::non_empty(self.country),
        }
    }
}

#[derive(Deserialize)]
struct BusinessProfile {
    name: Option<String>,
    url: Option<String>,
    support_phone: Option<String>,
    support_address: Option<StripeAddress>,
}

#[derive(Deserialize)]
struct Company {
    name: Option<String>,
    phone: Option<String>,
    address: Option<StripeAddress>,
}

#[derive(Deserialize)]
struct DashboardSettings {
    display_name: Option<String>,
}

#[derive(Deserialize)]
struct Settings {
    dashboard: Option<DashboardSettings>,
}

/// The connected account as `GET /v1/account` writes it: what company info
/// reads of it.
#[derive(Deserialize)]
pub(super) struct StripeAccount {
    id: String,
    business_profile: Option<BusinessProfile>,
    company: Option<Company>,
    settings: Option<Settings>,
    default_currency: Option<String>,
    created: Option<i64>,
}

impl StripeAccount {
    /// Our company info: the public business name (else the dashboard's
    /// display name, else the legal name), the company's legal name and
    /// registered address, the support address as the street address.
    /// Stripe never returns tax or registration numbers (only whether one
    /// was provided), nor a financial year.
    pub(super) fn into_record(self) -> CompanyInfo {
        let profile = self.business_profile;
        let company = self.company;
        let legal_name = company
            .as_ref()
            .and_then(|company| json::non_empty(company.name.clone()));
        let (public_name, website, support_phone, support_address) = match profile {
            Some(profile) => (
                json::non_empty(profile.name),
                json::non_empty(profile.url),
                json::non_empty(profile.support_phone),
                profile.support_address,
            ),
            None => (None, None, None, None),
        };
        let display_name = self
            .settings
            .and_then(|settings| settings.dashboard)
            .and_then(|dashboard| json::non_empty(dashboard.display_name));
        let (company_phone, registered) = match company {
            Some(company) => (json::non_empty(company.phone), company.address),
            None => (None, None),
        };
        let addresses = registered
            .map(|address| address.into_address(AddressType::Registered))
            .into_iter()
            .chain(support_address.map(|address| address.into_address(AddressType::Street)))
            .collect();
        CompanyInfo {
            company_name: public_name
                .or(display_name)
                .or_else(|| legal_name.clone())
                .unwrap_or_else(|| self.id.clone()),
            legal_name,
            registration_number: None,
            tax_number: None,
            base_currency: self
                .default_currency
                .and_then(|currency| json::non_empty(Some(currency.to_ascii_uppercase()))),
            financial_year_start: None,
            addresses,
            phone: company_phone.or(support_phone),
            website,
            created_date: self.created.and_then(time).map(Timestamp),
            source_modified_date: None,
            company_info_id: self.id,
        }
    }
}
