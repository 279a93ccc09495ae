//! Agent races on real tasks (tokio::spawn, several worker threads), beyond
//! lf-agent's contract suite, which runs its calls one at a time, and the
//! one namespace of handles that lensers and agents share. Each race takes
//! one or more stores over one database (several stores: as several server
//! processes would have) and spreads its tasks over them.

#![allow(dead_code)] // Each test target uses some of these.

use std::sync::Arc;

use lf_agent::{
    Agent, AgentHandle, AgentService, AgentStore, Ask, DisplayName, NewAgent, Reservation, UsageDay,
    UsageKind,
};
use lf_auth::{Handle, Lenser, LenserRecord};
use lf_core::{Clock, ErrorCode, LenserId, LfResult, Principal, Reach, SystemClock};
use lf_store::Database;

/// A handle no other run makes: `{prefix}_` and 16 hex digits.
fn fresh_handle(prefix: &str) -> String {
    format!("{prefix}_{}", &LenserId::new().as_uuid().simple().to_string()[16..])
}

fn agent(owner: LenserId, handle: &str) -> Agent {
    let new = NewAgent::new(AgentHandle::parse(handle).unwrap(), DisplayName::parse("Racer").unwrap());
    new.into_agent(owner, SystemClock.now())
}

fn lenser(handle: &str) -> LenserRecord {
    LenserRecord {
        lenser: Lenser {
            id: LenserId::new(),
            handle: Handle::parse(handle).unwrap(),
            created_at: SystemClock.now(),
        },
        // Never signed in with: any PHC-looking string.
        password_hash: "$argon2id$v=19$m=19456,t=2,p=1$c2FsdHNhbHQ$aGFzaGhhc2hoYXNoaGFzaA".into(),
    }
}

/// Runs `n` tasks, task `i` on `stores[i % stores.len()]`, and answers
/// their results in order.
async fn race<S: ?Sized + Send + Sync + 'static, T: Send + 'static>(
    stores: &[Arc<S>],
    n: usize,
    task: impl Fn(usize, Arc<S>) -> std::pin::Pin<Box<dyn Future<Output = T> + Send>>,
) -> Vec<T> {
    let tasks: Vec<_> = (0..n).map(|i| tokio::spawn(task(i, stores[i % stores.len()].clone()))).collect();
    let mut out = Vec::with_capacity(n);
    for t in tasks {
        out.push(t.await.unwrap());
    }
    out
}

/// 40 reservations of one tool call at once against a cap of 10, several
/// rounds: exactly 10 pass, the others are refused, and the day ends at
/// 10. Then 40 reservations of a call and 3 credits against a credit limit
/// of 30: exactly 10 pass, and a refused one counted neither.
pub async fn racing_reservations(stores: &[Arc<dyn AgentStore>]) {
    let s = &stores[0];
    for round in 0..3 {
        let a = agent(LenserId::new(), &fresh_handle("rr"));
        s.create_agent(&a, 100).await.unwrap();
        let day = UsageDay::of(SystemClock.now());
        let id = a.id;
        let results = race(stores, 40, move |_, store| {
            Box::pin(async move {
                let ask = [Ask { kind: UsageKind::ToolCalls, amount: 1, limit: 10 }];
                store.reserve_usage(id, day, &ask).await
            })
        })
        .await;
        let passed = results.iter().filter(|r| matches!(r, Ok(Reservation::Reserved(_)))).count();
        for r in &results {
            assert!(r.is_ok(), "round {round}: {r:?}");
        }
        assert_eq!(passed, 10, "round {round}: exactly the cap's reservations pass");
        let used = s.usage(Reach::Everything, a.id, day).await.unwrap();
        assert_eq!(used.tool_calls, 10, "round {round}: the day ends at the cap");
        // Each pass saw a distinct count: no two passed on one place.
        let mut seen: Vec<u64> = results
            .iter()
            .filter_map(|r| match r {
                Ok(Reservation::Reserved(u)) => Some(u.tool_calls),
                _ => None,
            })
            .collect();
        seen.sort_unstable();
        assert_eq!(seen, (1..=10).collect::<Vec<_>>(), "round {round}");
    }

    // All or none under concurrency: the credits run out first.
    let a = agent(LenserId::new(), &fresh_handle("rc"));
    s.create_agent(&a, 100).await.unwrap();
    let day = UsageDay::of(SystemClock.now());
    let id = a.id;
    let results = race(stores, 40, move |_, store| {
        Box::pin(async move {
            let asks = [
                Ask { kind: UsageKind::ToolCalls, amount: 1, limit: 100 },
                Ask { kind: UsageKind::Credits, amount: 3, limit: 30 },
            ];
            store.reserve_usage(id, day, &asks).await
        })
    })
    .await;
    let passed = results.iter().filter(|r| matches!(r, Ok(Reservation::Reserved(_)))).count();
    assert_eq!(passed, 10);
    for r in &results {
        match r {
            Ok(Reservation::Reserved(_)) => {}
            Ok(Reservation::Refused { kind, .. }) => assert_eq!(*kind, UsageKind::Credits),
            Err(e) => panic!("{e:?}"),
        }
    }
    let used = s.usage(Reach::Everything, a.id, day).await.unwrap();
    assert_eq!((used.tool_calls, used.credits), (10, 30), "a refused reservation counts nothing");
}

