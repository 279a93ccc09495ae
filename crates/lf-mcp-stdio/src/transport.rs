//! Newline-delimited JSON-RPC over a reader and a writer, as an rmcp
//! [`Transport`].
//!
//! Why not rmcp's own stdio transport: it reads ahead without bound (a flood
//! of queued requests becomes memory), it drops a malformed line without an
//! answer, and it writes each message on its own. Here:
//! - at most [`QUEUE`] parsed requests wait for the server; past that the
//!   reader stops reading and the client's pipe fills up (backpressure);
//! - a line that is not JSON answers `-32700`, a JSON value that is not a
//!   message answers `-32600`/`-32602` (with its id when it has one, even
//!   when it is nested too deeply to parse), a line longer than
//!   [`MAX_LINE`] answers `-32600`; the session goes on;
//! - answers are written through a buffer flushed whenever no other answer is
//!   ready, so pipelined calls share writes;
//! - each message is read once, by [`LfServer::classify`]: once the server
//!   has answered `initialize`, a plain `tools/call` is answered by the
//!   transport itself ([`direct`], with [`lf_tools::mcp::direct`]);
//!   everything else (the handshake, lists, prompts, inline-era requests,
//!   broken calls) goes to rmcp as that same reading;
//! - in a session of 2025-03-26, a batch is answered member by member as one
//!   array line ([`batch`]); in other sessions it is refused.

mod batch;
mod direct;

use std::borrow::Cow;
use std::future::Future;
use std::sync::{Arc, OnceLock};

use lf_tools::LfServer;
use lf_tools::mcp::direct::{Answer, known_version};
use lf_tools::mcp::{Classified, jsonrpc};
use rmcp::RoleServer;
use rmcp::model::{
    ClientJsonRpcMessage, ClientNotification, JsonRpcMessage, JsonRpcNotification, JsonRpcResponse,
    ProtocolVersion, RequestId, ServerJsonRpcMessage, ServerResult,
};
use rmcp::transport::Transport;
use serde_json::Value;
use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncWrite, AsyncWriteExt, BufReader, BufWriter};
use tokio::sync::mpsc;
use tokio::task::JoinHandle;

use self::batch::Batches;
use self::direct::Direct;

/// Parsed messages waiting for the server.
pub const QUEUE: usize = 256;
/// The longest line read, in bytes (the rest of a longer line is skipped).
pub const MAX_LINE: usize = 16 * 1024 * 1024;

/// What the writer task writes.
enum Out {
    Message(Box<ServerJsonRpcMessage>),
    /// The answer to a call the transport ran itself.
    Answer(Box<Answer>),
    /// A protocol error the transport answers by itself.
    Raw(Value),
    /// A line already written: a batch's answers.
    Line(Vec<u8>),
}

/// The transport rmcp drives.
pub struct LineTransport {
    incoming: mpsc::Receiver<ClientJsonRpcMessage>,
    outgoing: mpsc::Sender<Out>,
    /// Set when the server answers `initialize`.
    negotiated: Negotiated,
}

/// The protocol version the server's answer to `initialize` names, once it
/// has answered.
type Negotiated = Arc<OnceLock<ProtocolVersion>>;

/// The tasks behind a [`LineTransport`]: wait for them after the session so
/// that every answer is written before the process exits.
pub struct Pump {
    reader: JoinHandle<()>,
    writer: JoinHandle<std::io::Result<()>>,
}

impl Pump {
    /// Stops reading and waits until everything queued is written.
    pub async fn finish(self) -> std::io::Result<()> {
        self.reader.abort();
        let _ = self.reader.await;
        self.writer.await.unwrap_or_else(|e| Err(std::io::Error::other(e)))
    }
}

/// What the reader does with each message it reads.
struct Reader {
    incoming: mpsc::Sender<ClientJsonRpcMessage>,
    outgoing: mpsc::Sender<Out>,
    direct: Direct,
    batches: Arc<Batches>,
    negotiated: Negotiated,
}

/// A message as read: what the reader does with it.
type Read = Classified<ClientJsonRpcMessage>;

