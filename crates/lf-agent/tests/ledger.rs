//! The call ledger (`AgentService::with_ledger`): allowances of the day's
//! caps held in memory never let two servers on one store pass a cap, are
//! given back when the agent changes, the day ends or the server closes;
//! every call's log entry is committed before it answers, the entries of
//! calls that end together in one write (group commit).

mod support;

use std::sync::Arc;

use chrono::TimeDelta;
use lf_agent::{
    ActionOutcome, AgentPatch, AgentService, AgentStore, Call, Cap, CreditLimit, Safety, UsageDay,
};
use lf_core::{Clock, ErrorCode, PageRequest, Reach};
use support::*;

fn stored_calls(w: &World, agent: lf_core::LenserId) -> u64 {
    run(w.store.usage(Reach::Everything, agent, UsageDay::of(w.clock.now()))).unwrap().tool_calls
}

fn stored_log(w: &World, agent: lf_core::LenserId) -> Vec<ActionOutcome> {
    let page = run(w.store.list_actions(Reach::Everything, agent, PageRequest::default())).unwrap();
    page.items.iter().map(|e| e.outcome).collect()
}

/// An agent of `owner` granted a read, its tool-call cap at the most, and
/// a call of that read.
fn reader(w: &World, owner: &lf_core::Principal, handle: &str) -> (lf_agent::Agent, Call) {
    let a = w.agent(owner, handle);
    let patch = AgentPatch { max_daily_tool_calls: Some(Cap::of(Cap::MAX)), ..Default::default() };
    run(w.service.update(owner, a.id, patch)).unwrap();
    let t = tool("get_lens", "lens", Safety::Read);
    run(w.service.assign_tool(owner, a.id, t.clone(), false)).unwrap();
    (a, Call::new(t, 0))
}

#[test]
fn a_server_holds_an_allowance_and_gives_it_back_when_it_closes() {
    let w = World::ledgered();
    let (_, owner) = person();
    let (a, call) = reader(&w, &owner, "held_bot");

    let pass = run(w.service.check_call(&owner, a.id, &call)).unwrap();
    assert_eq!(pass.usage.tool_calls, 1, "the call as this server counts it");
    assert_eq!(stored_calls(&w, a.id), 257, "one call and an allowance of 256 for calls to come");
    for n in 2..=257 {
        assert_eq!(run(w.service.check_call(&owner, a.id, &call)).unwrap().usage.tool_calls, n);
    }
    assert_eq!(stored_calls(&w, a.id), 257, "256 calls taken from the allowance, no reservation");
    run(w.service.check_call(&owner, a.id, &call)).unwrap();
    assert_eq!(stored_calls(&w, a.id), 258 + 256, "the next allowance");
    assert_eq!(run(w.service.get(&owner, a.id)).unwrap().usage.tool_calls, 258, "shown as used");

    run(w.service.close()).unwrap();
    assert_eq!(stored_calls(&w, a.id), 258, "what was held is given back");
}

