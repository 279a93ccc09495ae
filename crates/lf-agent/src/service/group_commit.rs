//! The action log's group commit ([`GroupCommit`]): a call of an agent
//! answers only once its log entry is committed, and the entries of calls
//! that end together share one transaction.
//!
//! A call queues its entry and waits. The first call to find entries
//! queued and no write of them under way writes them all (up to
//! [`super::LedgerSettings::batch`]) in one transaction; the calls that
//! queue while that write is under way wait for it to end, and the first
//! of them to run then writes theirs, together. So a call waits for at
//! most the commit under way and its own (past a batch's worth queued,
//! those before it too), and the busier the server, the more entries a
//! commit holds. A reservation a call has to make anyway
//! takes the entries queued into its own transaction
//! ([`GroupCommit::take_for_reservation`]); their calls wait for it as
//! for any write.
//!
//! A call is told how the write that held its entry went: written, or the
//! store's error. An entry the store refuses for what it is (its agent not
//! there) is dropped; one whose id is taken was written before, by a write
//! whose end was lost, and counts as written. When the store fails for its
//! own sake (INTERNAL: the database away or busy), the calls of the
//! entries not written, and of those queued behind them, answer that
//! error, and the entries wait at the front of the queue for the next
//! write (at most [`KEPT_BATCHES`] × `batch` of them, the oldest dropped
//! past that, so an outage cannot fill the memory): a call that changed
//! something is still in the log once the store is back. A write whose
//! call went away before it ended puts its entries back at the front of
//! the queue and wakes the calls waiting there to write them; entries
//! whose calls all went away are written by the next call or the next
//! [`GroupCommit::write_waiting`].

use std::sync::{Arc, Mutex, MutexGuard};
use std::task::{Poll, Waker};

use lf_core::{ErrorCode, LfError, LfResult};

use crate::model::ActionEntry;
use crate::store::AgentStore;

/// How many batches of log entries wait while the store cannot write them.
const KEPT_BATCHES: usize = 16;

/// One call's wait for the write that holds its entry.
#[derive(Default)]
struct Slot(Mutex<Wait>);

#[derive(Default)]
struct Wait {
    /// How the write went, once it ended (taken by the call).
    written: Option<LfResult<()>>,
    /// The waiting call, to wake.
    waker: Option<Waker>,
}

impl Slot {
    fn lock(&self) -> MutexGuard<'_, Wait> {
        self.0.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Tells the call how its write went (once: an entry put back after a
    /// failure keeps what its call was told), and wakes it.
    fn settle(&self, written: LfResult<()>) {
        let mut w = self.lock();
        w.written.get_or_insert(written);
        if let Some(waker) = w.waker.take() {
            waker.wake();
        }
    }

    /// Wakes the call, to look whether it is its turn to write.
    fn wake(&self) {
        if let Some(waker) = self.lock().waker.take() {
            waker.wake();
        }
    }
}

/// Log entries in the order their calls logged them, each with its call's
/// wait.
#[derive(Default)]
struct Queue {
    entries: Vec<ActionEntry>,
    slots: Vec<Arc<Slot>>,
}

impl Queue {
    fn len(&self) -> usize {
        self.entries.len()
    }

    /// The first `n`, taken out.
    fn take_front(&mut self, n: usize) -> Queue {
        let rest = Queue { entries: self.entries.split_off(n), slots: self.slots.split_off(n) };
        std::mem::replace(self, rest)
    }

