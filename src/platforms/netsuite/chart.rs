//! NetSuite's chart and lists, and how they become ours: accounts (`account`,
//! classified by `accttype`, with balances summed from the primary book's
//! posted accounting lines), vendors as suppliers, tax codes (`salestaxitem`),
//! items (`item`) and the company (the root subsidiary, or the base currency
//! alone without OneWorld). SuiteQL writes every value as text and leaves
//! null columns out. Sources: `NOTES.md`, "Accounting model".

use std::collections::HashMap;

use serde::Deserialize;

use crate::data::accounts::{Account, AccountClassification, AccountRef, AccountStatus};
use crate::data::company_info::{CompanyInfo, YearStart};
use crate::data::items::{Item, ItemSide, ItemStatus, ItemType};
use crate::data::money::{Money, Quantity};
use crate::data::suppliers::{Supplier, SupplierStatus};
use crate::data::tax_rates::{TaxRate, TaxRateComponent, TaxRateStatus};
use crate::platforms::kit::json::{self, Amount, money};
use crate::platforms::kit::records::{Keyed, Unreadable};
use crate::platforms::kit::status::find;

use super::mapping::entity_name;

impl Keyed for NsAccount {
    const ID: &'static str = "/id";
}

impl Keyed for NsBalance {
    const ID: &'static str = "/account";
}

impl Keyed for NsVendor {
    const ID: &'static str = "/id";
}

impl Keyed for NsTaxCode {
    const ID: &'static str = "/id";
}

impl Keyed for NsItem {
    const ID: &'static str = "/id";
}

/// NetSuite's account types (`accttype`) in the statements, as Fivetran's
/// NetSuite2 models classify them; `NonPosting` and `Stat` (statistical)
/// accounts have no classification.
const CLASSIFICATIONS: &[(&str, AccountClassification)] = &[
    ("Bank", AccountClassification::Asset),
    ("AcctRec", AccountClassification::Asset),
    ("UnbilledRec", AccountClassification::Asset),
    ("OthCurrAsset", AccountClassification::Asset),
    ("FixedAsset", AccountClassification::Asset),
    ("OthAsset", AccountClassification::Asset),
    ("DeferExpense", AccountClassification::Asset),
    ("AcctPay", AccountClassification::Liability),
    ("CredCard", AccountClassification::Liability),
    ("OthCurrLiab", AccountClassification::Liability),
    ("LongTermLiab", AccountClassification::Liability),
    ("DeferRevenue", AccountClassification::Liability),
    ("Equity", AccountClassification::Equity),
    ("Income", AccountClassification::Income),
    ("OthIncome", AccountClassification::Income),
    ("COGS", AccountClassification::Expense),
    ("Expense", AccountClassification::Expense),
    ("OthExpense", AccountClassification::Expense),
];

/// Our reference to a NetSuite record's account: its internal id and the
/// display text SuiteQL gives beside it (`BUILTIN.DF`).
pub(super) fn account_ref(id: Option<String>, name: Option<String>) -> Option<AccountRef> {
    AccountRef::to(json::non_empty(id), json::non_empty(name))
}

/// Whether a SuiteQL boolean column says true (`T`).
pub(super) fn is_true(flag: Option<&str>) -> bool {
    flag == Some("T")
}

/// A row of the account query.
#[derive(Deserialize)]
pub(super) struct NsAccount {
    pub(super) id: String,
    acctnumber: Option<String>,
    accountsearchdisplaynamecopy: Option<String>,
    fullname: Option<String>,
    accttype: Option<String>,
    description: Option<String>,
    isinactive: Option<String>,
    currency: Option<String>,
    lastmodifieddate: Option<String>,
}

/// A row of the balance query: an account's posted debits and credits in
/// the primary book, in the base currency.
#[derive(Deserialize)]
pub(super) struct NsBalance {
    account: String,
    debit: Option<Amount>,
    credit: Option<Amount>,
}

/// Posted debits less credits, by account id.
pub(super) fn balances_by_account(rows: Vec<NsBalance>) -> HashMap<String, Money> {
    rows.into_iter()
        .map(|row| (row.account, money(row.debit) - money(row.credit)))
        .collect()
}

