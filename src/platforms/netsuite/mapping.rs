//! NetSuite's SuiteQL answers and how they become our records. SuiteQL rows hold
//! every value as text (null columns are left out); invoices are `transaction` rows
//! of type `CustInvc` whose status letter (`A` open, `B` paid in full) is told apart
//! by what is unpaid; their lines are `transactionline` rows, which NetSuite stores
//! with the sign of the accounting entry (negative on a sale), so they are negated.

use std::collections::HashMap;

use serde::Deserialize;

use crate::data::customers::{Customer, CustomerStatus};
use crate::data::invoices::{CustomerRef, Invoice, InvoiceStatus, LineItem};
use crate::data::money::{Money, Quantity};
use crate::platforms::kit::json::{self, Amount, money};
use crate::platforms::kit::records::{Each, Keyed, Unreadable};
use crate::platforms::kit::status::{StatusTable, by_balance, lookup};

/// NetSuite's invoice status letters that need no amounts (`B`: "Paid In Full").
/// `A` ("Open") depends on what is unpaid ([`invoice_status`]).
const STATUSES: StatusTable = &[("B", InvoiceStatus::Paid)];

/// Display texts (`BUILTIN.DF(status)`) for statuses whose letters the sources
/// do not give; matched when the letter is not one we know.
const STATUS_TEXTS: StatusTable = &[
    ("Pending Approval", InvoiceStatus::Draft),
    ("Rejected", InvoiceStatus::Void),
    ("Voided", InvoiceStatus::Void),
    ("Paid In Full", InvoiceStatus::Paid),
];

/// Our status of a NetSuite invoice: its letter (`A`, or `CustInvc:A`), else its
/// display text, else `Unknown`.
pub(super) fn invoice_status(
    status: &str,
    text: &str,
    total: Money,
    unpaid: Money,
) -> InvoiceStatus {
    let letter = status.strip_prefix("CustInvc:").unwrap_or(status);
    if letter == "A" {
        return by_balance(total, unpaid);
    }
    lookup(STATUSES, letter)
        .or_else(|| {
            STATUS_TEXTS
                .iter()
                .find(|(words, _)| text.contains(words))
                .map(|(_, ours)| *ours)
        })
        .unwrap_or(InvoiceStatus::Unknown)
}

/// A page of `POST /services/rest/query/v1/suiteql`.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase", bound = "T: serde::de::DeserializeOwned")]
pub(super) struct SuiteQlPage<T> {
    pub(super) items: Each<T>,
    #[serde(default)]
    pub(super) has_more: bool,
    pub(super) total_results: Option<u64>,
}

impl Keyed for NsInvoice {
    const ID: &'static str = "/id";
}

impl Keyed for NsCustomer {
    const ID: &'static str = "/id";
}

/// A line is named by its invoice: an unreadable line makes the invoice unreadable.
impl Keyed for NsLine {
    const ID: &'static str = "/transaction";
}

/// A row of the invoice query (`transaction`, type `CustInvc`).
#[derive(Deserialize)]
pub(super) struct NsInvoice {
    pub(super) id: String,
    tranid: Option<String>,
    entity: Option<String>,
    entityname: Option<String>,
    trandate: Option<String>,
    duedate: Option<String>,
    currency: Option<String>,
    foreigntotal: Option<Amount>,
    foreignamountunpaid: Option<Amount>,
    status: Option<String>,
    statusname: Option<String>,
    memo: Option<String>,
    lastmodifieddate: Option<String>,
}

/// A row of the line query (`transactionline`, not the main line).
#[derive(Deserialize)]
pub(super) struct NsLine {
    pub(super) transaction: String,
    memo: Option<String>,
    itemname: Option<String>,
    quantity: Option<Amount>,
    rate: Option<Amount>,
    foreignamount: Option<Amount>,
    taxline: Option<String>,
}

/// The negation of an optional amount (NetSuite's sale lines are credits).
fn negated(value: Option<Amount>) -> Money {
    Money(0) - money(value)
}

/// An invoice's lines and the tax its tax lines add up to.
#[derive(Default)]
pub(super) struct Lines {
    items: Vec<LineItem>,
    tax: Money,
}

/// The line rows of a page, by invoice id.
pub(super) fn lines_by_invoice(rows: Vec<NsLine>) -> HashMap<String, Lines> {
    let mut by_invoice: HashMap<String, Lines> = HashMap::new();
    for row in rows {
        let lines = by_invoice.entry(row.transaction).or_default();
        let amount = negated(row.foreignamount);
        if row.taxline.as_deref() == Some("T") {
            lines.tax = lines.tax + amount;
            continue;
        }
        let quantity = row.quantity.map_or(Quantity::default(), |units| {
            Quantity(0 - units.quantity().0)
        });
        lines.items.push(LineItem {
            description: json::non_empty(row.memo)
                .or_else(|| json::non_empty(row.itemname))
                .unwrap_or_default(),
            unit_amount: money(row.rate),
            quantity,
            discount_amount: Money(0),
            sub_total: amount,
            tax_amount: Money(0),
            total_amount: amount,
            account_ref: None,
        });
    }
    by_invoice
}

