//! Which hosts and browser origins may reach the server (DNS rebinding and
//! cross-site requests), and the CORS answers for the origins that may.

use axum::extract::{Request, State};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use std::net::IpAddr;

use http::{HeaderMap, HeaderValue, Method, StatusCode, Uri, header};

use crate::app::AppState;
use crate::responses::json_error;

/// Allowed `Host` authorities and `Origin`s.
#[derive(Debug, Clone)]
pub struct Gate {
    /// The public URL's `host[:port]`, lowercase.
    public_authority: String,
    /// The public URL's origin and the configured extra origins.
    origins: Vec<String>,
}

const LOOPBACK_HOSTS: [&str; 3] = ["localhost", "127.0.0.1", "[::1]"];

/// Splits `host[:port]` (IPv6 in brackets) into host and port.
fn split_authority(authority: &str) -> (&str, Option<&str>) {
    if authority.starts_with('[') {
        match authority.find(']') {
            Some(end) => {
                let rest = &authority[end + 1..];
                (&authority[..=end], rest.strip_prefix(':'))
            }
            None => (authority, None),
        }
    } else {
        match authority.rsplit_once(':') {
            Some((h, p)) => (h, Some(p)),
            None => (authority, None),
        }
    }
}

fn is_loopback_authority(authority: &str) -> bool {
    let (host, port) = split_authority(authority);
    LOOPBACK_HOSTS.contains(&host)
        && port.is_none_or(|p| !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit()))
}

/// Whether `host` (no port; IPv6 in brackets or not) names this machine:
/// `localhost` or a loopback address.
pub fn is_loopback_host(host: &str) -> bool {
    let host = host.trim_start_matches('[').trim_end_matches(']');
    host.eq_ignore_ascii_case("localhost") || host.parse::<IpAddr>().is_ok_and(|ip| ip.is_loopback())
}

/// The host a request is for: the request target's authority when the
/// target is in absolute form (RFC 9112 §3.2.2: it wins over `Host`), else
/// the one `Host` header. `None` without a host, or with several `Host`
/// headers (RFC 9112 §3.2: such a request is invalid).
pub fn request_host(uri: &Uri, headers: &HeaderMap) -> Option<String> {
    if let Some(authority) = uri.authority() {
        return Some(authority.as_str().to_owned());
    }
    let mut hosts = headers.get_all(header::HOST).iter();
    let host = hosts.next()?.to_str().ok()?;
    hosts.next().is_none().then(|| host.to_owned())
}

/// Whether the request with this target and headers is for a loopback host.
pub fn for_loopback(uri: &Uri, headers: &HeaderMap) -> bool {
    request_host(uri, headers).is_some_and(|h| is_loopback_host(split_authority(h.trim()).0))
}

impl Gate {
    pub fn new(public_url: &str, extra_origins: &[String]) -> Self {
        let authority =
            public_url.split_once("://").map_or(public_url, |(_, rest)| rest).to_ascii_lowercase();
        let mut origins = vec![public_url.to_ascii_lowercase()];
        origins.extend(extra_origins.iter().map(|o| o.to_ascii_lowercase()));
        Self { public_authority: authority, origins }
    }

    /// Whether a request's `Host` names this server.
    pub fn host_allowed(&self, host: &str) -> bool {
        let host = host.trim().to_ascii_lowercase();
        if host == self.public_authority || is_loopback_authority(&host) {
            return true;
        }
        // `Host: example.com:443` for `https://example.com`.
        let (h, port) = split_authority(&host);
        let default_port = if self.origins[0].starts_with("https://") { "443" } else { "80" };
        port == Some(default_port) && h == self.public_authority
    }

    /// Whether a browser page at `origin` may call the server. `null`
    /// (sandboxed frames, files) never may.
    pub fn origin_allowed(&self, origin: &str) -> bool {
        let origin = origin.trim().to_ascii_lowercase();
        if self.origins.contains(&origin) {
            return true;
        }
        match origin.split_once("://") {
            Some(("http" | "https", authority)) => is_loopback_authority(authority),
            _ => false,
        }
    }
}