impl NsAccount {
    /// Our account. The balance is given for a balance-sheet account in the
    /// base currency (`base`), in its natural sign (a liability's credit
    /// balance positive): the ledger's amounts are in the base currency, so
    /// a foreign-currency account's sum would not be its balance, and an
    /// income or expense account's sum over every year is no current balance.
    pub(super) fn into_record(self, debits: Option<Money>, base: Option<&str>) -> Account {
        let account_type = json::non_empty(self.accttype);
        let classification = account_type
            .as_deref()
            .and_then(|kind| find(CLASSIFICATIONS, kind))
            .unwrap_or(AccountClassification::Unknown);
        let currency = json::non_empty(self.currency).or_else(|| base.map(str::to_owned));
        let in_base = base.is_some() && currency.as_deref() == base;
        let current_balance = match classification {
            AccountClassification::Asset if in_base => Some(debits.unwrap_or_default()),
            AccountClassification::Liability | AccountClassification::Equity if in_base => {
                Some(Money(0) - debits.unwrap_or_default())
            }
            _ => None,
        };
        Account {
            nominal_code: json::non_empty(self.acctnumber),
            account_name: json::non_empty(self.accountsearchdisplaynamecopy)
                .or_else(|| json::non_empty(self.fullname))
                .unwrap_or_else(|| self.id.clone()),
            description: json::non_empty(self.description),
            classification,
            is_bank_account: matches!(account_type.as_deref(), Some("Bank" | "CredCard")),
            account_type,
            status: if is_true(self.isinactive.as_deref()) {
                AccountStatus::Archived
            } else {
                AccountStatus::Active
            },
            currency,
            current_balance,
            source_modified_date: json::timestamp(self.lastmodifieddate.as_deref()),
            account_id: self.id,
        }
    }
}

/// A row of the vendor query.
#[derive(Deserialize)]
pub(super) struct NsVendor {
    pub(super) id: String,
    entityid: Option<String>,
    companyname: Option<String>,
    firstname: Option<String>,
    lastname: Option<String>,
    isperson: Option<String>,
    email: Option<String>,
    phone: Option<String>,
    currency: Option<String>,
    isinactive: Option<String>,
    lastmodifieddate: Option<String>,
}

impl NsVendor {
    /// Our supplier, named as customers are: a person by first and last
    /// name, a company by its name, else its `entityid`.
    pub(super) fn into_record(self) -> Supplier {
        Supplier {
            supplier_name: entity_name(
                &self.id,
                self.isperson.as_deref(),
                [self.firstname, self.lastname],
                [self.companyname, self.entityid],
            ),
            email_address: json::non_empty(self.email),
            phone: json::non_empty(self.phone),
            default_currency: json::non_empty(self.currency),
            status: if is_true(self.isinactive.as_deref()) {
                SupplierStatus::Archived
            } else {
                SupplierStatus::Active
            },
            source_modified_date: json::timestamp(self.lastmodifieddate.as_deref()),
            supplier_id: self.id,
        }
    }
}

/// A row of the tax code query (`salestaxitem`).
#[derive(Deserialize)]
pub(super) struct NsTaxCode {
    pub(super) id: String,
    itemid: Option<String>,
    fullname: Option<String>,
    description: Option<String>,
    rate: Option<String>,
    isinactive: Option<String>,
}

/// A tax code's rate as NetSuite writes it, `"1.50%"` or `8.5`, as a
/// percentage.
fn percentage(rate: &str) -> Option<Quantity> {
    let number = rate.trim().trim_end_matches('%').trim();
    json::parse_amount(number)
        .ok()
        .map(|amount| Quantity(amount.0))
}

impl NsTaxCode {
    /// Our tax rate: the code's rate as its one component. A code without a
    /// readable rate (SuiteTax accounts leave it out) cannot be read.
    pub(super) fn into_record(self) -> Result<TaxRate, Unreadable> {
        let rate = match self.rate.as_deref() {
            Some(text) => {
                percentage(text).ok_or_else(|| Unreadable::field("rate", "is not a percentage"))?
            }
            None => return Err(Unreadable::field("rate", "is missing")),
        };
        let code = json::non_empty(self.itemid);
        let name = json::non_empty(self.description)
            .or_else(|| json::non_empty(self.fullname))
            .or_else(|| code.clone())
            .unwrap_or_else(|| self.id.clone());
        Ok(TaxRate {
            components: vec![TaxRateComponent {
                name: name.clone(),
                rate,
                is_compound: false,
            }],
            code,
            name,
            effective_tax_rate: rate,
            status: if is_true(self.isinactive.as_deref()) {
                TaxRateStatus::Archived
            } else {
                TaxRateStatus::Active
            },
            source_modified_date: None,
            tax_rate_id: self.id,
        })
    }
}

/// NetSuite's item types (`itemtype`) as ours; the rest (discounts,
/// groups, descriptions, payments, subtotals) are `Unknown`.
const ITEM_TYPES: &[(&str, ItemType)] = &[
    ("InvtPart", ItemType::Inventory),
    ("Assembly", ItemType::Inventory),
    ("NonInvtPart", ItemType::NonInventory),
    ("OthCharge", ItemType::NonInventory),
    ("Kit", ItemType::NonInventory),
    ("Service", ItemType::Service),
];