#[test]
fn two_servers_on_one_store_never_pass_a_cap() {
    let w = World::ledgered();
    let (_, owner) = person();
    let a = w.agent(&owner, "twin_bot");
    let patch = AgentPatch {
        can_vote: Some(true),
        max_daily_tool_calls: Some(Cap::of(700)),
        max_daily_votes: Some(Cap::of(37)),
        spending_limit_credits: Some(CreditLimit::of(Cap::MAX.into())),
        ..Default::default()
    };
    run(w.service.update(&owner, a.id, patch)).unwrap();
    let vote = tool("cast_battle_vote", "battle", Safety::Write);
    let read = tool("get_lens", "lens", Safety::Read);
    for t in [&vote, &read] {
        run(w.service.assign_tool(&owner, a.id, t.clone(), false)).unwrap();
    }
    let servers = [w.service.clone(), Arc::new(w.another_server())];
    let day = UsageDay::of(w.clock.now());
    let stored = || run(w.store.usage(Reach::Everything, a.id, day)).unwrap();
    let close = || servers.iter().for_each(|s| run(s.close()).unwrap());
    // Near a cap a server may hold a little of the room (an eighth of it)
    // that its own calls then did not use, so a call of the other can be
    // refused before the cap: never more calls than the cap, and what was
    // held comes back when the server closes.
    let vote = Call::new(vote, 0).gated(VOTE);
    let (votes, refused) = race(&servers, &owner, a.id, &vote, 8, 100);
    assert!(votes <= 37, "never past the vote cap over both servers: {votes}");
    assert!(refused.iter().all(|c| *c == ErrorCode::Throttled), "{refused:?}");
    close();
    assert_eq!(stored().votes, votes as u64, "counted as used once what was held came back");
    let (more, _) = race(&servers[..1], &owner, a.id, &vote, 1, 100);
    assert_eq!(votes + more, 37, "exactly the vote cap");

    let read = Call::new(read, 0);
    let (reads, refused) = race(&servers, &owner, a.id, &read, 8, 100);
    assert!(votes + more + reads <= 700, "never past the call cap over both servers");
    assert!(refused.iter().all(|c| *c == ErrorCode::Throttled), "{refused:?}");
    close();
    assert_eq!(stored_calls(&w, a.id), (votes + more + reads) as u64);
    let (rest, _) = race(&servers[..1], &owner, a.id, &read, 1, 700);
    assert_eq!(votes + more + reads + rest, 700, "exactly the call cap");
    close();
    assert_eq!(stored_calls(&w, a.id), 700, "nothing was held at the cap");
}

#[test]
fn a_policy_change_applies_at_once_and_frees_what_was_held() {
    let w = World::ledgered();
    let (_, owner) = person();
    let a = w.agent(&owner, "changed_bot");
    let cap = |n| AgentPatch { max_daily_tool_calls: Some(Cap::of(n)), ..Default::default() };
    run(w.service.update(&owner, a.id, cap(1_000))).unwrap();
    let t = tool("get_lens", "lens", Safety::Read);
    run(w.service.assign_tool(&owner, a.id, t.clone(), false)).unwrap();
    let call = Call::new(t, 0);
    for _ in 0..3 {
        run(w.service.check_call(&owner, a.id, &call)).unwrap();
    }
    assert!(stored_calls(&w, a.id) > 3, "an allowance is held");

    // Another server lowers the cap to what was used: no more calls here.
    run(w.another_server().update(&owner, a.id, cap(3))).unwrap();
    let e = run(w.service.check_call(&owner, a.id, &call)).unwrap_err();
    assert_eq!(e.code(), ErrorCode::Throttled);
    assert!(e.message().contains("max_daily_tool_calls of 3 for today (3 used)"), "{}", e.message());
    assert_eq!(stored_calls(&w, a.id), 3, "the allowance of the old policy was given back");

    // Archived: refused though nothing is held.
    run(w.service.update(&owner, a.id, cap(1_000))).unwrap();
    run(w.service.check_call(&owner, a.id, &call)).unwrap();
    run(w.service.archive(&owner, a.id, true)).unwrap();
    assert_eq!(code(run(w.service.check_call(&owner, a.id, &call))), ErrorCode::PermissionDenied);
}

#[test]
fn what_is_held_of_a_day_that_is_over_is_given_back() {
    let w = World::ledgered();
    let (_, owner) = person();
    let a = w.agent(&owner, "dusk_bot");
    let patch = AgentPatch { max_daily_tool_calls: Some(Cap::of(1_000)), ..Default::default() };
    run(w.service.update(&owner, a.id, patch)).unwrap();
    let t = tool("get_lens", "lens", Safety::Read);
    run(w.service.assign_tool(&owner, a.id, t.clone(), false)).unwrap();
    run(w.service.check_call(&owner, a.id, &Call::new(t, 0))).unwrap();
    let yesterday = UsageDay::of(w.clock.now());
    assert!(run(w.store.usage(Reach::Everything, a.id, yesterday)).unwrap().tool_calls > 1);
    w.clock.advance(TimeDelta::days(1));
    run(w.service.flush()).unwrap();
    assert_eq!(run(w.store.usage(Reach::Everything, a.id, yesterday)).unwrap().tool_calls, 1);
}

