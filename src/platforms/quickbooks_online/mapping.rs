//! QuickBooks Online's answers and how they become our records: the query
//! endpoint's envelope, sales (invoices, credit memos, customers and
//! vendors) and the chart of accounts and tax rates, and the parts other
//! entities share. QuickBooks has no invoice status: it follows from the
//! balance against the total, and a voided invoice keeps its lines at zero
//! with a "Voided" note. Bills and payments are in `settlements.rs`, the
//! company and its items in `company.rs`, journal entries in `journals.rs`.

use serde::Deserialize;

use crate::data::accounts::{Account, AccountClassification, AccountStatus};
use crate::data::credit_notes::{CreditNote, status_by_remaining};
use crate::data::customers::{Customer, CustomerStatus};
use crate::data::invoices::{CustomerRef, Invoice, InvoiceStatus, LineItem};
use crate::data::money::{Money, Quantity};
use crate::data::suppliers::{Supplier, SupplierStatus};
use crate::data::tax_rates::{TaxRate, TaxRateComponent, TaxRateStatus};
use crate::platforms::kit::json::{self, Amount, money};
use crate::platforms::kit::records::{Each, Keyed, Unreadable};
use crate::platforms::kit::status::by_balance;

/// Our status of a QuickBooks invoice: void when voided, else by balance.
pub(super) fn invoice_status(total: Money, balance: Money, voided: bool) -> InvoiceStatus {
    if voided {
        InvoiceStatus::Void
    } else {
        by_balance(total, balance)
    }
}

/// The query endpoint's answer.
#[derive(Deserialize)]
pub(super) struct QueryAnswer<T> {
    #[serde(rename = "QueryResponse")]
    pub(super) query_response: T,
}

/// Invoices a query found.
#[derive(Deserialize, Default)]
pub(super) struct InvoiceList {
    #[serde(rename = "Invoice", default)]
    pub(super) invoice: Each<QboInvoice>,
}

/// Customers a query found.
#[derive(Deserialize, Default)]
pub(super) struct CustomerList {
    #[serde(rename = "Customer", default)]
    pub(super) customer: Each<QboCustomer>,
}

/// Vendors (suppliers) a query found: a `Vendor` has the fields of a
/// `Customer` that tributary reads (`DisplayName`, `CompanyName`,
/// `PrimaryEmailAddr`, `PrimaryPhone`, `CurrencyRef`, `Active`, `MetaData`).
#[derive(Deserialize, Default)]
pub(super) struct VendorList {
    #[serde(rename = "Vendor", default)]
    pub(super) vendor: Each<QboCustomer>,
}

/// Tax rates a query found.
#[derive(Deserialize, Default)]
pub(super) struct TaxRateList {
    #[serde(rename = "TaxRate", default)]
    pub(super) tax_rate: Each<QboTaxRate>,
}

/// A tax rate as QuickBooks writes it (the `TaxRate` entity: one agency's
/// rate; a `TaxCode` groups rates for a line).
#[derive(Deserialize)]
#[serde(rename_all = "PascalCase")]
pub(super) struct QboTaxRate {
    id: String,
    name: Option<String>,
    rate_value: Option<Amount>,
    active: Option<bool>,
    meta_data: Option<MetaData>,
}

impl Keyed for QboTaxRate {
    const ID: &'static str = "/Id";
}

impl QboTaxRate {
    /// Our tax rate: one component, the rate itself.
    pub(super) fn into_record(self) -> TaxRate {
        let name = json::non_empty(self.name).unwrap_or_else(|| self.id.clone());
        let rate = json::quantity(self.rate_value);
        TaxRate {
            code: None,
            components: vec![TaxRateComponent {
                name: name.clone(),
                rate,
                is_compound: false,
            }],
            name,
            effective_tax_rate: rate,
            status: if self.active == Some(false) {
                TaxRateStatus::Archived
            } else {
                TaxRateStatus::Active
            },
            source_modified_date: json::timestamp(
                self.meta_data
                    .and_then(|meta| meta.last_updated_time)
                    .as_deref(),
            ),
            tax_rate_id: self.id,
        }
    }
}

/// Accounts a query found.
#[derive(Deserialize, Default)]
pub(super) struct AccountList {
    #[serde(rename = "Account", default)]
    pub(super) account: Each<QboAccount>,
}

