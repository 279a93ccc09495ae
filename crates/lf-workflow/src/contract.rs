//! The public contract suite every [`WorkflowStore`] runs: the in-memory
//! store here, SQLite and PostgreSQL in lf-store.
//!
//! ```text
//! lf_workflow::contract::suite(Arc::new(MyStore::open().await?)).await;
//! ```
//!
//! Each check uses fresh owners and ids, so the suite runs against a store
//! that already holds data (a shared PostgreSQL database) and may run
//! several times. A failed check panics with what the contract expected.

use std::sync::Arc;

use lf_core::{
    ErrorCode, LensId, LenserId, LfResult, PageRequest, Reach, SearchQuery, Timestamp, WorkflowId,
};
use serde_json::json;

use crate::blueprint::{GraphDraft, RawConnection, RawConnector, RawStep};
use crate::catalog::catalog;
use crate::model::{
    Description, Title, VersionSelector, Visibility, Workflow, WorkflowFilter, WorkflowPatch,
    WorkflowVersion, WorkflowVersionId,
};
use crate::store::WorkflowStore;

/// Runs every check against `store`.
pub async fn suite(store: Arc<dyn WorkflowStore>) {
    let s = store.as_ref();
    round_trip(s).await;
    agents(s).await;
    reach(s).await;
    versions(s).await;
    patches_and_archive(s).await;
    listing(s).await;
    search(s).await;
    conflicts(s).await;
    schedules(s).await;
    followers(s).await;
}

pub(crate) struct Fixture {
    clock: i64,
}

fn step(key: &str, kind: &str, node_type: Option<&str>) -> RawStep {
    RawStep {
        key: key.into(),
        kind: kind.into(),
        name: format!("Step {key}"),
        node_type: node_type.map(str::to_owned),
        ..Default::default()
    }
}

fn link(from: &str, to: &str, param: &str) -> RawConnection {
    RawConnection {
        from_step: from.into(),
        to_step: to.into(),
        input_parameter: param.into(),
        ..Default::default()
    }
}

/// A graph that uses every stored field: a lens binding with a pinned
/// version, parameters and config with nested JSON in a chosen key order,
/// a connector with a capability, a JSONPath pick, a condition and a merge
/// strategy.
fn rich_graph() -> GraphDraft {
    let mut lens = step("research", "lens", None);
    lens.lens_id = Some(LensId::new().to_string());
    lens.version_id = Some(lf_core::VersionId::new().to_string());
    lens.parameters = Some(
        json!({"zeta": "last?", "alpha": {"nested": [1, 2.5, null, true, "ünïcödé ✓"]}})
            .as_object()
            .unwrap()
            .clone(),
    );
    lens.config = Some(json!({"max_tokens": 800, "model": "m"}).as_object().unwrap().clone());
    let mut notify = step("notify", "tool", Some("slack_notify"));
    notify.config =
        Some(json!({"text": "Digest: [[text]] 'quotes' \"double\""}).as_object().unwrap().clone());
    notify.connector = Some(RawConnector {
        provider: "slack".into(),
        connection_ref: "team-slack".into(),
        capability: Some("channel".into()),
    });
    let mut start = step("start", "trigger", Some("schedule_trigger"));
    start.config = Some(
        json!({"cronExpression": "0 9 * * 1", "timezone": "Europe/Istanbul"}).as_object().unwrap().clone(),
    );
    let mut to_notify = link("research", "notify", "text");
    to_notify.output_key = Some("$.text".into());
    to_notify.condition = Some(json!({"path": "$.text", "op": "truthy"}));
    to_notify.merge_strategy = Some("concat".into());
    let mut whole = link("start", "research", "context");
    whole.output_key = Some("output".into());
    GraphDraft::parse(vec![start, lens, notify], vec![whole, to_notify], catalog())
        .expect("the rich graph parses")
}

