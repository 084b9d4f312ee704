//! Every NetSuite list, through SuiteQL: invoices with their lines, customers, and accounts with their
//! balances, vendors, tax codes, items, the company, bills and credit memos
//! with their lines, customer and vendor payments with what they apply to,
//! and every posting transaction as a journal entry with its accounting
//! lines. Each list pages in id windows as invoices do; a page of documents
//! takes a second query for its lines or links. Sources: `NOTES.md`,
//! "Accounting model".

use crate::platforms::connector::changed_syncs;
use std::collections::BTreeMap;

use chrono::{DateTime, Utc};
use serde::de::DeserializeOwned;

use super::NetSuiteAuthorization;
use super::chart::{
    NsAccount, NsBalance, NsCompany, NsItem, NsSubsidiary, NsTaxCode, NsVendor, balances_by_account,
};
use super::connector::{CHANGES, NetSuiteConnector, Window, id_list, modified_since};
use super::documents::{NsDocument, NsDocumentLine, lines_by_document};
use super::journals::{NsAccountingLine, NsPosting, lines_by_posting};
use super::mapping::{NsCustomer, NsInvoice, NsLine, SuiteQlPage, lines_by_invoice};
use super::queries::{
    ACCOUNTING_LINES_QUERY, ACCOUNTS, BALANCES_QUERY, BASE_CURRENCY_QUERY, BILLS, CREDIT_MEMOS,
    CUSTOMER_PAYMENTS, CUSTOMERS, CurrencyRow, DOCUMENT_LINES_QUERY, INVOICES, ITEMS, LINES_QUERY,
    LINKS_QUERY, Listing, MonthRow, POSTINGS, ROOT_SUBSIDIARY_QUERY, TAX_CODES, VENDOR_PAYMENTS,
    VENDORS, YEAR_START_QUERY,
};
use super::settlements::{NsLink, NsPayment, links_by_payment};
use crate::data::accounts::{Account, Accounts};
use crate::data::bill_payments::{BillPayment, BillPayments};
use crate::data::bills::{Bill, Bills};
use crate::data::company_info::{CompanyInfo, CompanyInfos};
use crate::data::credit_notes::{CreditNote, CreditNotes};
use crate::data::customers::Customer;
use crate::data::invoices::Invoice;
use crate::data::items::{Item, Items};
use crate::data::journal_entries::{JournalEntries, JournalEntry};
use crate::data::payments::{Payment, Payments};
use crate::data::suppliers::{Supplier, Suppliers};
use crate::data::tax_rates::{TaxRate, TaxRates};
use crate::platforms::connector::{ConnectorError, Fetched, RecordIssue, Syncs};
use crate::platforms::kit::records::{Each, Keyed, Named, Read, Unreadable};

/// A page of a [`Listing`]: its rows, the next page's cursor and, on the
/// first window, how many rows there are.
struct Windowed<T> {
    items: Each<T>,
    next: Option<String>,
    total: Option<u64>,
}

/// A page's rows split by whether their id is a number (SuiteQL's internal
/// ids are; the line queries need them so).
struct Numbered<T> {
    rows: Vec<(u64, T, Named)>,
    issues: Vec<RecordIssue>,
}

impl<T> Numbered<T> {
    fn ids(&self) -> Vec<u64> {
        self.rows.iter().map(|(id, _, _)| *id).collect()
    }
}

fn numbered<T: Keyed>(items: Each<T>, id_of: impl Fn(&T) -> &str) -> Numbered<T> {
    let mut numbered = Numbered {
        rows: Vec::new(),
        issues: Vec::new(),
    };
    for entry in items.entries() {
        match entry {
            Ok((row, named)) => match id_of(&row).parse::<u64>() {
                Ok(id) => numbered.rows.push((id, row, named)),
                Err(_) => numbered
                    .issues
                    .push(named.issue(Unreadable::field("id", "is not a number"))),
            },
            Err(issue) => numbered.issues.push(issue),
        }
    }
    numbered
}

