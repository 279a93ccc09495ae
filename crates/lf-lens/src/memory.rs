//! An in-memory [`LensStore`]: for tests, examples and apps that embed
//! lf-lens without a database. Same contract as the SQL stores.

use std::collections::{BTreeMap, HashMap};
use std::sync::{RwLock, RwLockReadGuard, RwLockWriteGuard};

use async_trait::async_trait;
use lf_core::{LensId, LfError, LfResult, Page, PageRequest, Reach, Timestamp, VersionId};

use crate::labels::{LabelChange, LabelChanged, LabelMove, LensLabel, VersionRef};
use crate::model::{
    Lens, LensFilter, LensPatch, LensRun, LensStatus, LensVersion, SearchQuery, VersionSelector,
    VersionSummary, Visibility,
};
use crate::store::LensStore;
use lf_core::LabelName;

#[derive(Default)]
struct Inner {
    lenses: HashMap<LensId, Row>,
    runs: Vec<LensRun>,
    /// Every label move, oldest first; `seq` is the position plus one.
    moves: Vec<LabelMove>,
}

impl Inner {
    /// The row of `lens_id` unless it is missing or deleted (NOT_FOUND).
    fn live_mut(&mut self, lens_id: LensId) -> LfResult<&mut Row> {
        self.lenses.get_mut(&lens_id).filter(|r| r.deleted_at.is_none()).ok_or_else(|| not_found(lens_id))
    }
}

struct Row {
    lens: Lens,
    deleted_at: Option<Timestamp>,
    /// Oldest first.
    versions: Vec<LensVersion>,
    /// By name: the label, its stored protection flag in `protected`.
    labels: BTreeMap<LabelName, LensLabel>,
}

impl Row {
    fn readable(&self, reach: Reach) -> bool {
        self.deleted_at.is_none()
            && match reach {
                Reach::Everything => true,
                Reach::Lenser(me) => self.lens.owner == me || self.lens.visibility != Visibility::Private,
            }
    }
    fn head(&self) -> &LensVersion {
        self.versions.iter().rev().find(|v| v.id == self.lens.head_version_id).unwrap_or(&self.versions[0])
    }
    fn version_ref(&self, id: VersionId) -> Option<VersionRef> {
        self.versions.iter().find(|v| v.id == id).map(|v| VersionRef { id: v.id, semver: v.semver })
    }
}

/// A [`LensStore`] kept in process memory.
#[derive(Default)]
pub struct MemoryLensStore {
    inner: RwLock<Inner>,
}

impl MemoryLensStore {
    pub fn new() -> Self {
        Self::default()
    }

    /// The runs recorded so far, oldest first.
    pub fn runs(&self) -> Vec<LensRun> {
        self.read().runs.clone()
    }

    fn read(&self) -> RwLockReadGuard<'_, Inner> {
        self.inner.read().unwrap_or_else(|p| p.into_inner())
    }
    fn write(&self) -> RwLockWriteGuard<'_, Inner> {
        self.inner.write().unwrap_or_else(|p| p.into_inner())
    }
}

fn not_found(id: LensId) -> LfError {
    LfError::not_found("Lens", id)
}

fn newest_first(a: &Lens, b: &Lens) -> std::cmp::Ordering {
    b.created_at.cmp(&a.created_at).then(b.id.cmp(&a.id))
}

fn page_of(mut lenses: Vec<Lens>, page: PageRequest) -> Page<Lens> {
    let total = lenses.len() as u64;
    let start = (page.offset() as usize).min(lenses.len());
    let end = (start + page.limit() as usize).min(lenses.len());
    let items = lenses.drain(start..end).collect();
    Page::new(items, total, page)
}

fn words(text: &str) -> impl Iterator<Item = String> + '_ {
    text.split(|c: char| !c.is_alphanumeric()).filter(|w| !w.is_empty()).map(str::to_lowercase)
}

fn has_prefix(text: &str, term: &str) -> bool {
    words(text).any(|w| w.starts_with(term))
}

fn apply(lens: &mut Lens, deleted_at: &mut Option<Timestamp>, patch: &LensPatch) {
    if let Some(t) = &patch.title {
        lens.title = t.clone();
    }
    if let Some(d) = &patch.description {
        lens.description = d.clone();
    }
    if let Some(v) = patch.visibility {
        lens.visibility = v;
    }
    if let Some(s) = patch.status {
        lens.status = s;
    }
    if let Some(a) = patch.archived_at {
        lens.archived_at = a;
    }
    if let Some(d) = patch.deleted_at {
        *deleted_at = Some(d);
    }
    if let Some(u) = patch.updated_at {
        lens.updated_at = u;
    }
}

