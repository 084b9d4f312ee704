//! The data types a sync fetches. Each is one [`Definition`]: its record
//! (what a connector produces and the API shows), the order of its list and
//! the filter the list offers. The store, the swap that numbers rows, the
//! reads and the paged endpoint follow from it; see "Adding a data type" in
//! `ARCHITECTURE.md`.
//!
//! - [`invoices`], [`customers`], [`orders`], [`bank_accounts`],
//!   [`bank_transactions`], [`accounts`], [`suppliers`], [`tax_rates`],
//!   [`bills`], [`payments`], [`bill_payments`], [`credit_notes`],
//!   [`items`], [`company_info`], [`journal_entries`]: the definitions.
//! - [`money`]: exact amounts and quantities, as the API writes them.
//! - [`records`]: records of any data type, on their way to the store.
//! - [`fields`], [`query`]: what a list can be queried and ordered by, and
//!   its `query` and `orderBy` parsed against them.

pub mod accounts;
pub mod bank_accounts;
pub mod bank_transactions;
pub mod bill_payments;
pub mod bills;
pub mod company_info;
pub mod credit_notes;
pub mod customers;
pub mod fields;
pub mod invoices;
pub mod items;
pub mod journal_entries;
pub mod money;
pub mod orders;
pub mod payments;
pub mod query;
pub mod records;
pub mod suppliers;
pub mod tax_rates;

use std::borrow::Cow;
use std::cmp::Ordering;
use std::fmt;

use schemars::{JsonSchema, Schema, SchemaGenerator, json_schema};
use serde::Serialize;

pub use records::{Records, Row};

/// A data type: its record and how its list is ordered and filtered.
pub trait Definition: Send + Sync + 'static {
    /// The record as connectors produce it and the API shows it, without the
    /// `connectionId` and `modifiedDate` every synced record is given.
    type Record: Serialize + JsonSchema + Send + Sync + 'static;

    /// How the data type is named and listed.
    const SPEC: &'static Spec;

    /// The record's id on its platform (unique within a connection).
    fn id(record: &Self::Record) -> &str;

    /// What the list is ordered by (then by connection, then by id), as
    /// text whose byte order is the list's order in [`Spec::order`]'s direction.
    fn sort_key(record: &Self::Record) -> String;

    /// The record's value of the list's filter; `None` where the list has none.
    fn filter_value(_record: &Self::Record) -> Option<Cow<'static, str>> {
        None
    }
}

/// How a data type is named, ordered and filtered.
#[derive(Debug)]
pub struct Spec {
    /// Its name in paths, pull operations and storage (`invoices`, `bankAccounts`).
    pub name: &'static str,
    /// Its records in words, plural (`invoices`, `bank accounts`).
    pub noun: &'static str,
    /// The record's field holding its platform id (`invoiceId`), which also
    /// names the id in the path of a single record.
    pub id_field: &'static str,
    /// Which way the sort key runs.
    pub order: Direction,
    /// The list's order in words, for its documentation.
    pub order_description: &'static str,
    /// The one filter its list offers, if any.
    pub filter: Option<Filter>,
    /// The top-level fields partners filter on (its references, dates,
    /// amounts, currency, status, `modifiedDate`), as queries name them:
    /// each published generation keeps their values with the records
    /// holding each one (`store::keys`), so a query on them reads its
    /// matches without reading the records.
    pub keys: &'static [&'static str],
}

/// Ascending or descending.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Direction {
    /// Smallest first.
    Ascending,
    /// Largest (newest) first.
    Descending,
}

impl Direction {
    /// How two records compare in a list ordered this way, by their sort
    /// key and id: the sort key this way, then the id ascending, both by
    /// byte, as the swap numbers a list (`ORDER BY sort_key …, record_id`
    /// under `COLLATE "C"`).
    pub fn compare(self, (a_key, a_id): (&[u8], &[u8]), (b_key, b_id): (&[u8], &[u8])) -> Ordering {
        let by_key = match self {
            Direction::Ascending => a_key.cmp(b_key),
            Direction::Descending => b_key.cmp(a_key),
        };
        by_key.then_with(|| a_id.cmp(b_id))
    }
}

/// A filter of a list: a query parameter matching one field exactly, with
/// exact totals and depth-independent pages.
#[derive(Debug)]
pub struct Filter {
    /// The query parameter (`status`).
    pub parameter: &'static str,
    /// What it selects, for the documentation (`Only invoices in this status`).
    pub description: &'static str,
    /// The values it accepts.
    pub values: FilterValues,
}

/// What a filter accepts.
#[derive(Debug, Clone, Copy)]
pub enum FilterValues {
    /// One of a vocabulary, in any letter case (`status=paid`).
    Vocabulary(&'static [&'static str]),
    /// A platform's id, exactly as the records carry it (`accountId=acc-1`),
    /// from 1 to [`MAX_FILTER_ID_LENGTH`] characters.
    Id {
        /// A value to show in the documentation.
        example: &'static str,
    },
}

/// The longest id a filter accepts.
pub const MAX_FILTER_ID_LENGTH: usize = 255;

