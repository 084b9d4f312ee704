//! The trip to the platform's authorize step: a link attempt (a new
//! single-use `state`, the PKCE verifier sealed, the browser and platform
//! it is bound to) and the URL; the sandbox's own consent page.

use super::*;

/// The customer confirmed: records a link attempt (a new `state`, the PKCE
/// verifier, what they gave) and returns the platform's authorize URL to
/// send them to.
pub async fn authorize(
    db: &impl ConnectionTrait,
    keyring: &Keyring,
    connectors: &Connectors,
    session_id: Uuid,
    browser: Option<&str>,
    inputs: BTreeMap<String, String>,
    urls: &Urls<'_>,
) -> Result<String, Refusal> {
    let row = live_session(db, session_id, browser).await?;
    let key = row
        .platform_key
        .clone()
        .or(row.chosen_platform_key.clone())
        .ok_or_else(|| Refusal::BadRequest("Choose a platform first.".to_owned()))?;
    let platform = platform_of(&key)?;
    let tenant = Tenant {
        client_id: row.client_id,
    };
    crate::links::sessions::linkable(db, connectors, tenant, platform).await?;
    let spec = connector_of(connectors, platform)?
        .link_spec()
        .map_err(|why| Refusal::BadRequest(why.to_owned()))?;
    let mut kept = BTreeMap::new();
    match spec.ask {
        Some(Ask::ShopDomain) => {
            let shop = inputs
                .get("shop")
                .map(|shop| shop.trim().to_ascii_lowercase())
                .unwrap_or_default();
            let shop = if shop.contains('.') {
                shop
            } else {
                format!("{shop}.myshopify.com")
            };
            if !is_shop_domain(&shop) {
                return Err(Refusal::BadRequest(
                    "Give your shop's myshopify.com domain, for example `acme-store.myshopify.com`."
                        .to_owned(),
                ));
            }
            kept.insert("shop".to_owned(), shop);
        }
        Some(Ask::Region(regions)) => {
            let given = inputs.get("region").map(String::as_str).unwrap_or_default();
            let Some(region) = regions.iter().find(|region| region.value == given) else {
                return Err(Refusal::BadRequest(
                    "Choose the country whose site holds your administration.".to_owned(),
                ));
            };
            kept.insert("region".to_owned(), region.value.to_owned());
            kept.insert("host".to_owned(), region.host.to_owned());
        }
        None => {}
    }
    let mut authorize_url = filled(&spec.authorize_url, &kept);
    if authorize_url.starts_with('/') {
        authorize_url = format!("{}{authorize_url}", urls.public_base);
    }
    let client_id = if spec.in_process {
        "tributary".to_owned()
    } else {
        oauth_clients::open(db, keyring, row.client_id, platform.platform_key)
            .await
            .map_err(Error::internal)?
            .map(|client| client.client_id)
            .ok_or_else(|| Refusal::BadRequest("No OAuth client is stored.".to_owned()))?
    };
    let state = random_secret();
    let state_digest = digest(&state);
    let verifier = spec.pkce.then(random_secret);
    let secrets = AttemptSecrets {
        verifier: verifier.clone(),
        inputs: kept,
        sandbox_code: None,
    };
    let sealed = vault::seal_json(keyring, Owner::LinkAttempt(&state_digest), &secrets)
        .map_err(Error::internal)?;
    let now = Timestamp::now();
    link_attempt::ActiveModel {
        state_digest: Set(state_digest),
        session_id: Set(row.id),
        platform_key: Set(platform.platform_key.to_owned()),
        browser_digest: Set(row.browser_digest.clone().unwrap_or_default()),
        key_id: Set(sealed.key_id),
        nonce: Set(sealed.nonce),
        ciphertext: Set(sealed.ciphertext),
        created: Set(now),
        expires_at: Set((now + ATTEMPT_LIFETIME).min(row.expires_at)),
        used: Set(None),
    }
    .insert(db)
    .await?;
    let mut url = url::Url::parse(&authorize_url)
        .map_err(|_| Error::internal(anyhow::anyhow!("{key}'s authorize URL is not a URL")))?;
    {
        let mut query = url.query_pairs_mut();
        query
            .append_pair("response_type", "code")
            .append_pair("client_id", &client_id)
            .append_pair("redirect_uri", &urls.callback(platform.platform_key));
        if !spec.scopes.is_empty() {
            query.append_pair("scope", &spec.scopes.join(spec.scope_separator));
        }
        query.append_pair("state", &state);
        if let Some(verifier) = &verifier {
            query
                .append_pair("code_challenge", &challenge_of(verifier))
                .append_pair("code_challenge_method", "S256");
        }
        for (name, value) in spec.authorize_parameters {
            query.append_pair(name, value);
        }
    }
    Ok(url.into())
}

