//! MYOB's ledger beyond sales: accounts, suppliers, tax codes, bills (four
//! typed lists with lines, then the pre-conversion bills), sales credits
//! with their settlements, customer and supplier payments with their
//! refunds, items, the general ledger's journal transactions and the
//! company file itself. Each list pages by `NextPageLink`; a data type
//! drawn from several lists walks them in turn (a [`Walk`]). Sources:
//! `NOTES.md`, "Accounting model".

use crate::platforms::connector::{changed_syncs, whole_syncs};
use chrono::{DateTime, Utc};
use serde::de::DeserializeOwned;

use super::MyobAuthorization;
use super::chart::{AccountingProperties, MyobAccount, MyobCompany, MyobItem, MyobTaxCode};
use super::connector::{CHANGES, MyobConnector};
use super::documents::{CreditSettlement, MyobBill, Settlements, TaxRates};
use super::journals::JournalTransaction;
use super::mapping::{MyobCard, MyobInvoice, Paged};
use super::settlements::{CustomerPayment, Refund, SupplierPayment};
use crate::data::accounts::{Account, Accounts};
use crate::data::bill_payments::{BillPayment, BillPayments};
use crate::data::bills::{Bill, Bills};
use crate::data::company_info::{CompanyInfo, CompanyInfos};
use crate::data::credit_notes::{CreditNote, CreditNotes};
use crate::data::items::{Item, Items};
use crate::data::journal_entries::{JournalEntries, JournalEntry};
use crate::data::payments::{Payment, Payments};
use crate::data::suppliers::{Supplier, Suppliers};
use crate::data::tax_rates::{TaxRate, TaxRates as TaxRateList};
use crate::platforms::connector::{ConnectorError, Fetched, Syncs};
use crate::platforms::kit::paging::NextLink;
use crate::platforms::kit::records::Keyed;

/// Where a sync drawn from one or more of the file's lists stands: which
/// list (`stage`), the file's currency (looked up once, on the first page)
/// and MYOB's next link in that list. As a cursor: `stage currency [link]`.
pub(super) struct Walk {
    pub(super) stage: usize,
    pub(super) currency: String,
    pub(super) link: NextLink,
}

/// The currency of a file whose country does not imply one.
const NO_CURRENCY: &str = "-";

impl Walk {
    /// The position a cursor names.
    fn parse(cursor: &str) -> Result<Self, ConnectorError> {
        let invalid = || ConnectorError::Failed(format!("invalid MYOB cursor {cursor:?}"));
        let mut parts = cursor.splitn(3, ' ');
        let stage = parts
            .next()
            .and_then(|stage| stage.parse().ok())
            .ok_or_else(invalid)?;
        let currency = parts.next().ok_or_else(invalid)?.to_owned();
        Ok(Self {
            stage,
            currency,
            link: NextLink::from_cursor(parts.next().map(str::to_owned)),
        })
    }

    /// The file's currency, `""` when its country implies none.
    pub(super) fn currency(&self) -> &str {
        if self.currency == NO_CURRENCY {
            ""
        } else {
            &self.currency
        }
    }

    /// The cursor after this page: MYOB's `next` link in the same list,
    /// else the first page of the next of `stages` lists, else none.
    pub(super) fn after(&self, next: Option<String>, stages: usize) -> Option<String> {
        match NextLink::next(next) {
            Some(link) => Some(format!("{} {} {link}", self.stage, self.currency)),
            None if self.stage + 1 < stages => {
                Some(format!("{} {}", self.stage + 1, self.currency))
            }
            None => None,
        }
    }
}

impl MyobConnector {
    /// Where `cursor` stands; on the first page, the start of the first
    /// list with the file's currency looked up.
    pub(super) async fn walk(
        &self,
        credentials: &MyobAuthorization,
        cursor: Option<String>,
    ) -> Result<Walk, ConnectorError> {
        match cursor {
            Some(cursor) => Walk::parse(&cursor),
            None => {
                let currency = self.file_currency(credentials).await?;
                Ok(Walk {
                    stage: 0,
                    currency: currency.unwrap_or(NO_CURRENCY).to_owned(),
                    link: NextLink::First,
                })
            }
        }
    }

