//! The use cases, through the service on the memory store: the original's
//! creation vectors (reference §4.2, §6), bad input, visibility, versions.

use std::sync::Arc;

use lf_core::{ErrorCode, LabelName, LensId, LenserId, LfError, PageRequest, Principal, Scopes, VersionId};
use lf_workflow::examples::spec_digest;
use lf_workflow::{
    Created, IssueCode, LensFacts, LensParam, MemoryConnections, MemoryLenses, MemoryWorkflowStore,
    NewWorkflow, NodeKind, RawBlueprint, VersionSelector, Visibility, WorkflowFilter, WorkflowService,
    WorkflowUpdate,
};
use pollster::block_on;
use serde_json::{Value, json};

struct World {
    service: WorkflowService,
    lenses: Arc<MemoryLenses>,
    connections: Arc<MemoryConnections>,
    alice: LenserId,
    bob: LenserId,
}

impl World {
    fn new() -> Self {
        let lenses = Arc::new(MemoryLenses::new());
        let connections = Arc::new(MemoryConnections::new());
        let service =
            WorkflowService::new(Arc::new(MemoryWorkflowStore::new()), lenses.clone(), connections.clone());
        World { service, lenses, connections, alice: LenserId::new(), bob: LenserId::new() }
    }

    fn as_(&self, who: LenserId) -> Principal {
        Principal::Lenser { id: who, scopes: Scopes::READ_WRITE }
    }

    /// A lens of `owner` taking `params` (label, optional).
    fn lens(&self, owner: LenserId, private: bool, params: &[(&str, bool)]) -> LensId {
        let lens_id = LensId::new();
        self.lenses.insert(
            owner,
            private,
            LensFacts {
                lens_id,
                version_id: VersionId::new(),
                title: "Research".into(),
                params: params.iter().map(|(l, o)| LensParam { label: (*l).into(), optional: *o }).collect(),
                missing_label: None,
            },
        );
        lens_id
    }

    fn create(&self, who: LenserId, blueprint: Value) -> Result<Created, LfError> {
        let blueprint: RawBlueprint = serde_json::from_value(blueprint).expect("the blueprint's JSON shape");
        block_on(self.service.create(&self.as_(who), NewWorkflow { blueprint, owner: None }))
    }
}

fn message(r: Result<Created, LfError>) -> (ErrorCode, String) {
    let e = r.expect_err("refused");
    (e.code(), e.message().to_owned())
}

#[test]
fn no_lenser_no_workflow() {
    let w = World::new();
    let p = Principal::Service { acting_as: None };
    let r = block_on(w.service.create(
        &p,
        NewWorkflow { blueprint: serde_json::from_value(json!({"title": "T"})).unwrap(), owner: None },
    ));
    assert_eq!(r.unwrap_err().code(), ErrorCode::MissingLenser);
}

#[test]
fn an_empty_container() {
    let w = World::new();
    let c = w.create(w.alice, json!({"title": "T"})).unwrap();
    assert_eq!(c.workflow.visibility, Visibility::Private);
    assert_eq!(c.workflow.description, None);
    assert_eq!((c.version.number, c.version.nodes.len()), (1, 0));
    assert_eq!(c.next_steps.len(), 1);
    assert!(c.report.errors.iter().any(|i| i.code == IssueCode::WorkflowEmpty));
}