/// A reference to another entity (`{"value": "35", "name": "Checking"}`).
#[derive(Deserialize)]
pub(super) struct Reference {
    pub(super) value: Option<String>,
    pub(super) name: Option<String>,
}

/// A document's tax, given for the whole document only.
#[derive(Deserialize)]
#[serde(rename_all = "PascalCase")]
pub(super) struct TaxDetail {
    pub(super) total_tax: Option<Amount>,
}

/// When an entity last changed.
#[derive(Deserialize)]
#[serde(rename_all = "PascalCase")]
pub(super) struct MetaData {
    pub(super) last_updated_time: Option<String>,
}

#[derive(Deserialize)]
struct Memo {
    value: Option<String>,
}

impl Keyed for QboInvoice {
    const ID: &'static str = "/Id";
}

impl Keyed for QboCustomer {
    const ID: &'static str = "/Id";
}

impl Keyed for QboAccount {
    const ID: &'static str = "/Id";
}

/// An invoice as QuickBooks writes it.
#[derive(Deserialize)]
#[serde(rename_all = "PascalCase")]
pub(super) struct QboInvoice {
    id: String,
    doc_number: Option<String>,
    txn_date: Option<String>,
    due_date: Option<String>,
    currency_ref: Option<Reference>,
    customer_ref: Option<Reference>,
    total_amt: Option<Amount>,
    balance: Option<Amount>,
    txn_tax_detail: Option<TaxDetail>,
    #[serde(default)]
    line: Vec<QboLine>,
    private_note: Option<String>,
    customer_memo: Option<Memo>,
    meta_data: Option<MetaData>,
}

#[derive(Deserialize)]
#[serde(rename_all = "PascalCase")]
struct QboLine {
    description: Option<String>,
    amount: Option<Amount>,
    detail_type: Option<String>,
    sales_item_line_detail: Option<SalesItemLineDetail>,
}

/// An item line's price and quantity (sales and item-based expense lines alike).
#[derive(Deserialize)]
#[serde(rename_all = "PascalCase")]
pub(super) struct SalesItemLineDetail {
    pub(super) unit_price: Option<Amount>,
    pub(super) qty: Option<Amount>,
}

impl QboInvoice {
    /// Our invoice; one without a readable `TxnDate` cannot be read.
    pub(super) fn into_record(self) -> Result<Invoice, Unreadable> {
        let issue_date = self
            .txn_date
            .as_deref()
            .and_then(json::date)
            .ok_or_else(|| Unreadable::field("TxnDate", "is missing or not a date"))?;
        let total = money(self.total_amt);
        let balance = money(self.balance);
        let tax = money(self.txn_tax_detail.and_then(|detail| detail.total_tax));
        let voided = total == Money(0)
            && self
                .private_note
                .as_deref()
                .is_some_and(|note| note.trim_start().starts_with("Voided"));
        let line_items = sale_lines(self.line);
        let (customer_id, customer_name) = self
            .customer_ref
            .map_or((None, None), |customer| (customer.value, customer.name));
        Ok(Invoice {
            invoice_number: json::non_empty(self.doc_number),
            customer_ref: CustomerRef::to(customer_id, customer_name),
            issue_date,
            due_date: self.due_date.as_deref().and_then(json::date),
            paid_on_date: None,
            currency: self
                .currency_ref
                .and_then(|currency| currency.value)
                .unwrap_or_default(),
            sub_total: total - tax,
            total_tax_amount: tax,
            total_amount: total,
            amount_due: balance,
            status: invoice_status(total, balance, voided),
            line_items,
            note: self
                .customer_memo
                .and_then(|memo| json::non_empty(memo.value))
                .or_else(|| json::non_empty(self.private_note)),
            source_modified_date: json::timestamp(
                self.meta_data
                    .and_then(|meta| meta.last_updated_time)
                    .as_deref(),
            ),
            invoice_id: self.id,
        })
    }
}

