//! FreshBooks' purchases and how they become ours: bill vendors (`GET
//! …/bill_vendors/bill_vendors`) are suppliers, bills (`…/bills/bills`,
//! lines and the payments against each in the list) keep FreshBooks'
//! subtotal, tax and outstanding amounts, and bill payments
//! (`…/bill_payments/bill_payments`) settle one bill each. Sources:
//! `NOTES.md`, "Accounting model".

use std::collections::HashMap;

use serde::Deserialize;

use super::mapping::{DELETED, FbId, FbMoney, amount, eastern, utc};
use crate::data::bill_payments::{BillAllocationType, BillPayment, BillPaymentAllocation};
use crate::data::bills::{Bill, BillLineItem, BillStatus};
use crate::data::money::Money;
use crate::data::suppliers::{Supplier, SupplierRef, SupplierStatus};
use crate::platforms::kit::json::{self, Amount, quantity};
use crate::platforms::kit::records::{Each, Keyed, Unreadable};
use crate::platforms::kit::status::find;

impl Keyed for FreshBooksVendor {
    const ID: &'static str = "/vendorid";
}

impl Keyed for FreshBooksBill {
    const ID: &'static str = "/id";
}

impl Keyed for FreshBooksBillPayment {
    const ID: &'static str = "/id";
}

/// FreshBooks' bill statuses (`unpaid`, `overdue`, `partial`, `paid`: it
/// has no draft) as ours; a deleted bill is void whatever its status.
const BILL_STATUSES: &[(&str, BillStatus)] = &[
    ("unpaid", BillStatus::Open),
    ("overdue", BillStatus::Open),
    ("partial", BillStatus::PartiallyPaid),
    ("paid", BillStatus::Paid),
];

/// A page of `GET …/bill_vendors/bill_vendors`.
#[derive(Deserialize)]
pub(super) struct VendorsPage {
    /// The vendors.
    #[serde(default)]
    pub(super) bill_vendors: Each<FreshBooksVendor>,
    /// How many pages the list has.
    pub(super) pages: Option<u64>,
    /// How many vendors the list has.
    pub(super) total: Option<u64>,
}

/// A page of `GET …/bills/bills`.
#[derive(Deserialize)]
pub(super) struct BillsPage {
    /// The bills.
    #[serde(default)]
    pub(super) bills: Each<FreshBooksBill>,
    /// How many pages the list has.
    pub(super) pages: Option<u64>,
    /// How many bills the list has.
    pub(super) total: Option<u64>,
}

/// A page of `GET …/bill_payments/bill_payments`.
#[derive(Deserialize)]
pub(super) struct BillPaymentsPage {
    /// The bill payments.
    #[serde(default)]
    pub(super) bill_payments: Each<FreshBooksBillPayment>,
    /// How many pages the list has (its `total` counts the deleted
    /// payments left out, so it is not read).
    pub(super) pages: Option<u64>,
}

/// A bill vendor as FreshBooks writes it.
#[derive(Deserialize)]
pub(super) struct FreshBooksVendor {
    vendorid: i64,
    vendor_name: Option<String>,
    primary_contact_first_name: Option<String>,
    primary_contact_last_name: Option<String>,
    primary_contact_email: Option<String>,
    phone: Option<String>,
    currency_code: Option<String>,
    vis_state: Option<i64>,
    updated_at: Option<String>,
}

impl FreshBooksVendor {
    /// Our supplier: the vendor's name, else its primary contact's;
    /// `vis_state` other than 0 (deleted, archived) is archived.
    /// `updated_at` is US/Eastern, as the SDK reads it.
    pub(super) fn into_record(self) -> Supplier {
        let supplier_id = self.vendorid.to_string();
        let contact = [
            self.primary_contact_first_name,
            self.primary_contact_last_name,
        ]
        .into_iter()
        .filter_map(json::non_empty)
        .collect::<Vec<_>>()
        .join(" ");
        Supplier {
            supplier_name: json::non_empty(self.vendor_name)
                .or_else(|| json::non_empty(Some(contact)))
                .unwrap_or_else(|| supplier_id.clone()),
            email_address: json::non_empty(self.primary_contact_email),
            phone: json::non_empty(self.phone),
            default_currency: json::non_empty(self.currency_code),
            status: match self.vis_state {
                None | Some(0) => SupplierStatus::Active,
                Some(_) => SupplierStatus::Archived,
            },
            source_modified_date: self.updated_at.as_deref().and_then(eastern),
            supplier_id,
        }
    }
}