#[test]
fn the_spec_example_creates_and_validates() {
    let w = World::new();
    let lens = w.lens(w.alice, true, &[("Topic", false), ("Context", false)]);
    w.connections.insert(w.alice, "slack", "team-slack");
    let c = w.create(w.alice, spec_digest(lens)).unwrap();
    let v = &c.version;
    assert_eq!(
        v.nodes.iter().map(|n| n.node_type.as_str()).collect::<Vec<_>>(),
        ["schedule_trigger", "lens", "slack_notify"]
    );
    assert_eq!(v.nodes[1].parameters["topic"], "AI robotics");
    assert_eq!(v.nodes[2].connector.as_ref().unwrap().connection_ref.as_str(), "team-slack");
    assert_eq!(v.edges.iter().map(|e| e.output_key.as_str()).collect::<Vec<_>>(), ["output", "result"]);
    assert_eq!((c.summary.step_count, c.summary.connection_count), (3, 2));
    assert_eq!(c.summary.steps[1].2, NodeKind::Lens);
    assert!(c.next_steps[0].contains("validate_workflow"));
    assert_eq!(v.nodes[1].position.x, 380.0);
    // A lens step outputs text, not "result": said, not refused.
    assert!(
        c.report.warnings.iter().any(|i| i.code == IssueCode::OutputKeyUnknown),
        "{:?}",
        c.report.warnings
    );

    let checked =
        block_on(w.service.validate(&w.as_(w.alice), c.workflow.id, VersionSelector::Head)).unwrap();
    assert!(checked.report.valid && checked.report.run_ready, "{:?}", checked.report.errors);
    assert_eq!(checked.report.execution_order, vec![0, 1, 2]);
}

#[test]
fn the_original_creation_checks_in_order() {
    let w = World::new();
    let lens = w.lens(w.alice, false, &[]).to_string();
    let trigger = json!({"key": "start", "kind": "trigger", "name": "Start", "node_type": "manual_trigger"});
    let cases: Vec<(Value, Value, &str)> = vec![
        (json!([trigger, trigger]), json!([]), "Step key \"start\" is duplicated."),
        (json!([trigger, {"key": "r", "kind": "lens", "name": "R"}]), json!([]), "Call create_lens first"),
        (
            json!([{"key": "t", "kind": "trigger", "name": "T", "node_type": "http_request"}]),
            json!([]),
            "Trigger step \"t\" requires a supported trigger node_type.",
        ),
        (
            json!([trigger, {"key": "x", "kind": "tool", "name": "X"}]),
            json!([]),
            "Tool step \"x\" requires a palette node_type.",
        ),
        (
            json!([trigger, {"key": "x", "kind": "tool", "name": "X", "node_type": "noop", "config": {"api_key": "sk-1"}}]),
            json!([]),
            "connector.connection_ref",
        ),
        (
            json!([trigger, {"key": "x", "kind": "tool", "name": "X", "node_type": "noop", "parameters": {"deep": [{"Authorization": "Bearer x"}]}}]),
            json!([]),
            "forbidden secret field \"Authorization\"",
        ),
        (
            json!([{"key": "r", "kind": "lens", "name": "R", "lens_id": lens}]),
            json!([]),
            "exactly one trigger step; received 0.",
        ),
        (
            json!([trigger, {"key": "b", "kind": "trigger", "name": "B", "node_type": "webhook_trigger"}]),
            json!([]),
            "received 2.",
        ),
        (
            json!([trigger]),
            json!([{"from_step": "nope", "to_step": "start", "input_parameter": "x"}]),
            "unknown from_step \"nope\"",
        ),
        (
            json!([trigger]),
            json!([{"from_step": "start", "to_step": "nope", "input_parameter": "x"}]),
            "unknown to_step \"nope\"",
        ),
        (
            json!([trigger]),
            json!([{"from_step": "start", "to_step": "start", "input_parameter": "x"}]),
            "cannot link step \"start\" to itself",
        ),
        (
            json!([trigger, {"key": "notify", "kind": "tool", "name": "N", "node_type": "noop"}]),
            json!([]),
            "Unreachable: notify",
        ),
    ];
    for (steps, connections, want) in cases {
        let (code, msg) =
            message(w.create(w.alice, json!({"title": "T", "steps": steps, "connections": connections})));
        assert_eq!(code, ErrorCode::InvalidArgument, "{want}");
        assert!(msg.contains(want), "want {want:?}, got {msg:?}");
    }
}

