//! Rate limits of the endpoints that cost (argon2) or create rows, and who
//! the client is for them.
//!
//! - The client's address is the socket peer's, unless the peer is one of
//!   `LENSERFIGHT_TRUSTED_PROXIES`: then the nearest address in
//!   `X-Forwarded-For` that is not a trusted proxy. An IPv6 address counts
//!   as its /64 (one host usually has a whole /64), an IPv4-mapped one as
//!   its IPv4 address.
//! - Per address: sign-in, the token endpoint, registration.
//! - Per handle, from any address: after [`MAX_FAILURES`] failed sign-ins
//!   within [`FAILURE_WINDOW`], the handle's sign-in is refused for
//!   [`FIRST_LOCK`], then after each further failure for twice as long as
//!   the time before, up to [`LONGEST_LOCK`], until a sign-in succeeds.
//! - Overall: registrations per hour.
//! - Webhook calls: `LENSERFIGHT_HOOKS_PER_MINUTE` per client address and,
//!   from any address, per workflow id, counted before the secret is
//!   checked (so guessing secrets is slow, and so is flooding one hook).
//!
//! Everything is counted in this process's memory: several processes on
//! one database each count their own, so together they allow that many
//! times more.

use std::collections::{HashMap, VecDeque};
use std::net::{IpAddr, Ipv6Addr, SocketAddr};
use std::num::NonZeroU32;
use std::sync::{Mutex, MutexGuard};
use std::time::{Duration, Instant};

use axum::extract::{ConnectInfo, FromRequestParts};
use axum::response::Response;
use governor::clock::{Clock, DefaultClock};
use governor::middleware::NoOpMiddleware;
use governor::state::{InMemoryState, NotKeyed};
use governor::{Quota, RateLimiter};
use http::request::Parts;
use http::{HeaderMap, StatusCode};
use lf_core::WorkflowId;

use crate::app::AppState;
use crate::responses::{json_error, retry_after};

type KeyedLimiter = RateLimiter<
    IpAddr,
    governor::state::keyed::DefaultKeyedStateStore<IpAddr>,
    DefaultClock,
    NoOpMiddleware<<DefaultClock as Clock>::Instant>,
>;

type WorkflowLimiter = RateLimiter<
    WorkflowId,
    governor::state::keyed::DefaultKeyedStateStore<WorkflowId>,
    DefaultClock,
    NoOpMiddleware<<DefaultClock as Clock>::Instant>,
>;

type OverallLimiter =
    RateLimiter<NotKeyed, InMemoryState, DefaultClock, NoOpMiddleware<<DefaultClock as Clock>::Instant>>;

/// Failed sign-ins of one handle that lock it.
pub const MAX_FAILURES: usize = 10;
/// Within this time.
pub const FAILURE_WINDOW: Duration = Duration::from_secs(15 * 60);
/// The first lock.
pub const FIRST_LOCK: Duration = Duration::from_secs(60);
/// The longest lock.
pub const LONGEST_LOCK: Duration = Duration::from_secs(60 * 60);
/// How long a handle's failures are remembered after the last one.
const REMEMBERED: Duration = Duration::from_secs(24 * 60 * 60);
/// Most handles whose failures are remembered; past that, those whose last
/// failure is oldest are forgotten.
const MOST_HANDLES: usize = 100_000;

/// The rate limits of one server process.
pub struct Limits {
    sign_in: KeyedLimiter,
    token: KeyedLimiter,
    register: KeyedLimiter,
    registrations: OverallLimiter,
    handles: HandleFailures,
    hook_clients: KeyedLimiter,
    hooks: WorkflowLimiter,
}

fn per_minute(n: u32, burst: u32) -> Quota {
    Quota::per_minute(NonZeroU32::new(n).unwrap_or(NonZeroU32::MIN))
        .allow_burst(NonZeroU32::new(burst).unwrap_or(NonZeroU32::MIN))
}

