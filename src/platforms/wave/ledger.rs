//! Wave's accounting lists beyond sales: the chart of accounts, vendors as
//! suppliers, products as items and sales taxes as tax rates (each a
//! page-numbered list of the business), and the business itself as
//! company info. Accounts, products and sales taxes are asked for in two
//! halves, unarchived then archived ([`Half`]); after a first sync,
//! vendors, products and sales taxes ask only for what changed
//! (`modifiedAtAfter`, as invoices and customers do: [`super::connector`]). Wave's public API has no bills, payments, credit
//! notes or journals. Sources: `NOTES.md`, "Accounting model".

use crate::platforms::connector::changed_syncs;
use chrono::{DateTime, Utc};
use serde_json::{Value, json};

use super::WaveAuthorization;
use super::chart::{BusinessAccounts, BusinessProducts, BusinessSalesTaxes, WaveBusiness};
use super::connector::{CHANGES, WaveConnector, changed_since, unreachable_business};
use super::mapping::BusinessVendors;
use crate::data::accounts::{Account, Accounts};
use crate::data::company_info::{CompanyInfo, CompanyInfos};
use crate::data::items::{Item, Items};
use crate::data::suppliers::{Supplier, Suppliers};
use crate::data::tax_rates::{TaxRate, TaxRates};
use crate::platforms::connector::{Connector, ConnectorError, Fetched, Syncs};
use crate::platforms::kit::paging::PageNumber;

/// A page of the chart of accounts, unarchived or archived. Wave's
/// `accounts` takes no sort and no date filter.
pub(super) const ACCOUNTS_QUERY: &str =
    "query WaveAccounts($businessId: ID!, $page: Int!, $pageSize: Int!, $isArchived: Boolean!) {
  business(id: $businessId) {
    id
    accounts(page: $page, pageSize: $pageSize, isArchived: $isArchived) {
      pageInfo { currentPage totalPages totalCount }
      edges { node {
        id displayId name description isArchived balance
        type { value }
        subtype { value }
        currency { code }
      } }
    }
  }
}";

/// A page of the vendors (modified after `$modifiedAtAfter`, when given).
/// Wave's `vendors` takes no sort.
pub(super) const VENDORS_QUERY: &str = "query WaveVendors($businessId: ID!, $page: Int!, $pageSize: Int!, $modifiedAtAfter: DateTime) {
  business(id: $businessId) {
    id
    vendors(page: $page, pageSize: $pageSize, modifiedAtAfter: $modifiedAtAfter) {
      pageInfo { currentPage totalPages totalCount }
      edges { node {
        id name email phone mobile isArchived createdAt modifiedAt
        currency { code }
      } }
    }
  }
}";

/// A page of the products, unarchived or archived (modified after
/// `$modifiedAtAfter`, when given), oldest first so pages stay put while
/// products are added.
pub(super) const PRODUCTS_QUERY: &str = "query WaveProducts($businessId: ID!, $page: Int!, $pageSize: Int!, $isArchived: Boolean!, $modifiedAtAfter: DateTime) {
  business(id: $businessId) {
    id
    products(page: $page, pageSize: $pageSize, sort: [CREATED_AT_ASC], isArchived: $isArchived, modifiedAtAfter: $modifiedAtAfter) {
      pageInfo { currentPage totalPages totalCount }
      edges { node {
        id name description unitPrice isSold isBought isArchived modifiedAt
        incomeAccount { id name }
        expenseAccount { id name }
        defaultSalesTaxes { id name }
      } }
    }
  }
}";

/// A page of the sales taxes, unarchived or archived (modified after
/// `$modifiedAtAfter`, when given), with today's rate. Wave's `salesTaxes`
/// takes no sort.
pub(super) const SALES_TAXES_QUERY: &str = "query WaveSalesTaxes($businessId: ID!, $page: Int!, $pageSize: Int!, $isArchived: Boolean!, $modifiedAtAfter: DateTime) {
  business(id: $businessId) {
    id
    salesTaxes(page: $page, pageSize: $pageSize, isArchived: $isArchived, modifiedAtAfter: $modifiedAtAfter) {
      pageInfo { currentPage totalPages totalCount }
      edges { node {
        id name abbreviation rate isCompound isArchived modifiedAt
      } }
    }
  }
}";

