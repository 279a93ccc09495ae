//! The storage contract of lenses. Implementations: [`crate::MemoryLensStore`]
//! here, SQLite and PostgreSQL in lf-store. All of them run
//! [`crate::contract::suite`].

use async_trait::async_trait;
use lf_core::{LensId, LfResult, Page, PageRequest, Reach, VersionId};

use crate::labels::{LabelChange, LabelChanged, LabelMove, LensLabel};
use crate::model::{
    Lens, LensFilter, LensPatch, LensRun, LensVersion, SearchQuery, VersionSelector, VersionSummary,
    Visibility,
};
use lf_core::LabelName;

/// How many matches a search must rank exactly (see
/// [`LensStore::search_lenses`]).
pub const SEARCH_RANK_WINDOW: usize = 2_000;

/// Where lenses live.
///
/// Visibility is the store's job: every read takes the caller's [`Reach`] and
/// applies it inside the query, so a row the caller may not read is never
/// loaded for it. With `Reach::Lenser(me)` a lens is readable when its owner is
/// `me` or its visibility is public or community. Soft-deleted lenses are
/// never read by any method.
///
/// Errors every implementation MUST return (other failures are INTERNAL):
/// - NOT_FOUND where the lens (or version) does not exist, is deleted, or is
///   out of the caller's reach. The same error in all three cases.
/// - CONFLICT from [`LensStore::append_version`] when the head moved, and from
///   inserts when an id is already taken.
///
/// [`VersionSelector::Label`] reads the version the label points at; a label
/// the lens does not have is NOT_FOUND ([`crate::version_not_found`]).
#[async_trait]
pub trait LensStore: Send + Sync {
    /// Stores a new lens and its first version atomically. The lens's
    /// `head_version_id` is `first.id`.
    async fn create_lens(&self, lens: &Lens, first: &LensVersion) -> LfResult<()>;

    /// The lens, archived or not. NOT_FOUND if deleted or out of reach.
    async fn get_lens(&self, reach: Reach, id: LensId) -> LfResult<Lens>;

    /// A version of a readable lens. NOT_FOUND if the lens or the version is
    /// not there (a version of another lens is not there).
    async fn get_version(
        &self,
        reach: Reach,
        lens_id: LensId,
        which: VersionSelector,
    ) -> LfResult<LensVersion>;

    /// The lens and one of its versions, as [`LensStore::get_lens`] then
    /// [`LensStore::get_version`] would return them. A store may answer it in
    /// one round trip; the default makes two.
    async fn get_lens_and_version(
        &self,
        reach: Reach,
        id: LensId,
        which: VersionSelector,
    ) -> LfResult<(Lens, LensVersion)> {
        let lens = self.get_lens(reach, id).await?;
        Ok((lens, self.get_version(reach, id, which).await?))
    }

    /// Every version of a readable lens, newest first.
    async fn list_versions(&self, reach: Reach, lens_id: LensId) -> LfResult<Vec<VersionSummary>>;

    /// Readable, non-deleted lenses matching `filter`, newest first
    /// (`created_at` descending, then id descending). Archived lenses only
    /// with `include_archived` or `status: archived`.
    async fn list_lenses(&self, reach: Reach, filter: &LensFilter, page: PageRequest)
    -> LfResult<Page<Lens>>;

    /// Readable, non-deleted, non-archived lenses where every query term is a
    /// prefix of a word of the title, description or head body; best match
    /// first (title weighs most, then description, then body), ties newest
    /// first. `total` counts every match.
    ///
    /// Ranking is exact up to [`SEARCH_RANK_WINDOW`] matches. Past that a
    /// store may rank only the newest `SEARCH_RANK_WINDOW` matches and list
    /// the older ones after them, newest first: ranking every match of a
    /// word found in most lenses costs more than a search should.
    async fn search_lenses(
        &self,
        reach: Reach,
        query: &SearchQuery,
        visibility: Option<Visibility>,
        page: PageRequest,
    ) -> LfResult<Page<Lens>>;

    /// Adds `version` and makes it the head, if the head is still
    /// `expected_head`; applies `patch` in the same transaction. CONFLICT if
    /// the head moved; NOT_FOUND if the lens is deleted.
    async fn append_version(
        &self,
        lens_id: LensId,
        expected_head: VersionId,
        version: &LensVersion,
        patch: &LensPatch,
    ) -> LfResult<()>;

    /// Applies `patch` to a non-deleted lens. NOT_FOUND if there is none.
    async fn update_lens(&self, lens_id: LensId, patch: &LensPatch) -> LfResult<()>;

    /// Records a tracked run of a lens that exists (a store may refuse a run
    /// of a lens it does not hold).
    async fn record_run(&self, run: &LensRun) -> LfResult<()>;

    /// Applies `change` and records the move, in one transaction that also
    /// reads the label as it is: of two racing changes, both are applied and
    /// recorded in the order they took effect, each record's `from` being
    /// what the one before set. A protected label (its stored flag, or
    /// [`LabelName::always_protected`], there or not yet) with
    /// `may_move_protected` false is
    /// [`LabelChanged::Protected`], removing a label that is not there is
    /// [`LabelChanged::Missing`]: nothing changed in either case. Pointing
    /// a label where it already points records nothing. `protect` sets the
    /// stored flag. NOT_FOUND when the lens is missing or deleted, or `to`
    /// is not one of its versions.
    async fn change_label(&self, change: &LabelChange) -> LfResult<LabelChanged>;

    /// The labels of a readable lens, by name. NOT_FOUND if out of reach.
    async fn list_labels(&self, reach: Reach, lens_id: LensId) -> LfResult<Vec<LensLabel>>;

    /// The recorded moves of a readable lens's labels (of `label` alone when
    /// given), newest first (`seq` descending). NOT_FOUND if out of reach.
    async fn label_history(
        &self,
        reach: Reach,
        lens_id: LensId,
        label: Option<LabelName>,
        page: PageRequest,
    ) -> LfResult<Page<LabelMove>>;
}