#[test]
fn what_the_original_let_through() {
    let w = World::new();
    let start = json!({"key": "start", "kind": "trigger", "name": "Start", "node_type": "manual_trigger"});
    let with = |step: Value| json!({"title": "T", "steps": [start, step], "connections": [{"from_step": "start", "to_step": "x", "input_parameter": "input"}]});

    let (code, msg) = message(w.create(
        w.alice,
        with(json!({"key": "x", "kind": "tool", "name": "X", "node_type": "notion_write"})),
    ));
    assert_eq!(code, ErrorCode::InvalidArgument);
    assert!(msg.contains("not in the node catalog") && msg.contains("list_workflow_node_types"), "{msg}");
    let (_, msg) = message(
        w.create(w.alice, with(json!({"key": "x", "kind": "tool", "name": "X", "node_type": "slack_sendd"}))),
    );
    assert!(msg.contains("Closest: slack_notify"), "{msg}");

    // An alias is the type it names.
    w.connections.insert(w.alice, "slack", "s");
    let c = w.create(w.alice, with(json!({"key": "x", "kind": "tool", "name": "X", "node_type": "slack_send", "config": {"text": "hi"}, "connector": {"provider": "slack", "connection_ref": "s"}}))).unwrap();
    assert_eq!(c.version.nodes[1].node_type.as_str(), "slack_notify");

    // A lens the caller cannot read is not found; one she can is fine.
    let private = w.lens(w.bob, true, &[]);
    let (code, _) = message(w.create(
        w.alice,
        with(json!({"key": "x", "kind": "lens", "name": "X", "lens_id": private.to_string()})),
    ));
    assert_eq!(code, ErrorCode::NotFound);
    let public = w.lens(w.bob, false, &[]);
    w.create(w.alice, with(json!({"key": "x", "kind": "lens", "name": "X", "lens_id": public.to_string()})))
        .unwrap();
    let (code, _) = message(w.create(w.alice, with(json!({"key": "x", "kind": "tool", "name": "X", "node_type": "lens_execute", "config": {"lens_id": private.to_string()}}))));
    assert_eq!(code, ErrorCode::NotFound, "lens_execute's lens too");

    // What the validator finds refuses the blueprint, every error in details.
    let needy = w.lens(w.alice, false, &[("Topic", false), ("Tone", true)]);
    let e = w
        .create(w.alice, with(json!({"key": "x", "kind": "lens", "name": "X", "lens_id": needy.to_string()})))
        .unwrap_err();
    assert_eq!(e.code(), ErrorCode::InvalidArgument);
    assert!(e.message().contains("needs parameter \"Topic\""), "{}", e.message());
    assert!(e.details().iter().any(|(k, _)| k == "errors"));
    let (_, msg) = message(w.create(w.alice, with(json!({"key": "x", "kind": "tool", "name": "X", "node_type": "email_send", "config": {"to": "a@example.com", "subject": "s", "body": "b"}, "connector": {"provider": "smtp", "connection_ref": "unsaved"}}))));
    assert!(msg.contains("\"unsaved\"") && msg.contains("not saved"), "{msg}");
    let (_, msg) = message(w.create(
        w.alice,
        with(json!({"key": "x", "kind": "tool", "name": "X", "node_type": "schedule_trigger"})),
    ));
    assert!(msg.contains("make it kind trigger"), "{msg}");
    let (_, msg) = message(w.create(w.alice, with(json!({"key": "x", "kind": "tool", "name": "X", "node_type": "http_request", "config": {"url": "ftp://x", "method": "FETCH"}}))));
    assert!(msg.contains("url must be an http:// or https:// URL"), "{msg}");
}