    /// `self` after `front`.
    fn put_after(&mut self, mut front: Queue) {
        front.entries.append(&mut self.entries);
        front.slots.append(&mut self.slots);
        *self = front;
    }
}

#[derive(Default)]
struct State {
    queue: Queue,
    /// Whether a call is writing entries it took from the queue (the calls
    /// waiting then leave the queue to the next of them).
    writing: bool,
    /// The last batch written, emptied: the next one fills it, so that a
    /// busy log reuses its memory instead of growing a new batch each time.
    spare: Queue,
}

/// The action log's entries waiting to be committed, and the calls waiting
/// for them.
pub(crate) struct GroupCommit {
    /// The most entries one write takes.
    batch: usize,
    state: Mutex<State>,
}

/// What a waiting call is to do next.
enum Next<'a> {
    /// Its entry's write ended, thus.
    Written(LfResult<()>),
    /// Write these, its own among them.
    Write(InFlight<'a>),
}

impl GroupCommit {
    pub(crate) fn new(batch: usize) -> Self {
        GroupCommit { batch: batch.max(1), state: Mutex::new(State::default()) }
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Queues `entry` and waits for the commit that holds it: `Ok` once it
    /// is on disk, else the error of the write that could not store it.
    pub(crate) async fn commit(&self, store: &dyn AgentStore, entry: ActionEntry) -> LfResult<()> {
        let slot = self.enqueue(entry);
        loop {
            match self.next(&slot).await {
                Next::Written(written) => return written,
                // What it tells is in each slot of the batch, this call's
                // among them.
                Next::Write(taken) => {
                    let _ = self.write(store, taken).await;
                }
            }
        }
    }

    fn enqueue(&self, entry: ActionEntry) -> Arc<Slot> {
        let slot = Arc::new(Slot::default());
        let mut s = self.lock();
        s.queue.entries.push(entry);
        s.queue.slots.push(slot.clone());
        slot
    }

    /// Waits until the write holding `slot`'s entry ended, or until no
    /// write is under way while entries are queued: then this call writes
    /// them.
    async fn next(&self, slot: &Slot) -> Next<'_> {
        std::future::poll_fn(|cx| {
            let s = &mut *self.lock();
            let mut wait = slot.lock();
            if let Some(written) = wait.written.take() {
                return Poll::Ready(Next::Written(written));
            }
            if !s.writing && s.queue.len() > 0 {
                drop(wait);
                s.writing = true;
                return Poll::Ready(Next::Write(self.take(s, true)));
            }
            if !wait.waker.as_ref().is_some_and(|w| w.will_wake(cx.waker())) {
                wait.waker = Some(cx.waker().clone());
            }
            Poll::Pending
        })
        .await
    }

    /// The first `batch` entries queued, taken out for a write; `leads`
    /// when the write is the one a waiting call makes.
    fn take<'a>(&'a self, s: &mut State, leads: bool) -> InFlight<'a> {
        let batch = if s.queue.len() <= self.batch {
            std::mem::replace(&mut s.queue, std::mem::take(&mut s.spare))
        } else {
            s.queue.take_front(self.batch)
        };
        InFlight { log: self, batch, done: 0, leads }
    }

    /// The entries queued, for a reservation to write in its transaction
    /// (none queued: `None`). Settle them with [`InFlight::written`] once
    /// it committed; dropped, they are queued again for a write of their
    /// own.
    pub(crate) fn take_for_reservation(&self) -> Option<InFlight<'_>> {
        let s = &mut *self.lock();
        (s.queue.len() > 0).then(|| self.take(s, false))
    }

    /// Writes the entries queued whose calls are not writing them already
    /// (of calls that went away, or that wait again after a failure), a
    /// batch at a time, until none are left or a write fails: its error.
    pub(crate) async fn write_waiting(&self, store: &dyn AgentStore) -> LfResult<()> {
        // Bounded: calls logging meanwhile would keep the queue full.
        for _ in 0..=KEPT_BATCHES {
            let taken = {
                let s = &mut *self.lock();
                if s.queue.len() == 0 {
                    break;
                }
                self.take(s, false)
            };
            self.write(store, taken).await?;
        }
        Ok(())
    }

    /// Writes `taken` in one transaction. If that fails, each entry is
    /// tried alone, in order (see the module's doc for what each call is
    /// told). The first error comes back.
    async fn write(&self, store: &dyn AgentStore, mut taken: InFlight<'_>) -> LfResult<()> {
        if store.record_actions(&taken.batch.entries).await.is_ok() {
            taken.written();
            return Ok(());
        }
        let mut first = None;
        while taken.done < taken.batch.len() {
            let Err(e) = store.record_action(&taken.batch.entries[taken.done]).await else {
                taken.settle_next(Ok(()));
                continue;
            };
            match e.code() {
                ErrorCode::Conflict => taken.settle_next(Ok(())),
                ErrorCode::Internal => {
                    for slot in &taken.batch.slots[taken.done..] {
                        slot.settle(Err(copy(&e)));
                    }
                    // And the calls queued behind: a call whose entry is
                    // not in this batch would write the same failing ones
                    // again, in turn, for as long as the store is away.
                    self.lock().queue.slots.iter().for_each(|slot| slot.settle(Err(copy(&e))));
                    first.get_or_insert(e);
                    // The rest wait again (`taken`'s drop).
                    break;
                }
                _ => {
                    taken.settle_next(Err(copy(&e)));
                    first.get_or_insert(e);
                }
            }
        }
        first.map_or(Ok(()), Err)
    }

    /// Puts `back` (entries taken out and not written) at the front of the
    /// queue, within the bound the module's doc gives, ends the write of
    /// the call that `leads` it, and wakes the calls of the entries queued,
    /// the first of which writes them. `back` empty, its memory is kept for
    /// the next batch (not past two batches' worth: what an outage piled
    /// up is let go).
    fn ended(&self, back: Queue, leads: bool) {
        let s = &mut *self.lock();
        if leads {
            s.writing = false;
        }
        if back.len() == 0 {
            let room = back.entries.capacity();
            if room > s.spare.entries.capacity() && room <= 2 * self.batch {
                s.spare = back;
            }
        } else {
            s.queue.put_after(back);
            let most = self.batch.saturating_mul(KEPT_BATCHES);
            if s.queue.len() > most {
                let dropped = s.queue.take_front(s.queue.len() - most);
                for slot in &dropped.slots {
                    slot.settle(Err(LfError::internal(
                        "the action log could not be written, and too many entries were waiting to keep this one",
                    )));
                }
            }
        }
        if !s.writing {
            s.queue.slots.iter().for_each(|slot| slot.wake());
        }
    }
}

