//! lf-store on SQLite: the lf-lens contract suite on a real file, and what a
//! file-backed embedded database must get right (creation, pragmas, reopening,
//! several handles on one file).

mod common;

use std::path::Path;

use lf_core::{ErrorCode, LenserId, PageRequest, Reach};
use lf_lens::{Lens, LensFilter, LensPatch, LensVersion, Title, VersionSelector, Visibility};
use lf_store::{Backend, Database};

fn url(path: &Path) -> String {
    format!("sqlite://{}", path.display())
}

async fn open(path: &Path) -> Database {
    Database::connect(&url(path)).await.expect("open the SQLite database")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn contract_suite_on_a_file() {
    let dir = tempfile::tempdir().unwrap();
    let db = open(&dir.path().join("lf.db")).await;
    assert_eq!(db.backend(), Backend::Sqlite);
    lf_lens::contract::suite(db.lens_store()).await;
    // Twice: the suite must hold on a database that already has data.
    lf_lens::contract::suite(db.lens_store()).await;
    db.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn contract_suite_in_memory() {
    let db = Database::connect("sqlite::memory:").await.unwrap();
    lf_lens::contract::suite(db.lens_store()).await;
    common::odd_search_input(db.lens_store()).await;
    common::past_the_ranked_window(db.lens_store()).await;
    common::search_follows_changes(db.lens_store()).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn in_memory_databases_are_private() {
    let a = Database::connect("sqlite::memory:").await.unwrap();
    let b = Database::connect("sqlite::memory:").await.unwrap();
    let (lens, v) = common::new_lens(LenserId::new(), "Only in a", "Private memory");
    a.lens_store().create_lens(&lens, &v).await.unwrap();
    assert_eq!(
        b.lens_store().get_lens(Reach::Everything, lens.id).await.unwrap_err().code(),
        ErrorCode::NotFound
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn races_and_odd_input() {
    let dir = tempfile::tempdir().unwrap();
    let db = open(&dir.path().join("lf.db")).await;
    common::racing_appends(db.lens_store()).await;
    common::concurrent_creates(db.lens_store()).await;
    common::odd_search_input(db.lens_store()).await;
}

#[tokio::test]
async fn creates_the_file_and_its_parent_directories() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("a").join("b c").join("lenserfight.db");
    assert!(!path.exists());
    let db = open(&path).await;
    assert!(path.is_file(), "the database file is created");
    db.close().await;
    // The scheme without slashes names a path too.
    let path = dir.path().join("d").join("other.db");
    let db = Database::connect(&format!("sqlite:{}", path.display())).await.unwrap();
    assert!(path.is_file());
    db.close().await;
}

/// The settings on a connection opened like the stores' own (a unit test in
/// src/sqlite checks every connection the stores use).
#[tokio::test]
async fn pragmas_are_in_effect() {
    let dir = tempfile::tempdir().unwrap();
    let db = open(&dir.path().join("lf.db")).await;
    let pool = db.sqlite_pool().expect("a SQLite database has a SQLite pool");
    let mut conn = pool.acquire().await.unwrap();
    let journal: String = sqlx::query_scalar("PRAGMA journal_mode").fetch_one(&mut *conn).await.unwrap();
    assert_eq!(journal, "wal");
    for (pragma, expected) in
        [("PRAGMA synchronous", 2), ("PRAGMA foreign_keys", 1), ("PRAGMA busy_timeout", 5000)]
    {
        let got: i64 = sqlx::query_scalar(pragma).fetch_one(&mut *conn).await.unwrap();
        assert_eq!(got, expected, "{pragma} (synchronous 2 is FULL)");
    }
}

#[tokio::test]
async fn reopening_keeps_data_and_does_not_rerun_migrations() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("lf.db");
    let (lens, v) = common::new_lens(LenserId::new(), "Survives a restart", "Kept across reopening");
    let migrations = |db: &Database| {
        let pool = db.sqlite_pool().unwrap().clone();
        async move {
            sqlx::query_as::<_, (i64, String)>(
                "SELECT version, installed_on FROM _sqlx_migrations ORDER BY version",
            )
            .fetch_all(&pool)
            .await
            .unwrap()
        }
    };

    let db = open(&path).await;
    db.lens_store().create_lens(&lens, &v).await.unwrap();
    let applied = migrations(&db).await;
    assert!(!applied.is_empty());
    db.close().await;

    let db = open(&path).await;
    assert_eq!(db.lens_store().get_lens(Reach::Everything, lens.id).await.unwrap(), lens);
    assert_eq!(migrations(&db).await, applied, "no migration runs a second time");
    let q = lf_lens::SearchQuery::parse("survives restart").unwrap();
    let hits =
        db.lens_store().search_lenses(Reach::Everything, &q, None, PageRequest::default()).await.unwrap();
    assert_eq!(hits.items, vec![lens], "the search index is kept too");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn two_handles_on_one_file_see_each_others_writes() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("lf.db");
    let (a, b) = (open(&path).await, open(&path).await);
    let (sa, sb) = (a.lens_store(), b.lens_store());

    let (lens, v) = common::new_lens(LenserId::new(), "Shared", "Written by one handle");
    sa.create_lens(&lens, &v).await.unwrap();
    assert_eq!(sb.get_lens(Reach::Everything, lens.id).await.unwrap(), lens);
    sb.update_lens(
        lens.id,
        &LensPatch { title: Some(Title::parse("Renamed by b").unwrap()), ..Default::default() },
    )
    .await
    .unwrap();
    assert_eq!(sa.get_lens(Reach::Everything, lens.id).await.unwrap().title.as_str(), "Renamed by b");

    // Writers on both handles at once: BEGIN IMMEDIATE and the busy timeout
    // serialize them without losing any.
    let owner = LenserId::new();
    let tasks: Vec<_> = (0..20)
        .map(|i| {
            let store = if i % 2 == 0 { sa.clone() } else { sb.clone() };
            tokio::spawn(async move {
                let (lens, v) = common::new_lens(owner, &format!("Both {i}"), "Written from two handles");
                store.create_lens(&lens, &v).await
            })
        })
        .collect();
    for task in tasks {
        task.await.unwrap().expect("every write lands");
    }
    let mine = LensFilter { owner: Some(owner), ..Default::default() };
    assert_eq!(sa.list_lenses(Reach::Everything, &mine, PageRequest::default()).await.unwrap().total, 20);
    assert_eq!(sb.list_lenses(Reach::Everything, &mine, PageRequest::default()).await.unwrap().total, 20);
}

/// get_lens_and_version keeps what it read while the database is unchanged;
/// whatever another handle on the file (another process) commits shows on
/// the very next read: a visibility change, a new head, a label's move, a
/// deletion. So does a lens's list of labels.
#[tokio::test]
async fn kept_reads_follow_the_other_handles_writes() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("lf.db");
    let (a, b) = (open(&path).await, open(&path).await);
    let (sa, sb) = (a.lens_store(), b.lens_store());
    let (owner, stranger) = (LenserId::new(), Reach::Lenser(LenserId::new()));
    let (lens, v1) = common::new_lens(owner, "Kept", "Read again and again");
    sa.create_lens(&lens, &v1).await.unwrap();
    let head = async |reach| sa.get_lens_and_version(reach, lens.id, VersionSelector::Head).await;
    let code = |r: lf_core::LfResult<(Lens, LensVersion)>| r.err().map(|e| e.code());

    let public = LensPatch { visibility: Some(Visibility::Public), ..Default::default() };
    sb.update_lens(lens.id, &public).await.unwrap();
    for _ in 0..3 {
        assert_eq!(head(stranger).await.unwrap().1, v1);
    }
    let private = LensPatch { visibility: Some(Visibility::Private), ..Default::default() };
    sb.update_lens(lens.id, &private).await.unwrap();
    assert_eq!(code(head(stranger).await), Some(ErrorCode::NotFound));
    assert_eq!(head(Reach::Lenser(owner)).await.unwrap().1, v1);

    let v2 = common::next_version(&lens, 1);
    sb.append_version(lens.id, v1.id, &v2, &LensPatch::default()).await.unwrap();
    let (now, version) = head(Reach::Lenser(owner)).await.unwrap();
    assert_eq!((now.head_version_id, version), (v2.id, v2.clone()));
    let by_id = sa.get_lens_and_version(Reach::Lenser(owner), lens.id, VersionSelector::Id(v1.id));
    assert_eq!(by_id.await.unwrap().1, v1, "the old version is still there by id");

    let production = lf_lens::LabelName::parse("label", "production").unwrap();
    let point_at = |version: &LensVersion| lf_lens::LabelChange {
        lens_id: lens.id,
        label: production,
        to: Some(version.id),
        protect: None,
        may_move_protected: true,
        by: Some(owner),
        by_agent: None,
        at: version.created_at,
    };
    let by_label = async || {
        let read = sa.get_lens_and_version(Reach::Lenser(owner), lens.id, VersionSelector::Label(production));
        let labels = sa.list_labels(Reach::Lenser(owner), lens.id).await.unwrap();
        (read.await.map(|(_, v)| v.id).ok(), labels.iter().map(|l| l.version.id).collect::<Vec<_>>())
    };
    assert_eq!(by_label().await, (None, vec![]));
    sb.change_label(&point_at(&v1)).await.unwrap();
    for _ in 0..3 {
        assert_eq!(by_label().await, (Some(v1.id), vec![v1.id]));
    }
    sb.change_label(&point_at(&v2)).await.unwrap();
    assert_eq!(by_label().await, (Some(v2.id), vec![v2.id]), "the label moved in the other handle");

    let deleted = LensPatch { deleted_at: Some(v2.created_at), ..Default::default() };
    sb.update_lens(lens.id, &deleted).await.unwrap();
    assert_eq!(code(head(Reach::Lenser(owner)).await), Some(ErrorCode::NotFound));
    assert_eq!(code(head(Reach::Everything).await), Some(ErrorCode::NotFound));
    a.close().await;
    b.close().await;
}

#[tokio::test]
async fn other_urls_are_refused_naming_the_setting() {
    for url in ["mysql://root:secret@localhost/lf", "lenserfight.db", "", "sqlite:x.db?mode=bogus"] {
        let err = Database::connect(url).await.unwrap_err();
        assert_eq!(err.code(), ErrorCode::InvalidArgument, "{url}");
        assert!(err.message().contains("LENSERFIGHT_DATABASE_URL"), "{url}: {}", err.message());
        assert!(!err.message().contains("secret"));
    }
}

#[tokio::test]
async fn an_unopenable_file_is_an_internal_error_naming_the_setting() {
    let dir = tempfile::tempdir().unwrap();
    // A directory where the file should be.
    let err = Database::connect(&url(dir.path())).await.unwrap_err();
    assert_eq!(err.code(), ErrorCode::Internal);
    assert!(err.message().contains("LENSERFIGHT_DATABASE_URL"), "{}", err.message());
}
