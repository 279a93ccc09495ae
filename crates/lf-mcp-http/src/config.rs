//! The HTTP server's settings: flags, `LENSERFIGHT_*` variables, and their
//! checks. A bad value stops start-up with a message naming the key.

use std::net::SocketAddr;
use std::num::NonZeroU32;
use std::time::Duration;

use lf_server::{CommonArgs, ConfigError, Setting};
use url::Url;

use crate::guard::is_loopback_host;
use crate::limits::TrustedProxies;

/// `lf-mcp-http serve`: the MCP server over Streamable HTTP. Its
/// `Default` is what the command line gives when nothing is set.
#[derive(clap::Args, Debug, Clone)]
pub struct ServeArgs {
    #[command(flatten)]
    pub common: CommonArgs,

    /// Address to listen on.
    #[arg(long, env = "LENSERFIGHT_BIND", default_value = defaults::BIND)]
    pub bind: String,

    /// The address clients use to reach this server, e.g. https://mcp.example.com
    /// [default: http://<bind>]. Its host is the one allowed besides loopback;
    /// OAuth documents and token audiences are built from it.
    #[arg(long, env = "LENSERFIGHT_PUBLIC_URL")]
    pub public_url: Option<String>,

    /// More browser origins allowed to call the server, comma-separated
    /// (the public URL's origin and loopback are always allowed).
    #[arg(long, env = "LENSERFIGHT_ALLOWED_ORIGINS", value_delimiter = ',')]
    pub allowed_origins: Option<Vec<String>>,

    /// Seconds a request may take before it is answered 504.
    #[arg(long, env = "LENSERFIGHT_REQUEST_TIMEOUT", default_value_t = defaults::REQUEST_TIMEOUT)]
    pub request_timeout: u64,

    /// Seconds a client has to send a request's headers, counted from the
    /// connection's opening or from the first byte after an answer; then the
    /// connection is closed.
    #[arg(long, env = "LENSERFIGHT_HEADER_TIMEOUT", default_value_t = defaults::HEADER_TIMEOUT)]
    pub header_timeout: u64,

    /// Seconds a kept-alive connection may wait for its next request.
    #[arg(long, env = "LENSERFIGHT_IDLE_TIMEOUT", default_value_t = defaults::IDLE_TIMEOUT)]
    pub idle_timeout: u64,

    /// Most connections open at once. At the cap, a connection still
    /// sending its request, else the one idle the longest, is closed for a
    /// new one; when every connection has a request in flight, new ones wait.
    #[arg(long, env = "LENSERFIGHT_MAX_CONNECTIONS", default_value_t = defaults::MAX_CONNECTIONS)]
    pub max_connections: u64,

    /// Most connections open at once from one client address (an IPv6
    /// address counts as its /64; behind a trusted proxy, the proxy's are
    /// not counted). At the cap, a new connection closes one of that
    /// client's the same way, or is closed itself.
    #[arg(long, env = "LENSERFIGHT_MAX_CONNECTIONS_PER_CLIENT", default_value_t = defaults::MAX_CONNECTIONS_PER_CLIENT)]
    pub max_connections_per_client: u64,

    /// Seconds a request body may take before it must come at least at the
    /// minimum body rate.
    #[arg(long, env = "LENSERFIGHT_BODY_GRACE", default_value_t = defaults::BODY_GRACE)]
    pub body_grace: u64,

    /// Bytes a second a request body must average once the grace is over;
    /// a slower one is answered 408 and its connection closed.
    #[arg(long, env = "LENSERFIGHT_MIN_BODY_RATE", default_value_t = defaults::MIN_BODY_RATE)]
    pub min_body_rate: u64,

    /// Seconds the requests in flight may take to finish after a stop
    /// signal; then their connections are dropped.
    #[arg(long, env = "LENSERFIGHT_SHUTDOWN_TIMEOUT", default_value_t = defaults::SHUTDOWN_TIMEOUT)]
    pub shutdown_timeout: u64,

