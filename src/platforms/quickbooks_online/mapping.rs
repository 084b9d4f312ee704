//! QuickBooks Online's answers and how they become our records. QuickBooks
//! has no invoice or bill status: it follows from the balance against the
//! total, and a voided invoice keeps its lines at zero with a "Voided"
//! note. A payment's lines each settle one linked transaction.

use serde::Deserialize;

use crate::data::accounts::{Account, AccountClassification, AccountRef, AccountStatus};
use crate::data::bill_payments::{BillAllocationType, BillPayment, BillPaymentAllocation};
use crate::data::bills::{Bill, BillLineItem};
use crate::data::company_info::{Address, AddressType, CompanyInfo, YearStart};
use crate::data::credit_notes::{CreditNote, status_by_remaining};
use crate::data::items::{Item, ItemSide, ItemStatus, ItemType};
use crate::data::journal_entries::{JournalEntry, JournalLine};
use crate::data::payments::{AllocationType, Payment, PaymentAllocation};
use crate::data::customers::{Customer, CustomerStatus};
use crate::data::invoices::{CustomerRef, Invoice, InvoiceStatus, LineItem};
use crate::data::money::{Money, Quantity};
use crate::data::suppliers::{Supplier, SupplierRef, SupplierStatus};
use crate::data::tax_rates::{TaxRate, TaxRateComponent, TaxRateStatus};
use crate::platforms::kit::records::{Each, Keyed, Unreadable};
use crate::platforms::kit::json::{self, Amount, money};
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

/// Bills a query found.
#[derive(Deserialize, Default)]
pub(super) struct BillList {
    #[serde(rename = "Bill", default)]
    pub(super) bill: Each<QboBill>,
}

/// Payments a query found.
#[derive(Deserialize, Default)]
pub(super) struct PaymentList {
    #[serde(rename = "Payment", default)]
    pub(super) payment: Each<QboPayment>,
}