impl Limits {
    /// Per address: sign-in 10 a minute (burst 5), token 120 a minute
    /// (burst 30), registration 10 a minute (burst 5); overall,
    /// `registrations_per_hour` registrations (a burst of that many, then
    /// one every hour divided by it); webhook calls `hooks_per_minute` a
    /// minute (a burst of that many) per address and per workflow.
    pub fn new(registrations_per_hour: NonZeroU32, hooks_per_minute: NonZeroU32) -> Self {
        let hooks = Quota::per_minute(hooks_per_minute).allow_burst(hooks_per_minute);
        Self {
            sign_in: RateLimiter::keyed(per_minute(10, 5)),
            token: RateLimiter::keyed(per_minute(120, 30)),
            register: RateLimiter::keyed(per_minute(10, 5)),
            registrations: RateLimiter::direct(
                Quota::per_hour(registrations_per_hour).allow_burst(registrations_per_hour),
            ),
            handles: HandleFailures::default(),
            hook_clients: RateLimiter::keyed(hooks),
            hooks: RateLimiter::keyed(hooks),
        }
    }

    /// 429 when `client` calls webhooks too often, or `workflow`'s hook is
    /// called too often from anywhere. A call refused for its address does
    /// not count against the workflow.
    pub fn hook(&self, client: ClientIp, workflow: Option<WorkflowId>) -> Option<Response> {
        too_many(self.hook_clients.check_key(&client.0))
            .or_else(|| workflow.and_then(|w| too_many(self.hooks.check_key(&w))))
    }

    /// 429 when `client` signs in too often.
    pub fn sign_in(&self, client: ClientIp) -> Option<Response> {
        too_many(self.sign_in.check_key(&client.0))
    }

    /// 429 when `client` calls the token or revocation endpoint too often.
    pub fn token(&self, client: ClientIp) -> Option<Response> {
        too_many(self.token.check_key(&client.0))
    }

    /// 429 when `client`, or everyone together, registers too often.
    pub fn register(&self, client: ClientIp) -> Option<Response> {
        too_many(self.register.check_key(&client.0)).or_else(|| too_many(self.registrations.check()))
    }

    /// A sign-in as `handle` begins: 429 while the handle is locked; else
    /// it counts as a failure until [`Limits::signed_in`] says otherwise,
    /// so that concurrent attempts cannot pass the count.
    pub fn sign_in_as(&self, handle: &str) -> Option<Response> {
        let wait = self.handles.attempt(handle, Instant::now()).err()?;
        Some(too_many_for(
            wait,
            "too many failed sign-ins for this handle; wait and retry, or ask the server's operator",
        ))
    }

    /// The sign-in as `handle` succeeded: its failures are forgotten.
    pub fn signed_in(&self, handle: &str) {
        self.handles.succeeded(handle);
    }

    /// Forgets addresses whose limits have recovered and handles whose
    /// failures are old (call now and then).
    pub fn forget_idle(&self) {
        self.sign_in.retain_recent();
        self.token.retain_recent();
        self.register.retain_recent();
        self.hook_clients.retain_recent();
        self.hooks.retain_recent();
        self.handles.forget_idle(Instant::now());
    }
}

/// 429 with `Retry-After` for a refused check.
fn too_many(checked: Result<(), governor::NotUntil<<DefaultClock as Clock>::Instant>>) -> Option<Response> {
    let not_until = checked.err()?;
    Some(too_many_for(
        not_until.wait_time_from(DefaultClock::default().now()),
        "too many attempts; wait and retry",
    ))
}

fn too_many_for(wait: Duration, description: &str) -> Response {
    retry_after(json_error(StatusCode::TOO_MANY_REQUESTS, "too_many_requests", description), wait)
}

// ----- Failed sign-ins per handle -----------------------------------------

/// Failed sign-ins by handle (as typed, lowercased: an unknown handle is
/// counted like a known one, so that a lock says nothing about which
/// handles exist).
#[derive(Default)]
struct HandleFailures {
    handles: Mutex<HashMap<String, Failures>>,
}

#[derive(Default)]
struct Failures {
    /// Failures within the window, oldest first.
    recent: VecDeque<Instant>,
    /// The last failure.
    last: Option<Instant>,
    /// Locks so far.
    locks: u32,
    locked_until: Option<Instant>,
}