    /// Reverse proxies whose X-Forwarded-For names the client, for the
    /// per-address limits: addresses or networks (10.0.0.0/8),
    /// comma-separated. Others' X-Forwarded-For is ignored.
    #[arg(long, env = "LENSERFIGHT_TRUSTED_PROXIES", value_delimiter = ',')]
    pub trusted_proxies: Option<Vec<String>>,

    /// Most OAuth client registrations per hour, from all addresses together.
    #[arg(long, env = "LENSERFIGHT_REGISTRATIONS_PER_HOUR", default_value_t = defaults::REGISTRATIONS_PER_HOUR)]
    pub registrations_per_hour: u64,

    /// Most webhook calls (POST /hooks/{workflow_id}) a minute to one
    /// workflow, and from one client address; refused and failed calls count.
    #[arg(long, env = "LENSERFIGHT_HOOKS_PER_MINUTE", default_value_t = defaults::HOOKS_PER_MINUTE)]
    pub hooks_per_minute: u64,

    /// Keep MCP sessions (Mcp-Session-Id) for clients of the initialize
    /// handshake. Off by default: every request stands alone, so several
    /// processes can serve one database.
    #[arg(long, env = "LENSERFIGHT_SESSIONS")]
    pub sessions: bool,

    /// Development only: requests without a token to a loopback host act as
    /// this lenser (a handle made with `admin create-lenser`). Refused unless
    /// the server listens on a loopback address and the public URL's host is
    /// loopback.
    #[arg(long, env = "LENSERFIGHT_DEV_LENSER")]
    pub dev_lenser: Option<String>,

    /// Serve GET /metrics (and GET /ready) on this address of their own
    /// instead of beside /mcp, e.g. 127.0.0.1:9464 [default: beside /mcp]
    #[arg(long, env = "LENSERFIGHT_METRICS_BIND", value_name = "ADDRESS")]
    pub metrics_bind: Option<String>,
    /// Tests and local development only: a client ID metadata document URL
    /// may be http:// on a loopback host (the egress allow-list must open
    /// it too). Otherwise it must be https.
    #[arg(long, env = "LENSERFIGHT_CLIENT_METADATA_HTTP_LOOPBACK")]
    pub client_metadata_http_loopback: bool,

    /// Serve no web pages (sign-in, battles, arena, leaderboard, experiments,
    /// workflow runs): only MCP, OAuth, webhooks and the operators' endpoints.
    #[arg(long, env = "LENSERFIGHT_NO_PAGES")]
    pub no_pages: bool,
}

/// The values of the settings nobody set.
mod defaults {
    pub const BIND: &str = "127.0.0.1:8080";
    pub const REQUEST_TIMEOUT: u64 = 30;
    pub const HEADER_TIMEOUT: u64 = 10;
    pub const IDLE_TIMEOUT: u64 = 60;
    pub const MAX_CONNECTIONS: u64 = 1024;
    pub const MAX_CONNECTIONS_PER_CLIENT: u64 = 128;
    pub const BODY_GRACE: u64 = 10;
    pub const MIN_BODY_RATE: u64 = 1024;
    pub const SHUTDOWN_TIMEOUT: u64 = 10;
    pub const REGISTRATIONS_PER_HOUR: u64 = 1000;
    pub const HOOKS_PER_MINUTE: u64 = 60;
}