/// Entries taken out of the queue for a write. Dropped, the entries not
/// settled yet go back to the front of the queue ([`GroupCommit::ended`]):
/// those that wait again after a failure, or all of them when the write
/// was given up before it ended (its call went away).
pub(crate) struct InFlight<'a> {
    log: &'a GroupCommit,
    batch: Queue,
    /// The entries settled and done with, from the front.
    done: usize,
    leads: bool,
}

impl InFlight<'_> {
    pub(crate) fn entries(&self) -> &[ActionEntry] {
        &self.batch.entries
    }

    /// Every entry is committed: each call is told.
    pub(crate) fn written(&mut self) {
        for slot in &self.batch.slots[self.done..] {
            slot.settle(Ok(()));
        }
        self.done = self.batch.len();
    }

    fn settle_next(&mut self, written: LfResult<()>) {
        self.batch.slots[self.done].settle(written);
        self.done += 1;
    }
}

impl Drop for InFlight<'_> {
    fn drop(&mut self) {
        let mut back = std::mem::take(&mut self.batch);
        back.entries.drain(..self.done);
        back.slots.drain(..self.done);
        self.log.ended(back, self.leads);
    }
}

/// `e` again, for another call of the same failed write (its cause stays
/// with the first).
fn copy(e: &LfError) -> LfError {
    e.details().iter().fold(LfError::new(e.code(), e.message()), |out, (k, v)| out.with_detail(k, v.clone()))
}

#[cfg(test)]
mod tests {
    use lf_core::{Clock, LenserId, Reach, SystemClock};

    use super::*;
    use crate::model::{ActionId, ActionName, ActionOutcome, ArgsSummary};

    /// A written batch's memory comes back for the batch after next: once
    /// two batches have been written, a batch as long fills without growing.
    #[test]
    fn a_written_batch_is_filled_again() {
        pollster::block_on(filled_again());
    }

    async fn filled_again() {
        let store = crate::memory::MemoryAgentStore::new();
        let new = crate::NewAgent::new(
            crate::model::AgentHandle::parse("ledger_reuse").unwrap(),
            crate::model::DisplayName::parse("Reuse").unwrap(),
        );
        let agent = new.into_agent(LenserId::new(), SystemClock.now());
        store.create_agent(&agent, 5).await.unwrap();
        let log = GroupCommit::new(64);
        let entry = || ActionEntry {
            id: ActionId::new(),
            agent: agent.id,
            action: ActionName::parse("action_type", "get_lens").unwrap(),
            tool: None,
            arguments: ArgsSummary::new("{}"),
            outcome: ActionOutcome::Succeeded,
            code: None,
            message: None,
            actor: Some(agent.owner),
            at: SystemClock.now(),
        };
        for _ in 0..3 {
            let slots: Vec<_> = (0..40).map(|_| log.enqueue(entry())).collect();
            log.write_waiting(&store).await.unwrap();
            assert!(slots.iter().all(|s| matches!(s.lock().written, Some(Ok(())))), "each call told");
        }
        let waiting = log.lock().queue.entries.capacity();
        assert!(waiting >= 40, "the batch filling now has the memory of one written: {waiting}");
        for _ in 0..40 {
            log.enqueue(entry());
        }
        assert_eq!(log.lock().queue.entries.capacity(), waiting, "filled without growing");
        let logged = store.list_actions(Reach::Everything, agent.id, lf_core::PageRequest::first(10)).await;
        assert_eq!(logged.unwrap().total, 120, "every written entry is in the log");
    }
}