impl Filter {
    /// The accepted value `text` names (a vocabulary ignores case); `None`
    /// when the filter does not accept it.
    pub fn value_named(&self, text: &str) -> Option<Cow<'static, str>> {
        match self.values {
            FilterValues::Vocabulary(values) => values
                .iter()
                .copied()
                .find(|value| value.eq_ignore_ascii_case(text))
                .map(Cow::Borrowed),
            FilterValues::Id { .. } => (!text.is_empty()
                && text.chars().count() <= MAX_FILTER_ID_LENGTH
                && !text.contains('\0'))
            .then(|| Cow::Owned(text.to_owned())),
        }
    }

    /// What the filter accepts, in words, for a 400's message.
    pub fn rule(&self) -> String {
        match self.values {
            FilterValues::Vocabulary(values) => {
                format!("must be one of {} (any case)", values.join(", "))
            }
            FilterValues::Id { .. } => format!(
                "must be an id of 1 to {MAX_FILTER_ID_LENGTH} characters, as the records carry it"
            ),
        }
    }

    /// A value to show in the documentation (a vocabulary's third value
    /// from the end, in lower case: its letter case does not matter).
    pub fn example(&self) -> String {
        match self.values {
            FilterValues::Vocabulary(values) => values
                .iter()
                .rev()
                .nth(2)
                .or(values.first())
                .map_or(String::new(), |value| value.to_lowercase()),
            FilterValues::Id { example } => example.to_owned(),
        }
    }
}

/// A data type, as values carry it: a handle on its [`Spec`].
#[derive(Clone, Copy)]
pub struct DataType(&'static Spec);

impl DataType {
    /// Invoices (a shorthand for `DataType::of::<Invoices>()`).
    pub const INVOICES: DataType = DataType::of::<invoices::Invoices>();
    /// Customers (a shorthand for `DataType::of::<Customers>()`).
    pub const CUSTOMERS: DataType = DataType::of::<customers::Customers>();
    /// Orders.
    pub const ORDERS: DataType = DataType::of::<orders::Orders>();
    /// Bank accounts.
    pub const BANK_ACCOUNTS: DataType = DataType::of::<bank_accounts::BankAccounts>();
    /// Bank transactions.
    pub const BANK_TRANSACTIONS: DataType = DataType::of::<bank_transactions::BankTransactions>();
    /// The chart of accounts.
    pub const ACCOUNTS: DataType = DataType::of::<accounts::Accounts>();
    /// Suppliers.
    pub const SUPPLIERS: DataType = DataType::of::<suppliers::Suppliers>();
    /// Tax rates.
    pub const TAX_RATES: DataType = DataType::of::<tax_rates::TaxRates>();
    /// Bills (purchase invoices).
    pub const BILLS: DataType = DataType::of::<bills::Bills>();
    /// Payments received from customers.
    pub const PAYMENTS: DataType = DataType::of::<payments::Payments>();
    /// Payments made to suppliers.
    pub const BILL_PAYMENTS: DataType = DataType::of::<bill_payments::BillPayments>();
    /// Sales credit notes.
    pub const CREDIT_NOTES: DataType = DataType::of::<credit_notes::CreditNotes>();
    /// Products and services.
    pub const ITEMS: DataType = DataType::of::<items::Items>();
    /// The organization itself, one record per connection.
    pub const COMPANY_INFO: DataType = DataType::of::<company_info::CompanyInfos>();
    /// The general ledger's posted entries.
    pub const JOURNAL_ENTRIES: DataType = DataType::of::<journal_entries::JournalEntries>();

    /// The data type `D` defines.
    pub const fn of<D: Definition>() -> Self {
        Self(D::SPEC)
    }

    /// Its name (`invoices`).
    pub fn name(self) -> &'static str {
        self.0.name
    }

    /// How it is named, ordered and filtered.
    pub fn spec(self) -> &'static Spec {
        self.0
    }

    /// The data type called `name`, exactly.
    pub fn named(name: &str) -> Option<Self> {
        ALL.iter()
            .copied()
            .find(|data_type| data_type.name() == name)
    }

    /// Every data type, in documentation order.
    pub fn all() -> &'static [DataType] {
        ALL
    }

    /// The names of every data type, for messages (`invoices, customers`).
    pub fn names() -> String {
        ALL.iter()
            .map(|data_type| data_type.name())
            .collect::<Vec<_>>()
            .join(", ")
    }

    /// Of `offered` (what a platform syncs), those a client's `chosen`
    /// names, in `offered`'s order; every one when it chose nothing
    /// (`None`). What link and sync settings each keep.
    pub fn chosen_of(chosen: Option<&[DataType]>, offered: &[DataType]) -> Vec<DataType> {
        match chosen {
            None => offered.to_vec(),
            Some(chosen) => offered
                .iter()
                .copied()
                .filter(|data_type| chosen.contains(data_type))
                .collect(),
        }
    }

    /// A list as settings store it: a JSON array of names.
    pub fn stored_list(data_types: &[DataType]) -> String {
        let names: Vec<&str> = data_types
            .iter()
            .map(|data_type| data_type.name())
            .collect();
        serde_json::Value::from(names).to_string()
    }

    /// A list [`DataType::stored_list`] wrote; a name no longer known is
    /// left out.
    pub fn from_stored_list(json: &str) -> Vec<DataType> {
        serde_json::from_str::<Vec<String>>(json)
            .unwrap_or_default()
            .iter()
            .filter_map(|name| DataType::named(name))
            .collect()
    }

    /// What a name that is not a data type is told (a 400's message).
    pub fn rule() -> String {
        format!("must be one of: {}", Self::names())
    }
}