/// An owner with 2 active agents and a limit of 5: 12 creations at once,
/// exactly 3 pass and the others are SLOTS_FULL. Then 8 creations of one
/// handle by 8 owners at once: exactly one passes, the others CONFLICT.
pub async fn racing_creates(stores: &[Arc<dyn AgentStore>]) {
    let s = &stores[0];
    for round in 0..3 {
        let owner = LenserId::new();
        for _ in 0..2 {
            s.create_agent(&agent(owner, &fresh_handle("rl")), 5).await.unwrap();
        }
        let results = race(stores, 12, move |_, store| {
            Box::pin(async move { store.create_agent(&agent(owner, &fresh_handle("rl")), 5).await })
        })
        .await;
        let passed = results.iter().filter(|r| r.is_ok()).count();
        for r in &results {
            if let Err(e) = r {
                assert_eq!(e.code(), ErrorCode::SlotsFull, "round {round}: {e:?}");
            }
        }
        assert_eq!(passed, 3, "round {round}: exactly the free places are taken");
        let filter = lf_agent::AgentFilter { lenser: Some(owner), ..Default::default() };
        let page =
            s.list_agents(Reach::Lenser(owner), &filter, lf_core::PageRequest::default()).await.unwrap();
        assert_eq!(page.total, 5, "round {round}");

        let handle = fresh_handle("rh");
        let results = race(stores, 8, {
            let handle = handle.clone();
            move |_, store| {
                let handle = handle.clone();
                Box::pin(async move { store.create_agent(&agent(LenserId::new(), &handle), 5).await })
            }
        })
        .await;
        let passed = results.iter().filter(|r| r.is_ok()).count();
        for r in &results {
            if let Err(e) = r {
                assert_eq!(e.code(), ErrorCode::Conflict, "round {round}: {e:?}");
                assert!(e.message().contains(&handle), "the CONFLICT names the handle: {e:?}");
            }
        }
        assert_eq!(passed, 1, "round {round}: one agent holds a handle");
    }
}