/// The lines of a sales document (an invoice, a credit memo): sales lines
/// only, as subtotal and discount lines repeat what they sum. QuickBooks
/// gives tax for the whole document only, so lines carry none.
fn sale_lines(lines: Vec<QboLine>) -> Vec<LineItem> {
    lines
        .into_iter()
        .filter(|line| line.detail_type.as_deref() == Some("SalesItemLineDetail"))
        .map(|line| {
            let line_amount = money(line.amount);
            let (unit_amount, quantity) = match line.sales_item_line_detail {
                Some(detail) => (money(detail.unit_price), json::quantity(detail.qty)),
                None => (line_amount, Quantity::units(1)),
            };
            LineItem {
                description: line.description.unwrap_or_default(),
                unit_amount,
                quantity,
                discount_amount: Money(0),
                sub_total: line_amount,
                tax_amount: Money(0),
                total_amount: line_amount,
                account_ref: None,
            }
        })
        .collect()
}

/// Credit memos a query found.
#[derive(Deserialize, Default)]
pub(super) struct CreditMemoList {
    #[serde(rename = "CreditMemo", default)]
    pub(super) credit_memo: Each<QboCreditMemo>,
}

/// A credit memo as QuickBooks writes it (the `CreditMemo` entity).
#[derive(Deserialize)]
#[serde(rename_all = "PascalCase")]
pub(super) struct QboCreditMemo {
    id: String,
    doc_number: Option<String>,
    txn_date: Option<String>,
    currency_ref: Option<Reference>,
    customer_ref: Option<Reference>,
    total_amt: Option<Amount>,
    balance: Option<Amount>,
    remaining_credit: Option<Amount>,
    txn_tax_detail: Option<TaxDetail>,
    #[serde(default)]
    line: Vec<QboLine>,
    private_note: Option<String>,
    customer_memo: Option<Memo>,
    meta_data: Option<MetaData>,
}

impl Keyed for QboCreditMemo {
    const ID: &'static str = "/Id";
}

impl QboCreditMemo {
    /// Our credit note; one without a readable `TxnDate` cannot be read.
    /// What remains is `RemainingCredit` (else `Balance`); the status
    /// follows from it (QuickBooks has none). Where the credit went is not
    /// on the credit memo: the payments that applied it name it, so
    /// `allocations` is empty (`NOTES.md`).
    pub(super) fn into_record(self) -> Result<CreditNote, Unreadable> {
        let issue_date = self
            .txn_date
            .as_deref()
            .and_then(json::date)
            .ok_or_else(|| Unreadable::field("TxnDate", "is missing or not a date"))?;
        let total = money(self.total_amt);
        let tax = money(self.txn_tax_detail.and_then(|detail| detail.total_tax));
        let remaining = money(self.remaining_credit.or(self.balance));
        let (customer_id, customer_name) = self
            .customer_ref
            .map_or((None, None), |customer| (customer.value, customer.name));
        Ok(CreditNote {
            credit_note_number: json::non_empty(self.doc_number),
            customer_ref: CustomerRef::to(customer_id, customer_name),
            issue_date,
            currency: self
                .currency_ref
                .and_then(|currency| currency.value)
                .unwrap_or_default(),
            sub_total: total - tax,
            total_tax_amount: tax,
            total_amount: total,
            remaining_credit: remaining,
            status: status_by_remaining(total, remaining),
            line_items: sale_lines(self.line),
            allocations: Vec::new(),
            note: self
                .customer_memo
                .and_then(|memo| json::non_empty(memo.value))
                .or_else(|| json::non_empty(self.private_note)),
            source_modified_date: json::timestamp(
                self.meta_data
                    .and_then(|meta| meta.last_updated_time)
                    .as_deref(),
            ),
            credit_note_id: self.id,
        })
    }
}

/// A customer as QuickBooks writes it.
#[derive(Deserialize)]
#[serde(rename_all = "PascalCase")]
pub(super) struct QboCustomer {
    id: String,
    display_name: Option<String>,
    company_name: Option<String>,
    primary_email_addr: Option<EmailAddress>,
    primary_phone: Option<Phone>,
    currency_ref: Option<Reference>,
    active: Option<bool>,
    meta_data: Option<MetaData>,
}

#[derive(Deserialize)]
#[serde(rename_all = "PascalCase")]
struct EmailAddress {
    address: Option<String>,
}

/// A phone number as QuickBooks writes it.
#[derive(Deserialize)]
#[serde(rename_all = "PascalCase")]
pub(super) struct Phone {
    pub(super) free_form_number: Option<String>,
}

