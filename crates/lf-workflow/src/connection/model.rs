//! A saved connection, its secret (clear and sealed), and the checks of
//! what a new connection is given.

use lf_core::{ErrorCode, LenserId, LfError, LfResult, Timestamp};
use zeroize::Zeroizing;

use crate::catalog::catalog;
use crate::model::{ConnectionRef, JsonObject, Provider};
use crate::secrets::{find_secret_field, shape};

/// Most bytes of a secret (a token, a password, a webhook URL, a key file).
pub const MAX_SECRET_BYTES: usize = 16 * 1024;
/// Most bytes (as JSON, roughly) of a connection's settings.
pub const MAX_SETTINGS_BYTES: usize = 16 * 1024;
/// Deepest nesting of a connection's settings.
pub const MAX_SETTINGS_DEPTH: usize = 8;
/// Longest top-level settings key.
const MAX_SETTING_KEY: usize = 64;

/// A saved connection, without its secret: what listings return.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Connection {
    pub owner: LenserId,
    /// Unique per owner; the name a step's connector gives.
    pub connection_ref: ConnectionRef,
    /// One of the providers the node catalog names ([`parse_provider`]).
    pub provider: Provider,
    /// Non-secret settings (a host, a chat id, a base URL): no secret-named
    /// field at any depth ([`parse_settings`]).
    pub settings: JsonObject,
    pub created_at: Timestamp,
}

/// A secret in clear: only ever between the caller who gives it and the
/// [`SecretSealer`], and between the sealer and the runner that uses it.
/// Its bytes are wiped when it is dropped; it is never printed.
pub struct Secret(Zeroizing<Vec<u8>>);

impl Secret {
    /// A secret of 1 to [`MAX_SECRET_BYTES`] bytes.
    pub fn new(bytes: Vec<u8>) -> LfResult<Self> {
        let bytes = Zeroizing::new(bytes);
        if bytes.is_empty() || bytes.len() > MAX_SECRET_BYTES {
            let got = if bytes.is_empty() { "none".to_owned() } else { format!("{} bytes", bytes.len()) };
            return Err(LfError::invalid_argument(format!(
                "a connection's secret must be 1 to {MAX_SECRET_BYTES} bytes, got {got}. Give the token, password or webhook URL the connection uses."
            ))
            .with_field("secret"));
        }
        Ok(Self(bytes))
    }

    /// No secret: only an `mcp` connection may have none (a server that
    /// asks for no credentials); the service refuses it for any other.
    pub fn empty() -> Self {
        Self(Zeroizing::new(Vec::new()))
    }

    /// A copy, wiped when dropped like the original.
    pub(crate) fn clone_secret(&self) -> Self {
        Self(self.0.clone())
    }

    /// The secret's bytes, for the sealer and the runner only.
    pub fn expose(&self) -> &[u8] {
        &self.0
    }

    /// The secret as text, for services that take a text token.
    /// INVALID_ARGUMENT when it is not UTF-8.
    pub fn expose_str(&self) -> LfResult<&str> {
        std::str::from_utf8(&self.0)
            .map_err(|_| LfError::invalid_argument("the connection's secret is not UTF-8 text"))
    }
}

impl std::fmt::Debug for Secret {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Secret([redacted])")
    }
}

/// A secret as a [`SecretSealer`] sealed it: opaque bytes to everyone but
/// the sealer.
#[derive(Clone, PartialEq, Eq)]
pub struct SealedSecret(Vec<u8>);

impl SealedSecret {
    pub fn from_bytes(bytes: Vec<u8>) -> Self {
        Self(bytes)
    }
    pub fn as_bytes(&self) -> &[u8] {
        &self.0
    }
    pub fn into_bytes(self) -> Vec<u8> {
        self.0
    }
}

impl std::fmt::Debug for SealedSecret {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "SealedSecret({} bytes)", self.0.len())
    }
}

