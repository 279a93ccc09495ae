//! Client ID metadata documents, fetched: the [`ClientMetadataSource`] of
//! the authorization server. A document is fetched with a GET through the
//! egress guard (lf-egress, under the operator's allow-list: public
//! addresses only unless it opens more), without following redirects,
//! read up to [`ClientMetadataLimits::max_bytes`] within
//! [`ClientMetadataLimits::timeout`], and kept as its HTTP caching headers
//! say ([`freshness`]) in a cache of at most [`MAX_CACHED`] documents. At
//! most [`MAX_FETCHING`] fetches are under way at once. A refusal says
//! why, never what the document holds.

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::{Duration, Instant, SystemTime};

use async_trait::async_trait;
use lf_auth::{ClientIdUrl, ClientMetadata, ClientMetadataSource, OAuthError, OAuthErrorKind};
use lf_egress::{Allow, Egress, EgressConfig, EgressError, EgressRequest, HeaderValue, StatusCode, Url};
use serde::Deserialize;
use tokio::sync::Semaphore;

use crate::config::ClientMetadataLimits;

/// Most documents kept at once.
pub const MAX_CACHED: usize = 1024;
/// Most fetches under way at once; more are refused until one ends.
pub const MAX_FETCHING: usize = 16;
/// How long a document without caching headers is kept.
pub const DEFAULT_FRESHNESS: Duration = Duration::from_secs(5 * 60);
/// The longest a document is kept, whatever its headers say.
pub const MAX_FRESHNESS: Duration = Duration::from_secs(60 * 60);

/// Fetches and caches client metadata documents.
pub struct MetadataFetcher {
    egress: Egress,
    limits: ClientMetadataLimits,
    cache: Mutex<HashMap<String, Cached>>,
    fetching: Semaphore,
}

struct Cached {
    document: ClientMetadata,
    until: Instant,
}

/// The fields read from a document; any others are ignored.
#[derive(Deserialize)]
struct Document {
    client_id: Option<String>,
    client_name: Option<String>,
    redirect_uris: Option<Vec<String>>,
    grant_types: Option<Vec<String>>,
    response_types: Option<Vec<String>>,
    token_endpoint_auth_method: Option<String>,
    client_secret: Option<serde_json::Value>,
    client_secret_expires_at: Option<serde_json::Value>,
}

impl MetadataFetcher {
    /// A fetcher reaching what `allow` opens besides public addresses.
    pub fn new(allow: Allow, limits: ClientMetadataLimits) -> Result<Self, EgressError> {
        let egress = Egress::new(EgressConfig {
            allow,
            max_redirects: 0,
            max_response_bytes: limits.max_bytes,
            timeout: limits.timeout,
            connect_timeout: limits.timeout,
        })?;
        Ok(Self { egress, limits, cache: Mutex::new(HashMap::new()), fetching: Semaphore::new(MAX_FETCHING) })
    }

    fn cached(&self, url: &str) -> Option<ClientMetadata> {
        let cache = self.cache.lock().unwrap_or_else(|e| e.into_inner());
        cache.get(url).filter(|c| c.until > Instant::now()).map(|c| c.document.clone())
    }

    fn keep(&self, url: &str, document: &ClientMetadata, fresh: Duration) {
        if fresh.is_zero() {
            return;
        }
        let now = Instant::now();
        let mut cache = self.cache.lock().unwrap_or_else(|e| e.into_inner());
        if cache.len() >= MAX_CACHED && !cache.contains_key(url) {
            cache.retain(|_, c| c.until > now);
            if cache.len() >= MAX_CACHED
                && let Some(first) = cache.iter().min_by_key(|(_, c)| c.until).map(|(k, _)| k.clone())
            {
                cache.remove(&first);
            }
        }
        cache.insert(url.to_owned(), Cached { document: document.clone(), until: now + fresh });
    }

    async fn download(&self, url: &ClientIdUrl) -> Result<(ClientMetadata, Duration), OAuthError> {
        let at = url.as_str();
        let refused = |why: String| {
            OAuthError::new(
                OAuthErrorKind::InvalidClient,
                plain(&format!("The client metadata document at {at} {why}")),
            )
        };
        let parsed = Url::parse(at).map_err(|_| refused("has a URL that cannot be fetched".into()))?;
        let request = EgressRequest::get(parsed)
            .header(http::header::ACCEPT, HeaderValue::from_static("application/json"));
        let answer = self.egress.send(request).await.map_err(|e| {
            refused(match e {
                EgressError::TooLarge { limit } => format!("is larger than {limit} bytes"),
                EgressError::Timeout { .. } => {
                    format!("did not arrive within {} seconds", self.limits.timeout.as_secs_f32())
                }
                EgressError::Redirects { .. } => {
                    "answered with a redirect; it must be served directly".into()
                }
                other => format!("could not be fetched: {other}"),
            })
        })?;
        if answer.status != StatusCode::OK {
            return Err(refused(format!("answered HTTP {} instead of 200", answer.status.as_u16())));
        }
        let doc: Document = serde_json::from_slice(&answer.body).map_err(|e| {
            let what =
                if e.is_data() { "is not a valid client metadata document" } else { "is not a JSON object" };
            refused(format!("{what} ({})", e))
        })?;
        let fresh = freshness(&answer.headers, SystemTime::now());
        let document = ClientMetadata {
            client_id: doc.client_id,
            client_name: doc.client_name,
            redirect_uris: doc.redirect_uris,
            grant_types: doc.grant_types,
            response_types: doc.response_types,
            token_endpoint_auth_method: doc.token_endpoint_auth_method,
            has_client_secret: doc.client_secret.is_some() || doc.client_secret_expires_at.is_some(),
        };
        Ok((document, fresh))
    }
}

