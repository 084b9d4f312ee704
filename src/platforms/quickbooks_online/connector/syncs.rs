//! What QuickBooks Online's connector fetches per data type: each `Syncs`
//! a page at a time, whole or changed since a time, through the
//! connector's query endpoint (or, for journal entries, its JournalReport).

use super::*;

impl Syncs<Invoices> for QuickBooksConnector {
    const CHANGES: Option<Changes> = CHANGES;

    async fn page(
        &self,
        credentials: &QuickBooksOnlineAuthorization,
        cursor: Option<String>,
    ) -> Result<Fetched<Invoice>, ConnectorError> {
        self.invoices(credentials, None, cursor).await
    }

    async fn changed_page(
        &self,
        credentials: &QuickBooksOnlineAuthorization,
        since: Since,
        cursor: Option<String>,
    ) -> Result<Fetched<Invoice>, ConnectorError> {
        self.invoices(credentials, Some(since.time), cursor).await
    }
}

impl Syncs<Customers> for QuickBooksConnector {
    const CHANGES: Option<Changes> = CHANGES;

    async fn page(
        &self,
        credentials: &QuickBooksOnlineAuthorization,
        cursor: Option<String>,
    ) -> Result<Fetched<Customer>, ConnectorError> {
        self.customers(credentials, None, cursor).await
    }

    async fn changed_page(
        &self,
        credentials: &QuickBooksOnlineAuthorization,
        since: Since,
        cursor: Option<String>,
    ) -> Result<Fetched<Customer>, ConnectorError> {
        self.customers(credentials, Some(since.time), cursor).await
    }
}

impl Syncs<Suppliers> for QuickBooksConnector {
    const CHANGES: Option<Changes> = CHANGES;

    async fn page(
        &self,
        credentials: &QuickBooksOnlineAuthorization,
        cursor: Option<String>,
    ) -> Result<Fetched<Supplier>, ConnectorError> {
        self.suppliers(credentials, None, cursor).await
    }

    async fn changed_page(
        &self,
        credentials: &QuickBooksOnlineAuthorization,
        since: Since,
        cursor: Option<String>,
    ) -> Result<Fetched<Supplier>, ConnectorError> {
        self.suppliers(credentials, Some(since.time), cursor).await
    }
}

impl Syncs<Bills> for QuickBooksConnector {
    const CHANGES: Option<Changes> = CHANGES;

    async fn page(
        &self,
        credentials: &QuickBooksOnlineAuthorization,
        cursor: Option<String>,
    ) -> Result<Fetched<Bill>, ConnectorError> {
        self.bills(credentials, None, cursor).await
    }

    async fn changed_page(
        &self,
        credentials: &QuickBooksOnlineAuthorization,
        since: Since,
        cursor: Option<String>,
    ) -> Result<Fetched<Bill>, ConnectorError> {
        self.bills(credentials, Some(since.time), cursor).await
    }
}

impl Syncs<Payments> for QuickBooksConnector {
    const CHANGES: Option<Changes> = CHANGES;

    async fn page(
        &self,
        credentials: &QuickBooksOnlineAuthorization,
        cursor: Option<String>,
    ) -> Result<Fetched<Payment>, ConnectorError> {
        self.payments(credentials, None, cursor).await
    }

    async fn changed_page(
        &self,
        credentials: &QuickBooksOnlineAuthorization,
        since: Since,
        cursor: Option<String>,
    ) -> Result<Fetched<Payment>, ConnectorError> {
        self.payments(credentials, Some(since.time), cursor).await
    }
}

impl Syncs<BillPayments> for QuickBooksConnector {
    const CHANGES: Option<Changes> = CHANGES;

    async fn page(
        &self,
        credentials: &QuickBooksOnlineAuthorization,
        cursor: Option<String>,
    ) -> Result<Fetched<BillPayment>, ConnectorError> {
        self.bill_payments(credentials, None, cursor).await
    }

    async fn changed_page(
        &self,
        credentials: &QuickBooksOnlineAuthorization,
        since: Since,
        cursor: Option<String>,
    ) -> Result<Fetched<BillPayment>, ConnectorError> {
        self.bill_payments(credentials, Some(since.time), cursor)
            .await
    }
}

impl Syncs<CreditNotes> for QuickBooksConnector {
    const CHANGES: Option<Changes> = CHANGES;

    async fn page(
        &self,
        credentials: &QuickBooksOnlineAuthorization,
        cursor: Option<String>,
    ) -> Result<Fetched<CreditNote>, ConnectorError> {
        self.credit_notes(credentials, None, cursor).await
    }

    async fn changed_page(
        &self,
        credentials: &QuickBooksOnlineAuthorization,
        since: Since,
        cursor: Option<String>,
    ) -> Result<Fetched<CreditNote>, ConnectorError> {
        self.credit_notes(credentials, Some(since.time), cursor)
            .await
    }
}

/// Items are fetched whole every time (a handful of pages at most), which
/// also finds what was made inactive.
impl Syncs<Items> for QuickBooksConnector {
    async fn page(
        &self,
        credentials: &QuickBooksOnlineAuthorization,
        cursor: Option<String>,
    ) -> Result<Fetched<Item>, ConnectorError> {
        self.items(credentials, cursor).await
    }
}

/// The company is two calls, whole every time.
impl Syncs<CompanyInfos> for QuickBooksConnector {
    async fn page(
        &self,
        credentials: &QuickBooksOnlineAuthorization,
        _cursor: Option<String>,
    ) -> Result<Fetched<CompanyInfo>, ConnectorError> {
        self.company_info(credentials).await
    }
}

/// The general ledger is the `JournalReport`, read whole every time: a
/// report has no modified-since filter (NOTES.md, "8j"), so a transaction
/// QuickBooks deleted is found by its absence.
impl Syncs<JournalEntries> for QuickBooksConnector {
    async fn page(
        &self,
        credentials: &QuickBooksOnlineAuthorization,
        cursor: Option<String>,
    ) -> Result<Fetched<JournalEntry>, ConnectorError> {
        self.journal_entries(credentials, cursor).await
    }
}

/// Tax rates are few (one page): fetched whole every time.
impl Syncs<TaxRates> for QuickBooksConnector {
    async fn page(
        &self,
        credentials: &QuickBooksOnlineAuthorization,
        cursor: Option<String>,
    ) -> Result<Fetched<TaxRate>, ConnectorError> {
        self.tax_rates(credentials, cursor).await
    }
}

/// A chart of accounts is small (one page at 1,000 a page): fetched whole
/// every time, which also finds what was made inactive.
impl Syncs<Accounts> for QuickBooksConnector {
    async fn page(
        &self,
        credentials: &QuickBooksOnlineAuthorization,
        cursor: Option<String>,
    ) -> Result<Fetched<Account>, ConnectorError> {
        self.accounts(credentials, cursor).await
    }
}
