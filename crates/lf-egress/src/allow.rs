//! The operator's allow-list: the hosts and ranges workflow nodes may reach
//! although [`crate::blocked`] refuses them (a model server on the LAN, the
//! tests' loopback fakes).

use std::fmt;
use std::net::IpAddr;
use std::str::FromStr;

use crate::policy::{self, Net};

/// The environment variable an operator sets to open hosts and ranges.
pub const ALLOW_KEY: &str = "LENSERFIGHT_EGRESS_ALLOW";

/// Hosts and ranges opened by the operator, parsed from a comma-separated
/// list ([`ALLOW_KEY`]):
///
/// - a host name, matched exactly and case-insensitively (`ollama.lan`):
///   whatever it resolves to may be reached;
/// - `*.` and a suffix (`*.corp.example`): every name below it, not the
///   suffix itself;
/// - an address (`127.0.0.1`, `::1` or `[::1]`) or a CIDR range
///   (`10.1.0.0/16`, `fd00::/8`), which also opens the IPv6 forms that carry
///   an IPv4 address in it (`::ffff:10.1.2.3`).
///
/// Nothing opens a cloud metadata address ([`crate::METADATA`]): an entry
/// naming one is refused, and one a range or host would cover stays closed.
///
/// ```
/// let allow = lf_egress::Allow::parse("ollama.lan, *.corp.example, 10.1.0.0/16").unwrap();
/// assert!(allow.permits_host("Ollama.LAN") && allow.permits_host("wiki.corp.example"));
/// assert!(allow.permits_ip("10.1.2.3".parse().unwrap()) && !allow.permits_ip("10.2.0.1".parse().unwrap()));
/// assert!(lf_egress::Allow::parse("10.1.0.1/16").unwrap_err().to_string().contains("10.1.0.0/16"));
/// ```
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Allow {
    hosts: Vec<HostPattern>,
    ranges: Vec<Net>,
}

#[derive(Clone, Debug, PartialEq, Eq)]
enum HostPattern {
    Exact(String),
    /// Stored with its leading dot: `.corp.example`.
    Below(String),
}

/// An entry of the allow-list that is not a host name, an address or a
/// range; the message names the entry and what to write instead.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AllowError {
    entry: String,
    reason: String,
}

impl AllowError {
    fn new(entry: &str, reason: impl Into<String>) -> Self {
        AllowError { entry: entry.to_owned(), reason: reason.into() }
    }

    /// The entry as it was written.
    pub fn entry(&self) -> &str {
        &self.entry
    }
}

impl fmt::Display for AllowError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{ALLOW_KEY}: the entry {:?} {}", self.entry, self.reason)
    }
}

impl std::error::Error for AllowError {}

impl Allow {
    /// Reads a comma-separated list; blank entries are skipped, so an empty
    /// value opens nothing. The first bad entry is the error.
    pub fn parse(value: &str) -> Result<Self, AllowError> {
        let mut allow = Allow::default();
        for entry in value.split(',').map(str::trim).filter(|e| !e.is_empty()) {
            if let Some((_, rest)) = entry.split_once("://") {
                let host = rest.split(['/', ':']).next().unwrap_or(rest);
                return Err(AllowError::new(entry, format!("is a URL: write only its host ({host})")));
            }
            if let Some((addr, prefix)) = entry.split_once('/') {
                allow.ranges.push(parse_range(entry, addr, prefix)?);
            } else if let Some(ip) = parse_ip(entry) {
                if policy::is_metadata(ip) {
                    return Err(AllowError::new(entry, "is a cloud metadata address, which nothing opens"));
                }
                allow.ranges.push(Net::single(ip));
            } else {
                allow.hosts.push(parse_host(entry)?);
            }
        }
        Ok(allow)
    }