/// What a sealed secret is bound to: its connection's owner and ref. A
/// sealer authenticates [`SealBinding::associated_data`] with the secret,
/// so a sealed secret moved to another connection does not open.
#[derive(Clone, Copy, Debug)]
pub struct SealBinding<'a> {
    pub owner: LenserId,
    pub connection_ref: &'a ConnectionRef,
}

impl SealBinding<'_> {
    /// The bytes a sealer authenticates: a label and version, the owner's
    /// 16 bytes, the ref.
    pub fn associated_data(&self) -> Vec<u8> {
        const LABEL: &[u8] = b"lenserfight connection secret v1\0";
        let r = self.connection_ref.as_str().as_bytes();
        let mut out = Vec::with_capacity(LABEL.len() + 16 + r.len());
        out.extend_from_slice(LABEL);
        out.extend_from_slice(self.owner.as_uuid().as_bytes());
        out.extend_from_slice(r);
        out
    }
}

/// Seals and opens connection secrets: the composition root implements it
/// with the server's key (see lf-server). Sealing the same secret twice
/// gives different bytes (a fresh nonce each time).
pub trait SecretSealer: Send + Sync {
    /// `secret` sealed for the connection `to` names.
    fn seal(&self, secret: &Secret, to: SealBinding<'_>) -> LfResult<SealedSecret>;

    /// The secret `sealed` holds, if it was sealed with this sealer's key
    /// for the connection `to` names. An error otherwise, never a wrong
    /// secret: its message says whether the key differs or the bytes were
    /// changed, and what the operator can do.
    fn open(&self, sealed: &SealedSecret, to: SealBinding<'_>) -> LfResult<Secret>;
}

/// The provider `s`: one the node catalog names, or `openai_compatible`
/// (a model profile's endpoint); a connection of any other provider could
/// never be used. INVALID_ARGUMENT listing them.
pub fn parse_provider(s: &str) -> LfResult<Provider> {
    let mut known = catalog().providers().to_vec();
    known.push(crate::profile::MODEL_PROVIDER);
    known.sort_unstable();
    let p = Provider::parse("provider", s.trim())?;
    if !known.contains(&p.as_str()) {
        return Err(LfError::invalid_argument(format!(
            "provider must be one of {}; got {}: no node type of this server uses a {} connection.",
            known.join(", "),
            LfError::excerpt(s),
            p
        ))
        .with_field("provider"));
    }
    Ok(p)
}

/// Checks a connection's settings: top-level keys of `a-z`, `0-9` and `_`
/// starting with a letter (up to 64), at most [`MAX_SETTINGS_DEPTH`] deep
/// and [`MAX_SETTINGS_BYTES`] long, and no secret-named field at any depth
/// (settings are listed; the secret is given apart).
pub fn parse_settings(settings: JsonObject) -> LfResult<JsonObject> {
    let bad = |m: String| LfError::invalid_argument(m).with_field("settings");
    if let Some(k) = settings.keys().find(|k| !setting_key_ok(k)) {
        return Err(bad(format!(
            "settings key {} must be 1 to {MAX_SETTING_KEY} characters of a-z, 0-9 and _, starting with a letter, such as host or chat_id.",
            LfError::excerpt(k)
        )));
    }
    if let Some(k) = find_secret_field([&settings]) {
        return Err(bad(format!(
            "settings hold \"{}\", a secret field: settings are shown to whoever lists connections. Give it as the connection's secret instead (the CLI reads the secret from standard input).",
            lf_core::clip(k, 64)
        )));
    }
    let (depth, bytes) = shape(&settings, MAX_SETTINGS_BYTES);
    if depth > MAX_SETTINGS_DEPTH || bytes > MAX_SETTINGS_BYTES {
        return Err(bad(format!(
            "settings must nest at most {MAX_SETTINGS_DEPTH} deep and take at most {MAX_SETTINGS_BYTES} bytes; keep only what the connection needs (a host, a port, a chat id)."
        )));
    }
    Ok(settings)
}

fn setting_key_ok(k: &str) -> bool {
    let b = k.as_bytes();
    !b.is_empty()
        && b.len() <= MAX_SETTING_KEY
        && b[0].is_ascii_lowercase()
        && b.iter().all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || *c == b'_')
}

/// The NOT_FOUND of a connection the owner does not have, shared by every store.
pub fn connection_not_found(connection_ref: &ConnectionRef) -> LfError {
    LfError::new(
        ErrorCode::NotFound,
        format!(
            "No saved connection is named {}. List them with `connection list` (or list_connections).",
            LfError::excerpt(connection_ref.as_str())
        ),
    )
    .with_field("ref")
}

/// The CONFLICT of a ref the owner already has, shared by every store.
pub fn connection_taken(connection_ref: &ConnectionRef) -> LfError {
    LfError::conflict(format!(
        "A connection named {} is already saved. Pick another ref, or remove it first with `connection remove --ref {}`.",
        LfError::excerpt(connection_ref.as_str()),
        connection_ref
    ))
    .with_field("ref")
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn obj(v: serde_json::Value) -> JsonObject {
        v.as_object().unwrap().clone()
    }

    #[test]
    fn providers_are_the_catalogs() {
        for p in ["http", "slack", "discord", "telegram", "smtp", "github"] {
            assert_eq!(parse_provider(p).unwrap().as_str(), p);
        }
        let e = parse_provider("notion").unwrap_err();
        assert_eq!(e.code(), ErrorCode::InvalidArgument);
        assert_eq!(
            e.message(),
            "provider must be one of discord, github, http, mcp, openai_compatible, slack, smtp, telegram; got \"notion\": no node type of this server uses a notion connection."
        );
        assert!(parse_provider("Slack").is_err(), "providers are lowercase");
    }

    #[test]
    fn settings_hold_no_secret_and_stay_small() {
        let ok = obj(json!({"host": "smtp.example.com", "port": 587, "headers": {"X-Trace": "1"}}));
        assert_eq!(parse_settings(ok.clone()).unwrap(), ok);
        let e = parse_settings(obj(json!({"headers": {"Authorization": "Bearer x"}}))).unwrap_err();
        assert!(e.message().contains("\"Authorization\", a secret field"), "{}", e.message());
        let e = parse_settings(obj(json!({"Host": "x"}))).unwrap_err();
        assert!(e.message().starts_with("settings key \"Host\" must be"), "{}", e.message());
        let e = parse_settings(obj(json!({"note": "x".repeat(MAX_SETTINGS_BYTES)}))).unwrap_err();
        assert!(e.message().contains("at most"), "{}", e.message());
        let mut deep = json!(1);
        for _ in 0..MAX_SETTINGS_DEPTH {
            deep = json!({ "a": deep });
        }
        assert!(parse_settings(obj(deep.clone())).is_ok(), "eight deep");
        assert!(parse_settings(obj(json!({ "a": deep }))).is_err(), "nine deep");
    }

    #[test]
    fn secrets_are_bounded_and_never_printed() {
        assert!(Secret::new(Vec::new()).is_err());
        assert!(Secret::new(vec![b'x'; MAX_SECRET_BYTES + 1]).is_err());
        let s = Secret::new(b"xoxb-123".to_vec()).unwrap();
        assert_eq!(format!("{s:?}"), "Secret([redacted])");
        assert_eq!(s.expose_str().unwrap(), "xoxb-123");
        assert_eq!(format!("{:?}", SealedSecret::from_bytes(vec![1, 2, 3])), "SealedSecret(3 bytes)");
    }

    #[test]
    fn the_binding_names_owner_and_ref() {
        let owner = LenserId::new();
        let a = ConnectionRef::parse("ref", "a").unwrap();
        let b = ConnectionRef::parse("ref", "b").unwrap();
        let ad = |r| SealBinding { owner, connection_ref: r }.associated_data();
        assert_ne!(ad(&a), ad(&b));
        let other = SealBinding { owner: LenserId::new(), connection_ref: &a }.associated_data();
        assert_ne!(ad(&a), other);
        assert!(ad(&a).ends_with(b"a"));
    }
}
