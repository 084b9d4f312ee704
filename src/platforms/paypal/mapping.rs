//! PayPal's answers and how they become our records: money is an object of
//! a currency code and a decimal string in major units, dates are
//! `YYYY-MM-DD`, times RFC 3339, the invoice's recipient is named by its
//! billing e-mail (PayPal has no customer ids), and the twelve invoice
//! statuses map by a table.

use serde::Deserialize;

use super::payments::{Payments, Refunds};
use crate::data::invoices::{CustomerRef, Invoice, InvoiceStatus, LineItem};
use crate::data::money::{Money, Quantity};
use crate::platforms::kit::json::{self, Amount};
use crate::platforms::kit::records::{Each, Keyed, Unreadable};
use crate::platforms::kit::status::{StatusTable, lookup};

/// PayPal's invoice statuses (upper case, as the API writes them).
pub(super) const STATUSES: StatusTable = &[
    ("DRAFT", InvoiceStatus::Draft),
    // To be sent on its invoice date: not yet issued to the customer.
    ("SCHEDULED", InvoiceStatus::Draft),
    ("SENT", InvoiceStatus::Submitted),
    ("UNPAID", InvoiceStatus::Submitted),
    // A payment was made but has not cleared: still owed until it does.
    ("PAYMENT_PENDING", InvoiceStatus::Submitted),
    ("PARTIALLY_PAID", InvoiceStatus::PartiallyPaid),
    ("PAID", InvoiceStatus::Paid),
    // Paid outside PayPal and recorded as such.
    ("MARKED_AS_PAID", InvoiceStatus::Paid),
    // Paid, then part of it refunded: the invoice still stands as paid.
    ("PARTIALLY_REFUNDED", InvoiceStatus::Paid),
    // The money went back: the invoice no longer stands.
    ("REFUNDED", InvoiceStatus::Void),
    ("MARKED_AS_REFUNDED", InvoiceStatus::Void),
    ("CANCELLED", InvoiceStatus::Void),
];

/// Our status for PayPal's word; `Unknown` for a word not documented.
pub(super) fn invoice_status(status: Option<&str>) -> InvoiceStatus {
    lookup(STATUSES, status.unwrap_or("").trim()).unwrap_or(InvoiceStatus::Unknown)
}

/// A page of `GET /v2/invoicing/invoices`.
#[derive(Deserialize)]
pub(super) struct InvoicesPage {
    #[serde(default)]
    pub(super) items: Each<Summary>,
    pub(super) total_items: Option<u64>,
    pub(super) total_pages: Option<u64>,
}

/// An invoice as the list summarises it: its id is what we need from it.
#[derive(Deserialize)]
pub(super) struct Summary {
    pub(super) id: String,
}

impl Keyed for Summary {
    const ID: &'static str = "/id";
}

impl Keyed for PayPalInvoice {
    const ID: &'static str = "/id";
}

/// PayPal money: a currency code and a decimal string in the currency's
/// own decimals ("For the required number of decimal places for a currency
/// code, see Currency Codes", its `money` schema): a finer amount cannot be
/// read.
#[derive(Deserialize)]
#[serde(try_from = "SentMoney")]
pub(super) struct PayPalMoney {
    pub(super) currency_code: Option<String>,
    pub(super) value: Option<Amount>,
}

/// PayPal money as sent, before its decimals are checked.
#[derive(Deserialize)]
struct SentMoney {
    currency_code: Option<String>,
    value: Option<Amount>,
}

impl TryFrom<SentMoney> for PayPalMoney {
    type Error = &'static str;

    fn try_from(sent: SentMoney) -> Result<Self, Self::Error> {
        check_decimals(sent.currency_code.as_deref(), sent.value)?;
        Ok(Self {
            currency_code: sent.currency_code,
            value: sent.value,
        })
    }
}

