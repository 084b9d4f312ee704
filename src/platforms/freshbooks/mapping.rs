//! FreshBooks' answers and how they become our records: lists wrapped in
//! `response.result` with `page`/`pages`/`total`, money as `{amount, code}`
//! objects of decimal strings, line taxes as percentages (their amounts are
//! computed), `v3_status` words mapped with what is outstanding, deleted
//! records (`vis_state` 1) kept as void or archived, and `updated` times
//! written in US/Eastern without a zone.

use chrono::{DateTime, Duration, NaiveDate, NaiveDateTime, Utc, Weekday};
use rust_decimal::{Decimal, RoundingStrategy};
use serde::Deserialize;

use crate::data::customers::{Customer, CustomerStatus};
use crate::data::invoices::{CustomerRef, Invoice, InvoiceStatus, LineItem};
use crate::data::money::Money;
use crate::platforms::connector::ConnectorError;
use crate::platforms::kit::json::{self, Amount, money, quantity};
use crate::platforms::kit::records::{Each, Keyed, Unreadable};
use crate::platforms::kit::status::{StatusTable, by_balance, lookup};
use crate::timestamp::Timestamp;

/// FreshBooks' `v3_status` words that need no amounts. The others it
/// documents (`sent`, `viewed`, `overdue`, `partial`, `disputed`,
/// `resolved`, `failed`, `retry`, `declined`, `pending`, `deposit-partial`,
/// `deposit-paid`) say where sending or collecting stands, not how much is
/// paid: [`invoice_status`] decides those by what is outstanding.
const STATUSES: StatusTable = &[
    ("draft", InvoiceStatus::Draft),
    ("created", InvoiceStatus::Draft),
    ("paid", InvoiceStatus::Paid),
    ("autopaid", InvoiceStatus::Paid),
    ("success", InvoiceStatus::Paid),
];

/// The `v3_status` words decided by the amounts.
const BY_BALANCE: &[&str] = &[
    "sent",
    "viewed",
    "overdue",
    "partial",
    "disputed",
    "resolved",
    "failed",
    "retry",
    "declined",
    "pending",
    "deposit-partial",
    "deposit-paid",
];

/// `vis_state` of a deleted record.
pub(super) const DELETED: i64 = 1;

/// FreshBooks' invoice status: deleted invoices are void; otherwise its
/// `v3_status`, with the amounts where the word does not settle it.
pub(super) fn invoice_status(
    v3_status: &str,
    vis_state: Option<i64>,
    total: Money,
    outstanding: Money,
) -> InvoiceStatus {
    if vis_state == Some(DELETED) {
        return InvoiceStatus::Void;
    }
    let word = v3_status.trim().to_ascii_lowercase();
    if BY_BALANCE.contains(&word.as_str()) {
        return by_balance(total, outstanding);
    }
    lookup(STATUSES, &word).unwrap_or(InvoiceStatus::Unknown)
}

/// `amount × rate %`, rounded to the cent (half away from zero).
fn percent_of(amount: Money, rate: Decimal) -> Money {
    let exact = amount.to_decimal() * rate / Decimal::ONE_HUNDRED;
    Money::from_decimal(exact.round_dp_with_strategy(2, RoundingStrategy::MidpointAwayFromZero))
        .unwrap_or_default()
}

