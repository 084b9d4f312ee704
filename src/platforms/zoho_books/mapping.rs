//! Zoho Books' sales answers and how they become our records: invoices,
//! and contacts as customers or suppliers. Its invoice list
//! carries totals but no lines, so invoices have no line items; a sent
//! invoice whose balance is below its total is part paid, whatever its
//! overdue state.

use serde::Deserialize;

use crate::data::customers::{Customer, CustomerStatus};
use crate::data::invoices::{CustomerRef, Invoice, InvoiceStatus};
use crate::data::money::Money;
use crate::data::suppliers::{Supplier, SupplierStatus};
use crate::platforms::connector::ConnectorError;
use crate::platforms::kit::json::{self, Amount, money};
use crate::platforms::kit::records::{Each, Keyed, Unreadable};
use crate::platforms::kit::status::{StatusTable, lookup};

/// Zoho's invoice statuses that need no amounts; `sent`, `viewed`,
/// `overdue` and `unpaid` depend on the balance ([`invoice_status`]).
const STATUSES: StatusTable = &[
    ("draft", InvoiceStatus::Draft),
    ("pending_approval", InvoiceStatus::Draft),
    ("approved", InvoiceStatus::Draft),
    ("partially_paid", InvoiceStatus::PartiallyPaid),
    ("paid", InvoiceStatus::Paid),
    ("void", InvoiceStatus::Void),
];

/// Zoho's invoice status, with its balance.
pub(super) fn invoice_status(status: &str, total: Money, balance: Money) -> InvoiceStatus {
    match status {
        "sent" | "viewed" | "overdue" | "unpaid" if balance > Money(0) && balance < total => {
            InvoiceStatus::PartiallyPaid
        }
        "sent" | "viewed" | "overdue" | "unpaid" => InvoiceStatus::Submitted,
        other => lookup(STATUSES, other).unwrap_or(InvoiceStatus::Unknown),
    }
}

/// Zoho answers `code` 0 on success; anything else is an error in words.
pub(super) fn check_code(code: Option<i64>, message: Option<String>) -> Result<(), ConnectorError> {
    match code {
        None | Some(0) => Ok(()),
        Some(code) => Err(ConnectorError::Failed(format!(
            "Zoho Books answered code {code}: {}",
            message.unwrap_or_default()
        ))),
    }
}

/// Where a page stands.
#[derive(Deserialize)]
pub(super) struct PageContext {
    #[serde(default)]
    pub(super) has_more_page: bool,
}

/// A page of `GET /invoices`.
#[derive(Deserialize)]
pub(super) struct InvoicesPage {
    pub(super) code: Option<i64>,
    pub(super) message: Option<String>,
    #[serde(default)]
    pub(super) invoices: Each<ZohoInvoice>,
    pub(super) page_context: Option<PageContext>,
}

/// A page of `GET /contacts`.
#[derive(Deserialize)]
pub(super) struct ContactsPage {
    pub(super) code: Option<i64>,
    pub(super) message: Option<String>,
    #[serde(default)]
    pub(super) contacts: Each<ZohoContact>,
    pub(super) page_context: Option<PageContext>,
}

/// `GET /organizations`'s answer.
#[derive(Deserialize)]
pub(super) struct OrganizationsAnswer {
    pub(super) code: Option<i64>,
    pub(super) message: Option<String>,
    #[serde(default)]
    pub(super) organizations: Vec<Organization>,
}

/// One organization the token reaches.
#[derive(Deserialize)]
pub(super) struct Organization {
    pub(super) organization_id: String,
    pub(super) name: Option<String>,
}

impl Keyed for ZohoInvoice {
    const ID: &'static str = "/invoice_id";
}

impl Keyed for ZohoContact {
    const ID: &'static str = "/contact_id";
}

/// An invoice as Zoho writes it in its list.
#[derive(Deserialize)]
pub(super) struct ZohoInvoice {
    invoice_id: String,
    invoice_number: Option<String>,
    customer_id: Option<String>,
    customer_name: Option<String>,
    status: Option<String>,
    date: Option<String>,
    due_date: Option<String>,
    currency_code: Option<String>,
    total: Option<Amount>,
    balance: Option<Amount>,
    sub_total: Option<Amount>,
    tax_total: Option<Amount>,
    reference_number: Option<String>,
    last_payment_date: Option<String>,
    last_modified_time: Option<String>,
}

