//! The tenant: the client an API key authenticates as. Every query of
//! client data is scoped to it, so another client's ids are
//! indistinguishable from unknown ones.

use uuid::Uuid;

/// The authenticated client behind a request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Tenant {
    /// The client's id.
    pub client_id: Uuid,
}