#[test]
fn every_call_is_in_the_stored_log_when_it_answers() {
    let w = World::ledgered();
    let (_, owner) = person();
    let a = w.agent(&owner, "quick_bot");
    let read = tool("get_lens", "lens", Safety::Read);
    let write = tool("create_lens", "lens", Safety::Write);
    for t in [&read, &write] {
        run(w.service.assign_tool(&owner, a.id, t.clone(), false)).unwrap();
    }
    let pass = run(w.service.check_call(&owner, a.id, &Call::new(read.clone(), 0))).unwrap();
    run(w.service.record_call(&pass, Ok(()))).unwrap();
    assert_eq!(stored_log(&w, a.id), [ActionOutcome::Succeeded], "a read, no flush");
    let revoked = tool("list_lenses", "lens", Safety::Read);
    run(w.service.check_call(&owner, a.id, &Call::new(revoked, 0))).unwrap_err();
    assert_eq!(stored_log(&w, a.id), [ActionOutcome::Refused, ActionOutcome::Succeeded], "a refusal");
    let pass = run(w.service.check_call(&owner, a.id, &Call::new(write, 0))).unwrap();
    let failed = lf_core::LfError::invalid_argument("no title");
    run(w.service.record_call(&pass, Err(&failed))).unwrap();
    assert_eq!(stored_log(&w, a.id)[0], ActionOutcome::Failed, "a write that failed");
    for _ in 0..50 {
        let pass = run(w.service.check_call(&owner, a.id, &Call::new(read.clone(), 0))).unwrap();
        let entry = run(w.service.record_call(&pass, Ok(()))).unwrap();
        let page = run(w.store.list_actions(Reach::Everything, a.id, PageRequest::first(1))).unwrap();
        assert_eq!(page.items[0].id, entry.id, "each read is stored before it answers");
    }
    assert_eq!(run(w.store.list_actions(Reach::Everything, a.id, PageRequest::first(1))).unwrap().total, 53);
}

/// A server over a store whose log writes and reservations take a while
/// (let other calls run first), and an agent granted a read with its
/// tool-call cap at the most.
fn slow_server() -> (Arc<flaky::Flaky>, AgentService, lf_core::Principal, lf_core::LenserId, Call) {
    let (store, service, owner, agent, call) = flaky_server(1024);
    let patch = AgentPatch { max_daily_tool_calls: Some(Cap::of(Cap::MAX)), ..Default::default() };
    run(service.update(&owner, agent, patch)).unwrap();
    store.slow.store(true, std::sync::atomic::Ordering::SeqCst);
    (store, service, owner, agent, call)
}

fn count(n: &std::sync::atomic::AtomicUsize) -> usize {
    n.load(std::sync::atomic::Ordering::SeqCst)
}

#[test]
fn calls_that_end_together_share_one_commit_and_each_waits_for_it() {
    let (store, service, owner, agent, call) = slow_server();
    let passes: Vec<_> = (0..100).map(|_| run(service.check_call(&owner, agent, &call)).unwrap()).collect();
    let before = count(&store.log_writes);
    // A hundred calls end at once: the first writes its entry alone; the
    // others, queued while that write was under way, are written together
    // by the first of them to run after it. Each call answers only once
    // its entry is in the store.
    let answered = all_at_once(passes.iter().map(|pass| async {
        let entry = service.record_call(pass, Ok(())).await.unwrap();
        let stored = store.inner.list_actions(Reach::Everything, agent, PageRequest::first(100)).await;
        stored.unwrap().items.iter().any(|e| e.id == entry.id)
    }));
    assert!(answered.iter().all(|stored| *stored), "every call answered after its entry was stored");
    assert_eq!(count(&store.log_writes) - before, 2, "two commits for a hundred calls");
    assert_eq!(logged(&store, agent).len(), 100);
}

