//! The public contract suite every [`LensStore`] runs: the in-memory store
//! here, SQLite and PostgreSQL in lf-store.
//!
//! ```text
//! lf_lens::contract::suite(Arc::new(MyStore::open().await?)).await;
//! ```
//!
//! Each check uses fresh owners and unique words, so the suite runs against a
//! store that already holds data (a shared PostgreSQL database) and may run
//! several times. A failed check panics with what the contract expected.

use std::sync::Arc;

use lf_core::{ErrorCode, LensId, LenserId, LfResult, PageRequest, Reach, RunId, Timestamp, WorkflowId};

use crate::labels::{LabelChange, LabelChanged, LabelMove, LensLabel};
use crate::model::{
    Description, Lens, LensDraft, LensFilter, LensPatch, LensRun, LensStatus, LensVersion, SearchQuery,
    Semver, TemplateBody, Title, VersionSelector, Visibility,
};
use crate::store::LensStore;
use crate::template::TypeHint;
use crate::versioning::{ParamDeclaration, build_params};
use lf_core::LabelName;

/// Runs every check against `store`.
pub async fn suite(store: Arc<dyn LensStore>) {
    let s = store.as_ref();
    round_trip(s).await;
    reach(s).await;
    versions(s).await;
    patches_and_deletion(s).await;
    listing(s).await;
    search(s).await;
    conflicts(s).await;
    runs(s).await;
    agents(s).await;
    labels(s).await;
    labels_protected(s).await;
    labels_racing(s).await;
}

fn unique_word() -> String {
    // Letters only, so every backend's tokenizer keeps it one word.
    let n = LensId::new().as_uuid().as_u128();
    (0..12).map(|i| (b'a' + ((n >> (i * 5)) % 26) as u8) as char).collect()
}

struct Fixture {
    clock: i64,
}

impl Fixture {
    fn new() -> Self {
        // Microseconds, within the last few years, increasing per lens.
        Self {
            clock: 1_700_000_000_000_000 + (LensId::new().as_uuid().as_u128() % 1_000_000_000) as i64 * 1000,
        }
    }

    fn tick(&mut self) -> Timestamp {
        self.clock += 1_000;
        Timestamp::from_micros(self.clock)
    }

    fn lens(
        &mut self,
        owner: LenserId,
        title: &str,
        body: &str,
        visibility: Visibility,
    ) -> (Lens, LensVersion) {
        let now = self.tick();
        let body = TemplateBody::parse(format!("{body} {}", "filler text for the minimum length ".repeat(2)))
            .unwrap();
        let params = build_params(&body, &[], &[]).unwrap();
        let (lens, version) =
            LensDraft { visibility, ..LensDraft::new(owner, Title::parse(title).unwrap(), body, params) }
                .build(now);
        (lens, version)
    }

    async fn create(
        &mut self,
        s: &dyn LensStore,
        owner: LenserId,
        title: &str,
        body: &str,
        visibility: Visibility,
    ) -> (Lens, LensVersion) {
        let (lens, version) = self.lens(owner, title, body, visibility);
        s.create_lens(&lens, &version).await.expect("create_lens");
        (lens, version)
    }
}

fn code<T: std::fmt::Debug>(r: LfResult<T>) -> ErrorCode {
    match r {
        Ok(v) => panic!("expected an error, got {v:?}"),
        Err(e) => e.code(),
    }
}

async fn round_trip(s: &dyn LensStore) {
    let mut f = Fixture::new();
    let owner = LenserId::new();
    let (mut lens, mut version) = f.lens(
        owner,
        "Round trip — ünïcödé ✓",
        "Write about [[Topic]] in [[Tone:select!]] for [[Day:date]]",
        Visibility::Private,
    );
    lens.description = Some(Description::parse("A description with 'quotes' and \"double quotes\"").unwrap());
    lens.parent_lens_id = Some(LensId::new());
    version.params = build_params(
        &version.body,
        &[ParamDeclaration::new("tone")
            .description("How it sounds")
            .options(["formal", "casual"])
            .default_value("casual")],
        &[],
    )
    .unwrap();
    s.create_lens(&lens, &version).await.expect("create_lens");

    let got = s.get_lens(Reach::Lenser(owner), lens.id).await.expect("owner reads own private lens");
    assert_eq!(got, lens, "get_lens returns the lens as stored");
    let got = s.get_version(Reach::Lenser(owner), lens.id, VersionSelector::Head).await.expect("head");
    assert_eq!(got, version, "get_version returns the version as stored, parameters in body order");
    assert_eq!(got.params[1].type_hint, Some(TypeHint::Select));
    assert_eq!(got.params[2].type_hint, Some(TypeHint::Date));
    let got =
        s.get_version(Reach::Everything, lens.id, VersionSelector::Id(version.id)).await.expect("by id");
    assert_eq!(got, version);
    let got = s
        .get_version(Reach::Everything, lens.id, VersionSelector::Semver(Semver::INITIAL))
        .await
        .expect("by semver");
    assert_eq!(got, version);
    for which in
        [VersionSelector::Head, VersionSelector::Id(version.id), VersionSelector::Semver(Semver::INITIAL)]
    {
        let both =
            s.get_lens_and_version(Reach::Lenser(owner), lens.id, which).await.expect("lens and version");
        assert_eq!(both, (lens.clone(), version.clone()), "get_lens_and_version by {which:?}");
    }

    // A body is stored byte for byte, whitespace and odd characters included.
    let (mut l2, mut v2) = f.lens(owner, "Verbatim", "x", Visibility::Public);
    let odd = "  \t leading space, NUL-free odd text: ' \" \\ % _ [[ :uuid ]] \u{202e}rtl\u{202c} 🦀 \r\n trailing  \n".repeat(2);
    v2.body = TemplateBody::parse(odd.clone()).unwrap();
    v2.params = build_params(&v2.body, &[], &[]).unwrap();
    l2.head_version_id = v2.id;
    s.create_lens(&l2, &v2).await.expect("create_lens");
    let got = s.get_version(Reach::Everything, l2.id, VersionSelector::Head).await.unwrap();
    assert_eq!(got.body.as_str(), odd);
}

