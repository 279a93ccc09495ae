//! What a workflow node may reach: pure functions over addresses and URLs,
//! no I/O. [`blocked`] is the one list of refused ranges; [`verdict`] adds
//! the operator's allow-list and the metadata addresses, which nothing opens;
//! [`check_url`] is what every hop's URL passes before anything is sent.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

use url::{Host, Url};

use crate::allow::Allow;
use crate::error::EgressError;

/// The reason [`blocked`] and [`verdict`] give for a metadata address.
pub const METADATA_REASON: &str = "cloud metadata";

/// The instance metadata services, which hand out the machine's cloud
/// credentials. Refused always: no allow-list entry opens them.
pub const METADATA: [IpAddr; 4] = [
    // AWS, Google Cloud, Azure, Oracle, DigitalOcean, OpenStack and most others.
    IpAddr::V4(Ipv4Addr::new(169, 254, 169, 254)),
    // AWS ECS task credentials.
    IpAddr::V4(Ipv4Addr::new(169, 254, 170, 2)),
    // Alibaba Cloud.
    IpAddr::V4(Ipv4Addr::new(100, 100, 100, 200)),
    // AWS over IPv6.
    IpAddr::V6(Ipv6Addr::new(0xfd00, 0x0ec2, 0, 0, 0, 0, 0, 0x0254)),
];

/// An address range: an address and how many leading bits of it count.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Net {
    addr: IpAddr,
    prefix: u8,
}

impl Net {
    /// `None` when the prefix is longer than the address.
    pub(crate) fn new(addr: IpAddr, prefix: u8) -> Option<Self> {
        (prefix <= max_prefix(addr)).then_some(Net { addr, prefix })
    }

    /// The whole of one address.
    pub(crate) fn single(addr: IpAddr) -> Self {
        Net { addr, prefix: max_prefix(addr) }
    }

    const fn v4(a: u8, b: u8, c: u8, d: u8, prefix: u8) -> Self {
        Net { addr: IpAddr::V4(Ipv4Addr::new(a, b, c, d)), prefix }
    }

    const fn v6(segments: [u16; 8], prefix: u8) -> Self {
        let [a, b, c, d, e, f, g, h] = segments;
        Net { addr: IpAddr::V6(Ipv6Addr::new(a, b, c, d, e, f, g, h)), prefix }
    }

    /// Whether the address has bits set past the prefix (`10.0.0.1/8`).
    pub(crate) fn has_host_bits(&self) -> bool {
        self.network() != self.addr
    }

    /// The range's first address.
    pub(crate) fn network(&self) -> IpAddr {
        match self.addr {
            IpAddr::V4(a) => IpAddr::V4(Ipv4Addr::from(u32::from(a) & (mask(self.prefix, 32) as u32))),
            IpAddr::V6(a) => IpAddr::V6(Ipv6Addr::from(u128::from(a) & mask(self.prefix, 128))),
        }
    }

    pub(crate) fn contains(&self, ip: IpAddr) -> bool {
        match (self.addr, ip) {
            (IpAddr::V4(net), IpAddr::V4(ip)) => {
                let m = mask(self.prefix, 32) as u32;
                u32::from(net) & m == u32::from(ip) & m
            }
            (IpAddr::V6(net), IpAddr::V6(ip)) => {
                let m = mask(self.prefix, 128);
                u128::from(net) & m == u128::from(ip) & m
            }
            _ => false,
        }
    }
}

impl std::fmt::Display for Net {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}/{}", self.addr, self.prefix)
    }
}

fn max_prefix(addr: IpAddr) -> u8 {
    if addr.is_ipv4() { 32 } else { 128 }
}

/// The top `prefix` bits of a `width`-bit address set.
fn mask(prefix: u8, width: u32) -> u128 {
    if prefix == 0 { 0 } else { (u128::MAX << (128 - u32::from(prefix))) >> (128 - width) }
}

const PRIVATE: &str = "private (RFC 1918)";
const DOCUMENTATION: &str = "documentation";
const RESERVED: &str = "reserved";