    /// Every page of `resource`, whole (no filter).
    async fn whole<T: DeserializeOwned + Keyed>(
        &self,
        credentials: &MyobAuthorization,
        what: &'static str,
        resource: &str,
    ) -> Result<Vec<T>, ConnectorError> {
        let mut records = Vec::new();
        let mut link = NextLink::First;
        loop {
            let page: Paged<T> = self
                .list_page(credentials, what, resource, &link, None)
                .await?;
            records.extend(page.items.read(|record| Ok(Some(record))).records);
            match NextLink::next(page.next_page_link) {
                Some(next) => link = NextLink::Given(next),
                None => return Ok(records),
            }
        }
    }

    /// A page of a single list mapped by `into`, its cursor MYOB's link.
    async fn simple<T: DeserializeOwned + Keyed, R>(
        &self,
        credentials: &MyobAuthorization,
        (what, resource): (&'static str, &str),
        (since, cursor): (Option<DateTime<Utc>>, Option<String>),
        into: impl FnMut(T) -> Result<Option<R>, crate::platforms::kit::records::Unreadable>,
    ) -> Result<Fetched<R>, ConnectorError> {
        let link = NextLink::from_cursor(cursor);
        let page: Paged<T> = self
            .list_page(credentials, what, resource, &link, since)
            .await?;
        Ok(Fetched::read(
            page.items.read(into),
            NextLink::next(page.next_page_link),
        ))
    }

    /// A page of the chart's accounts (headers left out), whole each sync:
    /// a posting moves a balance without a change MYOB's filter would show.
    async fn accounts(
        &self,
        credentials: &MyobAuthorization,
        cursor: Option<String>,
    ) -> Result<Fetched<Account>, ConnectorError> {
        let walk = self.walk(credentials, cursor).await?;
        let page: Paged<MyobAccount> = self
            .list_page(
                credentials,
                "a page of accounts",
                "GeneralLedger/Account",
                &walk.link,
                None,
            )
            .await?;
        let read = page
            .items
            .read(|account| Ok(account.into_record(walk.currency())));
        Ok(Fetched::read(read, walk.after(page.next_page_link, 1)))
    }

    /// A page of supplier cards.
    async fn suppliers(
        &self,
        credentials: &MyobAuthorization,
        since: Option<DateTime<Utc>>,
        cursor: Option<String>,
    ) -> Result<Fetched<Supplier>, ConnectorError> {
        self.simple(
            credentials,
            ("a page of suppliers", "Contact/Supplier"),
            (since, cursor),
            |card: MyobCard| Ok(Some(card.into_supplier())),
        )
        .await
    }

    /// A page of tax codes.
    async fn tax_codes(
        &self,
        credentials: &MyobAuthorization,
        since: Option<DateTime<Utc>>,
        cursor: Option<String>,
    ) -> Result<Fetched<TaxRate>, ConnectorError> {
        self.simple(
            credentials,
            ("a page of tax codes", "GeneralLedger/TaxCode"),
            (since, cursor),
            |code: MyobTaxCode| Ok(Some(code.into_record())),
        )
        .await
    }

    /// A page of items, whole each sync: a sale moves the quantity on hand.
    async fn items(
        &self,
        credentials: &MyobAuthorization,
        cursor: Option<String>,
    ) -> Result<Fetched<Item>, ConnectorError> {
        self.simple(
            credentials,
            ("a page of items", "Inventory/Item"),
            (None, cursor),
            |item: MyobItem| Ok(Some(item.into_record())),
        )
        .await
    }

    /// A page of bills: the four typed lists (with lines), then the
    /// untyped list for the pre-conversion bills only it has. The file's
    /// tax codes are read for a page whose lines name one.
    async fn bills(
        &self,
        credentials: &MyobAuthorization,
        since: Option<DateTime<Utc>>,
        cursor: Option<String>,
    ) -> Result<Fetched<Bill>, ConnectorError> {
        const LISTS: [&str; 5] = [
            "Purchase/Bill/Service",
            "Purchase/Bill/Item",
            "Purchase/Bill/Professional",
            "Purchase/Bill/Miscellaneous",
            "Purchase/Bill",
        ];
        let walk = self.walk(credentials, cursor).await?;
        let resource = LISTS.get(walk.stage).ok_or_else(|| {
            ConnectorError::Failed(format!(
                "the MYOB bills cursor names list {}, of {}",
                walk.stage,
                LISTS.len()
            ))
        })?;
        let untyped = walk.stage + 1 == LISTS.len();
        let page: Paged<MyobBill> = self
            .list_page(credentials, "a page of bills", resource, &walk.link, since)
            .await?;
        let rates: TaxRates = if page.items.any(MyobBill::has_taxed_lines) {
            self.whole::<MyobTaxCode>(credentials, "the tax codes", "GeneralLedger/TaxCode")
                .await?
                .into_iter()
                .map(|code| (code.uid.clone(), code.percentage()))
                .collect()
        } else {
            TaxRates::new()
        };
        let read = page.items.read(|bill| {
            if untyped && !bill.is_pre_conversion() {
                return Ok(None);
            }
            bill.into_record(walk.currency(), &rates)
        });
        Ok(Fetched::read(
            read,
            walk.after(page.next_page_link, LISTS.len()),
        ))
    }

    /// A page of sales credit notes: the negative sales of the sale list,
    /// with the file's credit settlements read for a page that has one.
    async fn credit_notes(
        &self,
        credentials: &MyobAuthorization,
        since: Option<DateTime<Utc>>,
        cursor: Option<String>,
    ) -> Result<Fetched<CreditNote>, ConnectorError> {
        let walk = self.walk(credentials, cursor).await?;
        let page: Paged<MyobInvoice> = self
            .list_page(
                credentials,
                "a page of sales",
                "Sale/Invoice",
                &walk.link,
                since,
            )
            .await?;
        let settlements = if page.items.any(MyobInvoice::is_credit_note) {
            let all = self
                .whole::<CreditSettlement>(
                    credentials,
                    "the credit settlements",
                    "Sale/CreditSettlement",
                )
                .await?;
            Settlements::of(all)
        } else {
            Settlements::default()
        };
        let read = page.items.read(|sale| {
            if sale.is_credit_note() {
                sale.into_credit_note(walk.currency(), &settlements)
                    .map(Some)
            } else {
                Ok(None)
            }
        });
        Ok(Fetched::read(read, walk.after(page.next_page_link, 1)))
    }

    /// A page of customer payments, then of refunds of sales credits.
    async fn customer_payments(
        &self,
        credentials: &MyobAuthorization,
        since: Option<DateTime<Utc>>,
        cursor: Option<String>,
    ) -> Result<Fetched<Payment>, ConnectorError> {
        let walk = self.walk(credentials, cursor).await?;
        let currency = walk.currency();
        let (read, next) = if walk.stage == 0 {
            let page: Paged<CustomerPayment> = self
                .list_page(
                    credentials,
                    "a page of customer payments",
                    "Sale/CustomerPayment",
                    &walk.link,
                    since,
                )
                .await?;
            (
                page.items
                    .read(|payment| payment.into_record(currency).map(Some)),
                page.next_page_link,
            )
        } else {
            let page: Paged<Refund> = self
                .list_page(
                    credentials,
                    "a page of credit refunds",
                    "Sale/CreditRefund",
                    &walk.link,
                    since,
                )
                .await?;
            (
                page.items
                    .read(|refund| refund.into_payment(currency).map(Some)),
                page.next_page_link,
            )
        };
        Ok(Fetched::read(read, walk.after(next, 2)))
    }

    /// A page of supplier payments, then of refunds of supplier debits.
    async fn supplier_payments(
        &self,
        credentials: &MyobAuthorization,
        since: Option<DateTime<Utc>>,
        cursor: Option<String>,
    ) -> Result<Fetched<BillPayment>, ConnectorError> {
        let walk = self.walk(credentials, cursor).await?;
        let currency = walk.currency();
        let (read, next) = if walk.stage == 0 {
            let page: Paged<SupplierPayment> = self
                .list_page(
                    credentials,
                    "a page of supplier payments",
                    "Purchase/SupplierPayment",
                    &walk.link,
                    since,
                )
                .await?;
            (
                page.items
                    .read(|payment| payment.into_record(currency).map(Some)),
                page.next_page_link,
            )
        } else {
            let page: Paged<Refund> = self
                .list_page(
                    credentials,
                    "a page of debit refunds",
                    "Purchase/DebitRefund",
                    &walk.link,
                    since,
                )
                .await?;
            (
                page.items
                    .read(|refund| refund.into_bill_payment(currency).map(Some)),
                page.next_page_link,
            )
        };
        Ok(Fetched::read(read, walk.after(next, 2)))
    }

    /// A page of the general ledger's journal transactions, whole each
    /// sync (whether MYOB filters them by `LastModified` is not confirmed).
    async fn journals(
        &self,
        credentials: &MyobAuthorization,
        cursor: Option<String>,
    ) -> Result<Fetched<JournalEntry>, ConnectorError> {
        let walk = self.walk(credentials, cursor).await?;
        let page: Paged<JournalTransaction> = self
            .list_page(
                credentials,
                "a page of journal transactions",
                "GeneralLedger/JournalTransaction",
                &walk.link,
                None,
            )
            .await?;
        let read = page
            .items
            .read(|journal| journal.into_record(walk.currency()));
        Ok(Fetched::read(read, walk.after(page.next_page_link, 1)))
    }

    /// The company file: its details and its financial year.
    async fn company(
        &self,
        credentials: &MyobAuthorization,
    ) -> Result<Fetched<CompanyInfo>, ConnectorError> {
        let currency = self.file_currency(credentials).await?;
        let company: MyobCompany = self.single(credentials, "the company", "Company").await?;
        let properties: AccountingProperties = self
            .single(
                credentials,
                "the accounting properties",
                "GeneralLedger/AccountingProperties",
            )
            .await?;
        let file = credentials.company_file_id.to_string();
        Ok(Fetched::all(
            vec![company.into_record(&file, currency, properties)],
            None,
        ))
    }
}

// Each data type MYOB filters by `LastModified`: a full page and a changed
// page from the same function, with the invoices' [`CHANGES`].
changed_syncs!(MyobConnector, CHANGES; Suppliers => suppliers, TaxRateList => tax_codes, Bills => bills, CreditNotes => credit_notes, Payments => customer_payments, BillPayments => supplier_payments);
// Each data type fetched whole on every sync.
whole_syncs!(MyobConnector; Accounts => accounts, Items => items, JournalEntries => journals);

/// The company file is two calls, whole every time.
impl Syncs<CompanyInfos> for MyobConnector {
    async fn page(
        &self,
        credentials: &MyobAuthorization,
        _cursor: Option<String>,
    ) -> Result<Fetched<CompanyInfo>, ConnectorError> {
        self.company(credentials).await
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_walk_moves_through_its_lists_and_keeps_the_currency() {
        let first = Walk {
            stage: 0,
            currency: "AUD".to_owned(),
            link: NextLink::First,
        };
        assert_eq!(
            first
                .after(Some("https://api.myob.com/next".to_owned()), 2)
                .as_deref(),
            Some("0 AUD https://api.myob.com/next")
        );
        assert_eq!(first.after(None, 2).as_deref(), Some("1 AUD"));
        let second = Walk::parse("1 AUD").expect("a cursor");
        assert_eq!((second.stage, second.currency()), (1, "AUD"));
        assert!(matches!(second.link, NextLink::First));
        assert_eq!(second.after(None, 2), None);
        let unknown = Walk::parse("0 - https://api.myob.com/x?$skip=1").expect("a cursor");
        assert_eq!(unknown.currency(), "");
        assert!(matches!(unknown.link, NextLink::Given(ref link) if link.ends_with("$skip=1")));
        assert!(Walk::parse("x AUD").is_err());
    }
}
