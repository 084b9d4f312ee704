//! Sage Business Cloud Accounting's answers and how they become our
//! records: the `$items`/`$next` envelope, sales invoices (status ids, with
//! the outstanding amount deciding the ids the sources leave unconfirmed),
//! their lines, and contacts that are customers. Amounts are JSON numbers,
//! read from their text.

use serde::Deserialize;

use crate::data::accounts::AccountRef;
use crate::data::customers::{Customer, CustomerStatus};
use crate::data::invoices::{CustomerRef, Invoice, InvoiceStatus, LineItem};
use crate::data::money::Money;
use crate::data::suppliers::{Supplier, SupplierStatus};
use crate::data::tax_rates::TaxRateRef;
use crate::platforms::kit::json::{self, Amount, money, quantity};
use crate::platforms::kit::paging::PageNumber;
use crate::platforms::kit::records::{Keyed, Unreadable};
use crate::platforms::kit::status::{StatusTable, by_balance, lookup};

/// Sage's sales invoice status ids. `DRAFT` and `PAID` are confirmed;
/// `UNPAID`, `PART_PAID` and `VOID` are Sage's words for the other states
/// but their ids are not: any id not listed is decided by the amounts.
const STATUSES: StatusTable = &[
    ("DRAFT", InvoiceStatus::Draft),
    ("UNPAID", InvoiceStatus::Submitted),
    ("PART_PAID", InvoiceStatus::PartiallyPaid),
    ("PAID", InvoiceStatus::Paid),
    ("VOID", InvoiceStatus::Void),
];

/// Sage's invoice status: voided invoices (a `void_reason`) are Void
/// whatever their id; a listed id decides; other ids go by the amounts.
pub(super) fn invoice_status(
    status_id: &str,
    voided: bool,
    total: Money,
    outstanding: Money,
) -> InvoiceStatus {
    if voided {
        return InvoiceStatus::Void;
    }
    lookup(STATUSES, status_id).unwrap_or_else(|| by_balance(total, outstanding))
}

/// The status of a sales or purchase artefact (invoice, credit note) from
/// its `status` link and `void_reason`, with its amounts.
pub(super) fn artefact_status(
    status: Option<Link>,
    void_reason: Option<String>,
    total: Money,
    outstanding: Money,
) -> InvoiceStatus {
    let voided = json::non_empty(void_reason).is_some();
    let status_id = status.and_then(|status| status.id).unwrap_or_default();
    invoice_status(&status_id, voided, total, outstanding)
}

/// A page of a list: `$items` (`L`: the records read one by one, or a
/// `Vec` of what a token reaches), and `$next`, the next page's path (null
/// on the last page; a page beyond the last serves the last again).
#[derive(Deserialize)]
#[serde(bound = "L: serde::de::DeserializeOwned + Default")]
pub(super) struct ListPage<L> {
    #[serde(rename = "$items", default)]
    pub(super) items: L,
    #[serde(rename = "$next")]
    pub(super) next: Option<String>,
    #[serde(rename = "$total")]
    pub(super) total: Option<u64>,
    #[serde(rename = "$page")]
    pub(super) page: Option<u64>,
}

impl<L> ListPage<L> {
    /// Whether a page follows `page`, the one asked for: `$next` names one,
    /// and Sage did not serve an earlier page instead (it serves the last
    /// page again for a page beyond it).
    pub(super) fn more_after(&self, page: PageNumber) -> bool {
        self.next
            .as_deref()
            .is_some_and(|next| !next.trim().is_empty())
            && self.page.is_none_or(|served| served >= page.0)
    }
}

impl Keyed for SageInvoice {
    const ID: &'static str = "/id";
}

impl Keyed for SageContact {
    const ID: &'static str = "/id";
}

/// A link to another resource: `{id, displayed_as, $path}`.
#[derive(Deserialize)]
pub(super) struct Link {
    pub(super) id: Option<String>,
    pub(super) displayed_as: Option<String>,
    #[serde(rename = "$path")]
    pub(super) path: Option<String>,
}

impl Link {
    /// The id and the name shown for it, each where given.
    pub(super) fn parts(link: Option<Link>) -> (Option<String>, Option<String>) {
        link.map_or((None, None), |link| {
            (json::non_empty(link.id), json::non_empty(link.displayed_as))
        })
    }

