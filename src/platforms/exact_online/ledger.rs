//! Exact Online's ledger beyond sales: G/L accounts, suppliers and items
//! from the sync APIs (by row version after a first sync, deletions from
//! `sync/Deleted`), VAT codes and purchase entries (bills) whole each sync,
//! sales credit notes by `Modified` as invoices are, the general ledger's
//! transaction lines grouped into journal entries, and the division as
//! company info. Payments and bill payments are not synced: Exact keeps no
//! payment record that names what it settles (`NOTES.md`, "Accounting
//! model").

use chrono::Utc;

use super::ExactOnlineAuthorization;
use super::chart::{
    DIVISION_FIELDS, DivisionDetails, ExactItem, FinancialPeriod, GL_ACCOUNT_FIELDS, GlAccount,
    ITEM_FIELDS, SUPPLIER_FIELDS, SupplierAccount, VAT_CODE_FIELDS, VatCode, year_start,
};
use super::connector::{CHANGES, ExactOnlineConnector, INVOICE_FIELDS, modified_since};
use super::documents::{PURCHASE_ENTRY_FIELDS, PurchaseEntry};
use super::journals::{TRANSACTION_LINE_FIELDS, TransactionLine, entries_of};
use super::mapping::ExactInvoice;
use super::sync_api::{Kept, SyncList};
use crate::data::accounts::{Account, Accounts};
use crate::data::bills::{Bill, Bills};
use crate::data::company_info::{CompanyInfo, CompanyInfos};
use crate::data::credit_notes::{CreditNote, CreditNotes};
use crate::data::items::{Item, Items};
use crate::data::journal_entries::{JournalEntries, JournalEntry};
use crate::data::suppliers::{Supplier, Suppliers};
use crate::data::tax_rates::{TaxRate, TaxRates};
use crate::platforms::connector::whole_syncs;
use crate::platforms::connector::{
    Changes, Connector, ConnectorError, Deletions, Fetched, Since, Syncs,
};
use crate::platforms::kit::paging::LedgerWalk;

/// The chart: `sync/Financial/GLAccounts`.
const GL_ACCOUNTS: SyncList = SyncList {
    resource: "sync/Financial/GLAccounts",
    select: GL_ACCOUNT_FIELDS,
    deleted_type: 7,
    what: "a page of G/L accounts",
};
/// Every CRM account (`sync/CRM/Accounts`), suppliers kept.
const CRM_ACCOUNTS: SyncList = SyncList {
    resource: "sync/CRM/Accounts",
    select: SUPPLIER_FIELDS,
    deleted_type: 2,
    what: "a page of accounts",
};
/// Items: `sync/Logistics/Items`.
const ITEMS: SyncList = SyncList {
    resource: "sync/Logistics/Items",
    select: ITEM_FIELDS,
    deleted_type: 9,
    what: "a page of items",
};

/// What the sync APIs tell of changes: every change by row version (no
/// clock involved, so no overlap is needed beyond the engine's own), and
/// deletions from `sync/Deleted`.
const SYNC_CHANGES: Option<Changes> = Some(Changes::with(Deletions::InChanges));

/// The sales credit note types (`Type` 8021, 8024), as an OData condition.
const CREDIT_NOTE_TYPES: &str = "(Type eq 8021 or Type eq 8024)";

impl ExactOnlineConnector {
    /// A page of the chart of accounts.
    async fn gl_accounts(
        &self,
        credentials: &ExactOnlineAuthorization,
        since: Option<Since>,
        cursor: Option<String>,
    ) -> Result<Fetched<Account>, ConnectorError> {
        self.sync_page(
            credentials,
            &GL_ACCOUNTS,
            (since, cursor),
            |account: GlAccount| Ok(Kept::Record(account.into_record())),
        )
        .await
    }