/// A row of the item query, its accounts with their display texts.
#[derive(Deserialize)]
pub(super) struct NsItem {
    pub(super) id: String,
    itemid: Option<String>,
    displayname: Option<String>,
    itemtype: Option<String>,
    description: Option<String>,
    purchasedescription: Option<String>,
    isinactive: Option<String>,
    baseprice: Option<Amount>,
    cost: Option<Amount>,
    incomeaccount: Option<String>,
    incomeaccountname: Option<String>,
    expenseaccount: Option<String>,
    expenseaccountname: Option<String>,
    assetaccount: Option<String>,
    assetaccountname: Option<String>,
    lastmodifieddate: Option<String>,
}

impl NsItem {
    /// Our item: sold when it has an income account (at its base price),
    /// bought when it has an expense or asset account (at its purchase
    /// cost); an inventory item is bought into its asset account.
    pub(super) fn into_record(self) -> Item {
        let item_type = self
            .itemtype
            .as_deref()
            .and_then(|kind| find(ITEM_TYPES, kind))
            .unwrap_or(ItemType::Unknown);
        let description = json::non_empty(self.description);
        let sales =
            account_ref(self.incomeaccount, self.incomeaccountname).map(|account| ItemSide {
                description: description.clone(),
                unit_price: self.baseprice.map(Amount::money),
                account_ref: Some(account),
                tax_rate_ref: None,
            });
        let purchase_account = if item_type == ItemType::Inventory {
            account_ref(self.assetaccount, self.assetaccountname)
        } else {
            account_ref(self.expenseaccount, self.expenseaccountname)
        };
        let purchases = purchase_account.map(|account| ItemSide {
            description: json::non_empty(self.purchasedescription).or(description),
            unit_price: self.cost.map(Amount::money),
            account_ref: Some(account),
            tax_rate_ref: None,
        });
        Item {
            code: json::non_empty(self.itemid.clone()),
            name: json::non_empty(self.displayname)
                .or_else(|| json::non_empty(self.itemid))
                .unwrap_or_else(|| self.id.clone()),
            item_type,
            status: if is_true(self.isinactive.as_deref()) {
                ItemStatus::Archived
            } else {
                ItemStatus::Active
            },
            sales,
            purchases,
            quantity_on_hand: None,
            source_modified_date: json::timestamp(self.lastmodifieddate.as_deref()),
            item_id: self.id,
        }
    }
}

/// The root subsidiary of a OneWorld account (`parent IS NULL`).
#[derive(Deserialize)]
pub(super) struct NsSubsidiary {
    name: Option<String>,
    legalname: Option<String>,
    federalidnumber: Option<String>,
    currency: Option<String>,
    url: Option<String>,
    lastmodifieddate: Option<String>,
}

/// What is known of the company: its root subsidiary (OneWorld only), its
/// base currency and the month its latest fiscal year started (`MM`).
pub(super) struct NsCompany {
    pub(super) subsidiary: Option<NsSubsidiary>,
    pub(super) base_currency: Option<String>,
    pub(super) year_start_month: Option<String>,
}

impl NsCompany {
    /// Our company info for `account` (the NetSuite account id): the root
    /// subsidiary's name and legal name, its federal id number (an EIN, ABN
    /// or VAT number by country) as the tax number; without OneWorld only
    /// the account id names it. The year starts on the first of the month
    /// the latest fiscal year began.
    pub(super) fn into_record(self, account: &str) -> CompanyInfo {
        let subsidiary = self.subsidiary;
        let field = |pick: fn(&NsSubsidiary) -> &Option<String>| {
            subsidiary
                .as_ref()
                .and_then(|subsidiary| json::non_empty(pick(subsidiary).clone()))
        };
        let name = field(|s| &s.name).unwrap_or_else(|| format!("NetSuite account {account}"));
        CompanyInfo {
            company_info_id: account.to_owned(),
            legal_name: field(|s| &s.legalname),
            registration_number: None,
            tax_number: field(|s| &s.federalidnumber),
            base_currency: field(|s| &s.currency).or(self.base_currency),
            financial_year_start: self
                .year_start_month
                .and_then(|month| month.parse::<u32>().ok())
                .filter(|month| (1..=12).contains(month))
                .map(|month| YearStart { month, day: 1 }),
            addresses: Vec::new(),
            phone: None,
            website: field(|s| &s.url),
            created_date: None,
            source_modified_date: field(|s| &s.lastmodifieddate)
                .and_then(|text| json::timestamp(Some(&text))),
            company_name: name,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rates_read_with_or_without_a_percent_sign() {
        assert_eq!(percentage("1.50%"), Some(Quantity(15_000)));
        assert_eq!(percentage("8.5"), Some(Quantity(85_000)));
        assert_eq!(percentage("x"), None);
    }

    #[test]
    fn account_types_fold_into_the_five_classes_and_non_posting_ones_into_none() {
        assert_eq!(
            find(CLASSIFICATIONS, "CredCard"),
            Some(AccountClassification::Liability)
        );
        assert_eq!(
            find(CLASSIFICATIONS, "COGS"),
            Some(AccountClassification::Expense)
        );
        assert_eq!(find(CLASSIFICATIONS, "NonPosting"), None);
    }
}