async fn reach(s: &dyn LensStore) {
    let mut f = Fixture::new();
    let (alice, bob) = (LenserId::new(), LenserId::new());
    let (private, _) = f.create(s, alice, "Private", "[[A]]", Visibility::Private).await;
    let (community, _) = f.create(s, alice, "Community", "[[A]]", Visibility::Community).await;
    let (public, _) = f.create(s, alice, "Public", "[[A]]", Visibility::Public).await;

    assert_eq!(
        code(s.get_lens(Reach::Lenser(bob), private.id).await),
        ErrorCode::NotFound,
        "private is hidden from others"
    );
    assert_eq!(
        code(s.get_version(Reach::Lenser(bob), private.id, VersionSelector::Head).await),
        ErrorCode::NotFound,
        "and so are its versions"
    );
    assert_eq!(code(s.list_versions(Reach::Lenser(bob), private.id).await), ErrorCode::NotFound);
    s.get_lens(Reach::Lenser(bob), community.id).await.expect("community is readable by signed-in lensers");
    s.get_lens(Reach::Lenser(bob), public.id).await.expect("public is readable");
    s.get_lens(Reach::Everything, private.id).await.expect("the service reads everything");
    assert_eq!(code(s.get_lens(Reach::Everything, LensId::new()).await), ErrorCode::NotFound);

    let by_alice = LensFilter { owner: Some(alice), ..Default::default() };
    let seen = s.list_lenses(Reach::Lenser(bob), &by_alice, PageRequest::default()).await.unwrap();
    assert_eq!(seen.total, 2, "bob lists alice's community and public lenses only");
    assert!(seen.items.iter().all(|l| l.id != private.id));
    let seen = s.list_lenses(Reach::Lenser(alice), &by_alice, PageRequest::default()).await.unwrap();
    assert_eq!(seen.total, 3);
}

async fn versions(s: &dyn LensStore) {
    let mut f = Fixture::new();
    let owner = LenserId::new();
    let (lens, v1) = f.create(s, owner, "Versions", "Say [[A]]", Visibility::Public).await;
    let (_, mut v2) = f.lens(owner, "x", "Say [[A]] and [[B!]]", Visibility::Public);
    v2.lens_id = lens.id;
    v2.semver = Semver { major: 1, minor: 1, patch: 0 };
    v2.changelog = "Added optional parameter B.".into();
    let later = f.tick();
    s.append_version(lens.id, v1.id, &v2, &LensPatch { updated_at: Some(later), ..Default::default() })
        .await
        .expect("append_version");

    let head = s.get_version(Reach::Everything, lens.id, VersionSelector::Head).await.unwrap();
    assert_eq!(head, v2, "the appended version is the head");
    let got = s.get_lens(Reach::Everything, lens.id).await.unwrap();
    assert_eq!(got.head_version_id, v2.id);
    assert_eq!(got.head_semver, v2.semver);
    assert_eq!(got.updated_at, later);
    let old = s.get_version(Reach::Everything, lens.id, VersionSelector::Id(v1.id)).await.unwrap();
    assert_eq!(old, v1, "older versions are unchanged");

    let list = s.list_versions(Reach::Everything, lens.id).await.unwrap();
    assert_eq!(list.iter().map(|v| v.id).collect::<Vec<_>>(), vec![v2.id, v1.id], "newest first");
    assert_eq!(list[0].params.len(), 2);
    assert_eq!(list[0].changelog, "Added optional parameter B.");

    let (other, ov) = f.create(s, owner, "Other", "[[A]]", Visibility::Public).await;
    assert_eq!(
        code(s.get_version(Reach::Everything, lens.id, VersionSelector::Id(ov.id)).await),
        ErrorCode::NotFound,
        "a version of another lens is not a version of this one"
    );
    assert_eq!(
        code(
            s.get_version(
                Reach::Everything,
                other.id,
                VersionSelector::Semver(Semver { major: 9, minor: 0, patch: 0 })
            )
            .await
        ),
        ErrorCode::NotFound
    );
}

