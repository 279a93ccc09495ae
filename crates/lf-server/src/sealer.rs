//! Saved connections' secrets at rest: lf-workflow's [`SecretSealer`] with
//! XChaCha20-Poly1305 (RustCrypto's `chacha20poly1305`) under the server's
//! secret key.
//!
//! The key is `LENSERFIGHT_SECRET_KEY` (its file key `secret_key`, its flag
//! `--secret-key`): 32 bytes written as 64 hex digits or in base64. When it
//! is unset, the key lives in the file `secret.key` in the data directory
//! (beside the default database), created with mode 0600 the first time a
//! secret is sealed or opened, and read again afterwards; a key file other
//! users can read is refused. Several servers on one database need the
//! same key: copy the file, or set the variable to its contents.
//!
//! A sealed secret is `1 (format) ‖ key id (8) ‖ nonce (24) ‖ ciphertext
//! and tag`. The key id (the first 8 bytes of a SHA-256 of the key) tells
//! "sealed under another key" from "changed since": both are an error that
//! says so, never a wrong secret. The format byte, the key id and the
//! connection's owner and ref ([`SealBinding`]) are authenticated with the
//! secret, so a sealed secret moved to another connection does not open.
//! Secrets are never logged: nothing here formats one.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use base64::Engine;
use chacha20poly1305::aead::{Aead, Generate, Payload};
use chacha20poly1305::{Key, KeyInit, XChaCha20Poly1305, XNonce};
use lf_core::{ErrorCode, LfError, LfResult};
use lf_workflow::{SealBinding, SealedSecret, Secret, SecretSealer};
use sha2::{Digest, Sha256};
use zeroize::Zeroizing;

use crate::settings::{ConfigError, Setting};

/// The key file's name, in the data directory.
pub const KEY_FILE: &str = "secret.key";

const FORMAT: u8 = 1;
const KEY_ID: usize = 8;
const NONCE: usize = 24;
const TAG: usize = 16;
const HEADER: usize = 1 + KEY_ID;

/// The key connection secrets are sealed under: 32 bytes, wiped when
/// dropped, never printed.
#[derive(Clone)]
pub struct SecretKey {
    bytes: Zeroizing<[u8; 32]>,
    id: [u8; KEY_ID],
}

impl SecretKey {
    /// A key written as 64 hex digits, or 32 bytes in base64 (standard or
    /// URL-safe, padded or not), surrounding white space ignored. The
    /// error never repeats the value.
    pub fn parse(text: &str) -> Result<Self, String> {
        let text = text.trim();
        let decoded = if text.len() == 64 && text.bytes().all(|b| b.is_ascii_hexdigit()) {
            hex::decode(text).ok()
        } else {
            use base64::engine::general_purpose::{STANDARD, STANDARD_NO_PAD, URL_SAFE, URL_SAFE_NO_PAD};
            [STANDARD, STANDARD_NO_PAD, URL_SAFE, URL_SAFE_NO_PAD].iter().find_map(|e| e.decode(text).ok())
        };
        let decoded = Zeroizing::new(decoded.unwrap_or_default());
        let bytes: [u8; 32] = decoded.as_slice().try_into().map_err(|_| {
            format!(
                "must be 32 bytes written as 64 hex digits or in base64 (44 characters), as `openssl rand -hex 32` prints; got {} characters that are not",
                text.chars().count()
            )
        })?;
        Ok(Self::from_bytes(bytes))
    }

    /// A new random key, from the operating system's generator.
    pub fn generate() -> Result<Self, String> {
        let key = Key::try_generate().map_err(|e| format!("the OS random generator failed: {e}"))?;
        Ok(Self::from_bytes(key.into()))
    }

    fn from_bytes(bytes: [u8; 32]) -> Self {
        let digest =
            Sha256::new().chain_update(b"lenserfight secret key id v1\0").chain_update(bytes).finalize();
        let mut id = [0; KEY_ID];
        id.copy_from_slice(&digest[..KEY_ID]);
        Self { bytes: Zeroizing::new(bytes), id }
    }

    /// The key as the key file holds it: 64 hex digits.
    fn to_hex(&self) -> Zeroizing<String> {
        Zeroizing::new(hex::encode(*self.bytes))
    }

    fn cipher(&self) -> XChaCha20Poly1305 {
        XChaCha20Poly1305::new(&Key::from(*self.bytes))
    }
}

impl std::fmt::Debug for SecretKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("SecretKey([redacted])")
    }
}

/// Where the key comes from.
#[derive(Clone, Debug)]
enum Source {
    /// `LENSERFIGHT_SECRET_KEY` (or its file key or flag).
    Setting(SecretKey),
    /// The key file at this path, created when first needed.
    File(PathBuf),
    /// No setting, and no data directory to keep a key file in: why.
    Nowhere(String),
}