/// The vendor a bill carries (`include[]=vendor`).
#[derive(Deserialize)]
struct BillVendor {
    vendor_name: Option<String>,
}

/// A payment as a bill lists it.
#[derive(Deserialize)]
struct PaymentOfBill {
    paid_date: Option<String>,
    vis_state: Option<i64>,
}

/// A bill line.
#[derive(Deserialize)]
struct FreshBooksBillLine {
    category: Option<String>,
    description: Option<String>,
    quantity: Option<Amount>,
    unit_cost: Option<FbMoney>,
    amount: Option<FbMoney>,
    total_amount: Option<FbMoney>,
    tax_amount1: Option<FbMoney>,
    tax_amount2: Option<FbMoney>,
}

impl FreshBooksBillLine {
    /// Our line: FreshBooks gives its amount before tax, both taxes and
    /// the total. A line names an expense category, not a ledger account,
    /// so it has no account reference; nor does it name a tax's id.
    fn into_line(self) -> BillLineItem {
        let sub_total = amount(self.amount);
        let tax_amount = amount(self.tax_amount1) + amount(self.tax_amount2);
        let total_amount = match self.total_amount {
            Some(total) => amount(Some(total)),
            None => sub_total + tax_amount,
        };
        let description = match (
            json::non_empty(self.category),
            json::non_empty(self.description),
        ) {
            (Some(category), Some(description)) => format!("{category}: {description}"),
            (category, description) => description.or(category).unwrap_or_default(),
        };
        BillLineItem {
            description,
            unit_amount: amount(self.unit_cost),
            quantity: quantity(self.quantity),
            discount_amount: Money(0),
            sub_total,
            tax_amount,
            total_amount,
            account_ref: None,
            tax_rate_ref: None,
        }
    }
}

/// A bill as FreshBooks writes it.
#[derive(Deserialize)]
pub(super) struct FreshBooksBill {
    id: i64,
    bill_number: Option<String>,
    vendorid: Option<i64>,
    vendor: Option<BillVendor>,
    issue_date: Option<String>,
    due_date: Option<String>,
    currency_code: Option<String>,
    amount: Option<FbMoney>,
    tax_amount: Option<FbMoney>,
    total_amount: Option<FbMoney>,
    outstanding: Option<FbMoney>,
    status: Option<String>,
    vis_state: Option<i64>,
    overall_description: Option<String>,
    updated_at: Option<String>,
    #[serde(default, deserialize_with = "json::list_or_null")]
    bill_payments: Vec<PaymentOfBill>,
    #[serde(default, deserialize_with = "json::list_or_null")]
    lines: Vec<FreshBooksBillLine>,
}

/// Our status of a bill: deleted is void, else FreshBooks' word.
pub(super) fn bill_status(status: &str, vis_state: Option<i64>) -> BillStatus {
    if vis_state == Some(DELETED) {
        return BillStatus::Void;
    }
    find(BILL_STATUSES, status.trim()).unwrap_or(BillStatus::Unknown)
}

impl FreshBooksBill {
    /// What a bill payment needs of its bill: the supplier and currency.
    fn payee(&self) -> Payee {
        Payee {
            supplier_ref: SupplierRef::to(
                self.vendorid.map(|id| id.to_string()),
                self.vendor
                    .as_ref()
                    .and_then(|vendor| json::non_empty(vendor.vendor_name.clone())),
            ),
            currency: json::non_empty(self.currency_code.clone()),
        }
    }

    /// Our bill: `amount` is FreshBooks' subtotal ("excluding the taxes"),
    /// `total_amount` its total and `outstanding` what is due; paid on the
    /// latest date of its payments when paid. `updated_at` is UTC, as the
    /// SDK reads it. One without a readable `issue_date` cannot be read.
    pub(super) fn into_record(self) -> Result<Bill, Unreadable> {
        let issue_date = json::required_date(self.issue_date.as_deref(), "issue_date")?;
        let payee = self.payee();
        let status = bill_status(self.status.as_deref().unwrap_or(""), self.vis_state);
        let paid_on_date = (status == BillStatus::Paid)
            .then(|| {
                self.bill_payments
                    .iter()
                    .filter(|payment| payment.vis_state.is_none_or(|state| state == 0))
                    .filter_map(|payment| payment.paid_date.as_deref().and_then(json::date))
                    .max()
            })
            .flatten();
        Ok(Bill {
            reference: json::non_empty(self.bill_number),
            supplier_ref: payee.supplier_ref,
            issue_date,
            due_date: self.due_date.as_deref().and_then(json::date),
            paid_on_date,
            currency: payee.currency.unwrap_or_default(),
            sub_total: amount(self.amount),
            tax_amount: amount(self.tax_amount),
            total_amount: amount(self.total_amount),
            amount_due: amount(self.outstanding),
            status,
            line_items: self
                .lines
                .into_iter()
                .map(FreshBooksBillLine::into_line)
                .collect(),
            note: json::non_empty(self.overall_description),
            source_modified_date: self.updated_at.as_deref().and_then(utc),
            bill_id: self.id.to_string(),
        })
    }
}

