//! Properties of the lifecycle (DESIGN §7): no sequence of events reaches a
//! move outside the table, a refused event leaves the battle as it was, and
//! the slots of a battle are always a prefix of A–Z whatever is asked.

use std::sync::Arc;

use lf_battle::state::{Event, Facts, Lifecycle, TRANSITIONS, needs_confirm, transition};
use lf_battle::{
    BattleService, BattleStatus, BattleTitle, BattleType, ContenderType, DisplayName, MaxContenders,
    MemoryBattleStore, NewBattle, NewContender, Slot, TaskPrompt,
};
use lf_core::{ContenderRefId, LenserId, Principal, Scopes};
use proptest::prelude::*;

fn status() -> impl Strategy<Value = BattleStatus> {
    prop::sample::select(BattleStatus::ALL.to_vec())
}

fn facts() -> impl Strategy<Value = Facts> {
    (0usize..5, 0usize..5, 0usize..5, 0usize..5).prop_map(|(humans, ais, other, submitted)| Facts {
        contenders: humans + ais + other,
        humans,
        ais,
        submitted,
    })
}

#[derive(Clone, Copy, Debug)]
enum Who {
    Creator,
    Service,
    Agent,
    Stranger,
}

fn who() -> impl Strategy<Value = Who> {
    prop_oneof![Just(Who::Creator), Just(Who::Service), Just(Who::Agent), Just(Who::Stranger)]
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 2_000, ..ProptestConfig::default() })]

    #[test]
    fn only_table_moves_and_refusals_change_nothing(
        battle_type in prop::sample::select(BattleType::ALL.to_vec()),
        steps in prop::collection::vec((status(), any::<bool>(), who(), facts()), 1..40),
    ) {
        let creator = LenserId::new();
        let mut state = Lifecycle { status: BattleStatus::Draft, creator, battle_type, facts: Facts::default() };
        for (to, confirm, who, facts) in steps {
            state.facts = facts;
            let actor = match who {
                Who::Creator => Principal::Lenser { id: creator, scopes: Scopes::READ_WRITE },
                Who::Service => Principal::Service { acting_as: None },
                Who::Agent => Principal::Agent { agent_id: LenserId::new(), owner: creator },
                Who::Stranger => Principal::Lenser { id: LenserId::new(), scopes: Scopes::READ_WRITE },
            };
            let before = state;
            let pure = transition(&state, Event { to, confirm }, &actor);
            let applied = state.apply(Event { to, confirm }, &actor);
            prop_assert_eq!(pure.is_ok(), applied.is_ok(), "apply agrees with transition");
            match applied {
                Ok(next) => {
                    prop_assert_eq!(next, to);
                    prop_assert!(TRANSITIONS.contains(&(before.status, next)), "{:?} -> {:?} is not in the table", before.status, next);
                    prop_assert!(!matches!(who, Who::Stranger), "a stranger moved a battle");
                    prop_assert!(confirm || !needs_confirm(next), "moved to {:?} without confirm", next);
                    prop_assert_eq!(state.status, next);
                    prop_assert_eq!((state.creator, state.battle_type), (before.creator, before.battle_type));
                }
                Err(_) => prop_assert_eq!(state, before, "a refused event changed the battle"),
            }
            prop_assert!(before.status != BattleStatus::Archived || state.status == BattleStatus::Archived, "something left archived");
        }
    }
}

#[derive(Clone, Debug)]
enum Op {
    Add { kind: ContenderType, slot: Option<u8>, reuse: bool },
    Move(BattleStatus),
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        4 => (prop::sample::select(ContenderType::ALL.to_vec()), prop::option::of(0u8..28), any::<bool>())
            .prop_map(|(kind, slot, reuse)| Op::Add { kind, slot, reuse }),
        1 => status().prop_map(Op::Move),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 300, ..ProptestConfig::default() })]

    #[test]
    fn slots_are_always_a_prefix(
        battle_type in prop::sample::select(BattleType::ALL.to_vec()),
        max in 2i64..=26,
        ops in prop::collection::vec(op(), 1..60),
    ) {
        let service = BattleService::new(Arc::new(MemoryBattleStore::new()));
        let me = Principal::Service { acting_as: Some(LenserId::new()) };
        use pollster::block_on as run;
        let battle = run(service.create(&me, NewBattle {
            battle_type: Some(battle_type),
            max_contenders: Some(MaxContenders::parse(max).unwrap()),
            ..NewBattle::new(BattleTitle::parse("Prefix").unwrap(), TaskPrompt::parse("Do it.").unwrap())
        })).unwrap();
        let mut refs: Vec<ContenderRefId> = Vec::new();
        for op in ops {
            match op {
                Op::Add { kind, slot, reuse } => {
                    let reference = match (reuse, refs.first()) {
                        (true, Some(r)) => *r,
                        _ => ContenderRefId::new(),
                    };
                    let slot = slot.and_then(|s| Slot::from_index(s as usize));
                    let added = run(service.add_contender(&me, NewContender {
                        battle_id: battle.id,
                        display_name: DisplayName::parse("c").unwrap(),
                        contender_type: kind,
                        reference,
                        slot,
                        owner: None,
                    }));
                    if let Ok(c) = added {
                        refs.push(c.reference);
                    }
                }
                Op::Move(to) => {
                    let _ = run(service.set_status(&me, battle.id, to, true));
                }
            }
            let sheet = run(service.get(&me, battle.id)).unwrap();
            let slots: Vec<usize> = sheet.contenders.iter().map(|c| c.slot.index()).collect();
            prop_assert_eq!(slots, (0..sheet.contenders.len()).collect::<Vec<_>>());
            prop_assert!(sheet.contenders.len() <= max as usize);
            prop_assert!(sheet.contenders.iter().all(|c| battle_type.allows(c.contender_type)));
        }
    }
}
