//! The tool calls the stdio transport answers itself, the stdio half of
//! the rmcp bypass ([`lf_tools::mcp::direct`] decides which calls and gives their
//! answers). rmcp would give each call a cancellation token, a context, a
//! spawned task and three channel hops, which cost more than the call: here
//! a call runs on the reader's task, and one that does not finish on its
//! first poll (a write waiting on the database) goes on in a task of its
//! own, at most [`QUEUE`] of them, which `notifications/cancelled` aborts
//! without an answer.

use std::collections::HashMap;
use std::future::Future;
use std::sync::{Arc, Mutex};
use std::task::Poll;

use lf_tools::LfServer;
use lf_tools::mcp::direct::DirectCall;
use rmcp::model::RequestId;
use tokio::sync::{Semaphore, mpsc};
use tokio::task::AbortHandle;

use super::{Closed, Negotiated, Out, QUEUE, Read};

pub(super) struct Direct {
    server: LfServer,
    /// Whether the server has answered `initialize`, and with which version.
    negotiated: Negotiated,
    /// Calls still running in tasks of their own, to cancel them.
    running: Arc<Mutex<HashMap<RequestId, AbortHandle>>>,
    /// Bounds how many of those there are.
    slots: Arc<Semaphore>,
}

impl Direct {
    pub(super) fn new(server: LfServer, negotiated: Negotiated) -> Self {
        Self { server, negotiated, running: Arc::default(), slots: Arc::new(Semaphore::new(QUEUE)) }
    }

    /// What `text` is (see [`LfServer::classify`]): a call is the
    /// transport's to answer only in a session opened by `initialize`, in
    /// the version negotiated there.
    pub(super) fn read(&self, text: &[u8]) -> Read {
        self.server.classify(text, self.server.principal(), self.negotiated.get())
    }

    /// Runs `call` and queues its answer. A call that does not finish on its
    /// first poll continues in a task of its own, so reading goes on.
    pub(super) async fn answer(&self, call: DirectCall, out: &mpsc::Sender<Out>) -> Result<(), Closed> {
        let id = call.id().clone();
        let server = self.server.clone();
        let mut reply = Box::pin(async move { server.answer(server.principal().clone(), call).await });
        if let Poll::Ready(message) = std::future::poll_fn(|cx| Poll::Ready(reply.as_mut().poll(cx))).await {
            return out.send(Out::Answer(Box::new(message))).await.map_err(|_| Closed);
        }
        let Ok(slot) = self.slots.clone().acquire_owned().await else { return Err(Closed) };
        let (running, out) = (self.running.clone(), out.clone());
        let key = id.clone();
        // Registered under the lock the task takes to unregister, so that a
        // task finishing at once on another thread cannot leave its entry.
        let mut calls = self.running.lock().unwrap_or_else(|e| e.into_inner());
        let task = tokio::spawn(async move {
            let message = reply.await;
            running.lock().unwrap_or_else(|e| e.into_inner()).remove(&key);
            drop(slot);
            let _ = out.send(Out::Answer(Box::new(message))).await;
        });
        calls.insert(id, task.abort_handle());
        Ok(())
    }

    /// Stops the running call `id`, which the client cancelled: it gets no
    /// answer.
    pub(super) fn cancel(&self, id: &RequestId) {
        if let Some(task) = self.running.lock().unwrap_or_else(|e| e.into_inner()).remove(id) {
            task.abort();
        }
    }
}
