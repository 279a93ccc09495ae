//! [`Egress`], the guarded client: one request, its redirects followed here
//! (each hop's URL checked by [`policy::check_url`], each name's addresses
//! by the resolver [`Guard`]), the answer read up to a limit, the whole
//! exchange under one deadline.

use std::error::Error as StdError;
use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use reqwest::header::{self, HeaderMap, HeaderName, HeaderValue};
use reqwest::{Method, StatusCode, Url};
use rustls_platform_verifier::BuilderVerifierExt;

use crate::allow::Allow;
use crate::error::EgressError;
use crate::policy;
use crate::resolve::{Guard, Refusal, Resolver, SystemResolver};

/// At most this many redirects are followed.
pub const DEFAULT_MAX_REDIRECTS: usize = 5;
/// The largest answer body read, in bytes.
pub const DEFAULT_MAX_RESPONSE_BYTES: usize = 5 * 1024 * 1024;
/// The whole exchange: resolution, connections, redirects and body.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(30);
/// One connection, TLS included.
pub const DEFAULT_CONNECT_TIMEOUT: Duration = Duration::from_secs(10);

/// The header an outside effect's idempotency key travels in.
pub const IDEMPOTENCY_KEY: HeaderName = HeaderName::from_static("idempotency-key");

/// What a request sent through [`Egress`] may reach and how much of it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EgressConfig {
    /// The hosts and ranges opened by the operator.
    pub allow: Allow,
    /// Redirects followed before [`EgressError::Redirects`].
    pub max_redirects: usize,
    /// The largest answer body, in bytes, before [`EgressError::TooLarge`].
    pub max_response_bytes: usize,
    /// The whole exchange, before [`EgressError::Timeout`].
    pub timeout: Duration,
    /// One connection.
    pub connect_timeout: Duration,
}

impl Default for EgressConfig {
    fn default() -> Self {
        EgressConfig {
            allow: Allow::default(),
            max_redirects: DEFAULT_MAX_REDIRECTS,
            max_response_bytes: DEFAULT_MAX_RESPONSE_BYTES,
            timeout: DEFAULT_TIMEOUT,
            connect_timeout: DEFAULT_CONNECT_TIMEOUT,
        }
    }
}

/// One request a workflow node makes.
#[derive(Clone, Debug)]
pub struct EgressRequest {
    method: Method,
    url: Url,
    headers: HeaderMap,
    body: Option<Vec<u8>>,
    idempotency_key: Option<String>,
}

impl EgressRequest {
    pub fn new(method: Method, url: Url) -> Self {
        EgressRequest { method, url, headers: HeaderMap::new(), body: None, idempotency_key: None }
    }

    pub fn get(url: Url) -> Self {
        EgressRequest::new(Method::GET, url)
    }

    /// Adds a header (a second value of a name is added, not replaced).
    /// `Host` is refused at [`Egress::send`]: it follows the URL.
    pub fn header(mut self, name: HeaderName, value: HeaderValue) -> Self {
        self.headers.append(name, value);
        self
    }

    /// Adds every header of `headers`.
    pub fn headers(mut self, headers: HeaderMap) -> Self {
        for (name, value) in headers {
            if let Some(name) = name {
                self.headers.append(name, value);
            }
        }
        self
    }

    pub fn body(mut self, body: impl Into<Vec<u8>>) -> Self {
        self.body = Some(body.into());
        self
    }

    /// Sent as [`IDEMPOTENCY_KEY`] on every hop, so the far side can tell a
    /// retried effect from a new one.
    pub fn idempotency_key(mut self, key: impl Into<String>) -> Self {
        self.idempotency_key = Some(key.into());
        self
    }

    pub fn method(&self) -> &Method {
        &self.method
    }

    pub fn url(&self) -> &Url {
        &self.url
    }
}

/// The answer to an [`EgressRequest`], after any redirects.
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct EgressResponse {
    pub status: StatusCode,
    pub headers: HeaderMap,
    pub body: Vec<u8>,
    /// The URL that answered: the request's, or the last redirect's.
    pub url: Url,
    /// How many redirects were followed.
    pub redirects: usize,
}