impl Default for ServeArgs {
    fn default() -> Self {
        Self {
            common: CommonArgs::default(),
            bind: defaults::BIND.to_owned(),
            public_url: None,
            allowed_origins: None,
            request_timeout: defaults::REQUEST_TIMEOUT,
            header_timeout: defaults::HEADER_TIMEOUT,
            idle_timeout: defaults::IDLE_TIMEOUT,
            max_connections: defaults::MAX_CONNECTIONS,
            max_connections_per_client: defaults::MAX_CONNECTIONS_PER_CLIENT,
            body_grace: defaults::BODY_GRACE,
            min_body_rate: defaults::MIN_BODY_RATE,
            shutdown_timeout: defaults::SHUTDOWN_TIMEOUT,
            trusted_proxies: None,
            registrations_per_hour: defaults::REGISTRATIONS_PER_HOUR,
            hooks_per_minute: defaults::HOOKS_PER_MINUTE,
            sessions: false,
            dev_lenser: None,
            metrics_bind: None,
            client_metadata_http_loopback: false,
            no_pages: false,
        }
    }
}

/// Validated settings of `serve`.
#[derive(Clone, Debug)]
pub struct HttpConfig {
    /// The settings both servers share.
    pub common: lf_server::Config,
    pub bind: SocketAddr,
    /// Scheme, host and port clients use, without a trailing slash.
    pub public_url: String,
    /// Whether the public URL was configured (else it follows the bound address).
    pub public_url_set: bool,
    /// Origins allowed besides loopback and the public URL's, normalized.
    pub extra_origins: Vec<String>,
    pub request_timeout: Duration,
    /// Timeouts and the cap of connections.
    pub connections: ConnectionLimits,
    /// Proxies whose X-Forwarded-For is believed.
    pub trusted_proxies: TrustedProxies,
    pub registrations_per_hour: NonZeroU32,
    /// Webhook calls a minute, per workflow and per client address.
    pub hooks_per_minute: NonZeroU32,
    pub sessions: bool,
    pub dev_lenser: Option<String>,
    /// Where `/metrics` is served when not beside `/mcp`.
    pub metrics_bind: Option<SocketAddr>,
    /// How client ID metadata documents are fetched.
    pub client_metadata: ClientMetadataLimits,
    /// Whether the web pages (lf-pages) are served.
    pub pages: bool,
}

/// How client ID metadata documents are fetched: through the egress guard
/// under its allow-list, without redirects, size and time capped.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ClientMetadataLimits {
    /// The whole fetch, connection included.
    pub timeout: Duration,
    /// The largest document, in bytes.
    pub max_bytes: usize,
    /// Whether an http:// URL on a loopback host is accepted.
    pub http_loopback: bool,
}

impl ClientMetadataLimits {
    /// 5 seconds and 5 KiB (the size the draft suggests), https only.
    pub const DEFAULT: ClientMetadataLimits =
        ClientMetadataLimits { timeout: Duration::from_secs(5), max_bytes: 5 * 1024, http_loopback: false };
}

/// How long a connection may wait for what, and how many may be open.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ConnectionLimits {
    /// For a request's headers, from the connection's opening or from the
    /// first byte after an answer.
    pub header_timeout: Duration,
    /// For the next request, on a connection with nothing in flight.
    pub idle_timeout: Duration,
    /// Most connections open at once.
    pub max_connections: usize,
    /// Most connections open at once from one client address.
    pub max_per_client: usize,
    /// How long a request body may come at any rate.
    pub body_grace: Duration,
    /// Bytes a second a body must average after the grace.
    pub min_body_rate: u64,
    /// For the requests in flight to finish after a stop signal.
    pub shutdown_timeout: Duration,
}

/// The largest request body accepted, in bytes.
pub const MAX_BODY: usize = 1 << 20;

/// The highest `--max-connections` (the semaphore that counts them takes
/// at most this many permits at once).
const MAX_CONNECTIONS: usize = 1 << 20;