#[test]
fn bad_input_is_refused_whole() {
    let w = World::new();
    let start = json!({"key": "start", "kind": "trigger", "name": "Start", "node_type": "manual_trigger"});
    let many: Vec<Value> = (0..101)
        .map(|i| json!({"key": format!("s{i}"), "kind": "tool", "name": "S", "node_type": "noop"}))
        .collect();
    let conns: Vec<Value> =
        (0..301).map(|_| json!({"from_step": "start", "to_step": "start", "input_parameter": "x"})).collect();
    let mut deep = json!(1);
    for _ in 0..64 {
        deep = json!({"a": deep});
    }
    let cases = vec![
        (json!({"title": "T", "steps": many}), "at most 100"),
        (json!({"title": "T", "steps": [start], "connections": conns}), "at most 300"),
        (
            json!({"title": "T", "steps": [start, {"key": "x", "kind": "tool", "name": "X", "node_type": "noop", "config": {"d": deep}}]}),
            "nests deeper than 32",
        ),
        (
            json!({"title": "T", "steps": [start, {"key": "x", "kind": "tool", "name": "X", "node_type": "noop", "parameters": {"big": "x".repeat(10 << 20)}}]}),
            "KiB",
        ),
        (
            json!({"title": "T", "steps": [{"key": "Start", "kind": "trigger", "name": "S", "node_type": "manual_trigger"}]}),
            "steps[0].key must be",
        ),
        (
            json!({"title": "T", "steps": [{"key": "with space", "kind": "trigger", "name": "S", "node_type": "manual_trigger"}]}),
            "research_step",
        ),
        (json!({"title": "T", "steps": [{"key": "s", "kind": "robot", "name": "S"}]}), "steps[0].kind"),
        (
            json!({"title": "T", "steps": [{"key": "s", "kind": "lens", "name": "S", "lens_id": "not-a-uuid"}]}),
            "steps[0].lens_id must be a UUID",
        ),
        (json!({"title": "   "}), "title must be 1 to 200 characters"),
        (
            json!({"title": "T", "visibility": "community"}),
            "visibility must be one of public, unlisted, private",
        ),
        (
            json!({"title": "T", "steps": [start], "connections": [{"from_step": "start", "to_step": "start", "input_parameter": "x", "output_key": "$["}]}),
            "not a valid JSONPath",
        ),
        (
            json!({"title": "T", "steps": [start], "connections": [{"from_step": "start", "to_step": "start", "input_parameter": "x", "merge_strategy": "sum"}]}),
            "merge_strategy must be one of",
        ),
    ];
    for (bp, want) in cases {
        let (code, msg) = message(w.create(w.alice, bp));
        assert_eq!(code, ErrorCode::InvalidArgument, "{want}: {msg}");
        assert!(msg.contains(want), "want {want:?}, got {msg:?}");
    }
    let page = block_on(w.service.list(&w.as_(w.alice), &WorkflowFilter::default(), PageRequest::default()))
        .unwrap();
    assert_eq!(page.total, 0, "nothing partial is written");
}

#[test]
fn visibility_and_ownership() {
    let w = World::new();
    let (a, b) = (w.as_(w.alice), w.as_(w.bob));
    let mut ids = Vec::new();
    for vis in ["private", "unlisted", "public"] {
        ids.push(w.create(w.alice, json!({"title": vis, "visibility": vis})).unwrap().workflow.id);
    }
    let [private, unlisted, public] = ids[..] else { unreachable!() };
    assert_eq!(block_on(w.service.get(&b, private)).unwrap_err().code(), ErrorCode::NotFound);
    assert_eq!(
        block_on(w.service.graph(&b, private, VersionSelector::Head)).unwrap_err().code(),
        ErrorCode::NotFound
    );
    assert_eq!(
        block_on(w.service.validate(&b, private, VersionSelector::Head)).unwrap_err().code(),
        ErrorCode::NotFound
    );
    assert_eq!(
        block_on(w.service.describe(&b, private, VersionSelector::Head)).unwrap_err().code(),
        ErrorCode::NotFound
    );
    block_on(w.service.get(&b, unlisted)).unwrap();
    block_on(w.service.get(&b, public)).unwrap();
    let listed = block_on(w.service.list(&b, &WorkflowFilter::default(), PageRequest::default())).unwrap();
    assert_eq!(listed.items.iter().map(|x| x.id).collect::<Vec<_>>(), vec![public]);
    assert_eq!(
        block_on(w.service.list(&a, &WorkflowFilter::default(), PageRequest::default())).unwrap().total,
        3
    );

    let mut rename = WorkflowUpdate::new(public);
    rename.title = Some(lf_workflow::Title::parse("Mine now").unwrap());
    assert_eq!(block_on(w.service.update(&b, rename.clone())).unwrap_err().code(), ErrorCode::Forbidden);
    rename.workflow_id = private;
    assert_eq!(
        block_on(w.service.update(&b, rename)).unwrap_err().code(),
        ErrorCode::NotFound,
        "not yours to read is not found"
    );
    assert_eq!(block_on(w.service.archive(&b, public, true)).unwrap_err().code(), ErrorCode::Forbidden);
    assert_eq!(
        block_on(w.service.archive(&a, public, false)).unwrap_err().code(),
        ErrorCode::ConfirmationRequired
    );
    let archived = block_on(w.service.archive(&a, public, true)).unwrap();
    let again = block_on(w.service.archive(&a, public, true)).unwrap();
    assert_eq!(archived.archived_at, again.archived_at, "archiving is idempotent");
    assert_eq!(
        block_on(w.service.list(&b, &WorkflowFilter::default(), PageRequest::default())).unwrap().total,
        0
    );
    block_on(w.service.get(&b, public)).expect("an archived workflow is still readable by id");

    let r = block_on(w.service.create(
        &a,
        NewWorkflow { blueprint: serde_json::from_value(json!({"title": "T"})).unwrap(), owner: Some(w.bob) },
    ));
    assert_eq!(r.unwrap_err().code(), ErrorCode::Forbidden, "a lenser creates for herself only");
}

