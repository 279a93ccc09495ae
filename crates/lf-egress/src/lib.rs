//! lf-egress is the one HTTP client for workflow nodes that reach outside
//! (HTTP and GraphQL requests, webhooks, feeds): [`Egress::send`] takes an
//! [`EgressRequest`] and answers an [`EgressResponse`] or an
//! [`EgressError`] with a stable [`EgressErrorKind`].
//!
//! It exists so that a URL written into a workflow cannot reach what the
//! server can and the workflow's author cannot: the loopback interface,
//! the private network, the cloud's metadata service. Every address is
//! checked before a connection is made to it: the URL's own (in any
//! spelling the URL parser accepts: `0x7f.1`, `2130706433`,
//! `[::ffff:127.0.0.1]`) and each one a host name resolves to, the latter
//! inside the resolver reqwest connects with, so the addresses checked are
//! the addresses used. [`blocked`] lists the ranges and the reason each
//! gives; IPv6 forms that carry an IPv4 address (mapped, NAT64, 6to4) are
//! judged by it. A name that does not resolve is refused. No proxy is used,
//! whatever the environment says. Redirects are followed here, at most
//! [`EgressConfig::max_redirects`], each hop checked again; answers are
//! read up to a size limit and the whole exchange has a deadline.
//!
//! The operator opens hosts and ranges with an [`Allow`] list
//! ([`ALLOW_KEY`], `LENSERFIGHT_EGRESS_ALLOW`): a model server on the LAN,
//! the tests' loopback fakes. Cloud metadata addresses ([`METADATA`]) stay
//! closed whatever it says.
//!
//! ```no_run
//! # async fn run() -> Result<(), lf_egress::EgressError> {
//! use lf_egress::{Allow, Egress, EgressConfig, EgressRequest, Method, Url};
//!
//! let config = EgressConfig { allow: Allow::parse("ollama.lan").unwrap(), ..EgressConfig::default() };
//! let egress = Egress::new(config)?;
//! let url = Url::parse("https://example.com/hook").unwrap();
//! let answer = egress
//!     .send(EgressRequest::new(Method::POST, url).body("{}").idempotency_key("run-1/node-2/attempt-1"))
//!     .await?;
//! println!("{} {} bytes", answer.status, answer.body.len());
//! # Ok(()) }
//! ```
//!
//! lf-egress knows nothing of workflows, nodes, connections or the
//! database: a caller hands it a request and gets an answer; what a node
//! sends and what its result holds are the caller's. It depends on nothing
//! of ours. Calls need a tokio runtime with the time driver.

mod allow;
mod client;
#[cfg(test)]
mod divert;
mod error;
mod policy;
mod resolve;
#[cfg(test)]
mod tests;

pub use allow::{ALLOW_KEY, Allow, AllowError};
pub use client::{
    DEFAULT_CONNECT_TIMEOUT, DEFAULT_MAX_REDIRECTS, DEFAULT_MAX_RESPONSE_BYTES, DEFAULT_TIMEOUT, Egress,
    EgressConfig, EgressRequest, EgressResponse, IDEMPOTENCY_KEY,
};
pub use error::{EgressError, EgressErrorKind};
pub use policy::{METADATA, METADATA_REASON, blocked, refused_without_lookup};
// Requests and answers are spoken in reqwest's (the http crate's) types.
/// What [`guarded_dns`] answers: reqwest's resolver trait.
pub use reqwest::dns::Resolve;
pub use reqwest::header::{HeaderMap, HeaderName, HeaderValue};
pub use reqwest::{Method, StatusCode, Url};
pub use resolve::{Resolver, SystemResolver, guarded_dns};
