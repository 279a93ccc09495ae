//! The label rules of `LensService` over the memory store: reserved names,
//! protection by principal, reads by label, history order, events.

use std::sync::{Arc, Mutex};

use lf_core::{
    DomainEvent, ErrorCode, EventKind, EventSink, LensId, LenserId, LfResult, PageRequest, Principal, Scopes,
};
use lf_lens::{
    LabelName, LensService, LensUpdate, MemoryLensStore, NewLens, ParamValues, SetLabel, TemplateBody, Title,
    VersionSelector, Visibility,
};
use pollster::block_on;

#[derive(Default)]
struct Heard(Mutex<Vec<DomainEvent>>);

impl EventSink for Heard {
    fn publish(&self, event: DomainEvent) {
        self.0.lock().unwrap().push(event);
    }
}

struct World {
    lenses: LensService,
    heard: Arc<Heard>,
    owner: LenserId,
    lens: LensId,
}

fn person(id: LenserId) -> Principal {
    Principal::Lenser { id, scopes: Scopes::READ_WRITE }
}

fn name(s: &str) -> LabelName {
    LabelName::parse("label", s).unwrap()
}

/// A public lens with versions 1.0.0 ("one"), 1.0.1 ("two"), 1.0.2 ("three").
fn world() -> World {
    let heard = Arc::new(Heard::default());
    let lenses = LensService::new(Arc::new(MemoryLensStore::new())).with_events(heard.clone());
    let owner = LenserId::new();
    let me = person(owner);
    let body = |word: &str| {
        TemplateBody::parse(format!("Answer [[Question]] in the voice of {word}, briefly and with care."))
            .unwrap()
    };
    let view = block_on(lenses.create(
        &me,
        NewLens {
            title: Title::parse("Voices").unwrap(),
            description: None,
            body: body("one"),
            visibility: Visibility::Public,
            params: vec![],
        },
    ))
    .unwrap();
    for word in ["two", "three"] {
        let update = LensUpdate { body: Some(body(word)), ..LensUpdate::new(view.lens.id) };
        block_on(lenses.update(&me, update)).unwrap();
    }
    World { lenses, heard, owner, lens: view.lens.id }
}

impl World {
    fn set(&self, p: &Principal, label: &str, semver: &str, agent_flag: bool) -> LfResult<lf_lens::LabelSet> {
        self.set_with(p, label, semver, None, agent_flag)
    }

    fn set_with(
        &self,
        p: &Principal,
        label: &str,
        semver: &str,
        protect: Option<bool>,
        agent_flag: bool,
    ) -> LfResult<lf_lens::LabelSet> {
        let set = SetLabel {
            lens_id: self.lens,
            label: LabelName::parse("label", label)?,
            version: VersionSelector::Semver(lf_lens::Semver::parse(semver).unwrap()),
            protect,
        };
        block_on(self.lenses.set_label(p, set, agent_flag))
    }

    fn prompt(&self, p: &Principal, label: &str) -> LfResult<String> {
        let values = ParamValues::new().insert("question", "why");
        let which = VersionSelector::label("label", label)?;
        block_on(self.lenses.run(p, self.lens, which, &values, None)).map(|r| r.prompt)
    }
}

#[test]
fn reserved_names_and_reads_by_label() {
    let w = world();
    let me = person(w.owner);
    let e = w.set(&me, "latest", "1.0.0", false).unwrap_err();
    assert_eq!(e.code(), ErrorCode::InvalidArgument);
    assert!(e.message().contains("reserved"), "{}", e.message());
    let e = block_on(w.lenses.remove_label(&me, w.lens, name("latest"), false)).unwrap_err();
    assert_eq!(e.code(), ErrorCode::InvalidArgument);
    assert_eq!(w.set(&me, "Prod", "1.0.0", false).unwrap_err().code(), ErrorCode::InvalidArgument);

    assert!(w.prompt(&me, "latest").unwrap().contains("three"), "latest is the head");
    let e = w.prompt(&me, "production").unwrap_err();
    assert_eq!(e.code(), ErrorCode::NotFound);
    assert!(e.message().contains("no labels yet"), "{}", e.message());

    w.set(&me, "production", "1.0.0", false).unwrap();
    w.set(&me, "staging", "1.0.1", false).unwrap();
    assert!(w.prompt(&me, "production").unwrap().contains("one"));
    assert!(w.prompt(&me, "staging").unwrap().contains("two"));
    let e = w.prompt(&me, "canary").unwrap_err();
    assert_eq!(e.code(), ErrorCode::NotFound);
    assert!(e.message().contains("production, staging"), "names the labels it has: {}", e.message());

    // A reader who is not the owner reads by label too.
    let reader = person(LenserId::new());
    assert!(w.prompt(&reader, "production").unwrap().contains("one"));
    let labels = block_on(w.lenses.labels(&reader, w.lens)).unwrap();
    assert_eq!(labels.len(), 2);

    let diff = block_on(w.lenses.diff(
        &me,
        w.lens,
        VersionSelector::label("from", "production").unwrap(),
        VersionSelector::label("to", "staging").unwrap(),
    ))
    .unwrap();
    assert_eq!((diff.from.semver.to_string(), diff.to.semver.to_string()), ("1.0.0".into(), "1.0.1".into()));
}

