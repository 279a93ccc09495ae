//! [`MemoryProfiles`]: the in-memory [`ModelProfileStore`].

use std::collections::HashMap;
use std::sync::RwLock;

use async_trait::async_trait;
use lf_core::{LenserId, LfError, LfResult, ModelProfileId, Page, PageRequest, Reach, Timestamp};

use super::model::{ModelProfile, ProfileName, ProfileVisibility, profile_not_found, profile_taken};
use super::store::ModelProfileStore;

/// Model profiles in memory, for tests and embedding.
#[derive(Debug, Default)]
pub struct MemoryProfiles {
    rows: RwLock<HashMap<ModelProfileId, ModelProfile>>,
}

impl MemoryProfiles {
    pub fn new() -> Self {
        Self::default()
    }
}

fn reads(reach: Reach, p: &ModelProfile) -> bool {
    match reach {
        Reach::Everything => true,
        Reach::Lenser(me) => {
            p.owner == me || (p.visibility == ProfileVisibility::Public && p.archived_at.is_none())
        }
    }
}

fn taken(rows: &HashMap<ModelProfileId, ModelProfile>, p: &ModelProfile) -> bool {
    p.archived_at.is_none()
        && rows
            .values()
            .any(|o| o.id != p.id && o.owner == p.owner && o.archived_at.is_none() && o.name == p.name)
}

#[async_trait]
impl ModelProfileStore for MemoryProfiles {
    async fn add_profile(&self, profile: &ModelProfile) -> LfResult<()> {
        let mut rows = self.rows.write().unwrap_or_else(|e| e.into_inner());
        if taken(&rows, profile) {
            return Err(profile_taken(&profile.name));
        }
        if rows.contains_key(&profile.id) {
            return Err(LfError::conflict("a model profile of this id exists"));
        }
        rows.insert(profile.id, profile.clone());
        Ok(())
    }

    async fn profile(&self, reach: Reach, id: ModelProfileId) -> LfResult<Option<ModelProfile>> {
        let rows = self.rows.read().unwrap_or_else(|e| e.into_inner());
        Ok(rows.get(&id).filter(|p| reads(reach, p)).cloned())
    }

    async fn profile_named(&self, owner: LenserId, name: &ProfileName) -> LfResult<Option<ModelProfile>> {
        let rows = self.rows.read().unwrap_or_else(|e| e.into_inner());
        Ok(rows.values().find(|p| p.owner == owner && p.archived_at.is_none() && &p.name == name).cloned())
    }

    async fn list_profiles(&self, reach: Reach, page: PageRequest) -> LfResult<Page<ModelProfile>> {
        let rows = self.rows.read().unwrap_or_else(|e| e.into_inner());
        let mut all: Vec<&ModelProfile> =
            rows.values().filter(|p| p.archived_at.is_none() && reads(reach, p)).collect();
        all.sort_by(|a, b| (a.name.as_str(), a.id.as_uuid()).cmp(&(b.name.as_str(), b.id.as_uuid())));
        let items = all.iter().skip(page.offset() as usize).take(page.limit() as usize).map(|p| (*p).clone());
        Ok(Page::new(items.collect(), all.len() as u64, page))
    }

    async fn save_profile(&self, profile: &ModelProfile, expected: Timestamp) -> LfResult<()> {
        let mut rows = self.rows.write().unwrap_or_else(|e| e.into_inner());
        let Some(old) = rows.get(&profile.id).filter(|o| o.owner == profile.owner) else {
            return Err(profile_not_found("profile_id", &profile.id.to_string()));
        };
        if old.updated_at != expected {
            return Err(LfError::conflict("the model profile changed meanwhile: read it again and retry"));
        }
        if taken(&rows, profile) {
            return Err(profile_taken(&profile.name));
        }
        rows.insert(profile.id, profile.clone());
        Ok(())
    }
}
