//! FreeAgent's answers and how they become our records: resources are named
//! by their URL (the id is its last segment), amounts are decimal strings,
//! line items carry a quantity, a unit price and a tax rate (their amounts
//! are computed), and the invoice status words map with the amounts due.

use rust_decimal::{Decimal, RoundingStrategy};
use serde::Deserialize;

use crate::data::accounts::AccountRef;
use crate::data::customers::{Customer, CustomerStatus};
use crate::data::invoices::{CustomerRef, Invoice, InvoiceStatus, LineItem};
use crate::data::money::{Money, Quantity};
use crate::data::suppliers::{Supplier, SupplierStatus};
use crate::platforms::kit::json::{self, Amount, money, quantity};
use crate::platforms::kit::records::{Each, Keyed, Unreadable};
use crate::platforms::kit::status::{StatusTable, by_balance, lookup};

/// FreeAgent's invoice statuses that need no amounts (lower case: matched
/// without regard to case). `Open`, `Overdue` and `Part written-off`
/// depend on what is still due ([`invoice_status`]).
const STATUSES: StatusTable = &[
    ("draft", InvoiceStatus::Draft),
    // Scheduled to be e-mailed: not yet sent to the customer.
    ("scheduled to email", InvoiceStatus::Draft),
    // Nothing to pay.
    ("zero value", InvoiceStatus::Paid),
    ("paid", InvoiceStatus::Paid),
    ("overpaid", InvoiceStatus::Paid),
    // The money went back, or will never come: the invoice no longer stands.
    ("refunded", InvoiceStatus::Void),
    ("written-off", InvoiceStatus::Void),
    // Not in the documented status list, but a `mark_as_cancelled`
    // transition exists: should the word appear, it is a cancellation.
    ("cancelled", InvoiceStatus::Void),
];

/// FreeAgent's invoice status, with the amounts that tell a part payment apart.
pub(super) fn invoice_status(status: &str, total: Money, due: Money) -> InvoiceStatus {
    let word = status.trim().to_ascii_lowercase();
    match word.as_str() {
        "open" | "overdue" | "part written-off" => by_balance(total, due),
        other => lookup(STATUSES, other).unwrap_or(InvoiceStatus::Unknown),
    }
}

/// The id in a FreeAgent resource URL: its last path segment
/// (`https://api.freeagent.com/v2/invoices/42` → `42`).
pub(super) fn id_of(url: &str) -> Option<String> {
    let path = url.split(['?', '#']).next().unwrap_or(url);
    path.trim_end_matches('/')
        .rsplit('/')
        .next()
        .map(str::trim)
        .filter(|id| !id.is_empty())
        .map(str::to_owned)
}

/// The account a FreeAgent category URL names: its last segment, the
/// nominal code (`…/categories/001` → `001`), which is the account's id.
pub(super) fn category_ref(category: Option<&str>) -> Option<AccountRef> {
    AccountRef::to(category.and_then(id_of), None)
}

/// `amount × rate %`, rounded to the cent (half away from zero).
fn percent_of(amount: Money, rate: Decimal) -> Money {
    let exact = amount.to_decimal() * rate / Decimal::ONE_HUNDRED;
    Money::from_decimal(exact.round_dp_with_strategy(2, RoundingStrategy::MidpointAwayFromZero))
        .unwrap_or_default()
}

/// `quantity × price`, rounded to the cent (half away from zero).
fn times(quantity: Quantity, price: Money) -> Money {
    let exact = quantity.to_decimal() * price.to_decimal();
    Money::from_decimal(exact.round_dp_with_strategy(2, RoundingStrategy::MidpointAwayFromZero))
        .unwrap_or_default()
}

/// A page of `GET /v2/invoices`.
#[derive(Deserialize)]
pub(super) struct InvoicesPage {
    #[serde(default)]
    pub(super) invoices: Each<FreeAgentInvoice>,
}

/// A page of `GET /v2/contacts`.
#[derive(Deserialize)]
pub(super) struct ContactsPage {
    #[serde(default)]
    pub(super) contacts: Each<FreeAgentContact>,
}

/// `GET /v2/company`'s answer.
#[derive(Deserialize)]
pub(super) struct CompanyAnswer {
    pub(super) company: Company,
}

/// The company a token belongs to.
#[derive(Deserialize)]
pub(super) struct Company {
    pub(super) subdomain: Option<String>,
    /// Its name, shown when it is linked.
    pub(super) name: Option<String>,
}