/// The key of a handle: what could be one, lowercased and bounded.
fn handle_key(handle: &str) -> String {
    handle.trim().chars().take(64).collect::<String>().to_lowercase()
}

impl HandleFailures {
    fn lock(&self) -> MutexGuard<'_, HashMap<String, Failures>> {
        self.handles.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// `Err(wait)` while `handle` is locked; otherwise records a failure
    /// (locking the handle if it is one too many) and answers `Ok`.
    fn attempt(&self, handle: &str, now: Instant) -> Result<(), Duration> {
        let mut handles = self.lock();
        if handles.len() >= MOST_HANDLES && !handles.contains_key(&handle_key(handle)) {
            let oldest = handles.iter().min_by_key(|(_, f)| f.last).map(|(k, _)| k.clone());
            if let Some(oldest) = oldest {
                handles.remove(&oldest);
            }
        }
        let failures = handles.entry(handle_key(handle)).or_default();
        if let Some(until) = failures.locked_until.filter(|until| now < *until) {
            return Err(until - now);
        }
        while failures.recent.front().is_some_and(|t| now.duration_since(*t) >= FAILURE_WINDOW) {
            failures.recent.pop_front();
        }
        failures.recent.push_back(now);
        failures.last = Some(now);
        if failures.locks > 0 || failures.recent.len() >= MAX_FAILURES {
            let lock = FIRST_LOCK.saturating_mul(1 << failures.locks.min(16)).min(LONGEST_LOCK);
            failures.locks += 1;
            failures.locked_until = Some(now + lock);
        }
        Ok(())
    }

    fn succeeded(&self, handle: &str) {
        self.lock().remove(&handle_key(handle));
    }

    fn forget_idle(&self, now: Instant) {
        self.lock().retain(|_, f| {
            f.locked_until.is_some_and(|until| now < until)
                || f.last.is_some_and(|last| now.duration_since(last) < REMEMBERED)
        });
    }
}

// ----- The client's address ------------------------------------------------

/// Addresses, or networks (`10.0.0.0/8`), of reverse proxies whose
/// `X-Forwarded-For` is believed.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct TrustedProxies(Vec<(IpAddr, u8)>);

impl TrustedProxies {
    /// Reads `items`, each an address or `address/prefix`.
    pub fn parse<S: AsRef<str>>(items: &[S]) -> Result<Self, String> {
        items
            .iter()
            .map(|item| {
                let item = item.as_ref().trim();
                let bad = || format!("{item:?} is not an address or a network like 10.0.0.0/8");
                let (ip, prefix) = match item.split_once('/') {
                    Some((ip, prefix)) => (ip, Some(prefix)),
                    None => (item, None),
                };
                let ip: IpAddr =
                    ip.trim_start_matches('[').trim_end_matches(']').parse().map_err(|_| bad())?;
                let most = if ip.is_ipv4() { 32 } else { 128 };
                let prefix = match prefix {
                    None => most,
                    Some(p) => p.parse::<u8>().ok().filter(|p| *p <= most).ok_or_else(bad)?,
                };
                Ok((ip, prefix))
            })
            .collect::<Result<_, _>>()
            .map(TrustedProxies)
    }

    pub(crate) fn trusts(&self, ip: IpAddr) -> bool {
        let ip = canonical(ip);
        self.0.iter().any(|(net, prefix)| match (canonical(*net), ip) {
            (IpAddr::V4(net), IpAddr::V4(ip)) => {
                masked(u32::from(net).into(), *prefix, 32) == masked(u32::from(ip).into(), *prefix, 32)
            }
            (IpAddr::V6(net), IpAddr::V6(ip)) => {
                masked(u128::from(net), *prefix, 128) == masked(u128::from(ip), *prefix, 128)
            }
            _ => false,
        })
    }