/// A FreshBooks date-time (`YYYY-MM-DD hh:mm:ss`, US/Eastern, no zone) in
/// UTC, by the US daylight-saving rule in force since 2007 (EDT, UTC−4, from
/// 2:00 on March's second Sunday to 2:00 on November's first; EST, UTC−5,
/// otherwise). Other forms are read as [`json::datetime`] reads them.
pub(super) fn eastern(text: &str) -> Option<Timestamp> {
    let Ok(local) = NaiveDateTime::parse_from_str(text.trim(), "%Y-%m-%d %H:%M:%S") else {
        return json::datetime(text).map(Timestamp);
    };
    let year = chrono::Datelike::year(&local.date());
    let at_two = |date: Option<NaiveDate>| date.and_then(|date| date.and_hms_opt(2, 0, 0));
    let starts = at_two(NaiveDate::from_weekday_of_month_opt(
        year,
        3,
        Weekday::Sun,
        2,
    ));
    let ends = at_two(NaiveDate::from_weekday_of_month_opt(
        year,
        11,
        Weekday::Sun,
        1,
    ));
    let daylight =
        matches!((starts, ends), (Some(starts), Some(ends)) if local >= starts && local < ends);
    let offset_hours = if daylight { 4 } else { 5 };
    let utc: DateTime<Utc> = (local + Duration::hours(offset_hours)).and_utc();
    Some(Timestamp(utc))
}

/// A FreshBooks date-time written in UTC (`YYYY-MM-DD hh:mm:ss`, no zone:
/// the bills' `updated_at`, which the SDK reads as UTC); other forms are
/// read as [`json::datetime`] reads them.
pub(super) fn utc(text: &str) -> Option<Timestamp> {
    NaiveDateTime::parse_from_str(text.trim(), "%Y-%m-%d %H:%M:%S")
        .map(|at| at.and_utc())
        .ok()
        .or_else(|| json::datetime(text))
        .map(Timestamp)
}

/// FreshBooks' money: `{"amount": "3000.00", "code": "USD"}`.
#[derive(Deserialize)]
pub(super) struct FbMoney {
    amount: Option<Amount>,
    /// The currency of the amount.
    pub(super) code: Option<String>,
}

/// The exact amount of FreshBooks' money; zero when it gives none.
pub(super) fn amount(value: Option<FbMoney>) -> Money {
    money(value.and_then(|value| value.amount))
}

/// An id FreshBooks writes as a number or as a string (the SDK types
/// `invoiceid` and `clientid` of a payment as strings).
#[derive(Deserialize)]
#[serde(untagged)]
pub(super) enum FbId {
    /// `1234`.
    Number(i64),
    /// `"1234"`.
    Text(String),
}

impl FbId {
    /// The id as text; `None` for FreshBooks' "none" (`0` or empty).
    pub(super) fn named(self) -> Option<String> {
        match self {
            Self::Number(0) => None,
            Self::Number(id) => Some(id.to_string()),
            Self::Text(text) => json::non_empty(Some(text)).filter(|text| text != "0"),
        }
    }
}

/// An accounting error: `{"errno": 1012, "field": …, "message": …}`.
#[derive(Deserialize)]
pub(super) struct FbError {
    message: Option<String>,
    errno: Option<i64>,
}

/// Accounting answers carry errors in `response.errors`, whatever the
/// HTTP status: any error fails the page with FreshBooks' own words.
pub(super) fn check_errors(errors: &[FbError]) -> Result<(), ConnectorError> {
    if errors.is_empty() {
        return Ok(());
    }
    let words: Vec<String> = errors
        .iter()
        .map(|error| match (&error.message, error.errno) {
            (Some(message), Some(errno)) => format!("{message} (errno {errno})"),
            (Some(message), None) => message.clone(),
            (None, Some(errno)) => format!("errno {errno}"),
            (None, None) => "an error".to_owned(),
        })
        .collect();
    Err(ConnectorError::Failed(format!(
        "FreshBooks answered: {}; the previous data is kept",
        words.join("; ")
    )))
}

/// An accounting list answer: `{"response": {"result": {…}, "errors": […]}}`.
#[derive(Deserialize)]
pub(super) struct ListAnswer<T> {
    pub(super) response: ListResponse<T>,
}

/// The `response` of a list answer.
#[derive(Deserialize)]
pub(super) struct ListResponse<T> {
    pub(super) result: Option<T>,
    #[serde(default)]
    pub(super) errors: Vec<FbError>,
}

