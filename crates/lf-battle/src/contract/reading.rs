//! Reading many battles: listing, search and history.

use super::*;

pub(super) async fn listing(s: &dyn BattleStore) {
    let mut f = Fixture::new();
    let me = LenserId::new();
    let mut made = Vec::new();
    for status in [Draft, Open, Open, Closed, Archived] {
        let mut b = f.battle(me, status);
        if made.len() == 2 {
            b.battle_type = BattleType::WorkflowBattle;
        }
        s.create_battle(&b).await.unwrap();
        made.push(b);
    }
    let mine = BattleFilter { creator: Some(me), ..Default::default() };
    let page =
        s.list_battles(Reach::Everything, &mine, PageRequest::new(Some(2), Some(0)).unwrap()).await.unwrap();
    assert_eq!(page.total, 4, "archived battles are left out by default");
    let ids: Vec<BattleId> = page.items.iter().map(|i| i.battle.id).collect();
    assert_eq!(ids, vec![made[3].id, made[2].id], "newest first");
    assert!(page.has_more());
    let page =
        s.list_battles(Reach::Everything, &mine, PageRequest::new(Some(2), Some(2)).unwrap()).await.unwrap();
    let ids: Vec<BattleId> = page.items.iter().map(|i| i.battle.id).collect();
    assert_eq!(ids, vec![made[1].id, made[0].id]);
    let archived = BattleFilter { status: Some(Archived), ..mine };
    let page = s.list_battles(Reach::Everything, &archived, PageRequest::default()).await.unwrap();
    assert_eq!(page.items.iter().map(|i| i.battle.id).collect::<Vec<_>>(), vec![made[4].id]);
    let open = BattleFilter { status: Some(Open), ..mine };
    assert_eq!(s.list_battles(Reach::Everything, &open, PageRequest::default()).await.unwrap().total, 2);
    let typed = BattleFilter { battle_type: Some(BattleType::WorkflowBattle), ..mine };
    let page = s.list_battles(Reach::Everything, &typed, PageRequest::default()).await.unwrap();
    assert_eq!(page.items.iter().map(|i| i.battle.id).collect::<Vec<_>>(), vec![made[2].id]);
    let nobody = BattleFilter { creator: Some(LenserId::new()), ..Default::default() };
    assert_eq!(s.list_battles(Reach::Everything, &nobody, PageRequest::default()).await.unwrap().total, 0);
}

pub(super) async fn search(s: &dyn BattleStore) {
    let mut f = Fixture::new();
    let (me, other) = (LenserId::new(), LenserId::new());
    // A word no other battle of a shared database has.
    let word = format!("zq{}", BattleId::new().as_uuid().simple());
    let titled = |f: &mut Fixture, creator, status| Battle {
        title: BattleTitle::parse(format!("All about {} THINGS", word.to_uppercase())).unwrap(),
        ..f.battle(creator, status)
    };
    let in_title = titled(&mut f, me, Open);
    let in_task = Battle {
        task_prompt: TaskPrompt::parse(format!("Explain pre{word}ing, then stop.")).unwrap(),
        ..f.battle(other, Closed)
    };
    let others_draft = titled(&mut f, other, Draft);
    let my_draft = titled(&mut f, me, Draft);
    let archived = titled(&mut f, me, Archived);
    let unrelated = f.battle(me, Open);
    for b in [&in_title, &in_task, &others_draft, &my_draft, &archived, &unrelated] {
        s.create_battle(b).await.unwrap();
    }
    let ids = |page: lf_core::Page<crate::model::BattleSummary>| -> Vec<BattleId> {
        page.items.iter().map(|i| i.battle.id).collect()
    };
    let q = SearchQuery::parse(&word).unwrap();
    let page = s.search_battles(Reach::Everything, &q, PageRequest::default()).await.unwrap();
    assert_eq!(
        ids(page),
        vec![my_draft.id, others_draft.id, in_task.id, in_title.id],
        "title or task prompt, any case, inside a longer word too, archived left out, newest first"
    );
    let page = s.search_battles(Reach::Lenser(me), &q, PageRequest::default()).await.unwrap();
    assert_eq!(page.total, 3);
    assert_eq!(ids(page), vec![my_draft.id, in_task.id, in_title.id], "someone else's draft is out of reach");
    let page =
        s.search_battles(Reach::Lenser(me), &q, PageRequest::new(Some(1), Some(1)).unwrap()).await.unwrap();
    assert_eq!((page.total, page.has_more()), (3, true));
    assert_eq!(ids(page), vec![in_task.id]);
    let both = SearchQuery::parse(&format!("things {word}")).unwrap();
    let page = s.search_battles(Reach::Lenser(me), &both, PageRequest::default()).await.unwrap();
    assert_eq!(ids(page), vec![my_draft.id, in_title.id], "every word must match");
    let missing = SearchQuery::parse(&format!("{word} nowhere{word}")).unwrap();
    assert_eq!(s.search_battles(Reach::Everything, &missing, PageRequest::default()).await.unwrap().total, 0);
}

pub(super) async fn history(s: &dyn BattleStore) {
    let mut f = Fixture::new();
    let (me, other) = (LenserId::new(), LenserId::new());
    let created = f.create(s, me, Closed).await;
    let (joined, _) = f.with_contenders(s, other, 0, Open).await;
    let mut c = f.contender(&joined, 0, ContenderType::Human);
    c.reference = ContenderRefId::from_uuid(me.as_uuid());
    c.owner = Some(me);
    s.add_contender(&c, Open).await.unwrap();
    let agent = Contender {
        reference: ContenderRefId::new(),
        owner: Some(me),
        ..f.contender(&joined, 1, ContenderType::AiAgent)
    };
    s.add_contender(&agent, Open).await.unwrap();
    let _unrelated = f.create(s, other, Open).await;
    let archived = f.create(s, me, Archived).await;

    let all = HistoryFilter { lenser: me, status: None };
    let page = s.battle_history(Reach::Everything, &all, PageRequest::default()).await.unwrap();
    let ids: Vec<BattleId> = page.items.iter().map(|i| i.battle.id).collect();
    assert_eq!(
        ids,
        vec![archived.id, joined.id, created.id],
        "created or joined, archived included, each once, newest first"
    );
    let closed = HistoryFilter { lenser: me, status: Some(Closed) };
    let page = s.battle_history(Reach::Everything, &closed, PageRequest::default()).await.unwrap();
    assert_eq!(page.items.iter().map(|i| i.battle.id).collect::<Vec<_>>(), vec![created.id]);
    let none = HistoryFilter { lenser: LenserId::new(), status: None };
    assert_eq!(s.battle_history(Reach::Everything, &none, PageRequest::default()).await.unwrap().total, 0);
}
