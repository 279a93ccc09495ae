//! The accept loop and the life of each connection, served by hyper
//! directly: axum's `serve` gives hyper no timer and no limits, so a client
//! could hold a connection for ever by sending nothing, or its headers a
//! byte at a time.
//!
//! - A request's head must be complete within the header timeout, counted
//!   from the connection's opening, or on a kept-alive connection from the
//!   first byte after the last answer.
//! - A connection with nothing in flight is closed after the idle timeout.
//!   A request in flight is bounded by the request timeout instead (its
//!   body included), and an answer still being sent (an event stream) by
//!   nothing here.
//! - A request's body must average the minimum body rate once the body
//!   grace is over (counted from its head); a slower one fails, is answered
//!   408 and its connection closed.
//! - At most `max_connections` are open, and `max_per_client` from one
//!   client address ([`ClientIp`]; a trusted proxy's are not counted). A new
//!   connection at a cap sheds one of those it counts against: the oldest
//!   still sending a request (its head or its body), else the one with
//!   nothing in flight whose deadline is nearest, so neither slow senders
//!   nor idle sockets keep `/health` and real clients out. When every one
//!   has a request being served, a new connection over its client's cap is
//!   closed, and one over the global cap waits (those after it wait in the
//!   kernel's listen queue). An accept that fails for want of file
//!   descriptors sheds one the same way.
//! - On stop, nothing new is accepted, idle connections close, and the
//!   requests in flight have the shutdown timeout to finish; then every
//!   connection still open is dropped.
//!
//! hyper's own header timer is not used: it starts when a connection goes
//! idle, so it cannot tell a slow head from a kept-alive connection that
//! waits for its next request. [`Watch`] times both.

use std::collections::HashMap;
use std::convert::Infallible;
use std::future::Future;
use std::net::SocketAddr;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::task::{Context, Poll};
use std::time::Duration;

use axum::Router;
use axum::body::{Body, Bytes, HttpBody};
use axum::extract::ConnectInfo;
use axum::response::Response;
use bytes::Buf;
use http::Request;
use hyper_util::rt::{TokioExecutor, TokioIo};
use hyper_util::server::conn::auto::Builder;
use hyper_util::service::TowerToHyperService;
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{Notify, OwnedSemaphorePermit, Semaphore};
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

use crate::config::ConnectionLimits;
use crate::limits::{ClientIp, TrustedProxies};
use crate::responses::json_error;

/// Serves `app` on `listener` until `stop` resolves, then drains the
/// connections (see the module's documentation).
pub(crate) async fn serve(
    listener: TcpListener,
    app: Router,
    limits: ConnectionLimits,
    proxies: TrustedProxies,
    stop: impl Future<Output = ()>,
) {
    let open = Arc::new(Open::default());
    let permits = Arc::new(Semaphore::new(limits.max_connections));
    let draining = CancellationToken::new();
    let dropping = CancellationToken::new();
    let mut stop = std::pin::pin!(stop);
    loop {
        let accepted = tokio::select! {
            accepted = listener.accept() => accepted,
            () = &mut stop => break,
        };
        let (tcp, peer) = match accepted {
            Ok(a) => a,
            Err(e) if is_connection_error(&e) => continue,
            Err(e) => {
                // Most likely out of file descriptors: make room.
                tracing::warn!(error = %e, "cannot accept a connection");
                let pause = if open.shed(None) { 10 } else { 1000 };
                tokio::time::sleep(Duration::from_millis(pause)).await;
                continue;
            }
        };
        // A proxy's connections carry many clients: they are not counted.
        let client = (!proxies.trusts(peer.ip())).then(|| ClientIp::of(peer.ip()));
        if let Some(client) = client
            && open.count(client) >= limits.max_per_client
        {
            lf_metrics::metrics().refused("connections_per_client");
            if !open.shed(Some(client)) {
                tracing::debug!(%peer, "closing a connection over its client's cap");
                continue;
            }
        }
        // At the cap: shed a connection, or wait until one ends or goes idle.
        let permit = loop {
            let went_idle = open.went_idle.notified();
            if let Ok(permit) = permits.clone().try_acquire_owned() {
                break Some(permit);
            }
            if open.shed(None) {
                lf_metrics::metrics().refused("connections");
            }
            tokio::select! {
                permit = permits.clone().acquire_owned() => break permit.ok(),
                () = went_idle => {}
                () = &mut stop => break None,
            }
        };
        let Some(permit) = permit else { break };
        // Small JSON answers must not wait for Nagle's algorithm.
        if let Err(e) = tcp.set_nodelay(true) {
            tracing::debug!(error = %e, "cannot set TCP_NODELAY");
        }
        let connection = Connection {
            watch: open.add(limits, client),
            open: open.clone(),
            app: app.clone(),
            peer,
            draining: draining.clone(),
            dropping: dropping.clone(),
            _permit: permit,
        };
        tokio::spawn(connection.serve(tcp));
    }
    drop(listener);
    draining.cancel();
    // Every permit back: every connection has ended.
    let all = u32::try_from(limits.max_connections).unwrap_or(u32::MAX);
    if tokio::time::timeout(limits.shutdown_timeout, permits.acquire_many(all)).await.is_err() {
        tracing::warn!(
            connections = open.len(),
            "stopping: dropping the connections still open after the shutdown timeout"
        );
        dropping.cancel();
        let _ = permits.acquire_many(all).await;
    }
}