#[test]
fn a_reservation_commits_the_entries_queued_with_it() {
    let (store, service, owner, agent, call) = flaky_server_holding(0, 1024);
    store.slow.store(true, std::sync::atomic::Ordering::SeqCst);
    let passes: Vec<_> = (0..3).map(|_| run(service.check_call(&owner, agent, &call)).unwrap()).collect();
    let (writes, reservations) = (count(&store.log_writes), count(&store.reservations));
    // The first call's entry is being written; the second's queues behind
    // it; the third call's reservation, nothing being held, takes it.
    let [first, second, third] = &passes[..] else { unreachable!() };
    let out = all_at_once(
        [
            Box::pin(async { service.record_call(first, Ok(())).await.map(|e| e.id) })
                as std::pin::Pin<Box<dyn std::future::Future<Output = _> + Send>>,
            Box::pin(async { service.record_call(second, Ok(())).await.map(|e| e.id) }),
            Box::pin(async {
                service.check_call(&owner, agent, &call).await?;
                service.record_call(third, Ok(())).await.map(|e| e.id)
            }),
        ]
        .into_iter(),
    );
    let ids: Vec<_> = out.into_iter().map(Result::unwrap).collect();
    assert_eq!(count(&store.reservations) - reservations, 1, "one reservation");
    assert_eq!(count(&store.log_writes) - writes, 2, "the first entry's write, and the third's");
    let mut stored = logged(&store, agent);
    stored.sort();
    let mut made = ids.clone();
    made.sort();
    assert_eq!(stored, made, "the second entry went with the reservation");
}

#[test]
fn a_call_whose_write_is_given_up_leaves_its_entry_to_the_next() {
    let (store, service, owner, agent, call) = slow_server();
    let first = run(service.check_call(&owner, agent, &call)).unwrap();
    let second = run(service.check_call(&owner, agent, &call)).unwrap();
    let mut cx = std::task::Context::from_waker(std::task::Waker::noop());
    let mut a = Box::pin(service.record_call(&first, Ok(())));
    let mut b = Box::pin(service.record_call(&second, Ok(())));
    assert!(a.as_mut().poll(&mut cx).is_pending(), "the first call's write is under way");
    assert!(b.as_mut().poll(&mut cx).is_pending(), "the second waits for it");
    // The first call goes away (its client did) before its write ended:
    // its entry goes back, and the second call writes both.
    drop(a);
    run(b).unwrap();
    assert_eq!(logged(&store, agent).len(), 2);
}

/// A server whose store fails for a while, with a ledger batching `batch`
/// entries (holding the default allowance), and an agent granted a read.
fn flaky_server(
    batch: usize,
) -> (Arc<flaky::Flaky>, AgentService, lf_core::Principal, lf_core::LenserId, Call) {
    flaky_server_holding(256, batch)
}

/// [`flaky_server`] holding at most `most_held` of each count.
fn flaky_server_holding(
    most_held: u64,
    batch: usize,
) -> (Arc<flaky::Flaky>, AgentService, lf_core::Principal, lf_core::LenserId, Call) {
    let w = World::new();
    let (_, owner) = person();
    let store = Arc::new(flaky::Flaky::default());
    let service = AgentService::new(store.clone(), w.lensers.clone())
        .with_clock(w.clock.clone())
        .with_ledger(lf_agent::LedgerSettings { most_held, batch });
    let new = lf_agent::NewAgent::new(
        lf_agent::AgentHandle::parse("flaky_bot").unwrap(),
        lf_agent::DisplayName::parse("Agent").unwrap(),
    );
    let a = run(service.create(&owner, new)).unwrap();
    let read = tool("get_lens", "lens", Safety::Read);
    run(service.assign_tool(&owner, a.id, read.clone(), false)).unwrap();
    (store, service, owner, a.id, Call::new(read, 0))
}

fn logged(store: &flaky::Flaky, agent: lf_core::LenserId) -> Vec<lf_agent::ActionId> {
    let page = run(store.inner.list_actions(Reach::Everything, agent, PageRequest::first(100))).unwrap();
    page.items.iter().rev().map(|e| e.id).collect()
}