/// The server's [`SecretSealer`]. Cheap to make: a key file is read (or
/// created) the first time a secret is sealed or opened, or when
/// [`KeySealer::key`] is called.
#[derive(Debug)]
pub struct KeySealer {
    source: Source,
    key: OnceLock<SecretKey>,
}

impl KeySealer {
    /// A sealer under `key` (`LENSERFIGHT_SECRET_KEY`), or, without one,
    /// under the key file in the data directory.
    pub fn new(key: Option<SecretKey>) -> Self {
        let source = match key {
            Some(k) => Source::Setting(k),
            None => match lf_store::data_dir() {
                Ok(dir) => Source::File(dir.join(KEY_FILE)),
                Err(e) => Source::Nowhere(e.message().to_owned()),
            },
        };
        Self { source, key: OnceLock::new() }
    }

    /// A sealer under the key file at `path` (created when first needed).
    pub fn with_key_file(path: impl Into<PathBuf>) -> Self {
        Self { source: Source::File(path.into()), key: OnceLock::new() }
    }

    /// The key file this sealer reads, when the key is not given by
    /// `LENSERFIGHT_SECRET_KEY`.
    pub fn key_file(&self) -> Option<&Path> {
        match &self.source {
            Source::File(p) => Some(p),
            _ => None,
        }
    }

    /// The key: the setting's, or the key file's (created now when there
    /// is none). An error names `LENSERFIGHT_SECRET_KEY`, and the file.
    pub fn key(&self) -> Result<&SecretKey, ConfigError> {
        if let Some(k) = self.key.get() {
            return Ok(k);
        }
        let key = match &self.source {
            Source::Setting(k) => k.clone(),
            Source::File(path) => {
                load_or_create(path).map_err(|m| ConfigError::value(Setting::SecretKey, m))?
            }
            Source::Nowhere(why) => {
                return Err(ConfigError::value(
                    Setting::SecretKey,
                    format!("unset, and there is no data directory for its key file: {why}"),
                ));
            }
        };
        // Another thread may have set it meanwhile: the same key, since the
        // file is created once.
        Ok(self.key.get_or_init(|| key))
    }

    fn key_for_use(&self) -> LfResult<&SecretKey> {
        self.key().map_err(|e| {
            LfError::new(
                ErrorCode::Internal,
                "The server's secret key for saved connections cannot be loaded: the operator must set LENSERFIGHT_SECRET_KEY or fix the key file named in the server's log.",
            )
            .with_source(e)
        })
    }
}

/// The key in the file at `path`, or a new one written there (mode 0600,
/// whole or not at all: written aside, then linked into place, so that of
/// several processes starting at once one key wins and every one reads it).
fn load_or_create(path: &Path) -> Result<SecretKey, String> {
    match read_key_file(path) {
        Ok(Some(key)) => return Ok(key),
        Ok(None) => {}
        Err(e) => return Err(e),
    }
    let key = SecretKey::generate()?;
    let dir = path.parent().filter(|d| !d.as_os_str().is_empty()).unwrap_or(Path::new("."));
    std::fs::create_dir_all(dir).map_err(|e| {
        format!("unset, and the directory {} of its key file cannot be made: {e}", dir.display())
    })?;
    let tag = <[u8; 8]>::try_generate().map_err(|e| format!("the OS random generator failed: {e}"))?;
    let aside = dir.join(format!(".{KEY_FILE}.{}.new", hex::encode(tag)));
    if let Err(e) = write_private(&aside, key.to_hex().as_bytes()) {
        let _ = std::fs::remove_file(&aside);
        return Err(format!("unset, and its key file cannot be written in {}: {e}", dir.display()));
    }
    let linked = std::fs::hard_link(&aside, path);
    let _ = std::fs::remove_file(&aside);
    match linked {
        Ok(()) => {
            tracing::info!(key_file = %path.display(), "created the secret key for saved connections (mode 0600); keep it: without it their secrets cannot be opened");
            Ok(key)
        }
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => read_key_file(path)?
            .ok_or_else(|| format!("the key file {} vanished while it was made", path.display())),
        Err(e) => Err(format!("unset, and its key file {} cannot be written: {e}", path.display())),
    }
}

/// The key in the file at `path`; `None` when there is no such file.
fn read_key_file(path: &Path) -> Result<Option<SecretKey>, String> {
    let text = match std::fs::read_to_string(path) {
        Ok(t) => Zeroizing::new(t),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(format!("unset, and its key file {} cannot be read: {e}", path.display())),
    };
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode =
            std::fs::metadata(path).map_err(|e| format!("{}: {e}", path.display()))?.permissions().mode();
        if mode & 0o077 != 0 {
            return Err(format!(
                "unset, and its key file {} can be read by other users (mode {:o}): run chmod 600 {}",
                path.display(),
                mode & 0o777,
                path.display()
            ));
        }
    }
    SecretKey::parse(&text).map(Some).map_err(|e| format!("the key file {}: {e}", path.display()))
}