#[test]
fn versions_graph_and_description() {
    let w = World::new();
    let (a, b) = (w.as_(w.alice), w.as_(w.bob));
    let lens = w.lens(w.alice, false, &[("Topic", false), ("Context", true)]);
    w.connections.insert(w.alice, "slack", "team-slack");
    let mut bp = spec_digest(lens);
    bp["visibility"] = json!("public");
    let c = w.create(w.alice, bp.clone()).unwrap();
    let id = c.workflow.id;

    // Metadata alone makes no version.
    let mut u = WorkflowUpdate::new(id);
    u.visibility = Some(Visibility::Unlisted);
    let up = block_on(w.service.update(&a, u)).unwrap();
    assert_eq!((up.workflow.visibility, up.head.number, up.report), (Visibility::Unlisted, 1, None));

    // A full blueprint makes version 2, with a changelog of what changed.
    let mut u = WorkflowUpdate::new(id);
    let mut steps: Vec<lf_workflow::RawStep> = serde_json::from_value(bp["steps"].clone()).unwrap();
    steps[2].config = Some(json!({"text": "New: [[content]]"}).as_object().unwrap().clone());
    steps.push(
        serde_json::from_value(json!({"key": "log", "kind": "tool", "name": "Log", "node_type": "logger"}))
            .unwrap(),
    );
    let mut conns: Vec<lf_workflow::RawConnection> =
        serde_json::from_value(bp["connections"].clone()).unwrap();
    conns.push(serde_json::from_value(json!({"from_step": "research", "output_key": "text", "to_step": "log", "input_parameter": "input"})).unwrap());
    u.steps = Some(steps);
    u.connections = Some(conns);
    let up = block_on(w.service.update(&a, u)).unwrap();
    assert_eq!(up.head.number, 2);
    assert_eq!(up.head.changelog, "Added log; changed publish. 4 steps, 3 connections.");
    let view = block_on(w.service.get(&b, id)).unwrap();
    assert_eq!(view.versions.iter().map(|v| v.number).collect::<Vec<_>>(), vec![2, 1]);
    let (key, node_type, config) = view.trigger.unwrap();
    assert_eq!((key.as_str(), node_type.as_str()), ("start", "schedule_trigger"));
    assert_eq!(config["cron"], "0 9 * * 1", "the schedule, under its canonical name");
    let old = block_on(w.service.validate(&b, id, VersionSelector::Number(1))).unwrap();
    assert_eq!(old.version.number, 1);
    assert!(old.report.valid);

    // Bob reads the graph with the connection's ref hidden; Alice sees it.
    let g = block_on(w.service.graph(&b, id, VersionSelector::Head)).unwrap();
    assert!(g.refs_redacted);
    assert_eq!(g.version.nodes[2].connector.as_ref().unwrap().connection_ref.as_str(), "[redacted]");
    assert_eq!(g.version.nodes[1].parameters["topic"], "AI robotics", "lens parameter assignments stay");
    let g = block_on(w.service.graph(&a, id, VersionSelector::Number(1))).unwrap();
    assert_eq!(g.version.nodes[2].connector.as_ref().unwrap().connection_ref.as_str(), "team-slack");

    let d = block_on(w.service.describe(&b, id, VersionSelector::Head)).unwrap();
    assert!(d.summary.starts_with("Workflow \"Weekly AI robotics digest\" has 4 node(s) and 3 connection(s). It starts from schedule_trigger."), "{}", d.summary);
    assert!(d.summary.contains("start (schedule_trigger) → research (lens)"), "{}", d.summary);
    assert_eq!(d.triggers, vec![("start".to_owned(), "schedule_trigger".to_owned())]);
    assert_eq!(d.connections[1].output_key, "result");

    let mut stale = WorkflowUpdate::new(id);
    stale.steps = Some(vec![]);
    assert_eq!(block_on(w.service.update(&a, stale)).unwrap_err().code(), ErrorCode::InvalidArgument);
    let mut nothing = WorkflowUpdate::new(id);
    nothing.changelog = None;
    assert_eq!(block_on(w.service.update(&a, nothing)).unwrap_err().code(), ErrorCode::InvalidArgument);
}

