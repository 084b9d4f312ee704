//! Square's payments and seller, and how they become ours: a completed
//! payment (`GET /v2/payments`) is a payment, allocated to the order it
//! paid (`Other`: Square pays orders, and an invoice's money is its
//! order's); a completed refund (`GET /v2/refunds`) a negative payment
//! allocated to the payment it returns; the seller (`GET
//! /v2/merchants/me`) and its main location the company info.
//! Sources: `NOTES.md`, "Accounting model".

use serde::Deserialize;

use super::mapping::SquareMoney;
use crate::data::company_info::{Address, AddressType, CompanyInfo};
use crate::data::invoices::CustomerRef;
use crate::data::money::Money;
use crate::data::payments::{AllocationType, Payment, PaymentAllocation};
use crate::platforms::kit::json;
use crate::platforms::kit::records::{Each, Keyed, Unreadable};

impl Keyed for SquarePayment {
    const ID: &'static str = "/id";
}

impl Keyed for SquareRefund {
    const ID: &'static str = "/id";
}

/// A page of `GET /v2/payments`.
#[derive(Deserialize)]
pub(super) struct PaymentsPage {
    #[serde(default)]
    pub(super) payments: Each<SquarePayment>,
    pub(super) cursor: Option<String>,
}

/// A page of `GET /v2/refunds`.
#[derive(Deserialize)]
pub(super) struct RefundsPage {
    #[serde(default)]
    pub(super) refunds: Each<SquareRefund>,
    pub(super) cursor: Option<String>,
}

/// An amount of `money` (the record's `field`) and its currency (empty
/// when Square names none, as for invoices and orders); a record without
/// the amount cannot be read.
fn amount_of(money: Option<&SquareMoney>, field: &str) -> Result<(Money, String), Unreadable> {
    let money = money.ok_or_else(|| Unreadable::field(field, "is missing"))?;
    let amount = money
        .money()
        .ok_or_else(|| Unreadable::field(field, "is too large to keep"))?;
    Ok((amount, money.currency().unwrap_or_default()))
}

/// A payment as `GET /v2/payments` writes it.
#[derive(Deserialize)]
pub(super) struct SquarePayment {
    id: String,
    created_at: Option<String>,
    updated_at: Option<String>,
    total_money: Option<SquareMoney>,
    status: Option<String>,
    order_id: Option<String>,
    customer_id: Option<String>,
    receipt_number: Option<String>,
    note: Option<String>,
}

impl SquarePayment {
    /// Money that reached the seller: a `COMPLETED` payment (`APPROVED` is
    /// only authorized, `PENDING` not settled, `CANCELED` and `FAILED` moved
    /// nothing).
    pub(super) fn is_money_in(&self) -> bool {
        self.status.as_deref() == Some("COMPLETED")
    }

    /// Our payment: its total (the amount and the tip), allocated whole to
    /// the order it paid, if any.
    pub(super) fn into_record(self) -> Result<Payment, Unreadable> {
        let date = json::required_date(self.created_at.as_deref(), "created_at")?;
        let (amount, currency) = amount_of(self.total_money.as_ref(), "total_money")?;
        let allocations = json::non_empty(self.order_id)
            .map(|id| PaymentAllocation {
                allocation_type: AllocationType::Other,
                id,
                amount,
            })
            .into_iter()
            .collect();
        Ok(Payment {
            reference: json::non_empty(self.receipt_number),
            customer_ref: CustomerRef::to(json::non_empty(self.customer_id), None),
            account_ref: None,
            date,
            currency,
            total_amount: amount,
            allocations,
            note: json::non_empty(self.note),
            source_modified_date: json::timestamp(self.updated_at.as_deref()),
            payment_id: self.id,
        })
    }
}

/// A refund as `GET /v2/refunds` writes it.
#[derive(Deserialize)]
pub(super) struct SquareRefund {
    id: String,
    status: Option<String>,
    amount_money: Option<SquareMoney>,
    payment_id: Option<String>,
    reason: Option<String>,
    created_at: Option<String>,
    updated_at: Option<String>,
}

