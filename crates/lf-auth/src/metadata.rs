//! Client ID Metadata Documents (draft-ietf-oauth-client-id-metadata-document,
//! the registration the MCP authorization spec of 2025-11-25 recommends): a
//! client whose `client_id` is an https URL, the URL of a JSON document of
//! its metadata. The transport fetches and parses the document
//! ([`ClientMetadataSource`]); the rules it must pass are here
//! ([`ClientIdUrl::parse`], [`ClientMetadata::into_client`]).

use async_trait::async_trait;
use lf_core::Timestamp;

use crate::error::{OAuthError, OAuthErrorKind};
use crate::model::{ClientId, OAuthClient};
use crate::redirect::{is_loopback_host, validate_redirect_uris};
use crate::service::check_client_fields;

/// Most bytes of a client ID metadata document URL.
pub const MAX_CLIENT_ID_URL_LEN: usize = 2048;

/// Whether `client_id` is meant as a metadata document URL (it starts with
/// `https://` or `http://`), rather than an id this server issued.
pub fn is_client_id_url(client_id: &str) -> bool {
    client_id.starts_with("https://") || client_id.starts_with("http://")
}

fn refused(description: impl Into<String>) -> OAuthError {
    OAuthError::new(OAuthErrorKind::InvalidClient, description)
}

/// A client id that is the URL of a client metadata document, checked as
/// the draft asks: https, a host, a path other than `/`, no `.` or `..`
/// path segment, no fragment, no user name or password.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ClientIdUrl {
    url: String,
    host: String,
}

impl ClientIdUrl {
    /// Checks `s`; `invalid_client` saying what is wrong otherwise. With
    /// `http_loopback`, `http://` is accepted on a loopback host
    /// (127.0.0.1, `[::1]`, localhost): for tests and local development only.
    pub fn parse(s: &str, http_loopback: bool) -> Result<ClientIdUrl, OAuthError> {
        let bad = |what: &str| refused(format!("A client_id URL {what}"));
        if s.len() > MAX_CLIENT_ID_URL_LEN {
            return Err(bad(&format!("is longer than {MAX_CLIENT_ID_URL_LEN} bytes")));
        }
        if !s.bytes().all(|b| b.is_ascii_alphanumeric() || b"-._~:/?[]@!$&'()*+,;=%".contains(&b)) {
            return Err(bad("contains characters a URL may not (spaces, quotes, #, non-ASCII...)"));
        }
        let (https, after) = match (s.strip_prefix("https://"), s.strip_prefix("http://")) {
            (Some(after), _) => (true, after),
            (None, Some(after)) => (false, after),
            _ => return Err(bad("must start with https://")),
        };
        let end = after.find(['/', '?']).unwrap_or(after.len());
        let (authority, rest) = after.split_at(end);
        if authority.contains('@') {
            return Err(bad("must not carry a user name or password"));
        }
        let split = match authority.strip_prefix('[') {
            Some(v6) => v6.find(']').map(|i| i + 2),
            None => Some(authority.find(':').unwrap_or(authority.len())),
        };
        let (host, port) = authority.split_at(split.unwrap_or(0));
        let port_ok = port.is_empty()
            || port.strip_prefix(':').is_some_and(|p| {
                !p.is_empty()
                    && p.bytes().all(|b| b.is_ascii_digit())
                    && p.parse::<u16>().is_ok_and(|n| n > 0)
            });
        if host.is_empty() || host == "[]" || !port_ok {
            return Err(bad("has no valid host and port"));
        }
        let http_ok = http_loopback && is_loopback_host(host);
        if !https && !http_ok {
            return Err(bad("must use https"));
        }
        let path = rest.split('?').next().unwrap_or_default();
        if path.is_empty() || path == "/" {
            return Err(bad("must have a path (https://example.com/client.json, not https://example.com/)"));
        }
        let dot = |seg: &str| {
            let seg = seg.to_ascii_lowercase().replace("%2e", ".");
            seg == "." || seg == ".."
        };
        if path.split('/').any(dot) {
            return Err(bad("must not have . or .. path segments"));
        }
        Ok(ClientIdUrl { url: s.to_owned(), host: host.to_ascii_lowercase() })
    }

    /// The URL, as the client sent it.
    pub fn as_str(&self) -> &str {
        &self.url
    }

    /// Its host (lowercase; an IPv6 literal keeps its brackets), shown on
    /// the consent page: the one thing about the client that is not
    /// self-asserted.
    pub fn host(&self) -> &str {
        &self.host
    }
}

/// The fields of a client metadata document this server reads (RFC 7591
/// §2 names), as the transport parsed them from its JSON; others are
/// ignored.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ClientMetadata {
    /// Must equal the document's URL, character for character.
    pub client_id: Option<String>,
    /// Shown on the consent page; default [`crate::DEFAULT_CLIENT_NAME`].
    pub client_name: Option<String>,
    /// Required: 1 to 10, as for a registration.
    pub redirect_uris: Option<Vec<String>>,
    /// If present: as for a registration.
    pub grant_types: Option<Vec<String>>,
    /// If present: as for a registration.
    pub response_types: Option<Vec<String>>,
    /// If present: `none` (every client of this server is public).
    pub token_endpoint_auth_method: Option<String>,
    /// Whether it carries `client_secret` or `client_secret_expires_at`,
    /// which a metadata document must not.
    pub has_client_secret: bool,
}