/// An accept error that concerns one connection only (the client went away
/// before it was accepted), not the listener.
fn is_connection_error(e: &std::io::Error) -> bool {
    use std::io::ErrorKind::*;
    matches!(e.kind(), ConnectionRefused | ConnectionAborted | ConnectionReset)
}

/// One accepted connection and what it needs to be served.
struct Connection {
    watch: Arc<Watch>,
    open: Arc<Open>,
    app: Router,
    peer: SocketAddr,
    /// Cancelled on stop: finish what is in flight, then close.
    draining: CancellationToken,
    /// Cancelled after the shutdown timeout: close now.
    dropping: CancellationToken,
    /// Held while the connection is open.
    _permit: OwnedSemaphorePermit,
}

impl Connection {
    async fn serve(self, tcp: TcpStream) {
        let metrics = lf_metrics::metrics();
        metrics.connections(1);
        let io = TokioIo::new(Watched { inner: tcp, watch: self.watch.clone() });
        let service = TowerToHyperService::new(Tracked {
            app: self.app.clone(),
            peer: self.peer,
            watch: self.watch.clone(),
        });
        let mut builder = Builder::new(TokioExecutor::new()).http1_only();
        // hyper's header timer would close kept-alive connections after the
        // header timeout (see the module's documentation).
        builder.http1().header_read_timeout(None);
        let mut conn = std::pin::pin!(builder.serve_connection(io, service));
        let mut expired = std::pin::pin!(self.watch.expired());
        let mut draining = false;
        loop {
            tokio::select! {
                result = conn.as_mut() => {
                    if let Err(e) = result {
                        tracing::debug!(peer = %self.peer, error = %e, "connection ended with an error");
                    }
                    break;
                }
                () = &mut expired => {
                    tracing::debug!(peer = %self.peer, "closing a connection that timed out");
                    break;
                }
                () = self.draining.cancelled(), if !draining => {
                    draining = true;
                    conn.as_mut().graceful_shutdown();
                }
                () = self.dropping.cancelled() => break,
                () = self.watch.shed.cancelled() => {
                    tracing::debug!(peer = %self.peer, "shedding a connection");
                    break;
                }
            }
        }
        self.open.remove(&self.watch);
        metrics.connections(-1);
    }
}

/// The open connections, for closing the idlest at the cap.
#[derive(Default)]
struct Open {
    next: AtomicU64,
    connections: Mutex<HashMap<u64, Arc<Watch>>>,
    /// Told when a connection's last request in flight is done.
    went_idle: Arc<Notify>,
}

