//! JSON-RPC batches on stdio, in a session that negotiated 2025-03-26 (the
//! one MCP version that has them; rmcp reads none). Each member is read and
//! answered as if it had come on a line of its own, one after the other; the
//! writer keeps the answers of a batch's requests back, each written as it
//! would have been alone, and writes them as one array line, in the
//! members' order, when the last has come. Notifications get no answer, and
//! a batch of them none at all; a request cancelled before it is answered
//! gets none either, so that the batch does not wait for it.
//!
//! Answers are told apart by their request's id (rmcp's come to the
//! transport as messages): MCP forbids reusing an id within a session, and
//! an answer for an id no batch waits for is written on its own line.

use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};

use rmcp::model::{ClientJsonRpcMessage, RequestId};

use super::{Closed, Out, Read, Reader};

/// What one member of a batch is answered with.
enum Slot {
    /// The answer to this request, when it comes.
    Waiting(RequestId),
    /// This answer, as written.
    Written(Vec<u8>),
    /// Nothing (a notification, a response, a cancelled request).
    Nothing,
}

/// The batches whose answers have not all come.
#[derive(Default)]
pub(super) struct Batches {
    /// How many there are, so that the writer looks at the list only when
    /// there are some.
    open: AtomicUsize,
    batches: Mutex<Vec<Vec<Slot>>>,
}

impl Batches {
    /// Whether any batch waits for an answer.
    pub(super) fn waiting(&self) -> bool {
        self.open.load(Ordering::Acquire) > 0
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Vec<Vec<Slot>>> {
        self.batches.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Opens a batch answered as `slots` say; its line when nothing is
    /// left to wait for.
    fn open(&self, slots: Vec<Slot>) -> Option<Vec<u8>> {
        if slots.iter().any(|s| matches!(s, Slot::Waiting(_))) {
            let mut batches = self.lock();
            batches.push(slots);
            self.open.store(batches.len(), Ordering::Release);
            return None;
        }
        line(slots)
    }

    /// Changes the first slot waiting for `id` with `change`; the batch's
    /// line when that was the last it waited for. `Err` when no batch waits
    /// for `id`.
    fn settle(&self, id: &RequestId, change: impl FnOnce() -> Slot) -> Result<Option<Vec<u8>>, ()> {
        let mut batches = self.lock();
        let (at, slot) = batches
            .iter_mut()
            .enumerate()
            .find_map(|(at, slots)| {
                slots.iter_mut().find(|s| matches!(s, Slot::Waiting(w) if w == id)).map(|s| (at, s))
            })
            .ok_or(())?;
        *slot = change();
        if batches[at].iter().any(|s| matches!(s, Slot::Waiting(_))) {
            return Ok(None);
        }
        let slots = batches.remove(at);
        self.open.store(batches.len(), Ordering::Release);
        Ok(line(slots))
    }

    /// Keeps `answer` (its JSON) for the batch waiting for `id`; the batch's
    /// line when it was the last. `Err` when no batch waits for `id`: the
    /// answer is written on its own.
    pub(super) fn file(&self, id: &RequestId, answer: &[u8]) -> Result<Option<Vec<u8>>, ()> {
        self.settle(id, || Slot::Written(answer.to_vec()))
    }

    /// The request `id` was cancelled: no batch waits for its answer. The
    /// batch's line when it was the last one waited for.
    fn cancel(&self, id: &RequestId) -> Option<Vec<u8>> {
        self.settle(id, || Slot::Nothing).ok().flatten()
    }
}

/// The array of the answers in `slots`, if there are any.
fn line(slots: Vec<Slot>) -> Option<Vec<u8>> {
    let answers: Vec<Vec<u8>> = slots
        .into_iter()
        .filter_map(|s| match s {
            Slot::Written(answer) => Some(answer),
            Slot::Waiting(_) | Slot::Nothing => None,
        })
        .collect();
    if answers.is_empty() {
        return None;
    }
    let mut line = Vec::with_capacity(answers.iter().map(|a| a.len() + 1).sum::<usize>() + 1);
    line.push(b'[');
    for (i, answer) in answers.iter().enumerate() {
        if i > 0 {
            line.push(b',');
        }
        line.extend_from_slice(answer);
    }
    line.push(b']');
    Some(line)
}

impl Reader {
    /// Reads and dispatches the members of a batch, the batch opened first
    /// so that no answer comes before it waits for it.
    pub(super) async fn batch(&self, members: Vec<&[u8]>) -> Result<(), Closed> {
        let reads: Vec<Read> = members.into_iter().map(|member| self.direct.read(member)).collect();
        let slots = reads
            .iter()
            .map(|read| match read {
                Read::Direct(call) => Slot::Waiting(call.id().clone()),
                Read::Rmcp(ClientJsonRpcMessage::Request(request)) => Slot::Waiting(request.id.clone()),
                Read::Rmcp(_) => Slot::Nothing,
                Read::Refused(refusal) => match refusal.answer() {
                    Some(answer) => Slot::Written(serde_json::to_vec(&answer).unwrap_or_default()),
                    None => Slot::Nothing,
                },
            })
            .collect();
        if let Some(line) = self.batches.open(slots) {
            self.send(Out::Line(line)).await?;
        }
        for read in reads {
            match read {
                Read::Direct(call) => self.direct.answer(call, &self.outgoing).await?,
                Read::Rmcp(message) => self.forward(message).await?,
                Read::Refused(_) => {}
            }
        }
        Ok(())
    }

    /// A request the client cancelled is not waited for in its batch.
    pub(super) async fn cancelled(&self, id: &RequestId) -> Result<(), Closed> {
        match self.batches.cancel(id) {
            Some(line) => self.send(Out::Line(line)).await,
            None => Ok(()),
        }
    }
}
