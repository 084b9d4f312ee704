//! The platform's redirect back: refused before any exchange unless its
//! attempt holds; the code exchanged once; the organizations found.

use super::authorize::{attempt_of, filled};
use super::ending::{choose_or_complete, fail};
use super::*;

/// The platform's callback: `parameters` as sent. Refused before any token
/// exchange unless the `state` is this browser's, live, unused and issued
/// for this platform (and, for Shopify, the signature and the shop hold).
/// Returns the session, whose page then shows the organization picker or
/// how it ended.
pub async fn callback(
    db: &DatabaseConnection,
    keyring: &Keyring,
    connectors: &Connectors,
    platform_key: &str,
    parameters: &[(String, String)],
    browser: Option<&str>,
    urls: &Urls<'_>,
) -> Result<Uuid, Refusal> {
    let given = |name: &str| {
        parameters
            .iter()
            .find(|(key, _)| key == name)
            .map(|(_, value)| value.as_str())
    };
    let platform = platforms::find(platform_key).ok_or(Refusal::UnknownLink)?;
    let attempt = attempt_of(db, platform_key, given("state"), browser).await?;
    let session = session_row(db, attempt.session_id).await?;
    let owner = Owner::LinkAttempt(&attempt.state_digest);
    let secrets: AttemptSecrets =
        vault::open_json(keyring, owner, &attempt_sealed(&attempt)).map_err(Error::internal)?;
    let connector = connector_of(connectors, platform)?;
    let spec = connector
        .link_spec()
        .map_err(|why| Refusal::BadRequest(why.to_owned()))?;
    let client = if spec.in_process {
        None
    } else {
        Some(
            oauth_clients::open(db, keyring, session.client_id, platform_key)
                .await
                .map_err(Error::internal)?
                .ok_or_else(|| {
                    Refusal::Callback("The OAuth client was removed meanwhile.".to_owned())
                })?,
        )
    };
    if spec.callback_check == CallbackCheck::ShopifyHmac {
        let secret = client
            .as_ref()
            .map(|client| client.client_secret.as_str())
            .unwrap_or_default();
        let shop = given("shop").unwrap_or_default();
        if !shopify_hmac_matches(parameters, secret) {
            return Err(Refusal::Callback(
                "The callback's signature (`hmac`) does not match: it did not come from Shopify."
                    .to_owned(),
            ));
        }
        if !is_shop_domain(shop) || secrets.inputs.get("shop").map(String::as_str) != Some(shop) {
            return Err(Refusal::Callback(
                "The callback names another shop than the one you gave.".to_owned(),
            ));
        }
    }
    // Single use: the first callback to mark the attempt used goes on.
    let used = link_attempt::Entity::update_many()
        .col_expr(link_attempt::Column::Used, Expr::value(Timestamp::now()))
        .filter(link_attempt::Column::StateDigest.eq(attempt.state_digest.clone()))
        .filter(link_attempt::Column::Used.is_null())
        .exec(db)
        .await?;
    if used.rows_affected == 0 {
        return Err(Refusal::Callback(
            "This authorization has already been used; start again from your link.".to_owned(),
        ));
    }
    match status_of(&session, Timestamp::now()) {
        LinkSessionStatus::Expired => return Err(Refusal::Expired),
        LinkSessionStatus::Completed | LinkSessionStatus::Failed => {
            return Err(Refusal::BadRequest(
                "This link has already been used.".to_owned(),
            ));
        }
        LinkSessionStatus::Created | LinkSessionStatus::Opened => {}
    }
    if let Some(error) = given("error") {
        let (code, message) = if error == "access_denied" {
            (403, format!("Access to {} was declined.", platform.name))
        } else {
            (
                502,
                format!("{} ended the authorization with `{error}`.", platform.name),
            )
        };
        fail(db, &session, platform_key, None, code, &message).await?;
        return Ok(session.id);
    }
    let Some(code) = given("code").filter(|code| !code.is_empty()) else {
        fail(
            db,
            &session,
            platform_key,
            None,
            502,
            &format!("{} sent no authorization code.", platform.name),
        )
        .await?;
        return Ok(session.id);
    };
    let answer = if spec.in_process {
        if !secrets
            .sandbox_code
            .as_deref()
            .is_some_and(|stored| same_secret(stored, code))
        {
            return Err(Refusal::Callback(
                "The sandbox did not issue this code.".to_owned(),
            ));
        }
        let mut answer = serde_json::Map::new();
        answer.insert("access_token".to_owned(), random_secret().into());
        answer
    } else {
        let callback = callback_of(parameters);
        let token_url = match connector.code_token_url(&spec, &callback) {
            Ok(url) => filled(&url, &secrets.inputs),
            Err(error) => {
                fail(db, &session, platform_key, None, 502, &error.to_string()).await?;
                return Ok(session.id);
            }
        };
        let Some(client) = client.as_ref() else {
            return Err(Refusal::Callback("No OAuth client is stored.".to_owned()));
        };
        let Some(http) = connectors.http() else {
            return Err(Refusal::Callback(
                "tributary cannot reach platforms.".to_owned(),
            ));
        };
        let exchanged = code_grant::exchange_code(
            http,
            CodeExchange {
                platform: platform.name,
                token_url: &token_url,
                client_auth: spec.client_auth,
                client,
                code,
                redirect_uri: &urls.callback(platform_key),
                code_verifier: secrets.verifier.as_deref(),
            },
        )
        .await;
        match exchanged {
            Ok(answer) => answer,
            Err(error) => {
                fail(db, &session, platform_key, None, 502, &error.to_string()).await?;
                return Ok(session.id);
            }
        }
    };
    let client_id = client
        .as_ref()
        .map_or_else(|| "tributary".to_owned(), |client| client.client_id.clone());
    let grant = grant_of(answer, parameters, secrets.inputs, client_id);
    let organizations = match connector.organizations(&grant).await {
        Ok(organizations) => organizations,
        Err(error) => {
            let message =
                format!("tributary could not find which organization you consented to: {error}");
            fail(db, &session, platform_key, None, 502, &message).await?;
            return Ok(session.id);
        }
    };
    choose_or_complete(
        db,
        keyring,
        connectors,
        &session,
        platform,
        grant,
        organizations,
    )
    .await?;
    Ok(session.id)
}