async fn patches_and_deletion(s: &dyn LensStore) {
    let mut f = Fixture::new();
    let owner = LenserId::new();
    let word = unique_word();
    let (lens, v1) = f.create(s, owner, &format!("Patch {word}"), "[[A]]", Visibility::Private).await;
    let t = f.tick();
    s.update_lens(
        lens.id,
        &LensPatch {
            title: Some(Title::parse(format!("Renamed {word}")).unwrap()),
            description: Some(Some(Description::parse("now described").unwrap())),
            visibility: Some(Visibility::Community),
            status: Some(LensStatus::Archived),
            archived_at: Some(Some(t)),
            updated_at: Some(t),
            ..Default::default()
        },
    )
    .await
    .expect("update_lens");
    let got = s.get_lens(Reach::Everything, lens.id).await.unwrap();
    assert_eq!(got.title.as_str(), format!("Renamed {word}"));
    assert_eq!(got.description.as_ref().map(|d| d.as_str()), Some("now described"));
    assert_eq!(got.visibility, Visibility::Community);
    assert_eq!(got.status, LensStatus::Archived);
    assert_eq!(got.archived_at, Some(t));
    assert_eq!(got.updated_at, t);
    assert_eq!(got.created_at, lens.created_at, "created_at never changes");

    s.update_lens(
        lens.id,
        &LensPatch {
            description: Some(None),
            status: Some(LensStatus::Published),
            archived_at: Some(None),
            ..Default::default()
        },
    )
    .await
    .unwrap();
    let got = s.get_lens(Reach::Everything, lens.id).await.unwrap();
    assert_eq!(got.description, None, "Some(None) clears the description");
    assert_eq!(got.archived_at, None);
    assert_eq!(got.title.as_str(), format!("Renamed {word}"), "None leaves a field as it was");

    s.update_lens(lens.id, &LensPatch { deleted_at: Some(f.tick()), ..Default::default() }).await.unwrap();
    assert_eq!(
        code(s.get_lens(Reach::Everything, lens.id).await),
        ErrorCode::NotFound,
        "deleted lenses are gone"
    );
    assert_eq!(
        code(s.get_version(Reach::Everything, lens.id, VersionSelector::Head).await),
        ErrorCode::NotFound
    );
    assert_eq!(code(s.list_versions(Reach::Everything, lens.id).await), ErrorCode::NotFound);
    assert_eq!(code(s.update_lens(lens.id, &LensPatch::default()).await), ErrorCode::NotFound);
    let (_, mut v2) = f.lens(owner, "x", "[[A]]", Visibility::Public);
    v2.lens_id = lens.id;
    v2.semver = Semver { major: 1, minor: 0, patch: 1 };
    assert_eq!(code(s.append_version(lens.id, v1.id, &v2, &LensPatch::default()).await), ErrorCode::NotFound);
    let all = LensFilter { owner: Some(owner), include_archived: true, ..Default::default() };
    assert_eq!(s.list_lenses(Reach::Everything, &all, PageRequest::default()).await.unwrap().total, 0);
    let q = SearchQuery::parse(&word).unwrap();
    assert_eq!(s.search_lenses(Reach::Everything, &q, None, PageRequest::default()).await.unwrap().total, 0);
    assert_eq!(code(s.update_lens(LensId::new(), &LensPatch::default()).await), ErrorCode::NotFound);
}