#[async_trait]
impl LensStore for MemoryLensStore {
    async fn create_lens(&self, lens: &Lens, first: &LensVersion) -> LfResult<()> {
        let mut inner = self.write();
        let version_taken = inner.lenses.values().any(|r| r.versions.iter().any(|v| v.id == first.id));
        if inner.lenses.contains_key(&lens.id) || version_taken {
            return Err(LfError::conflict(format!("lens {} already exists", lens.id)));
        }
        inner.lenses.insert(
            lens.id,
            Row {
                lens: lens.clone(),
                deleted_at: None,
                versions: vec![first.clone()],
                labels: BTreeMap::new(),
            },
        );
        Ok(())
    }

    async fn get_lens(&self, reach: Reach, id: LensId) -> LfResult<Lens> {
        let inner = self.read();
        match inner.lenses.get(&id) {
            Some(row) if row.readable(reach) => Ok(row.lens.clone()),
            _ => Err(not_found(id)),
        }
    }

    async fn get_version(
        &self,
        reach: Reach,
        lens_id: LensId,
        which: VersionSelector,
    ) -> LfResult<LensVersion> {
        let inner = self.read();
        let row =
            inner.lenses.get(&lens_id).filter(|r| r.readable(reach)).ok_or_else(|| not_found(lens_id))?;
        let found = match which {
            VersionSelector::Head => Some(row.head()),
            VersionSelector::Id(id) => row.versions.iter().find(|v| v.id == id),
            VersionSelector::Semver(s) => row.versions.iter().find(|v| v.semver == s),
            VersionSelector::Label(l) => {
                row.labels.get(&l).and_then(|l| row.versions.iter().find(|v| v.id == l.version.id))
            }
        };
        found.cloned().ok_or_else(|| version_not_found(lens_id, which))
    }

    async fn list_versions(&self, reach: Reach, lens_id: LensId) -> LfResult<Vec<VersionSummary>> {
        let inner = self.read();
        let row =
            inner.lenses.get(&lens_id).filter(|r| r.readable(reach)).ok_or_else(|| not_found(lens_id))?;
        Ok(row.versions.iter().rev().map(VersionSummary::from).collect())
    }

    async fn list_lenses(
        &self,
        reach: Reach,
        filter: &LensFilter,
        page: PageRequest,
    ) -> LfResult<Page<Lens>> {
        let inner = self.read();
        let show_archived = filter.include_archived || filter.status == Some(LensStatus::Archived);
        let mut hits: Vec<Lens> = inner
            .lenses
            .values()
            .filter(|r| r.readable(reach))
            .map(|r| &r.lens)
            .filter(|l| show_archived || l.status != LensStatus::Archived)
            .filter(|l| filter.visibility.is_none_or(|v| l.visibility == v))
            .filter(|l| filter.status.is_none_or(|s| l.status == s))
            .filter(|l| filter.owner.is_none_or(|o| l.owner == o))
            .cloned()
            .collect();
        hits.sort_by(newest_first);
        Ok(page_of(hits, page))
    }

    async fn search_lenses(
        &self,
        reach: Reach,
        query: &SearchQuery,
        visibility: Option<Visibility>,
        page: PageRequest,
    ) -> LfResult<Page<Lens>> {
        let inner = self.read();
        let mut scored: Vec<(u32, Lens)> = Vec::new();
        for row in inner.lenses.values().filter(|r| r.readable(reach)) {
            let lens = &row.lens;
            if lens.status == LensStatus::Archived || visibility.is_some_and(|v| lens.visibility != v) {
                continue;
            }
            let description = lens.description.as_ref().map_or("", |d| d.as_str());
            let body = row.head().body.as_str();
            let mut score = 0;
            let all = query.terms().iter().all(|term| {
                let t = if has_prefix(lens.title.as_str(), term) { 10 } else { 0 };
                let d = if has_prefix(description, term) { 4 } else { 0 };
                let b = if has_prefix(body, term) { 1 } else { 0 };
                score += t + d + b;
                t + d + b > 0
            });
            if all {
                scored.push((score, lens.clone()));
            }
        }
        scored.sort_by(|(sa, a), (sb, b)| sb.cmp(sa).then_with(|| newest_first(a, b)));
        Ok(page_of(scored.into_iter().map(|(_, l)| l).collect(), page))
    }

