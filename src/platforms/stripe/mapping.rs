//! Stripe's answers and how they become our records: amounts are integers in
//! the currency's minor unit (none for zero-decimal currencies such as JPY,
//! three places for BHD, JOD, KWD, OMR and TND), currencies are lower case,
//! times are Unix seconds, and the five invoice statuses map (an open or
//! uncollectible invoice by what remains to pay).

use chrono::{DateTime, NaiveDate, Utc};
use rust_decimal::Decimal;
use serde::Deserialize;

use crate::data::customers::{Customer, CustomerStatus};
use crate::data::invoices::{CustomerRef, Invoice, InvoiceStatus, LineItem};
use crate::data::money::{Money, Quantity};
use crate::platforms::kit::json;
use crate::platforms::kit::records::{Each, Keyed, Unreadable};
use crate::platforms::kit::status::{StatusTable, by_balance, lookup};

/// Stripe's zero-decimal currencies: an amount of `500` is 500 units
/// (https://stripe.com/docs/currencies#zero-decimal).
const ZERO_DECIMAL: &[&str] = &[
    "bif", "clp", "djf", "gnf", "jpy", "kmf", "krw", "mga", "pyg", "rwf", "ugx", "vnd", "vuv",
    "xaf", "xof", "xpf",
];

/// Stripe's three-decimal currencies: an amount of `5120` is 5.120 units.
const THREE_DECIMAL: &[&str] = &["bhd", "jod", "kwd", "omr", "tnd"];

/// Decimal places of `currency`'s minor unit as Stripe counts amounts (two
/// for every other currency, ISK included: Stripe keeps it two-decimal).
pub(super) fn minor_unit_places(currency: &str) -> u32 {
    let currency = currency.trim().to_ascii_lowercase();
    if ZERO_DECIMAL.contains(&currency.as_str()) {
        0
    } else if THREE_DECIMAL.contains(&currency.as_str()) {
        3
    } else {
        2
    }
}

/// An integer amount of `currency`'s minor unit as exact money.
pub(super) fn minor(amount: i64, currency: &str) -> Result<Money, Unreadable> {
    json::from_minor(amount, minor_unit_places(currency))
        .ok_or_else(|| Unreadable::record("an amount is out of range for its currency"))
}

/// The sum of integer amounts of `currency`'s minor unit.
fn sum_minor(amounts: impl Iterator<Item = i64>, currency: &str) -> Result<Money, Unreadable> {
    amounts
        .map(|amount| minor(amount, currency))
        .try_fold(Money(0), |total, amount| Ok(total + amount?))
}

/// A decimal amount of minor units (`unit_amount_decimal`, up to twelve
/// places) as money, rounded to ten-thousandths of the unit (half to even).
fn minor_decimal(text: &str, currency: &str) -> Option<Money> {
    let minor: Decimal = text.trim().parse().ok()?;
    let unit = minor / Decimal::from(10_i64.pow(minor_unit_places(currency)));
    Money::from_decimal(unit.round_dp(Money::SCALE))
}

/// Unix seconds as a time.
pub(super) fn time(seconds: i64) -> Option<DateTime<Utc>> {
    DateTime::from_timestamp(seconds, 0)
}

/// Unix seconds as a (UTC) date.
pub(super) fn date(seconds: Option<i64>) -> Option<NaiveDate> {
    seconds.and_then(time).map(|at| at.date_naive())
}

/// Stripe's invoice statuses that need no amounts. `open` and
/// `uncollectible` depend on what remains to pay ([`invoice_status`]).
const STATUSES: StatusTable = &[
    ("draft", InvoiceStatus::Draft),
    ("paid", InvoiceStatus::Paid),
    ("void", InvoiceStatus::Void),
];

/// Stripe's invoice status, with the amounts that tell a part payment
/// apart: `amount_due` (what the customer was asked for) and
/// `amount_remaining` (what is still to pay).
pub(super) fn invoice_status(status: Option<&str>, due: Money, remaining: Money) -> InvoiceStatus {
    match status.unwrap_or("") {
        // Finalized and awaiting payment; `uncollectible` can still be paid
        // (or voided) in Stripe, so it stays owed until it is.
        "open" | "uncollectible" => by_balance(due, remaining),
        other => lookup(STATUSES, other).unwrap_or(InvoiceStatus::Unknown),
    }
}

/// A page of a Stripe list (`GET /v1/invoices`, `/v1/customers`,
/// `/v1/invoices/{id}/lines`), its objects read one by one.
#[derive(Deserialize)]
#[serde(bound = "T: serde::de::DeserializeOwned")]
pub(super) struct List<T> {
    #[serde(default = "Each::default")]
    pub(super) data: Each<T>,
    #[serde(default)]
    pub(super) has_more: bool,
}