pub(crate) fn small_graph(n: usize) -> GraphDraft {
    let mut steps = vec![step("start", "trigger", Some("manual_trigger"))];
    let mut conns = Vec::new();
    for i in 0..n {
        let key = format!("log-{i}");
        steps.push(step(&key, "tool", Some("noop")));
        conns.push(link("start", &key, "input"));
    }
    GraphDraft::parse(steps, conns, catalog()).expect("the small graph parses")
}

/// A schedule trigger (09:00 in Istanbul every day) and one step.
fn scheduled_graph() -> GraphDraft {
    let mut start = step("start", "trigger", Some("schedule_trigger"));
    start.config = Some(
        json!({"cron": "0 9 * * *", "timezone": "Europe/Istanbul"}).as_object().cloned().unwrap_or_default(),
    );
    GraphDraft::parse(
        vec![start, step("log", "tool", Some("noop"))],
        vec![link("start", "log", "input")],
        catalog(),
    )
    .expect("the scheduled graph parses")
}

impl Fixture {
    pub(crate) fn new() -> Self {
        // Microseconds, in the last few years, apart for each run of the suite.
        Self {
            clock: 1_700_000_000_000_000
                + (WorkflowId::new().as_uuid().as_u128() % 1_000_000_000) as i64 * 1000,
        }
    }

    pub(crate) fn tick(&mut self) -> Timestamp {
        self.clock += 1_000;
        Timestamp::from_micros(self.clock)
    }

    fn workflow(
        &mut self,
        owner: LenserId,
        visibility: Visibility,
        graph: GraphDraft,
    ) -> (Workflow, WorkflowVersion) {
        let now = self.tick();
        let id = WorkflowId::new();
        let version = graph.into_version(id, 1, "Initial version.".into(), owner, now);
        let workflow = Workflow {
            id,
            owner,
            title: Title::parse("Contract workflow").unwrap(),
            description: None,
            visibility,
            public_runs: false,
            head_version_id: version.id,
            head_version: 1,
            created_at: now,
            updated_at: now,
            archived_at: None,
            agent: None,
        };
        (workflow, version)
    }

    pub(crate) async fn create(
        &mut self,
        s: &dyn WorkflowStore,
        owner: LenserId,
        visibility: Visibility,
    ) -> (Workflow, WorkflowVersion) {
        let (w, v) = self.workflow(owner, visibility, small_graph(1));
        s.create_workflow(&w, &v).await.expect("create_workflow");
        (w, v)
    }

    fn next_version(&mut self, head: &WorkflowVersion, graph: GraphDraft) -> WorkflowVersion {
        let now = self.tick();
        graph.into_version(
            head.workflow_id,
            head.number + 1,
            format!("Version {}.", head.number + 1),
            head.created_by,
            now,
        )
    }
}

fn code<T: std::fmt::Debug>(r: LfResult<T>) -> ErrorCode {
    match r {
        Ok(v) => panic!("expected an error, got {v:?}"),
        Err(e) => e.code(),
    }
}

async fn round_trip(s: &dyn WorkflowStore) {
    let mut f = Fixture::new();
    let owner = LenserId::new();
    let (mut w, v) = f.workflow(owner, Visibility::Private, rich_graph());
    w.description = Some(Description::parse("With 'quotes', \"double quotes\" and ✓").unwrap());
    s.create_workflow(&w, &v).await.expect("create_workflow");

    let got = s.get_workflow(Reach::Lenser(owner), w.id).await.expect("the owner reads a private workflow");
    assert_eq!(got, w, "get_workflow returns the workflow as stored");
    for which in [VersionSelector::Head, VersionSelector::Number(1), VersionSelector::Id(v.id)] {
        let got = s.get_version(Reach::Lenser(owner), w.id, which).await.expect("get_version");
        assert_eq!(
            got, v,
            "get_version by {which:?} returns every node and edge field as stored, in ordinal order"
        );
        let keys: Vec<&String> = got.nodes[1].parameters.keys().collect();
        assert_eq!(keys, ["zeta", "alpha"], "JSON objects keep their key order");
        let both = s.get_workflow_and_version(Reach::Everything, w.id, which).await.expect("both");
        assert_eq!(both, (w.clone(), v.clone()));
    }
    let list = s.list_versions(Reach::Lenser(owner), w.id).await.expect("list_versions");
    assert_eq!(list, vec![v.summary()], "one version, with its counts");
    assert_eq!((list[0].node_count, list[0].edge_count), (3, 2));
}

