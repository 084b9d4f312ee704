//! The SuiteQL NetSuite's ledger is read with: each list's columns, tables,
//! id column, kept rows and change column (a [`Listing`]), and the queries a
//! page completes with its ids. Columns follow `NOTES.md`, "Accounting
//! model", whose sources name them.

use serde::Deserialize;

use super::chart::NsSubsidiary;
use crate::platforms::kit::records::Keyed;

/// A SuiteQL list paged in id windows: its columns and tables, its id
/// column, the rows it keeps and the column of their last change.
pub(super) struct Listing {
    pub(super) what: &'static str,
    pub(super) select: &'static str,
    pub(super) id: &'static str,
    pub(super) only: Option<&'static str>,
    pub(super) modified: &'static str,
}

/// `TO_CHAR` of a date-time column as the mappings read it.
macro_rules! local_time {
    ($column:literal, $name:literal) => {
        concat!(
            "TO_CHAR(",
            $column,
            ", 'YYYY-MM-DD\"T\"HH24:MI:SS') AS ",
            $name
        )
    };
}

/// The invoice query's columns: amounts in the invoice's currency, dates as
/// `YYYY-MM-DD`, the last change as a local date-time.
pub(super) const INVOICES_QUERY: &str = "SELECT t.id, t.tranid, t.entity, BUILTIN.DF(t.entity) AS entityname, \
     TO_CHAR(t.trandate, 'YYYY-MM-DD') AS trandate, TO_CHAR(t.duedate, 'YYYY-MM-DD') AS duedate, \
     cur.symbol AS currency, t.foreigntotal, t.foreignamountunpaid, t.status, \
     BUILTIN.DF(t.status) AS statusname, t.memo, \
     TO_CHAR(t.lastmodifieddate, 'YYYY-MM-DD\"T\"HH24:MI:SS') AS lastmodifieddate \
     FROM transaction t LEFT JOIN currency cur ON cur.id = t.currency";

/// The line query's columns.
pub(super) const LINES_QUERY: &str = "SELECT tl.transaction, tl.linesequencenumber, tl.memo, \
     BUILTIN.DF(tl.item) AS itemname, tl.quantity, tl.rate, tl.foreignamount, tl.taxline \
     FROM transactionline tl";

/// The customer query's columns.
pub(super) const CUSTOMERS_QUERY: &str = "SELECT c.id, c.entityid, c.companyname, c.firstname, c.lastname, \
     c.isperson, c.email, c.phone, cur.symbol AS currency, c.isinactive, \
     TO_CHAR(c.lastmodifieddate, 'YYYY-MM-DD\"T\"HH24:MI:SS') AS lastmodifieddate \
     FROM customer c LEFT JOIN currency cur ON cur.id = c.currency";

/// Invoices, with their lines read by [`LINES_QUERY`].
pub(super) const INVOICES: Listing = Listing {
    what: "a page of invoices",
    select: INVOICES_QUERY,
    id: "t.id",
    only: Some("t.type = 'CustInvc'"),
    modified: "t.lastmodifieddate",
};

pub(super) const CUSTOMERS: Listing = Listing {
    what: "a page of customers",
    select: CUSTOMERS_QUERY,
    id: "c.id",
    only: None,
    modified: "c.lastmodifieddate",
};

/// The chart's posting accounts (a summary account takes no postings and
/// is a heading of the chart).
pub(super) const ACCOUNTS: Listing = Listing {
    what: "a page of accounts",
    select: concat!(
        "SELECT a.id, a.acctnumber, a.accountsearchdisplaynamecopy, a.fullname, a.accttype, ",
        "a.description, a.isinactive, cur.symbol AS currency, ",
        local_time!("a.lastmodifieddate", "lastmodifieddate"),
        " FROM account a LEFT JOIN currency cur ON cur.id = a.currency"
    ),
    id: "a.id",
    only: Some("a.issummary = 'F'"),
    modified: "a.lastmodifieddate",
};