/// `read` of a page's numbered rows, each with the rows that belong to it
/// taken from `parts` (unless one of them was unreadable).
fn assemble<T, P, R>(
    page: Numbered<T>,
    id_of: impl Fn(&T) -> &str,
    mut parts: impl FnMut(&str) -> Option<P>,
    mut unreadable: BTreeMap<String, Unreadable>,
    mut into: impl FnMut(T, Option<P>) -> Result<Option<R>, Unreadable>,
) -> Read<R> {
    let mut read = Read {
        records: Vec::new(),
        issues: page.issues,
    };
    for (_, row, named) in page.rows {
        let id = id_of(&row).to_owned();
        let outcome = match unreadable.remove(&id) {
            Some(problem) => Err(problem),
            None => into(row, parts(&id)),
        };
        match outcome {
            Ok(Some(record)) => read.records.push(record),
            Ok(None) => {}
            Err(problem) => read.issues.push(named.issue(problem)),
        }
    }
    read
}

impl NetSuiteConnector {
    /// A page of `listing` (changed since `since`, when given and the list
    /// says when a row changed), in windows ordered by id.
    async fn windowed<T: DeserializeOwned + Keyed>(
        &self,
        credentials: &NetSuiteAuthorization,
        listing: &Listing,
        since: Option<DateTime<Utc>>,
        cursor: Option<String>,
    ) -> Result<Windowed<T>, ConnectorError> {
        let window = Window::from_cursor(cursor)?;
        let mut conditions: Vec<String> =
            listing.only.iter().map(|only| (*only).to_owned()).collect();
        conditions.push(format!("{} > {}", listing.id, window.after));
        let changed = if listing.modified.is_empty() {
            String::new()
        } else {
            modified_since(listing.modified, since)
        };
        let query = format!(
            "{} WHERE {}{changed} ORDER BY {}",
            listing.select,
            conditions.join(" AND "),
            listing.id
        );
        let page: SuiteQlPage<T> = self
            .suiteql(
                credentials,
                listing.what,
                &query,
                self.page_size,
                window.offset,
            )
            .await?;
        let next = window.next(
            page.has_more,
            self.page_size,
            page.items.last_id().as_deref(),
        );
        let total = if window.after == 0 {
            page.total_results
        } else {
            None
        };
        Ok(Windowed {
            items: page.items,
            next,
            total,
        })
    }

    /// The first rows of a small query, whole.
    async fn small<T: DeserializeOwned + Keyed>(
        &self,
        credentials: &NetSuiteAuthorization,
        what: &'static str,
        query: &str,
    ) -> Result<Vec<T>, ConnectorError> {
        let page: SuiteQlPage<T> = self.suiteql(credentials, what, query, 10, 0).await?;
        Ok(page.items.read(|row| Ok(Some(row))).records)
    }

    /// The account's base currency, when it has exactly one (a OneWorld
    /// account whose subsidiaries keep different ones has none).
    async fn base_currency(
        &self,
        credentials: &NetSuiteAuthorization,
    ) -> Result<Option<String>, ConnectorError> {
        let rows: Vec<CurrencyRow> = self
            .small(credentials, "the base currency", BASE_CURRENCY_QUERY)
            .await?;
        Ok(match rows.as_slice() {
            [only] => only.symbol.clone(),
            _ => None,
        })
    }

    /// A page of posting accounts with their balances.
    async fn accounts(
        &self,
        credentials: &NetSuiteAuthorization,
        cursor: Option<String>,
    ) -> Result<Fetched<Account>, ConnectorError> {
        let page: Windowed<NsAccount> = self.windowed(credentials, &ACCOUNTS, None, cursor).await?;
        let accounts = numbered(page.items, |account| &account.id);
        let ids = accounts.ids();
        let base = if ids.is_empty() {
            None
        } else {
            self.base_currency(credentials).await?
        };
        let query = format!(
            "{BALANCES_QUERY} AND tal.account IN ({}) GROUP BY tal.account",
            id_list(&ids)
        );
        let (rows, unreadable) = self
            .every_row::<NsBalance>(credentials, "account balances", &query, "balance", &ids)
            .await?;
        let balances = balances_by_account(rows);
        let read = assemble(
            accounts,
            |account| &account.id,
            |id| balances.get(id).copied(),
            unreadable,
            |account, debits| Ok(Some(account.into_record(debits, base.as_deref()))),
        );
        Ok(Fetched::read(read, page.next).of_total(page.total))
    }