/// A page of `GET …/invoices/invoices`.
#[derive(Deserialize)]
pub(super) struct InvoicesPage {
    #[serde(default)]
    pub(super) invoices: Each<FreshBooksInvoice>,
    pub(super) pages: Option<u64>,
    pub(super) total: Option<u64>,
}

/// A page of `GET …/users/clients`.
#[derive(Deserialize)]
pub(super) struct ClientsPage {
    #[serde(default)]
    pub(super) clients: Each<FreshBooksClient>,
    pub(super) pages: Option<u64>,
    pub(super) total: Option<u64>,
}

/// `GET /auth/api/v1/users/me`'s answer.
#[derive(Deserialize)]
pub(super) struct IdentityAnswer {
    pub(super) response: Identity,
}

/// The user a token belongs to.
#[derive(Deserialize)]
pub(super) struct Identity {
    #[serde(default)]
    pub(super) business_memberships: Vec<Membership>,
}

/// One business the user belongs to.
#[derive(Deserialize)]
pub(super) struct Membership {
    pub(super) business: Option<Business>,
    /// The user's role in it (`owner`, `employee`, `client`, ...).
    pub(super) role: Option<String>,
}

/// A business, with the account id of its accounting URLs.
#[derive(Deserialize)]
pub(super) struct Business {
    pub(super) account_id: Option<String>,
    /// The business id.
    pub(super) id: Option<u64>,
    /// The business's uuid, of the `/accounting/businesses/{uuid}` URLs.
    pub(super) business_uuid: Option<String>,
    /// Its name.
    pub(super) name: Option<String>,
    /// Its address.
    pub(super) address: Option<BusinessAddress>,
    /// Its phone (`{"id", "phone_number"}`).
    pub(super) phone_number: Option<BusinessPhone>,
}

/// A business's address as `/users/me` writes it.
#[derive(Deserialize)]
pub(super) struct BusinessAddress {
    /// The street.
    pub(super) street: Option<String>,
    /// The city.
    pub(super) city: Option<String>,
    /// The province or state.
    pub(super) province: Option<String>,
    /// The country, by name (`Canada`).
    pub(super) country: Option<String>,
    /// The postal code.
    pub(super) postal_code: Option<String>,
}

/// A business's phone as `/users/me` writes it.
#[derive(Deserialize)]
pub(super) struct BusinessPhone {
    /// The number.
    pub(super) phone_number: Option<String>,
}

/// An invoice as FreshBooks writes it (with `include[]=lines`).
#[derive(Deserialize)]
pub(super) struct FreshBooksInvoice {
    id: Option<i64>,
    invoiceid: Option<i64>,
    invoice_number: Option<String>,
    customerid: Option<i64>,
    organization: Option<String>,
    fname: Option<String>,
    lname: Option<String>,
    create_date: Option<String>,
    due_date: Option<String>,
    date_paid: Option<String>,
    currency_code: Option<String>,
    amount: Option<FbMoney>,
    outstanding: Option<FbMoney>,
    discount_total: Option<FbMoney>,
    v3_status: Option<String>,
    vis_state: Option<i64>,
    notes: Option<String>,
    updated: Option<String>,
    #[serde(default)]
    lines: Vec<FreshBooksLine>,
}

/// One invoice line (credit notes' lines have the same shape).
#[derive(Deserialize)]
pub(super) struct FreshBooksLine {
    name: Option<String>,
    description: Option<String>,
    qty: Option<Amount>,
    unit_cost: Option<FbMoney>,
    amount: Option<FbMoney>,
    #[serde(rename = "taxAmount1")]
    tax_amount1: Option<Amount>,
    #[serde(rename = "taxAmount2")]
    tax_amount2: Option<Amount>,
    compounded_tax: Option<bool>,
}

