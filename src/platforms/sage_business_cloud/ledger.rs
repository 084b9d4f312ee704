//! Sage's ledger beyond sales: ledger accounts, suppliers (vendor
//! contacts), tax rates, purchase invoices, sales credit notes, contact
//! payments (split into payments and bill payments), products and
//! services and the business itself (the general ledger in
//! [`super::general_ledger`]). Every list is paged
//! and asked for by `updated_or_created_since` after a first sync, as
//! invoices are, and, where Sage lists deletions (`deleted_since`: all but
//! ledger accounts and tax rates), what was deleted. Sources: `NOTES.md`,
//! "Accounting model" and "Incremental fetch".

use crate::platforms::connector::changed_syncs;
use chrono::{DateTime, Utc};

use super::SageBusinessCloudAuthorization;
use super::chart::{
    Catalog, SageBusinessProfile, SageCatalogItem, SageFinancialSettings, SageLedgerAccount,
    SageTaxRate,
};
use super::connector::{
    CHANGES, CHANGES_WITHOUT_DELETIONS, CONTACTS, DeletedList, SageBusinessCloudConnector,
    then_deleted,
};
use super::documents::{SageCreditNote, SagePurchaseInvoice};
use super::mapping::SageContact;
use super::settlements::{BankLedgers, SageBankAccount, SageContactPayment, Side};
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

impl SageBusinessCloudConnector {
    /// A page of ledger accounts.
    async fn ledger_accounts(
        &self,
        credentials: &SageBusinessCloudAuthorization,
        since: Option<DateTime<Utc>>,
        cursor: Option<String>,
    ) -> Result<Fetched<Account>, ConnectorError> {
        let page = PageNumber::from_cursor(Self::PLATFORM, cursor)?;
        let call = self.list(
            credentials,
            "ledger_accounts",
            "a page of ledger accounts",
            page,
            since,
        );
        let (accounts, next, total) = self.fetch::<SageLedgerAccount>(&call, page).await?;
        Ok(Fetched::read(
            accounts.read(|account| Ok(Some(account.into_record()))),
            next,
        )
        .of_total(total))
    }

    /// A page of vendor contacts.
    async fn vendors(
        &self,
        credentials: &SageBusinessCloudAuthorization,
        since: Option<DateTime<Utc>>,
        cursor: Option<String>,
    ) -> Result<Fetched<Supplier>, ConnectorError> {
        if let Some(deleted) = self
            .deleted_step(credentials, &[CONTACTS], since, cursor.as_deref())
            .await?
        {
            return Ok(deleted);
        }
        let page = PageNumber::from_cursor(Self::PLATFORM, cursor)?;
        let call = self
            .list(credentials, "contacts", "a page of vendors", page, since)
            .query("contact_type_id", "VENDOR");
        let (contacts, next, _) = self.fetch::<SageContact>(&call, page).await?;
        let read =
            contacts.read(|contact| Ok(contact.is_vendor().then(|| contact.into_supplier())));
        Ok(then_deleted(Fetched::read(read, next), since))
    }

    /// A page of tax rates.
    async fn tax_rates(
        &self,
        credentials: &SageBusinessCloudAuthorization,
        since: Option<DateTime<Utc>>,
        cursor: Option<String>,
    ) -> Result<Fetched<TaxRate>, ConnectorError> {
        let page = PageNumber::from_cursor(Self::PLATFORM, cursor)?;
        let call = self.list(credentials, "tax_rates", "a page of tax rates", page, since);
        let (rates, next, _) = self.fetch::<SageTaxRate>(&call, page).await?;
        Ok(Fetched::read(
            rates.read(|rate| Ok(Some(rate.into_record()))),
            next,
        ))
    }

    /// A page of purchase invoices.
    async fn purchase_invoices(
        &self,
        credentials: &SageBusinessCloudAuthorization,
        since: Option<DateTime<Utc>>,
        cursor: Option<String>,
    ) -> Result<Fetched<Bill>, ConnectorError> {
        if let Some(deleted) = self
            .deleted_step(credentials, &[PURCHASE_INVOICES], since, cursor.as_deref())
            .await?
        {
            return Ok(deleted);
        }
        let page = PageNumber::from_cursor(Self::PLATFORM, cursor)?;
        let call = self.list(
            credentials,
            "purchase_invoices",
            "a page of purchase invoices",
            page,
            since,
        );
        let (bills, next, total) = self.fetch::<SagePurchaseInvoice>(&call, page).await?;
        let fetched =
            Fetched::read(bills.read(|bill| bill.into_record().map(Some)), next).of_total(total);
        Ok(then_deleted(fetched, since))
    }

