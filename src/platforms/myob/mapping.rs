//! MYOB's answers and how they become our records: sale invoices (`Open`
//! and an overpaid `Credit` decided by the balance due, `Closed` paid, a
//! negative sale a credit note and not an invoice), customer cards (company
//! or individual), the company file list, and the home currency a file's
//! country implies.

use serde::Deserialize;

use crate::data::customers::{Customer, CustomerStatus};
use crate::data::invoices::{CustomerRef, Invoice, InvoiceStatus};
use crate::data::money::Money;
use crate::data::suppliers::{Supplier, SupplierStatus};
use crate::platforms::kit::json::{self, Rounded, rounded};
use crate::platforms::kit::records::{Each, Keyed, Unreadable};
use crate::platforms::kit::status::{StatusTable, by_balance, lookup};

/// MYOB's sale statuses that need no amounts. `Open` (an amount owing) and
/// `Credit` ("negative or overpaid and not settled or refunded") depend on
/// the balance due ([`invoice_status`]); a negative sale is a credit note,
/// not an invoice, and is skipped before.
const STATUSES: StatusTable = &[("Closed", InvoiceStatus::Paid)];

/// Our status of a MYOB sale invoice.
pub(super) fn invoice_status(status: &str, total: Money, balance_due: Money) -> InvoiceStatus {
    match status {
        "Open" | "Credit" => by_balance(total, balance_due),
        other => lookup(STATUSES, other).unwrap_or(InvoiceStatus::Unknown),
    }
}

/// A page of an AccountRight list (`PagedCollection` in MYOB's SDK).
#[derive(Deserialize)]
#[serde(rename_all = "PascalCase", bound = "T: serde::de::DeserializeOwned")]
pub(super) struct Paged<T> {
    pub(super) items: Each<T>,
    pub(super) next_page_link: Option<String>,
}

impl Keyed for MyobInvoice {
    const ID: &'static str = "/UID";
}

impl Keyed for MyobCard {
    const ID: &'static str = "/UID";
}

/// One company file the token reaches (`GET /accountright/`).
#[derive(Deserialize)]
#[serde(rename_all = "PascalCase")]
pub(super) struct CompanyFile {
    pub(super) id: String,
    pub(super) country: Option<String>,
}

impl CompanyFile {
    /// The file's home currency: MYOB sells AccountRight in Australia and
    /// New Zealand, and a file keeps its amounts in its country's currency
    /// (an assumption: `NOTES.md`, open questions).
    pub(super) fn currency(&self) -> Option<&'static str> {
        match self.country.as_deref().map(str::trim) {
            Some(country) if country.eq_ignore_ascii_case("AU") => Some("AUD"),
            Some(country) if country.eq_ignore_ascii_case("NZ") => Some("NZD"),
            _ => None,
        }
    }
}

/// A link to another record (`CardLink`).
#[derive(Deserialize)]
#[serde(rename_all = "PascalCase")]
pub(super) struct CardLink {
    #[serde(rename = "UID")]
    pub(super) uid: Option<String>,
    pub(super) name: Option<String>,
}

#[derive(Deserialize)]
#[serde(rename_all = "PascalCase")]
pub(super) struct Terms {
    pub(super) due_date: Option<String>,
}

/// A sale invoice as `GET /Sale/Invoice` writes it (every invoice type; the
/// list carries no lines).
#[derive(Deserialize)]
#[serde(rename_all = "PascalCase")]
pub(super) struct MyobInvoice {
    #[serde(rename = "UID")]
    pub(super) uid: String,
    pub(super) number: Option<String>,
    pub(super) date: Option<String>,
    pub(super) customer: Option<CardLink>,
    pub(super) terms: Option<Terms>,
    pub(super) subtotal: Option<Rounded>,
    pub(super) total_tax: Option<Rounded>,
    pub(super) total_amount: Option<Rounded>,
    pub(super) balance_due_amount: Option<Rounded>,
    pub(super) status: Option<String>,
    pub(super) last_payment_date: Option<String>,
    pub(super) comment: Option<String>,
    pub(super) journal_memo: Option<String>,
    pub(super) last_modified: Option<String>,
}

impl MyobInvoice {
    /// A credit note (a negative sale, status `Credit`): not an invoice.
    pub(super) fn is_credit_note(&self) -> bool {
        self.status.as_deref() == Some("Credit") && rounded(self.total_amount) < Money(0)
    }

