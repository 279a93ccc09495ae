//! Helpers of the end-to-end checks in `tests/tests/`: a [`TestStore`] (the
//! in-memory lens store or a fresh SQLite file from lf-store) with an
//! [`LfServer`] over it for any principal, a [`call`] that drives a tool
//! through `LfServer::call` (the whole `tools/call` path short of the
//! transport) and checks the shape every result must have, and a
//! [`Digest`] of everything a store holds, to prove a refused call wrote
//! nothing.
//!
//! This crate knows no tool by name: the test files hold their own tables.

use std::fmt;
use std::sync::Arc;

use lf_core::{LenserId, PageRequest, Principal, Reach, Scopes};
use lf_lens::{
    Lens, LensFilter, LensService, LensStore, LensVersion, MemoryLensStore, VersionSelector, VersionSummary,
};
use lf_tools::{Catalog, CatalogOptions, LfServer, Services};
use serde_json::Value;

/// Which store a test runs against.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StoreKind {
    Memory,
    Sqlite,
}

impl StoreKind {
    pub const fn as_str(self) -> &'static str {
        match self {
            StoreKind::Memory => "memory",
            StoreKind::Sqlite => "sqlite",
        }
    }
}

enum Backing {
    Memory(Arc<MemoryLensStore>),
    Sqlite {
        db: lf_store::Database,
        // Dropped after `db`: the file outlives the pool.
        _dir: tempfile::TempDir,
    },
}

/// A fresh, empty store and the services and catalog over it.
pub struct TestStore {
    store: Arc<dyn LensStore>,
    backing: Backing,
    catalog: Arc<Catalog>,
    services: Arc<Services>,
}

impl TestStore {
    /// A fresh store of `kind`; SQLite lives in a new temporary directory.
    pub async fn open(kind: StoreKind) -> TestStore {
        let (store, backing): (Arc<dyn LensStore>, Backing) = match kind {
            StoreKind::Memory => {
                let memory = Arc::new(MemoryLensStore::new());
                (memory.clone(), Backing::Memory(memory))
            }
            StoreKind::Sqlite => {
                let dir = tempfile::tempdir().expect("a temporary directory for the SQLite file");
                let url = format!("sqlite://{}", dir.path().join("lenserfight.db").display());
                let db = lf_store::Database::connect(&url)
                    .await
                    .unwrap_or_else(|e| panic!("opening a fresh SQLite database at {url}: {e:?}"));
                (db.lens_store(), Backing::Sqlite { db, _dir: dir })
            }
        };
        let services = Arc::new(Services { lens: LensService::new(store.clone()) });
        TestStore { store, backing, catalog: Arc::new(Catalog::new()), services }
    }

    pub fn store(&self) -> &Arc<dyn LensStore> {
        &self.store
    }

    pub fn catalog(&self) -> &Catalog {
        &self.catalog
    }

    /// A server with every tool enabled, calling as `principal`.
    pub fn server(&self, principal: Principal) -> LfServer {
        LfServer::new(self.catalog.clone(), self.services.clone(), CatalogOptions::default(), principal)
    }

    /// How many tracked runs the store holds.
    pub async fn run_count(&self) -> u64 {
        match &self.backing {
            Backing::Memory(m) => m.runs().len() as u64,
            Backing::Sqlite { db, .. } => {
                let pool = db.sqlite_pool().expect("a SQLite database has a SQLite pool");
                let n: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM lens_runs")
                    .fetch_one(pool)
                    .await
                    .expect("counting lens_runs");
                n as u64
            }
        }
    }

    /// Everything the store holds that any tool can see or change: every
    /// non-deleted lens (archived ones included) with all its versions, and
    /// the number of tracked runs.
    pub async fn digest(&self) -> Digest {
        let mut lenses = Vec::new();
        for lens in all_lenses(self.store.as_ref(), Reach::Everything).await {
            let versions = self
                .store
                .list_versions(Reach::Everything, lens.id)
                .await
                .expect("listing the versions of a listed lens");
            lenses.push((lens, versions));
        }
        lenses.sort_by_key(|(l, _)| l.id);
        Digest { lenses, runs: self.run_count().await }
    }
}

/// Every non-deleted lens within `reach`, archived ones included, paged
/// through the store.
pub async fn all_lenses(store: &dyn LensStore, reach: Reach) -> Vec<Lens> {
    let filter = LensFilter { include_archived: true, ..LensFilter::default() };
    let mut out = Vec::new();
    loop {
        let page = PageRequest::new(Some(100), Some(out.len() as i64)).expect("a valid page");
        let got = store.list_lenses(reach, &filter, page).await.expect("listing lenses");
        let more = got.has_more() && !got.items.is_empty();
        out.extend(got.items);
        if !more {
            return out;
        }
    }
}

/// Every version of a lens, with its body.
pub async fn all_versions(store: &dyn LensStore, lens: &Lens) -> Vec<LensVersion> {
    let mut out = Vec::new();
    for v in store.list_versions(Reach::Everything, lens.id).await.expect("listing versions") {
        out.push(
            store
                .get_version(Reach::Everything, lens.id, VersionSelector::Id(v.id))
                .await
                .expect("a listed version"),
        );
    }
    out
}