/// Refuses an amount finer than its currency's minor unit.
fn check_decimals(currency: Option<&str>, value: Option<Amount>) -> Result<(), &'static str> {
    match (currency, value) {
        (Some(currency), Some(value)) if !json::within_minor_unit(value.money(), currency) => {
            Err(json::FINER_THAN_CURRENCY)
        }
        _ => Ok(()),
    }
}

/// Optional money as ours; zero when absent.
pub(super) fn money(value: Option<&PayPalMoney>) -> Money {
    value
        .and_then(|m| m.value)
        .map(Amount::money)
        .unwrap_or_default()
}

/// An invoice as `GET /v2/invoicing/invoices/{id}` writes it.
#[derive(Deserialize)]
pub(super) struct PayPalInvoice {
    pub(super) id: String,
    status: Option<String>,
    pub(super) detail: Option<Detail>,
    #[serde(default)]
    pub(super) primary_recipients: Vec<Recipient>,
    #[serde(default)]
    items: Vec<Item>,
    amount: Option<AmountSummary>,
    due_amount: Option<PayPalMoney>,
    pub(super) payments: Option<Payments>,
    pub(super) refunds: Option<Refunds>,
}

/// The invoice's detail: number, dates, currency, note, audit times.
#[derive(Deserialize)]
pub(super) struct Detail {
    invoice_number: Option<String>,
    invoice_date: Option<String>,
    pub(super) currency_code: Option<String>,
    note: Option<String>,
    payment_term: Option<PaymentTerm>,
    metadata: Option<Metadata>,
}

#[derive(Deserialize)]
struct PaymentTerm {
    due_date: Option<String>,
}

#[derive(Deserialize)]
struct Metadata {
    create_time: Option<String>,
    last_update_time: Option<String>,
}

/// One of the invoice's recipients.
#[derive(Deserialize)]
pub(super) struct Recipient {
    billing_info: Option<BillingInfo>,
}

#[derive(Deserialize)]
struct BillingInfo {
    name: Option<Name>,
    business_name: Option<String>,
    email_address: Option<String>,
}

#[derive(Deserialize)]
struct Name {
    given_name: Option<String>,
    surname: Option<String>,
    full_name: Option<String>,
}

impl Name {
    /// `full_name`, else the given name and surname.
    fn text(self) -> Option<String> {
        json::non_empty(self.full_name).or_else(|| {
            let parts: Vec<String> = [self.given_name, self.surname]
                .into_iter()
                .filter_map(json::non_empty)
                .collect();
            (!parts.is_empty()).then(|| parts.join(" "))
        })
    }
}

/// The invoice total (in its currency's own decimals, as [`PayPalMoney`])
/// and its breakdown.
#[derive(Deserialize)]
#[serde(try_from = "SentSummary")]
struct AmountSummary {
    value: Option<Amount>,
    breakdown: Option<Breakdown>,
}

/// The invoice total as sent, before its decimals are checked.
#[derive(Deserialize)]
struct SentSummary {
    currency_code: Option<String>,
    value: Option<Amount>,
    breakdown: Option<Breakdown>,
}

impl TryFrom<SentSummary> for AmountSummary {
    type Error = &'static str;

    fn try_from(sent: SentSummary) -> Result<Self, Self::Error> {
        check_decimals(sent.currency_code.as_deref(), sent.value)?;
        Ok(Self {
            value: sent.value,
            breakdown: sent.breakdown,
        })
    }
}

#[derive(Deserialize)]
struct Breakdown {
    tax_total: Option<PayPalMoney>,
}

/// An invoice item.
#[derive(Deserialize)]
struct Item {
    name: Option<String>,
    description: Option<String>,
    quantity: Option<Amount>,
    unit_amount: Option<PayPalMoney>,
    tax: Option<ItemTax>,
    discount: Option<ItemDiscount>,
}

#[derive(Deserialize)]
struct ItemTax {
    amount: Option<PayPalMoney>,
}

#[derive(Deserialize)]
struct ItemDiscount {
    amount: Option<PayPalMoney>,
}