    /// The client behind `peer`: `peer` itself unless it is trusted; then,
    /// reading `X-Forwarded-For` from the right, the first address that is
    /// not a trusted proxy (or the last one read, when all are, or when the
    /// next is not an address).
    pub fn client(&self, peer: IpAddr, headers: &HeaderMap) -> IpAddr {
        if !self.trusts(peer) {
            return peer;
        }
        let forwarded: Vec<&str> = headers
            .get_all("x-forwarded-for")
            .iter()
            .filter_map(|v| v.to_str().ok())
            .flat_map(|v| v.split(','))
            .collect();
        let mut client = peer;
        for hop in forwarded.iter().rev() {
            let Some(ip) = forwarded_address(hop) else { break };
            client = ip;
            if !self.trusts(ip) {
                break;
            }
        }
        client
    }
}

/// The low `bits - prefix` bits of `value` cleared.
fn masked(value: u128, prefix: u8, bits: u8) -> u128 {
    let keep = u32::from(prefix.min(bits));
    let all = if bits == 128 { u128::MAX } else { (1u128 << bits) - 1 };
    if keep == 0 { 0 } else { value & (all << (u32::from(bits) - keep)) & all }
}

/// An address of `X-Forwarded-For`: `1.2.3.4`, `1.2.3.4:5678`, `2001:db8::1`
/// or `[2001:db8::1]:5678`.
fn forwarded_address(hop: &str) -> Option<IpAddr> {
    let hop = hop.trim();
    if let Ok(ip) = hop.parse() {
        return Some(ip);
    }
    hop.parse::<SocketAddr>().ok().map(|a| a.ip())
}

/// An IPv4-mapped IPv6 address as its IPv4 address.
fn canonical(ip: IpAddr) -> IpAddr {
    match ip {
        IpAddr::V6(v6) => v6.to_ipv4_mapped().map_or(ip, IpAddr::V4),
        v4 => v4,
    }
}

/// The client's address as the per-address limits count it (see the
/// module's documentation). Extracted from a request: the peer behind the
/// trusted proxies.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct ClientIp(IpAddr);

impl ClientIp {
    pub fn of(ip: IpAddr) -> Self {
        match canonical(ip) {
            IpAddr::V6(v6) => ClientIp(IpAddr::V6(Ipv6Addr::from(masked(u128::from(v6), 64, 128)))),
            v4 => ClientIp(v4),
        }
    }
}

impl FromRequestParts<AppState> for ClientIp {
    type Rejection = Response;

    async fn from_request_parts(parts: &mut Parts, state: &AppState) -> Result<Self, Response> {
        let Some(ConnectInfo(peer)) = parts.extensions.get::<ConnectInfo<SocketAddr>>() else {
            return Err(json_error(StatusCode::INTERNAL_SERVER_ERROR, "server_error", "no client address"));
        };
        Ok(ClientIp::of(state.config.trusted_proxies.client(peer.ip(), &parts.headers)))
    }
}

#[cfg(test)]
mod tests {
    use http::{HeaderValue, header};

    use super::*;

    fn ip(s: &str) -> IpAddr {
        s.parse().unwrap()
    }

    #[test]
    fn ipv6_clients_count_as_their_64() {
        assert_eq!(ClientIp::of(ip("2001:db8:1:2:aaaa::1")), ClientIp::of(ip("2001:db8:1:2:bbbb::2")));
        assert_ne!(ClientIp::of(ip("2001:db8:1:2::1")), ClientIp::of(ip("2001:db8:1:3::1")));
        assert_eq!(ClientIp::of(ip("::ffff:203.0.113.7")), ClientIp::of(ip("203.0.113.7")));
        assert_ne!(ClientIp::of(ip("203.0.113.7")), ClientIp::of(ip("203.0.113.8")));
    }