impl Keyed for StripeInvoice {
    const ID: &'static str = "/id";
}

impl Keyed for StripeLine {
    const ID: &'static str = "/id";
}

impl Keyed for StripeCustomer {
    const ID: &'static str = "/id";
}

/// `GET /v1/account`'s answer: the account the key belongs to.
#[derive(Deserialize)]
pub(super) struct Account {
    pub(super) id: String,
}

/// A customer as an id, or expanded into the object.
#[derive(Deserialize)]
#[serde(untagged)]
enum CustomerField {
    Id(String),
    Object { id: String },
}

impl CustomerField {
    fn id(self) -> String {
        match self {
            Self::Id(id) | Self::Object { id } => id,
        }
    }
}

/// The times an invoice changed status.
#[derive(Deserialize, Default)]
struct StatusTransitions {
    finalized_at: Option<i64>,
    paid_at: Option<i64>,
}

/// An invoice as Stripe writes it (API version 2024-06-20).
#[derive(Deserialize)]
pub(super) struct StripeInvoice {
    pub(super) id: String,
    number: Option<String>,
    customer: Option<CustomerField>,
    customer_name: Option<String>,
    created: Option<i64>,
    effective_at: Option<i64>,
    due_date: Option<i64>,
    #[serde(default)]
    status_transitions: Option<StatusTransitions>,
    currency: String,
    subtotal: Option<i64>,
    tax: Option<i64>,
    total: Option<i64>,
    total_excluding_tax: Option<i64>,
    amount_due: Option<i64>,
    amount_remaining: Option<i64>,
    status: Option<String>,
    description: Option<String>,
    pub(super) lines: Option<List<StripeLine>>,
}

/// An invoice line item.
#[derive(Deserialize)]
pub(super) struct StripeLine {
    pub(super) id: Option<String>,
    amount: i64,
    amount_excluding_tax: Option<i64>,
    description: Option<String>,
    quantity: Option<i64>,
    price: Option<Price>,
    #[serde(default, deserialize_with = "json::list_or_null")]
    tax_amounts: Vec<TaxAmount>,
    #[serde(default, deserialize_with = "json::list_or_null")]
    discount_amounts: Vec<DiscountAmount>,
}

/// The price a line bills.
#[derive(Deserialize)]
struct Price {
    unit_amount: Option<i64>,
    unit_amount_decimal: Option<String>,
}

/// A tax on a line: its amount and whether the line's amount includes it.
#[derive(Deserialize)]
struct TaxAmount {
    amount: i64,
    #[serde(default)]
    inclusive: bool,
}

/// A discount on a line.
#[derive(Deserialize)]
struct DiscountAmount {
    amount: i64,
}

impl StripeLine {
    /// Our line, its amounts in `currency`.
    pub(super) fn into_line(self, currency: &str) -> Result<LineItem, Unreadable> {
        let money = |amount: i64| minor(amount, currency);
        let taxes = |inclusive: bool| {
            self.tax_amounts
                .iter()
                .filter(move |tax| tax.inclusive == inclusive)
                .map(|tax| tax.amount)
        };
        let amount = money(self.amount)?;
        let inclusive_tax = sum_minor(taxes(true), currency)?;
        let exclusive_tax = sum_minor(taxes(false), currency)?;
        let sub_total = match self.amount_excluding_tax {
            Some(excluding) => money(excluding)?,
            None => amount - inclusive_tax,
        };
        let quantity = Quantity::units(self.quantity.unwrap_or(1));
        let unit_amount = match &self.price {
            Some(Price {
                unit_amount_decimal: Some(text),
                ..
            }) => minor_decimal(text, currency),
            Some(Price {
                unit_amount: Some(unit),
                ..
            }) => Some(money(*unit)?),
            _ => None,
        }
        .unwrap_or_else(|| json::per_unit(amount, quantity));
        Ok(LineItem {
            description: self.description.unwrap_or_default(),
            unit_amount,
            quantity,
            discount_amount: sum_minor(self.discount_amounts.iter().map(|d| d.amount), currency)?,
            sub_total,
            tax_amount: inclusive_tax + exclusive_tax,
            total_amount: amount + exclusive_tax,
            account_ref: None,
        })
    }
}