/// Posted debits and credits per account in the primary book (completed by
/// the page's account ids and a `GROUP BY`).
pub(super) const BALANCES_QUERY: &str = "SELECT tal.account, SUM(tal.debit) AS debit, SUM(tal.credit) AS credit \
     FROM transactionaccountingline tal INNER JOIN accountingbook ab ON ab.id = tal.accountingbook \
     WHERE ab.isprimary = 'T' AND tal.posting = 'T'";

pub(super) const VENDORS: Listing = Listing {
    what: "a page of vendors",
    select: concat!(
        "SELECT v.id, v.entityid, v.companyname, v.firstname, v.lastname, v.isperson, v.email, ",
        "v.phone, cur.symbol AS currency, v.isinactive, ",
        local_time!("v.lastmodifieddate", "lastmodifieddate"),
        " FROM vendor v LEFT JOIN currency cur ON cur.id = v.currency"
    ),
    id: "v.id",
    only: None,
    modified: "v.lastmodifieddate",
};

pub(super) const TAX_CODES: Listing = Listing {
    what: "a page of tax codes",
    select: "SELECT s.id, s.itemid, s.fullname, s.description, s.rate, s.isinactive FROM salestaxitem s",
    id: "s.id",
    only: None,
    modified: "",
};

pub(super) const ITEMS: Listing = Listing {
    what: "a page of items",
    select: concat!(
        "SELECT i.id, i.itemid, i.displayname, i.itemtype, i.description, i.purchasedescription, ",
        "i.isinactive, i.baseprice, i.cost, i.incomeaccount, BUILTIN.DF(i.incomeaccount) AS incomeaccountname, ",
        "i.expenseaccount, BUILTIN.DF(i.expenseaccount) AS expenseaccountname, i.assetaccount, ",
        "BUILTIN.DF(i.assetaccount) AS assetaccountname, ",
        local_time!("i.lastmodifieddate", "lastmodifieddate"),
        " FROM item i"
    ),
    id: "i.id",
    only: None,
    modified: "i.lastmodifieddate",
};

/// A bill's or credit memo's header columns.
pub(super) const DOCUMENT_COLUMNS: &str = concat!(
    "SELECT t.id, t.tranid, t.entity, BUILTIN.DF(t.entity) AS entityname, ",
    "TO_CHAR(t.trandate, 'YYYY-MM-DD') AS trandate, TO_CHAR(t.duedate, 'YYYY-MM-DD') AS duedate, ",
    "cur.symbol AS currency, t.foreigntotal, t.foreignamountunpaid, t.foreignpaymentamountunused, ",
    "t.status, BUILTIN.DF(t.status) AS statusname, t.memo, ",
    local_time!("t.lastmodifieddate", "lastmodifieddate"),
    " FROM transaction t LEFT JOIN currency cur ON cur.id = t.currency"
);

pub(super) const BILLS: Listing = Listing {
    what: "a page of bills",
    select: DOCUMENT_COLUMNS,
    id: "t.id",
    only: Some("t.type = 'VendBill'"),
    modified: "t.lastmodifieddate",
};

pub(super) const CREDIT_MEMOS: Listing = Listing {
    what: "a page of credit memos",
    select: DOCUMENT_COLUMNS,
    id: "t.id",
    only: Some("t.type = 'CustCred'"),
    modified: "t.lastmodifieddate",
};

/// A document's lines, with the account an expense line posts to.
pub(super) const DOCUMENT_LINES_QUERY: &str = "SELECT tl.transaction, tl.linesequencenumber, tl.memo, \
     BUILTIN.DF(tl.item) AS itemname, tl.quantity, tl.rate, tl.foreignamount, tl.taxline, \
     tl.expenseaccount AS account, BUILTIN.DF(tl.expenseaccount) AS accountname FROM transactionline tl";

