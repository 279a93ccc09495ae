//! Checks both backends run beyond the lf-lens contract suite: races and
//! search input that only a SQL store can get wrong.

use std::sync::Arc;

use lf_core::{ErrorCode, LensId, LenserId, PageRequest, Reach, Timestamp, VersionId};
use lf_lens::{
    Lens, LensDraft, LensPatch, LensStatus, LensStore, LensVersion, SearchQuery, Semver, TemplateBody, Title,
    Visibility, build_params,
};

pub fn new_lens(owner: LenserId, title: &str, body: &str) -> (Lens, LensVersion) {
    let now = Timestamp::from_micros(1_750_000_000_000_000);
    let body =
        TemplateBody::parse(format!("{body} [[Topic]] and enough words to pass the minimum length")).unwrap();
    let params = build_params(&body, &[], &[]).unwrap();
    LensDraft::new(owner, Title::parse(title).unwrap(), body, params).build(now)
}

pub fn next_version(lens: &Lens, patch: u32) -> LensVersion {
    let body =
        TemplateBody::parse(format!("Version {patch} of this lens about [[Topic]], long enough to store"))
            .unwrap();
    LensVersion {
        id: VersionId::new(),
        lens_id: lens.id,
        semver: Semver { major: 1, minor: 0, patch },
        params: build_params(&body, &[], &[]).unwrap(),
        body,
        changelog: format!("Patch {patch}."),
        agent: None,
        created_at: Timestamp::from_micros(1_750_000_000_000_000 + i64::from(patch)),
    }
}

/// Many writers append to one head at once: exactly one wins, every other one
/// gets CONFLICT, and the lens ends with two versions.
pub async fn racing_appends(store: Arc<dyn LensStore>) {
    let (lens, v1) = new_lens(LenserId::new(), "Race", "Racing appends");
    store.create_lens(&lens, &v1).await.unwrap();
    let tasks: Vec<_> = (1..=16)
        .map(|i| {
            let store = store.clone();
            let version = next_version(&lens, i);
            tokio::spawn(async move {
                store.append_version(version.lens_id, v1.id, &version, &LensPatch::default()).await
            })
        })
        .collect();
    let mut won = 0;
    for task in tasks {
        match task.await.unwrap() {
            Ok(()) => won += 1,
            Err(e) => assert_eq!(e.code(), ErrorCode::Conflict, "{e:?}"),
        }
    }
    assert_eq!(won, 1, "exactly one append wins the race");
    assert_eq!(store.list_versions(Reach::Everything, lens.id).await.unwrap().len(), 2);
}

/// Many writers create lenses at once: all of them land.
pub async fn concurrent_creates(store: Arc<dyn LensStore>) {
    let owner = LenserId::new();
    let tasks: Vec<_> = (0..24)
        .map(|i| {
            let store = store.clone();
            tokio::spawn(async move {
                let (lens, v) = new_lens(owner, &format!("Concurrent {i}"), "Created side by side");
                store.create_lens(&lens, &v).await
            })
        })
        .collect();
    for task in tasks {
        task.await.unwrap().expect("create_lens under contention");
    }
    let mine = lf_lens::LensFilter { owner: Some(owner), ..Default::default() };
    assert_eq!(store.list_lenses(Reach::Everything, &mine, PageRequest::default()).await.unwrap().total, 24);
}

/// Words that are letters to Rust but odd to a tokenizer, and quotes, never
/// break a search or widen it.
pub async fn odd_search_input(store: Arc<dyn LensStore>) {
    let (lens, v) =
        new_lens(LenserId::new(), "Crème brûlée straße", "Ünïcödé ＦＵＬＬＷＩＤＴＨ x² ǅ 𝔘 ⅷ 日本語");
    store.create_lens(&lens, &v).await.unwrap();
    for q in [
        "crème",
        "creme",
        "straße",
        "ünïcödé",
        "日本語",
        "x²",
        "ǅ",
        "𝔘",
        "ⅷ",
        "\u{0301}a",
        "ａ",
        "'; DROP TABLE lenses; --",
        "\"*",
        "NEAR",
        "title:crème",
        "^crème",
        "a\\b",
        "o'brien",
    ] {
        let Ok(query) = SearchQuery::parse(q) else { continue };
        store
            .search_lenses(Reach::Everything, &query, None, PageRequest::default())
            .await
            .unwrap_or_else(|e| panic!("search {q:?} failed: {e:?}"));
    }
    let hits = |q: &'static str| {
        let store = store.clone();
        async move {
            let query = SearchQuery::parse(q).unwrap();
            let page =
                store.search_lenses(Reach::Everything, &query, None, PageRequest::default()).await.unwrap();
            page.items.iter().any(|l| l.id == lens.id)
        }
    };
    assert!(hits("crème brûlée").await, "accented words are found as written");
    assert!(hits("日本語").await);
    assert!(!hits("crème zzzzqqqq").await, "every term must match");
}