/// The AI Lenser a workflow and each version record (DESIGN: an agent is
/// the actor of the rows it writes) reads back from every read, and
/// `None` reads back `None`.
async fn agents(s: &dyn WorkflowStore) {
    let mut f = Fixture::new();
    let (owner, agent) = (LenserId::new(), LenserId::new());
    let word = format!("zq{}", WorkflowId::new().as_uuid().simple());
    let (mut by_agent, mut v1) = f.workflow(owner, Visibility::Public, small_graph(1));
    by_agent.title = Title::parse(format!("Made by an agent {word}")).unwrap();
    by_agent.agent = Some(agent);
    v1.agent = Some(agent);
    s.create_workflow(&by_agent, &v1).await.expect("create_workflow");
    // A person writes version 2, the agent version 3.
    let v2 = f.next_version(&v1, small_graph(2));
    assert_eq!(v2.agent, None);
    s.append_version(by_agent.id, v1.id, &v2, &WorkflowPatch::default()).await.expect("append_version");
    let v3 = WorkflowVersion { agent: Some(agent), ..f.next_version(&v2, small_graph(1)) };
    s.append_version(by_agent.id, v2.id, &v3, &WorkflowPatch::default()).await.expect("append_version");
    let (by_person, p1) = f.workflow(owner, Visibility::Public, small_graph(1));
    s.create_workflow(&by_person, &p1).await.expect("create_workflow");

    let got = s.get_workflow(Reach::Lenser(owner), by_agent.id).await.unwrap();
    assert_eq!(got.agent, Some(agent), "get_workflow reads the workflow's agent");
    assert_eq!(
        s.get_workflow(Reach::Everything, by_person.id).await.unwrap().agent,
        None,
        "and None as None"
    );
    for (which, expected) in [
        (VersionSelector::Number(1), Some(agent)),
        (VersionSelector::Number(2), None),
        (VersionSelector::Head, Some(agent)),
        (VersionSelector::Id(v2.id), None),
    ] {
        let v = s.get_version(Reach::Everything, by_agent.id, which).await.unwrap();
        assert_eq!(v.agent, expected, "get_version by {which:?} reads the version's agent");
        let (w, v) = s.get_workflow_and_version(Reach::Everything, by_agent.id, which).await.unwrap();
        assert_eq!((w.agent, v.agent), (Some(agent), expected), "and so does the joined read");
    }
    let (_, v) =
        s.get_workflow_and_version(Reach::Everything, by_person.id, VersionSelector::Head).await.unwrap();
    assert_eq!(v.agent, None);
    let listed = s.list_versions(Reach::Everything, by_agent.id).await.unwrap();
    assert_eq!(
        listed.iter().map(|v| (v.number, v.agent)).collect::<Vec<_>>(),
        [(3, Some(agent)), (2, None), (1, Some(agent))],
        "list_versions reads each version's agent"
    );
    let mine = WorkflowFilter { owner: Some(owner), ..Default::default() };
    let page = s.list_workflows(Reach::Everything, &mine, PageRequest::default()).await.unwrap();
    assert_eq!(
        page.items.iter().map(|w| (w.id, w.agent)).collect::<Vec<_>>(),
        [(by_person.id, None), (by_agent.id, Some(agent))],
        "list_workflows reads each workflow's agent"
    );
    let q = SearchQuery::parse(&word).unwrap();
    let found = s.search_workflows(Reach::Everything, &q, PageRequest::default()).await.unwrap();
    assert_eq!(found.items.iter().map(|w| w.agent).collect::<Vec<_>>(), [Some(agent)], "and so does search");
}