async fn listing(s: &dyn LensStore) {
    let mut f = Fixture::new();
    let owner = LenserId::new();
    let mut made = Vec::new();
    for (i, vis) in [
        Visibility::Public,
        Visibility::Community,
        Visibility::Private,
        Visibility::Public,
        Visibility::Public,
    ]
    .into_iter()
    .enumerate()
    {
        made.push(f.create(s, owner, &format!("List {i}"), "[[A]]", vis).await.0);
    }
    let t = f.tick();
    s.update_lens(
        made[3].id,
        &LensPatch { status: Some(LensStatus::Archived), archived_at: Some(Some(t)), ..Default::default() },
    )
    .await
    .unwrap();

    let mine = LensFilter { owner: Some(owner), ..Default::default() };
    let page =
        s.list_lenses(Reach::Everything, &mine, PageRequest::new(Some(2), Some(0)).unwrap()).await.unwrap();
    assert_eq!(page.total, 4, "archived lenses are left out by default");
    assert_eq!(
        page.items.iter().map(|l| l.id).collect::<Vec<_>>(),
        vec![made[4].id, made[2].id],
        "newest first"
    );
    assert!(page.has_more());
    let page =
        s.list_lenses(Reach::Everything, &mine, PageRequest::new(Some(2), Some(2)).unwrap()).await.unwrap();
    assert_eq!(page.items.iter().map(|l| l.id).collect::<Vec<_>>(), vec![made[1].id, made[0].id]);
    assert!(!page.has_more());
    let page =
        s.list_lenses(Reach::Everything, &mine, PageRequest::new(Some(2), Some(10)).unwrap()).await.unwrap();
    assert!(page.items.is_empty());
    assert_eq!(page.total, 4, "total counts the whole listing past the last page");

    let with_archived = LensFilter { include_archived: true, ..mine };
    assert_eq!(
        s.list_lenses(Reach::Everything, &with_archived, PageRequest::default()).await.unwrap().total,
        5
    );
    let archived = LensFilter { status: Some(LensStatus::Archived), ..mine };
    let page = s.list_lenses(Reach::Everything, &archived, PageRequest::default()).await.unwrap();
    assert_eq!(
        page.items.iter().map(|l| l.id).collect::<Vec<_>>(),
        vec![made[3].id],
        "status archived lists archived ones"
    );
    let public = LensFilter { visibility: Some(Visibility::Public), ..mine };
    assert_eq!(s.list_lenses(Reach::Everything, &public, PageRequest::default()).await.unwrap().total, 2);
    let drafts = LensFilter { status: Some(LensStatus::Draft), ..mine };
    assert_eq!(s.list_lenses(Reach::Everything, &drafts, PageRequest::default()).await.unwrap().total, 0);
}

async fn search(s: &dyn LensStore) {
    let mut f = Fixture::new();
    let (alice, bob) = (LenserId::new(), LenserId::new());
    let w = unique_word();
    let other = unique_word();
    let (in_body, v_body) = f
        .create(s, alice, "Plain title", &format!("Mentions {w} in the body [[A]]"), Visibility::Public)
        .await;
    let (in_title, _) =
        f.create(s, alice, &format!("The {w} lens"), "[[A]] nothing here", Visibility::Public).await;
    let (private, _) = f.create(s, alice, &format!("{w} secret"), "[[A]]", Visibility::Private).await;
    let (both, _) = f.create(s, bob, &format!("{w} {other}"), "[[A]]", Visibility::Community).await;

    let q = SearchQuery::parse(&w).unwrap();
    let hits = s.search_lenses(Reach::Lenser(bob), &q, None, PageRequest::default()).await.unwrap();
    let ids: Vec<_> = hits.items.iter().map(|l| l.id).collect();
    assert_eq!(hits.total, 3, "bob finds all but alice's private lens");
    assert!(!ids.contains(&private.id), "search never leaks a private lens");
    assert_eq!(*ids.last().unwrap(), in_body.id, "a body-only match ranks below title matches");
    assert!(ids.contains(&in_title.id) && ids.contains(&both.id));

    let hits = s.search_lenses(Reach::Lenser(alice), &q, None, PageRequest::default()).await.unwrap();
    assert_eq!(hits.total, 4, "alice finds her private lens");

    let prefix = SearchQuery::parse(&w[..6]).unwrap();
    let hits = s.search_lenses(Reach::Lenser(bob), &prefix, None, PageRequest::default()).await.unwrap();
    assert!(hits.total >= 3, "terms match word prefixes");

    let two = SearchQuery::parse(&format!("{} {w}", other.to_uppercase())).unwrap();
    let hits = s.search_lenses(Reach::Lenser(bob), &two, None, PageRequest::default()).await.unwrap();
    assert_eq!(
        hits.items.iter().map(|l| l.id).collect::<Vec<_>>(),
        vec![both.id],
        "every term must match, case-insensitively"
    );

    let hits = s
        .search_lenses(Reach::Lenser(bob), &q, Some(Visibility::Community), PageRequest::default())
        .await
        .unwrap();
    assert_eq!(hits.items.iter().map(|l| l.id).collect::<Vec<_>>(), vec![both.id], "visibility filter");

    let page = s
        .search_lenses(Reach::Lenser(bob), &q, None, PageRequest::new(Some(1), Some(1)).unwrap())
        .await
        .unwrap();
    assert_eq!((page.items.len(), page.total), (1, 3), "paged, with the total of all matches");

    // The head body is what is searched: a new version replaces the old words.
    let fresh = unique_word();
    let (_, mut v2) = f.lens(alice, "x", &format!("Now about {fresh} [[A]]"), Visibility::Public);
    v2.lens_id = in_body.id;
    v2.semver = Semver { major: 1, minor: 0, patch: 1 };
    s.append_version(in_body.id, v_body.id, &v2, &LensPatch::default()).await.unwrap();
    let hits = s
        .search_lenses(Reach::Everything, &SearchQuery::parse(&fresh).unwrap(), None, PageRequest::default())
        .await
        .unwrap();
    assert_eq!(
        hits.items.iter().map(|l| l.id).collect::<Vec<_>>(),
        vec![in_body.id],
        "the new head body is searchable"
    );
    let hits = s.search_lenses(Reach::Everything, &q, None, PageRequest::default()).await.unwrap();
    assert!(!hits.items.iter().any(|l| l.id == in_body.id), "the old body no longer matches");

    // Archived lenses are not searched; restoring brings them back.
    let t = f.tick();
    s.update_lens(
        in_title.id,
        &LensPatch { status: Some(LensStatus::Archived), archived_at: Some(Some(t)), ..Default::default() },
    )
    .await
    .unwrap();
    let hits = s.search_lenses(Reach::Everything, &q, None, PageRequest::default()).await.unwrap();
    assert!(!hits.items.iter().any(|l| l.id == in_title.id), "archived lenses are not searched");
    s.update_lens(
        in_title.id,
        &LensPatch { status: Some(LensStatus::Published), archived_at: Some(None), ..Default::default() },
    )
    .await
    .unwrap();
    let hits = s.search_lenses(Reach::Everything, &q, None, PageRequest::default()).await.unwrap();
    assert!(hits.items.iter().any(|l| l.id == in_title.id), "restored lenses are searched again");
    // Renaming re-indexes the title.
    s.update_lens(
        both.id,
        &LensPatch { title: Some(Title::parse("Renamed away").unwrap()), ..Default::default() },
    )
    .await
    .unwrap();
    let hits = s.search_lenses(Reach::Everything, &two, None, PageRequest::default()).await.unwrap();
    assert_eq!(hits.total, 0, "a renamed title is searched as renamed");

    // Query syntax of the backends is never interpreted.
    for q in ["\"", "a OR b", "NEAR(x y)", "x*", "-x", "a & b | !c", "'", "%", "_"] {
        if let Ok(q) = SearchQuery::parse(q) {
            s.search_lenses(Reach::Everything, &q, None, PageRequest::default())
                .await
                .expect("any parsed query runs");
        }
    }
}

