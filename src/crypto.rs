//! Encryption of secrets at rest (OAuth tokens): AES-256-GCM with a fresh
//! random nonce per value, the key id stored beside each ciphertext, and the
//! owning row's identity bound in as associated data, so a ciphertext copied
//! to another row fails to decrypt instead of yielding someone else's tokens.
//!
//! Keys come from `TRIBUTARY_ENCRYPTION_KEYS` (`id:base64key,...`; the first
//! encrypts, all decrypt). With none configured and an SQLite database, a key
//! is generated once into a key file beside the database (mode 0600); with
//! PostgreSQL and none configured, start-up refuses.

use std::fmt;
use std::path::{Path, PathBuf};

use aes_gcm::aead::{Aead, KeyInit, Payload};
use aes_gcm::{Aes256Gcm, Key, Nonce};
use anyhow::{Context, bail, ensure};
use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use rand::RngCore;

/// The variable holding the key list.
pub const KEYS_VARIABLE: &str = "TRIBUTARY_ENCRYPTION_KEYS";
const NONCE_BYTES: usize = 12;

/// One AES-256 key and its id.
struct DataKey {
    id: String,
    cipher: Aes256Gcm,
}

/// The configured keys: the first encrypts, any of them decrypts.
pub struct Keyring {
    keys: Vec<DataKey>,
}

impl fmt::Debug for Keyring {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let ids: Vec<&str> = self.keys.iter().map(|key| key.id.as_str()).collect();
        f.debug_struct("Keyring").field("key_ids", &ids).finish()
    }
}

/// A sealed value: what is stored.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Sealed {
    /// Which key sealed it.
    pub key_id: String,
    /// The random 96-bit nonce.
    pub nonce: Vec<u8>,
    /// Ciphertext with the GCM tag.
    pub ciphertext: Vec<u8>,
}

/// Why a sealed value could not be opened. Never carries plaintext.
#[derive(Debug, thiserror::Error)]
pub enum OpenError {
    /// The key that sealed it is no longer configured.
    #[error("encryption key `{0}` is not configured (set it in TRIBUTARY_ENCRYPTION_KEYS)")]
    UnknownKey(String),
    /// Authentication failed: the ciphertext, nonce or row binding was altered, or the key is wrong.
    #[error(
        "the stored secret failed authentication: it was altered, moved to another row, or the key is wrong"
    )]
    Tampered,
}

impl Keyring {
    /// Parses `id:base64key` entries (32-byte keys, standard base64)
    /// separated by commas or line breaks.
    pub fn parse(list: &str) -> anyhow::Result<Self> {
        let mut keys = Vec::new();
        for entry in list
            .split(|c: char| c == ',' || c.is_whitespace())
            .filter(|entry| !entry.is_empty())
        {
            let (id, encoded) = entry
                .split_once(':')
                .context("each encryption key must be written `id:base64key`")?;
            ensure!(
                !id.is_empty()
                    && id
                        .chars()
                        .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_'),
                "encryption key ids use letters, digits, `-` and `_` only"
            );
            ensure!(
                keys.iter().all(|key: &DataKey| key.id != id),
                "encryption key id `{id}` is listed twice"
            );
            let bytes = STANDARD
                .decode(encoded.trim())
                .with_context(|| format!("encryption key `{id}` is not valid base64"))?;
            ensure!(
                bytes.len() == 32,
                "encryption key `{id}` must be 32 bytes (AES-256), got {}",
                bytes.len()
            );
            let key: [u8; 32] = bytes.as_slice().try_into()?;
            keys.push(DataKey {
                id: id.to_owned(),
                cipher: Aes256Gcm::new(&Key::<Aes256Gcm>::from(key)),
            });
        }
        ensure!(!keys.is_empty(), "no encryption key given");
        Ok(Self { keys })
    }

    /// The id of the key that encrypts.
    pub fn current_key_id(&self) -> &str {
        &self.keys[0].id
    }