#[test]
fn validation_after_the_facts_change() {
    let w = World::new();
    let lens = w.lens(w.alice, false, &[("Topic", false), ("Context", false)]);
    w.connections.insert(w.alice, "slack", "team-slack");
    let mut bp = spec_digest(lens);
    bp["visibility"] = json!("public");
    let id = w.create(w.alice, bp).unwrap().workflow.id;
    // The lens gets a new head needing one more parameter.
    w.lenses.insert(
        w.alice,
        false,
        LensFacts {
            lens_id: lens,
            version_id: VersionId::new(),
            title: "Research".into(),
            params: vec![
                LensParam { label: "Topic".into(), optional: false },
                LensParam { label: "Audience".into(), optional: false },
            ],
            missing_label: None,
        },
    );
    let r = block_on(w.service.validate(&w.as_(w.bob), id, VersionSelector::Head)).unwrap().report;
    assert!(!r.valid && !r.run_ready);
    let unbound =
        r.errors.iter().find(|i| i.code == IssueCode::LensParamUnbound).expect("LENS_PARAM_UNBOUND");
    assert_eq!(unbound.node, Some(1));
    assert!(unbound.message.contains("\"Audience\""));
    assert!(
        r.warnings.iter().any(|i| i.code == IssueCode::LensParamUnknown),
        "context is no longer a parameter"
    );
}

#[test]
fn the_node_catalog() {
    let all = WorkflowService::node_types(None);
    assert_eq!(all.total, all.items.len());
    assert_eq!(all.categories.len(), 11);
    assert_eq!(WorkflowService::node_types(Some("trigger")).total, 5);
    assert_eq!(WorkflowService::node_types(Some("not_a_real_category")).total, 0);
    let e = WorkflowService::node_type("not_a_real_node_type").unwrap_err();
    assert_eq!(e.code(), ErrorCode::NotFound);
    assert!(e.message().contains("not_a_real_node_type"));
    let le = WorkflowService::node_type("lens_execute").unwrap();
    assert_eq!(le.category.as_str(), "ai_primitive");
    assert_eq!(le.required_config().map(|f| f.key).collect::<Vec<_>>(), ["lens_id"]);
    assert_eq!(WorkflowService::node_type("cron").unwrap().node_type, "schedule_trigger", "by alias");
}

