//! The public contract suite every [`DatasetStore`] runs: the in-memory
//! store here, SQLite and PostgreSQL in lf-store. Each check uses fresh
//! owners, so the suite runs against a store that holds data.

use std::sync::Arc;

use lf_core::{Description, ErrorCode, LenserId, LfResult, PageRequest, Reach, Timestamp};
use serde_json::json;

use super::model::{Case, Dataset, DatasetId, DatasetName, DatasetVersion, Visibility};
use super::store::DatasetStore;

/// Runs every check against `store`.
pub async fn suite(store: Arc<dyn DatasetStore>) {
    let s = store.as_ref();
    round_trip(s).await;
    versions_append_and_stay(s).await;
    visibility(s).await;
    names_are_unique_among_live_datasets(s).await;
    archived_datasets_take_no_cases(s).await;
    many_cases_page_by_position(s).await;
}

// Microseconds, as every store keeps them.
const AT: i64 = 1_760_000_000_123_456;

fn dataset(owner: LenserId, name: &str, visibility: Visibility, cases: u32) -> (Dataset, DatasetVersion) {
    let at = Timestamp::from_micros(AT);
    let id = DatasetId::new();
    let d = Dataset {
        id,
        owner,
        name: DatasetName::parse(name).unwrap(),
        description: Description::parse("what it tests").unwrap(),
        visibility,
        version: 1,
        case_count: cases,
        created_at: at,
        updated_at: at,
        archived_at: None,
    };
    let v = DatasetVersion {
        dataset: id,
        version: 1,
        case_count: cases,
        created_at: at,
        created_by: owner,
        agent: None,
    };
    (d, v)
}

fn cases(n: u32, tag: &str) -> Vec<Case> {
    (0..n)
        .map(|i| {
            let v = if i % 2 == 0 {
                json!({"prompt": format!("question {i}"), "expected": format!("answer {i}"), "tags": [tag]})
            } else {
                json!({"inputs": {"topic": format!("t{i}"), "n": i}, "expected": {"ok": true},
                       "assertions": [{"type": "contains", "value": "x"}], "metadata": {"source": "suite"}})
            };
            Case::from_json(v).unwrap()
        })
        .collect()
}

fn page(limit: i64, offset: i64) -> PageRequest {
    PageRequest::new(Some(limit), Some(offset)).unwrap()
}

/// Whether `id` is on any page of what `reach` lists (the store may hold
/// many datasets of earlier runs).
async fn listed(s: &dyn DatasetStore, reach: Reach, include_archived: bool, id: DatasetId) -> bool {
    let mut offset = 0;
    loop {
        let p = s.list_datasets(reach, include_archived, page(100, offset)).await.unwrap();
        if p.items.iter().any(|d| d.id == id) {
            return true;
        }
        if !p.has_more() {
            return false;
        }
        offset += 100;
    }
}

fn code<T: std::fmt::Debug>(r: LfResult<T>) -> ErrorCode {
    match r {
        Ok(v) => panic!("expected an error, got {v:?}"),
        Err(e) => e.code(),
    }
}

async fn round_trip(s: &dyn DatasetStore) {
    let owner = LenserId::new();
    let (d, v) = dataset(owner, "capitals", Visibility::Private, 5);
    let given = cases(5, "geo");
    s.add_dataset(&d, &v, &given).await.unwrap();
    assert_eq!(s.dataset(Reach::Lenser(owner), d.id).await.unwrap(), Some(d.clone()), "read back as written");
    assert_eq!(s.dataset(Reach::Everything, d.id).await.unwrap(), Some(d.clone()));
    assert_eq!(s.version(Reach::Lenser(owner), d.id, 1).await.unwrap(), Some(v.clone()));
    assert_eq!(s.version(Reach::Lenser(owner), d.id, 2).await.unwrap(), None);
    let all = s.cases(Reach::Lenser(owner), &v, page(100, 0)).await.unwrap();
    let want: Vec<Case> =
        given.iter().zip(1..).map(|(c, position)| Case { position, added_in: 1, ..c.clone() }).collect();
    assert_eq!(all, want, "cases read back as written, by position");
    let middle = s.cases(Reach::Lenser(owner), &v, page(2, 2)).await.unwrap();
    assert_eq!(middle.iter().map(|c| c.position).collect::<Vec<_>>(), [3, 4]);
    assert!(s.cases(Reach::Lenser(owner), &v, page(10, 5)).await.unwrap().is_empty(), "past the end");
    assert_eq!(s.dataset(Reach::Lenser(owner), DatasetId::new()).await.unwrap(), None);
}