async fn reach(s: &dyn WorkflowStore) {
    let mut f = Fixture::new();
    let (alice, bob) = (LenserId::new(), LenserId::new());
    let (private, _) = f.create(s, alice, Visibility::Private).await;
    let (unlisted, _) = f.create(s, alice, Visibility::Unlisted).await;
    let (public, _) = f.create(s, alice, Visibility::Public).await;
    let bob_r = Reach::Lenser(bob);

    assert_eq!(
        code(s.get_workflow(bob_r, private.id).await),
        ErrorCode::NotFound,
        "a private workflow is not found by others"
    );
    assert_eq!(code(s.get_version(bob_r, private.id, VersionSelector::Head).await), ErrorCode::NotFound);
    assert_eq!(code(s.list_versions(bob_r, private.id).await), ErrorCode::NotFound);
    assert_eq!(
        code(s.get_workflow_and_version(bob_r, private.id, VersionSelector::Head).await),
        ErrorCode::NotFound
    );
    s.get_workflow(bob_r, unlisted.id).await.expect("an unlisted workflow is readable by id");
    s.get_version(bob_r, unlisted.id, VersionSelector::Head).await.expect("and so is its graph");
    s.get_workflow(bob_r, public.id).await.expect("a public workflow is readable");
    s.get_workflow(Reach::Everything, private.id).await.expect("the service reads everything");
    assert_eq!(code(s.get_workflow(Reach::Everything, WorkflowId::new()).await), ErrorCode::NotFound);

    let by_alice = WorkflowFilter { owner: Some(alice), ..Default::default() };
    let seen = s.list_workflows(bob_r, &by_alice, PageRequest::default()).await.unwrap();
    assert_eq!(
        seen.items.iter().map(|w| w.id).collect::<Vec<_>>(),
        vec![public.id],
        "others list public workflows only"
    );
    assert_eq!(seen.total, 1);
    let unlisted_only = WorkflowFilter { visibility: Some(Visibility::Unlisted), ..by_alice };
    assert_eq!(
        s.list_workflows(bob_r, &unlisted_only, PageRequest::default()).await.unwrap().total,
        0,
        "unlisted is never listed to others"
    );
    let mine = s.list_workflows(Reach::Lenser(alice), &by_alice, PageRequest::default()).await.unwrap();
    assert_eq!(mine.total, 3, "the owner lists all of hers");
    let all = s.list_workflows(Reach::Everything, &by_alice, PageRequest::default()).await.unwrap();
    assert_eq!(all.total, 3, "the service lists everything");
}

async fn versions(s: &dyn WorkflowStore) {
    let mut f = Fixture::new();
    let owner = LenserId::new();
    let (w, v1) = f.create(s, owner, Visibility::Public).await;
    let v2 = f.next_version(&v1, small_graph(2));
    let later = f.tick();
    let patch = WorkflowPatch {
        updated_at: Some(later),
        title: Some(Title::parse("Second").unwrap()),
        ..Default::default()
    };
    s.append_version(w.id, v1.id, &v2, &patch).await.expect("append_version");

    let got = s.get_workflow(Reach::Everything, w.id).await.unwrap();
    assert_eq!((got.head_version_id, got.head_version), (v2.id, 2), "the appended version is the head");
    assert_eq!((got.updated_at, got.title.as_str()), (later, "Second"), "the patch is applied with it");
    assert_eq!(got.created_at, w.created_at);
    assert_eq!(s.get_version(Reach::Everything, w.id, VersionSelector::Head).await.unwrap(), v2);
    assert_eq!(
        s.get_version(Reach::Everything, w.id, VersionSelector::Number(1)).await.unwrap(),
        v1,
        "older versions never change"
    );
    let list = s.list_versions(Reach::Everything, w.id).await.unwrap();
    assert_eq!(list.iter().map(|v| v.number).collect::<Vec<_>>(), vec![2, 1], "newest first");
    assert_eq!(list[0].changelog, "Version 2.");

    let (other, ov) = f.create(s, owner, Visibility::Public).await;
    assert_eq!(
        code(s.get_version(Reach::Everything, w.id, VersionSelector::Id(ov.id)).await),
        ErrorCode::NotFound,
        "a version of another workflow is not one of this one's"
    );
    assert_eq!(
        code(s.get_version(Reach::Everything, other.id, VersionSelector::Number(9)).await),
        ErrorCode::NotFound
    );
    let stray = f.next_version(&ov, small_graph(1));
    assert_eq!(
        code(s.append_version(WorkflowId::new(), ov.id, &stray, &WorkflowPatch::default()).await),
        ErrorCode::NotFound
    );
}

