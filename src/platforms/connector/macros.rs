//! The macros connectors write their `Syncs` with: the data types a
//! connector fetches (`syncs!`), and the `Syncs` of data types read with one
//! function each, incrementally (`changed_syncs!`) or whole (`whole_syncs!`).

/// The data types a connector fetches, for [`super::Connector::syncs`]:
/// `syncs![Self: Invoices, Customers]`.
macro_rules! syncs {
    ($connector:ty: $($definition:ty),* $(,)?) => {
        vec![$($crate::platforms::connector::Fetcher::<$connector>::of::<$definition>()),*]
    };
}
pub(crate) use syncs;

/// `Syncs` for the data types a connector reads with one function each,
/// `fetch(credentials, since, cursor)`: a full page with `since` `None`, a
/// changed page with the engine's `Some(since.time)`, all with the same
/// [`Syncs::CHANGES`]:
/// `changed_syncs!(MyobConnector, CHANGES; Suppliers => suppliers, Bills => bills)`.
macro_rules! changed_syncs {
    ($connector:ty, $changes:expr; $($definition:ty => $fetch:ident),* $(,)?) => {
        $(
            impl $crate::platforms::connector::Syncs<$definition> for $connector {
                const CHANGES: Option<$crate::platforms::connector::Changes> = $changes;

                async fn page(
                    &self,
                    credentials: &<Self as $crate::platforms::connector::Connector>::Credentials,
                    cursor: Option<String>,
                ) -> Result<
                    $crate::platforms::connector::Fetched<<$definition as $crate::data::Definition>::Record>,
                    $crate::platforms::connector::ConnectorError,
                > {
                    self.$fetch(credentials, None, cursor).await
                }

                async fn changed_page(
                    &self,
                    credentials: &<Self as $crate::platforms::connector::Connector>::Credentials,
                    since: $crate::platforms::connector::Since,
                    cursor: Option<String>,
                ) -> Result<
                    $crate::platforms::connector::Fetched<<$definition as $crate::data::Definition>::Record>,
                    $crate::platforms::connector::ConnectorError,
                > {
                    self.$fetch(credentials, Some(since.time), cursor).await
                }
            }
        )*
    };
}
pub(crate) use changed_syncs;

/// `Syncs` for the data types a connector reads whole every sync, with one
/// function each, `fetch(credentials, cursor)`:
/// `whole_syncs!(MyobConnector; Accounts => accounts)`.
macro_rules! whole_syncs {
    ($connector:ty; $($definition:ty => $fetch:ident),* $(,)?) => {
        $(
            impl $crate::platforms::connector::Syncs<$definition> for $connector {
                async fn page(
                    &self,
                    credentials: &<Self as $crate::platforms::connector::Connector>::Credentials,
                    cursor: Option<String>,
                ) -> Result<
                    $crate::platforms::connector::Fetched<<$definition as $crate::data::Definition>::Record>,
                    $crate::platforms::connector::ConnectorError,
                > {
                    self.$fetch(credentials, cursor).await
                }
            }
        )*
    };
}
pub(crate) use whole_syncs;