#[test]
fn a_call_whose_entry_cannot_be_written_answers_the_error_and_its_entry_waits() {
    let (store, service, owner, agent, call) = flaky_server(256);
    let read = || {
        let pass = run(service.check_call(&owner, agent, &call)).unwrap();
        run(service.record_call(&pass, Ok(())))
    };
    let mut made = vec![read().unwrap().id];
    store.fail(true);
    // While the store fails a call answers its error, not its result: it
    // was not logged. Its entry waits for the next write.
    assert_eq!(code(read()), ErrorCode::Internal);
    assert_eq!(code(run(service.flush())), ErrorCode::Internal, "the flush says the log was not written");
    let write = tool("create_lens", "lens", Safety::Write);
    run(service.assign_tool(&owner, agent, write.clone(), false)).unwrap();
    let pass = run(service.check_call(&owner, agent, &Call::new(write, 0))).unwrap();
    assert_eq!(code(run(service.record_call(&pass, Ok(())))), ErrorCode::Internal);
    assert_eq!(logged(&store, agent), made, "nothing was written while the store failed");
    store.fail(false);
    made.push(read().unwrap().id);
    let page = run(store.inner.list_actions(Reach::Everything, agent, PageRequest::first(100))).unwrap();
    let log: Vec<_> = page.items.iter().rev().map(|e| (e.id, e.action.as_str().to_owned())).collect();
    assert_eq!(log.len(), 4, "every entry, once, the ones that waited first: {log:?}");
    assert_eq!(log[2].1, "create_lens", "in the order of the calls");
    let reads: Vec<_> = log.iter().filter(|(_, a)| a == "get_lens").map(|(id, _)| *id).collect();
    assert_eq!([reads[0], reads[2]], [made[0], made[1]]);
}

#[test]
fn what_waits_while_the_store_fails_is_bounded() {
    let (store, service, owner, agent, call) = flaky_server(2);
    store.fail(true);
    // Every call's write fails: at most 2 × 16 entries wait.
    let made: Vec<_> = (0..40)
        .map(|_| {
            let pass = run(service.check_call(&owner, agent, &call)).unwrap();
            assert_eq!(code(run(service.record_call(&pass, Ok(())))), ErrorCode::Internal);
            pass
        })
        .collect();
    assert_eq!(made.len(), 40);
    store.fail(false);
    run(service.flush()).unwrap();
    assert_eq!(logged(&store, agent).len(), 32, "the newest 32 are kept, the oldest dropped");
}

#[test]
fn a_flush_reserves_ahead_for_a_busy_agent_so_its_calls_do_not_wait() {
    let w = World::ledgered();
    let (_, owner) = person();
    let (a, call) = reader(&w, &owner, "busy_bot");
    let calls = |n: u64| {
        for _ in 0..n {
            let pass = run(w.service.check_call(&owner, a.id, &call)).unwrap();
            run(w.service.record_call(&pass, Ok(()))).unwrap();
        }
    };

    calls(1);
    assert_eq!(stored_calls(&w, a.id), 257, "one call and an allowance of 256");
    calls(128);
    run(w.service.flush()).unwrap();
    assert_eq!(stored_calls(&w, a.id), 257, "half an allowance is still held: nothing reserved");
    calls(1);
    run(w.service.flush()).unwrap();
    assert_eq!(stored_calls(&w, a.id), 257 + 129, "127 were left: topped up to a whole allowance");
    let logged = || run(w.store.list_actions(Reach::Everything, a.id, PageRequest::default())).unwrap().total;
    assert_eq!(logged(), 130, "the log went with it");
    run(w.service.flush()).unwrap();
    assert_eq!(stored_calls(&w, a.id), 386, "no call since: nothing more");
    calls(256);
    assert_eq!(stored_calls(&w, a.id), 386, "the calls took what was reserved ahead");
    assert_eq!(run(w.service.get(&owner, a.id)).unwrap().usage.tool_calls, 386);
    run(w.service.close()).unwrap();
    assert_eq!(stored_calls(&w, a.id), 386, "nothing held is left to give back");
    assert_eq!(logged(), 386);
}