/// The callback's parameters but `code`, `state` and Shopify's signature.
fn callback_of(parameters: &[(String, String)]) -> BTreeMap<String, String> {
    parameters
        .iter()
        .filter(|(name, _)| !matches!(name.as_str(), "code" | "state" | "hmac" | "signature"))
        .cloned()
        .collect()
}

/// The grant of a token answer and a callback: tokens taken out of the
/// answer's other fields (an `id_token` leaves only its claims), `code` and
/// `state` out of the callback's.
fn grant_of(
    mut answer: serde_json::Map<String, serde_json::Value>,
    parameters: &[(String, String)],
    inputs: BTreeMap<String, String>,
    client_id: String,
) -> Grant {
    let expires_in = code_grant::lifetime(&answer, Utc::now());
    let take = |answer: &mut serde_json::Map<String, serde_json::Value>, name: &str| {
        answer
            .remove(name)
            .and_then(|value| value.as_str().map(str::to_owned))
    };
    let access_token = take(&mut answer, "access_token").unwrap_or_default();
    let refresh_token = take(&mut answer, "refresh_token");
    if let Some(claims) = take(&mut answer, "id_token")
        .as_deref()
        .and_then(jwt_claims)
    {
        answer.insert(ID_TOKEN_CLAIMS.to_owned(), claims.into());
    }
    answer.remove("stripe_publishable_key");
    Grant {
        access_token,
        refresh_token,
        expires_in,
        token_fields: answer,
        callback: callback_of(parameters),
        inputs,
        client_id,
    }
}