async fn conflicts(s: &dyn LensStore) {
    let mut f = Fixture::new();
    let owner = LenserId::new();
    let (lens, v1) = f.create(s, owner, "Conflicts", "[[A]]", Visibility::Public).await;
    assert_eq!(code(s.create_lens(&lens, &v1).await), ErrorCode::Conflict, "an id is taken once");
    let (_, mut v2) = f.lens(owner, "x", "B [[A]]", Visibility::Public);
    v2.lens_id = lens.id;
    v2.semver = Semver { major: 1, minor: 0, patch: 1 };
    s.append_version(lens.id, v1.id, &v2, &LensPatch::default()).await.unwrap();
    let (_, mut v3) = f.lens(owner, "x", "C [[A]]", Visibility::Public);
    v3.lens_id = lens.id;
    v3.semver = Semver { major: 1, minor: 0, patch: 2 };
    assert_eq!(
        code(s.append_version(lens.id, v1.id, &v3, &LensPatch::default()).await),
        ErrorCode::Conflict,
        "a stale head is refused"
    );
    let head = s.get_version(Reach::Everything, lens.id, VersionSelector::Head).await.unwrap();
    assert_eq!(head.id, v2.id, "a refused append changes nothing");
    assert_eq!(s.list_versions(Reach::Everything, lens.id).await.unwrap().len(), 2);
}

async fn runs(s: &dyn LensStore) {
    let mut f = Fixture::new();
    let owner = LenserId::new();
    let (lens, v1) = f.create(s, owner, "Runs", "[[A]]", Visibility::Public).await;
    let run = LensRun {
        id: RunId::new(),
        lens_id: lens.id,
        version_id: v1.id,
        workflow_id: WorkflowId::new(),
        lenser: Some(owner),
        agent: None,
        params_used: vec!["A".into()],
        created_at: f.tick(),
    };
    s.record_run(&run).await.expect("record_run");
    let by_agent = LensRun { id: RunId::new(), agent: Some(LenserId::new()), ..run };
    s.record_run(&by_agent).await.expect("record_run of an agent's run");
}

