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

use crate::model::{
    Description, Lens, LensDraft, LensFilter, LensPatch, LensRun, LensStatus, LensVersion, SearchQuery,
    Semver, TemplateBody, Title, VersionSelector, Visibility,
};
use crate::store::LensStore;
use crate::template::TypeHint;
use crate::versioning::{ParamDeclaration, build_params};

mod labels;

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
    labels::labels(s).await;
    labels::labels_protected(s).await;
    labels::labels_racing(s).await;
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

#[cfg(test)]
mod tests {
    #[test]
    fn memory_store_passes() {
        pollster::block_on(super::suite(std::sync::Arc::new(crate::MemoryLensStore::new())));
    }
}
