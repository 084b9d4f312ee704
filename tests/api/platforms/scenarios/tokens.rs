//! The scenarios of a platform's tokens: a 401 mid-sync refreshed once, a
//! token about to expire refreshed first, `invalid_grant`, and a rejected
//! token that cannot be refreshed.

use client::types::{ConnectionStatus, PullStatus};

use super::{
    Case, Refresh, assert_complete, assert_says, connected, message_of, records, spawn, status_of,
    sync,
};
use crate::helpers::{backends, captured_logs, json};
use crate::platforms::fake::{self, Answer, Fake};
use crate::platforms::{set_oauth_client, stored, stored_refresh_token};

fn refreshing(case: &Case) -> &Refresh {
    case.refresh_with
        .as_ref()
        .unwrap_or_else(|| panic!("{}: the case says how it refreshes", case.key))
}

/// The refresh token stored after the first refresh.
fn refreshed_refresh_token(case: &Case) -> &'static str {
    if refreshing(case).rotates {
        "rt-rotated-1"
    } else {
        case.refresh
    }
}

/// The fake's `index`th token request was the refresh-token grant of the
/// case's refresh token, with the client where the platform takes it.
fn assert_refresh_grant(case: &Case, fake: &Fake, index: usize) {
    let (form, client_in_body) =
        fake.with(|inner| (inner.token_forms[index].clone(), inner.client_in_body));
    let field = |name: &str| form.get(name).map(String::as_str);
    assert_eq!(field("grant_type"), Some("refresh_token"), "{}", case.key);
    assert_eq!(field("refresh_token"), Some(case.refresh), "{}", case.key);
    if client_in_body {
        assert_eq!(field("client_id"), Some(fake::CLIENT_ID), "{}", case.key);
        assert_eq!(
            field("client_secret"),
            Some(fake::CLIENT_SECRET),
            "{}",
            case.key
        );
    } else {
        // In HTTP Basic, which the fake checks.
        assert_eq!(field("client_secret"), None, "{}", case.key);
    }
    for (name, value) in refreshing(case).grant_extras {
        assert_eq!(
            field(name),
            Some(*value),
            "{}: the grant's {name}",
            case.key
        );
    }
}

/// The stored body after the first refresh: the new access token, the
/// refresh token to use next, and the rest as authorized.
async fn assert_refreshed(
    case: &Case,
    app: &crate::helpers::TestApp,
    connection_id: uuid::Uuid,
    body: &serde_json::Value,
) {
    let credentials = stored(app, connection_id).await;
    assert_eq!(credentials["accessToken"], "at-refreshed-1", "{}", case.key);
    assert_eq!(
        credentials["refreshToken"],
        refreshed_refresh_token(case),
        "{}",
        case.key
    );
    for field in case.kept {
        assert_eq!(
            credentials[field], body[field],
            "{}: {field} kept",
            case.key
        );
    }
}

/// The access token stops working mid-sync: it is refreshed once, the
/// refresh token to use next is in the database before the new access
/// token is first used, the sync completes, the connection shows the new
/// expiry, and no secret reaches the logs.
pub async fn an_access_token_rejected_mid_sync_is_refreshed_and_the_new_tokens_are_stored_before_use(
    case: &Case,
) {
    let refresh = refreshing(case);
    let data_type = case.sync.data_type;
    for backend in backends() {
        let fake = (case.fake)().await;
        let app = spawn(case, backend, &fake, 1).await;
        set_oauth_client(&app, case.key).await;
        let body = (case.authorization)(case.lasting);
        let (company_id, connection_id) = connected(&app, case, &body).await;
        fake.with(|inner| {
            inner.expire_after = Some(refresh.rejected_after);
            inner.on_new_token = Some(stored_refresh_token(&app, connection_id));
        });
        let operation = sync(&app, company_id, data_type).await;
        assert_complete(case, &operation);
        assert_eq!(
            records(&app, company_id, data_type).await.len(),
            case.sync.records,
            "{}",
            case.key
        );
        assert_eq!(fake.token_calls(), 1, "{}: one refresh", case.key);
        assert_refresh_grant(case, &fake, 0);
        assert_eq!(
            fake.with(|inner| inner.stored_at_first_use.clone()),
            [Some(refreshed_refresh_token(case).to_owned())],
            "{}: stored before the new access token was first used",
            case.key
        );
        assert_refreshed(case, &app, connection_id, &body).await;
        if refresh.before_expiry {
            let connection = json(
                app.get(&format!(
                    "/companies/{company_id}/connections/{connection_id}"
                ))
                .await,
            )
            .await;
            let expires = connection["authorization"]["accessTokenExpiresAt"]
                .as_str()
                .unwrap_or_else(|| panic!("{}: an expiry: {connection}", case.key));
            let expires = chrono::DateTime::parse_from_rfc3339(expires).expect("RFC 3339");
            assert!(
                expires > chrono::Utc::now() + chrono::Duration::minutes(25),
                "{}: the new expiry, {expires}",
                case.key
            );
        }
        let logs = captured_logs();
        for secret in [
            case.access,
            case.refresh,
            "at-refreshed-1",
            "rt-rotated-1",
            fake::CLIENT_SECRET,
        ] {
            assert!(
                !logs.contains(secret),
                "{}: a secret reached the logs",
                case.key
            );
        }
    }
}