impl Open {
    fn lock(&self) -> MutexGuard<'_, HashMap<u64, Arc<Watch>>> {
        self.connections.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn add(&self, limits: ConnectionLimits, client: Option<ClientIp>) -> Arc<Watch> {
        let id = self.next.fetch_add(1, Ordering::Relaxed);
        let watch = Arc::new(Watch::new(id, limits, client, self.went_idle.clone()));
        self.lock().insert(id, watch.clone());
        watch
    }

    fn remove(&self, watch: &Watch) {
        self.lock().remove(&watch.id);
    }

    fn len(&self) -> usize {
        self.lock().len()
    }

    /// The connections open from `client`.
    fn count(&self, client: ClientIp) -> usize {
        self.lock().values().filter(|w| w.client == Some(client)).count()
    }

    /// Closes one of `client`'s connections (of all, for `None`): the
    /// oldest still sending a request, else the one with nothing in flight
    /// whose deadline is nearest. Whether there was one.
    fn shed(&self, client: Option<ClientIp>) -> bool {
        let mut connections = self.lock();
        let mut sending = None;
        let mut idlest: Option<(Instant, u64)> = None;
        for watch in connections.values().filter(|w| client.is_none() || w.client == client) {
            let state = watch.lock();
            if state.bodies > 0 || (state.in_flight == 0 && state.head_started) {
                sending = Some(sending.map_or(watch.id, |id: u64| id.min(watch.id)));
            } else if state.in_flight == 0 && idlest.is_none_or(|(d, _)| state.deadline < d) {
                idlest = Some((state.deadline, watch.id));
            }
        }
        let Some(id) = sending.or(idlest.map(|(_, id)| id)) else { return false };
        // Removed now, so that counts are right before its task ends.
        if let Some(watch) = connections.remove(&id) {
            watch.shed.cancel();
        }
        true
    }
}

/// What a connection is doing, and until when it may: the one clock of its
/// timeouts.
struct Watch {
    id: u64,
    limits: ConnectionLimits,
    /// The client it counts against, if any.
    client: Option<ClientIp>,
    /// Cancelled to close the connection at once, whatever it is doing.
    shed: CancellationToken,
    state: Mutex<State>,
    /// Told when the deadline moves earlier or appears.
    moved: Notify,
    /// [`Open::went_idle`].
    went_idle: Arc<Notify>,
}

struct State {
    /// Requests whose answers have not been sent yet.
    in_flight: usize,
    /// When the connection is closed, if nothing is in flight by then.
    deadline: Instant,
    /// Whether the header timeout already runs (bytes of a head came, or
    /// the connection is new).
    head_started: bool,
    /// Request bodies still coming in.
    bodies: usize,
}

