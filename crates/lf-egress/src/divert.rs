//! Tests only: keeping every packet on loopback even when the guard is
//! broken.
//!
//! The tests ask for addresses outside 127.0.0.0/8 (10.0.0.1,
//! 169.254.169.254, `[::]`) and expect refusals. Were a refusal to go
//! missing, the client would connect to those addresses for real. So a
//! test client ([`crate::Egress`] built with `diverted`) carries a
//! [`Divert`]: at the two places where an address leaves this crate for
//! the network, after every check has run and whatever the checks said,
//! any address other than 127.0.0.1 itself is replaced by the tripwire, a
//! listener on 127.0.0.1 that counts what reaches it:
//!
//! - the resolver's answer, as reqwest receives it (`resolve.rs`: a name
//!   that resolved to 10.0.0.1 would be connected to at the tripwire);
//! - a URL whose host is an address, as reqwest receives it (`client.rs`,
//!   `wire_url`: `http://169.254.169.254/` would be sent to the tripwire).
//!
//! Those are the only ways reqwest learns an address: it is built without
//! a proxy, and redirects are followed by this crate, each hop passing
//! through `wire_url`. A refusal test asserts the error and that the
//! tripwire counted nothing. This module does not exist outside tests.

use std::net::{IpAddr, Ipv4Addr, SocketAddr};

use url::Url;

#[derive(Clone, Copy, Debug)]
pub(crate) struct Divert {
    tripwire: SocketAddr,
}

impl Divert {
    pub(crate) fn to(tripwire: SocketAddr) -> Self {
        assert_eq!(tripwire.ip(), IpAddr::V4(Ipv4Addr::LOCALHOST), "the tripwire listens on 127.0.0.1");
        Divert { tripwire }
    }

    /// A resolved address as reqwest will connect to it.
    pub(crate) fn apply(divert: Option<&Divert>, addr: SocketAddr) -> SocketAddr {
        match divert {
            Some(d) if addr.ip() != IpAddr::V4(Ipv4Addr::LOCALHOST) => d.tripwire,
            _ => addr,
        }
    }

    /// A URL as reqwest will send it: one whose host is an address other
    /// than 127.0.0.1 goes to the tripwire.
    pub(crate) fn url(divert: Option<&Divert>, url: &Url) -> Url {
        let Some(d) = divert else { return url.clone() };
        let literal = match url.host() {
            Some(url::Host::Ipv4(a)) => Some(IpAddr::V4(a)),
            Some(url::Host::Ipv6(a)) => Some(IpAddr::V6(a)),
            _ => None,
        };
        match literal {
            Some(ip) if ip != IpAddr::V4(Ipv4Addr::LOCALHOST) => {
                let mut wire = url.clone();
                wire.set_ip_host(d.tripwire.ip()).expect("an http URL takes an address");
                wire.set_port(Some(d.tripwire.port())).expect("an http URL takes a port");
                wire
            }
            _ => url.clone(),
        }
    }
}
