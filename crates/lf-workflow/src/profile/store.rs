//! The storage contract of model profiles. Implementations:
//! [`super::MemoryProfiles`] here, SQLite and PostgreSQL in lf-store. All
//! of them run [`super::contract::suite`].

use async_trait::async_trait;
use lf_core::{LenserId, LfResult, ModelProfileId, Page, PageRequest, Reach, Timestamp};

use super::model::{ModelProfile, ProfileName};

/// Where saved model profiles live. What a reach reads: with
/// `Reach::Lenser(me)`, `me`'s profiles (archived ones too, by id) and the
/// public profiles of everyone that are not archived; with
/// `Reach::Everything`, every profile. Visibility is part of the query.
///
/// Errors every implementation MUST return (other failures are INTERNAL):
/// - CONFLICT from [`ModelProfileStore::add_profile`] and
///   [`ModelProfileStore::save_profile`] when the owner has another profile
///   of that name not archived ([`super::profile_taken`]); nothing is
///   written then.
/// - CONFLICT from [`ModelProfileStore::save_profile`] when the profile's
///   `updated_at` is no longer the one expected (it changed meanwhile).
/// - NOT_FOUND from [`ModelProfileStore::save_profile`] when the owner has
///   no profile of that id.
#[async_trait]
pub trait ModelProfileStore: Send + Sync {
    /// Stores a new profile.
    async fn add_profile(&self, profile: &ModelProfile) -> LfResult<()>;

    /// The profile `id`, when `reach` reads it.
    async fn profile(&self, reach: Reach, id: ModelProfileId) -> LfResult<Option<ModelProfile>>;

    /// The owner's profile called `name` that is not archived.
    async fn profile_named(&self, owner: LenserId, name: &ProfileName) -> LfResult<Option<ModelProfile>>;

    /// The profiles `reach` reads that are not archived, by name then id,
    /// one page and the total.
    async fn list_profiles(&self, reach: Reach, page: PageRequest) -> LfResult<Page<ModelProfile>>;

    /// Replaces the owner's profile of `profile.id` (archiving it too)
    /// when its `updated_at` is still `expected`.
    async fn save_profile(&self, profile: &ModelProfile, expected: Timestamp) -> LfResult<()>;
}
