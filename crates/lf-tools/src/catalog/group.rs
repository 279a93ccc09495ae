//! Tool groups (toolsets): each is one folder under `groups/` whose `mod.rs`
//! holds its [`Group`], and one line of [`crate::groups::ALL`]. The catalog,
//! `--toolsets`, the docs and the snapshot tests all read that registry.

use crate::catalog::tool::ToolSpec;

/// A group of tools, selectable with `--toolsets`.
pub struct Group {
    /// What `--toolsets` calls it: lowercase, stable.
    pub id: &'static str,
    /// Its heading in the docs.
    pub title: &'static str,
    /// What its tools are for, in a sentence.
    pub description: &'static str,
    /// Its tools, in catalog order.
    pub(crate) tools: fn(&'static Group) -> Vec<ToolSpec>,
}

impl Group {
    /// Every group, in catalog order.
    pub fn all() -> &'static [&'static Group] {
        crate::groups::ALL
    }

    /// The group `--toolsets` names `s` (case-insensitively).
    pub fn parse(s: &str) -> Result<&'static Group, String> {
        let s = s.trim();
        Self::all()
            .iter()
            .copied()
            .find(|g| g.id.eq_ignore_ascii_case(s))
            .ok_or_else(|| format!("unknown toolset {s:?}; known toolsets: {}", Self::ids().join(", ")))
    }

    /// Every group's id, in catalog order.
    pub fn ids() -> Vec<&'static str> {
        Self::all().iter().map(|g| g.id).collect()
    }
}

/// Groups are one static value each: the same id is the same group.
impl PartialEq for Group {
    fn eq(&self, other: &Self) -> bool {
        self.id == other.id
    }
}

impl Eq for Group {}

impl std::hash::Hash for Group {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        self.id.hash(state);
    }
}

impl std::fmt::Debug for Group {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.id)
    }
}