#[test]
fn a_flush_does_not_reserve_ahead_for_an_agent_changed_since_its_last_call() {
    let w = World::ledgered();
    let (_, owner) = person();
    let (a, call) = reader(&w, &owner, "changed_bot");
    for _ in 0..200 {
        run(w.service.check_call(&owner, a.id, &call)).unwrap();
    }
    assert_eq!(stored_calls(&w, a.id), 257);
    let patch = AgentPatch { max_daily_tool_calls: Some(Cap::of(300)), ..Default::default() };
    run(w.service.update(&owner, a.id, patch)).unwrap();
    run(w.service.flush()).unwrap();
    assert_eq!(stored_calls(&w, a.id), 257, "nothing reserved under the limit that is gone");
    run(w.service.check_call(&owner, a.id, &call)).unwrap();
    assert!(stored_calls(&w, a.id) <= 300, "its next call gave back what was held, under the new cap");
}

/// `calls` in flight at once, as a runtime running them concurrently on
/// one thread would have them: their outputs, in order.
fn all_at_once<'a, T>(
    calls: impl Iterator<Item = impl std::future::Future<Output = T> + Send + 'a>,
) -> Vec<T> {
    run(lf_core::join_all(
        calls
            .map(|c| Box::pin(c) as std::pin::Pin<Box<dyn std::future::Future<Output = T> + Send>>)
            .collect(),
    ))
}

#[test]
fn concurrent_calls_that_find_too_little_held_wait_for_one_reservation() {
    let (store, service, owner, agent, call) = flaky_server(256);
    let patch = AgentPatch { max_daily_tool_calls: Some(Cap::of(Cap::MAX)), ..Default::default() };
    run(service.update(&owner, agent, patch)).unwrap();
    store.slow.store(true, std::sync::atomic::Ordering::SeqCst);
    let day = UsageDay::of(lf_core::Timestamp::from_micros(NOON));
    let stored = || run(store.inner.usage(Reach::Everything, agent, day)).unwrap().tool_calls;
    let reservations = || store.reservations.load(std::sync::atomic::Ordering::SeqCst);

    // A hundred calls at once, nothing held yet: the first reserves one
    // call and an allowance of 256; the others wait for it and take from
    // it, so the server holds no more than an allowance.
    let passes = all_at_once((0..100).map(|_| service.check_call(&owner, agent, &call)));
    let mut counted: Vec<u64> = passes.into_iter().map(|p| p.unwrap().usage.tool_calls).collect();
    counted.sort();
    assert_eq!(counted, (1..=100).collect::<Vec<u64>>(), "each call counted once");
    assert_eq!(reservations(), 1, "one reservation, not one a call");
    assert_eq!(stored(), 257);

    // 300 more: 157 take what is held, the next reserves again, and the
    // rest take from that.
    let passes = all_at_once((0..300).map(|_| service.check_call(&owner, agent, &call)));
    assert!(passes.iter().all(Result::is_ok));
    assert_eq!(reservations(), 2);
    assert_eq!(stored(), 257 + 257);
    run(service.close()).unwrap();
    assert_eq!(stored(), 400, "what was held is given back");
}

#[test]
fn a_reservation_given_up_lets_the_calls_waiting_for_it_reserve() {
    let (store, service, owner, agent, call) = flaky_server(256);
    store.slow.store(true, std::sync::atomic::Ordering::SeqCst);
    let mut cx = std::task::Context::from_waker(std::task::Waker::noop());
    let mut first = Box::pin(service.check_call(&owner, agent, &call));
    let mut second = Box::pin(service.check_call(&owner, agent, &call));
    assert!(first.as_mut().poll(&mut cx).is_pending(), "the first call's reservation is under way");
    assert!(second.as_mut().poll(&mut cx).is_pending(), "the second waits for it");
    // The first call is dropped before its reservation was made (its
    // client went away): the second reserves for itself.
    drop(first);
    let pass = run(second).unwrap();
    assert_eq!(pass.usage.tool_calls, 1);
    assert_eq!(
        store.reservations.load(std::sync::atomic::Ordering::SeqCst),
        2,
        "the one given up, then its own"
    );
}