impl Reader {
    async fn send(&self, out: Out) -> Result<(), Closed> {
        self.outgoing.send(out).await.map_err(|_| Closed)
    }

    /// Reads one line's message or batch and dispatches it.
    async fn line(&self, text: &[u8]) -> Result<(), Closed> {
        let batches_allowed = self.negotiated.get().is_some_and(jsonrpc::allows_batches);
        if let Some(batch) = jsonrpc::batch(text, batches_allowed) {
            return match batch {
                Ok(members) => self.batch(members).await,
                Err(refusal) => {
                    self.send(Out::Raw(refusal.answer("Invalid Request: batches are not supported"))).await
                }
            };
        }
        match self.direct.read(text) {
            Read::Direct(call) => self.direct.answer(call, &self.outgoing).await,
            Read::Rmcp(message) => self.forward(message).await,
            Read::Refused(refusal) => match refusal.answer() {
                Some(answer) => self.send(Out::Raw(answer)).await,
                None => Ok(()),
            },
        }
    }

    /// Hands `message` to rmcp; a cancellation also stops the call it names
    /// if the transport runs it, and its batch stops waiting for it.
    async fn forward(&self, message: ClientJsonRpcMessage) -> Result<(), Closed> {
        if let Some(id) = cancelled(&message) {
            self.direct.cancel(id);
            self.cancelled(id).await?;
        }
        self.incoming.send(message).await.map_err(|_| Closed)
    }
}

/// The request a `notifications/cancelled` names.
fn cancelled(message: &ClientJsonRpcMessage) -> Option<&RequestId> {
    match message {
        JsonRpcMessage::Notification(JsonRpcNotification {
            notification: ClientNotification::CancelledNotification(cancelled),
            ..
        }) => cancelled.params.request_id.as_ref(),
        _ => None,
    }
}

async fn read_loop<R: AsyncRead + Unpin>(reader: R, dispatch: Reader) {
    let mut reader = BufReader::with_capacity(64 * 1024, reader);
    let mut line = Vec::with_capacity(4096);
    loop {
        line.clear();
        // Read one line, keeping at most MAX_LINE bytes of it.
        let mut too_long = false;
        loop {
            let buf = match reader.fill_buf().await {
                Ok(buf) => buf,
                Err(e) => {
                    tracing::warn!(error = %e, "reading stdin failed");
                    return;
                }
            };
            if buf.is_empty() {
                if line.is_empty() {
                    return;
                }
                break;
            }
            let (chunk, done) = match memchr::memchr(b'\n', buf) {
                Some(at) => (&buf[..=at], true),
                None => (buf, false),
            };
            let n = chunk.len();
            if !too_long {
                if line.len() + n > MAX_LINE {
                    too_long = true;
                    line.clear();
                } else {
                    line.extend_from_slice(chunk);
                }
            }
            reader.consume(n);
            if done {
                break;
            }
        }
        if too_long {
            let answer = jsonrpc::error(
                Value::Null,
                -32600,
                format!("Invalid Request: a message may be at most {MAX_LINE} bytes"),
            );
            if dispatch.send(Out::Raw(answer)).await.is_err() {
                return;
            }
            continue;
        }
        let text = trim_line(&line);
        if text.is_empty() {
            continue;
        }
        if dispatch.line(text).await.is_err() {
            return;
        }
    }
}

fn trim_line(line: &[u8]) -> &[u8] {
    let mut end = line.len();
    while end > 0 && matches!(line[end - 1], b'\n' | b'\r' | b' ' | b'\t') {
        end -= 1;
    }
    &line[..end]
}

