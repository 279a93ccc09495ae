//! Rate limits of the endpoints that cost (argon2) or create rows, and who
//! the client is for them.
//!
//! - The client's address is the socket peer's, unless the peer is one of
//!   `LENSERFIGHT_TRUSTED_PROXIES`: then the nearest address in
//!   `X-Forwarded-For` that is not a trusted proxy. An IPv6 address counts
//!   as its /64 (one host usually has a whole /64), an IPv4-mapped one as
//!   its IPv4 address.
//! - Per address: sign-in, the token endpoint, registration.
//! - Per handle, from any address: after
//!   [`MAX_FAILURES`](lf_auth::throttle::MAX_FAILURES) failed sign-ins
//!   the handle's sign-in is refused for a growing time, until a sign-in
//!   succeeds ([`Failures`], lf-auth's rule).
//! - Overall: registrations per hour.
//! - Webhook calls: `LENSERFIGHT_HOOKS_PER_MINUTE` per client address and,
//!   from any address, per workflow id, counted before the secret is
//!   checked (so guessing secrets is slow, and so is flooding one hook).
//!
//! Everything is counted in the database ([`ThrottleStore`], one state per
//! key, updated under the key's lock), so several processes on one
//! database count together: behind a balancer they allow what one would.
//! A rate is a GCRA bucket (the state is its theoretical arrival time); a
//! handle's state is its recent failures and locks. The only count kept in
//! this process is of a rate's refusals: a key the database refused until
//! some time is refused here until then without asking again (a bucket's
//! arrival time only grows, so no call can pass before it, whichever
//! process it reaches), so a flood of refused calls costs no writes.

use std::collections::HashMap;
use std::net::{IpAddr, Ipv6Addr, SocketAddr};
use std::num::NonZeroU32;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use axum::extract::{ConnectInfo, FromRequestParts};
use axum::response::Response;
use http::request::Parts;
use http::{HeaderMap, StatusCode};
use lf_auth::throttle::{Failures, Rate, duration, micros};
use lf_auth::{Change, ThrottleStore};
use lf_core::{Clock, LfResult, SystemClock, Timestamp, WorkflowId};

use crate::app::AppState;
use crate::responses::{json_error, lf_error, retry_after};

/// Most keys whose refusals this process remembers; past that, a refusal
/// is asked of the database again.
const MOST_REFUSALS: usize = 100_000;

const TOO_MANY: &str = "too many attempts; wait and retry";
const HANDLE_LOCKED: &str =
    "too many failed sign-ins for this handle; wait and retry, or ask the server's operator";

/// The rate limits of the server, counted in its database.
pub struct Limits {
    store: Arc<dyn ThrottleStore>,
    clock: Arc<dyn Clock>,
    sign_in: Rate,
    token: Rate,
    register: Rate,
    registrations: Rate,
    hooks: Rate,
    refused: Refusals,
}

impl Limits {
    /// Per address: sign-in 10 a minute (burst 5), token 120 a minute
    /// (burst 30), registration 10 a minute (burst 5); overall,
    /// `registrations_per_hour` registrations (a burst of that many, then
    /// one every hour divided by it); webhook calls `hooks_per_minute` a
    /// minute (a burst of that many) per address and per workflow. Counted
    /// in `store`, shared by every process over it.
    pub fn new(
        store: Arc<dyn ThrottleStore>,
        registrations_per_hour: NonZeroU32,
        hooks_per_minute: NonZeroU32,
    ) -> Self {
        Self {
            store,
            clock: Arc::new(SystemClock),
            sign_in: Rate::per_minute(10, 5),
            token: Rate::per_minute(120, 30),
            register: Rate::per_minute(10, 5),
            registrations: Rate::new(
                Duration::from_secs(60 * 60),
                registrations_per_hour,
                registrations_per_hour,
            ),
            hooks: Rate::new(Duration::from_secs(60), hooks_per_minute, hooks_per_minute),
            refused: Refusals::default(),
        }
    }

    /// 429 when `client` calls webhooks too often, or `workflow`'s hook is
    /// called too often from anywhere. A call refused for its address does
    /// not count against the workflow.
    pub async fn hook(&self, client: ClientIp, workflow: Option<WorkflowId>) -> Option<Response> {
        if let Some(refused) = self.take(format!("hook-client {}", client.0), self.hooks).await {
            return counted(Some(refused), "hooks_per_client");
        }
        counted(self.take(format!("hook {}", workflow?), self.hooks).await, "hooks_per_workflow")
    }

    /// 429 when `client` signs in too often.
    pub async fn sign_in(&self, client: ClientIp) -> Option<Response> {
        counted(self.take(format!("sign-in {}", client.0), self.sign_in).await, "sign_ins")
    }

    /// 429 when `client` calls the token or revocation endpoint too often.
    pub async fn token(&self, client: ClientIp) -> Option<Response> {
        counted(self.take(format!("token {}", client.0), self.token).await, "token_requests")
    }