async fn versions_append_and_stay(s: &dyn DatasetStore) {
    let owner = LenserId::new();
    let (d, v1) = dataset(owner, "growing", Visibility::Public, 3);
    s.add_dataset(&d, &v1, &cases(3, "first")).await.unwrap();
    let agent = LenserId::new();
    let at = Timestamp::from_micros(AT + 1_000_000);
    let v2 = DatasetVersion {
        dataset: d.id,
        version: 2,
        case_count: 5,
        created_at: at,
        created_by: agent,
        agent: Some(agent),
    };
    s.add_version(owner, &v2, &cases(2, "second")).await.unwrap();
    assert_eq!(
        code(s.add_version(owner, &v2, &cases(1, "again")).await),
        ErrorCode::Conflict,
        "version 2 is taken"
    );
    assert_eq!(
        code(s.add_version(LenserId::new(), &v2, &cases(1, "x")).await),
        ErrorCode::NotFound,
        "not theirs"
    );

    let now = s.dataset(Reach::Lenser(owner), d.id).await.unwrap().unwrap();
    assert_eq!((now.version, now.case_count, now.updated_at), (2, 5, at));
    assert_eq!(s.version(Reach::Lenser(owner), d.id, 2).await.unwrap(), Some(v2.clone()), "who made it kept");
    assert_eq!(
        s.version(Reach::Lenser(owner), d.id, 1).await.unwrap(),
        Some(v1.clone()),
        "version 1 unchanged"
    );
    let old = s.cases(Reach::Lenser(owner), &v1, page(100, 0)).await.unwrap();
    assert_eq!(old.len(), 3, "version 1 still reads its three cases");
    let new = s.cases(Reach::Lenser(owner), &v2, page(100, 0)).await.unwrap();
    assert_eq!(
        new.iter().map(|c| (c.position, c.added_in)).collect::<Vec<_>>(),
        [(1, 1), (2, 1), (3, 1), (4, 2), (5, 2)]
    );
    assert_eq!(new[3].tags, ["second"]);
    assert_eq!(&new[..3], &old[..]);
}

async fn visibility(s: &dyn DatasetStore) {
    let (me, other) = (LenserId::new(), LenserId::new());
    let (private, pv) = dataset(other, "secret", Visibility::Private, 2);
    let (community, cv) = dataset(other, "shared", Visibility::Community, 2);
    s.add_dataset(&private, &pv, &cases(2, "p")).await.unwrap();
    s.add_dataset(&community, &cv, &cases(2, "c")).await.unwrap();
    let mine = Reach::Lenser(me);
    assert_eq!(s.dataset(mine, private.id).await.unwrap(), None, "another's private dataset");
    assert_eq!(s.version(mine, private.id, 1).await.unwrap(), None);
    assert!(s.cases(mine, &pv, page(100, 0)).await.unwrap().is_empty(), "nor its cases");
    assert_eq!(s.dataset(mine, community.id).await.unwrap(), Some(community.clone()));
    assert_eq!(s.cases(mine, &cv, page(100, 0)).await.unwrap().len(), 2);
    assert!(listed(s, mine, false, community.id).await);
    assert!(!listed(s, mine, true, private.id).await);
    assert!(listed(s, Reach::Lenser(other), false, private.id).await);
}