/// The business's own details.
pub(super) const COMPANY_QUERY: &str = "query WaveCompanyInfo($businessId: ID!) {
  business(id: $businessId) {
    id name phone mobile tollFree website createdAt modifiedAt
    currency { code }
    address { addressLine1 addressLine2 city province { name } country { name } postalCode }
  }
}";

/// Where a walk of a list asked for in two halves stands: the unarchived
/// records (`isArchived: false`), then the archived ones (`true`), since
/// what Wave lists without the argument is not documented. As a cursor:
/// `active 2`, `archived 1`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Half {
    /// Whether this is the archived half.
    pub(super) archived: bool,
    /// The page in this half.
    pub(super) page: PageNumber,
}

impl Half {
    /// The position a cursor names: the first page of the unarchived half
    /// without one.
    pub(super) fn from_cursor(cursor: Option<String>) -> Result<Self, ConnectorError> {
        let Some(cursor) = cursor else {
            return Ok(Self {
                archived: false,
                page: PageNumber(1),
            });
        };
        let invalid = || ConnectorError::Failed(format!("invalid Wave cursor {cursor:?}"));
        let (half, page) = cursor.split_once(' ').ok_or_else(invalid)?;
        let archived = match half {
            "active" => false,
            "archived" => true,
            _ => return Err(invalid()),
        };
        let page = page.parse().map(PageNumber).map_err(|_| invalid())?;
        Ok(Self { archived, page })
    }

    /// The half's filter: `isArchived`.
    fn variables(self) -> Value {
        json!({"isArchived": self.archived})
    }

    /// The cursor after this page: the next page of the half while there
    /// are `more`, else the archived half's first, else none.
    pub(super) fn after(self, more: bool) -> Option<String> {
        let half = |archived| if archived { "archived" } else { "active" };
        if more {
            Some(format!("{} {}", half(self.archived), self.page.0 + 1))
        } else if !self.archived {
            Some(format!("{} 1", half(true)))
        } else {
            None
        }
    }
}

/// `filters` with `more` added.
fn with(mut filters: Value, more: Value) -> Value {
    if let (Value::Object(filters), Value::Object(more)) = (&mut filters, more) {
        filters.extend(more);
    }
    filters
}

impl WaveConnector {
    /// A page of the chart, whole each sync: a posting moves a balance
    /// without a change Wave could filter on (accounts have no `modifiedAt`).
    async fn accounts(
        &self,
        credentials: &WaveAuthorization,
        cursor: Option<String>,
    ) -> Result<Fetched<Account>, ConnectorError> {
        let half = Half::from_cursor(cursor)?;
        let (accounts, more, _) = self
            .list(
                credentials,
                ("a page of accounts", ACCOUNTS_QUERY),
                half.page,
                half.variables(),
                |business: BusinessAccounts| business.accounts,
            )
            .await?;
        let read = accounts.read(|account| Ok(account.into_record()));
        Ok(Fetched::read(read, half.after(more)))
    }

    /// A page of vendors (modified since `since`, when given).
    async fn vendors(
        &self,
        credentials: &WaveAuthorization,
        since: Option<DateTime<Utc>>,
        cursor: Option<String>,
    ) -> Result<Fetched<Supplier>, ConnectorError> {
        let page = PageNumber::from_cursor(Self::PLATFORM, cursor)?;
        let (vendors, more, total) = self
            .list(
                credentials,
                ("a page of vendors", VENDORS_QUERY),
                page,
                changed_since(since),
                |business: BusinessVendors| business.vendors,
            )
            .await?;
        let read = vendors.read(|vendor| Ok(vendor.into_supplier()));
        Ok(Fetched::read(read, page.next(more)).of_total(total))
    }

