//! Zoho Books' ledger beyond sales: the chart of accounts, suppliers (vendor
//! contacts), taxes, bills, credit notes, items, the organization, customer
//! and vendor payments and journals, each a paged list with the invoices'
//! `page`/`per_page` and `page_context.has_more_page`; payments and
//! journals list only ids, each read whole on its own. Bills, credit notes,
//! vendor payments and journals are asked for by `last_modified_time` after
//! a first sync; the others are fetched whole.
//! A consent that lacks a data type's scope is told from a rejected token
//! by the organization list, which every consent reads. Sources: `NOTES.md`,
//! "Accounting model".

use chrono::{DateTime, Utc};
use serde::de::DeserializeOwned;
use serde_json::value::RawValue;

use super::ZohoBooksAuthorization;
use super::chart::{AccountsPage, ItemsPage, OrganizationAnswer, TaxesPage};
use super::connector::{ZohoBooksConnector, auth, last_modified_time};
use super::documents::{BillsPage, CreditNotesPage};
use super::journals::{JournalAnswer, JournalsPage, ZohoJournal};
use super::mapping::{ContactsPage, PageContext, check_code};
use super::settlements::{
    BaseCurrency, CustomerPaymentAnswer, CustomerPaymentsPage, VendorPaymentAnswer,
    VendorPaymentsPage, ZohoCustomerPayment, ZohoVendorPayment,
};
use crate::data::accounts::{Account, Accounts};
use crate::data::bill_payments::{BillPayment, BillPayments};
use crate::data::bills::{Bill, Bills};
use crate::data::company_info::{CompanyInfo, CompanyInfos};
use crate::data::credit_notes::{CreditNote, CreditNotes};
use crate::data::items::{Item, Items};
use crate::data::journal_entries::{JournalEntries, JournalEntry};
use crate::data::payments::{Payment, Payments};
use crate::data::suppliers::{Supplier, Suppliers};
use crate::data::tax_rates::{TaxRate, TaxRates};
use crate::platforms::connector::changed_syncs;
use crate::platforms::connector::{
    Changes, Connector, ConnectorError, Deletions, Fetched, RecordIssue, Syncs,
};
use crate::platforms::kit::http::Call;
use crate::platforms::kit::paging::PageNumber;
use crate::platforms::kit::records::{self, Keyed, Read, Unreadable};

/// One of Zoho's list answers: its `code`, its rows, whether more follow.
trait ListPage: DeserializeOwned {
    type Record;

    /// `code` and `message`, which say whether the call succeeded.
    fn outcome(&mut self) -> (Option<i64>, Option<String>);

    /// The page's `page_context`; none (as the document shows for some
    /// lists) means the last page.
    fn context(&self) -> Option<&PageContext>;

    /// The rows, read as ours.
    fn read(self) -> Read<Self::Record>;
}

macro_rules! list_page {
    ($page:ty, $record:ty, $rows:ident, |$row:ident| $into:expr) => {
        impl ListPage for $page {
            type Record = $record;

            fn outcome(&mut self) -> (Option<i64>, Option<String>) {
                (self.code, self.message.take())
            }

            fn context(&self) -> Option<&PageContext> {
                self.page_context.as_ref()
            }

            fn read(self) -> Read<$record> {
                self.$rows.read(|$row| $into)
            }
        }
    };
}

list_page!(AccountsPage, Account, chartofaccounts, |row| Ok(Some(
    row.into_record()
)));
list_page!(TaxesPage, TaxRate, taxes, |row| Ok(Some(row.into_record())));
list_page!(ItemsPage, Item, items, |row| Ok(Some(row.into_record())));
list_page!(BillsPage, Bill, bills, |row| row.into_record().map(Some));
list_page!(CreditNotesPage, CreditNote, creditnotes, |row| row
    .into_record()
    .map(Some));
list_page!(ContactsPage, Supplier, contacts, |row| Ok(row
    .is_vendor()
    .then(|| row.into_supplier())));
list_page!(CustomerPaymentsPage, String, customer_payments, |row| Ok(
    Some(row.payment_id)
));
list_page!(VendorPaymentsPage, String, vendorpayments, |row| Ok(Some(
    row.payment_id
)));
list_page!(JournalsPage, String, journals, |row| Ok(Some(
    row.journal_id
)));

/// The answer of a single record (`GET /journals/{id}`): its `code`, and
/// the record under its key, left unread.
trait SingleAnswer: DeserializeOwned {
    /// `code` and `message`, which say whether the call succeeded.
    fn outcome(&mut self) -> (Option<i64>, Option<String>);