/// Lensers and agents share one namespace of handles, on `db`: an agent's
/// handle is refused to a new lenser with the CONFLICT a lenser's own
/// handle gets, a lenser's handle is refused to a new agent (by the store
/// and by the service over [`Database::lenser_handles`]), and
/// `lenser_holds` answers from the accounts, in any case, as
/// `lenser_exists` does of an id.
pub async fn handles_are_one_namespace(db: &Database) {
    let (auth, agents, lensers) = (db.auth_store(), db.agent_store(), db.lenser_handles());

    // An agent's handle, then a lenser asking for it.
    let held = fresh_handle("ns");
    let held_agent = agent(LenserId::new(), &held);
    agents.create_agent(&held_agent, 5).await.unwrap();
    assert!(!lensers.lenser_exists(held_agent.id).await.unwrap(), "an agent has no account");
    let refused = auth.create_lenser(&lenser(&held)).await.unwrap_err();
    // What a lenser's handle taken by another lenser gets.
    let theirs = fresh_handle("ns");
    let account = lenser(&theirs);
    auth.create_lenser(&account).await.unwrap();
    assert!(lensers.lenser_exists(account.lenser.id).await.unwrap());
    assert!(!lensers.lenser_exists(LenserId::new()).await.unwrap());
    let twice = auth.create_lenser(&lenser(&theirs)).await.unwrap_err();
    assert_eq!(refused.code(), ErrorCode::Conflict);
    assert_eq!(
        refused.message().replace(&held, "HANDLE"),
        twice.message().replace(&theirs, "HANDLE"),
        "the same CONFLICT as a lenser's taken handle"
    );
    assert!(!lensers.lenser_holds(&held).await.unwrap(), "nothing written");
    assert!(auth.lenser_by_handle(&Handle::parse(&held).unwrap()).await.unwrap().is_none());
    // Through the service: its own CONFLICT for a taken handle.
    let service =
        lf_auth::AuthService::new(auth.clone(), Arc::new(SystemClock), lf_auth::AuthConfig::default());
    let e = service.create_lenser(&held, "correct horse battery").await.unwrap_err();
    assert_eq!((e.code(), e.details()[0].0.as_str()), (ErrorCode::Conflict, "field"), "{e:?}");

    // A lenser's handle, then an agent asking for it.
    assert!(lensers.lenser_holds(&theirs).await.unwrap());
    assert!(lensers.lenser_holds(&theirs.to_ascii_uppercase()).await.unwrap(), "any case");
    assert!(!lensers.lenser_holds(&fresh_handle("ns")).await.unwrap());
    assert!(!agents.handle_taken(&AgentHandle::parse(&theirs).unwrap()).await.unwrap(), "no agent holds it");
    let e = agents.create_agent(&agent(LenserId::new(), &theirs), 5).await.unwrap_err();
    let expected = lf_agent::handle_taken(&AgentHandle::parse(&theirs).unwrap());
    assert_eq!(
        (e.code(), e.message(), e.details()),
        (expected.code(), expected.message(), expected.details())
    );
    let service = AgentService::new(agents.clone(), lensers.clone());
    let me = Principal::Service { acting_as: Some(LenserId::new()) };
    let new = NewAgent::new(AgentHandle::parse(&theirs).unwrap(), DisplayName::parse("Mine").unwrap());
    let e = service.create(&me, new).await.unwrap_err();
    assert_eq!(e.code(), ErrorCode::Conflict, "the service refuses it: {e:?}");
    let fine =
        NewAgent::new(AgentHandle::parse(&fresh_handle("ns")).unwrap(), DisplayName::parse("Mine").unwrap());
    service.create(&me, fine).await.expect("a free handle");
}

/// A lenser and an agent asking for one handle at once, on `a` and `b`
/// (two stores over one database), several rounds: exactly one gets it.
pub async fn racing_lenser_and_agent(a: &Database, b: &Database) {
    for round in 0..10 {
        let handle = fresh_handle("rn");
        let (auth, agents) = if round % 2 == 0 {
            (a.auth_store(), b.agent_store())
        } else {
            (b.auth_store(), a.agent_store())
        };
        let mut tasks: Vec<tokio::task::JoinHandle<LfResult<()>>> = Vec::new();
        for i in 0..6 {
            let handle = handle.clone();
            if i % 2 == 0 {
                let auth = auth.clone();
                tasks.push(tokio::spawn(async move { auth.create_lenser(&lenser(&handle)).await }));
            } else {
                let agents = agents.clone();
                tasks.push(tokio::spawn(async move {
                    agents.create_agent(&agent(LenserId::new(), &handle), 5).await
                }));
            }
        }
        let mut passed = 0;
        for t in tasks {
            match t.await.unwrap() {
                Ok(()) => passed += 1,
                Err(e) => assert_eq!(e.code(), ErrorCode::Conflict, "round {round}: {e:?}"),
            }
        }
        assert_eq!(passed, 1, "round {round}: one lenser or one agent holds a handle");
        let by_lenser = a.lenser_handles().lenser_holds(&handle).await.unwrap();
        let by_agent = a.agent_store().handle_taken(&AgentHandle::parse(&handle).unwrap()).await.unwrap();
        assert!(by_lenser != by_agent, "round {round}: held once ({by_lenser}, {by_agent})");
    }
}

/// get_lens, as the catalog would hand it over (a read).
fn get_lens() -> lf_agent::ToolRef {
    use lf_agent::{Safety, ToolGroup, ToolId, ToolName, ToolRef};
    ToolRef {
        id: ToolId::new(),
        name: ToolName::parse("tool", "get_lens").unwrap(),
        group: ToolGroup::parse("group", "lens").unwrap(),
        safety: Safety::Read,
    }
}

