//! FreeAgent's ledger beyond sales: the chart (categories, then bank
//! accounts), suppliers, the company's tax rates, bills with their items,
//! credit notes with their reconciliations, payments and bill payments
//! from each bank account's explanations, price list items and the company
//! itself. Lists page by `page`/`per_page` while the `Link` header names a
//! next page; those FreeAgent filters by `updated_since` ask only for what
//! changed after a first sync. Journal entries are not synced (`NOTES.md`
//! says why). Sources: `NOTES.md`, "Accounting model (issue 34): built".

use crate::platforms::connector::changed_syncs;
use std::collections::HashSet;

use chrono::{DateTime, Utc};
use serde::de::DeserializeOwned;

use super::FreeAgentAuthorization;
use super::chart::{BankAccountsPage, CategoriesAnswer, CompanyDetailsAnswer, PriceListPage};
use super::connector::{CHANGES, FreeAgentConnector, next_page};
use super::documents::{
    BillsPage, CreditNotesPage, FreeAgentCreditNote, Reconciliations, ReconciliationsPage,
};
use super::mapping::ContactsPage;
use super::settlements::{Bank, BankWalk, Explanation, ExplanationsPage};
use crate::data::accounts::{Account, Accounts};
use crate::data::bill_payments::{BillPayment, BillPayments};
use crate::data::bills::{Bill, Bills};
use crate::data::company_info::{CompanyInfo, CompanyInfos};
use crate::data::credit_notes::{CreditNote, CreditNotes};
use crate::data::items::{Item, Items};
use crate::data::payments::{Payment, Payments};
use crate::data::suppliers::{Supplier, Suppliers};
use crate::data::tax_rates::{TaxRate, TaxRates};
use crate::platforms::connector::{Connector, ConnectorError, Fetched, Syncs};
use crate::platforms::kit::http::{Auth, Call};
use crate::platforms::kit::paging::PageNumber;
use crate::platforms::kit::records::{Read, Unreadable};

/// The accounts cursor of the bank accounts' page N: `bank-accounts N`
/// (the categories come first, without a cursor).
const BANK_ACCOUNTS_CURSOR: &str = "bank-accounts";

