//! How a session ends: the organization chosen, the connection linked
//! (or repaired) and the others let go, or the session failed; each
//! announced through the outbox.

use super::*;

/// With one organization (or the session's connection's), completes; with
/// several, keeps the grant sealed and shows the picker.
pub(super) async fn choose_or_complete(
    db: &DatabaseConnection,
    keyring: &Keyring,
    connectors: &Connectors,
    session: &link_session::Model,
    platform: &'static Platform,
    grant: Grant,
    organizations: Vec<Organization>,
) -> Result<(), Refusal> {
    let key = platform.platform_key;
    if organizations.is_empty() {
        let message = format!("The consent at {} reached no organization.", platform.name);
        return fail(db, session, key, None, 502, &message).await;
    }
    if let Some(connection_id) = session.connection_id {
        let wanted = connections::credentials::organization_of(db, connection_id).await?;
        if let Some(wanted) = wanted {
            let Some(chosen) = organizations
                .iter()
                .find(|organization| organization.id.eq_ignore_ascii_case(&wanted))
                .cloned()
            else {
                let offered: Vec<&str> =
                    organizations.iter().map(|org| org.name.as_str()).collect();
                let message = format!(
                    "This connection is to organization `{wanted}`, but the consent at {} was for {}. \
                     Sign in to {} as the organization this connection links, or link the other \
                     organization as a new connection.",
                    platform.name,
                    offered.join(", "),
                    platform.name
                );
                release_all(connectors, platform, &grant, None).await;
                return fail(db, session, key, Some(connection_id), 409, &message).await;
            };
            return complete(db, keyring, connectors, session, platform, grant, chosen).await;
        }
    }
    if organizations.len() == 1 {
        let chosen = organizations[0].clone();
        return complete(db, keyring, connectors, session, platform, grant, chosen).await;
    }
    let sealed = vault::seal_json(keyring, Owner::LinkSession(session.id), &Pending { grant })
        .map_err(Error::internal)?;
    let listed = serde_json::to_string(&organizations).map_err(Error::internal)?;
    link_session::Entity::update_many()
        .col_expr(link_session::Column::Organizations, Expr::value(listed))
        .col_expr(link_session::Column::GrantKeyId, Expr::value(sealed.key_id))
        .col_expr(link_session::Column::GrantNonce, Expr::value(sealed.nonce))
        .col_expr(
            link_session::Column::GrantCiphertext,
            Expr::value(sealed.ciphertext),
        )
        .filter(link_session::Column::Id.eq(session.id))
        .exec(db)
        .await?;
    Ok(())
}

/// The customer chose one of several organizations.
pub async fn choose_organization(
    db: &DatabaseConnection,
    keyring: &Keyring,
    connectors: &Connectors,
    session_id: Uuid,
    browser: Option<&str>,
    organization_id: &str,
) -> Result<(), Refusal> {
    let session = live_session(db, session_id, browser).await?;
    let (Some(listed), Some(sealed)) = (&session.organizations, session_sealed(&session)) else {
        return Err(Refusal::BadRequest(
            "There is no organization to choose.".to_owned(),
        ));
    };
    let organizations: Vec<Organization> = serde_json::from_str(listed).map_err(Error::internal)?;
    let Some(chosen) = organizations
        .iter()
        .find(|organization| organization.id == organization_id)
        .cloned()
    else {
        return Err(Refusal::BadRequest(
            "Choose one of the organizations listed.".to_owned(),
        ));
    };
    let pending: Pending = vault::open_json(keyring, Owner::LinkSession(session.id), &sealed)
        .map_err(Error::internal)?;
    let key = session
        .platform_key
        .clone()
        .or(session.chosen_platform_key.clone())
        .unwrap_or_default();
    let platform = platform_of(&key)?;
    complete(
        db,
        keyring,
        connectors,
        &session,
        platform,
        pending.grant,
        chosen,
    )
    .await
}

/// Lets go of every organization the grant reached but `keep` (all of them
/// when the flow failed).
async fn release_all(
    connectors: &Connectors,
    platform: &Platform,
    grant: &Grant,
    keep: Option<&Organization>,
) {
    if let Some(connector) = connectors.get(platform.platform_key)
        && let Err(error) = connector.release(grant, keep).await
    {
        tracing::warn!(platform = platform.platform_key, error = %error, "letting go of consented organizations failed");
    }
}