    /// 429 when `client`, or everyone together, registers too often.
    pub async fn register(&self, client: ClientIp) -> Option<Response> {
        if let Some(refused) = self.take(format!("register {}", client.0), self.register).await {
            return counted(Some(refused), "registrations_per_client");
        }
        counted(self.take("registrations".to_owned(), self.registrations).await, "registrations")
    }

    /// A sign-in as `handle` begins: 429 while the handle is locked; else
    /// it counts as a failure until [`Limits::signed_in`] says otherwise,
    /// so that concurrent attempts (on any process) cannot pass the count.
    pub async fn sign_in_as(&self, handle: &str) -> Option<Response> {
        // Always asked of the database: a lock ends early when the attempt
        // that set it succeeds, and the per-address limit already bounds
        // how often this is asked.
        match self.attempt(&handle_key(handle), self.clock.now()).await {
            Ok(Ok(())) => None,
            Ok(Err(wait)) => counted(Some(too_many_for(wait, HANDLE_LOCKED)), "handle_locked"),
            Err(e) => Some(lf_error("checking a handle's failed sign-ins", &e)),
        }
    }

    /// The sign-in as `handle` succeeded: its failures are forgotten.
    pub async fn signed_in(&self, handle: &str) {
        let now = self.clock.now();
        if let Err(e) = self.store.update(&handle_key(handle), now, &mut |_| Change::Remove).await {
            lf_tools::log_error("forgetting a handle's failed sign-ins", &e);
        }
    }

    /// Forgets the counts that have recovered and handles whose failures
    /// are old (call now and then).
    pub async fn forget_idle(&self) {
        let now = self.clock.now();
        self.refused.forget_past(now);
        if let Err(e) = self.store.forget_expired(now).await {
            lf_tools::log_error("forgetting expired rate limits", &e);
        }
    }

    /// A call under `rate` for `key`: 429 when it may not pass (asked of
    /// the database unless a refusal it gave still holds).
    async fn take(&self, key: String, rate: Rate) -> Option<Response> {
        let now = self.clock.now();
        if let Some(wait) = self.refused.until(&key, now) {
            return Some(too_many_for(wait, TOO_MANY));
        }
        let mut taken = Ok(());
        let updated = self
            .store
            .update(&key, now, &mut |state| {
                let (change, result) = rate.take(state, now);
                taken = result;
                change
            })
            .await;
        match updated.map(|()| taken) {
            Ok(Ok(())) => None,
            Ok(Err(wait)) => {
                self.refused.remember(key, now, wait);
                Some(too_many_for(wait, TOO_MANY))
            }
            Err(e) => Some(lf_error("checking a rate limit", &e)),
        }
    }

    /// A sign-in as the handle of `key` at `now`: `Err(wait)` while it is
    /// locked; else a failure recorded (see [`Failures::attempt`]).
    async fn attempt(&self, key: &str, now: Timestamp) -> LfResult<Result<(), Duration>> {
        let mut result = Ok(());
        self.store
            .update(key, now, &mut |state| {
                let (change, r) = Failures::read(state).attempt(now);
                result = r;
                change
            })
            .await?;
        Ok(result)
    }
}

/// `refused`, counted under `reason` when it is a refusal (a 429; a failure
/// to count is not one).
fn counted(refused: Option<Response>, reason: &'static str) -> Option<Response> {
    if refused.as_ref().is_some_and(|r| r.status() == StatusCode::TOO_MANY_REQUESTS) {
        lf_metrics::metrics().refused(reason);
    }
    refused
}

fn too_many_for(wait: Duration, description: &str) -> Response {
    retry_after(json_error(StatusCode::TOO_MANY_REQUESTS, "too_many_requests", description), wait)
}

/// The keys this process was refused for, and until when.
#[derive(Default)]
struct Refusals(Mutex<HashMap<String, Timestamp>>);

impl Refusals {
    fn lock(&self) -> MutexGuard<'_, HashMap<String, Timestamp>> {
        self.0.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// How long `key` is still refused at `now`, if it is.
    fn until(&self, key: &str, now: Timestamp) -> Option<Duration> {
        let until = *self.lock().get(key)?;
        (until > now).then(|| duration(until.as_micros() - now.as_micros()))
    }

    fn remember(&self, key: String, now: Timestamp, wait: Duration) {
        let mut refused = self.lock();
        if refused.len() >= MOST_REFUSALS {
            refused.retain(|_, until| *until > now);
        }
        if refused.len() < MOST_REFUSALS {
            refused.insert(key, now.plus_micros(micros(wait)));
        }
    }

    fn forget_past(&self, now: Timestamp) {
        self.lock().retain(|_, until| *until > now);
    }
}

// ----- Failed sign-ins per handle -----------------------------------------