#[test]
fn protection_by_principal() {
    let w = world();
    let owner = person(w.owner);
    let agent = Principal::Agent { agent_id: LenserId::new(), owner: w.owner };
    let stranger = person(LenserId::new());

    assert_eq!(w.set(&stranger, "staging", "1.0.0", false).unwrap_err().code(), ErrorCode::Forbidden);
    let e = w.set(&agent, "production", "1.0.0", false).unwrap_err();
    assert_eq!(e.code(), ErrorCode::PermissionDenied);
    assert!(
        e.message().contains(&w.owner.to_string()) && e.message().contains("can_move_protected_labels"),
        "a refusal names who may move it: {}",
        e.message()
    );
    w.set(&agent, "staging", "1.0.0", false).expect("an agent moves an unprotected label");
    w.set(&agent, "production", "1.0.0", true).expect("with its policy's flag it moves production");
    w.set(&owner, "production", "1.0.1", false).expect("the owner moves production");

    // The owner protects staging; then the agent needs the flag for it too.
    let e = w.set_with(&agent, "staging", "1.0.0", Some(true), false).unwrap_err();
    assert_eq!(e.code(), ErrorCode::PermissionDenied, "protecting is the owner's");
    let st = w.set_with(&owner, "staging", "1.0.0", Some(true), false).unwrap();
    assert!(st.label.protected && st.moved.is_none());
    assert_eq!(w.set(&agent, "staging", "1.0.2", false).unwrap_err().code(), ErrorCode::PermissionDenied);
    let e = block_on(w.lenses.remove_label(&agent, w.lens, name("staging"), false)).unwrap_err();
    assert_eq!(e.code(), ErrorCode::PermissionDenied);
    let e = w.set_with(&owner, "production", "1.0.1", Some(false), false).unwrap_err();
    assert_eq!(e.code(), ErrorCode::InvalidArgument, "production stays protected");

    block_on(w.lenses.remove_label(&owner, w.lens, name("staging"), false)).expect("the owner removes it");
    let e = block_on(w.lenses.remove_label(&owner, w.lens, name("staging"), false)).unwrap_err();
    assert_eq!(e.code(), ErrorCode::NotFound);
    assert!(e.message().contains("production"), "{}", e.message());
}

#[test]
fn history_newest_first_and_events() {
    let w = world();
    let me = person(w.owner);
    let agent_id = LenserId::new();
    let agent = Principal::Agent { agent_id, owner: w.owner };
    w.set(&me, "production", "1.0.0", false).unwrap();
    w.set(&me, "production", "1.0.2", false).unwrap();
    w.set(&agent, "production", "1.0.0", true).unwrap(); // the rollback
    let same = w.set(&me, "production", "1.0.0", false).unwrap();
    assert!(same.moved.is_none(), "no move, no record");
    w.set(&me, "beta", "1.0.1", false).unwrap();

    let page =
        block_on(w.lenses.label_history(&me, w.lens, Some(name("production")), PageRequest::first(10)))
            .unwrap();
    let moves: Vec<(Option<String>, Option<String>)> = page
        .items
        .iter()
        .map(|m| (m.from.map(|f| f.semver.to_string()), m.to.map(|t| t.semver.to_string())))
        .collect();
    let s = |v: &str| Some(v.to_owned());
    assert_eq!(moves, [(s("1.0.2"), s("1.0.0")), (s("1.0.0"), s("1.0.2")), (None, s("1.0.0"))]);
    assert_eq!((page.items[0].by, page.items[0].by_agent), (Some(w.owner), Some(agent_id)), "who moved it");
    let all = block_on(w.lenses.label_history(&me, w.lens, None, PageRequest::first(10))).unwrap();
    assert_eq!(all.total, 4);
    assert_eq!(all.items[0].label.as_str(), "beta");

    let heard = w.heard.0.lock().unwrap();
    let moved: Vec<&DomainEvent> = heard.iter().filter(|e| e.kind == EventKind::LensLabelMoved).collect();
    assert_eq!(moved.len(), 4, "one event per recorded move");
    let field = |e: &DomainEvent, k: &str| e.fields.iter().find(|(f, _)| *f == k).map(|(_, v)| v.clone());
    assert_eq!(field(moved[2], "from_semver"), s("1.0.2"));
    assert_eq!(field(moved[2], "to_semver"), s("1.0.0"));
    assert_eq!(field(moved[2], "label"), s("production"));
    assert_eq!(field(moved[0], "from_version_id"), s(""), "a new label comes from no version");
    assert!(moved.iter().all(|e| e.public && e.owner == w.owner));
}