#[async_trait]
impl ClientMetadataSource for MetadataFetcher {
    async fn fetch(&self, url: &ClientIdUrl) -> Result<ClientMetadata, OAuthError> {
        if let Some(document) = self.cached(url.as_str()) {
            return Ok(document);
        }
        let Ok(_permit) = self.fetching.try_acquire() else {
            return Err(OAuthError::new(
                OAuthErrorKind::InvalidClient,
                "The server is fetching too many client metadata documents; try again shortly",
            ));
        };
        let (document, fresh) = self.download(url).await?;
        self.keep(url.as_str(), &document, fresh);
        Ok(document)
    }
}

/// How long an answer may be kept, from its headers (RFC 9111):
/// `Cache-Control` `no-store` or `no-cache`: not at all; else its `max-age`;
/// else `Expires` less now; else [`DEFAULT_FRESHNESS`]. At most
/// [`MAX_FRESHNESS`].
pub fn freshness(headers: &http::HeaderMap, now: SystemTime) -> Duration {
    let directives: Vec<String> = headers
        .get_all(http::header::CACHE_CONTROL)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(','))
        .map(|d| d.trim().to_ascii_lowercase())
        .collect();
    if directives.iter().any(|d| d == "no-store" || d == "no-cache") {
        return Duration::ZERO;
    }
    let max_age = directives
        .iter()
        .filter_map(|d| d.strip_prefix("max-age="))
        .map(|n| n.trim_matches('"').parse::<u64>().map(Duration::from_secs).unwrap_or(Duration::ZERO))
        .next();
    let expires = || {
        let value = headers.get(http::header::EXPIRES)?.to_str().ok()?;
        // An invalid date (often "0") means already expired.
        Some(
            httpdate::parse_http_date(value)
                .ok()
                .and_then(|t| t.duration_since(now).ok())
                .unwrap_or_default(),
        )
    };
    max_age.or_else(expires).unwrap_or(DEFAULT_FRESHNESS).min(MAX_FRESHNESS)
}

/// `s` as an OAuth `error_description` may be: printable ASCII without `"`
/// or `\`, at most 300 characters.
fn plain(s: &str) -> String {
    let cleaned: String = s
        .chars()
        .map(|c| if c.is_ascii_graphic() && c != '"' && c != '\\' || c == ' ' { c } else { '\'' })
        .collect();
    lf_core::clip(&cleaned, 300).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn headers(pairs: &[(&'static str, &str)]) -> http::HeaderMap {
        let mut h = http::HeaderMap::new();
        for (k, v) in pairs {
            h.append(*k, v.parse().unwrap());
        }
        h
    }

    #[test]
    fn freshness_follows_the_caching_headers() {
        let now = SystemTime::UNIX_EPOCH + Duration::from_secs(1_800_000_000);
        let f = |pairs: &[(&'static str, &str)]| freshness(&headers(pairs), now);
        assert_eq!(f(&[]), DEFAULT_FRESHNESS);
        assert_eq!(f(&[("cache-control", "public, max-age=120")]), Duration::from_secs(120));
        assert_eq!(f(&[("cache-control", "max-age=0")]), Duration::ZERO);
        assert_eq!(f(&[("cache-control", "max-age=86400")]), MAX_FRESHNESS);
        assert_eq!(f(&[("cache-control", "no-store")]), Duration::ZERO);
        assert_eq!(f(&[("cache-control", "max-age=60"), ("cache-control", "no-cache")]), Duration::ZERO);
        let in_ten = httpdate::fmt_http_date(now + Duration::from_secs(600));
        assert_eq!(f(&[("expires", &in_ten)]), Duration::from_secs(600));
        assert_eq!(f(&[("expires", "0")]), Duration::ZERO);
        assert_eq!(f(&[("cache-control", "max-age=30"), ("expires", &in_ten)]), Duration::from_secs(30));
    }

    #[test]
    fn descriptions_are_plain_ascii() {
        assert_eq!(plain("a \"b\" \\ é\n"), "a 'b' ' ''");
    }
}