    /// A page of sales credit notes.
    async fn credit_notes(
        &self,
        credentials: &SageBusinessCloudAuthorization,
        since: Option<DateTime<Utc>>,
        cursor: Option<String>,
    ) -> Result<Fetched<CreditNote>, ConnectorError> {
        if let Some(deleted) = self
            .deleted_step(credentials, &[SALES_CREDIT_NOTES], since, cursor.as_deref())
            .await?
        {
            return Ok(deleted);
        }
        let page = PageNumber::from_cursor(Self::PLATFORM, cursor)?;
        let call = self.list(
            credentials,
            "sales_credit_notes",
            "a page of sales credit notes",
            page,
            since,
        );
        let (notes, next, total) = self.fetch::<SageCreditNote>(&call, page).await?;
        let fetched =
            Fetched::read(notes.read(|note| note.into_record().map(Some)), next).of_total(total);
        Ok(then_deleted(fetched, since))
    }

    /// A page of contact payments, those on `side` made ours by `into`
    /// with the business's bank accounts (read once for the page).
    async fn contact_payments<R>(
        &self,
        credentials: &SageBusinessCloudAuthorization,
        (side, since, cursor): (Side, Option<DateTime<Utc>>, Option<String>),
        into: impl Fn(
            SageContactPayment,
            &BankLedgers,
            bool,
        ) -> Result<R, crate::platforms::kit::records::Unreadable>,
    ) -> Result<Fetched<R>, ConnectorError> {
        if let Some(deleted) = self
            .deleted_step(credentials, &[CONTACT_PAYMENTS], since, cursor.as_deref())
            .await?
        {
            return Ok(deleted);
        }
        let page = PageNumber::from_cursor(Self::PLATFORM, cursor)?;
        let call = self.list(
            credentials,
            "contact_payments",
            "a page of contact payments",
            page,
            since,
        );
        let (payments, next, _) = self.fetch::<SageContactPayment>(&call, page).await?;
        let banks = if payments.any(|payment| payment.side().is_some_and(|(on, _)| on == side)) {
            let call = self.list(
                credentials,
                "bank_accounts",
                "the bank accounts",
                PageNumber(1),
                None,
            );
            let (accounts, _, _) = self.fetch::<SageBankAccount>(&call, PageNumber(1)).await?;
            let read = accounts.read(|account| Ok(Some(account)));
            BankLedgers::of(read.records)
        } else {
            BankLedgers::default()
        };
        let read = payments.read(|payment| match payment.side() {
            Some((on, refund)) if on == side => into(payment, &banks, refund).map(Some),
            _ => Ok(None),
        });
        Ok(then_deleted(Fetched::read(read, next), since))
    }

    /// A page of products, then of services: the cursor names the list
    /// (`products:N`, `services:N`).
    async fn catalog(
        &self,
        credentials: &SageBusinessCloudAuthorization,
        since: Option<DateTime<Utc>>,
        cursor: Option<String>,
    ) -> Result<Fetched<Item>, ConnectorError> {
        if let Some(deleted) = self
            .deleted_step(credentials, &[PRODUCTS, SERVICES], since, cursor.as_deref())
            .await?
        {
            return Ok(deleted);
        }
        let (catalog, page) = match cursor.as_deref().and_then(|cursor| cursor.split_once(':')) {
            Some(("services", page)) => (Catalog::Services, Some(page.to_owned())),
            Some(("products", page)) => (Catalog::Products, Some(page.to_owned())),
            Some(_) => {
                return Err(ConnectorError::Failed(
                    "the items cursor names neither products nor services".to_owned(),
                ));
            }
            None => (Catalog::Products, None),
        };
        let page = PageNumber::from_cursor(Self::PLATFORM, page)?;
        let (path, what) = match catalog {
            Catalog::Products => ("products", "a page of products"),
            Catalog::Services => ("services", "a page of services"),
        };
        let call = self.list(credentials, path, what, page, since);
        let (items, next, _) = self.fetch::<SageCatalogItem>(&call, page).await?;
        let read = items.read(|item| Ok(item.into_record(catalog)));
        let next = match (next, catalog) {
            (Some(next), _) => Some(format!("{path}:{next}")),
            (None, Catalog::Products) => Some("services:1".to_owned()),
            (None, Catalog::Services) => None,
        };
        Ok(then_deleted(Fetched::read(read, next), since))
    }