impl NsInvoice {
    /// Our invoice, with its lines; one without a readable `trandate` cannot be read.
    pub(super) fn into_record(self, lines: Option<Lines>) -> Result<Invoice, Unreadable> {
        let issue_date = self
            .trandate
            .as_deref()
            .and_then(json::date)
            .ok_or_else(|| Unreadable::field("trandate", "is missing or not a date"))?;
        let total = money(self.foreigntotal);
        let unpaid = money(self.foreignamountunpaid);
        let Lines { items, tax } = lines.unwrap_or_default();
        let status = invoice_status(
            self.status.as_deref().unwrap_or(""),
            self.statusname.as_deref().unwrap_or(""),
            total,
            unpaid,
        );
        Ok(Invoice {
            invoice_number: json::non_empty(self.tranid),
            customer_ref: CustomerRef::to(
                json::non_empty(self.entity),
                json::non_empty(self.entityname),
            ),
            issue_date,
            due_date: self.duedate.as_deref().and_then(json::date),
            paid_on_date: None,
            currency: json::non_empty(self.currency).unwrap_or_default(),
            sub_total: total - tax,
            total_tax_amount: tax,
            total_amount: total,
            amount_due: unpaid,
            status,
            line_items: items,
            note: json::non_empty(self.memo),
            source_modified_date: json::timestamp(self.lastmodifieddate.as_deref()),
            invoice_id: self.id,
        })
    }
}

/// The name of an entity (a customer or vendor) with internal id `id`: a
/// person (`isperson` `T`) by first and last name, else the company's name,
/// else its `entityid`, else the id.
pub(super) fn entity_name(
    id: &str,
    isperson: Option<&str>,
    [first, last]: [Option<String>; 2],
    [company, entity_id]: [Option<String>; 2],
) -> String {
    let person = if isperson == Some("T") {
        let parts: Vec<String> = [first, last]
            .into_iter()
            .filter_map(json::non_empty)
            .collect();
        (!parts.is_empty()).then(|| parts.join(" "))
    } else {
        None
    };
    person
        .or_else(|| json::non_empty(company))
        .or_else(|| json::non_empty(entity_id))
        .unwrap_or_else(|| id.to_owned())
}

/// A row of the customer query.
#[derive(Deserialize)]
pub(super) struct NsCustomer {
    pub(super) id: String,
    entityid: Option<String>,
    companyname: Option<String>,
    firstname: Option<String>,
    lastname: Option<String>,
    isperson: Option<String>,
    email: Option<String>,
    phone: Option<String>,
    currency: Option<String>,
    isinactive: Option<String>,
    lastmodifieddate: Option<String>,
}

impl NsCustomer {
    /// Our customer: a company by its name, a person by first and last name,
    /// else its `entityid`; inactive ones are archived.
    pub(super) fn into_record(self) -> Customer {
        Customer {
            customer_name: entity_name(
                &self.id,
                self.isperson.as_deref(),
                [self.firstname, self.lastname],
                [self.companyname, self.entityid],
            ),
            email_address: json::non_empty(self.email),
            phone: json::non_empty(self.phone),
            default_currency: json::non_empty(self.currency),
            status: if self.isinactive.as_deref() == Some("T") {
                CustomerStatus::Archived
            } else {
                CustomerStatus::Active
            },
            source_modified_date: json::timestamp(self.lastmodifieddate.as_deref()),
            customer_id: self.id,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn netsuite_statuses_map_by_letter_then_text() {
        let total = Money(1_000_000);
        assert_eq!(
            invoice_status("A", "Open", total, total),
            InvoiceStatus::Submitted
        );
        assert_eq!(
            invoice_status("CustInvc:A", "Open", total, Money(1)),
            InvoiceStatus::PartiallyPaid
        );
        assert_eq!(
            invoice_status("B", "Paid In Full", total, Money(0)),
            InvoiceStatus::Paid
        );
        assert_eq!(
            invoice_status("D", "Pending Approval", total, total),
            InvoiceStatus::Draft
        );
        assert_eq!(
            invoice_status("E", "Rejected", total, total),
            InvoiceStatus::Void
        );
        assert_eq!(
            invoice_status("V", "Voided", Money(0), Money(0)),
            InvoiceStatus::Void
        );
        assert_eq!(
            invoice_status("Z", "", total, total),
            InvoiceStatus::Unknown
        );
    }
}