/// `quantity × price`, exact to ten-thousandths (half to even).
fn times(quantity: Quantity, price: Money) -> Money {
    let exact = quantity.to_decimal() * price.to_decimal();
    Money::from_decimal(exact.round_dp(Money::SCALE)).unwrap_or_default()
}

impl Item {
    fn into_line(self) -> LineItem {
        let quantity = json::quantity(self.quantity);
        let unit_amount = money(self.unit_amount.as_ref());
        let tax_amount = money(self.tax.as_ref().and_then(|t| t.amount.as_ref()));
        // PayPal writes item discounts as positive amounts (invoice-level
        // discounts, in the breakdown, as negative ones).
        let discount = money(self.discount.as_ref().and_then(|d| d.amount.as_ref()));
        let discount_amount = Money(discount.0.abs());
        let sub_total = times(quantity, unit_amount) - discount_amount;
        let description = match (
            json::non_empty(self.name),
            json::non_empty(self.description),
        ) {
            (Some(name), Some(description)) => format!("{name}: {description}"),
            (name, description) => name.or(description).unwrap_or_default(),
        };
        LineItem {
            description,
            unit_amount,
            quantity,
            discount_amount,
            sub_total,
            tax_amount,
            total_amount: sub_total + tax_amount,
            account_ref: None,
        }
    }
}

/// Whom an invoice is addressed to: its first recipient's billing e-mail
/// (lower-cased: PayPal has no customer ids), named by its business name,
/// else the person.
pub(super) fn customer_of(recipients: Vec<Recipient>) -> Option<CustomerRef> {
    let info = recipients.into_iter().find_map(|r| r.billing_info)?;
    let name = json::non_empty(info.business_name).or_else(|| info.name.and_then(Name::text));
    let id = json::non_empty(info.email_address).map(|e| e.to_lowercase());
    CustomerRef::to(id, name)
}

