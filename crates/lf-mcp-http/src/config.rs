//! The HTTP server's settings: flags, `LENSERFIGHT_*` variables, and their
//! checks. A bad value stops start-up with a message naming the key.

use std::net::SocketAddr;
use std::time::Duration;

use lf_server::{CommonArgs, ConfigError, Setting};
use url::Url;

/// `lf-mcp-http serve`: the MCP server over Streamable HTTP.
#[derive(clap::Args, Debug, Clone, Default)]
pub struct ServeArgs {
    #[command(flatten)]
    pub common: CommonArgs,

    /// Address to listen on.
    #[arg(long, env = "LENSERFIGHT_BIND", default_value = "127.0.0.1:8080")]
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
    #[arg(long, env = "LENSERFIGHT_REQUEST_TIMEOUT", default_value_t = 30)]
    pub request_timeout: u64,

    /// Keep MCP sessions (Mcp-Session-Id) for clients of the initialize
    /// handshake. Off by default: every request stands alone, so several
    /// processes can serve one database.
    #[arg(long, env = "LENSERFIGHT_SESSIONS")]
    pub sessions: bool,

    /// Development only: requests without a token act as this lenser (a
    /// handle made with `admin create-lenser`). Refused unless the server
    /// listens on a loopback address.
    #[arg(long, env = "LENSERFIGHT_DEV_LENSER")]
    pub dev_lenser: Option<String>,
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
    pub sessions: bool,
    pub dev_lenser: Option<String>,
}

/// The largest request body accepted, in bytes.
pub const MAX_BODY: usize = 1 << 20;

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
        if !(1..=3600).contains(&args.request_timeout) {
            return Err(bad(Setting::RequestTimeout, "must be between 1 and 3600 seconds".into()));
        }
        let dev_lenser =
            args.dev_lenser.as_deref().map(str::trim).filter(|s| !s.is_empty()).map(str::to_owned);
        if dev_lenser.is_some() && !bind.ip().is_loopback() {
            return Err(bad(
                Setting::DevLenser,
                format!(
                    "development mode lets anyone who can connect act as that lenser, so it only runs on a loopback address; {bind} is not one"
                ),
            ));
        }
        Ok(Self {
            common,
            bind,
            public_url,
            public_url_set,
            extra_origins,
            request_timeout: Duration::from_secs(args.request_timeout),
            sessions: args.sessions,
            dev_lenser,
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
            bind: "127.0.0.1:8080".into(),
            request_timeout: 30,
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
    }
}
