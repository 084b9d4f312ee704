//! A run's credentials and connector: refreshed before the first page when
//! they expire soon, and once more when the platform rejects the access
//! token mid-sync.

use std::sync::Arc;

use serde_json::Value;

use super::Engine;
use super::ending::RunError;
use crate::data::DataType;
use crate::platforms::connector::{AnyConnector, Changes, ConnectorError, Page, Since};
use crate::platforms::kit::oauth::{self, TokenEndpoint};
use crate::sync::refresh::{self, RefreshFailure};

/// A run's credentials, refreshed as needed.
pub(super) struct Tokens<'a> {
    subject: refresh::Subject<'a>,
    connector: Arc<dyn AnyConnector>,
    /// Where the platform refreshes tokens; `None` where they are not refreshed.
    endpoint: Option<TokenEndpoint>,
    credentials: Value,
}

impl<'a> Tokens<'a> {
    /// The credentials of `subject`, as opened, for `connector`.
    pub fn new(
        subject: refresh::Subject<'a>,
        connector: Arc<dyn AnyConnector>,
        credentials: Value,
    ) -> Self {
        Self {
            endpoint: connector.token_endpoint(&credentials),
            subject,
            connector,
            credentials,
        }
    }

    /// Refreshes the tokens when `need` says so (never where the platform
    /// does not refresh).
    pub async fn refresh(
        &mut self,
        engine: &Engine,
        need: refresh::Need<'_>,
    ) -> Result<(), RunError> {
        let Some(endpoint) = &self.endpoint else {
            return Ok(());
        };
        let platform = self.subject.platform_key;
        let fresh =
            refresh::fresh_credentials(&engine.db, &engine.keyring, self.subject, endpoint, need)
                .await;
        let outcome = match &fresh {
            Ok(credentials) if *credentials == self.credentials => None,
            Ok(_) => Some("Refreshed"),
            Err(RefreshFailure::Platform(ConnectorError::Auth(_) | ConnectorError::Expired(_))) => {
                Some("Rejected")
            }
            Err(RefreshFailure::NoOAuthClient(_)) => Some("NoOAuthClient"),
            Err(_) => Some("Failed"),
        };
        if let Some(outcome) = outcome {
            engine.metrics.refresh(platform, outcome);
        }
        self.credentials = fresh.map_err(|failure| match failure {
            RefreshFailure::Platform(error) => RunError::from(error),
            RefreshFailure::NoOAuthClient(problem) => RunError::Failed(problem),
            RefreshFailure::Internal(cause) => RunError::Internal(cause),
        })?;
        Ok(())
    }

    /// The connector's way of asking for what changed in `data_type`, if any.
    pub fn changes(&self, data_type: DataType) -> Option<Changes> {
        self.connector.changes(data_type)
    }

    /// One page (of what changed since `since`, when given); a rejected access token is refreshed once and the page asked again.
    pub async fn fetch(
        &mut self,
        engine: &Engine,
        data_type: DataType,
        since: Option<Since>,
        cursor: Option<String>,
    ) -> Result<Page, RunError> {
        let connector = Arc::clone(&self.connector);
        match connector
            .fetch(&self.credentials, data_type, since.clone(), cursor.clone())
            .await
        {
            Err(ConnectorError::Expired(_)) if self.endpoint.is_some() => {
                tracing::info!(connection_id = %self.subject.connection_id, "the platform rejected the access token; refreshing");
                let rejected = oauth::access_token(&self.credentials)
                    .map(str::to_owned)
                    .map_err(RunError::from)?;
                self.refresh(engine, refresh::Need::Rejected(&rejected))
                    .await?;
                connector
                    .fetch(&self.credentials, data_type, since, cursor)
                    .await
                    .map_err(RunError::from)
            }
            other => other.map_err(RunError::from),
        }
    }
}
