//! Name resolution, checked: reqwest asks [`Guard`] for a host's addresses
//! just before it connects, and gets them only when every one of them
//! passes [`policy::verdict`]. The addresses checked are the addresses
//! connected to, so an answer that changes between two lookups (DNS
//! rebinding) changes nothing.

use std::error::Error as StdError;
use std::fmt;
use std::io;
use std::net::{IpAddr, SocketAddr};
use std::sync::Arc;

use async_trait::async_trait;
use reqwest::dns::{Addrs, Name, Resolve, Resolving};

use crate::allow::Allow;
use crate::error::EgressError;
use crate::policy;

/// Where host names are looked up: the system's resolver
/// ([`SystemResolver`]) unless another is handed to
/// [`crate::Egress::with_resolver`] (a test's fixed answers).
#[async_trait]
pub trait Resolver: Send + Sync {
    /// Every address of `host`; an error or an empty answer refuses the request.
    async fn resolve(&self, host: &str) -> io::Result<Vec<IpAddr>>;
}

/// The operating system's resolver (getaddrinfo, on tokio's blocking pool).
#[derive(Clone, Copy, Debug, Default)]
pub struct SystemResolver;

#[async_trait]
impl Resolver for SystemResolver {
    async fn resolve(&self, host: &str) -> io::Result<Vec<IpAddr>> {
        Ok(tokio::net::lookup_host((host, 0)).await?.map(|a| a.ip()).collect())
    }
}

/// The resolver reqwest is given.
#[derive(Clone)]
pub(crate) struct Guard {
    pub(crate) resolver: Arc<dyn Resolver>,
    pub(crate) allow: Arc<Allow>,
    /// Tests only: where a connection would go instead (see `divert.rs`).
    #[cfg(test)]
    pub(crate) divert: Option<crate::divert::Divert>,
}

impl Guard {
    pub(crate) fn new(resolver: Arc<dyn Resolver>, allow: Arc<Allow>) -> Self {
        Guard {
            resolver,
            allow,
            #[cfg(test)]
            divert: None,
        }
    }

    /// The addresses of `host`, when every one may be reached.
    async fn check(&self, host: &str) -> Result<Vec<SocketAddr>, Refusal> {
        let dns = |reason: String| Refusal::Dns { host: host.to_owned(), reason };
        let addrs = self.resolver.resolve(host).await.map_err(|e| dns(e.to_string()))?;
        if addrs.is_empty() {
            return Err(dns("no addresses".into()));
        }
        if let Some((addr, reason)) =
            addrs.iter().find_map(|a| policy::verdict(*a, Some(host), &self.allow).map(|r| (*a, r)))
        {
            tracing::warn!(target: "lf_egress", host, %addr, reason, "refused a resolved address");
            return Err(Refusal::Blocked { host: host.to_owned(), addr, reason });
        }
        // Port 0: reqwest puts the URL's port in.
        let addrs = addrs.into_iter().map(|ip| SocketAddr::new(ip, 0));
        #[cfg(test)]
        let addrs = addrs.map(|a| crate::divert::Divert::apply(self.divert.as_ref(), a));
        Ok(addrs.collect())
    }
}

impl Resolve for Guard {
    fn resolve(&self, name: Name) -> Resolving {
        let guard = self.clone();
        Box::pin(async move {
            let addrs = guard.check(name.as_str()).await?;
            Ok(Box::new(addrs.into_iter()) as Addrs)
        })
    }
}

/// The guarded resolver for a reqwest client built elsewhere (the model
/// client of a profile's saved connection, in lf-model): a host's
/// addresses are looked up with `resolver` and handed over only when every
/// one passes the policy under `allow`, as [`crate::Egress`]'s are. A name
/// refused is an [`io::Error`] of kind `PermissionDenied` (a blocked
/// address) or `NotFound` (no address) in the request's error, worded as
/// [`crate::EgressError`] words it; nothing is sent.
pub fn guarded_dns(allow: Allow, resolver: Arc<dyn Resolver>) -> Arc<dyn Resolve> {
    Arc::new(Guarded(Guard::new(resolver, Arc::new(allow))))
}

struct Guarded(Guard);

impl Resolve for Guarded {
    fn resolve(&self, name: Name) -> Resolving {
        let guard = self.0.clone();
        Box::pin(async move {
            match guard.check(name.as_str()).await {
                Ok(addrs) => Ok(Box::new(addrs.into_iter()) as Addrs),
                Err(refusal) => {
                    let kind = match refusal {
                        Refusal::Blocked { .. } => io::ErrorKind::PermissionDenied,
                        Refusal::Dns { .. } => io::ErrorKind::NotFound,
                    };
                    Err(Box::new(io::Error::new(kind, refusal.to_string()))
                        as Box<dyn StdError + Send + Sync>)
                }
            }
        })
    }
}

/// What the guarded resolver hands reqwest when it refuses a name, found
/// again in the error reqwest returns ([`Refusal::find`]).
#[derive(Debug)]
pub(crate) enum Refusal {
    Blocked { host: String, addr: IpAddr, reason: &'static str },
    Dns { host: String, reason: String },
}

impl Refusal {
    /// The refusal somewhere in an error's chain of sources.
    pub(crate) fn find<'a>(error: &'a (dyn StdError + 'static)) -> Option<&'a Refusal> {
        let mut next = Some(error);
        while let Some(e) = next {
            if let Some(refusal) = e.downcast_ref::<Refusal>() {
                return Some(refusal);
            }
            next = e.source();
        }
        None
    }

    pub(crate) fn to_error(&self) -> EgressError {
        match self {
            Refusal::Blocked { host, addr, reason } => EgressError::blocked(host.clone(), *addr, reason),
            Refusal::Dns { host, reason } => EgressError::Dns { host: host.clone(), reason: reason.clone() },
        }
    }
}

impl fmt::Display for Refusal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.to_error().fmt(f)
    }
}

impl StdError for Refusal {}