    /// A page of a list whose rows need nothing else.
    async fn plain<T: DeserializeOwned + Keyed, R>(
        &self,
        credentials: &NetSuiteAuthorization,
        (listing, since, cursor): (&Listing, Option<DateTime<Utc>>, Option<String>),
        into: impl FnMut(T) -> Result<Option<R>, Unreadable>,
    ) -> Result<Fetched<R>, ConnectorError> {
        let page: Windowed<T> = self.windowed(credentials, listing, since, cursor).await?;
        Ok(Fetched::read(page.items.read(into), page.next).of_total(page.total))
    }

    async fn suppliers(
        &self,
        credentials: &NetSuiteAuthorization,
        since: Option<DateTime<Utc>>,
        cursor: Option<String>,
    ) -> Result<Fetched<Supplier>, ConnectorError> {
        self.plain(
            credentials,
            (&VENDORS, since, cursor),
            |vendor: NsVendor| Ok(Some(vendor.into_record())),
        )
        .await
    }

    async fn items(
        &self,
        credentials: &NetSuiteAuthorization,
        since: Option<DateTime<Utc>>,
        cursor: Option<String>,
    ) -> Result<Fetched<Item>, ConnectorError> {
        self.plain(credentials, (&ITEMS, since, cursor), |item: NsItem| {
            Ok(Some(item.into_record()))
        })
        .await
    }

    async fn tax_codes(
        &self,
        credentials: &NetSuiteAuthorization,
        cursor: Option<String>,
    ) -> Result<Fetched<TaxRate>, ConnectorError> {
        self.plain(
            credentials,
            (&TAX_CODES, None, cursor),
            |code: NsTaxCode| code.into_record().map(Some),
        )
        .await
    }

    /// The company: the root subsidiary where the account has OneWorld
    /// (without it SuiteQL has no `subsidiary` table), the base currency and
    /// the start of the latest fiscal year when the role may read periods.
    async fn company(
        &self,
        credentials: &NetSuiteAuthorization,
    ) -> Result<Fetched<CompanyInfo>, ConnectorError> {
        let subsidiary = optional(
            self.small::<NsSubsidiary>(credentials, "the root subsidiary", ROOT_SUBSIDIARY_QUERY)
                .await,
        )?
        .and_then(|rows| rows.into_iter().next());
        let base_currency = self.base_currency(credentials).await?;
        let year_start_month = optional(
            self.small::<MonthRow>(credentials, "the fiscal years", YEAR_START_QUERY)
                .await,
        )?
        .and_then(|rows| rows.into_iter().next())
        .and_then(|row| row.month);
        let company = NsCompany {
            subsidiary,
            base_currency,
            year_start_month,
        };
        Ok(Fetched::all(
            vec![company.into_record(&credentials.account_id)],
            None,
        ))
    }

    /// A page of invoices with their lines (changed since `since`, when
    /// given).
    pub(super) async fn invoices(
        &self,
        credentials: &NetSuiteAuthorization,
        since: Option<DateTime<Utc>>,
        cursor: Option<String>,
    ) -> Result<Fetched<Invoice>, ConnectorError> {
        let page: Windowed<NsInvoice> =
            self.windowed(credentials, &INVOICES, since, cursor).await?;
        let invoices = numbered(page.items, |invoice| &invoice.id);
        let ids = invoices.ids();
        let query = format!(
            "{LINES_QUERY} WHERE tl.transaction IN ({}) AND tl.mainline = 'F' \
             ORDER BY tl.transaction, tl.linesequencenumber",
            id_list(&ids)
        );
        let (rows, unreadable) = self
            .every_row::<NsLine>(
                credentials,
                "a page of invoice lines",
                &query,
                "lines",
                &ids,
            )
            .await?;
        let mut lines = lines_by_invoice(rows);
        let read = assemble(
            invoices,
            |invoice| &invoice.id,
            |id| lines.remove(id),
            unreadable,
            |invoice, lines| invoice.into_record(lines).map(Some),
        );
        Ok(Fetched::read(read, page.next).of_total(page.total))
    }

    /// A page of customers (changed since `since`, when given).
    pub(super) async fn customers(
        &self,
        credentials: &NetSuiteAuthorization,
        since: Option<DateTime<Utc>>,
        cursor: Option<String>,
    ) -> Result<Fetched<Customer>, ConnectorError> {
        self.plain(
            credentials,
            (&CUSTOMERS, since, cursor),
            |customer: NsCustomer| Ok(Some(customer.into_record())),
        )
        .await
    }

