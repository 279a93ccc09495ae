//! [`ModelProfileStore`] over either backend: the `model_profiles` table
//! of `0026_model_profiles.sql` (SQLite) and `0022_model_profiles.sql`
//! (PostgreSQL), through the statements of `sql`, the same on both. The
//! caller's reach is in every read's `WHERE`.

mod sql;

use async_trait::async_trait;
use lf_core::{LenserId, LfResult, ModelProfileId, Page, PageRequest, Reach, Timestamp};
use lf_workflow::profile::{ModelProfile, ModelProfileStore, ProfileName};

use crate::conns::{Conns, on};

/// [`ModelProfileStore`] over either backend.
pub(crate) struct SqlProfileStore {
    conns: Conns,
}

impl SqlProfileStore {
    pub(crate) fn new(conns: Conns) -> Self {
        Self { conns }
    }
}

#[async_trait]
impl ModelProfileStore for SqlProfileStore {
    async fn add_profile(&self, profile: &ModelProfile) -> LfResult<()> {
        on!(&self.conns, write_one, |conn| sql::add(conn, profile))
    }

    async fn profile(&self, reach: Reach, id: ModelProfileId) -> LfResult<Option<ModelProfile>> {
        on!(&self.conns, reading, |conn| sql::by_id(conn, reach, id))
    }

    async fn profile_named(&self, owner: LenserId, name: &ProfileName) -> LfResult<Option<ModelProfile>> {
        on!(&self.conns, reading, |conn| sql::by_name(conn, owner, name))
    }

    async fn list_profiles(&self, reach: Reach, page: PageRequest) -> LfResult<Page<ModelProfile>> {
        on!(&self.conns, reading, |conn| sql::list(conn, reach, page))
    }

    async fn save_profile(&self, profile: &ModelProfile, expected: Timestamp) -> LfResult<()> {
        on!(&self.conns, write, |conn| sql::save(conn, profile, expected))
    }
}