/// What a list call adds to `page`, `per_page` and `updated_since`.
type Shape = fn(Call<'_>) -> Call<'_>;

impl FreeAgentConnector {
    /// Page `page` of `path` (what changed since `since`, when given),
    /// shaped by `shape`, with the cursor of the next page.
    async fn paged<T: DeserializeOwned>(
        &self,
        credentials: &FreeAgentAuthorization,
        (path, what): (&str, &'static str),
        (page, since): (PageNumber, Option<DateTime<Utc>>),
        shape: impl FnOnce(Call<'_>) -> Call<'_>,
    ) -> Result<(T, Option<String>), ConnectorError> {
        let call = shape(self.list(credentials, path, what, page, since));
        let (body, headers): (T, _) = self.http.json_with_headers(&call).await?;
        Ok((body, next_page(page, &headers)))
    }

    /// Every page of `path`, whole.
    async fn every_page<T: DeserializeOwned>(
        &self,
        credentials: &FreeAgentAuthorization,
        (path, what): (&str, &'static str),
    ) -> Result<Vec<T>, ConnectorError> {
        let mut pages = Vec::new();
        let mut page = PageNumber(1);
        loop {
            let (body, next): (T, _) = self
                .paged(credentials, (path, what), (page, None), |call| call)
                .await?;
            pages.push(body);
            match next {
                Some(next) => page = PageNumber::from_cursor(Self::PLATFORM, Some(next))?,
                None => return Ok(pages),
            }
        }
    }

    /// One object of the API, not paged (`GET /v2/{path}`).
    async fn single<T: DeserializeOwned>(
        &self,
        credentials: &FreeAgentAuthorization,
        (path, what): (&str, &'static str),
        shape: Shape,
    ) -> Result<T, ConnectorError> {
        let call = Call::get(
            Self::PLATFORM,
            what,
            self.url(credentials, path),
            Auth::bearer(&credentials.tokens),
        );
        self.http.json(&shape(call)).await
    }

    /// The chart: on the first page the categories (top-level and sub
    /// accounts, each once), then the bank accounts page by page.
    async fn accounts(
        &self,
        credentials: &FreeAgentAuthorization,
        cursor: Option<String>,
    ) -> Result<Fetched<Account>, ConnectorError> {
        let Some(cursor) = cursor else {
            let top: CategoriesAnswer = self
                .single(credentials, ("categories", "the categories"), |call| call)
                .await?;
            let subs: CategoriesAnswer = self
                .single(
                    credentials,
                    ("categories", "the categories with sub accounts"),
                    |call| call.query("sub_accounts", "true"),
                )
                .await?;
            let mut read = Read::default();
            let mut seen = HashSet::new();
            for (group, categories) in top.groups().into_iter().chain(subs.groups()) {
                let page = categories.read(|category| category.into_record(group));
                read.issues.extend(page.issues);
                read.records.extend(
                    page.records
                        .into_iter()
                        .filter(|account| seen.insert(account.account_id.clone())),
                );
            }
            return Ok(Fetched::read(
                read,
                Some(format!("{BANK_ACCOUNTS_CURSOR} 1")),
            ));
        };
        let page = cursor
            .strip_prefix(BANK_ACCOUNTS_CURSOR)
            .map(|page| PageNumber::from_cursor(Self::PLATFORM, Some(page.trim().to_owned())))
            .ok_or_else(|| {
                ConnectorError::Failed(format!("invalid FreeAgent cursor {cursor:?}"))
            })??;
        let (body, next): (BankAccountsPage, _) = self
            .paged(
                credentials,
                ("bank_accounts", "a page of bank accounts"),
                (page, None),
                |call| call,
            )
            .await?;
        let read = body
            .bank_accounts
            .read(|account| account.into_record().map(Some));
        Ok(Fetched::read(
            read,
            next.map(|next| format!("{BANK_ACCOUNTS_CURSOR} {next}")),
        ))
    }

    /// A page of the contacts FreeAgent lists as suppliers.
    async fn suppliers(
        &self,
        credentials: &FreeAgentAuthorization,
        since: Option<DateTime<Utc>>,
        cursor: Option<String>,
    ) -> Result<Fetched<Supplier>, ConnectorError> {
        let page = PageNumber::from_cursor(Self::PLATFORM, cursor)?;
        let (body, next): (ContactsPage, _) = self
            .paged(
                credentials,
                ("contacts", "a page of suppliers"),
                (page, since),
                |call| call.query("view", "suppliers"),
            )
            .await?;
        Ok(Fetched::read(
            body.contacts.read(|contact| Ok(contact.into_supplier())),
            next,
        ))
    }

    /// A page of bills with their items.
    async fn bills(
        &self,
        credentials: &FreeAgentAuthorization,
        since: Option<DateTime<Utc>>,
        cursor: Option<String>,
    ) -> Result<Fetched<Bill>, ConnectorError> {
        let page = PageNumber::from_cursor(Self::PLATFORM, cursor)?;
        let (body, next): (BillsPage, _) = self
            .paged(
                credentials,
                ("bills", "a page of bills"),
                (page, since),
                |call| call.query("view", "all").query("nested_bill_items", "true"),
            )
            .await?;
        Ok(Fetched::read(
            body.bills.read(|bill| bill.into_record().map(Some)),
            next,
        ))
    }

    /// A page of credit notes with their items, and the company's credit
    /// note reconciliations read whole for a page with an issued one.
    async fn credit_notes(
        &self,
        credentials: &FreeAgentAuthorization,
        since: Option<DateTime<Utc>>,
        cursor: Option<String>,
    ) -> Result<Fetched<CreditNote>, ConnectorError> {
        let page = PageNumber::from_cursor(Self::PLATFORM, cursor)?;
        let (body, next): (CreditNotesPage, _) = self
            .paged(
                credentials,
                ("credit_notes", "a page of credit notes"),
                (page, since),
                |call| {
                    call.query("view", "all")
                        .query("nested_credit_note_items", "true")
                },
            )
            .await?;
        let reconciliations = if body.credit_notes.any(FreeAgentCreditNote::is_issued) {
            let pages: Vec<ReconciliationsPage> = self
                .every_page(
                    credentials,
                    (
                        "credit_note_reconciliations",
                        "a page of credit note reconciliations",
                    ),
                )
                .await?;
            let all = pages
                .into_iter()
                .flat_map(|page| {
                    page.credit_note_reconciliations
                        .read(|reconciliation| Ok(Some(reconciliation)))
                        .records
                })
                .collect();
            Reconciliations::of_all(all)
        } else {
            Reconciliations::default()
        };
        let read = body
            .credit_notes
            .read(|note| note.into_record(&reconciliations).map(Some));
        Ok(Fetched::read(read, next))
    }

    /// A page of price list items, whole each sync (FreeAgent documents no
    /// `updated_since` for them).
    async fn items(
        &self,
        credentials: &FreeAgentAuthorization,
        cursor: Option<String>,
    ) -> Result<Fetched<Item>, ConnectorError> {
        let page = PageNumber::from_cursor(Self::PLATFORM, cursor)?;
        let (body, next): (PriceListPage, _) = self
            .paged(
                credentials,
                ("price_list_items", "a page of price list items"),
                (page, None),
                |call| call,
            )
            .await?;
        Ok(Fetched::read(
            body.price_list_items
                .read(|item| item.into_record().map(Some)),
            next,
        ))
    }

    /// The company's tax rates: the percentages `GET /v2/company` lists.
    async fn tax_rates(
        &self,
        credentials: &FreeAgentAuthorization,
    ) -> Result<Fetched<TaxRate>, ConnectorError> {
        let answer: CompanyDetailsAnswer = self
            .single(credentials, ("company", "the company"), |call| call)
            .await?;
        Ok(Fetched::all(answer.company.tax_rates(), None))
    }

    /// The company itself.
    async fn company(
        &self,
        credentials: &FreeAgentAuthorization,
    ) -> Result<Fetched<CompanyInfo>, ConnectorError> {
        let answer: CompanyDetailsAnswer = self
            .single(credentials, ("company", "the company"), |call| call)
            .await?;
        let company = answer.company.into_record().map_err(|problem| {
            ConnectorError::Failed(format!("FreeAgent's company cannot be read: {problem}"))
        })?;
        Ok(Fetched::all(vec![company], None))
    }

    /// Where a walk over the bank accounts' explanations stands; on the
    /// first page, its start with the bank accounts read.
    async fn bank_walk(
        &self,
        credentials: &FreeAgentAuthorization,
        cursor: Option<String>,
    ) -> Result<BankWalk, ConnectorError> {
        if let Some(cursor) = cursor {
            return BankWalk::parse(&cursor);
        }
        let pages: Vec<BankAccountsPage> = self
            .every_page(credentials, ("bank_accounts", "a page of bank accounts"))
            .await?;
        let banks = pages
            .into_iter()
            .flat_map(|page| {
                page.bank_accounts
                    .read(|account| Ok(Some(Bank::of(&account))))
                    .records
            })
            .collect();
        Ok(BankWalk::start(banks))
    }

    /// A page of one bank account's explanations (changed since `since`,
    /// when given), each made ours by `into` with the bank account.
    async fn explained<R>(
        &self,
        credentials: &FreeAgentAuthorization,
        (since, cursor): (Option<DateTime<Utc>>, Option<String>),
        into: impl Fn(Explanation, &Bank) -> Result<Option<R>, Unreadable>,
    ) -> Result<Fetched<R>, ConnectorError> {
        let walk = self.bank_walk(credentials, cursor).await?;
        let Some(bank) = walk.bank().cloned() else {
            return Ok(Fetched::all(Vec::new(), None));
        };
        let page = PageNumber(walk.page);
        let what = (
            "bank_transaction_explanations",
            "a page of bank transaction explanations",
        );
        let (body, next): (ExplanationsPage, _) = self
            .paged(credentials, what, (page, since), |call| {
                call.query("bank_account", &bank.url)
            })
            .await?;
        let next = next.and_then(|next| next.parse().ok());
        let read = body
            .bank_transaction_explanations
            .read(|explanation| into(explanation, &bank));
        Ok(Fetched::read(read, walk.after(next)))
    }

    /// A page of payments: explanations of invoices paid or credit notes
    /// refunded.
    async fn payments(
        &self,
        credentials: &FreeAgentAuthorization,
        since: Option<DateTime<Utc>>,
        cursor: Option<String>,
    ) -> Result<Fetched<Payment>, ConnectorError> {
        self.explained(credentials, (since, cursor), |explanation, bank| {
            explanation.into_payment(bank)
        })
        .await
    }

    /// A page of bill payments: explanations of bills paid or refunded.
    async fn bill_payments(
        &self,
        credentials: &FreeAgentAuthorization,
        since: Option<DateTime<Utc>>,
        cursor: Option<String>,
    ) -> Result<Fetched<BillPayment>, ConnectorError> {
        self.explained(credentials, (since, cursor), |explanation, bank| {
            explanation.into_bill_payment(bank)
        })
        .await
    }
}

// Each data type FreeAgent filters by `updated_since`: a full page and a
// changed page from the same function, with the invoices' [`CHANGES`].
changed_syncs!(FreeAgentConnector, CHANGES; Suppliers => suppliers, Bills => bills, CreditNotes => credit_notes, Payments => payments, BillPayments => bill_payments);

/// The chart is fetched whole every sync: categories have no
/// `updated_since`, and a bank account's balance moves without one.
impl Syncs<Accounts> for FreeAgentConnector {
    async fn page(
        &self,
        credentials: &FreeAgentAuthorization,
        cursor: Option<String>,
    ) -> Result<Fetched<Account>, ConnectorError> {
        self.accounts(credentials, cursor).await
    }
}

/// Price list items are fetched whole every sync.
impl Syncs<Items> for FreeAgentConnector {
    async fn page(
        &self,
        credentials: &FreeAgentAuthorization,
        cursor: Option<String>,
    ) -> Result<Fetched<Item>, ConnectorError> {
        self.items(credentials, cursor).await
    }
}

/// The tax rates are one call, whole every time.
impl Syncs<TaxRates> for FreeAgentConnector {
    async fn page(
        &self,
        credentials: &FreeAgentAuthorization,
        _cursor: Option<String>,
    ) -> Result<Fetched<TaxRate>, ConnectorError> {
        self.tax_rates(credentials).await
    }
}

/// The company is one call, whole every time.
impl Syncs<CompanyInfos> for FreeAgentConnector {
    async fn page(
        &self,
        credentials: &FreeAgentAuthorization,
        _cursor: Option<String>,
    ) -> Result<Fetched<CompanyInfo>, ConnectorError> {
        self.company(credentials).await
    }
}