/// More matches than the stores rank (2,000): paging walks across the end of
/// the ranked window into the older matches without losing or repeating any.
/// The lenses are alike but for their age, so the whole order is newest first.
pub async fn past_the_ranked_window(store: Arc<dyn LensStore>) {
    const N: i64 = 2_050;
    let word = format!("window{}", LensId::new().as_uuid().simple());
    let owner = LenserId::new();
    let mut made = Vec::new();
    for i in 0..N {
        let (mut lens, mut version) = new_lens(owner, "Window lens", &format!("About {word}"));
        let at = Timestamp::from_micros(1_760_000_000_000_000 + i);
        (lens.created_at, lens.updated_at, version.created_at) = (at, at, at);
        store.create_lens(&lens, &version).await.unwrap();
        made.push(lens.id);
    }
    made.reverse();
    let query = SearchQuery::parse(&word).unwrap();
    let mut found = Vec::new();
    for offset in (0..N + 100).step_by(100) {
        let page = PageRequest::new(Some(100), Some(offset)).unwrap();
        let got = store.search_lenses(Reach::Lenser(LenserId::new()), &query, None, page).await.unwrap();
        assert_eq!(got.total, N as u64);
        found.extend(got.items.iter().map(|l| l.id));
    }
    assert_eq!(found.len(), made.len(), "every match once");
    assert!(found == made, "newest first across the window's end");
}

/// The search index follows every change that decides who finds a lens:
/// archiving and restoring, visibility, deletion.
pub async fn search_follows_changes(store: Arc<dyn LensStore>) {
    let word = format!("follow{}", LensId::new().as_uuid().simple());
    let (alice, bob) = (LenserId::new(), LenserId::new());
    let (mut lens, version) = new_lens(alice, "Followed", &format!("About {word}"));
    lens.visibility = Visibility::Private;
    store.create_lens(&lens, &version).await.unwrap();
    let query = SearchQuery::parse(&word).unwrap();
    let finds = async |reach: Reach| {
        let page = store.search_lenses(reach, &query, None, PageRequest::default()).await.unwrap();
        assert_eq!(page.total as usize, page.items.len());
        page.items.iter().any(|l| l.id == lens.id)
    };
    assert!(finds(Reach::Lenser(alice)).await && !finds(Reach::Lenser(bob)).await);

    let patch = |p: LensPatch| {
        let store = store.clone();
        async move { store.update_lens(lens.id, &p).await.unwrap() }
    };
    patch(LensPatch { visibility: Some(Visibility::Public), ..Default::default() }).await;
    assert!(finds(Reach::Lenser(bob)).await, "made public, others find it");
    let at = Timestamp::from_micros(1_760_000_000_000_000);
    patch(LensPatch {
        status: Some(LensStatus::Archived),
        archived_at: Some(Some(at)),
        ..Default::default()
    })
    .await;
    assert!(!finds(Reach::Everything).await, "archived lenses are not searched");
    patch(LensPatch { status: Some(LensStatus::Published), archived_at: Some(None), ..Default::default() })
        .await;
    assert!(finds(Reach::Lenser(bob)).await, "restored lenses are searched again");
    patch(LensPatch { visibility: Some(Visibility::Private), ..Default::default() }).await;
    assert!(!finds(Reach::Lenser(bob)).await && finds(Reach::Lenser(alice)).await, "made private again");
    patch(LensPatch { deleted_at: Some(at), ..Default::default() }).await;
    assert!(!finds(Reach::Everything).await, "deleted lenses are gone");
}
