//! Wave's GraphQL answers and how they become our records: the `data` and
//! `errors` envelope (an auth error in `errors` counts as a 401), Wave's
//! `Money { value }` amounts, its invoice statuses (with the amounts that
//! tell a part payment apart), line items with their taxes and accounts,
//! and customers and vendors (one shape, [`WaveContact`]). The chart and
//! settings: [`super::chart`].

use serde::Deserialize;

use crate::data::accounts::AccountRef;
use crate::data::customers::{Customer, CustomerStatus};
use crate::data::invoices::{CustomerRef, Invoice, InvoiceStatus, LineItem};
use crate::data::money::Money;
use crate::data::suppliers::{Supplier, SupplierStatus};
use crate::platforms::connector::ConnectorError;
use crate::platforms::kit::http::scrub;
use crate::platforms::kit::json::{self, Amount, quantity};
use crate::platforms::kit::records::{Each, Keyed, Read, Unreadable};
use crate::platforms::kit::status::{StatusTable, lookup};

/// Wave's invoice statuses that need no amounts. `SAVED` is approved but
/// not yet sent, as Xero's `SUBMITTED` and Zoho's `approved` (Draft).
/// `OVERPAID` was paid more than in full. `SENT`, `VIEWED`, `OVERDUE` and
/// `UNPAID` depend on what was paid ([`invoice_status`]).
const STATUSES: StatusTable = &[
    ("DRAFT", InvoiceStatus::Draft),
    ("SAVED", InvoiceStatus::Draft),
    ("PARTIAL", InvoiceStatus::PartiallyPaid),
    ("PAID", InvoiceStatus::Paid),
    ("OVERPAID", InvoiceStatus::Paid),
];

/// Wave's invoice status, with the amounts that tell a part payment apart.
pub(super) fn invoice_status(status: &str, total: Money, amount_due: Money) -> InvoiceStatus {
    match status {
        "SENT" | "VIEWED" | "OVERDUE" | "UNPAID" if amount_due > Money(0) && amount_due < total => {
            InvoiceStatus::PartiallyPaid
        }
        "SENT" | "VIEWED" | "OVERDUE" | "UNPAID" => InvoiceStatus::Submitted,
        other => lookup(STATUSES, other).unwrap_or(InvoiceStatus::Unknown),
    }
}

/// A GraphQL answer: `data`, and `errors` when something failed.
#[derive(Deserialize)]
pub(super) struct Answer<T> {
    pub(super) data: Option<T>,
    #[serde(default)]
    pub(super) errors: Vec<GraphqlError>,
}

/// One entry of `errors`.
#[derive(Deserialize)]
pub(super) struct GraphqlError {
    message: Option<String>,
    extensions: Option<Extensions>,
}

/// An error's `extensions`: the kind of problem and Wave's id for support.
#[derive(Deserialize)]
struct Extensions {
    code: Option<String>,
    id: Option<String>,
}

/// Error codes that say the access token was not accepted: the same as a 401.
const UNAUTHENTICATED: &[&str] = &["UNAUTHENTICATED"];
/// Error codes that say the token may not see this (a scope it lacks): the
/// same as a 403, which fails the data type and keeps the connection.
const FORBIDDEN: &[&str] = &["FORBIDDEN", "UNAUTHORIZED"];

impl<T> Answer<T> {
    /// The `data` of an answer without errors; `errors` in words otherwise
    /// (`what` was asked for; `token` is scrubbed from Wave's messages).
    pub(super) fn data(self, what: &str, token: &str) -> Result<T, ConnectorError> {
        if self.errors.is_empty() {
            return self.data.ok_or_else(|| {
                ConnectorError::Failed(format!(
                    "Wave answered {what} without data; the previous data is kept"
                ))
            });
        }
        let code = |error: &GraphqlError| {
            error
                .extensions
                .as_ref()
                .and_then(|extensions| extensions.code.clone())
                .unwrap_or_default()
        };
        let described: Vec<String> = self
            .errors
            .iter()
            .map(|error| {
                let message = error.message.as_deref().unwrap_or("no message");
                let mut text = scrub(message, &[token]);
                let code = code(error);
                if !code.is_empty() {
                    text = format!("{text} ({code}");
                    if let Some(id) = error.extensions.as_ref().and_then(|e| e.id.as_deref()) {
                        text = format!("{text}, error id {}", scrub(id, &[token]));
                    }
                    text.push(')');
                }
                text
            })
            .collect();
        let message = format!("Wave answered {what} with errors: {}", described.join("; "));
        let codes: Vec<String> = self.errors.iter().map(code).collect();
        if codes
            .iter()
            .any(|code| UNAUTHENTICATED.contains(&code.as_str()))
        {
            Err(ConnectorError::Expired(message))
        } else if codes.iter().any(|code| FORBIDDEN.contains(&code.as_str())) {
            Err(ConnectorError::Permissions(message))
        } else {
            Err(ConnectorError::Failed(format!(
                "{message}; the previous data is kept"
            )))
        }
    }
}