/// IPv4 ranges that are not the public internet (IANA's special-purpose
/// registry), the more specific first.
const V4_BLOCKED: &[(Net, &str)] = &[
    (Net::v4(0, 0, 0, 0, 32), "unspecified"),
    (Net::v4(0, 0, 0, 0, 8), "this network (RFC 791)"),
    (Net::v4(10, 0, 0, 0, 8), PRIVATE),
    (Net::v4(100, 64, 0, 0, 10), "CGNAT (RFC 6598)"),
    (Net::v4(127, 0, 0, 0, 8), "loopback"),
    (Net::v4(169, 254, 0, 0, 16), "link-local"),
    (Net::v4(172, 16, 0, 0, 12), PRIVATE),
    (Net::v4(192, 0, 0, 0, 24), "IETF protocol assignments (RFC 6890)"),
    (Net::v4(192, 0, 2, 0, 24), DOCUMENTATION),
    (Net::v4(192, 88, 99, 0, 24), "6to4 relay anycast (RFC 7526)"),
    (Net::v4(192, 168, 0, 0, 16), PRIVATE),
    (Net::v4(198, 18, 0, 0, 15), "benchmarking (RFC 2544)"),
    (Net::v4(198, 51, 100, 0, 24), DOCUMENTATION),
    (Net::v4(203, 0, 113, 0, 24), DOCUMENTATION),
    (Net::v4(224, 0, 0, 0, 4), "multicast"),
    (Net::v4(255, 255, 255, 255, 32), "broadcast"),
    (Net::v4(240, 0, 0, 0, 4), RESERVED),
];

/// IPv6 ranges refused outright. Forms that carry an IPv4 address
/// (`::ffff:0:0/96`, NAT64's `64:ff9b::/96`, 6to4's `2002::/16`) are not
/// here: they are judged by the address they carry ([`embedded_v4`]).
/// Whatever lies outside `2000::/3` and is not listed is reserved.
const V6_BLOCKED: &[(Net, &str)] = &[
    (Net::v6([0, 0, 0, 0, 0, 0, 0, 0], 128), "unspecified"),
    (Net::v6([0, 0, 0, 0, 0, 0, 0, 1], 128), "loopback"),
    (Net::v6([0, 0, 0, 0, 0, 0, 0, 0], 96), "IPv4-compatible (deprecated)"),
    (Net::v6([0x64, 0xff9b, 1, 0, 0, 0, 0, 0], 48), "local-use NAT64 (RFC 8215)"),
    (Net::v6([0x100, 0, 0, 0, 0, 0, 0, 0], 64), "discard-only (RFC 6666)"),
    (Net::v6([0x2001, 0, 0, 0, 0, 0, 0, 0], 32), "Teredo (RFC 4380)"),
    (Net::v6([0x2001, 0, 0, 0, 0, 0, 0, 0], 23), "IETF protocol assignments (RFC 2928)"),
    (Net::v6([0x2001, 0xdb8, 0, 0, 0, 0, 0, 0], 32), DOCUMENTATION),
    (Net::v6([0x3fff, 0, 0, 0, 0, 0, 0, 0], 20), DOCUMENTATION),
    (Net::v6([0xfc00, 0, 0, 0, 0, 0, 0, 0], 7), "unique-local (RFC 4193)"),
    (Net::v6([0xfe80, 0, 0, 0, 0, 0, 0, 0], 10), "link-local"),
    (Net::v6([0xfec0, 0, 0, 0, 0, 0, 0, 0], 10), "site-local (deprecated)"),
    (Net::v6([0xff00, 0, 0, 0, 0, 0, 0, 0], 8), "multicast"),
];

const GLOBAL_UNICAST: Net = Net::v6([0x2000, 0, 0, 0, 0, 0, 0, 0], 3);
const NAT64: Net = Net::v6([0x64, 0xff9b, 0, 0, 0, 0, 0, 0], 96);
const SIX_TO_FOUR: Net = Net::v6([0x2002, 0, 0, 0, 0, 0, 0, 0], 16);

