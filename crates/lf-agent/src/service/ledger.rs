//! The call ledger: what a server keeps in memory between the store's
//! writes of agents' calls, so that a call checks and counts without a
//! write of its own most of the time ([`AgentService::with_ledger`]).
//!
//! - Allowances: when a call finds no room in what this server holds for
//!   its agent today, the server reserves in the store, in one atomic
//!   step like any reservation, what the call needs plus an allowance for
//!   calls to come ([`allowance`]: an eighth of the room the cap had left,
//!   at most [`LedgerSettings::most_held`] of each count, none when the
//!   room is small). Later calls take from the allowance in memory, and
//!   each [`AgentService::flush`] reserves ahead, the same way, for an
//!   agent whose calls took from it since the last flush and left less
//!   than half of it ([`Ledger::top_ups`]): a busy agent's calls seldom
//!   wait for a reservation. One reservation for an agent is under way on
//!   a server at a time ([`Ledger::turn`]): calls that find too little
//!   held while one is wait for it and take from what it reserved (a
//!   burst of calls would otherwise each reserve an allowance, as many
//!   writes, holding most of the room), and a flush does not top up an
//!   agent a call is reserving for. So the
//!   store's counts are what was used plus what servers hold: a cap is
//!   never passed, with any number of servers on one database, and a
//!   server holds at most an eighth of any cap's room. What is held is
//!   given back at the agent's next call once it changed (its revision
//!   moved; the call is checked against the new policy, so a lowered cap
//!   holds at once), at the first flush of a new day, and when the server
//!   closes ([`AgentService::close`]); a server that dies keeps what it
//!   held counted until the day is over (never more calls, some fewer).
//!   When a reservation with an allowance does not fit, the call asks for
//!   exactly what it needs, so on one server a cap is refused at its exact
//!   count; with several, a call may be refused while another server still
//!   holds a little of the room (at most an eighth), which comes back when
//!   that server closes or the day ends. The
//!   usage this server shows is the store's less what it holds.
//! - The action log: a call answers once its entry is committed, and the
//!   entries of calls that end together share one transaction (group
//!   commit: [`GroupCommit`]), never a timer's wait; a reservation a call
//!   makes takes the entries queued into its own transaction
//!   ([`AgentStore::reserve_usage_logging`]), one commit fewer. A server
//!   killed at any moment has every answered call in the log.
//!
//! Without a ledger (the default) every call reserves exactly what it
//! needs and writes its log entry alone before it answers.

use std::collections::HashMap;
use std::sync::Mutex;
use std::task::{Poll, Waker};

use lf_core::{LenserId, LfResult, Reach};

use super::group_commit::GroupCommit;
use crate::model::{Ask, Reservation, Usage, UsageDay, UsageKind};
use crate::store::AgentStore;

/// How a ledger holds and batches.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LedgerSettings {
    /// The most of each count one reservation holds for calls to come.
    pub most_held: u64,
    /// The most log entries one commit holds (more wait for the next);
    /// sixteen times this wait while the store cannot write them.
    pub batch: usize,
}

impl Default for LedgerSettings {
    fn default() -> Self {
        LedgerSettings { most_held: 1024, batch: 1024 }
    }
}

/// The allowance a reservation adds to `amount` of a count at `used`
/// within `limit`: an eighth of the room left after it, at most `most`.
pub fn allowance(used: u64, amount: u64, limit: u64, most: u64) -> u64 {
    let room = limit.saturating_sub(used.saturating_add(amount));
    (room / 8).min(most)
}

/// What this server holds of one agent's day.
#[derive(Clone, Copy, Debug)]
struct Held {
    day: UsageDay,
    /// The agent's revision when it was reserved.
    revision: u64,
    /// Reserved in the store, not used yet.
    left: Usage,
    /// The store's counts at the last reservation.
    counted: Usage,
    /// The limits the reservations of each count were made under (0: none
    /// reserved).
    limits: Usage,
    /// Whether a call took from it since the last [`Ledger::top_ups`].
    taken: bool,
}

/// A reservation under way for one agent: its ticket, and the calls
/// waiting for it to end.
struct Reserving {
    ticket: u64,
    waiting: Vec<Waker>,
}

#[derive(Default)]
struct State {
    held: HashMap<LenserId, Held>,
    /// The agents a reservation is under way for on this server (one at a
    /// time per agent, [`Ledger::turn`]).
    reserving: HashMap<LenserId, Reserving>,
    /// The last ticket given.
    tickets: u64,
}