impl Keyed for FreeAgentInvoice {
    const ID: &'static str = "/url";

    fn kept_id(url: &str) -> Option<String> {
        id_of(url)
    }
}

impl Keyed for FreeAgentContact {
    const ID: &'static str = "/url";

    fn kept_id(url: &str) -> Option<String> {
        id_of(url)
    }
}

/// An invoice as FreeAgent writes it (with `nested_invoice_items=true`).
#[derive(Deserialize)]
pub(super) struct FreeAgentInvoice {
    url: String,
    reference: Option<String>,
    contact: Option<String>,
    contact_name: Option<String>,
    dated_on: Option<String>,
    due_on: Option<String>,
    paid_on: Option<String>,
    currency: Option<String>,
    net_value: Option<Amount>,
    sales_tax_value: Option<Amount>,
    second_sales_tax_value: Option<Amount>,
    total_value: Option<Amount>,
    due_value: Option<Amount>,
    status: Option<String>,
    comments: Option<String>,
    updated_at: Option<String>,
    #[serde(default)]
    invoice_items: Vec<FreeAgentItem>,
}

/// One invoice or credit note item.
#[derive(Deserialize)]
pub(super) struct FreeAgentItem {
    description: Option<String>,
    /// The accounting category it posts to (its URL ends in the nominal
    /// code, our account id).
    category: Option<String>,
    quantity: Option<Amount>,
    price: Option<Amount>,
    sales_tax_rate: Option<Amount>,
    second_sales_tax_rate: Option<Amount>,
}

impl FreeAgentItem {
    /// Our line, its amounts worked out from the quantity, the unit price
    /// and the rates; posted to the item's category.
    pub(super) fn into_line(self) -> LineItem {
        let (price, quantity) = (money(self.price), quantity(self.quantity));
        self.line(price, quantity)
    }

    /// Our line of a credit note, whose items FreeAgent writes with
    /// negative prices: the credit's magnitudes, as the credit note's are.
    pub(super) fn into_credit_line(self) -> LineItem {
        let price = money(self.price);
        let quantity = quantity(self.quantity);
        self.line(Money(price.0.abs()), Quantity(quantity.0.abs()))
    }

    fn line(self, unit_amount: Money, quantity: Quantity) -> LineItem {
        let sub_total = times(quantity, unit_amount);
        let rate = |rate: Option<Amount>| money(rate).to_decimal();
        let tax_amount = percent_of(sub_total, rate(self.sales_tax_rate))
            + percent_of(sub_total, rate(self.second_sales_tax_rate));
        LineItem {
            description: self.description.unwrap_or_default(),
            unit_amount,
            quantity,
            discount_amount: Money(0),
            sub_total,
            tax_amount,
            total_amount: sub_total + tax_amount,
            account_ref: category_ref(self.category.as_deref()),
        }
    }
}

impl FreeAgentInvoice {
    /// Our invoice; one without an id or a readable date cannot be read.
    pub(super) fn into_record(self) -> Result<Invoice, Unreadable> {
        let invoice_id =
            id_of(&self.url).ok_or_else(|| Unreadable::field("url", "ends in no id"))?;
        let issue_date = self
            .dated_on
            .as_deref()
            .and_then(json::date)
            .ok_or_else(|| Unreadable::field("dated_on", "is missing or not a date"))?;
        let total = money(self.total_value);
        let due = money(self.due_value);
        let tax = money(self.sales_tax_value) + money(self.second_sales_tax_value);
        let status = invoice_status(self.status.as_deref().unwrap_or(""), total, due);
        Ok(Invoice {
            invoice_number: json::non_empty(self.reference),
            customer_ref: CustomerRef::to(
                self.contact.as_deref().and_then(id_of),
                json::non_empty(self.contact_name),
            ),
            issue_date,
            due_date: self.due_on.as_deref().and_then(json::date),
            paid_on_date: if status == InvoiceStatus::Paid {
                self.paid_on.as_deref().and_then(json::date)
            } else {
                None
            },
            currency: self.currency.unwrap_or_default(),
            sub_total: self.net_value.map_or(total - tax, Amount::money),
            total_tax_amount: tax,
            total_amount: total,
            amount_due: due,
            status,
            line_items: self
                .invoice_items
                .into_iter()
                .map(FreeAgentItem::into_line)
                .collect(),
            note: json::non_empty(self.comments),
            source_modified_date: json::timestamp(self.updated_at.as_deref()),
            invoice_id,
        })
    }
}