/// `data` of the queries on one business.
#[derive(Deserialize)]
pub(super) struct BusinessData<T> {
    pub(super) business: Option<T>,
}

/// The business, as the verification query and the link flow's
/// `businesses` query ask for it.
#[derive(Deserialize)]
pub(super) struct Business {
    pub(super) id: String,
    pub(super) name: Option<String>,
}

/// `data` of the `businesses` query: the businesses the token reaches
/// (null in Wave's schema, as each list of a business is).
#[derive(Deserialize)]
pub(super) struct BusinessesData {
    pub(super) businesses: Option<Connection<Vec<Edge<Business>>>>,
}

/// The business with a page of its invoices.
#[derive(Deserialize)]
pub(super) struct BusinessInvoices {
    pub(super) invoices: Option<Connection<Each<Edge<WaveInvoice>>>>,
}

/// The business with a page of its customers.
#[derive(Deserialize)]
pub(super) struct BusinessCustomers {
    pub(super) customers: Option<Connection<Each<Edge<WaveContact>>>>,
}

/// The business with a page of its vendors.
#[derive(Deserialize)]
pub(super) struct BusinessVendors {
    pub(super) vendors: Option<Connection<Each<Edge<WaveContact>>>>,
}

/// A page of a list: where it stands, and its edges (`L`: records read one
/// by one, or a `Vec` of the businesses a token reaches).
#[derive(Deserialize)]
#[serde(
    rename_all = "camelCase",
    bound = "L: serde::de::DeserializeOwned + Default"
)]
pub(super) struct Connection<L> {
    pub(super) page_info: Option<PageInfo>,
    #[serde(default)]
    pub(super) edges: L,
}

/// One record of a page; Wave's schema lets a customer's or a business's
/// node be null.
#[derive(Deserialize)]
pub(super) struct Edge<T> {
    pub(super) node: Option<T>,
}

impl Keyed for Edge<WaveInvoice> {
    const ID: &'static str = "/node/id";
}

impl Keyed for Edge<WaveContact> {
    const ID: &'static str = "/node/id";
}

impl<T> Connection<Each<Edge<T>>>
where
    Edge<T>: Keyed,
{
    /// The page's records, each through `into`. A null node (a record Wave
    /// could not give, without saying why in `errors`) costs that record:
    /// it is an issue without an id, so that no record missing from the
    /// sync is counted deleted.
    pub(super) fn read<R>(self, mut into: impl FnMut(T) -> Result<R, Unreadable>) -> Read<R> {
        self.edges.read(|edge| match edge.node {
            Some(node) => into(node).map(Some),
            None => Err(Unreadable::field("node", "is null")),
        })
    }
}

impl<T> Connection<Vec<Edge<T>>> {
    /// The businesses a token reaches; a null node fails the list.
    pub(super) fn nodes(self, what: &str) -> Result<Vec<T>, ConnectorError> {
        self.edges
            .into_iter()
            .map(|edge| {
                edge.node.ok_or_else(|| {
                    ConnectorError::Failed(format!(
                        "Wave answered {what} with an empty record; the previous data is kept"
                    ))
                })
            })
            .collect()
    }
}

/// `pageInfo`: "check if `currentPage < totalPages`".
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
pub(super) struct PageInfo {
    pub(super) current_page: Option<u64>,
    pub(super) total_pages: Option<u64>,
    pub(super) total_count: Option<u64>,
}

