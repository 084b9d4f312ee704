//! What went wrong, in the domain's own terms: the one error type domain
//! code returns. It knows nothing of HTTP: the HTTP layer maps each variant
//! to a status, and words each [`Remedy`] (which operation to call) for the
//! client, in one place (`http::error`).

use serde::{Deserialize, Serialize};
use uuid::Uuid;

/// Why a domain operation did not happen.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The input breaks a rule: one item per field or parameter at fault.
    #[error("invalid input ({} problem(s))", .0.len())]
    Invalid(Vec<FieldError>),
    /// The addressed thing does not exist, or belongs to another client.
    #[error("{0}")]
    NotFound(Problem),
    /// The request conflicts with the current state of what it addresses.
    #[error("{0}")]
    Conflict(Problem),
    /// Well-formed, but it cannot be carried out for what it addresses.
    #[error("{0}")]
    Unprocessable(Problem),
    /// What was addressed existed and is no longer kept (a pinned snapshot
    /// past its retention); asking again will not bring it back.
    #[error("{0}")]
    Gone(Problem),
    /// Something we depend on (the database, a platform being asked to verify
    /// tokens) is not answering.
    #[error("{0}")]
    Unavailable(Problem),
    /// What was asked for is on its way (a first sync is queued or running):
    /// the same request will succeed once it arrives.
    #[error("{problem}")]
    Pending {
        /// What is on its way, and how far it is.
        problem: Problem,
        /// When asking again is worth it.
        retry_after: std::time::Duration,
    },
    /// A bug or an unexpected failure (the database, the keyring); logged, never shown.
    #[error("internal error: {0:#}")]
    Internal(anyhow::Error),
}

impl Error {
    /// One invalid field.
    pub fn invalid(item_id: impl Into<String>, message: impl Into<String>) -> Self {
        Self::Invalid(vec![FieldError::new(item_id, message)])
    }

    /// Wraps an unexpected failure.
    pub fn internal(cause: impl Into<anyhow::Error>) -> Self {
        Self::Internal(cause.into())
    }

    /// A missing thing, in a sentence.
    pub fn not_found(message: impl Into<String>) -> Self {
        Self::NotFound(Problem::new(message))
    }

    /// A conflict with the current state, in a sentence.
    pub fn conflict(message: impl Into<String>) -> Self {
        Self::Conflict(Problem::new(message))
    }

    /// A request that cannot be carried out, in a sentence.
    pub fn unprocessable(message: impl Into<String>) -> Self {
        Self::Unprocessable(Problem::new(message))
    }
}

impl From<sea_orm::DbErr> for Error {
    /// An unreachable database is an outage ([`Error::Unavailable`]); any
    /// other database error is a bug ([`Error::Internal`]).
    fn from(error: sea_orm::DbErr) -> Self {
        if crate::db::is_unreachable(&error) {
            Self::database_unavailable(&error)
        } else {
            Self::internal(error)
        }
    }
}

/// What a client is told while the database cannot be reached.
pub const DATABASE_UNAVAILABLE: &str =
    "The database is not answering at the moment. Try again in a few seconds.";

impl Error {
    /// The outage `cause` shows, logged (it names no secret: database
    /// errors carry no bound values) and worded for the client.
    pub fn database_unavailable(cause: &dyn std::fmt::Display) -> Self {
        tracing::warn!(error = %cause, "the database is unreachable");
        Self::Unavailable(Problem::new(DATABASE_UNAVAILABLE))
    }
}

/// What went wrong, in sentences a person can act on, and what to do
/// about it when that is an operation of the API.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Problem {
    /// One or more complete sentences; no URLs.
    pub message: String,
    /// What the client can do about it.
    pub remedy: Option<Remedy>,
}

impl Problem {
    /// A problem without a remedy.
    pub fn new(message: impl Into<String>) -> Self {
        Self {
            message: message.into(),
            remedy: None,
        }
    }

    /// The problem, and what to do about it.
    pub fn with_remedy(mut self, remedy: Remedy) -> Self {
        self.remedy = Some(remedy);
        self
    }
}

impl std::fmt::Display for Problem {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message)
    }
}

/// One problem with one field or parameter.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FieldError {
    /// The field or parameter name, as the caller wrote it.
    pub item_id: String,
    /// What is wrong and what is allowed.
    pub message: String,
    /// Where the allowed values are listed, when an operation lists them.
    pub remedy: Option<Remedy>,
}

impl FieldError {
    /// A problem with `item_id`.
    pub fn new(item_id: impl Into<String>, message: impl Into<String>) -> Self {
        Self {
            item_id: item_id.into(),
            message: message.into(),
            remedy: None,
        }
    }

    /// The problem, and where the allowed values are.
    pub fn with_remedy(mut self, remedy: Remedy) -> Self {
        self.remedy = Some(remedy);
        self
    }
}

/// What a client can do about a problem, as an operation of the API: the
/// domain names the action, the HTTP layer words it with its method and path.
///
/// Stored with a failed pull operation (as JSON), so the names are stable.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", tag = "action")]
pub enum Remedy {
    /// Look the platform keys up in the integrations catalogue.
    ListPlatforms,
    /// Read the authorization body a platform takes.
    ReadAuthorizationSchema {
        /// The platform.
        platform_key: String,
    },
    /// Store the OAuth application that issued a platform's tokens.
    SetOAuthClient {
        /// The platform.
        platform_key: String,
    },
    /// Authorize (migrate tokens to) a connection of the company.
    AuthorizeConnection {
        /// The company.
        company_id: Uuid,
    },
    /// Follow a pull operation until it ends.
    WatchOperation {
        /// The company.
        company_id: Uuid,
        /// The pull operation.
        operation_id: Uuid,
    },
    /// Queue a sync of the company's data and wait for it to complete.
    QueueSync {
        /// The company.
        company_id: Uuid,
        /// The data type's name (`invoices`).
        data_type: String,
    },
    /// Say which connection's record is meant (`connectionId`).
    NameConnection {
        /// The connections that hold a record of that id.
        connections: Vec<Uuid>,
    },
    /// Read a list again from its first page, on the newest data.
    ReadListAgain {
        /// The company.
        company_id: Uuid,
        /// The data type's name (`invoices`).
        data_type: String,
    },
    /// Attest a step of a managed migration's checklist.
    AttestChecklistStep {
        /// The migration batch.
        migration_id: Uuid,
        /// The step's name.
        step: String,
    },
    /// Send a company's current tokens again, in a new migration batch row
    /// with the same external reference.
    ResendRow,
    /// Retry a migration's failed rows once their cause is fixed.
    RetryFailedRows {
        /// The migration batch.
        migration_id: Uuid,
    },
}