    /// Our invoice, in the company file's `currency`; one without a
    /// readable `Date` cannot be read.
    pub(super) fn into_record(self, currency: &str) -> Result<Invoice, Unreadable> {
        let issue_date = self
            .date
            .as_deref()
            .and_then(json::date)
            .ok_or_else(|| Unreadable::field("Date", "is missing or not a date"))?;
        let total = rounded(self.total_amount);
        let tax = rounded(self.total_tax);
        let amount_due = rounded(self.balance_due_amount);
        let status = invoice_status(self.status.as_deref().unwrap_or(""), total, amount_due);
        let (customer_id, customer_name) = self
            .customer
            .map_or((None, None), |customer| (customer.uid, customer.name));
        Ok(Invoice {
            invoice_number: json::non_empty(self.number),
            customer_ref: CustomerRef::to(customer_id, customer_name),
            issue_date,
            due_date: self
                .terms
                .and_then(|terms| terms.due_date)
                .as_deref()
                .and_then(json::date),
            paid_on_date: if status == InvoiceStatus::Paid {
                self.last_payment_date.as_deref().and_then(json::date)
            } else {
                None
            },
            currency: currency.to_owned(),
            sub_total: self.subtotal.map_or(total - tax, Rounded::money),
            total_tax_amount: tax,
            total_amount: total,
            amount_due,
            status,
            line_items: Vec::new(),
            note: json::non_empty(self.comment).or_else(|| json::non_empty(self.journal_memo)),
            source_modified_date: json::timestamp(self.last_modified.as_deref()),
            invoice_id: self.uid,
        })
    }
}

/// A contact card as `GET /Contact/Customer` and `GET /Contact/Supplier`
/// write it.
#[derive(Deserialize)]
#[serde(rename_all = "PascalCase")]
pub(super) struct MyobCard {
    #[serde(rename = "UID")]
    uid: String,
    company_name: Option<String>,
    first_name: Option<String>,
    last_name: Option<String>,
    is_individual: Option<bool>,
    #[serde(rename = "DisplayID")]
    display_id: Option<String>,
    is_active: Option<bool>,
    addresses: Option<Vec<Address>>,
    foreign_currency: Option<CurrencyLink>,
    last_modified: Option<String>,
}

#[derive(Deserialize)]
#[serde(rename_all = "PascalCase")]
struct Address {
    location: Option<i64>,
    phone1: Option<String>,
    email: Option<String>,
}

#[derive(Deserialize)]
#[serde(rename_all = "PascalCase")]
struct CurrencyLink {
    code: Option<String>,
}

/// What a card says of whom it names, as customers and suppliers share it.
struct CardDetails {
    name: String,
    email: Option<String>,
    phone: Option<String>,
    currency: Option<String>,
    archived: bool,
    modified: Option<crate::timestamp::Timestamp>,
    uid: String,
}

impl MyobCard {
    /// The card's name (the company name, or an individual's first and last
    /// names), and e-mail and phone from address 1, else the first that has
    /// one.
    fn details(self) -> CardDetails {
        let individual = self.is_individual == Some(true);
        let person = [self.first_name, self.last_name]
            .into_iter()
            .filter_map(json::non_empty)
            .collect::<Vec<_>>()
            .join(" ");
        let name = if individual {
            json::non_empty(Some(person)).or_else(|| json::non_empty(self.company_name))
        } else {
            json::non_empty(self.company_name).or_else(|| json::non_empty(Some(person)))
        };
        let mut addresses = self.addresses.unwrap_or_default();
        addresses.sort_by_key(|address| address.location != Some(1));
        CardDetails {
            name: name
                .or_else(|| json::non_empty(self.display_id))
                .unwrap_or_else(|| self.uid.clone()),
            email: addresses
                .iter()
                .find_map(|address| json::non_empty(address.email.clone())),
            phone: addresses
                .iter()
                .find_map(|address| json::non_empty(address.phone1.clone())),
            currency: self
                .foreign_currency
                .and_then(|currency| json::non_empty(currency.code)),
            archived: self.is_active == Some(false),
            modified: json::timestamp(self.last_modified.as_deref()),
            uid: self.uid,
        }
    }

    /// Our customer (`GET /Contact/Customer`).
    pub(super) fn into_record(self) -> Customer {
        let card = self.details();
        Customer {
            customer_name: card.name,
            email_address: card.email,
            phone: card.phone,
            default_currency: card.currency,
            status: if card.archived {
                CustomerStatus::Archived
            } else {
                CustomerStatus::Active
            },
            source_modified_date: card.modified,
            customer_id: card.uid,
        }
    }

    /// Our supplier (`GET /Contact/Supplier`, the same card).
    pub(super) fn into_supplier(self) -> Supplier {
        let card = self.details();
        Supplier {
            supplier_name: card.name,
            email_address: card.email,
            phone: card.phone,
            default_currency: card.currency,
            status: if card.archived {
                SupplierStatus::Archived
            } else {
                SupplierStatus::Active
            },
            source_modified_date: card.modified,
            supplier_id: card.uid,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn myob_statuses_map_with_the_balance_due() {
        let total = Money(1_000_000);
        assert_eq!(
            invoice_status("Open", total, total),
            InvoiceStatus::Submitted
        );
        assert_eq!(
            invoice_status("Open", total, Money(5)),
            InvoiceStatus::PartiallyPaid
        );
        assert_eq!(invoice_status("Open", total, Money(0)), InvoiceStatus::Paid);
        assert_eq!(
            invoice_status("Closed", total, Money(0)),
            InvoiceStatus::Paid
        );
        assert_eq!(
            invoice_status("Credit", total, Money(-5)),
            InvoiceStatus::Paid
        );
        assert_eq!(
            invoice_status("Unknown", total, total),
            InvoiceStatus::Unknown
        );
    }
}