async fn write_loop<W: AsyncWrite + Unpin>(
    writer: W,
    mut outgoing: mpsc::Receiver<Out>,
    batches: Arc<Batches>,
) -> std::io::Result<()> {
    let mut out = BufWriter::with_capacity(64 * 1024, writer);
    let mut buf = Vec::with_capacity(4096);
    while let Some(mut item) = outgoing.recv().await {
        // Write everything already queued, then flush once.
        loop {
            buf.clear();
            // The id of an answer a batch may be waiting for.
            let mut id = None;
            let written = match item {
                Out::Message(m) => {
                    if batches.waiting() {
                        id = response_id(&m).cloned();
                    }
                    serde_json::to_writer(&mut buf, &m)
                }
                Out::Answer(a) => {
                    if batches.waiting() {
                        id = Some(a.id().clone());
                    }
                    a.write(&mut buf)
                }
                Out::Raw(v) => serde_json::to_writer(&mut buf, &v),
                Out::Line(line) => {
                    buf.extend_from_slice(&line);
                    Ok(())
                }
            };
            match written {
                Ok(()) => match id.map(|id| batches.file(&id, &buf)) {
                    // Kept for its batch, which is still waiting.
                    Some(Ok(None)) => {}
                    Some(Ok(Some(line))) => {
                        out.write_all(&line).await?;
                        out.write_all(b"\n").await?;
                    }
                    None | Some(Err(())) => {
                        buf.push(b'\n');
                        out.write_all(&buf).await?;
                    }
                },
                Err(e) => tracing::error!(error = %e, "an answer could not be serialized"),
            }
            match outgoing.try_recv() {
                Ok(next) => item = next,
                Err(_) => break,
            }
        }
        out.flush().await?;
    }
    out.flush().await
}

/// The request a message answers, if it is an answer.
fn response_id(message: &ServerJsonRpcMessage) -> Option<&RequestId> {
    match message {
        JsonRpcMessage::Response(response) => Some(&response.id),
        JsonRpcMessage::Error(error) => error.id.as_ref(),
        _ => None,
    }
}

/// A transport over `reader`/`writer` and the tasks that feed it. It answers
/// plain tool calls itself once the session is initialized (see the
/// module's docs): `server` must be the one rmcp serves on it.
pub fn lines<R, W>(reader: R, writer: W, server: LfServer) -> (LineTransport, Pump)
where
    R: AsyncRead + Send + Unpin + 'static,
    W: AsyncWrite + Send + Unpin + 'static,
{
    let (in_tx, in_rx) = mpsc::channel(QUEUE);
    let (out_tx, out_rx) = mpsc::channel(QUEUE);
    let negotiated = Negotiated::default();
    let batches = Arc::new(Batches::default());
    let session = Reader {
        incoming: in_tx,
        outgoing: out_tx.clone(),
        direct: Direct::new(server, negotiated.clone()),
        batches: batches.clone(),
        negotiated: negotiated.clone(),
    };
    let reader = tokio::spawn(read_loop(reader, session));
    let writer = tokio::spawn(write_loop(writer, out_rx, batches));
    (LineTransport { incoming: in_rx, outgoing: out_tx, negotiated }, Pump { reader, writer })
}

/// The output side has closed: the client went away.
#[derive(Debug)]
pub struct Closed;

impl std::fmt::Display for Closed {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("the output stream is closed")
    }
}

impl std::error::Error for Closed {}

impl Transport<RoleServer> for LineTransport {
    type Error = Closed;

    fn name() -> Cow<'static, str> {
        "lenserfight-lines".into()
    }

    fn send(
        &mut self,
        item: ServerJsonRpcMessage,
    ) -> impl Future<Output = Result<(), Closed>> + Send + 'static {
        if let JsonRpcMessage::Response(JsonRpcResponse {
            result: ServerResult::InitializeResult(init),
            ..
        }) = &item
        {
            // rmcp's static value for it, so that each direct call's copy
            // copies no string (the negotiated one is the client's text).
            let version = &init.protocol_version;
            let _ = self.negotiated.set(known_version(version.as_str()).unwrap_or_else(|| version.clone()));
        }
        let tx = self.outgoing.clone();
        async move { tx.send(Out::Message(Box::new(item))).await.map_err(|_| Closed) }
    }

    fn receive(&mut self) -> impl Future<Output = Option<ClientJsonRpcMessage>> + Send {
        self.incoming.recv()
    }

    async fn close(&mut self) -> Result<(), Closed> {
        self.incoming.close();
        Ok(())
    }
}
