//! Which hosts and browser origins may reach the server (DNS rebinding and
//! cross-site requests), and the CORS answers for the origins that may.

use axum::extract::{Request, State};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use http::{HeaderMap, HeaderValue, Method, StatusCode, header};

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
    let host = request
        .headers()
        .get(header::HOST)
        .and_then(|h| h.to_str().ok())
        .map(str::to_owned)
        .or_else(|| request.uri().authority().map(|a| a.to_string()));
    match host {
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