    /// A page of products (modified since `since`, when given).
    async fn products(
        &self,
        credentials: &WaveAuthorization,
        since: Option<DateTime<Utc>>,
        cursor: Option<String>,
    ) -> Result<Fetched<Item>, ConnectorError> {
        let half = Half::from_cursor(cursor)?;
        let (products, more, _) = self
            .list(
                credentials,
                ("a page of products", PRODUCTS_QUERY),
                half.page,
                with(half.variables(), changed_since(since)),
                |business: BusinessProducts| business.products,
            )
            .await?;
        let read = products.read(|product| Ok(product.into_record()));
        Ok(Fetched::read(read, half.after(more)))
    }

    /// A page of sales taxes (modified since `since`, when given).
    async fn sales_taxes(
        &self,
        credentials: &WaveAuthorization,
        since: Option<DateTime<Utc>>,
        cursor: Option<String>,
    ) -> Result<Fetched<TaxRate>, ConnectorError> {
        let half = Half::from_cursor(cursor)?;
        let (taxes, more, _) = self
            .list(
                credentials,
                ("a page of sales taxes", SALES_TAXES_QUERY),
                half.page,
                with(half.variables(), changed_since(since)),
                |business: BusinessSalesTaxes| business.sales_taxes,
            )
            .await?;
        let read = taxes.read(|tax| Ok(tax.into_record()));
        Ok(Fetched::read(read, half.after(more)))
    }

    /// The business itself: one query, one record.
    async fn company(
        &self,
        credentials: &WaveAuthorization,
    ) -> Result<Fetched<CompanyInfo>, ConnectorError> {
        let business: Option<WaveBusiness> = self
            .business(
                credentials,
                "the business's details",
                COMPANY_QUERY,
                json!({}),
            )
            .await?;
        let business = business.ok_or_else(|| unreachable_business(&credentials.business_id))?;
        Ok(Fetched::all(vec![business.into_record()], None))
    }
}

// Each data type Wave filters by `modifiedAtAfter`: a full page and a
// changed page from the same function.
changed_syncs!(WaveConnector, CHANGES; Suppliers => vendors, Items => products, TaxRates => sales_taxes);

/// The chart is fetched whole every sync.
impl Syncs<Accounts> for WaveConnector {
    async fn page(
        &self,
        credentials: &WaveAuthorization,
        cursor: Option<String>,
    ) -> Result<Fetched<Account>, ConnectorError> {
        self.accounts(credentials, cursor).await
    }
}

/// The business is one query, whole every time.
impl Syncs<CompanyInfos> for WaveConnector {
    async fn page(
        &self,
        credentials: &WaveAuthorization,
        _cursor: Option<String>,
    ) -> Result<Fetched<CompanyInfo>, ConnectorError> {
        self.company(credentials).await
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_walk_reads_the_unarchived_half_then_the_archived_one() {
        let first = Half::from_cursor(None).expect("the first page");
        assert_eq!((first.archived, first.page), (false, PageNumber(1)));
        assert_eq!(first.variables(), json!({"isArchived": false}));
        assert_eq!(first.after(true).as_deref(), Some("active 2"));
        assert_eq!(first.after(false).as_deref(), Some("archived 1"));
        let archived = Half::from_cursor(Some("archived 1".to_owned())).expect("a cursor");
        assert_eq!((archived.archived, archived.page), (true, PageNumber(1)));
        assert_eq!(archived.variables(), json!({"isArchived": true}));
        assert_eq!(archived.after(true).as_deref(), Some("archived 2"));
        assert_eq!(archived.after(false), None);
        for invalid in ["2", "archived", "deleted 1", "active x"] {
            assert!(
                Half::from_cursor(Some(invalid.to_owned())).is_err(),
                "{invalid}"
            );
        }
    }

    #[test]
    fn what_changed_is_asked_for_in_utc_to_the_second_and_a_whole_list_without_it() {
        let since = DateTime::parse_from_rfc3339("2026-11-27T08:55:00.750+00:00")
            .expect("a time")
            .with_timezone(&Utc);
        assert_eq!(
            changed_since(Some(since)),
            json!({"modifiedAtAfter": "2026-11-27T08:55:00Z"})
        );
        assert_eq!(changed_since(None), json!({}));
        assert_eq!(
            with(json!({"isArchived": true}), changed_since(Some(since))),
            json!({"isArchived": true, "modifiedAtAfter": "2026-11-27T08:55:00Z"})
        );
    }
}