/// Refuses requests for other hosts or from other origins (403), answers CORS
/// preflights, and adds CORS headers for allowed origins.
pub async fn gate(State(state): State<AppState>, request: Request, next: Next) -> Response {
    let gate = &state.gate;
    match request_host(request.uri(), request.headers()) {
        Some(h) if gate.host_allowed(&h) => {}
        _ => {
            return json_error(
                StatusCode::FORBIDDEN,
                "forbidden_host",
                "this server does not answer for that Host; set LENSERFIGHT_PUBLIC_URL to the address clients use",
            );
        }
    }
    let origin = match request.headers().get(header::ORIGIN) {
        None => None,
        Some(value) => match value.to_str() {
            Ok(o) if gate.origin_allowed(o) => Some(value.clone()),
            _ => {
                return json_error(
                    StatusCode::FORBIDDEN,
                    "forbidden_origin",
                    "requests from this browser origin are not allowed; add it to LENSERFIGHT_ALLOWED_ORIGINS",
                );
            }
        },
    };
    if request.method() == Method::OPTIONS {
        let mut response = StatusCode::NO_CONTENT.into_response();
        preflight_headers(response.headers_mut());
        add_cors(response.headers_mut(), origin);
        return response;
    }
    let mut response = next.run(request).await;
    add_cors(response.headers_mut(), origin);
    response
}

fn preflight_headers(headers: &mut HeaderMap) {
    headers
        .insert(header::ACCESS_CONTROL_ALLOW_METHODS, HeaderValue::from_static("GET, POST, DELETE, OPTIONS"));
    headers.insert(
        header::ACCESS_CONTROL_ALLOW_HEADERS,
        HeaderValue::from_static(
            "authorization, content-type, accept, mcp-session-id, mcp-protocol-version, mcp-method, mcp-name, last-event-id",
        ),
    );
    headers.insert(header::ACCESS_CONTROL_MAX_AGE, HeaderValue::from_static("600"));
}

fn add_cors(headers: &mut HeaderMap, origin: Option<HeaderValue>) {
    headers.append(header::VARY, HeaderValue::from_static("origin"));
    if let Some(origin) = origin {
        headers.insert(header::ACCESS_CONTROL_ALLOW_ORIGIN, origin);
        headers.insert(
            header::ACCESS_CONTROL_EXPOSE_HEADERS,
            HeaderValue::from_static("mcp-session-id, mcp-protocol-version, www-authenticate"),
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hosts() {
        let g = Gate::new("https://mcp.example.com", &[]);
        for ok in [
            "mcp.example.com",
            "MCP.example.com",
            "mcp.example.com:443",
            "localhost:8080",
            "127.0.0.1",
            "[::1]:9",
        ] {
            assert!(g.host_allowed(ok), "{ok}");
        }
        for bad in [
            "evil.example",
            "mcp.example.com.evil.example",
            "mcp.example.com:8443",
            "localhost:x",
            "",
            "127.0.0.2",
        ] {
            assert!(!g.host_allowed(bad), "{bad}");
        }
    }

    #[test]
    fn the_host_of_a_request() {
        let mut headers = HeaderMap::new();
        let origin_form: Uri = "/health".parse().unwrap();
        assert_eq!(request_host(&origin_form, &headers), None);
        headers.insert(header::HOST, HeaderValue::from_static("127.0.0.1:8080"));
        assert_eq!(request_host(&origin_form, &headers).as_deref(), Some("127.0.0.1:8080"));
        assert!(for_loopback(&origin_form, &headers));
        let absolute: Uri = "http://evil.example/health".parse().unwrap();
        assert_eq!(request_host(&absolute, &headers).as_deref(), Some("evil.example"), "the target wins");
        assert!(!for_loopback(&absolute, &headers));
        headers.append(header::HOST, HeaderValue::from_static("evil.example"));
        assert_eq!(request_host(&origin_form, &headers), None, "two Host headers");
        for loopback in ["localhost", "LOCALHOST", "127.0.0.1", "127.3.2.1", "[::1]", "::1"] {
            assert!(is_loopback_host(loopback), "{loopback}");
        }
        for other in ["mcp.example.com", "localhost.example", "10.0.0.1", "[2001:db8::1]", ""] {
            assert!(!is_loopback_host(other), "{other}");
        }
    }

    #[test]
    fn origins() {
        let g = Gate::new("https://mcp.example.com", &["https://app.example.com".into()]);
        for ok in [
            "https://mcp.example.com",
            "https://app.example.com",
            "http://localhost:6274",
            "http://127.0.0.1",
        ] {
            assert!(g.origin_allowed(ok), "{ok}");
        }
        for bad in [
            "http://evil.example",
            "null",
            "https://mcp.example.com.evil.example",
            "file://",
            "http://mcp.example.com",
        ] {
            assert!(!g.origin_allowed(bad), "{bad}");
        }
    }
}
