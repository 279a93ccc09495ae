//! Redirect URIs: what a client may register (https anywhere, http only on
//! a loopback host; no fragment, no userinfo, nothing but http and https),
//! how a requested URI matches a registered one (exactly, except that a
//! loopback http URI may name another port, RFC 8252 §7.3), and how the
//! answer is appended to it.

use crate::error::{OAuthError, OAuthErrorKind};

/// At most this many redirect URIs per client.
pub const MAX_REDIRECT_URIS: usize = 10;
/// At most this many bytes per redirect URI.
pub const MAX_REDIRECT_URI_LEN: usize = 2048;

/// A redirect URI taken apart. Only built from a string that passed
/// [`parse`].
#[derive(Debug, PartialEq, Eq)]
struct Parts<'a> {
    https: bool,
    /// As written (case kept); IPv6 literals keep their brackets.
    host: &'a str,
    port: Option<u16>,
    /// Path and query, as written.
    rest: &'a str,
}

impl Parts<'_> {
    fn is_loopback_http(&self) -> bool {
        !self.https && is_loopback_host(self.host)
    }
}

pub(crate) fn is_loopback_host(host: &str) -> bool {
    host == "127.0.0.1" || host == "[::1]" || host.eq_ignore_ascii_case("localhost")
}

fn bad(description: impl Into<String>) -> OAuthError {
    OAuthError::new(OAuthErrorKind::InvalidRedirectUri, description)
}

/// Characters RFC 3986 allows anywhere in a URI (reserved, unreserved, and
/// `%` of a percent-encoding).
fn is_uri_char(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b"-._~:/?#[]@!$&'()*+,;=%".contains(&b)
}

fn parse(uri: &str) -> Result<Parts<'_>, OAuthError> {
    if uri.is_empty() {
        return Err(bad("A redirect URI is empty"));
    }
    if uri.len() > MAX_REDIRECT_URI_LEN {
        return Err(bad(format!("A redirect URI is longer than {MAX_REDIRECT_URI_LEN} characters")));
    }
    if !uri.bytes().all(is_uri_char) {
        return Err(bad("A redirect URI contains characters a URI may not (spaces, quotes, non-ASCII...)"));
    }
    if uri.contains('#') {
        return Err(bad("A redirect URI must not have a fragment (#...)"));
    }
    let (scheme, after) = uri.split_once("://").ok_or_else(|| {
        bad("A redirect URI must be an absolute https:// URL, or http:// on a loopback host")
    })?;
    let https = if scheme.eq_ignore_ascii_case("https") {
        true
    } else if scheme.eq_ignore_ascii_case("http") {
        false
    } else {
        return Err(bad(
            "A redirect URI must use https, or http on a loopback host (127.0.0.1, [::1], localhost)",
        ));
    };
    let end = after.find(['/', '?']).unwrap_or(after.len());
    let (authority, rest) = after.split_at(end);
    if authority.contains('@') {
        return Err(bad("A redirect URI must not carry a user name or password (user@host)"));
    }
    let (host, port) = if authority.starts_with('[') {
        let close = authority.find(']').ok_or_else(|| bad("A redirect URI has an unclosed IPv6 address"))?;
        let (host, tail) = authority.split_at(close + 1);
        let inner = &host[1..host.len() - 1];
        if inner.is_empty() || !inner.bytes().all(|b| b.is_ascii_hexdigit() || b == b':' || b == b'.') {
            return Err(bad("A redirect URI has an invalid IPv6 address"));
        }
        (host, tail)
    } else {
        match authority.find(':') {
            Some(i) => authority.split_at(i),
            None => (authority, ""),
        }
    };
    if host.is_empty() {
        return Err(bad("A redirect URI has no host"));
    }
    if !host.starts_with('[') && !host.bytes().all(|b| b.is_ascii_alphanumeric() || b"-._~%".contains(&b)) {
        return Err(bad("A redirect URI has an invalid host"));
    }
    let port = match port.strip_prefix(':') {
        None if port.is_empty() => None,
        Some(p) if !p.is_empty() && p.len() <= 5 && p.bytes().all(|b| b.is_ascii_digit()) => {
            Some(p.parse::<u16>().map_err(|_| bad("A redirect URI has a port above 65535"))?)
        }
        _ => return Err(bad("A redirect URI has an invalid port")),
    };
    let parts = Parts { https, host, port, rest };
    if !https && !parts.is_loopback_http() {
        return Err(bad(
            "A redirect URI may use http only on a loopback host (127.0.0.1, [::1], localhost); use https",
        ));
    }
    Ok(parts)
}