/// A token expiring within five minutes is refreshed before the first
/// call: every call carries the new one.
pub async fn a_token_about_to_expire_is_refreshed_before_the_first_call(case: &Case) {
    let data_type = case.sync.data_type;
    for backend in backends() {
        let fake = (case.fake)().await;
        let app = spawn(case, backend, &fake, 1).await;
        set_oauth_client(&app, case.key).await;
        let body = (case.authorization)(60);
        let (company_id, connection_id) = connected(&app, case, &body).await;
        assert_complete(case, &sync(&app, company_id, data_type).await);
        assert_eq!(fake.token_calls(), 1, "{}: one refresh", case.key);
        assert_refresh_grant(case, &fake, 0);
        let calls = fake.calls();
        assert_eq!(calls.len(), case.sync.calls, "{}", case.key);
        assert!(
            calls.iter().all(|call| call.token == "at-refreshed-1"),
            "{}: only the new token was used",
            case.key
        );
        assert_refreshed(case, &app, connection_id, &body).await;
    }
}

/// The token endpoint answers `invalid_grant`: the connection is
/// deauthorized and the operation says why (never with the refresh token);
/// a token that expires is not used once refreshing it failed.
pub async fn invalid_grant_deauthorizes_the_connection_with_the_platforms_reason(case: &Case) {
    let refresh = refreshing(case);
    for backend in backends() {
        let fake = (case.fake)().await;
        let app = spawn(case, backend, &fake, 1).await;
        set_oauth_client(&app, case.key).await;
        // Another company's connection to the platform, which stays linked.
        let (other_company, other_connection) =
            connected(&app, case, &(case.authorization)(case.lasting)).await;
        // Expiring within five minutes: refreshed before the first call.
        // Without an expiry: refreshed after the first call's 401.
        let expires_in = if refresh.before_expiry {
            120
        } else {
            case.lasting
        };
        let (company_id, connection_id) =
            connected(&app, case, &(case.authorization)(expires_in)).await;
        fake.with(|inner| {
            if !refresh.before_expiry {
                inner.access_tokens.clear();
            }
            match refresh.invalid_grant {
                Some(answer) => inner.token_error = Some(Answer::json(400, answer)),
                None => inner.refresh_token = "revoked-or-used-elsewhere".to_owned(),
            }
        });
        let operation = sync(&app, company_id, case.sync.data_type).await;
        assert_eq!(operation.status, PullStatus::AuthError, "{}", case.key);
        let message = message_of(&operation);
        assert_says(case, &message, &["invalid_grant"]);
        assert_says(case, &message, refresh.invalid_grant_says);
        assert!(!message.contains(case.refresh), "{}: {message}", case.key);
        assert_eq!(
            status_of(&app, company_id, connection_id).await,
            ConnectionStatus::Deauthorized,
            "{}",
            case.key
        );
        assert_eq!(
            status_of(&app, other_company, other_connection).await,
            ConnectionStatus::Linked,
            "{}: another connection is untouched",
            case.key
        );
        assert_eq!(fake.token_calls(), 1, "{}", case.key);
        if refresh.before_expiry {
            assert!(
                fake.calls().is_empty(),
                "{}: no API call with an expiring token",
                case.key
            );
        }
    }
}

/// A rejected token with nothing to refresh it with deauthorizes the
/// connection, saying what the platform answered, without a refresh.
pub async fn a_rejected_token_that_cannot_be_refreshed_deauthorizes_without_a_refresh(case: &Case) {
    let unrefreshable = case
        .unrefreshable
        .as_ref()
        .unwrap_or_else(|| panic!("{}: the case has an unrefreshable body", case.key));
    for backend in backends() {
        let fake = (case.fake)().await;
        let app = spawn(case, backend, &fake, 1).await;
        set_oauth_client(&app, case.key).await;
        let (company_id, connection_id) =
            connected(&app, case, &(unrefreshable.authorization)()).await;
        fake.with(|inner| inner.access_tokens.clear());
        let operation = sync(&app, company_id, case.sync.data_type).await;
        assert_eq!(
            operation.status,
            PullStatus::AuthError,
            "{}: {operation:?}",
            case.key
        );
        let message = message_of(&operation);
        assert_says(case, &message, unrefreshable.says);
        assert!(!message.contains(case.access), "{}: {message}", case.key);
        assert_eq!(
            status_of(&app, company_id, connection_id).await,
            ConnectionStatus::Deauthorized,
            "{}",
            case.key
        );
        assert_eq!(
            fake.token_calls(),
            0,
            "{}: nothing to refresh with",
            case.key
        );
    }
}