/// Wave's `Money`: its `value` is a decimal string ("100.00").
#[derive(Deserialize)]
pub(super) struct WaveMoney {
    value: Option<Amount>,
}

fn money(value: Option<WaveMoney>) -> Money {
    json::money(value.and_then(|money| money.value))
}

/// A `Currency`, as its `code`.
#[derive(Deserialize)]
pub(super) struct Currency {
    pub(super) code: Option<String>,
}

impl Currency {
    /// The code of `currency`, when Wave gives one.
    pub(super) fn code_of(currency: Option<Self>) -> Option<String> {
        currency.and_then(|currency| json::non_empty(currency.code))
    }
}

/// A link to an `Account` of the chart: its `id` and `name`.
#[derive(Deserialize)]
pub(super) struct AccountLink {
    id: Option<String>,
    name: Option<String>,
}

impl AccountLink {
    /// Our reference to the account, when Wave names one.
    pub(super) fn to_ref(link: Option<Self>) -> Option<AccountRef> {
        link.and_then(|link| AccountRef::to(json::non_empty(link.id), json::non_empty(link.name)))
    }
}

/// The customer an invoice is addressed to.
#[derive(Deserialize)]
struct CustomerLink {
    id: Option<String>,
    name: Option<String>,
}

/// The product a line sells, as its `name`.
#[derive(Deserialize)]
struct Product {
    name: Option<String>,
}

/// A tax on a line, as its amount.
#[derive(Deserialize)]
struct ItemTax {
    amount: Option<WaveMoney>,
}

/// An invoice's line (`InvoiceItem`).
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Item {
    account: Option<AccountLink>,
    product: Option<Product>,
    description: Option<String>,
    quantity: Option<Amount>,
    unit_price: Option<Amount>,
    subtotal: Option<WaveMoney>,
    total: Option<WaveMoney>,
    #[serde(default)]
    taxes: Vec<ItemTax>,
}

/// An invoice as Wave's `invoices` query gives it.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
pub(super) struct WaveInvoice {
    id: String,
    invoice_number: Option<String>,
    status: Option<String>,
    invoice_date: Option<String>,
    due_date: Option<String>,
    modified_at: Option<String>,
    customer: Option<CustomerLink>,
    currency: Option<Currency>,
    subtotal: Option<WaveMoney>,
    tax_total: Option<WaveMoney>,
    total: Option<WaveMoney>,
    amount_due: Option<WaveMoney>,
    memo: Option<String>,
    /// `[InvoiceItem!]`: null in Wave's schema.
    #[serde(default, deserialize_with = "json::list_or_null")]
    items: Vec<Item>,
}

impl WaveInvoice {
    /// Our invoice; one without a readable `invoiceDate` cannot be read.
    pub(super) fn into_record(self) -> Result<Invoice, Unreadable> {
        let issue_date = self
            .invoice_date
            .as_deref()
            .and_then(json::date)
            .ok_or_else(|| Unreadable::field("invoiceDate", "is missing or not a date"))?;
        let total = money(self.total);
        let tax = money(self.tax_total);
        let amount_due = money(self.amount_due);
        let line_items = self
            .items
            .into_iter()
            .map(|item| {
                let tax_amount = item
                    .taxes
                    .into_iter()
                    .fold(Money(0), |sum, tax| sum + money(tax.amount));
                let sub_total = match item.subtotal {
                    Some(subtotal) => money(Some(subtotal)),
                    None => money(item.total) - tax_amount,
                };
                LineItem {
                    description: json::non_empty(item.description)
                        .or_else(|| {
                            item.product
                                .and_then(|product| json::non_empty(product.name))
                        })
                        .unwrap_or_default(),
                    unit_amount: json::money(item.unit_price),
                    quantity: quantity(item.quantity),
                    discount_amount: Money(0),
                    sub_total,
                    tax_amount,
                    total_amount: sub_total + tax_amount,
                    account_ref: AccountLink::to_ref(item.account),
                }
            })
            .collect();
        let (customer_id, customer_name) = self
            .customer
            .map_or((None, None), |customer| (customer.id, customer.name));
        Ok(Invoice {
            invoice_number: json::non_empty(self.invoice_number),
            customer_ref: CustomerRef::to(
                json::non_empty(customer_id),
                json::non_empty(customer_name),
            ),
            issue_date,
            due_date: self.due_date.as_deref().and_then(json::date),
            // Wave's invoice gives no payment date.
            paid_on_date: None,
            currency: Currency::code_of(self.currency).unwrap_or_default(),
            sub_total: match self.subtotal {
                Some(subtotal) => money(Some(subtotal)),
                None => total - tax,
            },
            total_tax_amount: tax,
            total_amount: total,
            amount_due,
            status: invoice_status(self.status.as_deref().unwrap_or(""), total, amount_due),
            line_items,
            note: json::non_empty(self.memo),
            source_modified_date: json::timestamp(self.modified_at.as_deref()),
            invoice_id: self.id,
        })
    }
}