impl QboCustomer {
    /// Our supplier, from a `Vendor`: named as a customer is.
    pub(super) fn into_supplier(self) -> Supplier {
        let party = self.into_record();
        Supplier {
            supplier_id: party.customer_id,
            supplier_name: party.customer_name,
            email_address: party.email_address,
            phone: party.phone,
            default_currency: party.default_currency,
            status: match party.status {
                CustomerStatus::Archived => SupplierStatus::Archived,
                CustomerStatus::Active => SupplierStatus::Active,
            },
            source_modified_date: party.source_modified_date,
        }
    }

    /// Our customer: the company name, else the display name.
    pub(super) fn into_record(self) -> Customer {
        Customer {
            customer_name: json::non_empty(self.company_name)
                .or_else(|| json::non_empty(self.display_name))
                .unwrap_or_else(|| self.id.clone()),
            email_address: self
                .primary_email_addr
                .and_then(|email| json::non_empty(email.address)),
            phone: self
                .primary_phone
                .and_then(|phone| json::non_empty(phone.free_form_number)),
            default_currency: self.currency_ref.and_then(|currency| currency.value),
            status: if self.active == Some(false) {
                CustomerStatus::Archived
            } else {
                CustomerStatus::Active
            },
            source_modified_date: json::timestamp(
                self.meta_data
                    .and_then(|meta| meta.last_updated_time)
                    .as_deref(),
            ),
            customer_id: self.id,
        }
    }
}

/// An account as QuickBooks writes it (the `Account` entity).
#[derive(Deserialize)]
#[serde(rename_all = "PascalCase")]
pub(super) struct QboAccount {
    id: String,
    name: Option<String>,
    acct_num: Option<String>,
    description: Option<String>,
    classification: Option<String>,
    account_type: Option<String>,
    active: Option<bool>,
    current_balance: Option<Amount>,
    currency_ref: Option<Reference>,
    meta_data: Option<MetaData>,
}

/// Our classification of QuickBooks' `Classification` (`Asset`, `Equity`,
/// `Expense`, `Liability`, `Revenue`).
pub(super) fn classification(value: Option<&str>) -> AccountClassification {
    match value {
        Some("Asset") => AccountClassification::Asset,
        Some("Liability") => AccountClassification::Liability,
        Some("Equity") => AccountClassification::Equity,
        Some("Revenue") => AccountClassification::Income,
        Some("Expense") => AccountClassification::Expense,
        _ => AccountClassification::Unknown,
    }
}

impl QboAccount {
    /// Our account. QuickBooks gives `CurrentBalance` for balance-sheet
    /// accounts only (an income or expense account's is always 0): those
    /// have none here.
    pub(super) fn into_record(self) -> Account {
        let classification = classification(self.classification.as_deref());
        let on_balance_sheet = matches!(
            classification,
            AccountClassification::Asset
                | AccountClassification::Liability
                | AccountClassification::Equity
        );
        Account {
            nominal_code: json::non_empty(self.acct_num),
            account_name: json::non_empty(self.name).unwrap_or_else(|| self.id.clone()),
            description: json::non_empty(self.description),
            classification,
            is_bank_account: matches!(
                self.account_type.as_deref(),
                Some("Bank") | Some("Credit Card")
            ),
            account_type: json::non_empty(self.account_type),
            status: if self.active == Some(false) {
                AccountStatus::Archived
            } else {
                AccountStatus::Active
            },
            currency: self.currency_ref.and_then(|currency| currency.value),
            current_balance: on_balance_sheet.then(|| money(self.current_balance)),
            source_modified_date: json::timestamp(
                self.meta_data
                    .and_then(|meta| meta.last_updated_time)
                    .as_deref(),
            ),
            account_id: self.id,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quickbooks_statuses_follow_the_balance() {
        let total = Money(1_000_000);
        assert_eq!(
            invoice_status(total, total, false),
            InvoiceStatus::Submitted
        );
        assert_eq!(
            invoice_status(total, Money(1), false),
            InvoiceStatus::PartiallyPaid
        );
        assert_eq!(invoice_status(total, Money(0), false), InvoiceStatus::Paid);
        assert_eq!(
            invoice_status(Money(0), Money(0), true),
            InvoiceStatus::Void
        );
    }
}