/// Bill payments a query found.
#[derive(Deserialize, Default)]
pub(super) struct BillPaymentList {
    #[serde(rename = "BillPayment", default)]
    pub(super) bill_payment: Each<QboBillPayment>,
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

/// `GET /companyinfo/{realmId}`'s answer.
#[derive(Deserialize)]
pub(super) struct CompanyInfoAnswer {
    #[serde(rename = "CompanyInfo")]
    pub(super) company_info: QboCompanyInfo,
}

/// The company as QuickBooks writes it (the `CompanyInfo` entity).
#[derive(Deserialize)]
#[serde(rename_all = "PascalCase")]
pub(super) struct QboCompanyInfo {
    company_name: Option<String>,
    legal_name: Option<String>,
    company_addr: Option<PhysicalAddress>,
    legal_addr: Option<PhysicalAddress>,
    primary_phone: Option<Phone>,
    web_addr: Option<WebAddress>,
    fiscal_year_start_month: Option<String>,
    company_start_date: Option<String>,
    meta_data: Option<MetaData>,
}

#[derive(Deserialize)]
#[serde(rename_all = "PascalCase")]
struct PhysicalAddress {
    line1: Option<String>,
    line2: Option<String>,
    line3: Option<String>,
    city: Option<String>,
    country_sub_division_code: Option<String>,
    postal_code: Option<String>,
    country: Option<String>,
}

#[derive(Deserialize)]
struct WebAddress {
    #[serde(rename = "URI")]
    uri: Option<String>,
}

/// `GET /preferences`' answer: the company's home currency.
#[derive(Deserialize)]
pub(super) struct PreferencesAnswer {
    #[serde(rename = "Preferences")]
    preferences: Preferences,
}

#[derive(Deserialize)]
#[serde(rename_all = "PascalCase")]
struct Preferences {
    currency_prefs: Option<CurrencyPrefs>,
}

#[derive(Deserialize)]
#[serde(rename_all = "PascalCase")]
struct CurrencyPrefs {
    home_currency: Option<Reference>,
}

impl PreferencesAnswer {
    /// The currency the company's books are kept in.
    pub(super) fn home_currency(self) -> Option<String> {
        self.preferences
            .currency_prefs
            .and_then(|prefs| prefs.home_currency)
            .and_then(|currency| json::non_empty(currency.value))
    }
}

/// The month QuickBooks names (`January`), 1 to 12.
fn month_named(name: &str) -> Option<u32> {
    const MONTHS: [&str; 12] = [
        "January", "February", "March", "April", "May", "June", "July", "August", "September",
        "October", "November", "December",
    ];
    MONTHS
        .iter()
        .position(|month| month.eq_ignore_ascii_case(name))
        .map(|index| index as u32 + 1)
}

impl PhysicalAddress {
    fn into_address(self, address_type: AddressType) -> Address {
        let rest: Vec<String> = [self.line2, self.line3]
            .into_iter()
            .filter_map(json::non_empty)
            .collect();
        Address {
            address_type,
            line1: json::non_empty(self.line1),
            line2: (!rest.is_empty()).then(|| rest.join(", ")),
            city: json::non_empty(self.city),
            region: json::non_empty(self.country_sub_division_code),
            postal_code: json::non_empty(self.postal_code),
            country: json::non_empty(self.country),
        }
    }
}

impl QboCompanyInfo {
    /// Our company info for the company `realm_id`, whose books are in
    /// `base_currency` (from the preferences). QuickBooks' financial year
    /// starts on the first of `FiscalYearStartMonth`; its legal address is
    /// the registered one, its company address where it trades. It gives no
    /// registration or tax number.
    pub(super) fn into_record(self, realm_id: &str, base_currency: Option<String>) -> CompanyInfo {
        let addresses = [
            self.legal_addr.map(|address| address.into_address(AddressType::Registered)),
            self.company_addr.map(|address| address.into_address(AddressType::Street)),
        ]
        .into_iter()
        .flatten()
        .collect();
        CompanyInfo {
            company_info_id: realm_id.to_owned(),
            company_name: json::non_empty(self.company_name).unwrap_or_else(|| realm_id.to_owned()),
            legal_name: json::non_empty(self.legal_name),
            registration_number: None,
            tax_number: None,
            base_currency,
            financial_year_start: self
                .fiscal_year_start_month
                .as_deref()
                .and_then(month_named)
                .map(|month| YearStart { month, day: 1 }),
            addresses,
            phone: self
                .primary_phone
                .and_then(|phone| json::non_empty(phone.free_form_number)),
            website: self.web_addr.and_then(|web| json::non_empty(web.uri)),
            created_date: json::timestamp(self.company_start_date.as_deref()),
            source_modified_date: json::timestamp(
                self.meta_data
                    .and_then(|meta| meta.last_updated_time)
                    .as_deref(),
            ),
        }
    }
}

/// Items a query found.
#[derive(Deserialize, Default)]
pub(super) struct ItemList {
    #[serde(rename = "Item", default)]
    pub(super) item: Each<QboItem>,
}

/// An item as QuickBooks writes it (the `Item` entity).
#[derive(Deserialize)]
#[serde(rename_all = "PascalCase")]
pub(super) struct QboItem {
    id: String,
    name: Option<String>,
    sku: Option<String>,
    #[serde(rename = "Type")]
    kind: Option<String>,
    active: Option<bool>,
    description: Option<String>,
    purchase_desc: Option<String>,
    unit_price: Option<Amount>,
    purchase_cost: Option<Amount>,
    income_account_ref: Option<Reference>,
    expense_account_ref: Option<Reference>,
    qty_on_hand: Option<Amount>,
    track_qty_on_hand: Option<bool>,
    meta_data: Option<MetaData>,
}

impl Keyed for QboItem {
    const ID: &'static str = "/Id";
}

impl QboItem {
    /// Our item; `None` for a `Category` (a heading for items, not one
    /// itself). `Group` (a bundle) has no equivalent type. An item is sold
    /// when it has an income account, bought when it has an expense
    /// account; its tax codes name tax codes, not rates, so no tax rate is
    /// given.
    pub(super) fn into_record(self) -> Option<Item> {
        let item_type = match self.kind.as_deref() {
            Some("Inventory") => ItemType::Inventory,
            Some("NonInventory") => ItemType::NonInventory,
            Some("Service") => ItemType::Service,
            Some("Category") => return None,
            _ => ItemType::Unknown,
        };
        let sales = self.income_account_ref.map(|account| ItemSide {
            description: json::non_empty(self.description),
            unit_price: self.unit_price.map(Amount::money),
            account_ref: AccountRef::to(account.value, account.name),
            tax_rate_ref: None,
        });
        let purchases = self.expense_account_ref.map(|account| ItemSide {
            description: json::non_empty(self.purchase_desc),
            unit_price: self.purchase_cost.map(Amount::money),
            account_ref: AccountRef::to(account.value, account.name),
            tax_rate_ref: None,
        });
        Some(Item {
            code: json::non_empty(self.sku),
            name: json::non_empty(self.name).unwrap_or_else(|| self.id.clone()),
            item_type,
            status: if self.active == Some(false) {
                ItemStatus::Archived
            } else {
                ItemStatus::Active
            },
            sales,
            purchases,
            quantity_on_hand: (self.track_qty_on_hand == Some(true))
                .then(|| self.qty_on_hand.map(Amount::quantity))
                .flatten(),
            source_modified_date: json::timestamp(
                self.meta_data
                    .and_then(|meta| meta.last_updated_time)
                    .as_deref(),
            ),
            item_id: self.id,
        })
    }
}

#[derive(Deserialize)]
struct Reference {
    value: Option<String>,
    name: Option<String>,
}

#[derive(Deserialize)]
#[serde(rename_all = "PascalCase")]
struct TaxDetail {
    total_tax: Option<Amount>,
}

#[derive(Deserialize)]
#[serde(rename_all = "PascalCase")]
struct MetaData {
    last_updated_time: Option<String>,
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

#[derive(Deserialize)]
#[serde(rename_all = "PascalCase")]
struct SalesItemLineDetail {
    unit_price: Option<Amount>,
    qty: Option<Amount>,
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

#[derive(Deserialize)]
#[serde(rename_all = "PascalCase")]
struct Phone {
    free_form_number: Option<String>,
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

/// A bill as QuickBooks writes it (the `Bill` entity).
#[derive(Deserialize)]
#[serde(rename_all = "PascalCase")]
pub(super) struct QboBill {
    id: String,
    doc_number: Option<String>,
    txn_date: Option<String>,
    due_date: Option<String>,
    currency_ref: Option<Reference>,
    vendor_ref: Option<Reference>,
    total_amt: Option<Amount>,
    balance: Option<Amount>,
    txn_tax_detail: Option<TaxDetail>,
    #[serde(default)]
    line: Vec<QboExpenseLine>,
    private_note: Option<String>,
    meta_data: Option<MetaData>,
}

impl Keyed for QboBill {
    const ID: &'static str = "/Id";
}

/// A bill's line: an amount posted to an account
/// (`AccountBasedExpenseLineDetail`) or an item bought
/// (`ItemBasedExpenseLineDetail`, whose account is the item's).
#[derive(Deserialize)]
#[serde(rename_all = "PascalCase")]
struct QboExpenseLine {
    description: Option<String>,
    amount: Option<Amount>,
    detail_type: Option<String>,
    account_based_expense_line_detail: Option<AccountLineDetail>,
    item_based_expense_line_detail: Option<SalesItemLineDetail>,
}

#[derive(Deserialize)]
#[serde(rename_all = "PascalCase")]
struct AccountLineDetail {
    account_ref: Option<Reference>,
}

impl QboBill {
    /// Our bill; one without a readable `TxnDate` cannot be read. Its
    /// status follows from `Balance` against `TotalAmt` (QuickBooks has no
    /// draft or void bill: a deleted bill leaves the list). Tax is only
    /// given for the whole bill (`TxnTaxDetail.TotalTax`), so lines carry
    /// none.
    pub(super) fn into_record(self) -> Result<Bill, Unreadable> {
        let issue_date = self
            .txn_date
            .as_deref()
            .and_then(json::date)
            .ok_or_else(|| Unreadable::field("TxnDate", "is missing or not a date"))?;
        let total = money(self.total_amt);
        let balance = money(self.balance);
        let tax = money(self.txn_tax_detail.and_then(|detail| detail.total_tax));
        let line_items = self
            .line
            .into_iter()
            .filter_map(|line| {
                let line_amount = money(line.amount);
                let (unit_amount, quantity, account_ref) = match line.detail_type.as_deref() {
                    Some("AccountBasedExpenseLineDetail") => (
                        line_amount,
                        Quantity::units(1),
                        line.account_based_expense_line_detail
                            .and_then(|detail| detail.account_ref)
                            .and_then(|account| AccountRef::to(account.value, account.name)),
                    ),
                    Some("ItemBasedExpenseLineDetail") => {
                        let detail = line.item_based_expense_line_detail;
                        let (unit_price, qty) =
                            detail.map_or((None, None), |detail| (detail.unit_price, detail.qty));
                        (
                            unit_price.map_or(line_amount, Amount::money),
                            qty.map_or(Quantity::units(1), Amount::quantity),
                            None,
                        )
                    }
                    _ => return None,
                };
                Some(BillLineItem {
                    description: line.description.unwrap_or_default(),
                    unit_amount,
                    quantity,
                    discount_amount: Money(0),
                    sub_total: line_amount,
                    tax_amount: Money(0),
                    total_amount: line_amount,
                    account_ref,
                    tax_rate_ref: None,
                })
            })
            .collect();
        let (vendor_id, vendor_name) = self
            .vendor_ref
            .map_or((None, None), |vendor| (vendor.value, vendor.name));
        Ok(Bill {
            reference: json::non_empty(self.doc_number),
            supplier_ref: SupplierRef::to(vendor_id, vendor_name),
            issue_date,
            due_date: self.due_date.as_deref().and_then(json::date),
            paid_on_date: None,
            currency: self
                .currency_ref
                .and_then(|currency| currency.value)
                .unwrap_or_default(),
            sub_total: total - tax,
            tax_amount: tax,
            total_amount: total,
            amount_due: balance,
            status: by_balance(total, balance).into(),
            line_items,
            note: json::non_empty(self.private_note),
            source_modified_date: json::timestamp(
                self.meta_data
                    .and_then(|meta| meta.last_updated_time)
                    .as_deref(),
            ),
            bill_id: self.id,
        })
    }
}

/// A payment received as QuickBooks writes it (the `Payment` entity).
#[derive(Deserialize)]
#[serde(rename_all = "PascalCase")]
pub(super) struct QboPayment {
    id: String,
    txn_date: Option<String>,
    currency_ref: Option<Reference>,
    customer_ref: Option<Reference>,
    deposit_to_account_ref: Option<Reference>,
    total_amt: Option<Amount>,
    payment_ref_num: Option<String>,
    #[serde(default)]
    line: Vec<QboPaymentLine>,
    private_note: Option<String>,
    meta_data: Option<MetaData>,
}

impl Keyed for QboPayment {
    const ID: &'static str = "/Id";
}

#[derive(Deserialize)]
#[serde(rename_all = "PascalCase")]
struct QboPaymentLine {
    amount: Option<Amount>,
    #[serde(default)]
    linked_txn: Vec<LinkedTxn>,
}

#[derive(Deserialize)]
#[serde(rename_all = "PascalCase")]
struct LinkedTxn {
    txn_id: Option<String>,
    txn_type: Option<String>,
}

impl QboPayment {
    /// Our payment; one without a readable `TxnDate` cannot be read. Each
    /// line settles the transaction it links: an `Invoice` (positive), a
    /// `CreditMemo` whose credit pays part of the invoices (negative: the
    /// total is the invoices less the credits, plus `UnappliedAmt`), or
    /// anything else (a journal entry's opening balance: `Other`).
    pub(super) fn into_record(self) -> Result<Payment, Unreadable> {
        let date = self
            .txn_date
            .as_deref()
            .and_then(json::date)
            .ok_or_else(|| Unreadable::field("TxnDate", "is missing or not a date"))?;
        let allocations = self
            .line
            .into_iter()
            .filter_map(|line| {
                let amount = money(line.amount);
                let linked = line.linked_txn.into_iter().next()?;
                let id = json::non_empty(linked.txn_id)?;
                let (allocation_type, amount) = match linked.txn_type.as_deref() {
                    Some("Invoice") => (AllocationType::Invoice, amount),
                    Some("CreditMemo") => (AllocationType::CreditNote, -amount),
                    _ => (AllocationType::Other, amount),
                };
                Some(PaymentAllocation {
                    allocation_type,
                    id,
                    amount,
                })
            })
            .collect();
        let (customer_id, customer_name) = self
            .customer_ref
            .map_or((None, None), |customer| (customer.value, customer.name));
        Ok(Payment {
            reference: json::non_empty(self.payment_ref_num),
            customer_ref: CustomerRef::to(customer_id, customer_name),
            account_ref: self
                .deposit_to_account_ref
                .and_then(|account| AccountRef::to(account.value, account.name)),
            date,
            currency: self
                .currency_ref
                .and_then(|currency| currency.value)
                .unwrap_or_default(),
            total_amount: money(self.total_amt),
            allocations,
            note: json::non_empty(self.private_note),
            source_modified_date: json::timestamp(
                self.meta_data
                    .and_then(|meta| meta.last_updated_time)
                    .as_deref(),
            ),
            payment_id: self.id,
        })
    }
}

/// A payment to a vendor as QuickBooks writes it (the `BillPayment` entity):
/// by cheque from a bank account or by credit card.
#[derive(Deserialize)]
#[serde(rename_all = "PascalCase")]
pub(super) struct QboBillPayment {
    id: String,
    txn_date: Option<String>,
    doc_number: Option<String>,
    currency_ref: Option<Reference>,
    vendor_ref: Option<Reference>,
    check_payment: Option<CheckPayment>,
    credit_card_payment: Option<CreditCardPayment>,
    total_amt: Option<Amount>,
    #[serde(default)]
    line: Vec<QboPaymentLine>,
    private_note: Option<String>,
    meta_data: Option<MetaData>,
}

impl Keyed for QboBillPayment {
    const ID: &'static str = "/Id";
}

#[derive(Deserialize)]
#[serde(rename_all = "PascalCase")]
struct CheckPayment {
    bank_account_ref: Option<Reference>,
}

#[derive(Deserialize)]
#[serde(rename_all = "PascalCase")]
struct CreditCardPayment {
    #[serde(rename = "CCAccountRef")]
    cc_account_ref: Option<Reference>,
}

impl QboBillPayment {
    /// Our bill payment; one without a readable `TxnDate` cannot be read.
    /// Each line settles the transaction it links: a `Bill` (positive), a
    /// `VendorCredit` whose credit pays part of the bills (negative), or
    /// anything else (`Other`). The account is the cheque's bank account
    /// or the card's.
    pub(super) fn into_record(self) -> Result<BillPayment, Unreadable> {
        let date = self
            .txn_date
            .as_deref()
            .and_then(json::date)
            .ok_or_else(|| Unreadable::field("TxnDate", "is missing or not a date"))?;
        let allocations = self
            .line
            .into_iter()
            .filter_map(|line| {
                let amount = money(line.amount);
                let linked = line.linked_txn.into_iter().next()?;
                let id = json::non_empty(linked.txn_id)?;
                let (allocation_type, amount) = match linked.txn_type.as_deref() {
                    Some("Bill") => (BillAllocationType::Bill, amount),
                    Some("VendorCredit") => (BillAllocationType::SupplierCredit, -amount),
                    _ => (BillAllocationType::Other, amount),
                };
                Some(BillPaymentAllocation {
                    allocation_type,
                    id,
                    amount,
                })
            })
            .collect();
        let account = self
            .check_payment
            .and_then(|cheque| cheque.bank_account_ref)
            .or_else(|| self.credit_card_payment.and_then(|card| card.cc_account_ref));
        let (vendor_id, vendor_name) = self
            .vendor_ref
            .map_or((None, None), |vendor| (vendor.value, vendor.name));
        Ok(BillPayment {
            reference: json::non_empty(self.doc_number),
            supplier_ref: SupplierRef::to(vendor_id, vendor_name),
            account_ref: account.and_then(|account| AccountRef::to(account.value, account.name)),
            date,
            currency: self
                .currency_ref
                .and_then(|currency| currency.value)
                .unwrap_or_default(),
            total_amount: money(self.total_amt),
            allocations,
            note: json::non_empty(self.private_note),
            source_modified_date: json::timestamp(
                self.meta_data
                    .and_then(|meta| meta.last_updated_time)
                    .as_deref(),
            ),
            bill_payment_id: self.id,
        })
    }
}

/// Journal entries a query found.
#[derive(Deserialize, Default)]
pub(super) struct JournalEntryList {
    #[serde(rename = "JournalEntry", default)]
    pub(super) journal_entry: Each<QboJournalEntry>,
}

/// A journal entry as QuickBooks writes it (the `JournalEntry` entity: the
/// journals entered by hand; the ledger behind other documents is only in
/// reports).
#[derive(Deserialize)]
#[serde(rename_all = "PascalCase")]
pub(super) struct QboJournalEntry {
    id: String,
    doc_number: Option<String>,
    txn_date: Option<String>,
    currency_ref: Option<Reference>,
    #[serde(default)]
    line: Vec<QboJournalLine>,
    private_note: Option<String>,
    meta_data: Option<CreatedAndUpdated>,
}

impl Keyed for QboJournalEntry {
    const ID: &'static str = "/Id";
}

#[derive(Deserialize)]
#[serde(rename_all = "PascalCase")]
struct CreatedAndUpdated {
    create_time: Option<String>,
    last_updated_time: Option<String>,
}

#[derive(Deserialize)]
#[serde(rename_all = "PascalCase")]
struct QboJournalLine {
    description: Option<String>,
    amount: Option<Amount>,
    journal_entry_line_detail: Option<JournalLineDetail>,
}

#[derive(Deserialize)]
#[serde(rename_all = "PascalCase")]
struct JournalLineDetail {
    posting_type: Option<String>,
    account_ref: Option<Reference>,
}

impl QboJournalEntry {
    /// Our journal entry; one without a readable `TxnDate`, or with a line
    /// posted neither `Debit` nor `Credit`, cannot be read (its sign would
    /// be a guess). `Amount` is unsigned: a debit is positive, a credit
    /// negative.
    pub(super) fn into_record(self) -> Result<JournalEntry, Unreadable> {
        let posted_on = self
            .txn_date
            .as_deref()
            .and_then(json::date)
            .ok_or_else(|| Unreadable::field("TxnDate", "is missing or not a date"))?;
        let currency = self.currency_ref.and_then(|currency| currency.value);
        let journal_lines = self
            .line
            .into_iter()
            .enumerate()
            .filter_map(|(at, line)| {
                let detail = line.journal_entry_line_detail?;
                Some((at, line.description, line.amount, detail))
            })
            .map(|(at, description, amount, detail)| {
                let amount = money(amount);
                let net_amount = match detail.posting_type.as_deref() {
                    Some("Debit") => amount,
                    Some("Credit") => -amount,
                    _ => {
                        return Err(Unreadable::field(
                            format!("Line[{at}].JournalEntryLineDetail.PostingType"),
                            "is neither Debit nor Credit",
                        ));
                    }
                };
                Ok(JournalLine {
                    account_ref: detail
                        .account_ref
                        .and_then(|account| AccountRef::to(account.value, account.name)),
                    description: json::non_empty(description),
                    net_amount,
                    currency: currency.clone(),
                })
            })
            .collect::<Result<Vec<_>, _>>()?;
        let (created, updated) = self
            .meta_data
            .map_or((None, None), |meta| (meta.create_time, meta.last_updated_time));
        Ok(JournalEntry {
            journal_number: json::non_empty(self.doc_number),
            posted_on,
            description: json::non_empty(self.private_note),
            source: None,
            journal_lines,
            created_on: json::timestamp(created.as_deref()),
            source_modified_date: json::timestamp(updated.as_deref()),
            journal_entry_id: self.id,
        })
    }
}