    /// Whether the key `id` is configured.
    pub fn has_key(&self, id: &str) -> bool {
        self.keys.iter().any(|key| key.id == id)
    }

    /// Encrypts `plaintext` for the row identified by `binding`.
    pub fn seal(&self, plaintext: &[u8], binding: &str) -> anyhow::Result<Sealed> {
        let key = &self.keys[0];
        let mut nonce = [0_u8; NONCE_BYTES];
        rand::rng().fill_bytes(&mut nonce);
        let ciphertext = key
            .cipher
            .encrypt(
                &Nonce::from(nonce),
                Payload {
                    msg: plaintext,
                    aad: binding.as_bytes(),
                },
            )
            .map_err(|_| anyhow::anyhow!("AES-GCM encryption failed"))?;
        Ok(Sealed {
            key_id: key.id.clone(),
            nonce: nonce.to_vec(),
            ciphertext,
        })
    }

    /// Decrypts a value sealed for `binding`.
    pub fn open(&self, sealed: &Sealed, binding: &str) -> Result<Vec<u8>, OpenError> {
        let key = self
            .keys
            .iter()
            .find(|key| key.id == sealed.key_id)
            .ok_or_else(|| OpenError::UnknownKey(sealed.key_id.clone()))?;
        let nonce: [u8; NONCE_BYTES] = sealed
            .nonce
            .as_slice()
            .try_into()
            .map_err(|_| OpenError::Tampered)?;
        key.cipher
            .decrypt(
                &Nonce::from(nonce),
                Payload {
                    msg: &sealed.ciphertext,
                    aad: binding.as_bytes(),
                },
            )
            .map_err(|_| OpenError::Tampered)
    }
}

/// A new random key, written `id:base64key`, for `TRIBUTARY_ENCRYPTION_KEYS`.
pub fn generate_key_entry() -> String {
    let mut key = [0_u8; 32];
    rand::rng().fill_bytes(&mut key);
    // Dated for people, with an independent random suffix so keys made in the
    // same second differ (ids are stored in plain text: nothing of the key).
    let suffix: u32 = rand::random();
    let id = format!(
        "k{}-{suffix:08x}",
        chrono::Utc::now().format("%Y%m%d%H%M%S")
    );
    format!("{id}:{}", STANDARD.encode(key))
}

/// Where an SQLite database's generated key file lives: beside the database.
pub fn key_file_beside(database_url: &str) -> PathBuf {
    let path = database_url
        .trim_start_matches("sqlite://")
        .trim_start_matches("sqlite:")
        .split('?')
        .next()
        .unwrap_or_default();
    let database = Path::new(path);
    match database.file_name() {
        Some(name) if !path.is_empty() && !path.contains(":memory:") => {
            let mut key_file = name.to_os_string();
            key_file.push(".key");
            database.with_file_name(key_file)
        }
        _ => PathBuf::from("tributary.db.key"),
    }
}

/// Where the keyring came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum KeySource {
    /// `TRIBUTARY_ENCRYPTION_KEYS` (or `--encryption-keys`).
    Configured,
    /// The key file beside an SQLite database.
    File(PathBuf),
}

/// Loads the keyring: from `configured` when given; otherwise, for SQLite,
/// from the key file beside the database (created on first use, mode 0600).
pub fn load_keyring(configured: Option<&str>, database_url: &str) -> anyhow::Result<Keyring> {
    load_keyring_with_source(configured, database_url).map(|(keyring, _)| keyring)
}

