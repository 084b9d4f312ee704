//! What Xero's connector fetches per data type: each `Syncs` a page at a
//! time, whole or changed since a time (`If-Modified-Since`).

use super::*;

impl Syncs<Invoices> for XeroConnector {
    const CHANGES: Option<Changes> = CHANGES;

    async fn page(
        &self,
        credentials: &XeroAuthorization,
        cursor: Option<String>,
    ) -> Result<Fetched<Invoice>, ConnectorError> {
        self.invoices(credentials, None, cursor).await
    }

    async fn changed_page(
        &self,
        credentials: &XeroAuthorization,
        since: Since,
        cursor: Option<String>,
    ) -> Result<Fetched<Invoice>, ConnectorError> {
        self.invoices(credentials, Some(since.time), cursor).await
    }
}

impl Syncs<Customers> for XeroConnector {
    const CHANGES: Option<Changes> = CHANGES;

    async fn page(
        &self,
        credentials: &XeroAuthorization,
        cursor: Option<String>,
    ) -> Result<Fetched<Customer>, ConnectorError> {
        self.contacts(credentials, None, cursor).await
    }

    async fn changed_page(
        &self,
        credentials: &XeroAuthorization,
        since: Since,
        cursor: Option<String>,
    ) -> Result<Fetched<Customer>, ConnectorError> {
        self.contacts(credentials, Some(since.time), cursor).await
    }
}

/// The chart is one call whichever way it is asked for, so it is fetched
/// whole every time (no incremental fetch), which also finds deletions.
impl Syncs<Accounts> for XeroConnector {
    async fn page(
        &self,
        credentials: &XeroAuthorization,
        _cursor: Option<String>,
    ) -> Result<Fetched<Account>, ConnectorError> {
        self.accounts(credentials).await
    }
}

impl Syncs<Suppliers> for XeroConnector {
    const CHANGES: Option<Changes> = CHANGES;

    async fn page(
        &self,
        credentials: &XeroAuthorization,
        cursor: Option<String>,
    ) -> Result<Fetched<Supplier>, ConnectorError> {
        self.suppliers(credentials, None, cursor).await
    }

    async fn changed_page(
        &self,
        credentials: &XeroAuthorization,
        since: Since,
        cursor: Option<String>,
    ) -> Result<Fetched<Supplier>, ConnectorError> {
        self.suppliers(credentials, Some(since.time), cursor).await
    }
}

/// Tax rates are one call, fetched whole every time (which finds deletions).
impl Syncs<TaxRates> for XeroConnector {
    async fn page(
        &self,
        credentials: &XeroAuthorization,
        _cursor: Option<String>,
    ) -> Result<Fetched<TaxRate>, ConnectorError> {
        self.tax_rates(credentials).await
    }
}

impl Syncs<Bills> for XeroConnector {
    const CHANGES: Option<Changes> = CHANGES;

    async fn page(
        &self,
        credentials: &XeroAuthorization,
        cursor: Option<String>,
    ) -> Result<Fetched<Bill>, ConnectorError> {
        self.bills(credentials, None, cursor).await
    }

    async fn changed_page(
        &self,
        credentials: &XeroAuthorization,
        since: Since,
        cursor: Option<String>,
    ) -> Result<Fetched<Bill>, ConnectorError> {
        self.bills(credentials, Some(since.time), cursor).await
    }
}

/// A payment Xero deletes keeps its id with status `DELETED` in what
/// changed, so it is flagged at once; the daily full fetch still reconciles.
impl Syncs<Payments> for XeroConnector {
    const CHANGES: Option<Changes> = CHANGES;

    async fn page(
        &self,
        credentials: &XeroAuthorization,
        cursor: Option<String>,
    ) -> Result<Fetched<Payment>, ConnectorError> {
        self.payments_of(
            credentials,
            None,
            cursor,
            "a page of payments",
            XeroPayment::into_payment,
        )
        .await
    }

    async fn changed_page(
        &self,
        credentials: &XeroAuthorization,
        since: Since,
        cursor: Option<String>,
    ) -> Result<Fetched<Payment>, ConnectorError> {
        let since = Some(since.time);
        self.payments_of(
            credentials,
            since,
            cursor,
            "a page of payments",
            XeroPayment::into_payment,
        )
        .await
    }
}

/// Bill payments are the payable kinds of the same list as payments: a
/// deleted one is flagged at once, the daily full fetch still reconciles.
impl Syncs<BillPayments> for XeroConnector {
    const CHANGES: Option<Changes> = CHANGES;

    async fn page(
        &self,
        credentials: &XeroAuthorization,
        cursor: Option<String>,
    ) -> Result<Fetched<BillPayment>, ConnectorError> {
        let read = XeroPayment::into_bill_payment;
        self.payments_of(credentials, None, cursor, "a page of bill payments", read)
            .await
    }

    async fn changed_page(
        &self,
        credentials: &XeroAuthorization,
        since: Since,
        cursor: Option<String>,
    ) -> Result<Fetched<BillPayment>, ConnectorError> {
        let read = XeroPayment::into_bill_payment;
        let since = Some(since.time);
        self.payments_of(credentials, since, cursor, "a page of bill payments", read)
            .await
    }
}

impl Syncs<CreditNotes> for XeroConnector {
    const CHANGES: Option<Changes> = CHANGES;

    async fn page(
        &self,
        credentials: &XeroAuthorization,
        cursor: Option<String>,
    ) -> Result<Fetched<CreditNote>, ConnectorError> {
        self.credit_notes(credentials, None, cursor).await
    }

    async fn changed_page(
        &self,
        credentials: &XeroAuthorization,
        since: Since,
        cursor: Option<String>,
    ) -> Result<Fetched<CreditNote>, ConnectorError> {
        self.credit_notes(credentials, Some(since.time), cursor)
            .await
    }
}

/// Items are one call (with the chart's), fetched whole every time, which
/// finds deletions.
impl Syncs<Items> for XeroConnector {
    async fn page(
        &self,
        credentials: &XeroAuthorization,
        _cursor: Option<String>,
    ) -> Result<Fetched<Item>, ConnectorError> {
        self.items(credentials).await
    }
}

/// The organisation is one call, whole every time.
impl Syncs<CompanyInfos> for XeroConnector {
    async fn page(
        &self,
        credentials: &XeroAuthorization,
        _cursor: Option<String>,
    ) -> Result<Fetched<CompanyInfo>, ConnectorError> {
        self.organisation(credentials).await
    }
}

/// Journals are only ever added (a void or a change posts a new, reversing
/// journal), numbered in order: what changed is what was posted after the
/// highest number the last sync read, which it kept as its resume point.
impl Syncs<JournalEntries> for XeroConnector {
    const CHANGES: Option<Changes> = Some(Changes::with(Deletions::InChanges));

    async fn page(
        &self,
        credentials: &XeroAuthorization,
        cursor: Option<String>,
    ) -> Result<Fetched<JournalEntry>, ConnectorError> {
        let offset = Self::journal_offset(cursor, None)?;
        self.journals(credentials, offset).await
    }

    async fn changed_page(
        &self,
        credentials: &XeroAuthorization,
        since: Since,
        cursor: Option<String>,
    ) -> Result<Fetched<JournalEntry>, ConnectorError> {
        let offset = Self::journal_offset(cursor, since.cursor)?;
        self.journals(credentials, offset).await
    }
}