/// A lens and versions an AI Lenser wrote name it on every read; a version
/// a person wrote afterwards names none.
async fn agents(s: &dyn LensStore) {
    let mut f = Fixture::new();
    let (owner, agent) = (LenserId::new(), LenserId::new());
    let word = unique_word();
    let (mut lens, mut v1) = f.lens(owner, &format!("Agent {word}"), "About [[A]]", Visibility::Private);
    (lens.agent, v1.agent) = (Some(agent), Some(agent));
    s.create_lens(&lens, &v1).await.expect("create_lens by an agent");
    let reach = Reach::Lenser(owner);
    assert_eq!(s.get_lens(reach, lens.id).await.unwrap().agent, Some(agent), "get_lens names the agent");
    let (got, head) = s.get_lens_and_version(reach, lens.id, VersionSelector::Head).await.unwrap();
    assert_eq!((got.agent, head.agent), (Some(agent), Some(agent)), "get_lens_and_version");

    let (_, mut v2) = f.lens(owner, "x", "Changed [[A]]", Visibility::Private);
    (v2.lens_id, v2.semver, v2.agent) = (lens.id, Semver { major: 1, minor: 0, patch: 1 }, None);
    s.append_version(lens.id, v1.id, &v2, &LensPatch::default()).await.unwrap();
    let head = s.get_version(reach, lens.id, VersionSelector::Head).await.unwrap();
    assert_eq!(head.agent, None, "a person's version names no agent");
    let first = s.get_version(reach, lens.id, VersionSelector::Id(v1.id)).await.unwrap();
    assert_eq!(first.agent, Some(agent), "the agent's version still names it");
    let listed: Vec<_> = s.list_versions(reach, lens.id).await.unwrap().iter().map(|v| v.agent).collect();
    assert_eq!(listed, vec![None, Some(agent)], "list_versions names each version's writer");

    let filter = LensFilter { owner: Some(owner), ..LensFilter::default() };
    let page = s.list_lenses(reach, &filter, PageRequest::default()).await.unwrap();
    assert_eq!(page.items.iter().map(|l| l.agent).collect::<Vec<_>>(), vec![Some(agent)], "list_lenses");
    let query = SearchQuery::parse(&word).unwrap();
    let page = s.search_lenses(reach, &query, None, PageRequest::default()).await.unwrap();
    assert_eq!(page.items.iter().map(|l| l.agent).collect::<Vec<_>>(), vec![Some(agent)], "search_lenses");
}

/// A lens with versions 1.0.0, 1.0.1, 1.0.2 (the head), owned by `owner`.
async fn three_versions(
    f: &mut Fixture,
    s: &dyn LensStore,
    owner: LenserId,
    visibility: Visibility,
) -> (Lens, Vec<LensVersion>) {
    let (lens, v1) = f.create(s, owner, "Labelled", "Say [[A]]", visibility).await;
    let mut versions = vec![v1];
    for patch in 1..3 {
        let (_, mut v) = f.lens(owner, "x", &format!("Say [[A]] {patch}"), visibility);
        v.lens_id = lens.id;
        v.semver = Semver { major: 1, minor: 0, patch };
        let head = versions.last().unwrap().id;
        s.append_version(lens.id, head, &v, &LensPatch::default()).await.expect("append_version");
        versions.push(v);
    }
    (lens, versions)
}

fn label(name: &str) -> LabelName {
    LabelName::parse("label", name).unwrap()
}

fn change(f: &mut Fixture, lens: &Lens, name: &str, to: Option<&LensVersion>) -> LabelChange {
    LabelChange {
        lens_id: lens.id,
        label: label(name),
        to: to.map(|v| v.id),
        protect: None,
        may_move_protected: true,
        by: Some(lens.owner),
        by_agent: None,
        at: f.tick(),
    }
}

fn moved(r: LabelChanged) -> (Option<LabelMove>, Option<LensLabel>) {
    match r {
        LabelChanged::Done { record, label } => (record, label),
        other => panic!("expected the change to be applied, got {other:?}"),
    }
}