/// [`load_keyring`], also saying where the keys came from.
pub fn load_keyring_with_source(
    configured: Option<&str>,
    database_url: &str,
) -> anyhow::Result<(Keyring, KeySource)> {
    if let Some(list) = configured.filter(|list| !list.trim().is_empty()) {
        let keyring = Keyring::parse(list).with_context(|| format!("reading {KEYS_VARIABLE}"))?;
        return Ok((keyring, KeySource::Configured));
    }
    if !database_url.starts_with("sqlite:") {
        bail!(
            "{KEYS_VARIABLE} is not set. PostgreSQL deployments must configure their encryption keys \
             (generate one with `tributary encryption-key generate`)."
        );
    }
    let path = key_file_beside(database_url);
    if !path.exists() {
        // Written aside, then linked into place only if still absent: two
        // first starts agree on one key, and a crash leaves no empty file.
        write_private_file(
            &path,
            &format!("{}\n", generate_key_entry()),
            Placement::IfAbsent,
        )?;
        tracing::info!(path = %path.display(), "generated an encryption key file for stored tokens; back it up with the database");
    } else {
        tracing::info!(path = %path.display(), "using the encryption key file");
    }
    let keyring = read_key_file(&path)?;
    Ok((keyring, KeySource::File(path)))
}

fn read_key_file(path: &Path) -> anyhow::Result<Keyring> {
    let contents = std::fs::read_to_string(path)
        .with_context(|| format!("reading the encryption key file {}", path.display()))?;
    Keyring::parse(&contents)
        .with_context(|| format!("reading the encryption key file {}", path.display()))
}

/// Puts a new key first in the key file (the old ones stay, to decrypt),
/// and returns the resulting keyring.
pub fn add_key_to_file(path: &Path) -> anyhow::Result<Keyring> {
    let existing = std::fs::read_to_string(path)
        .with_context(|| format!("reading the encryption key file {}", path.display()))?;
    let contents = format!("{}\n{}", generate_key_entry(), existing.trim_start());
    write_private_file(path, &contents, Placement::Replace)?;
    read_key_file(path)
}

/// Leaves only the key `current_id` in the key file (after a complete rotation).
pub fn retire_other_keys_in_file(path: &Path, current_id: &str) -> anyhow::Result<()> {
    let existing = std::fs::read_to_string(path)
        .with_context(|| format!("reading the encryption key file {}", path.display()))?;
    let current = existing
        .split(|c: char| c == ',' || c.is_whitespace())
        .find(|entry| entry.split(':').next() == Some(current_id))
        .with_context(|| format!("key `{current_id}` is not in {}", path.display()))?;
    write_private_file(path, &format!("{current}\n"), Placement::Replace)
}

/// How a private file reaches its final name.
enum Placement {
    /// Only if nothing is there yet (an existing file wins).
    IfAbsent,
    /// Replacing what is there, atomically.
    Replace,
}