    /// The record.
    fn record(self) -> Option<Box<RawValue>>;
}

macro_rules! single_answer {
    ($answer:ty, $key:ident) => {
        impl SingleAnswer for $answer {
            fn outcome(&mut self) -> (Option<i64>, Option<String>) {
                (self.code, self.message.take())
            }

            fn record(self) -> Option<Box<RawValue>> {
                self.$key
            }
        }
    };
}

single_answer!(CustomerPaymentAnswer, payment);
single_answer!(VendorPaymentAnswer, vendorpayment);
single_answer!(JournalAnswer, journal);

/// Every status, as bills and credit notes are filtered.
const ALL: (&str, &str) = ("filter_by", "Status.All");

/// What each list needs of the consent, for a refusal's message.
const ACCOUNTANTS: &str = "ZohoBooks.accountants.READ";
const BILLS: &str = "ZohoBooks.bills.READ";
const CREDIT_NOTES: &str = "ZohoBooks.creditnotes.READ";
const CONTACTS: &str = "ZohoBooks.contacts.READ";
const CUSTOMER_PAYMENTS: &str = "ZohoBooks.customerpayments.READ";
const VENDOR_PAYMENTS: &str = "ZohoBooks.vendorpayments.READ";
const SETTINGS: &str = "ZohoBooks.settings.READ";

impl ZohoBooksConnector {
    /// One page of a list, `call` for page `page`. Zoho answers a scope the
    /// consent lacks as it answers a rejected token (a 401); when the token
    /// still reads the organization list (`verify`), it was the scope.
    async fn list_page<P: ListPage>(
        &self,
        credentials: &ZohoBooksAuthorization,
        call: Call<'_>,
        page: PageNumber,
        scope: &'static str,
    ) -> Result<Fetched<P::Record>, ConnectorError> {
        let mut body: P = match self.http.json(&call).await {
            Ok(body) => body,
            Err(ConnectorError::Expired(message)) => {
                return Err(self.refused_or_expired(credentials, message, scope).await);
            }
            Err(other) => return Err(other),
        };
        let (code, message) = body.outcome();
        check_code(code, message)?;
        let more = body.context().is_some_and(|context| context.has_more_page);
        Ok(Fetched::read(body.read(), page.next(more)))
    }

    /// A 401 on a list: the data type's scope is missing when the token
    /// still reads the organization list, else the token was rejected.
    async fn refused_or_expired(
        &self,
        credentials: &ZohoBooksAuthorization,
        message: String,
        scope: &'static str,
    ) -> ConnectorError {
        match Connector::verify(self, credentials).await {
            Ok(()) => ConnectorError::Permissions(format!(
                "Zoho Books refused this list to the connection's consent, which does not cover this data \
                 type (it needs the {scope} scope; link the connection again to grant it): {message}"
            )),
            Err(_) => ConnectorError::Expired(message),
        }
    }