/// `url` with each `{name}` replaced by what the customer gave under `name`
/// (the shop's domain, the region's host), all checked before.
pub(super) fn filled(url: &str, inputs: &BTreeMap<String, String>) -> String {
    inputs.iter().fold(url.to_owned(), |url, (name, value)| {
        url.replace(&format!("{{{name}}}"), value)
    })
}

/// The PKCE S256 challenge of a verifier (RFC 7636 §4.2).
pub fn challenge_of(verifier: &str) -> String {
    URL_SAFE_NO_PAD.encode(Sha256::digest(verifier.as_bytes()))
}

/// A live, unused attempt of `state`, for this browser and platform.
pub(super) async fn attempt_of(
    db: &impl ConnectionTrait,
    platform_key: &str,
    state: Option<&str>,
    browser: Option<&str>,
) -> Result<link_attempt::Model, Refusal> {
    let Some(state) = state.filter(|state| !state.is_empty()) else {
        return Err(Refusal::Callback(
            "The platform sent no `state`: this is not the end of a link started here.".to_owned(),
        ));
    };
    let attempt = link_attempt::Entity::find_by_id(digest(state))
        .one(db)
        .await?
        .ok_or_else(|| {
            Refusal::Callback(
                "This authorization was not started here (unknown `state`).".to_owned(),
            )
        })?;
    if attempt.platform_key != platform_key {
        return Err(Refusal::Callback(format!(
            "This authorization was started for another platform than {platform_key}."
        )));
    }
    if !browser.is_some_and(|browser| same_secret(&attempt.browser_digest, browser)) {
        return Err(Refusal::OtherBrowser);
    }
    if attempt.used.is_some() {
        return Err(Refusal::Callback(
            "This authorization has already been used; start again from your link.".to_owned(),
        ));
    }
    if Timestamp::now() >= attempt.expires_at {
        return Err(Refusal::Callback(
            "This authorization took too long; start again from your link.".to_owned(),
        ));
    }
    Ok(attempt)
}

/// Whether the sandbox's consent page may be shown for `state` in this
/// browser (a live, unused attempt of the sandbox).
pub async fn sandbox_consent_allowed(
    db: &impl ConnectionTrait,
    state: &str,
    browser: Option<&str>,
) -> Result<(), Refusal> {
    attempt_of(db, "sandbox", Some(state), browser)
        .await
        .map(|_| ())
}

/// The sandbox's consent page was answered: returns where to send the
/// browser (the sandbox's callback, with a code or `error=access_denied`).
pub async fn sandbox_consent(
    db: &impl ConnectionTrait,
    keyring: &Keyring,
    state: &str,
    browser: Option<&str>,
    approved: bool,
    urls: &Urls<'_>,
) -> Result<String, Refusal> {
    let attempt = attempt_of(db, "sandbox", Some(state), browser).await?;
    let mut callback = url::Url::parse(&urls.callback("sandbox"))
        .map_err(|_| Error::internal(anyhow::anyhow!("the sandbox callback is not a URL")))?;
    if approved {
        let owner = Owner::LinkAttempt(&attempt.state_digest);
        let mut secrets: AttemptSecrets =
            vault::open_json(keyring, owner, &attempt_sealed(&attempt)).map_err(Error::internal)?;
        let code = random_secret();
        secrets.sandbox_code = Some(digest(&code));
        let sealed = vault::seal_json(keyring, owner, &secrets).map_err(Error::internal)?;
        link_attempt::Entity::update_many()
            .col_expr(link_attempt::Column::KeyId, Expr::value(sealed.key_id))
            .col_expr(link_attempt::Column::Nonce, Expr::value(sealed.nonce))
            .col_expr(
                link_attempt::Column::Ciphertext,
                Expr::value(sealed.ciphertext),
            )
            .filter(link_attempt::Column::StateDigest.eq(attempt.state_digest.clone()))
            .filter(link_attempt::Column::Used.is_null())
            .exec(db)
            .await?;
        callback
            .query_pairs_mut()
            .append_pair("code", &code)
            .append_pair("state", state);
    } else {
        callback
            .query_pairs_mut()
            .append_pair("error", "access_denied")
            .append_pair("state", state);
    }
    Ok(callback.into())
}