/// The key of a handle: what could be one, lowercased and bounded (an
/// unknown handle is counted like a known one, so that a lock says
/// nothing about which handles exist).
fn handle_key(handle: &str) -> String {
    let handle = handle.trim().chars().take(64).collect::<String>().to_lowercase();
    format!("handle {handle}")
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
    use lf_auth::throttle::{FAILURE_WINDOW, FIRST_LOCK, LONGEST_LOCK, MAX_FAILURES, REMEMBERED};

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

    fn limits(hooks_per_minute: u32) -> Limits {
        Limits::new(
            Arc::new(lf_auth::MemoryThrottleStore::new()),
            NonZeroU32::MIN,
            NonZeroU32::new(hooks_per_minute).unwrap(),
        )
    }

    #[tokio::test]
    async fn hooks_are_limited_per_address_and_per_workflow() {
        let limits = limits(2);
        let (a, b, c) = (
            ClientIp::of(ip("203.0.113.1")),
            ClientIp::of(ip("203.0.113.2")),
            ClientIp::of(ip("203.0.113.3")),
        );
        let (w, other) = (WorkflowId::new(), WorkflowId::new());
        assert!(limits.hook(a, Some(w)).await.is_none() && limits.hook(b, Some(w)).await.is_none());
        let refused =
            limits.hook(c, Some(w)).await.expect("a third call to w, from anywhere, is one too many");
        assert_eq!(refused.status(), StatusCode::TOO_MANY_REQUESTS);
        assert!(refused.headers().contains_key(header::RETRY_AFTER));
        assert!(limits.hook(c, Some(other)).await.is_none(), "another workflow has its own count");
        assert!(limits.hook(a, None).await.is_none(), "an id that is no workflow id counts for the address");
        assert!(limits.hook(a, Some(other)).await.is_some(), "a's third call is one too many");
    }

    /// Two servers over one store count together, and a refusal one
    /// remembers is the store's.
    #[tokio::test]
    async fn servers_over_one_store_count_together() {
        let store: Arc<dyn ThrottleStore> = Arc::new(lf_auth::MemoryThrottleStore::new());
        let three = NonZeroU32::new(3).unwrap();
        let servers = [Limits::new(store.clone(), three, three), Limits::new(store, three, three)];
        let w = WorkflowId::new();
        let mut through = 0;
        for i in 0..8u8 {
            let from = ClientIp::of(IpAddr::from([203, 0, 113, i]));
            through += usize::from(servers[usize::from(i % 2)].hook(from, Some(w)).await.is_none());
        }
        assert_eq!(through, 3);
        let a = ClientIp::of(ip("198.51.100.1"));
        for _ in 0..3 {
            assert!(servers[0].register(a).await.is_none());
        }
        let refused = servers[1].register(a).await.expect("the overall registrations are shared");
        let wait = refused.headers()[header::RETRY_AFTER].to_str().unwrap().parse::<u64>().unwrap();
        assert!((1_199..=1_200).contains(&wait), "one every 20 minutes: {wait}");
    }

    #[tokio::test]
    async fn a_handle_is_locked_after_ten_failures_for_a_growing_time() {
        let failures = limits(60);
        let start = Timestamp::from_micros(1_000_000_000_000);
        let after = |d: Duration| start.plus_micros(micros(d));
        let attempt =
            async |handle: &str, at: Timestamp| failures.attempt(&handle_key(handle), at).await.unwrap();
        for i in 0..MAX_FAILURES {
            assert_eq!(attempt("Alice", after(Duration::from_secs(i as u64))).await, Ok(()), "{i}");
        }
        let t = Duration::from_secs(MAX_FAILURES as u64);
        let wait = attempt("alice", after(t)).await.unwrap_err();
        assert!(wait <= FIRST_LOCK && wait > FIRST_LOCK - Duration::from_secs(2), "{wait:?}");
        assert_eq!(attempt("bob", after(t)).await, Ok(()), "another handle is not locked");
        // Each failure after a lock locks again, twice as long, up to the longest.
        let mut at = t + FIRST_LOCK;
        let mut lock = FIRST_LOCK * 2;
        for _ in 0..8 {
            assert_eq!(attempt("alice", after(at)).await, Ok(()));
            assert_eq!(attempt("alice", after(at)).await.unwrap_err(), lock);
            at += lock;
            lock = (lock * 2).min(LONGEST_LOCK);
        }
        assert_eq!(lock, LONGEST_LOCK);
        failures.signed_in("ALICE").await;
        assert_eq!(attempt("alice", after(at)).await, Ok(()), "a success forgets the failures");

        // Failures spread over more than the window do not lock.
        let spread = limits(60);
        for i in 0..3 * MAX_FAILURES as u32 {
            assert_eq!(
                spread.attempt(&handle_key("carol"), after(FAILURE_WINDOW / 5 * i)).await.unwrap(),
                Ok(())
            );
        }
        let forgotten = spread.store.forget_expired(after(REMEMBERED * 2)).await.unwrap();
        assert_eq!(forgotten, 1, "carol's failures are forgotten a day after the last");
    }
}