/// What a call found in the ledger: held units to give back first (of
/// another day, or of an older revision of the agent), then whether what
/// is held covers the call.
pub(crate) struct Take {
    pub(crate) stale: Option<(UsageDay, Usage)>,
    /// `Ok`: covered, the day's usage as this server counts it; `Err`:
    /// reserve these first (then [`Ledger::settle`]).
    pub(crate) found: Result<Usage, Vec<Ask>>,
}

pub(crate) struct Ledger {
    settings: LedgerSettings,
    state: Mutex<State>,
    /// The action log's entries on their way to the store.
    pub(crate) log: GroupCommit,
}

impl Ledger {
    pub(crate) fn new(settings: LedgerSettings) -> Self {
        Ledger { settings, state: Mutex::new(State::default()), log: GroupCommit::new(settings.batch) }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Takes `asks` from what is held for `agent` (at `revision`) on `day`
    /// if it covers them all; else what to reserve: for each count short,
    /// what it lacks, with an allowance when `allow`.
    pub(crate) fn take(
        &self,
        agent: LenserId,
        revision: u64,
        day: UsageDay,
        asks: &[Ask],
        allow: bool,
    ) -> Take {
        let mut s = self.lock();
        let mut stale = None;
        if let Some(h) = s.held.get(&agent).copied()
            && (h.day != day || h.revision != revision)
        {
            s.held.remove(&agent);
            stale = Some((h.day, h.left)).filter(|(_, left)| *left != Usage::default());
        }
        let held = s.held.get(&agent).copied();
        let left = held.map(|h| h.left).unwrap_or_default();
        let counted = held.map(|h| h.counted).unwrap_or_default();
        let mut need = Vec::new();
        let mut after = left;
        for ask in asks.iter().filter(|a| a.amount > 0) {
            let have = after.get(ask.kind);
            if have >= ask.amount {
                *after.get_mut(ask.kind) = have - ask.amount;
            } else {
                let short = ask.amount - have;
                let extra = if allow {
                    allowance(counted.get(ask.kind), short, ask.limit, self.settings.most_held)
                } else {
                    0
                };
                need.push(Ask { kind: ask.kind, amount: short + extra, limit: ask.limit });
            }
        }
        if !need.is_empty() {
            return Take { stale, found: Err(need) };
        }
        let usage = match s.held.get_mut(&agent) {
            Some(h) => {
                h.left = after;
                h.taken = true;
                h.counted.saturating_sub(after)
            }
            None => Usage::default(),
        };
        Take { stale, found: Ok(usage) }
    }

    /// Waits for this server's turn to reserve for `agent`: `Some` when no
    /// reservation for it is under way here (this call's now is, until the
    /// turn is dropped), `None` once the one under way ended, to look again
    /// at what it left held. So concurrent calls that find too little held
    /// wait for one reservation instead of each reserving an allowance of
    /// its own, which would hold far more than an eighth of the room and
    /// make as many writes.
    pub(crate) async fn turn(&self, agent: LenserId) -> Option<Turn<'_>> {
        let mut waited_for = None;
        std::future::poll_fn(|cx| {
            let s = &mut *self.lock();
            match (s.reserving.get_mut(&agent), waited_for) {
                (Some(r), Some(ticket)) if r.ticket == ticket => {
                    if !r.waiting.iter().any(|w| w.will_wake(cx.waker())) {
                        r.waiting.push(cx.waker().clone());
                    }
                    Poll::Pending
                }
                (Some(r), None) => {
                    waited_for = Some(r.ticket);
                    r.waiting.push(cx.waker().clone());
                    Poll::Pending
                }
                // The reservation waited for ended (another may have begun).
                (_, Some(_)) => Poll::Ready(None),
                (None, None) => Poll::Ready(Some(self.begin(s, agent))),
            }
        })
        .await
    }