    /// The list in [`ALLOW_KEY`]; unset opens nothing.
    pub fn from_env() -> Result<Self, AllowError> {
        match std::env::var(ALLOW_KEY) {
            Ok(value) => Allow::parse(&value),
            Err(std::env::VarError::NotPresent) => Ok(Allow::default()),
            Err(std::env::VarError::NotUnicode(_)) => Err(AllowError::new("", "list is not valid UTF-8")),
        }
    }

    /// Whether the list opens nothing.
    pub fn is_empty(&self) -> bool {
        self.hosts.is_empty() && self.ranges.is_empty()
    }

    /// Whether the host name is listed, or lies below a `*.` entry.
    pub fn permits_host(&self, host: &str) -> bool {
        let host = host.strip_suffix('.').unwrap_or(host).to_ascii_lowercase();
        self.hosts.iter().any(|pattern| match pattern {
            HostPattern::Exact(name) => *name == host,
            HostPattern::Below(suffix) => host.len() > suffix.len() && host.ends_with(suffix.as_str()),
        })
    }

    /// Whether the address, or the IPv4 address an IPv6 form of it carries,
    /// lies in a listed range. Says nothing of metadata addresses, which
    /// stay closed whatever this answers.
    pub fn permits_ip(&self, ip: IpAddr) -> bool {
        let carried = match ip {
            IpAddr::V6(v6) => policy::embedded_v4(v6).map(IpAddr::V4),
            IpAddr::V4(_) => None,
        };
        self.ranges.iter().any(|net| net.contains(ip) || carried.is_some_and(|v4| net.contains(v4)))
    }
}

impl FromStr for Allow {
    type Err = AllowError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Allow::parse(s)
    }
}

/// The list as [`Allow::parse`] reads it back.
impl fmt::Display for Allow {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let hosts = self.hosts.iter().map(|h| match h {
            HostPattern::Exact(name) => name.clone(),
            HostPattern::Below(suffix) => format!("*{suffix}"),
        });
        let ranges = self.ranges.iter().map(Net::to_string);
        let entries: Vec<String> = hosts.chain(ranges).collect();
        f.write_str(&entries.join(","))
    }
}

fn parse_ip(text: &str) -> Option<IpAddr> {
    let bare = text.strip_prefix('[').and_then(|t| t.strip_suffix(']')).unwrap_or(text);
    bare.parse().ok()
}

fn parse_range(entry: &str, addr: &str, prefix: &str) -> Result<Net, AllowError> {
    let ip = parse_ip(addr)
        .ok_or_else(|| AllowError::new(entry, "is not a range: write an address, /, a prefix length"))?;
    let net = prefix.parse::<u8>().ok().and_then(|p| Net::new(ip, p)).ok_or_else(|| {
        AllowError::new(entry, "has a prefix length that is not 0 to 32 (IPv4) or 0 to 128 (IPv6)")
    })?;
    if net.has_host_bits() {
        return Err(AllowError::new(
            entry,
            format!("has bits set past its prefix: did you mean {}/{prefix}?", net.network()),
        ));
    }
    Ok(net)
}