async fn labels(s: &dyn LensStore) {
    let mut f = Fixture::new();
    let owner = LenserId::new();
    let (lens, v) = three_versions(&mut f, s, owner, Visibility::Private).await;
    let by_label = |name: &'static str| {
        s.get_version(Reach::Lenser(owner), lens.id, VersionSelector::Label(label(name)))
    };
    assert_eq!(code(by_label("staging").await), ErrorCode::NotFound, "no label yet");
    assert!(s.list_labels(Reach::Lenser(owner), lens.id).await.unwrap().is_empty());

    let first = change(&mut f, &lens, "staging", Some(&v[0]));
    let (record, now) = moved(s.change_label(&first).await.expect("set a label"));
    let record = record.expect("a new label is a move");
    assert_eq!((record.from, record.to.map(|t| t.id)), (None, Some(v[0].id)));
    assert_eq!(record.to.unwrap().semver, v[0].semver, "the record names the semver");
    assert_eq!((record.by, record.at, record.label), (Some(owner), first.at, label("staging")));
    let now = now.expect("the label after the move");
    assert_eq!((now.version.id, now.protected, now.moved_at), (v[0].id, false, first.at));
    assert_eq!(by_label("staging").await.unwrap(), v[0], "read by its label");

    let second = change(&mut f, &lens, "staging", Some(&v[2]));
    let (record2, _) = moved(s.change_label(&second).await.unwrap());
    let record2 = record2.unwrap();
    assert!(record2.seq > record.seq, "moves are ordered");
    assert_eq!((record2.from.map(|f| f.id), record2.to.map(|t| t.id)), (Some(v[0].id), Some(v[2].id)));
    assert_eq!(by_label("staging").await.unwrap(), v[2]);
    let (lens2, version2) = s
        .get_lens_and_version(Reach::Lenser(owner), lens.id, VersionSelector::Label(label("staging")))
        .await
        .unwrap();
    assert_eq!((lens2.id, version2.id), (lens.id, v[2].id), "with the lens in one read");

    let again = change(&mut f, &lens, "staging", Some(&v[2]));
    let (none, still) = moved(s.change_label(&again).await.unwrap());
    assert!(none.is_none(), "pointing a label where it points records nothing");
    assert_eq!(still.unwrap().moved_at, second.at, "and leaves it as it was");

    // A rollback is a move like any other.
    let back = change(&mut f, &lens, "staging", Some(&v[0]));
    moved(s.change_label(&back).await.unwrap());
    let canary = change(&mut f, &lens, "canary", Some(&v[1]));
    moved(s.change_label(&canary).await.unwrap());
    let names: Vec<String> = s
        .list_labels(Reach::Lenser(owner), lens.id)
        .await
        .unwrap()
        .iter()
        .map(|l| l.name.to_string())
        .collect();
    assert_eq!(names, ["canary", "staging"], "by name");

    // Reach: a private lens's labels are no one else's.
    let stranger = Reach::Lenser(LenserId::new());
    assert_eq!(code(s.list_labels(stranger, lens.id).await), ErrorCode::NotFound);
    assert_eq!(
        code(s.label_history(stranger, lens.id, None, PageRequest::first(10)).await),
        ErrorCode::NotFound
    );
    assert_eq!(
        code(s.get_version(stranger, lens.id, VersionSelector::Label(label("staging"))).await),
        ErrorCode::NotFound
    );

    // History: newest first, by label, paged.
    let all = s.label_history(Reach::Lenser(owner), lens.id, None, PageRequest::first(10)).await.unwrap();
    assert_eq!(all.total, 4);
    let tos: Vec<_> = all.items.iter().map(|m| (m.label.to_string(), m.to.map(|t| t.id))).collect();
    assert_eq!(
        tos,
        [
            ("canary".to_owned(), Some(v[1].id)),
            ("staging".to_owned(), Some(v[0].id)),
            ("staging".to_owned(), Some(v[2].id)),
            ("staging".to_owned(), Some(v[0].id)),
        ]
    );
    assert!(all.items.windows(2).all(|w| w[0].seq > w[1].seq));
    let staging = s
        .label_history(
            Reach::Lenser(owner),
            lens.id,
            Some(label("staging")),
            PageRequest::new(Some(2), Some(1)).unwrap(),
        )
        .await
        .unwrap();
    assert_eq!((staging.total, staging.items.len()), (3, 2));
    assert_eq!(staging.items[0].from.map(|f| f.id), Some(v[0].id), "the second newest move of staging");

    // Only versions of this lens.
    let (_, foreign) = f.create(s, owner, "Other", "[[A]]", Visibility::Private).await;
    let wrong = change(&mut f, &lens, "staging", Some(&foreign));
    assert_eq!(code(s.change_label(&wrong).await), ErrorCode::NotFound, "a version of another lens");
    assert_eq!(by_label("staging").await.unwrap(), v[0], "a refused move changes nothing");

    // Removal is a move to nothing.
    let gone = change(&mut f, &lens, "nothing", None);
    assert_eq!(s.change_label(&gone).await.unwrap(), LabelChanged::Missing);
    let remove = change(&mut f, &lens, "canary", None);
    let (record, after) = moved(s.change_label(&remove).await.unwrap());
    let record = record.expect("a removal is recorded");
    assert_eq!((record.from.map(|f| f.id), record.to, after), (Some(v[1].id), None, None));
    assert_eq!(code(by_label("canary").await), ErrorCode::NotFound);
    assert_eq!(s.list_labels(Reach::Lenser(owner), lens.id).await.unwrap().len(), 1);

    // A deleted lens has no labels to move or read.
    s.update_lens(lens.id, &LensPatch { deleted_at: Some(f.tick()), ..Default::default() }).await.unwrap();
    let late = change(&mut f, &lens, "staging", Some(&v[1]));
    assert_eq!(code(s.change_label(&late).await), ErrorCode::NotFound);
    assert_eq!(code(s.list_labels(Reach::Everything, lens.id).await), ErrorCode::NotFound);
}