/// The IPv4 address an IPv6 one stands for, where connecting to it reaches
/// that IPv4 address: IPv4-mapped (`::ffff:a.b.c.d`), NAT64's well-known
/// prefix (`64:ff9b::a.b.c.d`), 6to4 (`2002:AABB:CCDD::/48`).
pub(crate) fn embedded_v4(ip: Ipv6Addr) -> Option<Ipv4Addr> {
    if let Some(v4) = ip.to_ipv4_mapped() {
        return Some(v4);
    }
    let bits = u128::from(ip);
    let v6 = IpAddr::V6(ip);
    if NAT64.contains(v6) {
        Some(Ipv4Addr::from(bits as u32))
    } else if SIX_TO_FOUR.contains(v6) {
        Some(Ipv4Addr::from((bits >> 80) as u32))
    } else {
        None
    }
}

/// Why no workflow node may reach `ip`, or `None` for a public address.
/// An IPv6 form that carries an IPv4 address answers for that address.
pub fn blocked(ip: IpAddr) -> Option<&'static str> {
    if METADATA.contains(&ip) {
        return Some(METADATA_REASON);
    }
    match ip {
        IpAddr::V4(_) => V4_BLOCKED.iter().find(|(net, _)| net.contains(ip)).map(|(_, why)| *why),
        IpAddr::V6(v6) => {
            if let Some(v4) = embedded_v4(v6) {
                return blocked(IpAddr::V4(v4));
            }
            let listed = V6_BLOCKED.iter().find(|(net, _)| net.contains(ip)).map(|(_, why)| *why);
            listed.or_else(|| (!GLOBAL_UNICAST.contains(ip)).then_some(RESERVED))
        }
    }
}

/// Whether `ip` is a metadata address, in any form that reaches one.
pub(crate) fn is_metadata(ip: IpAddr) -> bool {
    match ip {
        IpAddr::V6(v6) if !METADATA.contains(&ip) => {
            embedded_v4(v6).is_some_and(|v4| METADATA.contains(&IpAddr::V4(v4)))
        }
        _ => METADATA.contains(&ip),
    }
}

/// The one decision: why a connection to `ip` (reached through the name
/// `host`, when there is one) is refused, or `None` to let it through.
/// Metadata addresses are refused whatever the allow-list says; otherwise a
/// host or range the allow-list names is let through, and the rest is
/// judged by [`blocked`].
pub(crate) fn verdict(ip: IpAddr, host: Option<&str>, allow: &Allow) -> Option<&'static str> {
    if is_metadata(ip) {
        return Some(METADATA_REASON);
    }
    if host.is_some_and(|h| allow.permits_host(h)) || allow.permits_ip(ip) {
        return None;
    }
    blocked(ip)
}

/// What a URL must be before it is sent, on the first hop and after every
/// redirect: http or https, no user name or password, a host, and when the
/// host is an address, one [`verdict`] lets through. The URL parser has
/// already read every IPv4 spelling (`0x7f.1`, `2130706433`, `0177.0.0.1`)
/// as the address it means. A host name is judged by what it resolves to.
pub(crate) fn check_url(url: &Url, allow: &Allow) -> Result<(), EgressError> {
    match url.scheme() {
        "http" | "https" => {}
        other => {
            return Err(EgressError::invalid(format!("only http and https URLs are sent, not {other}:")));
        }
    }
    if !url.username().is_empty() || url.password().is_some() {
        return Err(EgressError::invalid(
            "the URL carries a user name or password; send credentials in a header (a saved connection)",
        ));
    }
    let ip = match url.host() {
        None => return Err(EgressError::invalid("the URL has no host")),
        Some(Host::Domain(_)) => return Ok(()),
        Some(Host::Ipv4(a)) => IpAddr::V4(a),
        Some(Host::Ipv6(a)) => IpAddr::V6(a),
    };
    match verdict(ip, None, allow) {
        Some(reason) => Err(EgressError::blocked(ip.to_string(), ip, reason)),
        None => Ok(()),
    }
}

/// The addresses a name that always means the loopback interface resolves
/// to, as far as a check before any lookup can tell.
const LOOPBACK: [IpAddr; 2] = [IpAddr::V4(Ipv4Addr::LOCALHOST), IpAddr::V6(Ipv6Addr::LOCALHOST)];