    /// The lines of the documents `ids`, every page of them.
    async fn document_lines(
        &self,
        credentials: &NetSuiteAuthorization,
        ids: &[u64],
    ) -> Result<(Vec<NsDocumentLine>, BTreeMap<String, Unreadable>), ConnectorError> {
        let query = format!(
            "{DOCUMENT_LINES_QUERY} WHERE tl.transaction IN ({}) AND tl.mainline = 'F' \
             ORDER BY tl.transaction, tl.linesequencenumber",
            id_list(ids)
        );
        self.every_row(
            credentials,
            "a page of document lines",
            &query,
            "lines",
            ids,
        )
        .await
    }

    /// The applications that lead to the documents `ids` (`to`), or that
    /// touch them on either side.
    async fn links(
        &self,
        credentials: &NetSuiteAuthorization,
        ids: &[u64],
        side: LinkSide,
    ) -> Result<(Vec<NsLink>, BTreeMap<String, Unreadable>), ConnectorError> {
        let list = id_list(ids);
        let query = match side {
            LinkSide::To => format!("{LINKS_QUERY} AND ntll.nextdoc IN ({list})"),
            LinkSide::Either => format!(
                "{LINKS_QUERY} AND (ntll.previousdoc IN ({list}) OR ntll.nextdoc IN ({list}))"
            ),
        };
        self.every_row(
            credentials,
            "a page of applications",
            &query,
            "applications",
            ids,
        )
        .await
    }

    /// A page of bills with their lines.
    async fn bills(
        &self,
        credentials: &NetSuiteAuthorization,
        since: Option<DateTime<Utc>>,
        cursor: Option<String>,
    ) -> Result<Fetched<Bill>, ConnectorError> {
        let page: Windowed<NsDocument> = self.windowed(credentials, &BILLS, since, cursor).await?;
        let bills = numbered(page.items, |bill| &bill.id);
        let (rows, unreadable) = self.document_lines(credentials, &bills.ids()).await?;
        let mut lines = lines_by_document(rows);
        let read = assemble(
            bills,
            |bill| &bill.id,
            |id| lines.remove(id),
            unreadable,
            |bill, lines| bill.into_bill(lines).map(Some),
        );
        Ok(Fetched::read(read, page.next).of_total(page.total))
    }

    /// A page of credit memos with their lines and the invoices they were
    /// applied to.
    async fn credit_notes(
        &self,
        credentials: &NetSuiteAuthorization,
        since: Option<DateTime<Utc>>,
        cursor: Option<String>,
    ) -> Result<Fetched<CreditNote>, ConnectorError> {
        let page: Windowed<NsDocument> = self
            .windowed(credentials, &CREDIT_MEMOS, since, cursor)
            .await?;
        let memos = numbered(page.items, |memo| &memo.id);
        let ids = memos.ids();
        let (rows, mut unreadable) = self.document_lines(credentials, &ids).await?;
        let (links, unreadable_links) = self.links(credentials, &ids, LinkSide::Either).await?;
        unreadable.extend(unreadable_links);
        let mut lines = lines_by_document(rows);
        let read = assemble(
            memos,
            |memo| &memo.id,
            |id| lines.remove(id),
            unreadable,
            |memo, lines| memo.into_credit_note(lines, &links).map(Some),
        );
        Ok(Fetched::read(read, page.next).of_total(page.total))
    }

    /// A page of customer or vendor payments (`listing`) with what they
    /// apply to, made ours by `into`.
    async fn payments_of<R>(
        &self,
        credentials: &NetSuiteAuthorization,
        (listing, since, cursor): (&Listing, Option<DateTime<Utc>>, Option<String>),
        into: fn(NsPayment, Option<Vec<NsLink>>) -> Result<R, Unreadable>,
    ) -> Result<Fetched<R>, ConnectorError> {
        let page: Windowed<NsPayment> = self.windowed(credentials, listing, since, cursor).await?;
        let payments = numbered(page.items, |payment| &payment.id);
        let (links, unreadable) = self
            .links(credentials, &payments.ids(), LinkSide::To)
            .await?;
        let mut links = links_by_payment(links);
        let read = assemble(
            payments,
            |payment| &payment.id,
            |id| links.remove(id),
            unreadable,
            |payment, links| into(payment, links).map(Some),
        );
        Ok(Fetched::read(read, page.next).of_total(page.total))
    }