async fn patches_and_archive(s: &dyn WorkflowStore) {
    let mut f = Fixture::new();
    let owner = LenserId::new();
    let (w, _) = f.create(s, owner, Visibility::Private).await;
    let t = f.tick();
    let patch = WorkflowPatch {
        title: Some(Title::parse("Renamed").unwrap()),
        description: Some(Some(Description::parse("now described").unwrap())),
        visibility: Some(Visibility::Unlisted),
        public_runs: Some(true),
        archived_at: Some(Some(t)),
        updated_at: Some(t),
    };
    assert!(!w.public_runs);
    s.update_workflow(w.id, &patch).await.expect("update_workflow");
    let got = s.get_workflow(Reach::Everything, w.id).await.unwrap();
    assert!(got.public_runs, "public_runs is patched");
    assert_eq!(got.title.as_str(), "Renamed");
    assert_eq!(got.description.as_ref().map(Description::as_str), Some("now described"));
    assert_eq!((got.visibility, got.archived_at, got.updated_at), (Visibility::Unlisted, Some(t), t));
    let mine = WorkflowFilter { owner: Some(owner), ..Default::default() };
    assert_eq!(
        s.list_workflows(Reach::Everything, &mine, PageRequest::default()).await.unwrap().total,
        0,
        "archived workflows are not listed"
    );
    let with = WorkflowFilter { include_archived: true, ..mine };
    assert_eq!(
        s.list_workflows(Reach::Everything, &with, PageRequest::default()).await.unwrap().total,
        1,
        "unless asked"
    );
    s.get_workflow(Reach::Lenser(LenserId::new()), w.id)
        .await
        .expect("an archived unlisted workflow is still readable by id");

    s.update_workflow(
        w.id,
        &WorkflowPatch { description: Some(None), archived_at: Some(None), ..Default::default() },
    )
    .await
    .unwrap();
    let got = s.get_workflow(Reach::Everything, w.id).await.unwrap();
    assert_eq!((got.description, got.archived_at), (None, None), "Some(None) clears");
    assert!(got.public_runs, "None leaves public_runs as it was");
    assert_eq!(got.title.as_str(), "Renamed", "None leaves a field as it was");
    assert_eq!(
        code(s.update_workflow(WorkflowId::new(), &WorkflowPatch::default()).await),
        ErrorCode::NotFound
    );

    let (open, v) = f.workflow(owner, Visibility::Public, small_graph(1));
    let open = Workflow { public_runs: true, ..open };
    s.create_workflow(&open, &v).await.expect("create_workflow");
    assert_eq!(s.get_workflow(Reach::Everything, open.id).await.unwrap(), open, "public_runs is kept");
}

