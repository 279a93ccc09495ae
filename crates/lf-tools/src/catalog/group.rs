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
    /// Whether it is listed when no toolsets are named. An opt-in group
    /// (false) is listed only when named, by `all`, or enabled by a
    /// session; its tools do not cost every conversation its listing.
    pub by_default: bool,
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

    /// The groups listed when no toolsets are named, in catalog order.
    pub fn defaults() -> Vec<&'static Group> {
        Self::all().iter().copied().filter(|g| g.by_default).collect()
    }

    /// The groups `--toolsets` names in `names` (comma-separated ids, any
    /// case, each at most once): a group's id, `default` (the groups listed
    /// by default) or `all` (every group). Empty names are skipped.
    pub fn parse_set<'a>(names: impl IntoIterator<Item = &'a str>) -> Result<Vec<&'static Group>, String> {
        let mut groups: Vec<&'static Group> = Vec::new();
        for name in names.into_iter().flat_map(|n| n.split(',')).map(str::trim).filter(|n| !n.is_empty()) {
            let named = if name.eq_ignore_ascii_case(DEFAULT) {
                Self::defaults()
            } else if name.eq_ignore_ascii_case(ALL) {
                Self::all().to_vec()
            } else {
                vec![Self::parse(name).map_err(|e| format!("{e}, or {DEFAULT} or {ALL}"))?]
            };
            for g in named {
                if !groups.contains(&g) {
                    groups.push(g);
                }
            }
        }
        Ok(groups)
    }
}

/// What `--toolsets` calls the groups listed by default.
pub const DEFAULT: &str = "default";
/// What `--toolsets` calls every group.
pub const ALL: &str = "all";

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

#[cfg(test)]
mod tests {
    use super::Group;

    #[test]
    fn a_set_names_groups_default_and_all() {
        let ids = |s: &str| Group::parse_set([s]).map(|gs| gs.iter().map(|g| g.id).collect::<Vec<_>>());
        let defaults: Vec<&str> = Group::defaults().iter().map(|g| g.id).collect();
        assert_eq!(ids("default").unwrap(), defaults);
        assert_eq!(ids("ALL").unwrap(), Group::ids());
        assert_eq!(ids("battle, lens,battle").unwrap(), ["battle", "lens"]);
        assert_eq!(ids(" , ").unwrap(), Vec::<&str>::new());
        let mut with_all = defaults.clone();
        with_all.extend(Group::all().iter().filter(|g| !g.by_default).map(|g| g.id));
        assert_eq!(ids("default,all").unwrap(), with_all);
        let bad = ids("lens,nope").unwrap_err();
        assert!(bad.contains("\"nope\"") && bad.contains("default or all"), "{bad}");
    }
}