    async fn append_version(
        &self,
        lens_id: LensId,
        expected_head: VersionId,
        version: &LensVersion,
        patch: &LensPatch,
    ) -> LfResult<()> {
        let mut inner = self.write();
        let row = inner.live_mut(lens_id)?;
        if row.lens.head_version_id != expected_head {
            return Err(head_moved(lens_id));
        }
        if row.versions.iter().any(|v| v.semver == version.semver || v.id == version.id) {
            return Err(LfError::conflict(format!("lens {lens_id} already has version {}", version.semver)));
        }
        row.versions.push(version.clone());
        row.lens.head_version_id = version.id;
        row.lens.head_semver = version.semver;
        apply(&mut row.lens, &mut row.deleted_at, patch);
        Ok(())
    }

    async fn update_lens(&self, lens_id: LensId, patch: &LensPatch) -> LfResult<()> {
        let mut inner = self.write();
        let row = inner.live_mut(lens_id)?;
        apply(&mut row.lens, &mut row.deleted_at, patch);
        Ok(())
    }

    async fn record_run(&self, run: &LensRun) -> LfResult<()> {
        self.write().runs.push(run.clone());
        Ok(())
    }

    async fn change_label(&self, change: &LabelChange) -> LfResult<LabelChanged> {
        let mut inner = self.write();
        let seq = inner.moves.len() as i64 + 1;
        let row = inner.live_mut(change.lens_id)?;
        let current = row.labels.get(&change.label).cloned();
        if let Some(refused) = change.refused(current.as_ref()) {
            return Ok(refused);
        }
        let to = match change.to {
            Some(id) => Some(
                row.version_ref(id)
                    .ok_or_else(|| LfError::not_found(&format!("Version of lens {}:", change.lens_id), id))?,
            ),
            None => None,
        };
        let from = current.as_ref().map(|l| l.version);
        let record = (from != to).then(|| change.record(seq, from, to));
        let label = match change.after(current.as_ref(), to) {
            None => {
                row.labels.remove(&change.label);
                None
            }
            Some(label) => {
                row.labels.insert(change.label, label.clone());
                Some(label.as_read())
            }
        };
        if let Some(record) = &record {
            inner.moves.push(record.clone());
        }
        Ok(LabelChanged::Done { record, label })
    }

    async fn list_labels(&self, reach: Reach, lens_id: LensId) -> LfResult<Vec<LensLabel>> {
        let inner = self.read();
        let row =
            inner.lenses.get(&lens_id).filter(|r| r.readable(reach)).ok_or_else(|| not_found(lens_id))?;
        Ok(row.labels.values().cloned().map(LensLabel::as_read).collect())
    }

    async fn label_history(
        &self,
        reach: Reach,
        lens_id: LensId,
        label: Option<LabelName>,
        page: PageRequest,
    ) -> LfResult<Page<LabelMove>> {
        let inner = self.read();
        inner.lenses.get(&lens_id).filter(|r| r.readable(reach)).ok_or_else(|| not_found(lens_id))?;
        let moves: Vec<&LabelMove> = inner
            .moves
            .iter()
            .rev()
            .filter(|m| m.lens_id == lens_id && label.is_none_or(|l| m.label == l))
            .collect();
        let total = moves.len() as u64;
        let items =
            moves.into_iter().skip(page.offset() as usize).take(page.limit() as usize).cloned().collect();
        Ok(Page::new(items, total, page))
    }
}

/// The NOT_FOUND of a missing version, shared by every store.
pub fn version_not_found(lens_id: LensId, which: VersionSelector) -> LfError {
    match which {
        VersionSelector::Head => not_found(lens_id),
        VersionSelector::Id(id) => LfError::not_found(&format!("Version of lens {lens_id}:"), id),
        VersionSelector::Semver(s) => LfError::not_found(&format!("Version of lens {lens_id}:"), s),
        VersionSelector::Label(l) => LfError::not_found(&format!("Label of lens {lens_id}:"), l),
    }
}

/// The CONFLICT of a concurrent update, shared by every store.
pub fn head_moved(lens_id: LensId) -> LfError {
    LfError::conflict(format!(
        "lens {lens_id} was changed by someone else while you were updating it. Read it again with get_lens and retry."
    ))
}