/// The one HTTP client for workflow nodes that reach outside; cheap to
/// clone (clones share connections).
///
/// - Every hop's URL is http or https, without credentials; an address in
///   it is checked before anything is sent.
/// - A host name is resolved by the [`Resolver`] and refused when any of its
///   addresses is blocked or when it does not resolve; the checked
///   addresses are the ones connected to.
/// - No proxy, whatever the environment says.
/// - At most [`EgressConfig::max_redirects`] redirects, each checked like
///   the first URL; a 303 (and a 301 or 302 after a POST) goes on as a GET
///   without the body; credentials (`Authorization`, `Cookie`) are dropped
///   when a redirect leaves the origin.
/// - The answer body is read up to [`EgressConfig::max_response_bytes`];
///   the whole exchange has [`EgressConfig::timeout`].
/// - HTTP/1.1; TLS is rustls with ring and the system's CA certificates.
#[derive(Clone)]
pub struct Egress {
    http: reqwest::Client,
    config: Arc<EgressConfig>,
    /// Why https cannot be verified on this machine, when it cannot.
    tls_problem: Option<Arc<str>>,
    #[cfg(test)]
    divert: Option<crate::divert::Divert>,
}

impl fmt::Debug for Egress {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Egress").field("config", &self.config).finish_non_exhaustive()
    }
}

impl Egress {
    /// A client resolving names with the system's resolver.
    pub fn new(config: EgressConfig) -> Result<Self, EgressError> {
        Egress::with_resolver(config, Arc::new(SystemResolver))
    }

    /// A client resolving names with `resolver`.
    pub fn with_resolver(config: EgressConfig, resolver: Arc<dyn Resolver>) -> Result<Self, EgressError> {
        let guard = Guard::new(resolver, Arc::new(config.allow.clone()));
        Egress::build(config, guard)
    }

    /// Tests only: a client that sends whatever it would send beyond
    /// 127.0.0.1 to `tripwire` instead (see `divert.rs`).
    #[cfg(test)]
    pub(crate) fn diverted(
        config: EgressConfig,
        resolver: Arc<dyn Resolver>,
        tripwire: std::net::SocketAddr,
    ) -> Result<Self, EgressError> {
        let mut guard = Guard::new(resolver, Arc::new(config.allow.clone()));
        guard.divert = Some(crate::divert::Divert::to(tripwire));
        Egress::build(config, guard)
    }

    fn build(config: EgressConfig, guard: Guard) -> Result<Self, EgressError> {
        #[cfg(test)]
        let divert = guard.divert;
        let (tls, tls_problem) = tls_config()?;
        let http = reqwest::Client::builder()
            .tls_backend_preconfigured(tls)
            .no_proxy()
            .redirect(reqwest::redirect::Policy::none())
            .retry(reqwest::retry::never())
            .referer(false)
            .dns_resolver(guard)
            .connect_timeout(config.connect_timeout)
            .user_agent(concat!("lenserfight/", env!("CARGO_PKG_VERSION")))
            .build()
            .map_err(|e| EgressError::http(format!("could not build the HTTP client: {}", causes(&e))))?;
        Ok(Egress {
            http,
            config: Arc::new(config),
            tls_problem: tls_problem.map(Arc::from),
            #[cfg(test)]
            divert,
        })
    }

    pub fn config(&self) -> &EgressConfig {
        &self.config
    }

    /// Sends the request, follows its redirects and reads the answer.
    /// Any status is an answer; an error says why there is none.
    pub async fn send(&self, request: EgressRequest) -> Result<EgressResponse, EgressError> {
        let after = self.config.timeout;
        tokio::time::timeout(after, self.exchange(request))
            .await
            .unwrap_or(Err(EgressError::Timeout { after }))
    }

    async fn exchange(&self, request: EgressRequest) -> Result<EgressResponse, EgressError> {
        let EgressRequest { mut method, mut url, mut headers, mut body, idempotency_key } = request;
        if headers.contains_key(header::HOST) {
            return Err(EgressError::invalid("a request may not set its Host header; it follows the URL"));
        }
        if let Some(key) = idempotency_key {
            let value = HeaderValue::from_str(&key)
                .map_err(|_| EgressError::invalid("the idempotency key is not a valid header value"))?;
            headers.insert(IDEMPOTENCY_KEY, value);
        }
        let mut redirects = 0;
        loop {
            self.check(&url)?;
            let mut hop = self.http.request(method.clone(), self.wire_url(&url)).headers(headers.clone());
            if let Some(bytes) = &body {
                hop = hop.body(bytes.clone());
            }
            let response = hop.send().await.map_err(|e| self.failure(e))?;
            let Some(next) = redirect_target(&url, &response)? else {
                let status = response.status();
                let answer_headers = response.headers().clone();
                let body = self.read_limited(response, self.config.max_response_bytes).await?;
                return Ok(EgressResponse { status, headers: answer_headers, body, url, redirects });
            };
            if redirects == self.config.max_redirects {
                return Err(EgressError::Redirects {
                    limit: self.config.max_redirects,
                    location: next.to_string(),
                });
            }
            redirects += 1;
            if drops_body(response.status(), &method) {
                if method != Method::HEAD {
                    method = Method::GET;
                }
                body = None;
                for name in [header::CONTENT_TYPE, header::CONTENT_LENGTH, header::CONTENT_ENCODING] {
                    headers.remove(name);
                }
            }
            if next.origin() != url.origin() {
                for name in [header::AUTHORIZATION, header::COOKIE, header::PROXY_AUTHORIZATION] {
                    headers.remove(name);
                }
            }
            url = next;
        }
    }

