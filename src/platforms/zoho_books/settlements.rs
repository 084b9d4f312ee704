//! Zoho Books' customer payments (`GET /customerpayments/{id}`) and vendor
//! payments (`GET /vendorpayments/{id}`), and how they become our payments
//! and bill payments. Their lists name only the payment: what each settles
//! (`invoices[]`, `bills[]`) is in the single payment's answer, which is
//! what these read. Sources: `NOTES.md`, "Accounting model".

use serde::Deserialize;
use serde_json::value::RawValue;

use super::mapping::PageContext;
use crate::data::accounts::AccountRef;
use crate::data::bill_payments::{BillAllocationType, BillPayment, BillPaymentAllocation};
use crate::data::invoices::CustomerRef;
use crate::data::payments::{AllocationType, Payment, PaymentAllocation};
use crate::data::suppliers::SupplierRef;
use crate::platforms::kit::json::{self, Amount, money};
use crate::platforms::kit::records::{Each, Keyed, Unreadable};

/// A page of `GET /customerpayments`: the payments' ids. The document
/// names the list `customer_payments`; Zoho's examples elsewhere write
/// `customerpayments`: either is read.
#[derive(Deserialize)]
pub(super) struct CustomerPaymentsPage {
    pub(super) code: Option<i64>,
    pub(super) message: Option<String>,
    #[serde(default, alias = "customerpayments")]
    pub(super) customer_payments: Each<PaymentId>,
    pub(super) page_context: Option<PageContext>,
}

/// A page of `GET /vendorpayments`: the payments' ids.
#[derive(Deserialize)]
pub(super) struct VendorPaymentsPage {
    pub(super) code: Option<i64>,
    pub(super) message: Option<String>,
    #[serde(default)]
    pub(super) vendorpayments: Each<PaymentId>,
    pub(super) page_context: Option<PageContext>,
}

/// What tributary reads of a payment in a list (whose record is fetched on
/// its own): its id.
#[derive(Deserialize)]
pub(super) struct PaymentId {
    pub(super) payment_id: String,
}

impl Keyed for PaymentId {
    const ID: &'static str = "/payment_id";
}

/// `GET /customerpayments/{payment_id}`'s answer.
#[derive(Deserialize)]
pub(super) struct CustomerPaymentAnswer {
    pub(super) code: Option<i64>,
    pub(super) message: Option<String>,
    pub(super) payment: Option<Box<RawValue>>,
}

/// `GET /vendorpayments/{payment_id}`'s answer.
#[derive(Deserialize)]
pub(super) struct VendorPaymentAnswer {
    pub(super) code: Option<i64>,
    pub(super) message: Option<String>,
    pub(super) vendorpayment: Option<Box<RawValue>>,
}

impl Keyed for ZohoCustomerPayment {
    const ID: &'static str = "/payment_id";
}

impl Keyed for ZohoVendorPayment {
    const ID: &'static str = "/payment_id";
}

/// A customer payment as Zoho writes it on its own.
#[derive(Deserialize)]
pub(super) struct ZohoCustomerPayment {
    payment_id: String,
    reference_number: Option<String>,
    customer_id: Option<String>,
    customer_name: Option<String>,
    account_id: Option<String>,
    account_name: Option<String>,
    date: Option<String>,
    currency_code: Option<String>,
    amount: Option<Amount>,
    description: Option<String>,
    #[serde(default, deserialize_with = "json::list_or_null")]
    invoices: Vec<AppliedInvoice>,
    last_modified_time: Option<String>,
}

/// An invoice a customer payment was applied to.
#[derive(Deserialize)]
struct AppliedInvoice {
    invoice_id: String,
    amount_applied: Option<Amount>,
}

impl ZohoCustomerPayment {
    /// Our payment: money received (positive), settling each invoice it was
    /// applied to; what is not applied stays unallocated. The account it was
    /// deposited to is in no answer the document shows, so it is read only
    /// where Zoho gives it.
    pub(super) fn into_record(self) -> Result<Payment, Unreadable> {
        let date = json::required_date(self.date.as_deref(), "date")?;
        Ok(Payment {
            reference: json::non_empty(self.reference_number),
            customer_ref: CustomerRef::to(
                json::non_empty(self.customer_id),
                json::non_empty(self.customer_name),
            ),
            account_ref: AccountRef::to(
                json::non_empty(self.account_id),
                json::non_empty(self.account_name),
            ),
            date,
            currency: self.currency_code.unwrap_or_default(),
            total_amount: money(self.amount),
            allocations: self
                .invoices
                .into_iter()
                .map(|invoice| PaymentAllocation {
                    allocation_type: AllocationType::Invoice,
                    id: invoice.invoice_id,
                    amount: money(invoice.amount_applied),
                })
                .collect(),
            note: json::non_empty(self.description),
            source_modified_date: json::timestamp(self.last_modified_time.as_deref()),
            payment_id: self.payment_id,
        })
    }
}