/// Who a bill is owed to and in what currency.
pub(super) struct Payee {
    supplier_ref: Option<SupplierRef>,
    currency: Option<String>,
}

/// The payee of each of the account's bills, by bill id.
pub(super) type Payees = HashMap<String, Payee>;

/// The payees of `bills`.
pub(super) fn payees(bills: Vec<FreshBooksBill>) -> Payees {
    bills
        .into_iter()
        .map(|bill| (bill.id.to_string(), bill.payee()))
        .collect()
}

/// A bill payment as FreshBooks writes it.
#[derive(Deserialize)]
pub(super) struct FreshBooksBillPayment {
    id: i64,
    billid: Option<FbId>,
    amount: Option<FbMoney>,
    paid_date: Option<String>,
    payment_type: Option<String>,
    note: Option<String>,
    vis_state: Option<i64>,
}

impl FreshBooksBillPayment {
    /// Whether FreshBooks deleted the payment (`vis_state` 1).
    fn deleted(&self) -> bool {
        self.vis_state == Some(DELETED)
    }

    /// Our bill payment, its one allocation the bill it pays, its supplier
    /// and currency those of that bill (`payees`); `None` when deleted.
    /// FreshBooks does not say which account paid it, nor when it changed.
    /// The payment type (`Check`, `Bank Transfer`, …) is its reference.
    pub(super) fn into_record(self, payees: &Payees) -> Result<Option<BillPayment>, Unreadable> {
        if self.deleted() {
            return Ok(None);
        }
        let date = json::required_date(self.paid_date.as_deref(), "paid_date")?;
        let bill = self.billid.and_then(FbId::named);
        let payee = bill.as_ref().and_then(|bill| payees.get(bill));
        let code = self
            .amount
            .as_ref()
            .and_then(|money| json::non_empty(money.code.clone()));
        let total = amount(self.amount);
        Ok(Some(BillPayment {
            reference: json::non_empty(self.payment_type),
            supplier_ref: payee.and_then(|payee| payee.supplier_ref.clone()),
            account_ref: None,
            date,
            currency: code
                .or_else(|| payee.and_then(|payee| payee.currency.clone()))
                .unwrap_or_default(),
            total_amount: total,
            allocations: bill
                .map(|id| BillPaymentAllocation {
                    allocation_type: BillAllocationType::Bill,
                    id,
                    amount: total,
                })
                .into_iter()
                .collect(),
            note: json::non_empty(self.note),
            source_modified_date: None,
            bill_payment_id: self.id.to_string(),
        }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bill_statuses_follow_freshbooks_words_and_deleted_bills_are_void() {
        assert_eq!(bill_status("unpaid", Some(0)), BillStatus::Open);
        assert_eq!(bill_status("overdue", None), BillStatus::Open);
        assert_eq!(bill_status("partial", Some(0)), BillStatus::PartiallyPaid);
        assert_eq!(bill_status("paid", Some(0)), BillStatus::Paid);
        assert_eq!(bill_status("paid", Some(DELETED)), BillStatus::Void);
        assert_eq!(bill_status("draft", Some(0)), BillStatus::Unknown);
    }

    #[test]
    fn a_bill_line_keeps_freshbooks_amounts_and_names_its_category() {
        let line: FreshBooksBillLine = serde_json::from_str(
            r#"{"category": "Office Supplies", "description": "Paper", "quantity": 2,
                "unit_cost": {"amount": "12.50", "code": "CAD"}, "amount": {"amount": "25.00", "code": "CAD"},
                "tax_amount1": {"amount": "1.25", "code": "CAD"}, "tax_amount2": {"amount": "2.49", "code": "CAD"},
                "total_amount": {"amount": "28.74", "code": "CAD"}}"#,
        )
        .expect("a line");
        let line = line.into_line();
        assert_eq!(line.description, "Office Supplies: Paper");
        assert_eq!(line.tax_amount, Money::from_cents(374));
        assert_eq!(line.total_amount, Money::from_cents(2_874));
        assert_eq!(line.quantity, crate::data::money::Quantity::units(2));
    }
}