/// Writes `bytes` to a new file at `path` readable by its owner only.
fn write_private(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create_new(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
    let mut file = options.open(path)?;
    file.write_all(bytes)?;
    file.write_all(b"\n")?;
    file.sync_all()
}

/// What a sealed secret's tag authenticates besides the secret: its
/// header (format and key id), then the connection's binding.
fn associated_data(header: &[u8], to: SealBinding<'_>) -> Vec<u8> {
    let mut aad = header.to_vec();
    aad.extend(to.associated_data());
    aad
}

/// The error of a secret that does not open, naming its connection.
fn unopened(to: SealBinding<'_>, why: &str) -> LfError {
    LfError::new(
        ErrorCode::Internal,
        format!(
            "The secret of connection {} cannot be opened: {why}",
            LfError::excerpt(to.connection_ref.as_str())
        ),
    )
}

impl SecretSealer for KeySealer {
    fn seal(&self, secret: &Secret, to: SealBinding<'_>) -> LfResult<SealedSecret> {
        let key = self.key_for_use()?;
        let nonce = XNonce::try_generate()
            .map_err(|e| LfError::internal(format!("the OS random generator failed: {e}")))?;
        let mut out = Vec::with_capacity(HEADER + NONCE + secret.expose().len() + TAG);
        out.push(FORMAT);
        out.extend_from_slice(&key.id);
        let aad = associated_data(&out, to);
        let sealed = key
            .cipher()
            .encrypt(&nonce, Payload { msg: secret.expose(), aad: &aad })
            .map_err(|_| LfError::internal("sealing a connection secret failed"))?;
        out.extend_from_slice(&nonce);
        out.extend(sealed);
        Ok(SealedSecret::from_bytes(out))
    }

    fn open(&self, sealed: &SealedSecret, to: SealBinding<'_>) -> LfResult<Secret> {
        let key = self.key_for_use()?;
        let b = sealed.as_bytes();
        if b.len() < HEADER + NONCE + TAG || b[0] != FORMAT {
            return Err(unopened(
                to,
                "it is not in a form this server reads (it was not saved by this server, or its row was changed). Save the connection again: connection remove, then connection add.",
            ));
        }
        if b[1..HEADER] != key.id {
            return Err(unopened(
                to,
                "it was saved under another secret key than this server's. Start the server with the key it was saved under (LENSERFIGHT_SECRET_KEY, or the key file of the data directory it was saved with), or save the connection again.",
            ));
        }
        let (header, rest) = b.split_at(HEADER);
        let (nonce, ciphertext) = rest.split_at(NONCE);
        let nonce = XNonce::try_from(nonce).map_err(|_| LfError::internal("a nonce of the wrong length"))?;
        let aad = associated_data(header, to);
        let opened = key.cipher().decrypt(&nonce, Payload { msg: ciphertext, aad: &aad }).map_err(|_| {
            unopened(
                to,
                "its bytes were changed, or it was saved for another connection. Save the connection again: connection remove, then connection add.",
            )
        })?;
        // An mcp connection to a server that asks for no credentials has none.
        if opened.is_empty() {
            return Ok(Secret::empty());
        }
        Secret::new(opened)
    }
}

#[cfg(test)]
mod tests {
    use lf_core::LenserId;
    use lf_workflow::ConnectionRef;

    use super::*;

    const HEX: &str = "000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f";

    fn binding(r: &ConnectionRef) -> SealBinding<'_> {
        SealBinding { owner: LenserId::from_uuid(uuid_of(7)), connection_ref: r }
    }

    fn uuid_of(n: u8) -> lf_core::__private::Uuid {
        lf_core::__private::Uuid::from_bytes([n; 16])
    }

    #[test]
    fn keys_parse_as_hex_or_base64_and_never_echo() {
        let hex = SecretKey::parse(HEX).unwrap();
        let b64 = SecretKey::parse(" AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8= \n").unwrap();
        assert_eq!(*hex.bytes, *b64.bytes);
        assert_eq!(hex.id, b64.id);
        assert_eq!(SecretKey::parse("AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8").unwrap().id, hex.id);
        for bad in
            ["", "hunter2", &HEX[..62], &format!("{HEX}00"), "AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwd"]
        {
            let e = SecretKey::parse(bad).unwrap_err();
            assert!(e.starts_with("must be 32 bytes written as 64 hex digits or in base64"), "{e}");
            assert!(bad.is_empty() || !e.contains(bad), "the value is not repeated: {e}");
        }
        assert_eq!(format!("{hex:?}"), "SecretKey([redacted])");
    }

    #[test]
    fn sealed_secrets_open_only_with_their_key_and_binding() {
        let sealer = KeySealer::new(Some(SecretKey::parse(HEX).unwrap()));
        let r = ConnectionRef::parse("ref", "team-slack").unwrap();
        let secret = Secret::new(b"https://hooks.slack.example/T000/B000/XXXX".to_vec()).unwrap();
        let sealed = sealer.seal(&secret, binding(&r)).unwrap();
        assert_eq!(sealed.as_bytes().len(), HEADER + NONCE + secret.expose().len() + TAG);
        assert!(!sealed.as_bytes().windows(5).any(|w| w == b"hooks"), "no plaintext in the sealed bytes");
        assert_ne!(sealer.seal(&secret, binding(&r)).unwrap(), sealed, "a fresh nonce each time");
        assert_eq!(sealer.open(&sealed, binding(&r)).unwrap().expose(), secret.expose());

        let other_key = KeySealer::new(Some(SecretKey::generate().unwrap()));
        let e = other_key.open(&sealed, binding(&r)).unwrap_err();
        assert!(e.message().contains("saved under another secret key"), "{}", e.message());
        assert!(e.message().contains("\"team-slack\""), "{}", e.message());

        let elsewhere = ConnectionRef::parse("ref", "other").unwrap();
        let e = sealer.open(&sealed, binding(&elsewhere)).unwrap_err();
        assert!(e.message().contains("saved for another connection"), "{}", e.message());

        let mut changed = sealed.clone().into_bytes();
        *changed.last_mut().unwrap() ^= 1;
        let e = sealer.open(&SealedSecret::from_bytes(changed), binding(&r)).unwrap_err();
        assert!(e.message().contains("its bytes were changed"), "{}", e.message());
        let e = sealer.open(&SealedSecret::from_bytes(vec![1, 2, 3]), binding(&r)).unwrap_err();
        assert!(e.message().contains("not in a form this server reads"), "{}", e.message());
        assert_eq!(e.code(), ErrorCode::Internal);
    }

    #[test]
    fn the_key_file_is_made_once_private_and_read_again() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("nested").join(KEY_FILE);
        let first = KeySealer::with_key_file(&path);
        let r = ConnectionRef::parse("ref", "r").unwrap();
        let secret = Secret::new(b"s3cret".to_vec()).unwrap();
        let sealed = first.seal(&secret, binding(&r)).unwrap();
        let text = std::fs::read_to_string(&path).unwrap();
        assert_eq!(text.trim().len(), 64, "64 hex digits");
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            assert_eq!(std::fs::metadata(&path).unwrap().permissions().mode() & 0o777, 0o600);
        }
        assert_eq!(std::fs::read_dir(path.parent().unwrap()).unwrap().count(), 1, "nothing left aside");
        let again = KeySealer::with_key_file(&path);
        assert_eq!(again.open(&sealed, binding(&r)).unwrap().expose(), b"s3cret", "the same key next time");
        let from_setting = KeySealer::new(Some(SecretKey::parse(&text).unwrap()));
        assert_eq!(
            from_setting.open(&sealed, binding(&r)).unwrap().expose(),
            b"s3cret",
            "the file's text is a key"
        );

        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o644)).unwrap();
            let e = KeySealer::with_key_file(&path).key().unwrap_err().to_string();
            assert!(e.contains("LENSERFIGHT_SECRET_KEY") && e.contains("chmod 600"), "{e}");
        }
        std::fs::write(&path, "not a key\n").unwrap();
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o600)).unwrap();
        }
        let e = KeySealer::with_key_file(&path).key().unwrap_err().to_string();
        assert!(e.contains("LENSERFIGHT_SECRET_KEY") && e.contains("must be 32 bytes"), "{e}");
        let lf = KeySealer::with_key_file(&path).seal(&secret, binding(&r)).unwrap_err();
        assert_eq!(lf.code(), ErrorCode::Internal);
        assert!(lf.message().contains("LENSERFIGHT_SECRET_KEY"), "{}", lf.message());
        assert!(!lf.message().contains(&*dir.path().to_string_lossy()), "no path reaches a client");
    }

    #[test]
    fn processes_starting_at_once_agree_on_one_key() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(KEY_FILE);
        let keys: Vec<[u8; KEY_ID]> = std::thread::scope(|s| {
            let handles: Vec<_> = (0..8).map(|_| s.spawn(|| load_or_create(&path).map(|k| k.id))).collect();
            handles.into_iter().map(|h| h.join().unwrap().unwrap()).collect()
        });
        assert!(keys.windows(2).all(|w| w[0] == w[1]), "one key wins");
    }
}