/// Writes `contents` to a temporary file (mode 0600) beside `path`, then
/// moves it into place, so readers never see a partial file.
fn write_private_file(path: &Path, contents: &str, placement: Placement) -> anyhow::Result<()> {
    use std::io::Write;
    let suffix: u32 = rand::random();
    let temporary = path.with_extension(format!("tmp-{suffix:08x}"));
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create_new(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.mode(0o600);
    }
    let mut file = options
        .open(&temporary)
        .with_context(|| format!("creating {}", temporary.display()))?;
    file.write_all(contents.as_bytes())
        .and_then(|()| file.sync_all())
        .with_context(|| format!("writing {}", temporary.display()))?;
    let placed = match placement {
        Placement::IfAbsent => match std::fs::hard_link(&temporary, path) {
            Err(error) if error.kind() == std::io::ErrorKind::AlreadyExists => Ok(()),
            other => other,
        },
        Placement::Replace => std::fs::rename(&temporary, path),
    };
    let _ = std::fs::remove_file(&temporary);
    placed.with_context(|| format!("writing the encryption key file {}", path.display()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn keyring(list: &str) -> Keyring {
        Keyring::parse(list).expect("valid keys")
    }

    fn entry(id: &str, byte: u8) -> String {
        format!("{id}:{}", STANDARD.encode([byte; 32]))
    }

    #[test]
    fn sealed_values_open_only_for_their_row() {
        let keys = keyring(&entry("a", 1));
        let sealed = keys.seal(b"access-token", "connection/1").expect("sealed");
        assert_eq!(sealed.key_id, "a");
        assert_eq!(
            keys.open(&sealed, "connection/1").expect("opens"),
            b"access-token"
        );
        assert!(matches!(
            keys.open(&sealed, "connection/2"),
            Err(OpenError::Tampered)
        ));
    }

    #[test]
    fn each_seal_uses_a_fresh_nonce() {
        let keys = keyring(&entry("a", 1));
        let first = keys.seal(b"same", "row").expect("sealed");
        let second = keys.seal(b"same", "row").expect("sealed");
        assert_ne!(first.nonce, second.nonce);
        assert_ne!(first.ciphertext, second.ciphertext);
    }

    #[test]
    fn altered_ciphertext_fails_loudly() {
        let keys = keyring(&entry("a", 1));
        let mut sealed = keys.seal(b"token", "row").expect("sealed");
        sealed.ciphertext[0] ^= 1;
        assert!(matches!(
            keys.open(&sealed, "row"),
            Err(OpenError::Tampered)
        ));
    }

    #[test]
    fn the_first_key_encrypts_and_every_key_decrypts() {
        let old = keyring(&entry("old", 1));
        let sealed_with_old = old.seal(b"token", "row").expect("sealed");
        let rotated = keyring(&format!("{},{}", entry("new", 2), entry("old", 1)));
        assert_eq!(rotated.current_key_id(), "new");
        assert_eq!(
            rotated.open(&sealed_with_old, "row").expect("opens"),
            b"token"
        );
        let without_old = keyring(&entry("new", 2));
        assert!(
            matches!(without_old.open(&sealed_with_old, "row"), Err(OpenError::UnknownKey(id)) if id == "old")
        );
    }

    #[test]
    fn malformed_key_lists_are_rejected() {
        for list in [
            "",
            "nokey",
            "a:not-base64!",
            &format!("a:{}", STANDARD.encode([0; 16])),
            &format!("{},{}", entry("a", 1), entry("a", 2)),
        ] {
            assert!(Keyring::parse(list).is_err(), "{list}");
        }
    }

    #[test]
    fn generated_keys_parse_and_have_distinct_ids() {
        let (first, second) = (generate_key_entry(), generate_key_entry());
        let keys = keyring(&format!("{first},{second}"));
        assert_ne!(keys.keys[0].id, keys.keys[1].id);
    }

    #[test]
    fn key_files_gain_a_first_key_and_retire_the_others() {
        let dir = tempfile_dir();
        let path = dir.join("t.db.key");
        write_private_file(
            &path,
            &format!("{}\n", entry("old", 1)),
            Placement::IfAbsent,
        )
        .expect("written");
        // A second first start keeps the first key.
        write_private_file(
            &path,
            &format!("{}\n", entry("other", 2)),
            Placement::IfAbsent,
        )
        .expect("kept");
        let rotated = add_key_to_file(&path).expect("added");
        assert_ne!(rotated.current_key_id(), "old");
        assert!(rotated.has_key("old") && !rotated.has_key("other"));
        retire_other_keys_in_file(&path, rotated.current_key_id()).expect("retired");
        let retired = read_key_file(&path).expect("readable");
        assert!(!retired.has_key("old") && retired.has_key(rotated.current_key_id()));
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = std::fs::metadata(&path)
                .expect("metadata")
                .permissions()
                .mode();
            assert_eq!(mode & 0o777, 0o600);
        }
        let _ = std::fs::remove_dir_all(dir);
    }

    fn tempfile_dir() -> PathBuf {
        let dir =
            std::env::temp_dir().join(format!("tributary-crypto-{:08x}", rand::random::<u32>()));
        std::fs::create_dir_all(&dir).expect("a directory");
        dir
    }

    #[test]
    fn the_key_file_sits_beside_the_database() {
        assert_eq!(
            key_file_beside("sqlite://data/tributary.db?mode=rwc"),
            PathBuf::from("data/tributary.db.key")
        );
        assert_eq!(
            key_file_beside("sqlite://tributary.db?mode=rwc"),
            PathBuf::from("tributary.db.key")
        );
    }
}
