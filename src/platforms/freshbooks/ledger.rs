//! FreshBooks' ledger beyond sales: bill vendors, bills (with their lines
//! and vendor), bill payments (with the supplier and currency of the bill
//! each pays, read from the bill list for a page that has payments),
//! payments, taxes, items, the business itself (from the identity's
//! memberships) as company info, and the chart of accounts (one report of
//! that business, [`super::chart`]); credit notes, which read the payments
//! list too: [`super::credits`]. Every list pages by `page`/`per_page` until
//! the answer's `pages`; payments and items, whose `search[updated_min]`
//! FreshBooks documents, are asked only for what changed after a first
//! whole fetch ([`CHANGES`]), the others are fetched whole each sync.
//! Sources: `NOTES.md`, "Accounting model".

use std::time::Duration;

use chrono::{DateTime, NaiveDate, Utc};

use super::FreshBooksAuthorization;
use super::catalogue::{ItemsPage, TaxesPage};
use super::connector::{FreshBooksConnector, more};
use super::mapping::Business;
use super::purchases::{BillPaymentsPage, BillsPage, FreshBooksBill, Payees, VendorsPage, payees};
use super::receipts::PaymentsPage;
use crate::data::accounts::{Account, Accounts};
use crate::data::bill_payments::{BillPayment, BillPayments};
use crate::data::bills::{Bill, Bills};
use crate::data::company_info::{CompanyInfo, CompanyInfos};
use crate::data::items::{Item, Items};
use crate::data::payments::{Payment, Payments};
use crate::data::suppliers::{Supplier, Suppliers};
use crate::data::tax_rates::{TaxRate, TaxRates};
use crate::platforms::connector::{
    Changes, Connector, ConnectorError, Deletions, Fetched, Since, Syncs,
};
use crate::platforms::kit::paging::PageNumber;
use uuid::Uuid;

/// The bill list: its path, and what a page of it is called in messages.
const BILLS: (&str, &str) = ("bills/bills", "a page of bills");
/// What a bill page asks to include: its lines (which the list example
/// carries) and its vendor, for the supplier's name.
const BILL_INCLUDES: &[&str] = &["lines", "vendor"];

impl FreshBooksConnector {
    /// Every bill of the account, for the payees of a page of bill payments.
    async fn all_bills(
        &self,
        credentials: &FreshBooksAuthorization,
    ) -> Result<Payees, ConnectorError> {
        let mut bills: Vec<FreshBooksBill> = Vec::new();
        let mut page = PageNumber(1);
        loop {
            let result: BillsPage = self
                .list(credentials, BILLS, (page, None), BILL_INCLUDES)
                .await?;
            bills.extend(result.bills.read(|bill| Ok(Some(bill))).records);
            if !more(page, result.pages) {
                return Ok(payees(bills));
            }
            page = PageNumber(page.0 + 1);
        }
    }
}

impl Syncs<Suppliers> for FreshBooksConnector {
    async fn page(
        &self,
        credentials: &FreshBooksAuthorization,
        cursor: Option<String>,
    ) -> Result<Fetched<Supplier>, ConnectorError> {
        let page = PageNumber::from_cursor(Self::PLATFORM, cursor)?;
        let result: VendorsPage = self
            .list(
                credentials,
                ("bill_vendors/bill_vendors", "a page of bill vendors"),
                (page, None),
                &[],
            )
            .await?;
        let read = result
            .bill_vendors
            .read(|vendor| Ok(Some(vendor.into_record())));
        Ok(Fetched::read(read, page.next(more(page, result.pages))).of_total(result.total))
    }
}

impl Syncs<Bills> for FreshBooksConnector {
    async fn page(
        &self,
        credentials: &FreshBooksAuthorization,
        cursor: Option<String>,
    ) -> Result<Fetched<Bill>, ConnectorError> {
        let page = PageNumber::from_cursor(Self::PLATFORM, cursor)?;
        let result: BillsPage = self
            .list(credentials, BILLS, (page, None), BILL_INCLUDES)
            .await?;
        let read = result.bills.read(|bill| bill.into_record().map(Some));
        Ok(Fetched::read(read, page.next(more(page, result.pages))).of_total(result.total))
    }
}