async fn names_are_unique_among_live_datasets(s: &dyn DatasetStore) {
    let owner = LenserId::new();
    let (a, av) = dataset(owner, "math", Visibility::Private, 1);
    s.add_dataset(&a, &av, &cases(1, "a")).await.unwrap();
    let (b, bv) = dataset(owner, "math", Visibility::Public, 1);
    assert_eq!(code(s.add_dataset(&b, &bv, &cases(1, "b")).await), ErrorCode::Conflict);
    assert_eq!(s.dataset(Reach::Everything, b.id).await.unwrap(), None, "nothing written");
    let (c, cv) = dataset(LenserId::new(), "math", Visibility::Private, 1);
    s.add_dataset(&c, &cv, &cases(1, "c")).await.unwrap();
    s.archive(owner, a.id, Timestamp::from_micros(AT + 5)).await.unwrap();
    s.add_dataset(&b, &bv, &cases(1, "b")).await.unwrap();
}

async fn archived_datasets_take_no_cases(s: &dyn DatasetStore) {
    let owner = LenserId::new();
    let (d, v) = dataset(owner, "retired", Visibility::Community, 2);
    s.add_dataset(&d, &v, &cases(2, "r")).await.unwrap();
    assert_eq!(
        code(s.archive(LenserId::new(), d.id, Timestamp::from_micros(AT + 1)).await),
        ErrorCode::NotFound
    );
    let at = Timestamp::from_micros(AT + 2);
    s.archive(owner, d.id, at).await.unwrap();
    assert_eq!(code(s.archive(owner, d.id, at).await), ErrorCode::Conflict, "already archived");
    let v2 = DatasetVersion { version: 2, case_count: 3, ..v.clone() };
    assert_eq!(code(s.add_version(owner, &v2, &cases(1, "late")).await), ErrorCode::Conflict);
    let read = s.dataset(Reach::Lenser(LenserId::new()), d.id).await.unwrap().unwrap();
    assert_eq!((read.archived_at, read.version, read.case_count), (Some(at), 1, 2), "still read by id");
    assert_eq!(s.cases(Reach::Lenser(owner), &v, page(100, 0)).await.unwrap().len(), 2);
    assert!(!listed(s, Reach::Lenser(owner), false, d.id).await, "archived datasets are not listed");
    assert!(listed(s, Reach::Lenser(owner), true, d.id).await, "unless asked");
    assert!(listed(s, Reach::Lenser(LenserId::new()), true, d.id).await, "shared, it stays shared");
}

async fn many_cases_page_by_position(s: &dyn DatasetStore) {
    let owner = LenserId::new();
    let (d, v1) = dataset(owner, "large", Visibility::Private, 1_201);
    s.add_dataset(&d, &v1, &cases(1_201, "big")).await.unwrap();
    let v2 = DatasetVersion { version: 2, case_count: 2_402, ..v1.clone() };
    s.add_version(owner, &v2, &cases(1_201, "more")).await.unwrap();
    let tail = s.cases(Reach::Lenser(owner), &v1, page(100, 1_150)).await.unwrap();
    assert_eq!(tail.iter().map(|c| c.position).collect::<Vec<_>>(), (1_151..=1_201).collect::<Vec<_>>());
    let next = s.cases(Reach::Lenser(owner), &v2, page(3, 1_200)).await.unwrap();
    assert_eq!(
        next.iter().map(|c| (c.position, c.added_in)).collect::<Vec<_>>(),
        [(1_201, 1), (1_202, 2), (1_203, 2)]
    );
    assert_eq!(next[1].input, cases(1, "x")[0].input, "the second version starts again from its first case");
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_memory_store_keeps_the_contract() {
        pollster::block_on(super::suite(std::sync::Arc::new(crate::dataset::MemoryDatasets::new())));
    }
}