    /// The business: its financial settings and its profile.
    async fn business(
        &self,
        credentials: &SageBusinessCloudAuthorization,
    ) -> Result<Fetched<CompanyInfo>, ConnectorError> {
        let settings = self.financial_settings(credentials).await?;
        let url = format!("{}/businesses/{}", self.api_base, credentials.business_id);
        let call = Call::get(
            Self::PLATFORM,
            "the business",
            url,
            Auth::bearer(&credentials.tokens),
        );
        let profile: SageBusinessProfile = self.http.json(&call).await?;
        Ok(Fetched::all(vec![profile.into_record(settings)], None))
    }
}

impl SageBusinessCloudConnector {
    /// The business's financial settings (`GET /financial_settings`).
    pub(super) async fn financial_settings(
        &self,
        credentials: &SageBusinessCloudAuthorization,
    ) -> Result<SageFinancialSettings, ConnectorError> {
        let url = format!("{}/financial_settings", self.api_base);
        let call = Call::get(
            Self::PLATFORM,
            "the financial settings",
            url,
            Auth::bearer(&credentials.tokens),
        )
        .header("X-Business", &credentials.business_id);
        self.http.json(&call).await
    }
}

// Each data type's `Syncs`, a full page and a changed page from the same
// function: with the invoices' [`CHANGES`] where Sage lists deletions
// (`deleted_since`), else [`CHANGES_WITHOUT_DELETIONS`].
changed_syncs!(SageBusinessCloudConnector, CHANGES; Suppliers => vendors, Bills => purchase_invoices, CreditNotes => credit_notes, Items => catalog, Payments => customer_payments, BillPayments => vendor_payments);
changed_syncs!(SageBusinessCloudConnector, CHANGES_WITHOUT_DELETIONS; Accounts => ledger_accounts, TaxRates => tax_rates);

/// Purchase invoices' deletions.
const PURCHASE_INVOICES: DeletedList = DeletedList {
    path: "purchase_invoices",
    what: "a page of deleted purchase invoices",
};

/// Sales credit notes' deletions.
const SALES_CREDIT_NOTES: DeletedList = DeletedList {
    path: "sales_credit_notes",
    what: "a page of deleted sales credit notes",
};

/// Contact payments' deletions, on both sides: an id of the other side is
/// in no previous copy of the data type, so flags nothing.
const CONTACT_PAYMENTS: DeletedList = DeletedList {
    path: "contact_payments",
    what: "a page of deleted contact payments",
};

/// Products' deletions.
const PRODUCTS: DeletedList = DeletedList {
    path: "products",
    what: "a page of deleted products",
};

/// Services' deletions.
const SERVICES: DeletedList = DeletedList {
    path: "services",
    what: "a page of deleted services",
};

impl SageBusinessCloudConnector {
    async fn customer_payments(
        &self,
        credentials: &SageBusinessCloudAuthorization,
        since: Option<DateTime<Utc>>,
        cursor: Option<String>,
    ) -> Result<Fetched<Payment>, ConnectorError> {
        self.contact_payments(
            credentials,
            (Side::Customer, since, cursor),
            SageContactPayment::into_payment,
        )
        .await
    }

    async fn vendor_payments(
        &self,
        credentials: &SageBusinessCloudAuthorization,
        since: Option<DateTime<Utc>>,
        cursor: Option<String>,
    ) -> Result<Fetched<BillPayment>, ConnectorError> {
        self.contact_payments(
            credentials,
            (Side::Vendor, since, cursor),
            SageContactPayment::into_bill_payment,
        )
        .await
    }
}

/// The business is two calls, whole every time.
impl Syncs<CompanyInfos> for SageBusinessCloudConnector {
    async fn page(
        &self,
        credentials: &SageBusinessCloudAuthorization,
        _cursor: Option<String>,
    ) -> Result<Fetched<CompanyInfo>, ConnectorError> {
        self.business(credentials).await
    }
}
