//! The scenarios of verification at migration (`PUT .../authorization?verify=true`).

use serde_json::json;

use client::types::ConnectionStatus;

use super::{Case, assert_says, spawn, status_of};
use crate::connections::{count_rows, new_company, new_connection};
use crate::helpers::{backends, json};
use crate::platforms::{authorize, set_oauth_client, stored};

/// The error a `PUT .../authorization` answered.
async fn error_of(response: reqwest::Response) -> String {
    json(response).await["error"]
        .as_str()
        .unwrap_or_default()
        .to_owned()
}

/// A token the platform rejects is refused with its reason (never with the
/// token) and nothing is stored; a working token for another account is
/// refused too; a working token is stored and linked after the platform's
/// verification call; without `verify` nothing is asked of the platform.
pub async fn verification_accepts_working_tokens_and_rejects_others_storing_nothing(case: &Case) {
    let verification = &case.verification;
    for backend in backends() {
        let fake = (case.fake)().await;
        let app = spawn(case, backend, &fake, 0).await;
        let company_id = new_company(&app, &format!("{} customer", case.key)).await;
        let connection_id = new_connection(&app, company_id, case.key).await;

        let unknown = format!("not-a-token-{}-knows", case.key);
        let mut wrong = (case.authorization)(case.lasting);
        wrong["accessToken"] = json!(unknown);
        let response = authorize(&app, company_id, connection_id, &wrong, true).await;
        assert_eq!(response.status(), 422, "{}", case.key);
        let message = error_of(response).await;
        assert_says(case, &message, verification.rejected_says);
        assert!(!message.contains(&unknown), "{}: {message}", case.key);
        assert_eq!(
            count_rows(&app, "connection_credential").await,
            0,
            "{}",
            case.key
        );

        if let Some(another) = &verification.another_account {
            let response = authorize(
                &app,
                company_id,
                connection_id,
                &(another.authorization)(),
                true,
            )
            .await;
            assert_eq!(response.status(), 422, "{}", case.key);
            assert_says(case, &error_of(response).await, another.says);
            assert_eq!(
                count_rows(&app, "connection_credential").await,
                0,
                "{}",
                case.key
            );
        }
        assert_eq!(
            status_of(&app, company_id, connection_id).await,
            ConnectionStatus::PendingAuth,
            "{}",
            case.key
        );

        let body = (case.authorization)(case.lasting);
        let response = authorize(&app, company_id, connection_id, &body, true).await;
        assert_eq!(response.status(), 200, "{}", case.key);
        assert_eq!(json(response).await["status"], "Linked", "{}", case.key);
        let calls = fake.calls();
        assert!(
            (verification.verified_by)(&calls),
            "{}: the verification's calls, last ones last: {calls:#?}",
            case.key
        );
        assert_eq!(
            stored(&app, connection_id).await["accessToken"],
            case.access,
            "{}",
            case.key
        );
        assert_eq!(fake.token_calls(), 0, "{}", case.key);

        // Without verify nothing is called.
        let calls = fake.calls().len();
        let other = new_connection(&app, company_id, case.key).await;
        assert_eq!(
            authorize(&app, company_id, other, &wrong, false)
                .await
                .status(),
            200,
            "{}",
            case.key
        );
        assert_eq!(fake.calls().len(), calls, "{}", case.key);
    }
}

/// An already expired token is verified by a refresh, whose tokens are
/// stored; an expired token whose refresh is refused is refused, storing
/// nothing.
pub async fn an_expired_token_is_verified_by_a_refresh_and_a_refused_refresh_stores_nothing(
    case: &Case,
) {
    let rotates = case
        .refresh_with
        .as_ref()
        .unwrap_or_else(|| panic!("{}: the case says how it refreshes", case.key))
        .rotates;
    for backend in backends() {
        let fake = (case.fake)().await;
        let app = spawn(case, backend, &fake, 0).await;
        set_oauth_client(&app, case.key).await;
        let company_id = new_company(&app, &format!("{} customer", case.key)).await;
        let mut expired = (case.authorization)(0);
        if let Some(fields) = expired.as_object_mut() {
            fields.remove("expiresIn");
        }
        expired["expiresAt"] = json!("2026-01-01T00:00:00Z");

        let connection_id = new_connection(&app, company_id, case.key).await;
        let response = authorize(&app, company_id, connection_id, &expired, true).await;
        assert_eq!(response.status(), 200, "{}", case.key);
        assert_eq!(fake.token_calls(), 1, "{}", case.key);
        let credentials = stored(&app, connection_id).await;
        assert_eq!(credentials["accessToken"], "at-refreshed-1", "{}", case.key);
        let refresh_token = if rotates {
            "rt-rotated-1"
        } else {
            case.refresh
        };
        assert_eq!(credentials["refreshToken"], refresh_token, "{}", case.key);
        assert!(
            fake.calls()
                .iter()
                .all(|call| call.token == "at-refreshed-1"),
            "{}: verified with the new token",
            case.key
        );

        // The refresh is refused: 422, nothing stored.
        fake.with(|inner| inner.refresh_token = "revoked-or-used-elsewhere".to_owned());
        let refused = new_connection(&app, company_id, case.key).await;
        let response = authorize(&app, company_id, refused, &expired, true).await;
        assert_eq!(response.status(), 422, "{}", case.key);
        assert_says(case, &error_of(response).await, &["invalid_grant"]);
        assert!(
            tributary::connections::open_credential(&app.db, &app.keyring, refused)
                .await
                .expect("readable")
                .is_none(),
            "{}",
            case.key
        );
    }
}
