//! `tributary encryption-key rotate`: every stored secret re-sealed under
//! the first key.

use super::GlobalOptions;
use crate::{connections, crypto, managed_migrations, oauth_clients, webhooks};

/// With a key file, rotation adds a fresh key to it first and retires the
/// old ones once every credential has moved; with configured keys, it
/// re-encrypts under the first one.
pub(super) async fn rotate(
    db: &sea_orm::DatabaseConnection,
    global: &GlobalOptions,
) -> anyhow::Result<()> {
    let (mut keyring, source) =
        crypto::load_keyring_with_source(global.encryption_keys.as_deref(), &global.database_url)?;
    if let crypto::KeySource::File(path) = &source {
        keyring = crypto::add_key_to_file(path)?;
    }
    let rotation = connections::credentials::rotate(db, &keyring).await?;
    let clients = oauth_clients::rotate(db, &keyring).await?;
    let endpoints = webhooks::endpoints::rotate_sealing(db, &keyring).await?;
    let rows = managed_migrations::rotate(db, &keyring).await?;
    let (clients_rotated, clients_current, clients_remaining) =
        (clients.rotated, clients.current, clients.remaining);
    println!(
        "{} stored credentials re-encrypted under key `{}`; {} already were.",
        rotation.rotated,
        keyring.current_key_id(),
        rotation.current
    );
    if clients_rotated + clients_current + clients_remaining > 0 {
        println!(
            "{clients_rotated} stored OAuth client secrets re-encrypted; {clients_current} already were."
        );
    }
    if endpoints.rotated + endpoints.current + endpoints.remaining > 0 {
        println!(
            "{} webhook endpoints' signing secrets re-encrypted; {} already were.",
            endpoints.rotated, endpoints.current
        );
    }
    if rows.rotated + rows.current + rows.remaining > 0 {
        println!(
            "{} migration rows' waiting tokens re-encrypted; {} already were.",
            rows.rotated, rows.current
        );
    }
    anyhow::ensure!(
        rows.remaining == 0,
        "{} migration rows changed while rotating and are still under an older key: run the rotation again \
         before removing any key",
        rows.remaining
    );
    anyhow::ensure!(
        endpoints.remaining == 0,
        "{} webhook endpoints changed while rotating and are still under an older key: run the rotation \
         again before removing any key",
        endpoints.remaining
    );
    anyhow::ensure!(
        clients_remaining == 0,
        "{clients_remaining} OAuth clients changed while rotating and are still under an older key: run the \
         rotation again before removing any key"
    );
    anyhow::ensure!(
        rotation.remaining == 0,
        "{} credentials changed while rotating and are still under an older key: run the rotation again \
         before removing any key",
        rotation.remaining
    );
    match source {
        crypto::KeySource::File(path) => {
            crypto::retire_other_keys_in_file(&path, keyring.current_key_id())?;
            println!(
                "The key file now holds only `{}`. Restart running servers.",
                keyring.current_key_id()
            );
        }
        crypto::KeySource::Configured => println!(
            "Every credential is under `{}`; older keys can be removed from {} once servers restart with it first.",
            keyring.current_key_id(),
            crypto::KEYS_VARIABLE
        ),
    }
    Ok(())
}