    /// A page of suppliers: CRM accounts marked `IsSupplier` (Exact's sync
    /// list is not filtered on it; one no longer a supplier is flagged).
    async fn suppliers(
        &self,
        credentials: &ExactOnlineAuthorization,
        since: Option<Since>,
        cursor: Option<String>,
    ) -> Result<Fetched<Supplier>, ConnectorError> {
        self.sync_page(
            credentials,
            &CRM_ACCOUNTS,
            (since, cursor),
            |account: SupplierAccount| {
                Ok(if account.is_supplier() {
                    Kept::Record(account.into_record())
                } else {
                    Kept::Gone(account.id().to_owned())
                })
            },
        )
        .await
    }

    /// A page of items.
    async fn items(
        &self,
        credentials: &ExactOnlineAuthorization,
        since: Option<Since>,
        cursor: Option<String>,
    ) -> Result<Fetched<Item>, ConnectorError> {
        self.sync_page(credentials, &ITEMS, (since, cursor), |item: ExactItem| {
            Ok(Kept::Record(item.into_record()))
        })
        .await
    }

    /// A page of VAT codes (a short list; no sync API), whole each sync.
    async fn vat_codes(
        &self,
        credentials: &ExactOnlineAuthorization,
        cursor: Option<String>,
    ) -> Result<Fetched<TaxRate>, ConnectorError> {
        let query = [("$select", VAT_CODE_FIELDS)];
        let (codes, next) = self
            .list_page::<VatCode>(
                credentials,
                "a page of VAT codes",
                &query,
                "vat/VATCodes",
                cursor,
            )
            .await?;
        Ok(Fetched::read(
            codes.read(|code| Ok(code.into_record())),
            next,
        ))
    }

    /// A page of bills: purchase entries with their lines, purchase credit
    /// notes left out. Whole each sync: whether Exact filters purchase
    /// entries on `Modified` is not confirmed.
    async fn purchase_entries(
        &self,
        credentials: &ExactOnlineAuthorization,
        cursor: Option<String>,
    ) -> Result<Fetched<Bill>, ConnectorError> {
        let query = [
            ("$select", PURCHASE_ENTRY_FIELDS),
            ("$expand", "PurchaseEntryLines"),
        ];
        let (entries, next) = self
            .list_page::<PurchaseEntry>(
                credentials,
                "a page of purchase entries",
                &query,
                "purchaseentry/PurchaseEntries",
                cursor,
            )
            .await?;
        let read = entries.read(|entry| {
            if entry.is_bill() {
                entry.into_record().map(Some)
            } else {
                Ok(None)
            }
        });
        Ok(Fetched::read(read, next))
    }

    /// A page of sales credit notes (invoices of type 8021 or 8024), with
    /// their lines; modified since `since`, when given.
    async fn credit_notes(
        &self,
        credentials: &ExactOnlineAuthorization,
        since: Option<Since>,
        cursor: Option<String>,
    ) -> Result<Fetched<CreditNote>, ConnectorError> {
        let filter = match since {
            Some(since) => format!("{CREDIT_NOTE_TYPES} and {}", modified_since(since.time)),
            None => CREDIT_NOTE_TYPES.to_owned(),
        };
        let query = [
            ("$select", INVOICE_FIELDS),
            ("$expand", "SalesInvoiceLines"),
            ("$filter", filter.as_str()),
        ];
        let (notes, next) = self
            .list_page::<ExactInvoice>(
                credentials,
                "a page of credit notes",
                &query,
                "salesinvoice/SalesInvoices",
                cursor,
            )
            .await?;
        let read = notes.read(|note| {
            if note.is_credit_note() {
                note.into_credit_note().map(Some)
            } else {
                Ok(None)
            }
        });
        Ok(Fetched::read(read, next))
    }

