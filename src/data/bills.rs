//! Bills: purchase invoices from suppliers (accounts payable), newest issue
//! date first, filterable by status.

use std::borrow::Cow;

use chrono::NaiveDate;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::accounts::AccountRef;
use super::money::{Money, Quantity};
use super::suppliers::SupplierRef;
use super::tax_rates::TaxRateRef;
use super::{Definition, Direction, Filter, FilterValues, Spec, vocabulary};
use crate::timestamp::Timestamp;

/// The bills data type.
pub struct Bills;

impl Definition for Bills {
    type Record = Bill;

    const SPEC: &'static Spec = &Spec {
        name: "bills",
        noun: "bills",
        id_field: "billId",
        order: Direction::Descending,
        order_description: "newest issue date first (ties broken by connection, then bill id)",
        filter: Some(Filter {
            parameter: "status",
            description: "Only bills in this status",
            values: FilterValues::Vocabulary(BillStatus::NAMES),
        }),
        keys: &[
            "supplierRef.id",
            "issueDate",
            "dueDate",
            "currency",
            "totalAmount",
            "amountDue",
            "status",
            "modifiedDate",
        ],
    };

    fn id(record: &Bill) -> &str {
        &record.bill_id
    }

    fn sort_key(record: &Bill) -> String {
        record.issue_date.format("%Y-%m-%d").to_string()
    }

    fn filter_value(record: &Bill) -> Option<Cow<'static, str>> {
        Some(Cow::Borrowed(record.status.as_str()))
    }
}

vocabulary! {
    /// Where a bill stands.
    pub enum BillStatus {
        /// Entered, not yet approved for payment.
        Draft,
        /// Approved, nothing paid: amountDue = totalAmount.
        Open,
        /// Part paid or credited: 0 < amountDue < totalAmount.
        PartiallyPaid,
        /// Fully paid or credited: amountDue = 0.
        Paid,
        /// Cancelled.
        Void,
        /// The platform's status has no equivalent.
        Unknown,
    }
}

impl From<super::invoices::InvoiceStatus> for BillStatus {
    /// The same stage of a purchase invoice (platforms that keep sales and
    /// purchase invoices alike, Xero's `ACCREC` and `ACCPAY`, tell them
    /// apart the same way): a sent invoice is an open bill.
    fn from(status: super::invoices::InvoiceStatus) -> Self {
        use super::invoices::InvoiceStatus;
        match status {
            InvoiceStatus::Draft => Self::Draft,
            InvoiceStatus::Submitted => Self::Open,
            InvoiceStatus::PartiallyPaid => Self::PartiallyPaid,
            InvoiceStatus::Paid => Self::Paid,
            InvoiceStatus::Void => Self::Void,
            InvoiceStatus::Unknown => Self::Unknown,
        }
    }
}

/// A bill (purchase invoice) synced from an accounting platform. Amounts are
/// exact decimals, as strings, in the bill's currency; `amountDue` is
/// `totalAmount` less what was paid and credited against it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Bill {
    /// The platform's id of the bill (what bill payments' `billRef.id` names).
    pub bill_id: String,
    /// The supplier's number or reference for it; null when the platform gives none.
    pub reference: Option<String>,
    /// The supplier who billed; null when the platform gives none.
    pub supplier_ref: Option<SupplierRef>,
    /// Issue date.
    pub issue_date: NaiveDate,
    /// Due date; null if none.
    pub due_date: Option<NaiveDate>,
    /// When it was fully paid; null unless `Paid` (or when the platform does not say).
    pub paid_on_date: Option<NaiveDate>,
    /// ISO 4217 currency code.
    pub currency: String,
    /// Total before tax.
    pub sub_total: Money,
    /// Total tax.
    pub tax_amount: Money,
    /// Total including tax.
    pub total_amount: Money,
    /// Amount still owed: the total less payments and credits.
    pub amount_due: Money,
    /// Status in tributary's vocabulary.
    pub status: BillStatus,
    /// The bill's lines.
    pub line_items: Vec<BillLineItem>,
    /// A note on the bill; null if none.
    pub note: Option<String>,
    /// When the platform's record last changed; null when the platform does not say.
    pub source_modified_date: Option<Timestamp>,
}

/// One line of a bill. Amounts are exact decimals, as strings.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct BillLineItem {
    /// What was bought.
    pub description: String,
    /// Price of one unit, before tax.
    pub unit_amount: Money,
    /// Units bought.
    pub quantity: Quantity,
    /// Discount on the line.
    pub discount_amount: Money,
    /// Line total before tax.
    pub sub_total: Money,
    /// Tax on the line.
    pub tax_amount: Money,
    /// Line total including tax.
    pub total_amount: Money,
    /// The account the line is posted to (an expense or asset account of the same connection); null when the platform gives none.
    pub account_ref: Option<AccountRef>,
    /// The tax rate applied (a tax rate of the same connection); null when the platform gives none.
    pub tax_rate_ref: Option<TaxRateRef>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn statuses_are_read_case_insensitively() {
        assert_eq!(BillStatus::parse_loose("open"), Some(BillStatus::Open));
        assert_eq!(
            BillStatus::parse_loose("partiallypaid"),
            Some(BillStatus::PartiallyPaid)
        );
        assert_eq!(BillStatus::parse_loose("submitted"), None);
    }
}
