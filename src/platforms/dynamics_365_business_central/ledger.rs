//! Business Central's ledger beyond sales: G/L accounts, vendors, purchase
//! invoices and sales credit memos (with their lines), items and the
//! company's information, each an API v2.0 collection of the company paged
//! by `@odata.nextLink`. Vendors, purchase invoices and credit memos are
//! asked for by `lastModifiedDateTime` after a first sync; accounts and
//! items are fetched whole, since their balances and stock move without
//! that timestamp. Sources: `NOTES.md`, "Accounting model".

use crate::platforms::connector::changed_syncs;
use chrono::{DateTime, Utc};
use serde::de::DeserializeOwned;

use super::BusinessCentralAuthorization;
use super::chart::{BcAccount, BcCompanyInformation, BcItem};
use super::connector::{BusinessCentralConnector, CHANGES};
use super::documents::{BcCreditMemo, BcPurchaseInvoice};
use super::mapping::{BcCustomer, RecordPage};
use crate::data::accounts::{Account, Accounts};
use crate::data::bills::{Bill, Bills};
use crate::data::company_info::{CompanyInfo, CompanyInfos};
use crate::data::credit_notes::{CreditNote, CreditNotes};
use crate::data::items::{Item, Items};
use crate::data::suppliers::{Supplier, Suppliers};
use crate::platforms::connector::{ConnectorError, Fetched, Syncs};
use crate::platforms::kit::paging::NextLink;
use crate::platforms::kit::records::{Keyed, Unreadable};

impl BusinessCentralConnector {
    /// A page of the company's collection `path` (with `expand`), each
    /// entity made ours by `into` (`None` leaves it out).
    async fn collection<T: DeserializeOwned + Keyed, R>(
        &self,
        credentials: &BusinessCentralAuthorization,
        (path, expand, what): (&str, Option<&str>, &'static str),
        (since, cursor): (Option<DateTime<Utc>>, Option<String>),
        into: impl FnMut(T) -> Result<Option<R>, Unreadable>,
    ) -> Result<Fetched<R>, ConnectorError> {
        let page = NextLink::from_cursor(cursor);
        let call = self.list(credentials, path, expand, what, page, since)?;
        let body: RecordPage<T> = self.http.json(&call).await?;
        Ok(Fetched::read(
            body.value.read(into),
            NextLink::next(body.next_link),
        ))
    }
}

impl Syncs<Accounts> for BusinessCentralConnector {
    /// Whole every sync: `netChange` moves with every posting, which does
    /// not touch an account's `lastModifiedDateTime`.
    async fn page(
        &self,
        credentials: &BusinessCentralAuthorization,
        cursor: Option<String>,
    ) -> Result<Fetched<Account>, ConnectorError> {
        self.collection(
            credentials,
            ("accounts", None, "a page of G/L accounts"),
            (None, cursor),
            |account: BcAccount| Ok(account.into_record()),
        )
        .await
    }
}

/// Whole every sync: an item's `inventory` moves without its timestamp.
impl Syncs<Items> for BusinessCentralConnector {
    async fn page(
        &self,
        credentials: &BusinessCentralAuthorization,
        cursor: Option<String>,
    ) -> Result<Fetched<Item>, ConnectorError> {
        self.collection(
            credentials,
            ("items", None, "a page of items"),
            (None, cursor),
            |item: BcItem| Ok(Some(item.into_record())),
        )
        .await
    }
}

/// The company's information, a collection of one, whole every sync (its
/// currency and fiscal year are computed, outside its timestamp).
impl Syncs<CompanyInfos> for BusinessCentralConnector {
    async fn page(
        &self,
        credentials: &BusinessCentralAuthorization,
        cursor: Option<String>,
    ) -> Result<Fetched<CompanyInfo>, ConnectorError> {
        let company_id = credentials.company_id.to_string();
        self.collection(
            credentials,
            ("companyInformation", None, "the company's information"),
            (None, cursor),
            |company: BcCompanyInformation| Ok(Some(company.into_record(&company_id))),
        )
        .await
    }
}

impl BusinessCentralConnector {
    async fn vendors(
        &self,
        credentials: &BusinessCentralAuthorization,
        since: Option<DateTime<Utc>>,
        cursor: Option<String>,
    ) -> Result<Fetched<Supplier>, ConnectorError> {
        self.collection(
            credentials,
            ("vendors", None, "a page of vendors"),
            (since, cursor),
            |vendor: BcCustomer| Ok(Some(vendor.into_supplier())),
        )
        .await
    }

    async fn purchase_invoices(
        &self,
        credentials: &BusinessCentralAuthorization,
        since: Option<DateTime<Utc>>,
        cursor: Option<String>,
    ) -> Result<Fetched<Bill>, ConnectorError> {
        self.collection(
            credentials,
            (
                "purchaseInvoices",
                Some("purchaseInvoiceLines"),
                "a page of purchase invoices",
            ),
            (since, cursor),
            |bill: BcPurchaseInvoice| bill.into_record().map(Some),
        )
        .await
    }

    async fn credit_memos(
        &self,
        credentials: &BusinessCentralAuthorization,
        since: Option<DateTime<Utc>>,
        cursor: Option<String>,
    ) -> Result<Fetched<CreditNote>, ConnectorError> {
        self.collection(
            credentials,
            (
                "salesCreditMemos",
                Some("salesCreditMemoLines"),
                "a page of sales credit memos",
            ),
            (since, cursor),
            |note: BcCreditMemo| note.into_record().map(Some),
        )
        .await
    }
}

// A data type asked for by `lastModifiedDateTime` after a first sync,
// with the invoices' [`CHANGES`].
changed_syncs!(BusinessCentralConnector, CHANGES; Suppliers => vendors, Bills => purchase_invoices, CreditNotes => credit_memos);
