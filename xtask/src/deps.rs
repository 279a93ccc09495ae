//! The dependency rules of the architecture, checked over `cargo metadata`
//! (normal dependencies; a test may cross a boundary through a
//! dev-dependency). Every workspace crate has a place:
//!
//! - **core** (lf-core) and **domain** crates (lf-lens, lf-auth, lf-battle,
//!   lf-workflow, lf-agent, lf-eval): pure. Domain crates may use serde and
//!   serde_json, never an async runtime, SQL, MCP or HTTP crate, nor any
//!   crate of the layers below; lf-core depends on nothing of ours and no JSON.
//! - **clients** (lf-egress): the guarded outbound HTTP client; depends on
//!   nothing of ours, so an adapter may use it.
//! - **adapters** (lf-store, lf-model, lf-runner, lf-metrics, lf-telemetry): implement
//!   what the domain defines. None depends on another adapter, the catalog, the
//!   composition root or a transport, but lf-telemetry on lf-model (for the TLS
//!   set-up every reqwest client of the build starts from). lf-model depends on
//!   no domain crate (it sees models through `lf_core::ModelProvider` only), nor
//!   does lf-telemetry (it sees spans through `tracing` only); lf-store and
//!   lf-runner on domain crates only for the traits they implement. Only lf-model
//!   and lf-telemetry (to the operator's collector) reach reqwest or hyper other
//!   than through lf-egress.
//! - **catalog** (lf-tools): the domain crates, never an adapter.
//! - **composition root** (lf-server): may depend on adapters, the catalog and
//!   the domain; only the binaries, xtask and the tests depend on it.
//! - **pages** (lf-pages): the browser's adapter over the catalog's
//!   services, mounted by lf-mcp-http: the domain and the catalog, never an
//!   adapter, the root or a transport.
//! - **transports** (lf-mcp-stdio, lf-mcp-http): never on each other.
//!
//! Only lf-mcp-http and lf-pages know axum; hyper only as lf-model's, lf-telemetry's or
//! lf-egress's HTTP client (through reqwest), except in lf-mcp-http, xtask and
//! the tests.

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

    const CORE: &[&str] = &["lf-core"];
    const DOMAIN: &[&str] = &["lf-lens", "lf-auth", "lf-battle", "lf-workflow", "lf-agent", "lf-eval"];
    const CLIENTS: &[&str] = &["lf-egress"];
    const ADAPTERS: &[&str] = &["lf-store", "lf-model", "lf-runner", "lf-metrics", "lf-telemetry"];
    /// The adapters that are HTTP clients of the operator's own services.
    const HTTP_ADAPTERS: &[&str] = &["lf-model", "lf-telemetry"];
    const CATALOG: &[&str] = &["lf-tools"];
    const ROOT: &[&str] = &["lf-server"];
    const PAGES: &[&str] = &["lf-pages"];
    const TRANSPORTS: &[&str] = &["lf-mcp-stdio", "lf-mcp-http"];
    const TOOLING: &[&str] = &["xtask", "lf-tests"];

    /// Async runtimes, SQL, MCP, HTTP and schema crates: never in a pure crate.
    const IMPURE: &[&str] = &[
        "tokio",
        "async-std",
        "smol",
        "sqlx",
        "rusqlite",
        "libsqlite3-sys",
        "postgres",
        "tokio-postgres",
        "rmcp",
        "hyper",
        "http",
        "axum",
        "tower",
        "reqwest",
        "schemars",
    ];

    fn forbid(g: &Graph, krate: &str, forbidden: &[&str], problems: &mut Vec<String>) {
        let reach = g.reachable(krate);
        for f in forbidden {
            if reach.contains(*f) {
                problems.push(format!("{krate} must not depend on {f}"));
            }
        }
    }

    /// The crates of these layers.
    fn ours(layers: &[&[&'static str]]) -> Vec<&'static str> {
        layers.iter().flat_map(|l| l.iter().copied()).collect()
    }

    fn present<'a>(members: &[String], names: &[&'a str]) -> Vec<&'a str> {
        names.iter().copied().filter(|n| members.iter().any(|m| m == n)).collect()
    }

    #[test]
    fn dependency_rules_hold() {
        let g = Graph::load();
        let members = g.member_names();
        let mut problems = Vec::new();
        // The graph is read right: known edges are there.
        assert!(g.reachable("lf-tools").contains("rmcp") && g.reachable("lf-lens").contains("lf-core"));
        assert!(g.reachable("lf-model").contains("hyper"), "the exception below is needed");
        let all: Vec<&[&str]> =
            vec![CORE, DOMAIN, CLIENTS, ADAPTERS, CATALOG, PAGES, ROOT, TRANSPORTS, TOOLING];
        for m in &members {
            if !all.iter().any(|layer| layer.contains(&m.as_str())) {
                problems.push(format!("{m} has no place in the architecture: add it to xtask/src/deps.rs"));
            }
        }
        let domain = present(&members, DOMAIN);
        assert!(domain.contains(&"lf-lens"));

        let mut core_forbidden = IMPURE.to_vec();
        core_forbidden.push("serde_json");
        core_forbidden.extend(ours(&[DOMAIN, CLIENTS, ADAPTERS, CATALOG, PAGES, ROOT, TRANSPORTS]));
        forbid(&g, "lf-core", &core_forbidden, &mut problems);

        let mut domain_forbidden = IMPURE.to_vec();
        domain_forbidden.extend(ours(&[CLIENTS, ADAPTERS, CATALOG, PAGES, ROOT, TRANSPORTS]));
        for d in &domain {
            forbid(&g, d, &domain_forbidden, &mut problems);
        }

        // A client knows no crate of ours: it is told what to send.
        let mut client_forbidden = ours(&[CORE, DOMAIN, ADAPTERS, CATALOG, PAGES, ROOT, TRANSPORTS]);
        client_forbidden.extend(["rmcp", "axum", "sqlx", "schemars"]);
        for c in present(&members, CLIENTS) {
            forbid(&g, c, &client_forbidden, &mut problems);
        }

        for a in present(&members, ADAPTERS) {
            let mut forbidden: Vec<&str> = ADAPTERS
                .iter()
                .copied()
                .filter(|o| *o != a && !(a == "lf-telemetry" && *o == "lf-model"))
                .collect();
            forbidden.extend(ours(&[CATALOG, PAGES, ROOT, TRANSPORTS]));
            forbidden.extend(["rmcp", "axum", "schemars"]);
            if HTTP_ADAPTERS.contains(&a) {
                // An adapter of lf-core's ModelProvider, or of tracing's
                // spans: no domain crate at all.
                forbidden.extend(DOMAIN);
                forbidden.push("sqlx");
            } else {
                // HTTP only through the guarded client.
                let reach = g.reachable_except(a, CLIENTS);
                for http in ["hyper", "reqwest"] {
                    if reach.contains(http) {
                        problems.push(format!("{a} must not depend on {http} (except through lf-egress)"));
                    }
                }
            }
            forbid(&g, a, &forbidden, &mut problems);
        }

        let mut catalog_forbidden = ours(&[CLIENTS, ADAPTERS, PAGES, ROOT, TRANSPORTS]);
        catalog_forbidden.extend(["sqlx", "rusqlite", "hyper", "axum", "reqwest"]);
        forbid(&g, "lf-tools", &catalog_forbidden, &mut problems);

        let mut pages_forbidden = ours(&[CLIENTS, ADAPTERS, ROOT, TRANSPORTS]);
        pages_forbidden.extend(["sqlx", "rusqlite", "reqwest"]);
        for p in present(&members, PAGES) {
            forbid(&g, p, &pages_forbidden, &mut problems);
        }

        let mut root_forbidden = TRANSPORTS.to_vec();
        root_forbidden.extend(PAGES);
        root_forbidden.push("axum");
        forbid(&g, "lf-server", &root_forbidden, &mut problems);
        for m in &members {
            let depends = g.direct[g.id(m)].iter().any(|d| g.names[d] == "lf-server");
            let allowed = TRANSPORTS.contains(&m.as_str()) || TOOLING.contains(&m.as_str());
            if depends && !allowed {
                problems
                    .push(format!("{m} must not depend on lf-server: only the binaries, xtask and tests do"));
            }
        }

        for t in present(&members, TRANSPORTS) {
            let others: Vec<&str> = TRANSPORTS.iter().copied().filter(|o| *o != t).collect();
            forbid(&g, t, &others, &mut problems);
        }

        for m in &members {
            // lf-pages' hyper is axum's (whose server features lf-mcp-http turns on).
            if m == "lf-mcp-http"
                || PAGES.contains(&m.as_str())
                || TOOLING.contains(&m.as_str())
                || HTTP_ADAPTERS.contains(&m.as_str())
                || m == "lf-egress"
            {
                continue;
            }
            forbid(&g, m, &["axum"], &mut problems);
            // hyper only as lf-model's, lf-telemetry's or lf-egress's HTTP client.
            if g.reachable_except(m, &["lf-model", "lf-telemetry", "lf-egress"]).contains("hyper") {
                problems.push(format!(
                    "{m} must not depend on hyper (except through lf-model, lf-telemetry or lf-egress)"
                ));
            }
        }
        assert!(problems.is_empty(), "dependency rules broken:\n{}", problems.join("\n"));
    }
}