    /// A reference to the ledger account it names.
    pub(super) fn account(link: Option<Link>) -> Option<AccountRef> {
        let (id, name) = Self::parts(link);
        AccountRef::to(id, name)
    }

    /// A reference to the tax rate it names.
    pub(super) fn tax_rate(link: Option<Link>) -> Option<TaxRateRef> {
        let (id, name) = Self::parts(link);
        TaxRateRef::to(id, name)
    }
}

/// A sales invoice as `GET /sales_invoices?attributes=all` gives it.
#[derive(Deserialize)]
pub(super) struct SageInvoice {
    id: String,
    invoice_number: Option<String>,
    displayed_as: Option<String>,
    contact: Option<Link>,
    contact_name: Option<String>,
    date: Option<String>,
    due_date: Option<String>,
    last_paid: Option<String>,
    currency: Option<Link>,
    net_amount: Option<Amount>,
    tax_amount: Option<Amount>,
    total_amount: Option<Amount>,
    outstanding_amount: Option<Amount>,
    status: Option<Link>,
    void_reason: Option<String>,
    reference: Option<String>,
    notes: Option<String>,
    updated_at: Option<String>,
    #[serde(default)]
    invoice_lines: Vec<SageLine>,
}

/// A line of a sales invoice or credit note (`invoice_lines`,
/// `credit_note_lines`).
#[derive(Deserialize)]
pub(super) struct SageLine {
    description: Option<String>,
    quantity: Option<Amount>,
    unit_price: Option<Amount>,
    net_amount: Option<Amount>,
    tax_amount: Option<Amount>,
    total_amount: Option<Amount>,
    discount_amount: Option<Amount>,
    ledger_account: Option<Link>,
}

impl SageLine {
    /// Our line, posting to its ledger account.
    pub(super) fn into_line(self) -> LineItem {
        let sub_total = money(self.net_amount);
        let tax_amount = money(self.tax_amount);
        LineItem {
            description: self.description.unwrap_or_default(),
            unit_amount: money(self.unit_price),
            quantity: quantity(self.quantity),
            discount_amount: money(self.discount_amount),
            sub_total,
            tax_amount,
            total_amount: self
                .total_amount
                .map_or(sub_total + tax_amount, Amount::money),
            account_ref: Link::account(self.ledger_account),
        }
    }
}

/// An ISO 4217 code from a currency link: its `id` when it is one, else
/// its `displayed_as` when that is.
pub(super) fn currency_code(link: Option<Link>) -> Option<String> {
    let is_code = |text: &String| text.len() == 3 && text.bytes().all(|b| b.is_ascii_uppercase());
    let link = link?;
    link.id
        .filter(is_code)
        .or_else(|| link.displayed_as.filter(is_code))
}

impl SageInvoice {
    /// Our invoice; one without a readable `date` cannot be read.
    pub(super) fn into_record(self) -> Result<Invoice, Unreadable> {
        let issue_date = json::required_date(self.date.as_deref(), "date")?;
        let total = money(self.total_amount);
        let tax = money(self.tax_amount);
        let outstanding = money(self.outstanding_amount);
        let status = artefact_status(self.status, self.void_reason, total, outstanding);
        let line_items = self
            .invoice_lines
            .into_iter()
            .map(SageLine::into_line)
            .collect();
        let (customer_id, customer_name) = self
            .contact
            .map_or((None, None), |contact| (contact.id, contact.displayed_as));
        Ok(Invoice {
            invoice_number: json::non_empty(self.invoice_number)
                .or_else(|| json::non_empty(self.displayed_as)),
            customer_ref: CustomerRef::to(
                json::non_empty(customer_id),
                json::non_empty(self.contact_name).or_else(|| json::non_empty(customer_name)),
            ),
            issue_date,
            due_date: self.due_date.as_deref().and_then(json::date),
            paid_on_date: if status == InvoiceStatus::Paid {
                self.last_paid.as_deref().and_then(json::date)
            } else {
                None
            },
            currency: currency_code(self.currency).unwrap_or_default(),
            sub_total: self.net_amount.map_or(total - tax, Amount::money),
            total_tax_amount: tax,
            total_amount: total,
            amount_due: outstanding,
            status,
            line_items,
            note: json::non_empty(self.reference).or_else(|| json::non_empty(self.notes)),
            source_modified_date: json::timestamp(self.updated_at.as_deref()),
            invoice_id: self.id,
        })
    }
}