impl Syncs<BillPayments> for FreshBooksConnector {
    async fn page(
        &self,
        credentials: &FreshBooksAuthorization,
        cursor: Option<String>,
    ) -> Result<Fetched<BillPayment>, ConnectorError> {
        let page = PageNumber::from_cursor(Self::PLATFORM, cursor)?;
        let result: BillPaymentsPage = self
            .list(
                credentials,
                ("bill_payments/bill_payments", "a page of bill payments"),
                (page, None),
                &[],
            )
            .await?;
        let payees = if result.bill_payments.is_empty() {
            Payees::new()
        } else {
            self.all_bills(credentials).await?
        };
        let read = result
            .bill_payments
            .read(|payment| payment.into_record(&payees));
        // Deleted payments are left out, so the list's total is not ours.
        Ok(Fetched::read(read, page.next(more(page, result.pages))))
    }
}

impl FreshBooksConnector {
    /// Page `page` of the payments list, as FreshBooks writes it (only the
    /// payments updated since `since`, when given): for payments, and for
    /// the credits applied to invoices that credit notes read.
    pub(super) async fn payments_page(
        &self,
        credentials: &FreshBooksAuthorization,
        page: PageNumber,
        since: Option<DateTime<Utc>>,
    ) -> Result<PaymentsPage, ConnectorError> {
        self.list(
            credentials,
            ("payments/payments", "a page of payments"),
            (page, since.map(updated_min)),
            &[],
        )
        .await
    }

    /// A page of payments (only those updated since `since`, when given).
    async fn payments(
        &self,
        credentials: &FreshBooksAuthorization,
        since: Option<DateTime<Utc>>,
        cursor: Option<String>,
    ) -> Result<Fetched<Payment>, ConnectorError> {
        let page = PageNumber::from_cursor(Self::PLATFORM, cursor)?;
        let result = self.payments_page(credentials, page, since).await?;
        let read = result.payments.read(|payment| payment.into_record());
        // Deleted payments and credits applied are left out: no total.
        Ok(Fetched::read(read, page.next(more(page, result.pages))))
    }

    /// A page of items (only those updated since `since`, when given).
    async fn items(
        &self,
        credentials: &FreshBooksAuthorization,
        since: Option<DateTime<Utc>>,
        cursor: Option<String>,
    ) -> Result<Fetched<Item>, ConnectorError> {
        let page = PageNumber::from_cursor(Self::PLATFORM, cursor)?;
        let result: ItemsPage = self
            .list(
                credentials,
                ("items/items", "a page of items"),
                (page, since.map(updated_min)),
                &[],
            )
            .await?;
        let read = result.items.read(|item| item.into_record().map(Some));
        Ok(Fetched::read(read, page.next(more(page, result.pages))).of_total(result.total))
    }
}

/// The day `search[updated_min]` names for `since`: FreshBooks compares
/// `updated`, written in US/Eastern, by the day. Five hours behind UTC
/// (EST) is never later than Eastern's own day, so no change is missed.
pub(super) fn updated_min(since: DateTime<Utc>) -> NaiveDate {
    (since - chrono::Duration::hours(5)).date_naive()
}

/// What FreshBooks' changes say: a day's overlap, since the filter keeps
/// only the day (whether it takes the day itself is not documented, so the
/// whole day before the last fetch began is asked for again). Deletions: a
/// deleted payment is left out of ours, and whether the filter returns
/// deleted rows is not confirmed, so the engine's daily full fetch finds
/// them.
pub(super) const CHANGES: Option<Changes> = Some(Changes {
    overlap: Duration::from_secs(24 * 60 * 60),
    deletions: Deletions::OnlyByFullFetch,
});

impl Syncs<Payments> for FreshBooksConnector {
    const CHANGES: Option<Changes> = CHANGES;

    async fn page(
        &self,
        credentials: &FreshBooksAuthorization,
        cursor: Option<String>,
    ) -> Result<Fetched<Payment>, ConnectorError> {
        self.payments(credentials, None, cursor).await
    }

    async fn changed_page(
        &self,
        credentials: &FreshBooksAuthorization,
        since: Since,
        cursor: Option<String>,
    ) -> Result<Fetched<Payment>, ConnectorError> {
        self.payments(credentials, Some(since.time), cursor).await
    }
}