/// A contact as FreeAgent writes it.
#[derive(Deserialize)]
pub(super) struct FreeAgentContact {
    url: String,
    organisation_name: Option<String>,
    first_name: Option<String>,
    last_name: Option<String>,
    email: Option<String>,
    billing_email: Option<String>,
    phone_number: Option<String>,
    mobile: Option<String>,
    status: Option<String>,
    updated_at: Option<String>,
}

impl FreeAgentContact {
    /// Our customer: the organisation name, else the person's name; none
    /// without an id.
    pub(super) fn into_record(self) -> Option<Customer> {
        let customer_id = id_of(&self.url)?;
        let person = [self.first_name, self.last_name]
            .into_iter()
            .filter_map(json::non_empty)
            .collect::<Vec<_>>()
            .join(" ");
        Some(Customer {
            customer_name: json::non_empty(self.organisation_name)
                .or_else(|| json::non_empty(Some(person)))
                .unwrap_or_else(|| customer_id.clone()),
            email_address: json::non_empty(self.email)
                .or_else(|| json::non_empty(self.billing_email)),
            phone: json::non_empty(self.phone_number).or_else(|| json::non_empty(self.mobile)),
            // Contacts have no currency of their own; invoices carry theirs.
            default_currency: None,
            status: match self.status.as_deref() {
                Some(status) if status.eq_ignore_ascii_case("hidden") => CustomerStatus::Archived,
                _ => CustomerStatus::Active,
            },
            source_modified_date: json::timestamp(self.updated_at.as_deref()),
            customer_id,
        })
    }
}

impl FreeAgentContact {
    /// Our supplier: the same contact read as a customer is (FreeAgent's
    /// contacts are one list; `view=suppliers` picks those it bills from).
    pub(super) fn into_supplier(self) -> Option<Supplier> {
        let customer = self.into_record()?;
        Some(Supplier {
            supplier_id: customer.customer_id,
            supplier_name: customer.customer_name,
            email_address: customer.email_address,
            phone: customer.phone,
            default_currency: None,
            status: match customer.status {
                CustomerStatus::Archived => SupplierStatus::Archived,
                CustomerStatus::Active => SupplierStatus::Active,
            },
            source_modified_date: customer.source_modified_date,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn freeagent_statuses_map_with_what_is_due() {
        let total = Money(1_000_000);
        for (word, due, ours) in [
            ("Draft", total, InvoiceStatus::Draft),
            ("Scheduled To Email", total, InvoiceStatus::Draft),
            ("Open", total, InvoiceStatus::Submitted),
            ("Overdue", total, InvoiceStatus::Submitted),
            ("Open", Money(5), InvoiceStatus::PartiallyPaid),
            ("Overdue", Money(5), InvoiceStatus::PartiallyPaid),
            ("Zero Value", Money(0), InvoiceStatus::Paid),
            ("Paid", Money(0), InvoiceStatus::Paid),
            ("Overpaid", Money(-5), InvoiceStatus::Paid),
            ("Refunded", Money(0), InvoiceStatus::Void),
            ("Written-off", Money(0), InvoiceStatus::Void),
            ("Part written-off", Money(0), InvoiceStatus::Paid),
            ("Part written-off", Money(5), InvoiceStatus::PartiallyPaid),
            ("Something new", total, InvoiceStatus::Unknown),
        ] {
            assert_eq!(invoice_status(word, total, due), ours, "{word}");
        }
    }

    #[test]
    fn ids_are_the_last_segment_of_resource_urls() {
        assert_eq!(
            id_of("https://api.freeagent.com/v2/invoices/42").as_deref(),
            Some("42")
        );
        assert_eq!(
            id_of("https://api.freeagent.com/v2/contacts/7/").as_deref(),
            Some("7")
        );
        assert_eq!(id_of(""), None);
    }

    #[test]
    fn line_amounts_are_computed_to_the_cent() {
        let sub = times(Quantity::units(3), Money(333_333));
        assert_eq!(sub, Money(1_000_000));
        assert_eq!(
            percent_of(Money(1_000_000), Decimal::new(175, 1)),
            Money(175_000)
        );
        assert_eq!(percent_of(Money(10_500), Decimal::new(20, 0)), Money(2_100));
    }
}