/// A vendor payment as Zoho writes it on its own.
#[derive(Deserialize)]
pub(super) struct ZohoVendorPayment {
    payment_id: String,
    reference_number: Option<String>,
    vendor_id: Option<String>,
    vendor_name: Option<String>,
    paid_through_account_id: Option<String>,
    paid_through_account_name: Option<String>,
    date: Option<String>,
    currency_id: Option<String>,
    currency_code: Option<String>,
    amount: Option<Amount>,
    description: Option<String>,
    #[serde(default, deserialize_with = "json::list_or_null")]
    bills: Vec<AppliedBill>,
    last_modified_time: Option<String>,
}

/// A bill a vendor payment was applied to.
#[derive(Deserialize)]
struct AppliedBill {
    bill_id: String,
    amount_applied: Option<Amount>,
}

/// The organization's currency, for payments that give only a currency id.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(super) struct BaseCurrency {
    /// Zoho's id of it.
    pub(super) id: Option<String>,
    /// Its ISO 4217 code.
    pub(super) code: String,
}

impl ZohoVendorPayment {
    /// Our bill payment: money paid (positive) from the account it was paid
    /// through, settling each bill it was applied to. The document gives
    /// a vendor payment's currency only as `currency_id`: the organization's
    /// own is read as `base`'s code, another cannot be told.
    pub(super) fn into_record(self, base: &BaseCurrency) -> Result<BillPayment, Unreadable> {
        let date = json::required_date(self.date.as_deref(), "date")?;
        let currency = match (json::non_empty(self.currency_code), self.currency_id) {
            (Some(code), _) => code,
            (None, None) => base.code.clone(),
            (None, Some(id)) if Some(&id) == base.id.as_ref() => base.code.clone(),
            (None, Some(_)) => {
                return Err(Unreadable::field(
                    "currency_id",
                    "names a currency other than the organization's, and no currency_code says which",
                ));
            }
        };
        Ok(BillPayment {
            reference: json::non_empty(self.reference_number),
            supplier_ref: SupplierRef::to(
                json::non_empty(self.vendor_id),
                json::non_empty(self.vendor_name),
            ),
            account_ref: AccountRef::to(
                json::non_empty(self.paid_through_account_id),
                json::non_empty(self.paid_through_account_name),
            ),
            date,
            currency,
            total_amount: money(self.amount),
            allocations: self
                .bills
                .into_iter()
                .map(|bill| BillPaymentAllocation {
                    allocation_type: BillAllocationType::Bill,
                    id: bill.bill_id,
                    amount: money(bill.amount_applied),
                })
                .collect(),
            note: json::non_empty(self.description),
            source_modified_date: json::timestamp(self.last_modified_time.as_deref()),
            bill_payment_id: self.payment_id,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn vendor_payment(currency: &str) -> ZohoVendorPayment {
        serde_json::from_str(&format!(
            r#"{{"payment_id": "1", "date": "2026-11-15", "amount": 150, {currency}
                "bills": [{{"bill_id": "7", "amount_applied": 150}}]}}"#
        ))
        .expect("a vendor payment")
    }

    #[test]
    fn a_vendor_payment_without_a_currency_code_takes_only_the_organizations() {
        let base = BaseCurrency {
            id: Some("99".to_owned()),
            code: "EUR".to_owned(),
        };
        let own = vendor_payment(r#""currency_id": "99","#).into_record(&base);
        assert_eq!(own.expect("readable").currency, "EUR");
        let unnamed = vendor_payment("").into_record(&base);
        assert_eq!(unnamed.expect("readable").currency, "EUR");
        let coded = vendor_payment(r#""currency_id": "100", "currency_code": "USD","#);
        assert_eq!(coded.into_record(&base).expect("readable").currency, "USD");
        let foreign = vendor_payment(r#""currency_id": "100","#).into_record(&base);
        assert_eq!(
            foreign.expect_err("no guess").field.as_deref(),
            Some("currency_id")
        );
    }
}