fn parse_host(entry: &str) -> Result<HostPattern, AllowError> {
    let (below, name) = match entry.strip_prefix("*.") {
        Some(rest) => (true, rest),
        None => (false, entry),
    };
    let name = name.strip_suffix('.').unwrap_or(name).to_ascii_lowercase();
    if !name.is_ascii() {
        return Err(AllowError::new(entry, "is not ASCII: write an international name in its xn-- form"));
    }
    let labels: Vec<&str> = name.split('.').collect();
    let label_ok = |l: &&str| {
        !l.is_empty()
            && l.len() <= 63
            && l.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
    };
    if name.len() > 253 || !labels.iter().all(label_ok) {
        return Err(AllowError::new(
            entry,
            "is not a host name, an address or a CIDR range (names are letters, digits, - and _ between dots; a wildcard is only a leading *.)",
        ));
    }
    // The URL parser reads a host whose last label is a number as an IPv4
    // address (`0x7f.1`), so such a name could never match.
    let last = labels[labels.len() - 1];
    if last.bytes().all(|b| b.is_ascii_digit()) || last.starts_with("0x") {
        return Err(AllowError::new(
            entry,
            "reads as an IPv4 address in another spelling: write it as a.b.c.d",
        ));
    }
    Ok(if below { HostPattern::Below(format!(".{name}")) } else { HostPattern::Exact(name) })
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;

    fn ip(s: &str) -> IpAddr {
        s.parse().unwrap()
    }

    fn error(value: &str) -> String {
        Allow::parse(value).unwrap_err().to_string()
    }

    #[test]
    fn reads_names_wildcards_addresses_and_ranges() {
        let allow =
            Allow::parse(" Sink.Test, *.corp.example,,127.0.0.1, [::1], 10.0.0.0/8, fd00::/8 ,").unwrap();
        assert!(
            allow.permits_host("sink.test")
                && allow.permits_host("SINK.TEST.")
                && !allow.permits_host("a.sink.test")
        );
        assert!(allow.permits_host("a.corp.example") && allow.permits_host("a.b.corp.example"));
        assert!(!allow.permits_host("corp.example") && !allow.permits_host("xcorp.example"));
        for open in ["127.0.0.1", "::1", "10.9.8.7", "fd00::5", "::ffff:10.0.0.1", "::ffff:127.0.0.1"] {
            assert!(allow.permits_ip(ip(open)), "{open}");
        }
        for closed in ["127.0.0.2", "11.0.0.1", "fe80::1", "::2"] {
            assert!(!allow.permits_ip(ip(closed)), "{closed}");
        }
        assert_eq!(allow.to_string(), "sink.test,*.corp.example,127.0.0.1/32,::1/128,10.0.0.0/8,fd00::/8");
        assert_eq!(Allow::parse(&allow.to_string()).unwrap(), allow);
        assert!(Allow::parse("").unwrap().is_empty() && Allow::parse(" , ").unwrap().is_empty());
    }

    #[test]
    fn bad_entries_are_named() {
        assert!(
            error("ok.test, 10.0.0.1/8").contains("\"10.0.0.1/8\"")
                && error("10.0.0.1/8").contains("10.0.0.0/8")
        );
        assert!(error("10.0.0.0/33").contains("prefix length"));
        assert!(error("fd00::/129").contains("prefix length"));
        assert!(error("10.0.0.0/x").contains("prefix length"));
        assert!(error("nonsense/8").contains("not a range"));
        assert!(error("169.254.169.254").contains("metadata"));
        assert!(error("[fd00:ec2::254]").contains("metadata"));
        assert!(error("::ffff:169.254.169.254").contains("metadata"));
        assert!(error("*").contains("\"*\""));
        assert!(error("a.*.test").contains("wildcard"));
        assert!(error("http://sink.test:8080/x").contains("write only its host (sink.test)"));
        assert!(error("sink.test:8080").contains("not a host name"));
        assert!(error("bücher.example").contains("xn--"));
        assert!(error("0x7f.1").contains("a.b.c.d"));
        assert!(error("2130706433").contains("a.b.c.d"));
        assert!(error("a..b").contains("not a host name"));
        assert!(error("ok, bad name").starts_with("LENSERFIGHT_EGRESS_ALLOW: the entry \"bad name\""));
    }

    #[test]
    fn a_range_over_metadata_leaves_it_closed() {
        let allow = Allow::parse("169.254.0.0/16").unwrap();
        assert!(allow.permits_ip(ip("169.254.169.254")), "the list covers it...");
        assert_eq!(
            policy::verdict(ip("169.254.169.254"), None, &allow),
            Some(policy::METADATA_REASON),
            "...and the verdict refuses it anyway"
        );
    }

    proptest! {
        #[test]
        fn parsing_never_panics_and_reads_its_own_output(value in "[a-z0-9.:*/\\[\\], _-]{0,60}") {
            if let Ok(allow) = Allow::parse(&value) {
                prop_assert_eq!(Allow::parse(&allow.to_string()).unwrap(), allow);
            }
        }
    }
}