    /// This server's turn to reserve for `agent` when no reservation for it
    /// is under way here, without waiting.
    fn try_turn(&self, agent: LenserId) -> Option<Turn<'_>> {
        let s = &mut *self.lock();
        (!s.reserving.contains_key(&agent)).then(|| self.begin(s, agent))
    }

    /// Marks a reservation for `agent` under way, under a new ticket: the
    /// turn of the call that makes it.
    fn begin(&self, s: &mut State, agent: LenserId) -> Turn<'_> {
        s.tickets += 1;
        s.reserving.insert(agent, Reserving { ticket: s.tickets, waiting: Vec::new() });
        Turn { ledger: self, agent }
    }

    /// Adds what was reserved (`asked`, with the store's counts after
    /// it) to what is held, then takes `wanted` from it: `Ok(Some)` the
    /// day's usage as this server counts it, `Ok(None)` when a concurrent
    /// call took what this one reserved (reserve again), `Err` the units to
    /// give back when a concurrent call holds for another day or revision
    /// now (then reserve again).
    pub(crate) fn settle(
        &self,
        agent: LenserId,
        revision: u64,
        day: UsageDay,
        asked: &[Ask],
        counted: Usage,
        wanted: &[Ask],
    ) -> Result<Option<Usage>, Usage> {
        let mut s = self.lock();
        let fresh =
            Held { day, revision, left: Usage::default(), counted, limits: Usage::default(), taken: false };
        let h = s.held.entry(agent).or_insert(fresh);
        let reserved = Usage::of_asks(asked);
        if h.day != day || h.revision != revision {
            return Err(reserved);
        }
        for ask in asked {
            *h.limits.get_mut(ask.kind) = ask.limit;
        }
        h.taken |= wanted.iter().any(|a| a.amount > 0);
        for &k in UsageKind::ALL {
            *h.left.get_mut(k) += reserved.get(k);
        }
        h.counted = h.counted.max(counted);
        let mut after = h.left;
        for ask in wanted.iter().filter(|a| a.amount > 0) {
            let have = after.get(ask.kind);
            if have < ask.amount {
                return Ok(None);
            }
            *after.get_mut(ask.kind) = have - ask.amount;
        }
        h.left = after;
        Ok(Some(h.counted.saturating_sub(after)))
    }

    /// What to reserve ahead, on `today`, for the agents whose calls took
    /// from what this server holds since the last look and who hold less
    /// than half an allowance of a count: for each, its revision and an ask
    /// of each such count, up to a whole allowance ([`allowance`] of the
    /// room at the last reservation). So a busy agent's calls seldom wait
    /// for a reservation of their own; an idle one is left as it is.
    pub(crate) fn top_ups(&self, today: UsageDay) -> Vec<(LenserId, u64, Vec<Ask>)> {
        let most = self.settings.most_held;
        let mut s = self.lock();
        let mut out = Vec::new();
        for (agent, h) in s.held.iter_mut().filter(|(_, h)| h.day == today && h.taken) {
            h.taken = false;
            let asks: Vec<Ask> = UsageKind::ALL
                .iter()
                .filter_map(|&kind| {
                    let limit = h.limits.get(kind);
                    let whole = allowance(h.counted.get(kind), 0, limit, most);
                    let left = h.left.get(kind);
                    (left < whole / 2).then(|| Ask { kind, amount: whole - left, limit })
                })
                .collect();
            if !asks.is_empty() {
                out.push((*agent, h.revision, asks));
            }
        }
        out
    }

    /// What this server holds of `agent`'s `day`.
    pub(crate) fn holding(&self, agent: LenserId, day: UsageDay) -> Usage {
        self.lock().held.get(&agent).filter(|h| h.day == day).map(|h| h.left).unwrap_or_default()
    }

    /// Everything held of a day other than `today`, or of every day when
    /// `today` is `None`, taken out of the ledger: to give back.
    pub(crate) fn take_held(&self, today: Option<UsageDay>) -> Vec<(LenserId, UsageDay, Usage)> {
        let mut s = self.lock();
        let gone: Vec<LenserId> =
            s.held.iter().filter(|(_, h)| today.is_none_or(|d| h.day != d)).map(|(a, _)| *a).collect();
        gone.into_iter()
            .filter_map(|a| s.held.remove(&a).map(|h| (a, h.day, h.left)))
            .filter(|(_, _, left)| *left != Usage::default())
            .collect()
    }
}

/// A call's turn to reserve for an agent ([`Ledger::turn`]): when it is
/// dropped (the reservation made, failed or abandoned), the calls waiting
/// for it look again.
pub(crate) struct Turn<'a> {
    ledger: &'a Ledger,
    agent: LenserId,
}

impl Drop for Turn<'_> {
    fn drop(&mut self) {
        let ended = self.ledger.lock().reserving.remove(&self.agent);
        for waker in ended.into_iter().flat_map(|r| r.waiting) {
            waker.wake();
        }
    }
}

/// A refusal of what a call lacked, told as the call sees it: the count
/// used less what this server holds, and all the call asked of it.
fn as_the_call_sees_it(
    ledger: &Ledger,
    agent: LenserId,
    day: UsageDay,
    asks: &[Ask],
    refused: Reservation,
) -> Reservation {
    match refused {
        Reservation::Refused { kind, used, limit, .. } => Reservation::Refused {
            kind,
            used: used.saturating_sub(ledger.holding(agent, day).get(kind)),
            asked: asks.iter().filter(|a| a.kind == kind).map(|a| a.amount).sum(),
            limit,
        },
        reserved => reserved,
    }
}