impl Watch {
    fn new(id: u64, limits: ConnectionLimits, client: Option<ClientIp>, went_idle: Arc<Notify>) -> Self {
        let state = State {
            in_flight: 0,
            deadline: Instant::now() + limits.header_timeout,
            head_started: true,
            bodies: 0,
        };
        let (shed, moved) = (CancellationToken::new(), Notify::new());
        Self { id, limits, client, shed, state: Mutex::new(state), moved, went_idle }
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The deadline, unless a request is in flight.
    fn deadline(&self) -> Option<Instant> {
        let state = self.lock();
        (state.in_flight == 0).then_some(state.deadline)
    }

    /// Resolves when the deadline passes with nothing in flight.
    async fn expired(&self) {
        loop {
            let moved = self.moved.notified();
            match self.deadline() {
                Some(deadline) if deadline <= Instant::now() => return,
                Some(deadline) => {
                    tokio::select! {
                        () = tokio::time::sleep_until(deadline) => {}
                        () = moved => {}
                    }
                }
                None => moved.await,
            }
        }
    }

    /// Bytes came in.
    fn read(&self) {
        let mut state = self.lock();
        if state.in_flight == 0 && !state.head_started {
            state.head_started = true;
            let by = Instant::now() + self.limits.header_timeout;
            if by < state.deadline {
                state.deadline = by;
                drop(state);
                self.moved.notify_one();
            }
        }
    }

    fn request_started(&self) {
        self.lock().in_flight += 1;
    }

    fn request_finished(&self) {
        let mut state = self.lock();
        state.in_flight = state.in_flight.saturating_sub(1);
        if state.in_flight == 0 {
            state.deadline = Instant::now() + self.limits.idle_timeout;
            state.head_started = false;
            drop(state);
            self.moved.notify_one();
            self.went_idle.notify_one();
        }
    }

    fn body_started(&self) {
        self.lock().bodies += 1;
    }

    fn body_finished(&self) {
        let mut state = self.lock();
        state.bodies = state.bodies.saturating_sub(1);
    }
}

/// The connection's socket, telling its [`Watch`] when bytes come in.
struct Watched {
    inner: TcpStream,
    watch: Arc<Watch>,
}

impl AsyncRead for Watched {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<std::io::Result<()>> {
        let this = self.get_mut();
        let before = buf.filled().len();
        let poll = Pin::new(&mut this.inner).poll_read(cx, buf);
        if buf.filled().len() > before {
            this.watch.read();
        }
        poll
    }
}

impl AsyncWrite for Watched {
    fn poll_write(self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &[u8]) -> Poll<std::io::Result<usize>> {
        Pin::new(&mut self.get_mut().inner).poll_write(cx, buf)
    }

    fn poll_write_vectored(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[std::io::IoSlice<'_>],
    ) -> Poll<std::io::Result<usize>> {
        Pin::new(&mut self.get_mut().inner).poll_write_vectored(cx, bufs)
    }

    fn is_write_vectored(&self) -> bool {
        self.inner.is_write_vectored()
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.get_mut().inner).poll_flush(cx)
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.get_mut().inner).poll_shutdown(cx)
    }
}

/// The application as one connection's service: each request gets the
/// peer's address (axum's `ConnectInfo`), its body is held to the minimum
/// rate, and it counts as in flight until its answer has been sent or
/// dropped.
#[derive(Clone)]
struct Tracked {
    app: Router,
    peer: SocketAddr,
    watch: Arc<Watch>,
}

impl<B> tower_service::Service<Request<B>> for Tracked
where
    B: HttpBody<Data = Bytes> + Send + Unpin + 'static,
    B::Error: Into<axum::BoxError>,
{
    type Response = Response<InFlight>;
    type Error = Infallible;
    type Future = Pin<Box<dyn Future<Output = Result<Self::Response, Infallible>> + Send>>;

    fn poll_ready(&mut self, _: &mut Context<'_>) -> Poll<Result<(), Infallible>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, request: Request<B>) -> Self::Future {
        self.watch.request_started();
        let guard = Finished(self.watch.clone());
        let read = Arc::new(AtomicBool::new(request.body().is_end_stream()));
        let slow = Arc::new(AtomicBool::new(false));
        let limits = self.watch.limits;
        let watch = self.watch.clone();
        let mut request = request.map(|body| {
            let ended = body.is_end_stream();
            if !ended {
                watch.body_started();
            }
            let start = Instant::now();
            Body::new(Reading {
                body,
                read: read.clone(),
                slow: slow.clone(),
                watch: (!ended).then_some(watch),
                start,
                received: 0,
                limits,
                check: Box::pin(tokio::time::sleep_until(start + limits.body_grace)),
            })
        });
        request.extensions_mut().insert(ConnectInfo(self.peer));
        let answer = tower_service::Service::call(&mut self.app, request);
        Box::pin(async move {
            let mut response = answer.await?;
            if slow.load(Ordering::Acquire) {
                lf_metrics::metrics().refused("slow_body");
                response = json_error(
                    http::StatusCode::REQUEST_TIMEOUT,
                    "request_timeout",
                    "the request's body came too slowly",
                );
            }
            // Answered before its body was read (refused first): hyper then
            // closes the connection unless the rest has already come, so the
            // client is told, rather than finding it closed when it sends
            // the next request.
            if !read.load(Ordering::Acquire) {
                response
                    .headers_mut()
                    .insert(http::header::CONNECTION, http::HeaderValue::from_static("close"));
            }
            Ok(response.map(|body| InFlight { body, _finished: guard }))
        })
    }
}