/// The service over the SQL store: an agent created, a tool granted and a
/// call checked and counted, as lf-agent's example does it.
pub async fn service_round_trip(db: &Database) {
    use lf_agent::Call;
    let service = AgentService::new(db.agent_store(), db.lenser_handles());
    let me = Principal::Service { acting_as: Some(LenserId::new()) };
    let new =
        NewAgent::new(AgentHandle::parse(&fresh_handle("sv")).unwrap(), DisplayName::parse("Scout").unwrap());
    let a = service.create(&me, new).await.unwrap();
    let tool = get_lens();
    let call = Call::new(tool.clone(), 0);
    assert!(service.check_call(&me, a.id, &call).await.is_err(), "not granted yet");
    service.assign_tool(&me, a.id, tool, false).await.unwrap();
    let pass = service.check_call(&me, a.id, &call).await.unwrap();
    assert_eq!(pass.principal, Principal::Agent { agent_id: a.id, owner: a.owner });
    let view = service.get(&me, a.id).await.unwrap();
    assert_eq!(view.usage.tool_calls, 1, "the call was counted");
    let log = db.agent_store().list_actions(Reach::Everything, a.id, lf_core::PageRequest::default()).await;
    assert!(log.unwrap().total >= 1, "the refusal was logged");
}

/// A server's call ledger over `db`, as the binaries wire it: every call
/// as an agent, refused or passed, one at a time or 64 at once, is in the
/// action log as `other` reads it (another handle on the same database,
/// as a process started after a crash would open) the moment the call
/// answers: committed, not waiting in memory for a flush.
pub async fn calls_are_committed_when_they_answer(db: &Database, other: &Database) {
    use lf_agent::{Call, LedgerSettings};
    let service = Arc::new(
        AgentService::new(db.agent_store(), db.lenser_handles()).with_ledger(LedgerSettings::default()),
    );
    let tool = get_lens();
    let call = Call::new(tool.clone(), 0);
    let new = || {
        NewAgent::new(AgentHandle::parse(&fresh_handle("gc")).unwrap(), DisplayName::parse("Log").unwrap())
    };
    let stored = |agent| async move {
        other
            .agent_store()
            .list_actions(Reach::Everything, agent, lf_core::PageRequest::first(1))
            .await
            .unwrap()
    };

    let me = Principal::Service { acting_as: Some(LenserId::new()) };
    let a = service.create(&me, new()).await.unwrap();
    assert_eq!(service.check_call(&me, a.id, &call).await.unwrap_err().code(), ErrorCode::PermissionDenied);
    assert_eq!(stored(a.id).await.total, 1, "the refusal is committed when it answers");
    service.assign_tool(&me, a.id, tool.clone(), false).await.unwrap();
    for n in 2..=21 {
        let pass = service.check_call(&me, a.id, &call).await.unwrap();
        let entry = service.record_call(&pass, Ok(())).await.unwrap();
        let page = stored(a.id).await;
        assert_eq!((page.total, page.items[0].id), (n, entry.id), "call {n} is committed when it answers");
    }

    let mut agents = Vec::new();
    for _ in 0..64 {
        let me = Principal::Service { acting_as: Some(LenserId::new()) };
        let a = service.create(&me, new()).await.unwrap();
        service.assign_tool(&me, a.id, tool.clone(), false).await.unwrap();
        agents.push((me, a.id));
    }
    let tasks: Vec<_> = agents
        .into_iter()
        .map(|(me, agent)| {
            let (service, call, other) = (service.clone(), call.clone(), other.agent_store());
            tokio::spawn(async move {
                let pass = service.check_call(&me, agent, &call).await.unwrap();
                let entry = service.record_call(&pass, Ok(())).await.unwrap();
                let page = other
                    .list_actions(Reach::Everything, agent, lf_core::PageRequest::first(1))
                    .await
                    .unwrap();
                page.total == 1 && page.items[0].id == entry.id
            })
        })
        .collect();
    for task in tasks {
        assert!(task.await.unwrap(), "a call among many is committed when it answers");
    }
    service.close().await.unwrap();
}