impl SquareRefund {
    /// Money that went back: a `COMPLETED` refund (`PENDING` awaits
    /// approval; `REJECTED` and `FAILED` moved nothing).
    pub(super) fn is_money_out(&self) -> bool {
        self.status.as_deref() == Some("COMPLETED")
    }

    /// Our negative payment, allocated to the payment it returns.
    pub(super) fn into_record(self) -> Result<Payment, Unreadable> {
        let date = json::required_date(self.created_at.as_deref(), "created_at")?;
        let (amount, currency) = amount_of(self.amount_money.as_ref(), "amount_money")?;
        let amount = -amount;
        let allocations = json::non_empty(self.payment_id)
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
            source_modified_date: json::timestamp(self.updated_at.as_deref()),
            payment_id: self.id,
        })
    }
}

/// `GET /v2/merchants/me`.
#[derive(Deserialize)]
pub(super) struct MerchantAnswer {
    pub(super) merchant: Merchant,
}

/// The seller (`Merchant`).
#[derive(Deserialize)]
pub(super) struct Merchant {
    id: String,
    business_name: Option<String>,
    currency: Option<String>,
    pub(super) main_location_id: Option<String>,
    created_at: Option<String>,
}

/// `GET /v2/locations`, each location with what company info reads.
#[derive(Deserialize)]
pub(super) struct LocationDetails {
    #[serde(default, deserialize_with = "json::list_or_null")]
    pub(super) locations: Vec<LocationDetail>,
}

/// A location's address, phone, site and tax ids.
#[derive(Deserialize)]
pub(super) struct LocationDetail {
    pub(super) id: String,
    address: Option<SquareAddress>,
    phone_number: Option<String>,
    website_url: Option<String>,
    tax_ids: Option<TaxIds>,
}

#[derive(Deserialize)]
struct SquareAddress {
    address_line_1: Option<String>,
    address_line_2: Option<String>,
    locality: Option<String>,
    administrative_district_level_1: Option<String>,
    postal_code: Option<String>,
    country: Option<String>,
}

/// The location's tax ids (`TaxIds`): the EU VAT number, and France's,
/// Spain's and Japan's registrations.
#[derive(Deserialize)]
struct TaxIds {
    eu_vat: Option<String>,
    fr_siret: Option<String>,
    es_nif: Option<String>,
    jp_qii: Option<String>,
}

impl Merchant {
    /// Our company info: the seller's business name and currency, with its
    /// main location's address (`Street`), phone, site and tax ids (the EU
    /// VAT number, or Spain's NIF or Japan's qualified invoice issuer number,
    /// as the tax number; France's SIRET as the registration number). Square
    /// gives no legal name and no financial year.
    pub(super) fn into_record(self, main: Option<LocationDetail>) -> CompanyInfo {
        let (address, phone, website, tax_ids) = match main {
            Some(location) => (
                location.address,
                location.phone_number,
                location.website_url,
                location.tax_ids,
            ),
            None => (None, None, None, None),
        };
        let (tax_number, registration_number) = match tax_ids {
            Some(ids) => (
                json::non_empty(ids.eu_vat)
                    .or_else(|| json::non_empty(ids.es_nif))
                    .or_else(|| json::non_empty(ids.jp_qii)),
                json::non_empty(ids.fr_siret),
            ),
            None => (None, None),
        };
        CompanyInfo {
            company_name: json::non_empty(self.business_name).unwrap_or_else(|| self.id.clone()),
            legal_name: None,
            registration_number,
            tax_number,
            base_currency: json::non_empty(self.currency),
            financial_year_start: None,
            addresses: address
                .map(|address| Address {
                    address_type: AddressType::Street,
                    line1: json::non_empty(address.address_line_1),
                    line2: json::non_empty(address.address_line_2),
                    city: json::non_empty(address.locality),
                    region: json::non_empty(address.administrative_district_level_1),
                    postal_code: json::non_empty(address.postal_code),
                    country: json::non_empty(address.country),
                })
                .into_iter()
                .collect(),
            phone: json::non_empty(phone),
            website: json::non_empty(website),
            created_date: json::timestamp(self.created_at.as_deref()),
            source_modified_date: None,
            company_info_id: self.id,
        }
    }
}