impl HttpConfig {
    /// Checks every setting; an error names the key.
    pub fn from_args(args: &ServeArgs) -> Result<Self, ConfigError> {
        let common = lf_server::Config::from_args(&args.common)?;
        let bad = |setting, message| args.common.bad(setting, message);
        let bind: SocketAddr = args
            .bind
            .trim()
            .parse()
            .map_err(|e| bad(Setting::Bind, format!("{e}; expected an address like 127.0.0.1:8080")))?;
        let metrics_bind = match args.metrics_bind.as_deref().map(str::trim).filter(|s| !s.is_empty()) {
            None => None,
            Some(raw) => Some(raw.parse::<SocketAddr>().map_err(|e| {
                bad(Setting::MetricsBind, format!("{e}; expected an address like 127.0.0.1:9464"))
            })?),
        };
        let (public_url, public_url_set) =
            match args.public_url.as_deref().map(str::trim).filter(|s| !s.is_empty()) {
                None => (format!("http://{bind}"), false),
                Some(raw) => (origin_of(raw).map_err(|e| bad(Setting::PublicUrl, e))?, true),
            };
        let extra_origins = args
            .allowed_origins
            .iter()
            .flatten()
            .map(|s| s.trim())
            .filter(|s| !s.is_empty())
            .map(|s| origin_of(s).map_err(|e| bad(Setting::AllowedOrigins, e)))
            .collect::<Result<Vec<_>, _>>()?;
        let seconds = |setting, value: u64, most: u64| {
            if (1..=most).contains(&value) {
                Ok(Duration::from_secs(value))
            } else {
                Err(bad(setting, format!("must be between 1 and {most} seconds")))
            }
        };
        let request_timeout = seconds(Setting::RequestTimeout, args.request_timeout, 3600)?;
        let connections = ConnectionLimits {
            header_timeout: seconds(Setting::HeaderTimeout, args.header_timeout, 3600)?,
            idle_timeout: seconds(Setting::IdleTimeout, args.idle_timeout, 3600)?,
            max_connections: usize::try_from(args.max_connections)
                .ok()
                .filter(|n| (1..=MAX_CONNECTIONS).contains(n))
                .ok_or_else(|| {
                    bad(Setting::MaxConnections, format!("must be between 1 and {MAX_CONNECTIONS}"))
                })?,
            max_per_client: usize::try_from(args.max_connections_per_client)
                .ok()
                .filter(|n| (1..=MAX_CONNECTIONS).contains(n))
                .ok_or_else(|| {
                    bad(Setting::MaxConnectionsPerClient, format!("must be between 1 and {MAX_CONNECTIONS}"))
                })?,
            body_grace: seconds(Setting::BodyGrace, args.body_grace, 3600)?,
            min_body_rate: Some(args.min_body_rate)
                .filter(|n| (1..=1 << 30).contains(n))
                .ok_or_else(|| bad(Setting::MinBodyRate, "must be between 1 and 1073741824".into()))?,
            shutdown_timeout: seconds(Setting::ShutdownTimeout, args.shutdown_timeout, 3600)?,
        };
        let trusted_proxies = TrustedProxies::parse(args.trusted_proxies.as_deref().unwrap_or_default())
            .map_err(|e| bad(Setting::TrustedProxies, e))?;
        let registrations_per_hour = u32::try_from(args.registrations_per_hour)
            .ok()
            .and_then(NonZeroU32::new)
            .filter(|n| n.get() <= 1_000_000)
            .ok_or_else(|| bad(Setting::RegistrationsPerHour, "must be between 1 and 1000000".into()))?;
        let hooks_per_minute = u32::try_from(args.hooks_per_minute)
            .ok()
            .and_then(NonZeroU32::new)
            .filter(|n| n.get() <= 1_000_000)
            .ok_or_else(|| bad(Setting::HooksPerMinute, "must be between 1 and 1000000".into()))?;
        let dev_lenser =
            args.dev_lenser.as_deref().map(str::trim).filter(|s| !s.is_empty()).map(str::to_owned);
        if dev_lenser.is_some() {
            let refuse = |what: String| {
                bad(
                    Setting::DevLenser,
                    format!(
                        "development mode lets anyone who can connect act as that lenser, so it only runs on a loopback address and with a loopback public URL; {what}"
                    ),
                )
            };
            if !bind.ip().is_loopback() {
                return Err(refuse(format!("{bind} is not one")));
            }
            // Behind a reverse proxy the socket is loopback but the
            // clients are not.
            let host = Url::parse(&public_url).ok().and_then(|u| u.host_str().map(str::to_owned));
            if !host.as_deref().is_some_and(is_loopback_host) {
                return Err(refuse(format!("the public URL {public_url} is not one")));
            }
        }
        Ok(Self {
            common,
            bind,
            public_url,
            public_url_set,
            extra_origins,
            request_timeout,
            connections,
            trusted_proxies,
            registrations_per_hour,
            hooks_per_minute,
            sessions: args.sessions,
            dev_lenser,
            metrics_bind,
            client_metadata: ClientMetadataLimits {
                http_loopback: args.client_metadata_http_loopback,
                ..ClientMetadataLimits::DEFAULT
            },
            pages: !args.no_pages,
        })
    }