    #[test]
    fn forwarded_for_is_believed_from_trusted_proxies_only() {
        let trusted = TrustedProxies::parse(&["10.0.0.0/8", "127.0.0.1", "[::1]"]).unwrap();
        let headers = |values: &[&str]| {
            let mut h = HeaderMap::new();
            for v in values {
                h.append("x-forwarded-for", HeaderValue::from_str(v).unwrap());
            }
            h
        };
        let h = headers(&["198.51.100.9, 203.0.113.5, 10.1.2.3"]);
        assert_eq!(trusted.client(ip("10.0.0.1"), &h), ip("203.0.113.5"), "the nearest untrusted hop");
        assert_eq!(trusted.client(ip("192.0.2.1"), &h), ip("192.0.2.1"), "an untrusted peer is the client");
        assert_eq!(TrustedProxies::default().client(ip("127.0.0.1"), &h), ip("127.0.0.1"));
        let h = headers(&["198.51.100.9", "[2001:db8::5]:443"]);
        assert_eq!(trusted.client(ip("::1"), &h), ip("2001:db8::5"), "several headers, a port");
        let h = headers(&["garbage, 10.9.9.9"]);
        assert_eq!(trusted.client(ip("127.0.0.1"), &h), ip("10.9.9.9"), "up to what is no address");
        assert_eq!(trusted.client(ip("127.0.0.1"), &HeaderMap::new()), ip("127.0.0.1"));
        assert_eq!(trusted.client(ip("::ffff:10.0.0.1"), &headers(&["203.0.113.5"])), ip("203.0.113.5"));
        for bad in ["10.0.0.0/33", "example.com", "10.0.0.1/x", ""] {
            assert!(TrustedProxies::parse(&[bad]).is_err(), "{bad}");
        }
        assert!(TrustedProxies::parse(&["2001:db8::/32", "0.0.0.0/0"]).is_ok());
        assert!(TrustedProxies::parse(&["0.0.0.0/0"]).unwrap().trusts(ip("198.51.100.1")));
    }

    #[test]
    fn hooks_are_limited_per_address_and_per_workflow() {
        let limits = Limits::new(NonZeroU32::MIN, NonZeroU32::new(2).unwrap());
        let (a, b, c) = (
            ClientIp::of(ip("203.0.113.1")),
            ClientIp::of(ip("203.0.113.2")),
            ClientIp::of(ip("203.0.113.3")),
        );
        let (w, other) = (WorkflowId::new(), WorkflowId::new());
        assert!(limits.hook(a, Some(w)).is_none() && limits.hook(b, Some(w)).is_none());
        let refused = limits.hook(c, Some(w)).expect("a third call to w, from anywhere, is one too many");
        assert_eq!(refused.status(), StatusCode::TOO_MANY_REQUESTS);
        assert!(refused.headers().contains_key(header::RETRY_AFTER));
        assert!(limits.hook(c, Some(other)).is_none(), "another workflow has its own count");
        assert!(limits.hook(a, None).is_none(), "an id that is no workflow id counts for the address");
        assert!(limits.hook(a, Some(other)).is_some(), "a's third call is one too many");
    }

    #[test]
    fn a_handle_is_locked_after_ten_failures_for_a_growing_time() {
        let failures = HandleFailures::default();
        let start = Instant::now();
        for i in 0..MAX_FAILURES {
            assert_eq!(failures.attempt("Alice", start + Duration::from_secs(i as u64)), Ok(()), "{i}");
        }
        let t = start + Duration::from_secs(MAX_FAILURES as u64);
        let wait = failures.attempt("alice", t).unwrap_err();
        assert!(wait <= FIRST_LOCK && wait > FIRST_LOCK - Duration::from_secs(2), "{wait:?}");
        assert_eq!(failures.attempt("bob", t), Ok(()), "another handle is not locked");
        // Each failure after a lock locks again, twice as long, up to the longest.
        let mut at = t + FIRST_LOCK;
        let mut lock = FIRST_LOCK * 2;
        for _ in 0..8 {
            assert_eq!(failures.attempt("alice", at), Ok(()));
            assert_eq!(failures.attempt("alice", at).unwrap_err(), lock);
            at += lock;
            lock = (lock * 2).min(LONGEST_LOCK);
        }
        assert_eq!(lock, LONGEST_LOCK);
        failures.succeeded("ALICE");
        assert_eq!(failures.attempt("alice", at), Ok(()), "a success forgets the failures");

        // Failures spread over more than the window do not lock.
        let spread = HandleFailures::default();
        for i in 0..3 * MAX_FAILURES as u64 {
            assert_eq!(spread.attempt("carol", start + FAILURE_WINDOW / 5 * i as u32), Ok(()));
        }
        spread.forget_idle(start + REMEMBERED * 2);
        assert!(spread.lock().is_empty());
    }
}