impl ZohoInvoice {
    /// Our invoice; one without a readable date cannot be read.
    pub(super) fn into_record(self) -> Result<Invoice, Unreadable> {
        let issue_date = self
            .date
            .as_deref()
            .and_then(json::date)
            .ok_or_else(|| Unreadable::field("date", "is missing or not a date"))?;
        let total = money(self.total);
        let balance = money(self.balance);
        // The list carries totals, not lines; tax only where it is given.
        let tax = money(self.tax_total);
        let status = invoice_status(self.status.as_deref().unwrap_or(""), total, balance);
        Ok(Invoice {
            invoice_number: json::non_empty(self.invoice_number),
            customer_ref: CustomerRef::to(
                json::non_empty(self.customer_id),
                json::non_empty(self.customer_name),
            ),
            issue_date,
            due_date: self.due_date.as_deref().and_then(json::date),
            paid_on_date: if status == InvoiceStatus::Paid {
                self.last_payment_date.as_deref().and_then(json::date)
            } else {
                None
            },
            currency: self.currency_code.unwrap_or_default(),
            sub_total: self.sub_total.map_or(total - tax, Amount::money),
            total_tax_amount: tax,
            total_amount: total,
            amount_due: balance,
            status,
            line_items: Vec::new(),
            note: json::non_empty(self.reference_number),
            source_modified_date: json::timestamp(self.last_modified_time.as_deref()),
            invoice_id: self.invoice_id,
        })
    }
}

/// A contact as Zoho writes it.
#[derive(Deserialize)]
pub(super) struct ZohoContact {
    contact_id: String,
    contact_name: Option<String>,
    company_name: Option<String>,
    contact_type: Option<String>,
    status: Option<String>,
    email: Option<String>,
    phone: Option<String>,
    mobile: Option<String>,
    currency_code: Option<String>,
    last_modified_time: Option<String>,
}

impl ZohoContact {
    /// Vendors are not customers.
    pub(super) fn is_customer(&self) -> bool {
        self.contact_type.as_deref() != Some("vendor")
    }

    /// Our customer: the company name, else the contact name.
    pub(super) fn into_record(self) -> Customer {
        Customer {
            customer_name: json::non_empty(self.company_name)
                .or_else(|| json::non_empty(self.contact_name))
                .unwrap_or_else(|| self.contact_id.clone()),
            email_address: json::non_empty(self.email),
            phone: json::non_empty(self.phone).or_else(|| json::non_empty(self.mobile)),
            default_currency: json::non_empty(self.currency_code),
            status: match self.status.as_deref() {
                Some("inactive") => CustomerStatus::Archived,
                _ => CustomerStatus::Active,
            },
            source_modified_date: json::timestamp(self.last_modified_time.as_deref()),
            customer_id: self.contact_id,
        }
    }

    /// Only vendors are suppliers.
    pub(super) fn is_vendor(&self) -> bool {
        self.contact_type.as_deref() == Some("vendor")
    }

    /// Our supplier, named as a customer is.
    pub(super) fn into_supplier(self) -> Supplier {
        let customer = self.into_record();
        Supplier {
            supplier_id: customer.customer_id,
            supplier_name: customer.customer_name,
            email_address: customer.email_address,
            phone: customer.phone,
            default_currency: customer.default_currency,
            status: match customer.status {
                CustomerStatus::Archived => SupplierStatus::Archived,
                CustomerStatus::Active => SupplierStatus::Active,
            },
            source_modified_date: customer.source_modified_date,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn zoho_statuses_map_with_their_balance() {
        let total = Money(1_000_000);
        assert_eq!(invoice_status("draft", total, total), InvoiceStatus::Draft);
        assert_eq!(
            invoice_status("sent", total, total),
            InvoiceStatus::Submitted
        );
        assert_eq!(
            invoice_status("overdue", total, total),
            InvoiceStatus::Submitted
        );
        assert_eq!(
            invoice_status("overdue", total, Money(5)),
            InvoiceStatus::PartiallyPaid
        );
        assert_eq!(
            invoice_status("partially_paid", total, Money(5)),
            InvoiceStatus::PartiallyPaid
        );
        assert_eq!(invoice_status("paid", total, Money(0)), InvoiceStatus::Paid);
        assert_eq!(invoice_status("void", total, total), InvoiceStatus::Void);
        assert_eq!(
            invoice_status("whatever", total, total),
            InvoiceStatus::Unknown
        );
    }
}