/// Checks one redirect URI a client registers: https on any host, or http
/// on 127.0.0.1, `[::1]` or localhost; at most [`MAX_REDIRECT_URI_LEN`]
/// bytes of URI characters; no fragment; no userinfo. Every other scheme
/// (`javascript:`, `data:`, `file:`, custom schemes) is refused with
/// `invalid_redirect_uri`.
pub fn validate_redirect_uri(uri: &str) -> Result<(), OAuthError> {
    parse(uri).map(|_| ())
}

/// Checks the redirect URIs of a registration: 1 to [`MAX_REDIRECT_URIS`],
/// each valid ([`validate_redirect_uri`]).
pub fn validate_redirect_uris(uris: &[String]) -> Result<(), OAuthError> {
    if uris.is_empty() {
        return Err(bad("redirect_uris must name at least one redirect URI"));
    }
    if uris.len() > MAX_REDIRECT_URIS {
        return Err(bad(format!("redirect_uris may name at most {MAX_REDIRECT_URIS} redirect URIs")));
    }
    uris.iter().try_for_each(|u| validate_redirect_uri(u))
}

/// Whether `requested` may be redirected to, given the `registered` URIs:
/// it equals one of them exactly, or both are http on the same loopback host
/// with the same path and query, differing only in port (RFC 8252 §7.3).
/// A trailing slash, another path, scheme, host or query is no match.
pub fn redirect_matches(registered: &[String], requested: &str) -> bool {
    if registered.iter().any(|r| r == requested) {
        return parse(requested).is_ok();
    }
    let Ok(req) = parse(requested) else { return false };
    if !req.is_loopback_http() {
        return false;
    }
    registered.iter().filter_map(|r| parse(r).ok()).any(|reg| {
        reg.is_loopback_http() && reg.host == req.host && reg.rest == req.rest && same_scheme(&reg, &req)
    })
}

fn same_scheme(a: &Parts<'_>, b: &Parts<'_>) -> bool {
    a.https == b.https
}