impl FreshBooksLine {
    /// The line: `amount` is its total before tax; `taxAmount1`/`2` are
    /// percentages (the second on top of the first when compounded).
    fn into_line(self) -> LineItem {
        let sub_total = amount(self.amount);
        let rate = |rate: Option<Amount>| money(rate).to_decimal();
        let first = percent_of(sub_total, rate(self.tax_amount1));
        let second_base = if self.compounded_tax == Some(true) {
            sub_total + first
        } else {
            sub_total
        };
        let tax_amount = first + percent_of(second_base, rate(self.tax_amount2));
        let description = match (
            json::non_empty(self.name),
            json::non_empty(self.description),
        ) {
            (Some(name), Some(description)) => format!("{name}: {description}"),
            (name, description) => name.or(description).unwrap_or_default(),
        };
        LineItem {
            description,
            unit_amount: amount(self.unit_cost),
            quantity: quantity(self.qty),
            discount_amount: Money(0),
            sub_total,
            tax_amount,
            total_amount: sub_total + tax_amount,
            account_ref: None,
        }
    }
}

/// Our lines of a document of `total` (an invoice, a credit note) with
/// `discount` off, and its subtotal and tax. FreshBooks gives no
/// document-level subtotal or tax: the lines' amounts less the discount are
/// the subtotal, and the rest of the total is tax; without lines, the
/// total is the subtotal and there is no tax.
pub(super) fn lines_and_totals(
    lines: Vec<FreshBooksLine>,
    total: Money,
    discount: Money,
) -> (Vec<LineItem>, Money, Money) {
    let line_items: Vec<LineItem> = lines.into_iter().map(FreshBooksLine::into_line).collect();
    if line_items.is_empty() {
        return (line_items, total, Money(0));
    }
    let lines = line_items
        .iter()
        .fold(Money(0), |sum, line| sum + line.sub_total);
    let sub_total = lines - discount;
    (line_items, sub_total, total - sub_total)
}

/// The name FreshBooks copies onto records: the organization, else the person.
pub(super) fn name(
    organization: Option<String>,
    first: Option<String>,
    last: Option<String>,
) -> Option<String> {
    json::non_empty(organization).or_else(|| {
        let person = [first, last]
            .into_iter()
            .filter_map(json::non_empty)
            .collect::<Vec<_>>()
            .join(" ");
        json::non_empty(Some(person))
    })
}

impl Keyed for FreshBooksInvoice {
    const ID: &'static str = "/id";
}

impl Keyed for FreshBooksClient {
    const ID: &'static str = "/id";
}

impl FreshBooksInvoice {
    /// Our invoice; one without an id or a readable `create_date` cannot be read.
    pub(super) fn into_record(self) -> Result<Invoice, Unreadable> {
        let invoice_id = self
            .id
            .or(self.invoiceid)
            .map(|id| id.to_string())
            .ok_or_else(|| Unreadable::field("id", "is missing, and so is invoiceid"))?;
        let issue_date = self
            .create_date
            .as_deref()
            .and_then(json::date)
            .ok_or_else(|| Unreadable::field("create_date", "is missing or not a date"))?;
        let total = amount(self.amount);
        let outstanding = amount(self.outstanding);
        let discount = Money(amount(self.discount_total).0.abs());
        let status = invoice_status(
            self.v3_status.as_deref().unwrap_or(""),
            self.vis_state,
            total,
            outstanding,
        );
        let (line_items, sub_total, tax) = lines_and_totals(self.lines, total, discount);
        Ok(Invoice {
            invoice_number: json::non_empty(self.invoice_number),
            customer_ref: CustomerRef::to(
                self.customerid.map(|id| id.to_string()),
                name(self.organization, self.fname, self.lname),
            ),
            issue_date,
            due_date: self.due_date.as_deref().and_then(json::date),
            paid_on_date: if status == InvoiceStatus::Paid {
                self.date_paid.as_deref().and_then(json::date)
            } else {
                None
            },
            currency: self.currency_code.unwrap_or_default(),
            sub_total,
            total_tax_amount: tax,
            total_amount: total,
            amount_due: outstanding,
            status,
            line_items,
            note: json::non_empty(self.notes),
            source_modified_date: self.updated.as_deref().and_then(eastern),
            invoice_id,
        })
    }
}