    /// A page of the general ledger as journal entries, whole each sync.
    async fn ledger(
        &self,
        credentials: &ExactOnlineAuthorization,
        cursor: Option<String>,
    ) -> Result<Fetched<JournalEntry>, ConnectorError> {
        // Row versions start above 1.
        let walk = LedgerWalk::at(cursor.as_deref(), 1, Self::PLATFORM)?;
        let filter = format!("Timestamp gt {}L", walk.after);
        let query = [
            ("$select", TRANSACTION_LINE_FIELDS),
            ("$filter", filter.as_str()),
        ];
        let (lines, next) = self
            .list_page::<TransactionLine>(
                credentials,
                "a page of transaction lines",
                &query,
                "sync/Financial/TransactionLines",
                None,
            )
            .await?;
        let read = lines.read(|line| Ok(Some(line)));
        let page = entries_of(&walk, read.records, next.is_some());
        let mut fetched = Fetched::all(page.entries, page.next);
        fetched.issues = read.issues.into_iter().chain(page.issues).collect();
        Ok(fetched)
    }

    /// The division, with the start of its financial year.
    async fn division(
        &self,
        credentials: &ExactOnlineAuthorization,
    ) -> Result<Fetched<CompanyInfo>, ConnectorError> {
        let filter = format!("Code eq {}", credentials.division);
        let query = [("$select", DIVISION_FIELDS), ("$filter", filter.as_str())];
        let (divisions, _) = self
            .list_page::<DivisionDetails>(
                credentials,
                "the division",
                &query,
                "system/Divisions",
                None,
            )
            .await?;
        let query = [
            ("$select", "FinYear,StartDate"),
            ("$filter", "FinPeriod eq 1"),
        ];
        let (periods, _) = self
            .list_page::<FinancialPeriod>(
                credentials,
                "the financial years",
                &query,
                "financial/FinancialPeriods",
                None,
            )
            .await?;
        let periods = periods.read(|period| Ok(Some(period))).records;
        let start = year_start(&periods, Utc::now().date_naive());
        let read = divisions.read(|division| Ok(Some(division.into_record(start))));
        Ok(Fetched::read(read, None))
    }
}

/// A sync list: a whole list, then its changes by row version.
macro_rules! sync_api_syncs {
    ($definition:ty, $record:ty, $fetch:ident) => {
        impl Syncs<$definition> for ExactOnlineConnector {
            const CHANGES: Option<Changes> = SYNC_CHANGES;

            async fn page(
                &self,
                credentials: &ExactOnlineAuthorization,
                cursor: Option<String>,
            ) -> Result<Fetched<$record>, ConnectorError> {
                self.$fetch(credentials, None, cursor).await
            }

            async fn changed_page(
                &self,
                credentials: &ExactOnlineAuthorization,
                since: Since,
                cursor: Option<String>,
            ) -> Result<Fetched<$record>, ConnectorError> {
                self.$fetch(credentials, Some(since), cursor).await
            }
        }
    };
}

sync_api_syncs!(Accounts, Account, gl_accounts);
sync_api_syncs!(Suppliers, Supplier, suppliers);
sync_api_syncs!(Items, Item, items);
// Lists fetched whole on every sync.
whole_syncs!(ExactOnlineConnector; TaxRates => vat_codes, Bills => purchase_entries, JournalEntries => ledger);

/// Sales credit notes are sales invoices: asked for by `Modified` after a
/// first sync, as invoices are.
impl Syncs<CreditNotes> for ExactOnlineConnector {
    const CHANGES: Option<Changes> = CHANGES;

    async fn page(
        &self,
        credentials: &ExactOnlineAuthorization,
        cursor: Option<String>,
    ) -> Result<Fetched<CreditNote>, ConnectorError> {
        self.credit_notes(credentials, None, cursor).await
    }

    async fn changed_page(
        &self,
        credentials: &ExactOnlineAuthorization,
        since: Since,
        cursor: Option<String>,
    ) -> Result<Fetched<CreditNote>, ConnectorError> {
        self.credit_notes(credentials, Some(since), cursor).await
    }
}

/// The division: two calls, whole every time.
impl Syncs<CompanyInfos> for ExactOnlineConnector {
    async fn page(
        &self,
        credentials: &ExactOnlineAuthorization,
        _cursor: Option<String>,
    ) -> Result<Fetched<CompanyInfo>, ConnectorError> {
        self.division(credentials).await
    }
}
