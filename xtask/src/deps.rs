//! The dependency rules of the architecture, checked over `cargo metadata`:
//! domain crates stay pure, the catalog and the stores don't know each other,
//! and only the HTTP transport knows HTTP.
//! lf-model, the OpenAI-compatible model client, is the one exception: it may
//! reach hyper (as a client, through reqwest) but never axum, and so may the
//! crates that depend on it; no domain crate (lf-core, lf-lens, lf-battle,
//! lf-auth, ...) may depend on it, as they see models only through
//! `lf_core::ModelProvider`.

#[cfg(test)]
mod tests {
    use std::collections::{BTreeMap, BTreeSet};
    use std::process::Command;

    use serde_json::Value;

    /// Every package name reachable from each workspace package through normal
    /// (non-dev, non-build) dependencies, and each one's direct dependencies.
    struct Graph {
        direct: BTreeMap<String, BTreeSet<String>>,
        names: BTreeMap<String, String>,
        members: BTreeSet<String>,
    }

    impl Graph {
        fn load() -> Self {
            let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
            // Only this machine's platform: no need to fetch other targets' crates.
            let rustc = Command::new("rustc").arg("-vV").output().expect("rustc runs");
            let host = String::from_utf8_lossy(&rustc.stdout)
                .lines()
                .find_map(|l| l.strip_prefix("host: ").map(str::to_owned))
                .expect("rustc -vV names the host");
            let out = Command::new(cargo)
                .args(["metadata", "--format-version", "1", "--filter-platform", &host])
                .current_dir(env!("CARGO_MANIFEST_DIR"))
                .output()
                .expect("cargo metadata runs");
            assert!(out.status.success(), "cargo metadata failed: {}", String::from_utf8_lossy(&out.stderr));
            let meta: Value = serde_json::from_slice(&out.stdout).unwrap();
            let names = meta["packages"]
                .as_array()
                .unwrap()
                .iter()
                .map(|p| (p["id"].as_str().unwrap().to_owned(), p["name"].as_str().unwrap().to_owned()))
                .collect::<BTreeMap<_, _>>();
            let members = meta["workspace_members"]
                .as_array()
                .unwrap()
                .iter()
                .map(|m| m.as_str().unwrap().to_owned())
                .collect();
            let mut direct = BTreeMap::new();
            for node in meta["resolve"]["nodes"].as_array().unwrap() {
                let deps = node["deps"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .filter(|d| d["dep_kinds"].as_array().unwrap().iter().any(|k| k["kind"].is_null()))
                    .map(|d| d["pkg"].as_str().unwrap().to_owned())
                    .collect();
                direct.insert(node["id"].as_str().unwrap().to_owned(), deps);
            }
            Graph { direct, names, members }
        }

        fn id(&self, name: &str) -> &str {
            self.members
                .iter()
                .find(|m| self.names[*m] == name)
                .unwrap_or_else(|| panic!("{name} is not a member"))
        }

        fn reachable(&self, name: &str) -> BTreeSet<String> {
            self.reachable_except(name, &[])
        }

        /// Like [`Graph::reachable`], but without looking inside the packages
        /// named in `opaque` (they are listed, their dependencies are not).
        fn reachable_except(&self, name: &str, opaque: &[&str]) -> BTreeSet<String> {
            let mut seen = BTreeSet::new();
            let mut todo = vec![self.id(name).to_owned()];
            while let Some(id) = todo.pop() {
                for d in &self.direct[&id] {
                    if seen.insert(d.clone()) && !opaque.contains(&self.names[d].as_str()) {
                        todo.push(d.clone());
                    }
                }
            }
            seen.into_iter().map(|id| self.names[&id].clone()).collect()
        }

        fn member_names(&self) -> Vec<String> {
            self.members.iter().map(|m| self.names[m].clone()).collect()
        }
    }

    fn forbid(g: &Graph, krate: &str, forbidden: &[&str], problems: &mut Vec<String>) {
        let reach = g.reachable(krate);
        for f in forbidden {
            if reach.contains(*f) {
                problems.push(format!("{krate} must not depend on {f}"));
            }
        }
    }

    #[test]
    fn dependency_rules_hold() {
        let g = Graph::load();
        let members = g.member_names();
        let mut problems = Vec::new();
        let domain: Vec<&str> = ["lf-lens", "lf-auth", "lf-battle", "lf-workflow", "lf-agent"]
            .into_iter()
            .filter(|d| members.iter().any(|m| m == d))
            .collect();
        assert!(domain.contains(&"lf-lens"));
        // The graph is read right: known edges are there.
        assert!(g.reachable("lf-tools").contains("rmcp") && g.reachable("lf-lens").contains("lf-core"));
        let impure = [
            "sqlx",
            "rmcp",
            "hyper",
            "axum",
            "reqwest",
            "schemars",
            "tokio",
            "serde_json",
            "lf-store",
            "lf-tools",
            "lf-model",
        ];
        forbid(&g, "lf-core", &impure, &mut problems);
        forbid(&g, "lf-core", &["lf-lens"], &mut problems);
        for d in &domain {
            forbid(&g, d, &impure, &mut problems);
        }
        forbid(&g, "lf-store", &["lf-tools", "rmcp", "hyper", "axum", "schemars"], &mut problems);
        forbid(&g, "lf-tools", &["lf-store", "sqlx", "hyper", "axum"], &mut problems);
        if members.iter().any(|m| m == "lf-model") {
            // Known edge: the client does reach hyper, so the exception below is needed.
            assert!(g.reachable("lf-model").contains("hyper"));
            forbid(&g, "lf-model", &["axum", "sqlx", "rmcp", "lf-store", "lf-tools"], &mut problems);
        }
        for m in &members {
            if m == "lf-mcp-http" || m == "lf-tests" || m == "xtask" || m == "lf-model" {
                continue;
            }
            forbid(&g, m, &["axum"], &mut problems);
            // hyper only as lf-model's HTTP client.
            if g.reachable_except(m, &["lf-model"]).contains("hyper") {
                problems.push(format!("{m} must not depend on hyper (except through lf-model)"));
            }
        }
        assert!(problems.is_empty(), "dependency rules broken:\n{}", problems.join("\n"));
    }
}