/// A client as FreshBooks writes it.
#[derive(Deserialize)]
pub(super) struct FreshBooksClient {
    id: i64,
    organization: Option<String>,
    fname: Option<String>,
    lname: Option<String>,
    email: Option<String>,
    bus_phone: Option<String>,
    mob_phone: Option<String>,
    home_phone: Option<String>,
    currency_code: Option<String>,
    vis_state: Option<i64>,
    updated: Option<String>,
}

impl FreshBooksClient {
    /// Our customer: the organization, else the person's name.
    pub(super) fn into_record(self) -> Customer {
        let customer_id = self.id.to_string();
        Customer {
            customer_name: name(self.organization, self.fname, self.lname)
                .unwrap_or_else(|| customer_id.clone()),
            email_address: json::non_empty(self.email),
            phone: json::non_empty(self.bus_phone)
                .or_else(|| json::non_empty(self.mob_phone))
                .or_else(|| json::non_empty(self.home_phone)),
            default_currency: json::non_empty(self.currency_code),
            status: match self.vis_state {
                None | Some(0) => CustomerStatus::Active,
                Some(_) => CustomerStatus::Archived,
            },
            source_modified_date: self.updated.as_deref().and_then(eastern),
            customer_id,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn freshbooks_statuses_map_with_what_is_outstanding() {
        let total = Money(1_000_000);
        for (word, outstanding, ours) in [
            ("draft", total, InvoiceStatus::Draft),
            ("created", total, InvoiceStatus::Draft),
            ("sent", total, InvoiceStatus::Submitted),
            ("viewed", total, InvoiceStatus::Submitted),
            ("overdue", total, InvoiceStatus::Submitted),
            ("overdue", Money(5), InvoiceStatus::PartiallyPaid),
            ("partial", Money(5), InvoiceStatus::PartiallyPaid),
            ("deposit-partial", Money(5), InvoiceStatus::PartiallyPaid),
            ("paid", Money(0), InvoiceStatus::Paid),
            ("autopaid", Money(0), InvoiceStatus::Paid),
            ("success", Money(0), InvoiceStatus::Paid),
            ("disputed", total, InvoiceStatus::Submitted),
            ("whatever", total, InvoiceStatus::Unknown),
        ] {
            assert_eq!(
                invoice_status(word, Some(0), total, outstanding),
                ours,
                "{word}"
            );
        }
        assert_eq!(
            invoice_status("paid", Some(DELETED), total, Money(0)),
            InvoiceStatus::Void
        );
    }

    #[test]
    fn eastern_times_become_utc_with_daylight_saving() {
        let utc = |text| eastern(text).map(|at| at.to_rfc3339());
        // Winter: EST, UTC−5.
        assert_eq!(
            utc("2026-01-15 10:00:00").as_deref(),
            Some("2026-01-15T15:00:00.000000Z")
        );
        // Summer: EDT, UTC−4 (2026: 8 March to 1 November).
        assert_eq!(
            utc("2026-07-01 23:30:00").as_deref(),
            Some("2026-07-02T03:30:00.000000Z")
        );
        assert_eq!(
            utc("2026-03-08 01:59:59").as_deref(),
            Some("2026-03-08T06:59:59.000000Z")
        );
        assert_eq!(
            utc("2026-03-08 03:00:00").as_deref(),
            Some("2026-03-08T07:00:00.000000Z")
        );
        assert_eq!(
            utc("2026-11-01 02:00:00").as_deref(),
            Some("2026-11-01T07:00:00.000000Z")
        );
        assert_eq!(eastern("yesterday"), None);
    }

    #[test]
    fn line_taxes_are_percentages_of_the_line() {
        assert_eq!(
            percent_of(Money(3_000_000), Decimal::new(13, 0)),
            Money(390_000)
        );
        assert_eq!(
            percent_of(Money(12_345), Decimal::new(7_125, 3)),
            Money(900)
        );
    }
}