/// A request's body, noting when it has been read to its end, and failing
/// it when it comes slower than the minimum rate after the grace.
struct Reading<B> {
    body: B,
    read: Arc<AtomicBool>,
    /// Set when the body failed for its rate.
    slow: Arc<AtomicBool>,
    /// The connection's watch while the body is still coming.
    watch: Option<Arc<Watch>>,
    start: Instant,
    received: u64,
    limits: ConnectionLimits,
    /// When the rate is checked next.
    check: Pin<Box<tokio::time::Sleep>>,
}

impl<B> Reading<B> {
    /// The body has ended (or failed, or been dropped).
    fn ended(&mut self) {
        if let Some(watch) = self.watch.take() {
            watch.body_finished();
        }
    }

    /// Whether the body is behind the rate now; else the check is moved to
    /// when it would be, at this rate of arrival.
    fn behind(&mut self, cx: &mut Context<'_>) -> bool {
        while self.check.as_mut().poll(cx).is_ready() {
            let now = Instant::now();
            let owed = self.limits.min_body_rate as f64 * now.duration_since(self.start).as_secs_f64();
            if (self.received as f64) < owed {
                return true;
            }
            let enough_until =
                Duration::from_secs_f64(self.received as f64 / self.limits.min_body_rate as f64);
            let next = (self.start + enough_until.max(self.limits.body_grace)).max(now);
            self.check.as_mut().reset(next + Duration::from_millis(1));
        }
        false
    }
}

impl<B> Drop for Reading<B> {
    fn drop(&mut self) {
        self.ended();
    }
}

impl<B> HttpBody for Reading<B>
where
    B: HttpBody + Unpin,
    B::Error: Into<axum::BoxError>,
{
    type Data = B::Data;
    type Error = axum::BoxError;

    fn poll_frame(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<http_body::Frame<B::Data>, axum::BoxError>>> {
        let this = self.get_mut();
        let poll = Pin::new(&mut this.body).poll_frame(cx);
        match &poll {
            Poll::Ready(Some(Ok(frame))) => {
                if let Some(data) = frame.data_ref() {
                    this.received += data.remaining() as u64;
                }
            }
            Poll::Ready(Some(Err(_))) => this.ended(),
            Poll::Ready(None) => {}
            Poll::Pending => {
                if this.watch.is_some() && this.behind(cx) {
                    this.slow.store(true, Ordering::Release);
                    this.ended();
                    return Poll::Ready(Some(Err("the request's body came too slowly".into())));
                }
            }
        }
        if matches!(poll, Poll::Ready(None)) || this.body.is_end_stream() {
            this.read.store(true, Ordering::Release);
            this.ended();
        }
        poll.map(|frame| frame.map(|f| f.map_err(Into::into)))
    }

    fn is_end_stream(&self) -> bool {
        self.body.is_end_stream()
    }

    fn size_hint(&self) -> http_body::SizeHint {
        self.body.size_hint()
    }
}

/// Marks its request finished when dropped.
struct Finished(Arc<Watch>);

impl Drop for Finished {
    fn drop(&mut self) {
        self.0.request_finished();
    }
}

/// An answer's body, whose request is in flight until hyper drops it (sent,
/// or the client went away).
struct InFlight {
    body: Body,
    _finished: Finished,
}

impl HttpBody for InFlight {
    type Data = Bytes;
    type Error = axum::Error;

    fn poll_frame(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<http_body::Frame<Bytes>, axum::Error>>> {
        Pin::new(&mut self.get_mut().body).poll_frame(cx)
    }

    fn is_end_stream(&self) -> bool {
        self.body.is_end_stream()
    }

    fn size_hint(&self) -> http_body::SizeHint {
        self.body.size_hint()
    }
}