async fn listing(s: &dyn WorkflowStore) {
    let mut f = Fixture::new();
    let owner = LenserId::new();
    let mut made = Vec::new();
    for vis in [
        Visibility::Public,
        Visibility::Private,
        Visibility::Public,
        Visibility::Unlisted,
        Visibility::Public,
    ] {
        made.push(f.create(s, owner, vis).await.0);
    }
    let mine = WorkflowFilter { owner: Some(owner), ..Default::default() };
    let page = s
        .list_workflows(Reach::Everything, &mine, PageRequest::new(Some(2), Some(0)).unwrap())
        .await
        .unwrap();
    assert_eq!(page.total, 5);
    assert_eq!(
        page.items.iter().map(|w| w.id).collect::<Vec<_>>(),
        vec![made[4].id, made[3].id],
        "newest first"
    );
    assert!(page.has_more());
    let page = s
        .list_workflows(Reach::Everything, &mine, PageRequest::new(Some(2), Some(4)).unwrap())
        .await
        .unwrap();
    assert_eq!(page.items.iter().map(|w| w.id).collect::<Vec<_>>(), vec![made[0].id]);
    assert!(!page.has_more());
    let page = s
        .list_workflows(Reach::Everything, &mine, PageRequest::new(Some(2), Some(10)).unwrap())
        .await
        .unwrap();
    assert!(page.items.is_empty() && page.total == 5, "total counts the whole listing past its end");
    let public = WorkflowFilter { visibility: Some(Visibility::Public), ..mine };
    assert_eq!(s.list_workflows(Reach::Everything, &public, PageRequest::default()).await.unwrap().total, 3);
}

async fn search(s: &dyn WorkflowStore) {
    let mut f = Fixture::new();
    let (me, other) = (LenserId::new(), LenserId::new());
    // A word no other workflow of a shared database has.
    let word = format!("zq{}", WorkflowId::new().as_uuid().simple());
    let mut make = async |owner, visibility, title: String, description: Option<String>, archived: bool| {
        let (mut w, v) = f.workflow(owner, visibility, small_graph(1));
        w.title = Title::parse(title).unwrap();
        w.description = description.map(|d| Description::parse(d).unwrap());
        s.create_workflow(&w, &v).await.expect("create_workflow");
        if archived {
            let patch = WorkflowPatch { archived_at: Some(Some(w.created_at)), ..Default::default() };
            s.update_workflow(w.id, &patch).await.unwrap();
        }
        w.id
    };
    let titled = format!("Nightly {} DIGEST", word.to_uppercase());
    let in_title = make(me, Visibility::Private, titled.clone(), None, false).await;
    let in_description = make(
        other,
        Visibility::Public,
        "Weekly report".into(),
        Some(format!("Sends the pre{word}ed notes")),
        false,
    )
    .await;
    let others_unlisted = make(other, Visibility::Unlisted, titled.clone(), None, false).await;
    let others_private = make(other, Visibility::Private, titled.clone(), None, false).await;
    let archived = make(me, Visibility::Public, titled.clone(), None, true).await;
    let _unrelated = make(me, Visibility::Public, "Something else".into(), None, false).await;
    let ids = |page: lf_core::Page<Workflow>| page.items.iter().map(|w| w.id).collect::<Vec<_>>();

    let q = SearchQuery::parse(&word).unwrap();
    let page = s.search_workflows(Reach::Everything, &q, PageRequest::default()).await.unwrap();
    assert_eq!(
        ids(page),
        vec![others_private, others_unlisted, in_description, in_title],
        "title or description, any case, inside a longer word too, archived left out, newest first"
    );
    let page = s.search_workflows(Reach::Lenser(me), &q, PageRequest::default()).await.unwrap();
    assert_eq!(page.total, 2);
    assert_eq!(
        ids(page),
        vec![in_description, in_title],
        "others' unlisted and private workflows are not listed"
    );
    let page = s
        .search_workflows(Reach::Lenser(other), &q, PageRequest::new(Some(1), Some(1)).unwrap())
        .await
        .unwrap();
    assert_eq!((page.total, page.has_more()), (3, true), "the owner lists their unlisted and private ones");
    assert_eq!(ids(page), vec![others_unlisted]);
    let both = SearchQuery::parse(&format!("digest {word}")).unwrap();
    let page = s.search_workflows(Reach::Lenser(me), &both, PageRequest::default()).await.unwrap();
    assert_eq!(ids(page), vec![in_title], "every word must match");
    assert!(
        !ids(s.search_workflows(Reach::Everything, &q, PageRequest::default()).await.unwrap())
            .contains(&archived)
    );
}