/// Links the chosen organization: the session's own connection repaired in
/// place, or a new connection of the company (refused when that
/// organization is already linked in it); lets go of the others; queues
/// the first link's data types.
async fn complete(
    db: &DatabaseConnection,
    keyring: &Keyring,
    connectors: &Connectors,
    session: &link_session::Model,
    platform: &'static Platform,
    grant: Grant,
    chosen: Organization,
) -> Result<(), Refusal> {
    let key = platform.platform_key;
    let tenant = Tenant {
        client_id: session.client_id,
    };
    let connector = connector_of(connectors, platform)?;
    let body = connector.link_body(&grant, &chosen);
    let Some(body_kind) = platform.authorization else {
        return fail(
            db,
            session,
            key,
            None,
            501,
            "This platform's authorization cannot be stored.",
        )
        .await;
    };
    let now = Timestamp::now();
    let accepted = match body_kind.accept(body, now) {
        Ok(accepted) => accepted,
        Err(error) => {
            tracing::warn!(platform = key, error = %error, "a linked grant is not a valid authorization body");
            release_all(connectors, platform, &grant, None).await;
            let message = format!(
                "{} answered with tokens tributary cannot store.",
                platform.name
            );
            return fail(db, session, key, session.connection_id, 502, &message).await;
        }
    };
    let txn = db.begin().await?;
    // The session's row first: it is the write that makes this completion
    // the only one (and SQLite's write lock is taken before any read).
    let claimed = link_session::Entity::update_many()
        .col_expr(
            link_session::Column::Status,
            Expr::value(LinkSessionStatus::Completed.stored()),
        )
        .filter(link_session::Column::Id.eq(session.id))
        .filter(link_session::Column::Status.is_in(["Created", "Opened"]))
        .exec(&txn)
        .await?;
    if claimed.rows_affected == 0 {
        return Err(Refusal::BadRequest(
            "This link has already been used.".to_owned(),
        ));
    }
    let (row, first_link) = match session.connection_id {
        Some(connection_id) => {
            let row = connections::find(&txn, tenant, session.company_id, connection_id)
                .await?
                .connection;
            if !matches!(
                row.status,
                ConnectionStatus::PendingAuth | ConnectionStatus::Deauthorized
            ) {
                drop(txn);
                let message = format!(
                    "Connection {connection_id} is {:?} now: there is nothing to repair.",
                    row.status
                );
                return fail(db, session, key, Some(connection_id), 409, &message).await;
            }
            let first = connections::credentials::organization_of(&txn, row.id)
                .await?
                .is_none();
            (row, first)
        }
        None => {
            for existing in connections::of_platform(&txn, session.company_id, key).await? {
                let organization =
                    connections::credentials::organization_of(&txn, existing.id).await?;
                if organization
                    .is_some_and(|org| org.eq_ignore_ascii_case(&accepted.organization_id))
                {
                    drop(txn);
                    release_all(connectors, platform, &grant, None).await;
                    let message = format!(
                        "{} is already linked in this company (connection {}); repair that connection instead of adding another.",
                        chosen.name, existing.id
                    );
                    return fail(db, session, key, Some(existing.id), 409, &message).await;
                }
            }
            (
                connections::insert(&txn, tenant, session.company_id, key).await?,
                true,
            )
        }
    };
    let linked =
        connections::authorization::link(&txn, keyring, tenant, row, &accepted, now).await?;
    ended_update()
        .col_expr(
            link_session::Column::ResultConnectionId,
            Expr::value(linked.id),
        )
        .col_expr(
            link_session::Column::ChosenPlatformKey,
            Expr::value(key.to_owned()),
        )
        .col_expr(link_session::Column::StatusCode, Expr::value(200))
        .col_expr(link_session::Column::Ended, Expr::value(now))
        .filter(link_session::Column::Id.eq(session.id))
        .exec(&txn)
        .await?;
    txn.commit().await?;
    // Every consent is narrowed to the one organization linked (Xero may
    // have connected practices the picker did not offer).
    release_all(connectors, platform, &grant, Some(&chosen)).await;
    if first_link {
        let settings = settings::get(db, session.client_id).await?;
        let data_types = settings.first_link_data_types(platform.data_types);
        operations::queue_first_link(db, tenant, session.company_id, linked.id, &data_types)
            .await?;
    }
    Ok(())
}

/// An update of a session that ends it: the grant kept for the picker is
/// dropped with it.
fn ended_update() -> sea_orm::UpdateMany<link_session::Entity> {
    link_session::Entity::update_many()
        .col_expr(
            link_session::Column::GrantKeyId,
            Expr::value(Option::<String>::None),
        )
        .col_expr(
            link_session::Column::GrantNonce,
            Expr::value(Option::<Vec<u8>>::None),
        )
        .col_expr(
            link_session::Column::GrantCiphertext,
            Expr::value(Option::<Vec<u8>>::None),
        )
}

/// Ends the session failed, with the status code its redirect carries and
/// why, announcing `connection.failed`.
pub(super) async fn fail(
    db: &DatabaseConnection,
    session: &link_session::Model,
    platform_key: &str,
    connection_id: Option<Uuid>,
    status_code: u16,
    message: &str,
) -> Result<(), Refusal> {
    let now: DateTime<Utc> = Timestamp::now();
    let txn = db.begin().await?;
    let ended = ended_update()
        .col_expr(
            link_session::Column::Status,
            Expr::value(LinkSessionStatus::Failed.stored()),
        )
        .col_expr(
            link_session::Column::Failure,
            Expr::value(message.to_owned()),
        )
        .col_expr(
            link_session::Column::StatusCode,
            Expr::value(i32::from(status_code)),
        )
        .col_expr(
            link_session::Column::ChosenPlatformKey,
            Expr::value(platform_key.to_owned()),
        )
        .col_expr(
            link_session::Column::ResultConnectionId,
            Expr::value(connection_id),
        )
        .col_expr(link_session::Column::Ended, Expr::value(now))
        .filter(link_session::Column::Id.eq(session.id))
        .filter(link_session::Column::Status.is_in(["Created", "Opened"]))
        .exec(&txn)
        .await?;
    if ended.rows_affected == 1 {
        let data = serde_json::json!({
            "companyId": session.company_id,
            "connectionId": connection_id.or(session.connection_id),
            "platformKey": platform_key,
            "linkSessionId": session.id,
            "statusCode": status_code,
            "errorMessage": message,
        });
        webhooks::record(
            &txn,
            Event::new(EventType::ConnectionFailed, session.client_id, data),
        )
        .await?;
    }
    txn.commit().await?;
    Ok(())
}

/// The ending of a session, for the outcome page and the redirect (or
/// `None` while it has not ended).
pub async fn ending_of(
    db: &impl ConnectionTrait,
    session_id: Uuid,
    browser: Option<&str>,
) -> Result<Option<Ending>, Refusal> {
    let row = bound_session(db, session_id, browser).await?;
    match status_of(&row, Timestamp::now()) {
        LinkSessionStatus::Completed | LinkSessionStatus::Failed => {
            let context = context_of(db, &row).await?;
            Ok(Some(ending(&row, context)))
        }
        _ => Ok(None),
    }
}