impl PayPalInvoice {
    /// Our invoice; one without a readable date cannot be read.
    pub(super) fn into_record(self) -> Result<Invoice, Unreadable> {
        let detail = self.detail;
        let (number, invoice_date, currency, note, due_on, metadata) = match detail {
            Some(d) => (
                d.invoice_number,
                d.invoice_date,
                d.currency_code,
                d.note,
                d.payment_term.and_then(|t| t.due_date),
                d.metadata,
            ),
            None => (None, None, None, None, None, None),
        };
        let (created, updated) = match metadata {
            Some(m) => (m.create_time, m.last_update_time),
            None => (None, None),
        };
        let issue_date = invoice_date
            .as_deref()
            .and_then(json::date)
            .or_else(|| json::timestamp(created.as_deref()).map(|t| t.0.date_naive()))
            .ok_or_else(|| {
                Unreadable::field(
                    "detail.invoice_date",
                    "is missing or not a date, and so is detail.metadata.create_time",
                )
            })?;
        let status = invoice_status(self.status.as_deref());
        let (total, tax) = match self.amount {
            Some(amount) => (
                amount.value.map(Amount::money).unwrap_or_default(),
                money(amount.breakdown.as_ref().and_then(|b| b.tax_total.as_ref())),
            ),
            None => (Money(0), Money(0)),
        };
        let amount_due = match (&self.due_amount, status) {
            (Some(due), _) => money(Some(due)),
            (None, InvoiceStatus::Paid | InvoiceStatus::Void) => Money(0),
            (None, _) => total,
        };
        let paid_on_date = if status == InvoiceStatus::Paid {
            self.payments
                .into_iter()
                .flat_map(|p| p.transactions)
                .filter_map(|t| t.payment_date.as_deref().and_then(json::date))
                .max()
        } else {
            None
        };
        let customer_ref = customer_of(self.primary_recipients);
        Ok(Invoice {
            invoice_number: json::non_empty(number),
            customer_ref,
            issue_date,
            due_date: due_on.as_deref().and_then(json::date),
            paid_on_date,
            currency: currency.unwrap_or_default().to_ascii_uppercase(),
            sub_total: total - tax,
            total_tax_amount: tax,
            total_amount: total,
            amount_due,
            status,
            line_items: self.items.into_iter().map(Item::into_line).collect(),
            note: json::non_empty(note),
            source_modified_date: json::timestamp(updated.as_deref().or(created.as_deref())),
            invoice_id: self.id,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::platforms::kit::records;
    use rust_decimal::Decimal;

    #[test]
    fn an_amount_finer_than_its_currency_costs_its_invoice_naming_the_field() {
        let invoice = |id: &str, currency: &str, total: &str, unit: &str| {
            format!(
                r#"{{"id": "{id}", "detail": {{"invoice_date": "2026-10-03", "currency_code": "{currency}"}},
                    "amount": {{"currency_code": "{currency}", "value": "{total}"}},
                    "items": [{{"name": "Tea", "quantity": "1",
                               "unit_amount": {{"currency_code": "{currency}", "value": "{unit}"}}}}]}}"#
            )
        };
        for (text, finer) in [
            (invoice("INV2-1", "USD", "10.00", "10.00"), None),
            (invoice("INV2-2", "JPY", "1000", "1000"), None),
            (invoice("INV2-3", "TND", "1.005", "1.005"), None),
            (invoice("INV2-4", "USD", "10.005", "10.00"), Some("amount")),
            (
                invoice("INV2-5", "JPY", "1000", "999.5"),
                Some("items[0].unit_amount"),
            ),
        ] {
            let raw = serde_json::value::RawValue::from_string(text).expect("JSON");
            match (records::single::<PayPalInvoice>(&raw), finer) {
                (Ok((invoice, _)), None) => {
                    invoice.into_record().expect("an invoice");
                }
                (Err(issue), Some(field)) => {
                    assert_eq!(issue.field.as_deref(), Some(field));
                    assert_eq!(issue.reason, json::FINER_THAN_CURRENCY);
                }
                (outcome, expected) => panic!("{expected:?}: {:?}", outcome.err()),
            }
        }
    }

    #[test]
    fn every_documented_status_maps_and_others_are_unknown() {
        for (word, ours) in [
            ("DRAFT", InvoiceStatus::Draft),
            ("SCHEDULED", InvoiceStatus::Draft),
            ("SENT", InvoiceStatus::Submitted),
            ("UNPAID", InvoiceStatus::Submitted),
            ("PAYMENT_PENDING", InvoiceStatus::Submitted),
            ("PARTIALLY_PAID", InvoiceStatus::PartiallyPaid),
            ("PAID", InvoiceStatus::Paid),
            ("MARKED_AS_PAID", InvoiceStatus::Paid),
            ("PARTIALLY_REFUNDED", InvoiceStatus::Paid),
            ("REFUNDED", InvoiceStatus::Void),
            ("MARKED_AS_REFUNDED", InvoiceStatus::Void),
            ("CANCELLED", InvoiceStatus::Void),
        ] {
            assert_eq!(invoice_status(Some(word)), ours, "{word}");
        }
        assert_eq!(invoice_status(Some("ARCHIVED")), InvoiceStatus::Unknown);
        assert_eq!(invoice_status(None), InvoiceStatus::Unknown);
    }

    #[test]
    fn a_line_is_quantity_times_price_less_its_discount_plus_its_tax() {
        let item: Item = serde_json::from_str(
            r#"{"name": "Yoga Mat", "quantity": "1.5",
                "unit_amount": {"currency_code": "USD", "value": "50.00"},
                "tax": {"name": "Sales Tax", "percent": "7.25", "amount": {"currency_code": "USD", "value": "3.27"}},
                "discount": {"percent": "5", "amount": {"currency_code": "USD", "value": "2.5"}}}"#,
        )
        .expect("an item");
        let line = item.into_line();
        assert_eq!(line.sub_total, Money(725_000));
        assert_eq!(line.discount_amount, Money(25_000));
        assert_eq!(line.tax_amount, Money(32_700));
        assert_eq!(line.total_amount, Money(757_700));
        assert_eq!(line.quantity.to_decimal(), Decimal::new(15, 1));
    }
}
