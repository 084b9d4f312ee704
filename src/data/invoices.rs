//! Invoices: sales invoices in the reference product's accounting model,
//! newest issue date first, filterable by status.

use chrono::NaiveDate;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::accounts::AccountRef;
use super::money::{Money, Quantity};
use std::borrow::Cow;

use super::{Definition, Direction, Filter, FilterValues, Spec, vocabulary};
use crate::timestamp::Timestamp;

/// The invoices data type.
pub struct Invoices;

impl Definition for Invoices {
    type Record = Invoice;

    const SPEC: &'static Spec = &Spec {
        name: "invoices",
        noun: "invoices",
        id_field: "invoiceId",
        order: Direction::Descending,
        order_description: "newest issue date first (ties broken by connection, then invoice id)",
        filter: Some(Filter {
            parameter: "status",
            description: "Only invoices in this status",
            values: FilterValues::Vocabulary(InvoiceStatus::NAMES),
        }),
        keys: &[
            "customerRef.id",
            "issueDate",
            "dueDate",
            "currency",
            "totalAmount",
            "amountDue",
            "status",
            "modifiedDate",
        ],
    };

    fn id(record: &Invoice) -> &str {
        &record.invoice_id
    }

    fn sort_key(record: &Invoice) -> String {
        record.issue_date.format("%Y-%m-%d").to_string()
    }

    fn filter_value(record: &Invoice) -> Option<Cow<'static, str>> {
        Some(Cow::Borrowed(record.status.as_str()))
    }
}

vocabulary! {
    /// Where an invoice stands.
    pub enum InvoiceStatus {
        /// Not yet sent.
        Draft,
        /// Sent, nothing paid.
        Submitted,
        /// Part paid: 0 < amountDue < totalAmount.
        PartiallyPaid,
        /// Fully paid: amountDue = 0.
        Paid,
        /// Cancelled.
        Void,
        /// The platform's status has no equivalent.
        Unknown,
    }
}

/// A sales invoice synced from a platform. Amounts are exact decimals, as strings.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Invoice {
    /// The platform's id of the invoice.
    pub invoice_id: String,
    /// The number people see; null when the platform gives none.
    pub invoice_number: Option<String>,
    /// The customer invoiced; null when the platform gives none.
    pub customer_ref: Option<CustomerRef>,
    /// Issue date.
    pub issue_date: NaiveDate,
    /// Due date; null if none.
    pub due_date: Option<NaiveDate>,
    /// When it was fully paid; null unless `Paid`.
    pub paid_on_date: Option<NaiveDate>,
    /// ISO 4217 currency code.
    pub currency: String,
    /// Total before tax.
    pub sub_total: Money,
    /// Total tax.
    pub total_tax_amount: Money,
    /// Total including tax.
    pub total_amount: Money,
    /// Amount still owed.
    pub amount_due: Money,
    /// Status in tributary's vocabulary.
    pub status: InvoiceStatus,
    /// The invoice's lines.
    pub line_items: Vec<LineItem>,
    /// A note on the invoice; null if none.
    pub note: Option<String>,
    /// When the platform's record last changed; null when the platform does not say.
    pub source_modified_date: Option<Timestamp>,
}

/// A customer an invoice is addressed to.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct CustomerRef {
    /// The platform's id of the customer.
    pub id: String,
    /// The customer's name; null when the platform gives none.
    pub company_name: Option<String>,
}

impl CustomerRef {
    /// The reference to customer `id`, when the platform names one.
    pub fn to(id: Option<String>, company_name: Option<String>) -> Option<Self> {
        id.map(|id| Self { id, company_name })
    }
}

/// One line of an invoice. Amounts are exact decimals, as strings.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[schemars(rename = "InvoiceLineItem")]
pub struct LineItem {
    /// What was sold.
    pub description: String,
    /// Price of one unit, before tax.
    pub unit_amount: Money,
    /// Units sold.
    pub quantity: Quantity,
    /// Discount on the line.
    pub discount_amount: Money,
    /// Line total before tax.
    pub sub_total: Money,
    /// Tax on the line.
    pub tax_amount: Money,
    /// Line total including tax.
    pub total_amount: Money,
    /// The account the line posts to (its income account), of the same
    /// connection; null when the platform gives none or tributary does not
    /// sync that platform's chart of accounts yet.
    pub account_ref: Option<AccountRef>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn statuses_are_read_case_insensitively() {
        assert_eq!(
            InvoiceStatus::parse_loose("paid"),
            Some(InvoiceStatus::Paid)
        );
        assert_eq!(
            InvoiceStatus::parse_loose("PARTIALLYPAID"),
            Some(InvoiceStatus::PartiallyPaid)
        );
        assert_eq!(InvoiceStatus::parse_loose("settled"), None);
    }

    #[test]
    fn the_sort_key_orders_as_the_issue_date() {
        let day = |d| NaiveDate::from_ymd_opt(2026, 1, d).expect("a date");
        let key = |d| day(d).format("%Y-%m-%d").to_string();
        assert!(key(9) < key(10));
    }
}