/// A payment's header columns, with the account it was paid into or from.
pub(super) const PAYMENT_COLUMNS: &str = concat!(
    "SELECT t.id, t.tranid, t.entity, BUILTIN.DF(t.entity) AS entityname, ",
    "TO_CHAR(t.trandate, 'YYYY-MM-DD') AS trandate, cur.symbol AS currency, t.foreigntotal, ",
    "t.account, BUILTIN.DF(t.account) AS accountname, t.status, BUILTIN.DF(t.status) AS statusname, t.memo, ",
    local_time!("t.lastmodifieddate", "lastmodifieddate"),
    " FROM transaction t LEFT JOIN currency cur ON cur.id = t.currency"
);

pub(super) const CUSTOMER_PAYMENTS: Listing = Listing {
    what: "a page of customer payments",
    select: PAYMENT_COLUMNS,
    id: "t.id",
    only: Some("t.type = 'CustPymt'"),
    modified: "t.lastmodifieddate",
};

pub(super) const VENDOR_PAYMENTS: Listing = Listing {
    what: "a page of vendor payments",
    select: PAYMENT_COLUMNS,
    id: "t.id",
    only: Some("t.type = 'VendPymt'"),
    modified: "t.lastmodifieddate",
};

/// The applications between documents (completed by the documents' ids).
pub(super) const LINKS_QUERY: &str = "SELECT ntll.previousdoc, ntll.previoustype, ntll.nextdoc, ntll.nexttype, \
     ntll.previousline, ntll.nextline, ntll.foreignamount FROM nexttransactionlinelink ntll \
     WHERE ntll.linktype = 'Payment'";

pub(super) const POSTINGS: Listing = Listing {
    what: "a page of posting transactions",
    select: concat!(
        "SELECT t.id, t.tranid, t.type, TO_CHAR(t.trandate, 'YYYY-MM-DD') AS trandate, t.memo, ",
        local_time!("t.createddate", "createddate"),
        ", ",
        local_time!("t.lastmodifieddate", "lastmodifieddate"),
        " FROM transaction t"
    ),
    id: "t.id",
    only: Some("t.posting = 'T'"),
    modified: "t.lastmodifieddate",
};

/// Posted accounting lines in the primary book (completed by the page's
/// transaction ids).
pub(super) const ACCOUNTING_LINES_QUERY: &str = "SELECT tal.transaction, tal.transactionline, tal.account, \
     BUILTIN.DF(tal.account) AS accountname, tal.debit, tal.credit FROM transactionaccountingline tal \
     INNER JOIN accountingbook ab ON ab.id = tal.accountingbook WHERE ab.isprimary = 'T' AND tal.posting = 'T'";

/// The base currencies (one without OneWorld; one per subsidiary's base
/// with it).
pub(super) const BASE_CURRENCY_QUERY: &str =
    "SELECT cur.symbol FROM currency cur WHERE cur.isbasecurrency = 'T'";

/// The root subsidiary of a OneWorld account.
pub(super) const ROOT_SUBSIDIARY_QUERY: &str = concat!(
    "SELECT s.id, s.name, s.legalname, s.federalidnumber, cur.symbol AS currency, s.url, ",
    local_time!("s.lastmodifieddate", "lastmodifieddate"),
    " FROM subsidiary s LEFT JOIN currency cur ON cur.id = s.currency ",
    "WHERE s.parent IS NULL AND s.iselimination = 'F'"
);

/// The month (`MM`) the latest fiscal year started.
pub(super) const YEAR_START_QUERY: &str = "SELECT TO_CHAR(ap.startdate, 'MM') AS month FROM accountingperiod ap \
     WHERE ap.isyear = 'T' ORDER BY ap.startdate DESC";

/// A row naming a currency.
#[derive(Deserialize)]
pub(super) struct CurrencyRow {
    pub(super) symbol: Option<String>,
}

/// A row naming a month.
#[derive(Deserialize)]
pub(super) struct MonthRow {
    pub(super) month: Option<String>,
}

impl Keyed for CurrencyRow {
    const ID: &'static str = "/symbol";
}

impl Keyed for MonthRow {
    const ID: &'static str = "/month";
}

impl Keyed for NsSubsidiary {
    const ID: &'static str = "/id";
}