async fn labels_protected(s: &dyn LensStore) {
    let mut f = Fixture::new();
    let owner = LenserId::new();
    let (lens, v) = three_versions(&mut f, s, owner, Visibility::Public).await;
    let weak = |c: LabelChange| LabelChange { may_move_protected: false, ..c };

    // production is protected before it exists.
    let prod = weak(change(&mut f, &lens, "production", Some(&v[0])));
    assert_eq!(s.change_label(&prod).await.unwrap(), LabelChanged::Protected);
    assert!(s.list_labels(Reach::Everything, lens.id).await.unwrap().is_empty(), "nothing was set");
    let prod = change(&mut f, &lens, "production", Some(&v[0]));
    let (_, label_now) = moved(s.change_label(&prod).await.unwrap());
    assert!(label_now.unwrap().protected, "production reads as protected");

    // Others are protected when marked so.
    let staging = weak(change(&mut f, &lens, "staging", Some(&v[0])));
    let (_, st) = moved(s.change_label(&staging).await.unwrap());
    assert!(!st.unwrap().protected);
    let protect = LabelChange { protect: Some(true), ..change(&mut f, &lens, "staging", Some(&v[0])) };
    let (record, st) = moved(s.change_label(&protect).await.unwrap());
    assert!(record.is_none() && st.unwrap().protected, "protection alone is not a move");
    for c in [
        weak(change(&mut f, &lens, "staging", Some(&v[1]))),
        weak(change(&mut f, &lens, "staging", None)),
        weak(change(&mut f, &lens, "production", Some(&v[2]))),
        weak(change(&mut f, &lens, "production", None)),
    ] {
        assert_eq!(s.change_label(&c).await.unwrap(), LabelChanged::Protected, "{c:?}");
    }
    let labels = s.list_labels(Reach::Lenser(LenserId::new()), lens.id).await.unwrap();
    assert!(
        labels.iter().all(|l| l.version.id == v[0].id && l.protected),
        "refused moves change nothing: {labels:?}"
    );
    let history = s.label_history(Reach::Everything, lens.id, None, PageRequest::first(10)).await.unwrap();
    assert_eq!(history.total, 2, "refused moves are not recorded");

    // Unprotected again, anyone who may edit moves it.
    let unprotect = LabelChange { protect: Some(false), ..change(&mut f, &lens, "staging", Some(&v[0])) };
    moved(s.change_label(&unprotect).await.unwrap());
    let (record, st) =
        moved(s.change_label(&weak(change(&mut f, &lens, "staging", Some(&v[1])))).await.unwrap());
    assert!(record.is_some() && !st.unwrap().protected);
}

/// Polls both futures until both are done: two changes in flight at once.
async fn both<A: std::future::Future, B: std::future::Future>(a: A, b: B) -> (A::Output, B::Output) {
    use std::task::Poll;
    let (mut a, mut b) = (std::pin::pin!(a), std::pin::pin!(b));
    let (mut ra, mut rb) = (None, None);
    std::future::poll_fn(|cx| {
        if ra.is_none()
            && let Poll::Ready(v) = a.as_mut().poll(cx)
        {
            ra = Some(v);
        }
        if rb.is_none()
            && let Poll::Ready(v) = b.as_mut().poll(cx)
        {
            rb = Some(v);
        }
        if ra.is_some() && rb.is_some() { Poll::Ready(()) } else { Poll::Pending }
    })
    .await;
    (ra.unwrap(), rb.unwrap())
}

async fn labels_racing(s: &dyn LensStore) {
    let mut f = Fixture::new();
    let owner = LenserId::new();
    let (lens, v) = three_versions(&mut f, s, owner, Visibility::Public).await;
    moved(s.change_label(&change(&mut f, &lens, "production", Some(&v[0]))).await.unwrap());
    for round in 0..5 {
        let (a, b) = (
            change(&mut f, &lens, "production", Some(&v[1])),
            change(&mut f, &lens, "production", Some(&v[2])),
        );
        let (ra, rb) = both(s.change_label(&a), s.change_label(&b)).await;
        let (ra, rb) = (moved(ra.unwrap()).0.unwrap(), moved(rb.unwrap()).0.unwrap());
        let (first, second) = if ra.seq < rb.seq { (ra, rb) } else { (rb, ra) };
        assert_eq!(second.from, first.to, "round {round}: the later move starts where the earlier one ended");
        let now = s
            .get_version(Reach::Everything, lens.id, VersionSelector::Label(label("production")))
            .await
            .unwrap();
        assert_eq!(Some(now.id), second.to.map(|t| t.id), "round {round}: the later move wins");
        let history = s.label_history(Reach::Everything, lens.id, None, PageRequest::first(2)).await.unwrap();
        assert_eq!(
            history.items,
            [second.clone(), first.clone()],
            "round {round}: history shows both, in order"
        );
        // Back to v[0] for the next round.
        moved(s.change_label(&change(&mut f, &lens, "production", Some(&v[0]))).await.unwrap());
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn memory_store_passes() {
        pollster::block_on(super::suite(std::sync::Arc::new(crate::MemoryLensStore::new())));
    }
}