/// A customer or a vendor: Wave's `Customer` and `Vendor` have the same
/// fields (`Vendor` without the outstanding amounts, not asked for).
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
pub(super) struct WaveContact {
    id: String,
    name: Option<String>,
    email: Option<String>,
    phone: Option<String>,
    mobile: Option<String>,
    currency: Option<Currency>,
    /// Nullable in Wave's schema: null reads as not archived.
    is_archived: Option<bool>,
    modified_at: Option<String>,
}

impl WaveContact {
    /// Our customer.
    pub(super) fn into_record(self) -> Customer {
        Customer {
            customer_name: json::non_empty(self.name).unwrap_or_else(|| self.id.clone()),
            email_address: json::non_empty(self.email),
            phone: json::non_empty(self.phone).or_else(|| json::non_empty(self.mobile)),
            default_currency: Currency::code_of(self.currency),
            status: if self.is_archived == Some(true) {
                CustomerStatus::Archived
            } else {
                CustomerStatus::Active
            },
            source_modified_date: json::timestamp(self.modified_at.as_deref()),
            customer_id: self.id,
        }
    }

    /// Our supplier: a vendor read as a customer is.
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
    fn wave_statuses_map_with_their_amounts() {
        let total = Money(1_000_000);
        assert_eq!(invoice_status("DRAFT", total, total), InvoiceStatus::Draft);
        assert_eq!(invoice_status("SAVED", total, total), InvoiceStatus::Draft);
        assert_eq!(
            invoice_status("SENT", total, total),
            InvoiceStatus::Submitted
        );
        assert_eq!(
            invoice_status("VIEWED", total, total),
            InvoiceStatus::Submitted
        );
        assert_eq!(
            invoice_status("OVERDUE", total, Money(5)),
            InvoiceStatus::PartiallyPaid
        );
        assert_eq!(
            invoice_status("PARTIAL", total, Money(5)),
            InvoiceStatus::PartiallyPaid
        );
        assert_eq!(invoice_status("PAID", total, Money(0)), InvoiceStatus::Paid);
        assert_eq!(
            invoice_status("OVERPAID", total, Money(-5)),
            InvoiceStatus::Paid
        );
        assert_eq!(
            invoice_status("UNPAID", total, total),
            InvoiceStatus::Submitted
        );
        assert_eq!(
            invoice_status("UNPAID", total, Money(5)),
            InvoiceStatus::PartiallyPaid
        );
        assert_eq!(
            invoice_status("REFUNDED", total, total),
            InvoiceStatus::Unknown
        );
    }

    #[test]
    fn errors_in_the_answer_are_failures_and_an_unauthenticated_one_is_a_401() {
        let answer: Answer<()> = serde_json::from_str(
            r#"{"data": null, "errors": [{"message": "Invalid token tok-123", "extensions": {"code": "UNAUTHENTICATED", "id": "e4"}}]}"#,
        )
        .expect("parses");
        match answer.data("a page of invoices", "tok-123") {
            Err(ConnectorError::Expired(message)) => {
                assert!(
                    message.contains("UNAUTHENTICATED, error id e4"),
                    "{message}"
                );
                assert!(!message.contains("tok-123"), "{message}");
            }
            _ => panic!("an expired token"),
        }
        let answer: Answer<()> = serde_json::from_str(
            r#"{"errors": [{"message": "Unknown argument", "extensions": {"code": "GRAPHQL_VALIDATION_FAILED"}}]}"#,
        )
        .expect("parses");
        assert!(matches!(
            answer.data("x", "t"),
            Err(ConnectorError::Failed(_))
        ));
    }
}