async fn conflicts(s: &dyn WorkflowStore) {
    let mut f = Fixture::new();
    let owner = LenserId::new();
    let (w, v1) = f.create(s, owner, Visibility::Public).await;
    assert_eq!(code(s.create_workflow(&w, &v1).await), ErrorCode::Conflict, "an id is taken once");

    // A second workflow reusing the first one's version id writes nothing.
    let (mut w2, mut v2) = f.workflow(owner, Visibility::Public, small_graph(1));
    v2.id = v1.id;
    w2.head_version_id = v1.id;
    assert_eq!(code(s.create_workflow(&w2, &v2).await), ErrorCode::Conflict);
    assert_eq!(
        code(s.get_workflow(Reach::Everything, w2.id).await),
        ErrorCode::NotFound,
        "a refused create writes nothing"
    );
    // Nor does one reusing a node id.
    let (w3, mut v3) = f.workflow(owner, Visibility::Public, small_graph(1));
    v3.nodes[0].id = v1.nodes[0].id;
    assert_eq!(code(s.create_workflow(&w3, &v3).await), ErrorCode::Conflict);
    assert_eq!(code(s.get_workflow(Reach::Everything, w3.id).await), ErrorCode::NotFound);

    let next = f.next_version(&v1, small_graph(2));
    s.append_version(w.id, v1.id, &next, &WorkflowPatch::default()).await.unwrap();
    let stale = f.next_version(&v1, small_graph(3));
    assert_eq!(
        code(s.append_version(w.id, v1.id, &stale, &WorkflowPatch::default()).await),
        ErrorCode::Conflict,
        "a stale head is refused"
    );
    let mut same_number = f.next_version(&v1, small_graph(3));
    same_number.number = 2;
    assert_eq!(
        code(s.append_version(w.id, next.id, &same_number, &WorkflowPatch::default()).await),
        ErrorCode::Conflict,
        "a number is taken once"
    );
    let mut reused = f.next_version(&next, small_graph(1));
    reused.id = WorkflowVersionId::from_uuid(v1.id.as_uuid());
    assert_eq!(
        code(s.append_version(w.id, next.id, &reused, &WorkflowPatch::default()).await),
        ErrorCode::Conflict,
        "a version id is taken once"
    );
    let head = s.get_version(Reach::Everything, w.id, VersionSelector::Head).await.unwrap();
    assert_eq!(head, next, "refused appends change nothing");
    assert_eq!(s.list_versions(Reach::Everything, w.id).await.unwrap().len(), 2);
}

/// The event followers the store keeps with each head: listed by their
/// event, removed by a head that follows none, hidden while archived.
async fn followers(s: &dyn WorkflowStore) {
    use lf_core::EventKind::{BattleClosed, LensCreated};
    let mut f = Fixture::new();
    let owner = LenserId::new();
    let mut start = step("start", "trigger", Some("event_trigger"));
    start.config = Some(json!({"event_type": "lens.created"}).as_object().cloned().unwrap_or_default());
    let graph = GraphDraft::parse(
        vec![start, step("log", "tool", Some("noop"))],
        vec![link("start", "log", "input")],
        catalog(),
    )
    .expect("the event graph parses");
    let (w, v1) = f.workflow(owner, Visibility::Private, graph);
    s.create_workflow(&w, &v1).await.expect("create_workflow");
    let mine = async |kind| -> Vec<crate::follow::Follower> {
        s.followers(kind).await.expect("followers").into_iter().filter(|x| x.workflow_id == w.id).collect()
    };
    let expected = crate::follow::Follower { workflow_id: w.id, owner, version_id: v1.id, kind: LensCreated };
    assert_eq!(mine(LensCreated).await, vec![expected], "listed by its event, as written");
    assert!(mine(BattleClosed).await.is_empty(), "and by no other");
    let t = f.tick();
    s.update_workflow(w.id, &WorkflowPatch { archived_at: Some(Some(t)), ..Default::default() })
        .await
        .unwrap();
    assert!(mine(LensCreated).await.is_empty(), "an archived workflow follows nothing");
    s.update_workflow(w.id, &WorkflowPatch { archived_at: Some(None), ..Default::default() }).await.unwrap();
    let v2 = f.next_version(&v1, small_graph(1));
    s.append_version(w.id, v1.id, &v2, &WorkflowPatch::default()).await.unwrap();
    assert!(mine(LensCreated).await.is_empty(), "a head with a manual trigger follows nothing");
}