impl ClientMetadata {
    /// The client this document describes, if it passes the draft's rules
    /// and those of a registration; `invalid_client` naming the URL and
    /// the rule broken otherwise. Never echoes the document's values.
    pub fn into_client(self, url: &ClientIdUrl, now: Timestamp) -> Result<OAuthClient, OAuthError> {
        let at = url.as_str();
        let bad = |what: &str| refused(format!("The client metadata document at {at} {what}"));
        match self.client_id.as_deref() {
            None => return Err(bad("has no client_id")),
            Some(id) if id != at => return Err(bad("names another client_id than its own URL")),
            Some(_) => {}
        }
        if self.has_client_secret {
            return Err(bad("carries a client secret, which a metadata document must not"));
        }
        match self.token_endpoint_auth_method.as_deref() {
            None | Some("none") => {}
            Some(m) if m.starts_with("client_secret") => {
                return Err(bad("asks for a shared-secret token_endpoint_auth_method; it must be none"));
            }
            Some(_) => {
                return Err(bad("has a token_endpoint_auth_method other than none (public clients only)"));
            }
        }
        let redirect_uris = self.redirect_uris.ok_or_else(|| bad("has no redirect_uris"))?;
        validate_redirect_uris(&redirect_uris).map_err(|e| bad(&format!("is refused: {}", e.description)))?;
        let name = check_client_fields(self.client_name.as_deref(), &self.grant_types, &self.response_types)
            .map_err(|e| bad(&format!("is refused: {}", e.description)))?;
        let id = ClientId::parse(at).ok_or_else(|| bad("has a URL this server cannot keep"))?;
        Ok(OAuthClient { id, name, redirect_uris, created_at: now })
    }
}

/// Where client metadata documents come from: the HTTP transport fetches
/// one through the egress guard (size and time capped, cached by its HTTP
/// caching headers). An error is `invalid_client` saying why the document
/// could not be had (`server_error` for a failure of this server).
#[async_trait]
pub trait ClientMetadataSource: Send + Sync {
    /// The document at `url`, parsed.
    async fn fetch(&self, url: &ClientIdUrl) -> Result<ClientMetadata, OAuthError>;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls_as_the_draft_asks() {
        for ok in [
            "https://app.example.com/client.json",
            "https://app.example.com:8443/oauth/client-metadata?v=2",
            "https://[2001:db8::1]/c",
        ] {
            assert!(ClientIdUrl::parse(ok, false).is_ok(), "{ok}");
        }
        for bad in [
            "https://app.example.com",
            "https://app.example.com/",
            "https://app.example.com/a/../b",
            "https://app.example.com/a/%2E%2e/b",
            "https://app.example.com/./b",
            "https://app.example.com/c#frag",
            "https://user:pw@app.example.com/c",
            "https:///c",
            "https://app.example.com:0/c",
            "https://app.example.com:99999/c",
            "http://app.example.com/c",
            "http://127.0.0.1:8080/c",
            "https://app.example.com/a b",
            "ftp://app.example.com/c",
        ] {
            let e = ClientIdUrl::parse(bad, false).unwrap_err();
            assert_eq!(e.kind, OAuthErrorKind::InvalidClient, "{bad}");
        }
        assert!(ClientIdUrl::parse("http://127.0.0.1:8080/c", true).is_ok());
        assert!(ClientIdUrl::parse("http://[::1]:8080/c", true).is_ok());
        assert!(ClientIdUrl::parse("http://example.com/c", true).is_err(), "http only on loopback");
        assert_eq!(ClientIdUrl::parse("https://App.Example.com/c", false).unwrap().host(), "app.example.com");
    }

    fn doc(url: &str) -> ClientMetadata {
        ClientMetadata {
            client_id: Some(url.to_owned()),
            client_name: Some("Example".into()),
            redirect_uris: Some(vec!["https://app.example.com/cb".into()]),
            ..ClientMetadata::default()
        }
    }

    #[test]
    fn documents_as_the_draft_asks() {
        let at = "https://app.example.com/client.json";
        let url = ClientIdUrl::parse(at, false).unwrap();
        let now = Timestamp::from_micros(0);
        let client = doc(at).into_client(&url, now).unwrap();
        assert_eq!((client.id.as_str(), client.name.as_str()), (at, "Example"));
        type Change = fn(&mut ClientMetadata);
        let refusals: [(&str, Change); 8] = [
            ("another client_id", |d| d.client_id = Some("https://app.example.com/other.json".into())),
            ("no client_id", |d| d.client_id = None),
            ("client secret", |d| d.has_client_secret = true),
            ("shared-secret", |d| d.token_endpoint_auth_method = Some("client_secret_basic".into())),
            ("other than none", |d| d.token_endpoint_auth_method = Some("private_key_jwt".into())),
            ("no redirect_uris", |d| d.redirect_uris = None),
            ("http only on a loopback", |d| d.redirect_uris = Some(vec!["http://evil.example/cb".into()])),
            ("grant_types", |d| d.grant_types = Some(vec!["client_credentials".into()])),
        ];
        for (said, change) in refusals {
            let mut d = doc(at);
            change(&mut d);
            let e = d.into_client(&url, now).unwrap_err();
            assert_eq!(e.kind, OAuthErrorKind::InvalidClient, "{said}");
            assert!(e.description.contains(said) && e.description.contains(at), "{said}: {}", e.description);
        }
        let mut none = doc(at);
        none.token_endpoint_auth_method = Some("none".into());
        assert!(none.into_client(&url, now).is_ok());
    }
}