#[test]
fn a_step_may_follow_a_label_of_its_lens() {
    let w = World::new();
    let lens = w.lens(w.alice, false, &[("Topic", false)]);
    let v1 = block_on(lf_workflow::LensLookup::lens(&*w.lenses, lf_core::Reach::Everything, lens, None))
        .unwrap()
        .version_id;
    // Version 2, the head, needs a Tone too.
    let v2 = VersionId::new();
    w.lenses.insert(
        w.alice,
        false,
        LensFacts {
            lens_id: lens,
            version_id: v2,
            title: "Research".into(),
            params: vec![
                LensParam { label: "Topic".into(), optional: false },
                LensParam { label: "Tone".into(), optional: false },
            ],
            missing_label: None,
        },
    );
    let trigger = json!({"key": "start", "kind": "trigger", "name": "Start", "node_type": "manual_trigger"});
    let blueprint = |step: Value| {
        json!({"title": "T", "steps": [trigger, step],
               "connections": [{"from_step": "start", "to_step": "x", "output_key": "topic", "input_parameter": "topic"}]})
    };
    let lens_step = |config: Value| json!({"key": "x", "kind": "lens", "name": "X", "lens_id": lens.to_string(), "config": config});
    let execute = |config: Value| json!({"key": "x", "kind": "tool", "name": "X", "node_type": "lens_execute", "config": config});

    // A label the lens does not have yet: warned of, naming its labels, not refused.
    let c = w.create(w.alice, blueprint(lens_step(json!({"label": "production"})))).unwrap();
    let warned = c.report.warnings.iter().find(|i| i.code == IssueCode::LensLabelMissing).expect("warned");
    assert!(warned.message.contains("no label production yet (it has no labels yet)"), "{}", warned.message);
    assert_eq!(warned.field.as_deref(), Some("label"));
    // Which version will run is unknown: the head's Tone is not asked for.
    assert!(c.report.errors.is_empty(), "{:?}", c.report.errors);
    w.lenses.set_label(lens, LabelName::parse("label", "staging").unwrap(), Some(v2));
    let checked =
        block_on(w.service.validate(&w.as_(w.alice), c.workflow.id, VersionSelector::Head)).unwrap();
    let warned = checked.report.warnings.iter().find(|i| i.code == IssueCode::LensLabelMissing).unwrap();
    assert!(warned.message.contains("(it has labels staging)"), "{}", warned.message);

    // Once the label exists, the step is checked against its version: version 1 needs no Tone.
    w.lenses.set_label(lens, LabelName::parse("label", "production").unwrap(), Some(v1));
    let checked =
        block_on(w.service.validate(&w.as_(w.alice), c.workflow.id, VersionSelector::Head)).unwrap();
    assert!(checked.report.valid, "{:?}", checked.report.errors);
    assert!(checked.report.warnings.iter().all(|i| i.code != IssueCode::LensLabelMissing));
    // And a label at version 2 wants its Tone.
    let e = w.create(w.alice, blueprint(lens_step(json!({"label": "staging"})))).unwrap_err();
    assert!(e.message().contains("\"Tone\""), "{}", e.message());
    // lens_execute follows a label as well; latest is the head and always there.
    let c = w
        .create(w.alice, blueprint(execute(json!({"lens_id": lens.to_string(), "label": "production"}))))
        .unwrap();
    assert!(c.report.warnings.iter().all(|i| i.code != IssueCode::LensLabelMissing));
    let e = w.create(w.alice, blueprint(lens_step(json!({"label": "latest"})))).unwrap_err();
    assert!(e.message().contains("\"Tone\""), "the head's: {}", e.message());

    // A label and a pinned version: refused, with the fix.
    for step in [
        json!({"key": "x", "kind": "lens", "name": "X", "lens_id": lens.to_string(), "version_id": v1.to_string(), "config": {"label": "production"}}),
        execute(json!({"lens_id": lens.to_string(), "version_id": v1.to_string(), "label": "production"})),
    ] {
        let e = w.create(w.alice, blueprint(step)).unwrap_err();
        assert_eq!(e.code(), ErrorCode::InvalidArgument);
        assert!(e.message().contains("pins version_id and follows label production"), "{}", e.message());
        let hint = format!("{:?}", e.details());
        assert!(hint.contains("Remove version_id"), "{hint}");
    }
    // A label of bad syntax: refused at validation, naming the rule.
    for bad in ["Production", "prod uction", "", &"x".repeat(33)] {
        let e = w.create(w.alice, blueprint(lens_step(json!({"label": bad})))).unwrap_err();
        assert_eq!(e.code(), ErrorCode::InvalidArgument, "{bad}");
        assert!(e.message().contains("label must be a lens label"), "{}", e.message());
        let e = w
            .create(w.alice, blueprint(execute(json!({"lens_id": lens.to_string(), "label": bad}))))
            .unwrap_err();
        assert!(e.message().contains("label must be a lens label"), "{}", e.message());
    }
}