/// Reserves `asks` in the store, with the log entries waiting in the same
/// write, whose calls are then told they are written. When that write
/// fails (an entry the store refuses, or the store away), the entries are
/// queued again for a write of their own, which sorts them out, and the
/// reservation is made alone.
pub(crate) async fn reserve_logging(
    ledger: &Ledger,
    store: &dyn AgentStore,
    agent: LenserId,
    day: UsageDay,
    asks: &[Ask],
) -> LfResult<Reservation> {
    let Some(mut taken) = ledger.log.take_for_reservation() else {
        return store.reserve_usage(agent, day, asks).await;
    };
    match store.reserve_usage_logging(agent, day, asks, taken.entries()).await {
        Ok(reservation) => {
            taken.written();
            Ok(reservation)
        }
        Err(_) => {
            drop(taken);
            store.reserve_usage(agent, day, asks).await
        }
    }
}

/// Reserves `asks` ahead for `agent` on `day` ([`Ledger::top_ups`]) and
/// adds them to what is held, taking nothing. Not for an agent that
/// changed since its last call (`revision`): that call's limits may be
/// gone (its next call gives back what is held, and is checked against
/// the new policy).
pub(crate) async fn top_up(
    ledger: &Ledger,
    store: &dyn AgentStore,
    agent: LenserId,
    revision: u64,
    day: UsageDay,
    asks: &[Ask],
) -> LfResult<()> {
    // A call's reservation under way brings an allowance already.
    let Some(_turn) = ledger.try_turn(agent) else { return Ok(()) };
    if store.get_agent(Reach::Everything, agent).await?.revision != revision {
        return Ok(());
    }
    if let Reservation::Reserved(counted) = reserve_logging(ledger, store, agent, day, asks).await?
        && let Err(back) = ledger.settle(agent, revision, day, asks, counted, &[])
    {
        store.release_usage(agent, day, &back).await?;
    }
    Ok(())
}

/// Reserves what `ledger` lacks for `asks` (with an allowance, else
/// exactly) and takes them: reserved with the day's usage as this server
/// counts it, or the store's refusal of the exact reservation. One call
/// reserves for an agent at a time ([`Ledger::turn`]); the others wait for
/// it and take from what it reserved.
pub(crate) async fn reserve_with(
    ledger: &Ledger,
    store: &dyn AgentStore,
    agent: LenserId,
    revision: u64,
    day: UsageDay,
    asks: &[Ask],
) -> LfResult<Reservation> {
    let mut allow = true;
    let mut turn = None;
    // A few reservations: a concurrent call may take what this one
    // reserved; and a bound on the waits for other calls' reservations.
    let (mut tries, mut waits) = (0, 0);
    loop {
        let Take { stale, found } = ledger.take(agent, revision, day, asks, allow);
        if let Some((old, units)) = stale {
            store.release_usage(agent, old, &units).await?;
        }
        let need = match found {
            Ok(usage) => return Ok(Reservation::Reserved(usage)),
            Err(need) => need,
        };
        if tries == 4 || waits == 64 {
            break;
        }
        if turn.is_none() {
            // In its turn the call looks again: what was held may have
            // grown meanwhile.
            match ledger.turn(agent).await {
                Some(mine) => turn = Some(mine),
                None => waits += 1,
            }
            continue;
        }
        tries += 1;
        match reserve_logging(ledger, store, agent, day, &need).await? {
            Reservation::Reserved(counted) => match ledger.settle(agent, revision, day, &need, counted, asks)
            {
                Ok(Some(usage)) => return Ok(Reservation::Reserved(usage)),
                Ok(None) => {}
                Err(back) => store.release_usage(agent, day, &back).await?,
            },
            refused if !allow => return Ok(as_the_call_sees_it(ledger, agent, day, asks, refused)),
            _ => {}
        }
        allow = false;
    }
    drop(turn);
    // Still short after the tries: reserve exactly, without the ledger.
    Ok(match reserve_logging(ledger, store, agent, day, asks).await? {
        Reservation::Reserved(usage) => {
            Reservation::Reserved(usage.saturating_sub(ledger.holding(agent, day)))
        }
        refused => as_the_call_sees_it(ledger, agent, day, asks, refused),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_allowance_is_an_eighth_of_the_room_left_and_capped() {
        assert_eq!(allowance(0, 1, 10_000, 64), 64);
        assert_eq!(allowance(0, 1, 200, 64), 24);
        assert_eq!(allowance(190, 1, 200, 64), 1);
        assert_eq!(allowance(195, 1, 200, 64), 0, "near the cap a call reserves exactly");
        assert_eq!(allowance(200, 1, 200, 64), 0);
        assert_eq!(allowance(0, 0, 0, 64), 0);
    }
}