/// Why the policy refuses `url`'s host whatever DNS would answer, or `None`
/// when it lets the host through or only a lookup can tell: a literal
/// address [`verdict`] refuses, or a name that always means the loopback
/// interface (`localhost` and the names under `.localhost`, RFC 6761),
/// unless the allow-list opens the name or both loopback addresses. For
/// judging a URL long before it is sent (a workflow's validation): sending
/// still judges every address the name resolves to, and a resolver that
/// answers a `.localhost` name with nothing refuses it as well.
pub fn refused_without_lookup(url: &Url, allow: &Allow) -> Option<&'static str> {
    match url.host()? {
        Host::Ipv4(a) => verdict(IpAddr::V4(a), None, allow),
        Host::Ipv6(a) => verdict(IpAddr::V6(a), None, allow),
        Host::Domain(name) => {
            let name = name.strip_suffix('.').unwrap_or(name).to_ascii_lowercase();
            if name != "localhost" && !name.ends_with(".localhost") {
                return None;
            }
            LOOPBACK.iter().find_map(|ip| verdict(*ip, Some(&name), allow))
        }
    }
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;

    fn ip(s: &str) -> IpAddr {
        s.parse().unwrap()
    }

    #[test]
    fn each_range_gives_its_reason() {
        let cases = [
            ("0.0.0.0", "unspecified"),
            ("0.1.2.3", "this network (RFC 791)"),
            ("10.0.0.1", PRIVATE),
            ("172.16.0.1", PRIVATE),
            ("172.31.255.255", PRIVATE),
            ("192.168.1.1", PRIVATE),
            ("100.64.0.1", "CGNAT (RFC 6598)"),
            ("100.127.255.254", "CGNAT (RFC 6598)"),
            ("127.0.0.1", "loopback"),
            ("127.255.0.9", "loopback"),
            ("169.254.1.1", "link-local"),
            ("169.254.169.254", METADATA_REASON),
            ("169.254.170.2", METADATA_REASON),
            ("100.100.100.200", METADATA_REASON),
            ("192.0.0.8", "IETF protocol assignments (RFC 6890)"),
            ("192.0.2.1", DOCUMENTATION),
            ("198.51.100.7", DOCUMENTATION),
            ("203.0.113.9", DOCUMENTATION),
            ("192.88.99.1", "6to4 relay anycast (RFC 7526)"),
            ("198.18.0.1", "benchmarking (RFC 2544)"),
            ("198.19.255.255", "benchmarking (RFC 2544)"),
            ("224.0.0.1", "multicast"),
            ("239.255.255.250", "multicast"),
            ("240.0.0.1", RESERVED),
            ("255.255.255.255", "broadcast"),
            ("::", "unspecified"),
            ("::1", "loopback"),
            ("::127.0.0.1", "IPv4-compatible (deprecated)"),
            ("::ffff:127.0.0.1", "loopback"),
            ("::ffff:10.1.2.3", PRIVATE),
            ("::ffff:169.254.169.254", METADATA_REASON),
            ("64:ff9b::7f00:1", "loopback"),
            ("64:ff9b::a9fe:a9fe", METADATA_REASON),
            ("64:ff9b:1::8.8.8.8", "local-use NAT64 (RFC 8215)"),
            ("2002:c0a8:0101::1", PRIVATE),
            ("2002:7f00:1::", "loopback"),
            ("100::1", "discard-only (RFC 6666)"),
            ("2001::1", "Teredo (RFC 4380)"),
            ("2001:10::1", "IETF protocol assignments (RFC 2928)"),
            ("2001:db8::1", DOCUMENTATION),
            ("3fff::1", DOCUMENTATION),
            ("fc00::1", "unique-local (RFC 4193)"),
            ("fd12:3456::1", "unique-local (RFC 4193)"),
            ("fd00:ec2::254", METADATA_REASON),
            ("fe80::1", "link-local"),
            ("febf::1", "link-local"),
            ("fec0::1", "site-local (deprecated)"),
            ("ff02::1", "multicast"),
            ("4000::1", RESERVED),
            ("5f00::1", RESERVED),
            ("1::", RESERVED),
        ];
        for (addr, reason) in cases {
            assert_eq!(blocked(ip(addr)), Some(reason), "{addr}");
        }
    }

    #[test]
    fn public_addresses_pass() {
        for addr in [
            "1.1.1.1",
            "8.8.8.8",
            "93.184.216.34",
            "100.63.255.255",
            "100.128.0.0",
            "172.15.255.255",
            "172.32.0.0",
            "169.253.255.255",
            "192.0.1.1",
            "223.255.255.255",
            "2606:4700::1111",
            "2a00:1450:4001::200e",
            "::ffff:8.8.8.8",
            "64:ff9b::808:808",
            "2002:808:808::1",
            "2001:200::1",
        ] {
            assert_eq!(blocked(ip(addr)), None, "{addr}");
        }
    }

    #[test]
    fn the_allow_list_opens_all_but_metadata() {
        let allow = Allow::parse("127.0.0.1, 169.254.0.0/16, fc00::/7, sink.test").unwrap();
        assert_eq!(verdict(ip("127.0.0.1"), None, &allow), None);
        assert_eq!(verdict(ip("::ffff:127.0.0.1"), None, &allow), None);
        assert_eq!(verdict(ip("127.0.0.2"), None, &allow), Some("loopback"));
        assert_eq!(verdict(ip("169.254.1.1"), None, &allow), None);
        assert_eq!(verdict(ip("169.254.169.254"), None, &allow), Some(METADATA_REASON));
        assert_eq!(verdict(ip("::ffff:169.254.169.254"), None, &allow), Some(METADATA_REASON));
        assert_eq!(verdict(ip("fd00:ec2::254"), None, &allow), Some(METADATA_REASON));
        assert_eq!(verdict(ip("10.0.0.1"), Some("sink.test"), &allow), None);
        assert_eq!(verdict(ip("169.254.169.254"), Some("sink.test"), &allow), Some(METADATA_REASON));
        assert_eq!(verdict(ip("10.0.0.1"), Some("other.test"), &allow), Some(PRIVATE));
    }

    fn url(s: &str) -> Url {
        Url::parse(s).unwrap()
    }

    fn refusal(s: &str) -> String {
        check_url(&url(s), &Allow::default()).unwrap_err().to_string()
    }

    #[test]
    fn every_ipv4_spelling_is_the_address_it_means() {
        for spelling in [
            "http://0x7f.1/",
            "http://2130706433/",
            "http://0177.0.0.1/",
            "http://127.1/",
            "http://0x7f000001/",
        ] {
            assert_eq!(url(spelling).host(), Some(Host::Ipv4(Ipv4Addr::LOCALHOST)), "{spelling}");
            assert!(refusal(spelling).contains("loopback"), "{spelling}: {}", refusal(spelling));
        }
        assert!(refusal("http://0xa9.0xfe.0xa9.0xfe/").contains(METADATA_REASON));
        assert!(refusal("http://[::]/").contains("unspecified"));
        assert!(refusal("http://[::ffff:127.0.0.1]/").contains("loopback"));
        assert!(refusal("http://[::ffff:7f00:1]/").contains("loopback"));
    }

    #[test]
    fn urls_are_http_without_credentials() {
        assert!(refusal("ftp://example.com/").contains("only http and https"));
        assert!(refusal("file:///etc/passwd").contains("only http and https"));
        assert!(refusal("gopher://example.com/").contains("only http and https"));
        assert!(refusal("http://user:pw@example.com/").contains("user name or password"));
        assert!(refusal("http://user@example.com/").contains("user name or password"));
        assert!(check_url(&url("https://example.com/a?b"), &Allow::default()).is_ok());
        assert!(check_url(&url("http://8.8.8.8/"), &Allow::default()).is_ok());
    }

    #[test]
    fn what_is_refused_without_a_lookup() {
        let closed = Allow::default();
        for (u, reason) in [
            ("http://localhost:8080/x", Some("loopback")),
            ("http://LOCALHOST./", Some("loopback")),
            ("http://api.localhost/", Some("loopback")),
            ("http://127.0.0.1:9/", Some("loopback")),
            ("http://0x7f.1/", Some("loopback")),
            ("http://[::1]/", Some("loopback")),
            ("http://10.1.2.3/", Some(PRIVATE)),
            ("http://169.254.169.254/latest", Some(METADATA_REASON)),
            ("http://0.0.0.0/", Some("unspecified")),
            ("https://example.com/", None),
            ("https://localhost.example.com/", None),
            ("http://intranet/", None),
            ("http://8.8.8.8/", None),
        ] {
            assert_eq!(refused_without_lookup(&url(u), &closed), reason, "{u}");
        }
        let named = Allow::parse("localhost, *.localhost, 10.0.0.0/8, 169.254.0.0/16").unwrap();
        for u in ["http://localhost/", "http://api.localhost/", "http://10.1.2.3/"] {
            assert_eq!(refused_without_lookup(&url(u), &named), None, "{u}");
        }
        assert_eq!(refused_without_lookup(&url("http://169.254.169.254/"), &named), Some(METADATA_REASON));
        let both = Allow::parse("127.0.0.1, ::1").unwrap();
        assert_eq!(refused_without_lookup(&url("http://localhost/"), &both), None);
        let v4_only = Allow::parse("127.0.0.1").unwrap();
        assert_eq!(
            refused_without_lookup(&url("http://localhost/"), &v4_only),
            Some("loopback"),
            "localhost may resolve to ::1 too, which stays closed"
        );
        assert_eq!(refused_without_lookup(&url("http://127.0.0.1/"), &v4_only), None);
    }

    #[test]
    fn ranges_read_right() {
        let net = Net::new(ip("10.0.0.0"), 8).unwrap();
        assert!(net.contains(ip("10.255.0.1")) && !net.contains(ip("11.0.0.0")) && !net.contains(ip("::1")));
        assert!(Net::new(ip("10.0.0.1"), 8).unwrap().has_host_bits());
        assert!(!Net::new(ip("0.0.0.0"), 0).unwrap().has_host_bits());
        assert!(Net::new(ip("0.0.0.0"), 0).unwrap().contains(ip("203.0.113.1")));
        assert!(Net::new(ip("::"), 129).is_none() && Net::new(ip("1.2.3.4"), 33).is_none());
        assert_eq!(Net::new(ip("fd00::1"), 8).unwrap().network(), ip("fd00::"));
    }

    proptest! {
        /// A v6 form that reaches a v4 address is judged as that address.
        #[test]
        fn v6_forms_of_a_v4_address_agree(bits: u32) {
            let v4 = Ipv4Addr::from(bits);
            let expected = blocked(IpAddr::V4(v4));
            let nat64 = Ipv6Addr::from(u128::from(Ipv6Addr::new(0x64, 0xff9b, 0, 0, 0, 0, 0, 0)) | u128::from(bits));
            let six_to_four = Ipv6Addr::from((0x2002u128 << 112) | (u128::from(bits) << 80) | 1);
            prop_assert_eq!(blocked(IpAddr::V6(v4.to_ipv6_mapped())), expected);
            prop_assert_eq!(blocked(IpAddr::V6(nat64)), expected);
            prop_assert_eq!(blocked(IpAddr::V6(six_to_four)), expected);
        }

        /// The std library's own notion of a non-public address is refused too.
        #[test]
        fn no_private_or_loopback_address_passes(bits: u128) {
            let v6 = Ipv6Addr::from(bits);
            let std_local = v6.is_loopback() || v6.is_unspecified() || v6.is_multicast()
                || (bits >> 121) == 0x7e || (bits >> 118) == 0x3fa;
            prop_assert!(!std_local || blocked(IpAddr::V6(v6)).is_some());
            let v4 = Ipv4Addr::from(bits as u32);
            let std_local = v4.is_private() || v4.is_loopback() || v4.is_link_local() || v4.is_unspecified()
                || v4.is_multicast() || v4.is_broadcast() || v4.is_documentation();
            prop_assert!(!std_local || blocked(IpAddr::V4(v4)).is_some());
        }
    }
}