    /// A page of the list at `path` with `filter`, changed since `since`
    /// when given.
    async fn changed_list_page<P: ListPage>(
        &self,
        credentials: &ZohoBooksAuthorization,
        (path, what, scope): (&str, &'static str, &'static str),
        filter: (&'static str, &str),
        since: Option<DateTime<Utc>>,
        cursor: Option<String>,
    ) -> Result<Fetched<P::Record>, ConnectorError> {
        let page = PageNumber::from_cursor(Self::PLATFORM, cursor)?;
        let call = self
            .list(credentials, path, what, page)
            .query(filter.0, filter.1);
        let call = match since {
            Some(since) => call.query("last_modified_time", last_modified_time(since)),
            None => call,
        };
        self.list_page::<P>(credentials, call, page, scope).await
    }

    /// Each record `listed` names, read whole from `GET {path}/{id}` as `D`
    /// and made ours by `into`; a record that cannot be read costs itself.
    async fn each_whole<A: SingleAnswer, D: DeserializeOwned + Keyed, R>(
        &self,
        credentials: &ZohoBooksAuthorization,
        listed: Fetched<String>,
        (path, what): (&str, &'static str),
        mut into: impl FnMut(D) -> Result<R, Unreadable>,
    ) -> Result<Fetched<R>, ConnectorError> {
        let mut read = Read {
            records: Vec::with_capacity(listed.records.len()),
            issues: listed.issues,
        };
        for id in listed.records {
            // Zoho's ids are digits: anything else would change the path.
            if id.is_empty() || !id.chars().all(|c| c.is_ascii_alphanumeric()) {
                read.issues.push(RecordIssue {
                    record_id: None,
                    field: None,
                    reason: "its id is not one Zoho Books gives".to_owned(),
                });
                continue;
            }
            let call = Call::get(
                Self::PLATFORM,
                what,
                self.books_url(credentials, &format!("{path}/{id}")),
                auth(credentials),
            )
            .query("organization_id", &credentials.organization_id);
            let mut answer: A = self.http.json(&call).await?;
            let (code, message) = answer.outcome();
            check_code(code, message)?;
            let Some(raw) = answer.record() else {
                read.issues.push(RecordIssue {
                    record_id: Some(id),
                    field: None,
                    reason: "Zoho Books answered without the record".to_owned(),
                });
                continue;
            };
            match records::single::<D>(&raw) {
                Ok((record, named)) => match into(record) {
                    Ok(record) => read.records.push(record),
                    Err(problem) => read.issues.push(named.issue(problem)),
                },
                Err(issue) => read.issues.push(issue),
            }
        }
        Ok(Fetched::read(read, listed.next))
    }

    /// The organization's profile (`GET /organizations/{id}`).
    async fn organization(
        &self,
        credentials: &ZohoBooksAuthorization,
    ) -> Result<super::chart::ZohoOrganization, ConnectorError> {
        let path = format!("organizations/{}", credentials.organization_id);
        let call = Call::get(
            Self::PLATFORM,
            "the organization's profile",
            self.books_url(credentials, &path),
            auth(credentials),
        );
        let answer: OrganizationAnswer = self.http.json(&call).await?;
        check_code(answer.code, answer.message)?;
        answer.organization.ok_or_else(|| {
            ConnectorError::Failed("Zoho Books answered without the organization".to_owned())
        })
    }

    /// A page of vendor payments, each read whole, changed since `since`
    /// when given.
    async fn vendor_payments(
        &self,
        credentials: &ZohoBooksAuthorization,
        since: Option<DateTime<Utc>>,
        cursor: Option<String>,
    ) -> Result<Fetched<BillPayment>, ConnectorError> {
        let listed = self
            .changed_list_page::<VendorPaymentsPage>(
                credentials,
                (
                    "vendorpayments",
                    "a page of vendor payments",
                    VENDOR_PAYMENTS,
                ),
                ("filter_by", "PaymentMode.All"),
                since,
                cursor,
            )
            .await?;
        // The organization's currency, asked for only when there is a payment to read.
        let base = if listed.records.is_empty() {
            BaseCurrency::default()
        } else {
            self.organization(credentials).await?.base_currency()
        };
        self.each_whole::<VendorPaymentAnswer, ZohoVendorPayment, _>(
            credentials,
            listed,
            ("vendorpayments", "a vendor payment"),
            |payment| payment.into_record(&base),
        )
        .await
    }

    /// A page of published journals, each read whole, changed since
    /// `since` when given.
    async fn journals(
        &self,
        credentials: &ZohoBooksAuthorization,
        since: Option<DateTime<Utc>>,
        cursor: Option<String>,
    ) -> Result<Fetched<JournalEntry>, ConnectorError> {
        let listed = self
            .changed_list_page::<JournalsPage>(
                credentials,
                ("journals", "a page of journals", ACCOUNTANTS),
                ("status", "published"),
                since,
                cursor,
            )
            .await?;
        self.each_whole::<JournalAnswer, ZohoJournal, _>(
            credentials,
            listed,
            ("journals", "a journal"),
            ZohoJournal::into_record,
        )
        .await
    }
}

impl Syncs<Accounts> for ZohoBooksConnector {
    /// Fetched whole every time, balances included (`showbalance`): a
    /// balance moves without the account being modified, so
    /// `last_modified_time` would leave balances stale.
    async fn page(
        &self,
        credentials: &ZohoBooksAuthorization,
        cursor: Option<String>,
    ) -> Result<Fetched<Account>, ConnectorError> {
        let page = PageNumber::from_cursor(Self::PLATFORM, cursor)?;
        let call = self
            .list(
                credentials,
                "chartofaccounts",
                "a page of the chart of accounts",
                page,
            )
            .query("filter_by", "AccountType.All")
            .query("showbalance", "true");
        self.list_page::<AccountsPage>(credentials, call, page, ACCOUNTANTS)
            .await
    }
}

/// Vendor contacts, fetched whole: contacts have no modified-since filter.
impl Syncs<Suppliers> for ZohoBooksConnector {
    async fn page(
        &self,
        credentials: &ZohoBooksAuthorization,
        cursor: Option<String>,
    ) -> Result<Fetched<Supplier>, ConnectorError> {
        let page = PageNumber::from_cursor(Self::PLATFORM, cursor)?;
        let call = self
            .list(credentials, "contacts", "a page of vendors", page)
            .query("contact_type", "vendor")
            .query("filter_by", "Status.All");
        self.list_page::<ContactsPage>(credentials, call, page, CONTACTS)
            .await
    }
}

/// Taxes are few and have no filter: fetched whole.
impl Syncs<TaxRates> for ZohoBooksConnector {
    async fn page(
        &self,
        credentials: &ZohoBooksAuthorization,
        cursor: Option<String>,
    ) -> Result<Fetched<TaxRate>, ConnectorError> {
        let page = PageNumber::from_cursor(Self::PLATFORM, cursor)?;
        let call = self.list(credentials, "settings/taxes", "a page of taxes", page);
        self.list_page::<TaxesPage>(credentials, call, page, SETTINGS)
            .await
    }
}

/// Items have no modified-since filter: fetched whole, inactive ones too.
impl Syncs<Items> for ZohoBooksConnector {
    async fn page(
        &self,
        credentials: &ZohoBooksAuthorization,
        cursor: Option<String>,
    ) -> Result<Fetched<Item>, ConnectorError> {
        let page = PageNumber::from_cursor(Self::PLATFORM, cursor)?;
        let call = self
            .list(credentials, "items", "a page of items", page)
            .query("filter_by", "Status.All");
        self.list_page::<ItemsPage>(credentials, call, page, SETTINGS)
            .await
    }
}

impl ZohoBooksConnector {
    /// A page of bills, changed since `since` when given.
    async fn bills(
        &self,
        credentials: &ZohoBooksAuthorization,
        since: Option<DateTime<Utc>>,
        cursor: Option<String>,
    ) -> Result<Fetched<Bill>, ConnectorError> {
        let list = ("bills", "a page of bills", BILLS);
        self.changed_list_page::<BillsPage>(credentials, list, ALL, since, cursor)
            .await
    }

    /// A page of credit notes, changed since `since` when given.
    async fn credit_notes(
        &self,
        credentials: &ZohoBooksAuthorization,
        since: Option<DateTime<Utc>>,
        cursor: Option<String>,
    ) -> Result<Fetched<CreditNote>, ConnectorError> {
        let list = ("creditnotes", "a page of credit notes", CREDIT_NOTES);
        self.changed_list_page::<CreditNotesPage>(credentials, list, ALL, since, cursor)
            .await
    }
}

// A data type asked for by `last_modified_time` after a first sync: a
// voided record keeps its id, but a deleted one (or, for journals, one
// returned to draft) stops being listed, which only a full fetch finds.
changed_syncs!(ZohoBooksConnector, Some(Changes::with(Deletions::OnlyByFullFetch)); Bills => bills, CreditNotes => credit_notes, BillPayments => vendor_payments, JournalEntries => journals);

/// The organization's profile, one call, whole every time.
impl Syncs<CompanyInfos> for ZohoBooksConnector {
    async fn page(
        &self,
        credentials: &ZohoBooksAuthorization,
        _cursor: Option<String>,
    ) -> Result<Fetched<CompanyInfo>, ConnectorError> {
        let organization = self.organization(credentials).await?;
        Ok(Fetched::all(vec![organization.into_record()], None))
    }
}

/// Customer payments have no modified-since filter: every sync lists them
/// all and reads each whole (one call a payment; `NOTES.md`).
impl Syncs<Payments> for ZohoBooksConnector {
    async fn page(
        &self,
        credentials: &ZohoBooksAuthorization,
        cursor: Option<String>,
    ) -> Result<Fetched<Payment>, ConnectorError> {
        let listed = self
            .changed_list_page::<CustomerPaymentsPage>(
                credentials,
                (
                    "customerpayments",
                    "a page of customer payments",
                    CUSTOMER_PAYMENTS,
                ),
                ("filter_by", "PaymentMode.All"),
                None,
                cursor,
            )
            .await?;
        self.each_whole::<CustomerPaymentAnswer, ZohoCustomerPayment, _>(
            credentials,
            listed,
            ("customerpayments", "a customer payment"),
            ZohoCustomerPayment::into_record,
        )
        .await
    }
}