    /// At most `limit` bytes of the body, read as they come.
    async fn read_limited(
        &self,
        mut response: reqwest::Response,
        limit: usize,
    ) -> Result<Vec<u8>, EgressError> {
        if response.content_length().is_some_and(|n| n > limit as u64) {
            return Err(EgressError::TooLarge { limit });
        }
        let mut body = Vec::new();
        while let Some(chunk) = response.chunk().await.map_err(|e| self.failure(e))? {
            if body.len() + chunk.len() > limit {
                return Err(EgressError::TooLarge { limit });
            }
            body.extend_from_slice(&chunk);
        }
        Ok(body)
    }

    /// What every hop's URL passes before it is sent.
    fn check(&self, url: &Url) -> Result<(), EgressError> {
        policy::check_url(url, &self.config.allow).inspect_err(|e| {
            tracing::warn!(target: "lf_egress", host = url.host_str().unwrap_or(""), error = %e, "refused a URL");
        })?;
        match &self.tls_problem {
            Some(problem) if url.scheme() == "https" => Err(EgressError::http(problem.as_ref())),
            _ => Ok(()),
        }
    }

    #[cfg(not(test))]
    fn wire_url(&self, url: &Url) -> Url {
        url.clone()
    }

    #[cfg(test)]
    fn wire_url(&self, url: &Url) -> Url {
        crate::divert::Divert::url(self.divert.as_ref(), url)
    }

    /// The error for a failed exchange: the guard's refusal when it was one.
    fn failure(&self, error: reqwest::Error) -> EgressError {
        if let Some(refusal) = Refusal::find(&error) {
            return refusal.to_error();
        }
        if error.is_timeout() {
            return EgressError::Timeout { after: self.config.connect_timeout };
        }
        let error = error.without_url();
        let message = if error.is_connect() {
            format!("could not connect: {}", causes(&error))
        } else {
            causes(&error)
        };
        EgressError::Http { message, source: Some(Box::new(error)) }
    }
}

/// Where a redirect answer points, or `None` for any other answer.
fn redirect_target(url: &Url, response: &reqwest::Response) -> Result<Option<Url>, EgressError> {
    let redirect = matches!(response.status().as_u16(), 301 | 302 | 303 | 307 | 308);
    let Some(location) = response.headers().get(header::LOCATION).filter(|_| redirect) else {
        return Ok(None);
    };
    let location = location
        .to_str()
        .map_err(|_| EgressError::invalid("a redirect's Location header is not plain text"))?;
    url.join(location)
        .map(Some)
        .map_err(|e| EgressError::invalid(format!("a redirect's Location {location:?} is not a URL ({e})")))
}

/// A 303, and a 301 or 302 after a POST, go on as a GET without the body.
fn drops_body(status: StatusCode, method: &Method) -> bool {
    match status.as_u16() {
        303 => true,
        301 | 302 => *method == Method::POST,
        _ => false,
    }
}

/// An error and its sources, innermost last, each said once.
fn causes(error: &(dyn StdError + 'static)) -> String {
    let mut parts: Vec<String> = Vec::new();
    let mut next = Some(error);
    while let Some(e) = next {
        let text = e.to_string();
        if !parts.iter().any(|p| p.contains(&text)) {
            parts.push(text);
        }
        next = e.source();
    }
    parts.join(": ")
}

/// rustls with ring and the system's verifier. reqwest is built without a
/// process-wide crypto provider (`rustls-no-provider`), so every client is
/// handed its TLS configuration. Without the system's certificates, http
/// still works and https is refused with a message that says what to
/// install.
fn tls_config() -> Result<(rustls::ClientConfig, Option<String>), EgressError> {
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let versions = rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(|e| EgressError::http(format!("TLS setup failed: {e}")))?;
    Ok(match versions.clone().with_platform_verifier() {
        Ok(verified) => (verified.with_no_client_auth(), None),
        Err(e) => (
            versions.with_root_certificates(rustls::RootCertStore::empty()).with_no_client_auth(),
            Some(format!(
                "cannot verify https servers: {e} (install the system's CA certificates, e.g. the ca-certificates package)"
            )),
        ),
    })
}
