//! Exact Online's ledger beyond sales: G/L accounts, suppliers and items
//! from the sync APIs (by row version after a first sync, deletions from
//! `sync/Deleted`), VAT codes whole each sync, and the division as company
//! info (`NOTES.md`, "Accounting model").

use chrono::Utc;

use super::ExactOnlineAuthorization;
use super::chart::{
    DIVISION_FIELDS, DivisionDetails, ExactItem, FinancialPeriod, GL_ACCOUNT_FIELDS, GlAccount,
    ITEM_FIELDS, SUPPLIER_FIELDS, SupplierAccount, VAT_CODE_FIELDS, VatCode, year_start,
};
use super::connector::ExactOnlineConnector;
use super::sync_api::{Kept, SyncList};
use crate::data::accounts::{Account, Accounts};
use crate::data::company_info::{CompanyInfo, CompanyInfos};
use crate::data::items::{Item, Items};
use crate::data::suppliers::{Supplier, Suppliers};
use crate::data::tax_rates::{TaxRate, TaxRates};
use crate::platforms::connector::{Changes, ConnectorError, Deletions, Fetched, Since, Syncs};

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

impl ExactOnlineConnector {
    /// A page of the chart of accounts.
    async fn gl_accounts(
        &self,
        credentials: &ExactOnlineAuthorization,
        since: Option<Since>,
        cursor: Option<String>,
    ) -> Result<Fetched<Account>, ConnectorError> {
        self.sync_page(credentials, &GL_ACCOUNTS, (since, cursor), |account: GlAccount| {
            Ok(Kept::Record(account.into_record()))
        })
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
        self.sync_page(credentials, &CRM_ACCOUNTS, (since, cursor), |account: SupplierAccount| {
            Ok(if account.is_supplier() {
                Kept::Record(account.into_record())
            } else {
                Kept::Gone(account.id().to_owned())
            })
        })
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
            .list_page::<VatCode>(credentials, "a page of VAT codes", &query, "vat/VATCodes", cursor)
            .await?;
        Ok(Fetched::read(codes.read(|code| Ok(code.into_record())), next))
    }

    /// The division, with the start of its financial year.
    async fn division(&self, credentials: &ExactOnlineAuthorization) -> Result<Fetched<CompanyInfo>, ConnectorError> {
        let filter = format!("Code eq {}", credentials.division);
        let query = [("$select", DIVISION_FIELDS), ("$filter", filter.as_str())];
        let (divisions, _) = self
            .list_page::<DivisionDetails>(credentials, "the division", &query, "system/Divisions", None)
            .await?;
        let query = [("$select", "FinYear,StartDate"), ("$filter", "FinPeriod eq 1")];
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

/// A list fetched whole on every sync.
macro_rules! whole_syncs {
    ($definition:ty, $record:ty, $fetch:ident) => {
        impl Syncs<$definition> for ExactOnlineConnector {
            async fn page(
                &self,
                credentials: &ExactOnlineAuthorization,
                cursor: Option<String>,
            ) -> Result<Fetched<$record>, ConnectorError> {
                self.$fetch(credentials, cursor).await
            }
        }
    };
}

sync_api_syncs!(Accounts, Account, gl_accounts);
sync_api_syncs!(Suppliers, Supplier, suppliers);
sync_api_syncs!(Items, Item, items);
whole_syncs!(TaxRates, TaxRate, vat_codes);

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