/// Percent-encodes `s` for a query component: everything but the unreserved
/// characters.
pub(crate) fn percent_encode(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for b in s.bytes() {
        if b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~') {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

/// `uri` with `params` appended to its query (RFC 6749 §4.1.2: the
/// existing query is kept). `None` values are left out.
pub fn append_query(uri: &str, params: &[(&str, Option<&str>)]) -> String {
    let mut out = uri.to_owned();
    let mut sep =
        if uri.contains('?') { if uri.ends_with('?') || uri.ends_with('&') { "" } else { "&" } } else { "?" };
    for (k, v) in params {
        if let Some(v) = v {
            out.push_str(sep);
            out.push_str(&percent_encode(k));
            out.push('=');
            out.push_str(&percent_encode(v));
            sep = "&";
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn accepts_https_and_loopback_http() {
        for ok in [
            "https://example.com/callback",
            "https://claude.ai/api/mcp/auth_callback",
            "https://example.com:8443/cb?x=1&y=%20",
            "https://example.com",
            "http://127.0.0.1/callback",
            "http://127.0.0.1:33418/",
            "http://[::1]:8080/cb",
            "http://localhost:6274/oauth/callback",
            "HTTPS://Example.COM/cb",
        ] {
            validate_redirect_uri(ok).unwrap_or_else(|e| panic!("{ok}: {e}"));
        }
    }

    #[test]
    fn refuses_everything_else() {
        for bad in [
            "",
            "javascript:alert(1)",
            "javascript://example.com/%0aalert(1)",
            "data:text/html,<script>",
            "data://text/html,x",
            "file:///etc/passwd",
            "ftp://example.com/cb",
            "cursor://anysphere.cursor-mcp/oauth/callback",
            "//example.com/cb",
            "/callback",
            "http://example.com/cb",
            "http://127.0.0.2/cb",
            "http://localhost.evil.com/cb",
            "http://127.0.0.1.nip.io/cb",
            "https://example.com/cb#frag",
            "https://example.com/cb#",
            "https://user:pass@example.com/cb",
            "https://user@example.com/cb",
            "http://evil.com@127.0.0.1/cb",
            "https:///cb",
            "https://:443/cb",
            "https://example.com:/cb",
            "https://example.com:99999/cb",
            "https://example.com:12a/cb",
            "https://exa mple.com/cb",
            "https://example.com/c b",
            "https://example.com/\"",
            "https://example.com/é",
            "https://[::1/cb",
            "https://[zz]/cb",
            "https://example.com/cb\n",
        ] {
            assert_eq!(
                validate_redirect_uri(bad).map_err(|e| e.kind),
                Err(OAuthErrorKind::InvalidRedirectUri),
                "{bad:?}"
            );
        }
        let long = format!("https://example.com/{}", "a".repeat(MAX_REDIRECT_URI_LEN));
        assert!(validate_redirect_uri(&long).is_err());
        let longest = format!("https://example.com/{}", "a".repeat(MAX_REDIRECT_URI_LEN - 20));
        assert_eq!(longest.len(), MAX_REDIRECT_URI_LEN);
        assert!(validate_redirect_uri(&longest).is_ok());
    }

    #[test]
    fn registration_lists_are_bounded() {
        assert!(validate_redirect_uris(&[]).is_err());
        let ten: Vec<String> = (0..10).map(|i| format!("https://example.com/{i}")).collect();
        assert!(validate_redirect_uris(&ten).is_ok());
        let eleven: Vec<String> = (0..11).map(|i| format!("https://example.com/{i}")).collect();
        assert!(validate_redirect_uris(&eleven).is_err());
        assert!(validate_redirect_uris(&["https://a.example/cb".into(), "javascript:x".into()]).is_err());
    }

    #[test]
    fn matching_is_exact_but_for_loopback_ports() {
        let reg = vec![
            "https://app.example.com/callback".to_owned(),
            "http://127.0.0.1/cb".to_owned(),
            "http://localhost:3000/oauth?x=1".to_owned(),
            "http://[::1]:8080/cb".to_owned(),
        ];
        for ok in [
            "https://app.example.com/callback",
            "http://127.0.0.1/cb",
            "http://127.0.0.1:53124/cb",
            "http://localhost:3000/oauth?x=1",
            "http://localhost:4000/oauth?x=1",
            "http://localhost/oauth?x=1",
            "http://[::1]/cb",
            "http://[::1]:9999/cb",
        ] {
            assert!(redirect_matches(&reg, ok), "{ok}");
        }
        for no in [
            "https://app.example.com/callback/",
            "https://app.example.com/callback2",
            "https://app.example.com/other",
            "http://app.example.com/callback",
            "https://evil.example.com/callback",
            "https://app.example.com.evil.com/callback",
            "https://app.example.com/callback?x=1",
            "https://app.example.com/callback#x",
            "https://app.example.com:443/callback",
            "https://APP.example.com/callback",
            "javascript:alert(1)",
            "http://127.0.0.1:53124/cb/",
            "http://127.0.0.1:53124/other",
            "http://localhost:53124/cb",
            "https://127.0.0.1:53124/cb",
            "http://127.0.0.1:53124/cb?x=1",
            "http://localhost:4000/oauth?x=2",
            "http://localhost:4000/oauth",
            "http://127.0.0.1:53124/cb#f",
            "http://user@127.0.0.1:53124/cb",
        ] {
            assert!(!redirect_matches(&reg, no), "{no}");
        }
        // https on a loopback host is matched exactly: the port exception is
        // for http loopback listeners only.
        let reg = vec!["https://127.0.0.1:8443/cb".to_owned()];
        assert!(!redirect_matches(&reg, "https://127.0.0.1:9443/cb"));
    }

    #[test]
    fn answers_are_appended_to_the_query() {
        assert_eq!(
            append_query("https://a.example/cb", &[("code", Some("lf_code_1")), ("state", Some("a b&c=d"))]),
            "https://a.example/cb?code=lf_code_1&state=a%20b%26c%3Dd"
        );
        assert_eq!(
            append_query("https://a.example/cb?x=1", &[("code", Some("c"))]),
            "https://a.example/cb?x=1&code=c"
        );
        assert_eq!(
            append_query("https://a.example/cb?", &[("code", Some("c"))]),
            "https://a.example/cb?code=c"
        );
        assert_eq!(append_query("https://a.example/cb", &[("state", None)]), "https://a.example/cb");
        assert_eq!(percent_encode("é/~"), "%C3%A9%2F~");
    }
}