    /// The MCP endpoint's URL: the resource tokens are issued for.
    pub fn resource(&self) -> String {
        format!("{}/mcp", self.public_url)
    }
}

/// `scheme://host[:port]` of an http(s) URL with no path, query or
/// credentials; the port is left out when it is the scheme's default.
fn origin_of(raw: &str) -> Result<String, String> {
    let url = Url::parse(raw).map_err(|e| format!("{raw:?} is not a URL: {e}"))?;
    if !matches!(url.scheme(), "http" | "https") {
        return Err(format!("{raw:?} must start with http:// or https://"));
    }
    if !url.username().is_empty() || url.password().is_some() {
        return Err(format!("{raw:?} must not contain credentials"));
    }
    if url.path() != "/" || url.query().is_some() || url.fragment().is_some() {
        return Err(format!("{raw:?} must be just scheme, host and port, with no path"));
    }
    let host = url.host_str().ok_or_else(|| format!("{raw:?} has no host"))?;
    Ok(match url.port() {
        Some(port) => format!("{}://{host}:{port}", url.scheme()),
        None => format!("{}://{host}", url.scheme()),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(f: impl FnOnce(&mut ServeArgs)) -> ServeArgs {
        let mut a = ServeArgs {
            common: CommonArgs { database_url: Some("sqlite::memory:".into()), ..CommonArgs::default() },
            ..ServeArgs::default()
        };
        f(&mut a);
        a
    }

    #[test]
    fn defaults_to_the_bind_address() {
        let c = HttpConfig::from_args(&args(|_| {})).unwrap();
        assert_eq!(c.public_url, "http://127.0.0.1:8080");
        assert_eq!(c.resource(), "http://127.0.0.1:8080/mcp");
    }

    #[test]
    fn public_url_is_normalized_and_checked() {
        let c = HttpConfig::from_args(&args(|a| a.public_url = Some("HTTPS://MCP.Example.com:443/".into())))
            .unwrap();
        assert_eq!(c.public_url, "https://mcp.example.com");
        for bad in ["ftp://x.example", "https://x.example/mcp", "https://u:p@x.example", "nonsense"] {
            let e =
                HttpConfig::from_args(&args(|a| a.public_url = Some(bad.into()))).unwrap_err().to_string();
            assert!(e.contains("LENSERFIGHT_PUBLIC_URL"), "{bad}: {e}");
        }
    }

    #[test]
    fn bad_values_name_their_key() {
        let e = HttpConfig::from_args(&args(|a| a.bind = "localhost".into())).unwrap_err().to_string();
        assert!(e.contains("LENSERFIGHT_BIND"), "{e}");
        let e = HttpConfig::from_args(&args(|a| a.request_timeout = 0)).unwrap_err().to_string();
        assert!(e.contains("LENSERFIGHT_REQUEST_TIMEOUT"), "{e}");
        let e = HttpConfig::from_args(&args(|a| a.header_timeout = 0)).unwrap_err().to_string();
        assert!(e.contains("LENSERFIGHT_HEADER_TIMEOUT"), "{e}");
        let e = HttpConfig::from_args(&args(|a| a.idle_timeout = 3601)).unwrap_err().to_string();
        assert!(e.contains("LENSERFIGHT_IDLE_TIMEOUT"), "{e}");
        let e = HttpConfig::from_args(&args(|a| a.max_connections = 0)).unwrap_err().to_string();
        assert!(e.contains("LENSERFIGHT_MAX_CONNECTIONS"), "{e}");
        let e = HttpConfig::from_args(&args(|a| a.max_connections_per_client = 0)).unwrap_err().to_string();
        assert!(e.contains("LENSERFIGHT_MAX_CONNECTIONS_PER_CLIENT"), "{e}");
        let e = HttpConfig::from_args(&args(|a| a.body_grace = 0)).unwrap_err().to_string();
        assert!(e.contains("LENSERFIGHT_BODY_GRACE"), "{e}");
        let e = HttpConfig::from_args(&args(|a| a.min_body_rate = 0)).unwrap_err().to_string();
        assert!(e.contains("LENSERFIGHT_MIN_BODY_RATE"), "{e}");
        let e = HttpConfig::from_args(&args(|a| a.shutdown_timeout = 0)).unwrap_err().to_string();
        assert!(e.contains("LENSERFIGHT_SHUTDOWN_TIMEOUT"), "{e}");
        let e = HttpConfig::from_args(&args(|a| a.trusted_proxies = Some(vec!["proxy.internal".into()])))
            .unwrap_err()
            .to_string();
        assert!(e.contains("LENSERFIGHT_TRUSTED_PROXIES"), "{e}");
        let e = HttpConfig::from_args(&args(|a| a.registrations_per_hour = 0)).unwrap_err().to_string();
        assert!(e.contains("LENSERFIGHT_REGISTRATIONS_PER_HOUR"), "{e}");
        let e = HttpConfig::from_args(&args(|a| a.hooks_per_minute = 0)).unwrap_err().to_string();
        assert!(e.contains("LENSERFIGHT_HOOKS_PER_MINUTE"), "{e}");
        let e = HttpConfig::from_args(&args(|a| a.allowed_origins = Some(vec!["null".into()])))
            .unwrap_err()
            .to_string();
        assert!(e.contains("LENSERFIGHT_ALLOWED_ORIGINS"), "{e}");
    }

    #[test]
    fn development_mode_only_on_loopback() {
        let ok = HttpConfig::from_args(&args(|a| a.dev_lenser = Some("dev_user".into()))).unwrap();
        assert_eq!(ok.dev_lenser.as_deref(), Some("dev_user"));
        let e = HttpConfig::from_args(&args(|a| {
            a.dev_lenser = Some("dev_user".into());
            a.bind = "0.0.0.0:8080".into();
        }))
        .unwrap_err()
        .to_string();
        assert!(e.contains("LENSERFIGHT_DEV_LENSER") && e.contains("loopback"), "{e}");
        for public in ["https://mcp.example.com", "http://10.0.0.5:8080"] {
            let e = HttpConfig::from_args(&args(|a| {
                a.dev_lenser = Some("dev_user".into());
                a.public_url = Some(public.into());
            }))
            .unwrap_err()
            .to_string();
            assert!(e.contains("LENSERFIGHT_DEV_LENSER") && e.contains("public URL"), "{public}: {e}");
        }
        for public in ["http://localhost:8612", "http://127.0.0.1:8612", "http://[::1]:8612"] {
            let ok = HttpConfig::from_args(&args(|a| {
                a.dev_lenser = Some("dev_user".into());
                a.public_url = Some(public.into());
            }));
            assert!(ok.is_ok(), "{public}: {ok:?}");
        }
    }
}
