//! The records a sync produces, in our accounting model (after the
//! reference product's): invoices with line items, and customers. Money is
//! an exact integer count of ten-thousandths of the currency unit, from the
//! platform's decimal to our response's decimal: never a float.

use chrono::{DateTime, NaiveDate, Utc};
use rust_decimal::Decimal;
use serde::{Deserialize, Serialize};

/// An exact amount of money: ten-thousandths of the currency unit.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(transparent)]
pub struct Money(pub i64);

impl Money {
    /// Ten-thousandths per currency unit.
    pub const SCALE: u32 = 4;

    /// `units` whole currency units and `cents` hundredths.
    pub fn from_cents(cents: i64) -> Self {
        Self(cents * 100)
    }

    /// A decimal amount, if representable exactly in ten-thousandths.
    pub fn from_decimal(amount: Decimal) -> Option<Self> {
        let scaled = amount.checked_mul(Decimal::from(10_000))?;
        if scaled.fract() != Decimal::ZERO {
            return None;
        }
        i64::try_from(scaled).ok().map(Self)
    }

    /// The amount as a decimal with two places (four when finer amounts exist).
    pub fn to_decimal(self) -> Decimal {
        if self.0 % 100 == 0 {
            // Whole cents: always two places ("0.00", "12.50").
            Decimal::new(self.0 / 100, 2)
        } else {
            Decimal::new(self.0, Self::SCALE).normalize()
        }
    }
}

/// Where an invoice stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, poem_openapi::Enum, Serialize, Deserialize)]
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

impl InvoiceStatus {
    /// Every status, in documentation order.
    pub const ALL: [Self; 6] = [
        Self::Draft,
        Self::Submitted,
        Self::PartiallyPaid,
        Self::Paid,
        Self::Void,
        Self::Unknown,
    ];

    /// The stored and displayed name.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Draft => "Draft",
            Self::Submitted => "Submitted",
            Self::PartiallyPaid => "PartiallyPaid",
            Self::Paid => "Paid",
            Self::Void => "Void",
            Self::Unknown => "Unknown",
        }
    }

    /// Reads a name, ignoring case (`paid`, `PAID`, `Paid`).
    pub fn parse_loose(text: &str) -> Option<Self> {
        Self::ALL
            .into_iter()
            .find(|status| status.as_str().eq_ignore_ascii_case(text))
    }
}

/// One line of an invoice.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct LineItem {
    /// What was sold.
    pub description: String,
    /// Price of one unit, before tax.
    pub unit_amount: Money,
    /// Units sold, in ten-thousandths (quantities can be fractional).
    pub quantity: Money,
    /// Discount on the line.
    pub discount_amount: Money,
    /// Line total before tax.
    pub sub_total: Money,
    /// Tax on the line.
    pub tax_amount: Money,
    /// Line total including tax.
    pub total_amount: Money,
}

/// An invoice as a connector returns it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Invoice {
    /// The platform's id.
    pub invoice_id: String,
    /// The number people see.
    pub invoice_number: Option<String>,
    /// The platform's id of the customer.
    pub customer_id: Option<String>,
    /// The customer's name.
    pub customer_name: Option<String>,
    /// Issue date.
    pub issue_date: NaiveDate,
    /// Due date.
    pub due_date: Option<NaiveDate>,
    /// When it was fully paid.
    pub paid_on_date: Option<NaiveDate>,
    /// ISO 4217 code.
    pub currency: String,
    /// Total before tax.
    pub sub_total: Money,
    /// Tax.
    pub total_tax_amount: Money,
    /// Total including tax.
    pub total_amount: Money,
    /// Still owed.
    pub amount_due: Money,
    /// Status in our vocabulary.
    pub status: InvoiceStatus,
    /// Lines.
    pub line_items: Vec<LineItem>,
    /// A note.
    pub note: Option<String>,
    /// When the platform's record changed.
    pub source_modified_date: Option<DateTime<Utc>>,
}

/// A customer as a connector returns it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Customer {
    /// The platform's id.
    pub customer_id: String,
    /// The customer's (company) name.
    pub customer_name: String,
    /// Contact e-mail.
    pub email_address: Option<String>,
    /// Contact phone.
    pub phone: Option<String>,
    /// Currency it is invoiced in.
    pub default_currency: Option<String>,
    /// `Active` or `Archived`.
    pub status: CustomerStatus,
    /// When the platform's record changed.
    pub source_modified_date: Option<DateTime<Utc>>,
}

/// Whether a customer is in use.
#[derive(Debug, Clone, Copy, PartialEq, Eq, poem_openapi::Enum, Serialize)]
pub enum CustomerStatus {
    /// In use.
    Active,
    /// Archived on the platform.
    Archived,
}

impl CustomerStatus {
    /// The stored name.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Active => "Active",
            Self::Archived => "Archived",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn money_round_trips_decimals_exactly() {
        let amount: Decimal = "1234.56".parse().expect("a decimal");
        let money = Money::from_decimal(amount).expect("representable");
        assert_eq!(money, Money(12_345_600));
        assert_eq!(money.to_decimal().to_string(), "1234.56");
        assert_eq!(Money::from_cents(500).to_decimal().to_string(), "5.00");
        assert_eq!(Money(0).to_decimal().to_string(), "0.00");
        assert_eq!(Money(12_345).to_decimal().to_string(), "1.2345");
        assert_eq!(
            Money::from_decimal("0.00001".parse().expect("a decimal")),
            None
        );
    }

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
}