/// A contact's main person: where its phone numbers are.
#[derive(Deserialize)]
struct ContactPerson {
    telephone: Option<String>,
    mobile: Option<String>,
    email: Option<String>,
}

/// A contact as `GET /contacts?attributes=all` gives it.
#[derive(Deserialize)]
pub(super) struct SageContact {
    id: String,
    name: Option<String>,
    displayed_as: Option<String>,
    email: Option<String>,
    currency: Option<Link>,
    main_contact_person: Option<ContactPerson>,
    #[serde(default)]
    contact_types: Vec<Link>,
    system: Option<bool>,
    is_active: Option<bool>,
    deleted_at: Option<String>,
    updated_at: Option<String>,
}

impl SageContact {
    /// A customer: typed `CUSTOMER` (or untyped), and not one of Sage's
    /// system contacts (for tax payments and refunds).
    pub(super) fn is_customer(&self) -> bool {
        let customer = self.contact_types.is_empty()
            || self
                .contact_types
                .iter()
                .any(|kind| kind.id.as_deref() == Some("CUSTOMER"));
        customer && self.system != Some(true)
    }

    /// A supplier: typed `VENDOR`, and not a system contact.
    pub(super) fn is_vendor(&self) -> bool {
        let vendor = self
            .contact_types
            .iter()
            .any(|kind| kind.id.as_deref() == Some("VENDOR"));
        vendor && self.system != Some(true)
    }

    /// Our supplier, named and reached as a customer is.
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

    /// Our customer: archived when deleted or made inactive.
    pub(super) fn into_record(self) -> Customer {
        let (phone, person_email) = self.main_contact_person.map_or((None, None), |person| {
            (
                json::non_empty(person.telephone).or_else(|| json::non_empty(person.mobile)),
                json::non_empty(person.email),
            )
        });
        Customer {
            customer_name: json::non_empty(self.name)
                .or_else(|| json::non_empty(self.displayed_as))
                .unwrap_or_else(|| self.id.clone()),
            email_address: json::non_empty(self.email).or(person_email),
            phone,
            default_currency: currency_code(self.currency),
            status: if json::non_empty(self.deleted_at).is_some() || self.is_active == Some(false) {
                CustomerStatus::Archived
            } else {
                CustomerStatus::Active
            },
            source_modified_date: json::timestamp(self.updated_at.as_deref()),
            customer_id: self.id,
        }
    }
}

/// A business the token reaches (`GET /businesses`).
#[derive(Deserialize)]
pub(super) struct SageBusiness {
    pub(super) id: String,
    /// Its name, shown when it is linked.
    pub(super) displayed_as: Option<String>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sage_statuses_map_by_id_void_reason_and_amounts() {
        let total = Money(1_000_000);
        assert_eq!(
            invoice_status("DRAFT", false, total, total),
            InvoiceStatus::Draft
        );
        assert_eq!(
            invoice_status("UNPAID", false, total, total),
            InvoiceStatus::Submitted
        );
        assert_eq!(
            invoice_status("PART_PAID", false, total, Money(5)),
            InvoiceStatus::PartiallyPaid
        );
        assert_eq!(
            invoice_status("PAID", false, total, Money(0)),
            InvoiceStatus::Paid
        );
        assert_eq!(
            invoice_status("VOID", false, total, total),
            InvoiceStatus::Void
        );
        assert_eq!(
            invoice_status("UNPAID", true, total, total),
            InvoiceStatus::Void
        );
        // Ids the sources do not confirm: the amounts decide.
        assert_eq!(
            invoice_status("PARTIALLY_PAID", false, total, Money(5)),
            InvoiceStatus::PartiallyPaid
        );
        assert_eq!(
            invoice_status("OUTSTANDING", false, total, total),
            InvoiceStatus::Submitted
        );
    }
}