impl Syncs<TaxRates> for FreshBooksConnector {
    async fn page(
        &self,
        credentials: &FreshBooksAuthorization,
        cursor: Option<String>,
    ) -> Result<Fetched<TaxRate>, ConnectorError> {
        let page = PageNumber::from_cursor(Self::PLATFORM, cursor)?;
        let result: TaxesPage = self
            .list(
                credentials,
                ("taxes/taxes", "a page of taxes"),
                (page, None),
                &[],
            )
            .await?;
        let read = result.taxes.read(|tax| tax.into_record().map(Some));
        Ok(Fetched::read(read, page.next(more(page, result.pages))).of_total(result.total))
    }
}

impl Syncs<Items> for FreshBooksConnector {
    const CHANGES: Option<Changes> = CHANGES;

    async fn page(
        &self,
        credentials: &FreshBooksAuthorization,
        cursor: Option<String>,
    ) -> Result<Fetched<Item>, ConnectorError> {
        self.items(credentials, None, cursor).await
    }

    async fn changed_page(
        &self,
        credentials: &FreshBooksAuthorization,
        since: Since,
        cursor: Option<String>,
    ) -> Result<Fetched<Item>, ConnectorError> {
        self.items(credentials, Some(since.time), cursor).await
    }
}

impl FreshBooksConnector {
    /// The connection's business: the membership of `GET
    /// /auth/api/v1/users/me` whose business has our account id (one that
    /// no longer lists it fails the sync).
    async fn business(
        &self,
        credentials: &FreshBooksAuthorization,
    ) -> Result<Business, ConnectorError> {
        let account_id = &credentials.account_id;
        self.identity(credentials)
            .await?
            .response
            .business_memberships
            .into_iter()
            .filter_map(|membership| membership.business)
            .find(|business| business.account_id.as_deref() == Some(account_id.as_str()))
            .ok_or_else(|| {
                ConnectorError::Failed(format!(
                    "FreshBooks' identity no longer lists account {account_id} among the user's \
                     businesses; the previous data is kept"
                ))
            })
    }
}

impl Syncs<CompanyInfos> for FreshBooksConnector {
    /// The connection's business, one record.
    async fn page(
        &self,
        credentials: &FreshBooksAuthorization,
        _cursor: Option<String>,
    ) -> Result<Fetched<CompanyInfo>, ConnectorError> {
        let business = self.business(credentials).await?;
        Ok(Fetched::all(
            vec![business.into_company(&credentials.account_id)],
            None,
        ))
    }
}

impl Syncs<Accounts> for FreshBooksConnector {
    /// The whole chart, one call: the chart of accounts report of the
    /// connection's business (by its uuid, from `/users/me`), with
    /// `use_ledger_entries=true`, which FreshBooks requires.
    async fn page(
        &self,
        credentials: &FreshBooksAuthorization,
        _cursor: Option<String>,
    ) -> Result<Fetched<Account>, ConnectorError> {
        let business = self.business(credentials).await?;
        // Checked to be a uuid before it goes into a URL.
        let uuid = business
            .business_uuid
            .filter(|uuid| Uuid::parse_str(uuid).is_ok())
            .ok_or_else(|| {
                ConnectorError::Failed(format!(
                    "FreshBooks' identity gives account {} no business uuid, which its chart of \
                     accounts is read by; the previous data is kept",
                    credentials.account_id
                ))
            })?;
        let report = self.chart(credentials, &uuid).await?;
        Ok(Fetched::read(report.into_accounts(), None))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn updated_min_is_a_day_no_later_than_the_eastern_one() {
        let day = |text: &str| {
            updated_min(text.parse::<DateTime<Utc>>().expect("a time"))
                .format("%Y-%m-%d")
                .to_string()
        };
        // 03:00 UTC is still the day before in Toronto, winter or summer.
        assert_eq!(day("2026-11-27T03:00:00Z"), "2026-11-26");
        assert_eq!(day("2026-07-02T03:30:00Z"), "2026-07-01");
        assert_eq!(day("2026-11-27T09:00:00Z"), "2026-11-27");
    }
}