/// The schedule rows the store keeps with each head: written with a
/// scheduled head, removed by an unscheduled one, due at their tick,
/// moved only from the tick they were read with, hidden while archived.
async fn schedules(s: &dyn WorkflowStore) {
    let mut f = Fixture::new();
    let owner = LenserId::new();
    let (w, v1) = f.workflow(owner, Visibility::Private, scheduled_graph());
    s.create_workflow(&w, &v1).await.expect("create_workflow");
    let row = crate::schedule::ScheduleRow::for_head(owner, &v1, v1.created_at).expect("a scheduled head");
    assert!(row.next_fire_at > v1.created_at);
    let mine = async |now: Timestamp| -> Vec<crate::schedule::ScheduleRow> {
        let all = s.due_schedules(now, 10_000).await.expect("due_schedules");
        all.into_iter().filter(|r| r.workflow_id == w.id).collect()
    };
    assert!(mine(row.next_fire_at.plus_micros(-1)).await.is_empty(), "not due before its tick");
    assert_eq!(mine(row.next_fire_at).await, vec![row.clone()], "due at its tick, as written");
    assert!(s.next_schedule().await.unwrap().is_some_and(|t| t <= row.next_fire_at));

    let later = row.next_fire_at.plus_micros(86_400_000_000);
    assert!(s.advance_schedule(&row, Some(later)).await.unwrap(), "moved from the tick it was read with");
    assert!(!s.advance_schedule(&row, Some(later)).await.unwrap(), "a second move from the same tick fails");
    let moved = crate::schedule::ScheduleRow { next_fire_at: later, ..row.clone() };
    assert!(mine(later.plus_micros(-1)).await.is_empty());
    assert_eq!(mine(later).await, vec![moved.clone()]);

    let v2 = f.next_version(&v1, small_graph(1));
    s.append_version(w.id, v1.id, &v2, &WorkflowPatch::default()).await.unwrap();
    assert!(mine(later.plus_micros(1_000_000_000_000)).await.is_empty(), "an unscheduled head removes it");
    assert!(!s.advance_schedule(&moved, Some(later)).await.unwrap(), "and nothing moves it");

    let v3 = f.next_version(&v2, scheduled_graph());
    s.append_version(w.id, v2.id, &v3, &WorkflowPatch::default()).await.unwrap();
    let row3 = crate::schedule::ScheduleRow::for_head(owner, &v3, v3.created_at).unwrap();
    assert_eq!(row3.version_id, v3.id);
    assert_eq!(mine(row3.next_fire_at).await, vec![row3.clone()], "a scheduled head writes it again");
    assert!(!s.advance_schedule(&row, Some(later)).await.unwrap(), "a row read from an older head is stale");

    let t = f.tick();
    s.update_workflow(w.id, &WorkflowPatch { archived_at: Some(Some(t)), ..Default::default() })
        .await
        .unwrap();
    assert!(mine(row3.next_fire_at).await.is_empty(), "an archived workflow is not due");
    s.update_workflow(w.id, &WorkflowPatch { archived_at: Some(None), ..Default::default() }).await.unwrap();
    assert_eq!(mine(row3.next_fire_at).await.len(), 1);
    assert!(s.advance_schedule(&row3, None).await.unwrap(), "None retires it");
    assert!(mine(row3.next_fire_at.plus_micros(1_000_000_000_000)).await.is_empty());
}

#[cfg(test)]
mod tests {
    #[test]
    fn memory_store_passes_twice() {
        let store = std::sync::Arc::new(crate::MemoryWorkflowStore::new());
        pollster::block_on(super::suite(store.clone()));
        pollster::block_on(super::suite(store));
    }
}
