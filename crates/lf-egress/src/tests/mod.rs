//! The client end to end, on loopback only.
//!
//! No test sends a packet beyond 127.0.0.1, even with a broken guard:
//!
//! - names are looked up by [`Answers`], fixed answers in the test: a name
//!   may "resolve" to 10.0.0.1 without any DNS;
//! - every client is built with `Egress::diverted`, so whatever address it
//!   would hand to the network other than 127.0.0.1 goes to a tripwire
//!   instead, a [`Sink`] on 127.0.0.1 that counts what reaches it (see
//!   `divert.rs` for where the addresses are caught);
//! - a refusal test asserts the error, its reason, and that the tripwire
//!   counted nothing; `the_tripwire_catches_what_passes` shows that it
//!   would have counted, had the guard let the address through;
//! - a literal loopback URL aims at a sink's port, so a broken refusal
//!   would show in that sink's count.
//!
//! The ranges themselves, address by address and form by form, are tested
//! as pure functions in `policy.rs`.

mod exchange;
mod sink;
mod ssrf;

use std::collections::HashMap;
use std::io;
use std::net::IpAddr;
use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;

use crate::{Allow, Egress, EgressConfig, EgressError, EgressRequest, Resolver, Url};
pub(crate) use sink::Sink;

/// A resolver that knows only the names a test gives it.
#[derive(Default)]
struct Answers(HashMap<String, Vec<IpAddr>>);

impl Answers {
    fn new(names: &[(&str, &[&str])]) -> Arc<Self> {
        let map = names
            .iter()
            .map(|(name, addrs)| (name.to_string(), addrs.iter().map(|a| a.parse().unwrap()).collect()))
            .collect();
        Arc::new(Answers(map))
    }
}

#[async_trait]
impl Resolver for Answers {
    async fn resolve(&self, host: &str) -> io::Result<Vec<IpAddr>> {
        self.0
            .get(host)
            .cloned()
            .ok_or_else(|| io::Error::new(io::ErrorKind::NotFound, "no such host in the test's answers"))
    }
}

/// The test's network: a tripwire and a client diverted to it.
struct Net {
    tripwire: Sink,
    egress: Egress,
}

impl Net {
    async fn new(allow: &str, names: &[(&str, &[&str])]) -> Net {
        Net::with(EgressConfig { allow: Allow::parse(allow).unwrap(), ..test_config() }, names).await
    }

    async fn with(config: EgressConfig, names: &[(&str, &[&str])]) -> Net {
        let tripwire = Sink::start().await;
        let egress = Egress::diverted(config, Answers::new(names), tripwire.addr()).unwrap();
        Net { tripwire, egress }
    }

    async fn get(&self, url: &str) -> Result<crate::EgressResponse, EgressError> {
        self.egress.send(EgressRequest::get(Url::parse(url).unwrap())).await
    }

    /// Asserts a refusal of `url` naming `reason`, and that nothing reached
    /// the tripwire.
    async fn refused(&self, url: &str, reason: &str) -> EgressError {
        let error = self.get(url).await.expect_err(url);
        assert_eq!(error.kind(), crate::EgressErrorKind::Blocked, "{url}: {error}");
        assert!(error.to_string().contains(reason), "{url}: {error:?} does not say {reason}");
        assert_eq!(self.tripwire.hits(), 0, "{url} reached the tripwire");
        error
    }
}

fn test_config() -> EgressConfig {
    EgressConfig { timeout: Duration::from_secs(10), ..EgressConfig::default() }
}