/// What a store holds, compared before and after a call.
#[derive(Clone, PartialEq)]
pub struct Digest {
    pub lenses: Vec<(Lens, Vec<VersionSummary>)>,
    pub runs: u64,
}

impl Digest {
    /// What changed from `self` to `after`, in a few lines.
    pub fn changes(&self, after: &Digest) -> Vec<String> {
        let mut out = Vec::new();
        if self.runs != after.runs {
            out.push(format!("runs {} -> {}", self.runs, after.runs));
        }
        for (lens, versions) in &self.lenses {
            match after.lenses.iter().find(|(l, _)| l.id == lens.id) {
                None => out.push(format!("lens {} disappeared", lens.id)),
                Some((l, v)) => {
                    if l != lens {
                        out.push(format!("lens {} changed: {lens:?} -> {l:?}", lens.id));
                    }
                    if v != versions {
                        out.push(format!("lens {} versions {} -> {}", lens.id, versions.len(), v.len()));
                    }
                }
            }
        }
        for (lens, _) in &after.lenses {
            if !self.lenses.iter().any(|(l, _)| l.id == lens.id) {
                out.push(format!("lens {} appeared", lens.id));
            }
        }
        out
    }
}

impl fmt::Debug for Digest {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Digest({} lenses, {} runs)", self.lenses.len(), self.runs)
    }
}

/// A lenser calling over HTTP with a read-write token.
pub fn lenser(id: LenserId) -> Principal {
    Principal::Lenser { id, scopes: Scopes::READ_WRITE }
}

/// A tool's answer, already checked for the shape every result has.
#[derive(Clone, Debug)]
pub struct Reply {
    pub is_error: bool,
    /// `structuredContent`.
    pub value: Value,
    /// Every text block, `content[0]` (the JSON of `value`) first.
    pub texts: Vec<String>,
}

impl Reply {
    /// The error code of an error result.
    pub fn code(&self) -> Option<&str> {
        if self.is_error { self.value.get("code").and_then(Value::as_str) } else { None }
    }

    pub fn message(&self) -> &str {
        self.value.get("message").and_then(Value::as_str).unwrap_or("")
    }

    /// `details.field` of an error result.
    pub fn field(&self) -> Option<&str> {
        self.value.get("details").and_then(|d| d.get("field")).and_then(Value::as_str)
    }

    /// Bytes of every text block together.
    pub fn text_len(&self) -> usize {
        self.texts.iter().map(String::len).sum()
    }

    /// Whether any text block contains `needle`.
    pub fn contains(&self, needle: &str) -> bool {
        self.texts.iter().any(|t| t.contains(needle))
    }

    /// `value[key]` as a string.
    pub fn str(&self, key: &str) -> &str {
        self.value
            .get(key)
            .and_then(Value::as_str)
            .unwrap_or_else(|| panic!("no string {key} in {}", self.value))
    }

    /// A one-line description for failure reports, at most a few hundred characters.
    pub fn brief(&self) -> String {
        let s = self.texts.first().map_or("", String::as_str);
        let cut: String = s.chars().take(300).collect();
        if cut.len() < s.len() { format!("{cut}… ({} bytes)", s.len()) } else { cut }
    }
}

/// Calls `tool` as `server`'s principal with `args` (a JSON object) through
/// `LfServer::call`, in a task of its own so a panic is reported rather than
/// unwinding the test. `Err` says what was wrong with the answer itself: a
/// JSON-RPC error, a panic, no structured content, or a first text block that
/// is not the JSON of the structured content.
pub async fn call(server: &LfServer, tool: &str, args: Value) -> Result<Reply, String> {
    let Value::Object(args) = args else { panic!("tool arguments must be a JSON object") };
    let (server, name) = (server.clone(), tool.to_owned());
    let answer = tokio::spawn(async move { server.call(&name, args).await }).await;
    let result = match answer {
        Ok(Ok(result)) => result,
        Ok(Err(e)) => return Err(format!("JSON-RPC error instead of a tool result: {}", e.message)),
        Err(e) if e.is_panic() => return Err("the call panicked".to_owned()),
        Err(e) => return Err(format!("the call's task failed: {e}")),
    };
    let value = result.structured_content.clone().ok_or("no structuredContent")?;
    let texts: Vec<String> =
        result.content.iter().filter_map(|c| c.as_text().map(|t| t.text.clone())).collect();
    let first = texts.first().ok_or("no text block")?;
    let mirrored: Value = serde_json::from_str(first).map_err(|_| "content[0].text is not JSON")?;
    if mirrored != value {
        return Err("content[0].text is not the JSON of structuredContent".to_owned());
    }
    Ok(Reply { is_error: result.is_error == Some(true), value, texts })
}

/// The `id`s of `value["items"]`.
pub fn item_ids(value: &Value) -> Vec<String> {
    value
        .get("items")
        .and_then(Value::as_array)
        .map(|items| {
            items.iter().filter_map(|i| i.get("id").and_then(Value::as_str).map(str::to_owned)).collect()
        })
        .unwrap_or_default()
}