    async fn payments(
        &self,
        credentials: &NetSuiteAuthorization,
        since: Option<DateTime<Utc>>,
        cursor: Option<String>,
    ) -> Result<Fetched<Payment>, ConnectorError> {
        self.payments_of(
            credentials,
            (&CUSTOMER_PAYMENTS, since, cursor),
            NsPayment::into_payment,
        )
        .await
    }

    async fn bill_payments(
        &self,
        credentials: &NetSuiteAuthorization,
        since: Option<DateTime<Utc>>,
        cursor: Option<String>,
    ) -> Result<Fetched<BillPayment>, ConnectorError> {
        self.payments_of(
            credentials,
            (&VENDOR_PAYMENTS, since, cursor),
            NsPayment::into_bill_payment,
        )
        .await
    }

    /// A page of posting transactions as journal entries, each with its
    /// accounting lines in the primary book.
    async fn journals(
        &self,
        credentials: &NetSuiteAuthorization,
        since: Option<DateTime<Utc>>,
        cursor: Option<String>,
    ) -> Result<Fetched<JournalEntry>, ConnectorError> {
        let page: Windowed<NsPosting> =
            self.windowed(credentials, &POSTINGS, since, cursor).await?;
        let postings = numbered(page.items, |posting| &posting.id);
        let ids = postings.ids();
        let base = if ids.is_empty() {
            None
        } else {
            self.base_currency(credentials).await?
        };
        let query = format!(
            "{ACCOUNTING_LINES_QUERY} AND tal.transaction IN ({}) ORDER BY tal.transaction, tal.transactionline",
            id_list(&ids)
        );
        let (rows, unreadable) = self
            .every_row::<NsAccountingLine>(
                credentials,
                "a page of accounting lines",
                &query,
                "journalLines",
                &ids,
            )
            .await?;
        let mut lines = lines_by_posting(rows);
        let read = assemble(
            postings,
            |posting| &posting.id,
            |id| lines.remove(id),
            unreadable,
            |posting, lines| posting.into_record(lines, base.as_deref()),
        );
        Ok(Fetched::read(read, page.next).of_total(page.total))
    }
}

/// Which applications a page of documents reads: those that lead to them
/// (a payment's), or those on either side (a credit memo's, whose side is
/// not documented).
#[derive(Clone, Copy)]
enum LinkSide {
    To,
    Either,
}

/// A small query's rows, or none when the role may not read its table (or
/// the account lacks the feature): what the company can do without.
fn optional<T>(result: Result<T, ConnectorError>) -> Result<Option<T>, ConnectorError> {
    match result {
        Ok(rows) => Ok(Some(rows)),
        Err(ConnectorError::Permissions(_)) => Ok(None),
        Err(error) => Err(error),
    }
}

// Each data type asked for only what changed after a first sync, by
// `lastmodifieddate`, with the invoices' [`CHANGES`].
changed_syncs!(NetSuiteConnector, CHANGES; Suppliers => suppliers, Items => items, Bills => bills, CreditNotes => credit_notes, Payments => payments, BillPayments => bill_payments, JournalEntries => journals);

/// The chart whole every sync: balances change without the account.
impl Syncs<Accounts> for NetSuiteConnector {
    async fn page(
        &self,
        credentials: &NetSuiteAuthorization,
        cursor: Option<String>,
    ) -> Result<Fetched<Account>, ConnectorError> {
        self.accounts(credentials, cursor).await
    }
}

/// Tax codes whole every sync: `salestaxitem` says nothing of when a code
/// changed, and the list is short.
impl Syncs<TaxRates> for NetSuiteConnector {
    async fn page(
        &self,
        credentials: &NetSuiteAuthorization,
        cursor: Option<String>,
    ) -> Result<Fetched<TaxRate>, ConnectorError> {
        self.tax_codes(credentials, cursor).await
    }
}

/// The company, one record, whole every sync.
impl Syncs<CompanyInfos> for NetSuiteConnector {
    async fn page(
        &self,
        credentials: &NetSuiteAuthorization,
        _cursor: Option<String>,
    ) -> Result<Fetched<CompanyInfo>, ConnectorError> {
        self.company(credentials).await
    }
}