impl PartialEq for DataType {
    fn eq(&self, other: &Self) -> bool {
        self.name() == other.name()
    }
}

impl Eq for DataType {}

impl std::hash::Hash for DataType {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        self.name().hash(state);
    }
}

impl fmt::Debug for DataType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl fmt::Display for DataType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl Serialize for DataType {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.name())
    }
}

impl<'de> serde::Deserialize<'de> for DataType {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let name = Cow::<str>::deserialize(deserializer)?;
        Self::named(&name).ok_or_else(|| serde::de::Error::custom(Self::rule()))
    }
}

impl JsonSchema for DataType {
    fn schema_name() -> Cow<'static, str> {
        "DataType".into()
    }

    fn json_schema(_: &mut SchemaGenerator) -> Schema {
        let names: Vec<&str> = ALL.iter().map(|data_type| data_type.name()).collect();
        json_schema!({
            "type": "string",
            "description": "The kinds of data a sync can fetch.",
            "enum": names,
        })
    }
}

/// Something done for each data type with its definition in hand (the
/// spec's schemas, the list endpoints): see [`visit_all`].
pub trait Visitor {
    /// Called once per data type.
    fn visit<D: Definition>(&mut self);
}

/// Registers the data types: each line is one definition. Keeps the list
/// of handles and the visit in step.
macro_rules! data_types {
    ($($definition:ty),* $(,)?) => {
        /// Every data type, in documentation order.
        const ALL: &[DataType] = &[$(DataType::of::<$definition>()),*];

        /// Calls `visitor` once per data type, in documentation order.
        pub fn visit_all(visitor: &mut impl Visitor) {
            $(visitor.visit::<$definition>();)*
        }
    };
}

data_types! {
    invoices::Invoices,
    customers::Customers,
    orders::Orders,
    bank_accounts::BankAccounts,
    bank_transactions::BankTransactions,
    accounts::Accounts,
    suppliers::Suppliers,
    tax_rates::TaxRates,
    bills::Bills,
    payments::Payments,
    bill_payments::BillPayments,
    credit_notes::CreditNotes,
    items::Items,
    company_info::CompanyInfos,
    journal_entries::JournalEntries,
}

/// Declares a vocabulary: a string enum written by serde as its variants'
/// names, described by schemars, with those names as [`Self::as_str`] and
/// every value in [`Self::ALL`].
macro_rules! vocabulary {
    (
        $(#[doc = $doc:literal])*
        pub enum $name:ident {
            $($(#[doc = $variant_doc:literal])* $variant:ident,)+
        }
    ) => {
        $(#[doc = $doc])*
        #[derive(
            Debug,
            Clone,
            Copy,
            PartialEq,
            Eq,
            Hash,
            serde::Serialize,
            serde::Deserialize,
            schemars::JsonSchema,
        )]
        pub enum $name {
            $($(#[doc = $variant_doc])* $variant,)+
        }

        impl $name {
            /// Every value, in documentation order.
            pub const ALL: &'static [Self] = &[$(Self::$variant),+];

            /// Every value's name, in documentation order.
            pub const NAMES: &'static [&'static str] = &[$(stringify!($variant)),+];

            /// The value's name, as written in JSON.
            pub fn as_str(self) -> &'static str {
                match self {
                    $(Self::$variant => stringify!($variant),)+
                }
            }

            /// The value called `text`, ignoring case (`paid`, `PAID`, `Paid`).
            pub fn parse_loose(text: &str) -> Option<Self> {
                Self::ALL
                    .iter()
                    .copied()
                    .find(|value| value.as_str().eq_ignore_ascii_case(text))
            }
        }
    };
}
pub(crate) use vocabulary;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn data_types_round_trip_their_names() {
        for data_type in DataType::all() {
            assert_eq!(DataType::named(data_type.name()), Some(*data_type));
        }
        assert_eq!(DataType::named("Orders"), None);
        assert_eq!(
            DataType::names(),
            "invoices, customers, orders, bankAccounts, bankTransactions, accounts, suppliers, taxRates, \
             bills, payments, billPayments, creditNotes, items, companyInfo, journalEntries"
        );
    }

    #[test]
    fn each_data_type_is_visited_once_in_order() {
        struct Names(Vec<&'static str>);
        impl Visitor for Names {
            fn visit<D: Definition>(&mut self) {
                self.0.push(D::SPEC.name);
            }
        }
        let mut names = Names(Vec::new());
        visit_all(&mut names);
        let listed: Vec<&str> = DataType::all().iter().map(|dt| dt.name()).collect();
        assert_eq!(names.0, listed);
    }
}
