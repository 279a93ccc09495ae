//! The label checks of the contract suite: moves and their records,
//! protection, and two moves in flight at once.

use lf_core::{ErrorCode, LabelName, LenserId, PageRequest, Reach, join_all};

use super::{Fixture, code};
use crate::labels::{LabelChange, LabelChanged, LabelMove, LensLabel};
use crate::model::{Lens, LensPatch, LensVersion, Semver, VersionSelector, Visibility};
use crate::store::LensStore;

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

pub(super) async fn labels(s: &dyn LensStore) {
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

pub(super) async fn labels_protected(s: &dyn LensStore) {
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

pub(super) async fn labels_racing(s: &dyn LensStore) {
    let mut f = Fixture::new();
    let owner = LenserId::new();
    let (lens, v) = three_versions(&mut f, s, owner, Visibility::Public).await;
    moved(s.change_label(&change(&mut f, &lens, "production", Some(&v[0]))).await.unwrap());
    for round in 0..5 {
        let (a, b) = (
            change(&mut f, &lens, "production", Some(&v[1])),
            change(&mut f, &lens, "production", Some(&v[2])),
        );
        let [ra, rb]: [_; 2] =
            join_all(vec![s.change_label(&a), s.change_label(&b)]).await.try_into().expect("two changes");
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