impl StripeInvoice {
    /// Our invoice, its lines being `lines` (the embedded ones and any
    /// fetched after them); one without a date cannot be read.
    pub(super) fn into_record(self, lines: Vec<StripeLine>) -> Result<Invoice, Unreadable> {
        let currency = self.currency.to_ascii_uppercase();
        let money = |amount: Option<i64>| minor(amount.unwrap_or(0), &currency);
        let transitions = self.status_transitions.unwrap_or_default();
        let issued = self
            .effective_at
            .or(transitions.finalized_at)
            .or(self.created);
        let issue_date = date(issued).ok_or_else(|| {
            Unreadable::field(
                "effective_at",
                "is missing or out of range, and so are status_transitions.finalized_at and created",
            )
        })?;
        let total = money(self.total)?;
        let tax = match (self.tax, self.total_excluding_tax) {
            (Some(tax), _) => minor(tax, &currency)?,
            (None, Some(excluding)) => total - minor(excluding, &currency)?,
            (None, None) => Money(0),
        };
        let due = money(self.amount_due)?;
        let remaining = money(self.amount_remaining)?;
        let status = invoice_status(self.status.as_deref(), due, remaining);
        let line_items = lines
            .into_iter()
            .map(|line| line.into_line(&currency))
            .collect::<Result<Vec<_>, _>>()?;
        Ok(Invoice {
            invoice_number: json::non_empty(self.number),
            customer_ref: CustomerRef::to(
                self.customer.map(CustomerField::id),
                json::non_empty(self.customer_name),
            ),
            issue_date,
            due_date: date(self.due_date),
            paid_on_date: if status == InvoiceStatus::Paid {
                date(transitions.paid_at)
            } else {
                None
            },
            sub_total: match self.subtotal {
                Some(subtotal) => minor(subtotal, &currency)?,
                None => total - tax,
            },
            currency,
            total_tax_amount: tax,
            total_amount: total,
            amount_due: remaining,
            status,
            line_items,
            note: json::non_empty(self.description),
            // Stripe keeps no modification time on an invoice.
            source_modified_date: None,
            invoice_id: self.id,
        })
    }
}

/// A customer as Stripe writes it.
#[derive(Deserialize)]
pub(super) struct StripeCustomer {
    id: String,
    name: Option<String>,
    email: Option<String>,
    phone: Option<String>,
    currency: Option<String>,
}

impl StripeCustomer {
    /// Our customer, named by its name, else its email, else its id (Stripe
    /// requires none of them but the id).
    pub(super) fn into_record(self) -> Customer {
        let email = json::non_empty(self.email);
        let customer_name = json::non_empty(self.name)
            .or_else(|| email.clone())
            .unwrap_or_else(|| self.id.clone());
        Customer {
            customer_name,
            email_address: email,
            phone: json::non_empty(self.phone),
            default_currency: json::non_empty(self.currency).map(|c| c.to_ascii_uppercase()),
            // The list holds live customers only: deleted ones are not listed.
            status: CustomerStatus::Active,
            // Stripe keeps no modification time on a customer.
            source_modified_date: None,
            customer_id: self.id,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn minor_units_follow_the_currency() {
        assert_eq!(minor(1999, "usd"), Ok(Money(199_900)));
        assert_eq!(minor(500, "jpy"), Ok(Money(5_000_000)));
        assert_eq!(minor(500, "JPY"), Ok(Money(5_000_000)));
        assert_eq!(minor(5120, "kwd"), Ok(Money(51_200)));
        assert_eq!(minor(10_000, "isk"), Ok(Money(1_000_000)));
        assert_eq!(minor(-250, "eur"), Ok(Money(-25_000)));
        assert!(minor(i64::MAX, "jpy").is_err());
        assert_eq!(minor_decimal("1234.5678", "usd"), Some(Money(123_457)));
        assert_eq!(minor_decimal("7", "jpy"), Some(Money(70_000)));
    }

    #[test]
    fn every_status_maps() {
        let due = Money(100_000);
        assert_eq!(
            invoice_status(Some("draft"), due, due),
            InvoiceStatus::Draft
        );
        assert_eq!(
            invoice_status(Some("open"), due, due),
            InvoiceStatus::Submitted
        );
        assert_eq!(
            invoice_status(Some("open"), due, Money(1)),
            InvoiceStatus::PartiallyPaid
        );
        assert_eq!(
            invoice_status(Some("uncollectible"), due, due),
            InvoiceStatus::Submitted
        );
        assert_eq!(
            invoice_status(Some("paid"), due, Money(0)),
            InvoiceStatus::Paid
        );
        assert_eq!(invoice_status(Some("void"), due, due), InvoiceStatus::Void);
        assert_eq!(invoice_status(None, due, due), InvoiceStatus::Unknown);
        assert_eq!(
            invoice_status(Some("Paid"), due, due),
            InvoiceStatus::Unknown
        );
    }

    #[test]
    fn unix_seconds_become_utc_dates() {
        assert_eq!(
            date(Some(1_767_225_599)),
            NaiveDate::from_ymd_opt(2025, 12, 31)
        );
        assert_eq!(
            date(Some(1_767_225_600)),
            NaiveDate::from_ymd_opt(2026, 1, 1)
        );
        assert_eq!(date(None), None);
    }
}
